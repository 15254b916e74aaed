//! Register allocation quality and speed. Run with
//! `cargo bench -p lathe-passes --bench regalloc`.
//!
//! 1. Registers used against MaxLive (the lower bound) on random
//!    high-pressure programs without register groups, with separate half
//!    and full files (so only liveness constrains).
//! 2. Spills, fills and copies on high-pressure programs with groups, on
//!    small register files.
//! 3. Allocation time per instruction at 1k, 10k and 100k instructions
//!    (pressure programs with at most 48 values live at once, on the
//!    realistic file): the cost per instruction must stay flat.
//!
//! Bench builds have no debug assertions, so the checker is off here; the
//! tests run it on every allocation.

use arbitrary::Unstructured;
use lathe_ir::Bump;
use lathe_passes::fuzzing::{regalloc, seed_bytes};
use lathe_passes::ra::{self, RaOptions};
use lathe_passes::target::test_target::TestTarget;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    quality();
    spilling();
    scaling();
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
        cycles += (a.cycles_via_register > 0) as u32;
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
    println!("registers used vs MaxLive (500 programs, no groups, no swap instruction):");
    println!(
        "  {reached}/{files} register files exactly at MaxLive; total units {used} vs MaxLive {bound} (+{:.2}%); {cycles} programs broke a join copy cycle through a spare register",
        (used as f64 / bound as f64 - 1.0) * 100.0
    );
}

fn spilling() {
    println!("spilling on high-pressure programs with groups (500 programs each):");
    println!(
        "  {:<24} {:>8} {:>8} {:>8} {:>8} {:>10}",
        "file", "insts", "spills", "fills", "copies", "mem-cycles"
    );
    for (label, target) in [
        ("8 full regs, merged", TestTarget::small(8)),
        ("16 full regs, merged", TestTarget::small(16)),
        ("32 full regs, merged", TestTarget::small(32)),
        ("192 full regs, merged", TestTarget::realistic()),
    ] {
        let (mut insts, mut spills, mut fills, mut copies, mut mem) = (0, 0, 0, 0, 0);
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
            mem += a.cycles_via_memory;
        }
        println!("  {label:<24} {insts:>8} {spills:>8} {fills:>8} {copies:>8} {mem:>10}");
    }
}

fn scaling() {
    let target = TestTarget::realistic();
    println!("allocation time (ns/instruction), realistic file:");
    let mut first = 0.0;
    for (n, statements) in [(1_000usize, 330u32), (10_000, 3_300), (100_000, 33_000)] {
        let data = seed_bytes(n as u64, statements as usize * 24);
        let arena = Bump::new();
        let (s, _) = regalloc::pressure_program_sized(
            &arena,
            &mut Unstructured::new(&data),
            true,
            statements,
            48,
        )
        .expect("generates");
        let text = lathe_ir::print(&s);
        let runs = if n >= 100_000 { 5 } else { 15 };
        let mut times = Vec::with_capacity(runs);
        let mut insts = 0;
        for _ in 0..runs {
            let arena = Bump::new();
            let mut s: lathe_ir::Shader<lathe_ir::GenericOp> =
                lathe_ir::parse(&arena, &text).expect("parses");
            insts = s.len();
            let start = Instant::now();
            black_box(ra::allocate(&mut s, &target, RaOptions::default()).expect("allocates"));
            times.push(start.elapsed());
        }
        times.sort();
        let ns = times[runs / 2].as_nanos() as f64 / insts as f64;
        if first == 0.0 {
            first = ns;
        }
        println!(
            "  {insts:>7} instructions: {ns:>8.1} ns/inst ({:.2}x the smallest)",
            ns / first
        );
    }
}
