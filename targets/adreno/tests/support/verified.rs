//! Shared by the ir3 buffer-load tests: compile generic IR text for a
//! GPU model and verify it (interpreter against the simulator).

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::verify::Ir3Program;
use lathe_adreno::ir3::{GpuModel, target::Ir3Target};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};

/// The disassembly for `model` and the number of values the verifier
/// compared.
pub fn compile_and_verify(text: &str, model: &str) -> (String, usize) {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap_or_else(|e| panic!("{e:?}"));
    let gpu = model.parse::<GpuModel>().unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{model}: {e}\n{text}"));
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let report = verify(&generic, &program, &Options::default())
        .unwrap_or_else(|e| panic!("{model}: {e:?}\n{}", out.compiled.asm));
    (out.compiled.asm, report.compared)
}
