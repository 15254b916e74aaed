//! Constants and specialization constants, evaluated to the bit patterns of
//! their scalar leaves (vectors, matrices, arrays and structs flattened in
//! member order) after the caller's overrides are applied.

use crate::error::Error;
use crate::interface::SpecConstant;
use crate::module::{Module, Ty, id_operand, lit_operand};
use indexmap::IndexMap;
use lathe_ir::{Scalar, Type};
use rspirv::dr::Operand;
use rspirv::spirv::Op;
use rustc_hash::FxHashMap as HashMap;

/// The IR scalar type of a SPIR-V scalar type, if the IR has one.
pub fn scalar_type(ty: &Ty) -> Option<Type> {
    Some(match ty {
        Ty::Bool => Type::BOOL,
        Ty::Int {
            bits: 32,
            signed: true,
        } => Type::I32,
        Ty::Int {
            bits: 32,
            signed: false,
        } => Type::U32,
        Ty::Int {
            bits: 16,
            signed: true,
        } => Type::I16,
        Ty::Float { bits: 32 } => Type::F32,
        Ty::Float { bits: 16 } => Type::F16,
        _ => return None,
    })
}

/// Evaluated constants plus the interface record of spec constants.
pub struct Constants {
    pub values: HashMap<u32, Vec<u32>>,
    pub spec: IndexMap<u32, SpecConstant>,
}

/// A caller's override of one specialization constant: keyed by SpecId or by name.
pub type SpecOverrides = [(String, String)];

/// The most scalar leaves one value may have (nested arrays multiply).
pub const MAX_LEAVES: u64 = 1 << 16;

/// Scalar leaf types of a type (no opaque or pointer leaves).
pub fn leaf_types(
    m: &Module,
    values: &HashMap<u32, Vec<u32>>,
    ty: u32,
    out: &mut Vec<Type>,
) -> Result<(), String> {
    match m.ty(ty) {
        Some(Ty::Vector { elem, n }) | Some(Ty::Matrix { column: elem, n }) => {
            let start = out.len();
            leaf_types(m, values, *elem, out)?;
            let one = out[start..].to_vec();
            if (start as u64) + (one.len() as u64) * (*n as u64) > MAX_LEAVES {
                return Err("vector or matrix too large to scalarise".into());
            }
            for _ in 1..*n {
                out.extend_from_slice(&one);
            }
            Ok(())
        }
        Some(Ty::Array { elem, len }) => {
            let n = array_len(values, *len)?;
            let start = out.len();
            leaf_types(m, values, *elem, out)?;
            let one = out[start..].to_vec();
            if n == 0 {
                out.truncate(start);
            }
            if (start as u64) + (one.len() as u64) * (n as u64) > MAX_LEAVES {
                return Err(format!("array of {n} elements is too large to scalarise"));
            }
            for _ in 1..n {
                out.extend_from_slice(&one);
            }
            Ok(())
        }
        Some(Ty::Struct { members }) => {
            for &mem in members {
                leaf_types(m, values, mem, out)?;
            }
            Ok(())
        }
        Some(t) => match scalar_type(t) {
            Some(s) => {
                out.push(s);
                Ok(())
            }
            None => Err(format!("type {t:?} has no IR scalar")),
        },
        None => Err(format!("%{ty} is not a type")),
    }
}

pub fn array_len(values: &HashMap<u32, Vec<u32>>, len: u32) -> Result<u32, String> {
    values
        .get(&len)
        .and_then(|v| v.first().copied())
        .ok_or_else(|| format!("array length %{len} is not a constant"))
}

fn parse_override(text: &str, ty: Type) -> Option<u32> {
    let t = text.trim();
    match ty.scalar {
        Scalar::Bool => match t {
            "true" | "1" => Some(1),
            "false" | "0" => Some(0),
            _ => None,
        },
        Scalar::F32 => t.parse::<f32>().ok().map(f32::to_bits),
        Scalar::F16 => t
            .parse::<f32>()
            .ok()
            .map(|x| lathe_ir::f16::from_f32(x) as u32),
        _ => {
            let (neg, digits) = match t.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, t),
            };
            let v = match digits.strip_prefix("0x") {
                Some(h) => i64::from_str_radix(h, 16).ok()?,
                None => digits.parse::<i64>().ok()?,
            };
            let v = if neg { -v } else { v };
            let (lo, hi) = match ty.scalar {
                Scalar::I32 => (i32::MIN as i64, i32::MAX as i64),
                Scalar::U32 => (0, u32::MAX as i64),
                Scalar::I16 => (i16::MIN as i64, i16::MAX as i64),
                _ => (0, u16::MAX as i64),
            };
            (lo..=hi).contains(&v).then(|| {
                (v as u32)
                    & if ty.scalar.bits() == 16 {
                        0xffff
                    } else {
                        u32::MAX
                    }
            })
        }
    }
}

/// Evaluate every module-level constant in order.
pub fn evaluate(m: &Module, overrides: &SpecOverrides) -> Result<Constants, Error> {
    let mut values: HashMap<u32, Vec<u32>> = HashMap::default();
    let mut spec: IndexMap<u32, SpecConstant> = IndexMap::new();
    let mut used = vec![false; overrides.len()];
    for (at, inst) in m.insts.iter().enumerate() {
        let op = inst.class.opcode;
        if op == Op::Function {
            break;
        }
        let (Some(id), Some(ty_id)) = (inst.result_id, inst.result_type) else {
            continue;
        };
        let ty = m.ty(ty_id);
        let scalar = ty.and_then(scalar_type);
        let leaves = match op {
            Op::Constant | Op::SpecConstant => {
                let Some(s) = scalar else {
                    return Err(m.unsupported(at, "constant of this type"));
                };
                let bits = match inst.operands.first() {
                    Some(Operand::LiteralBit32(x)) => *x,
                    _ => return Err(m.unsupported(at, "64-bit constant")),
                };
                vec![
                    bits & if s.scalar.bits() == 16 {
                        0xffff
                    } else {
                        u32::MAX
                    },
                ]
            }
            Op::ConstantTrue | Op::SpecConstantTrue => vec![1],
            Op::ConstantFalse | Op::SpecConstantFalse => vec![0],
            Op::ConstantNull => {
                let mut tys = Vec::new();
                leaf_types(m, &values, ty_id, &mut tys).map_err(|e| m.unsupported(at, e))?;
                vec![0; tys.len()]
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let mut v = Vec::new();
                for k in 0..inst.operands.len() {
                    let c = id_operand(inst, k)
                        .and_then(|c| values.get(&c))
                        .ok_or_else(|| m.unsupported(at, "composite of a non-constant"))?;
                    v.extend_from_slice(c);
                }
                v
            }
            Op::SpecConstantOp => match spec_op(m, &values, inst) {
                Some(v) => v,
                // Not foldable here: the lowering reports it if it is used.
                None => continue,
            },
            _ => continue,
        };
        let mut leaves = leaves;
        if matches!(
            op,
            Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse
        ) && let Some(spec_id) = m.deco(id).and_then(|d| d.spec_id)
        {
            let s = scalar.unwrap_or(Type::BOOL);
            let default = leaves[0];
            let name = m.names.get(&id).cloned();
            for (k, (key, value)) in overrides.iter().enumerate() {
                let matches = key.parse::<u32>().ok() == Some(spec_id)
                    || name.as_deref() == Some(key.as_str());
                if matches {
                    used[k] = true;
                    leaves[0] = parse_override(value, s).ok_or_else(|| {
                        Error::Spec(format!("`{value}` is not a valid {s} for constant {key}"))
                    })?;
                }
            }
            spec.insert(
                spec_id,
                SpecConstant {
                    name,
                    ty: s.to_string(),
                    default,
                    value: leaves[0],
                },
            );
        }
        values.insert(id, leaves);
    }
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(Error::Spec(format!(
            "no specialization constant has id or name `{}`",
            overrides[k].0
        )));
    }
    Ok(Constants { values, spec })
}

/// Fold an `OpSpecConstantOp` on scalar 32-bit operands (what workgroup
/// sizes and array lengths use); `None` if it is anything else.
fn spec_op(
    _m: &Module,
    values: &HashMap<u32, Vec<u32>>,
    inst: &rspirv::dr::Instruction,
) -> Option<Vec<u32>> {
    let Some(Operand::LiteralSpecConstantOpInteger(op)) = inst.operands.first() else {
        return None;
    };
    let arg = |k: usize| -> Option<&Vec<u32>> { values.get(&id_operand(inst, k)?) };
    let a = arg(1)?;
    if *op == Op::CompositeExtract {
        let mut idx = Vec::new();
        for k in 2..inst.operands.len() {
            idx.push(lit_operand(inst, k)?);
        }
        // Only extraction from vectors of scalars (one level) is folded.
        return match idx.as_slice() {
            [i] => a.get(*i as usize).map(|&x| vec![x]),
            _ => None,
        };
    }
    let unary =
        |f: &dyn Fn(u32) -> u32| -> Option<Vec<u32>> { Some(a.iter().map(|&x| f(x)).collect()) };
    match op {
        Op::SNegate => return unary(&|x| (x as i32).wrapping_neg() as u32),
        Op::Not => return unary(&|x| !x),
        Op::LogicalNot => return unary(&|x| (x == 0) as u32),
        _ => {}
    }
    if *op == Op::Select {
        let (b, c) = (arg(2)?, arg(3)?);
        return Some(
            a.iter()
                .zip(b.iter().zip(c))
                .map(|(&s, (&x, &y))| if s != 0 { x } else { y })
                .collect(),
        );
    }
    let b = arg(2)?;
    if a.len() != b.len() {
        return None;
    }
    let f = |x: u32, y: u32| -> Option<u32> {
        Some(match op {
            Op::IAdd => x.wrapping_add(y),
            Op::ISub => x.wrapping_sub(y),
            Op::IMul => x.wrapping_mul(y),
            Op::UDiv => x.checked_div(y)?,
            Op::UMod => x.checked_rem(y)?,
            Op::SDiv => (x as i32).checked_div(y as i32)? as u32,
            Op::SRem => (x as i32).checked_rem(y as i32)? as u32,
            Op::ShiftLeftLogical => x.checked_shl(y)?,
            Op::ShiftRightLogical => x.checked_shr(y)?,
            Op::ShiftRightArithmetic => (x as i32).checked_shr(y)? as u32,
            Op::BitwiseAnd => x & y,
            Op::BitwiseOr => x | y,
            Op::BitwiseXor => x ^ y,
            Op::LogicalAnd => ((x != 0) && (y != 0)) as u32,
            Op::LogicalOr => ((x != 0) || (y != 0)) as u32,
            Op::LogicalEqual => ((x != 0) == (y != 0)) as u32,
            Op::LogicalNotEqual => ((x != 0) != (y != 0)) as u32,
            Op::IEqual => (x == y) as u32,
            Op::INotEqual => (x != y) as u32,
            Op::ULessThan => (x < y) as u32,
            Op::ULessThanEqual => (x <= y) as u32,
            Op::UGreaterThan => (x > y) as u32,
            Op::UGreaterThanEqual => (x >= y) as u32,
            Op::SLessThan => ((x as i32) < (y as i32)) as u32,
            Op::SLessThanEqual => ((x as i32) <= (y as i32)) as u32,
            Op::SGreaterThan => ((x as i32) > (y as i32)) as u32,
            Op::SGreaterThanEqual => ((x as i32) >= (y as i32)) as u32,
            _ => return None,
        })
    };
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}
