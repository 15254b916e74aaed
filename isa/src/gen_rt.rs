//! Run-time support for the display code `isa!` generates.
//!
//! The generated code resolves every name at expansion time to a small
//! integer and every template to straight-line writes; what is left for run
//! time is the part of the engine's semantics that depends on the word:
//! which `when` override of a level is active (decided lazily, in the
//! engine's order, with the override under test visible to its own
//! condition), the nesting guard on derived values, and the caller's scope
//! for a sub-encoding's params. This module holds that state machine and
//! the scalar formatters; it knows nothing about any instruction set.

use std::cell::Cell;
use std::fmt::{self, Write};

use crate::display::{DisasmError, MAX_DEPTH};
use crate::expr::MAX_EVAL_DEPTH;
use crate::fields::DecodeWarning;
use crate::format::{sign_extend, write_c_f};

const UNKNOWN: u8 = 255;
const NONE: u8 = 254;
const TESTING: u8 = 128;

/// Where generated display code writes one instruction: straight into the
/// caller's `String` (each piece an inlined copy, no call through `dyn
/// Write`), with set don't-care bits — and, on request, `assert`
/// mismatches — collected beside it for the `\t; ` note. Mesa's decoder
/// does not report `assert` bits (its own ir3 vectors set bit 47 of `sam`,
/// which its XML asserts to be zero, and expect no note), so the note
/// names only don't-care bits.
pub struct Buf<'o> {
    text: &'o mut String,
    warnings: Vec<DecodeWarning>,
    dont_cares: bool,
    asserts: bool,
}

thread_local! {
    static SPARE: Cell<String> = const { Cell::new(String::new()) };
}

/// Runs `f` on this thread's spare `String` (emptied; it keeps its
/// capacity, so only the first use on a thread allocates).
pub fn with_spare<R>(f: impl FnOnce(&mut String) -> R) -> R {
    let mut s = SPARE.with(Cell::take);
    s.clear();
    let r = f(&mut s);
    SPARE.with(|c| c.set(s));
    r
}

impl<'o> Buf<'o> {
    /// Appends to `text`; collects don't-care bits if `dont_cares`, and
    /// `assert` mismatches if `asserts`.
    pub fn new(text: &'o mut String, dont_cares: bool, asserts: bool) -> Self {
        Buf {
            text,
            warnings: Vec::new(),
            dont_cares,
            asserts,
        }
    }

    /// Unexpected bits found so far.
    pub fn warnings(&self) -> &[DecodeWarning] {
        &self.warnings
    }

    /// The unexpected bits found, giving the text back to its owner.
    pub fn into_warnings(self) -> Vec<DecodeWarning> {
        self.warnings
    }

    /// Records set don't-care bits of `leaf`.
    #[cold]
    pub fn dont_care(&mut self, leaf: &'static str, bits: u64) {
        if !self.dont_cares {
            return;
        }
        self.warnings.push(DecodeWarning::DontCare {
            leaf: leaf.into(),
            bits,
        });
    }

    /// Records `assert` bits of `leaf` that differ from the spec.
    #[cold]
    pub fn assert_failed(&mut self, leaf: &'static str, mask: u64, expected: u64, found: u64) {
        if !self.asserts {
            return;
        }
        self.warnings.push(DecodeWarning::Assert {
            leaf: leaf.into(),
            mask,
            expected,
            found,
        });
    }
}

impl Write for Buf<'_> {
    #[inline(always)]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

/// Writes `\t; ` and the warnings, comma-separated (nothing if none), as
/// Mesa's decoder does with errors shown.
pub fn write_note(out: &mut dyn Write, warnings: &[DecodeWarning]) -> fmt::Result {
    for (i, w) in warnings.iter().enumerate() {
        out.write_str(if i == 0 { "\t; " } else { ", " })?;
        write!(out, "{w}")?;
    }
    Ok(())
}

/// A name's value in a scope, by interned name id.
pub type ValueFn = for<'x> fn(&Ctx<'x>, u16) -> Option<i64>;
/// Writes a name's text in a scope, by interned name id.
pub type WriteFn = for<'x, 'o> fn(&Ctx<'x>, u16, &mut Buf<'o>) -> Result<(), DisasmError>;
/// The conditions of the `when`s of one level: `(ctx, level, index)`.
pub type CondFn = for<'x> fn(&Ctx<'x>, usize, usize) -> Option<i64>;

/// The scope that decoded a sub-encoding operand, and how the operand's
/// params map to names there: `(param id, caller's name id)`.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub ctx: &'a Ctx<'a>,
    pub binds: &'static [(u16, u16)],
    pub value: ValueFn,
    pub write: WriteFn,
}

/// One decoded (sub-)encoding being shown.
pub struct Ctx<'a> {
    pub word: u64,
    pub generation: u32,
    pub validate: bool,
    pub caller: Option<Caller<'a>>,
    active: [Cell<u8>; MAX_DEPTH],
    depth: Cell<usize>,
}

impl<'a> Ctx<'a> {
    #[inline]
    pub fn new(word: u64, generation: u32, validate: bool, caller: Option<Caller<'a>>) -> Self {
        Ctx {
            word,
            generation,
            validate,
            caller,
            active: std::array::from_fn(|_| Cell::new(UNKNOWN)),
            depth: Cell::new(0),
        }
    }

    /// The active `when` of chain level `level` (which has `count` of
    /// them), deciding it on first use exactly as the engine does: each
    /// candidate's condition is evaluated with that candidate visible.
    #[inline]
    pub fn active(&self, level: usize, count: usize, cond: CondFn) -> Option<usize> {
        if count == 0 || level >= MAX_DEPTH {
            return None;
        }
        let s = self.active[level].get();
        if s == UNKNOWN {
            let mut chosen = NONE;
            for j in 0..count.min(usize::from(TESTING) - 1) {
                self.active[level].set(TESTING + j as u8);
                if cond(self, level, j).is_some_and(|v| v != 0) {
                    chosen = j as u8;
                    break;
                }
            }
            self.active[level].set(chosen);
            return (chosen != NONE).then_some(usize::from(chosen));
        }
        match s {
            NONE => None,
            s if s >= TESTING => Some(usize::from(s - TESTING)),
            s => Some(usize::from(s)),
        }
    }

    /// Evaluates one top-level expression (a derived value, a condition, a
    /// check) under the engine's nesting limit.
    #[inline]
    pub fn guard(&self, f: impl FnOnce() -> Option<i64>) -> Option<i64> {
        let d = self.depth.get();
        if d > MAX_EVAL_DEPTH {
            return None;
        }
        self.depth.set(d + 1);
        let r = f();
        self.depth.set(d);
        r
    }

    /// A param's value, from the caller's scope.
    #[inline]
    pub fn param_value(&self, name: u16) -> Option<i64> {
        let c = self.caller?;
        let &(_, bound) = c.binds.iter().find(|(p, _)| *p == name)?;
        (c.value)(c.ctx, bound)
    }

    /// Writes a param as the caller shows it; `Ok(false)` if the name is
    /// not a bound param.
    #[inline]
    pub fn param_write(&self, name: u16, out: &mut Buf<'_>) -> Result<bool, DisasmError> {
        let Some(c) = self.caller else {
            return Ok(false);
        };
        let Some(&(_, bound)) = c.binds.iter().find(|(p, _)| *p == name) else {
            return Ok(false);
        };
        (c.write)(c.ctx, bound, out)?;
        Ok(true)
    }
}

/// How a scalar field value is shown (a field type without the spec).
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    Uint,
    Int,
    Hex,
    HexUpper,
    Offset,
    Uoffset,
    Float,
    Fixed(u32),
    Bool,
    BoolText(&'static str),
    BoolInv(&'static str),
    /// An enum's `(value, text)` pairs, sorted by value.
    Enum(&'static [(u64, &'static str)]),
    /// A sub-encoding value shown as a number (never reached by templates
    /// that the checker accepts, kept for parity with the engine).
    Number,
}

/// The text of `v` in an enum table.
#[inline]
pub fn enum_text(table: &'static [(u64, &'static str)], v: u64) -> Option<&'static str> {
    table
        .binary_search_by_key(&v, |&(x, _)| x)
        .ok()
        .map(|i| table[i].1)
}

/// Writes a scalar exactly as [`crate::format::write_scalar`] does.
#[inline]
pub fn write_scalar(out: &mut dyn Write, ty: Scalar, v: u64, width: u32) -> fmt::Result {
    match ty {
        Scalar::Uint | Scalar::Number => write_u64(out, v),
        Scalar::Int => write_int(out, v, width),
        Scalar::Hex => write!(out, "{v:x}"),
        Scalar::HexUpper => write!(out, "{v:X}"),
        Scalar::Offset => {
            let s = sign_extend(v, width);
            if s != 0 {
                write!(out, "{s:+}")?;
            }
            Ok(())
        }
        Scalar::Uoffset => {
            if v != 0 {
                out.write_char('+')?;
                write_u64(out, v)?;
            }
            Ok(())
        }
        Scalar::Float => write_float(out, crate::format::float_value(v, width)),
        Scalar::Fixed(r) => {
            let s = sign_extend(v, width) as f64;
            write_float(out, s / (1u64 << r) as f64)
        }
        Scalar::Bool => write_u64(out, v),
        Scalar::BoolText(s) => {
            if v != 0 {
                out.write_str(s)?;
            }
            Ok(())
        }
        Scalar::BoolInv(s) => {
            if v == 0 {
                out.write_str(s)?;
            }
            Ok(())
        }
        Scalar::Enum(t) => match enum_text(t, v) {
            Some(s) => out.write_str(s),
            None => write_u64(out, v),
        },
    }
}

/// C's `%f` (six decimals, ties to even on the exact binary value), as
/// [`crate::format::write_c_f`] prints it, without the general float
/// formatter for the values immediates hold; huge values take that path.
pub fn write_float(out: &mut dyn Write, x: f64) -> fmt::Result {
    const SCALE: u128 = 1_000_000;
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0x7ff || exp > 1023 + 60 {
        return write_c_f(out, x);
    }
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    // x·10⁶ = mant·10⁶·2^e, rounded to an integer, ties to even.
    let n = u128::from(mant) * SCALE;
    let q = if e >= 0 {
        n << e
    } else {
        let s = (-e) as u32;
        if s >= 127 {
            0
        } else {
            let q = n >> s;
            let r = n - (q << s);
            let half = 1u128 << (s - 1);
            q + u128::from(r > half || (r == half && q & 1 == 1))
        }
    };
    if x.is_sign_negative() {
        out.write_char('-')?;
    }
    let int = q / SCALE;
    let mut fraction = (q % SCALE) as u32;
    match u64::try_from(int) {
        Ok(i) => write_u64(out, i)?,
        Err(_) => write!(out, "{int}")?,
    }
    let mut digits = [b'0'; 7];
    digits[0] = b'.';
    for d in digits[1..].iter_mut().rev() {
        *d = b'0' + (fraction % 10) as u8;
        fraction /= 10;
    }
    out.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)
}

/// The low `width` bits of `v` as a signed decimal.
#[inline]
pub fn write_int<W: Write + ?Sized>(out: &mut W, v: u64, width: u32) -> fmt::Result {
    let s = sign_extend(v, width);
    if s < 0 {
        out.write_char('-')?;
    }
    write_u64(out, s.unsigned_abs())
}

/// Decimal without the formatting machinery (register numbers dominate).
#[inline]
pub fn write_u64<W: Write + ?Sized>(out: &mut W, v: u64) -> fmt::Result {
    const DIGITS: &str = "0123456789";
    if v < 10 {
        let d = v as usize;
        return out.write_str(&DIGITS[d..d + 1]);
    }
    if v < 100 {
        let (t, d) = ((v / 10) as usize, (v % 10) as usize);
        out.write_str(&DIGITS[t..t + 1])?;
        return out.write_str(&DIGITS[d..d + 1]);
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut x = v;
    while x > 0 {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
    }
    // Only ASCII digits were written.
    out.write_str(std::str::from_utf8(&buf[i..]).map_err(|_| fmt::Error)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_buffer_is_reused_and_emptied() {
        with_spare(|s| s.push_str("add.f r0.x"));
        with_spare(|s| {
            assert_eq!(s, "");
            assert!(s.capacity() >= 10);
        });
    }

    #[test]
    fn buffer_collects_only_what_was_asked() {
        let mut text = String::new();
        let mut b = Buf::new(&mut text, true, false);
        b.write_str("nop").unwrap();
        b.dont_care("nop", 0x10);
        b.assert_failed("nop", 1, 0, 1);
        assert_eq!(b.warnings().len(), 1);
        let w = b.into_warnings();
        assert_eq!(text, "nop");
        let mut note = String::new();
        write_note(&mut note, &w).unwrap();
        assert_eq!(note, "\t; dontcare bits in nop: 10");
    }

    fn float_text(x: f64) -> (String, String) {
        let (mut fast, mut slow) = (String::new(), String::new());
        write_float(&mut fast, x).unwrap();
        write_c_f(&mut slow, x).unwrap();
        (fast, slow)
    }

    #[test]
    fn float_matches_the_general_formatter_on_every_half() {
        for h in 0..=u16::MAX {
            let x = f64::from(crate::format::half_to_f32(h));
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "half 0x{h:04x}");
        }
    }

    #[test]
    fn float_matches_the_general_formatter_on_singles() {
        // Every exponent, with mantissas that include exact ties at the
        // sixth decimal (x.xxxxxx5 is exact for small dyadic values).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..400_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bits = if i % 4 == 0 {
                (i >> 2) << 13
            } else {
                state as u32
            };
            let x = f64::from(f32::from_bits(bits));
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "single 0x{bits:08x}");
        }
        for x in [0.0000005, 0.0000015, 2.5e-7, -0.0, -1e-9, 0.5, 1e10, 3.0e38] {
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "{x:e}");
        }
    }

    #[test]
    fn decimal_matches_std() {
        for v in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let mut s = String::new();
            write_u64(&mut s, v).unwrap();
            assert_eq!(s, v.to_string());
        }
    }

    #[test]
    fn enum_lookup_finds_listed_values_only() {
        static T: [(u64, &str); 3] = [(0, "a"), (2, "c"), (5, "f")];
        assert_eq!(enum_text(&T, 2), Some("c"));
        assert_eq!(enum_text(&T, 3), None);
        let mut s = String::new();
        write_scalar(&mut s, Scalar::Enum(&T), 3, 3).unwrap();
        assert_eq!(s, "3");
    }
}
