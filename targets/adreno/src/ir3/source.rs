//! Assembly source files (one instruction per line) and raw binaries.

use super::{Generation, assemble};

/// A line of assembly source that could not be assembled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}\n{excerpt}")]
pub struct SourceError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column of the instruction's first character.
    pub column: usize,
    /// What went wrong.
    pub message: String,
    /// The source line and a caret under the column.
    pub excerpt: String,
}

/// Removes a comment: Mesa's ir3 assembler takes `;` to the end of the line
/// as a comment. A line whose first non-blank character is `#` is a comment
/// too (`#` cannot start an instruction, though it appears inside them:
/// `#4`, `s#1`).
fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    match line.find(';') {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Assembles `source`, one instruction per line; blank lines and comments
/// are skipped. Stops at the first bad line and returns nothing for the
/// earlier ones, so callers never write a partial result.
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
    let mut words = Vec::new();
    for (index, raw_line) in source.lines().enumerate() {
        let code = strip_comment(raw_line);
        let text = code.trim();
        if text.is_empty() {
            continue;
        }
        let column = code.len() - code.trim_start().len() + 1;
        match assemble(text, generation) {
            Ok(word) => words.push(word),
            Err(e) => {
                let caret_pad: String = raw_line
                    .chars()
                    .take(column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                return Err(SourceError {
                    line: index + 1,
                    column,
                    message: e.to_string(),
                    excerpt: format!("{raw_line}\n{caret_pad}^"),
                });
            }
        }
    }
    Ok(words)
}

/// Splits little-endian bytes into 64-bit words. A trailing partial word
/// is returned as the error (its length), never silently dropped.
pub fn words_from_le_bytes(bytes: &[u8]) -> Result<Vec<u64>, usize> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(chunks.remainder().len());
    }
    Ok(chunks
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect())
}

/// Joins words into little-endian bytes.
pub fn words_to_le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_stripped() {
        assert_eq!(strip_comment("nop ; x"), "nop ");
        assert_eq!(strip_comment("  # whole line"), "");
        assert_eq!(strip_comment("br p0.x, #4"), "br p0.x, #4");
    }

    #[test]
    fn bytes_round_trip_and_partial_words_are_reported() {
        let words = [0x0123_4567_89ab_cdef, u64::MAX];
        let bytes = words_to_le_bytes(&words);
        assert_eq!(bytes[0], 0xef);
        assert_eq!(words_from_le_bytes(&bytes).unwrap(), words);
        assert_eq!(words_from_le_bytes(&bytes[..5]), Err(5));
    }
}
