//! A small, fast, non-cryptographic hasher for the cache tables.
//!
//! Keys here are a few integers (descriptor ids, instruction codes, shader
//! key bits) chosen by the driver, not by an attacker, so the DoS
//! resistance of std's SipHash buys nothing and costs several nanoseconds
//! per lookup. This is the multiply-rotate scheme rustc uses for its own
//! tables: each word is folded in with one rotate, xor and multiply.

use std::hash::{BuildHasherDefault, Hasher};

/// Odd 64-bit multiplier with well-mixed bits (from the golden ratio family).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Word-at-a-time multiply-rotate hasher.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            // Mix the length in so "ab" and "ab\0" differ.
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `BuildHasher` for [`FxHasher`], for use as a `HashMap` parameter.
pub type FxBuildHasher = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::{BuildHasher, Hash};

    fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
        FxBuildHasher::default().hash_one(value)
    }

    #[test]
    fn distinct_small_keys_hash_distinctly() {
        // Every (op, image, sampler) triple in a realistic range gets its own hash.
        let mut seen = HashSet::new();
        for op in 0u32..8 {
            for image in 0u32..64 {
                for sampler in 0u32..64 {
                    assert!(seen.insert(hash_of(&(op, image, sampler))));
                }
            }
        }
    }

    #[test]
    fn byte_strings_of_different_length_differ() {
        let mut a = FxHasher::default();
        a.write(b"ab");
        let mut b = FxHasher::default();
        b.write(b"ab\0");
        assert_ne!(a.finish(), b.finish());
    }

    #[test]
    fn hashing_is_deterministic() {
        assert_eq!(hash_of(&(1u32, 2u64)), hash_of(&(1u32, 2u64)));
    }
}
