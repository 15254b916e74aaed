//! ir3 throughput: decode, decode + disassemble into a reused buffer, and
//! assemble, over every word of Mesa's disasm vectors (a realistic mix of
//! all categories) repeated.
//!
//! `cargo bench -p lathe-adreno --bench ir3`

use std::hint::black_box;
use std::time::Instant;

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

fn report(name: &str, ops: u64, seconds: f64) {
    println!(
        "{name:<28} {:>10.1} M instr/s  {:>8.1} ns/instr",
        ops as f64 / seconds / 1e6,
        seconds * 1e9 / ops as f64
    );
}

fn main() {
    let rows = rows();
    // Neither the generated assembler nor the disassembler loads the spec.
    let start = Instant::now();
    black_box(assemble(&rows[0].2, rows[0].0).ok());
    println!(
        "{:<28} {:>10.3} ms",
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

    let rounds = 2000u64;
    let start = Instant::now();
    let mut matched = 0u64;
    for _ in 0..rounds {
        for (g, w, _) in &rows {
            // Decode only: leaf selection through the decision tree.
            matched += u64::from(lathe_adreno::ir3::decode_opcode(black_box(*w), *g).is_some());
        }
    }
    report(
        "decode",
        rounds * rows.len() as u64,
        start.elapsed().as_secs_f64(),
    );
    black_box(matched);

    let rounds = 20_000u64;
    let start = Instant::now();
    for _ in 0..rounds {
        for (g, w, _) in &rows {
            line.clear();
            let _ = disassemble_into(black_box(*w), *g, &mut line);
            black_box(&line);
        }
    }
    report(
        "decode + disassemble",
        rounds * rows.len() as u64,
        start.elapsed().as_secs_f64(),
    );

    // The run-time engine over the spec, which the generated code replaced
    // and which the differential tests use as the oracle.
    let spec = lathe_adreno::ir3::generated::isa();
    let rounds = 20u64;
    let start = Instant::now();
    for _ in 0..rounds {
        for (g, w, _) in &rows {
            line.clear();
            let _ = spec.disassemble_into(black_box(*w), g.gpu_id(), &mut line);
            black_box(&line);
        }
    }
    report(
        "decode + disassemble (engine)",
        rounds * rows.len() as u64,
        start.elapsed().as_secs_f64(),
    );

    let rounds = 500u64;
    let start = Instant::now();
    for _ in 0..rounds {
        for (g, _, text) in &rows {
            black_box(assemble(black_box(text), *g).ok());
        }
    }
    report(
        "assemble (generated)",
        rounds * rows.len() as u64,
        start.elapsed().as_secs_f64(),
    );

    let rounds = 2u64;
    let start = Instant::now();
    for _ in 0..rounds {
        for (g, _, text) in &rows {
            black_box(spec.assemble(black_box(text), g.gpu_id()).ok());
        }
    }
    report(
        "assemble (engine)",
        rounds * rows.len() as u64,
        start.elapsed().as_secs_f64(),
    );
}
