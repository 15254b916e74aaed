//! How far the [interpreter](crate::interp)'s values can be trusted when
//! they are compared with a driver's: each lane of each value, each
//! output and each memory word it writes carries an [`Exactness`],
//! joined through data flow.
//!
//! - *Approximate*: an operation whose result IEEE does not pin (`rcp`,
//!   `rsqrt`, `sqrt`, `fdiv`, `exp2`, `log2`, `sin`, `cos`) flowed into
//!   it: a float compared within a tolerance.
//! - *Undefined* (poison): the specification leaves the value undefined
//!   — an out-of-bounds storage-image load without robust access, an
//!   implicit-LOD sample or derivative in non-uniform control flow, an
//!   atomic whose result depends on the order of other invocations'
//!   atomics (unless the run follows an order an executor fixed,
//!   [`crate::atomic_order`]). Any value is right, so it is not compared. It propagates
//!   through arithmetic, selects, arrays and memory; branching on it or
//!   addressing memory with it is undefined behaviour.
//!
//! Control dependence is not followed: a value computed under a branch
//! on an approximate condition is exact.

use std::collections::HashMap;

use crate::races::Word;
use crate::types::Scalar;

/// How a value compares with a driver's (ordered: a join is the maximum).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exactness {
    /// Bit for bit (any two NaNs agree).
    #[default]
    Exact,
    /// A float within the verifier's tolerance.
    Approximate,
    /// Any value (poison): not compared.
    Undefined,
}

/// The [`Exactness`] of each lane of a value (bit `k` = lane `k`; a
/// scalar is lane 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Taint {
    approximate: u32,
    undefined: u32,
}

impl Taint {
    pub(crate) const EXACT: Taint = Taint {
        approximate: 0,
        undefined: 0,
    };

    /// Every one of `lanes` lanes `e`.
    pub(crate) fn splat(e: Exactness, lanes: usize) -> Taint {
        let all = if lanes >= 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        };
        match e {
            Exactness::Exact => Taint::EXACT,
            Exactness::Approximate => Taint {
                approximate: all,
                undefined: 0,
            },
            Exactness::Undefined => Taint {
                approximate: 0,
                undefined: all,
            },
        }
    }

    pub(crate) fn lane(self, k: usize) -> Exactness {
        let bit = 1u32.checked_shl(k as u32).unwrap_or(0);
        if self.undefined & bit != 0 {
            Exactness::Undefined
        } else if self.approximate & bit != 0 {
            Exactness::Approximate
        } else {
            Exactness::Exact
        }
    }

    /// The join over all lanes.
    pub(crate) fn whole(self) -> Exactness {
        if self.undefined != 0 {
            Exactness::Undefined
        } else if self.approximate != 0 {
            Exactness::Approximate
        } else {
            Exactness::Exact
        }
    }

    /// Lane `k` replaced by `e` (what it was forgotten).
    pub(crate) fn replace_lane(self, k: usize, e: Exactness) -> Taint {
        let bit = 1u32.checked_shl(k as u32).unwrap_or(0);
        Taint {
            approximate: self.approximate & !bit,
            undefined: self.undefined & !bit,
        }
        .with_lane(k, e)
    }

    /// Lane `k` set to `e` (joined with what it was).
    pub(crate) fn with_lane(self, k: usize, e: Exactness) -> Taint {
        let bit = 1u32.checked_shl(k as u32).unwrap_or(0);
        match e {
            Exactness::Exact => self,
            Exactness::Approximate => Taint {
                approximate: self.approximate | bit,
                ..self
            },
            Exactness::Undefined => Taint {
                undefined: self.undefined | bit,
                ..self
            },
        }
    }
}

/// What the runs on a [`Memory`](crate::interp::Memory) wrote last to
/// each storage word and texel: the type stored and each channel's
/// exactness. Words never written are the inputs, exact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Written {
    words: HashMap<Word, (Scalar, Taint)>,
}

impl Written {
    pub(crate) fn get(&self, word: Word) -> Option<(Scalar, Taint)> {
        self.words.get(&word).copied()
    }

    pub(crate) fn set(&mut self, word: Word, ty: Scalar, taint: Taint) {
        self.words.insert(word, (ty, taint));
    }

    /// Storage-buffer words and image channels written with an undefined
    /// value (shared memory is not an output).
    pub fn undefined(&self) -> usize {
        self.words
            .iter()
            .filter(|(w, _)| !matches!(w, Word::Shared { .. }))
            .map(|(_, (_, t))| t.undefined.count_ones() as usize)
            .sum()
    }

    /// The type and exactness of storage-buffer `binding`'s word `word`
    /// as last written (`None`: not written).
    pub fn ssbo(&self, binding: u8, word: u32) -> Option<(Scalar, Exactness)> {
        self.get(Word::Ssbo { binding, word })
            .map(|(ty, t)| (ty, t.lane(0)))
    }

    /// The type and exactness of channel `channel` of storage image
    /// `image`'s texel `texel` as last written.
    pub fn texel(&self, image: u8, texel: u32, channel: usize) -> Option<(Scalar, Exactness)> {
        self.get(Word::Image { image, texel })
            .map(|(ty, t)| (ty, t.lane(channel)))
    }
}
