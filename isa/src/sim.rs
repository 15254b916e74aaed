//! Run-time support of generated simulators: value types and the
//! primitives of the semantics language, operand locations, and the
//! machine state of a group of threads with its timing model.
//!
//! Nothing here knows an instruction set: the register files, operand
//! decoders and per-instruction code come from `isa!` (see
//! [`crate::gen_sim`]). Floats follow IEEE-754 with round to nearest
//! even; denormals are kept (no flushing); a NaN result is the host's
//! quiet NaN. Half floats are implemented here independently of
//! `lathe_ir::f16`, which the tests use as the reference.

use std::fmt;

pub use crate::sim_io::*;
pub use crate::sim_lanes::*;
pub use crate::sim_program::*;

/// Binary16 value (its bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct F16(pub u16);

impl F16 {
    /// Widens exactly.
    pub fn to_f32(self) -> f32 {
        let h = self.0;
        let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
        let exp = (h >> 10) & 0x1f;
        let mant = (h & 0x3ff) as u32;
        match exp {
            // Subnormals are mant * 2^-24: exact products in f32.
            0 => sign * mant as f32 * f32::from_bits(0x3380_0000),
            0x1f if mant == 0 => sign * f32::INFINITY,
            0x1f => f32::from_bits(((h as u32 & 0x8000) << 16) | 0x7fc0_0000 | (mant << 13)),
            _ => f32::from_bits(
                ((h as u32 & 0x8000) << 16) | ((exp as u32 + 112) << 23) | (mant << 13),
            ),
        }
    }

    /// Rounds to nearest even (one rounding from `x`).
    pub fn from_f64(x: f64) -> F16 {
        let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
        if x.is_nan() {
            let payload = ((x.to_bits() >> 42) & 0x3ff) as u16;
            return F16(sign | 0x7e00 | payload);
        }
        let a = x.abs();
        if a >= 65520.0 {
            return F16(sign | 0x7c00);
        }
        if a < f64::from_bits(0x3f10_0000_0000_0000) {
            // Below 2^-14: a multiple of 2^-24 after rounding (1024 is the
            // smallest normal, whose bits are 0x400 as well).
            let q = (a * 16_777_216.0).round_ties_even() as u16;
            return F16(sign | q);
        }
        let e = ((a.to_bits() >> 52) as i32) - 1023;
        let mut q = (a * f64::powi(2.0, 10 - e)).round_ties_even() as u32;
        let mut e = e;
        if q == 2048 {
            q = 1024;
            e += 1;
        }
        if e > 15 {
            return F16(sign | 0x7c00);
        }
        F16(sign | (((e + 15) as u16) << 10) | (q as u16 - 1024))
    }

    pub fn from_f32(x: f32) -> F16 {
        F16::from_f64(x as f64)
    }

    /// `a * b + c` with one rounding: the sum is formed exactly as an
    /// integer multiple of 2^-48.
    pub fn fma(a: F16, b: F16, c: F16) -> F16 {
        let (fa, fb, fc) = (a.to_f32(), b.to_f32(), c.to_f32());
        if !(fa.is_finite() && fb.is_finite() && fc.is_finite()) {
            return F16::from_f32(fa * fb + fc);
        }
        // Every finite f16 is k * 2^-24 with |k| < 2^40.
        let units = |v: f32| (v as f64 * 16_777_216.0) as i128;
        let s = units(fa) * units(fb) + (units(fc) << 24);
        if s == 0 {
            let p_neg = (fa * fb).is_sign_negative();
            let both_neg = p_neg && fc.is_sign_negative() && fa * fb == 0.0;
            return F16(if both_neg { 0x8000 } else { 0 });
        }
        let sign: u16 = if s < 0 { 0x8000 } else { 0 };
        let m = s.unsigned_abs();
        let top = 127 - m.leading_zeros() as i32; // 2^top <= m
        let e = top - 48;
        let q_shift = (e - 10).max(-24) + 48;
        let q = round_shift(m, q_shift as u32);
        if e < -14 {
            return F16(sign | q as u16);
        }
        let (mut q, mut e) = (q, e);
        if q == 2048 {
            q = 1024;
            e += 1;
        }
        if e > 15 {
            return F16(sign | 0x7c00);
        }
        F16(sign | (((e + 15) as u16) << 10) | (q as u16 - 1024))
    }
}

/// `m / 2^shift` rounded to nearest even.
fn round_shift(m: u128, shift: u32) -> u128 {
    if shift == 0 {
        return m;
    }
    let q = m >> shift;
    let rem = m & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// A value type of the semantics language as the simulator stores it.
pub trait Value: Copy + PartialEq + fmt::Debug {
    /// Bits in a register: 16 or 32 (bool: 32).
    const BITS: u32;
    /// From register bits of the given precision (converting the value
    /// when it differs from the type's: floats change precision, integers
    /// extend by their signedness or truncate).
    fn from_reg(bits: u32, half: bool) -> Self;
    /// To register bits of the given precision (the inverse conversion).
    fn to_reg(self, half: bool) -> u32;
    /// An integer immediate (floats convert the value).
    fn from_int(v: i64) -> Self;
    /// Float bits of an immediate table, binary16 when `half`.
    fn from_float_bits(bits: u32, half: bool) -> Self;
    /// Source modifiers: see [`crate::semantics::Mod`].
    fn modify(self, abs: bool, neg: bool) -> Self;
    /// The `sat` destination modifier (floats clamp to [0, 1]).
    fn saturate(self) -> Self;
    /// Value conversion (see the `cvt` primitive).
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    /// Raw bits (zero-extended) and back (truncated).
    fn to_bits(self) -> u32;
    fn from_bits(b: u32) -> Self;
    /// Lanes of a vector type (1 for scalars) and the bits of one lane.
    const LANES: u32 = 1;
    const LANE_BITS: u32 = Self::BITS;
    /// Whether lanes are floats / signed integers: how a narrower
    /// swizzle piece widens into a lane (see [`swizzle`]).
    const LANE_FLOAT: bool = false;
    const LANE_SIGNED: bool = false;
    /// Registers the value spans (64-bit types: 2, low word first).
    const WORDS: u32 = 1;
    /// From the raw bits of `WORDS` full registers (no conversion beyond
    /// what [`Value::from_reg`] does for a full register).
    fn from_raw(bits: u64) -> Self {
        Self::from_reg(bits as u32, false)
    }
    fn to_raw(self) -> u64 {
        self.to_reg(false) as u64
    }
    /// Clamps float lanes to `[lo, hi]` (NaN gives `lo`); integers stay.
    fn clamp_range(self, _lo: f64, _hi: f64) -> Self {
        self
    }
}

fn float_from_reg(bits: u32, half: bool) -> f64 {
    if half {
        F16(bits as u16).to_f32() as f64
    } else {
        f32::from_bits(bits) as f64
    }
}

impl Value for f32 {
    const BITS: u32 = 32;
    const LANE_FLOAT: bool = true;
    fn clamp_range(self, lo: f64, hi: f64) -> Self {
        crate::sim_lanes::clamp_float(self, lo, hi)
    }
    fn from_reg(bits: u32, half: bool) -> Self {
        if half {
            F16(bits as u16).to_f32()
        } else {
            f32::from_bits(bits)
        }
    }
    fn to_reg(self, half: bool) -> u32 {
        if half {
            F16::from_f32(self).0 as u32
        } else {
            self.to_bits()
        }
    }
    fn from_int(v: i64) -> Self {
        v as f32
    }
    fn from_float_bits(bits: u32, half: bool) -> Self {
        Self::from_reg(bits, half)
    }
    fn modify(self, abs: bool, neg: bool) -> Self {
        let a = if abs { self.abs() } else { self };
        if neg { -a } else { a }
    }
    fn saturate(self) -> Self {
        if self.is_nan() {
            0.0
        } else {
            self.clamp(0.0, 1.0)
        }
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    fn from_bits(b: u32) -> Self {
        f32::from_bits(b)
    }
}

impl Value for F16 {
    const BITS: u32 = 16;
    const LANE_FLOAT: bool = true;
    fn clamp_range(self, lo: f64, hi: f64) -> Self {
        crate::sim_lanes::clamp_float(self, lo, hi)
    }
    fn from_reg(bits: u32, half: bool) -> Self {
        if half {
            F16(bits as u16)
        } else {
            F16::from_f32(f32::from_bits(bits))
        }
    }
    fn to_reg(self, half: bool) -> u32 {
        if half {
            self.0 as u32
        } else {
            self.to_f32().to_bits()
        }
    }
    fn from_int(v: i64) -> Self {
        F16::from_f64(v as f64)
    }
    fn from_float_bits(bits: u32, half: bool) -> Self {
        Self::from_reg(bits, half)
    }
    fn modify(self, abs: bool, neg: bool) -> Self {
        let a = if abs { self.0 & 0x7fff } else { self.0 };
        F16(if neg { a ^ 0x8000 } else { a })
    }
    fn saturate(self) -> Self {
        F16::from_f32(self.to_f32().saturate())
    }
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
    fn from_f64(v: f64) -> Self {
        F16::from_f64(v)
    }
    fn to_bits(self) -> u32 {
        self.0 as u32
    }
    fn from_bits(b: u32) -> Self {
        F16(b as u16)
    }
}

macro_rules! int_value {
    ($t:ty, $bits:expr, $signed:expr) => {
        impl Value for $t {
            const BITS: u32 = $bits;
            const LANE_SIGNED: bool = $signed;
            fn from_reg(bits: u32, half: bool) -> Self {
                let v: i64 = match (half, $signed) {
                    (true, true) => bits as u16 as i16 as i64,
                    (true, false) => (bits & 0xffff) as i64,
                    (false, true) => bits as i32 as i64,
                    (false, false) => bits as i64,
                };
                v as $t
            }
            fn to_reg(self, half: bool) -> u32 {
                if half {
                    (self as u32) & 0xffff
                } else {
                    self as i64 as u32
                }
            }
            fn from_int(v: i64) -> Self {
                v as $t
            }
            fn from_float_bits(bits: u32, half: bool) -> Self {
                Self::from_f64(float_from_reg(bits, half))
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
            fn to_bits(self) -> u32 {
                (self as u32) & (u32::MAX >> (32 - $bits))
            }
            fn from_bits(b: u32) -> Self {
                b as $t
            }
        }
    };
}

int_value!(u32, 32, false);
int_value!(i32, 32, true);
int_value!(u16, 16, false);
int_value!(i16, 16, true);
int_value!(u8, 8, false);
int_value!(i8, 8, true);

impl Value for bool {
    const BITS: u32 = 32;
    fn from_reg(bits: u32, half: bool) -> Self {
        if half { bits & 0xffff != 0 } else { bits != 0 }
    }
    fn to_reg(self, _half: bool) -> u32 {
        self as u32
    }
    fn from_int(v: i64) -> Self {
        v != 0
    }
    fn from_float_bits(bits: u32, half: bool) -> Self {
        float_from_reg(bits, half) != 0.0
    }
    fn modify(self, _abs: bool, neg: bool) -> Self {
        self ^ neg
    }
    fn saturate(self) -> Self {
        self
    }
    fn to_f64(self) -> f64 {
        self as u32 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(b: u32) -> Self {
        b != 0
    }
}

/// Float primitives.
pub trait Float: Value {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
    fn is_nan(self) -> bool;
}

impl Float for f32 {
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn sub(self, o: Self) -> Self {
        self - o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn fma(self, b: Self, c: Self) -> Self {
        self.mul_add(b, c)
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Float for F16 {
    // f32 has 24 >= 2 * 11 + 2 bits, so one f32 rounding then one f16
    // rounding equals the correctly rounded f16 result.
    fn add(self, o: Self) -> Self {
        F16::from_f32(self.to_f32() + o.to_f32())
    }
    fn sub(self, o: Self) -> Self {
        F16::from_f32(self.to_f32() - o.to_f32())
    }
    fn mul(self, o: Self) -> Self {
        F16::from_f32(self.to_f32() * o.to_f32())
    }
    fn fma(self, b: Self, c: Self) -> Self {
        F16::fma(self, b, c)
    }
    fn is_nan(self) -> bool {
        self.0 & 0x7c00 == 0x7c00 && self.0 & 0x3ff != 0
    }
}

pub fn fadd<T: Float>(a: T, b: T) -> T {
    a.add(b)
}
pub fn fsub<T: Float>(a: T, b: T) -> T {
    a.sub(b)
}
pub fn fmul<T: Float>(a: T, b: T) -> T {
    a.mul(b)
}
pub fn ffma<T: Float>(a: T, b: T, c: T) -> T {
    a.fma(b, c)
}
pub fn fmin<T: Float>(a: T, b: T) -> T {
    if a.is_nan() {
        b
    } else if b.is_nan() || a.to_f64() < b.to_f64() {
        a
    } else if a.to_f64() == b.to_f64() && a.to_f64() == 0.0 {
        // -0 < +0 for min/max.
        if a.to_f64().is_sign_negative() { a } else { b }
    } else {
        b
    }
}
pub fn fmax<T: Float>(a: T, b: T) -> T {
    if a.is_nan() {
        b
    } else if b.is_nan() || a.to_f64() > b.to_f64() {
        a
    } else if a.to_f64() == b.to_f64() && a.to_f64() == 0.0 {
        if a.to_f64().is_sign_negative() { b } else { a }
    } else {
        b
    }
}
pub fn fneg<T: Float>(a: T) -> T {
    a.modify(false, true)
}
pub fn fabs<T: Float>(a: T) -> T {
    a.modify(true, false)
}
fn round_with<T: Float>(a: T, f: fn(f64) -> f64) -> T {
    if a.is_nan() {
        a
    } else {
        T::from_f64(f(a.to_f64()))
    }
}
pub fn ffloor<T: Float>(a: T) -> T {
    round_with(a, f64::floor)
}
pub fn fceil<T: Float>(a: T) -> T {
    round_with(a, f64::ceil)
}
pub fn ftrunc<T: Float>(a: T) -> T {
    round_with(a, f64::trunc)
}
pub fn frndne<T: Float>(a: T) -> T {
    round_with(a, f64::round_ties_even)
}
pub fn frndaz<T: Float>(a: T) -> T {
    round_with(a, f64::round)
}
pub fn fsign<T: Float>(a: T) -> T {
    let x = a.to_f64();
    if x.is_nan() || x == 0.0 {
        T::from_f64(if x.is_nan() { 0.0 } else { x })
    } else {
        T::from_f64(x.signum())
    }
}
pub fn fsat<T: Float>(a: T) -> T {
    a.saturate()
}
/// Transcendentals: evaluated in f64 and rounded once; the `_ulp` bound
/// the spec declares is the hardware's, used by tests as their tolerance.
fn approx<T: Float>(a: T, f: fn(f64) -> f64) -> T {
    T::from_f64(f(a.to_f64()))
}
pub fn rcp<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, |x| 1.0 / x)
}
pub fn rsq<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, |x| 1.0 / x.sqrt())
}
pub fn sqrt<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, f64::sqrt)
}
pub fn log2<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, f64::log2)
}
pub fn exp2<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, f64::exp2)
}
pub fn sin<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, f64::sin)
}
pub fn cos<T: Float>(a: T, _ulp: i64) -> T {
    approx(a, f64::cos)
}

/// Integer primitives, on the type's width and signedness.
pub trait Int: Value {
    const SIGNED: bool;
    fn from_i64(v: i64) -> Self;
    fn to_i64(self) -> i64;
}
macro_rules! int_impl {
    ($t:ty, $s:expr) => {
        impl Int for $t {
            const SIGNED: bool = $s;
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    };
}
int_impl!(u32, false);
int_impl!(i32, true);
int_impl!(u16, false);
int_impl!(i16, true);
int_impl!(u8, false);
int_impl!(i8, true);
int_impl!(u64, false);
int_impl!(i64, true);

pub fn iadd<T: Int>(a: T, b: T) -> T {
    T::from_i64(a.to_i64().wrapping_add(b.to_i64()))
}
pub fn isub<T: Int>(a: T, b: T) -> T {
    T::from_i64(a.to_i64().wrapping_sub(b.to_i64()))
}
pub fn imul<T: Int>(a: T, b: T) -> T {
    T::from_i64(a.to_i64().wrapping_mul(b.to_i64()))
}
pub fn imul24<T: Int>(a: T, b: T) -> T {
    let low = |x: T| {
        let v = x.to_i64() & 0xff_ffff;
        if T::SIGNED && v & 0x80_0000 != 0 {
            v - 0x100_0000
        } else {
            v
        }
    };
    T::from_i64(low(a).wrapping_mul(low(b)))
}
pub fn imin<T: Int>(a: T, b: T) -> T {
    if a.to_i64() <= b.to_i64() { a } else { b }
}
pub fn imax<T: Int>(a: T, b: T) -> T {
    if a.to_i64() >= b.to_i64() { a } else { b }
}
pub fn ineg<T: Int>(a: T) -> T {
    T::from_i64(a.to_i64().wrapping_neg())
}
pub fn iabs<T: Int>(a: T) -> T {
    T::from_i64(a.to_i64().abs())
}
pub fn ishl<T: Int>(a: T, b: T) -> T {
    let n = (b.to_bits() % T::BITS) as i64;
    T::from_i64(a.to_i64() << n)
}
pub fn ishr<T: Int>(a: T, b: T) -> T {
    let n = b.to_bits() % T::BITS;
    // to_i64 sign-extends signed types and zero-extends unsigned ones
    // (u64 wraps: shift it as unsigned).
    if T::SIGNED {
        T::from_i64(a.to_i64() >> n)
    } else {
        T::from_i64(((a.to_i64() as u64) >> n) as i64)
    }
}
pub fn clz<T: Int>(a: T) -> T {
    T::from_i64((a.to_bits().leading_zeros() - (32 - T::BITS)) as i64)
}
pub fn cls<T: Int>(a: T) -> T {
    let b = a.to_bits() << (32 - T::BITS);
    let same = if (b as i32) < 0 {
        (!b).leading_zeros()
    } else {
        b.leading_zeros()
    };
    T::from_i64(same.min(T::BITS) as i64)
}
pub fn popcount<T: Int>(a: T) -> T {
    T::from_i64(a.to_bits().count_ones() as i64)
}
pub fn bitrev<T: Int>(a: T) -> T {
    T::from_bits(a.to_bits().reverse_bits() >> (32 - T::BITS))
}

/// Bitwise primitives (integers and bool).
pub trait Bits: Value {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
}
macro_rules! bits_impl {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn and(self, o: Self) -> Self { self & o }
            fn or(self, o: Self) -> Self { self | o }
            fn xor(self, o: Self) -> Self { self ^ o }
            fn not(self) -> Self { !self }
        }
    )*};
}
bits_impl!(u32, i32, u16, i16, u8, i8, u64, i64, bool);

pub fn iand<T: Bits>(a: T, b: T) -> T {
    a.and(b)
}
pub fn ior<T: Bits>(a: T, b: T) -> T {
    a.or(b)
}
pub fn ixor<T: Bits>(a: T, b: T) -> T {
    a.xor(b)
}
pub fn inot<T: Bits>(a: T) -> T {
    a.not()
}

/// `compare(a, b, [LT], [EQ], [GT], [UNORDERED])`.
pub fn compare<T: Value>(a: T, b: T, lt: i64, eq: i64, gt: i64, unordered: i64) -> bool {
    let (x, y) = (a.to_f64(), b.to_f64());
    if x.is_nan() || y.is_nan() {
        unordered != 0
    } else if x < y {
        lt != 0
    } else if x == y {
        eq != 0
    } else {
        gt != 0
    }
}

/// Value conversion. Float to integer rounds toward zero and saturates
/// (NaN gives 0), as Rust's `as` does.
pub fn cvt<A: Value, B: Value>(a: A) -> B {
    B::from_f64(a.to_f64())
}

/// Same bits, zero-extended or truncated.
pub fn bitcast<A: Value, B: Value>(a: A) -> B {
    B::from_bits(a.to_bits())
}

// ---------------------------------------------------------------------
// Machine state

/// How the disassembly names a file's units (see the `.isa` `names`
/// item): `PREFIX{N}.{C}`, or `PREFIX{N}` without component letters.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    pub prefix: &'static str,
    /// Component letters, one unit each (empty: one unit per register).
    pub comps: &'static str,
    /// Number of the first register.
    pub first: u32,
}

impl Names {
    fn per_reg(&self) -> u32 {
        (self.comps.len() as u32).max(1)
    }

    /// The unit index `name` (without the prefix) names, if below `len`.
    fn parse(&self, rest: &str, len: u32) -> Option<u32> {
        let (num, comp) = match rest.split_once('.') {
            Some((n, c)) if !self.comps.is_empty() && c.len() == 1 => {
                (n, self.comps.find(c)? as u32)
            }
            None if self.comps.is_empty() => (rest, 0),
            _ => return None,
        };
        if !num.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = num.parse().ok()?;
        let index = n
            .checked_sub(self.first)?
            .checked_mul(self.per_reg())?
            .checked_add(comp)?;
        (index < len).then_some(index)
    }

    fn name(&self, index: u32) -> String {
        let n = index / self.per_reg() + self.first;
        match self.comps.as_bytes().get((index % self.per_reg()) as usize) {
            Some(c) if !self.comps.is_empty() => format!("{}{n}.{}", self.prefix, *c as char),
            _ => format!("{}{n}", self.prefix),
        }
    }
}

/// A register file as the generated code declares it (from the spec's
/// `regfile` items).
#[derive(Clone, Copy, Debug)]
pub struct FileInfo {
    pub names: Names,
    /// Units in the file.
    pub len: u32,
    /// Bits per unit.
    pub bits: u32,
    /// The half view: its names and units (unit `h` is the low, even
    /// `h`, or high half of unit `h / 2`).
    pub half: Option<(Names, u32)>,
    pub uniform: bool,
    /// Latency class of a write to this file, overriding the writer's.
    pub latency: Option<u16>,
}

impl FileInfo {
    pub fn len(&self) -> u32 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Units addressable in the full (`half == false`) or half view.
    pub fn limit(&self, half: bool) -> u32 {
        match (half, self.half) {
            (true, Some((_, n))) => n.min(self.len * 2),
            (true, None) => 0,
            (false, _) => self.len,
        }
    }
}

/// Where an operand lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Reg {
        file: u8,
        index: u32,
    },
    /// `file[addr_file[addr_index] + offset]`.
    Rel {
        file: u8,
        addr_file: u8,
        addr_index: u32,
        offset: i32,
    },
    Imm(i64),
    ImmF(u32),
    /// Raw register bits in the instruction: read exactly as a register
    /// holding them would be (swizzles included).
    Bits(u32),
}

/// A decoded operand with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub loc: Loc,
    pub half: bool,
    pub abs: bool,
    pub neg: bool,
    pub repeat: bool,
    pub sat: bool,
    /// Lane selection on read (see [`swizzle`]; 0: none).
    pub swz: i64,
    /// 16-bit halves written (bit i: half i; 0: the whole register).
    pub wmask: u8,
    /// Clamp float results to [0, +inf) / [-1, 1] on write (NaN gives the
    /// lower bound).
    pub clamp_pos: bool,
    pub clamp_snorm: bool,
}

impl Operand {
    /// Drops the half flag of a register operand whose file has no half
    /// view (a half instruction naming a predicate or address register).
    pub fn fit(mut self, files: &[FileInfo]) -> Operand {
        if let Loc::Reg { file, .. } | Loc::Rel { file, .. } = self.loc {
            if files.get(file as usize).is_some_and(|f| f.half.is_none()) {
                self.half = false;
            }
        }
        self
    }

    /// Drops modifiers that change nothing, so the operand takes the
    /// simulator's fast path: a write mask naming both 16-bit halves
    /// writes the whole register, as no mask does.
    pub fn simplified(mut self) -> Operand {
        if self.wmask & 3 == 3 {
            self.wmask = 0;
        }
        self
    }

    pub fn at(loc: Loc) -> Operand {
        Operand {
            loc,
            half: false,
            abs: false,
            neg: false,
            repeat: false,
            sat: false,
            swz: 0,
            wmask: 0,
            clamp_pos: false,
            clamp_snorm: false,
        }
    }
}

/// Where a register operand is for every lane of one instruction (see
/// [`Machine::place`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Lane `l`'s unit is at `at + l * stride` of the machine's registers
    /// (stride 0 in a uniform file); a half view's 16 bits start at bit
    /// `shift`; a full write keeps the `mask` bits.
    Unit {
        file: u8,
        at: usize,
        stride: usize,
        /// Index of the operand's first timing stamp (`usize::MAX`: none).
        stamp: usize,
        /// Timing stamps the operand covers: 2 for a full register of a
        /// file with a half view (its halves are timed apart), else 1.
        stamps: u8,
        shift: u32,
        mask: u32,
        writable: bool,
        /// The file has a half view, so a read in the other precision
        /// than the write pays the precision switch.
        switches: bool,
        /// A full register without modifiers: read and written as its
        /// bits are.
        bare: bool,
    },
    /// Resolved lane by lane by [`Machine::read`] / [`Machine::write`].
    General,
}

/// Where a machine keeps each file's units: the uniform files' single
/// copies first, then one block of every writable file's units per lane.
/// The layout depends on the files alone, so an operand's [`Place`] is
/// the same in every machine over the same files (a program computes it
/// once).
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Offset of file `f`'s unit 0 (for lane 0 of a writable file).
    base: Vec<usize>,
    /// Offset of file `f`'s timing stamps (writable files): one per unit,
    /// or one per half unit in a file with a half view (with merged
    /// registers a dependency is tracked per half register, a full
    /// register being two; Mesa's ir3 `regmask` does the same).
    stamp_base: Vec<usize>,
    /// Timing stamps in all.
    stamps: usize,
    /// Units of the uniform files.
    uniform: usize,
    /// Units per lane block: the writable files' units.
    stride: usize,
}

impl Layout {
    pub fn new(files: &[FileInfo]) -> Layout {
        let uniform: usize = files
            .iter()
            .filter(|f| f.uniform)
            .map(|f| f.len as usize)
            .sum();
        let (mut base, mut stamp_base) = (Vec::new(), Vec::new());
        let (mut shared, mut timed, mut stamps) = (0, 0, 0);
        for f in files {
            if f.uniform {
                base.push(shared);
                stamp_base.push(usize::MAX);
                shared += f.len as usize;
            } else {
                base.push(uniform + timed);
                stamp_base.push(stamps);
                timed += f.len as usize;
                stamps += f.len as usize * stamps_per_unit(f);
            }
        }
        Layout {
            base,
            stamp_base,
            stamps,
            uniform,
            stride: timed,
        }
    }

    /// Where a plain register operand of `files` is at `rep` for every
    /// lane; [`Place::General`] for anything else (relative addressing,
    /// immediates, a register out of range), which [`Machine::read_at`]
    /// and [`Machine::write_at`] hand to [`Machine::read`] and
    /// [`Machine::write`] (errors included).
    pub fn place(&self, files: &[FileInfo], op: &Operand, rep: u32) -> Place {
        let Loc::Reg { file, index } = op.loc else {
            return Place::General;
        };
        let (Some(f), Some(&base)) = (files.get(file as usize), self.base.get(file as usize))
        else {
            return Place::General;
        };
        let index = index as u64 + if op.repeat { rep as u64 } else { 0 };
        if index >= f.limit(op.half) as u64 {
            return Place::General;
        }
        let index = index as u32;
        let (comp, shift) = if op.half {
            (index / 2, (index & 1) * 16)
        } else {
            (index, 0)
        };
        let (first, stamps) = stamp_span(f, op.half, index);
        Place::Unit {
            file,
            at: base + comp as usize,
            stride: if f.uniform { 0 } else { self.stride },
            stamp: if f.uniform {
                usize::MAX
            } else {
                self.stamp_base[file as usize] + first as usize
            },
            stamps: stamps as u8,
            shift,
            mask: if op.half || f.bits >= 32 {
                u32::MAX
            } else {
                (1 << f.bits) - 1
            },
            writable: !f.uniform,
            switches: f.half.is_some(),
            bare: !op.half
                && op.swz == 0
                && op.wmask == 0
                && !(op.abs || op.neg || op.sat || op.clamp_pos || op.clamp_snorm),
        }
    }
}

/// Timing stamps per unit of `f`: its halves are timed apart when it has
/// a half view.
fn stamps_per_unit(f: &FileInfo) -> usize {
    if f.half.is_some() { 2 } else { 1 }
}

/// The first timing stamp (from the file's base) and the number of stamps
/// an operand of unit `index` in its view (`half`) covers.
fn stamp_span(f: &FileInfo, half: bool, index: u32) -> (u32, u32) {
    match (f.half.is_some(), half) {
        (true, true) => (index, 1),
        (true, false) => (index * 2, 2),
        (false, _) => (index, 1),
    }
}

/// Why a simulation stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A read before the producer's result is ready.
    #[error(
        "hazard: instruction {consumer} reads {reg} {wait} after instruction {producer} wrote it"
    )]
    Hazard {
        consumer: usize,
        producer: usize,
        reg: String,
        /// What was missing: "N cycles too early" or "without (ss)".
        wait: String,
    },
    /// The word at `pc` is no instruction of the generation.
    #[error("instruction {pc}: 0x{word:016x} does not decode")]
    Decode { pc: usize, word: u64 },
    /// The instruction has no semantics in the spec.
    #[error("unsupported: instruction {pc} ({name}) has no semantics")]
    Unsupported { pc: usize, name: &'static str },
    /// An operand outside its register file.
    #[error("instruction {pc}: {message}")]
    Operand { pc: usize, message: String },
    /// The I/O side ([`GpuIo`]) refused an access.
    #[error("instruction {pc}: {message}")]
    Io { pc: usize, message: String },
    /// Control left the program or the step limit was reached.
    #[error("{0}")]
    Flow(String),
}

/// Timing of one register component: who wrote it, when, and what a
/// reader must wait for.
#[derive(Clone, Copy, Debug, Default)]
struct Stamp {
    cycle: u64,
    producer: u32,
    class: u16,
    /// Sync kind the reader needs (0: none), until a wait clears it.
    sync: u8,
    /// Written through the half view.
    half: bool,
    valid: bool,
}

/// A group of threads executing in lockstep, with register files and the
/// timing model (cycles, producer stamps, outstanding syncs).
#[derive(Debug)]
pub struct Machine {
    /// What I/O instructions talk to (see [`GpuIo`]).
    pub io: Box<dyn GpuIo>,
    pub files: &'static [FileInfo],
    pub lanes: usize,
    /// Every file's units in one array, placed by `layout`.
    regs: Vec<u32>,
    layout: Layout,
    /// Timing per component of the writable files (uniform files: none),
    /// one copy per component, at the component's
    /// [`Layout::stamp_base`] offset.
    stamps: Vec<Stamp>,
    /// Indices of the stamps that may still wait for a sync (so a wait
    /// visits only the outstanding results).
    pending: Vec<usize>,
    /// Issue cycle of the instruction being executed.
    pub cycle: u64,
    /// Per lane: next instruction index, or None when stopped.
    pub pc: Vec<Option<usize>>,
    /// Per lane: whether the lane takes part in the current instruction.
    pub active: Vec<bool>,
    /// Per lane: where it goes after the current instruction, when the
    /// instruction sent it somewhere (see [`Machine::redirect`]); other
    /// active lanes go on to the next instruction.
    pub next: Vec<Option<usize>>,
    /// Per lane: the current instruction set `next`.
    moved: Vec<bool>,
    /// Some lane's `moved` is set.
    redirected: bool,
    /// Per lane: discarded by a kill.
    pub killed: Vec<bool>,
    /// Per lane: switched off by a predicated region (instructions run
    /// without effect).
    pub pred_off: Vec<bool>,
    /// Per lane: return addresses of the calls in progress.
    pub calls: Vec<Vec<usize>>,
}

/// Calls in progress per thread before the simulator stops with
/// [`SimError::Flow`] (a resource limit of the simulator, so runaway
/// recursion ends; not a hardware figure).
pub const MAX_CALL_DEPTH: usize = 256;

impl Machine {
    pub fn new(files: &'static [FileInfo], lanes: usize) -> Machine {
        let layout = Layout::new(files);
        Machine {
            io: Box::new(Harness::default()),
            files,
            lanes,
            regs: vec![0; layout.uniform + layout.stride * lanes],
            stamps: vec![Stamp::default(); layout.stamps],
            layout,
            pending: Vec::new(),
            cycle: 0,
            pc: vec![Some(0); lanes],
            active: vec![false; lanes],
            next: vec![None; lanes],
            moved: vec![false; lanes],
            redirected: false,
            killed: vec![false; lanes],
            pred_off: vec![false; lanes],
            calls: vec![Vec::new(); lanes],
        }
    }

    /// Parses a register name as the disassembly prints it (`r0.x`,
    /// `hr1.y`, `c4.w`, `p0.x`; files without components: `r0`, `u4`):
    /// (file, half, component index).
    pub fn parse_reg(&self, name: &str) -> Option<(usize, bool, u32)> {
        let split = name.find(|c: char| c.is_ascii_digit())?;
        let (prefix, rest) = name.split_at(split);
        self.files.iter().enumerate().find_map(|(i, f)| {
            if f.names.prefix == prefix {
                if let Some(index) = f.names.parse(rest, f.len) {
                    return Some((i, false, index));
                }
            }
            match f.half {
                Some((h, _)) if h.prefix == prefix => {
                    h.parse(rest, f.limit(true)).map(|index| (i, true, index))
                }
                _ => None,
            }
        })
    }

    /// Where lane `lane`'s copy of a component is in `regs`, and the
    /// shift of a half view's 16 bits.
    fn slot(&self, file: usize, half: bool, index: u32, lane: usize) -> Option<(usize, u32)> {
        let f = self.files.get(file)?;
        let comp = if half { index / 2 } else { index };
        if comp >= f.len() || lane >= self.lanes {
            return None;
        }
        let shift = if half { (index & 1) * 16 } else { 0 };
        let lane_base = if f.uniform {
            0
        } else {
            lane * self.layout.stride
        };
        Some((self.layout.base[file] + lane_base + comp as usize, shift))
    }

    /// Raw bits of a register component (16 bits for a half view).
    pub fn get(&self, file: usize, half: bool, index: u32, lane: usize) -> Option<u32> {
        let (i, shift) = self.slot(file, half, index, lane)?;
        let v = self.regs[i];
        Some(if half { (v >> shift) & 0xffff } else { v })
    }

    /// Sets raw bits of a register component (masked to its width).
    pub fn set(
        &mut self,
        file: usize,
        half: bool,
        index: u32,
        lane: usize,
        bits: u32,
    ) -> Option<()> {
        let (i, shift) = self.slot(file, half, index, lane)?;
        let width = self.files[file].bits;
        let cell = &mut self.regs[i];
        if half {
            *cell = (*cell & !(0xffff << shift)) | ((bits & 0xffff) << shift);
        } else {
            *cell = bits & (u32::MAX >> (32 - width));
        }
        Some(())
    }

    /// The component an operand names at repetition `rep` for `lane`.
    pub fn resolve(
        &self,
        op: &Operand,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<Option<(usize, u32)>, SimError> {
        let step = if op.repeat { rep } else { 0 };
        let (file, index) = match op.loc {
            Loc::Reg { file, index } => (file as usize, index as i64 + step as i64),
            Loc::Rel {
                file,
                addr_file,
                addr_index,
                offset,
            } => {
                let a = self
                    .get(addr_file as usize, false, addr_index, lane)
                    .ok_or_else(|| self.bad(pc, "address register out of range"))?;
                let bits = self.files[addr_file as usize].bits;
                let a = ((a << (32 - bits)) as i32 >> (32 - bits)) as i64;
                (file as usize, a + offset as i64 + step as i64)
            }
            Loc::Imm(_) | Loc::ImmF(_) | Loc::Bits(_) => return Ok(None),
        };
        let limit = self.files[file].limit(op.half) as i64;
        if index < 0 || index >= limit {
            return Err(self.bad(
                pc,
                &format!(
                    "register {} out of range",
                    self.name(file, op.half, index.max(0) as u32)
                ),
            ));
        }
        Ok(Some((file, index as u32)))
    }

    fn bad(&self, pc: usize, message: &str) -> SimError {
        SimError::Operand {
            pc,
            message: message.to_string(),
        }
    }

    /// The disassembly name of a component.
    pub fn name(&self, file: usize, half: bool, index: u32) -> String {
        let f = &self.files[file];
        match (half, f.half) {
            (true, Some((h, _))) => h.name(index),
            _ => f.names.name(index),
        }
    }

    /// Reads an operand as `T` after its modifiers.
    pub fn read<T: Value>(
        &self,
        op: &Operand,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<T, SimError> {
        let v = match op.loc {
            Loc::Imm(v) => T::from_int(v),
            Loc::ImmF(b) => T::from_float_bits(b, op.half),
            Loc::Bits(b) => self.raw_value(b as u64, op, pc)?,
            _ => {
                let (file, index) = self.resolve(op, rep, lane, pc)?.expect("register operand");
                let bits = self
                    .get(file, op.half, index, lane)
                    .expect("resolved in range");
                if op.half || (T::WORDS == 1 && op.swz == 0) {
                    T::from_reg(bits, op.half)
                } else {
                    let high = if T::WORDS == 2 {
                        let next = self.get(file, false, index + 1, lane).ok_or_else(|| {
                            self.bad(pc, "a 64-bit operand runs past its register file")
                        })?;
                        (next as u64) << 32
                    } else {
                        0
                    };
                    self.raw_value(bits as u64 | high, op, pc)?
                }
            }
        };
        Ok(v.modify(op.abs, op.neg))
    }

    /// A value from raw register bits after the operand's lane selection.
    fn raw_value<T: Value>(&self, raw: u64, op: &Operand, pc: usize) -> Result<T, SimError> {
        let raw = swizzle::<T>(raw, op.swz).ok_or_else(|| {
            self.bad(
                pc,
                &format!(
                    "swizzle {:#x} is reserved or does not fit a {}-bit lane",
                    op.swz,
                    T::LANE_BITS
                ),
            )
        })?;
        Ok(T::from_raw(raw))
    }

    /// Reads a register component directly (`FILE[INDEX] as T`).
    pub fn read_reg<T: Value>(
        &self,
        file: usize,
        half: bool,
        index: i64,
        lane: usize,
        pc: usize,
    ) -> Result<T, SimError> {
        let op = Operand {
            half,
            ..Operand::at(Loc::Reg {
                file: file as u8,
                index: u32::try_from(index).map_err(|_| self.bad(pc, "negative register index"))?,
            })
        };
        self.read(&op, 0, lane, pc)
    }

    /// The destination modifiers of `op` applied to `v`.
    #[inline]
    fn finish<T: Value>(op: &Operand, v: T) -> T {
        let v = if op.sat { v.saturate() } else { v };
        let v = if op.clamp_pos {
            v.clamp_range(0.0, f64::INFINITY)
        } else {
            v
        };
        if op.clamp_snorm {
            v.clamp_range(-1.0, 1.0)
        } else {
            v
        }
    }

    /// Where a plain register operand is at `rep` for every lane, so the
    /// lanes of one instruction read and write it without resolving it
    /// again (see [`Layout::place`]).
    #[inline]
    pub fn place(&self, op: &Operand, rep: u32) -> Place {
        self.layout.place(self.files, op, rep)
    }

    /// The place of `op` at `rep` given `first`, its place at repetition
    /// 0 (a program computes that once, when it is decoded).
    #[inline(always)]
    pub fn place_from(&self, first: Place, op: &Operand, rep: u32) -> Place {
        if rep == 0 || !op.repeat {
            first
        } else {
            self.place(op, rep)
        }
    }

    /// [`Machine::read`] of an operand whose [`Machine::place`] at `rep`
    /// is `place`.
    #[inline(always)]
    pub fn read_at<T: Value>(
        &self,
        place: Place,
        op: &Operand,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<T, SimError> {
        if let Place::Unit {
            at,
            stride,
            shift,
            bare,
            ..
        } = place
        {
            let v = self.regs[at + lane * stride];
            if bare && T::WORDS == 1 {
                return Ok(T::from_reg(v, false));
            }
            if op.half {
                return Ok(T::from_reg((v >> shift) & 0xffff, true).modify(op.abs, op.neg));
            }
            if T::WORDS == 1 && op.swz == 0 {
                return Ok(T::from_reg(v, false).modify(op.abs, op.neg));
            }
        }
        // Immediates as `read` takes them, without the call.
        let imm = match op.loc {
            Loc::Imm(v) => Some(T::from_int(v)),
            Loc::ImmF(b) => Some(T::from_float_bits(b, op.half)),
            Loc::Bits(b) => swizzle::<T>(b as u64, op.swz).map(T::from_raw),
            Loc::Reg { .. } | Loc::Rel { .. } => None,
        };
        match imm {
            Some(v) => Ok(v.modify(op.abs, op.neg)),
            None => self.read(op, rep, lane, pc),
        }
    }

    /// [`Machine::write`] to an operand whose [`Machine::place`] at `rep`
    /// is `place`.
    #[inline(always)]
    pub fn write_at<T: Value>(
        &mut self,
        place: Place,
        op: &Operand,
        rep: u32,
        lane: usize,
        pc: usize,
        v: T,
    ) -> Result<(), SimError> {
        if let Place::Unit {
            at,
            stride,
            shift,
            mask,
            writable: true,
            bare,
            ..
        } = place
        {
            if bare && T::WORDS == 1 {
                self.regs[at + lane * stride] = v.to_reg(false) & mask;
                return Ok(());
            }
            if op.half {
                let bits = Machine::finish(op, v).to_reg(true);
                let cell = &mut self.regs[at + lane * stride];
                *cell = (*cell & !(0xffff << shift)) | ((bits & 0xffff) << shift);
                return Ok(());
            }
            if T::WORDS == 1 && op.wmask == 0 {
                let bits = Machine::finish(op, v).to_reg(false);
                self.regs[at + lane * stride] = bits & mask;
                return Ok(());
            }
        }
        self.write(op, rep, lane, pc, v)
    }

    /// Writes `v` to an operand (converted to the operand's precision,
    /// saturated if it says so).
    pub fn write<T: Value>(
        &mut self,
        op: &Operand,
        rep: u32,
        lane: usize,
        pc: usize,
        v: T,
    ) -> Result<(), SimError> {
        let Some((file, index)) = self.resolve(op, rep, lane, pc)? else {
            return Err(self.bad(pc, "write to an immediate"));
        };
        let v = Machine::finish(op, v);
        if op.half || (T::WORDS == 1 && op.wmask == 0) {
            self.set(file, op.half, index, lane, v.to_reg(op.half));
            return Ok(());
        }
        let raw = v.to_raw();
        let mut low = raw as u32;
        if op.wmask != 0 {
            let keep = (0..2)
                .filter(|h| op.wmask & (1 << h) == 0)
                .fold(0u32, |m, h| m | (0xffff << (16 * h)));
            let old = self.get(file, false, index, lane).unwrap_or(0);
            low = (old & keep) | (low & !keep);
        }
        self.set(file, false, index, lane, low);
        if T::WORDS == 2 {
            self.set(file, false, index + 1, lane, (raw >> 32) as u32)
                .ok_or_else(|| self.bad(pc, "a 64-bit result runs past its register file"))?;
        }
        Ok(())
    }

    /// The file, first timing stamp (from the file's base) and stamp
    /// count an operand covers at `rep` (uniform files and immediates have
    /// none). Relative operands use the first active lane's address.
    fn comps(
        &self,
        op: &Operand,
        rep: u32,
        pc: usize,
    ) -> Result<Option<(usize, u32, u32)>, SimError> {
        let lane = match op.loc {
            Loc::Rel { .. } => self.active.iter().position(|a| *a).unwrap_or(0),
            _ => 0,
        };
        Ok(match self.resolve(op, rep, lane, pc)? {
            Some((file, index)) if !self.files[file].uniform => {
                let (first, count) = stamp_span(&self.files[file], op.half, index);
                Some((file, first, count))
            }
            _ => None,
        })
    }

    /// The register a read in view `half` of a timing stamp of `file`
    /// names, for messages.
    fn stamp_name(&self, file: usize, half: bool, stamp: u32) -> String {
        match (self.files[file].half.is_some(), half) {
            (true, false) => self.name(file, false, stamp / 2),
            _ => self.name(file, half, stamp),
        }
    }

    /// Checks that a read of `op` at `rep` is covered: `needed(class,
    /// switched)` is the latency in slots from a producer of that class to
    /// this reader, `switched` when the read is in the other precision
    /// than the write. A relative operand also reads its address register.
    pub fn check_read(
        &self,
        op: &Operand,
        rep: u32,
        pc: usize,
        needed: impl Fn(u16, bool) -> Option<u32>,
    ) -> Result<(), SimError> {
        if let Loc::Rel {
            addr_file,
            addr_index,
            ..
        } = op.loc
        {
            let addr = Operand::at(Loc::Reg {
                file: addr_file,
                index: addr_index,
            });
            self.check_stamp(&addr, rep, pc, &needed)?;
        }
        self.check_stamp(op, rep, pc, &needed)
    }

    fn check_stamp(
        &self,
        op: &Operand,
        rep: u32,
        pc: usize,
        needed: &impl Fn(u16, bool) -> Option<u32>,
    ) -> Result<(), SimError> {
        let Some((file, first, count)) = self.comps(op, rep, pc)? else {
            return Ok(());
        };
        for stamp in first..first + count {
            self.check_one(file, stamp, op, rep, pc, needed)?;
        }
        Ok(())
    }

    fn check_one(
        &self,
        file: usize,
        stamp: u32,
        op: &Operand,
        rep: u32,
        pc: usize,
        needed: &impl Fn(u16, bool) -> Option<u32>,
    ) -> Result<(), SimError> {
        let s = self.stamps[self.layout.stamp_base[file] + stamp as usize];
        if !s.valid {
            return Ok(());
        }
        let reg = || self.stamp_name(file, op.half, stamp);
        let now = self.cycle + rep as u64;
        if s.sync != 0 {
            return Err(SimError::Hazard {
                consumer: pc,
                producer: s.producer as usize,
                reg: reg(),
                wait: format!("without waiting for its sync ({})", s.sync),
            });
        }
        let slots = now.saturating_sub(s.cycle + 1);
        let switched = s.half != op.half && self.files[file].half.is_some();
        if let Some(n) = needed(s.class, switched) {
            if slots < n as u64 {
                let why = if switched {
                    " with the precision switch"
                } else {
                    ""
                };
                return Err(SimError::Hazard {
                    consumer: pc,
                    producer: s.producer as usize,
                    reg: reg(),
                    wait: format!("{slots} cycles after (needs {n}{why})"),
                });
            }
        }
        Ok(())
    }

    /// Records that `op` at `rep` was written by instruction `pc` of
    /// latency class `class` (unless the file declares its own), needing
    /// sync kind `sync` (0: none).
    pub fn stamp_write(
        &mut self,
        op: &Operand,
        rep: u32,
        pc: usize,
        class: u16,
        sync: u8,
    ) -> Result<(), SimError> {
        if let Some((file, first, count)) = self.comps(op, rep, pc)? {
            for stamp in first..first + count {
                let at = self.layout.stamp_base[file] + stamp as usize;
                self.stamp(at, file, op, rep, pc, class, sync);
            }
        }
        Ok(())
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn stamp(
        &mut self,
        at: usize,
        file: usize,
        op: &Operand,
        rep: u32,
        pc: usize,
        class: u16,
        sync: u8,
    ) {
        // An entry already exists while the old stamp waits for a sync.
        if sync != 0 && self.stamps[at].sync == 0 {
            self.pending.push(at);
        }
        self.stamps[at] = Stamp {
            cycle: self.cycle + rep as u64,
            producer: pc as u32,
            class: self.files[file].latency.unwrap_or(class),
            sync,
            half: op.half,
            valid: true,
        };
    }

    /// [`Machine::check_read`] of an operand whose [`Machine::place`] at
    /// `rep` is `place`. `longest` bounds `needed` (see
    /// [`Latencies::longest`]): a result that old is ready whoever
    /// produced it.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn check_at(
        &self,
        place: Place,
        op: &Operand,
        rep: u32,
        pc: usize,
        longest: u32,
        needed: impl Fn(u16, bool) -> Option<u32>,
    ) -> Result<(), SimError> {
        if let Place::Unit {
            stamp,
            stamps,
            switches,
            ..
        } = place
        {
            // Uniform files have no stamps: nothing to wait for.
            let Some(all) = stamp
                .checked_add(stamps as usize)
                .and_then(|end| self.stamps.get(stamp..end))
            else {
                return Ok(());
            };
            let ready = |s: &Stamp| {
                if !s.valid {
                    return true;
                }
                if s.sync != 0 {
                    return false;
                }
                let slots = (self.cycle + rep as u64).saturating_sub(s.cycle + 1);
                if slots >= u64::from(longest) {
                    return true;
                }
                let switched = s.half != op.half && switches;
                !matches!(needed(s.class, switched), Some(n) if slots < n as u64)
            };
            if all.iter().all(ready) {
                return Ok(());
            }
        }
        if let Loc::Imm(_) | Loc::ImmF(_) | Loc::Bits(_) = op.loc {
            return Ok(());
        }
        // A hazard (reported by the general path), or not a plain register.
        self.check_read(op, rep, pc, needed)
    }

    /// [`Machine::stamp_write`] of an operand whose [`Machine::place`] at
    /// `rep` is `place`.
    #[inline]
    pub fn stamp_at(
        &mut self,
        place: Place,
        op: &Operand,
        rep: u32,
        pc: usize,
        class: u16,
        sync: u8,
    ) -> Result<(), SimError> {
        match place {
            Place::Unit {
                file,
                stamp,
                stamps,
                ..
            } => {
                if stamp < self.stamps.len() {
                    for at in stamp..stamp + stamps as usize {
                        self.stamp(at, file as usize, op, rep, pc, class, sync);
                    }
                }
                Ok(())
            }
            Place::General => self.stamp_write(op, rep, pc, class, sync),
        }
    }

    /// A wait for the sync kinds in `kinds` (bit `k - 1`: kind `k`):
    /// every result they cover is ready.
    pub fn wait_for(&mut self, kinds: u64) {
        let stamps = &mut self.stamps;
        self.pending.retain(|&at| {
            let s = &mut stamps[at];
            let bit = 1u64
                .checked_shl(u32::from(s.sync).wrapping_sub(1))
                .unwrap_or(0);
            if kinds & bit != 0 {
                s.sync = 0;
            }
            s.sync != 0
        });
    }

    /// A wait for sync kind `sync`: every result it covers is ready.
    pub fn wait(&mut self, sync: u8) {
        let stamps = &mut self.stamps;
        self.pending.retain(|&at| {
            let s = &mut stamps[at];
            if s.sync == sync {
                s.sync = 0;
            }
            s.sync != 0
        });
    }

    /// A copy of the machine (registers, timing, threads) with an empty
    /// [`Harness`] as its I/O: what other threads' values were before an
    /// instruction, or a second machine to run from the same state.
    pub fn snapshot(&self) -> Machine {
        Machine {
            io: Box::new(Harness::default()),
            files: self.files,
            lanes: self.lanes,
            regs: self.regs.clone(),
            layout: self.layout.clone(),
            stamps: self.stamps.clone(),
            pending: self.pending.clone(),
            cycle: self.cycle,
            pc: self.pc.clone(),
            active: self.active.clone(),
            next: self.next.clone(),
            moved: self.moved.clone(),
            redirected: self.redirected,
            killed: self.killed.clone(),
            pred_off: self.pred_off.clone(),
            calls: self.calls.clone(),
        }
    }

    /// `lane` calls `to` from instruction `pc`.
    pub fn call(&mut self, lane: usize, pc: usize, to: usize) -> Result<(), SimError> {
        let stack = &mut self.calls[lane];
        if stack.len() >= MAX_CALL_DEPTH {
            return Err(SimError::Flow(format!(
                "instruction {pc}: more than {MAX_CALL_DEPTH} calls in progress"
            )));
        }
        stack.push(pc + 1);
        self.redirect(lane, Some(to));
        Ok(())
    }

    /// `lane` returns from the innermost call.
    pub fn ret(&mut self, lane: usize, pc: usize) -> Result<(), SimError> {
        let back = self.calls[lane]
            .pop()
            .ok_or_else(|| SimError::Flow(format!("instruction {pc}: ret without a call")))?;
        self.redirect(lane, Some(back));
        Ok(())
    }

    /// Sends `lane` to `to` (None: it stops) after the current
    /// instruction instead of the next instruction.
    #[inline]
    pub fn redirect(&mut self, lane: usize, to: Option<usize>) {
        self.next[lane] = to;
        self.moved[lane] = true;
        self.redirected = true;
    }

    /// Whether the current instruction sent some lane elsewhere than the
    /// next instruction ([`Machine::redirect`]).
    #[inline]
    pub fn redirected(&self) -> bool {
        self.redirected
    }

    /// Picks the next group of lanes: those at the smallest pc (so
    /// diverged lanes reconverge where their paths meet). None when all
    /// lanes stopped.
    pub fn schedule(&mut self) -> Option<usize> {
        let mut first: Option<usize> = None;
        for at in self.pc.iter().copied().flatten() {
            if first.is_none_or(|f| at < f) {
                first = Some(at);
            }
        }
        let pc = first?;
        for ((active, moved), at) in self.active.iter_mut().zip(&mut self.moved).zip(&self.pc) {
            *active = *at == first;
            *moved = false;
        }
        self.redirected = false;
        Some(pc)
    }

    /// Whether every lane that has not stopped is at `pc` (so all of them
    /// run the instructions from `pc` on until one is redirected).
    pub fn converged(&self, pc: usize) -> bool {
        self.pc.iter().all(|at| at.is_none_or(|at| at == pc))
    }

    /// Moves the active lanes, which executed instruction `pc`, to where
    /// it sent them, or on to the next instruction.
    pub fn advance(&mut self, pc: usize) {
        let lanes = self.pc.iter_mut().zip(&self.next).zip(&self.moved);
        for (((at, next), moved), active) in lanes.zip(&self.active) {
            if *active {
                *at = if *moved { *next } else { pc.checked_add(1) };
            }
        }
    }

    /// Puts the active lanes at `pc` (None: stops them).
    pub fn place_active(&mut self, pc: Option<usize>) {
        for (at, active) in self.pc.iter_mut().zip(&self.active) {
            if *active {
                *at = pc;
            }
        }
    }
}
