//! Arrays on Valhall: short ones promoted to SSA values before selection
//! (`lathe_passes::promote_arrays`), long ones in private memory behind
//! the thread-local pointer (`lathe_passes::private_arrays`), compiled
//! whole for g57 and g610 and
//! checked by the verifier (interpreter against the simulator, with
//! hazards) on random programs that store and load at computed indices in
//! branches and loops (`lathe_passes::fuzzing::arrays`, shared with ir3's
//! test), and on a vertex shader indexing a constant table by its vertex
//! index; a longer table becomes constant data read with LOAD
//! (`lathe_passes::constant_data`). `VALHALL_ARRAY_PROGRAMS=N` runs N random programs (default 20).

use std::rc::Rc;

use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::{target::ValhallTarget, verify::ValhallProgram};
use lathe_passes::fuzzing::arrays;

fn compile_and_verify(text: &str, model: &str, options: &Options) -> Result<usize, VerifyError> {
    compile_and_verify_with(text, model, options, |_| {})
}

/// [`compile_and_verify`], showing the compiled shader to `check` first.
fn compile_and_verify_with(
    text: &str,
    model: &str,
    options: &Options,
    check: impl FnOnce(&lathe_mali::valhall::compile::Output),
) -> Result<usize, VerifyError> {
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
    check(&out);
    verify(&generic, &ValhallProgram::new(&out), options).map(|r| r.compared)
}

#[test]
fn random_programs_with_computed_indices_verify() {
    let programs: u64 = std::env::var("VALHALL_ARRAY_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    arrays::check_random_programs(programs, &["g57", "g610"], compile_and_verify);
}

/// The fourth of four vertex threads reads past the table (undefined);
/// the three others are compared.
#[test]
fn a_constant_table_indexed_by_the_vertex_index() {
    for model in ["g57", "g610"] {
        assert_eq!(
            compile_and_verify(arrays::VERTEX_INDEXED_TABLE, model, &Options::default()),
            Ok(3)
        );
    }
}

/// A 100-word array indexed at run time stays in thread-local storage:
/// LOAD/STORE at addresses computed from the thread-local pointer, the
/// compiled shader asks for its 400 bytes, they are no spills, and
/// every thread's result matches the interpreter's (each thread's
/// private memory its own).
#[test]
fn a_long_array_lives_in_private_memory() {
    for model in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, arrays::PRIVATE_ARRAY).unwrap();
        let target = Rc::new(ValhallTarget::new(model.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
        let listing = out.compiled.listing();
        assert!(listing.contains("thread_local_pointer"), "{listing}");
        assert!(
            listing.contains("STORE.i32") && listing.contains("LOAD.i32"),
            "{listing}"
        );
        assert!(
            out.compiled.private_bytes >= 400,
            "{}",
            out.compiled.private_bytes
        );
        let stats = out.compiled.stats.to_string();
        assert!(stats.ends_with(" 0:0 spills:fills"), "{stats}");
        let compared = verify(&generic, &ValhallProgram::new(&out), &Options::default())
            .unwrap()
            .compared;
        assert!(compared >= 4 * 4, "{model}: {compared} compared");
    }
}

/// Six elements read at a computed index: constant data (the words
/// packed) read from memory; the three threads inside the table are
/// compared.
#[test]
fn a_longer_constant_table_is_constant_data() {
    for model in ["g57", "g610"] {
        let compared = compile_and_verify_with(
            arrays::VERTEX_INDEXED_VEC2_TABLE,
            model,
            &Options::default(),
            |out| {
                // The loads are in the varying shader of an IDVS pair.
                let out = out.varying.as_deref().unwrap_or(out);
                let data = out.io.constant_data.as_ref();
                let data = data.unwrap_or_else(|| panic!("{model}: no constant data"));
                let half = 0.5f32.to_bits();
                let minus = (-0.5f32).to_bits();
                assert_eq!(data.words, [0, half, minus, minus, half, minus], "{model}");
                assert!(
                    out.io.addresses.iter().any(|a| a.binding == data.binding),
                    "{model}"
                );
            },
        );
        assert_eq!(compared, Ok(6), "{model}");
    }
}
