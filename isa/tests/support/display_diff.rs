//! The differential check of a generated disassembler against the engine
//! (the oracle), shared by the ir3 and Valhall tests, which include this
//! file with `#[path]` after importing their own generated `Instr` and
//! `isa` (the generated API is the same for every ISA).

use super::{Instr, isa};
use lathe_isa::DecodeWarning;

/// A seeded xorshift generator: the same words on every run.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Compares both disassemblers on one word; returns whether it decoded.
pub fn same(word: u64, generation: u32, generated: &mut String, engine: &mut String) -> bool {
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
/// engine found, and the note is the don't-care ones (and the `assert`
/// ones if the spec says `notes asserts;`) after a tab and `; `.
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
    let noted: Vec<DecodeWarning> = generated
        .iter()
        .filter(|w| spec.notes_asserts || matches!(w, DecodeWarning::DontCare { .. }))
        .cloned()
        .collect();
    lathe_isa::gen_rt::write_note(&mut expected, &noted).unwrap();
    assert_eq!(with_note, expected);
    assert_eq!(noted.is_empty(), !with_note.contains("\t; "));
}

/// Compares both on every vector word, four bit flips of each, and
/// `count` words from `random` (given the generator and the vectors), at
/// each generation; fails if fewer than `min_shown` of the random words
/// decode (a decoder that rejects everything would pass vacuously).
pub fn run(
    vectors: &[u64],
    generations: &[u32],
    count: u64,
    min_shown: u64,
    mut random: impl FnMut(&mut XorShift, &[u64]) -> u64,
) {
    let (mut a, mut b) = (String::new(), String::new());
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for &g in generations {
        let mut shown = 0u64;
        for &w in vectors {
            shown += u64::from(same(w, g, &mut a, &mut b));
            for _ in 0..4 {
                let flipped = w ^ (1u64 << (rng.next() % 64));
                shown += u64::from(same(flipped, g, &mut a, &mut b));
            }
        }
        for _ in 0..count {
            let w = random(&mut rng, vectors);
            shown += u64::from(same(w, g, &mut a, &mut b));
        }
        eprintln!("generation {g}: {shown} words shown, both ways equal");
        assert!(
            shown > min_shown,
            "only {shown} words shown at generation {g}"
        );
    }
}

/// Flipping a bit the spec marks don't-care keeps the text, and the note
/// names exactly that bit, as Mesa's decoder does (unless the flipped word
/// is another instruction: ir3's don't-care bits may be another encoding's
/// pattern bits). Returns how many flips were checked.
pub fn dont_care_flips(words: &[(u32, u64)]) -> usize {
    let spec = isa();
    let mut flipped = 0;
    for &(generation, w) in words {
        let Some(i) = Instr::decode(w, generation) else {
            continue;
        };
        let mut text = String::new();
        if i.write_text(&mut text).is_err() {
            continue;
        }
        let dc = spec.encodings[i.opcode.encoding()].dontcare;
        for bit in (0..64).filter(|b| dc >> b & 1 == 1) {
            let f = w ^ (1u64 << bit);
            let Some(j) = Instr::decode(f, generation).filter(|j| j.opcode == i.opcode) else {
                continue;
            };
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
    flipped
}
