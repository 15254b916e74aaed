//! The fuzz targets' bodies on a fixed seed set, so `cargo test` exercises
//! them without cargo-fuzz.

use lathe_adreno::ir3::fuzzing::{decode_body, roundtrip_body};

/// A small deterministic byte generator (xorshift) for seeds.
fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    // Spread the seed first: `seed | 1` alone made seeds 2k and 2k+1 equal.
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

const VECTORS: &str = include_str!("ir3-data/ir3-disasm.tsv");

#[test]
fn decode_body_holds_on_vector_words_and_random_bytes() {
    let mut bytes = Vec::new();
    for line in VECTORS.lines().skip(1) {
        let hex = line.split('\t').nth(3).unwrap();
        bytes.extend_from_slice(&u64::from_str_radix(hex, 16).unwrap().to_le_bytes());
    }
    decode_body(&bytes).unwrap();
    for seed in 0..16 {
        decode_body(&seed_bytes(seed, 8 * 16)).unwrap();
    }
    decode_body(&[]).unwrap();
    decode_body(&[0xff; 5]).unwrap();
}

#[test]
fn roundtrip_body_holds_on_fixed_seeds() {
    for seed in 0..32 {
        roundtrip_body(&seed_bytes(seed, 256)).unwrap();
    }
}

#[test]
fn sim_body_never_panics_on_vector_words_and_random_bytes() {
    let mut bytes = vec![3u8];
    for line in VECTORS.lines().skip(1) {
        let hex = line.split('\t').nth(3).unwrap();
        bytes.extend_from_slice(&u64::from_str_radix(hex, 16).unwrap().to_le_bytes());
    }
    lathe_adreno::ir3::fuzzing::sim_body(&bytes).unwrap();
    for seed in 0..64 {
        lathe_adreno::ir3::fuzzing::sim_body(&seed_bytes(seed, 8 * 16 + 1)).unwrap();
    }
}

#[test]
fn sim_body_never_panics_on_each_vector_word_alone() {
    // One word per run reaches every instruction's semantics, I/O
    // included (a run stops at its first error).
    for (i, line) in VECTORS.lines().skip(1).enumerate() {
        let hex = line.split('\t').nth(3).unwrap();
        let mut bytes = vec![i as u8];
        bytes.extend_from_slice(&u64::from_str_radix(hex, 16).unwrap().to_le_bytes());
        lathe_adreno::ir3::fuzzing::sim_body(&bytes).unwrap();
    }
}

/// Random valid programs through the whole ir3 backend on a630 and a740.
/// These seeds found outputs sharing a register, outputs written on one
/// path only, and delay slots missed across blocks (a join or a diverged
/// group ending, half registers read as full).
#[test]
fn compile_body_holds_on_fixed_seeds() {
    use lathe_adreno::ir3::fuzzing::compile_body;
    let (mut compiled, mut verified, mut failed) = (0, 0, Vec::new());
    for seed in 0..64 {
        match compile_body(&seed_bytes(seed, 512)) {
            Ok(outcome) => {
                compiled += outcome.compiled as u32;
                verified += outcome.verified as u32;
            }
            Err(e) => failed.push(format!("seed {seed}: {}", e.lines().next().unwrap_or(""))),
        }
    }
    eprintln!(
        "compiled {compiled}, verified {verified} of 64\n{}",
        failed.join("\n")
    );
    assert!(failed.is_empty(), "{} seeds fail", failed.len());
    assert!(
        verified >= 16,
        "only {verified} of 64 programs compiled and ran"
    );
}
