//! Valhall instruction words in memory: 64-bit values stored little-endian.

pub use lathe_isa::source::{PartialWord, words_from_le_bytes, words_to_le_bytes};

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
