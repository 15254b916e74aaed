//! The Adreno ir3 instruction set (a3xx..a7xx): disassembly and assembly of
//! 64-bit instruction words.
//!
//! Everything this module knows about the encoding comes from the `.isa`
//! spec in `isa/specs/adreno/`. The text is the one Mesa's ir3 tools print,
//! byte for byte, at the generation of the GPU's series, so dumps can be
//! compared with theirs.
//!
//! ```
//! use lathe_adreno::ir3::{assemble, disassemble, Generation};
//!
//! let word = 0x4228_0807_27ff_0000;
//! assert_eq!(disassemble(word, Generation::A6xx).unwrap(), "(nop3) add.s hr1.w, hr0.x, h(-1)");
//! assert_eq!(assemble("(nop3) add.s hr1.w, hr0.x, h(-1)", Generation::A6xx).unwrap(), word);
//!
//! // A word that is no instruction is shown as a raw literal, which the
//! // assembler accepts back.
//! let mut line = String::new();
//! lathe_adreno::ir3::write_line(u64::MAX, Generation::A6xx, &mut line).unwrap();
//! assert_eq!(line, "raw 0xFFFFFFFFFFFFFFFF");
//! assert_eq!(assemble(&line, Generation::A6xx).unwrap(), u64::MAX);
//! ```

pub mod abi;
pub mod collects;
pub mod compile;
pub mod delay;
pub mod emit;
pub mod fuzzing;
pub mod generated;
mod gpu;
pub mod layers;
pub mod legalise;
pub mod memory_offsets;
pub mod oracle;
pub mod prefetch;
pub mod run;
pub mod select;
pub mod sim;
mod source;
mod spec;
pub mod stats;
pub mod target;
pub mod verify;

pub use gpu::{Generation, GpuModel, UnknownGpu};
pub use source::{
    PartialWord, SourceError, assemble_source, words_from_le_bytes, words_to_le_bytes,
};

use std::fmt::Write as _;

/// Why a word could not be disassembled or a line not assembled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The embedded spec failed the checker (a build defect, reported
    /// rather than panicking).
    #[error("the embedded ir3 spec is invalid:\n{0}")]
    Spec(String),
    /// No instruction encoding of the generation matches the word.
    #[error("0x{word:016x} is not an ir3 instruction on {generation}")]
    NoMatch {
        /// The word.
        word: u64,
        /// The generation asked for.
        generation: Generation,
    },
    /// The word matches an encoding but cannot be shown (for example a
    /// sub-operand that matches no operand form).
    #[error("cannot disassemble 0x{word:016x} on {generation}: {message}")]
    Disassemble {
        /// The word.
        word: u64,
        /// The generation asked for.
        generation: Generation,
        /// What went wrong.
        message: String,
    },
    /// The text is no instruction of the generation.
    #[error("{message}")]
    Assemble {
        /// What went wrong.
        message: String,
        /// 1-based character column inside the text it points at, if known.
        column: Option<usize>,
    },
}

fn spec() -> Result<&'static lathe_isa::Isa, Error> {
    spec::isa().map_err(|e| Error::Spec(e.to_string()))
}

/// Appends the text of `word` to `out` (no newline).
///
/// On error nothing is appended.
pub fn disassemble_into(word: u64, generation: Generation, out: &mut String) -> Result<(), Error> {
    write_text(word, generation, false, out)
}

/// The text, with a `\t; ` note when `note` is set and the word sets bits
/// the spec marks don't-care or asserts otherwise.
fn write_text(
    word: u64,
    generation: Generation,
    note: bool,
    out: &mut String,
) -> Result<(), Error> {
    let start = out.len();
    match generated::display::push_word(word, generation.gpu_id(), true, note, out) {
        Ok(_) => Ok(()),
        Err(e) => {
            out.truncate(start);
            Err(match e {
                lathe_isa::DisasmError::NoMatch { .. } => Error::NoMatch { word, generation },
                other => Error::Disassemble {
                    word,
                    generation,
                    message: other.to_string(),
                },
            })
        }
    }
}

/// The text of `word`.
pub fn disassemble(word: u64, generation: Generation) -> Result<String, Error> {
    let mut s = String::new();
    disassemble_into(word, generation, &mut s)?;
    Ok(s)
}

/// Appends what `lathe disasm` prints for `word` (without the newline):
/// its text (with a `\t; ` note naming set don't-care bits and `assert`
/// bits that differ, as Mesa's decoder does with errors shown), or
/// `raw 0x…` (16 upper-case hex digits) when the word is no instruction of
/// the generation.
///
/// Mesa prints `raw 0x%X%X` of the low then the high dword, unpadded;
/// for words whose low dword has leading zeros that is not the word's
/// value. This form always is, and equals Mesa's for the all-ones word.
/// Only a defective embedded spec is an error.
pub fn write_line(word: u64, generation: Generation, out: &mut String) -> Result<(), Error> {
    match write_text(word, generation, true, out) {
        Ok(()) => Ok(()),
        Err(Error::NoMatch { .. } | Error::Disassemble { .. }) => {
            // Writing into a String cannot fail.
            let _ = write!(out, "raw 0x{word:016X}");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Assembles one instruction (`raw 0x…` gives the word literally).
pub fn assemble(text: &str, generation: Generation) -> Result<u64, Error> {
    if let Some(word) = parse_raw(text) {
        return word;
    }
    // Generated forms first; the embedded spec is loaded only when they
    // cannot tell (the engine then assembles or explains the error).
    if let Some(word) = generated::asm::assemble(text, generation.gpu_id()) {
        return Ok(word);
    }
    spec()?
        .assemble(text, generation.gpu_id())
        .map_err(|e| Error::Assemble {
            message: e.to_string(),
            column: e.column(),
        })
}

/// `raw 0x…` (or `raw N`): Mesa's assembler takes it as the literal word.
fn parse_raw(text: &str) -> Option<Result<u64, Error>> {
    let rest = text.trim().strip_prefix("raw")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let digits = rest.trim();
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse::<u64>(),
    };
    Some(parsed.map_err(|_| Error::Assemble {
        message: format!("`{digits}` is not a 64-bit raw word"),
        column: None,
    }))
}

/// Instruction metadata from the spec, for a decoded word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The instruction's mnemonic (as `{NAME}` prints it).
    pub mnemonic: String,
    /// Category 0..=7.
    pub category: u8,
    /// Latency class of the spec's delay table.
    pub latency: String,
    /// `ss`, `sy` or `none`.
    pub sync: String,
}

/// The spec's metadata for the instruction `word` decodes to (generated
/// tables: no spec at run time).
pub fn info(word: u64, generation: Generation) -> Result<Info, Error> {
    let op = decode_opcode(word, generation).ok_or(Error::NoMatch { word, generation })?;
    let text = |key: &str| op.meta(key).map(|v| v.text()).unwrap_or_default();
    Ok(Info {
        mnemonic: op.info().mnemonic.to_string(),
        category: text("category").parse().unwrap_or(u8::MAX),
        latency: text("latency"),
        sync: text("sync"),
    })
}

/// The instruction `word` decodes to, without showing it: the cheapest
/// query (generated nested matches on the opcode bits), for scanning
/// binaries. `None` when nothing matches.
#[inline]
pub fn decode_opcode(word: u64, generation: Generation) -> Option<generated::Opcode> {
    generated::Opcode::decode(word, generation.gpu_id())
}
