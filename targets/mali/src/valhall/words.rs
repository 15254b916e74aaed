//! Valhall instruction words in memory: 64-bit values stored little-endian.

/// A byte buffer whose length is not a whole number of instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes is not a whole number of 8-byte Valhall instructions ({} left over)", len % 8)]
pub struct PartialWord {
    /// Length of the buffer in bytes.
    pub len: usize,
}

/// Splits a shader binary into its 64-bit instruction words.
///
/// ```
/// use lathe_mali::valhall::words_from_le_bytes;
///
/// let bytes = [0x02, 0, 0, 0, 0, 0xc1, 0x91, 0x00];
/// assert_eq!(words_from_le_bytes(&bytes), Ok(vec![0x0091_c100_0000_0002]));
/// assert!(words_from_le_bytes(&bytes[..5]).is_err());
/// ```
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

/// The memory image of instruction words.
pub fn words_to_le_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_words_round_trip() {
        let words = [0x0091_c100_0000_0002u64, 0x7800_c000_0000_0000];
        let bytes = words_to_le_bytes(&words);
        assert_eq!(bytes[..8], [0x02, 0, 0, 0, 0, 0xc1, 0x91, 0x00]);
        assert_eq!(words_from_le_bytes(&bytes).unwrap(), words);
        assert_eq!(words_from_le_bytes(&[]).unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn partial_words_are_reported_with_the_length() {
        let err = words_from_le_bytes(&[0; 12]).unwrap_err();
        assert_eq!(err, PartialWord { len: 12 });
        assert!(err.to_string().contains("4 left over"));
    }
}
