//! Engine throughput on the real specs: load (first use), disassembly and
//! assembly of instructions built field by field with a fixed seed.
//!
//! ```text
//! cargo bench -p lathe-isa --bench engine
//! ```

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Instructions built per leaf.
const PER_LEAF: usize = 4;

fn xorshift(seed: &mut u64) -> impl FnMut(u64) -> u64 + '_ {
    move |max| {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        if max == u64::MAX {
            *seed
        } else {
            *seed % (max + 1)
        }
    }
}

fn per_op(d: Duration, n: usize) -> f64 {
    d.as_nanos() as f64 / n.max(1) as f64
}

fn bench(spec: &Path, generation: u32) {
    let t = Instant::now();
    let isa = match lathe_isa::load_prechecked(spec, &lathe_isa::load::FsReader) {
        Ok(isa) => isa,
        Err(e) => {
            println!("{}: does not load\n{e}", spec.display());
            return;
        }
    };
    let load = t.elapsed();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut words = Vec::new();
    for leaf in isa.instructions().collect::<Vec<_>>() {
        for _ in 0..PER_LEAF {
            if let Some(w) = isa.build_word(leaf, generation, &mut xorshift(&mut seed)) {
                words.push(w);
            }
        }
    }
    let mut buf = String::new();
    let rounds = 20;
    let t = Instant::now();
    for _ in 0..rounds {
        for &w in &words {
            buf.clear();
            let _ = black_box(isa.disassemble_into(black_box(w), generation, &mut buf));
        }
    }
    let dis = per_op(t.elapsed(), rounds * words.len());
    let texts: Vec<String> = words
        .iter()
        .filter_map(|&w| isa.disassemble(w, generation).ok())
        .collect();
    let t = Instant::now();
    let mut failed = 0;
    for text in &texts {
        if black_box(isa.assemble(black_box(text), generation)).is_err() {
            failed += 1;
        }
    }
    let asm = per_op(t.elapsed(), texts.len());
    println!(
        "{} @{generation}: load {:.1} ms; {} instructions: disassemble {:.0} ns/op ({:.2} M/s), assemble {:.1} us/op ({} failed)",
        spec.display(),
        load.as_secs_f64() * 1e3,
        words.len(),
        dis,
        1e3 / dis,
        asm / 1e3,
        failed
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    bench(&root.join("specs/adreno/ir3.isa"), 600);
    bench(&root.join("specs/mali/valhall.isa"), 10);
}
