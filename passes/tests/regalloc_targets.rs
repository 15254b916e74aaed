//! Register allocation on real targets' facts (ir3 a630, Valhall g610):
//! spilling through the target's own spill and fill (and ir3's spill base
//! register) on machine IR, and the random-program differential on their
//! register models ([`regalloc::RegisterModel`]).
//!
//! `REGALLOC_PROGRAMS=20000 cargo test -p lathe-passes --release --test
//! regalloc_targets -- --ignored` runs a longer sweep.

use arbitrary::Unstructured;
use lathe_adreno::ir3::{GpuModel, generated::MachineOp as Ir3Op, target::Ir3Target};
use lathe_ir::{Bump, GenericOp, Opcode, Shader};
use lathe_mali::valhall::{generated::MachineOp as ValhallOp, target::ValhallTarget};
use lathe_passes::fuzzing::regalloc::{self, RegisterModel};
use lathe_passes::fuzzing::seed_bytes;
use lathe_passes::ra::{self, RaOptions};
use lathe_passes::target::TargetFacts;

fn a630() -> Ir3Target {
    Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap()
}

fn g610() -> ValhallTarget {
    ValhallTarget::new("g610".parse().unwrap())
}

/// Machine IR keeping `n` values live at once: `n` inputs, a running sum
/// over them, then products of pairs from both ends, summed.
fn pressure_text(n: usize, add: &str, mul: &str) -> String {
    let mut text = String::from("shader fragment\nb0:\n");
    for k in 0..n {
        text += &format!("  %{k}:f32 = input index={k}\n");
    }
    let mut next = n;
    let mut acc = 0;
    for k in 1..n {
        text += &format!("  %{next}:f32 = {add} %{acc}, %{k}\n");
        acc = next;
        next += 1;
    }
    for k in 0..n / 2 {
        text += &format!("  %{next}:f32 = {mul} %{k}, %{}\n", n - 1 - k);
        text += &format!("  %{}:f32 = {add} %{acc}, %{next}\n", next + 1);
        acc = next + 1;
        next += 2;
    }
    text += &format!("  output index=0 %{acc}\n  ret\n");
    text
}

/// Allocate machine IR on `target` with `max_units`, check it, and return
/// the allocated text with the allocation.
fn allocate_machine<O: Opcode, T: TargetFacts<O>>(
    text: &str,
    target: &T,
    max_units: Option<u32>,
) -> (String, ra::Allocation) {
    let arena = Bump::new();
    let mut s: Shader<O> = lathe_ir::parse(&arena, text).unwrap();
    lathe_ir::validate(&s).unwrap();
    let options = RaOptions {
        max_units,
        ..RaOptions::default()
    };
    let alloc = ra::allocate(&mut s, target, options).unwrap();
    lathe_ir::validate(&s).unwrap();
    ra::check::check(&s, target, &alloc).unwrap();
    let printed = lathe_ir::print(&s);
    // The allocated text parses back to itself.
    let again: Shader<O> = lathe_ir::parse(&arena, &printed).unwrap();
    assert_eq!(lathe_ir::print(&again), printed);
    (printed, alloc)
}

#[test]
fn ir3_spills_through_a_base_register_kept_from_the_entry() {
    let t = a630();
    let text = pressure_text(24, "add.f full", "mul.f full");
    // 24 full values live against 16 full registers (32 half units).
    let (printed, alloc) = allocate_machine::<Ir3Op, _>(&text, &t, Some(32));
    assert!(alloc.spills > 0 && alloc.fills > 0, "{printed}");
    assert_eq!(alloc.spill_bases(), 1, "{printed}");
    let base = t.spill_base().unwrap().name();
    let lines: Vec<&str> = printed.lines().collect();
    // The base is made once, first in the entry block, in the highest
    // full register under the limit (units 30 and 31).
    let first = lines.iter().position(|l| *l == "b0:").unwrap() + 1;
    assert!(
        lines[first].contains(base) && lines[first].contains("@gpr30 "),
        "{printed}"
    );
    let base_name = lines[first].split(':').next().unwrap().trim();
    let mut accesses = 0;
    for line in &lines[first + 1..] {
        assert!(!line.contains(base), "a second base: {line}");
        if line.contains("stp ") || line.contains("ldp ") {
            // stp/ldp read the base as their first operand.
            let rhs = line.split_once(" = ").map_or(*line, |x| x.1);
            let operand = rhs.split_once(" %").map_or("", |x| x.1);
            let operand = operand.split(',').next().unwrap();
            assert_eq!(format!("%{operand}"), base_name, "{line}");
            accesses += 1;
        } else {
            assert!(
                !line.contains("@gpr30 ") && !line.contains("@gpr31 "),
                "{line}"
            );
        }
    }
    assert_eq!(accesses, alloc.spills + alloc.fills);
    // Without pressure there is no base and no spill.
    let (printed, alloc) = allocate_machine::<Ir3Op, _>(&text, &t, None);
    assert_eq!((alloc.spills, alloc.spill_bases()), (0, 0), "{printed}");
}

#[test]
fn valhall_spills_without_a_base_register() {
    let t = g610();
    let text = pressure_text(24, "FADD.f32", "FMA.f32 c=0xc0");
    let (printed, alloc) = allocate_machine::<ValhallOp, _>(&text, &t, Some(12));
    assert!(alloc.spills > 0 && alloc.fills > 0, "{printed}");
    assert_eq!(alloc.spill_bases(), 0);
    assert!(
        printed.contains("STORE.i32") && printed.contains("LOAD.i32"),
        "{printed}"
    );
}

/// Pressure programs on `target`'s register model cut to `units` units:
/// every one allocates, passes the checker and runs as the original.
fn sweep_model(target: &dyn TargetFacts<GenericOp>, seeds: std::ops::Range<u64>, units: u32) {
    let (mut compared, mut spilled, mut based) = (0, 0, 0);
    let n = seeds.end - seeds.start;
    for seed in seeds {
        let data = seed_bytes(seed, 600);
        let arena = Bump::new();
        let Ok((s, inv)) =
            regalloc::pressure_program(&arena, &mut Unstructured::new(&data), seed % 2 == 0)
        else {
            continue;
        };
        let program = lathe_ir::print(&s);
        let options = RaOptions {
            max_units: Some(units),
            ..RaOptions::default()
        };
        let run = regalloc::check_allocation(&program, &inv, target, options)
            .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", target.name()));
        compared += run.compared as u32;
        spilled += (run.spills > 0) as u32;
        based += run.spill_bases;
    }
    assert!(compared as u64 > n / 2, "only {compared} comparable runs");
    assert!(spilled as u64 > n / 2, "only {spilled} programs spilled");
    let has_base = target.spill_base().is_some();
    assert_eq!(
        based == spilled,
        has_base,
        "{based} bases for {spilled} spilling programs"
    );
}

#[test]
fn ir3_register_model_spills_and_runs_the_same() {
    let t = a630();
    sweep_model(&RegisterModel::<Ir3Op, _>::new(&t), 0..150, 24);
}

#[test]
fn valhall_register_model_spills_and_runs_the_same() {
    let t = g610();
    sweep_model(&RegisterModel::<ValhallOp, _>::new(&t), 0..150, 14);
}

/// The fuzz target's differential over the test files and both real
/// models.
fn sweep_real(programs: u64, first_seed: u64) {
    let (ir3, valhall) = (a630(), g610());
    let (m1, m2) = (
        RegisterModel::<Ir3Op, _>::new(&ir3),
        RegisterModel::<ValhallOp, _>::new(&valhall),
    );
    let real: [&dyn TargetFacts<GenericOp>; 2] = [&m1, &m2];
    let mut compared = 0;
    for seed in first_seed..first_seed + programs {
        let mut data = seed_bytes(seed, 48 + (seed % 5) as usize * 48);
        // Only the real models (modes 4..8 of the first byte's target pick).
        data[0] = (data[0] & 1) | (((4 + seed % 4) as u8) << 1);
        match regalloc::differential_on(&data, &real) {
            Ok(run) => compared += run.compared as u64,
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(compared > programs / 2, "only {compared} comparable runs");
}

#[test]
fn random_programs_on_real_register_models() {
    sweep_real(1_000, 1);
}

#[test]
#[ignore]
fn long_sweep_on_real_register_models() {
    let n = std::env::var("REGALLOC_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    sweep_real(n, 2_000_000);
}
