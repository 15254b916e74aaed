//! Language v3 features on `tests/specs/features.isa`: upper-case hex,
//! `check` rules, expression functions, strict enums, the assembler's
//! step-by-step search and its diagnostics.

use lathe_isa::{AsmError, DisasmError, Isa};

fn feat() -> Isa {
    lathe_isa::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/specs/features.isa"
    ))
    .unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn upper_case_hex_prints_and_reads_back() {
    let isa = feat();
    assert_eq!(isa.disassemble(0x2aab, 1).as_deref(), Ok("li.16 r2, #0xAB"));
    assert_eq!(isa.assemble("li.16 r2, #0xAB", 1), Ok(0x2aab));
    // Lower-case digits read, but do not print back: not canonical.
    assert!(matches!(
        isa.assemble("li.16 r2, #0xab", 1),
        Err(AsmError::NotExact { .. })
    ));
}

#[test]
fn strict_enum_reserved_value_is_a_decode_error() {
    let isa = feat();
    assert_eq!(
        isa.disassemble(0x3aab, 1),
        Err(DisasmError::Reserved {
            leaf: "li".into(),
            field: "SZ".into(),
            enum_name: "size".into(),
            value: 3,
        })
    );
}

#[test]
fn check_rule_with_expression_function_rejects_words_and_texts() {
    let isa = feat();
    // add r0, r3, u0: one uniform is fine.
    assert_eq!(isa.disassemble(0x4070, 1).as_deref(), Ok("add r0, r3, u0"));
    // A = u1, B = u0: both uniform.
    let err = isa.disassemble(0x4230, 1).unwrap_err();
    assert_eq!(
        err,
        DisasmError::Check {
            leaf: "add".into(),
            message: "at most one source may be a uniform".into()
        }
    );
    assert_eq!(
        isa.assemble("add r1, u2, u3", 1),
        Err(AsmError::Check {
            text: "add r1, u2, u3".into(),
            leaf: "add".into(),
            message: "at most one source may be a uniform".into(),
        })
    );
    assert_eq!(isa.assemble("add r1, r2, u3", 1), Ok(0x4453));
}

#[test]
fn check_in_sub_encoding_sees_bound_param() {
    let isa = feat();
    // The tuple count is only visible through `when COUNT == 2`.
    assert_eq!(isa.assemble("ldt r2:r3, [r5]", 1), Ok(0x7105));
    assert_eq!(isa.assemble("ldt r3, [r5]", 1), Ok(0x6185));
    let err = isa.assemble("ldt r3:r4, [r5]", 1).unwrap_err();
    assert!(
        err.to_string()
            .contains("register pairs must start on an even register"),
        "{err}"
    );
}

#[test]
fn search_solves_shared_hidden_field_operand_by_operand() {
    let isa = feat();
    // u70 = N 6 on page 1, u65 = N 1 on page 1: 13 hidden bits in all.
    assert_eq!(isa.assemble("fau u70, u65", 1), Ok(0x9046));
    assert_eq!(isa.disassemble(0x9046, 1).as_deref(), Ok("fau u70, u65"));
    // Page 1 and page 0 cannot share the field.
    assert!(matches!(
        isa.assemble("fau u70, u5", 1),
        Err(AsmError::NotExact { .. })
    ));
    // A spread sample of `fau` words (each needs the search; the whole
    // range takes too long in debug builds) assembles back to itself.
    for w in (0x8000..=0x9fffu64).step_by(7) {
        let text = isa.disassemble(w, 1).expect("fau decodes");
        assert_eq!(isa.assemble(&text, 1), Ok(w), "{text}");
    }
}

#[test]
fn diagnostics_name_the_problem_and_column() {
    let isa = feat();
    let e = isa.assemble("sub r1, r2", 1).unwrap_err();
    assert_eq!(
        e,
        AsmError::UnknownMnemonic {
            text: "sub r1, r2".into(),
            mnemonic: "sub".into(),
            column: 1,
            generation: 1
        }
    );
    assert_eq!(e.to_string(), "unknown mnemonic `sub` at generation 1");

    let e = isa.assemble("add r1, r2", 1).unwrap_err();
    assert_eq!(e.column(), Some(11));
    assert_eq!(e.to_string(), "column 11: expected `, `, found end of text");

    let e = isa.assemble("li.16 r9, #0xAB", 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column 8: `9` does not fit in field `D` (3 bits, unsigned)"
    );

    let e = isa.assemble("pg p1.3, p2.4", 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column 10: `P` must be 2 for this operand but an earlier operand needs 1"
    );
    assert_eq!(isa.assemble("pg p1.3, p1.4", 1), Ok(0xa483));

    let e = isa.assemble("li.64 r1, #0x1", 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column 3: expected `.8`, `.16` or `.32`, found `.64`"
    );
}

#[test]
fn every_valid_word_round_trips() {
    let isa = feat();
    let (mut valid, mut invalid) = (0, 0);
    for w in 0..=0xffffu64 {
        match isa.disassemble(w, 1) {
            Ok(text) => {
                valid += 1;
                // Assembling every valid word is too slow in debug builds;
                // every third one covers each leaf and variant.
                if valid % 3 != 0 {
                    continue;
                }
                let back = isa
                    .assemble(&text, 1)
                    .unwrap_or_else(|e| panic!("{w:#x} `{text}`: {e}"));
                assert_eq!(isa.disassemble(back, 1).as_deref(), Ok(text.as_str()));
            }
            Err(DisasmError::NoMatch { .. }) => {}
            Err(_) => invalid += 1,
        }
    }
    // li: 3 sizes x 8 x 256; add: 8 x (32 x 32 - 16 x 16); ldt: single
    // tuples 32 x 128, pairs 16 even starts x 128; fau: 8192; pg: 8 x 1024;
    // nop and halt: 8192 each (asserts and don't-cares never stop decoding).
    assert_eq!(
        valid,
        3 * 8 * 256 + 8 * (1024 - 256) + 32 * 128 + 16 * 128 + 8192 + 8 * 1024 + 2 * 8192
    );
    // li with SZ 3, add with two uniforms, ldt pairs on odd registers.
    assert_eq!(invalid, 8 * 256 + 8 * 256 + 16 * 128);
}

#[test]
fn decode_warnings_are_separate_from_the_text() {
    let isa = feat();
    assert!(isa.decode_warnings(0xc000, 1).is_empty());
    assert!(isa.decode_warnings(0xf000, 1).is_empty());
    // nop with assert bits set: same text, one warning.
    assert_eq!(isa.disassemble(0xc005, 1).as_deref(), Ok("nop"));
    let w = isa.decode_warnings(0xc005, 1);
    assert_eq!(
        w,
        vec![lathe_isa::DecodeWarning::Assert {
            leaf: "nop".into(),
            mask: 0x1fff,
            expected: 0,
            found: 5
        }]
    );
    assert_eq!(
        w[0].to_string(),
        "assert bits in nop: 5, expected 0 (mask 1fff)"
    );
    // halt with don't-care bits set.
    assert_eq!(isa.disassemble(0xf0a0, 1).as_deref(), Ok("halt 1"));
    assert_eq!(
        isa.decode_warnings(0xf0a0, 1),
        vec![lathe_isa::DecodeWarning::DontCare {
            leaf: "halt".into(),
            bits: 0xa0
        }]
    );
    // The note Mesa's decoder prints with errors shown.
    let mut text = String::new();
    isa.disassemble_with_note(0xf0a0, 1, &mut text).unwrap();
    assert_eq!(text, "halt 1\t; dontcare bits in halt: a0");
    // The assembler writes asserts and clears don't-cares.
    assert_eq!(isa.assemble("nop", 1), Ok(0xc000));
    assert_eq!(isa.assemble("halt 1", 1), Ok(0xf000));
}

#[test]
fn build_word_gives_valid_words_for_every_leaf() {
    let isa = feat();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut pick = |max: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        if max == u64::MAX {
            seed
        } else {
            seed % (max + 1)
        }
    };
    for leaf in isa.instructions().collect::<Vec<_>>() {
        for _ in 0..200 {
            let w = isa
                .build_word(leaf, 1, &mut pick)
                .unwrap_or_else(|| panic!("{}", isa.encodings[leaf].name));
            assert_eq!(isa.decode(w, 1), Some(leaf));
            let text = isa.disassemble(w, 1).expect("valid");
            assert!(isa.decode_warnings(w, 1).is_empty(), "{text}");
            let back = isa.assemble(&text, 1).expect("assembles");
            assert_eq!(isa.disassemble(back, 1).as_deref(), Ok(text.as_str()));
        }
    }
}
