//! Routine-cache lookup latency and throughput against a single mutex
//! around an LRU map, the obvious alternative a user would write.
//!
//! Run: `cargo bench -p lathe-variants`
//!
//! Every measurement uses the same routines and the same key mix: 256
//! sampling keys (4 ops x 8 image views x 8 samplers), visited in one fixed
//! pseudo-random order, all already compiled (these are hit paths). Each
//! figure is the median of several runs; the machine is shared, so the
//! minimum is printed too.

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lathe_variants::*;

const CAPACITY: usize = 1024;
const MIX_LEN: usize = 4096;
const RUNS: usize = 11;

type Compile = fn(&SamplingKey) -> Result<u64, std::convert::Infallible>;

fn compile(key: &SamplingKey) -> Result<u64, std::convert::Infallible> {
    Ok(u64::from(key.op.0) << 40 | u64::from(key.image.raw()) << 8 | u64::from(key.sampler.raw()))
}

/// The baseline: one mutex around an LRU map, compiling on a miss. Like
/// `Reader::with`, it hands the caller a borrow of the routine (under the
/// lock) rather than a new reference count.
struct MutexLru {
    map: Mutex<LruMap<SamplingKey, Arc<u64>>>,
}

impl MutexLru {
    fn with<T>(&self, key: &SamplingKey, f: impl FnOnce(&u64) -> T) -> T {
        let mut map = self.map.lock().expect("baseline mutex");
        if let Some(routine) = map.get(key) {
            return f(routine);
        }
        let routine = Arc::new(compile(key).unwrap_or_default());
        map.insert(*key, Arc::clone(&routine));
        f(&routine)
    }
}

fn key_mix() -> (Vec<SamplingKey>, SamplerInterner) {
    let samplers = SamplerInterner::new();
    let sampler_ids: Vec<SamplerId> = (0..8)
        .map(|i| {
            samplers
                .acquire(&SamplerState {
                    max_lod: i as f32,
                    ..SamplerState::default()
                })
                .expect("sampler id")
        })
        .collect();
    let mut keys = Vec::new();
    for op in 0..4 {
        for format in 0..8 {
            let image = ImageViewState::color(format, ViewType::TwoD)
                .id()
                .expect("image id");
            for &sampler in &sampler_ids {
                keys.push(SamplingKey {
                    op: SamplingOp(op),
                    image,
                    sampler,
                });
            }
        }
    }
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mix = (0..MIX_LEN)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            keys[(state % keys.len() as u64) as usize]
        })
        .collect();
    (mix, samplers)
}

/// Median and minimum of `RUNS` timings of `run`, which performs `ops`
/// operations; in nanoseconds per operation.
fn ns_per_op(ops: u64, mut run: impl FnMut()) -> (f64, f64) {
    let mut samples: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_nanos() as f64 / ops as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[RUNS / 2], samples[0])
}

fn report(name: &str, (median, min): (f64, f64)) -> (f64, f64) {
    println!(
        "{name:<44} {median:>8.2} ns/op {:>7.1} Mops/s | best {min:>6.2} ns/op {:>7.1} Mops/s",
        1e3 / median,
        1e3 / min
    );
    (median, min)
}

/// Total throughput of `threads` threads each running `per_thread` over
/// the mix for `rounds` rounds, as (median, best) ns per operation of the
/// whole group (so ops/s = 1e9 / ns).
fn throughput<F>(threads: usize, rounds: usize, per_thread: F) -> (f64, f64)
where
    F: Fn(usize, usize) + Sync,
{
    let ops = (threads * rounds * MIX_LEN) as u64;
    ns_per_op(ops, || {
        std::thread::scope(|s| {
            for thread in 0..threads {
                let per_thread = &per_thread;
                s.spawn(move || per_thread(thread, rounds));
            }
        });
    })
}

fn main() {
    let (mix, _samplers) = key_mix();
    let cache: RoutineCache<SamplingKey, Compile> =
        RoutineCache::new(CAPACITY, compile as Compile).expect("capacity");
    let baseline = MutexLru {
        map: Mutex::new(LruMap::new(NonZeroUsize::new(CAPACITY).expect("capacity"))),
    };
    for key in &mix {
        cache.get(key).expect("compiles");
        baseline.with(key, |_| ());
    }
    cache.barrier().expect("barrier");
    assert_eq!(cache.snapshot_len(), 256);

    println!(
        "lathe-variants routine cache: {} keys, {MIX_LEN}-lookup mix, median of {RUNS} runs",
        256
    );
    println!("-- latency, 1 thread --");

    let rounds = 400;
    let ops = (rounds * MIX_LEN) as u64;
    let first = mix[0];
    let mut reader = cache.reader();
    let mut site = InlineCache::new(first.op);
    let l1 = report(
        "L1 hit (inline cache, same ids)",
        ns_per_op(ops, || {
            for _ in 0..rounds * MIX_LEN {
                let routine = site.get(
                    &mut reader,
                    black_box(first.image),
                    black_box(first.sampler),
                );
                black_box(routine.map(|r| **r).ok());
            }
        }),
    );
    let l2 = report(
        "L2 hit (Reader::with, borrowed routine)",
        ns_per_op(ops, || {
            for _ in 0..rounds {
                for key in &mix {
                    black_box(reader.with(black_box(key), |r| *r).ok());
                }
            }
        }),
    );
    report(
        "L2 hit (RoutineCache::get, no reader, Arc)",
        ns_per_op(ops, || {
            for _ in 0..rounds {
                for key in &mix {
                    black_box(cache.get(black_box(key)).map(|r| *r).ok());
                }
            }
        }),
    );
    let fresh: RoutineCache<SamplingKey, Compile> =
        RoutineCache::new(CAPACITY, compile as Compile).expect("capacity");
    for key in &mix {
        fresh.get(key).expect("compiles");
    }
    report(
        "L3 hit (no barrier yet: mutex + LRU)",
        ns_per_op(ops, || {
            for _ in 0..rounds {
                for key in &mix {
                    black_box(fresh.get(black_box(key)).map(|r| *r).ok());
                }
            }
        }),
    );
    let base = report(
        "baseline Mutex<LruMap> hit",
        ns_per_op(ops, || {
            for _ in 0..rounds {
                for key in &mix {
                    black_box(baseline.with(black_box(key), |r| *r));
                }
            }
        }),
    );

    println!("-- throughput (all threads together) --");
    let rounds = 2_000;
    let mut results = Vec::new();
    for threads in [1, 2] {
        // Threads start at different points of the mix so they do not walk
        // the same keys in lockstep.
        let l2 = report(
            &format!("L2 lookups (Reader::with), {threads} thread(s)"),
            throughput(threads, rounds, |thread, rounds| {
                let mut reader = cache.reader();
                for _ in 0..rounds {
                    for i in 0..MIX_LEN {
                        let key = &mix[(i + thread * 1777) % MIX_LEN];
                        black_box(reader.with(black_box(key), |r| *r).ok());
                    }
                }
            }),
        );
        let base = report(
            &format!("baseline Mutex<LruMap>, {threads} thread(s)"),
            throughput(threads, rounds, |thread, rounds| {
                for _ in 0..rounds {
                    for i in 0..MIX_LEN {
                        let key = &mix[(i + thread * 1777) % MIX_LEN];
                        black_box(baseline.with(black_box(key), |r| *r));
                    }
                }
            }),
        );
        results.push((threads, l2, base));
    }

    println!("-- summary (median | best) --");
    println!(
        "L1 hit {:.2} | {:.2} ns; L2 hit {:.2} | {:.2} ns; baseline hit {:.2} | {:.2} ns",
        l1.0, l1.1, l2.0, l2.1, base.0, base.1
    );
    for (threads, l2, base) in results {
        println!(
            "{threads} thread(s): L2 / baseline throughput = {:.1}x | {:.1}x",
            base.0 / l2.0,
            base.1 / l2.1
        );
    }
    drop(reader);
    let stats = cache.stats();
    println!(
        "cache stats: {} L1 hits, {} L2 hits, {} compilations",
        stats.l1_hits, stats.l2_hits, stats.compilations
    );
}
