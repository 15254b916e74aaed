//! The blocking primitives this crate synchronises with, swapped for
//! `loom`'s model-checked versions under `--cfg loom`.
//!
//! Only the primitives whose interleavings matter go through here: the
//! table mutexes and the condition variable that wakes threads waiting for
//! a compilation. Reference counts (`std::sync::Arc`) and relaxed
//! statistics counters order nothing, so they stay `std` in both builds.

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
