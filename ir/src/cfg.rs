//! Control-flow graph and dominance analyses, computed on demand.

use crate::opcode::Opcode;
use crate::shader::{Block, Shader};

/// Predecessors, successors and a reverse post-order of the reachable blocks.
pub struct Cfg {
    preds: Vec<Vec<Block>>,
    succs: Vec<Vec<Block>>,
    /// Reachable blocks in reverse post-order from the entry.
    rpo: Vec<Block>,
    /// Position in `rpo`, `u32::MAX` when unreachable.
    rpo_index: Vec<u32>,
}

impl Cfg {
    pub fn compute<O: Opcode>(shader: &Shader<'_, O>) -> Cfg {
        let n = shader.block_capacity();
        let mut preds = vec![Vec::new(); n];
        let mut succs = vec![Vec::new(); n];
        for &b in shader.layout() {
            for &s in shader.successors(b) {
                if s.index() < n {
                    succs[b.index()].push(s);
                    preds[s.index()].push(b);
                }
            }
        }
        // Iterative DFS for the post-order.
        let mut rpo = Vec::new();
        let mut visited = vec![false; n];
        if let Some(entry) = shader.entry() {
            let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
            visited[entry.index()] = true;
            while let Some(&mut (b, ref mut next)) = stack.last_mut() {
                if let Some(&s) = succs[b.index()].get(*next) {
                    *next += 1;
                    if !visited[s.index()] {
                        visited[s.index()] = true;
                        stack.push((s, 0));
                    }
                } else {
                    rpo.push(b);
                    stack.pop();
                }
            }
        }
        rpo.reverse();
        let mut rpo_index = vec![u32::MAX; n];
        for (k, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = k as u32;
        }
        Cfg {
            preds,
            succs,
            rpo,
            rpo_index,
        }
    }

    /// Update the graph after critical edges were split, instead of
    /// computing it again: each `(from, k, new)` says that successor `k` of
    /// `from` is now the new block `new`, which jumps to the old successor
    /// (taking `from`'s first place among its predecessors). Each new
    /// block comes right after `from` in the reverse post-order, which
    /// keeps it one.
    pub fn split_edges(&mut self, edges: &[(Block, usize, Block)]) {
        if edges.is_empty() {
            return;
        }
        let n = edges
            .iter()
            .map(|e| e.2.index() + 1)
            .max()
            .unwrap_or(0)
            .max(self.preds.len());
        self.preds.resize(n, Vec::new());
        self.succs.resize(n, Vec::new());
        for &(from, k, new) in edges {
            let to = std::mem::replace(&mut self.succs[from.index()][k], new);
            if let Some(p) = self.preds[to.index()].iter_mut().find(|p| **p == from) {
                *p = new;
            }
            self.preds[new.index()] = vec![from];
            self.succs[new.index()] = vec![to];
        }
        let mut order: Vec<(u32, Block)> = edges
            .iter()
            .map(|&(from, _, new)| (self.rpo_index[from.index()], new))
            .collect();
        order.sort_by_key(|e| e.0);
        let mut rpo = Vec::with_capacity(self.rpo.len() + edges.len());
        let mut next = order.iter().peekable();
        for (k, &b) in self.rpo.iter().enumerate() {
            rpo.push(b);
            while let Some(&(_, new)) = next.next_if(|e| e.0 == k as u32) {
                rpo.push(new);
            }
        }
        self.rpo_index = vec![u32::MAX; n];
        for (k, b) in rpo.iter().enumerate() {
            self.rpo_index[b.index()] = k as u32;
        }
        self.rpo = rpo;
    }

    /// Predecessors in the order of the predecessors' layout position and
    /// terminator target order.
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b.index()]
    }

    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b.index()]
    }

    /// Reachable blocks in reverse post-order.
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index
            .get(b.index())
            .is_some_and(|&i| i != u32::MAX)
    }

    pub fn rpo_index(&self, b: Block) -> Option<usize> {
        self.rpo_index
            .get(b.index())
            .and_then(|&i| (i != u32::MAX).then_some(i as usize))
    }
}

/// The dominator tree of the reachable blocks (Cooper, Harvey and Kennedy's
/// iterative algorithm), with constant-time `dominates` queries.
pub struct DomTree {
    idom: Vec<Option<Block>>,
    /// Pre- and post-order numbers in the dominator tree.
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl DomTree {
    pub fn compute(cfg: &Cfg) -> DomTree {
        let n = cfg.preds.len();
        let mut idom: Vec<Option<Block>> = vec![None; n];
        let rpo = cfg.rpo();
        if let Some(&entry) = rpo.first() {
            idom[entry.index()] = Some(entry);
            let mut changed = true;
            while changed {
                changed = false;
                for &b in &rpo[1..] {
                    let mut new_idom: Option<Block> = None;
                    for &p in cfg.preds(b) {
                        if idom[p.index()].is_none() {
                            continue;
                        }
                        new_idom = Some(match new_idom {
                            None => p,
                            Some(cur) => intersect(cfg, &idom, p, cur),
                        });
                    }
                    if new_idom.is_some() && idom[b.index()] != new_idom {
                        idom[b.index()] = new_idom;
                        changed = true;
                    }
                }
            }
            idom[entry.index()] = None;
        }
        // Number the tree for O(1) ancestor checks.
        let mut children = vec![Vec::new(); n];
        for &b in rpo {
            if let Some(d) = idom[b.index()] {
                children[d.index()].push(b);
            }
        }
        let mut pre = vec![u32::MAX; n];
        let mut post = vec![u32::MAX; n];
        let mut counter = 0u32;
        if let Some(&entry) = rpo.first() {
            let mut stack = vec![(entry, 0usize)];
            pre[entry.index()] = counter;
            counter += 1;
            while let Some(&mut (b, ref mut next)) = stack.last_mut() {
                if let Some(&c) = children[b.index()].get(*next) {
                    *next += 1;
                    pre[c.index()] = counter;
                    counter += 1;
                    stack.push((c, 0));
                } else {
                    post[b.index()] = counter;
                    counter += 1;
                    stack.pop();
                }
            }
        }
        DomTree { idom, pre, post }
    }

    /// The immediate dominator; `None` for the entry and unreachable blocks.
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom.get(b.index()).copied().flatten()
    }

    /// Does `a` dominate `b` (reflexively)? False if either is unreachable.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(&pa), Some(&pb)) = (self.pre.get(a.index()), self.pre.get(b.index())) else {
            return false;
        };
        if pa == u32::MAX || pb == u32::MAX {
            return false;
        }
        pa <= pb && self.post[b.index()] <= self.post[a.index()]
    }
}

fn intersect(cfg: &Cfg, idom: &[Option<Block>], mut a: Block, mut b: Block) -> Block {
    let order = |x: Block| cfg.rpo_index[x.index()];
    while a != b {
        while order(a) > order(b) {
            a = idom[a.index()].unwrap_or(a);
        }
        while order(b) > order(a) {
            b = idom[b.index()].unwrap_or(b);
        }
    }
    a
}

/// Loop structure: headers are targets of back edges (edges whose target
/// dominates their source).
pub struct Loops {
    headers: Vec<Block>,
    is_header: Vec<bool>,
    /// Edges that go backwards in the DFS order but whose target does not
    /// dominate the source: present only in irreducible control flow.
    irreducible_edges: Vec<(Block, Block)>,
}

impl Loops {
    pub fn compute(cfg: &Cfg, dom: &DomTree) -> Loops {
        let mut headers = Vec::new();
        let mut is_header = vec![false; cfg.preds.len()];
        let mut irreducible_edges = Vec::new();
        for &b in cfg.rpo() {
            for &s in cfg.succs(b) {
                // rpo order: an edge to an earlier-or-same block is retreating.
                if cfg.rpo_index(s) <= cfg.rpo_index(b) {
                    if dom.dominates(s, b) {
                        if !is_header[s.index()] {
                            is_header[s.index()] = true;
                            headers.push(s);
                        }
                    } else {
                        irreducible_edges.push((b, s));
                    }
                }
            }
        }
        Loops {
            headers,
            is_header,
            irreducible_edges,
        }
    }

    pub fn headers(&self) -> &[Block] {
        &self.headers
    }

    pub fn is_header(&self, b: Block) -> bool {
        self.is_header.get(b.index()).copied().unwrap_or(false)
    }

    pub fn irreducible_edges(&self) -> &[(Block, Block)] {
        &self.irreducible_edges
    }
}
