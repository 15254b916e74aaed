//! A compile reads the spec models written at build time: compiling a
//! shader end to end (frontend, selection, the backend passes,
//! legalisation, emission, statistics, disassembly) and the Valhall
//! target facts, disassembler and assembler parse no `.isa` text. One test
//! in its own binary, so no other test's parsing is counted.

use lathe::adreno::ir3::GpuModel;
use lathe::compile::{Source, compile_ir3};
use lathe::frontend::Options;
use lathe::isa::load::files_parsed;
use lathe::mali::valhall::{self, MaliModel, target::ValhallTarget};
use lathe::passes::target::TargetFacts;

#[test]
fn compiling_parses_no_spec_text() {
    let wgsl = include_str!("../examples/attenuation.wgsl");
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        let out = compile_ir3(Source::Wgsl(wgsl), &Options::default(), gpu).unwrap();
        assert!(out.compiled.asm.contains("end"), "{}", out.compiled.asm);
    }
    let model: MaliModel = "g610".parse().unwrap();
    let target = ValhallTarget::new(model);
    assert!(!target.files().is_empty());
    let arch = model.arch();
    let word = valhall::assemble("FADD.f32 r0, r1, u4", arch).unwrap();
    assert_eq!(
        valhall::disassemble(word, arch).unwrap(),
        "FADD.f32 r0, r1, u4"
    );
    assert_eq!(files_parsed(), 0);

    // The counter counts: loading the text spec parses its files.
    use lathe::adreno::ir3::generated::SPEC_FILES;
    let root = std::path::Path::new(SPEC_FILES[0].0);
    lathe::isa::load_with(root, &lathe::isa::MemReader(SPEC_FILES)).unwrap();
    assert_eq!(files_parsed(), SPEC_FILES.len());
}
