//! The L3 and L2 levels: an LRU cache behind a mutex, and a lock-free
//! snapshot of it published at barriers.
//!
//! A lookup first consults the snapshot (L2) without any lock, so any
//! number of threads read it without contending. On a snapshot miss it
//! takes the L3 mutex, and on an L3 miss it compiles (once per key, see the
//! `once` module). Worker threads read L2 fastest through their own
//! [`Reader`](crate::Reader), which keeps the current snapshot at hand;
//! [`RoutineCache::get`] works from any thread without one, at the cost of
//! an atomic snapshot load per lookup.
//!
//! The snapshot changes only in [`RoutineCache::barrier`], which copies L3
//! into a fresh map and swaps it in. Between barriers L2 is frozen: newly
//! compiled routines are served from L3, and evicted ones may still be
//! served from L2 (a routine is immutable and stays valid for its key).
//!
//! Known trade-off (shared with the design this follows): hits served by
//! L2 do not refresh the routine's recency in L3, so a routine used only
//! through L2 ages there and may be evicted by a burst of new keys, to be
//! recompiled once a later barrier drops it from L2.

use std::collections::HashMap;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwap;

use crate::compiler::Compiler;
use crate::error::{LookupError, Poisoned, ZeroCapacity};
use crate::hash::FxBuildHasher;
use crate::lru::LruMap;
use crate::once::{CompileOnce, Served};
use crate::reader::Reader;
use crate::stats::{CacheStats, Counter, Counters};

/// Which level served a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// The call site's inline cache.
    L1,
    /// The lock-free snapshot.
    L2,
    /// The mutex-protected LRU cache.
    L3,
    /// No level: this lookup ran the compiler.
    Compiled,
    /// No level: another thread was compiling the key and this lookup
    /// waited for its result.
    Waited,
}

impl From<Served> for Level {
    fn from(served: Served) -> Self {
        match served {
            Served::Resident => Self::L3,
            Served::Compiled => Self::Compiled,
            Served::Waited => Self::Waited,
        }
    }
}

/// A routine and the level that served it, or why there is none.
pub(crate) type Traced<K, C> =
    Result<(Arc<<C as Compiler<K>>::Output>, Level), LookupError<<C as Compiler<K>>::Error>>;

/// What L2 readers see: an immutable copy of L3 as of one barrier.
pub(crate) struct Snapshot<K, V> {
    pub(crate) routines: HashMap<K, Arc<V>, FxBuildHasher>,
    /// The L3 generation this copy was taken at.
    generation: u64,
}

/// Distinguishes caches so an [`InlineCache`](crate::InlineCache) can tell
/// which one its entry came from.
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

type L3<K, C> = CompileOnce<
    K,
    <C as Compiler<K>>::Output,
    <C as Compiler<K>>::Error,
    LruMap<K, Arc<<C as Compiler<K>>::Output>>,
>;

/// A cache of compiled routines with a lock-free read level (L2) over a
/// bounded LRU (L3), compiling on a miss with the injected compiler.
///
/// Lookups never block on each other except on an L2 miss, which takes the
/// L3 mutex. Statistics are exact; hits made through a [`Reader`] are
/// reported on its next L2 miss, flush or drop.
///
/// ```
/// use lathe_variants::{Level, RoutineCache};
///
/// // The compile step is injected: here a "routine" is just a string.
/// let cache = RoutineCache::new(64, |key: &u32| Ok::<_, std::fmt::Error>(format!("routine {key}")))?;
/// let (routine, level) = cache.get_traced(&7)?;
/// assert_eq!((routine.as_str(), level), ("routine 7", Level::Compiled));
/// assert_eq!(cache.get_traced(&7)?.1, Level::L3); // L2 is not updated yet...
/// cache.barrier()?; // ...until a barrier publishes a new snapshot.
/// assert_eq!(cache.get_traced(&7)?.1, Level::L2);
/// assert_eq!(cache.stats().compilations, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RoutineCache<K, C: Compiler<K>> {
    id: u64,
    compiler: C,
    l3: L3<K, C>,
    pub(crate) l2: ArcSwap<Snapshot<K, C::Output>>,
    capacity: usize,
    counters: Counters,
}

impl<K, C> std::fmt::Debug for RoutineCache<K, C>
where
    C: Compiler<K>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutineCache")
            .field("id", &self.id)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<K, C> RoutineCache<K, C>
where
    K: Hash + Eq + Clone,
    C: Compiler<K>,
{
    /// An empty cache whose L3 holds at most `capacity` routines.
    pub fn new(capacity: usize, compiler: C) -> Result<Self, ZeroCapacity> {
        let bound = NonZeroUsize::new(capacity).ok_or(ZeroCapacity)?;
        Ok(Self {
            id: NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed),
            compiler,
            l3: CompileOnce::new(LruMap::new(bound)),
            l2: ArcSwap::from_pointee(Snapshot {
                routines: HashMap::default(),
                generation: 0,
            }),
            capacity,
            counters: Counters::new(),
        })
    }

    /// A per-thread handle for the fastest lock-free lookups.
    pub fn reader(&self) -> Reader<'_, K, C> {
        Reader::new(self)
    }

    /// The routine for `key`, compiling it on first use.
    ///
    /// Usable from any thread without a [`Reader`]; a reader is faster when
    /// one thread makes many lookups.
    #[inline]
    pub fn get(&self, key: &K) -> Result<Arc<C::Output>, LookupError<C::Error>> {
        self.get_traced(key).map(|(routine, _)| routine)
    }

    /// Like [`get`](Self::get), also saying which level served the lookup.
    pub fn get_traced(&self, key: &K) -> Traced<K, C> {
        if let Some(routine) = self.snapshot_get(key) {
            self.counters.add(Counter::L2Hit, 1);
            return Ok((routine, Level::L2));
        }
        self.l3_get(key)
    }

    /// The L3 path: the mutex-protected table, compiling on a miss.
    pub(crate) fn l3_get(&self, key: &K) -> Traced<K, C> {
        let (routine, served) =
            self.l3
                .get_or_compile(key, |key| self.compiler.compile(key), &self.counters)?;
        Ok((routine, served.into()))
    }

    #[inline]
    fn snapshot_get(&self, key: &K) -> Option<Arc<C::Output>> {
        // `load` borrows the current snapshot through arc-swap's debt
        // slots: no lock and no reference-count traffic on the snapshot.
        self.l2.load().routines.get(key).cloned()
    }

    /// Publishes the current contents of L3 as the new L2 snapshot. Returns
    /// whether anything changed since the previous barrier (if not, the old
    /// snapshot is kept and nothing is copied).
    ///
    /// Readers keep using the old snapshot until this returns; each lookup
    /// sees either the old or the new one in full.
    pub fn barrier(&self) -> Result<bool, Poisoned> {
        let table = self.l3.lock()?;
        if self.l2.load().generation == table.generation {
            return Ok(false);
        }
        let routines = table
            .residents
            .iter()
            .map(|(key, routine)| (key.clone(), Arc::clone(routine)))
            .collect();
        self.l2.store(Arc::new(Snapshot {
            routines,
            generation: table.generation,
        }));
        Ok(true)
    }

    /// The most routines L3 holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many routines L3 holds now.
    pub fn resident_len(&self) -> Result<usize, Poisoned> {
        self.l3.count()
    }

    /// Whether L3 holds `key` now (without refreshing its recency).
    pub fn is_resident(&self, key: &K) -> Result<bool, Poisoned> {
        self.l3.holds(key)
    }

    /// Whether the current L2 snapshot holds `key`.
    pub fn in_snapshot(&self, key: &K) -> bool {
        self.l2.load().routines.contains_key(key)
    }

    /// How many routines the current L2 snapshot holds.
    pub fn snapshot_len(&self) -> usize {
        self.l2.load().routines.len()
    }

    /// The injected compiler.
    pub fn compiler(&self) -> &C {
        &self.compiler
    }

    /// Counts so far (see [`CacheStats`] for what is counted when).
    pub fn stats(&self) -> CacheStats {
        CacheStats::read(&self.counters)
    }
}

impl<K, C: Compiler<K>> RoutineCache<K, C> {
    /// Identifies this cache to inline caches.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }
}
