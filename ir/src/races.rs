//! Data-race detection for the [interpreter](crate::interp).
//!
//! The interpreter runs a group's invocations one after another between
//! control barriers, and separate groups (fragment quads, vertex
//! invocations, workgroups) one after another; a GPU runs them together.
//! Two accesses to one memory word from different invocations, at least
//! one a write and not both atomic, with no control barrier of their
//! workgroup between them, are a data race: the language leaves the
//! result undefined and no thread order is the right one. [`Accesses`]
//! remembers who touched each word so the interpreter reports such a
//! race as undefined behaviour instead of inventing one order's result.
//!
//! Atomics do not race, but what one returns depends on the order of the
//! concurrent invocations' atomics that change its word, and so does the
//! word's final value unless all of those are the same commutative
//! operation (adds, say). [`Accesses::atomic`] says which, so the
//! interpreter makes such a value undefined (see [`crate::exactness`]).
//! An atomic learns only of the atomics that ran before it; a second run
//! with the first's atomics in hindsight
//! ([`crate::interp::run_in_hindsight`]) learns of those after it too.

use std::collections::HashMap;
use std::sync::Arc;

use crate::attrs::AtomicOp;

/// A memory word: a storage-buffer word, a shared-memory word of one
/// workgroup, or a storage-image texel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Word {
    Ssbo { binding: u8, word: u32 },
    Shared { group: u32, word: u32 },
    Image { image: u8, texel: u32 },
}

impl std::fmt::Display for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Word::Ssbo { binding, word } => write!(f, "storage buffer {binding} word {word}"),
            Word::Shared { word, .. } => write!(f, "shared word {word}"),
            Word::Image { image, texel } => write!(f, "image {image} texel {texel}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    Atomic,
}

impl Kind {
    fn conflicts(self, other: Kind) -> bool {
        !matches!(
            (self, other),
            (Kind::Read, Kind::Read) | (Kind::Atomic, Kind::Atomic)
        )
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Atomic => "atomic",
        }
    }
}

/// Who accesses: an invocation, its group (workgroup, quad or lone
/// invocation) and the control barriers its group has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accessor {
    pub thread: u32,
    pub group: u32,
    pub epoch: u32,
}

impl Accessor {
    /// Unordered with `other`: different invocations, and either
    /// different groups (nothing orders them) or the same group between
    /// the same two barriers.
    fn concurrent(&self, other: &Accessor) -> bool {
        self.thread != other.thread && (self.group != other.group || self.epoch == other.epoch)
    }
}

/// How an atomic changes its word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomicEffect {
    /// An atomic load: no change.
    Reads,
    /// A read-modify-write that commutes with others of the same
    /// operation (`add`, the min/max family, `and`, `or`, `xor`).
    Commutes(AtomicOp),
    /// The word's new value depends on its old one in a way that does not
    /// commute (`xchg`, `cmpxchg`, an atomic store).
    Replaces,
}

impl AtomicEffect {
    pub(crate) fn of(op: AtomicOp) -> AtomicEffect {
        match op {
            AtomicOp::Exchange | AtomicOp::CompareExchange => AtomicEffect::Replaces,
            op => AtomicEffect::Commutes(op),
        }
    }
}

/// What the order of concurrent invocations' atomics decides about one
/// atomic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Order {
    /// The value it returns (or loads).
    pub result: bool,
    /// The value it leaves in the word.
    pub word: bool,
}

type AtomicLog = HashMap<Word, Vec<(Accessor, AtomicEffect)>>;

/// The accesses to each memory word so far, across every run on one
/// [`Memory`](crate::interp::Memory).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accesses {
    words: HashMap<Word, Vec<(Accessor, Kind)>>,
    next_thread: u32,
    atomics: AtomicLog,
    /// The atomics of an earlier run of the same invocations.
    hindsight: Option<Arc<AtomicLog>>,
    /// An atomic's result depended on the order of others'.
    ordered: bool,
}

impl Accesses {
    /// Numbers for `n` new invocations (the first; they are consecutive).
    pub(crate) fn new_threads(&mut self, n: usize) -> u32 {
        let first = self.next_thread;
        self.next_thread = self.next_thread.wrapping_add(n as u32);
        first
    }

    /// Records an atomic on `word` by `who`; what the order of the
    /// concurrent invocations' atomics decides about it.
    pub(crate) fn atomic(&mut self, word: Word, who: Accessor, effect: AtomicEffect) -> Order {
        let earlier = self.hindsight.as_ref().and_then(|h| h.get(&word));
        let changes: Vec<AtomicEffect> = self
            .atomics
            .get(&word)
            .into_iter()
            .chain(earlier)
            .flatten()
            .filter(|(a, e)| who.concurrent(a) && *e != AtomicEffect::Reads)
            .map(|&(_, e)| e)
            .collect();
        let order = Order {
            result: !changes.is_empty(),
            word: match effect {
                AtomicEffect::Reads => false,
                AtomicEffect::Replaces => !changes.is_empty(),
                own => changes.iter().any(|&e| e != own),
            },
        };
        self.ordered |= order.result;
        let log = self.atomics.entry(word).or_default();
        if !log.contains(&(who, effect)) {
            log.push((who, effect));
        }
        order
    }

    /// Whether some atomic's result depended on the order of others' (a
    /// run in hindsight may find more).
    pub(crate) fn ordered(&self) -> bool {
        self.ordered
    }

    /// A fresh record for a second run of the invocations that made
    /// `self` from `start`, knowing all of their atomics.
    pub(crate) fn in_hindsight(start: &Accesses, first: Accesses) -> Accesses {
        Accesses {
            hindsight: Some(Arc::new(first.atomics)),
            ..start.clone()
        }
    }

    /// Records `kind` on `word` by `who`; the race, described, when it
    /// conflicts with an unordered access of another invocation.
    pub(crate) fn record(&mut self, word: Word, who: Accessor, kind: Kind) -> Result<(), String> {
        let seen = self.words.entry(word).or_default();
        if let Some((other, k)) = seen
            .iter()
            .find(|(a, k)| who.concurrent(a) && kind.conflicts(*k))
        {
            return Err(format!(
                "data race on {word}: {} by invocation {} and {} by invocation {} with no barrier between them",
                k.name(),
                other.thread,
                kind.name(),
                who.thread
            ));
        }
        // One entry per invocation and kind: its latest access is ordered
        // after its earlier ones, so it alone decides later conflicts.
        match seen
            .iter_mut()
            .find(|(a, k)| a.thread == who.thread && *k == kind)
        {
            Some(e) => e.0 = who,
            None => seen.push((who, kind)),
        }
        Ok(())
    }
}
