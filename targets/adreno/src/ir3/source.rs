//! Assembly source files (one instruction per line) and raw binaries.

use lathe_isa::source::LineError;

use super::{Error, Generation, assemble};

pub use lathe_isa::source::{PartialWord, SourceError, words_from_le_bytes, words_to_le_bytes};

/// Assembles `source`, one instruction per line; blank lines and comments
/// (`;` to the end of the line, as in Mesa's ir3 assembler, or a line
/// starting with `#`) are skipped. Stops at the first bad line and returns
/// nothing for the earlier ones, so callers never write a partial result.
///
/// ```
/// use lathe_adreno::ir3::{assemble_source, Generation};
///
/// let words = assemble_source("; prologue\nnop\n\n(sy)bar.g ; wait\n", Generation::A6xx).unwrap();
/// assert_eq!(words, [0, 0xf042_0000_0000_0000]);
///
/// let err = assemble_source("nop\n  frob r0.x\n", Generation::A6xx).unwrap_err();
/// assert_eq!((err.line, err.column), (2, 3));
/// ```
pub fn assemble_source(source: &str, generation: Generation) -> Result<Vec<u64>, SourceError> {
    lathe_isa::source::assemble_lines(source, |text| {
        assemble(text, generation).map_err(|e| match e {
            Error::Assemble { message, column } => LineError { message, column },
            other => LineError {
                message: other.to_string(),
                column: None,
            },
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_bad_operand() {
        let err =
            assemble_source("nop\n  add.f r0.x, r0.y, zz ; c\n", Generation::A6xx).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.column > 3,
            "column {} should point past the mnemonic",
            err.column
        );
        assert!(err.excerpt.starts_with("  add.f r0.x, r0.y, zz ; c\n"));
    }
}
