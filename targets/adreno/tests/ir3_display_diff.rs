//! The generated ir3 disassembler against the engine it replaced (the
//! oracle): identical text and unexpected-bits note, or an error from both,
//! on every vector word, on bit flips of them and on random words at every
//! generation (`isa/tests/support/display_diff.rs` holds the comparison).

use lathe_adreno::ir3::generated::{Instr, isa};

#[path = "../../../isa/tests/support/display_diff.rs"]
mod display_diff;

const GENERATIONS: [u32; 5] = [300, 400, 500, 600, 700];

/// Random words per generation in the default (debug) test run; the
/// release run (`cargo test --release … -- --ignored`) does a million.
const WORDS_PER_GENERATION: u64 = 200_000;

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

fn run(count: u64) {
    let words: Vec<u64> = vectors().iter().map(|&(_, w)| w).collect();
    assert!(words.len() >= 200, "vector file not read");
    // Most uniformly random ir3 words are instructions.
    display_diff::run(&words, &GENERATIONS, count, count / 4, |rng, _| rng.next());
}

#[test]
fn generated_display_equals_engine() {
    run(WORDS_PER_GENERATION);
}

#[test]
#[ignore = "a million words per generation: run in release"]
fn generated_display_equals_engine_million() {
    run(1_000_000);
}

#[test]
fn dont_care_flips_decode_with_a_note() {
    let flipped = display_diff::dont_care_flips(&vectors());
    assert!(flipped > 1000, "only {flipped} don't-care flips tried");
}
