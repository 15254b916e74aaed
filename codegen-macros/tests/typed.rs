//! The generated typed API on `isa/tests/specs/features.isa`: enums as
//! Rust enums, typed getters and setters, derived values, sub-encoding
//! fields, validity, warnings and field-by-field `Arbitrary`.

mod feat {
    lathe_codegen_macros::isa!("../isa/tests/specs/features.isa");
}

use feat::{Field, Instr, Opcode, SubValue, Value, enums::Size};
use lathe_isa::FieldError;

#[test]
fn enum_fields_are_rust_enums() {
    let i = Instr::decode(0x2aab, 1).expect("li");
    assert_eq!(i.opcode, Opcode::Li);
    assert_eq!(i.sz(), Some(Ok(Size::N16)));
    assert_eq!(i.get(Field::Sz), Some(Value::Size(Size::N16)));
    assert_eq!(Size::N16.text(), ".16");
    assert_eq!(Size::from_bits(3), None);
    const { assert!(Size::STRICT) };
    // A reserved value reads back raw and fails validation.
    let bad = Instr::decode(0x3aab, 1).expect("li opcode");
    assert_eq!(bad.sz(), Some(Err(3)));
    assert!(bad.validate().is_err());
}

#[test]
fn typed_getters_and_setters() {
    let mut i = Instr::decode(0x2aab, 1).expect("li");
    assert_eq!(i.imm(), Some(0xab));
    assert_eq!(i.d(), Some(2));
    i.set_imm(0x12).expect("fits");
    i.set_sz(Size::N32).expect("listed");
    assert_eq!(i.to_string(), "li.32 r2, #0x12");
    assert_eq!(
        i.set_d(9),
        Err(FieldError::OutOfRange {
            field: "D".into(),
            value: "0x9".into(),
            width: 3
        })
    );
    // Fields of other instructions are absent, not errors.
    assert_eq!(i.addr(), None);
    assert!(matches!(i.set_addr(1), Err(FieldError::NoField { .. })));
    // `fields()` lists exactly this instruction's names.
    let names: Vec<&str> = i.fields().iter().map(|(f, _)| f.name()).collect();
    assert_eq!(names, ["SZ", "D", "IMM"]);
}

#[test]
fn sub_encoding_fields_and_derived_values() {
    // ldt r2:r3, [r5]
    let mut i = Instr::decode(0x7105, 1).expect("ldt");
    assert_eq!(i.to_string(), "ldt r2:r3, [r5]");
    assert_eq!(
        i.dst(),
        Some(SubValue {
            bits: 2,
            leaf: Some("tuple")
        })
    );
    assert_eq!(i.w(), Some(true));
    // CNT is derived: readable, not settable.
    assert_eq!(i.cnt(), Some(2));
    assert!(matches!(
        i.set(Field::Cnt, Value::Uint(1)),
        Err(FieldError::Derived { .. })
    ));
    i.set_w(false).expect("bool");
    assert_eq!(i.to_string(), "ldt r2, [r5]");
    // add r1, r2, u3: the sources decode to different leaves.
    let a = Instr::decode(0x4453, 1).expect("add");
    assert_eq!(a.a().and_then(|s| s.leaf), Some("src-reg"));
    assert_eq!(a.b().and_then(|s| s.leaf), Some("src-uni"));
}

#[test]
fn setters_reject_other_enums_and_opcode_changes() {
    let mut i = Instr::decode(0x2aab, 1).expect("li");
    assert!(matches!(
        i.set(Field::Sz, Value::Float(1.0)),
        Err(FieldError::WrongKind { .. })
    ));
    assert!(matches!(
        i.set(Field::Imm, Value::Int(-1)),
        Err(FieldError::OutOfRange { .. })
    ));
    assert_eq!(i.encode(), 0x2aab, "failed sets leave the word alone");
}

#[test]
fn warnings_are_a_separate_list() {
    let i = Instr::decode(0xc005, 1).expect("nop");
    assert_eq!(i.to_string(), "nop");
    assert_eq!(i.warnings().len(), 1);
    assert!(Instr::decode(0xc000, 1).expect("nop").warnings().is_empty());
}

#[test]
fn arbitrary_builds_valid_instructions_field_by_field() {
    use arbitrary::{Arbitrary, Unstructured};
    let mut seed = 0x1234_5678_u64;
    let (mut made, mut per_opcode) = (0, vec![0usize; Opcode::ALL.len()]);
    for _ in 0..400 {
        let bytes: Vec<u8> = (0..48)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            })
            .collect();
        let Ok(i) = Instr::arbitrary(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        made += 1;
        per_opcode[i.opcode as usize] += 1;
        // Valid: every check holds, no reserved value, no warnings.
        assert_eq!(i.validate(), Ok(()), "{:#x}", i.encode());
        assert!(i.warnings().is_empty());
        if let Some(sz) = i.sz() {
            assert!(sz.is_ok());
        }
        let text = i.to_string();
        assert_eq!(
            Instr::assemble(&text, i.generation).map(|j| j.encode()),
            Ok(i.encode()),
            "{text}"
        );
    }
    // Construction, not rejection sampling: nearly every input gives one.
    assert!(made >= 390, "{made}");
    assert!(per_opcode.iter().all(|&n| n > 0), "{per_opcode:?}");
}
