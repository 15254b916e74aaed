//! Bodies of the cargo-fuzz targets in `fuzz/`, kept here so that
//! `cargo test` runs them on a fixed seed set too.
//!
//! Both return an error message instead of panicking so that tests can
//! report it; the fuzz targets panic on `Err` to record the input.

use arbitrary::{Arbitrary, Unstructured};

use super::{Generation, assemble, disassemble, spec};

/// Any bytes: decoding never panics, and a word that disassembles
/// assembles back to a word with the same text (the assembler writes 0 in
/// don't-care bits, so the word itself may differ).
pub fn decode_body(data: &[u8]) -> Result<(), String> {
    spec().map_err(|e| e.to_string())?;
    for chunk in data.chunks(8) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        for generation in Generation::ALL {
            let Ok(text) = disassemble(word, generation) else {
                continue;
            };
            let again = assemble(&text, generation).map_err(|e| {
                format!("0x{word:016x} on {generation}: `{text}` does not assemble: {e}")
            })?;
            let text_again = disassemble(again, generation)
                .map_err(|e| format!("0x{again:016x} (from `{text}`) does not decode: {e}"))?;
            if text_again != text {
                return Err(format!(
                    "0x{word:016x} on {generation}: `{text}` → 0x{again:016x} → `{text_again}`"
                ));
            }
        }
    }
    Ok(())
}

/// An arbitrary instruction: a generation, a leaf valid there, and random
/// values in every bit the leaf does not fix (don't-care bits 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArbitraryInstr {
    /// The generation it was built for.
    pub generation: Generation,
    /// The spec leaf it was built from.
    pub leaf: lathe_isa::EncId,
    /// The instruction word.
    pub word: u64,
}

impl<'a> Arbitrary<'a> for ArbitraryInstr {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let generation = *u.choose(&Generation::ALL)?;
        let isa = spec().map_err(|_| arbitrary::Error::IncorrectFormat)?;
        let leaves: Vec<_> = isa
            .instructions()
            .filter(|&l| isa.encodings[l].generation.contains(generation.gpu_id()))
            .collect();
        let leaf = *u.choose(&leaves)?;
        let enc = &isa.encodings[leaf];
        let free = !(enc.mask | enc.dontcare);
        let bits = u64::arbitrary(u)?;
        Ok(ArbitraryInstr {
            generation,
            leaf,
            word: (bits & free) | enc.match_bits,
        })
    }
}

/// Arbitrary instructions through text and back: an instruction that
/// disassembles assembles to a word with the same text, and that word is
/// a fixed point (assembling its text gives it again).
pub fn roundtrip_body(data: &[u8]) -> Result<(), String> {
    spec().map_err(|e| e.to_string())?;
    let mut u = Unstructured::new(data);
    // Unstructured keeps yielding zeros once its data runs out: stop there.
    while !u.is_empty() {
        let Ok(instr) = ArbitraryInstr::arbitrary(&mut u) else {
            break;
        };
        let ArbitraryInstr {
            generation, word, ..
        } = instr;
        // A word may fail to show (an operand value no form covers); that
        // is a decode error, not a round-trip failure.
        let Ok(text) = disassemble(word, generation) else {
            continue;
        };
        let canonical = assemble(&text, generation).map_err(|e| {
            format!("0x{word:016x} on {generation}: `{text}` does not assemble: {e}")
        })?;
        let text_again = disassemble(canonical, generation)
            .map_err(|e| format!("0x{canonical:016x} does not decode: {e}"))?;
        if text_again != text {
            return Err(format!("`{text}` → 0x{canonical:016x} → `{text_again}`"));
        }
        let fixed = assemble(&text_again, generation)
            .map_err(|e| format!("`{text_again}` does not assemble: {e}"))?;
        if fixed != canonical {
            return Err(format!(
                "`{text}` assembles to 0x{canonical:016x} then 0x{fixed:016x}"
            ));
        }
    }
    Ok(())
}
