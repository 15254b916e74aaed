//! The inputs and the oracle of the integer-division tests of every
//! target (`udiv`, `umod`, `idiv`, `irem` are lowered by each target's
//! rules to a reciprocal estimate and integer corrections): one vertex
//! program computing all four, the numerator and divisor pairs that
//! stress it, and Rust's own `/` and `%` as the expected results.
//!
//! Edge values: 0, 1, powers of two and their neighbours, 2^32 / k and its
//! successor (quotients near a step), `i32::MIN`, `i32::MAX`, `u32::MAX`;
//! random pairs have their divisor shifted down by a random amount so that
//! every quotient size occurs.

use lathe_ir::verify::Executor;
use lathe_ir::{Invocation, Memory};

/// Numerator in input 0.x, divisor in 0.y; outputs 0.x..0.w are `udiv`,
/// `umod`, `idiv`, `irem` of them (the signed pair on the same bits).
pub const PROGRAM: &str = "shader vertex
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

/// The edge values, sorted.
pub fn edge_values() -> Vec<u32> {
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

/// Every pair of edge values with a non-zero divisor.
pub fn edge_pairs() -> Vec<(u32, u32)> {
    let edges = edge_values();
    edges
        .iter()
        .flat_map(|&n| edges.iter().map(move |&d| (n, d)))
        .filter(|&(_, d)| d != 0)
        .collect()
}

/// `count` random pairs with a non-zero divisor (xorshift from a fixed
/// seed, so every run checks the same ones).
pub fn random_pairs(count: usize) -> Vec<(u32, u32)> {
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let d = ((s >> 32) as u32) >> ((s >> 24) as u32 % 32);
        if d != 0 {
            out.push((s as u32, d));
        }
    }
    out
}

/// The expected outputs of [`PROGRAM`], `None` where the IR leaves the
/// result undefined (a zero divisor; `i32::MIN / -1` for the signed pair).
pub fn expected(n: u32, d: u32) -> [Option<u32>; 4] {
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

/// Runs `program` (compiled from [`PROGRAM`]) on `pairs`, 64 threads at a
/// time, and compares every defined output with [`expected`]; returns
/// how many results were checked, or the first difference.
pub fn check_pairs(program: &dyn Executor, pairs: &[(u32, u32)]) -> Result<usize, String> {
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
            .map_err(|e| e.to_string())?;
        for (&(n, d), outcome) in chunk.iter().zip(&outcomes) {
            for (comp, want) in expected(n, d).into_iter().enumerate() {
                let Some(want) = want else { continue };
                let op = ["udiv", "umod", "idiv", "irem"][comp];
                let Some(&(_, got)) = outcome.outputs.get(&(0, comp as u8)) else {
                    return Err(format!("{op} {n:#x}, {d:#x}: no output"));
                };
                if got != want {
                    return Err(format!("{op} {n:#x}, {d:#x}: got {got:#x}, want {want:#x}"));
                }
                checked += 1;
            }
        }
    }
    Ok(checked)
}
