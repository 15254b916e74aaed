//! Run-time support for packed and wide values in generated simulators:
//! 64-bit integers over register pairs, vectors of 16-bit and 8-bit lanes
//! in one 32-bit register (`V2`, `V4`), lane selection on read
//! ([`swizzle`]), and the primitives that need them: directed rounding,
//! saturating and halving integer arithmetic, `ldexp`/`frexp`, float
//! flushing. Re-exported from [`crate::sim`], which generated code calls.

use crate::sim::{F16, Float, Int, Value};

/// Clamps a float to `[lo, hi]`; NaN gives `lo`.
pub fn clamp_float<T: Value>(v: T, lo: f64, hi: f64) -> T {
    let x = v.to_f64();
    if x.is_nan() || x < lo {
        T::from_f64(lo)
    } else if x > hi {
        T::from_f64(hi)
    } else {
        v
    }
}

macro_rules! wide_value {
    ($t:ty, $signed:expr) => {
        impl Value for $t {
            const BITS: u32 = 64;
            const LANE_SIGNED: bool = $signed;
            const WORDS: u32 = 2;
            fn from_reg(bits: u32, half: bool) -> Self {
                match (half, $signed) {
                    (true, true) => bits as u16 as i16 as $t,
                    (true, false) => (bits & 0xffff) as $t,
                    (false, true) => bits as i32 as $t,
                    (false, false) => bits as $t,
                }
            }
            fn to_reg(self, half: bool) -> u32 {
                if half {
                    (self as u32) & 0xffff
                } else {
                    self as u32
                }
            }
            fn from_int(v: i64) -> Self {
                v as $t
            }
            fn from_float_bits(bits: u32, half: bool) -> Self {
                let f = if half {
                    F16(bits as u16).to_f32() as f64
                } else {
                    f32::from_bits(bits) as f64
                };
                f as $t
            }
            fn modify(self, abs: bool, neg: bool) -> Self {
                if $signed {
                    let a = if abs {
                        (self as i64).wrapping_abs() as $t
                    } else {
                        self
                    };
                    if neg { (0 as $t).wrapping_sub(a) } else { a }
                } else if neg {
                    !self
                } else {
                    self
                }
            }
            fn saturate(self) -> Self {
                self
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            /// The low 32 bits.
            fn to_bits(self) -> u32 {
                self as u32
            }
            fn from_bits(b: u32) -> Self {
                b as $t
            }
            fn from_raw(bits: u64) -> Self {
                bits as $t
            }
            fn to_raw(self) -> u64 {
                self as u64
            }
        }
    };
}

wide_value!(u64, false);
wide_value!(i64, true);

/// Two 16-bit lanes in one 32-bit register, lane 0 in the low half.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct V2<T>(pub [T; 2]);

/// Four 8-bit lanes in one 32-bit register, lane 0 in the low byte.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct V4<T>(pub [T; 4]);

macro_rules! vector_value {
    ($v:ident, $n:expr) => {
        impl<T: Value> $v<T> {
            /// Applies `f` to each lane.
            pub fn map1<U>(self, f: impl Fn(T) -> U) -> $v<U> {
                $v(self.0.map(f))
            }
            /// Applies `f` lane by lane to two vectors.
            pub fn map2<U>(self, b: Self, f: impl Fn(T, T) -> U) -> $v<U> {
                let mut i = 0;
                $v([(); $n].map(|_| {
                    let r = f(self.0[i], b.0[i]);
                    i += 1;
                    r
                }))
            }
            /// Applies `f` lane by lane to three vectors.
            pub fn map3<U>(self, b: Self, c: Self, f: impl Fn(T, T, T) -> U) -> $v<U> {
                let mut i = 0;
                $v([(); $n].map(|_| {
                    let r = f(self.0[i], b.0[i], c.0[i]);
                    i += 1;
                    r
                }))
            }
        }

        impl<T: Value> Value for $v<T> {
            const BITS: u32 = 32;
            const LANES: u32 = $n;
            const LANE_BITS: u32 = 32 / $n;
            const LANE_FLOAT: bool = T::LANE_FLOAT;
            const LANE_SIGNED: bool = T::LANE_SIGNED;
            fn from_reg(bits: u32, _half: bool) -> Self {
                let w = 32 / $n;
                let mut i = 0;
                $v([(); $n].map(|_| {
                    let lane = (bits >> (w * i)) & (u32::MAX >> (32 - w));
                    i += 1;
                    T::from_bits(lane)
                }))
            }
            fn to_reg(self, _half: bool) -> u32 {
                let w = 32 / $n;
                self.0.iter().enumerate().fold(0u32, |acc, (i, l)| {
                    acc | ((l.to_bits() & (u32::MAX >> (32 - w))) << (w * i as u32))
                })
            }
            fn from_int(v: i64) -> Self {
                $v([T::from_int(v); $n])
            }
            fn from_float_bits(bits: u32, half: bool) -> Self {
                $v([T::from_float_bits(bits, half); $n])
            }
            fn modify(self, abs: bool, neg: bool) -> Self {
                self.map1(|l| l.modify(abs, neg))
            }
            fn saturate(self) -> Self {
                self.map1(|l| l.saturate())
            }
            /// Lane 0's value (vectors convert lane by lane in generated code).
            fn to_f64(self) -> f64 {
                self.0[0].to_f64()
            }
            fn from_f64(v: f64) -> Self {
                $v([T::from_f64(v); $n])
            }
            fn to_bits(self) -> u32 {
                self.to_reg(false)
            }
            fn from_bits(b: u32) -> Self {
                Self::from_reg(b, false)
            }
            fn clamp_range(self, lo: f64, hi: f64) -> Self {
                self.map1(|l| l.clamp_range(lo, hi))
            }
        }

        impl<T: Value> Lanes for $v<T> {
            type Elem = T;
            fn lane(self, k: usize) -> T {
                self.0[k % $n]
            }
        }
    };
}

vector_value!(V2, 2);
vector_value!(V4, 4);

/// Vectors: access to one lane.
pub trait Lanes: Value {
    type Elem: Value;
    fn lane(self, k: usize) -> Self::Elem;
}

/// `lane(v, [K])`: lane `K` of a vector.
pub fn lane<V: Lanes>(v: V, k: i64) -> V::Elem {
    v.lane(k as usize)
}

/// `vec2(a, b)`: a vector of two lanes.
pub fn vec2<T: Value>(a: T, b: T) -> V2<T> {
    V2([a, b])
}

/// `vec4(a, b, c, d)`: a vector of four lanes.
pub fn vec4<T: Value>(a: T, b: T, c: T, d: T) -> V4<T> {
    V4([a, b, c, d])
}

fn low_bits(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// Lane selection of an operand read: `desc` is `W | K0 << 8 | K1 << 12 |
/// K2 << 16 | K3 << 20`: lane `i` of the value takes the `W`-bit piece
/// `Ki` of the raw register bits (`W` is 8, 16 or 32), widened to the
/// lane: integers by their signedness, a 16-bit float piece to f32.
/// `desc == 0` is no selection; a negative or unusable `desc` gives None.
#[inline]
pub fn swizzle<T: Value>(raw: u64, desc: i64) -> Option<u64> {
    if desc == 0 {
        return Some(raw);
    }
    if desc < 0 {
        return None;
    }
    let w = (desc & 0xff) as u32;
    if !matches!(w, 8 | 16 | 32) || w > T::LANE_BITS {
        return None;
    }
    let mut out = 0u64;
    for i in 0..T::LANES {
        let k = ((desc >> (8 + 4 * i)) & 0xf) as u32;
        if (k + 1) * w > 64 {
            return None;
        }
        let piece = (raw >> (k * w)) & low_bits(w);
        let lane = if w == T::LANE_BITS {
            piece
        } else if T::LANE_FLOAT {
            if w != 16 || T::LANE_BITS != 32 {
                return None;
            }
            F16(piece as u16).to_f32().to_bits() as u64
        } else if T::LANE_SIGNED {
            let shift = 64 - w;
            ((((piece << shift) as i64) >> shift) as u64) & low_bits(T::LANE_BITS)
        } else {
            piece
        };
        out |= lane << (i * T::LANE_BITS);
    }
    Some(out)
}

// ---------------------------------------------------------------------
// Directed rounding

/// Rounding modes of the `…r` primitives: 0 to nearest even, 1 toward
/// +inf, 2 toward -inf, 3 toward zero.
pub const ROUND_MODES: [&str; 4] = ["nearest even", "toward +inf", "toward -inf", "toward zero"];

/// Error-free sum: `a + b == s + e` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// The neighbour of a float toward +inf (`up`) or -inf, in its format.
fn step<T: Float>(r: T, up: bool) -> T {
    let x = r.to_f64();
    if x.is_nan() {
        return r;
    }
    let bits = r.to_bits() as u64;
    let (sign, mag_mask) = if T::BITS == 16 {
        (0x8000u64, 0x7fffu64)
    } else {
        (0x8000_0000, 0x7fff_ffff)
    };
    let mag = bits & mag_mask;
    let negative = bits & sign != 0;
    let next = if mag == 0 {
        // ±0: the smallest subnormal of the wanted sign.
        if up { 1 } else { sign | 1 }
    } else if negative == up {
        // Toward zero: one unit less in magnitude.
        bits - 1
    } else {
        bits + 1
    };
    T::from_bits(next as u32)
}

/// Rounds the exact value `hi + lo` (an error-free pair) to `T` with
/// rounding mode `mode` (see [`ROUND_MODES`]).
fn round_pair<T: Float>(hi: f64, lo: f64, mode: i64) -> T {
    let r = T::from_f64(hi);
    if mode == 0 || hi.is_nan() || !hi.is_finite() {
        return r;
    }
    let d = hi - r.to_f64();
    let above = if d != 0.0 { d > 0.0 } else { lo > 0.0 };
    let below = if d != 0.0 { d < 0.0 } else { lo < 0.0 };
    if !above && !below {
        return r;
    }
    let positive = !r.to_f64().is_sign_negative();
    let up = match mode {
        1 => above,
        2 => {
            if below {
                return step(r, false);
            }
            return r;
        }
        // Toward zero: a value above a negative result, or below a
        // positive one, is closer to zero.
        _ => {
            if above && !positive {
                true
            } else if below && positive {
                return step(r, false);
            } else {
                return r;
            }
        }
    };
    if up { step(r, true) } else { r }
}

/// `a + b` rounded with `mode`.
pub fn faddr<T: Float>(a: T, b: T, mode: i64) -> T {
    if mode == 0 {
        return a.add(b);
    }
    let (s, e) = two_sum(a.to_f64(), b.to_f64());
    round_pair(s, e, mode)
}

/// `a - b` rounded with `mode`.
pub fn fsubr<T: Float>(a: T, b: T, mode: i64) -> T {
    faddr(a, b.modify(false, true), mode)
}

/// `a * b` rounded with `mode` (the product is exact in f64).
pub fn fmulr<T: Float>(a: T, b: T, mode: i64) -> T {
    if mode == 0 {
        return a.mul(b);
    }
    round_pair(a.to_f64() * b.to_f64(), 0.0, mode)
}

/// `a * b + c`, one rounding with `mode`.
pub fn ffmar<T: Float>(a: T, b: T, c: T, mode: i64) -> T {
    if mode == 0 {
        return a.fma(b, c);
    }
    let (s, e) = two_sum(a.to_f64() * b.to_f64(), c.to_f64());
    round_pair(s, e, mode)
}

/// `cvtr(x, T, [MODE])`: value conversion with a rounding mode. Float to
/// integer rounds with the mode, saturates, NaN gives 0; to a float it
/// rounds once with the mode.
pub fn cvtr<A: Value, B: Value>(a: A, mode: i64) -> B {
    let x = a.to_f64();
    if B::LANE_FLOAT {
        if mode == 0 || x.is_nan() {
            return B::from_f64(x);
        }
        // f32, f16 and integers up to 32 bits are exact in f64.
        return match B::BITS {
            16 => B::from_f64(round_pair::<F16>(x, 0.0, mode).to_f64()),
            _ => B::from_f64(round_pair::<f32>(x, 0.0, mode).to_f64()),
        };
    }
    let r = match mode {
        1 => x.ceil(),
        2 => x.floor(),
        3 => x.trunc(),
        _ => x.round_ties_even(),
    };
    B::from_f64(r)
}

// ---------------------------------------------------------------------
// Other primitives

/// `a + b` clamped to the type's range (its signedness).
pub fn iaddsat<T: Int>(a: T, b: T) -> T {
    saturate_int::<T>(a.to_i64() as i128 + b.to_i64() as i128)
}

/// `a - b` clamped to the type's range.
pub fn isubsat<T: Int>(a: T, b: T) -> T {
    saturate_int::<T>(a.to_i64() as i128 - b.to_i64() as i128)
}

/// `a * b` clamped to the type's range.
pub fn imulsat<T: Int>(a: T, b: T) -> T {
    saturate_int::<T>(a.to_i64() as i128 * b.to_i64() as i128)
}

/// `num([E], T)`: a field expression's value as `T`.
pub fn num<T: Value>(v: i64) -> T {
    T::from_int(v)
}

fn saturate_int<T: Int>(v: i128) -> T {
    let bits = T::BITS;
    let (lo, hi) = if T::SIGNED {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    T::from_i64(v.clamp(lo, hi) as i64)
}

/// `(a + b + up) >> 1` without overflow (`up` non-zero rounds up).
pub fn ihadd<T: Int>(a: T, b: T, up: i64) -> T {
    let wide = |x: T| {
        if T::SIGNED || T::BITS < 64 {
            x.to_i64() as i128
        } else {
            x.to_i64() as u64 as i128
        }
    };
    T::from_i64(((wide(a) + wide(b) + (up != 0) as i128) >> 1) as i64)
}

/// `x * 2^n`, rounded once (to nearest even).
pub fn ldexp<T: Float, N: Int>(x: T, n: N) -> T {
    let n = n.to_i64().clamp(-2000, 2000) as i32;
    let v = x.to_f64();
    if v.is_nan() || v.is_infinite() || v == 0.0 {
        return x;
    }
    // Split the scale so no intermediate overflows or goes subnormal early.
    let half = n / 2;
    T::from_f64(v * 2f64.powi(half) * 2f64.powi(n - half))
}

/// The mantissa of `frexp`: `x = m * 2^e` with `0.5 <= |m| < 1`; zero,
/// infinities and NaN are returned unchanged.
pub fn frexpm<T: Float>(x: T) -> T {
    let v = x.to_f64();
    if v == 0.0 || !v.is_finite() {
        return x;
    }
    let e = frexp_exp(v);
    T::from_f64(v / 2f64.powi(e))
}

/// The exponent of `frexp` as s32 (0 for zero, infinities and NaN).
pub fn frexpe<T: Float>(x: T) -> i32 {
    let v = x.to_f64();
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    frexp_exp(v)
}

fn frexp_exp(v: f64) -> i32 {
    // f64 holds every f32/f16 as a normal number.
    let biased = ((v.to_bits() >> 52) & 0x7ff) as i32;
    biased - 1022
}

/// `fflush(x, [FTZ], [INF], [NAN])`: subnormals to signed zero when FTZ,
/// infinities to the largest finite value of their sign when INF, and
/// NaN mode 1 gives +0, mode 2 a quiet NaN (0: unchanged).
pub fn fflush<T: Float>(x: T, ftz: i64, inf: i64, nan: i64) -> T {
    let v = x.to_f64();
    if v.is_nan() {
        return match nan {
            1 => T::from_f64(0.0),
            2 => T::from_f64(f64::NAN),
            _ => x,
        };
    }
    let max = if T::BITS == 16 {
        65504.0
    } else {
        f32::MAX as f64
    };
    let min_normal = if T::BITS == 16 {
        2f64.powi(-14)
    } else {
        2f64.powi(-126)
    };
    if inf != 0 && v.is_infinite() {
        return T::from_f64(max.copysign(v));
    }
    if ftz != 0 && v != 0.0 && v.abs() < min_normal {
        return T::from_f64(0.0f64.copysign(v));
    }
    x
}

/// `first_cluster_but_last([N])`: whether `lane` is an active thread of
/// the first `n`-thread cluster with an active thread, and not its last
/// active one.
pub fn first_cluster_but_last(active: &[bool], lane: usize, n: usize) -> bool {
    let n = n.max(1);
    let Some(first) = active.iter().position(|a| *a) else {
        return false;
    };
    let cluster = first / n;
    let last = (cluster * n..((cluster + 1) * n).min(active.len()))
        .rev()
        .find(|&l| active[l]);
    lane / n == cluster && active.get(lane) == Some(&true) && Some(lane) != last
}
