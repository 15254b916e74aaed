//! The generated disassembler against the engine it replaced (the oracle):
//! identical text and unexpected-bits note, or an error from both, on every vector word, on bit
//! flips of them and on random words near them at every generation.

use lathe_isa::DecodeWarning;
use lathe_mali::valhall::{Instr, isa};

const GENERATIONS: [u32; 3] = [9, 10, 11];

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
    // `02 00 00 00 00 c1 91 00    MOV.i32 r1, r2`: eight little-endian bytes.
    let text = include_str!("valhall-data/assembler-cases.txt");
    text.lines()
        .filter_map(|l| {
            let bytes: Vec<u8> = l
                .split_whitespace()
                .take(8)
                .map(|b| u8::from_str_radix(b, 16))
                .collect::<Result<_, _>>()
                .ok()?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?))
        })
        .collect()
}

/// Compares both disassemblers on one word; returns whether it decoded.
fn same(word: u64, generation: u32, generated: &mut String, engine: &mut String) -> bool {
    generated.clear();
    engine.clear();
    let instr = Instr::decode(word, generation);
    let g = instr.map(|i| i.write_text(generated));
    let e = isa().disassemble_into(word, generation, engine);
    match (g, e) {
        (None, Err(_)) => false,
        (Some(Ok(())), Ok(leaf)) => {
            assert_eq!(
                generated, engine,
                "0x{word:016x} at generation {generation}: generated vs engine"
            );
            if let Some(i) = instr {
                same_warnings(i, leaf, word, generation);
            }
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

/// The generated note names the unexpected bits of the instruction and of
/// the sub-encodings its text shows (as Mesa's decoder does); the engine's
/// walk also visits sub-encoding fields the text does not show. So: the
/// instruction's own warnings are equal, every generated one is one the
/// engine found, and the note is the don't-care ones after a tab and `; `.
fn same_warnings(instr: Instr, leaf: usize, word: u64, generation: u32) {
    let spec = isa();
    let name = &spec.encodings[leaf].name;
    let generated = instr.warnings();
    let engine = spec.decode_warnings(word, generation);
    let own = |w: &&DecodeWarning| match w {
        DecodeWarning::DontCare { leaf, .. } | DecodeWarning::Assert { leaf, .. } => leaf == name,
    };
    let g_own: Vec<_> = generated.iter().filter(own).collect();
    let e_own: Vec<_> = engine.iter().filter(own).collect();
    assert_eq!(
        g_own, e_own,
        "0x{word:016x}: the instruction's own warnings"
    );
    for w in &generated {
        assert!(
            engine.contains(w),
            "0x{word:016x}: {w} not found by the engine"
        );
    }
    let mut with_note = String::new();
    instr.write_text_with_note(&mut with_note).unwrap();
    let mut expected = String::new();
    instr.write_text(&mut expected).unwrap();
    let dont_care: Vec<DecodeWarning> = generated
        .iter()
        .filter(|w| matches!(w, DecodeWarning::DontCare { .. }))
        .cloned()
        .collect();
    lathe_isa::gen_rt::write_note(&mut expected, &dont_care).unwrap();
    assert_eq!(with_note, expected);
    assert_eq!(dont_care.is_empty(), !with_note.contains("\t; "));
}

fn run(words_per_generation: u64) {
    let (mut a, mut b) = (String::new(), String::new());
    let vectors = vector_words();
    assert!(vectors.len() >= 150, "vector file not read");
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
        // Uniformly random words almost never pass Valhall's validity
        // rules; random words near real ones (about 8 of 64 bits flipped)
        // reach every instruction and many of their operand forms.
        for _ in 0..words_per_generation {
            let base = vectors[(rng.next() % vectors.len() as u64) as usize];
            let flips = rng.next() & rng.next() & rng.next();
            shown += u64::from(same(base ^ flips, g, &mut a, &mut b));
        }
        eprintln!("generation {g}: {shown} words shown, both ways equal");
        // A decoder that rejects everything would pass vacuously.
        assert!(
            shown > words_per_generation / 10,
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

/// Flipping a bit the spec marks don't-care (reserved bits outside the
/// opcode fields of Mesa's XML) keeps the instruction and its text, and
/// the note names exactly that bit.
#[test]
fn dont_care_flips_decode_with_a_note() {
    let spec = isa();
    let mut flipped = 0;
    for w in vector_words() {
        let Some(i) = Instr::decode(w, 10) else {
            continue;
        };
        let mut text = String::new();
        i.write_text(&mut text).unwrap();
        let dc = spec.encodings[i.opcode.encoding()].dontcare;
        for bit in (0..64).filter(|b| dc >> b & 1 == 1) {
            let f = w ^ (1u64 << bit);
            let j = Instr::decode(f, 10).expect("a don't-care flip still decodes");
            assert_eq!(j.opcode, i.opcode);
            let mut noted = String::new();
            j.write_text_with_note(&mut noted).unwrap();
            let name = &spec.encodings[i.opcode.encoding()].name;
            let bits = f & dc;
            assert_eq!(
                noted,
                format!("{text}\t; dontcare bits in {name}: {bits:x}")
            );
            flipped += 1;
        }
    }
    assert!(flipped > 1000, "only {flipped} don't-care flips tried");
}
