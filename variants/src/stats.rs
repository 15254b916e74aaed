//! Lookup statistics, counted without a shared hot cache line.
//!
//! Counting every L2 hit in one shared atomic would make all reader threads
//! fight over that cache line, costing more than the hit itself. Instead
//! each thread adds to one of a few cache-line-aligned stripes, and a read
//! sums the stripes. Counts are exact; a read taken while other threads
//! are counting may miss their latest increments.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Every event the caches count.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counter {
    L1Hit,
    L2Hit,
    /// A hit in the lock-protected table: L3, or a variant set's map.
    ResidentHit,
    Miss,
    Compilation,
    CompileFailure,
    Eviction,
}

const COUNTERS: usize = 7;
const STRIPES: usize = 8;

/// One thread group's counters, alone on a pair of cache lines (128 bytes
/// also defeats adjacent-line prefetching).
#[repr(align(128))]
struct Stripe([AtomicU64; COUNTERS]);

/// A set of striped counters.
pub(crate) struct Counters {
    stripes: Box<[Stripe]>,
}

/// The stripe the current thread counts into.
fn stripe_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

impl Counters {
    pub(crate) fn new() -> Self {
        Self {
            stripes: (0..STRIPES)
                .map(|_| Stripe(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn add(&self, counter: Counter, n: u64) {
        if n != 0 {
            // Relaxed: counters order nothing, they only need to be exact.
            self.stripes[stripe_index()].0[counter as usize].fetch_add(n, Ordering::Relaxed);
        }
    }

    pub(crate) fn get(&self, counter: Counter) -> u64 {
        self.stripes
            .iter()
            .map(|stripe| stripe.0[counter as usize].load(Ordering::Relaxed))
            .sum()
    }
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counters").finish_non_exhaustive()
    }
}

/// Statistics of a [`RoutineCache`](crate::RoutineCache).
///
/// Every lookup is counted exactly once: as a hit at the level that served
/// it, or as a miss. A miss either ran the compiler or waited for another
/// thread that was already compiling the same key, so
/// `misses >= compilations`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Hits in call-site inline caches. Counted by the
    /// [`Reader`](crate::Reader) the site was used with, and reported on
    /// that reader's next L2 miss, flush or drop.
    pub l1_hits: u64,
    /// Hits in the lock-free snapshot (through a reader: reported on its
    /// next L2 miss, flush or drop).
    pub l2_hits: u64,
    /// Hits in the mutex-protected LRU cache.
    pub l3_hits: u64,
    /// Lookups no level could serve.
    pub misses: u64,
    /// Times the compiler ran, including failed runs.
    pub compilations: u64,
    /// Compiler runs that returned an error (or panicked).
    pub compile_failures: u64,
    /// Routines dropped from L3 to stay within its capacity.
    pub evictions: u64,
}

impl CacheStats {
    pub(crate) fn read(counters: &Counters) -> Self {
        Self {
            l1_hits: counters.get(Counter::L1Hit),
            l2_hits: counters.get(Counter::L2Hit),
            l3_hits: counters.get(Counter::ResidentHit),
            misses: counters.get(Counter::Miss),
            compilations: counters.get(Counter::Compilation),
            compile_failures: counters.get(Counter::CompileFailure),
            evictions: counters.get(Counter::Eviction),
        }
    }

    /// All lookups counted so far.
    pub fn lookups(&self) -> u64 {
        self.l1_hits + self.l2_hits + self.l3_hits + self.misses
    }
}

/// Statistics of a [`Variants`](crate::Variants) set.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct VariantStats {
    /// Lookups that found the variant already compiled.
    pub hits: u64,
    /// Lookups that compiled the variant or waited for its compilation.
    pub misses: u64,
    /// Times the compiler ran, including failed runs.
    pub compilations: u64,
    /// Compiler runs that returned an error (or panicked).
    pub compile_failures: u64,
}

impl VariantStats {
    pub(crate) fn read(counters: &Counters) -> Self {
        Self {
            hits: counters.get(Counter::ResidentHit),
            misses: counters.get(Counter::Miss),
            compilations: counters.get(Counter::Compilation),
            compile_failures: counters.get(Counter::CompileFailure),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_many_threads_are_exact() {
        let counters = Counters::new();
        std::thread::scope(|s| {
            for _ in 0..12 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        counters.add(Counter::L2Hit, 1);
                    }
                    counters.add(Counter::Eviction, 3);
                });
            }
        });
        let stats = CacheStats::read(&counters);
        assert_eq!(stats.l2_hits, 12_000);
        assert_eq!(stats.evictions, 36);
        assert_eq!(stats.lookups(), 12_000);
    }

    #[test]
    fn stripes_do_not_share_cache_lines() {
        assert_eq!(std::mem::align_of::<Stripe>(), 128);
        assert!(std::mem::size_of::<Stripe>() <= 128);
    }
}
