//! `self_copies`: removes the copies an allocated shader has whose source
//! and destination are one register (a copy the allocator coalesced, or a
//! value moved to where it already is): they would only cost a word and
//! delay slots. Their readers read the source instead. Targets run it
//! from their legalisation, after the allocation checker.

use std::collections::{HashMap, HashSet};

use lathe_ir::{Op, Opcode, Shader, Value};

use crate::target::TargetFacts;

/// Drops `shader`'s same-register copies ([`TargetFacts::copy`]); returns
/// how many.
pub fn drop_self_copies<O: Opcode, T: TargetFacts<O> + ?Sized>(
    shader: &mut Shader<'_, O>,
    target: &T,
) -> usize {
    let mut renamed: HashMap<Value, Value> = HashMap::new();
    for b in shader.layout().to_vec() {
        let mut dropped = HashSet::new();
        for &i in shader.block_insts(b) {
            let d = shader.inst(i);
            let (Op::Opcode(op), Some(r), &[src]) = (d.op, d.result, &d.args[..]) else {
                continue;
            };
            let ty = shader.value_type(r);
            // A copy between types of one width (a bit cast) moves the
            // same bits.
            let src_ty = shader.value_type(src);
            if op == target.copy(ty)
                && src_ty.lanes == ty.lanes
                && src_ty.scalar.bits() == ty.scalar.bits()
                && shader.value_reg(src).is_some()
                && shader.value_reg(src) == shader.value_reg(r)
            {
                renamed.insert(r, src);
                dropped.insert(i);
            }
        }
        if !dropped.is_empty() {
            shader.retain_insts(b, |i, _| !dropped.contains(&i));
        }
    }
    if !renamed.is_empty() {
        let resolve = |mut v: Value| {
            while let Some(&w) = renamed.get(&v) {
                v = w;
            }
            v
        };
        shader.rewrite_operands(resolve);
    }
    renamed.len()
}
