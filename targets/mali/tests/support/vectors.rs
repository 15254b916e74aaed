//! Mesa's Valhall assembler cases, as the differential tests read them.

/// The word of every case (at least 150, or the file was not read).
pub fn words() -> Vec<u64> {
    // `02 00 00 00 00 c1 91 00    MOV.i32 r1, r2`: eight little-endian bytes.
    let words: Vec<u64> = include_str!("../valhall-data/assembler-cases.txt")
        .lines()
        .filter_map(|l| {
            let bytes: Vec<u8> = l
                .split_whitespace()
                .take(8)
                .map(|b| u8::from_str_radix(b, 16))
                .collect::<Result<_, _>>()
                .ok()?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?))
        })
        .collect();
    assert!(words.len() >= 150, "vector file not read");
    words
}

/// A word near a random vector (about 8 of 64 bits flipped): uniformly
/// random words almost never pass Valhall's validity rules, words near
/// real ones reach every instruction and many of their operand forms.
/// (The including test also includes `display_diff.rs`.)
pub fn near(rng: &mut super::display_diff::XorShift, vectors: &[u64]) -> u64 {
    let base = vectors[(rng.next() % vectors.len() as u64) as usize];
    base ^ (rng.next() & rng.next() & rng.next())
}
