//! Each pass's time on generated shaders of 1k, 10k and 100k instructions,
//! side by side, to show it grows linearly (ns/inst stays roughly flat;
//! the last column is the 100k / 1k ratio). Two shapes: a chain of
//! diamonds (`synthetic::shader`) and diamonds nested as deep as the size
//! allows (`synthetic::nested_shader`). Run with `cargo bench -p lathe-passes`.
//!
//! On a shared machine absolute numbers wander; larger shaders also fall
//! out of the caches, which costs a few times per instruction without any
//! extra work being done.

mod common;

use lathe_ir::{Bump, GenericOp, Shader, print, synthetic};
use lathe_passes::Registry;

type Generator = for<'a> fn(&'a Bump, usize) -> Shader<'a, GenericOp>;

fn main() {
    let registry = Registry::<GenericOp>::standard();
    let sizes = [1_000usize, 10_000, 100_000];
    let shapes: [(&str, Generator); 2] = [
        ("chain", synthetic::shader),
        ("nested", synthetic::nested_shader),
    ];
    common::header("pass (ns/inst)", 32, &sizes);
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
            let label = format!("{} ({shape})", stage.join(","));
            common::row(&label, 32, &registry, &stage, &texts);
        }
    }
}
