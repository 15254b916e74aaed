//! The address registers as a register class from the spec: `mova` and
//! `mova1` are variants of `mov` whose `when` block says (`meta
//! result_regfile`) that the result is a0.x / a1.x, so the ir3 target
//! facts put their values in the address files, and the scheduler keeps
//! one address value live at a time.

use lathe_adreno::ir3::{
    Generation, GpuModel, assemble, disassemble, generated::MachineOp, target::Ir3Target,
};
use lathe_ir::{Op, Type, Value};
use lathe_passes::target::{FileKind, TargetFacts};

fn a630() -> Ir3Target {
    Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap()
}

fn op(text: &str) -> MachineOp {
    MachineOp::from_word(assemble(text, Generation::A6xx).unwrap(), 600).unwrap()
}

#[test]
fn mova_results_are_in_the_address_files() {
    let t = a630();
    let file_of = |text: &str| {
        let class = t.result_class(&Op::Opcode(op(text)), Type::I16);
        let f = &t.files()[class.file.index()];
        (f.name, f.kind, class.lane_units)
    };
    assert_eq!(file_of("mova a0.x, hr1.y"), ("a0", FileKind::Address, 1));
    assert_eq!(file_of("mova1 a1.x, hr1.y"), ("a1", FileKind::Address, 1));
    assert_eq!(file_of("mov.s16s16 hr0.x, hr1.y").1, FileKind::General);
}

#[test]
fn mova_keeps_its_destination_through_machine_ir() {
    // The destination bits the variant asserts are not a register number:
    // decoding keeps them and encoding with registers leaves them.
    for (text, number) in [("mova a0.x, hr1.y", 5), ("mova1 a1.x, hr2.z", 10)] {
        let m = op(text);
        let word = m.encode(&[number], &[0], 600);
        assert_eq!(disassemble(word, Generation::A6xx).unwrap(), text);
        let mut attrs = String::new();
        lathe_ir::Opcode::write_attrs(&m, None, &mut attrs).unwrap();
        assert!(attrs.contains("dst.bits=0xf"), "{attrs}");
    }
    // A plain mov's destination is still the allocator's.
    let word = op("mov.s16s16 hr0.x, hr0.y").encode(&[1], &[6], 600);
    assert_eq!(
        disassemble(word, Generation::A6xx).unwrap(),
        "mov.s16s16 hr1.z, hr0.y"
    );
}

/// Two a0 values, each read by a relative const load, written in an
/// order that keeps both live at once.
const TWO_ADDRESSES: &str = "shader fragment
b0:
  %0:i16 = input index=0
  %1:i16 = input index=1
  %2:i16 = mov-gpr dst_type=4 src_type=4 dst.bits=0xf4 %0
  %3:i16 = mov-gpr dst_type=4 src_type=4 dst.bits=0xf4 %1
  %4:f32 = mov-relconst dst_type=1 src_type=1 src=0x4 addr=%2
  %5:f32 = mov-relconst dst_type=1 src_type=1 src=0x8 addr=%3
  %6:f32 = mov-relconst dst_type=1 src_type=1 src=0xc addr=%2
  %7:f32 = add.f full %4, %5
  %8:f32 = add.f full %7, %6
  output index=0 %8
  ret
";

#[test]
fn sched_keeps_one_address_value_live() {
    let t = a630();
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, TWO_ADDRESSES).unwrap();
    lathe_ir::validate(&shader).unwrap();
    lathe_passes::sched::schedule(&mut shader, &t);
    lathe_ir::validate(&shader).unwrap();
    let order: Vec<_> = shader.insts_in_order().map(|(_, i)| i).collect();
    // Where each address value is written and last read.
    let mut spans: Vec<(Value, usize, usize)> = Vec::new();
    for (pos, &i) in order.iter().enumerate() {
        let d = shader.inst(i);
        if let Some(r) = d.result {
            let class = t.result_class(&d.op, shader.value_type(r));
            if t.files()[class.file.index()].kind == FileKind::Address {
                spans.push((r, pos, pos));
            }
        }
        if let Some(a) = d.address {
            let s = spans
                .iter_mut()
                .find(|s| s.0 == a)
                .expect("address defined first");
            s.2 = pos;
        }
    }
    assert_eq!(spans.len(), 2, "{}", lathe_ir::print(&shader));
    let (a, b) = (spans[0], spans[1]);
    assert!(
        a.2 < b.1 || b.2 < a.1,
        "two a0 values live at once:\n{}",
        lathe_ir::print(&shader)
    );
}
