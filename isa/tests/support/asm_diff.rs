//! The differential check of a generated assembler against the engine
//! (the oracle), shared by the ir3 and Valhall tests, which include this
//! file and `display_diff.rs` (for its `XorShift`) with `#[path]` after
//! importing their own generated `Instr`, `asm` and `isa` (the generated
//! API is the same for every ISA).
//!
//! Every line the generated disassembler prints is assembled both ways.
//! A generated word must print back exactly (checked by the engine's own
//! disassembler, independent of the generated one) and equal the engine's
//! word whenever the engine finds one.

use super::display_diff::XorShift;
use super::{Instr, asm, isa};

/// What happened to the lines of one run.
#[derive(Debug, Default)]
pub struct Tally {
    /// Lines printed by the disassembler.
    pub lines: u64,
    /// Assembled by the generated code.
    pub generated: u64,
    /// Of those, also assembled by the engine (to the same word).
    pub both: u64,
    /// Both assembled it to different words that show the same text (bits
    /// the text does not determine).
    pub equivalent: u64,
    /// The generated code gave up; the engine assembled the line.
    pub fallback: u64,
    /// Neither could assemble the line.
    pub neither: u64,
    /// The generated code assembled a line the engine cannot.
    pub generated_only: u64,
    /// The generated code gave up on a line the engine was not asked about.
    pub unchecked_misses: u64,
    /// The generated code said no form reads a line (a definitive miss,
    /// which selection trusts without asking the engine) that the engine
    /// assembled.
    pub wrong_no_form: u64,
}

/// Compares both assemblers on the text of `word`, if it has one; with
/// `engine` false only the generated side runs (and its word is checked
/// to print back by the engine's disassembler).
pub fn same(word: u64, generation: u32, engine: bool, tally: &mut Tally) {
    let Some(instr) = Instr::decode(word, generation) else {
        return;
    };
    let mut text = String::new();
    if instr.write_text(&mut text).is_err() {
        return;
    }
    tally.lines += 1;
    let spec = isa();
    let result = asm::try_assemble(&text, generation);
    let fast = result.ok();
    if let Some(w) = fast {
        tally.generated += 1;
        let back = spec.disassemble(w, generation);
        assert_eq!(
            back.as_deref(),
            Ok(text.as_str()),
            "`{text}` at generation {generation}: generated word 0x{w:016x} does not print back"
        );
    }
    if !engine {
        tally.unchecked_misses += u64::from(fast.is_none());
        return;
    }
    match (fast, spec.assemble(&text, generation)) {
        (Some(g), Ok(e)) if g == e => tally.both += 1,
        (Some(g), Ok(e)) => {
            // The text does not fix every bit: both words must show it.
            assert_eq!(
                spec.disassemble(e, generation).as_deref(),
                Ok(text.as_str()),
                "`{text}` at generation {generation}: generated 0x{g:016x}, engine 0x{e:016x}"
            );
            tally.equivalent += 1;
        }
        (Some(_), Err(_)) => tally.generated_only += 1,
        (None, Ok(e)) => {
            eprintln!(
                "fallback: `{text}` at generation {generation} (engine 0x{e:016x}, generated {result:?})"
            );
            tally.fallback += 1;
            if result == Err(lathe_isa::asm_rt::Miss::NoForm) {
                tally.wrong_no_form += 1;
            }
        }
        (None, Err(_)) => tally.neither += 1,
    }
}

/// Vectors, four bit flips of each, and `count` words from `random` (given
/// the generator and the vectors) per generation. The engine runs on every
/// vector line and, with `engine_every` = 1, on every line (otherwise on
/// every `engine_every`-th random one: the engine is slow in debug
/// builds); the generated side runs on every line. Returns the tally of
/// each generation, also printed.
pub fn run(
    vectors: &[u64],
    generations: &[u32],
    count: u64,
    engine_every: u64,
    mut random: impl FnMut(&mut XorShift, &[u64]) -> u64,
) -> Vec<(u32, Tally)> {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut out = Vec::new();
    for &g in generations {
        let mut t = Tally::default();
        for &w in vectors {
            same(w, g, true, &mut t);
            for _ in 0..4 {
                let flipped = w ^ (1u64 << (rng.next() % 64));
                same(flipped, g, engine_every == 1, &mut t);
            }
        }
        for i in 0..count {
            let w = random(&mut rng, vectors);
            same(w, g, i % engine_every == 0, &mut t);
        }
        eprintln!("generation {g}: {t:?}");
        out.push((g, t));
    }
    out
}

/// The default (debug) run: enough lines, no fallback to the engine, no
/// line only the generated side assembles.
pub fn check_small(tallies: &[(u32, Tally)]) {
    for (g, t) in tallies {
        assert!(t.lines > 1_000, "generation {g}: too few lines");
        assert_eq!(t.fallback, 0, "generation {g}: {t:?}");
        assert_eq!(t.generated_only, 0, "generation {g}: {t:?}");
        assert_eq!(t.wrong_no_form, 0, "generation {g}: {t:?}");
    }
}

/// The release run with the engine on every line: additionally every
/// line is assembled by one side at least.
pub fn check_all(tallies: &[(u32, Tally)]) {
    check_small(tallies);
    for (g, t) in tallies {
        assert_eq!(t.neither, 0, "generation {g}: {t:?}");
        assert_eq!(t.unchecked_misses, 0, "generation {g}: {t:?}");
    }
}
