//! Error types of the crate.

use std::sync::Arc;

use thiserror::Error;

/// A lookup (in a [`RoutineCache`](crate::RoutineCache), an
/// [`InlineCache`](crate::InlineCache) or [`Variants`](crate::Variants))
/// that could not produce a compiled value.
///
/// `E` is the injected compiler's error type. A failed compilation is never
/// cached: the thread that ran the compiler and every thread that was
/// waiting for that same compilation receive the same error (shared through
/// the `Arc`), and the next lookup of the key compiles again.
#[derive(Debug, Error)]
pub enum LookupError<E> {
    /// The compiler returned an error for this key.
    #[error("compiling the requested variant failed")]
    Compile(#[source] Arc<E>),
    /// The compiler panicked while this lookup was waiting for its result.
    /// Nothing was cached; the next lookup of the key compiles again.
    #[error("the thread compiling the requested variant panicked before finishing")]
    CompilerPanicked,
    /// A thread panicked while updating a cache table, so the table can no
    /// longer be trusted.
    #[error(transparent)]
    Poisoned(#[from] Poisoned),
}

/// A cache table is unusable because a thread panicked while updating it.
///
/// This crate never panics inside its own critical sections, so this only
/// happens when a caller-supplied `Hash`, `Eq` or `Clone` implementation of a
/// key panics mid-update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("a cache table was left inconsistent by a panic in another thread")]
pub struct Poisoned;

/// A cache was asked to hold no entry at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("a routine cache needs a capacity of at least one entry")]
pub struct ZeroCapacity;

/// Invalid descriptor state or a bad descriptor identifier.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DescriptorError {
    /// The format index does not fit the id's format field.
    #[error("image format index {0} does not fit an image-view id (at most {max})", max = crate::image_view::MAX_FORMAT)]
    FormatOutOfRange(u16),
    /// The sample count does not fit the id's sample-count field.
    #[error("log2 sample count {0} does not fit an image-view id (at most {max})", max = crate::image_view::MAX_SAMPLES_LOG2)]
    SampleCountOutOfRange(u8),
    /// A raw 32-bit value that no [`ImageViewState`](crate::ImageViewState) encodes to.
    #[error("{id:#010x} is not a valid image-view id: bad {field} field")]
    InvalidImageViewId {
        /// The raw value.
        id: u32,
        /// The first field found invalid.
        field: &'static str,
    },
    /// The sampler id is not (or no longer) registered.
    #[error("sampler id {0} is not registered")]
    UnknownSampler(u32),
    /// Every one of the 2^32 - 1 sampler ids has been handed out once.
    /// Ids are never reused (see [`SamplerInterner`](crate::SamplerInterner)).
    #[error("all 32-bit sampler ids have been used")]
    SamplerIdsExhausted,
    /// The sampler table is unusable after a panic in another thread.
    #[error(transparent)]
    Poisoned(#[from] Poisoned),
}
