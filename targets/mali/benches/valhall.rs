//! Valhall decoding, disassembly and assembly throughput over Mesa's 172
//! vectors.
//!
//! Each row gives wall time and this thread's CPU time per item (from
//! `/proc/thread-self/schedstat`, Linux): on a shared, loaded machine the
//! CPU-time rate is the comparable one. An argument runs only the rows
//! whose name contains it.
//!
//! `cargo bench -p lathe-mali --bench valhall [-- FILTER]`

use std::hint::black_box;
use std::time::{Duration, Instant};

use lathe_mali::valhall::generated::display::push_word;
use lathe_mali::valhall::{Arch, Instr, assemble, disassemble, isa};

const CASES: &str = include_str!("../tests/valhall-data/assembler-cases.txt");

/// Nanoseconds this thread has run on a CPU, if the kernel says.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split(' ').next()?.parse().ok()
}

/// Runs `f` over all items repeatedly for at least `budget` of wall time
/// and prints wall and CPU nanoseconds per item, and the CPU-time rate.
fn measure<T>(name: &str, filter: &str, items: &[T], budget: Duration, mut f: impl FnMut(&T)) {
    if !name.contains(filter) {
        return;
    }
    let cpu = thread_cpu_ns();
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for item in items {
            f(item);
        }
        n += items.len() as u64;
    }
    let wall = start.elapsed().as_nanos() as f64 / n as f64;
    match (cpu, thread_cpu_ns()) {
        (Some(a), Some(b)) => {
            let cpu = (b - a) as f64 / n as f64;
            println!(
                "{name:<34} {wall:>9.1} ns wall {cpu:>9.1} ns CPU /item  {:>7.2} M/s CPU",
                1e3 / cpu
            );
        }
        _ => println!("{name:<34} {wall:>9.1} ns wall /item (CPU time unavailable)"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the first other argument filters.
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    let cases: Vec<(u64, &str)> = CASES
        .lines()
        .map(|line| {
            let (hex, text) = line.split_at(27);
            let bytes: Vec<u8> = hex[..23]
                .split(' ')
                .map(|b| u8::from_str_radix(b, 16).unwrap_or(0))
                .collect();
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes);
            (u64::from_le_bytes(b), text)
        })
        .collect();
    let budget = Duration::from_secs(2);

    // The generated disassembler needs no spec: its first call is cheap.
    let start = Instant::now();
    black_box(disassemble(cases[0].0, Arch::V10).ok());
    println!(
        "{:<32} {:>10.3} ms",
        "first disassembly",
        start.elapsed().as_secs_f64() * 1e3
    );

    // So does the generated assembler (for text it reads; the engine is
    // loaded only for what it cannot).
    let start = Instant::now();
    black_box(assemble(cases[0].1, Arch::V10).ok());
    println!(
        "{:<32} {:>10.3} ms",
        "first assembly",
        start.elapsed().as_secs_f64() * 1e3
    );

    measure(
        "decode to opcode (generated)",
        &filter,
        &cases,
        budget,
        |(w, _)| {
            black_box(Instr::decode(black_box(*w), Arch::V10.generation()));
        },
    );

    let mut text = String::with_capacity(256);
    measure(
        "decode + disassemble (generated)",
        &filter,
        &cases,
        budget,
        |(w, _)| {
            text.clear();
            black_box(
                push_word(
                    black_box(*w),
                    Arch::V10.generation(),
                    true,
                    false,
                    &mut text,
                )
                .ok(),
            );
        },
    );

    // The run-time engine over the spec, which the generated code replaced
    // and which the differential tests use as the oracle.
    let spec = isa();
    measure(
        "decode + disassemble (engine)",
        &filter,
        &cases,
        budget,
        |(w, _)| {
            text.clear();
            black_box(
                spec.disassemble_into(black_box(*w), Arch::V10.generation(), &mut text)
                    .ok(),
            );
        },
    );

    measure("assemble (generated)", &filter, &cases, budget, |(_, t)| {
        black_box(assemble(black_box(t), Arch::V10).ok());
    });
    measure("assemble (engine)", &filter, &cases, budget, |(_, t)| {
        black_box(spec.assemble(black_box(t), Arch::V10.generation()).ok());
    });
}
