//! Assembly sources and instruction binaries, the same for every ISA: one
//! instruction per line, comments, `FILE:line:col` errors with a caret,
//! and words stored little-endian.

/// A line of an assembly source that does not assemble.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}\n{excerpt}")]
pub struct SourceError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in characters) the error points at.
    pub column: usize,
    /// What went wrong.
    pub message: String,
    /// The source line and a caret under the column.
    pub excerpt: String,
}

/// Why one instruction did not assemble, and where inside it (1-based
/// character column relative to the instruction's first character).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub message: String,
    pub column: Option<usize>,
}

/// Drops a comment: `;` to the end of the line, or a whole line whose first
/// non-blank character is `#` (`#` inside an instruction is an immediate
/// or a descriptor, as in `#4` and `s#1`).
pub fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    line.split(';').next().unwrap_or("")
}

/// Assembles `source` one line at a time with `assemble_line`, skipping
/// blank lines and comments. Stops at the first bad line and returns
/// nothing for the earlier ones, so callers never write a partial result.
pub fn assemble_lines(
    source: &str,
    mut assemble_line: impl FnMut(&str) -> Result<u64, LineError>,
) -> Result<Vec<u64>, SourceError> {
    let mut words = Vec::new();
    for (index, raw_line) in source.lines().enumerate() {
        let code = strip_comment(raw_line);
        let text = code.trim();
        if text.is_empty() {
            continue;
        }
        let start = code.chars().count() - code.trim_start().chars().count();
        match assemble_line(text) {
            Ok(word) => words.push(word),
            Err(e) => {
                let column = start + e.column.unwrap_or(1).min(text.chars().count() + 1);
                let pad: String = raw_line
                    .chars()
                    .chain(std::iter::repeat(' '))
                    .take(column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                // The assembler's own messages lead with the relative column;
                // the absolute one replaces it.
                let message = match e.column {
                    Some(c) => e
                        .message
                        .strip_prefix(&format!("column {c}: "))
                        .map_or_else(|| e.message.clone(), str::to_string),
                    None => e.message,
                };
                return Err(SourceError {
                    line: index + 1,
                    column,
                    message,
                    excerpt: format!("{raw_line}\n{pad}^"),
                });
            }
        }
    }
    Ok(words)
}

/// A byte buffer whose length is not a whole number of 8-byte words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes is not a whole number of 8-byte instructions ({} left over)", len % 8)]
pub struct PartialWord {
    /// Length of the buffer in bytes.
    pub len: usize,
}

/// Splits little-endian bytes into 64-bit words; a trailing partial word is
/// an error, never silently dropped.
pub fn words_from_le_bytes(bytes: &[u8]) -> Result<Vec<u64>, PartialWord> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(PartialWord { len: bytes.len() });
    }
    Ok(chunks
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect())
}

/// The memory image of 64-bit instruction words.
pub fn words_to_le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy(text: &str) -> Result<u64, LineError> {
        match text {
            "one" => Ok(1),
            _ => Err(LineError {
                message: match text.find('!') {
                    Some(i) => format!("column {}: bad `{text}`", i + 1),
                    None => format!("bad `{text}`"),
                },
                column: text.find('!').map(|i| i + 1),
            }),
        }
    }

    #[test]
    fn comments_and_blanks_are_skipped() {
        assert_eq!(strip_comment("nop ; x"), "nop ");
        assert_eq!(strip_comment("  # whole line"), "");
        assert_eq!(strip_comment("br p0.x, #4"), "br p0.x, #4");
        assert_eq!(
            assemble_lines("# c\none ; one\n\n  one\n", toy),
            Ok(vec![1, 1])
        );
    }

    #[test]
    fn errors_point_into_the_instruction() {
        let e = assemble_lines("one\n  ab!c ; x\n", toy).unwrap_err();
        assert_eq!((e.line, e.column), (2, 5));
        assert_eq!(e.message, "bad `ab!c`");
        assert_eq!(e.excerpt, "  ab!c ; x\n    ^");
        let e = assemble_lines("\tzz", toy).unwrap_err();
        assert_eq!((e.line, e.column), (1, 2));
        assert_eq!(e.excerpt, "\tzz\n\t^");
    }

    #[test]
    fn bytes_round_trip_and_partial_words_are_reported() {
        let words = [0x0123_4567_89ab_cdef, u64::MAX];
        let bytes = words_to_le_bytes(&words);
        assert_eq!(bytes[0], 0xef);
        assert_eq!(words_from_le_bytes(&bytes), Ok(words.to_vec()));
        assert_eq!(
            words_from_le_bytes(&bytes[..5]),
            Err(PartialWord { len: 5 })
        );
    }
}
