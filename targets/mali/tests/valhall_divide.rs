//! Integer division and remainder on Valhall (`udiv`, `umod`, `idiv`,
//! `irem` in `targets/mali/rules/valhall.rules`: a float reciprocal
//! estimate and integer corrections), compiled whole (selection,
//! allocation, legalisation, emission) and run on the generated simulator
//! with its hazard checks, many invocations per run. The oracle is Rust's
//! own `/` and `%` (`lathe_passes::fuzzing::divide`, shared with ir3's
//! test), not the IR interpreter; the verifier then also compares against
//! the interpreter on random draws. Every pair of edge values, then
//! random pairs (`VALHALL_DIVIDE_PAIRS=N`, default 4096).

use std::rc::Rc;

use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};
use lathe_mali::valhall::compile::{CompileOptions, Output, compile_with};
use lathe_mali::valhall::{target::ValhallTarget, verify::ValhallProgram};
use lathe_passes::fuzzing::divide::{PROGRAM, check_pairs, edge_pairs, random_pairs};

const MODELS: [&str; 2] = ["g57", "g610"];

fn compiled(model: &str) -> Output {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, PROGRAM).unwrap();
    let target = Rc::new(ValhallTarget::new(model.parse().unwrap()));
    compile_with(&generic, &target, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{model}: {e}"))
}

fn divides_exactly(pairs: &[(u32, u32)]) {
    for model in MODELS {
        let out = compiled(model);
        let checked = check_pairs(&ValhallProgram::new(&out), pairs)
            .unwrap_or_else(|e| panic!("{model}: {e}\n{}", out.compiled.listing()));
        assert!(
            checked >= pairs.len() * 3,
            "{model}: {checked} results checked"
        );
    }
}

#[test]
fn edge_value_pairs_divide_exactly() {
    divides_exactly(&edge_pairs());
}

#[test]
fn random_pairs_divide_exactly() {
    let count = std::env::var("VALHALL_DIVIDE_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4096);
    divides_exactly(&random_pairs(count));
}

/// The verifier's own random draws (interpreter against simulator, with
/// hazards) over several seeds.
#[test]
fn the_verifier_agrees_on_random_draws() {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, PROGRAM).unwrap();
    for model in MODELS {
        let out = compiled(model);
        for seed in 1..=16 {
            let options = Options {
                seed,
                threads: 16,
                ..Options::default()
            };
            let report = verify(&generic, &ValhallProgram::new(&out), &options)
                .unwrap_or_else(|e| panic!("{model} seed {seed}: {e}\n{}", out.compiled.listing()));
            // A thread dividing by zero is undefined and left out.
            assert!(
                report.compared % 4 == 0 && report.compared >= 4 * 8,
                "{} compared",
                report.compared
            );
        }
    }
}
