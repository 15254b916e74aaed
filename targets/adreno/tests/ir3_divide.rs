//! Integer division and remainder on ir3 (`udiv`, `umod`, `idiv`, `irem`
//! in `targets/adreno/rules/ir3.rules`: a float reciprocal estimate and
//! integer corrections), compiled whole (selection, allocation,
//! legalisation, emission) and run on the generated simulator with its
//! hazard checks, many invocations per run. The oracle is Rust's own
//! `/` and `%` on `u32`/`i32`, not the IR interpreter; the verifier then
//! also compares against the interpreter on random draws.
//!
//! Edge values: 0, 1, powers of two and their neighbours, 2^32 / k and its
//! successor (quotients near a step), `i32::MIN`, `i32::MAX`, `u32::MAX`,
//! all pairs of them, then random pairs whose divisor magnitude is spread
//! over every bit length (`IR3_DIVIDE_PAIRS=N`, default 4096).

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::verify::Ir3Program;
use lathe_adreno::ir3::{GpuModel, target::Ir3Target};
use lathe_ir::verify::{Executor, Options, verify};
use lathe_ir::{GenericOp, Invocation, Memory};

const PROGRAM: &str = "shader vertex
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = load_input slot=0 comp=1 interp=flat
  %2:u32 = udiv %0, %1
  %3:u32 = umod %0, %1
  %4:i32 = cvt %0
  %5:i32 = cvt %1
  %6:i32 = idiv %4, %5
  %7:i32 = irem %4, %5
  store_output slot=0 comp=0 %2
  store_output slot=0 comp=1 %3
  store_output slot=0 comp=2 %6
  store_output slot=0 comp=3 %7
  ret
";

fn edge_values() -> Vec<u32> {
    let mut v = vec![0, 1, 2, 3, 5, 7, 10, 641, 65537, 0x5555_5555, 0xaaaa_aaaa];
    for k in 0..32 {
        let p = 1u32 << k;
        v.extend([p, p.wrapping_sub(1), p.wrapping_add(1), p.wrapping_neg()]);
    }
    for k in 3..20u64 {
        let q = ((1u64 << 32) / k) as u32;
        v.extend([q, q.wrapping_add(1)]);
    }
    v.extend([i32::MAX as u32, u32::MAX, u32::MAX - 1]);
    v.sort_unstable();
    v.dedup();
    v
}

/// Random (numerator, divisor) pairs, the divisor shifted down by a random
/// amount so that every quotient size occurs.
fn random_pairs(count: usize) -> Vec<(u32, u32)> {
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let d = ((s >> 32) as u32) >> ((s >> 24) as u32 % 32);
        out.push((s as u32, d));
    }
    out
}

/// The expected outputs of `PROGRAM`, `None` where the IR leaves the
/// result undefined (a zero divisor; `i32::MIN / -1` for the signed pair).
fn expected(n: u32, d: u32) -> [Option<u32>; 4] {
    if d == 0 {
        return [None; 4];
    }
    let (a, b) = (n as i32, d as i32);
    let signed_ok = !(a == i32::MIN && b == -1);
    [
        Some(n / d),
        Some(n % d),
        signed_ok.then(|| (a / b) as u32),
        signed_ok.then(|| (a % b) as u32),
    ]
}

fn check_pairs(model: &str, pairs: &[(u32, u32)]) {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, PROGRAM).unwrap();
    let gpu = model.parse::<GpuModel>().unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let mut checked = 0;
    for chunk in pairs.chunks(64) {
        let threads: Vec<Invocation> = chunk
            .iter()
            .map(|&(n, d)| {
                let mut inv = Invocation::default();
                inv.inputs.insert((0, 0), n);
                inv.inputs.insert((0, 1), d);
                inv
            })
            .collect();
        let outcomes = program
            .execute(&threads, &mut Memory::default())
            .unwrap_or_else(|e| panic!("{model}: {e}\n{}", out.compiled.asm));
        for (&(n, d), outcome) in chunk.iter().zip(&outcomes) {
            for (comp, want) in expected(n, d).into_iter().enumerate() {
                let Some(want) = want else { continue };
                let (_, got) = outcome.outputs[&(0, comp as u8)];
                let op = ["udiv", "umod", "idiv", "irem"][comp];
                assert_eq!(
                    got, want,
                    "{model}: {op} {n:#x}, {d:#x}: got {got:#x}, want {want:#x}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= pairs.len() * 3, "{checked} results checked");
}

#[test]
fn edge_value_pairs_divide_exactly() {
    let edges = edge_values();
    let pairs: Vec<(u32, u32)> = edges
        .iter()
        .flat_map(|&n| edges.iter().map(move |&d| (n, d)))
        .filter(|&(_, d)| d != 0)
        .collect();
    for model in ["a630", "a740"] {
        check_pairs(model, &pairs);
    }
}

#[test]
fn random_pairs_divide_exactly() {
    let count = std::env::var("IR3_DIVIDE_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4096);
    let pairs: Vec<(u32, u32)> = random_pairs(count)
        .into_iter()
        .filter(|&(_, d)| d != 0)
        .collect();
    for model in ["a630", "a740"] {
        check_pairs(model, &pairs);
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
