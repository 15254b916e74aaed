//! Integer division and remainder on ir3 (`udiv`, `umod`, `idiv`, `irem`
//! in `targets/adreno/rules/ir3.rules`: a float reciprocal estimate and
//! integer corrections), compiled whole (selection, allocation,
//! legalisation, emission) and run on the generated simulator with its
//! hazard checks, many invocations per run. The oracle is Rust's own
//! `/` and `%` on `u32`/`i32` (`lathe_passes::fuzzing::divide`, shared
//! with Valhall's test), not the IR interpreter; the verifier then also
//! compares against the interpreter on random draws. Every pair of edge
//! values, then random pairs (`IR3_DIVIDE_PAIRS=N`, default 4096).

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::verify::Ir3Program;
use lathe_adreno::ir3::{GpuModel, target::Ir3Target};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};
use lathe_passes::fuzzing::divide::{PROGRAM, check_pairs, edge_pairs, random_pairs};

fn check(model: &str, pairs: &[(u32, u32)]) {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, PROGRAM).unwrap();
    let gpu = model.parse::<GpuModel>().unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let checked = check_pairs(&program, pairs)
        .unwrap_or_else(|e| panic!("{model}: {e}\n{}", out.compiled.asm));
    assert!(checked >= pairs.len() * 3, "{checked} results checked");
}

#[test]
fn edge_value_pairs_divide_exactly() {
    let pairs = edge_pairs();
    for model in ["a630", "a740"] {
        check(model, &pairs);
    }
}

#[test]
fn random_pairs_divide_exactly() {
    let count = std::env::var("IR3_DIVIDE_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4096);
    let pairs = random_pairs(count);
    for model in ["a630", "a740"] {
        check(model, &pairs);
    }
}

/// The verifier's own random draws (interpreter against simulator, with
/// hazards) over several seeds.
#[test]
fn the_verifier_agrees_on_random_draws() {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, PROGRAM).unwrap();
    for model in ["a630", "a740"] {
        let gpu = model.parse::<GpuModel>().unwrap();
        let target = Rc::new(Ir3Target::new(gpu).unwrap());
        let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        for seed in 1..=16 {
            let options = Options {
                seed,
                threads: 16,
                ..Options::default()
            };
            let report = verify(&generic, &program, &options)
                .unwrap_or_else(|e| panic!("{model} seed {seed}: {e}\n{}", out.compiled.asm));
            // A thread dividing by zero is undefined and left out.
            assert!(
                report.compared % 4 == 0 && report.compared >= 4 * 8,
                "{} compared",
                report.compared
            );
        }
    }
}
