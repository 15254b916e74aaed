//! Register allocation quality and speed. Run with
//! `cargo bench -p lathe-passes --bench regalloc`.
//!
//! 1. Registers used against MaxLive (the lower bound) on random
//!    high-pressure programs without register groups, with separate half
//!    and full files (so only liveness constrains).
//! 2. Spills, fills and copies on high-pressure programs with groups, on
//!    small register files.
//! 3. Allocation time per instruction at about 1k, 10k and 100k
//!    instructions (pressure programs with at most 48 values live at once,
//!    on the realistic file; the larger ones are 10 and 100 segments each
//!    shaped like a 1k one, and their shape per 1k instructions is
//!    printed first), in wall-clock and in thread CPU time: the
//!    cost per instruction must stay flat. Each size is timed on 15
//!    different shaders in turn (the honest figure) and, for comparison
//!    with earlier numbers, on one shader repeated.
//!
//! Bench builds have no debug assertions, so the checker is off here; the
//! tests run it on every allocation.

mod common;

use arbitrary::Unstructured;
use lathe_ir::{Bump, GenericOp};
use lathe_passes::Registry;
use lathe_passes::fuzzing::{regalloc, seed_bytes};
use lathe_passes::ra::{self, RaOptions};
use lathe_passes::target::TargetFacts;
use lathe_passes::target::test_target::TestTarget;
use std::rc::Rc;

fn main() {
    // `cargo bench ... -- scaling` runs one part (for profiling).
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let parts: [(&str, fn()); 3] = [
        ("quality", quality),
        ("spilling", spilling),
        ("scaling", scaling),
    ];
    for (name, part) in parts {
        if only.is_empty() || only.iter().any(|o| o == name) {
            part();
        }
    }
}

fn quality() {
    let target = TestTarget::new(192, false, 1);
    let (mut used, mut bound, mut files, mut reached, mut cycles) = (0u64, 0u64, 0, 0, 0);
    for seed in 0..500u64 {
        let data = seed_bytes(seed, 800);
        let arena = Bump::new();
        let Ok((mut s, _)) =
            regalloc::pressure_program(&arena, &mut Unstructured::new(&data), false)
        else {
            continue;
        };
        let max = regalloc::max_live(&s, &target);
        let a = ra::allocate(&mut s, &target, RaOptions::default()).expect("allocates");
        cycles += (a.swaps + a.cycles_via_register > 0) as u32;
        for (&u, &m) in a.units_used.iter().zip(&max) {
            if m == 0 {
                continue;
            }
            used += u as u64;
            bound += m as u64;
            files += 1;
            reached += (u == m) as u32;
        }
    }
    println!("registers used vs MaxLive (500 programs, no groups):");
    println!(
        "  {reached}/{files} register files exactly at MaxLive; total units {used} vs MaxLive {bound} (+{:.2}%); {cycles} programs had a join copy cycle",
        (used as f64 / bound as f64 - 1.0) * 100.0
    );
}

fn spilling() {
    println!("spilling on high-pressure programs with groups (500 programs each):");
    println!(
        "  {:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}",
        "file", "insts", "spills", "fills", "copies", "swaps", "mem-cycles"
    );
    for (label, target) in [
        ("8 full regs, merged", TestTarget::small(8)),
        ("16 full regs, merged", TestTarget::small(16)),
        ("32 full regs, merged", TestTarget::small(32)),
        ("192 full regs, merged", TestTarget::realistic()),
    ] {
        let (mut insts, mut spills, mut fills, mut copies, mut swaps, mut mem) = (0, 0, 0, 0, 0, 0);
        for seed in 0..500u64 {
            let data = seed_bytes(seed, 800);
            let arena = Bump::new();
            let Ok((mut s, _)) =
                regalloc::pressure_program(&arena, &mut Unstructured::new(&data), true)
            else {
                continue;
            };
            insts += s.len();
            let a = ra::allocate(&mut s, &target, RaOptions::default()).expect("allocates");
            spills += a.spills;
            fills += a.fills;
            copies += a.copies;
            swaps += a.swaps;
            mem += a.cycles_via_memory;
        }
        println!(
            "  {label:<24} {insts:>8} {spills:>8} {fills:>8} {copies:>8} {swaps:>8} {mem:>10}"
        );
    }
}

/// Shaders of each size timed in turn (as in `backend_scaling`): timing
/// one shader again and again lets the branch predictor learn a 1k
/// shader's instruction sequence but not a 100k one's, which flatters 1k.
const VARIANTS: u64 = 15;

fn scaling() {
    let target: Rc<dyn TargetFacts<GenericOp>> = Rc::new(TestTarget::realistic());
    let registry = Registry::with_target(target);
    // 1, 10 and 100 segments of 330 statements: the larger programs are
    // made of pieces shaped like the small ones (see
    // `regalloc::pressure_program_segments`), so their cost per
    // instruction is comparable.
    let texts: Vec<Vec<String>> = [1u32, 10, 100]
        .iter()
        .map(|&segments| {
            (0..VARIANTS)
                .map(|k| {
                    let seed = 330 * segments as u64 + k * 1_000_003;
                    let data = seed_bytes(seed, segments as usize * 330 * 24);
                    let arena = Bump::new();
                    let (s, _) = regalloc::pressure_program_segments(
                        &arena,
                        &mut Unstructured::new(&data),
                        true,
                        segments,
                        330,
                        48,
                    )
                    .expect("generates");
                    lathe_ir::print(&s)
                })
                .collect()
        })
        .collect();
    let sizes: Vec<usize> = texts.iter().map(|t| t[0].lines().count()).collect();
    shape(&texts);
    let single: Vec<String> = texts.iter().map(|t| t[0].clone()).collect();
    println!("allocation time, realistic file, at most 48 values live:");
    let pipelines: [&[&str]; 2] = [&["ra"], &["group", "depth", "sched", "ra"]];
    for (title, clock) in [
        ("pass (wall ns/inst)", common::Clock::Wall),
        ("pass (CPU ns/inst)", common::Clock::ThreadCpu),
    ] {
        common::header(title, 36, &sizes);
        for stage in pipelines {
            let label = format!("{} ({VARIANTS} shaders)", stage.join(","));
            common::row_variants(clock, &label, 36, &registry, stage, &texts);
            let label = format!("{} (1 shader)", stage.join(","));
            common::row_on(clock, &label, 36, &registry, stage, &single);
        }
    }
}

/// What the scaling programs are made of, per 1,000 instructions over the
/// shaders of each size: the sizes compare fairly only if these agree.
fn shape(texts: &[Vec<String>]) {
    println!("program shape per 1k instructions (all shaders of a size):");
    for shaders in texts {
        let (mut insts, mut blocks, mut phis, mut collects) = (0usize, 0usize, 0usize, 0usize);
        for text in shaders {
            let arena = Bump::new();
            let s = lathe_ir::parse::<GenericOp>(&arena, text).expect("parses");
            insts += s.len();
            blocks += s.layout().len();
            for (_, i) in s.insts_in_order() {
                match s.inst(i).op {
                    lathe_ir::Op::Phi => phis += 1,
                    lathe_ir::Op::Collect => collects += 1,
                    _ => {}
                }
            }
        }
        let per_k = |n: usize| n as f64 * 1000.0 / insts as f64;
        println!(
            "  {:>8} insts/shader: {:.1} blocks, {:.1} phis, {:.1} collects",
            insts / shaders.len(),
            per_k(blocks),
            per_k(phis),
            per_k(collects)
        );
    }
}
