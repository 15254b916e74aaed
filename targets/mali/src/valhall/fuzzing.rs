//! Bodies of the `valhall_decode` and `valhall_roundtrip` fuzz targets, kept
//! here so they build and run with the rest of the crate (fixed-seed tests
//! below) while the cargo-fuzz harness in `fuzz/` stays a thin wrapper.
//!
//! Both check the same promise from two ends: any word the disassembler
//! accepts prints a line that the assembler turns back into a word with
//! the very same text. (Words are compared through their text because some
//! words print alike, e.g. the two zero entries of the immediate table.)

use arbitrary::{Arbitrary, Unstructured};

use super::{Arch, Error, Opcode, assemble, disassemble};

/// A broken promise found by a fuzz body.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("0x{word:016x} ({arch}): {problem}")]
pub struct Finding {
    /// The word that exposed it.
    pub word: u64,
    /// The architecture it was decoded for.
    pub arch: Arch,
    /// What went wrong.
    pub problem: String,
}

const ARCHS: [Arch; 2] = [Arch::V9, Arch::V10];

/// Disassembles `word`; if that succeeds, the text must assemble to a word
/// that prints the same text, and assembling that text again must give the
/// same word (the assembler's choice is a fixed point).
fn check_word(word: u64, arch: Arch) -> Result<(), Finding> {
    let finding = |problem: String| Finding {
        word,
        arch,
        problem,
    };
    let text = match disassemble(word, arch) {
        Ok(text) => text,
        // Not an instruction, or an operand value no form covers: a decode
        // error, which is allowed.
        Err(Error::Undefined { .. } | Error::Disassemble { .. }) => return Ok(()),
        Err(e) => return Err(finding(e.to_string())),
    };
    let canonical =
        assemble(&text, arch).map_err(|e| finding(format!("`{text}` does not assemble: {e}")))?;
    let again = disassemble(canonical, arch).map_err(|e| {
        finding(format!(
            "`{text}` assembles to 0x{canonical:016x}, which does not disassemble: {e}"
        ))
    })?;
    if again != text {
        return Err(finding(format!(
            "`{text}` assembles to 0x{canonical:016x}, which prints `{again}`"
        )));
    }
    let fixed =
        assemble(&again, arch).map_err(|e| finding(format!("`{again}` does not assemble: {e}")))?;
    if fixed != canonical {
        return Err(finding(format!(
            "`{text}` assembles to 0x{canonical:016x}, then to 0x{fixed:016x}"
        )));
    }
    Ok(())
}

/// `valhall_decode`: every 8-byte little-endian word of `data`, on every
/// architecture. Trailing bytes that do not make a word are ignored.
pub fn decode_body(data: &[u8]) -> Result<(), Finding> {
    for chunk in data.chunks_exact(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        let word = u64::from_le_bytes(b);
        for arch in ARCHS {
            check_word(word, arch)?;
        }
    }
    Ok(())
}

/// A structure-aware random instruction: an architecture, an opcode that
/// exists there, and random values in every bit its pattern leaves free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArbitraryWord {
    /// The architecture it was built for.
    pub arch: Arch,
    /// The opcode whose pattern it carries.
    pub opcode: Opcode,
    /// The instruction word.
    pub word: u64,
}

impl<'a> Arbitrary<'a> for ArbitraryWord {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let arch = *u.choose(&ARCHS)?;
        let opcode = *u.choose(&Opcode::ALL)?;
        if !opcode.exists_at(arch.generation()) {
            return Err(arbitrary::Error::IncorrectFormat);
        }
        let info = opcode.info();
        let bits = u64::arbitrary(u)?;
        Ok(ArbitraryWord {
            arch,
            opcode,
            word: (bits & !info.mask) | info.match_bits,
        })
    }
}

/// `valhall_roundtrip`: structure-aware words (see [`ArbitraryWord`]) so
/// nearly every input reaches a real instruction's operand fields; each must
/// decode to its own opcode and pass the same text round trip.
pub fn roundtrip_body(data: &[u8]) -> Result<(), Finding> {
    let mut u = Unstructured::new(data);
    while !u.is_empty() {
        let Ok(ArbitraryWord { arch, opcode, word }) = ArbitraryWord::arbitrary(&mut u) else {
            continue;
        };
        match super::decode(word, arch) {
            Ok(instr) if instr.opcode == opcode => {}
            other => {
                return Err(Finding {
                    word,
                    arch,
                    problem: format!("built for {opcode:?} but decodes as {other:?}"),
                });
            }
        }
        check_word(word, arch)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (64-bit LCG) for fixed-seed runs.
    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn decode_body_holds_on_vectors_and_random_words() {
        let cases = include_str!("../../tests/valhall-data/assembler-cases.txt");
        let mut data = Vec::new();
        for line in cases.lines() {
            for hex in line[..23].split(' ') {
                data.push(u8::from_str_radix(hex, 16).unwrap());
            }
        }
        decode_body(&data).unwrap();
        decode_body(&bytes(1, 8 * 400)).unwrap();
    }

    #[test]
    fn roundtrip_body_holds_on_a_fixed_seed() {
        roundtrip_body(&bytes(2, 12 * 1500)).unwrap();
    }

    #[test]
    fn a_broken_promise_is_reported_not_panicked() {
        // Short inputs and leftovers are fine; nothing here may panic.
        decode_body(&[1, 2, 3]).unwrap();
        roundtrip_body(&[0; 10]).unwrap();
    }
}
