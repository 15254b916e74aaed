//! A copy cycle allocated on Valhall facts runs on the Valhall simulator
//! and agrees with the IR interpreter: two values trade places on every
//! trip of a loop, the allocator turns the back edge's copy cycle with a
//! `swap`, and `lower-swap` makes it three `LSHIFT_XOR.i32` (Valhall has
//! no register exchange).

use lathe_ir::{GenericOp, Op, interp};
use lathe_mali::valhall::{MaliModel, generated::MachineOp, run, sim, target::ValhallTarget};
use lathe_passes::lower_swap::lower_swaps;
use lathe_passes::ra::{RaOptions, allocate};

/// %4/%5 swap each trip; %6 counts %2 trips down (adding the immediate
/// table's 0xFFFFFFFF), `ICMP_OR.u32.ne.m1` against its 0x0.
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
  %7:u32 = IADD.u32 dst.bits=0xc0 b=0xc1 %6
  %8:bool = ICMP_OR.u32 result=2 cond=3 dst.bits=0xc0 b=0xc0 c=0xc0 %7
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

#[test]
fn g610_turns_the_cycle_with_three_xors_and_runs_as_interpreted() {
    let target = ValhallTarget::new("g610".parse::<MaliModel>().unwrap());
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, MACHINE).unwrap();
    let allocation = allocate(&mut shader, &target, RaOptions::default()).unwrap();
    assert_eq!(allocation.swaps, 1);
    assert!(lower_swaps(&mut shader, &target).unwrap());
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e:?}"));
    let xors = shader
        .insts_in_order()
        .filter(|&(_, i)| matches!(shader.inst(i).op, Op::Opcode(o) if o.info().name == "LSHIFT_XOR.i32"))
        .count();
    assert_eq!(xors, 3);
    assert!(
        !shader
            .insts_in_order()
            .any(|(_, i)| matches!(shader.inst(i).op, Op::Swap))
    );

    let generic = lathe_ir::parse::<GenericOp>(&arena, GENERIC).unwrap();
    for trips in 1..=5u32 {
        let inputs = [0x1234_5678, 0x9abc_def0, trips];
        let got = run::run(&shader, &target, &mut sim::machine(1), &inputs)
            .unwrap_or_else(|e| panic!("{trips} trips: {e}\n{}", lathe_ir::print(&shader)));
        let inv = interp::Invocation {
            meta_inputs: inputs.to_vec(),
            ..Default::default()
        };
        let want = interp::run(&generic, &inv, interp::Limits::default()).unwrap();
        assert_eq!(
            [got[&0], got[&1]],
            [want.meta_outputs[&0].1, want.meta_outputs[&1].1],
            "{trips} trips:\n{}",
            lathe_ir::print(&shader)
        );
    }
}
