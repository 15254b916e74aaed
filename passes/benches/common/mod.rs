//! Shared scaffolding of the scaling benches: time a pipeline on shaders
//! of growing size and print ns per instruction side by side with the
//! largest / smallest ratio (flat cost per instruction means no
//! superlinear step).
//!
//! Two clocks: wall-clock time, and the thread's own CPU time. On a
//! loaded machine a 100k run (tens of milliseconds) is preempted every
//! time while a 1k run (under a millisecond) often is not, so the
//! wall-clock ratio there measures the machine's load as much as the
//! pass; the CPU-time one does not.

// Each bench uses the part of the scaffold it needs.
#![allow(dead_code)]

use lathe_ir::{Bump, GenericOp, Shader, parse};
use lathe_passes::Registry;
use std::hint::black_box;
use std::time::Instant;

/// Which clock a row is timed with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Wall-clock time, the median of several runs.
    Wall,
    /// The thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, Linux), the
    /// fastest of several runs.
    ThreadCpu,
}

/// Nanoseconds of CPU time this thread has used.
pub fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    /// Linux's `CLOCK_THREAD_CPUTIME_ID`.
    const THREAD_CPUTIME: i32 = 3;
    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec for the call.
    let rc = unsafe { clock_gettime(THREAD_CPUTIME, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.sec as u64 * 1_000_000_000 + t.nsec as u64
}

/// Prints the table header for `sizes` under a first column of `width`.
pub fn header(title: &str, width: usize, sizes: &[usize]) {
    print!("{title:<width$}");
    for n in sizes {
        print!(" {n:>10}");
    }
    println!("   last/first");
}

/// Times `stage` (validation off) on each shader text in wall-clock time:
/// the median of several fresh parses, in ns per instruction, printed as
/// one row.
pub fn row(
    label: &str,
    width: usize,
    registry: &Registry<GenericOp>,
    stage: &[&str],
    texts: &[String],
) -> Vec<f64> {
    row_on(Clock::Wall, label, width, registry, stage, texts)
}

/// [`row`] on either clock.
pub fn row_on(
    clock: Clock,
    label: &str,
    width: usize,
    registry: &Registry<GenericOp>,
    stage: &[&str],
    texts: &[String],
) -> Vec<f64> {
    let variants: Vec<Vec<String>> = texts.iter().map(|t| vec![t.clone()]).collect();
    row_variants(clock, label, width, registry, stage, &variants)
}

/// [`row_on`] with several shaders of each size (same shape, other random
/// choices): run `k` takes variant `k` (cycling), so no run repeats the
/// shader the run before it saw.
pub fn row_variants(
    clock: Clock,
    label: &str,
    width: usize,
    registry: &Registry<GenericOp>,
    stage: &[&str],
    texts: &[Vec<String>],
) -> Vec<f64> {
    print!("{label:<width$}");
    let now = || match clock {
        Clock::Wall => 0,
        Clock::ThreadCpu => thread_cpu_ns(),
    };
    let mut per_inst = Vec::with_capacity(texts.len());
    for variants in texts {
        // One fresh parse and run of variant `k`; returns (nanoseconds,
        // instructions).
        let time = |k: usize| {
            let arena = Bump::new();
            let text = &variants[k % variants.len()];
            let mut shader: Shader<GenericOp> = parse(&arena, text).expect("parses");
            let insts = shader.len();
            let mut pm = registry.pipeline(stage).expect("known passes");
            pm.verify = false;
            let (wall, cpu) = (Instant::now(), now());
            black_box(pm.run(&mut shader).expect("runs"));
            let ns = match clock {
                Clock::Wall => wall.elapsed().as_nanos() as u64,
                Clock::ThreadCpu => now() - cpu,
            };
            (ns, insts)
        };
        let (first, insts) = time(0);
        let runs = if insts >= 50_000 { 5 } else { 15 };
        let mut times: Vec<u64> = vec![first];
        times.extend((1..runs).map(|k| time(k).0));
        times.sort();
        let pick = match clock {
            Clock::Wall => times[times.len() / 2],
            Clock::ThreadCpu => times[0],
        };
        let ns = pick as f64 / insts.max(1) as f64;
        per_inst.push(ns);
        print!(" {ns:>10.1}");
    }
    let ratio = per_inst.last().unwrap_or(&0.0) / per_inst.first().unwrap_or(&1.0);
    println!("   {ratio:>6.2}x");
    per_inst
}
