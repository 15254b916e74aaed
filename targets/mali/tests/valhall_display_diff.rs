//! The generated Valhall disassembler against the engine it replaced (the
//! oracle): identical text and unexpected-bits note, or an error from both,
//! on every vector word, on bit flips of them and on random words near
//! them at every generation (`isa/tests/support/display_diff.rs` holds the
//! comparison).

use lathe_mali::valhall::{Instr, isa};

#[path = "../../../isa/tests/support/display_diff.rs"]
mod display_diff;

const GENERATIONS: [u32; 3] = [9, 10, 11];

/// Random words per generation in the default (debug) test run; the
/// release run (`cargo test --release … -- --ignored`) does a million.
const WORDS_PER_GENERATION: u64 = 200_000;

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

fn run(count: u64) {
    let words = vector_words();
    assert!(words.len() >= 150, "vector file not read");
    // Uniformly random words almost never pass Valhall's validity rules;
    // random words near real ones (about 8 of 64 bits flipped) reach every
    // instruction and many of their operand forms.
    display_diff::run(&words, &GENERATIONS, count, count / 10, |rng, vectors| {
        let base = vectors[(rng.next() % vectors.len() as u64) as usize];
        base ^ (rng.next() & rng.next() & rng.next())
    });
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

/// Reserved bits outside the opcode fields of Mesa's XML are don't-care.
#[test]
fn dont_care_flips_decode_with_a_note() {
    let words: Vec<(u32, u64)> = vector_words().into_iter().map(|w| (10, w)).collect();
    let flipped = display_diff::dont_care_flips(&words);
    assert!(flipped > 1000, "only {flipped} don't-care flips tried");
}
