//! Compile time as a whole process: `lathe compile --gpu MODEL --emit
//! stats` on every corpus entry point that compiles, a new process each
//! time (what a driver's offline tool or a shader-db script pays,
//! process start-up included). Each entry point runs `RUNS` times; the
//! report gives, per GPU, the median over the corpus of each shader's
//! median wall time, and the mean CPU time per process (the children's
//! user + system time from `/proc/self/stat`, Linux only).
//!
//! `cargo bench -p lathe --bench compile_process`

#[path = "../frontend/tests/support/corpus.rs"]
mod corpus;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 5;

/// Children's user + system CPU seconds so far, if `/proc` says.
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; cutime and cstime are
    // fields 16 and 17 (1-based) of the whole line, in USER_HZ (100).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let cutime: f64 = fields.get(13)?.parse().ok()?;
    let cstime: f64 = fields.get(14)?.parse().ok()?;
    Some((cutime + cstime) / 100.0)
}

/// The `--stage` value for `stage`.
fn stage_flag(stage: lathe::ir::Stage) -> &'static str {
    match stage {
        lathe::ir::Stage::Vertex => "vert",
        lathe::ir::Stage::Fragment => "frag",
        lathe::ir::Stage::Compute => "comp",
    }
}

/// The command line compiling `case` for `gpu`.
fn command(dir: &Path, case: &corpus::Case, gpu: &str) -> Command {
    let file = if case.wgsl {
        dir.join(&case.path)
    } else {
        dir.join(format!("{}.spv", case.path))
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lathe"));
    cmd.args(["compile", "--gpu", gpu, "--emit", "stats"])
        .args(["--entry", &case.entry, "--stage", stage_flag(case.stage)]);
    for (id, value) in &case.overrides {
        cmd.args(["--spec", &format!("{id}={value}")]);
    }
    cmd.arg(file).stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

fn measure(dir: &Path, cases: &[corpus::Case], gpu: &str) {
    let compiles: Vec<&corpus::Case> = cases
        .iter()
        .filter(|case| command(dir, case, gpu).status().is_ok_and(|s| s.success()))
        .collect();
    if compiles.is_empty() {
        println!("{gpu}: nothing compiles");
        return;
    }
    let cpu_before = children_cpu_seconds();
    let mut medians: Vec<f64> = compiles
        .iter()
        .map(|case| {
            let mut wall: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    let status = command(dir, case, gpu).status().expect("lathe runs");
                    assert!(
                        status.success(),
                        "{}:{} stopped compiling",
                        case.path,
                        case.entry
                    );
                    start.elapsed().as_secs_f64()
                })
                .collect();
            wall.sort_by(f64::total_cmp);
            wall[RUNS / 2]
        })
        .collect();
    let processes = (compiles.len() * RUNS) as f64;
    let cpu = match (cpu_before, children_cpu_seconds()) {
        (Some(a), Some(b)) => format!("{:.2} ms CPU/process (mean)", (b - a) * 1e3 / processes),
        _ => "CPU time unavailable".to_string(),
    };
    medians.sort_by(f64::total_cmp);
    println!(
        "{gpu}: {} of {} entry points compile; median {:.2} ms wall/process, \
         slowest {:.2} ms; {cpu}",
        compiles.len(),
        cases.len(),
        medians[medians.len() / 2] * 1e3,
        medians[medians.len() - 1] * 1e3,
    );
}

fn main() {
    let dir = corpus::corpus_dir();
    let cases = corpus::cases(&dir);
    for gpu in ["a630", "g610"] {
        measure(&dir, &cases, gpu);
    }
}
