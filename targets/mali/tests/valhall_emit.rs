//! Allocated Valhall machine IR through `legalise` and `emit`, run as a
//! whole program on the generated simulator with its hazard detection
//! on: no hazard, and every thread's outputs equal what `machine_run`
//! (each instruction alone, every result settled: no slots, no waits, no
//! branch offsets) gives for the same allocation. The disassembly reads
//! back to the same words, and a program with one required wait dropped
//! is reported by the simulator.

use std::collections::BTreeMap;

use lathe_ir::{Op, Shader};
use lathe_isa::ast::MetaValue;
use lathe_mali::valhall::emit::{Compiled, emit};
use lathe_mali::valhall::generated::MachineOp;
use lathe_mali::valhall::legalise::legalise;
use lathe_mali::valhall::{MaliModel, assemble, run, sim, target::ValhallTarget};
use lathe_passes::lower_swap::lower_swaps;
use lathe_passes::ra::{RaOptions, allocate};

/// Threads of the whole-program run (a quad; inputs differ per thread,
/// so branches diverge).
const LANES: usize = 4;

/// A loop whose body stores its value to thread-local storage, loads it
/// back and doubles what the load returned right away; the trip count
/// runs down to zero. Output: input 1 × 2^(input 0).
const LOOP: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  jump b1
b1:
  %2:u32 = phi [%0, b0], [%6, b1]
  %3:u32 = phi [%1, b0], [%5, b1]
  STORE.i32 page=1 sr_count=1 offset=8 a=0xe2 %3
  %4:u32 = LOAD.i32 page=1 sr_count=1 offset=8 a=0xe2
  %5:u32 = IADD.u32 dst.bits=0xc0 %4, %4
  %6:u32 = IADD.u32 dst.bits=0xc0 b=0xc1 %2
  %7:bool = ICMP_OR.u32 result=2 cond=3 dst.bits=0xc0 b=0xc0 c=0xc0 %6
  branch %7, b1, b2
b2:
  output index=0 %5
  ret
";

/// A diamond: one arm loads a value it stored before the branch, the
/// other computes; the join reads whichever arrived, so the wait for the
/// load must reach past the join. Output: 2 × (input 1, or input 1 − 1
/// when input 0 is zero).
const DIAMOND: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  %2:bool = ICMP_OR.u32 result=2 cond=3 dst.bits=0xc0 b=0xc0 c=0xc0 %0
  STORE.i32 page=1 sr_count=1 offset=4 a=0xe2 %1
  branch %2, b1, b2
b1:
  %3:u32 = LOAD.i32 page=1 sr_count=1 offset=4 a=0xe2
  jump b3
b2:
  %4:u32 = IADD.u32 dst.bits=0xc0 b=0xc1 %1
  jump b3
b3:
  %5:u32 = phi [%3, b1], [%4, b2]
  %6:u32 = IADD.u32 dst.bits=0xc0 %5, %5
  output index=0 %6
  ret
";

fn target(model: &str) -> ValhallTarget {
    ValhallTarget::new(model.parse::<MaliModel>().unwrap())
}

/// `text` allocated on `target`, as IR text with registers.
fn allocated(text: &str, target: &ValhallTarget) -> String {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
    allocate(&mut shader, target, RaOptions::default()).unwrap();
    lathe_ir::print(&shader)
}

/// The outputs `machine_run` gives for one thread's `inputs`.
fn reference(allocated: &str, target: &ValhallTarget, inputs: &[u32]) -> BTreeMap<u32, u32> {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, allocated).unwrap();
    lower_swaps(&mut shader, target).unwrap();
    run::run(&shader, target, &mut sim::machine(1), inputs).unwrap()
}

/// Meta input or output indices and their registers' names.
type Places = Vec<(u32, String)>;

/// Legalised and emitted `allocated`, optionally edited after
/// legalisation; the program and where its inputs and outputs live.
fn compile(
    allocated: &str,
    target: &ValhallTarget,
    edit: impl FnOnce(&mut Shader<'_, MachineOp>),
) -> (Compiled, Places, Places) {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, allocated).unwrap();
    assert_eq!(legalise(&mut shader, target), Ok(true));
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e:?}\n{}", lathe_ir::print(&shader)));
    edit(&mut shader);
    let compiled = emit(&shader, target).unwrap_or_else(|e| panic!("{e}"));
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let name = |v| format!("r{}", shader.value_reg(v).unwrap().unit);
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        match d.op {
            Op::Input { index } => inputs.push((index, name(d.result.unwrap()))),
            Op::Output { index } => outputs.push((index, name(d.args[0]))),
            _ => {}
        }
    }
    (compiled, inputs, outputs)
}

/// Runs `compiled` over [`LANES`] threads, thread `t` with inputs
/// `inputs[t]`; each thread's outputs.
fn run_whole(
    compiled: &Compiled,
    ins: &Places,
    outs: &Places,
    inputs: &[Vec<u32>],
) -> Result<Vec<BTreeMap<u32, u32>>, sim::SimError> {
    let mut m = sim::machine(LANES);
    for (index, reg) in ins {
        let (file, half, n) = m.parse_reg(reg).unwrap();
        for (lane, values) in inputs.iter().enumerate() {
            m.set(file, half, n, lane, values[*index as usize]);
        }
    }
    sim::run(&mut m, &compiled.words, compiled.model.arch())?;
    Ok((0..LANES)
        .map(|lane| {
            outs.iter()
                .map(|(index, reg)| {
                    let (file, half, n) = m.parse_reg(reg).unwrap();
                    (*index, m.get(file, half, n, lane).unwrap())
                })
                .collect()
        })
        .collect())
}

/// Every disassembled line assembles back to its word.
fn assert_round_trip(compiled: &Compiled) {
    for (word, text) in compiled.words.iter().zip(&compiled.disassembly) {
        assert_eq!(
            assemble(text, compiled.model.arch()),
            Ok(*word),
            "`{text}` (0x{word:016x})"
        );
    }
}

/// Checks `program` on every model of both architectures with the
/// threads' `inputs`; returns the g610 compilation.
fn check(program: &str, inputs: &[Vec<u32>]) -> Compiled {
    let mut last = None;
    for model in ["g57", "g610"] {
        let t = target(model);
        let text = allocated(program, &t);
        let (compiled, ins, outs) = compile(&text, &t, |_| {});
        assert_round_trip(&compiled);
        let got = run_whole(&compiled, &ins, &outs, inputs)
            .unwrap_or_else(|e| panic!("{model}: {e}\n{}", compiled.listing()));
        for (lane, values) in inputs.iter().enumerate() {
            let want = reference(&text, &t, values);
            assert_eq!(
                got[lane],
                want,
                "{model} thread {lane}\n{}",
                compiled.listing()
            );
        }
        last = Some(compiled);
    }
    last.unwrap()
}

#[test]
fn a_loop_reading_a_load_at_once_runs_without_hazard_on_every_thread() {
    let inputs: Vec<Vec<u32>> = [(1, 3), (4, 5), (2, 0x8000_0001), (7, 1)]
        .iter()
        .map(|&(n, x)| vec![n, x])
        .collect();
    let compiled = check(LOOP, &inputs);
    // The closed form, independent of any simulator.
    let t = target("g610");
    let text = allocated(LOOP, &t);
    let (compiled_again, ins, outs) = compile(&text, &t, |_| {});
    assert_eq!(compiled_again, compiled, "emission is deterministic");
    let got = run_whole(&compiled, &ins, &outs, &inputs).unwrap();
    for (lane, v) in inputs.iter().enumerate() {
        assert_eq!(got[lane][&0], v[1].wrapping_shl(v[0]), "thread {lane}");
    }
    // The loop's back edge is a branch with a negative offset, the last
    // instruction of the loop reconverges, the shader ends.
    let listing = compiled.listing();
    assert!(
        listing.lines().any(|l| l.starts_with("BRANCHZ")
            && l.contains(".reconverge")
            && l.contains("offset:-")),
        "{listing}"
    );
    assert!(listing.trim_end().ends_with("NOP.end"), "{listing}");
    assert_eq!(compiled.stats.loops, 1);
    assert_eq!(compiled.threads, 2);
}

#[test]
fn a_wait_reaches_past_a_join_and_diverged_threads_agree() {
    // Threads 0 and 2 take the load, 1 and 3 the arithmetic.
    let inputs: Vec<Vec<u32>> = [(1, 10), (0, 10), (5, 0xffff_fff0), (0, 0)]
        .iter()
        .map(|&(c, x)| vec![c, x])
        .collect();
    let compiled = check(DIAMOND, &inputs);
    let t = target("g610");
    let text = allocated(DIAMOND, &t);
    let (_, ins, outs) = compile(&text, &t, |_| {});
    let got = run_whole(&compiled, &ins, &outs, &inputs).unwrap();
    for (lane, v) in inputs.iter().enumerate() {
        let arm = if v[0] != 0 {
            v[1]
        } else {
            v[1].wrapping_sub(1)
        };
        assert_eq!(got[lane][&0], arm.wrapping_mul(2), "thread {lane}");
    }
}

#[test]
fn the_examples_run_as_machine_run_does() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let dot = std::fs::read_to_string(format!("{dir}/valhall-machine.lir")).unwrap();
    let f = |x: f32| x.to_bits();
    let inputs: Vec<Vec<u32>> = (0..LANES)
        .map(|k| vec![f(1.0 + k as f32), f(2.0), f(-0.5), f(3.0 * k as f32)])
        .collect();
    let compiled = check(&dot, &inputs);
    assert_eq!(compiled.stats.sfu, 1.0 / 16.0, "one FRSQ");

    // Under register pressure ra spills to thread-local storage: the
    // fills are message results read soon after.
    let spill = std::fs::read_to_string(format!("{dir}/valhall-spill.lir")).unwrap();
    let inputs: Vec<Vec<u32>> = (0..LANES)
        .map(|k| (0..4).map(|i| f(0.25 * (i + k) as f32 - 0.5)).collect())
        .collect();
    let compiled = check(&spill, &inputs);
    assert!(compiled.stats.spills > 0 && compiled.stats.fills > 0);
    assert!(
        compiled.registers > 32 && compiled.threads == 1,
        "{}",
        compiled.registers
    );
}

#[test]
fn dropping_one_required_wait_is_a_hazard() {
    let t = target("g610");
    let text = allocated(LOOP, &t);
    // The first arithmetic instruction that waits on a slot (for the
    // load's result) no longer does.
    let (compiled, ins, outs) = compile(&text, &t, |shader| {
        let first = shader.insts_in_order().find_map(|(_, i)| match shader.inst(i).op {
            Op::Opcode(op)
                if op.modifier("flow").is_some_and(|f| (1..=7).contains(&f))
                    && !matches!(op.meta("message"), Some(MetaValue::Ident(v)) if v == "true") =>
            {
                Some((i, op))
            }
            _ => None,
        });
        let (i, op) = first.expect("a wait");
        shader.inst_mut(i).op = Op::Opcode(op.with_modifier("flow", 0).unwrap());
    });
    let err = run_whole(&compiled, &ins, &outs, &vec![vec![2, 3]; LANES]).unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { .. }),
        "{err}\n{}",
        compiled.listing()
    );
}

#[test]
fn inputs_must_stay_in_their_preloaded_registers() {
    let t = target("g610");
    let text = "shader fragment
registers r
b0:
  %0:u32@r0 = input index=0
  %1:u32@r1 = IADD.u32 dst.bits=0xc0 %0, %0
  %2:u32@r2 = IADD.u32 dst.bits=0xc0 %1, %1
  %3:u32@r1 = input index=1
  %4:u32@r3 = IADD.u32 dst.bits=0xc0 %2, %3
  output index=0 %4
  ret
";
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
    let err = legalise(&mut shader, &t).unwrap_err();
    assert!(
        err.to_string().starts_with("unsupported: input 1 in r1"),
        "{err}"
    );
}
