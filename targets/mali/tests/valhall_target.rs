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

/// A 64-bit source is a register pair whose first register is even
/// (Mesa's `va_validate_register_pair`), even when it holds a 32-bit
/// value the instruction widens with `.w0`: the spec's semantics say
/// which sources are read as 64 bits, the operand class aligns them, and
/// the allocation checker refuses one that is not.
#[test]
fn sources_read_as_64_bits_are_even_register_pairs() {
    use lathe_ir::Reg;
    use lathe_mali::valhall::compile::{CompileOptions, compile_with};
    use lathe_mali::valhall::generated::MachineOp;
    use lathe_passes::ra::{RaOptions, allocate, check::check};
    use std::rc::Rc;

    // A store at a dynamic offset: IADD.u64 adds the offset (`.w0`) to
    // the buffer's address, STORE reads the 64-bit sum.
    let text = "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = load_ssbo binding=0 %2
  store_ssbo binding=1 %2, %3
  ret
";
    for gpu in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
        let target = Rc::new(ValhallTarget::new(gpu.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions { dumps: true }).unwrap();
        let (_, sched) = out.dumps.iter().find(|(n, _)| *n == "sched").unwrap();
        let arena = lathe_ir::Bump::new();
        let mut machine = lathe_ir::parse::<MachineOp>(&arena, sched).unwrap();
        // The facts: IADD.u64's sources and the address of LOAD and STORE
        // are pairs; IMUL's are not.
        let mut widened = None;
        let mut seen = 0;
        for (_, i) in machine.insts_in_order() {
            let d = machine.inst(i);
            let lathe_ir::Op::Opcode(m) = d.op else {
                continue;
            };
            let name = m.info().name.as_str();
            let aligns: Vec<u8> = d
                .args
                .iter()
                .enumerate()
                .map(|(k, &v)| target.operand_class(&d.op, k, machine.value_type(v)).align)
                .collect();
            if name == "IADD.u64" {
                assert!(aligns.iter().all(|&a| a == 2), "{gpu} {name}: {aligns:?}");
                widened = d
                    .args
                    .iter()
                    .copied()
                    .find(|&v| machine.value_type(v) == Type::U32);
                seen += 1;
            } else if name.starts_with("IMUL") {
                assert!(aligns.iter().all(|&a| a == 1), "{gpu} {name}: {aligns:?}");
                seen += 1;
            } else if name.starts_with("LOAD") || name.starts_with("STORE") {
                assert_eq!(aligns.last(), Some(&2), "{gpu} {name}: {aligns:?}");
                seen += 1;
            }
        }
        assert!(seen >= 4, "{gpu}: {sched}");
        // The allocation honours them, and the checker catches the `.w0`
        // offset moved (with its definition) to the odd r63.
        let alloc = allocate(&mut machine, target.as_ref(), RaOptions::default()).unwrap();
        check(&machine, target.as_ref(), &alloc).unwrap();
        let v = widened.unwrap_or_else(|| panic!("{gpu}: no `.w0` source\n{sched}"));
        let reg = machine.value_reg(v).unwrap();
        assert_eq!(reg.unit % 2, 0, "{gpu}");
        machine.set_value_reg(
            v,
            Some(Reg {
                file: reg.file,
                unit: 63,
            }),
        );
        let err = check(&machine, target.as_ref(), &alloc).unwrap_err();
        assert!(err.message.contains("aligned to 2"), "{gpu}: {err}");
    }
}
