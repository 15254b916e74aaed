//! Arrays on ir3: promoted to SSA values before selection
//! (`lathe_passes::promote_arrays`), compiled whole and checked by the
//! verifier (interpreter against the simulator, with hazards) on random
//! programs that store and load at computed indices in branches and
//! loops, and on a vertex shader indexing a constant table by its vertex
//! index. `IR3_ARRAY_PROGRAMS=N` runs N random programs (default 40).

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::verify::Ir3Program;
use lathe_adreno::ir3::{GpuModel, target::Ir3Target};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_passes::fuzzing::arrays;

fn compile_and_verify(text: &str, model: &str, options: &Options) -> Result<usize, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let generic =
        lathe_ir::parse::<GenericOp>(&arena, text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    lathe_ir::validate(&generic).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let gpu = model.parse::<GpuModel>().unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{model}: {e}\n{text}"));
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    verify(&generic, &program, options).map(|r| r.compared)
}

#[test]
fn random_programs_with_computed_indices_verify() {
    let programs: u64 = std::env::var("IR3_ARRAY_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    arrays::check_random_programs(programs, &["a630", "a740"], compile_and_verify);
}

/// The fourth of four vertex threads reads past the table (undefined);
/// the three others are compared.
#[test]
fn a_constant_table_indexed_by_the_vertex_index() {
    for model in ["a630", "a740"] {
        assert_eq!(
            compile_and_verify(arrays::VERTEX_INDEXED_TABLE, model, &Options::default()),
            Ok(3)
        );
    }
}
