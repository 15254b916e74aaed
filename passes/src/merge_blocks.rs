//! Merge blocks: a block whose only predecessor ends in an unconditional
//! jump to it is appended to that predecessor.
//!
//! Frontends leave long chains of such blocks behind (an inlined call, a
//! structured selection whose arms were folded away), and each block
//! boundary costs the backends: a jump word, a scheduling barrier, and
//! on ir3 the nops that cover latencies across blocks. The pair is one
//! straight line of code, so merging changes nothing the program does.
//! The successor's phis have a single operand and become that operand.
//! Blocks keep their layout order (the merged block stays where the
//! predecessor was), since the backends read divergence and
//! reconvergence from the layout.
//!
//! # Cost
//!
//! Linear: each reachable block is looked at once, a chain is gathered into one
//! instruction list written once, and phi operands are renamed in one
//! sweep at the end.
//!
//! ```
//! use lathe_passes::merge_blocks::merge_blocks;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  jump b2\nb1:\n  %2:f32 = fadd %1, %1\n  store_output slot=0 comp=0 %2\n  ret\nb2:\n  %1:f32 = phi [%0, b0]\n  jump b1\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(merge_blocks(&mut shader));
//! assert_eq!(
//!     lathe_ir::print(&shader),
//!     "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = fadd %0, %0\n  store_output slot=0 comp=0 %1\n  ret\n"
//! );
//! lathe_ir::validate(&shader).unwrap();
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::{Block, Cfg, Inst, Op, Opcode, Shader, Value};

/// The `merge-blocks` pass.
pub struct MergeBlocks;

impl<O: Opcode> Pass<O> for MergeBlocks {
    fn name(&self) -> &'static str {
        "merge-blocks"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        Ok(merge_blocks(shader))
    }
}

/// Merges every block into its predecessor where that predecessor is its
/// only one and jumps to it unconditionally; returns whether anything
/// changed.
pub fn merge_blocks<O: Opcode>(shader: &mut Shader<'_, O>) -> bool {
    let Some(entry) = shader.entry() else {
        return false;
    };
    let cfg = Cfg::compute(shader);
    let n = shader.block_capacity();
    // The block a merged successor now belongs to, and the phi results
    // that become their single operand.
    let mut absorbed = vec![false; n];
    let mut renamed: Vec<Option<Value>> = vec![None; shader.value_capacity()];
    let mut lists: Vec<(Block, Vec<Inst>)> = Vec::new();
    let mut dead = Vec::new();
    // In reverse post-order a chain's head comes before the rest of it.
    for &a in cfg.rpo() {
        if absorbed[a.index()] {
            continue;
        }
        let mut list: Option<Vec<Inst>> = None;
        let mut tail = a;
        while let Some(s) = mergeable_successor(shader, &cfg, tail, entry) {
            if absorbed[s.index()] || s == a {
                break;
            }
            let list = list.get_or_insert_with(|| shader.block_insts(a).to_vec());
            // Drop the jump; the successor's phis have one operand each.
            list.pop();
            for &i in shader.block_insts(s) {
                let d = shader.inst(i);
                if d.op.is_phi() {
                    if let (Some(r), Some(&v)) = (d.result, d.args.first()) {
                        renamed[r.index()] = Some(v);
                    }
                } else {
                    list.push(i);
                }
            }
            absorbed[s.index()] = true;
            dead.push(s);
            tail = s;
        }
        if let Some(list) = list {
            // The chain's last block's successors now come from `a`.
            let succs = shader.successors(tail).to_vec();
            for succ in succs {
                let phis: Vec<Inst> = shader
                    .block_insts(succ)
                    .iter()
                    .copied()
                    .take_while(|&i| shader.inst(i).op.is_phi())
                    .collect();
                for phi in phis {
                    for t in shader.inst_mut(phi).targets.iter_mut() {
                        if *t == tail {
                            *t = a;
                        }
                    }
                }
            }
            lists.push((a, list));
        }
    }
    if lists.is_empty() {
        return false;
    }
    shader.remove_blocks(&dead);
    for (a, list) in &lists {
        shader.set_block_insts(*a, list);
    }
    shader.rewrite_operands(|v| {
        let mut v = v;
        while let Some(Some(to)) = renamed.get(v.index()) {
            v = *to;
        }
        v
    });
    true
}

/// The block `b` jumps to unconditionally, when `b` is its only
/// predecessor and it is not the entry.
fn mergeable_successor<O: Opcode>(
    shader: &Shader<'_, O>,
    cfg: &Cfg,
    b: Block,
    entry: Block,
) -> Option<Block> {
    let t = shader.inst(shader.terminator(b)?);
    match (t.op, &t.targets[..]) {
        (Op::Jump, &[s]) if s != b && s != entry && cfg.preds(s) == [b] => Some(s),
        _ => None,
    }
}
