//! Step 6: forward inter-shader code motion (producer to consumer), the
//! part the design leaves as a draft.
//!
//! On the producer's SSA-use graph with constants, uniforms and uniform
//! expressions taken out (they can be recomputed anywhere, and would
//! otherwise be a second way into every vertex), the lowest common
//! ancestor of two output stores in the dominator tree is a value every
//! path to both stores goes through: a candidate `D` for one new output.
//! Each consumed output whose stored value is computed from `D` (and
//! removed, movable values) by movable instructions joins `D`'s group; the
//! group's outputs are replaced by one output storing `D`, and the
//! consumer recomputes each of them from the new input.
//!
//! The interpolation rules are those of backward motion read the other
//! way: moving `f` past interpolation needs `interp(f(D)) = f(interp(D))`,
//! which holds for any `f` when the consumer reads flat, and for the
//! affine operations of [`movable`](super::movable) (with convergent other
//! operands) when it interpolates. All loads of a group share one
//! qualifier, which the new input takes. Outputs captured by transform
//! feedback stay. The moved work runs per fragment instead of per vertex,
//! so the target decides through
//! [`LinkCost::forward_worth_it`](super::LinkCost::forward_worth_it)
//! whether saving the components pays for it.

use super::Link;
use super::backward::free_component;
use super::graph::UseGraph;
use super::movable::{Kind, combine, movable};
use super::slots::{self, Class};
use super::varyings::{
    Comp, bits, clone_expr, common_interp, generic, input_loads, insert_at_entry,
    insert_before_end, interpolable, is_interpolated, new_load, output_stores, remove,
    replace_uses, result, stored,
};
use indexmap::{IndexMap, IndexSet};
use lathe_ir::{Block, GenericOp, Inst, Interp, InterpMode, Op, Shader, Type, Value};
use std::collections::HashMap;

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    let mut any = false;
    while once(l) {
        any = true;
    }
    any
}

/// Producer values computable anywhere: constants, uniform loads (when
/// shared) and movable arithmetic on them.
fn free_values(p: &Shader<'_, GenericOp>, uniforms: bool) -> Vec<bool> {
    let mut free = vec![false; p.value_capacity()];
    for (_, i) in p.insts_in_order() {
        let Some(r) = p.inst(i).result else { continue };
        let ok = movable(p, i)
            && (uniforms
                || !matches!(
                    generic(p, i),
                    Some(GenericOp::LoadUniform { .. } | GenericOp::LoadUbo { .. })
                ))
            && p.inst(i).args.iter().all(|a| free[a.index()]);
        free[r.index()] = ok;
    }
    free
}

/// An output that may join a group.
struct Member {
    comp: Comp,
    store: Inst,
    interp: Interp,
}

struct Group {
    d: Value,
    interp: Interp,
    members: Vec<Comp>,
    cost: u32,
}

fn once(l: &mut Link<'_, '_, '_>) -> bool {
    super::dce(l.p);
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let free = free_values(l.p, l.opts.shared_uniforms);
    let mut members: Vec<Member> = Vec::new();
    for (&c, list) in &stores {
        let (Some(lds), [st]) = (loads.get(&c), list.as_slice()) else {
            continue;
        };
        if slots::output_class(c.0) != Class::Var || l.opts.xfb.contains(&c) {
            continue;
        }
        let v = stored(l.p, *st);
        let Some(interp) = common_interp(l.c, lds) else {
            continue;
        };
        let width = bits(l.p.value_type(v));
        if free[v.index()]
            || lds
                .iter()
                .any(|&ld| bits(l.c.value_type(result(l.c, ld))) != width)
        {
            continue;
        }
        members.push(Member {
            comp: c,
            store: *st,
            interp,
        });
    }
    if members.len() < 2 {
        return false;
    }
    let p = &*l.p;
    let graph = UseGraph::build(p, &|i| p.inst(i).result.is_some_and(|r| free[r.index()]));
    let dom = graph.dominators();
    // Candidates: LCAs of pairs of stores.
    let mut candidates: IndexSet<Value> = IndexSet::new();
    for (k, a) in members.iter().enumerate() {
        for b in &members[k + 1..] {
            let Some(d) = dom.lca(a.store.0, b.store.0) else {
                continue;
            };
            let Some(v) = p.inst(Inst(d)).result else {
                continue;
            };
            let ty = p.value_type(v);
            if ty.is_scalar() && ty != Type::BOOL {
                candidates.insert(v);
            }
        }
    }
    let mut best: Option<Group> = None;
    for &d in &candidates {
        // Group by the consumer's qualifier and the store's block (the new
        // store must run exactly when the old ones did).
        let mut groups: IndexMap<(Interp, Option<Block>), Group> = IndexMap::new();
        for m in &members {
            let v = stored(p, m.store);
            let d_kind = if is_interpolated(m.interp) {
                if l.opts.preserve_inf || !interpolable(p.value_type(d)) {
                    continue;
                }
                Kind::Interp(m.interp)
            } else {
                Kind::Flat
            };
            let mut cost = 0;
            if kind_over(l, p, v, d, d_kind, &free, &mut cost).is_none() {
                continue;
            }
            let g = groups
                .entry((m.interp, p.inst(m.store).block))
                .or_insert(Group {
                    d,
                    interp: m.interp,
                    members: Vec::new(),
                    cost: 0,
                });
            g.members.push(m.comp);
            g.cost += cost;
        }
        for g in groups.into_values() {
            let saved = g.members.len() as u32 - 1;
            if saved == 0 || !l.cost.forward_worth_it(g.cost, saved) {
                continue;
            }
            if best
                .as_ref()
                .is_none_or(|b| g.members.len() > b.members.len())
            {
                best = Some(g);
            }
        }
    }
    let Some(g) = best else { return false };
    apply(l, &stores, &loads, g)
}

/// The kind of `v` computed from `d` (of kind `d_kind`) and free values,
/// adding the cost of the instructions that would move; `None` if `v`
/// needs anything else or breaks the interpolation rules.
fn kind_over(
    l: &Link<'_, '_, '_>,
    p: &Shader<'_, GenericOp>,
    v: Value,
    d: Value,
    d_kind: Kind,
    free: &[bool],
    cost: &mut u32,
) -> Option<Kind> {
    if v == d {
        return Some(d_kind);
    }
    let i = p.value_def(v);
    let op = generic(p, i)?;
    *cost = cost.saturating_add(l.cost.op_cost(op));
    if free[v.index()] {
        let mut sub = 0;
        for &a in p.inst(i).args.iter() {
            kind_over(l, p, a, d, Kind::Convergent, free, &mut sub)?;
        }
        *cost = cost.saturating_add(sub);
        return Some(Kind::Convergent);
    }
    if !movable(p, i) {
        return None;
    }
    let mut kinds = Vec::new();
    for &a in p.inst(i).args.iter() {
        kinds.push(kind_over(l, p, a, d, d_kind, free, cost)?);
    }
    combine(p, i, &kinds, !l.opts.preserve_inf)
}

fn apply(
    l: &mut Link<'_, '_, '_>,
    stores: &IndexMap<Comp, Vec<Inst>>,
    loads: &IndexMap<Comp, Vec<Inst>>,
    g: Group,
) -> bool {
    // Reuse an output that already stores `d`, or make one.
    let reuse = g
        .members
        .iter()
        .copied()
        .find(|c| stored(l.p, stores[c][0]) == g.d);
    let new_comp = match reuse {
        Some(c) => c,
        None => {
            let Some(c) = free_component(stores, loads) else {
                return false;
            };
            let Some(block) = l.p.inst(stores[&g.members[0]][0]).block else {
                return false;
            };
            // Stored values dominate their stores, and `d` dominates all of
            // them in the use graph, so it is available there.
            let store = l.p.create_inst(
                Op::Opcode(GenericOp::StoreOutput {
                    slot: c.0,
                    comp: c.1,
                }),
                &[g.d],
                &[],
                None,
                None,
            );
            insert_before_end(l.p, block, &[store]);
            c
        }
    };
    let d_ty = l.p.value_type(g.d);
    let mut new = Vec::new();
    let mut map = HashMap::new();
    let mut dead = Vec::new();
    for &c in &g.members {
        if Some(c) == reuse {
            continue;
        }
        let v = stored(l.p, stores[&c][0]);
        for &ld in &loads[&c] {
            let nl = new_load(l.c, new_comp, g.interp, d_ty);
            new.push(nl);
            let d_in = result(l.c, nl);
            let d = g.d;
            let mut memo = HashMap::new();
            let x = clone_expr(
                l.p,
                v,
                l.c,
                &mut |x| (x == d).then_some(d_in),
                &mut memo,
                &mut new,
            );
            let ty = l.c.value_type(result(l.c, ld));
            let y = super::varyings::cast(l.c, x, ty, &mut new);
            map.insert(result(l.c, ld), y);
            dead.push(ld);
        }
    }
    insert_at_entry(l.c, &new);
    replace_uses(l.c, &map);
    remove(l.c, &dead);
    if g.interp.mode != InterpMode::Flat {
        l.report.moved_interpolated = true;
    }
    l.report.forward_moves += 1;
    true
}
