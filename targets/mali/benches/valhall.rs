//! Valhall decoding, disassembly and assembly throughput over Mesa's 172
//! vectors.
//!
//! `cargo bench -p lathe-mali --bench valhall`

use std::hint::black_box;
use std::time::{Duration, Instant};

use lathe_mali::valhall::generated::display::push_word;
use lathe_mali::valhall::{Arch, Instr, assemble, disassemble, isa};

const CASES: &str = include_str!("../tests/valhall-data/assembler-cases.txt");

/// Runs `f` over all items repeatedly for at least `budget` and returns
/// nanoseconds per item.
fn time_per_item<T>(items: &[T], budget: Duration, mut f: impl FnMut(&T)) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for item in items {
            f(item);
        }
        n += items.len() as u64;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn report(what: &str, ns: f64) {
    println!("{what:<32} {ns:>10.0} ns/op {:>12.0} ops/s", 1e9 / ns);
}

fn main() {
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

    let ns = time_per_item(&cases, budget, |(w, _)| {
        black_box(Instr::decode(black_box(*w), Arch::V10.generation()));
    });
    report("decode to opcode (generated)", ns);

    let mut text = String::with_capacity(256);
    let ns = time_per_item(&cases, budget, |(w, _)| {
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
    });
    report("decode + disassemble (generated)", ns);

    // The run-time engine over the spec, which the generated code replaced
    // and which the differential tests use as the oracle.
    let spec = isa();
    let ns = time_per_item(&cases, budget, |(w, _)| {
        text.clear();
        black_box(
            spec.disassemble_into(black_box(*w), Arch::V10.generation(), &mut text)
                .ok(),
        );
    });
    report("decode + disassemble (engine)", ns);

    let ns = time_per_item(&cases, budget, |(_, t)| {
        black_box(assemble(black_box(t), Arch::V10).ok());
    });
    report("assemble (generated, 172 vectors)", ns);

    let ns = time_per_item(&cases, budget, |(_, t)| {
        black_box(spec.assemble(black_box(t), Arch::V10.generation()).ok());
    });
    report("assemble (engine)", ns);
}
