//! Simulation speed of the generated Valhall simulator: an ALU program of
//! 97 instructions (float add/multiply-add/max, integer add/shift/logic,
//! compares, selects, moves and conversions, an SFU reciprocal) run over a
//! 2×2 quad of threads, repeated. Reports thread-instructions per second
//! (instructions issued × active threads).
//!
//! `cargo bench -p lathe-mali --bench valhall_sim`

use std::hint::black_box;
use std::time::Instant;

use lathe_mali::valhall::{Arch, assemble_source, sim};

const ARCH: Arch = Arch::V10;
const LANES: usize = 4;

/// A ring of 16 registers: instruction `n` writes `r(n mod 16)` and reads
/// registers written 4, 7 and 11 instructions earlier (ALU results are
/// interlocked, so the timing model checks every read and finds nothing).
fn program() -> String {
    let ops = [
        "FADD.f32 {d}, {a}, {b}",
        "FMA.f32 {d}, {a}, {b}, {c}",
        "IADD.u32 {d}, {a}, {b}",
        "LSHIFT_OR.i32 {d}, {a}, 0x3020100.b11, 0x0",
        "FMA.f32 {d}, {a}, {b}, {c}",
        "LSHIFT_AND.i32 {d}, {a}, 0x3020100.b00, {b}",
        "FCMP_OR.f32.lt.f1 {d}, {a}, {b}, 0x0",
        "CSEL.f32.lt {d}, {a}, {b}, {c}, {a}",
        "MOV.i32 {d}, {a}",
        "S32_TO_F32 {d}, {a}",
        "FMAX.f32 {d}, {a}, {b}",
        "MUX.i32.bit {d}, {a}, {b}, {c}",
    ];
    let reg = |n: usize| format!("r{}", n % 16);
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
    p.push_str("FRCP.f32.end r20, r1\n");
    p
}

fn main() {
    let source = program();
    let program = match assemble_source(&source, ARCH) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("the bench program does not assemble: {e:?}");
            return;
        }
    };
    let mut m = sim::machine(LANES);
    for reg in 0..16u32 {
        let (f, h, i) = m.parse_reg(&format!("r{reg}")).expect("register");
        for lane in 0..LANES {
            let v = 1.0 + reg as f32 * 0.25 + lane as f32 * 0.5;
            m.set(f, h, i, lane, v.to_bits());
        }
    }
    if let Err(e) = sim::run(&mut m, &program, ARCH) {
        eprintln!("the bench program does not run: {e}");
        return;
    }
    // Decoded once, as a harness running many quads would.
    let prepared = sim::prepare(&program, ARCH);
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
    let issues = rounds * program.len() as u64;
    let thread_instrs = issues * LANES as u64;
    println!(
        "Valhall sim, {} instructions x {LANES} threads: {:.1} M thread-instr/s ({:.1} ns per instruction issue)",
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
