//! The hardware's padded vertex count.

use super::InstancingError;

/// The largest vertex count whose padded count still fits in 32 bits.
///
/// Every count from `0xE000_0000` up has the high bits `111x` at bit 31 and
/// pads to 2^32.
pub const MAX_VERTEX_COUNT: u32 = 0xDFFF_FFFF;

/// The number of vertex slots the thread dispatcher gives each instance.
///
/// This is exactly the hardware's rule; a driver must reproduce it bit for bit,
/// because per-vertex attributes are addressed modulo this number.
///
/// - `1..=9`: the count itself.
/// - `10..=19`: rounded up to an even number (`11 → 12`, `12 → 12`).
/// - `20` and up: take the highest set bit and the three bits below it (the
///   "high bits"), and let `n` be the number of bits below those four. Then
///   `1000 → 9·2^n`, `1001 → 10·2^n`, `101x → 12·2^n`, `110x → 14·2^n`,
///   `111x → 16·2^n`. The count lies in `[high·2^n, (high+1)·2^n)`, so each row
///   is the smallest of `{9, 10, 12, 14, 16}·2^n` above the count: the result is
///   always strictly larger and always 1, 3, 5, 7 or 9 times a power of two.
///
/// Below 20 the result can equal the count and need not be a multiple of four
/// (`7 → 7`, `10 → 10`), whatever older notes claim.
///
/// ```
/// use lathe_mali::instancing::padded_vertex_count;
/// assert_eq!(padded_vertex_count(70), 72); // 1000110: high bits 1000, n = 3, 9·2^3
/// assert_eq!(padded_vertex_count(7), 7);
/// assert_eq!(padded_vertex_count(17), 18);
/// assert_eq!(padded_vertex_count(20), 24); // 10100: high bits 1010, n = 1, 3·2^3
/// ```
///
/// Counts above [`MAX_VERTEX_COUNT`] pad to 2^32, which a 32-bit register
/// holds as 0: this function returns that wrapped value, as the hardware's
/// field would. Use [`try_padded_vertex_count`] to get an error instead.
pub fn padded_vertex_count(vertices: u32) -> u32 {
    // 0 vertices pads to 0, and 2^32 wraps to 0: both errors mean 0 here.
    try_padded_vertex_count(vertices).unwrap_or(0)
}

/// [`padded_vertex_count`] with the two cases a driver must not program
/// reported as errors.
///
/// ```
/// use lathe_mali::instancing::try_padded_vertex_count;
/// assert_eq!(try_padded_vertex_count(70), Ok(72));
/// assert!(try_padded_vertex_count(0).is_err());
/// assert!(try_padded_vertex_count(u32::MAX).is_err());
/// ```
///
/// # Errors
///
/// [`InstancingError::ZeroVertexCount`] for 0, and
/// [`InstancingError::PaddedCountOverflow`] above [`MAX_VERTEX_COUNT`], where
/// the padded count is 2^32 and no longer a 32-bit number.
pub fn try_padded_vertex_count(vertices: u32) -> Result<u32, InstancingError> {
    match vertices {
        0 => Err(InstancingError::ZeroVertexCount),
        1..=9 => Ok(vertices),
        10..=19 => Ok(vertices + (vertices & 1)),
        _ => {
            let top_bit = vertices.ilog2(); // at least 4 because vertices >= 20
            let n = top_bit - 3;
            let high_bits = vertices >> n; // 0b1000..=0b1111: the top bit is set
            let padded: u64 = match high_bits {
                0b1000 => 9 << n,
                0b1001 => 5 << (n + 1),
                0b1010 | 0b1011 => 3 << (n + 2),
                0b1100 | 0b1101 => 7 << (n + 1),
                _ => 1 << (n + 4), // 0b1110 and 0b1111
            };
            u32::try_from(padded).map_err(|_| InstancingError::PaddedCountOverflow { vertices })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_drawable_count_pads_below_2_pow_32() {
        assert_eq!(try_padded_vertex_count(MAX_VERTEX_COUNT), Ok(0xE000_0000));
        assert_eq!(padded_vertex_count(MAX_VERTEX_COUNT + 1), 0);
        assert_eq!(
            try_padded_vertex_count(MAX_VERTEX_COUNT + 1),
            Err(InstancingError::PaddedCountOverflow {
                vertices: 0xE000_0000
            })
        );
        assert_eq!(
            try_padded_vertex_count(u32::MAX),
            Err(InstancingError::PaddedCountOverflow { vertices: u32::MAX })
        );
    }

    #[test]
    fn small_counts_follow_the_below_twenty_rule() {
        let expected = [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 12, 14, 14, 16, 16, 18, 18, 20,
        ];
        for (vertices, want) in (1..20).zip(expected) {
            assert_eq!(padded_vertex_count(vertices), want, "vertices = {vertices}");
        }
        assert_eq!(padded_vertex_count(0), 0);
        assert_eq!(
            try_padded_vertex_count(0),
            Err(InstancingError::ZeroVertexCount)
        );
    }
}
