//! Flatten: simple if/else diamonds (and triangles, where one side is
//! empty) become straight-line code, and the join's phis become `sel`.
//!
//! A side is flattened only when it is a single block whose only
//! predecessor is the branch, which holds no phis, and whose instructions
//! are all speculatable (no side effects, no possible undefined behaviour,
//! no memory-like access): executing it when the branch would not have is
//! then unobservable. Other diamonds are left alone.
//!
//! # Cost
//!
//! Blocks are visited in post-order, so an inner diamond is flattened
//! before the diamond around it looks at its sides, and one sweep handles
//! any nesting depth; a block keeps absorbing the diamonds below it, so a
//! chain of diamonds costs one sweep as well. Merging never copies
//! instruction lists while the sweep runs: a head records the blocks it
//! absorbed (and the selects it made) as parts, and every surviving
//! block's list is written once at the end. The pass is therefore linear
//! in the shader's size whatever its shape (a second sweep only confirms
//! that nothing is left to do).

use crate::manager::{Pass, PassFailure};
use lathe_ir::{Block, Cfg, Inst, Op, Opcode, Shader};

/// The `flatten` pass.
pub struct Flatten;

impl<O: Opcode> Pass<O> for Flatten {
    fn name(&self) -> &'static str {
        "flatten"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        let Some(select) = O::select() else {
            return Ok(false);
        };
        let mut changed = false;
        while sweep(shader, select) {
            changed = true;
        }
        Ok(changed)
    }
}

/// A piece of a merged block after its own instructions.
#[derive(Clone, Copy)]
enum Part {
    /// Everything of an absorbed block (its own instructions and parts).
    Block(Block),
    /// `sels[start..end]`: the selects that replaced a join's phis.
    Selects(usize, usize),
}

/// The virtual state of the shader during one sweep: which blocks have
/// been absorbed where, without touching the instruction lists yet.
struct Sweep<'s, 'a, O> {
    shader: &'s mut Shader<'a, O>,
    select: O,
    preds: Vec<Vec<Block>>,
    /// The terminator ending each block's merged contents.
    term: Vec<Option<Inst>>,
    /// The block's own first instructions are phis.
    own_phis: Vec<bool>,
    /// Every non-phi, non-terminator instruction of the merged contents is
    /// speculatable.
    speculatable: Vec<bool>,
    parts: Vec<Vec<Part>>,
    sels: Vec<Inst>,
    /// Instructions dropped by merging (branches, inner jumps, phis).
    dropped: Vec<bool>,
    absorbed: Vec<bool>,
}

/// One post-order sweep; returns whether anything was flattened.
fn sweep<O: Opcode>(shader: &mut Shader<'_, O>, select: O) -> bool {
    let cfg = Cfg::compute(shader);
    let n = shader.block_capacity();
    let mut term = vec![None; n];
    let mut own_phis = vec![false; n];
    let mut speculatable = vec![false; n];
    for &b in cfg.rpo() {
        let insts = shader.block_insts(b);
        term[b.index()] = shader.terminator(b);
        own_phis[b.index()] = insts.first().is_some_and(|&i| shader.inst(i).op.is_phi());
        let body = &insts[..insts.len().saturating_sub(1)];
        speculatable[b.index()] = body.iter().all(|&i| {
            let op = shader.inst(i).op;
            op.is_phi() || op.effects().speculatable()
        });
    }
    let mut s = Sweep {
        preds: (0..n)
            .map(|b| cfg.preds(Block(b as u32)).to_vec())
            .collect(),
        term,
        own_phis,
        speculatable,
        parts: vec![Vec::new(); n],
        sels: Vec::new(),
        dropped: vec![false; shader.inst_capacity()],
        absorbed: vec![false; n],
        shader,
        select,
    };
    let mut any = false;
    for &a in cfg.rpo().iter().rev() {
        if s.absorbed[a.index()] {
            continue;
        }
        while s.flatten_at(a) {
            any = true;
        }
    }
    if any {
        s.materialise(cfg.rpo());
    }
    any
}

impl<O: Opcode> Sweep<'_, '_, O> {
    /// One side of a branch from `head`: the single-block body to hoist
    /// (if any) and the block control reaches after it.
    fn side(&self, head: Block, x: Block) -> (Option<Block>, Block) {
        let direct = (None, x);
        if self.preds[x.index()] != [head]
            || self.own_phis[x.index()]
            || !self.speculatable[x.index()]
        {
            return direct;
        }
        let Some(t) = self.term[x.index()] else {
            return direct;
        };
        let t = self.shader.inst(t);
        match (t.op, &t.targets[..]) {
            (Op::Jump, &[join]) => (Some(x), join),
            _ => direct,
        }
    }

    /// Flatten the diamond headed by `a`, if it is one.
    fn flatten_at(&mut self, a: Block) -> bool {
        let Some(branch) = self.term[a.index()] else {
            return false;
        };
        let t = self.shader.inst(branch);
        let (Op::Branch, Some(&cond), &[then_b, else_b]) = (t.op, t.args.first(), &t.targets[..])
        else {
            return false;
        };
        let (then_body, join) = self.side(a, then_b);
        let (else_body, else_join) = self.side(a, else_b);
        if join != else_join || join == a || (then_body.is_none() && else_body.is_none()) {
            return false;
        }
        let from_then = then_body.unwrap_or(a);
        let from_else = else_body.unwrap_or(a);
        let jp = &self.preds[join.index()];
        if jp.len() != 2 || !jp.contains(&from_then) || !jp.contains(&from_else) {
            return false;
        }
        // The join has not absorbed anything into its front, so its phis
        // are the leading instructions of its own list.
        let mut picks = Vec::new();
        for &phi in self.shader.block_insts(join) {
            let d = self.shader.inst(phi);
            if !d.op.is_phi() {
                break;
            }
            let pick = |from: Block| {
                d.targets
                    .iter()
                    .position(|&b| b == from)
                    .and_then(|k| d.args.get(k).copied())
            };
            let (Some(vt), Some(ve)) = (pick(from_then), pick(from_else)) else {
                return false;
            };
            picks.push((phi, vt, ve));
        }

        // Commit: drop the branch and the sides' jumps, turn phis into selects.
        self.dropped[branch.index()] = true;
        for body in [then_body, else_body].into_iter().flatten() {
            if let Some(j) = self.term[body.index()] {
                self.dropped[j.index()] = true;
            }
            self.parts[a.index()].push(Part::Block(body));
            self.absorbed[body.index()] = true;
        }
        let start = self.sels.len();
        for (phi, vt, ve) in picks {
            self.dropped[phi.index()] = true;
            let sel =
                self.shader
                    .create_inst(Op::Opcode(self.select), &[cond, vt, ve], &[], None, None);
            self.shader.transfer_result(phi, sel);
            self.sels.push(sel);
        }
        self.parts[a.index()].push(Part::Selects(start, self.sels.len()));
        self.parts[a.index()].push(Part::Block(join));
        self.absorbed[join.index()] = true;
        let merged_speculatable = [then_body, else_body, Some(join)]
            .into_iter()
            .flatten()
            .all(|b| self.speculatable[b.index()]);
        self.speculatable[a.index()] &= merged_speculatable;
        self.term[a.index()] = self.term[join.index()];

        // The join's successors are now reached from `a`.
        let succs: Vec<Block> = self.term[a.index()]
            .map(|t| self.shader.inst(t).targets.to_vec())
            .unwrap_or_default();
        for s in succs {
            for p in self.preds[s.index()].iter_mut() {
                if *p == join {
                    *p = a;
                }
            }
            let phis: Vec<Inst> = self
                .shader
                .block_insts(s)
                .iter()
                .copied()
                .take_while(|&i| self.shader.inst(i).op.is_phi())
                .collect();
            for phi in phis {
                for tb in self.shader.inst_mut(phi).targets.iter_mut() {
                    if *tb == join {
                        *tb = a;
                    }
                }
            }
        }
        true
    }

    /// Write the merged instruction lists and drop the absorbed blocks.
    fn materialise(self, rpo: &[Block]) {
        let Sweep {
            shader,
            parts,
            sels,
            dropped,
            absorbed,
            ..
        } = self;
        let kept = |i: &Inst| !dropped.get(i.index()).copied().unwrap_or(false);
        let mut lists = Vec::new();
        for &a in rpo {
            if absorbed[a.index()] || parts[a.index()].is_empty() {
                continue;
            }
            // Depth-first over the parts tree: (block, next part), with
            // `usize::MAX` meaning its own instructions are still to come.
            let mut list: Vec<Inst> = Vec::new();
            let mut stack = vec![(a, usize::MAX)];
            while let Some(top) = stack.last_mut() {
                let (b, next) = *top;
                if next == usize::MAX {
                    list.extend(shader.block_insts(b).iter().filter(|i| kept(i)));
                    top.1 = 0;
                    continue;
                }
                match parts[b.index()].get(next).copied() {
                    Some(Part::Block(x)) => {
                        top.1 += 1;
                        stack.push((x, usize::MAX));
                    }
                    Some(Part::Selects(s, e)) => {
                        top.1 += 1;
                        list.extend_from_slice(&sels[s..e]);
                    }
                    None => {
                        stack.pop();
                    }
                }
            }
            lists.push((a, list));
        }
        let dead: Vec<Block> = rpo
            .iter()
            .copied()
            .filter(|b| absorbed[b.index()])
            .collect();
        shader.remove_blocks(&dead);
        for (a, list) in lists {
            shader.set_block_insts(a, &list);
        }
    }
}
