//! In-process compile time: the bundled example and every corpus entry
//! point that compiles today, SPIR-V (or WGSL) in, a binary out
//! (frontend, selection, backend passes, legalisation, emission,
//! statistics, disassembly), for ir3 (a630, a740) and Valhall (g57,
//! g610). Each shader is timed
//! `RUNS` times; the report gives the median per shader and the median
//! and geometric mean over the corpus. First, the one-time cost a fresh
//! process pays: reading the spec models `isa!` wrote at build time.
//!
//! `cargo bench -p lathe --bench compile`

#[path = "../frontend/tests/support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::{Duration, Instant};

use lathe::compile::{Source, compile_ir3, compile_valhall};
use lathe::frontend::{Options, spirv_words};
use lathe::isa::machine::MachineSpec;

const RUNS: usize = 15;

/// One shader's input.
struct Input {
    name: String,
    source: Result<Vec<u32>, String>,
    options: Options,
}

impl Input {
    fn source(&self) -> Source<'_> {
        match &self.source {
            Ok(words) => Source::Spirv(words),
            Err(text) => Source::Wgsl(text),
        }
    }
}

fn once(what: &str, f: impl FnOnce()) {
    let start = Instant::now();
    f();
    println!("{what:<44} {:>8.1} us", start.elapsed().as_secs_f64() * 1e6);
}

/// Compiles `input` for one GPU; true when it compiled.
type Compile = dyn Fn(&Input) -> bool;

/// Median of `RUNS` compiles of `input`.
fn median(input: &Input, compile: &Compile) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(compile(input));
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

/// One GPU's row: how many compile, the example's time, the corpus
/// median, geometric mean and slowest.
fn report(gpu: &str, inputs: &[Input], compile: &Compile) {
    let compiled: Vec<&Input> = inputs.iter().filter(|i| compile(i)).collect();
    if compiled.is_empty() {
        println!("{gpu}: nothing compiles");
        return;
    }
    let mut times: Vec<(Duration, &str)> = compiled
        .iter()
        .map(|i| (median(i, compile), i.name.as_str()))
        .collect();
    let example = times[0].0;
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let geomean = (times.iter().map(|(d, _)| us(*d).ln()).sum::<f64>() / times.len() as f64).exp();
    println!(
        "{gpu}: {} of {} entry points compile; attenuation.wgsl {:.1} us; \
         corpus median {:.1} us/shader, geomean {:.1} us, slowest {:.1} us ({})",
        compiled.len(),
        inputs.len(),
        us(example),
        us(times[times.len() / 2].0),
        geomean,
        us(times[times.len() - 1].0),
        times[times.len() - 1].1,
    );
}

fn inputs() -> Vec<Input> {
    let mut out = vec![Input {
        name: "examples/attenuation.wgsl".into(),
        source: Err(include_str!("../examples/attenuation.wgsl").into()),
        options: Options::default(),
    }];
    let dir = corpus::corpus_dir();
    for case in corpus::cases(&dir) {
        let options = Options {
            entry: Some(case.entry.clone()),
            stage: Some(case.stage),
            spec: case.overrides.clone(),
            passes: true,
        };
        let source = if case.wgsl {
            Err(std::fs::read_to_string(dir.join(&case.path)).expect("read source"))
        } else {
            let bytes = std::fs::read(dir.join(format!("{}.spv", case.path))).expect("read .spv");
            Ok(spirv_words(&bytes).expect("SPIR-V words"))
        };
        out.push(Input {
            name: format!("{}:{}", case.path, case.entry),
            source,
            options,
        });
    }
    out
}

fn main() {
    // What the first compile of a process pays once.
    once("ir3 spec model read (first isa())", || {
        black_box(lathe::adreno::ir3::generated::isa());
    });
    once("ir3 machine-op table built", || {
        black_box(lathe::adreno::ir3::generated::Spec::table());
    });
    once("Valhall spec model read (first isa())", || {
        black_box(lathe::mali::valhall::generated::isa());
    });
    let inputs = inputs();
    for gpu in ["a630", "a740"] {
        let model = gpu.parse().expect("an ir3 GPU model");
        report(gpu, &inputs, &move |i: &Input| {
            compile_ir3(i.source(), &i.options, model).is_ok()
        });
    }
    for gpu in ["g57", "g610"] {
        let model = gpu.parse().expect("a Valhall GPU model");
        report(gpu, &inputs, &move |i: &Input| {
            compile_valhall(i.source(), &i.options, model).is_ok()
        });
    }
}
