//! Per-thread L2 readers.
//!
//! Loading the shared snapshot pointer safely (so a barrier cannot free
//! the snapshot mid-lookup) costs a few atomic read-modify-write operations
//! per lookup. A [`Reader`] instead keeps its own reference to the current
//! snapshot and only checks, with one plain atomic load of a pointer that
//! changes only at barriers, whether a newer one has been published. Its
//! hit counts live in the reader too and reach the cache's statistics in
//! one step on its next L2 miss (already a slow path), when it is flushed,
//! or when it is dropped, so an L2 hit writes to no memory shared with
//! other threads.

use std::sync::Arc;

use arc_swap::ArcSwap;
use arc_swap::cache::Cache;

use crate::compiler::Compiler;
use crate::error::LookupError;
use crate::routine_cache::{Level, RoutineCache, Snapshot, Traced};
use crate::stats::Counter;

type SnapshotCache<'c, K, V> = Cache<&'c ArcSwap<Snapshot<K, V>>, Arc<Snapshot<K, V>>>;

/// One thread's lock-free view of a [`RoutineCache`].
///
/// Create one per worker thread with [`RoutineCache::reader`] and use it
/// for every lookup that thread makes. Each lookup sees the snapshot of the
/// latest barrier that completed before it, exactly as
/// [`RoutineCache::get`] does. The reader holds on to that snapshot's
/// memory until its next lookup after a barrier.
///
/// ```
/// use lathe_variants::{Level, RoutineCache};
///
/// let cache = RoutineCache::new(64, |key: &u32| Ok::<_, std::fmt::Error>(key * 2))?;
/// cache.get(&21)?;
/// cache.barrier()?;
/// let mut reader = cache.reader();
/// assert_eq!(reader.with(&21, |routine| *routine)?, 42); // no refcount traffic
/// assert_eq!(reader.get_traced(&21)?.1, Level::L2);
/// drop(reader); // reports its hits
/// assert_eq!(cache.stats().l2_hits, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader<'c, K, C: Compiler<K>> {
    cache: &'c RoutineCache<K, C>,
    snapshot: SnapshotCache<'c, K, C::Output>,
    l1_hits: u64,
    l2_hits: u64,
}

impl<K, C: Compiler<K>> std::fmt::Debug for Reader<'_, K, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("cache", self.cache)
            .field("l1_hits", &self.l1_hits)
            .field("l2_hits", &self.l2_hits)
            .finish_non_exhaustive()
    }
}

impl<'c, K, C> Reader<'c, K, C>
where
    K: std::hash::Hash + Eq + Clone,
    C: Compiler<K>,
{
    pub(crate) fn new(cache: &'c RoutineCache<K, C>) -> Self {
        Self {
            cache,
            snapshot: Cache::new(&cache.l2),
            l1_hits: 0,
            l2_hits: 0,
        }
    }

    /// The cache this reader reads.
    pub fn cache(&self) -> &'c RoutineCache<K, C> {
        self.cache
    }

    /// Runs `f` on the routine for `key`, compiling it on first use. On an
    /// L2 hit the routine is borrowed from the snapshot: no reference count
    /// is touched, so threads sharing a hot routine do not contend.
    #[inline]
    pub fn with<T>(
        &mut self,
        key: &K,
        f: impl FnOnce(&C::Output) -> T,
    ) -> Result<T, LookupError<C::Error>> {
        if let Some(routine) = self.snapshot.load().routines.get(key) {
            self.l2_hits += 1;
            return Ok(f(routine));
        }
        self.flush_stats();
        let (routine, _) = self.cache.l3_get(key)?;
        Ok(f(&routine))
    }

    /// The routine for `key`, compiling it on first use.
    #[inline]
    pub fn get(&mut self, key: &K) -> Result<Arc<C::Output>, LookupError<C::Error>> {
        self.get_traced(key).map(|(routine, _)| routine)
    }

    /// Like [`get`](Self::get), also saying which level served the lookup.
    #[inline]
    pub fn get_traced(&mut self, key: &K) -> Traced<K, C> {
        if let Some(routine) = self.snapshot.load().routines.get(key) {
            self.l2_hits += 1;
            return Ok((Arc::clone(routine), Level::L2));
        }
        self.flush_stats();
        self.cache.l3_get(key)
    }

    /// Counts an L1 hit made by an inline cache on this reader's behalf.
    #[inline]
    pub(crate) fn count_l1_hit(&mut self) {
        self.l1_hits += 1;
    }

    /// Reports the hits counted so far to the cache's statistics.
    pub fn flush_stats(&mut self) {
        let counters = self.cache.counters();
        counters.add(Counter::L1Hit, std::mem::take(&mut self.l1_hits));
        counters.add(Counter::L2Hit, std::mem::take(&mut self.l2_hits));
    }
}

impl<K, C: Compiler<K>> Drop for Reader<'_, K, C> {
    fn drop(&mut self) {
        let counters = self.cache.counters();
        counters.add(Counter::L1Hit, self.l1_hits);
        counters.add(Counter::L2Hit, self.l2_hits);
    }
}
