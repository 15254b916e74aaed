//! Division by a constant that is not a power of two: the magic multiplier.
//!
//! # What the hardware computes
//!
//! The descriptor holds three fields: `shift` (5 bits), `magic` (the 32-bit
//! multiplier `M` with its top bit left out, because the hardware always sets
//! it: `M = 2^31 + magic`) and `extra_flags` (1 bit, the round-down switch).
//! For a 32-bit linear id `n` the attribute unit computes
//!
//! ```text
//! product = n·M                   (64 bits)
//! if extra_flags == 1: product += M       (so product = (n+1)·M)
//! quotient = (product >> 32) >> shift
//! ```
//!
//! Taking the high word and then shifting is the same as one shift by
//! `32 + shift`, so the quotient is `⌊n·M / 2^p⌋` or `⌊(n+1)·M / 2^p⌋` with
//! `p = 32 + shift`. Nothing overflows: `(n+1)·M ≤ 2^32·(2^32 − 1) < 2^64`.
//!
//! # Choosing the constants, and why they are exact
//!
//! Take a divisor `d` that is not a power of two and let `s = ⌊log2 d⌋`, so
//! `2^s < d < 2^(s+1)`, and `p = 32 + s`. Write `2^p = q·d + r` with
//! `0 ≤ r < d`; `r ≥ 1` because `d` has an odd factor above one and cannot
//! divide a power of two. The shift field is `s`, so the exponent is fixed
//! and there is no search; only the rounding of `2^p / d` is chosen:
//!
//! - **round down** (`extra_flags = 1`, `M = q`) when `r ≤ 2^s`;
//! - **round up** (`extra_flags = 0`, `M = q + 1`) otherwise.
//!
//! Both candidates have bit 31 set and fit in 32 bits: from
//! `2^s < d < 2^(s+1)` we get `2^31 < 2^p/d < 2^32`, so `q ≥ 2^31`; and
//! `q + 1 = 2^32` would need `d < 2^s + 2^s/(2^32 − 1) < 2^s + 1`, impossible
//! for an integer `d > 2^s`.
//!
//! For the proof write any `n < 2^32` as `n = k·d + t` with `0 ≤ t < d`; the
//! result is right exactly when the computed fraction is `k` plus something in
//! `[0, 1)`.
//!
//! *Round up.* `M·d = 2^p + (d − r)`, so
//! `n·M / 2^p = k + (t + n·(d − r)/2^p) / d`. When `d − r ≤ 2^s`,
//! `n·(d − r)/2^p < 2^32·2^s/2^(32+s) = 1`, so the numerator `t + …` lies in
//! `[t, t + 1) ⊆ [0, d)`: the floor is `k`.
//!
//! *Round down.* `M·d = 2^p − r`. Multiplying `n` alone would fall short (for
//! `d = 3`, `n = 3` gives `0.99…`), which is what the correction fixes:
//! `(n + 1)·M / 2^p = k + (t + 1 − (n + 1)·r/2^p) / d`. When `r ≤ 2^s`,
//! `0 < (n + 1)·r/2^p ≤ 2^32·2^s/2^(32+s) = 1` (this is where `n + 1 ≤ 2^32`
//! matters), so the numerator lies in `[t, t + 1) ⊆ [0, d)`: the floor is `k`.
//!
//! *One of the two always applies.* If `r > 2^s` then
//! `d − r < 2^(s+1) − 2^s = 2^s`, which is the round-up condition. So the rule
//! above gives exact quotients for every divisor and every 32-bit `n`. (When
//! both conditions hold either choice is exact; the rule prefers rounding
//! down, as the instancing notes specify.)
//!
//! # Worked example
//!
//! `d = 216` (72 padded vertices × instance divisor 3): `s = 7`, `p = 39`,
//! `2^39 = 2545165805·216 + 8`. `r = 8 ≤ 2^7`, so round down:
//! `M = 2545165805`, `magic = M − 2^31 = 397682157`, `extra_flags = 1`.
//! For `n = 647` (vertex 71 of instance 8): `(647 + 1)·M >> 39 = 2 = 647 / 216`,
//! and one thread later, `n = 648` (vertex 0 of instance 9), gives 3: the
//! instance divisor 3 moves to the next element exactly at instance 9.
//!
//! ```
//! use lathe_mali::instancing::magic_divisor;
//! let m = magic_divisor(216)?;
//! assert_eq!((m.shift(), m.magic(), m.extra_flags()), (7, 397_682_157, 1));
//! assert_eq!(m.divide(647), 2);
//! assert_eq!(m.divide(648), 3);
//! assert_eq!(m.divide(u32::MAX), u32::MAX / 216);
//! # Ok::<(), lathe_mali::instancing::InstancingError>(())
//! ```

use super::InstancingError;

/// Bit 31 of the multiplier: always set by the hardware, never stored.
const IMPLICIT_BIT: u64 = 1 << 31;

/// The three descriptor fields that divide by a non-power-of-two constant.
///
/// The fields are public because they are exactly what the driver packs.
/// [`magic_divisor`] builds the combination that divides by a given number
/// and [`MagicDivisor::from_fields`] checks raw fields read back from memory;
/// a value built by hand with out-of-range fields is still modelled totally
/// by [`MagicDivisor::divide`] (shift taken modulo 32, any non-zero
/// `extra_flags` rounds down), never a panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MagicDivisor {
    /// The result is shifted right by `32 + shift` in total (0..=31).
    pub shift: u32,
    /// The multiplier with its implicit bit 31 cleared.
    pub magic: u32,
    /// 1 when the round-down correction is on, else 0.
    pub extra_flags: u32,
}

impl MagicDivisor {
    /// The fields that make the magic divide return `n` unchanged:
    /// `M = 2^32 − 1` with the round-down correction and no shift gives
    /// `⌊(n + 1)(2^32 − 1) / 2^32⌋ = n + 1 − ⌈(n + 1)/2^32⌉ = n` for every
    /// 32-bit `n`. The instance-id record uses it when there is one vertex.
    pub const IDENTITY: MagicDivisor = MagicDivisor {
        shift: 0,
        magic: 0x7FFF_FFFF,
        extra_flags: 1,
    };

    /// Checks raw descriptor fields.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ShiftOutOfRange`] for a shift above 31,
    /// [`InstancingError::MagicTopBitSet`] when `magic` has bit 31 set, and
    /// [`InstancingError::MagicExtraFlagsOutOfRange`] for `extra_flags` above 1.
    pub fn from_fields(shift: u32, magic: u32, extra_flags: u32) -> Result<Self, InstancingError> {
        if shift > 31 {
            return Err(InstancingError::ShiftOutOfRange { shift });
        }
        if u64::from(magic) & IMPLICIT_BIT != 0 {
            return Err(InstancingError::MagicTopBitSet { magic });
        }
        if extra_flags > 1 {
            return Err(InstancingError::MagicExtraFlagsOutOfRange { extra_flags });
        }
        Ok(MagicDivisor {
            shift,
            magic,
            extra_flags,
        })
    }

    /// Builds the fields for a divisor already known to be at least 3 and not
    /// a power of two; the module docs prove every step below stays in range.
    pub(super) fn for_non_power_of_two(divisor: u32) -> Self {
        let shift = divisor.ilog2(); // 1..=31
        let numerator = 1u64 << (32 + shift); // at most 2^63
        let divisor = u64::from(divisor);
        let quotient = numerator / divisor; // in [2^31, 2^32 - 2]
        let remainder = numerator % divisor;
        let (multiplier, round_down) = if remainder <= 1 << shift {
            (quotient, true)
        } else {
            (quotient + 1, false)
        };
        MagicDivisor {
            shift,                                     // at most 31
            magic: (multiplier - IMPLICIT_BIT) as u32, // multiplier < 2^32
            extra_flags: u32::from(round_down),
        }
    }

    /// The shift field: the result is shifted right by `32 + shift` in total.
    pub fn shift(self) -> u32 {
        self.shift
    }

    /// The magic field: the multiplier with its implicit bit 31 cleared.
    pub fn magic(self) -> u32 {
        self.magic
    }

    /// The extra_flags field: 1 when the round-down correction is on.
    pub fn extra_flags(self) -> u32 {
        self.extra_flags
    }

    /// The full multiplier the hardware uses, implicit bit included.
    pub fn multiplier(self) -> u64 {
        IMPLICIT_BIT | u64::from(self.magic)
    }

    /// What the hardware computes for linear id `n`: multiply, keep the high
    /// word (after adding the multiplier once more when rounding down), shift.
    pub fn divide(self, n: u32) -> u32 {
        let multiplier = self.multiplier();
        let mut product = u64::from(n) * multiplier;
        if self.extra_flags != 0 {
            product += multiplier; // (n + 1)·M < 2^64, see the module docs
        }
        ((product >> 32) >> (self.shift % 32)) as u32 // the high word is below 2^32
    }
}

/// The magic-divide fields for a divisor that is not a power of two, computed
/// with exact integer arithmetic (see the module docs for the derivation).
///
/// # Errors
///
/// [`InstancingError::ZeroDivisor`] for 0, and
/// [`InstancingError::PowerOfTwoDivisor`] for 1, 2, 4, …: divide by those
/// with the power-of-two divide mode, whose shift the error carries
/// (see [`PowerOfTwoDivisor`](super::PowerOfTwoDivisor)).
pub fn magic_divisor(divisor: u32) -> Result<MagicDivisor, InstancingError> {
    if divisor == 0 {
        return Err(InstancingError::ZeroDivisor);
    }
    if divisor.is_power_of_two() {
        return Err(InstancingError::PowerOfTwoDivisor {
            divisor,
            shift: divisor.trailing_zeros(),
        });
    }
    Ok(MagicDivisor::for_non_power_of_two(divisor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_zero_and_powers_of_two() {
        assert_eq!(magic_divisor(0), Err(InstancingError::ZeroDivisor));
        assert_eq!(
            magic_divisor(1),
            Err(InstancingError::PowerOfTwoDivisor {
                divisor: 1,
                shift: 0
            })
        );
        assert_eq!(
            magic_divisor(1 << 31),
            Err(InstancingError::PowerOfTwoDivisor {
                divisor: 1 << 31,
                shift: 31
            })
        );
    }

    #[test]
    fn rounds_up_when_the_remainder_is_large() {
        // 2^35 = 3123612578·11 + 10 and 10 > 2^3, so the multiplier rounds up.
        let m = magic_divisor(11).unwrap();
        assert_eq!(
            (m.shift(), m.multiplier(), m.extra_flags()),
            (3, 3_123_612_579, 0)
        );
    }

    #[test]
    fn identity_returns_its_input() {
        for n in [0, 1, 2, 1 << 31, u32::MAX - 1, u32::MAX] {
            assert_eq!(MagicDivisor::IDENTITY.divide(n), n);
        }
    }

    #[test]
    fn raw_fields_are_checked() {
        assert_eq!(
            MagicDivisor::from_fields(32, 0, 0),
            Err(InstancingError::ShiftOutOfRange { shift: 32 })
        );
        assert_eq!(
            MagicDivisor::from_fields(3, 1 << 31, 0),
            Err(InstancingError::MagicTopBitSet { magic: 1 << 31 })
        );
        assert_eq!(
            MagicDivisor::from_fields(3, 0, 2),
            Err(InstancingError::MagicExtraFlagsOutOfRange { extra_flags: 2 })
        );
        let m = magic_divisor(1000).unwrap();
        assert_eq!(
            MagicDivisor::from_fields(m.shift(), m.magic(), m.extra_flags()),
            Ok(m)
        );
    }
}
