//! The generic optimisations (`fold`, `simplify`, `gvn`, `dce` through
//! `optimise`) proven by the interpreter: random programs from the
//! `ir_passes` generator give the same outcome before and after whenever
//! the original run is defined, and the result validates.
//! `OPTIMISE_PROGRAMS=N` runs N random programs (default 1000).
//!
//! The random programs are marked `preserve_float_specials`, so only the
//! exact rules run and outcomes must agree bit for bit; the float rules
//! that ignore signed zeros, infinities and NaNs are checked case by case
//! in `tests/simplify_rules.rs`.

use lathe_ir::exactness::Exactness;
use lathe_ir::interp::{self, InterpError, Invocation, Limits};
use lathe_ir::{GenericOp, Shader};
use lathe_passes::fuzzing::{GenLimits, generate, seed_bytes};
use lathe_passes::optimise::optimise;

/// Optimises `shader` and compares outcomes on `inv`; whether the
/// original run was defined (and so compared) and whether the program
/// shrank beyond what `dce` alone removes.
fn check(shader: &mut Shader<'_, GenericOp>, inv: &Invocation) -> (bool, bool) {
    let program = lathe_ir::print(shader);
    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let before = interp::run(shader, inv, limits);
    // What dead-code elimination alone removes does not count as optimised.
    lathe_passes::dce::eliminate(shader);
    let len = shader.len();
    optimise(shader);
    let after_text = lathe_ir::print(shader);
    lathe_ir::validate(shader)
        .unwrap_or_else(|e| panic!("invalid after optimise: {e}\n{program}\n{after_text}"));
    let shrank = shader.len() < len;
    match before {
        Ok(expected) => {
            let after = interp::run(shader, inv, limits)
                .unwrap_or_else(|e| panic!("after optimise: {e}\n{program}\n{after_text}"));
            // An undefined (poison) output may become any value, and an
            // approximate or undefined one exact (folded); every other
            // output keeps its bits, and nothing exact becomes inexact.
            let defined = |o: &interp::Outcome| {
                let mut outputs = o.outputs.clone();
                outputs.retain(|k, _| expected.inexact.get(k) != Some(&Exactness::Undefined));
                let mut meta = o.meta_outputs.clone();
                meta.retain(|k, _| expected.inexact_meta.get(k) != Some(&Exactness::Undefined));
                (outputs, meta, o.discarded)
            };
            assert_eq!(
                defined(&after),
                defined(&expected),
                "{program}\n{after_text}"
            );
            let refines = after
                .inexact
                .keys()
                .all(|k| expected.inexact.contains_key(k))
                && after
                    .inexact_meta
                    .keys()
                    .all(|k| expected.inexact_meta.contains_key(k));
            assert!(
                refines,
                "an exact output became inexact\n{program}\n{after_text}"
            );
            (true, shrank)
        }
        Err(InterpError::Undefined { .. } | InterpError::StepLimit(_)) => (false, shrank),
        Err(e) => panic!("interpreter: {e}\n{program}"),
    }
}

#[test]
fn random_programs_keep_their_outcomes() {
    let programs: u64 = std::env::var("OPTIMISE_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let (mut generated_count, mut compared, mut shrank_and_compared) = (0u64, 0u64, 0u64);
    for seed in 0..programs {
        let data = seed_bytes(seed, 2048);
        let mut u = arbitrary::Unstructured::new(&data);
        let arena = lathe_ir::Bump::new();
        let limits = GenLimits {
            max_insts: 120,
            ..GenLimits::default()
        };
        let Ok(generated) = generate(&arena, &mut u, limits) else {
            continue;
        };
        generated_count += 1;
        let mut shader = generated.shader;
        shader.preserve_float_specials = true;
        let (defined, shrank) = check(&mut shader, &generated.invocation);
        compared += defined as u64;
        shrank_and_compared += (defined && shrank) as u64;
    }
    eprintln!(
        "{generated_count} programs, {compared} defined runs compared, {shrank_and_compared} of them optimised"
    );
    assert!(
        generated_count * 10 >= programs * 9,
        "only {generated_count} generated"
    );
    assert!(compared * 2 >= generated_count, "only {compared} compared");
    assert!(
        shrank_and_compared * 4 >= compared,
        "only {shrank_and_compared} of {compared} compared programs changed"
    );
}
