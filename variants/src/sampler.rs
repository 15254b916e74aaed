//! Sampler identifiers: sampler state interned to unique 32-bit ids.
//!
//! Sampler state is far larger than 32 bits, so unlike image views it
//! cannot be packed into its id. Instead a [`SamplerInterner`] maps each
//! distinct state to an id and counts the sampler objects sharing it: the
//! driver calls [`acquire`](SamplerInterner::acquire) when it creates a
//! sampler and [`release`](SamplerInterner::release) when it destroys one,
//! and the entry goes away when the last sharer is released.
//!
//! Ids are handed out in increasing order and never reused, not even after
//! their entry is gone. Routine caches may still hold routines keyed by a
//! retired id; reusing it for different state would make them return a
//! routine specialised for the wrong sampler.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::error::{DescriptorError, Poisoned};
use crate::hash::FxBuildHasher;
use crate::sync::Mutex;

/// Texel filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Filter {
    Nearest,
    Linear,
}

/// How the mip level is chosen between levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MipmapMode {
    Nearest,
    Linear,
}

/// Out-of-range coordinate handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressMode {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
    ClampToBorder,
    MirrorClampToEdge,
}

/// Depth comparison for shadow samplers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Never,
    Less,
    Equal,
    LessOrEqual,
    Greater,
    NotEqual,
    GreaterOrEqual,
    Always,
}

/// Value returned outside the image with [`AddressMode::ClampToBorder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BorderColor {
    TransparentBlackFloat,
    TransparentBlackInt,
    OpaqueBlackFloat,
    OpaqueBlackInt,
    OpaqueWhiteFloat,
    OpaqueWhiteInt,
}

/// How filtered texels are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    WeightedAverage,
    Min,
    Max,
}

/// The sampler state a sampling routine is specialised on.
///
/// Equality and hashing compare the floating-point fields by bit pattern,
/// with `-0.0` folded into `0.0`: two states compare equal exactly when
/// they sample identically, and a NaN equals itself, so the type is a
/// lawful map key.
#[derive(Debug, Clone, Copy)]
pub struct SamplerState {
    pub mag_filter: Filter,
    pub min_filter: Filter,
    pub mipmap_mode: MipmapMode,
    /// Address modes for u, v and w.
    pub address: [AddressMode; 3],
    pub mip_lod_bias: f32,
    /// Maximum anisotropy, or `None` when anisotropic filtering is off.
    pub max_anisotropy: Option<f32>,
    /// Depth comparison, or `None` for a non-shadow sampler.
    pub compare: Option<CompareOp>,
    pub min_lod: f32,
    pub max_lod: f32,
    pub border_color: BorderColor,
    pub unnormalized_coordinates: bool,
    pub reduction: Reduction,
}

impl Default for SamplerState {
    /// Nearest filtering, repeat addressing, no comparison, all mip levels.
    fn default() -> Self {
        Self {
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            mipmap_mode: MipmapMode::Nearest,
            address: [AddressMode::Repeat; 3],
            mip_lod_bias: 0.0,
            max_anisotropy: None,
            compare: None,
            min_lod: 0.0,
            max_lod: 1000.0,
            border_color: BorderColor::TransparentBlackFloat,
            unnormalized_coordinates: false,
            reduction: Reduction::WeightedAverage,
        }
    }
}

/// Bit pattern of a float with both zeros mapped to `+0.0`.
fn float_key(value: f32) -> u32 {
    if value == 0.0 { 0 } else { value.to_bits() }
}

impl SamplerState {
    /// Every field, floats as comparable bit patterns.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        (Filter, Filter, MipmapMode, [AddressMode; 3]),
        (u32, Option<u32>, Option<CompareOp>, u32, u32),
        (BorderColor, bool, Reduction),
    ) {
        (
            (
                self.mag_filter,
                self.min_filter,
                self.mipmap_mode,
                self.address,
            ),
            (
                float_key(self.mip_lod_bias),
                self.max_anisotropy.map(float_key),
                self.compare,
                float_key(self.min_lod),
                float_key(self.max_lod),
            ),
            (
                self.border_color,
                self.unnormalized_coordinates,
                self.reduction,
            ),
        )
    }
}

impl PartialEq for SamplerState {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for SamplerState {}

impl Hash for SamplerState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// A 32-bit sampler identifier handed out by a [`SamplerInterner`].
/// Never zero, so zero-initialised descriptor memory names no sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SamplerId(u32);

impl SamplerId {
    /// The raw 32 bits, e.g. to store in a descriptor.
    pub fn raw(self) -> u32 {
        self.0
    }
}

struct Entry {
    state: SamplerState,
    /// Sampler objects currently sharing this id; never zero while stored.
    sharers: u64,
}

struct Table {
    ids: HashMap<SamplerState, SamplerId, FxBuildHasher>,
    entries: HashMap<SamplerId, Entry, FxBuildHasher>,
    /// The next id to hand out; past `u32::MAX` when all are used.
    next: u64,
}

/// Interns sampler state to unique 32-bit ids, counting sharers.
///
/// Safe to use from many threads at once: every operation takes one
/// short-lived lock.
///
/// ```
/// use lathe_variants::{Filter, SamplerInterner, SamplerState};
///
/// let samplers = SamplerInterner::new();
/// let linear = SamplerState { mag_filter: Filter::Linear, ..SamplerState::default() };
/// let a = samplers.acquire(&linear)?; // vkCreateSampler
/// let b = samplers.acquire(&linear)?; // another sampler, same state: same id
/// assert_eq!(a, b);
/// assert_eq!(samplers.sharers(a)?, 2);
/// samplers.release(a)?; // vkDestroySampler
/// samplers.release(b)?;
/// assert!(samplers.state(a).is_err()); // the entry went with its last sharer
/// // The state gets a fresh id next time; old ids are never reused.
/// assert_ne!(samplers.acquire(&linear)?, a);
/// # Ok::<(), lathe_variants::DescriptorError>(())
/// ```
pub struct SamplerInterner {
    table: Mutex<Table>,
}

impl Default for SamplerInterner {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SamplerInterner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplerInterner").finish_non_exhaustive()
    }
}

impl SamplerInterner {
    /// An empty interner whose first id is 1.
    pub fn new() -> Self {
        Self::starting_at(1)
    }

    fn starting_at(next: u64) -> Self {
        Self {
            table: Mutex::new(Table {
                ids: HashMap::default(),
                entries: HashMap::default(),
                next,
            }),
        }
    }

    fn lock(&self) -> Result<crate::sync::MutexGuard<'_, Table>, Poisoned> {
        self.table.lock().map_err(|_| Poisoned)
    }

    /// Registers one more sampler object with `state` and returns the id
    /// of that state, assigning a new id if no live sampler has it.
    pub fn acquire(&self, state: &SamplerState) -> Result<SamplerId, DescriptorError> {
        let mut table = self.lock()?;
        if let Some(&id) = table.ids.get(state) {
            if let Some(entry) = table.entries.get_mut(&id) {
                entry.sharers += 1;
                return Ok(id);
            }
        }
        let raw = u32::try_from(table.next).map_err(|_| DescriptorError::SamplerIdsExhausted)?;
        let id = SamplerId(raw);
        table.next += 1;
        table.ids.insert(*state, id);
        table.entries.insert(
            id,
            Entry {
                state: *state,
                sharers: 1,
            },
        );
        Ok(id)
    }

    /// Unregisters one sampler object with this id; the id's entry is
    /// removed when no sampler shares it any more.
    pub fn release(&self, id: SamplerId) -> Result<(), DescriptorError> {
        let mut table = self.lock()?;
        let entry = table
            .entries
            .get_mut(&id)
            .ok_or(DescriptorError::UnknownSampler(id.0))?;
        entry.sharers -= 1;
        if entry.sharers == 0 {
            let state = entry.state;
            table.entries.remove(&id);
            table.ids.remove(&state);
        }
        Ok(())
    }

    /// The state a live id stands for: what a routine compiler needs to
    /// specialise on the sampler.
    pub fn state(&self, id: SamplerId) -> Result<SamplerState, DescriptorError> {
        let table = self.lock()?;
        table
            .entries
            .get(&id)
            .map(|entry| entry.state)
            .ok_or(DescriptorError::UnknownSampler(id.0))
    }

    /// How many sampler objects share a live id.
    pub fn sharers(&self, id: SamplerId) -> Result<u64, DescriptorError> {
        let table = self.lock()?;
        table
            .entries
            .get(&id)
            .map(|entry| entry.sharers)
            .ok_or(DescriptorError::UnknownSampler(id.0))
    }

    /// How many distinct sampler states are live.
    pub fn len(&self) -> Result<usize, DescriptorError> {
        Ok(self.lock()?.entries.len())
    }

    /// Whether no sampler is live.
    pub fn is_empty(&self) -> Result<bool, DescriptorError> {
        Ok(self.len()? == 0)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn with_bias(bias: f32) -> SamplerState {
        SamplerState {
            mip_lod_bias: bias,
            ..SamplerState::default()
        }
    }

    #[test]
    fn equal_states_share_an_id_and_distinct_states_do_not() {
        let samplers = SamplerInterner::new();
        let a = samplers.acquire(&with_bias(0.5)).expect("acquire");
        let b = samplers.acquire(&with_bias(0.5)).expect("acquire");
        let c = samplers.acquire(&with_bias(1.5)).expect("acquire");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(samplers.sharers(a), Ok(2));
        assert_eq!(samplers.len(), Ok(2));
    }

    #[test]
    fn zeros_are_one_state_and_nan_is_a_lawful_key() {
        let samplers = SamplerInterner::new();
        let plus = samplers.acquire(&with_bias(0.0)).expect("acquire");
        let minus = samplers.acquire(&with_bias(-0.0)).expect("acquire");
        assert_eq!(plus, minus);
        let nan1 = samplers.acquire(&with_bias(f32::NAN)).expect("acquire");
        let nan2 = samplers.acquire(&with_bias(f32::NAN)).expect("acquire");
        assert_eq!(nan1, nan2);
        assert_eq!(samplers.len(), Ok(2));
    }

    #[test]
    fn releasing_an_unknown_or_retired_id_is_an_error() {
        let samplers = SamplerInterner::new();
        let id = samplers.acquire(&SamplerState::default()).expect("acquire");
        assert_eq!(samplers.release(id), Ok(()));
        assert_eq!(
            samplers.release(id),
            Err(DescriptorError::UnknownSampler(id.raw()))
        );
        assert_eq!(
            samplers.state(id),
            Err(DescriptorError::UnknownSampler(id.raw()))
        );
        assert_eq!(samplers.is_empty(), Ok(true));
    }

    #[test]
    fn ids_run_out_instead_of_wrapping() {
        let samplers = SamplerInterner::starting_at(u64::from(u32::MAX));
        let last = samplers.acquire(&with_bias(1.0)).expect("last id");
        assert_eq!(last.raw(), u32::MAX);
        // Releasing does not make the id available again.
        samplers.release(last).expect("release");
        assert_eq!(
            samplers.acquire(&with_bias(2.0)),
            Err(DescriptorError::SamplerIdsExhausted)
        );
        // Sharing an existing state still works when ids are exhausted.
        let samplers = SamplerInterner::starting_at(u64::from(u32::MAX));
        let id = samplers.acquire(&with_bias(1.0)).expect("last id");
        assert_eq!(samplers.acquire(&with_bias(1.0)), Ok(id));
    }
}
