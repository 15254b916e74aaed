//! The runtime engine on the tiny example spec: decode, display, assemble,
//! latency and generated docs.

fn tiny() -> lathe_isa::Isa {
    lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/tiny.isa"))
        .unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn disassembles_documented_examples() {
    let isa = tiny();
    assert_eq!(isa.disassemble(0x1312, 1).as_deref(), Ok("add r3, r2"));
    assert_eq!(
        isa.disassemble(0x21f2, 2).as_deref(),
        Ok("ld.ne r1, [r2-1]")
    );
    assert_eq!(isa.disassemble(0x2102, 2).as_deref(), Ok("ld.eq r1, [r2]"));
    // `ld` exists from v2 only; the top nibble 0xf matches nothing.
    assert!(isa.disassemble(0x21f2, 1).is_err());
    assert!(isa.disassemble(0xf000, 2).is_err());
}

#[test]
fn assembles_and_verifies() {
    let isa = tiny();
    assert_eq!(isa.assemble("ld.ne r1, [r2-1]", 2), Ok(0x21f2));
    assert_eq!(isa.assemble("ld.eq r1, [r2+3]", 2), Ok(0x2132));
    // Don't-care bits are written as 0.
    assert_eq!(isa.assemble("add r3, r2", 1), Ok(0x1302));
    assert_eq!(isa.assemble("raw 0xffff", 1), Ok(0xffff));
    assert!(isa.assemble("ld.ne r1, [r2-1]", 1).is_err(), "ld is v2+");
    assert!(
        isa.assemble("add r3, r16", 1).is_err(),
        "r16 does not fit 4 bits"
    );
    assert!(
        isa.assemble("ld.ne r1, [r2+4]", 2).is_err(),
        "+4 does not fit 3 signed bits"
    );
    assert!(isa.assemble("sub r1, r2", 1).is_err());
}

#[test]
fn assemble_word_finds_what_assemble_finds() {
    let isa = tiny();
    for (text, generation) in [
        ("ld.ne r1, [r2-1]", 2),
        ("ld.ne r1, [r2-1]", 1),
        ("add r3, r2", 1),
        ("add r3, r16", 1),
        ("ld.ne r1, [r2+4]", 2),
        ("sub r1, r2", 1),
        ("raw 0xffff", 1),
        ("raw zz", 1),
    ] {
        assert_eq!(
            isa.assemble_word(text, generation),
            isa.assemble(text, generation).ok(),
            "`{text}` at {generation}"
        );
    }
}

#[test]
fn every_word_round_trips() {
    let isa = tiny();
    let mut decoded = 0;
    for generation in [1, 2] {
        for w in 0..=0xffffu64 {
            let Ok(text) = isa.disassemble(w, generation) else {
                continue;
            };
            decoded += 1;
            let back = isa
                .assemble(&text, generation)
                .unwrap_or_else(|e| panic!("{w:#x}: {e}"));
            assert_eq!(
                isa.disassemble(back, generation).as_deref(),
                Ok(text.as_str())
            );
        }
    }
    // add: 2^12 words in both generations; ld: 2^12 in v2.
    assert_eq!(decoded, 3 * 4096);
}

#[test]
fn latency_first_rule_wins() {
    let isa = tiny();
    let alu = isa.latency.class("alu").expect("alu");
    let mem = isa.latency.class("mem").expect("mem");
    assert_eq!(isa.latency.lookup(alu, alu, None, 1), Some(1));
    assert_eq!(isa.latency.lookup(mem, alu, None, 1), Some(3));
    assert_eq!(isa.latency.lookup(alu, mem, None, 1), None);
}

#[test]
fn metadata_is_inherited_and_typed() {
    let isa = tiny();
    let add = isa.encoding("add").expect("add");
    assert_eq!(
        isa.meta(add, "latency"),
        Some(&lathe_isa::ast::MetaValue::Ident("alu".into()))
    );
}

#[test]
fn docs_list_every_instruction_with_diagram() {
    let isa = tiny();
    let md = lathe_isa::docgen::markdown(&isa, "tests/specs/tiny.isa");
    assert!(md.starts_with("<!-- Generated from tests/specs/tiny.isa by `cargo xtask gen`."));
    assert!(md.contains("### `add`"));
    assert!(md.contains("### `ld`"));
    // ld: pattern 0010, then (leaf fields first) SRC=A, OFF=B, COND=C, DST=D.
    assert!(md.contains("0010DDDD CBBBAAAA"), "{md}");
    assert!(md.contains("`{NAME}.{COND} {DST}, [{SRC}{OFF}]`"));
}

fn overlap() -> lathe_isa::Isa {
    lathe_isa::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/specs/overlap.isa"
    ))
    .unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn declared_overlap_words_decode_to_nothing() {
    let isa = overlap();
    // 0x15 has `narrow`'s opcode nibble and fits `wide` too.
    assert_eq!(isa.disassemble(0x15, 1).as_deref(), Ok("wide 21"));
    assert_eq!(
        isa.disassemble(0x15, 2),
        Err(lathe_isa::DisasmError::NoMatch {
            word: 0x15,
            generation: 2
        })
    );
    assert_eq!(isa.disassemble(0x25, 2).as_deref(), Ok("wide 37"));
    assert_eq!(isa.disassemble(0x45, 2).as_deref(), Ok("other 5"));
    // Neither reading of an ambiguous word can be assembled.
    assert!(isa.assemble("wide 21", 2).is_err());
    assert!(isa.assemble("narrow 5", 2).is_err());
    assert_eq!(isa.assemble("wide 21", 1), Ok(0x15));
    // Every word: decodes iff exactly one leaf matches at that generation.
    for generation in [1, 2] {
        for w in 0..=0xffu64 {
            let matching = isa
                .instructions()
                .filter(|&l| {
                    let e = &isa.encodings[l];
                    w & e.mask == e.match_bits && e.generation.contains(generation)
                })
                .count();
            assert_eq!(
                isa.decode(w, generation).is_some(),
                matching == 1,
                "{w:#x} at {generation}"
            );
        }
    }
}
