//! Attribute descriptor addressing fields, and a model of what the attribute
//! unit fetches for each linear thread id.

use super::{InstancingError, MagicDivisor};

/// The largest value the 5-bit shift field holds.
const MAX_SHIFT: u32 = 31;

fn checked_shift(shift: u32) -> Result<u8, InstancingError> {
    if shift <= MAX_SHIFT {
        Ok(shift as u8)
    } else {
        Err(InstancingError::ShiftOutOfRange { shift })
    }
}

/// The odd part of a modulus: the dispatcher has dividers for 3, 5, 7 and 9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OddFactor {
    /// A pure power of two (`extra_flags = 0`).
    One,
    /// `extra_flags = 1`.
    Three,
    /// `extra_flags = 2`.
    Five,
    /// `extra_flags = 3`.
    Seven,
    /// `extra_flags = 4`.
    Nine,
}

impl OddFactor {
    /// Reads the `extra_flags` field of a modulus descriptor, `(odd − 1) / 2`.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ModulusExtraFlagsOutOfRange`] above 4.
    pub fn from_extra_flags(extra_flags: u32) -> Result<Self, InstancingError> {
        Ok(match extra_flags {
            0 => OddFactor::One,
            1 => OddFactor::Three,
            2 => OddFactor::Five,
            3 => OddFactor::Seven,
            4 => OddFactor::Nine,
            _ => return Err(InstancingError::ModulusExtraFlagsOutOfRange { extra_flags }),
        })
    }

    /// The odd number itself.
    pub fn value(self) -> u32 {
        2 * self.extra_flags() + 1
    }

    /// The `extra_flags` field value `m`, where the odd number is `2m + 1`.
    pub fn extra_flags(self) -> u32 {
        match self {
            OddFactor::One => 0,
            OddFactor::Three => 1,
            OddFactor::Five => 2,
            OddFactor::Seven => 3,
            OddFactor::Nine => 4,
        }
    }
}

/// Modulus-mode fields: the modulus is `odd · 2^shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    shift: u8,
    odd: OddFactor,
}

impl Modulus {
    /// Checks raw descriptor fields.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ShiftOutOfRange`] above 31 and
    /// [`InstancingError::ModulusExtraFlagsOutOfRange`] above 4.
    pub fn from_fields(shift: u32, extra_flags: u32) -> Result<Self, InstancingError> {
        Ok(Modulus {
            shift: checked_shift(shift)?,
            odd: OddFactor::from_extra_flags(extra_flags)?,
        })
    }

    /// Factors a modulus into `odd · 2^shift`.
    ///
    /// # Errors
    ///
    /// [`InstancingError::UnsupportedModulus`] when the odd part is not 1, 3,
    /// 5, 7 or 9 (including for 0).
    pub fn of_value(modulus: u32) -> Result<Self, InstancingError> {
        let unsupported = InstancingError::UnsupportedModulus { modulus };
        if modulus == 0 {
            return Err(unsupported);
        }
        let shift = modulus.trailing_zeros(); // at most 31 for a non-zero u32
        let odd = modulus >> shift; // odd, so (odd - 1) / 2 is its extra_flags value
        let odd = OddFactor::from_extra_flags((odd - 1) / 2).map_err(|_| unsupported)?;
        Ok(Modulus {
            shift: shift as u8,
            odd,
        })
    }

    /// The shift field.
    pub fn shift(self) -> u32 {
        u32::from(self.shift)
    }

    /// The extra_flags field.
    pub fn extra_flags(self) -> u32 {
        self.odd.extra_flags()
    }

    /// The odd factor.
    pub fn odd_factor(self) -> OddFactor {
        self.odd
    }

    /// `odd · 2^shift`; can exceed `u32::MAX` (`9 · 2^31`), so it is a `u64`.
    pub fn value(self) -> u64 {
        u64::from(self.odd.value()) << self.shift
    }

    /// The hardware's modulo: the low `shift` bits pass through, and only the
    /// bits above them are reduced by the small odd number.
    pub fn apply(self, n: u32) -> u32 {
        let n = u64::from(n);
        let low = n & ((1 << self.shift) - 1);
        let high = (n >> self.shift) % u64::from(self.odd.value());
        // The result is n mod value() ≤ n, so it fits back in 32 bits.
        ((high << self.shift) | low) as u32
    }
}

/// Power-of-two divide fields: the divisor is `2^shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PowerOfTwoDivisor {
    shift: u8,
}

impl PowerOfTwoDivisor {
    /// Checks the raw shift field.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ShiftOutOfRange`] above 31.
    pub fn from_shift(shift: u32) -> Result<Self, InstancingError> {
        Ok(PowerOfTwoDivisor {
            shift: checked_shift(shift)?,
        })
    }

    /// The fields that divide by `divisor`.
    ///
    /// # Errors
    ///
    /// [`InstancingError::NotPowerOfTwo`] unless `divisor` is 1, 2, 4, ….
    pub fn of_value(divisor: u32) -> Result<Self, InstancingError> {
        if divisor.is_power_of_two() {
            Ok(PowerOfTwoDivisor {
                shift: divisor.trailing_zeros() as u8,
            })
        } else {
            Err(InstancingError::NotPowerOfTwo { divisor })
        }
    }

    /// The shift field.
    pub fn shift(self) -> u32 {
        u32::from(self.shift)
    }

    /// The hardware's divide: a right shift.
    pub fn apply(self, n: u32) -> u32 {
        n >> self.shift
    }
}

/// The hardware attribute type code of each addressing mode (the descriptor's
/// 6-bit type field; magic-divide descriptors are followed by a continuation
/// record, type 32, that carries the magic field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeMode {
    /// Element = linear id.
    Linear,
    /// Element = linear id / 2^shift.
    PowerOfTwoDivide,
    /// Element = linear id mod (2·extra_flags + 1)·2^shift.
    Modulus,
    /// Element = linear id / d, through the magic multiplier.
    MagicDivide,
}

impl AttributeMode {
    /// The hardware's attribute type code.
    pub fn type_code(self) -> u8 {
        match self {
            AttributeMode::Linear => 1,
            AttributeMode::PowerOfTwoDivide => 2,
            AttributeMode::Modulus => 3,
            AttributeMode::MagicDivide => 4,
        }
    }

    /// A short snake_case name, as printed by `lathe mali instancing`.
    pub fn name(self) -> &'static str {
        match self {
            AttributeMode::Linear => "linear",
            AttributeMode::PowerOfTwoDivide => "pot_divide",
            AttributeMode::Modulus => "modulus",
            AttributeMode::MagicDivide => "magic_divide",
        }
    }
}

/// How an attribute descriptor turns a linear thread id into an element
/// index: the mode and exactly the fields that mode reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeDescriptor {
    /// The linear id is the element index.
    Linear,
    /// Linear id modulo `odd · 2^shift`.
    Modulus(Modulus),
    /// Linear id shifted right.
    PowerOfTwoDivide(PowerOfTwoDivisor),
    /// Linear id divided through the magic multiplier.
    MagicDivide(MagicDivisor),
}

impl AttributeDescriptor {
    /// The addressing mode (and with it the hardware type code).
    pub fn mode(self) -> AttributeMode {
        match self {
            AttributeDescriptor::Linear => AttributeMode::Linear,
            AttributeDescriptor::Modulus(_) => AttributeMode::Modulus,
            AttributeDescriptor::PowerOfTwoDivide(_) => AttributeMode::PowerOfTwoDivide,
            AttributeDescriptor::MagicDivide(_) => AttributeMode::MagicDivide,
        }
    }

    /// The shift field (0 in linear mode, which does not read it).
    pub fn shift(self) -> u32 {
        match self {
            AttributeDescriptor::Linear => 0,
            AttributeDescriptor::Modulus(m) => m.shift(),
            AttributeDescriptor::PowerOfTwoDivide(p) => p.shift(),
            AttributeDescriptor::MagicDivide(m) => m.shift(),
        }
    }

    /// The extra_flags field (0 in the modes that do not read it).
    pub fn extra_flags(self) -> u32 {
        match self {
            AttributeDescriptor::Linear | AttributeDescriptor::PowerOfTwoDivide(_) => 0,
            AttributeDescriptor::Modulus(m) => m.extra_flags(),
            AttributeDescriptor::MagicDivide(m) => m.extra_flags(),
        }
    }

    /// The magic field, in the one mode that has it.
    pub fn magic(self) -> Option<u32> {
        match self {
            AttributeDescriptor::MagicDivide(m) => Some(m.magic()),
            _ => None,
        }
    }

    /// The element index the attribute unit fetches for `linear_id`, computed
    /// from the descriptor fields alone, the way the hardware does.
    pub fn element_index(self, linear_id: u32) -> u32 {
        match self {
            AttributeDescriptor::Linear => linear_id,
            AttributeDescriptor::Modulus(m) => m.apply(linear_id),
            AttributeDescriptor::PowerOfTwoDivide(p) => p.apply(linear_id),
            AttributeDescriptor::MagicDivide(m) => m.divide(linear_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modulus_factors_only_supported_values() {
        let m = Modulus::of_value(72).unwrap();
        assert_eq!((m.shift(), m.extra_flags(), m.value()), (3, 4, 72));
        for bad in [0, 11, 22, 13 << 4, 15] {
            assert_eq!(
                Modulus::of_value(bad),
                Err(InstancingError::UnsupportedModulus { modulus: bad })
            );
        }
        assert_eq!(Modulus::of_value(1 << 31).map(Modulus::shift), Ok(31));
    }

    #[test]
    fn modulus_with_value_above_u32_is_a_no_op() {
        let m = Modulus::from_fields(31, 4).unwrap();
        assert_eq!(m.value(), 9 << 31);
        for n in [0, 12345, 1 << 31, u32::MAX] {
            assert_eq!(m.apply(n), n);
        }
    }

    #[test]
    fn modulus_matches_plain_remainder() {
        for (shift, flags) in [(0, 0), (0, 4), (3, 4), (5, 1), (31, 0), (30, 1), (29, 3)] {
            let m = Modulus::from_fields(shift, flags).unwrap();
            for n in [
                0,
                1,
                71,
                72,
                73,
                1 << 31,
                (1 << 31) + 7,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(
                    u64::from(m.apply(n)),
                    u64::from(n) % m.value(),
                    "{m:?} n={n}"
                );
            }
        }
    }

    #[test]
    fn raw_fields_are_checked() {
        assert_eq!(
            Modulus::from_fields(32, 0),
            Err(InstancingError::ShiftOutOfRange { shift: 32 })
        );
        assert_eq!(
            Modulus::from_fields(0, 5),
            Err(InstancingError::ModulusExtraFlagsOutOfRange { extra_flags: 5 })
        );
        assert_eq!(
            PowerOfTwoDivisor::from_shift(40),
            Err(InstancingError::ShiftOutOfRange { shift: 40 })
        );
        assert_eq!(
            PowerOfTwoDivisor::of_value(12),
            Err(InstancingError::NotPowerOfTwo { divisor: 12 })
        );
        assert_eq!(
            PowerOfTwoDivisor::of_value(0),
            Err(InstancingError::NotPowerOfTwo { divisor: 0 })
        );
    }
}
