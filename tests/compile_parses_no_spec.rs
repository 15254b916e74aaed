//! A compile reads the spec models written at build time: compiling a
//! shader end to end (frontend, selection, the backend passes,
//! legalisation, emission, statistics, disassembly) for ir3 and Valhall,
//! and Valhall's disassembler and assembler, parse no `.isa` text. One test
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
    let target = std::rc::Rc::new(ValhallTarget::new(model));
    assert!(!target.files().is_empty());
    let text = "shader fragment\nb0:\n  %0:f32 = load_uniform index=0\n  %1:f32 = load_uniform index=1\n  %2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n";
    let arena = lathe::ir::Bump::new();
    let generic = lathe::ir::parse::<lathe::ir::GenericOp>(&arena, text).unwrap();
    let out = valhall::compile::compile(&generic, &target).unwrap();
    assert!(out.listing().contains("FMA.f32"), "{}", out.listing());
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
