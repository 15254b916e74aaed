//! Mesa's ir3 disassembler vectors, as the differential tests read them.

/// `(generation, word)` of every row of `ir3-disasm.tsv`.
pub fn vectors() -> Vec<(u32, u64)> {
    include_str!("../ir3-data/ir3-disasm.tsv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Some((
                c.get(2)?.parse().ok()?,
                u64::from_str_radix(c.get(3)?, 16).ok()?,
            ))
        })
        .collect()
}

/// The words of every row (at least 200, or the file was not read).
pub fn words() -> Vec<u64> {
    let words: Vec<u64> = vectors().iter().map(|&(_, w)| w).collect();
    assert!(words.len() >= 200, "vector file not read");
    words
}
