//! Concurrency stress: many threads, random keys, random barriers.
//!
//! The interleavings vary from run to run, but every assertion is an
//! invariant that must hold in all of them:
//! - every lookup returns the routine compiled for exactly its key;
//! - a key is never compiled while it is resident or while another
//!   compilation of it is in flight;
//! - L3 never holds more than its capacity;
//! - an L2 hit only ever returns a routine that some barrier *started
//!   after the routine was compiled* could have published;
//! - the statistics add up.
#![cfg(not(loom))]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use lathe_variants::*;

/// Deterministic per-thread pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

/// What the test's compiler produces: enough to check who made it, when.
#[derive(Debug)]
struct Routine {
    key: SamplingKey,
    /// Barriers begun (by the test's count) when compilation finished.
    barriers_begun_at_compile: u64,
}

const OPS: u32 = 4;
const IMAGES: u16 = 8;
const SAMPLERS: usize = 8;
const CAPACITY: usize = 48;
const THREADS: usize = 4;
/// Smaller under Miri, which interprets every step and checks the
/// dependencies' `unsafe` (arc-swap) along the way.
const LOOKUPS_PER_THREAD: usize = if cfg!(miri) { 300 } else { 20_000 };

#[derive(Default)]
struct Violations {
    compiled_while_resident: AtomicU64,
    compiled_while_in_flight: AtomicU64,
    wrong_routine: AtomicU64,
    l2_before_barrier: AtomicU64,
    over_capacity: AtomicU64,
}

/// Answers whether the cache currently holds a key.
type ResidencyProbe = Box<dyn Fn(&SamplingKey) -> bool + Send + Sync>;

/// State shared by the test's compiler and its worker threads.
struct Shared {
    key_index: HashMap<SamplingKey, usize>,
    /// Compilations of each key currently running.
    in_flight: Vec<AtomicU32>,
    violations: Violations,
    /// Barriers are counted under the write lock and compilations read the
    /// count under the read lock, so a compilation never reads the count
    /// while a barrier is half done.
    barrier_gate: RwLock<()>,
    barriers_begun: AtomicU64,
    /// Asks the cache that owns the compiler whether a key is resident; the
    /// cache exists only after its compiler, so this is filled in later.
    residency: OnceLock<ResidencyProbe>,
}

#[test]
fn routine_cache_under_concurrent_lookups_and_barriers() {
    let samplers = SamplerInterner::new();
    let sampler_ids: Vec<SamplerId> = (0..SAMPLERS)
        .map(|i| {
            samplers
                .acquire(&SamplerState {
                    max_lod: i as f32,
                    ..SamplerState::default()
                })
                .expect("distinct sampler")
        })
        .collect();
    let image_ids: Vec<ImageViewId> = (0..IMAGES)
        .map(|format| {
            ImageViewState::color(format, ViewType::TwoD)
                .id()
                .expect("encodes")
        })
        .collect();
    let mut keys = Vec::new();
    for op in 0..OPS {
        for &image in &image_ids {
            for &sampler in &sampler_ids {
                keys.push(SamplingKey {
                    op: SamplingOp(op),
                    image,
                    sampler,
                });
            }
        }
    }
    let key_index: HashMap<SamplingKey, usize> =
        keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();

    let shared = Arc::new(Shared {
        in_flight: keys.iter().map(|_| AtomicU32::new(0)).collect(),
        key_index,
        violations: Violations::default(),
        barrier_gate: RwLock::new(()),
        barriers_begun: AtomicU64::new(0),
        residency: OnceLock::new(),
    });
    let compiler = {
        let shared = Arc::clone(&shared);
        move |key: &SamplingKey| {
            let slot = &shared.in_flight[shared.key_index[key]];
            if slot.fetch_add(1, Ordering::SeqCst) != 0 {
                shared
                    .violations
                    .compiled_while_in_flight
                    .fetch_add(1, Ordering::SeqCst);
            }
            if shared.residency.get().is_some_and(|resident| resident(key)) {
                shared
                    .violations
                    .compiled_while_resident
                    .fetch_add(1, Ordering::SeqCst);
            }
            // Widen the window in which other threads can collide with us.
            std::thread::yield_now();
            let barriers_begun_at_compile = {
                let _no_barrier_running = shared.barrier_gate.read().expect("gate");
                shared.barriers_begun.load(Ordering::SeqCst)
            };
            slot.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(Routine {
                key: *key,
                barriers_begun_at_compile,
            })
        }
    };
    let cache = Arc::new(RoutineCache::new(CAPACITY, compiler).expect("non-zero capacity"));
    let probe = Arc::downgrade(&cache);
    let _ = shared.residency.set(Box::new(move |key| {
        probe
            .upgrade()
            .is_some_and(|cache| cache.is_resident(key) == Ok(true))
    }));
    let (violations, barrier_gate, barriers_begun) = (
        &shared.violations,
        &shared.barrier_gate,
        &shared.barriers_begun,
    );

    let check = |key: &SamplingKey, routine: &Routine, level: Level| {
        if routine.key != *key {
            violations.wrong_routine.fetch_add(1, Ordering::SeqCst);
        }
        if level == Level::L2
            && barriers_begun.load(Ordering::SeqCst) <= routine.barriers_begun_at_compile
        {
            violations.l2_before_barrier.fetch_add(1, Ordering::SeqCst);
        }
        if cache.resident_len().expect("not poisoned") > CAPACITY || cache.snapshot_len() > CAPACITY
        {
            violations.over_capacity.fetch_add(1, Ordering::SeqCst);
        }
    };

    let total_lookups = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (keys, cache, check) = (&keys, &cache, &check);
                s.spawn(move || {
                    let mut rng = Rng::new(thread as u64 + 1);
                    // One inline cache per op, as a compiled shader would have.
                    let mut sites: Vec<InlineCache<Routine>> = (0..OPS)
                        .map(|op| InlineCache::new(SamplingOp(op)))
                        .collect();
                    let mut reader = cache.reader();
                    let mut lookups = 0u64;
                    for _ in 0..LOOKUPS_PER_THREAD {
                        // Skewed key mix: half the lookups hit a hot eighth of the keys.
                        let key = if rng.below(2) == 0 {
                            keys[rng.below(keys.len() / 8)]
                        } else {
                            keys[rng.below(keys.len())]
                        };
                        // Through an inline cache, a reader, or the cache itself.
                        let (routine, level) = match rng.below(3) {
                            0 => {
                                let site = &mut sites[key.op.0 as usize];
                                let (routine, level) = site
                                    .get_traced(&mut reader, key.image, key.sampler)
                                    .expect("infallible compiler");
                                (Arc::clone(routine), level)
                            }
                            1 => reader.get_traced(&key).expect("infallible compiler"),
                            _ => cache.get_traced(&key).expect("infallible compiler"),
                        };
                        check(&key, &routine, level);
                        lookups += 1;
                        if rng.below(64) == 0 {
                            let _exclusive = barrier_gate.write().expect("gate");
                            barriers_begun.fetch_add(1, Ordering::SeqCst);
                            cache.barrier().expect("not poisoned");
                        }
                    }
                    drop(reader);
                    lookups
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker finished"))
            .sum::<u64>()
    });

    assert_eq!(
        violations.wrong_routine.load(Ordering::SeqCst),
        0,
        "wrong routine returned"
    );
    assert_eq!(
        violations.compiled_while_in_flight.load(Ordering::SeqCst),
        0,
        "key compiled twice at once"
    );
    assert_eq!(
        violations.compiled_while_resident.load(Ordering::SeqCst),
        0,
        "resident key recompiled"
    );
    assert_eq!(
        violations.l2_before_barrier.load(Ordering::SeqCst),
        0,
        "L2 changed between barriers"
    );
    assert_eq!(
        violations.over_capacity.load(Ordering::SeqCst),
        0,
        "capacity exceeded"
    );

    let stats = cache.stats();
    let resident = cache.resident_len().expect("not poisoned") as u64;
    assert_eq!(stats.lookups(), total_lookups);
    assert_eq!(
        stats.compilations,
        resident + stats.evictions,
        "each compiled routine is resident or was evicted"
    );
    assert!(stats.misses >= stats.compilations);
    assert_eq!(stats.compile_failures, 0);
    // The run must have exercised every level and eviction, or it proves little.
    assert!(
        stats.l1_hits > 0 && stats.l2_hits > 0 && stats.l3_hits > 0,
        "{stats:?}"
    );
    assert!(stats.evictions > 0, "{stats:?}");
}

#[test]
fn variants_compile_each_key_once_under_concurrent_first_use() {
    const KEYS: u32 = if cfg!(miri) { 16 } else { 64 };
    let compilations: Vec<AtomicU32> = (0..KEYS).map(|_| AtomicU32::new(0)).collect();
    let variants = Variants::new(|key: &u32| {
        compilations[*key as usize].fetch_add(1, Ordering::SeqCst);
        std::thread::yield_now();
        Ok::<_, std::convert::Infallible>(format!("variant {key}"))
    });
    let seen: Vec<Vec<Arc<String>>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let variants = &variants;
                s.spawn(move || {
                    // Each thread asks in its own order, twice over.
                    let mut rng = Rng::new(thread as u64 + 100);
                    let mut order: Vec<u32> = (0..KEYS).collect();
                    for i in (1..order.len()).rev() {
                        order.swap(i, rng.below(i + 1));
                    }
                    let mut got = vec![None; KEYS as usize];
                    for &key in order.iter().chain(order.iter().rev()) {
                        let variant = variants.get(&key).expect("infallible compiler");
                        assert_eq!(*variant, format!("variant {key}"));
                        let first = got[key as usize].get_or_insert_with(|| Arc::clone(&variant));
                        assert!(Arc::ptr_eq(first, &variant), "a key returned two variants");
                    }
                    got.into_iter()
                        .map(|v| v.expect("every key asked"))
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker finished"))
            .collect()
    });
    for key in 0..KEYS as usize {
        assert_eq!(
            compilations[key].load(Ordering::SeqCst),
            1,
            "key {key} compiled more than once"
        );
        assert!(
            seen.iter()
                .all(|thread| Arc::ptr_eq(&thread[key], &seen[0][key]))
        );
    }
    let stats = variants.stats();
    assert_eq!(stats.compilations, u64::from(KEYS));
    assert_eq!(
        stats.hits + stats.misses,
        (THREADS * 2 * KEYS as usize) as u64
    );
    assert_eq!(variants.len(), Ok(KEYS as usize));
}

#[test]
fn sampler_ids_are_never_reused_under_concurrent_create_and_destroy() {
    const STATES: usize = 6;
    const STEPS: usize = if cfg!(miri) { 200 } else { 10_000 };
    let states: Vec<SamplerState> = (0..STATES)
        .map(|i| SamplerState {
            mip_lod_bias: i as f32 * 0.25,
            ..SamplerState::default()
        })
        .collect();
    let samplers = SamplerInterner::new();
    let log: Mutex<Vec<(u32, usize)>> = Mutex::new(Vec::new());

    let leftovers: Vec<Vec<(SamplerId, usize)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (samplers, states, log) = (&samplers, &states, &log);
                s.spawn(move || {
                    let mut rng = Rng::new(thread as u64 + 7);
                    // (id, state index) of the sampler objects this thread owns.
                    let mut held: Vec<(SamplerId, usize)> = Vec::new();
                    let mut seen = Vec::new();
                    for _ in 0..STEPS {
                        if held.is_empty() || rng.below(3) != 0 {
                            let state = rng.below(STATES);
                            let id = samplers.acquire(&states[state]).expect("ids left");
                            seen.push((id.raw(), state));
                            held.push((id, state));
                        } else {
                            let (id, state) = held.swap_remove(rng.below(held.len()));
                            // While we still hold it, the id means our state...
                            assert_eq!(samplers.state(id), Ok(states[state]));
                            // ...and creating another sampler with that state shares it.
                            assert_eq!(samplers.acquire(&states[state]), Ok(id));
                            samplers.release(id).expect("held twice");
                            samplers.release(id).expect("held once");
                        }
                        // Keep the held set small so entries really die and revive.
                        if held.len() > 4 {
                            let (id, _) = held.swap_remove(0);
                            samplers.release(id).expect("held");
                        }
                    }
                    log.lock().expect("log").extend(seen);
                    held
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker finished"))
            .collect()
    });

    // An id, once handed out, only ever stood for one state.
    let mut meaning: HashMap<u32, usize> = HashMap::new();
    for (id, state) in log.into_inner().expect("log") {
        assert_eq!(
            *meaning.entry(id).or_insert(state),
            state,
            "id {id} reused for another state"
        );
    }
    // States really died and came back under fresh ids.
    assert!(
        meaning.len() > STATES,
        "only {} ids were ever used",
        meaning.len()
    );

    // The sharer counts match the samplers still held.
    let mut held: HashMap<SamplerId, u64> = HashMap::new();
    for (id, _) in leftovers.iter().flatten() {
        *held.entry(*id).or_default() += 1;
    }
    assert_eq!(samplers.len(), Ok(held.len()));
    for (&id, &count) in &held {
        assert_eq!(samplers.sharers(id), Ok(count));
    }
    let live: HashSet<usize> = leftovers
        .iter()
        .flatten()
        .map(|(_, state)| *state)
        .collect();
    assert_eq!(live.len(), held.len(), "one live id per live state");
    for (id, _) in leftovers.into_iter().flatten() {
        samplers.release(id).expect("held");
    }
    assert_eq!(samplers.is_empty(), Ok(true));
}
