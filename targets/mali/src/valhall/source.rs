//! Whole assembly sources and disassembly listings, the form the command
//! line works with: one instruction per line.

use std::fmt::Write as _;

use lathe_isa::source::LineError;

use super::{Arch, Error, assemble, generated};

pub use lathe_isa::source::SourceError;

/// `raw 0x…` (or `raw N`): a literal word, for words no instruction matches.
fn parse_raw(text: &str) -> Option<Result<u64, String>> {
    let rest = text.strip_prefix("raw")?.trim();
    let parsed = match rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => rest.parse::<u64>(),
    };
    Some(parsed.map_err(|_| format!("`{rest}` is not a 64-bit word")))
}

/// Assembles one source line (already without comment and outer blanks).
///
/// An instruction without operands prints as its mnemonic and one space
/// (`NOP.end `); since editors drop trailing spaces, the line is also
/// accepted without it.
fn assemble_line(text: &str, arch: Arch) -> Result<u64, LineError> {
    if let Some(raw) = parse_raw(text) {
        return raw.map_err(|message| LineError {
            message,
            column: None,
        });
    }
    match assemble(text, arch) {
        Ok(word) => Ok(word),
        Err(first) => assemble(&format!("{text} "), arch).map_err(|_| match first {
            Error::Assemble { source, .. } => LineError {
                message: source.to_string(),
                column: source.column(),
            },
            other => LineError {
                message: other.to_string(),
                column: None,
            },
        }),
    }
}

/// Assembles a source, one instruction per line; blank lines and comments
/// (a line starting with `#`, as in Mesa's Valhall assembler, or `;` to the
/// end of the line, which Valhall syntax never uses) are skipped. Stops at
/// the first bad line.
///
/// ```
/// use lathe_mali::valhall::{assemble_source, Arch};
///
/// let words = assemble_source("# prologue\nMOV.i32 r1, r2\nNOP.end\n", Arch::V10).unwrap();
/// assert_eq!(words, [0x0091_c100_0000_0002, 0x7800_c000_0000_0000]);
///
/// let err = assemble_source("MOV.i32 r1, r2\n  FADD.f32 r0, u0, u4\n", Arch::V10).unwrap_err();
/// assert_eq!((err.line, err.column), (2, 3));
/// assert!(err.message.contains("FAU slot"));
/// ```
pub fn assemble_source(source: &str, arch: Arch) -> Result<Vec<u64>, SourceError> {
    lathe_isa::source::assemble_lines(source, |text| assemble_line(text, arch))
}

/// Appends the listing line of `word`: its disassembly (with a `\t; `
/// note naming set don't-care bits), or `raw 0x…` followed by the reason
/// as a `;` comment for a word that matches no instruction (so such lines
/// still assemble back to the same words).
///
/// A word that decodes but breaks one of the spec's `check` rules (the FAU
/// limits, an odd staging register) is shown as decoded, as Mesa's
/// disassembler shows it (it has no validity rules), with the broken rule
/// in the note. The assembler enforces those rules, so such a line does
/// not assemble back: its error names the same rule.
///
/// ```
/// use lathe_mali::valhall::{write_line, Arch};
///
/// let mut out = String::new();
/// write_line(0x0091_c100_0000_0002, Arch::V10, &mut out);
/// assert_eq!(out, "MOV.i32 r1, r2");
/// out.clear();
/// write_line(0xffff_ffff_ffff_ffff, Arch::V10, &mut out);
/// assert!(out.starts_with("raw 0xffffffffffffffff ; "));
/// ```
pub fn write_line(word: u64, arch: Arch, out: &mut String) {
    let start = out.len();
    let g = arch.generation();
    let reason = match generated::display::push_word(word, g, true, true, out) {
        Ok(_) => return,
        Err(lathe_isa::DisasmError::NoMatch { .. }) => Error::Undefined { word, arch }.to_string(),
        Err(broken @ lathe_isa::DisasmError::Check { .. }) => {
            // Shown without the rules, the rule named in the note.
            if generated::display::push_word(word, g, false, true, out).is_ok() {
                let note = if out[start..].contains("\t; ") {
                    ", "
                } else {
                    "\t; "
                };
                let _ = write!(out, "{note}{broken}");
                return;
            }
            broken.to_string()
        }
        Err(source) => source.to_string(),
    };
    // Writing into a String cannot fail.
    let _ = write!(out, "raw 0x{word:016x} ; {reason}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_assemble_back_to_the_same_words() {
        let words = [
            0x0091_c100_0000_0002,
            0x7800_c000_0000_0000,
            0xffff_ffff_ffff_ffff,
        ];
        let mut listing = String::new();
        for w in words {
            write_line(w, Arch::V9, &mut listing);
            listing.push('\n');
        }
        assert_eq!(assemble_source(&listing, Arch::V9).unwrap(), words);
    }

    #[test]
    fn words_breaking_a_rule_show_as_decoded_with_the_rule_in_the_note() {
        // FADD.f32 r0, u0, u4: two FAU slots.
        let mut line = String::new();
        write_line(0x00a4_c000_0000_8480, Arch::V9, &mut line);
        let (text, note) = line.split_once("\t; ").expect("a note");
        assert_eq!(text, "FADD.f32 r0, u0, u4");
        assert!(note.contains("FAU slot"), "{line}");
        // The assembler enforces the rule: the line does not assemble back.
        let err = assemble_source(&line, Arch::V9).unwrap_err();
        assert!(err.message.contains("FAU slot"), "{}", err.message);
    }

    #[test]
    fn bad_lines_report_position_and_caret() {
        let err = assemble_source("\n\tBRANCH u0\n", Arch::V10).unwrap_err();
        assert_eq!((err.line, err.column), (2, 2));
        assert!(
            err.message.contains("unknown mnemonic `BRANCH`"),
            "{}",
            err.message
        );
        assert_eq!(err.excerpt, "\tBRANCH u0\n\t^");
        assert!(
            assemble_source("raw 0xZZ", Arch::V10)
                .unwrap_err()
                .message
                .contains("ZZ")
        );
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let src = "  # header\n\nIADD_IMM.i32 r2, r2^, #0x10 ; add\n";
        assert_eq!(assemble_source(src, Arch::V10).unwrap().len(), 1);
    }
}
