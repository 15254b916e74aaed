//! The generated code for the tiny spec agrees with the runtime engine.

mod toy {
    lathe_codegen_macros::isa!("../isa/tests/specs/tiny.isa");
}

use toy::{Instr, LatencyClass, Opcode};

#[test]
fn generated_decode_matches_runtime_engine_on_every_word() {
    let engine = toy::isa();
    for generation in [0, 1, 2, 3] {
        for w in 0..=0xffffu64 {
            let generated = Opcode::decode(w, generation).map(|o| o.info().name);
            let runtime = engine
                .decode(w, generation)
                .map(|e| engine.encodings[e].name.as_str());
            assert_eq!(generated, runtime, "{w:#x} at {generation}");
        }
    }
}

#[test]
fn display_encode_assemble() {
    let i = Instr::decode(0x21f2, 2).expect("ld");
    assert_eq!(i.opcode, Opcode::Ld);
    assert_eq!(i.to_string(), "ld.ne r1, [r2-1]");
    assert_eq!(i.encode(), 0x21f2);
    let mut buf = String::new();
    i.write_text(&mut buf).expect("display");
    assert_eq!(buf, "ld.ne r1, [r2-1]");
    assert_eq!(
        Instr::assemble("ld.ne r1, [r2-1]", 2).map(|i| i.encode()),
        Ok(0x21f2)
    );
}

#[test]
fn metadata_and_latency_tables() {
    assert_eq!(Opcode::Add.info().latency_class, Some(LatencyClass::Alu));
    assert_eq!(Opcode::Ld.info().generations, (2, u32::MAX));
    assert_eq!(
        toy::latency(LatencyClass::Alu, LatencyClass::Alu, None, 1),
        Some(1)
    );
    assert_eq!(
        toy::latency(LatencyClass::Mem, LatencyClass::Alu, None, 1),
        Some(3)
    );
    assert_eq!(
        toy::latency(LatencyClass::Alu, LatencyClass::Mem, None, 1),
        None
    );
    assert_eq!(toy::WORD_BITS, 16);
}

#[test]
fn arbitrary_gives_only_valid_instructions() {
    use arbitrary::{Arbitrary, Unstructured};
    let mut seed = 0x1234_5678_u64;
    let mut made = 0;
    for _ in 0..500 {
        let bytes: Vec<u8> = (0..32)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            })
            .collect();
        if let Ok(i) = Instr::arbitrary(&mut Unstructured::new(&bytes)) {
            made += 1;
            let text = i.to_string();
            assert_eq!(
                Instr::assemble(&text, i.generation).map(|j| j.to_string()),
                Ok(text)
            );
        }
    }
    assert!(made > 100, "{made}");
}

#[test]
fn opcode_encoding_indices_match_the_engine() {
    for op in Opcode::ALL {
        assert_eq!(toy::isa().encodings[op.encoding()].name, op.info().name);
    }
}
