//! Shader variants and the three-level routine cache.
//!
//! Compiled GPU code is specialised on state. A shader is compiled into
//! *variants*, one per shader key; a sampling routine is specialised on the
//! image-view and sampler descriptors it meets at execution time, which a
//! driver learns only then. This crate is the target-neutral machinery both
//! the Adreno and the Mali targets use for that. The compile step itself is
//! injected by the caller as a [`Compiler`] (any `Fn(&K) -> Result<O, E>`).
//!
//! - **Descriptor ids** ([`ImageViewId`], [`SamplerId`]): 32-bit ids that
//!   make "is this still the same state?" one compare. Image-view state is
//!   packed into its id; sampler state is interned by a
//!   [`SamplerInterner`] that counts the samplers sharing each id.
//! - **L3**: an LRU cache of routines behind a mutex, bounded by the
//!   capacity given to [`RoutineCache::new`].
//! - **L2**: a snapshot of L3 read without any lock, replaced only by
//!   [`RoutineCache::barrier`]. Each worker thread reads it through its own
//!   [`Reader`].
//! - **L1**: an [`InlineCache`] per call site, owned by the caller and
//!   keyed by the two descriptor ids only.
//! - **[`Variants`]**: a shader's variant set, compiling each key once even
//!   when many threads ask for it first at the same time.
//!
//! A lookup walks L1 → L2 → L3 → compile. Every level counts its hits in
//! [`CacheStats`]. A failed compilation is never cached: the caller and any
//! thread waiting for the same compilation get the error
//! ([`LookupError::Compile`]), and the next lookup compiles again.
//!
//! ```
//! use lathe_variants::*;
//!
//! // Driver objects get descriptor ids when they are created.
//! let samplers = SamplerInterner::new();
//! let sampler = samplers.acquire(&SamplerState::default())?;
//! let image = ImageViewState::color(12, ViewType::TwoD).id()?;
//!
//! // One cache per device; the compiler specialises on the descriptor state.
//! let cache = RoutineCache::new(1024, |key: &SamplingKey| {
//!     let view = key.image.state()?;
//!     Ok::<_, DescriptorError>(format!("{:?} routine for format {}", key.op, view.format))
//! })?;
//!
//! // Each worker thread has a reader, and an inline cache per sampling
//! // instruction it executes.
//! let mut reader = cache.reader();
//! let mut site = InlineCache::new(SamplingOp(3));
//! let routine = site.get(&mut reader, image, sampler)?;
//! assert_eq!(routine.as_str(), "SamplingOp(3) routine for format 12");
//! cache.barrier()?; // a pipeline barrier publishes new routines to L2
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Build with `RUSTFLAGS="--cfg loom"` only to run the model-checking tests
//! (`tests/loom.rs`); see the crate README section for the command.

#![forbid(unsafe_code)]

mod compiler;
mod error;
pub mod hash;
mod image_view;
mod inline_cache;
mod lru;
mod once;
mod reader;
mod routine_cache;
mod sampler;
mod stats;
mod sync;
mod variants;

pub use compiler::Compiler;
pub use error::{DescriptorError, LookupError, Poisoned, ZeroCapacity};
pub use image_view::{
    Aspect, ImageViewId, ImageViewState, MAX_FORMAT, MAX_SAMPLES_LOG2, Swizzle, ViewType,
};
pub use inline_cache::{InlineCache, SamplingKey, SamplingOp};
pub use lru::LruMap;
pub use reader::Reader;
pub use routine_cache::{Level, RoutineCache};
pub use sampler::{
    AddressMode, BorderColor, CompareOp, Filter, MipmapMode, Reduction, SamplerId, SamplerInterner,
    SamplerState,
};
pub use stats::{CacheStats, VariantStats};
pub use variants::Variants;
