//! Exact semantics of the generic bit, integer-sign and pack/unpack
//! opcodes, as pure functions on bits. The interpreter calls these; the
//! property tests check them against independently written references.
//!
//! Results follow SPIR-V (`OpBitField*`, `OpBitReverse`, `OpBitCount`) and
//! GLSL.std.450 (`FindILsb`, `FindSMsb`, `FindUMsb`, `Pack*`/`Unpack*`).
//! Where those leave a result undefined the function returns `None`.

use crate::attrs::PackFormat;
use crate::f16;
use crate::generic::GenericOp;
use crate::types::Scalar;

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

/// Why [`eval`] gives no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// The operation is undefined for these operands (division by zero,
    /// an out-of-range conversion, a shift by the width or more, ...).
    Undefined(String),
    /// Not a pure scalar operation (memory, textures, system values,
    /// control flow), or its operands do not fit it.
    NotScalar,
}

fn undefined(reason: impl Into<String>) -> EvalError {
    EvalError::Undefined(reason.into())
}

fn arg(operands: &[(Scalar, u32)], n: usize) -> Result<u32, EvalError> {
    operands
        .get(n)
        .map(|&(_, bits)| bits)
        .ok_or(EvalError::NotScalar)
}

fn arg_type(operands: &[(Scalar, u32)], n: usize) -> Result<Scalar, EvalError> {
    operands
        .get(n)
        .map(|&(ty, _)| ty)
        .ok_or(EvalError::NotScalar)
}

/// The result bits of the pure scalar operation `op` with result type
/// `result` on `operands` (each its type and bits). This is the
/// interpreter's definition of every arithmetic, logic, compare, select,
/// conversion and bit opcode; constant folding calls it too, so a folded
/// value is by construction the one the interpreter computes.
///
/// ```
/// use lathe_ir::{GenericOp, Scalar, scalar_ops::{eval, EvalError}};
/// let one = 1.0f32.to_bits();
/// assert_eq!(eval(GenericOp::FAdd, Scalar::F32, &[(Scalar::F32, one), (Scalar::F32, one)]), Ok(2.0f32.to_bits()));
/// assert!(matches!(eval(GenericOp::UDiv, Scalar::U32, &[(Scalar::U32, 1), (Scalar::U32, 0)]), Err(EvalError::Undefined(_))));
/// ```
pub fn eval(op: GenericOp, result: Scalar, operands: &[(Scalar, u32)]) -> Result<u32, EvalError> {
    use GenericOp::*;
    match op {
        Const { bits } => Ok(mask(result, bits)),
        Mov { abs, neg } => {
            let ty = result;
            let mut b = mask(ty, arg(operands, 0)?);
            if abs {
                b &= !sign_bit(ty);
            }
            if neg {
                b ^= sign_bit(ty);
            }
            Ok(b)
        }
        Cvt => {
            let from = arg_type(operands, 0)?;
            let to = result;
            let a = arg(operands, 0)?;
            Ok(convert(from, to, a)?)
        }
        FAdd | FSub | FMul => {
            let ty = result;
            let (a, b) = (arg(operands, 0)?, arg(operands, 1)?);
            let r = if ty == Scalar::F32 {
                let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                match op {
                    FAdd => x + y,
                    FSub => x - y,
                    _ => x * y,
                }
                .to_bits()
            } else {
                // Exact in f64 for binary16 operands: one rounding.
                let (x, y) = (float_value(ty, a), float_value(ty, b));
                round_to(
                    ty,
                    match op {
                        FAdd => x + y,
                        FSub => x - y,
                        _ => x * y,
                    },
                )
            };
            Ok(r)
        }
        FMin | FMax => {
            let ty = result;
            Ok(min_max(
                ty,
                arg(operands, 0)?,
                arg(operands, 1)?,
                op == FMin,
            ))
        }
        Ffma => {
            let ty = result;
            let (a, b, c) = (arg(operands, 0)?, arg(operands, 1)?, arg(operands, 2)?);
            if ty == Scalar::F32 {
                Ok(f32::from_bits(a)
                    .mul_add(f32::from_bits(b), f32::from_bits(c))
                    .to_bits())
            } else {
                Ok(f16::fma(a as u16, b as u16, c as u16) as u32)
            }
        }
        Rcp | Rsqrt | Sqrt | Exp2 | Log2 | Sin | Cos | Floor => {
            let ty = result;
            let a = arg(operands, 0)?;
            if ty == Scalar::F32 {
                let x = f32::from_bits(a);
                let r = match op {
                    Rcp => 1.0 / x,
                    Sqrt => x.sqrt(),
                    Floor => x.floor(),
                    Rsqrt => (1.0 / (x as f64).sqrt()) as f32,
                    Exp2 => (x as f64).exp2() as f32,
                    Log2 => (x as f64).log2() as f32,
                    Sin => (x as f64).sin() as f32,
                    _ => (x as f64).cos() as f32,
                };
                Ok(r.to_bits())
            } else {
                let x = float_value(ty, a);
                let r = match op {
                    Rcp => 1.0 / x,
                    Sqrt => x.sqrt(),
                    Floor => x.floor(),
                    Rsqrt => 1.0 / x.sqrt(),
                    Exp2 => x.exp2(),
                    Log2 => x.log2(),
                    Sin => x.sin(),
                    _ => x.cos(),
                };
                Ok(round_to(ty, r))
            }
        }
        FDiv => {
            let ty = result;
            let (a, b) = (arg(operands, 0)?, arg(operands, 1)?);
            if ty == Scalar::F32 {
                Ok((f32::from_bits(a) / f32::from_bits(b)).to_bits())
            } else {
                // binary16 quotients round once from f64 (53 >= 2 * 11 + 2 bits).
                Ok(round_to(ty, float_value(ty, a) / float_value(ty, b)))
            }
        }
        Ceil | Trunc | RoundEven | Fract | FSign => {
            let ty = result;
            let a = arg(operands, 0)?;
            Ok(rounding(op, ty, a))
        }
        IAbs | ISign => {
            let ty = result;
            let x = int_value(ty, arg(operands, 0)?);
            let r = if op == IAbs { x.abs() } else { x.signum() };
            Ok(mask(ty, r as u32))
        }
        IMulHigh => {
            let (x, y) = (
                arg(operands, 0)? as i32 as i64,
                arg(operands, 1)? as i32 as i64,
            );
            Ok(((x * y) >> 32) as u32)
        }
        UMulHigh => {
            let (x, y) = (arg(operands, 0)? as u64, arg(operands, 1)? as u64);
            Ok(((x * y) >> 32) as u32)
        }
        UBitfieldExtract | IBitfieldExtract => {
            let (base, offset, count) = (arg(operands, 0)?, arg(operands, 1)?, arg(operands, 2)?);
            match bitfield_extract(base, offset, count, op == IBitfieldExtract) {
                Some(r) => Ok(r),
                None => Err(undefined(format!(
                    "bit field {offset}+{count} exceeds 32 bits"
                ))),
            }
        }
        BitfieldInsert => {
            let (base, insert) = (arg(operands, 0)?, arg(operands, 1)?);
            let (offset, count) = (arg(operands, 2)?, arg(operands, 3)?);
            match bitfield_insert(base, insert, offset, count) {
                Some(r) => Ok(r),
                None => Err(undefined(format!(
                    "bit field {offset}+{count} exceeds 32 bits"
                ))),
            }
        }
        BitReverse => Ok(arg(operands, 0)?.reverse_bits()),
        BitCount => Ok(arg(operands, 0)?.count_ones()),
        FindLsb => Ok(find_lsb(arg(operands, 0)?)),
        UFindMsb => Ok(ufind_msb(arg(operands, 0)?)),
        IFindMsb => Ok(ifind_msb(arg(operands, 0)?)),
        Pack { format } => {
            let mut lanes = [0.0f32; 4];
            let n = format.lanes() as usize;
            for (k, lane) in lanes.iter_mut().enumerate().take(n) {
                *lane = f32::from_bits(arg(operands, k)?);
            }
            Ok(pack(format, &lanes[..n]))
        }
        Unpack { format, lane } => Ok(unpack(format, arg(operands, 0)?, lane).to_bits()),
        IDiv | IRem => {
            let ty = result;
            let (x, y) = (
                int_value(ty, arg(operands, 0)?),
                int_value(ty, arg(operands, 1)?),
            );
            if y == 0 {
                return Err(undefined("division by zero"));
            }
            let min = -(1i64 << (ty.bits() - 1));
            if x == min && y == -1 {
                return Err(undefined(format!(
                    "signed overflow: {x} / -1 does not fit {}",
                    ty.name()
                )));
            }
            // i64 division truncates toward zero, as the opcodes do.
            let r = if op == IDiv { x / y } else { x % y };
            Ok(mask(ty, r as u32))
        }
        IAdd | ISub | IMul | IMin | IMax | UMin | UMax | UDiv | UMod | And | Or | Xor => {
            let ty = result;
            let (a, b) = (mask(ty, arg(operands, 0)?), mask(ty, arg(operands, 1)?));
            let (x, y) = (int_value(ty, a), int_value(ty, b));
            let r = match op {
                IAdd => a.wrapping_add(b),
                ISub => a.wrapping_sub(b),
                IMul => a.wrapping_mul(b),
                IMin => x.min(y) as u32,
                IMax => x.max(y) as u32,
                UMin => a.min(b),
                UMax => a.max(b),
                UDiv | UMod => {
                    if b == 0 {
                        return Err(undefined("division by zero"));
                    }
                    if op == UDiv { a / b } else { a % b }
                }
                And => a & b,
                Or => a | b,
                _ => a ^ b,
            };
            Ok(mask(ty, r))
        }
        Not => {
            let ty = result;
            Ok(mask(ty, !arg(operands, 0)?))
        }
        Shl | Shr | AShr => {
            let ty = result;
            let a = mask(ty, arg(operands, 0)?);
            let amount = mask(ty, arg(operands, 1)?);
            let width = ty.bits();
            if amount >= width {
                return Err(undefined(format!(
                    "shift by {amount} on a {width}-bit value"
                )));
            }
            let r = match op {
                Shl => a << amount,
                Shr => a >> amount,
                _ => {
                    (int_value(
                        if width == 16 {
                            Scalar::I16
                        } else {
                            Scalar::I32
                        },
                        a,
                    ) >> amount) as u32
                }
            };
            Ok(mask(ty, r))
        }
        FEq | FNe | FLt | FGe => {
            let ty = arg_type(operands, 0)?;
            let (x, y) = (
                float_value(ty, arg(operands, 0)?),
                float_value(ty, arg(operands, 1)?),
            );
            let r = match op {
                FEq => x == y,
                FNe => x != y,
                FLt => x < y,
                _ => x >= y,
            };
            Ok(r as u32)
        }
        IEq | INe | ILt | IGe | ULt | UGe => {
            let ty = arg_type(operands, 0)?;
            let (a, b) = (mask(ty, arg(operands, 0)?), mask(ty, arg(operands, 1)?));
            let (x, y) = (int_value(ty, a), int_value(ty, b));
            let r = match op {
                IEq => a == b,
                INe => a != b,
                ILt => x < y,
                IGe => x >= y,
                ULt => a < b,
                _ => a >= b,
            };
            Ok(r as u32)
        }
        Sel => {
            let c = arg(operands, 0)?;
            Ok(if c & 1 == 1 {
                arg(operands, 1)?
            } else {
                arg(operands, 2)?
            })
        }
        _ => Err(EvalError::NotScalar),
    }
}

fn convert(from: Scalar, to: Scalar, a: u32) -> Result<u32, EvalError> {
    if from == Scalar::Bool {
        // true is 1 (or 1.0), false 0.
        let one = a & 1;
        return Ok(match to {
            Scalar::F32 => (one as f32).to_bits(),
            Scalar::F16 => f16::from_f32(one as f32) as u32,
            _ => one,
        });
    }
    if from.is_float() {
        let x = float_value(from, a);
        if to.is_float() {
            if from == to {
                return Ok(a);
            }
            return Ok(round_to(to, x));
        }
        if x.is_nan() {
            return Err(undefined("NaN converted to an integer"));
        }
        let t = x.trunc();
        let (lo, hi) = match to {
            Scalar::I16 => (i16::MIN as f64, i16::MAX as f64),
            Scalar::I32 => (i32::MIN as f64, i32::MAX as f64),
            Scalar::U16 => (0.0, u16::MAX as f64),
            _ => (0.0, u32::MAX as f64),
        };
        if t < lo || t > hi {
            return Err(undefined(format!("{x} is out of range for {}", to.name())));
        }
        return Ok(mask(to, t as i64 as u32));
    }
    let v = int_value(from, a);
    if to.is_float() {
        // i64 -> f32 rounds once to nearest even; v is exact in f64.
        return Ok(match to {
            Scalar::F32 => (v as f32).to_bits(),
            _ => f16::from_f64(v as f64) as u32,
        });
    }
    Ok(mask(to, v as u32))
}

pub(crate) fn mask(ty: Scalar, bits: u32) -> u32 {
    match ty.bits() {
        1 => bits & 1,
        16 => bits & 0xffff,
        _ => bits,
    }
}

/// Integer value of `bits` read as `ty` (sign-extended for signed types).
pub(crate) fn int_value(ty: Scalar, bits: u32) -> i64 {
    match ty {
        Scalar::I16 => bits as u16 as i16 as i64,
        Scalar::I32 => bits as i32 as i64,
        _ => mask(ty, bits) as i64,
    }
}

/// Exact value of float bits as f64.
pub(crate) fn float_value(ty: Scalar, bits: u32) -> f64 {
    match ty {
        Scalar::F16 => f16::to_f64(bits as u16),
        _ => f32::from_bits(bits) as f64,
    }
}

/// Round an f64 to the float type (single rounding from the f64 value).
pub(crate) fn round_to(ty: Scalar, x: f64) -> u32 {
    match ty {
        Scalar::F16 => f16::from_f64(x) as u32,
        _ => (x as f32).to_bits(),
    }
}

pub(crate) fn sign_bit(ty: Scalar) -> u32 {
    if ty == Scalar::F16 {
        0x8000
    } else {
        0x8000_0000
    }
}

/// `ceil`, `trunc`, `round_even`, `fract` and `fsign` on float bits.
/// Integral results are exact in the type; `fract` (`x - floor(x)`) is one
/// IEEE subtraction, rounded once (so `fract(-tiny)` is `1.0`, and
/// `fract(±inf)` is NaN); `fsign(NaN)` is `+0.0`, as Mesa's NIR defines it.
pub(crate) fn rounding(op: GenericOp, ty: Scalar, a: u32) -> u32 {
    if ty == Scalar::F32 {
        let x = f32::from_bits(a);
        let r = match op {
            GenericOp::Ceil => x.ceil(),
            GenericOp::Trunc => x.trunc(),
            GenericOp::RoundEven => x.round_ties_even(),
            GenericOp::Fract => x - x.floor(),
            _ if x.is_nan() => 0.0,
            _ if x == 0.0 => x,
            _ => 1.0f32.copysign(x),
        };
        return r.to_bits();
    }
    // binary16: every operation below is exact in f64 before the one rounding.
    let x = float_value(ty, a);
    let r = match op {
        GenericOp::Ceil => x.ceil(),
        GenericOp::Trunc => x.trunc(),
        GenericOp::RoundEven => x.round_ties_even(),
        GenericOp::Fract => x - x.floor(),
        _ if x.is_nan() => 0.0,
        _ if x == 0.0 => x,
        _ => 1.0f64.copysign(x),
    };
    round_to(ty, r)
}

pub(crate) fn is_nan(ty: Scalar, bits: u32) -> bool {
    float_value(ty, bits).is_nan()
}

/// IEEE minNum/maxNum with -0 < +0; returns one operand's bits unchanged.
pub(crate) fn min_max(ty: Scalar, a: u32, b: u32, want_min: bool) -> u32 {
    if is_nan(ty, a) {
        return b;
    }
    if is_nan(ty, b) {
        return a;
    }
    let (x, y) = (float_value(ty, a), float_value(ty, b));
    if x == y {
        // Only ±0 compare equal with different bits.
        let a_neg = a & sign_bit(ty) != 0;
        return if a_neg == want_min { a } else { b };
    }
    if (x < y) == want_min { a } else { b }
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
