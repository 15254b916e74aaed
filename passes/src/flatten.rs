//! Flatten: simple if/else diamonds (and triangles, where one side is
//! empty) become straight-line code, and the join's phis become `sel`.
//!
//! A side is flattened only when it is a single block whose only
//! predecessor is the branch, which holds no phis, and whose instructions
//! are all speculatable (no side effects, no possible undefined behaviour,
//! no memory-like access): executing it when the branch would not have is
//! then unobservable. Other diamonds are left alone.
//!
//! Blocks are visited in reverse post-order and a block keeps absorbing the
//! diamonds below it, so a chain of diamonds costs one sweep; nested
//! diamonds need one sweep per nesting level (inner ones become single
//! blocks first).

use crate::manager::Pass;
use lathe_ir::{Block, Cfg, Op, Opcode, Shader};

/// The `flatten` pass.
pub struct Flatten;

impl<O: Opcode> Pass<O> for Flatten {
    fn name(&self) -> &'static str {
        "flatten"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> bool {
        let Some(select) = O::select() else {
            return false;
        };
        let mut changed = false;
        loop {
            let cfg = Cfg::compute(shader);
            let mut preds: Vec<Vec<Block>> = (0..shader.block_capacity())
                .map(|b| cfg.preds(Block(b as u32)).to_vec())
                .collect();
            let mut dead = vec![false; shader.block_capacity()];
            let mut removed = Vec::new();
            let mut round = false;
            for &a in cfg.rpo() {
                if dead[a.index()] {
                    continue;
                }
                while let Some(d) = flatten_at(shader, select, a, &mut preds) {
                    for b in d {
                        dead[b.index()] = true;
                        removed.push(b);
                    }
                    round = true;
                }
            }
            shader.remove_blocks(&removed);
            if !round {
                return changed;
            }
            changed = true;
        }
    }
}

/// One side of a branch: the single-block body to hoist (if any) and the
/// block control reaches after it.
fn side<O: Opcode>(
    shader: &Shader<'_, O>,
    preds: &[Vec<Block>],
    head: Block,
    x: Block,
) -> (Option<Block>, Block) {
    let direct = (None, x);
    if preds[x.index()] != [head] {
        return direct;
    }
    let insts = shader.block_insts(x);
    let Some((&last, body)) = insts.split_last() else {
        return direct;
    };
    let term = shader.inst(last);
    if term.op != Op::Jump {
        return direct;
    }
    let Some(&join) = term.targets.first() else {
        return direct;
    };
    if body.iter().all(|&i| {
        let op = shader.inst(i).op;
        !op.is_phi() && op.effects().speculatable()
    }) {
        (Some(x), join)
    } else {
        direct
    }
}

/// Flatten the diamond headed by `a`, if it is one. Returns the blocks it
/// emptied (to be removed from the layout).
fn flatten_at<O: Opcode>(
    shader: &mut Shader<'_, O>,
    select: O,
    a: Block,
    preds: &mut [Vec<Block>],
) -> Option<Vec<Block>> {
    let term = shader.terminator(a)?;
    let t = shader.inst(term);
    if t.op != Op::Branch {
        return None;
    }
    let (&cond, &[then_b, else_b]) = (t.args.first()?, &t.targets[..]) else {
        return None;
    };
    let (then_body, then_join) = side(shader, preds, a, then_b);
    let (else_body, else_join) = side(shader, preds, a, else_b);
    let join = then_join;
    if join != else_join || join == a || (then_body.is_none() && else_body.is_none()) {
        return None;
    }
    let from_then = then_body.unwrap_or(a);
    let from_else = else_body.unwrap_or(a);
    let jp = &preds[join.index()];
    if jp.len() != 2 || !jp.contains(&from_then) || !jp.contains(&from_else) {
        return None;
    }
    // The join's phis, with the value from each side.
    let join_insts: Vec<_> = shader.block_insts(join).to_vec();
    let phi_count = join_insts
        .iter()
        .take_while(|&&i| shader.inst(i).op.is_phi())
        .count();
    let mut selects = Vec::with_capacity(phi_count);
    for &phi in &join_insts[..phi_count] {
        let d = shader.inst(phi);
        let pick = |from: Block| {
            d.targets
                .iter()
                .position(|&b| b == from)
                .and_then(|k| d.args.get(k).copied())
        };
        selects.push((phi, pick(from_then)?, pick(from_else)?));
    }

    // Rebuild `a`: its code, both bodies, the selects, then the join's code.
    shader.pop_inst(a);
    for body in [then_body, else_body].into_iter().flatten() {
        let insts: Vec<_> = shader.block_insts(body).to_vec();
        shader.set_block_insts(body, &[]);
        for &i in &insts[..insts.len() - 1] {
            shader.push_inst(a, i);
        }
    }
    for (phi, vt, ve) in selects {
        let sel = shader.create_inst(Op::Opcode(select), &[cond, vt, ve], &[], None, None);
        shader.transfer_result(phi, sel);
        shader.push_inst(a, sel);
    }
    shader.set_block_insts(join, &[]);
    for &i in &join_insts[phi_count..] {
        shader.push_inst(a, i);
    }
    // The join's successors now come from `a`.
    let succs: Vec<Block> = shader.successors(a).to_vec();
    for s in succs {
        for p in preds[s.index()].iter_mut() {
            if *p == join {
                *p = a;
            }
        }
        let phis: Vec<_> = shader
            .block_insts(s)
            .iter()
            .copied()
            .take_while(|&i| shader.inst(i).op.is_phi())
            .collect();
        for phi in phis {
            for tb in shader.inst_mut(phi).targets.iter_mut() {
                if *tb == join {
                    *tb = a;
                }
            }
        }
    }
    let mut emptied = vec![join];
    emptied.extend(then_body);
    emptied.extend(else_body);
    Some(emptied)
}
