//! Dominator trees over small explicit graphs: the SSA-use graph of a
//! shader (instructions as vertices, an edge from each operand's definition
//! to its user) in both directions, and a shader's reversed control-flow
//! graph for "does this block run on every path" questions.
//!
//! The trees hang below a virtual root joined to the given roots, so a
//! graph made of disjoint pieces still has one tree; the lowest common
//! ancestor of vertices in different pieces is the virtual root, which the
//! queries report as `None` (the design's "the LCA does not exist").

use lathe_ir::{GenericOp, Inst, Op, Shader};

/// A dominator tree of vertices `0..n` (plus the virtual root `n`).
pub(crate) struct DomTree {
    /// Immediate dominator; `n` for children of the virtual root,
    /// `u32::MAX` for vertices the roots do not reach.
    idom: Vec<u32>,
    depth: Vec<u32>,
}

const UNREACHED: u32 = u32::MAX;

impl DomTree {
    /// Cooper, Harvey and Kennedy's iterative algorithm on the graph with
    /// successor lists `succs`, entered from `roots`.
    pub(crate) fn compute(succs: &[Vec<u32>], roots: &[u32]) -> DomTree {
        let n = succs.len();
        let root = n as u32;
        let succ_of = |v: u32| -> &[u32] { if v == root { roots } else { &succs[v as usize] } };
        // Reverse post-order from the virtual root.
        let mut order = vec![UNREACHED; n + 1];
        let mut post = Vec::with_capacity(n + 1);
        let mut seen = vec![false; n + 1];
        let mut stack = vec![(root, 0usize)];
        seen[n] = true;
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if let Some(&s) = succ_of(v).get(*k) {
                *k += 1;
                if !seen[s as usize] {
                    seen[s as usize] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(v);
                stack.pop();
            }
        }
        let rpo: Vec<u32> = post.iter().rev().copied().collect();
        for (k, &v) in rpo.iter().enumerate() {
            order[v as usize] = k as u32;
        }
        let mut preds = vec![Vec::new(); n + 1];
        for &v in &rpo {
            for &s in succ_of(v) {
                preds[s as usize].push(v);
            }
        }
        let mut idom = vec![UNREACHED; n + 1];
        idom[n] = root;
        let mut changed = true;
        while changed {
            changed = false;
            for &v in &rpo[1..] {
                let mut new = UNREACHED;
                for &p in &preds[v as usize] {
                    if idom[p as usize] == UNREACHED {
                        continue;
                    }
                    new = if new == UNREACHED {
                        p
                    } else {
                        let (mut a, mut b) = (p, new);
                        while a != b {
                            while order[a as usize] > order[b as usize] {
                                a = idom[a as usize];
                            }
                            while order[b as usize] > order[a as usize] {
                                b = idom[b as usize];
                            }
                        }
                        a
                    };
                }
                if new != UNREACHED && idom[v as usize] != new {
                    idom[v as usize] = new;
                    changed = true;
                }
            }
        }
        let mut depth = vec![0u32; n + 1];
        for &v in &rpo[1..] {
            depth[v as usize] = depth[idom[v as usize] as usize] + 1;
        }
        idom.truncate(n);
        DomTree { idom, depth }
    }

    /// The immediate dominator, `None` when it is the virtual root or `v`
    /// is unreached.
    pub(crate) fn parent(&self, v: u32) -> Option<u32> {
        let p = *self.idom.get(v as usize)?;
        (p != UNREACHED && (p as usize) < self.idom.len()).then_some(p)
    }

    pub(crate) fn reached(&self, v: u32) -> bool {
        self.idom.get(v as usize).is_some_and(|&p| p != UNREACHED)
    }

    /// Lowest common ancestor, `None` if it is the virtual root.
    pub(crate) fn lca(&self, mut a: u32, mut b: u32) -> Option<u32> {
        if !self.reached(a) || !self.reached(b) {
            return None;
        }
        while a != b {
            if self.depth[a as usize] >= self.depth[b as usize] {
                a = self.parent(a)?;
            } else {
                b = self.parent(b)?;
            }
        }
        Some(a)
    }

    /// Does `a` dominate `b` (reflexively)?
    pub(crate) fn dominates(&self, a: u32, mut b: u32) -> bool {
        if !self.reached(b) {
            return false;
        }
        loop {
            if a == b {
                return true;
            }
            match self.parent(b) {
                Some(p) => b = p,
                None => return false,
            }
        }
    }
}

/// The SSA-use graph of a shader's laid-out instructions: `uses[i]` are the
/// instructions reading `i`'s result, `defs[i]` the definitions `i` reads.
/// Instructions for which `removed` holds (constants and uniform loads
/// when building the forward graph) are left out with their edges.
pub(crate) struct UseGraph {
    pub(crate) uses: Vec<Vec<u32>>,
    pub(crate) defs: Vec<Vec<u32>>,
    pub(crate) present: Vec<bool>,
}

impl UseGraph {
    pub(crate) fn build(s: &Shader<'_, GenericOp>, removed: &dyn Fn(Inst) -> bool) -> UseGraph {
        let n = s.inst_capacity();
        let mut uses = vec![Vec::new(); n];
        let mut defs = vec![Vec::new(); n];
        let mut present = vec![false; n];
        for (_, i) in s.insts_in_order() {
            if removed(i) {
                continue;
            }
            present[i.index()] = true;
        }
        for (_, i) in s.insts_in_order() {
            if !present[i.index()] {
                continue;
            }
            for v in s.inst(i).operands() {
                let d = s.value_def(v);
                if present.get(d.index()).copied().unwrap_or(false) {
                    uses[d.index()].push(i.0);
                    defs[i.index()].push(d.0);
                }
            }
        }
        UseGraph {
            uses,
            defs,
            present,
        }
    }

    /// The post-dominator tree: dominators of the reversed graph, entered
    /// from every vertex nothing uses (stores, branches, dead values).
    pub(crate) fn post_dominators(&self) -> DomTree {
        let roots: Vec<u32> = (0..self.uses.len() as u32)
            .filter(|&i| self.present[i as usize] && self.uses[i as usize].is_empty())
            .collect();
        DomTree::compute(&self.defs, &roots)
    }

    /// The dominator tree, entered from every vertex with no operands left.
    pub(crate) fn dominators(&self) -> DomTree {
        let roots: Vec<u32> = (0..self.defs.len() as u32)
            .filter(|&i| self.present[i as usize] && self.defs[i as usize].is_empty())
            .collect();
        DomTree::compute(&self.uses, &roots)
    }
}

/// Blocks that every complete run of the shader executes: the blocks that
/// post-dominate the entry in the control-flow graph.
pub(crate) fn unconditional_blocks(s: &Shader<'_, GenericOp>) -> Vec<bool> {
    let n = s.block_capacity();
    let mut preds = vec![Vec::new(); n];
    let mut exits = Vec::new();
    for &b in s.layout() {
        let succs = s.successors(b);
        for &t in succs {
            preds[t.index()].push(b.0);
        }
        let returns = s
            .terminator(b)
            .is_some_and(|t| matches!(s.inst(t).op, Op::Return));
        if returns {
            exits.push(b.0);
        }
    }
    let tree = DomTree::compute(&preds, &exits);
    let mut out = vec![false; n];
    if let Some(entry) = s.entry() {
        for &b in s.layout() {
            out[b.index()] = tree.dominates(b.0, entry.0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_dominators_and_lca() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; a separate piece 4 -> 5.
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![], vec![5], vec![]];
        let t = DomTree::compute(&succs, &[0, 4]);
        assert_eq!(t.parent(3), Some(0));
        assert_eq!(t.parent(1), Some(0));
        assert_eq!(t.parent(0), None);
        assert_eq!(t.lca(1, 2), Some(0));
        assert_eq!(t.lca(3, 5), None);
        assert!(t.dominates(0, 3));
        assert!(!t.dominates(1, 3));
    }
}
