//! Build, print, parse and validate throughput on generated shaders of 1k,
//! 10k and 100k instructions. Run with `cargo bench -p lathe-ir`.
//!
//! On a shared machine absolute numbers wander; larger shaders also fall
//! out of the caches, which costs a few times per instruction without any
//! extra work being done.

use lathe_ir::{Bump, GenericOp, Shader, parse, print, synthetic};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median time of `runs` runs of `f`.
fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    println!(
        "{:>8} {:>9} {:>14} {:>14} {:>14} {:>16}",
        "target", "insts", "build ns/inst", "print ns/inst", "parse ns/inst", "validate ns/inst"
    );
    for target in [1_000usize, 10_000, 100_000] {
        let runs = if target >= 100_000 { 7 } else { 21 };
        let insts = {
            let arena = Bump::new();
            synthetic::shader(&arena, target).len()
        };
        let build = time(runs, || {
            let arena = Bump::new();
            black_box(synthetic::shader(&arena, target).len());
        });
        let arena = Bump::new();
        let shader = synthetic::shader(&arena, target);
        let text = print(&shader);
        let print_t = time(runs, || {
            black_box(print(black_box(&shader)).len());
        });
        let parse_t = time(runs, || {
            let arena = Bump::new();
            let s: Shader<GenericOp> =
                parse(&arena, black_box(&text)).expect("printed text parses");
            black_box(s.len());
        });
        let validate_t = time(runs, || {
            black_box(lathe_ir::validate(black_box(&shader)).is_ok());
        });
        let per = |d: Duration| d.as_nanos() as f64 / insts as f64;
        println!(
            "{target:>8} {insts:>9} {:>14.1} {:>14.1} {:>14.1} {:>16.1}",
            per(build),
            per(print_t),
            per(parse_t),
            per(validate_t)
        );
    }
}
