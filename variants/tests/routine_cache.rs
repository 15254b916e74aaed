//! Deterministic behaviour of the L1/L2/L3 levels, failures and statistics.
#![cfg(not(loom))]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use lathe_variants::*;

#[derive(Debug)]
struct Refused(u32);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused to compile key {}", self.0)
    }
}

impl std::error::Error for Refused {}

fn doubling(key: &u32) -> Result<u64, Refused> {
    Ok(u64::from(*key) * 2)
}

#[test]
fn l2_reflects_inserts_and_evictions_only_after_a_barrier() {
    let cache = RoutineCache::new(2, doubling).expect("non-zero capacity");
    assert_eq!(
        cache.get_traced(&1).map(|(r, l)| (*r, l)).ok(),
        Some((2, Level::Compiled))
    );
    assert!(!cache.in_snapshot(&1));
    assert_eq!(cache.get_traced(&1).map(|(_, l)| l).ok(), Some(Level::L3));

    assert_eq!(cache.barrier(), Ok(true));
    assert!(cache.in_snapshot(&1));
    assert_eq!(cache.get_traced(&1).map(|(_, l)| l).ok(), Some(Level::L2));
    // Nothing changed since: the barrier keeps the snapshot.
    assert_eq!(cache.barrier(), Ok(false));

    // Fill L3 past capacity: key 1 is evicted from L3 but L2 keeps serving
    // it (correctly: the routine is still the one for key 1) until a barrier.
    cache.get(&2).expect("compiles");
    cache.get(&3).expect("compiles");
    assert_eq!(cache.is_resident(&1), Ok(false));
    assert_eq!(cache.resident_len(), Ok(2));
    assert!(cache.in_snapshot(&1));
    assert!(!cache.in_snapshot(&2));
    assert_eq!(
        cache.get_traced(&1).map(|(r, l)| (*r, l)).ok(),
        Some((2, Level::L2))
    );

    assert_eq!(cache.barrier(), Ok(true));
    assert!(!cache.in_snapshot(&1));
    assert!(cache.in_snapshot(&2) && cache.in_snapshot(&3));
    assert_eq!(cache.snapshot_len(), 2);
    // Evicted and gone from L2: compiled again.
    assert_eq!(
        cache.get_traced(&1).map(|(_, l)| l).ok(),
        Some(Level::Compiled)
    );

    let stats = cache.stats();
    assert_eq!(stats.compilations, 4);
    assert_eq!(stats.evictions, 2);
    assert_eq!(stats.l2_hits, 2);
    assert_eq!(stats.l3_hits, 1);
    assert_eq!(stats.misses, 4);
    assert_eq!(stats.lookups(), 7);
}

#[test]
fn l3_hits_refresh_recency() {
    let cache = RoutineCache::new(2, doubling).expect("non-zero capacity");
    cache.get(&1).expect("compiles");
    cache.get(&2).expect("compiles");
    cache.get(&1).expect("L3 hit refreshes key 1");
    cache.get(&3).expect("compiles, evicting key 2");
    assert_eq!(cache.is_resident(&1), Ok(true));
    assert_eq!(cache.is_resident(&2), Ok(false));
}

#[test]
fn failed_compilation_is_returned_and_not_cached() {
    let attempts = AtomicUsize::new(0);
    let cache = RoutineCache::new(4, |key: &u32| {
        // Fails the first time only.
        if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
            Err(Refused(*key))
        } else {
            Ok(*key)
        }
    })
    .expect("non-zero capacity");
    match cache.get(&9) {
        Err(LookupError::Compile(error)) => {
            assert_eq!(error.to_string(), "refused to compile key 9")
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    assert_eq!(cache.is_resident(&9), Ok(false));
    cache.barrier().expect("not poisoned");
    assert!(!cache.in_snapshot(&9));
    assert_eq!(cache.get(&9).map(|r| *r).ok(), Some(9));
    let stats = cache.stats();
    assert_eq!((stats.compilations, stats.compile_failures), (2, 1));
}

type Lookup = Result<Arc<u32>, LookupError<Refused>>;

/// What each party saw in [`race_with_waiter`].
struct Race {
    /// The compiling thread's result; `None` if the compiler panicked.
    compiled: Option<Lookup>,
    waited: Lookup,
    /// A lookup made after both finished.
    afterwards: Lookup,
    stats: CacheStats,
}

/// Compiles key 0 with `outcome(attempt)` while a second thread is
/// waiting for that same compilation, then looks the key up once more.
fn race_with_waiter(outcome: impl Fn(usize) -> Result<u32, Refused> + Sync) -> Race {
    let attempts = AtomicUsize::new(0);
    let waiter_committed = AtomicBool::new(false);
    let cache = RoutineCache::new(4, |_: &u32| {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst);
        while !waiter_committed.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        outcome(attempt)
    })
    .expect("non-zero capacity");
    std::thread::scope(|s| {
        let compiling =
            s.spawn(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cache.get(&0))));
        while attempts.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let waiting = s.spawn(|| cache.get(&0));
        // A miss is counted under the table lock; a lookup that missed while
        // the key is in flight is committed to waiting for that compilation.
        while cache.stats().misses < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        waiter_committed.store(true, Ordering::SeqCst);
        let waited = waiting.join().expect("the waiter does not panic");
        let compiled = compiling.join().expect("the panic is caught").ok();
        let afterwards = cache.get(&0);
        Race {
            compiled,
            waited,
            afterwards,
            stats: cache.stats(),
        }
    })
}

#[test]
fn a_waiter_gets_the_routine_its_compiler_produced() {
    let race = race_with_waiter(|attempt| Ok(10 + attempt as u32));
    let compiled = race.compiled.and_then(Result::ok).expect("compiled");
    let waited = race.waited.expect("waited");
    assert!(Arc::ptr_eq(&compiled, &waited));
    assert_eq!(*compiled, 10);
    assert_eq!(race.afterwards.map(|r| *r).ok(), Some(10));
    assert_eq!(race.stats.compilations, 1);
    assert_eq!(race.stats.misses, 2);
    assert_eq!(race.stats.l3_hits, 1);
}

#[test]
fn a_waiter_gets_the_same_error_and_the_next_lookup_retries() {
    let race = race_with_waiter(|attempt| if attempt == 0 { Err(Refused(0)) } else { Ok(7) });
    let (Some(Err(LookupError::Compile(first))), Err(LookupError::Compile(second))) =
        (race.compiled, race.waited)
    else {
        panic!("both parties should see the compile error");
    };
    assert!(
        Arc::ptr_eq(&first, &second),
        "the waiter shares the compiler's error"
    );
    assert_eq!(race.afterwards.map(|r| *r).ok(), Some(7));
    assert_eq!(race.stats.compilations, 2);
    assert_eq!(race.stats.compile_failures, 1);
}

#[test]
fn a_panicking_compiler_wakes_its_waiters_and_the_key_recovers() {
    let race = race_with_waiter(|attempt| {
        if attempt == 0 {
            panic!("compiler bug (expected by this test)");
        }
        Ok(3)
    });
    assert!(race.compiled.is_none(), "the compiling thread panicked");
    assert!(matches!(race.waited, Err(LookupError::CompilerPanicked)));
    assert_eq!(race.afterwards.map(|r| *r).ok(), Some(3));
    assert_eq!(race.stats.compile_failures, 1);
}

#[test]
fn inline_cache_serves_repeats_and_misses_on_any_id_change() {
    let samplers = SamplerInterner::new();
    let nearest = samplers.acquire(&SamplerState::default()).expect("acquire");
    let linear = samplers
        .acquire(&SamplerState {
            mag_filter: Filter::Linear,
            ..SamplerState::default()
        })
        .expect("acquire");
    let rgba = ImageViewState::color(1, ViewType::TwoD)
        .id()
        .expect("encodes");
    let depth = ImageViewState {
        aspect: Aspect::Depth,
        ..ImageViewState::color(2, ViewType::TwoD)
    }
    .id()
    .expect("encodes");
    let cache = RoutineCache::new(16, |key: &SamplingKey| Ok::<_, Refused>(*key))
        .expect("non-zero capacity");
    let mut reader = cache.reader();

    let mut site = InlineCache::new(SamplingOp(4));
    let mut expect = |reader: &mut Reader<'_, SamplingKey, _>, image, sampler, level| {
        let (routine, got) = site.get_traced(reader, image, sampler).expect("compiles");
        assert_eq!(
            **routine,
            SamplingKey {
                op: SamplingOp(4),
                image,
                sampler
            }
        );
        assert_eq!(got, level);
    };
    expect(&mut reader, rgba, nearest, Level::Compiled);
    expect(&mut reader, rgba, nearest, Level::L1);
    expect(&mut reader, rgba, nearest, Level::L1);
    expect(&mut reader, rgba, linear, Level::Compiled);
    expect(&mut reader, depth, linear, Level::Compiled);
    expect(&mut reader, rgba, nearest, Level::L3);
    cache.barrier().expect("not poisoned");
    expect(&mut reader, depth, linear, Level::L2);
    expect(&mut reader, depth, linear, Level::L1);

    // Another site with another op never sees this site's routines.
    let mut gather = InlineCache::new(SamplingOp(5));
    let routine = gather.get(&mut reader, rgba, nearest).expect("compiles");
    assert_eq!(routine.op, SamplingOp(5));

    // The reader reported its pending hits at its last L2 miss (the gather
    // site's compilation)...
    let stats = cache.stats();
    assert_eq!(stats.l1_hits, 3);
    assert_eq!(stats.l2_hits, 1);
    assert_eq!(stats.l3_hits, 1);
    assert_eq!(stats.compilations, 4);
    assert_eq!(stats.lookups(), 9);
    // ...and keeps newer hits until its next miss, flush or drop.
    gather.get(&mut reader, rgba, nearest).expect("L1 hit");
    assert_eq!(cache.stats().l1_hits, 3);
    reader.flush_stats();
    assert_eq!(cache.stats().l1_hits, 4);
}

#[test]
fn inline_cache_never_returns_another_caches_routine() {
    let sampler = SamplerInterner::new()
        .acquire(&SamplerState::default())
        .expect("acquire");
    let image = ImageViewState::color(1, ViewType::OneD)
        .id()
        .expect("encodes");
    let first = RoutineCache::new(4, |_: &SamplingKey| Ok::<_, Refused>("first"))
        .expect("non-zero capacity");
    let second = RoutineCache::new(4, |_: &SamplingKey| Ok::<_, Refused>("second"))
        .expect("non-zero capacity");
    let (mut on_first, mut on_second) = (first.reader(), second.reader());
    let mut site = InlineCache::new(SamplingOp(0));
    assert_eq!(
        **site.get(&mut on_first, image, sampler).expect("compiles"),
        "first"
    );
    assert_eq!(
        **site.get(&mut on_first, image, sampler).expect("L1 hit"),
        "first"
    );
    assert_eq!(
        **site.get(&mut on_second, image, sampler).expect("compiles"),
        "second"
    );
    assert_eq!(
        **site.get(&mut on_first, image, sampler).expect("L3 hit"),
        "first"
    );
    drop((on_first, on_second));
    assert_eq!(first.stats().l1_hits, 1);
    assert_eq!(first.stats().l3_hits, 1);
    assert_eq!(second.stats().lookups(), 1);
}

#[test]
fn readers_see_a_barrier_at_their_next_lookup_and_borrow_on_l2_hits() {
    let cache = RoutineCache::new(8, doubling).expect("non-zero capacity");
    let mut reader = cache.reader();
    assert_eq!(
        reader.get_traced(&4).map(|(r, l)| (*r, l)).ok(),
        Some((8, Level::Compiled))
    );
    assert_eq!(reader.get_traced(&4).map(|(_, l)| l).ok(), Some(Level::L3));
    cache.barrier().expect("not poisoned");
    // The reader picks up the new snapshot without being told.
    assert_eq!(reader.get_traced(&4).map(|(_, l)| l).ok(), Some(Level::L2));
    let routine = cache.get(&4).expect("L2 hit");
    // An L2 hit through `with` takes no reference to the routine.
    let count_during = reader
        .with(&4, |value| (*value, Arc::strong_count(&routine)))
        .expect("L2 hit");
    assert_eq!(count_during, (8, Arc::strong_count(&routine)));
    assert_eq!(reader.with(&5, |value| *value).ok(), Some(10));
    drop(reader);
    let stats = cache.stats();
    assert_eq!(
        (stats.l2_hits, stats.l3_hits, stats.compilations),
        (3, 1, 2)
    );
}
