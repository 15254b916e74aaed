//! Arrays on Valhall: promoted to SSA values before selection
//! (`lathe_passes::promote_arrays`), compiled whole for g57 and g610 and
//! checked by the verifier (interpreter against the simulator, with
//! hazards) on random programs that store and load at computed indices in
//! branches and loops (`lathe_passes::fuzzing::arrays`, shared with ir3's
//! test), and on a vertex shader indexing a constant table by its vertex
//! index. `VALHALL_ARRAY_PROGRAMS=N` runs N random programs (default 20).

use std::rc::Rc;

use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::{target::ValhallTarget, verify::ValhallProgram};
use lathe_passes::fuzzing::arrays::random_program;

fn compile_and_verify(text: &str, model: &str, options: &Options) -> Result<usize, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let generic =
        lathe_ir::parse::<GenericOp>(&arena, text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    lathe_ir::validate(&generic).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let target = Rc::new(ValhallTarget::new(model.parse().unwrap()));
    let out = compile_with(&generic, &target, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{model}: {e}\n{text}"));
    let listing = out.compiled.listing();
    assert!(
        !listing.is_empty() && !listing.contains("array"),
        "{listing}"
    );
    verify(&generic, &ValhallProgram::new(&out), options).map(|r| r.compared)
}

#[test]
fn random_programs_with_computed_indices_verify() {
    let programs: u64 = std::env::var("VALHALL_ARRAY_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    for seed in 0..programs {
        let text = random_program(seed);
        for model in ["g57", "g610"] {
            let options = Options {
                seed,
                threads: 8,
                ..Options::default()
            };
            match compile_and_verify(&text, model, &options) {
                Ok(compared) => assert!(compared >= 8 * 3, "seed {seed}: {compared} compared"),
                Err(e) => panic!("seed {seed} on {model}: {e}\n{text}"),
            }
        }
    }
}

/// A table of three positions indexed by the vertex index: with four
/// vertex threads the fourth reads past the table (undefined), so the
/// verifier compares the three others.
#[test]
fn a_constant_table_indexed_by_the_vertex_index() {
    let text = "shader vertex
array a0: f32[3]
b0:
  %0:u32 = load_sysval sv=vertex_index
  %1:f32 = const 0x3f800000
  %2:f32 = const 0xbf800000
  %3:f32 = const 0x40400000
  array_store array=a0 offset=0 %1
  array_store array=a0 offset=1 %2
  array_store array=a0 offset=2 %3
  %4:f32 = array_load array=a0 offset=0 addr=%0
  store_output slot=0 comp=0 %4
  ret
";
    for model in ["g57", "g610"] {
        assert_eq!(compile_and_verify(text, model, &Options::default()), Ok(3));
    }
}
