//! IEEE 754 binary16 conversions, written out so every rounding is explicit.
//!
//! All narrowing conversions round to nearest, ties to even. NaNs keep their
//! sign and the top payload bits and come out quiet. Arithmetic on `f16` is
//! done by widening to `f64` (exact), computing, and rounding once; for
//! `+ - * / sqrt` a single `f64` rounding followed by a rounding to binary16
//! is known to equal the correctly rounded result because 53 >= 2*11 + 2.
//! Fused multiply-add uses round-to-odd in `f64` (see [`fma`]).

/// Widen binary16 bits to `f32` (always exact).
pub fn to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if mant == 0 => sign,
        0 => {
            // Subnormal: value = mant * 2^-24; normalise into an f32.
            let lead = 31 - mant.leading_zeros(); // position of the top set bit, 0..=9
            let exp32 = lead + 127 - 24;
            let frac = (mant << (23 - lead)) & 0x7f_ffff;
            sign | (exp32 << 23) | frac
        }
        0x1f if mant == 0 => sign | 0x7f80_0000,
        0x1f => sign | 0x7fc0_0000 | (mant << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

/// Widen binary16 bits to `f64` (always exact).
pub fn to_f64(h: u16) -> f64 {
    to_f32(h) as f64
}

/// Narrow an `f32` to binary16, round to nearest even.
pub fn from_f32(x: f32) -> u16 {
    // f32 -> f64 is exact, so this is a single rounding.
    from_f64(x as f64)
}

/// Narrow an `f64` to binary16, round to nearest even.
pub fn from_f64(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        if mant == 0 {
            return sign | 0x7c00;
        }
        return sign | 0x7e00 | ((mant >> 42) as u16 & 0x3ff);
    }
    if exp == 0 {
        // Zero or an f64 subnormal: far below half the smallest f16 subnormal.
        return sign;
    }
    let e = exp - 1023;
    let sig = mant | (1u64 << 52);
    // Quantum (value of the last kept bit) of the binary16 result.
    let quantum_exp = if e >= -14 { e - 10 } else { -24 };
    let shift = quantum_exp - (e - 52);
    if shift >= 54 {
        // Strictly less than half a quantum: rounds to zero.
        return sign;
    }
    let shift = shift as u32;
    let kept = sig >> shift;
    let rem = sig & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let m = if rem > half || (rem == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    if e >= -14 {
        // m is in [2^10, 2^11]; adding the biased exponent lets a carry out
        // of the mantissa bump the exponent, and overflow reach infinity.
        let r = (((e + 15) as u64) << 10) + m - 1024;
        if r >= 0x7c00 {
            sign | 0x7c00
        } else {
            sign | r as u16
        }
    } else {
        sign | m as u16
    }
}

/// `a * b + c` on binary16 values with a single rounding.
///
/// The product of two binary16 values is exact in `f64`. The sum is computed
/// in `f64` with round-to-odd (the error term decides the last bit), and
/// round-to-odd with at least two extra bits makes the final rounding to
/// binary16 correct.
pub fn fma(a: u16, b: u16, c: u16) -> u16 {
    let p = to_f64(a) * to_f64(b);
    let c = to_f64(c);
    let s = p + c;
    if !s.is_finite() {
        return from_f64(s);
    }
    // TwoSum: err is the exact rounding error of p + c.
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    if err == 0.0 || s.to_bits() & 1 == 1 {
        return from_f64(s);
    }
    // Inexact with an even last bit: step to the odd neighbour towards the
    // exact value.
    let toward_up = (err > 0.0) == (s > 0.0) || s == 0.0;
    let odd = if s == 0.0 {
        // A zero sum with a non-zero error cannot happen for finite inputs
        // (x + y == 0 is exact), but keep the arithmetic total.
        s
    } else if toward_up {
        f64::from_bits(s.to_bits() + 1)
    } else {
        f64::from_bits(s.to_bits() - 1)
    };
    from_f64(odd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An independent narrowing: pick the nearer of the two binary16
    /// neighbours by exact f64 comparison, ties to the even mantissa.
    fn reference_from_f64(x: f64) -> u16 {
        if x.is_nan() {
            return from_f64(x);
        }
        let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
        let a = x.abs();
        // Finite magnitudes in increasing order are increasing bit patterns.
        let mut lo = 0u16;
        let mut hi = 0x7c00u16; // infinity
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if to_f64(mid) <= a {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if to_f64(lo) == a {
            return sign | lo;
        }
        // Between lo and hi; hi may be infinity: use the rounding boundary
        // 65520 (the midpoint between max finite and 2^16).
        let hi_val = if hi == 0x7c00 { 65536.0 } else { to_f64(hi) };
        let lo_val = to_f64(lo);
        let mid = (lo_val + hi_val) / 2.0; // exact: both are small dyadics
        let pick = if a < mid {
            lo
        } else if a > mid {
            hi
        } else if lo & 1 == 0 {
            lo
        } else {
            hi
        };
        sign | pick
    }

    #[test]
    fn every_f16_widens_and_narrows_back() {
        for h in 0..=u16::MAX {
            let f = to_f32(h);
            if f.is_nan() {
                assert!(from_f32(f) & 0x7c00 == 0x7c00 && from_f32(f) & 0x3ff != 0);
                // Quiet NaNs keep their payload exactly.
                if h & 0x200 != 0 {
                    assert_eq!(from_f32(f), h);
                }
            } else {
                assert_eq!(from_f32(f), h, "{h:#06x}");
                assert_eq!(to_f64(h), f as f64);
            }
        }
    }

    #[test]
    fn midpoints_round_to_even_and_match_reference() {
        // Every midpoint between neighbours, and a nudge either side.
        for h in 0..0x7bffu16 {
            let lo = to_f64(h);
            let hi = to_f64(h + 1);
            let mid = (lo + hi) / 2.0;
            let expect = if h & 1 == 0 { h } else { h + 1 };
            assert_eq!(from_f64(mid), expect, "midpoint after {h:#06x}");
            assert_eq!(from_f64(-mid), expect | 0x8000);
            let below = f64::from_bits(mid.to_bits() - 1);
            let above = f64::from_bits(mid.to_bits() + 1);
            assert_eq!(from_f64(below), reference_from_f64(below));
            assert_eq!(from_f64(above), reference_from_f64(above));
        }
        assert_eq!(from_f64(65519.99), 0x7bff);
        assert_eq!(from_f64(65520.0), 0x7c00);
        assert_eq!(from_f64(1e300), 0x7c00);
        assert_eq!(from_f64(2f64.powi(-25)), 0); // tie to even (zero)
        assert_eq!(from_f64(2f64.powi(-25) * 1.0000001), 1);
        assert_eq!(from_f64(-0.0), 0x8000);
    }

    #[test]
    fn fma_is_singly_rounded() {
        // 1 + 2^-11 is a tie between 1 and 1+2^-10; with a tiny addend the
        // fused result must round up, an unfused one would tie to 1.
        let one_plus = from_f64(1.0 + 2f64.powi(-10)); // exact
        let a = one_plus;
        let b = from_f64(1.0 - 2f64.powi(-11)); // exact
        // a*b = 1 + 2^-10 - 2^-11 - 2^-21 = 1 + 2^-11 - 2^-21
        let tiny = from_f64(2f64.powi(-22)); // exact subnormal-free
        let fused = fma(a, b, tiny);
        let exact = to_f64(a) * to_f64(b) + to_f64(tiny);
        assert_eq!(fused, reference_from_f64(exact));
        // Against an exact integer reference on a sweep of values: every
        // binary16 value is a multiple of 2^-24, so a*b+c scaled by 2^48 is
        // an integer.
        let scaled = |h: u16| (to_f64(h) * 2f64.powi(24)) as i128;
        let round_scaled = |n: i128| -> u16 {
            let sign = if n < 0 { 0x8000u16 } else { 0 };
            let a = n.abs();
            let at = |h: u16| scaled(h) << 24;
            let (mut lo, mut hi) = (0u16, 0x7c00u16);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if at(mid) <= a { lo = mid } else { hi = mid }
            }
            if at(lo) == a {
                return sign | lo;
            }
            let hi_val = if hi == 0x7c00 {
                65536i128 << 48
            } else {
                at(hi)
            };
            let twice = 2 * a;
            let pick = match twice.cmp(&(at(lo) + hi_val)) {
                std::cmp::Ordering::Less => lo,
                std::cmp::Ordering::Greater => hi,
                std::cmp::Ordering::Equal => {
                    if lo & 1 == 0 {
                        lo
                    } else {
                        hi
                    }
                }
            };
            sign | pick
        };
        let samples: Vec<u16> = (0..0xfc00u16)
            .step_by(263)
            .filter(|h| h & 0x7c00 != 0x7c00)
            .collect();
        for &x in &samples {
            for &y in samples.iter().step_by(5) {
                for z in [0u16, 1, 0x3c00, 0x8001, 0x1400, 0xbc00, 0x7bff, 0x0400] {
                    let n = scaled(x) * scaled(y) + (scaled(z) << 24);
                    assert_eq!(fma(x, y, z), round_scaled(n), "{x:#06x} {y:#06x} {z:#06x}");
                }
            }
        }
    }
}
