//! The one error type of the instancing module.

use thiserror::Error;

/// Why a draw, a divisor or a raw descriptor field cannot be turned into
/// hardware state.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum InstancingError {
    /// A draw with no vertices dispatches no threads; there is nothing to describe.
    #[error("vertex count is 0: a draw needs at least one vertex")]
    ZeroVertexCount,

    /// A draw with no instances dispatches no threads; there is nothing to describe.
    #[error("instance count is 0: a draw needs at least one instance")]
    ZeroInstanceCount,

    /// GL spells "per-vertex" as instance divisor 0; this API spells it
    /// [`AttributeRate::PerVertex`](super::AttributeRate::PerVertex).
    #[error(
        "instance divisor is 0: in GL that means a per-vertex attribute; \
         describe it as per-vertex instead"
    )]
    ZeroInstanceDivisor,

    /// Division by zero has no multiplier.
    #[error("divisor is 0: there is no multiplier for division by zero")]
    ZeroDivisor,

    /// Powers of two are divided with a plain shift, not a magic multiplier.
    #[error(
        "divisor {divisor} is 2^{shift}: powers of two need no magic multiplier; \
         use the power-of-two divide mode with shift {shift}"
    )]
    PowerOfTwoDivisor {
        /// The divisor that was asked for.
        divisor: u32,
        /// The shift that divides by it.
        shift: u32,
    },

    /// The hardware pads this count to 2^32, which is not a 32-bit thread count.
    #[error(
        "vertex count {vertices} pads to 2^32 vertices, which does not fit the \
         hardware's 32-bit thread ids (at most {max} vertices can be drawn)",
        max = super::MAX_VERTEX_COUNT
    )]
    PaddedCountOverflow {
        /// The vertex count that was asked for.
        vertices: u32,
    },

    /// padded vertex count × instance count does not fit in 32 bits.
    #[error(
        "{vertices} vertices (padded to {padded}) × {instances} instances need \
         {threads} threads, but linear thread ids are 32-bit: at most 4294967295 \
         threads fit in one draw"
    )]
    TooManyThreads {
        /// The draw's vertex count.
        vertices: u32,
        /// The hardware's padded vertex count.
        padded: u32,
        /// The draw's instance count.
        instances: u32,
        /// padded × instances.
        threads: u64,
    },

    /// The shift field is 5 bits wide.
    #[error("shift {shift} does not fit the 5-bit shift field (0..=31)")]
    ShiftOutOfRange {
        /// The rejected shift.
        shift: u32,
    },

    /// In modulus mode `extra_flags` selects the odd factor 1, 3, 5, 7 or 9.
    #[error(
        "extra_flags {extra_flags} is not a modulus odd factor: it must be 0..=4 \
         (for 1, 3, 5, 7, 9)"
    )]
    ModulusExtraFlagsOutOfRange {
        /// The rejected field value.
        extra_flags: u32,
    },

    /// In magic-divide mode `extra_flags` is the one-bit round-down switch.
    #[error("extra_flags {extra_flags} for a magic divisor must be 0 or 1 (round-down off/on)")]
    MagicExtraFlagsOutOfRange {
        /// The rejected field value.
        extra_flags: u32,
    },

    /// The magic field holds the multiplier with its implicit bit 31 cleared.
    #[error(
        "magic field {magic:#010x} has bit 31 set; the field holds the multiplier \
         with its implicit top bit cleared"
    )]
    MagicTopBitSet {
        /// The rejected field value.
        magic: u32,
    },

    /// Modulus mode can only take the modulus 1, 3, 5, 7 or 9 times a power of two.
    #[error("modulus {modulus} is not 1, 3, 5, 7 or 9 times a power of two")]
    UnsupportedModulus {
        /// The rejected modulus.
        modulus: u32,
    },

    /// Only powers of two can be divided with a shift.
    #[error("divisor {divisor} is not a power of two, so a shift cannot divide by it")]
    NotPowerOfTwo {
        /// The rejected divisor.
        divisor: u32,
    },
}
