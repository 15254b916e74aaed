//! Which ir3 instruction computes which generic IR operation: the
//! instruction selector's oracle.
//!
//! Each [`Selection`] pairs an operation of `lathe_ir`'s text form with
//! the machine text that implements it on its own. `tests/ir3_oracle.rs`
//! runs both, the IR interpreter and the generated simulator, on random
//! operands and requires equal results (floats within the entry's ULP
//! bound, NaN matching NaN), so the table stays true as the spec's
//! semantics change.
//!
//! Operands: IR values `%0`, `%1`, `%2` live in `r1.x`, `r1.y`, `r1.z`
//! (16-bit types: `hr2.x`, `hr2.y`, `hr2.z`); the result goes to `r0.x`
//! (`hr0.x`). A `bool` result is 1 or 0.

pub use lathe_ir::selection_oracle::Selection;
use lathe_ir::selection_oracle::operands::*;
use lathe_ir::selection_oracle::sel;

/// The table (a6xx/a7xx).
pub const SELECTIONS: &[Selection] = &[
    sel("fadd", F32X2, "f32", "add.f r0.x, r1.x, r1.y", 0),
    sel("fadd", F16X2, "f16", "add.f hr0.x, hr2.x, hr2.y", 0),
    sel("fsub", F32X2, "f32", "add.f r0.x, r1.x, (neg)r1.y", 0),
    sel("fsub", F16X2, "f16", "add.f hr0.x, hr2.x, (neg)hr2.y", 0),
    sel("fmul", F32X2, "f32", "mul.f r0.x, r1.x, r1.y", 0),
    sel("fmul", F16X2, "f16", "mul.f hr0.x, hr2.x, hr2.y", 0),
    sel("ffma", F32X3, "f32", "mad.f32 r0.x, r1.x, r1.y, r1.z", 0),
    sel(
        "ffma",
        F16X3,
        "f16",
        "mad.f16 hr0.x, hr2.x, hr2.y, hr2.z",
        0,
    ),
    sel("fmin", F32X2, "f32", "min.f r0.x, r1.x, r1.y", 0),
    sel("fmax", F32X2, "f32", "max.f r0.x, r1.x, r1.y", 0),
    sel("fmin", F16X2, "f16", "min.f hr0.x, hr2.x, hr2.y", 0),
    sel("fmax", F16X2, "f16", "max.f hr0.x, hr2.x, hr2.y", 0),
    sel("mov neg", F32, "f32", "absneg.f r0.x, (neg)r1.x", 0),
    sel("mov abs", F32, "f32", "absneg.f r0.x, (abs)r1.x", 0),
    sel("floor", F32, "f32", "floor.f r0.x, r1.x", 0),
    sel("floor", F16, "f16", "floor.f hr0.x, hr2.x", 0),
    sel("flt", F32X2, "bool", "cmps.f.lt r0.x, r1.x, r1.y", 0),
    sel("fge", F32X2, "bool", "cmps.f.ge r0.x, r1.x, r1.y", 0),
    sel("feq", F32X2, "bool", "cmps.f.eq r0.x, r1.x, r1.y", 0),
    sel("fne", F32X2, "bool", "cmps.f.ne r0.x, r1.x, r1.y", 0),
    sel("flt", F16X2, "bool", "cmps.f.lt r0.x, hr2.x, hr2.y", 0),
    sel(
        "sel",
        &["bool", "u32", "u32"],
        "u32",
        "sel.b32 r0.x, r1.y, r1.x, r1.z",
        0,
    ),
    sel("iadd", I32X2, "i32", "add.u r0.x, r1.x, r1.y", 0),
    sel("iadd", U32X2, "u32", "add.u r0.x, r1.x, r1.y", 0),
    sel("iadd", I16X2, "i16", "add.u hr0.x, hr2.x, hr2.y", 0),
    sel("isub", I32X2, "i32", "sub.u r0.x, r1.x, r1.y", 0),
    sel("imin", I32X2, "i32", "min.s r0.x, r1.x, r1.y", 0),
    sel("imax", I32X2, "i32", "max.s r0.x, r1.x, r1.y", 0),
    sel("umin", U32X2, "u32", "min.u r0.x, r1.x, r1.y", 0),
    sel("umax", U32X2, "u32", "max.u r0.x, r1.x, r1.y", 0),
    sel("and", U32X2, "u32", "and.b r0.x, r1.x, r1.y", 0),
    sel("or", U32X2, "u32", "or.b r0.x, r1.x, r1.y", 0),
    sel("xor", U32X2, "u32", "xor.b r0.x, r1.x, r1.y", 0),
    sel("not", U32, "u32", "not.b r0.x, r1.x", 0),
    sel("shl", U32X2, "u32", "shl.b r0.x, r1.x, r1.y", 0),
    sel("shr", U32X2, "u32", "shr.b r0.x, r1.x, r1.y", 0),
    sel("ashr", I32X2, "i32", "ashr.b r0.x, r1.x, r1.y", 0),
    sel("ieq", I32X2, "bool", "cmps.s.eq r0.x, r1.x, r1.y", 0),
    sel("ine", I32X2, "bool", "cmps.s.ne r0.x, r1.x, r1.y", 0),
    sel("ilt", I32X2, "bool", "cmps.s.lt r0.x, r1.x, r1.y", 0),
    sel("ige", I32X2, "bool", "cmps.s.ge r0.x, r1.x, r1.y", 0),
    sel("ult", U32X2, "bool", "cmps.u.lt r0.x, r1.x, r1.y", 0),
    sel("uge", U32X2, "bool", "cmps.u.ge r0.x, r1.x, r1.y", 0),
    sel("cvt", F32, "i32", "cov.f32s32 r0.x, r1.x", 0),
    sel("cvt", F32, "u32", "cov.f32u32 r0.x, r1.x", 0),
    sel("cvt", I32, "f32", "cov.s32f32 r0.x, r1.x", 0),
    sel("cvt", U32, "f32", "cov.u32f32 r0.x, r1.x", 0),
    sel("cvt", F32, "f16", "cov.f32f16 hr0.x, r1.x", 0),
    sel("cvt", F16, "f32", "cov.f16f32 r0.x, hr2.x", 0),
    sel("rcp", F32, "f32", "rcp r0.x, r1.x", 3),
    sel("rsqrt", F32, "f32", "rsq r0.x, r1.x", 2),
    sel("sqrt", F32, "f32", "sqrt r0.x, r1.x", 3),
    sel("exp2", F32, "f32", "exp2 r0.x, r1.x", 3),
    sel("log2", F32, "f32", "log2 r0.x, r1.x", 3),
    sel("sin", F32, "f32", "sin r0.x, r1.x", 4096),
    sel("cos", F32, "f32", "cos r0.x, r1.x", 4096),
];
