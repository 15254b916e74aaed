//! The L1 level: a single-entry inline cache owned by each call site.
//!
//! A compiled sampling instruction usually sees the same image and sampler
//! on every execution. Its inline cache remembers the last (image id,
//! sampler id) pair and the routine for it, so the common case costs two
//! 32-bit compares and no shared memory traffic. The instruction type is
//! not part of the L1 key because each call site samples one way only: it
//! is fixed when the site is created and becomes part of the L2/L3 key.

use std::sync::Arc;

use crate::compiler::Compiler;
use crate::error::LookupError;
use crate::image_view::ImageViewId;
use crate::reader::Reader;
use crate::routine_cache::Level;
use crate::sampler::SamplerId;

/// The target's code for a kind of sampling instruction (sample, gather,
/// fetch, with their LOD/offset/compare modifiers). Opaque to this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SamplingOp(pub u32);

/// The L2/L3 key of a sampling routine: what it samples with, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SamplingKey {
    pub op: SamplingOp,
    pub image: ImageViewId,
    pub sampler: SamplerId,
}

struct Entry<R> {
    /// Which [`RoutineCache`](crate::RoutineCache) the routine came from.
    cache: u64,
    image: ImageViewId,
    sampler: SamplerId,
    routine: Arc<R>,
}

/// A call site's single-entry cache, keyed by the image and sampler ids.
///
/// The caller owns it (typically one per sampling instruction per worker
/// thread) and passes it `&mut` on every execution, together with the
/// worker's [`Reader`], which serves misses from L2/L3 and counts the hits.
/// The entry remembers which cache it came from, so a site used with
/// several caches never returns one cache's routine for another.
///
/// ```
/// use lathe_variants::*;
///
/// let samplers = SamplerInterner::new();
/// let sampler = samplers.acquire(&SamplerState::default())?;
/// let image = ImageViewState::color(37, ViewType::TwoD).id()?;
/// let cache = RoutineCache::new(256, |key: &SamplingKey| {
///     Ok::<_, std::fmt::Error>(format!("sample {:?} with {:?}", key.image, key.sampler))
/// })?;
///
/// let mut reader = cache.reader(); // one per worker thread
/// let mut site = InlineCache::new(SamplingOp(0)); // one per instruction
/// assert_eq!(site.get_traced(&mut reader, image, sampler)?.1, Level::Compiled);
/// assert_eq!(site.get_traced(&mut reader, image, sampler)?.1, Level::L1);
/// drop(reader);
/// assert_eq!(cache.stats().l1_hits, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct InlineCache<R> {
    op: SamplingOp,
    entry: Option<Entry<R>>,
}

impl<R> std::fmt::Debug for InlineCache<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineCache")
            .field("op", &self.op)
            .field(
                "ids",
                &self
                    .entry
                    .as_ref()
                    .map(|entry| (entry.image, entry.sampler)),
            )
            .finish()
    }
}

impl<R> InlineCache<R> {
    /// An empty inline cache for a call site performing `op`.
    pub fn new(op: SamplingOp) -> Self {
        Self { op, entry: None }
    }

    /// The sampling operation of this call site.
    pub fn op(&self) -> SamplingOp {
        self.op
    }

    /// The routine for sampling `image` with `sampler` at this call site.
    #[inline]
    pub fn get<C>(
        &mut self,
        reader: &mut Reader<'_, SamplingKey, C>,
        image: ImageViewId,
        sampler: SamplerId,
    ) -> Result<&Arc<R>, LookupError<C::Error>>
    where
        C: Compiler<SamplingKey, Output = R>,
    {
        self.get_traced(reader, image, sampler)
            .map(|(routine, _)| routine)
    }

    /// Like [`get`](Self::get), also saying which level served the lookup.
    #[inline]
    pub fn get_traced<C>(
        &mut self,
        reader: &mut Reader<'_, SamplingKey, C>,
        image: ImageViewId,
        sampler: SamplerId,
    ) -> Result<(&Arc<R>, Level), LookupError<C::Error>>
    where
        C: Compiler<SamplingKey, Output = R>,
    {
        let cache = reader.cache().id();
        let hit = self.entry.as_ref().is_some_and(|entry| {
            entry.image == image && entry.sampler == sampler && entry.cache == cache
        });
        // Matching on the decided `hit` (rather than re-testing inside the
        // match) lets the miss arm overwrite the slot the hit arm borrows.
        match (hit, &mut self.entry) {
            (true, Some(entry)) => {
                reader.count_l1_hit();
                Ok((&entry.routine, Level::L1))
            }
            (_, slot) => {
                let key = SamplingKey {
                    op: self.op,
                    image,
                    sampler,
                };
                let (routine, level) = reader.get_traced(&key)?;
                let entry = slot.insert(Entry {
                    cache,
                    image,
                    sampler,
                    routine,
                });
                Ok((&entry.routine, level))
            }
        }
    }
}
