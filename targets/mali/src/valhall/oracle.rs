//! Which Valhall instruction computes which generic IR operation: the
//! instruction selector's oracle.
//!
//! Each [`Selection`] pairs an operation of `lathe_ir`'s text form with
//! the machine text that implements it on its own (Mesa's Valhall backend
//! makes the same choices: multiplies as `FMA` with `-0`, negation as an
//! add of `-0`, integer minimum as `CSEL`, bitwise operations as shifts by
//! zero). `tests/valhall_oracle.rs` runs both, the IR interpreter and the
//! generated simulator, on random operands and requires equal results
//! (floats within the entry's ULP bound, NaN matching NaN), so the table
//! stays true as the spec's semantics change.
//!
//! Operands: IR values `%0`, `%1`, `%2` live in `r1`, `r2`, `r3` (16-bit
//! types in the low half); the result goes to `r0` (16-bit: its low half).
//! A `bool` result is 1 or 0.

pub use lathe_ir::selection_oracle::Selection;
use lathe_ir::selection_oracle::operands::*;
use lathe_ir::selection_oracle::sel;

/// The table (v9 and v10).
pub const SELECTIONS: &[Selection] = &[
    sel("fadd", F32X2, "f32", "FADD.f32 r0, r1, r2", 0),
    sel("fadd", F16X2, "f16", "FADD.v2f16 r0, r1, r2", 0),
    sel("fsub", F32X2, "f32", "FADD.f32 r0, r1, r2.neg", 0),
    sel("fmul", F32X2, "f32", "FMA.f32 r0, r1, r2, 0x0.neg", 0),
    sel("fmul", F16X2, "f16", "FMA.v2f16 r0, r1, r2, 0x0.neg", 0),
    sel("ffma", F32X3, "f32", "FMA.f32 r0, r1, r2, r3", 0),
    sel("ffma", F16X3, "f16", "FMA.v2f16 r0, r1, r2, r3", 0),
    sel("fmin", F32X2, "f32", "FMIN.f32 r0, r1, r2", 0),
    sel("fmax", F32X2, "f32", "FMAX.f32 r0, r1, r2", 0),
    sel("fmin", F16X2, "f16", "FMIN.v2f16 r0, r1, r2", 0),
    sel("mov neg", F32, "f32", "FADD.f32 r0, r1.neg, 0x0.neg", 0),
    sel("mov abs", F32, "f32", "FADD.f32 r0, r1.abs, 0x0.neg", 0),
    sel("floor", F32, "f32", "FROUND.f32.rtn r0, r1", 0),
    sel("ceil", F32, "f32", "FROUND.f32.rtp r0, r1", 0),
    sel("trunc", F32, "f32", "FROUND.f32.rtz r0, r1", 0),
    sel("round_even", F32, "f32", "FROUND.f32 r0, r1", 0),
    sel("floor", F16, "f16", "FROUND.v2f16.rtn r0, r1", 0),
    sel("flt", F32X2, "bool", "FCMP_OR.f32.lt.i1 r0, r1, r2, 0x0", 0),
    sel("fge", F32X2, "bool", "FCMP_OR.f32.ge.i1 r0, r1, r2, 0x0", 0),
    sel("feq", F32X2, "bool", "FCMP_OR.f32.eq.i1 r0, r1, r2, 0x0", 0),
    sel("fne", F32X2, "bool", "FCMP_OR.f32.ne.i1 r0, r1, r2, 0x0", 0),
    sel(
        "sel",
        &["bool", "u32", "u32"],
        "u32",
        "MUX.i32 r0, r3, r2, r1",
        0,
    ),
    sel("iadd", I32X2, "i32", "IADD.u32 r0, r1, r2", 0),
    sel("iadd", U32X2, "u32", "IADD.u32 r0, r1, r2", 0),
    sel("iadd", I16X2, "i16", "IADD.v2u16 r0, r1, r2", 0),
    sel("isub", I32X2, "i32", "ISUB.u32 r0, r1, r2", 0),
    sel("imul", I32X2, "i32", "IMUL.i32 r0, r1, r2", 0),
    sel("imin", I32X2, "i32", "CSEL.s32.lt r0, r1, r2, r1, r2", 0),
    sel("imax", I32X2, "i32", "CSEL.s32.gt r0, r1, r2, r1, r2", 0),
    sel("umin", U32X2, "u32", "CSEL.u32.lt r0, r1, r2, r1, r2", 0),
    sel("umax", U32X2, "u32", "CSEL.u32.gt r0, r1, r2, r1, r2", 0),
    sel("and", U32X2, "u32", "LSHIFT_AND.i32 r0, r1, 0x0.b00, r2", 0),
    sel("or", U32X2, "u32", "LSHIFT_OR.i32 r0, r1, 0x0.b00, r2", 0),
    sel("xor", U32X2, "u32", "LSHIFT_XOR.i32 r0, r1, 0x0.b00, r2", 0),
    sel(
        "not",
        U32,
        "u32",
        "LSHIFT_OR.i32.not_result r0, r1, 0x0.b00, 0x0",
        0,
    ),
    sel("shl", U32X2, "u32", "LSHIFT_OR.i32 r0, r1, r2.b00, 0x0", 0),
    sel("shr", U32X2, "u32", "RSHIFT_OR.i32 r0, r1, r2.b00, 0x0", 0),
    sel(
        "ashr",
        I32X2,
        "i32",
        "RSHIFT_OR.i32.signed r0, r1, r2.b00, 0x0",
        0,
    ),
    sel("ieq", I32X2, "bool", "ICMP_OR.u32.eq.i1 r0, r1, r2, 0x0", 0),
    sel("ine", I32X2, "bool", "ICMP_OR.u32.ne.i1 r0, r1, r2, 0x0", 0),
    sel("ilt", I32X2, "bool", "ICMP_OR.s32.lt.i1 r0, r1, r2, 0x0", 0),
    sel("ige", I32X2, "bool", "ICMP_OR.s32.ge.i1 r0, r1, r2, 0x0", 0),
    sel("ult", U32X2, "bool", "ICMP_OR.u32.lt.i1 r0, r1, r2, 0x0", 0),
    sel("uge", U32X2, "bool", "ICMP_OR.u32.ge.i1 r0, r1, r2, 0x0", 0),
    sel("cvt", F32, "i32", "F32_TO_S32.rtz r0, r1", 0),
    sel("cvt", F32, "u32", "F32_TO_U32.rtz r0, r1", 0),
    sel("cvt", I32, "f32", "S32_TO_F32 r0, r1", 0),
    sel("cvt", U32, "f32", "U32_TO_F32 r0, r1", 0),
    sel("cvt", F32, "f16", "V2F32_TO_V2F16 r0, r1, r1", 0),
    sel("cvt", F16, "f32", "F16_TO_F32 r0, r1.h0", 0),
    sel("rcp", F32, "f32", "FRCP.f32 r0, r1", 1),
    sel("rsqrt", F32, "f32", "FRSQ.f32 r0, r1", 2),
];
