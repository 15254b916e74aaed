//! Part of step 7 (compaction): two flat 16-bit varyings share one 32-bit
//! component.
//!
//! The IR addresses whole 32-bit varying components, so the design's
//! packing of 16-bit varyings into halves is done with bit operations: the
//! producer stores `lo | hi << 16` (each 16-bit value zero-extended) in the
//! first component, and the consumer splits what it loads back into the two
//! values. That is exact only for flat varyings (interpolation would mix
//! the halves), so only flat ones are paired: each written by one store,
//! the two stores in one block (the packed store goes at its end), read
//! only as flat 16-bit values, not captured by transform feedback.

use super::Link;
use super::slots::{self, Class};
use super::varyings::{
    Comp, bits, cast, common_interp, constant, input_loads, insert_at_entry, insert_before_end,
    new_load, output_stores, remove, replace_uses, result, stored,
};
use indexmap::IndexMap;
use lathe_ir::{Block, GenericOp, Inst, Interp, InterpMode, Op, Shader, Type, Value};
use std::collections::HashMap;

/// Pair flat 16-bit varyings; returns how many pairs now share a component.
pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> usize {
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    // Candidates by the block of their one store.
    let mut by_block: IndexMap<Block, Vec<Comp>> = IndexMap::new();
    for (&c, lds) in &loads {
        let var = slots::output_class(c.0) == Class::Var && slots::input_class(c.0) == Class::Var;
        let Some([st]) = stores.get(&c).map(Vec::as_slice) else {
            continue;
        };
        let flat = common_interp(l.c, lds).is_some_and(|q| q.mode == InterpMode::Flat);
        let narrow = bits(l.p.value_type(stored(l.p, *st))) == 16
            && lds
                .iter()
                .all(|&ld| bits(l.c.value_type(result(l.c, ld))) == 16);
        let Some(block) = l.p.inst(*st).block else {
            continue;
        };
        if var && flat && narrow && !l.opts.xfb.contains(&c) {
            by_block.entry(block).or_default().push(c);
        }
    }
    let mut pairs = 0;
    for (block, list) in by_block {
        for pair in list.chunks_exact(2) {
            let (lo, hi) = (pair[0], pair[1]);
            pack_stores(l.p, block, stores[&lo][0], stores[&hi][0], lo);
            split_loads(l.c, &loads[&lo], &loads[&hi], lo);
            pairs += 1;
        }
    }
    pairs
}

fn op(
    s: &mut Shader<'_, GenericOp>,
    op: GenericOp,
    args: &[Value],
    ty: Type,
    out: &mut Vec<Inst>,
) -> Value {
    let i = s.create_inst(Op::Opcode(op), args, &[], None, Some(ty));
    out.push(i);
    result(s, i)
}

/// Producer: one store of `lo | hi << 16` to `to` replaces both stores.
fn pack_stores(s: &mut Shader<'_, GenericOp>, block: Block, lo: Inst, hi: Inst, to: Comp) {
    let mut new = Vec::new();
    let widen = |s: &mut Shader<'_, GenericOp>, st: Inst, new: &mut Vec<Inst>| {
        let v = stored(s, st);
        let bits16 = cast(s, v, Type::U16, new);
        op(s, GenericOp::Cvt, &[bits16], Type::U32, new)
    };
    let l32 = widen(s, lo, &mut new);
    let h32 = widen(s, hi, &mut new);
    let k = constant(s, Type::U32, 16);
    new.push(k);
    let shifted = op(s, GenericOp::Shl, &[h32, result(s, k)], Type::U32, &mut new);
    let packed = op(s, GenericOp::Or, &[l32, shifted], Type::U32, &mut new);
    let store = s.create_inst(
        Op::Opcode(GenericOp::StoreOutput {
            slot: to.0,
            comp: to.1,
        }),
        &[packed],
        &[],
        None,
        None,
    );
    new.push(store);
    insert_before_end(s, block, &new);
    remove(s, &[lo, hi]);
}

/// Consumer: one flat load of `from` replaces both components' loads.
fn split_loads(s: &mut Shader<'_, GenericOp>, lo: &[Inst], hi: &[Inst], from: Comp) {
    let mut new = Vec::new();
    let ld = new_load(s, from, Interp::FLAT, Type::U32);
    new.push(ld);
    let word = result(s, ld);
    let k = constant(s, Type::U32, 16);
    new.push(k);
    let top = op(
        s,
        GenericOp::Shr,
        &[word, result(s, k)],
        Type::U32,
        &mut new,
    );
    let lo16 = op(s, GenericOp::Cvt, &[word], Type::U16, &mut new);
    let hi16 = op(s, GenericOp::Cvt, &[top], Type::U16, &mut new);
    let mut map = HashMap::new();
    for (loads, half) in [(lo, lo16), (hi, hi16)] {
        for &old in loads {
            let v = result(s, old);
            let ty = s.value_type(v);
            map.insert(v, cast(s, half, ty, &mut new));
        }
    }
    insert_at_entry(s, &new);
    replace_uses(s, &map);
    remove(s, &[lo, hi].concat());
}
