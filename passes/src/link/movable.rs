//! Which instructions may move between the stages, and the interpolation
//! rules for moving them across a fragment shader's input interpolation
//! (shared by backward and forward code motion and by propagation).
//!
//! Every value of a movable expression has a [`Kind`]:
//! - `Convergent`: the same at every vertex of a primitive (constants,
//!   uniforms, convergent inputs). Anything may be computed from these.
//! - `Flat`: depends on flat inputs (the provoking vertex's values) and
//!   convergent values; any operation may be moved, since the fragment sees
//!   the provoking vertex's result either way.
//! - `Interp(q)`: depends on inputs interpolated with qualifier `q`. Only
//!   the operations that commute with interpolation may be moved:
//!   `interp(x) + interp(y) = interp(x + y)`,
//!   `interp(x) + c = interp(x + c)` and `interp(x) * c = interp(x * c)`
//!   for convergent `c` (and their compositions: subtraction, negation,
//!   `ffma`). They hold exactly in real arithmetic and up to rounding in
//!   floating point (the design's "inexact" transformations). Interpolated
//!   and flat values never mix.

use super::varyings::generic;
use lathe_ir::{GenericOp, Inst, Interp, Shader, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) enum Kind {
    Convergent,
    Flat,
    Interp(Interp),
}

/// Can `i` run in the other stage, on values it would not have seen and
/// on paths it would not have run? Only pure operations that cannot trap
/// (float-to-int conversion, division and out-of-range shifts can), plus
/// uniform and UBO loads at fixed places (the pipeline makes those valid
/// in both stages).
pub(crate) fn movable(s: &Shader<'_, GenericOp>, i: Inst) -> bool {
    use GenericOp::*;
    let d = s.inst(i);
    if d.address.is_some() {
        return false;
    }
    let Some(op) = generic(s, i) else {
        return false;
    };
    match op {
        Const { .. } | LoadUniform { .. } | LoadUbo { .. } => true,
        Mov { .. }
        | FAdd
        | FSub
        | FMul
        | FMin
        | FMax
        | Ffma
        | Rcp
        | Rsqrt
        | Sqrt
        | Exp2
        | Log2
        | Sin
        | Cos
        | Floor
        | IAdd
        | ISub
        | IMul
        | IMin
        | IMax
        | UMin
        | UMax
        | FEq
        | FNe
        | FLt
        | FGe
        | IEq
        | INe
        | ILt
        | IGe
        | ULt
        | UGe
        | Sel
        | And
        | Or
        | Xor
        | Not => true,
        Cvt => {
            // Float to integer is undefined out of range.
            let to = s.value_type(d.result.expect("cvt result")).scalar;
            !s.value_type(d.args[0]).scalar.is_float() || to.is_float()
        }
        Shl | Shr | AShr => {
            let width = s.value_type(d.args[0]).scalar.bits();
            constant_bits(s, d.args[1]).is_some_and(|a| a < width)
        }
        _ => false,
    }
}

/// The bits of a constant operand.
pub(crate) fn constant_bits(s: &Shader<'_, GenericOp>, v: Value) -> Option<u32> {
    match generic(s, s.value_def(v)) {
        Some(GenericOp::Const { bits }) => Some(bits),
        _ => None,
    }
}

/// The kind of a movable instruction's result from its operands' kinds,
/// or `None` if the operation may not move with those operands.
pub(crate) fn combine(
    s: &Shader<'_, GenericOp>,
    i: Inst,
    kinds: &[Kind],
    across_interp: bool,
) -> Option<Kind> {
    use GenericOp::*;
    let interp: Option<Interp> = kinds.iter().find_map(|k| match k {
        Kind::Interp(q) => Some(*q),
        _ => None,
    });
    let Some(q) = interp else {
        let flat = kinds.contains(&Kind::Flat);
        return Some(if flat { Kind::Flat } else { Kind::Convergent });
    };
    // Interpolated operands: same qualifier only, no flat ones, float
    // affine operations only.
    if !across_interp
        || kinds
            .iter()
            .any(|k| *k == Kind::Flat || matches!(k, Kind::Interp(p) if *p != q))
    {
        return None;
    }
    let d = s.inst(i);
    let float = d.result.is_some_and(|r| s.value_type(r).scalar.is_float());
    if !float {
        return None;
    }
    let is_interp = |k: Kind| matches!(k, Kind::Interp(_));
    let ok = match (generic(s, i)?, kinds) {
        (Mov { abs: false, .. }, [_]) => true,
        (FAdd | FSub, [_, _]) => true,
        (FMul, [a, b]) => !(is_interp(*a) && is_interp(*b)),
        (Ffma, [a, b, _]) => !(is_interp(*a) && is_interp(*b)),
        _ => false,
    };
    ok.then_some(Kind::Interp(q))
}
