//! The generated ir3 module is an IR opcode vocabulary (`MachineOp`).

use lathe_adreno::ir3::generated::MachineOp;
use lathe_ir::Opcode;

#[test]
fn a_decoded_instruction_shows_its_modifiers_as_attributes() {
    // `(nop3) add.s hr1.w, hr0.x, h(-1)` on a6xx: the register operands
    // become IR values, the immediate stays in the word.
    let op = MachineOp::from_word(0x4228_0807_27ff_0000, 600).unwrap();
    let mut attrs = String::new();
    op.write_attrs(None, &mut attrs).unwrap();
    // (nop3) is the two (r) bits; h(-1) is the immediate form 0b100 at
    // bits 11..=13 with IMMED 0x7ff in SRC2's 16 bits.
    assert_eq!(attrs, " src1_r src2_r src2=0x27ff");
    assert_eq!(op.name(), "add.s");
    assert_eq!(op.value_operands(lathe_isa::operands::Role::Src).count(), 1);
    let attrs_list: Vec<lathe_ir::Attr> = attrs
        .split_whitespace()
        .map(|a| match a.split_once('=') {
            Some((k, v)) => lathe_ir::Attr {
                key: Some(k),
                value: v,
            },
            None => lathe_ir::Attr {
                key: None,
                value: a,
            },
        })
        .collect();
    assert_eq!(MachineOp::parse("add.s", &attrs_list, None).unwrap(), op);
}

#[test]
fn an_immediate_picked_by_another_field_is_no_register_operand() {
    // cat6's SRC2 is an immediate or a GPR by the MODE field (`.imm`):
    // the UBO index of `ldc.imm` stays in the word, its `.uniform` form
    // reads a register.
    let src_count = |text: &str| {
        let word = lathe_adreno::ir3::assemble(text, lathe_adreno::ir3::Generation::A6xx).unwrap();
        let op = MachineOp::from_word(word, 600).unwrap();
        op.value_operands(lathe_isa::operands::Role::Src).count()
    };
    assert_eq!(src_count("ldc.offset1.1.imm r1.x, r0.x, 2"), 1);
    assert_eq!(src_count("ldc.offset1.1.uniform r1.x, r0.x, r0.y"), 2);
}
