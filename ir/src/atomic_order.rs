//! One order of storage-buffer atomics, fixed by a run that performed
//! them, for the [interpreter](crate::interp) to follow.
//!
//! When invocations' atomics on one word are concurrent, what each
//! returns depends on their order, which a GPU chooses; the interpreter
//! alone can only call such a result undefined ([`crate::races`]), and
//! a shader that branches on it (a linked-list node allocated by
//! `atomicAdd` on a counter) has no defined run. An executor that logs
//! its atomics ([`AtomicEvent`], in the order it performed them) fixes
//! one order; [`AtomicOrder::new`] checks the order is a legal one
//! (replaying each word's atomics in that order from the initial memory
//! gives every value they returned), and the interpreter then follows it:
//! an invocation's atomic on an ordered word takes the next of that
//! invocation's events on the word, returns its old value, and must
//! compute its new value from the old one (the executor's operation
//! agrees with the shader's). Results are then exact, and every event
//! must be consumed ([`AtomicOrder::finish`]).

use std::collections::{BTreeMap, HashMap, VecDeque};

/// One read-modify-write an executor performed on a storage-buffer
/// word: the thread (its index in the run), the word, the value it
/// returned and the value it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicEvent {
    pub thread: u32,
    pub binding: u8,
    pub word: u32,
    pub old: u32,
    pub new: u32,
}

/// A legal order of a run's storage-buffer atomics (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AtomicOrder {
    /// Per (thread, binding, word), that thread's events in order: (old,
    /// new).
    pending: HashMap<(u32, u8, u32), VecDeque<(u32, u32)>>,
    /// Per (binding, word), the value the whole order leaves.
    finals: BTreeMap<(u8, u32), u32>,
}

impl AtomicOrder {
    /// The order `log` gives, checked against the storage buffers it
    /// started from: each word's events, replayed in order, must each
    /// return the value the events before it left.
    pub fn new(log: &[AtomicEvent], ssbos: &[Vec<u32>]) -> Result<AtomicOrder, String> {
        let mut order = AtomicOrder::default();
        for (n, e) in log.iter().enumerate() {
            let at = (e.binding, e.word);
            let current = match order.finals.get(&at) {
                Some(&v) => v,
                None => *ssbos
                    .get(usize::from(e.binding))
                    .and_then(|b| b.get(e.word as usize))
                    .ok_or_else(|| {
                        format!(
                            "atomic {n} (thread {}) on storage buffer {} word {} is outside the buffer",
                            e.thread, e.binding, e.word
                        )
                    })?,
            };
            if e.old != current {
                return Err(format!(
                    "atomic {n} (thread {}) on storage buffer {} word {} returned {:#x}, but the atomics before it leave {current:#x}",
                    e.thread, e.binding, e.word, e.old
                ));
            }
            order.finals.insert(at, e.new);
            order
                .pending
                .entry((e.thread, e.binding, e.word))
                .or_default()
                .push_back((e.old, e.new));
        }
        Ok(order)
    }

    /// Whether the order covers `binding`'s word `word`.
    pub(crate) fn orders(&self, binding: u8, word: u32) -> bool {
        self.finals.contains_key(&(binding, word))
    }

    /// The next event of `thread` on the word: (old, new).
    pub(crate) fn take(
        &mut self,
        thread: u32,
        binding: u8,
        word: u32,
    ) -> Result<(u32, u32), String> {
        self.pending
            .get_mut(&(thread, binding, word))
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| {
                format!(
                    "thread {thread} performs more atomics on storage buffer {binding} word {word} than the compiled program did"
                )
            })
    }

    /// The value each ordered word holds after all its atomics.
    pub fn finals(&self) -> impl Iterator<Item = ((u8, u32), u32)> + '_ {
        self.finals.iter().map(|(&k, &v)| (k, v))
    }

    /// Every event was followed: the interpreter's run performed the
    /// atomics the executor's did.
    pub fn finish(&self) -> Result<(), String> {
        let mut left: Vec<_> = self
            .pending
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(k, q)| (*k, q.len()))
            .collect();
        left.sort_unstable();
        match left.first() {
            None => Ok(()),
            Some(&((thread, binding, word), n)) => Err(format!(
                "thread {thread} performs {n} fewer atomics on storage buffer {binding} word {word} than the compiled program did"
            )),
        }
    }
}
