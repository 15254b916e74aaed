//! Exact semantics of the generic bit, integer-sign and pack/unpack
//! opcodes, as pure functions on bits. The interpreter calls these; the
//! property tests check them against independently written references.
//!
//! Results follow SPIR-V (`OpBitField*`, `OpBitReverse`, `OpBitCount`) and
//! GLSL.std.450 (`FindILsb`, `FindSMsb`, `FindUMsb`, `Pack*`/`Unpack*`).
//! Where those leave a result undefined the function returns `None`.

use crate::attrs::PackFormat;
use crate::f16;

/// `count` bits of `base` starting at bit `offset`, zero- or sign-extended.
/// `None` (undefined) when `offset + count > 32`; `count == 0` gives 0.
pub fn bitfield_extract(base: u32, offset: u32, count: u32, signed: bool) -> Option<u32> {
    if offset > 32 || count > 32 - offset {
        return None;
    }
    if count == 0 {
        return Some(0);
    }
    // Move the field to the top, then shift it back down.
    let top = base << (32 - offset - count);
    let field = if signed {
        ((top as i32) >> (32 - count)) as u32
    } else {
        top >> (32 - count)
    };
    Some(field)
}

/// `base` with bits `offset..offset + count` replaced by the low `count`
/// bits of `insert`. `None` when `offset + count > 32`.
pub fn bitfield_insert(base: u32, insert: u32, offset: u32, count: u32) -> Option<u32> {
    if offset > 32 || count > 32 - offset {
        return None;
    }
    if count == 0 {
        return Some(base);
    }
    let mask = (u32::MAX >> (32 - count)) << offset;
    Some((base & !mask) | ((insert << offset) & mask))
}

/// Lowest set bit, or `u32::MAX` (-1) for zero.
pub fn find_lsb(x: u32) -> u32 {
    if x == 0 { u32::MAX } else { x.trailing_zeros() }
}

/// Highest set bit, or -1 for zero.
pub fn ufind_msb(x: u32) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        31 - x.leading_zeros()
    }
}

/// Highest bit that differs from the sign bit, or -1 for 0 and -1.
pub fn ifind_msb(x: u32) -> u32 {
    ufind_msb(if (x as i32) < 0 { !x } else { x })
}

/// `format.lanes()` floats packed into a word, lane 0 in the low bits
/// (GLSL.std.450 `PackHalf2x16`, `PackUnorm4x8`, ...):
///
/// - half: each lane converted to binary16, round to nearest even;
/// - unorm: `round_even(clamp(c, 0, 1) * max)`;
/// - snorm: `round_even(clamp(c, -1, 1) * max)`, two's complement;
///
/// where `max` is 255 / 65535 (unorm) or 127 / 32767 (snorm), the clamp
/// is IEEE `min(max(c, lo), hi)` (so a NaN lane packs as `lo`, as Mesa's
/// `fsat`-based lowering does), and the product is f32.
pub fn pack(format: PackFormat, lanes: &[f32]) -> u32 {
    let (bits, max, signed) = match format {
        PackFormat::Half2x16 => {
            return lanes
                .iter()
                .enumerate()
                .fold(0, |w, (k, &c)| w | (f16::from_f32(c) as u32) << (16 * k));
        }
        PackFormat::Unorm4x8 => (8, 255.0f32, false),
        PackFormat::Snorm4x8 => (8, 127.0, true),
        PackFormat::Unorm2x16 => (16, 65535.0, false),
        PackFormat::Snorm2x16 => (16, 32767.0, true),
    };
    let lo = if signed { -1.0f32 } else { 0.0 };
    let field = (1u32 << bits) - 1;
    lanes.iter().enumerate().fold(0, |w, (k, &c)| {
        // f32::max/min return the non-NaN operand, as IEEE maxNum does.
        let clamped = c.max(lo).min(1.0);
        let q = (clamped * max).round_ties_even() as i32;
        w | ((q as u32) & field) << (bits * k as u32)
    })
}

/// Lane `lane` of a packed word as f32 (GLSL.std.450 `UnpackHalf2x16`,
/// ...): half exactly; unorm `q / max`; snorm `clamp(q / max, -1, 1)`,
/// with an IEEE f32 division.
pub fn unpack(format: PackFormat, word: u32, lane: u8) -> f32 {
    let (bits, max, signed) = match format {
        PackFormat::Half2x16 => return f16::to_f32((word >> (16 * lane as u32)) as u16),
        PackFormat::Unorm4x8 => (8u32, 255.0f32, false),
        PackFormat::Snorm4x8 => (8, 127.0, true),
        PackFormat::Unorm2x16 => (16, 65535.0, false),
        PackFormat::Snorm2x16 => (16, 32767.0, true),
    };
    let raw = word >> (bits * lane as u32) & ((1 << bits) - 1);
    if signed {
        // Sign-extend the field.
        let q = ((raw << (32 - bits)) as i32) >> (32 - bits);
        (q as f32 / max).clamp(-1.0, 1.0)
    } else {
        raw as f32 / max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitfield_edges() {
        assert_eq!(bitfield_extract(0xffff_ffff, 0, 32, false), Some(u32::MAX));
        assert_eq!(bitfield_extract(0x8000_0000, 31, 1, true), Some(u32::MAX));
        assert_eq!(bitfield_extract(0x8000_0000, 31, 1, false), Some(1));
        assert_eq!(bitfield_extract(0x1234, 32, 0, false), Some(0));
        assert_eq!(bitfield_extract(0x1234, 20, 13, false), None);
        assert_eq!(bitfield_insert(0, u32::MAX, 0, 32), Some(u32::MAX));
        assert_eq!(bitfield_insert(0xabcd, 0, 4, 0), Some(0xabcd));
        assert_eq!(bitfield_insert(0, 1, 33, 0), None);
        assert_eq!(find_lsb(0), u32::MAX);
        assert_eq!(ifind_msb(u32::MAX), u32::MAX);
        assert_eq!(ifind_msb(0x8000_0000), 30);
    }

    #[test]
    fn pack_rounding_and_nan() {
        assert_eq!(
            pack(PackFormat::Unorm4x8, &[0.5, 1.0, -3.0, f32::NAN]),
            0x00_00_ff_80
        );
        assert_eq!(pack(PackFormat::Snorm2x16, &[-1.0, 1.0]), 0x7fff_8001);
        assert_eq!(unpack(PackFormat::Snorm2x16, 0x8000, 0), -1.0);
        assert_eq!(unpack(PackFormat::Half2x16, 0x3c00_0000, 1), 1.0);
    }
}
