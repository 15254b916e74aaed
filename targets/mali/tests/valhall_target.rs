//! Valhall target facts that the backend passes emit as instructions:
//! spills and fills assembled and disassembled by the real encoder.

use lathe_ir::{ArrayId, Scalar, Type};
use lathe_mali::valhall::{self, MaliModel, target::ValhallTarget};
use lathe_passes::target::{SpillSlot, TargetFacts};

fn slot(byte_offset: u32) -> SpillSlot {
    SpillSlot {
        array: ArrayId(0),
        index: 0,
        byte_offset,
    }
}

/// The emitted instruction's word with staging register `reg` filled in
/// (the register allocator's part), as the encoder would be handed it.
fn with_register(op: &valhall::generated::MachineOp, reg: u64) -> u64 {
    let field = op
        .source(0)
        .or(op.destination())
        .expect("a staging operand");
    field.field.insert(op.word(), reg)
}

#[test]
fn spills_and_fills_address_thread_local_storage_at_the_slot_offset() {
    let model: MaliModel = "g610".parse().unwrap();
    let t = ValhallTarget::new(model);
    let vec2 = Type {
        scalar: Scalar::F32,
        lanes: 2,
    };
    let vec4 = Type {
        scalar: Scalar::U32,
        lanes: 4,
    };
    // Expected text written from the Valhall assembly syntax (Mesa's
    // disassembler spelling), not from the target's code.
    let cases = [
        (
            t.spill(Type::F32, slot(16)),
            6,
            "STORE.i32.slot0 @r6, thread_local_pointer.w0, offset:16",
        ),
        (
            t.fill(Type::F32, slot(16)),
            9,
            "LOAD.i32.slot0 @r9, thread_local_pointer.w0, offset:16",
        ),
        (
            t.spill(vec2, slot(0)),
            4,
            "STORE.i64.slot0 @r4:r5, thread_local_pointer.w0, offset:0",
        ),
        (
            t.fill(vec4, slot(32752)),
            8,
            "LOAD.i128.slot0 @r8:r9:r10:r11, thread_local_pointer.w0, offset:32752",
        ),
        (
            t.spill(Type::F16, slot(4)),
            1,
            "STORE.i32.slot0 @r1, thread_local_pointer.w0, offset:4",
        ),
    ];
    for (op, reg, text) in cases {
        let word = with_register(&op, reg);
        assert_eq!(valhall::disassemble(word, model.arch()).unwrap(), text);
        assert_eq!(valhall::assemble(text, model.arch()).unwrap(), word);
    }
}

#[test]
fn scratch_reach_is_the_signed_16_bit_offset() {
    let t = ValhallTarget::new("g610".parse().unwrap());
    assert_eq!(t.scratch_bytes(), 32 * 1024);
    // The last word-aligned slot is reachable.
    t.spill(Type::F32, slot(32 * 1024 - 4));
}

#[test]
#[should_panic(expected = "spill slot at byte 32768")]
fn a_slot_beyond_the_reach_is_refused() {
    let t = ValhallTarget::new("g610".parse().unwrap());
    t.spill(Type::F32, slot(32 * 1024));
}
