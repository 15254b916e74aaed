//! The generated decision tree and the runtime engine agree on a spec
//! with a declared overlap: ambiguous words decode to nothing in both.

mod ov {
    lathe_codegen_macros::isa!("../isa/tests/specs/overlap.isa");
}

#[test]
fn generated_decode_matches_engine_including_ambiguous_words() {
    let engine = ov::isa();
    let mut ambiguous = 0;
    for generation in [0, 1, 2, 3] {
        for w in 0..=0xffu64 {
            let generated = ov::Opcode::decode(w, generation).map(|o| o.info().name);
            let runtime = engine
                .decode(w, generation)
                .map(|e| engine.encodings[e].name.as_str());
            assert_eq!(generated, runtime, "{w:#x} at {generation}");
            if generation >= 2 && (0x10..=0x1f).contains(&w) {
                assert_eq!(generated, None, "{w:#x} is ambiguous at {generation}");
                ambiguous += 1;
            }
        }
    }
    assert_eq!(ambiguous, 32);
    assert_eq!(ov::Opcode::decode(0x15, 1), Some(ov::Opcode::Wide));
}
