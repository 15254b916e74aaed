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

use std::collections::HashMap;

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

/// The accesses to each memory word so far, across every run on one
/// [`Memory`](crate::interp::Memory).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accesses {
    words: HashMap<Word, Vec<(Accessor, Kind)>>,
    next_thread: u32,
}

impl Accesses {
    /// Numbers for `n` new invocations (the first; they are consecutive).
    pub(crate) fn new_threads(&mut self, n: usize) -> u32 {
        let first = self.next_thread;
        self.next_thread = self.next_thread.wrapping_add(n as u32);
        first
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
