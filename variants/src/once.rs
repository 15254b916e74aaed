//! Compile-once: the protocol shared by the L3 cache and variant sets.
//!
//! A table under one mutex holds the resident (compiled) values and the
//! keys currently being compiled. A lookup that misses registers the key as
//! in flight, releases the lock, runs the compiler, then re-takes the lock
//! to admit the result. A second lookup of the same key meanwhile finds the
//! in-flight entry and sleeps on it instead of compiling again. Because the
//! resident check and the in-flight check happen under the same lock, a key
//! is compiled at most once while it is resident or in flight.
//!
//! Failure policy: an error (or a panic) is not cached. The compiling
//! thread gets the error, every waiter gets the same error (or
//! [`LookupError::CompilerPanicked`]), and the key leaves the in-flight set,
//! so the next lookup compiles afresh.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, PoisonError};

use crate::error::{LookupError, Poisoned};
use crate::hash::FxBuildHasher;
use crate::lru::LruMap;
use crate::stats::{Counter, Counters};
use crate::sync::{Condvar, Mutex, MutexGuard};

/// Where compiled values live once admitted.
pub(crate) trait Residents<K, V> {
    /// The value for `key`, counting as a use.
    fn lookup(&mut self, key: &K) -> Option<Arc<V>>;
    /// Stores `value` for `key`; returns how many other entries were evicted.
    fn admit(&mut self, key: K, value: Arc<V>) -> u64;
    /// Whether `key` is stored, without counting as a use.
    fn holds(&self, key: &K) -> bool;
    /// How many values are stored.
    fn count(&self) -> usize;
}

impl<K: Hash + Eq + Clone, V> Residents<K, V> for LruMap<K, Arc<V>> {
    fn lookup(&mut self, key: &K) -> Option<Arc<V>> {
        self.get(key).cloned()
    }

    fn admit(&mut self, key: K, value: Arc<V>) -> u64 {
        u64::from(self.insert(key, value).is_some())
    }

    fn holds(&self, key: &K) -> bool {
        self.contains(key)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

impl<K: Hash + Eq, V> Residents<K, V> for HashMap<K, Arc<V>, FxBuildHasher> {
    fn lookup(&mut self, key: &K) -> Option<Arc<V>> {
        self.get(key).cloned()
    }

    fn admit(&mut self, key: K, value: Arc<V>) -> u64 {
        self.insert(key, value);
        0
    }

    fn holds(&self, key: &K) -> bool {
        self.contains_key(key)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

/// How a successful lookup was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Served {
    Resident,
    Compiled,
    Waited,
}

/// The end of one compilation, as seen by the threads waiting for it.
enum Resolution<V, E> {
    Ready(Arc<V>),
    Failed(Arc<E>),
    Abandoned,
}

impl<V, E> Clone for Resolution<V, E> {
    fn clone(&self) -> Self {
        match self {
            Self::Ready(value) => Self::Ready(Arc::clone(value)),
            Self::Failed(error) => Self::Failed(Arc::clone(error)),
            Self::Abandoned => Self::Abandoned,
        }
    }
}

/// One in-flight compilation that other threads can wait for.
struct Pending<V, E> {
    resolution: Mutex<Option<Resolution<V, E>>>,
    resolved: Condvar,
}

impl<V, E> Pending<V, E> {
    fn new() -> Self {
        Self {
            resolution: Mutex::new(None),
            resolved: Condvar::new(),
        }
    }

    // The pending mutex only ever guards an `Option` assignment, which a
    // panic cannot leave half-done, so a poisoned lock is safe to use.

    fn resolve(&self, resolution: Resolution<V, E>) {
        let mut slot = self
            .resolution
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *slot = Some(resolution);
        drop(slot);
        self.resolved.notify_all();
    }

    fn wait(&self) -> Resolution<V, E> {
        let mut slot = self
            .resolution
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(resolution) = slot.as_ref() {
                return resolution.clone();
            }
            slot = self
                .resolved
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The lock-protected state: resident values and keys being compiled.
pub(crate) struct Table<K, V, E, T> {
    pub(crate) residents: T,
    in_flight: HashMap<K, Arc<Pending<V, E>>, FxBuildHasher>,
    /// Bumped whenever `residents` changes, so a barrier can tell whether
    /// its last snapshot is still current.
    pub(crate) generation: u64,
}

/// A table of values compiled at most once per key.
pub(crate) struct CompileOnce<K, V, E, T> {
    table: Mutex<Table<K, V, E, T>>,
}

impl<K, V, E, T> CompileOnce<K, V, E, T>
where
    K: Hash + Eq + Clone,
    T: Residents<K, V>,
{
    pub(crate) fn new(residents: T) -> Self {
        Self {
            table: Mutex::new(Table {
                residents,
                in_flight: HashMap::default(),
                generation: 0,
            }),
        }
    }

    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Table<K, V, E, T>>, Poisoned> {
        self.table.lock().map_err(|_| Poisoned)
    }

    /// The value for `key`, compiling it with `compile` if it is neither
    /// resident nor being compiled by another thread.
    pub(crate) fn get_or_compile(
        &self,
        key: &K,
        compile: impl FnOnce(&K) -> Result<V, E>,
        counters: &Counters,
    ) -> Result<(Arc<V>, Served), LookupError<E>> {
        let pending = {
            let mut table = self.lock()?;
            if let Some(value) = table.residents.lookup(key) {
                counters.add(Counter::ResidentHit, 1);
                return Ok((value, Served::Resident));
            }
            counters.add(Counter::Miss, 1);
            if let Some(pending) = table.in_flight.get(key) {
                let pending = Arc::clone(pending);
                drop(table);
                return match pending.wait() {
                    Resolution::Ready(value) => Ok((value, Served::Waited)),
                    Resolution::Failed(error) => Err(LookupError::Compile(error)),
                    Resolution::Abandoned => Err(LookupError::CompilerPanicked),
                };
            }
            let pending = Arc::new(Pending::new());
            table.in_flight.insert(key.clone(), Arc::clone(&pending));
            pending
        };

        let flight = InFlight {
            owner: self,
            key,
            pending,
            counters,
            finished: false,
        };
        counters.add(Counter::Compilation, 1);
        let result = compile(key);
        flight.finish(result)
    }

    /// Whether `key` is resident (not counting as a use).
    pub(crate) fn holds(&self, key: &K) -> Result<bool, Poisoned> {
        Ok(self.lock()?.residents.holds(key))
    }

    /// How many values are resident.
    pub(crate) fn count(&self) -> Result<usize, Poisoned> {
        Ok(self.lock()?.residents.count())
    }
}

/// The compiling thread's claim on a key. Dropping it unfinished (the
/// compiler panicked) withdraws the claim and wakes the waiters, so no
/// thread sleeps forever on a compilation that will never end.
struct InFlight<'a, K: Hash + Eq, V, E, T> {
    owner: &'a CompileOnce<K, V, E, T>,
    key: &'a K,
    pending: Arc<Pending<V, E>>,
    counters: &'a Counters,
    finished: bool,
}

impl<K, V, E, T> InFlight<'_, K, V, E, T>
where
    K: Hash + Eq + Clone,
    T: Residents<K, V>,
{
    fn finish(mut self, result: Result<V, E>) -> Result<(Arc<V>, Served), LookupError<E>> {
        self.finished = true;
        let resolution = match result {
            Ok(value) => Resolution::Ready(Arc::new(value)),
            Err(error) => {
                self.counters.add(Counter::CompileFailure, 1);
                Resolution::Failed(Arc::new(error))
            }
        };
        // Leave the in-flight set before waking the waiters, so a lookup
        // arriving after this point never finds a finished claim. A
        // poisoned table is left alone: the value still reaches this thread
        // and the waiters, it just is not cached.
        if let Ok(mut table) = self.owner.table.lock() {
            table.in_flight.remove(self.key);
            if let Resolution::Ready(value) = &resolution {
                let evicted = table.residents.admit(self.key.clone(), Arc::clone(value));
                table.generation += 1;
                self.counters.add(Counter::Eviction, evicted);
            }
        }
        self.pending.resolve(resolution.clone());
        match resolution {
            Resolution::Ready(value) => Ok((value, Served::Compiled)),
            Resolution::Failed(error) => Err(LookupError::Compile(error)),
            Resolution::Abandoned => Err(LookupError::CompilerPanicked),
        }
    }
}

impl<K: Hash + Eq, V, E, T> Drop for InFlight<'_, K, V, E, T> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.counters.add(Counter::CompileFailure, 1);
        if let Ok(mut table) = self.owner.table.lock() {
            table.in_flight.remove(self.key);
        }
        self.pending.resolve(Resolution::Abandoned);
    }
}
