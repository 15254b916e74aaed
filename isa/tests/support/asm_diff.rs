//! The differential check of a generated assembler against the engine
//! (the oracle), shared by the ir3 and Valhall tests, which include this
//! file with `#[path]` after importing their own generated `Instr`, `asm`
//! and `isa` (the generated API is the same for every ISA).
//!
//! Every line the generated disassembler prints is assembled both ways.
//! A generated word must print back exactly (checked by the engine's own
//! disassembler, independent of the generated one) and equal the engine's
//! word whenever the engine finds one.

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
    let fast = asm::assemble(&text, generation);
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
            eprintln!("fallback: `{text}` at generation {generation} (engine 0x{e:016x})");
            tally.fallback += 1
        }
        (None, Err(_)) => tally.neither += 1,
    }
}
