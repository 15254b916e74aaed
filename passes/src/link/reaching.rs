//! The value an output holds when the producer returns, for outputs
//! stored in several blocks (backward motion needs it to compute a moved
//! expression once, at the end of the shader).
//!
//! The last store of a block defines the output at the block's end; where
//! paths join, a phi picks the definition of each predecessor (on-demand
//! SSA construction over the finished control-flow graph, after Braun et
//! al., "Simple and Efficient Construction of Static Single Assignment
//! Form"). An output some path to the return leaves unwritten has no value
//! there: [`defined_at_exit`] says so before anything is built.

use super::varyings::stored;
use lathe_ir::{Block, GenericOp, Inst, Op, Shader, Type, Value};
use std::collections::HashMap;

/// The one block that returns, if exactly one does.
pub(crate) fn exit_block(s: &Shader<'_, GenericOp>) -> Option<Block> {
    let mut exits = s.layout().iter().copied().filter(|&b| {
        s.terminator(b)
            .is_some_and(|t| matches!(s.inst(t).op, Op::Return))
    });
    let exit = exits.next()?;
    exits.next().is_none().then_some(exit)
}

/// Predecessors of every block (by index), from the branch targets.
fn predecessors(s: &Shader<'_, GenericOp>) -> Vec<Vec<Block>> {
    let mut preds = vec![Vec::new(); s.block_capacity()];
    for &b in s.layout() {
        for &t in s.successors(b) {
            if !preds[t.index()].contains(&b) {
                preds[t.index()].push(b);
            }
        }
    }
    preds
}

/// The last of `stores` in each block.
fn last_store_per_block(s: &Shader<'_, GenericOp>, stores: &[Inst]) -> HashMap<Block, Inst> {
    let mut last = HashMap::new();
    for &b in s.layout() {
        for &i in s.block_insts(b) {
            if stores.contains(&i) {
                last.insert(b, i);
            }
        }
    }
    last
}

/// Does every path from the entry to the end of `exit` pass one of
/// `stores` (so the output has a value when the shader returns)? The
/// greatest fixpoint of "written at the end of the block": a store in the
/// block, or written at the end of every predecessor (the entry has none).
pub(crate) fn defined_at_exit(s: &Shader<'_, GenericOp>, stores: &[Inst], exit: Block) -> bool {
    let preds = predecessors(s);
    let last = last_store_per_block(s, stores);
    let mut written = vec![true; s.block_capacity()];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in s.layout() {
            let w = last.contains_key(&b) || {
                let p = &preds[b.index()];
                !p.is_empty() && p.iter().all(|q| written[q.index()])
            };
            if written[b.index()] && !w {
                written[b.index()] = false;
                changed = true;
            }
        }
    }
    written[exit.index()]
}

/// The value of the output `stores` write, at the end of `exit`; adds
/// phis to `s` where paths with different values join. Call only when
/// [`defined_at_exit`] holds and all stores write values of type `ty`.
pub(crate) fn value_at_exit(
    s: &mut Shader<'_, GenericOp>,
    stores: &[Inst],
    exit: Block,
    ty: Type,
) -> Value {
    let mut b = Builder {
        preds: predecessors(s),
        last: last_store_per_block(s, stores),
        at_start: HashMap::new(),
        ty,
    };
    b.at_end(s, exit)
}

struct Builder {
    preds: Vec<Vec<Block>>,
    last: HashMap<Block, Inst>,
    /// Values at block starts already built (phis, or placeholders for
    /// loop headers whose operands are still being read).
    at_start: HashMap<Block, Value>,
    ty: Type,
}

impl Builder {
    fn at_end(&mut self, s: &mut Shader<'_, GenericOp>, b: Block) -> Value {
        match self.last.get(&b) {
            Some(&st) => stored(s, st),
            None => self.at_start(s, b),
        }
    }

    fn at_start(&mut self, s: &mut Shader<'_, GenericOp>, b: Block) -> Value {
        if let Some(&v) = self.at_start.get(&b) {
            return v;
        }
        let preds = self.preds[b.index()].clone();
        if let [p] = preds[..] {
            let v = self.at_end(s, p);
            self.at_start.insert(b, v);
            return v;
        }
        // A phi, created before its operands are read so that a loop
        // reaching back here finds it.
        let phi = s.create_inst(Op::Phi, &[], &[], None, Some(self.ty));
        let mut list = s.block_insts(b).to_vec();
        list.insert(0, phi);
        s.set_block_insts(b, &list);
        let v = s.inst(phi).result.expect("phi result");
        self.at_start.insert(b, v);
        let args: Vec<Value> = preds.iter().map(|&p| self.at_end(s, p)).collect();
        s.set_args(phi, &args);
        s.set_targets(phi, &preds);
        v
    }
}
