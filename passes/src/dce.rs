//! Dead-code elimination: unreachable blocks, then every instruction whose
//! result no live instruction needs and that has no side effects.
//!
//! Removing an unused instruction that might have undefined behaviour (an
//! out-of-range conversion, say) is allowed: a program that executes UB may
//! behave in any way, including as if the instruction were never there.

use crate::manager::{Pass, PassFailure};
use lathe_ir::{Block, Cfg, Opcode, Shader};

/// The `dce` pass.
pub struct Dce;

impl<O: Opcode> Pass<O> for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        Ok(eliminate(shader))
    }
}

/// Removes unreachable blocks, then dead instructions; returns whether
/// anything changed.
pub fn eliminate<O: Opcode>(shader: &mut Shader<'_, O>) -> bool {
    let blocks_changed = remove_unreachable_blocks(shader);
    remove_dead_insts(shader) || blocks_changed
}

/// Drop blocks the entry cannot reach, and the phi entries for edges from
/// them (one look at each phi entry, however many predecessors a block has).
fn remove_unreachable_blocks<O: Opcode>(shader: &mut Shader<'_, O>) -> bool {
    let cfg = Cfg::compute(shader);
    let dead: Vec<_> = shader
        .layout()
        .iter()
        .copied()
        .filter(|&b| !cfg.is_reachable(b))
        .collect();
    if dead.is_empty() {
        return false;
    }
    let mut is_dead = vec![false; shader.block_capacity()];
    for &b in &dead {
        is_dead[b.index()] = true;
    }
    // Only the surviving successors of dead blocks can hold such entries.
    let mut touched: Vec<Block> = Vec::new();
    let mut is_touched = vec![false; shader.block_capacity()];
    for &b in &dead {
        for &s in cfg.succs(b) {
            if !is_dead[s.index()] && !std::mem::replace(&mut is_touched[s.index()], true) {
                touched.push(s);
            }
        }
    }
    shader.remove_blocks(&dead);
    for b in touched {
        let phis: Vec<_> = shader
            .block_insts(b)
            .iter()
            .copied()
            .take_while(|&i| shader.inst(i).op.is_phi())
            .collect();
        for phi in phis {
            let data = shader.inst(phi);
            if !data.targets.iter().any(|t| is_dead[t.index()]) {
                continue;
            }
            let (vals, blocks): (Vec<_>, Vec<_>) = data
                .args
                .iter()
                .zip(data.targets.iter())
                .filter(|(_, t)| !is_dead[t.index()])
                .map(|(&v, &t)| (v, t))
                .unzip();
            shader.set_args(phi, &vals);
            shader.set_targets(phi, &blocks);
        }
    }
    true
}

/// Mark from the roots (instructions with side effects) through operands,
/// then unlink everything unmarked.
fn remove_dead_insts<O: Opcode>(shader: &mut Shader<'_, O>) -> bool {
    let mut live = vec![false; shader.inst_capacity()];
    let mut work = Vec::new();
    for (_, i) in shader.insts_in_order() {
        if shader.inst(i).op.effects().side_effects {
            live[i.index()] = true;
            work.push(i);
        }
    }
    while let Some(i) = work.pop() {
        for v in shader.inst(i).operands() {
            let def = shader.value_def(v);
            if let Some(l) = live.get_mut(def.index()) {
                if !*l {
                    *l = true;
                    work.push(def);
                }
            }
        }
    }
    let mut changed = false;
    let layout: Vec<_> = shader.layout().to_vec();
    for b in layout {
        let before = shader.block_insts(b).len();
        shader.retain_insts(b, |i, d| d.op.effects().side_effects || live[i.index()]);
        changed |= shader.block_insts(b).len() != before;
    }
    changed
}
