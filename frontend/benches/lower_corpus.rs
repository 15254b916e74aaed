//! Lower every corpus entry point (`shared/corpus/MANIFEST.tsv`, spirv_ok
//! rows) on one core. Run with `cargo bench -p lathe-frontend`.
//!
//! Reported separately: SPIR-V → IR (the glslang modules and naga's output
//! for the WGSL entry points, prepared outside the timing), the same with
//! the default passes, and WGSL → SPIR-V through naga.

#[path = "../tests/support/corpus.rs"]
mod corpus;

use lathe_frontend::{Options, lower_spirv, spirv_words, wgsl};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median and fastest of `runs` timings of `f` (on a shared machine the
/// fastest run is the one least disturbed by other work).
fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[runs / 2], times[0])
}

/// `median ms (us/shader), fastest ms` for `n` shaders.
fn report((median, fastest): (Duration, Duration), n: f64) -> String {
    format!(
        "{:.1} ms ({:.0} us/shader), fastest {:.1} ms",
        median.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e6 / n,
        fastest.as_secs_f64() * 1e3
    )
}

fn main() {
    let dir = corpus::corpus_dir();
    let cases = corpus::cases(&dir);
    let mut modules = Vec::new();
    let mut sources = Vec::new();
    for case in &cases {
        let opts = Options {
            entry: Some(case.entry.clone()),
            stage: Some(case.stage),
            spec: if case.wgsl {
                Vec::new()
            } else {
                case.overrides.clone()
            },
            passes: false,
        };
        if case.wgsl {
            let src = std::fs::read_to_string(dir.join(&case.path)).expect("read source");
            if let Ok(words) =
                wgsl::to_spirv(&src, opts.entry.as_deref(), opts.stage, &case.overrides)
            {
                modules.push((words, opts.clone()));
            }
            sources.push((src, case));
        } else {
            let bytes = std::fs::read(dir.join(format!("{}.spv", case.path))).expect("read .spv");
            modules.push((spirv_words(&bytes).expect("words"), opts));
        }
    }
    let lower_all = |passes: bool| {
        let mut ok = 0;
        for (words, opts) in &modules {
            let arena = lathe_ir::Bump::new();
            let opts = Options {
                passes,
                ..opts.clone()
            };
            if let Ok(l) = lower_spirv(&arena, words, &opts) {
                ok += black_box(l.shader.len()).min(1);
            }
        }
        ok
    };
    let lowered = lower_all(false);
    let n = modules.len() as f64;
    let lower = time(21, || {
        black_box(lower_all(false));
    });
    let with_passes = time(21, || {
        black_box(lower_all(true));
    });
    let naga = time(5, || {
        for (src, case) in &sources {
            let _ = black_box(wgsl::to_spirv(
                src,
                Some(&case.entry),
                Some(case.stage),
                &case.overrides,
            ));
        }
    });
    println!(
        "{} entry points ({} lowered): SPIR-V -> IR {}; with default passes {}",
        modules.len(),
        lowered,
        report(lower, n),
        report(with_passes, n),
    );
    println!(
        "{} WGSL entry points: WGSL -> SPIR-V through naga {}",
        sources.len(),
        report(naga, sources.len() as f64),
    );
}
