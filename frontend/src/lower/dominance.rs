//! SPIR-V's dominance rule, checked before a function is lowered: every use
//! of an id defined in the function must be dominated by its definition
//! (for an `OpPhi` operand: the definition must dominate the named parent
//! block). Lowering such a module faithfully would give IR whose values do
//! not dominate their uses, so it is rejected as invalid SPIR-V instead. An
//! id local to another function, or to an unreachable block of this one,
//! dominates no use here either.

use super::successors;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::Op;
use rustc_hash::FxHashMap as HashMap;

/// A use that its definition does not dominate: the index of the using
/// instruction and the id it uses.
pub(super) struct Violation {
    pub at: usize,
    pub id: u32,
}

/// Check `blocks` (the function's reachable blocks in module order, the
/// entry first: `(label, first inst, end)`). `def_of` gives the index of an
/// id's defining instruction in `insts`, `locals_from` the index of the
/// module's first `OpFunction` (instructions from there on are function
/// bodies), `params` the function's parameters.
pub(super) fn check(
    insts: &[Instruction],
    blocks: &[(u32, usize, usize)],
    def_of: impl Fn(u32) -> Option<usize>,
    locals_from: usize,
    params: &[u32],
) -> Result<(), Violation> {
    if blocks.is_empty() {
        return Ok(());
    }
    let index: HashMap<u32, usize> = blocks.iter().enumerate().map(|(k, b)| (b.0, k)).collect();
    let succs: Vec<Vec<usize>> = blocks
        .iter()
        .map(|&(_, _, end)| {
            successors(&insts[end - 1])
                .into_iter()
                .filter_map(|t| index.get(&t).copied())
                .collect()
        })
        .collect();
    let tree = DomTree::new(&succs);

    // Where each id of the function is defined: (block, instruction index).
    let mut def: HashMap<u32, (usize, usize)> = HashMap::default();
    for (k, &(_, start, end)) in blocks.iter().enumerate() {
        for (at, inst) in insts.iter().enumerate().take(end).skip(start + 1) {
            if let Some(id) = inst.result_id {
                def.insert(id, (k, at));
            }
        }
    }
    for (k, &(_, start, end)) in blocks.iter().enumerate() {
        for (at, inst) in insts.iter().enumerate().take(end).skip(start + 1) {
            let ids = inst
                .operands
                .iter()
                .enumerate()
                .filter_map(|(j, o)| match o {
                    Operand::IdRef(id) => Some((j, *id)),
                    _ => None,
                });
            for (j, id) in ids {
                let Some(&(def_block, def_at)) = def.get(&id) else {
                    if local_elsewhere(insts, &def_of, locals_from, params, id) {
                        return Err(Violation { at, id });
                    }
                    continue;
                };
                let ok = if inst.class.opcode == Op::Phi {
                    if j % 2 == 1 {
                        continue; // the parent label
                    }
                    // The value must be available at the end of the parent.
                    match inst.operands.get(j + 1) {
                        Some(Operand::IdRef(parent)) => match index.get(parent) {
                            Some(&p) => tree.dominates(def_block, p),
                            None => true, // an unreachable parent: no edge
                        },
                        _ => true,
                    }
                } else if def_block == k {
                    def_at < at
                } else {
                    tree.dominates(def_block, k)
                };
                if !ok {
                    return Err(Violation { at, id });
                }
            }
        }
    }
    Ok(())
}

/// Whether `id` is a value local to a function body (not a label, a
/// function or one of `params`) that the reachable blocks do not define.
fn local_elsewhere(
    insts: &[Instruction],
    def_of: &impl Fn(u32) -> Option<usize>,
    locals_from: usize,
    params: &[u32],
    id: u32,
) -> bool {
    let Some(d) = def_of(id) else {
        return false; // undefined ids are reported where they are looked up
    };
    d >= locals_from
        && !matches!(insts[d].class.opcode, Op::Label | Op::Function)
        && !params.contains(&id)
}

/// Dominator tree of a CFG whose node 0 is the entry and every node is
/// reachable from it, with pre/post numbers for constant-time queries.
struct DomTree {
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl DomTree {
    /// Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm".
    fn new(succs: &[Vec<usize>]) -> DomTree {
        let n = succs.len();
        // Reverse post-order by an explicit DFS.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = succs[b].get(*next) {
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (k, &b) in order.iter().enumerate() {
            rpo[b] = k;
        }
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        const NONE: usize = usize::MAX;
        let mut idom = vec![NONE; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new = NONE;
                for &p in &preds[b] {
                    if idom[p] == NONE {
                        continue;
                    }
                    new = if new == NONE {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while rpo[x] > rpo[y] {
                                x = idom[x];
                            }
                            while rpo[y] > rpo[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != NONE && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        // Number the tree.
        let mut children = vec![Vec::new(); n];
        for b in 1..n {
            if idom[b] != NONE {
                children[idom[b]].push(b);
            }
        }
        let (mut pre, mut post) = (vec![u32::MAX; n], vec![0; n]);
        let mut clock = 0u32;
        let mut stack = vec![(0usize, 0usize)];
        pre[0] = 0;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&c) = children[b].get(*next) {
                *next += 1;
                clock += 1;
                pre[c] = clock;
                stack.push((c, 0));
            } else {
                clock += 1;
                post[b] = clock;
                stack.pop();
            }
        }
        DomTree { pre, post }
    }

    /// Whether `a` dominates `b` (reflexive).
    fn dominates(&self, a: usize, b: usize) -> bool {
        self.pre[a] != u32::MAX
            && self.pre[b] != u32::MAX
            && self.pre[a] <= self.pre[b]
            && self.post[b] <= self.post[a]
    }
}

#[cfg(test)]
mod tests {
    use super::DomTree;

    #[test]
    fn diamond_and_loop() {
        // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4, 1 (a back edge into 1).
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![4, 1], vec![]];
        let t = DomTree::new(&succs);
        assert!(t.dominates(0, 4));
        assert!(t.dominates(3, 4));
        assert!(!t.dominates(1, 3), "3 is also reached through 2");
        assert!(!t.dominates(2, 3));
        assert!(t.dominates(1, 1));
        assert!(!t.dominates(4, 3));
    }
}
