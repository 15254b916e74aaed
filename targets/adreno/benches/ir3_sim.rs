//! Simulation speed of the generated ir3 simulator: a hazard-free ALU
//! program of 99 instructions (float add/mul/mad/max, integer
//! add/shift/logic, compares, selects, moves and conversions, an SFU op
//! waited for with (ss)) run over a 2×2 quad of threads, repeated. Reports thread-instructions per
//! second (instructions issued × active threads).
//!
//! `cargo bench -p lathe-adreno --bench ir3_sim`

use std::hint::black_box;
use std::time::Instant;

use lathe_adreno::ir3::{Generation, assemble_source, sim};

const G: Generation = Generation::A6xx;
const LANES: usize = 4;

/// A ring of 16 registers: instruction `n` writes `r(n mod 16).x` and
/// reads registers written 4 to 15 instructions earlier, so no nops are
/// needed and the timing model checks every read.
fn program() -> String {
    let ops = [
        "add.f {d}, {a}, {b}",
        "mul.f {d}, {a}, {b}",
        "add.u {d}, {a}, {b}",
        "shl.b {d}, {a}, 3",
        "mad.f32 {d}, {a}, {b}, {c}",
        "and.b {d}, {a}, {b}",
        "cmps.f.lt {d}, {a}, {b}",
        "sel.b32 {d}, {a}, {b}, {c}",
        "mov.f32f32 {d}, {a}",
        "cov.s32f32 {d}, {a}",
        "max.f {d}, {a}, {b}",
        "xor.b {d}, {a}, {b}",
    ];
    let reg = |n: usize| format!("r{}.x", n % 16);
    let mut p = String::new();
    for n in 0..96 {
        let line = ops[n % ops.len()]
            .replace("{d}", &reg(n))
            .replace("{a}", &reg(n + 16 - 4))
            .replace("{b}", &reg(n + 16 - 7))
            .replace("{c}", &reg(n + 16 - 11));
        p.push_str(&line);
        p.push('\n');
    }
    p.push_str("rcp r20.x, r1.x\n(ss)add.f r20.y, r20.x, r0.x\nend\n");
    p
}

fn main() {
    let source = program();
    let program = match assemble_source(&source, G) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("the bench program does not assemble: {e:?}");
            return;
        }
    };
    let mut m = sim::machine(LANES);
    for reg in 0..16u32 {
        for (c, comp) in ["x", "y", "z", "w"].iter().enumerate() {
            let (f, h, i) = m.parse_reg(&format!("r{reg}.{comp}")).expect("register");
            for lane in 0..LANES {
                let v = 1.0 + reg as f32 * 0.25 + c as f32 + lane as f32 * 0.5;
                m.set(f, h, i, lane, v.to_bits());
            }
        }
    }
    if let Err(e) = sim::run(&mut m, &program, G) {
        eprintln!("the bench program does not run: {e}");
        return;
    }
    // Decoded once, as a harness running many quads would.
    let prepared = sim::prepare(&program, G);
    let rounds = 20_000u64;
    let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
    for _ in 0..rounds {
        // Restart the quad; registers keep their values.
        m.pc.iter_mut().for_each(|pc| *pc = Some(0));
        black_box(sim::run_program(&mut m, black_box(&prepared))).expect("runs");
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = thread_cpu_ns()
        .zip(cpu_start)
        .map(|(end, start)| end.saturating_sub(start) as f64 / 1e9);
    // `end` issues too: every instruction runs on all four threads.
    let issues = rounds * program.len() as u64;
    let thread_instrs = issues * LANES as u64;
    println!(
        "ir3 sim, {} instructions x {LANES} threads: {:.1} M thread-instr/s ({:.1} ns per instruction issue)",
        program.len(),
        thread_instrs as f64 / seconds / 1e6,
        seconds * 1e9 / issues as f64
    );
    if let Some(cpu) = cpu_seconds {
        println!(
            "  on-CPU time of the thread: {:.1} M thread-instr/s ({:.1} ns per instruction issue)",
            thread_instrs as f64 / cpu / 1e6,
            cpu * 1e9 / issues as f64
        );
    }
}

/// Nanoseconds this thread has run on a CPU (Linux scheduler statistics;
/// None elsewhere): on a shared machine it, not wall time, measures the
/// simulator.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}
