//! ir3 throughput: decode, decode + disassemble into a reused buffer, and
//! assemble, over every word of Mesa's disasm vectors (a realistic mix of
//! all categories) repeated.
//!
//! Each row gives wall time and this thread's CPU time per item (from
//! `/proc/thread-self/schedstat`, Linux): on a shared, loaded machine the
//! CPU-time rate is the comparable one. An argument runs only the rows
//! whose name contains it.
//!
//! `cargo bench -p lathe-adreno --bench ir3 [-- FILTER]`

use std::hint::black_box;
use std::time::{Duration, Instant};

use lathe_adreno::ir3::{Generation, assemble, disassemble_into, write_line};

const VECTORS: &str = include_str!("../tests/ir3-data/ir3-disasm.tsv");

fn rows() -> Vec<(Generation, u64, String)> {
    VECTORS
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let generation = Generation::from_gpu_id(c.get(2)?.parse().ok()?)?;
            let word = u64::from_str_radix(c.get(3)?, 16).ok()?;
            Some((generation, word, (*c.get(4)?).to_string()))
        })
        .collect()
}

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
                "{name:<30} {wall:>9.1} ns wall {cpu:>9.1} ns CPU /item  {:>7.2} M/s CPU",
                1e3 / cpu
            );
        }
        _ => println!("{name:<30} {wall:>9.1} ns wall /item (CPU time unavailable)"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the first other argument filters.
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    let rows = rows();
    // Neither the generated assembler nor the disassembler loads the spec.
    let start = Instant::now();
    black_box(assemble(&rows[0].2, rows[0].0).ok());
    println!(
        "{:<30} {:>9.3} ms",
        "first assembly",
        start.elapsed().as_secs_f64() * 1e3
    );
    let mut line = String::with_capacity(128);
    if rows
        .iter()
        .any(|(g, w, _)| write_line(*w, *g, &mut line).is_err())
    {
        eprintln!("the embedded ir3 spec does not load; nothing to measure");
        return;
    }
    let budget = Duration::from_secs(2);

    // Decode only: leaf selection through the decision tree.
    measure("decode", &filter, &rows, budget, |(g, w, _)| {
        black_box(lathe_adreno::ir3::decode_opcode(black_box(*w), *g));
    });
    measure(
        "decode + disassemble (generated)",
        &filter,
        &rows,
        budget,
        |(g, w, _)| {
            line.clear();
            let _ = disassemble_into(black_box(*w), *g, &mut line);
            black_box(&line);
        },
    );
    // The run-time engine over the spec, which the generated code replaced
    // and which the differential tests use as the oracle.
    let spec = lathe_adreno::ir3::generated::isa();
    measure(
        "decode + disassemble (engine)",
        &filter,
        &rows,
        budget,
        |(g, w, _)| {
            line.clear();
            let _ = spec.disassemble_into(black_box(*w), g.gpu_id(), &mut line);
            black_box(&line);
        },
    );
    measure(
        "assemble (generated)",
        &filter,
        &rows,
        budget,
        |(g, _, t)| {
            black_box(assemble(black_box(t), *g).ok());
        },
    );
    measure("assemble (engine)", &filter, &rows, budget, |(g, _, t)| {
        black_box(spec.assemble(black_box(t), g.gpu_id()).ok());
    });
}
