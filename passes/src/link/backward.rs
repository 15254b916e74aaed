//! Step 5: backward inter-shader code motion (consumer to producer).
//!
//! On the consumer's SSA-use graph (instructions as vertices, an edge from
//! each definition to each user; loads and constants enter, stores and
//! branches leave), a load's immediate post-dominator is the instruction
//! every use of the load flows into. Starting from an input load, the
//! search climbs the post-dominator tree while the next instruction is
//! movable ([`movable`](super::movable)) with its whole operand tree, and
//! keeps the farthest non-boolean one, `P`. `P`'s expression is then
//! computed in the producer from the stored values instead of the loads
//! (uniforms and constants copied along), written to a new output, and
//! read back in the consumer by one new input in place of `P`. The load
//! the search started from always dies (it is post-dominated by `P`);
//! other loads `P` read survive if they have other uses.
//!
//! Conditions: the stores of every input `P` reads are all in one block
//! of the producer (several stores of one output there: the last one
//! counts), the same block for all inputs (the new store goes at its
//! end) — or else every path to the producer's one return writes each of
//! them, and `P` is computed at the return from the values they hold
//! there (phis where paths join, [`reaching`](super::reaching)); the move must let at least one varying component die (all its
//! loads die and transform feedback does not capture it, so removal
//! deletes its output: the new component never adds one); the
//! interpolation rules of
//! [`movable`](super::movable) hold. The new input takes the qualifier of
//! the interpolated inputs it replaces, or is flat when `P` depended only
//! on flat and convergent ones. With `preserve_inf`, nothing moves across
//! interpolation.

use super::Link;
use super::graph::UseGraph;
use super::movable::{Kind, combine, movable};
use super::reaching;
use super::slots::{self, Class};
use super::varyings::{
    Comp, bits, clone_expr, convergent_outputs, generic, input_loads, insert_at_entry,
    insert_before_end, interpolable, new_load, output_stores, replace_uses, result, stored,
};
use indexmap::IndexMap;
use lathe_ir::{GenericOp, Inst, Interp, InterpMode, Op, Shader, Type};
use std::collections::{HashMap, HashSet};

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    let mut any = false;
    while once(l) {
        any = true;
    }
    any
}

/// Kinds of consumer instructions, computed on demand.
struct Kinds<'x, 'c> {
    c: &'x Shader<'c, GenericOp>,
    leaf: IndexMap<Comp, Option<Kind>>,
    uniforms: bool,
    across_interp: bool,
    memo: HashMap<Inst, Option<Kind>>,
}

impl Kinds<'_, '_> {
    fn kind(&mut self, i: Inst) -> Option<Kind> {
        if let Some(&k) = self.memo.get(&i) {
            return k;
        }
        // Guard against cycles through phis (never movable anyway).
        self.memo.insert(i, None);
        let k = match generic(self.c, i) {
            Some(GenericOp::LoadInput { slot, comp, interp }) => {
                match self.leaf.get(&(slot, comp)).copied().flatten() {
                    Some(Kind::Interp(_)) if interp.mode == InterpMode::Flat => Some(Kind::Flat),
                    Some(Kind::Interp(_)) => Some(Kind::Interp(interp)),
                    Some(Kind::Convergent) if interp.mode == InterpMode::Flat => Some(Kind::Flat),
                    other => other,
                }
            }
            Some(GenericOp::LoadUniform { .. } | GenericOp::LoadUbo { .. }) if !self.uniforms => {
                None
            }
            Some(_) if movable(self.c, i) => {
                let args: Vec<_> = self.c.inst(i).args.to_vec();
                let mut kinds = Vec::with_capacity(args.len());
                for a in args {
                    match self.kind(self.c.value_def(a)) {
                        Some(k) => kinds.push(k),
                        None => {
                            return None;
                        }
                    }
                }
                combine(self.c, i, &kinds, self.across_interp)
            }
            _ => None,
        };
        self.memo.insert(i, k);
        k
    }
}

/// One move; `false` when nothing can move.
fn once(l: &mut Link<'_, '_, '_>) -> bool {
    // Dead code from the previous move must not be found again.
    super::dce(l.c);
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let conv = convergent_outputs(l.p, &stores);
    let exit = reaching::exit_block(l.p);
    // Which input components may take part, and as what.
    let mut leaf: IndexMap<Comp, Option<Kind>> = IndexMap::new();
    for (&c, list) in &loads {
        let k = (|| {
            if slots::input_class(c.0) != Class::Var {
                return None;
            }
            // Stores in one block: the last one is what the consumer
            // reads. In several: the value when the producer returns,
            // which every path must write, with one type (for phis).
            let st = stores.get(&c)?;
            let block = l.p.inst(*st.first()?).block;
            let ty = l.p.value_type(stored(l.p, *st.last()?));
            if st.iter().any(|&s| l.p.inst(s).block != block)
                && !exit.is_some_and(|e| at_exit(l.p, st, e, ty))
            {
                return None;
            }
            if st
                .iter()
                .any(|&s| bits(l.p.value_type(stored(l.p, s))) != bits(ty))
            {
                return None;
            }
            let load_ty = |ld: &Inst| l.c.value_type(result(l.c, *ld));
            if list.iter().any(|ld| bits(load_ty(ld)) != bits(ty)) {
                return None;
            }
            if conv.get(&c).copied().unwrap_or(false) && !l.opts.preserve_inf {
                Some(Kind::Convergent)
            } else if list.iter().all(|ld| interpolable(load_ty(ld))) {
                // The qualifier is applied per load in `Kinds::kind`.
                Some(Kind::Interp(lathe_ir::Interp::SMOOTH))
            } else {
                Some(Kind::Flat)
            }
        })();
        leaf.insert(c, k);
    }
    let graph = UseGraph::build(l.c, &|_| false);
    let pdom = graph.post_dominators();
    let mut kinds = Kinds {
        c: l.c,
        leaf,
        uniforms: l.opts.shared_uniforms,
        across_interp: !l.opts.preserve_inf,
        memo: HashMap::new(),
    };
    for list in loads.values() {
        for &ld in list {
            if kinds.kind(ld).is_none() {
                continue;
            }
            // Climb while movable; keep the farthest non-boolean vertex.
            let mut at = ld.0;
            let mut best = None;
            while let Some(p) = pdom.parent(at) {
                let p_inst = Inst(p);
                if kinds.kind(p_inst).is_none() {
                    break;
                }
                at = p;
                let ty = l.c.value_type(result(l.c, p_inst));
                if ty != Type::BOOL {
                    best = Some(p_inst);
                }
            }
            let Some(top) = best else { continue };
            if let Some(plan) = plan(l, &graph, &loads, &stores, top) {
                let kind = kinds.kind(top).expect("movable");
                apply(l, top, kind, plan);
                return true;
            }
        }
    }
    false
}

struct Plan {
    /// The producer block the new store ends: the one all involved stores
    /// are in, or else the returning block.
    block: lathe_ir::Block,
    /// Stored value per involved input component (stores in one block).
    values: HashMap<Comp, lathe_ir::Value>,
    /// Otherwise the stores and type of each involved component, whose
    /// value at the return is built when the move is made.
    at_exit: Vec<(Comp, Vec<Inst>, Type)>,
    new_comp: Comp,
}

/// Can the value `stores` leave when the producer returns through `exit`
/// be read there: every path writes it, always with type `ty`?
fn at_exit(p: &Shader<'_, GenericOp>, stores: &[Inst], exit: lathe_ir::Block, ty: Type) -> bool {
    stores.iter().all(|&s| p.value_type(stored(p, s)) == ty)
        && reaching::defined_at_exit(p, stores, exit)
}

/// Check the store and benefit conditions for moving `top`.
fn plan(
    l: &Link<'_, '_, '_>,
    graph: &UseGraph,
    loads: &IndexMap<Comp, Vec<Inst>>,
    stores: &IndexMap<Comp, Vec<Inst>>,
    top: Inst,
) -> Option<Plan> {
    // The expression tree of `top`.
    let mut tree = Vec::new();
    let mut seen = HashSet::new();
    let mut work = vec![top];
    while let Some(i) = work.pop() {
        if !seen.insert(i) {
            continue;
        }
        tree.push(i);
        for &a in l.c.inst(i).args.iter() {
            work.push(l.c.value_def(a));
        }
    }
    // Instructions that die once `top` is replaced: all their uses die.
    let mut dying: HashSet<Inst> = HashSet::from([top]);
    let mut grew = true;
    while grew {
        grew = false;
        for &i in &tree {
            if !dying.contains(&i)
                && graph.uses[i.index()]
                    .iter()
                    .all(|&u| dying.contains(&Inst(u)))
            {
                dying.insert(i);
                grew = true;
            }
        }
    }
    let mut block = None;
    let mut one_block = true;
    let mut values = HashMap::new();
    let mut involved = Vec::new();
    let mut frees_one = false;
    for &i in &tree {
        let Some(GenericOp::LoadInput { slot, comp, .. }) = generic(l.c, i) else {
            continue;
        };
        let c = (slot, comp);
        let st = stores.get(&c)?;
        let last = *st.last()?;
        let b = *block.get_or_insert(l.p.inst(last).block?);
        one_block &= st.iter().all(|&s| l.p.inst(s).block == Some(b));
        values.insert(c, stored(l.p, last));
        involved.push((c, st.clone(), l.p.value_type(stored(l.p, last))));
        // A component captured by transform feedback stays written.
        frees_one |= !l.opts.xfb.contains(&c) && loads[&c].iter().all(|ld| dying.contains(ld));
    }
    if !frees_one {
        return None;
    }
    let new_comp = free_component(stores, loads)?;
    if one_block {
        return Some(Plan {
            block: block?,
            values,
            at_exit: Vec::new(),
            new_comp,
        });
    }
    // Stores in several blocks: compute at the return.
    let exit = reaching::exit_block(l.p)?;
    if !involved
        .iter()
        .all(|(_, st, ty)| at_exit(l.p, st, exit, *ty))
    {
        return None;
    }
    Some(Plan {
        block: exit,
        values: HashMap::new(),
        at_exit: involved,
        new_comp,
    })
}

/// The first VARn component neither shader uses.
pub(crate) fn free_component(
    stores: &IndexMap<Comp, Vec<Inst>>,
    loads: &IndexMap<Comp, Vec<Inst>>,
) -> Option<Comp> {
    (0..slots::slot::VAR_COUNT)
        .flat_map(|s| (0..4u8).map(move |c| (s, c)))
        .find(|c| !stores.contains_key(c) && !loads.contains_key(c))
}

fn apply(l: &mut Link<'_, '_, '_>, top: Inst, kind: Kind, mut plan: Plan) {
    for (c, st, ty) in &plan.at_exit {
        let v = reaching::value_at_exit(l.p, st, plan.block, *ty);
        plan.values.insert(*c, v);
    }
    let value = result(l.c, top);
    let ty = l.c.value_type(value);
    // Producer: compute `top` from the stored values, store it.
    let mut new = Vec::new();
    let mut memo = HashMap::new();
    let c = &*l.c;
    let values = &plan.values;
    let mut leaf = |v: lathe_ir::Value| match generic(c, c.value_def(v)) {
        Some(GenericOp::LoadInput { slot, comp, .. }) => values.get(&(slot, comp)).copied(),
        _ => None,
    };
    let x = clone_expr(c, value, l.p, &mut leaf, &mut memo, &mut new);
    let store = l.p.create_inst(
        Op::Opcode(GenericOp::StoreOutput {
            slot: plan.new_comp.0,
            comp: plan.new_comp.1,
        }),
        &[x],
        &[],
        None,
        None,
    );
    new.push(store);
    insert_before_end(l.p, plan.block, &new);
    // Consumer: one new input replaces `top`.
    let interp = match kind {
        Kind::Interp(q) => {
            l.report.moved_interpolated = true;
            q
        }
        _ => Interp::FLAT,
    };
    let ld = new_load(l.c, plan.new_comp, interp, ty);
    insert_at_entry(l.c, &[ld]);
    replace_uses(l.c, &HashMap::from([(value, result(l.c, ld))]));
    l.report.backward_moves += 1;
}

#[cfg(test)]
mod tests {
    #[test]
    fn load_kind_follows_its_own_qualifier() {
        // Covered end to end in tests/link.rs; this module's unit test
        // checks the free-component search order.
        let stores = indexmap::IndexMap::from([((0u16, 0u8), Vec::new())]);
        let loads = indexmap::IndexMap::from([((0u16, 1u8), Vec::new())]);
        assert_eq!(super::free_component(&stores, &loads), Some((0, 2)));
    }
}
