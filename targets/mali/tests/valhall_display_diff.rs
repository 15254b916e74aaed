//! The generated Valhall disassembler against the engine it replaced (the
//! oracle): identical text and unexpected-bits note, or an error from both,
//! on every vector word, on bit flips of them and on random words near
//! them at every generation (`isa/tests/support/display_diff.rs` holds the
//! comparison).

use lathe_mali::valhall::generated::{Field, Opcode, Value, display};
use lathe_mali::valhall::{Instr, isa};

#[path = "../../../isa/tests/support/display_diff.rs"]
mod display_diff;
#[path = "../../../isa/tests/support/typed_diff.rs"]
mod typed_diff;
#[path = "support/vectors.rs"]
mod vectors;

const GENERATIONS: [u32; 3] = [9, 10, 11];

/// Random words per generation in the default (debug) test run; the
/// release run (`cargo test --release … -- --ignored`) does a million.
const WORDS_PER_GENERATION: u64 = 200_000;

fn run(count: u64) {
    let words = vectors::words();
    display_diff::run(&words, &GENERATIONS, count, count / 10, vectors::near);
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
    let words: Vec<(u32, u64)> = vectors::words().into_iter().map(|w| (10, w)).collect();
    let flipped = display_diff::dont_care_flips(&words);
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

/// Unexpected bits are shown, not hidden: of 2,000 copies of the vector
/// words with one random bit flipped, a word prints as `raw` only when it
/// matches no instruction; every other one decodes, with a `\t; ` note
/// exactly when it sets don't-care bits, breaks an `assert` or breaks a
/// `check` rule (which the note then names, as the validator words it)
/// (`-- --nocapture` prints the counts).
#[test]
fn flipped_words_print_raw_only_when_nothing_matches() {
    use lathe_mali::valhall::{Arch, write_line};
    let words = vectors::words();
    let mut rng = display_diff::XorShift(0x2d35_8dcc_aa6c_78a5);
    let (mut raw, mut broken, mut noted, mut clean) = (0, 0, 0, 0);
    let mut line = String::new();
    for _ in 0..2_000 {
        let base = words[(rng.next() % words.len() as u64) as usize];
        let w = base ^ (1u64 << (rng.next() % 64));
        line.clear();
        write_line(w, Arch::V10, &mut line);
        let Some(instr) = Instr::decode(w, 10) else {
            assert!(
                line.starts_with("raw "),
                "0x{w:016x} matches nothing but prints `{line}`"
            );
            raw += 1;
            continue;
        };
        assert!(
            !line.starts_with("raw "),
            "0x{w:016x} decodes but prints `{line}`"
        );
        let rule = instr.validate().err();
        let unexpected = !instr.warnings().is_empty() || rule.is_some();
        assert_eq!(line.contains("\t; "), unexpected, "0x{w:016x}: `{line}`");
        if let Some(rule) = rule {
            assert!(line.ends_with(&rule.to_string()), "0x{w:016x}: `{line}`");
            broken += 1;
        } else if unexpected {
            noted += 1;
        } else {
            clean += 1;
        }
    }
    eprintln!(
        "2000 flipped words: {clean} clean, {noted} with a note, {broken} break a check rule, {raw} raw (match no instruction)"
    );
    assert!(noted > 300, "only {noted} words with a note");
    assert!(broken > 0, "no flipped word breaks a check rule");
}
