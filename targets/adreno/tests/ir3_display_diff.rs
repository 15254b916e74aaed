//! The generated disassembler against the engine it replaced (the oracle):
//! identical text, or an error from both, on every vector word, on bit
//! flips of them and on random words at every generation.

use lathe_adreno::ir3::generated::{Instr, isa};

const GENERATIONS: [u32; 5] = [300, 400, 500, 600, 700];

/// Random words per generation in the default (debug) test run; the
/// release run (`cargo test --release … -- --ignored`) does a million.
const WORDS_PER_GENERATION: u64 = 200_000;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn vector_words() -> Vec<u64> {
    let text = include_str!("ir3-data/ir3-disasm.tsv");
    text.lines()
        .filter_map(|l| l.split('\t').nth(3))
        .filter_map(|w| u64::from_str_radix(w.trim().trim_start_matches("0x"), 16).ok())
        .collect()
}

/// Compares both disassemblers on one word; returns whether it decoded.
fn same(word: u64, generation: u32, generated: &mut String, engine: &mut String) -> bool {
    generated.clear();
    engine.clear();
    let g = Instr::decode(word, generation).map(|i| i.write_text(generated));
    let e = isa().disassemble_into(word, generation, engine);
    match (g, e) {
        (None, Err(_)) => false,
        (Some(Ok(())), Ok(_)) => {
            assert_eq!(
                generated, engine,
                "0x{word:016x} at generation {generation}: generated vs engine"
            );
            true
        }
        (Some(Err(a)), Err(b)) => {
            assert_eq!(
                a, b,
                "0x{word:016x} at generation {generation}: errors differ"
            );
            false
        }
        (g, e) => panic!(
            "0x{word:016x} at generation {generation}: generated {g:?} ({generated}) vs engine {e:?} ({engine})"
        ),
    }
}

fn run(words_per_generation: u64) {
    let (mut a, mut b) = (String::new(), String::new());
    let vectors = vector_words();
    assert!(vectors.len() >= 200, "vector file not read");
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for g in GENERATIONS {
        let mut shown = 0u64;
        for &w in &vectors {
            shown += u64::from(same(w, g, &mut a, &mut b));
            for _ in 0..4 {
                let flipped = w ^ (1u64 << (rng.next() % 64));
                shown += u64::from(same(flipped, g, &mut a, &mut b));
            }
        }
        for _ in 0..words_per_generation {
            shown += u64::from(same(rng.next(), g, &mut a, &mut b));
        }
        eprintln!("generation {g}: {shown} words shown, both ways equal");
        // Most random words are instructions: a decoder that rejects
        // everything would pass the comparison vacuously.
        assert!(
            shown > words_per_generation / 4,
            "only {shown} words shown at generation {g}"
        );
    }
}

#[test]
fn generated_display_equals_engine() {
    run(WORDS_PER_GENERATION);
}

#[test]
#[ignore = "a million words per generation: run in release"]
fn generated_display_equals_engine_million() {
    run(1_000_000);
}
