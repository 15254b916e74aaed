//! The generated ir3 disassembler against the engine it replaced (the
//! oracle): identical text and unexpected-bits note, or an error from both,
//! on every vector word, on bit flips of them and on random words at every
//! generation (`isa/tests/support/display_diff.rs` holds the comparison).

use lathe_adreno::ir3::generated::{Field, Instr, Opcode, Value, display, isa};

#[path = "../../../isa/tests/support/display_diff.rs"]
mod display_diff;
#[path = "../../../isa/tests/support/typed_diff.rs"]
mod typed_diff;
#[path = "support/vectors.rs"]
mod vectors;

const GENERATIONS: [u32; 5] = [300, 400, 500, 600, 700];

/// Random words per generation in the default (debug) test run; the
/// release run (`cargo test --release … -- --ignored`) does a million.
const WORDS_PER_GENERATION: u64 = 200_000;

fn run(count: u64) {
    let words = vectors::words();
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
    let flipped = display_diff::dont_care_flips(&vectors::vectors());
    assert!(flipped > 1000, "only {flipped} don't-care flips tried");
}

/// The generated typed accessors, validation and metadata against the
/// engine on every vector word and a bit flip of each, at every generation.
#[test]
fn typed_accessors_equal_engine() {
    let mut rng = display_diff::XorShift(0x5851_f42d_4c95_7f2d);
    let mut compared = 0;
    for g in GENERATIONS {
        for w in vectors::words() {
            compared += typed_diff::fields_same(w, g);
            compared += typed_diff::fields_same(w ^ (1u64 << (rng.next() % 64)), g);
        }
    }
    assert!(compared > 5_000, "only {compared} fields compared");
    let metas = typed_diff::meta_same();
    assert!(metas > 200, "only {metas} metadata values compared");
}
