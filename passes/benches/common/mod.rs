//! Shared scaffolding of the scaling benches: time a pipeline on shaders
//! of growing size and print ns per instruction side by side with the
//! largest / smallest ratio (flat cost per instruction means no
//! superlinear step).

use lathe_ir::{Bump, GenericOp, Shader, parse};
use lathe_passes::Registry;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Prints the table header for `sizes` under a first column of `width`.
pub fn header(title: &str, width: usize, sizes: &[usize]) {
    print!("{title:<width$}");
    for n in sizes {
        print!(" {n:>10}");
    }
    println!("   last/first");
}

/// Times `stage` (validation off) on each shader text: the median of
/// several fresh parses, in ns per instruction, printed as one row.
pub fn row(
    label: &str,
    width: usize,
    registry: &Registry<GenericOp>,
    stage: &[&str],
    texts: &[String],
) -> Vec<f64> {
    print!("{label:<width$}");
    let mut per_inst = Vec::with_capacity(texts.len());
    for text in texts {
        // One fresh parse and run; returns (time, instructions).
        let time = || {
            let arena = Bump::new();
            let mut shader: Shader<GenericOp> = parse(&arena, text).expect("parses");
            let insts = shader.len();
            let mut pm = registry.pipeline(stage).expect("known passes");
            pm.verify = false;
            let start = Instant::now();
            black_box(pm.run(&mut shader).expect("runs"));
            (start.elapsed(), insts)
        };
        let (first, insts) = time();
        let runs = if insts >= 50_000 { 5 } else { 15 };
        let mut times: Vec<Duration> = vec![first];
        times.extend((1..runs).map(|_| time().0));
        times.sort();
        let ns = times[times.len() / 2].as_nanos() as f64 / insts.max(1) as f64;
        per_inst.push(ns);
        print!(" {ns:>10.1}");
    }
    let ratio = per_inst.last().unwrap_or(&0.0) / per_inst.first().unwrap_or(&1.0);
    println!("   {ratio:>6.2}x");
    per_inst
}
