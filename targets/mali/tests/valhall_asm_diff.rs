//! The generated Valhall assembler against the engine (the oracle) on
//! every line the disassembler prints for the vectors, bit flips of them
//! and random words near them, at every generation
//! (`isa/tests/support/asm_diff.rs` holds the comparison).

use lathe_mali::valhall::generated::asm;
use lathe_mali::valhall::{Instr, isa};

#[path = "../../../isa/tests/support/asm_diff.rs"]
mod asm_diff;
#[path = "../../../isa/tests/support/display_diff.rs"]
#[allow(dead_code)]
mod display_diff;

use asm_diff::Tally;
use display_diff::XorShift;

const GENERATIONS: [u32; 3] = [9, 10, 11];

fn vector_words() -> Vec<u64> {
    // `02 00 00 00 00 c1 91 00    MOV.i32 r1, r2`: eight little-endian bytes.
    include_str!("valhall-data/assembler-cases.txt")
        .lines()
        .filter_map(|l| {
            let bytes: Vec<u8> = l
                .split_whitespace()
                .take(8)
                .map(|b| u8::from_str_radix(b, 16))
                .collect::<Result<_, _>>()
                .ok()?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?))
        })
        .collect()
}

/// Vectors, four bit flips of each, and `random` words near them (about 8
/// of 64 bits flipped: uniform words almost never decode) per generation;
/// the engine runs on every vector line and, with `all`, on every line
/// (otherwise on every 20th), the generated side on every line.
fn run(random: u64, all: bool) -> Vec<(u32, Tally)> {
    let vectors = vector_words();
    assert!(vectors.len() >= 150, "vector file not read");
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut out = Vec::new();
    for g in GENERATIONS {
        let mut t = Tally::default();
        for &w in &vectors {
            asm_diff::same(w, g, true, &mut t);
            for _ in 0..4 {
                asm_diff::same(w ^ (1u64 << (rng.next() % 64)), g, all, &mut t);
            }
        }
        for i in 0..random {
            let base = vectors[(rng.next() % vectors.len() as u64) as usize];
            let w = base ^ (rng.next() & rng.next() & rng.next());
            asm_diff::same(w, g, all || i % 20 == 0, &mut t);
        }
        eprintln!("generation {g}: {t:?}");
        out.push((g, t));
    }
    out
}

#[test]
fn generated_assembly_equals_engine() {
    for (g, t) in run(3_000, false) {
        assert!(t.lines > 1_000, "generation {g}: too few lines");
        assert_eq!(t.fallback, 0, "generation {g}: {t:?}");
        assert_eq!(t.generated_only, 0, "generation {g}: {t:?}");
    }
}

#[test]
#[ignore = "a million words per generation, the engine on each: run in release"]
fn generated_assembly_equals_engine_million() {
    for (g, t) in run(1_000_000, true) {
        assert_eq!(t.fallback, 0, "generation {g}: {t:?}");
    }
}
