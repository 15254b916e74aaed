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

const UNKNOWN: u8 = 255;
const NONE: u8 = 254;
const TESTING: u8 = 128;

/// Where generated display code writes one instruction: straight into the
/// caller's `String` (each piece an inlined copy, no call through `dyn
/// Write`), with set don't-care bits — and, on request, `assert`
/// mismatches — collected beside it for the `\t; ` note. Mesa's isaspec
/// decoder does not report `assert` bits (its own ir3 vectors set bit 47
/// of `sam`, which its XML asserts to be zero, and expect no note), so the
/// note names `assert` bits only when the spec asks (`notes asserts;`).
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

    /// One byte pushed for ASCII (digits), not a slice copied.
    #[inline(always)]
    fn write_char(&mut self, c: char) -> fmt::Result {
        self.text.push(c);
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

/// What a typed getter makes of an item's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemTy {
    /// `uint`, `hex`, `HEX`, `uoffset`, `absbranch`.
    Uint,
    /// `int`, `offset`, `branch`: sign-extended from the width.
    Int,
    /// `bool`, `bool_inv`: the raw bit.
    Bool,
    /// `float` (16 or 32 bits).
    Float,
    /// `fixed(R)`.
    Fixed(u32),
    /// The spec's enum number `n`.
    Enum(usize),
    /// A sub-encoding of tree `tree`, `width` bits wide.
    Sub { tree: usize, width: u32 },
}

/// One field or derived value of an instruction, as the generated typed
/// accessors see it (resolved at expansion time, one per item of a leaf).
#[derive(Clone, Copy, Debug)]
pub struct ItemInfo {
    /// A derived value (read-only).
    pub derived: bool,
    pub width: u32,
    /// Bit ranges `(low, width)` of a field, least significant part first
    /// (empty for a derived value).
    pub ranges: &'static [(u32, u32)],
    pub ty: ItemTy,
    /// How a setter converts numbers.
    pub conv: crate::fields::Conv,
    /// The type as the spec writes it (for error messages).
    pub describe: &'static str,
}

impl ItemInfo {
    /// `word` with this field's bits replaced by `bits` (already in range).
    pub fn insert(&self, word: u64, bits: u64) -> u64 {
        let mut w = word;
        let mut v = bits;
        for &(low, width) in self.ranges {
            let m = if width >= 64 {
                u64::MAX
            } else {
                ((1u64 << width) - 1) << low
            };
            w = (w & !m) | ((v << low) & m);
            v = v.checked_shr(width).unwrap_or(0);
        }
        w
    }
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

/// The text of `v` in an enum table.
#[inline]
pub fn enum_text(table: &'static [(u64, &'static str)], v: u64) -> Option<&'static str> {
    table
        .binary_search_by_key(&v, |&(x, _)| x)
        .ok()
        .map(|i| table[i].1)
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

    #[test]
    fn enum_lookup_finds_listed_values_only() {
        static T: [(u64, &str); 3] = [(0, "a"), (2, "c"), (5, "f")];
        assert_eq!(enum_text(&T, 2), Some("c"));
        assert_eq!(enum_text(&T, 3), None);
    }
}
