//! Measures what the first use of an `isa!`-generated module costs: the
//! embedded spec is parsed and resolved once (`load_prechecked`); `load`
//! adds the checker. Prints the fastest of several runs per spec.
//!
//! ```text
//! cargo run --release -p lathe-isa --example first_use [SPEC.isa…]
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn fastest<T, E: std::fmt::Display>(f: impl Fn() -> Result<T, E>) -> Result<Duration, String> {
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        std::hint::black_box(f().map_err(|e| e.to_string())?);
        best = best.min(t.elapsed());
    }
    Ok(best)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut specs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if specs.is_empty() {
        specs = vec![
            root.join("specs/adreno/ir3.isa"),
            root.join("specs/mali/valhall.isa"),
        ];
    }
    for spec in &specs {
        let pre = fastest(|| lathe_isa::load_prechecked(spec, &lathe_isa::load::FsReader));
        let full = fastest(|| lathe_isa::load(spec));
        match (pre, full) {
            (Ok(p), Ok(f)) => println!(
                "{}: first use (parse + resolve) {:.1} ms; with the checker {:.1} ms (fastest of {RUNS})",
                spec.display(),
                p.as_secs_f64() * 1e3,
                f.as_secs_f64() * 1e3
            ),
            (Err(e), _) | (_, Err(e)) => println!("{}: does not load:\n{e}", spec.display()),
        }
    }
}
