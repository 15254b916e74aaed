//! First-call latency of a fresh process: `lathe disasm` on one word, run
//! as a new process many times (what a script calling the tool per word
//! pays). Reports the median wall time and the mean CPU time per process
//! (the children's user + system time from `/proc/self/stat`, Linux only).
//!
//! `cargo bench -p lathe --bench disasm_process`

use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 200;

/// Children's user + system CPU seconds so far, if `/proc` says.
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; cutime and cstime are
    // fields 16 and 17 (1-based) of the whole line, in clock ticks.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let cutime: f64 = fields.get(13)?.parse().ok()?;
    let cstime: f64 = fields.get(14)?.parse().ok()?;
    // Linux reports these in USER_HZ, which is 100 on every mainstream
    // configuration.
    Some((cutime + cstime) / 100.0)
}

fn measure(args: &[&str]) {
    let exe = env!("CARGO_BIN_EXE_lathe");
    let cpu_before = children_cpu_seconds();
    let mut wall = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let status = Command::new(exe)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("lathe runs");
        wall.push(start.elapsed().as_secs_f64());
        assert!(status.success(), "lathe {args:?} failed");
    }
    wall.sort_by(f64::total_cmp);
    let cpu = match (cpu_before, children_cpu_seconds()) {
        (Some(a), Some(b)) => format!("{:.2} ms CPU/process", (b - a) * 1e3 / RUNS as f64),
        _ => "CPU time unavailable".to_string(),
    };
    println!(
        "lathe {:<40} median {:.2} ms wall, {cpu}",
        args.join(" "),
        wall[RUNS / 2] * 1e3
    );
}

fn main() {
    measure(&["disasm", "--gpu", "a630", "2015600400000c11"]);
    measure(&["disasm", "--gpu", "g610", "0x0091c10000000002"]);
}
