//! The generated ir3 assembler against the engine (the oracle) on every
//! line the disassembler prints for the vectors, bit flips of them and
//! random words, at every generation (`isa/tests/support/asm_diff.rs`
//! holds the comparison).

use lathe_adreno::ir3::generated::{Instr, asm, isa};

#[path = "../../../isa/tests/support/asm_diff.rs"]
mod asm_diff;
#[path = "../../../isa/tests/support/display_diff.rs"]
#[allow(dead_code)]
mod display_diff;

use asm_diff::Tally;
use display_diff::XorShift;

const GENERATIONS: [u32; 5] = [300, 400, 500, 600, 700];

/// `(generation, word)` of every vector row.
fn vectors() -> Vec<(u32, u64)> {
    include_str!("ir3-data/ir3-disasm.tsv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Some((
                c.get(2)?.parse().ok()?,
                u64::from_str_radix(c.get(3)?, 16).ok()?,
            ))
        })
        .collect()
}

/// Vectors, four bit flips of each, and `random` random words per
/// generation; the engine runs on every vector line and, with `all`, on
/// every line (otherwise on every 100th random one: the engine is slow in
/// debug builds), the generated side on every line.
fn run(random: u64, all: bool) -> Vec<(u32, Tally)> {
    let vectors = vectors();
    assert!(vectors.len() >= 200, "vector file not read");
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut out = Vec::new();
    for g in GENERATIONS {
        let mut t = Tally::default();
        for &(_, w) in &vectors {
            asm_diff::same(w, g, true, &mut t);
            for _ in 0..4 {
                asm_diff::same(w ^ (1u64 << (rng.next() % 64)), g, all, &mut t);
            }
        }
        for i in 0..random {
            asm_diff::same(rng.next(), g, all || i % 100 == 0, &mut t);
        }
        eprintln!("generation {g}: {t:?}");
        out.push((g, t));
    }
    out
}

#[test]
fn generated_assembly_equals_engine() {
    for (g, t) in run(2_000, false) {
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
