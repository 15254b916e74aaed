//! Model checking of the small concurrent core with `loom`: every
//! interleaving of a few threads is run (exhaustively: no preemption bound).
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p lathe-variants --release --test loom`
//!
//! Under `--cfg loom` the crate's mutexes and condition variable are
//! loom's (see `src/sync.rs`). The L2 snapshot's `ArcSwap` is not
//! instrumented: loom runs its threads on one OS thread and switches only
//! at instrumented operations, so a snapshot load or store is modelled as
//! one indivisible step.
#![cfg(loom)]

use std::sync::Arc;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use lathe_variants::*;

/// Explores every interleaving (no preemption bound: these models are
/// small enough to check exhaustively in well under a second) and prints
/// how many executions that took, so a model that silently stopped
/// exploring would show up as a count of 1.
fn model(test: impl Fn() + Sync + Send + 'static) {
    let executions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    let builder = loom::model::Builder::new();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        test();
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    println!("explored {executions} interleavings");
    assert!(executions > 1, "the model explored only one interleaving");
}

#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("refused")
    }
}

impl std::error::Error for Refused {}

#[test]
fn concurrent_first_use_compiles_a_variant_once() {
    model(|| {
        let compilations = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&compilations);
        let variants = Arc::new(Variants::new(move |key: &u32| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Refused>(key * 10)
        }));
        let other = Arc::clone(&variants);
        let racer = thread::spawn(move || other.get(&1).expect("compiles"));
        let mine = variants.get(&1).expect("compiles");
        let theirs = racer.join().expect("no panic");
        assert_eq!(*mine, 10);
        assert!(Arc::ptr_eq(&mine, &theirs));
        assert_eq!(compilations.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn three_threads_two_keys_one_compilation_each() {
    model(|| {
        let compilations = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&compilations);
        let variants = Arc::new(Variants::new(move |key: &u32| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Refused>(key * 10)
        }));
        let racers: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|key| {
                let variants = Arc::clone(&variants);
                thread::spawn(move || variants.get(&key).expect("compiles"))
            })
            .collect();
        let mine = variants.get(&1).expect("compiles");
        let theirs: Vec<_> = racers
            .into_iter()
            .map(|r| r.join().expect("no panic"))
            .collect();
        assert!(Arc::ptr_eq(&mine, &theirs[0]));
        assert_eq!(*theirs[1], 20);
        assert_eq!(compilations.load(Ordering::SeqCst), 2);
        assert_eq!(variants.len(), Ok(2));
    });
}

#[test]
fn failed_compilations_never_overlap_and_are_not_stored() {
    model(|| {
        let running = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let (running2, runs2) = (Arc::clone(&running), Arc::clone(&runs));
        let variants = Arc::new(Variants::new(move |_: &u32| {
            assert_eq!(
                running2.fetch_add(1, Ordering::SeqCst),
                0,
                "overlapping compilations"
            );
            runs2.fetch_add(1, Ordering::SeqCst);
            running2.fetch_sub(1, Ordering::SeqCst);
            Err::<u32, _>(Refused)
        }));
        let other = Arc::clone(&variants);
        let racer = thread::spawn(move || other.get(&1).is_err());
        assert!(variants.get(&1).is_err());
        assert!(racer.join().expect("no panic"));
        // Either the second lookup waited for the first compilation (one
        // run) or arrived after it failed and tried again (two runs).
        let runs = runs.load(Ordering::SeqCst);
        assert!(runs == 1 || runs == 2, "{runs} runs");
        assert_eq!(variants.contains(&1), Ok(false));
    });
}

#[test]
fn bounded_l3_with_a_racing_barrier() {
    model(|| {
        let cache = Arc::new(
            RoutineCache::new(1, |key: &u32| Ok::<_, Refused>(*key + 100)).expect("capacity 1"),
        );
        let handles: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|key| {
                let cache = Arc::clone(&cache);
                thread::spawn(move || {
                    // One thread goes through a reader, the other does not.
                    let routine = if key == 1 {
                        cache.reader().get(&key).expect("compiles")
                    } else {
                        cache.get(&key).expect("compiles")
                    };
                    assert_eq!(*routine, key + 100);
                })
            })
            .collect();
        cache.barrier().expect("not poisoned");
        assert!(cache.snapshot_len() <= 1);
        for handle in handles {
            handle.join().expect("no panic");
        }
        let stats = cache.stats();
        assert_eq!(cache.resident_len(), Ok(1));
        assert_eq!(stats.compilations, 2);
        assert_eq!(stats.evictions, 1);
        // Whatever the snapshot holds is the right routine for its key.
        for key in [1u32, 2] {
            if cache.in_snapshot(&key) {
                assert_eq!(cache.get(&key).map(|r| *r).ok(), Some(key + 100));
            }
        }
    });
}

#[test]
fn sampler_sharers_and_ids_under_concurrent_create_and_destroy() {
    model(|| {
        let samplers = Arc::new(SamplerInterner::new());
        let linear = SamplerState {
            min_filter: Filter::Linear,
            ..SamplerState::default()
        };
        let held = samplers.acquire(&linear).expect("id");
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let samplers = Arc::clone(&samplers);
                thread::spawn(move || {
                    // Create and destroy a sampler with the same state: it
                    // must share the id that `held` keeps alive.
                    let id = samplers.acquire(&linear).expect("id");
                    samplers.release(id).expect("held");
                    id
                })
            })
            .collect();
        for handle in handles {
            assert_eq!(handle.join().expect("no panic"), held);
        }
        assert_eq!(samplers.sharers(held), Ok(1));
        samplers.release(held).expect("held");
        assert_eq!(samplers.is_empty(), Ok(true));
    });
}

#[test]
fn a_dying_sampler_state_gets_a_fresh_id_never_the_old_one() {
    model(|| {
        let samplers = Arc::new(SamplerInterner::new());
        let state = SamplerState::default();
        let first = samplers.acquire(&state).expect("id");
        let other = Arc::clone(&samplers);
        let creator = thread::spawn(move || {
            let id = other.acquire(&state).expect("id");
            let still_means_state = other.state(id) == Ok(state);
            other.release(id).expect("held");
            (id, still_means_state)
        });
        samplers.release(first).expect("held");
        let (id, still_means_state) = creator.join().expect("no panic");
        // Either it shared `first` before the release, or `first` died and
        // the state was re-registered under a new id.
        assert!(still_means_state);
        assert!(id == first || id.raw() > first.raw());
        assert_eq!(samplers.is_empty(), Ok(true));
    });
}
