//! Register allocation: the checker and the register-level differential
//! test on random programs (high-pressure ones and the general generator's)
//! over small and realistic register files.
//!
//! `REGALLOC_PROGRAMS=100000 cargo test -p lathe-passes --release --test
//! regalloc -- --ignored` runs a longer sweep.

use lathe_passes::fuzzing::{regalloc, seed_bytes};

fn sweep(programs: u64, first_seed: u64) {
    let mut compared = 0;
    let (mut spills, mut memory_phis, mut groups, mut addresses) = (0, 0, 0, 0);
    let (mut shared, mut placed, mut spilling_groups) = (0, 0, 0);
    for seed in first_seed..first_seed + programs {
        let len = 48 + (seed % 5) as usize * 48;
        let data = seed_bytes(seed, len);
        match regalloc::differential(&data) {
            Ok(run) => {
                compared += run.compared as u32;
                spills += run.spills;
                memory_phis += run.memory_phis;
                groups += run.groups_across_blocks;
                addresses += run.address_values;
                shared += run.shared_group_operands;
                placed += run.placed_group_operands;
                spilling_groups += run.groups_under_spilling;
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(
        compared as u64 > programs / 2,
        "only {compared} runs were comparable"
    );
    assert!(spills > 0, "no program spilled");
    assert!(memory_phis > 0, "no phi was kept in memory");
    assert!(groups > 0, "no register group was live across blocks");
    assert!(addresses > 0, "no value was copied into an address file");
    // Collects whose operands cannot stay where they are (read twice, in
    // two groups), placed by the allocator, also in programs that spill.
    assert!(
        shared > programs as u32 / 10,
        "only {shared} shared group operands"
    );
    assert!(
        placed > programs as u32 / 10,
        "only {placed} group operands placed"
    );
    assert!(
        spilling_groups > programs as u32 / 20,
        "only {spilling_groups} groups in programs that spill"
    );
    eprintln!(
        "{programs} programs: {spills} spills, {memory_phis} memory phis, {groups} groups \
         across blocks, {addresses} address values, {shared} shared group operands, {placed} \
         group operands placed, {spilling_groups} groups in spilling programs"
    );
}

#[test]
fn random_programs_allocate_and_run_the_same_in_registers() {
    sweep(10_000, 1);
}

#[test]
#[ignore]
fn long_sweep() {
    let n = std::env::var("REGALLOC_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    sweep(n, 1_000_000);
}

use arbitrary::Unstructured;
use lathe_ir::Type;
use lathe_ir::{Bump, GenericOp, Op};
use lathe_passes::ra::{self, RaOptions};
use lathe_passes::target::test_target::TestTarget;
use lathe_passes::target::{
    Exchange, FileId, OperandForms, PhysReg, RegClass, SpillSlot, TargetFacts,
};

#[test]
fn registers_used_equal_max_live_without_groups() {
    // Separate half and full files: no alignment between widths, so the
    // chordal bound is exact per file.
    let target = TestTarget::new(192, false, 1);
    let mut files = 0;
    let mut swaps = 0;
    for seed in 0..300u64 {
        let data = seed_bytes(seed, 600);
        let arena = Bump::new();
        let Ok((mut s, _)) =
            regalloc::pressure_program(&arena, &mut Unstructured::new(&data), false)
        else {
            continue;
        };
        let bound = regalloc::max_live(&s, &target);
        let alloc = ra::allocate(&mut s, &target, RaOptions::default()).unwrap();
        // Nothing is stored: copy cycles are turned by swaps, not parked
        // in memory.
        assert_eq!((alloc.spills, alloc.fills), (0, 0), "seed {seed}");
        swaps += alloc.swaps;
        for (f, (&used, &bound)) in alloc.units_used.iter().zip(&bound).enumerate() {
            assert_eq!(used, bound, "seed {seed} file {f}: units used vs MaxLive");
            files += 1;
        }
    }
    assert!(files >= 500, "only {files} register files measured");
    assert!(swaps > 0, "no join copy cycle was turned by a swap");
}

#[test]
fn checker_rejects_a_clobbered_register() {
    let arena = Bump::new();
    let data = seed_bytes(7, 600);
    let (mut s, _) =
        regalloc::pressure_program(&arena, &mut Unstructured::new(&data), false).unwrap();
    let target = TestTarget::realistic();
    let alloc = ra::allocate(&mut s, &target, RaOptions::default()).unwrap();
    ra::check::check(&s, &target, &alloc).unwrap();
    // Give one used value the register of another value live across it.
    let (_, victim) = s
        .insts_in_order()
        .find(|&(_, i)| {
            matches!(s.inst(i).op, Op::Opcode(GenericOp::FAdd)) && s.inst(i).result.is_some()
        })
        .unwrap();
    let r = s.inst(victim).result.unwrap();
    let original = s.value_reg(r).unwrap();
    let mut rejected = 0;
    for unit in 0..64u16 {
        if unit == original.unit || unit % 2 == 1 {
            continue;
        }
        s.set_value_reg(r, Some(lathe_ir::Reg { file: 0, unit }));
        rejected += ra::check::check(&s, &target, &alloc).is_err() as u32;
    }
    s.set_value_reg(r, Some(original));
    assert!(
        rejected > 0,
        "moving a value's register never upset the checker"
    );
}

fn allocation_ok(text: &str, target: &TestTarget) {
    let arena = Bump::new();
    let mut s: lathe_ir::Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
    lathe_ir::validate(&s).unwrap();
    let alloc = ra::allocate(&mut s, target, RaOptions::default()).unwrap();
    assert!(alloc.spills > 0, "the program should spill");
}

fn allocation_error(text: &str, target: &dyn TargetFacts<GenericOp>) -> String {
    let arena = Bump::new();
    let mut s: lathe_ir::Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
    lathe_ir::validate(&s).unwrap();
    ra::allocate(&mut s, target, RaOptions::default())
        .expect_err("allocated")
        .to_string()
}

#[test]
fn groups_live_across_blocks_stay_in_their_registers() {
    // A collected pair and a sampled texel live through a diamond and a
    // loop whose phis and values crowd a small file: the groups stay where
    // they were made, scalars around them spill and move.
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_input slot=0 comp=2 interp=smooth
  %3:f32x2 = collect %0, %1
  %4:f32x4 = sample texture=0 sampler=0 %3
  %5:bool = flt %0, %1
  branch %5, b1, b2
b1:
  %6:f32 = fadd %0, %2
  jump b3
b2:
  %7:f32 = fmul %1, %2
  jump b3
b3:
  %8:f32 = phi [%6, b1], [%7, b2]
  %9:i32 = const 0
  %10:i32 = const 1
  %11:i32 = const 2
  jump b4
b4:
  %12:i32 = phi [%9, b3], [%14, b4]
  %13:f32 = phi [%8, b3], [%15, b4]
  %14:i32 = iadd %12, %10
  %15:f32 = fadd %13, %2
  %16:bool = ilt %14, %11
  branch %16, b4, b5
b5:
  %17:f32 = split lane=1 %3
  %18:f32 = split lane=2 %4
  %19:f32 = fadd %17, %18
  %20:f32 = fadd %19, %15
  %21:f32 = fadd %20, %0
  store_output slot=0 comp=0 %21
  ret
";
    let mut inv = lathe_ir::interp::Invocation::default();
    for k in 0..3u8 {
        inv.inputs.insert((0, k), (k as f32 + 0.25).to_bits());
    }
    inv.textures.push(lathe_ir::interp::Texture::rgba_2d(
        1,
        1,
        vec![[1.0, 2.0, 3.0, 4.0]],
    ));
    for target in [
        TestTarget::small(10),
        TestTarget::small(9),
        TestTarget::realistic(),
    ] {
        let run = regalloc::check_allocation(text, &inv, &target, RaOptions::default())
            .unwrap_or_else(|e| panic!("{} registers: {e}", target.full_registers));
        assert!(run.compared);
    }
}

#[test]
fn indices_are_copied_into_the_address_file_for_each_access() {
    // Two indices used alternately by three accesses: the address file
    // holds one value, so each access gets its own copy, and nothing is
    // spilled to make room (the indices stay in general registers).
    let text = "shader fragment
array a0: f32[4]
b0:
  %0:i32 = input index=0
  %1:f32 = load_input slot=0 comp=0 interp=smooth
  %2:i32 = const 3
  %3:i32 = and %0, %2
  %4:i32 = const 1
  %5:i32 = iadd %0, %4
  %6:i32 = and %5, %2
  array_store array=a0 offset=0 %1
  array_store array=a0 offset=1 %1
  array_store array=a0 offset=2 %1
  array_store array=a0 offset=3 %1
  array_store array=a0 offset=0 %1 addr=%3
  %7:f32 = array_load array=a0 offset=0 addr=%6
  %8:f32 = array_load array=a0 offset=0 addr=%3
  %9:f32 = fadd %7, %8
  store_output slot=0 comp=0 %9
  ret
";
    let mut inv = lathe_ir::interp::Invocation::default();
    inv.inputs.insert((0, 0), 2.5f32.to_bits());
    inv.meta_inputs.push(6);
    for target in [
        TestTarget::small(6).with_address_file(),
        TestTarget::new(8, false, 1).with_address_file(),
    ] {
        let run = regalloc::check_allocation(text, &inv, &target, RaOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(run.compared);
        assert_eq!(run.address_values, 3, "one copy per access");
        assert_eq!(run.spills, 0);
    }
    // Without a copy into the address file, the allocation says why.
    let e = allocation_error(
        text,
        &NoAddressCopy(TestTarget::small(4).with_address_file()),
    );
    assert!(
        e.starts_with("unsupported: operand 1 of array_store needs a a register"),
        "{e}"
    );
}

/// A target with an address file and no copy into it.
struct NoAddressCopy(TestTarget);

impl TargetFacts<GenericOp> for NoAddressCopy {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn files(&self) -> &[lathe_passes::target::RegisterFile] {
        self.0.files()
    }
    fn operand_class(&self, op: &Op<GenericOp>, k: usize, ty: Type) -> RegClass {
        self.0.operand_class(op, k, ty)
    }
    fn result_class(&self, op: &Op<GenericOp>, ty: Type) -> RegClass {
        self.0.result_class(op, ty)
    }
    fn input_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.0.input_register(index, ty)
    }
    fn output_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.0.output_register(index, ty)
    }
    fn latency(&self, p: &Op<GenericOp>, c: &Op<GenericOp>, k: usize) -> u32 {
        self.0.latency(p, c, k)
    }
    fn is_async(&self, op: &Op<GenericOp>) -> bool {
        self.0.is_async(op)
    }
    fn operand_forms(&self, op: &Op<GenericOp>, k: usize) -> OperandForms {
        self.0.operand_forms(op, k)
    }
    fn occupancy(&self, file: FileId, units: u32) -> u32 {
        self.0.occupancy(file, units)
    }
    fn copy(&self, ty: Type) -> GenericOp {
        self.0.copy(ty)
    }
    fn swap(&self, ty: Type) -> Option<Exchange<GenericOp>> {
        self.0.swap(ty)
    }
    fn spill(&self, ty: Type, slot: SpillSlot) -> GenericOp {
        self.0.spill(ty, slot)
    }
    fn fill(&self, ty: Type, slot: SpillSlot) -> GenericOp {
        self.0.fill(ty, slot)
    }
    fn register_name(&self, class: RegClass, reg: PhysReg, ty: Type) -> String {
        self.0.register_name(class, reg, ty)
    }
}

/// Five f32 loop phis rotating every trip, on a file of `registers` full
/// registers; the loop runs three times.
fn rotating_phis(phis: usize) -> String {
    let mut text = String::from("shader fragment\nb0:\n");
    for k in 0..phis {
        text += &format!(
            "  %{k}:f32 = load_input slot={} comp={} interp=smooth\n",
            k / 4,
            k % 4
        );
    }
    let n = phis;
    text += &format!(
        "  %{}:i32 = const 0\n  %{}:i32 = const 1\n  %{}:i32 = const 3\n  jump b1\nb1:\n",
        2 * n,
        2 * n + 1,
        2 * n + 2
    );
    let (zero, one, three, i, next) = (2 * n, 2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 4);
    text += &format!("  %{i}:i32 = phi [%{zero}, b0], [%{next}, b1]\n");
    for k in 0..n {
        text += &format!(
            "  %{}:f32 = phi [%{k}, b0], [%{}, b1]\n",
            n + k,
            n + (k + 1) % n
        );
    }
    text += &format!(
        "  %{next}:i32 = iadd %{i}, %{one}\n  %{}:bool = ilt %{next}, %{three}\n  branch %{}, b1, b2\nb2:\n",
        2 * n + 5,
        2 * n + 5
    );
    for k in 0..n {
        text += &format!("  store_output slot={} comp={} %{}\n", k / 4, k % 4, n + k);
    }
    text + "  ret\n"
}

#[test]
fn phis_beyond_the_registers_enter_in_memory() {
    // Seven loop-carried values and a counter on four full registers: some
    // phis are kept in scratch memory, their operands stored at the end of
    // each predecessor (from a register, or from another slot through a
    // register freed for the moment), and the loop still rotates them.
    let text = rotating_phis(7);
    let mut inv = lathe_ir::interp::Invocation::default();
    for k in 0..7u32 {
        inv.inputs
            .insert(((k / 4) as u16, (k % 4) as u8), (k as f32 + 0.5).to_bits());
    }
    for registers in [3, 4, 6] {
        let target = TestTarget::small(registers);
        let run = regalloc::check_allocation(&text, &inv, &target, RaOptions::default())
            .unwrap_or_else(|e| panic!("{registers} registers: {e}"));
        assert!(run.compared);
        assert!(run.fills > 0, "{registers} registers: nothing filled");
    }
    let arena = Bump::new();
    let mut s: lathe_ir::Shader<GenericOp> = lathe_ir::parse(&arena, &text).unwrap();
    let alloc = ra::allocate(&mut s, &TestTarget::small(4), RaOptions::default()).unwrap();
    assert!(!alloc.memory_phis.is_empty(), "{}", lathe_ir::print(&s));
}

#[test]
fn spills_past_the_scratch_reach_are_unsupported_and_say_why() {
    // Eight values live at once on a file of three full registers: several
    // spill slots of 4 bytes, against a reach of 8 bytes.
    let mut text = String::from("shader fragment\nb0:\n");
    for k in 0..8 {
        text += &format!(
            "  %{k}:f32 = load_input slot={} comp={} interp=smooth\n",
            k / 4,
            k % 4
        );
    }
    // %8..%14 sum the inputs in order; %15..%18 multiply pairs from both
    // ends, so every input stays live until near the end.
    text += "  %8:f32 = fadd %0, %1\n";
    for k in 9..15 {
        text += &format!("  %{k}:f32 = fadd %{}, %{}\n", k - 1, k - 7);
    }
    for k in 0..4 {
        text += &format!("  %{}:f32 = fmul %{k}, %{}\n", 15 + k, 7 - k);
    }
    text += "  %19:f32 = fadd %15, %16\n  %20:f32 = fadd %17, %18\n";
    text += "  %21:f32 = fadd %19, %20\n  %22:f32 = fadd %21, %14\n";
    text += "  store_output slot=0 comp=0 %22\n  ret\n";
    let mut target = TestTarget::small(3);
    // Unbounded, the program allocates (with spills).
    allocation_ok(&text, &target);
    target.scratch_reach = 8;
    let e = allocation_error(&text, &target);
    assert!(e.starts_with("unsupported: spill slots need"), "{e}");
    assert!(e.contains("reach 8"), "{e}");
}

#[test]
fn outputs_keep_their_registers_until_the_shader_ends() {
    // Inputs live to the end under pressure spill; the outputs then read
    // them back. An output's value is read from its register when the
    // shader ends, so a fill for a later output must not take the
    // register of an earlier one (the checker looks at every output again
    // at the end). Output indices past the file are placed freely, as on
    // Valhall.
    let mut allocated = 0;
    for registers in 3..=6u32 {
        for extra in 1..=4u32 {
            let inputs = registers + extra;
            let mut text = String::from("shader vertex\nb0:\n");
            for k in 0..inputs {
                text += &format!(
                    "  %{k}:f32 = load_input slot={} comp={} interp=smooth\n",
                    k / 4,
                    k % 4
                );
            }
            // A running sum over every input keeps them all live.
            let mut acc = inputs;
            text += &format!("  %{acc}:f32 = fadd %0, %1\n");
            for k in 2..inputs {
                text += &format!("  %{}:f32 = fadd %{acc}, %{k}\n", acc + 1);
                acc += 1;
            }
            // The sum first, then the earliest inputs (spilled first).
            text += &format!("  output index=64 %{acc}\n");
            for k in 0..registers - 1 {
                text += &format!("  output index={} %{k}\n", 65 + k);
            }
            text += "  ret\n";
            let mut inv = lathe_ir::interp::Invocation::default();
            for k in 0..inputs {
                inv.inputs
                    .insert(((k / 4) as u16, (k % 4) as u8), (k as f32 + 0.5).to_bits());
            }
            let target = TestTarget::small(registers);
            let run = regalloc::check_allocation(&text, &inv, &target, RaOptions::default())
                .unwrap_or_else(|e| panic!("{registers} registers, {inputs} inputs: {e}"));
            assert!(run.compared);
            if run.fills > 0 {
                allocated += 1;
            }
        }
    }
    assert!(allocated >= 8, "only {allocated} programs filled an output");
}

/// Allocate `text` on the realistic test target and print the result.
fn allocated(text: &str) -> (String, ra::Allocation) {
    let arena = Bump::new();
    let mut s: lathe_ir::Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
    lathe_ir::validate(&s).unwrap();
    let target = TestTarget::realistic();
    let alloc = ra::allocate(&mut s, &target, RaOptions::default()).unwrap();
    ra::check::check(&s, &target, &alloc).unwrap();
    (lathe_ir::print(&s), alloc)
}

#[test]
fn if_else_results_meeting_at_a_phi_need_no_copy() {
    // The else side's result is defined while %3 holds the lowest free
    // register; the then side's would take that one. Coalesced, both
    // take the phi's register and the join needs no copy.
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:u32 = load_input slot=0 comp=1 interp=flat
  %2:bool = ieq %1, %1
  branch %2, b1, b2
b1:
  %5:f32 = fadd %0, %0
  jump b3
b2:
  %3:f32 = fmul %0, %0
  %4:f32 = fadd %0, %0
  store_output slot=1 comp=0 %3
  jump b3
b3:
  %6:f32 = phi [%5, b1], [%4, b2]
  %7:f32 = fadd %6, %0
  store_output slot=0 comp=0 %7
  ret
";
    let (printed, alloc) = allocated(text);
    assert_eq!((alloc.copies, alloc.swaps), (0, 0), "{printed}");
}

#[test]
fn a_copy_of_a_dying_value_takes_its_register() {
    // %3 frees a register below %2's just before the copy.
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = fadd %0, %1
  %3:f32 = fmul %0, %1
  %4:f32 = mov %2
  %5:f32 = fadd %4, %3
  store_output slot=0 comp=0 %5
  ret
";
    let (printed, _) = allocated(text);
    let reg = |v: &str| {
        let at = printed.find(&format!("{v}:f32@")).unwrap() + v.len() + 5;
        printed[at..].split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(reg("%4"), reg("%2"), "{printed}");
}

#[test]
fn lanes_split_from_a_live_vector_stay_in_its_registers() {
    // Each lane is split while the vector still lives on (the later splits
    // read it), and every lane is an output: the lanes stay where the
    // vector has them, with no copy, as the output registers the driver
    // reads (a sampled colour written out unchanged).
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=0 sampler=0 %2
  %4:f32 = split lane=0 %3
  %5:f32 = split lane=1 %3
  %6:f32 = split lane=2 %3
  %7:f32 = split lane=3 %3
  output index=0 %4
  output index=1 %5
  output index=2 %6
  output index=3 %7
  ret
";
    let (printed, alloc) = allocated(text);
    let unit = |v: &str| -> u32 {
        let at = printed.find(&format!("{v}:")).unwrap();
        let reg = printed[at..].split_whitespace().next().unwrap();
        let digits = reg.rsplit('@').next().unwrap();
        digits
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap()
    };
    let width = unit("%5") - unit("%4");
    assert!(width > 0, "{printed}");
    for (k, v) in ["%4", "%5", "%6", "%7"].into_iter().enumerate() {
        assert_eq!(unit(v), unit("%3") + k as u32 * width, "{printed}");
    }
    assert_eq!(alloc.copies, 0, "{printed}");
}
