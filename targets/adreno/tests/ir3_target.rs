//! ir3 target facts per generation, against numbers known independently
//! of the spec text (Mesa's ir3 compiler: delay slots alu→alu 3 and
//! alu→non-alu 6 on a6xx, 2 and 5 on a7xx; mad's third source read late).

use lathe_adreno::ir3::{GpuModel, generated::MachineOp, target::Ir3Target};
use lathe_ir::Op;
use lathe_passes::target::TargetFacts;

fn op(name: &str) -> Op<MachineOp> {
    Op::Opcode(MachineOp::named(name).unwrap())
}

fn target(model: &str) -> Ir3Target {
    Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap()
}

#[test]
fn a7xx_latencies_are_a_cycle_shorter_than_a6xx() {
    let (add, mad, rsq) = (op("add.f"), op("mad.f32"), op("rsq"));
    for (model, alu_alu, alu_sfu) in [
        ("a630", 3, 6),
        ("a660", 3, 6),
        ("a730", 2, 5),
        ("a750", 2, 5),
    ] {
        let t = target(model);
        assert_eq!(t.latency(&add, &add, 0), alu_alu, "{model} alu -> alu");
        assert_eq!(t.latency(&add, &rsq, 0), alu_sfu, "{model} alu -> sfu");
        assert_eq!(t.latency(&mad, &mad, 0), alu_alu, "{model} mad -> mad.SRC1");
        // The third source is read late: one cycle on both generations.
        assert_eq!(t.latency(&add, &mad, 2), 1, "{model} alu -> mad.SRC3");
        // Asynchronous results are waited for with sync bits, not cycles.
        assert_eq!(t.latency(&rsq, &add, 0), 0, "{model} sfu -> alu");
    }
}

/// `op`'s word with register numbers filled in (the allocator's part):
/// `sources` in IR operand order, then the destination if any. ir3 names
/// a register by `number * 4 + component`.
fn with_registers(op: &MachineOp, sources: &[u64], destination: Option<u64>) -> u64 {
    let mut word = op.word();
    for (k, &reg) in sources.iter().enumerate() {
        word = op.source(k).unwrap().field.insert(word, reg);
    }
    if let Some(reg) = destination {
        word = op.destination().unwrap().field.insert(word, reg);
    }
    word
}

fn slot(byte_offset: u32) -> lathe_passes::target::SpillSlot {
    lathe_passes::target::SpillSlot {
        array: lathe_ir::ArrayId(0),
        index: 0,
        byte_offset,
    }
}

#[test]
fn spills_and_fills_are_private_memory_accesses_at_base_plus_offset() {
    use lathe_adreno::ir3::{Generation, assemble, disassemble};
    use lathe_ir::{Scalar, Type};
    let t = target("a630");
    let generation = Generation::A6xx;
    let (r2x, r5y, r4x) = (2 * 4, 5 * 4 + 1, 4 * 4);
    let vec3 = Type {
        scalar: Scalar::F32,
        lanes: 3,
    };
    // Expected text from the ir3 assembly syntax (Mesa's disassembler
    // spelling); the base register holds what `spill_base` wrote (0).
    let cases = [
        (
            with_registers(&t.spill(Type::U32, slot(16)), &[r2x, r5y], None),
            "stp.u32 p[r2.x+16], r5.y, 1",
        ),
        (
            with_registers(&t.fill(Type::U32, slot(16)), &[r2x], Some(r5y)),
            "ldp.u32 r5.y, p[r2.x+16], 1",
        ),
        (
            with_registers(&t.spill(vec3, slot(0)), &[r2x, r4x], None),
            "stp.f32 p[r2.x], r4.x, 3",
        ),
        (
            with_registers(&t.fill(vec3, slot(4084)), &[r2x], Some(r4x)),
            "ldp.f32 r4.x, p[r2.x+4084], 3",
        ),
        (
            with_registers(&t.fill(Type::F16, slot(8)), &[r2x], Some(r5y)),
            "ldp.f16 hr5.y, p[r2.x+8], 1",
        ),
        (
            with_registers(&t.spill_base().unwrap(), &[], Some(r2x)),
            "mov.u32u32 r2.x, 0",
        ),
    ];
    for (word, text) in cases {
        assert_eq!(disassemble(word, generation).unwrap(), text);
        assert_eq!(assemble(text, generation).unwrap(), word);
    }
    // The 13-bit signed offset reaches 4 KiB.
    assert_eq!(t.scratch_bytes(), 4096);
}

#[test]
#[should_panic(expected = "spill slot at byte 4096")]
fn a_slot_beyond_the_offset_field_is_refused() {
    target("a630").spill(lathe_ir::Type::F32, slot(4096));
}
