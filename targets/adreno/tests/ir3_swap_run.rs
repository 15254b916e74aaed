//! A copy cycle allocated on ir3 facts runs on the ir3 simulator and
//! agrees with the IR interpreter: two values trade places on every trip
//! of a loop, so the allocator ends the back edge with a parallel copy
//! whose cycle it turns with a `swap`, which a630 encodes as `swz` and
//! a306 (no `swz` before a5xx) lowers to three `xor.b`. The simulator
//! models the merged register file of a6xx on.

use lathe_adreno::ir3::{GpuModel, generated::MachineOp, run, sim, target::Ir3Target};
use lathe_ir::{GenericOp, Op, interp};
use lathe_passes::lower_swap::lower_swaps;
use lathe_passes::ra::{RaOptions, allocate};

/// The machine program: %4/%5 swap each trip, %6 counts %2 trips down.
const MACHINE: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  %2:u32 = input index=2
  jump b1
b1:
  %4:u32 = phi [%0, b0], [%5, b1]
  %5:u32 = phi [%1, b0], [%4, b1]
  %6:u32 = phi [%2, b0], [%7, b1]
  %7:u32 = add.s full src2=0x27ff %6
  %8:bool = cmps.u dst_conv full cond=5 src2=0x2000 %7
  branch %8, b1, b2
b2:
  output index=0 %4
  output index=1 %5
  ret
";

/// The same program in generic IR, for the interpreter.
const GENERIC: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  %2:u32 = input index=2
  %3:u32 = const 1
  %9:u32 = const 0
  jump b1
b1:
  %4:u32 = phi [%0, b0], [%5, b1]
  %5:u32 = phi [%1, b0], [%4, b1]
  %6:u32 = phi [%2, b0], [%7, b1]
  %7:u32 = isub %6, %3
  %8:bool = ine %7, %9
  branch %8, b1, b2
b2:
  output index=0 %4
  output index=1 %5
  ret
";

fn interpreted(inputs: &[u32]) -> Vec<u32> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, GENERIC).unwrap();
    let inv = interp::Invocation {
        meta_inputs: inputs.to_vec(),
        ..Default::default()
    };
    let out = interp::run(&shader, &inv, interp::Limits::default()).unwrap();
    (0..2).map(|k| out.meta_outputs[&k].1).collect()
}

/// `MACHINE` allocated on `model` with its swaps lowered: the
/// allocation's swap count and what the swaps became, with registers.
fn allocated<'a>(
    arena: &'a lathe_ir::Bump,
    model: &str,
) -> (Ir3Target, lathe_ir::Shader<'a, MachineOp>, u32) {
    let target = Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap();
    let mut shader = lathe_ir::parse::<MachineOp>(arena, MACHINE).unwrap();
    let allocation = allocate(&mut shader, &target, RaOptions::default()).unwrap();
    lower_swaps(&mut shader, &target).unwrap();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e:?}"));
    (target, shader, allocation.swaps)
}

/// The exchanging instructions of `shader`: `swap` or `xor.b` with the
/// registers (`file:unit`) of their result and operands.
fn exchanges(shader: &lathe_ir::Shader<'_, MachineOp>) -> Vec<String> {
    let reg = |v: lathe_ir::Value| {
        let r = shader.value_reg(v).unwrap();
        format!("{}:{}", r.file, r.unit)
    };
    shader
        .insts_in_order()
        .filter(|&(_, i)| match shader.inst(i).op {
            Op::Swap => true,
            Op::Opcode(o) => o.info().name == "xor.b",
            _ => false,
        })
        .map(|(_, i)| {
            let d = shader.inst(i);
            let args: Vec<String> = d.args.iter().map(|&a| reg(a)).collect();
            format!(
                "{} {} <- {}",
                d.op.name(),
                reg(d.result.unwrap()),
                args.join(", ")
            )
        })
        .collect()
}

#[test]
fn a630_turns_the_cycle_with_swz_and_runs_as_interpreted() {
    let arena = lathe_ir::Bump::new();
    let (target, shader, swaps) = allocated(&arena, "a630");
    assert_eq!(swaps, 1);
    // The swap stays one instruction: the run encodes it as `swz`.
    assert_eq!(exchanges(&shader).len(), 1);
    assert!(exchanges(&shader)[0].starts_with("swap"));
    for trips in 1..=5u32 {
        let inputs = [0x1234_5678, 0x9abc_def0, trips];
        let got = run::run(&shader, &target, &mut sim::machine(1), &inputs)
            .unwrap_or_else(|e| panic!("{trips} trips: {e}\n{}", lathe_ir::print(&shader)));
        let want = interpreted(&inputs);
        assert_eq!(
            [got[&0], got[&1]],
            [want[0], want[1]],
            "{trips} trips:\n{}",
            lathe_ir::print(&shader)
        );
    }
}

/// a3xx keeps half registers in a file of their own, which the simulator
/// (merged, as a6xx) cannot hold apart from the full one, so the a306
/// allocation is checked by its registers: `x ^= y; y ^= x; x ^= y`.
#[test]
fn a306_turns_the_cycle_with_three_xors() {
    let arena = lathe_ir::Bump::new();
    let (_, shader, swaps) = allocated(&arena, "a306");
    assert_eq!(swaps, 1);
    let xors = exchanges(&shader);
    assert_eq!(xors.len(), 3, "{xors:?}");
    // Each xor writes its first operand's register; the second reads the
    // other register, and the three alternate between the two.
    let parse = |s: &str| -> Vec<String> {
        s.split([' ', ',', '<', '-'])
            .filter(|t| t.contains(':'))
            .map(String::from)
            .collect()
    };
    let (a, b, c) = (parse(&xors[0]), parse(&xors[1]), parse(&xors[2]));
    let (x, y) = (a[1].clone(), a[2].clone());
    assert_ne!(x, y);
    assert_eq!(a, [x.clone(), x.clone(), y.clone()]);
    assert_eq!(b, [y.clone(), y.clone(), x.clone()]);
    assert_eq!(c, [x.clone(), x, y]);
}

#[test]
fn the_exchange_idioms_are_the_specs_swz_and_xor() {
    use lathe_passes::target::{Exchange, TargetFacts};
    let a630 = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
    let a306 = Ir3Target::new("a306".parse::<GpuModel>().unwrap()).unwrap();
    let name = |e: Option<Exchange<MachineOp>>| match e {
        Some(Exchange::Instruction(o)) => format!("exchange {}", lathe_ir::Opcode::name(&o)),
        Some(Exchange::Xor(o)) => format!("xor {}", lathe_ir::Opcode::name(&o)),
        None => "none".into(),
    };
    assert_eq!(name(a630.swap(lathe_ir::Type::F32)), "exchange swz");
    assert_eq!(name(a630.swap(lathe_ir::Type::F16)), "exchange swz");
    assert_eq!(name(a306.swap(lathe_ir::Type::U32)), "xor xor.b");
}
