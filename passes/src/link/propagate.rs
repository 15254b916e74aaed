//! Step 3: constants, uniforms, UBO loads and uniform expressions (pure
//! arithmetic on those) stored to an output are computed in the consumer
//! instead, and the varying disappears.
//!
//! Every store of the output (and of its back colour) must store the same
//! expression, compared structurally. The expression's cost, summed with
//! [`LinkCost::op_cost`](super::LinkCost::op_cost), must stay within
//! [`LinkCost::max_uniform_expr_cost`](super::LinkCost::max_uniform_expr_cost):
//! the consumer runs more often. Special cases from the design:
//! - colours propagate only constants within [0, 1] (vertex colour
//!   clamping would change others); a back colour's constant reaches the
//!   front colour input the consumer reads;
//! - texture coordinates propagate only `.z = 0` and `.w = 1`, the values
//!   point-sprite replacement gives;
//! - clip and cull distances, layer and viewport always propagate (their
//!   stores stay as system values).
//!
//! With `preserve_inf`, a non-constant float expression reaching an
//! interpolated input becomes `x * 0 + x`, which turns an infinity into
//! NaN the way interpolating it would.

use super::Link;
use super::movable::{constant_bits, movable};
use super::slots::{self, Class};
use super::varyings::{
    bits, clone_expr, constant, generic, input_loads, insert_at_entry, is_interpolated,
    load_interp, output_stores, remove, replace_uses, result, stored,
};
use lathe_ir::{GenericOp, Inst, Op, Shader, Value};
use std::collections::HashMap;

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let mut new = Vec::new();
    let mut map = HashMap::new();
    let mut dead = Vec::new();
    for (&c, list) in &loads {
        let class = slots::input_class(c.0);
        let mut sources: Vec<Inst> = stores.get(&c).cloned().unwrap_or_default();
        if let Some(b) = slots::back_of(c.0) {
            sources.extend(stores.get(&(b, c.1)).into_iter().flatten());
        }
        let Some(&first) = sources.first() else {
            continue;
        };
        let eligible = match class {
            Class::Var | Class::Color { .. } | Class::Tex => true,
            Class::Sysval => slots::always_propagated(c.0),
            Class::Fixed => false,
        };
        if !eligible {
            continue;
        }
        let v = stored(l.p, first);
        let Some(key) = uniform_key(l.p, v, l.opts.shared_uniforms) else {
            continue;
        };
        if sources.iter().any(|&s| {
            uniform_key(l.p, stored(l.p, s), l.opts.shared_uniforms).as_ref() != Some(&key)
        }) {
            continue;
        }
        let ty = l.p.value_type(v);
        let k = constant_bits(l.p, v);
        let allowed = match class {
            Class::Color { .. } => k.is_some_and(|b| unit_float(ty, b)),
            Class::Tex => match (c.1, k) {
                (2, Some(b)) => float_is(ty, b, 0.0),
                (3, Some(b)) => float_is(ty, b, 1.0),
                _ => false,
            },
            _ => true,
        };
        if !allowed || expr_cost(l, l.p, v) > l.cost.max_uniform_expr_cost() {
            continue;
        }
        if list
            .iter()
            .any(|&ld| bits(l.c.value_type(result(l.c, ld))) != bits(ty))
        {
            continue;
        }
        propagate_into(l, v, list, &mut new, &mut map);
        dead.extend_from_slice(list);
        l.report.propagated += 1;
    }
    insert_at_entry(l.c, &new);
    replace_uses(l.c, &map);
    remove(l.c, &dead);
    !dead.is_empty()
}

/// Clone the expression once and give every load of `c` its value.
fn propagate_into(
    l: &mut Link<'_, '_, '_>,
    v: Value,
    loads: &[Inst],
    new: &mut Vec<Inst>,
    map: &mut HashMap<Value, Value>,
) {
    let mut memo = HashMap::new();
    let x = clone_expr(l.p, v, l.c, &mut |_| None, &mut memo, new);
    let constant_value = constant_bits(l.p, v).is_some();
    for &ld in loads {
        let ty = l.c.value_type(result(l.c, ld));
        let mut y = super::varyings::cast(l.c, x, ty, new);
        if l.opts.preserve_inf
            && !constant_value
            && ty.scalar.is_float()
            && is_interpolated(load_interp(l.c, ld))
        {
            y = inf_to_nan(l.c, y, new);
        }
        map.insert(result(l.c, ld), y);
    }
}

/// `x * 0 + x`: infinity becomes NaN, everything else stays.
pub(crate) fn inf_to_nan(s: &mut Shader<'_, GenericOp>, x: Value, out: &mut Vec<Inst>) -> Value {
    let ty = s.value_type(x);
    let zero = constant(s, ty, 0);
    out.push(zero);
    let mul = s.create_inst(
        Op::Opcode(GenericOp::FMul),
        &[x, result(s, zero)],
        &[],
        None,
        Some(ty),
    );
    out.push(mul);
    let add = s.create_inst(
        Op::Opcode(GenericOp::FAdd),
        &[result(s, mul), x],
        &[],
        None,
        Some(ty),
    );
    out.push(add);
    result(s, add)
}

/// A structural key of a uniform expression (`None` if `v` is not one).
pub(crate) fn uniform_key(s: &Shader<'_, GenericOp>, v: Value, uniforms: bool) -> Option<String> {
    let i = s.value_def(v);
    let op = generic(s, i)?;
    if !movable(s, i) {
        return None;
    }
    if matches!(
        op,
        GenericOp::LoadUniform { .. } | GenericOp::LoadUbo { .. }
    ) && !uniforms
    {
        return None;
    }
    let mut key = format!("{op:?}:{}(", s.value_type(v));
    for &a in s.inst(i).args.iter() {
        key.push_str(&uniform_key(s, a, uniforms)?);
        key.push(',');
    }
    key.push(')');
    Some(key)
}

/// The cost of evaluating the expression tree of `v`.
pub(crate) fn expr_cost(l: &Link<'_, '_, '_>, s: &Shader<'_, GenericOp>, v: Value) -> u32 {
    let i = s.value_def(v);
    let own = generic(s, i).map_or(0, |o| l.cost.op_cost(o));
    s.inst(i)
        .args
        .iter()
        .fold(own, |acc, &a| acc.saturating_add(expr_cost(l, s, a)))
}

fn float_value(ty: lathe_ir::Type, b: u32) -> Option<f64> {
    match ty.scalar {
        lathe_ir::Scalar::F32 => Some(f32::from_bits(b) as f64),
        lathe_ir::Scalar::F16 => Some(lathe_ir::f16::to_f64(b as u16)),
        _ => None,
    }
}

fn unit_float(ty: lathe_ir::Type, b: u32) -> bool {
    float_value(ty, b).is_some_and(|x| (0.0..=1.0).contains(&x))
}

fn float_is(ty: lathe_ir::Type, b: u32, want: f64) -> bool {
    float_value(ty, b) == Some(want)
}
