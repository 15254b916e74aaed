//! Each pass's time on generated shaders of 1k, 10k and 100k instructions,
//! side by side, to show it grows linearly (ns/inst stays roughly flat;
//! the last column is the 100k / 1k ratio). Two shapes: a chain of
//! diamonds (`synthetic::shader`) and diamonds nested as deep as the size
//! allows (`synthetic::nested_shader`). Run with `cargo bench -p lathe-passes`.
//!
//! On a shared machine absolute numbers wander; larger shaders also fall
//! out of the caches, which costs a few times per instruction without any
//! extra work being done.

use lathe_ir::{Bump, GenericOp, Shader, parse, print, synthetic};
use lathe_passes::Registry;
use std::hint::black_box;
use std::time::{Duration, Instant};

type Generator = for<'a> fn(&'a Bump, usize) -> Shader<'a, GenericOp>;

fn main() {
    let registry = Registry::<GenericOp>::standard();
    let sizes = [1_000usize, 10_000, 100_000];
    let shapes: [(&str, Generator); 2] = [
        ("chain", synthetic::shader),
        ("nested", synthetic::nested_shader),
    ];
    print!("{:<32}", "pass (ns/inst)");
    for n in sizes {
        print!(" {n:>10}");
    }
    println!("   100k/1k");
    for (shape, generate) in shapes {
        let texts: Vec<String> = sizes
            .iter()
            .map(|&n| {
                let arena = Bump::new();
                print(&generate(&arena, n))
            })
            .collect();
        let mut stages: Vec<Vec<&str>> = registry.names().into_iter().map(|n| vec![n]).collect();
        stages.push(vec!["flatten", "copy-prop", "dce"]);
        for stage in stages {
            print!("{:<32}", format!("{} ({shape})", stage.join(",")));
            let mut per_inst = Vec::new();
            for (text, &n) in texts.iter().zip(&sizes) {
                let runs = if n >= 100_000 { 5 } else { 15 };
                let mut times: Vec<Duration> = Vec::with_capacity(runs);
                let mut insts = 0;
                for _ in 0..runs {
                    let arena = Bump::new();
                    let mut shader: Shader<GenericOp> = parse(&arena, text).expect("parses");
                    insts = shader.len();
                    let mut pm = registry.pipeline(&stage).expect("known passes");
                    pm.verify = false;
                    let start = Instant::now();
                    black_box(pm.run(&mut shader).expect("runs"));
                    times.push(start.elapsed());
                }
                times.sort();
                let ns = times[runs / 2].as_nanos() as f64 / insts as f64;
                per_inst.push(ns);
                print!(" {ns:>10.1}");
            }
            println!("   {:>6.2}x", per_inst[2] / per_inst[0]);
        }
    }
}
