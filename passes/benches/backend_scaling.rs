//! The backend passes `group`, `depth` and `sched` on flat (straight-line)
//! shaders of 1k, 10k and 100k instructions, on the realistic test target:
//! ns per instruction side by side (flat cost means no quadratic step),
//! and the 100k / 1k ratio. Run with `cargo bench -p lathe-passes --bench
//! backend_scaling`.
//!
//! Two tables: wall-clock time (the scaffold every scaling bench shares)
//! and the thread's own CPU time. On a loaded machine a 100k run (tens of
//! milliseconds) is preempted every time while a 1k run (under a
//! millisecond) often is not, so the wall-clock ratio there measures the
//! machine's load as much as the pass; the CPU-time table does not.
//!
//! The shaders are the `ir_passes` random generator's shape made flat:
//! loads, arithmetic on recent values, vectors built with `collect` and
//! read back through `sample` and `split`, stores.
//!
//! Every run of a size takes a different shader (same size and shape,
//! another random seed). Timing one shader again and again lets the
//! branch predictor learn the whole instruction sequence of a 1k shader
//! (which operation comes next decides most branches in these passes)
//! but not of a 10k one: on a repeated shader `depth` ran 10 ns/inst at 1k
//! and 17-18 at 10k and 100k, on fresh shaders 18-18.5 at all three. A
//! compiler never sees the same shader twice in a row, so the fresh figure
//! is the real one, and the repeated one made a predictor effect look like
//! a cost that grows with size.

mod common;

use lathe_ir::GenericOp;
use lathe_passes::Registry;
use lathe_passes::target::TargetFacts;
use lathe_passes::target::test_target::TestTarget;
use std::rc::Rc;

/// Shaders of each size timed in turn (see the module docs).
const VARIANTS: u64 = 15;

/// A flat shader of about `n` instructions; `seed` picks the random choices.
fn flat(n: usize, seed: u64) -> String {
    let mut t = String::from("shader fragment\nb0:\n");
    let mut v = 0usize;
    let mut x = 0x2545_f491_4f6c_dd1du64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    for k in 0..8 {
        t.push_str(&format!(
            "  %{v}:f32 = load_input slot={} comp={} interp=smooth\n",
            k / 4,
            k % 4
        ));
        v += 1;
    }
    let mut count = 8;
    while count < n {
        // Operands among the last 32 values keep pressure realistic.
        let a = v - 1 - next(v.min(32));
        let b = v - 1 - next(v.min(32));
        match next(8) {
            0 => {
                t.push_str(&format!("  %{v}:f32x2 = collect %{a}, %{b}\n"));
                t.push_str(&format!(
                    "  %{}:f32x4 = sample texture=0 sampler=0 %{v}\n",
                    v + 1
                ));
                t.push_str(&format!(
                    "  %{}:f32 = split lane={} %{}\n",
                    v + 2,
                    next(4),
                    v + 1
                ));
                v += 3;
                count += 3;
            }
            1 => {
                t.push_str(&format!(
                    "  store_output slot={} comp={} %{a}\n",
                    next(4),
                    next(4)
                ));
                count += 1;
            }
            2 => {
                t.push_str(&format!("  %{v}:f32 = exp2 %{a}\n"));
                v += 1;
                count += 1;
            }
            op => {
                let name = ["fadd", "fmul", "fsub", "fmin", "fmax", "fadd"][op - 3];
                t.push_str(&format!("  %{v}:f32 = {name} %{a}, %{b}\n"));
                v += 1;
                count += 1;
            }
        }
    }
    t.push_str(&format!("  store_output slot=0 comp=0 %{}\n  ret\n", v - 1));
    t
}

/// The pipelines timed, one row each.
const STAGES: [&[&str]; 4] = [
    &["group"],
    &["depth"],
    &["sched"],
    &["group", "depth", "sched"],
];

fn main() {
    let target: Rc<dyn TargetFacts<GenericOp>> = Rc::new(TestTarget::realistic());
    let registry = Registry::with_target(target);
    let sizes = [1_000usize, 10_000, 100_000];
    let texts: Vec<Vec<String>> = sizes
        .iter()
        .map(|&n| (0..VARIANTS).map(|seed| flat(n, seed)).collect())
        .collect();
    for (title, clock) in [
        ("pass (ns/inst, flat)", common::Clock::Wall),
        ("pass (CPU ns/inst, flat)", common::Clock::ThreadCpu),
    ] {
        common::header(title, 24, &sizes);
        for stage in STAGES {
            common::row_variants(clock, &stage.join(","), 24, &registry, stage, &texts);
        }
        println!();
    }
}
