//! Post-RA legalisation of Valhall machine IR ([`legalise`], the
//! `TargetFacts::legalise` hook of [`ValhallTarget`]): what an allocated
//! shader still needs before its instructions can be encoded one after
//! another as the hardware runs them.
//!
//! 1. `swap`s become three `LSHIFT_XOR.i32` (`lower-swap`; Valhall has no
//!    register exchange).
//! 2. The meta instructions must cost nothing: every value sits in a
//!    general register, a `collect`'s operands and a `split`'s result
//!    already in their lanes of the group, a phi's operands in its
//!    register, and each `input` in a register nothing before it in the
//!    entry block touches (the driver preloads it there). Emission then
//!    leaves them out.
//! 3. Block layout is the IR's; each `jump`/`branch` to a block other
//!    than the next one gets the spec's branch idiom (`jump`,
//!    `branch_nonzero`, `branch_zero`) before it, its offset patched once
//!    the layout's instruction count is known.
//! 4. Message instructions get dependency slots: the one their `slot`
//!    metadata fixes, else the general slots in turn (as Mesa's
//!    `va_assign_slots`).
//! 5. Flow fields: the waits the [`scoreboard`](super::scoreboard)
//!    dataflow finds go on the instruction that needs them (or a `NOP`
//!    before it when a meta instruction was the reader); the last
//!    instruction of a block that ends in a conditional branch or falls
//!    into a join gets `.reconverge` (Mesa `bi_reconverge_branches`), the
//!    last one before a `ret` `.end`. When the instruction already waits,
//!    the wait moves to a `NOP` before it.
//!
//! The result is still valid IR (the structural terminators stay, so the
//! control-flow graph is the same); [`emit`](super::emit) encodes it.

use lathe_ir::{Block, Inst, Op, Shader, Value, cfg::Cfg};
use lathe_passes::legalise::LegaliseError;
use lathe_passes::lower_swap::{LowerSwapError, lower_swaps};
use lathe_passes::target::TargetFacts;

use super::flow::{FLOW, FlowFacts, SLOT};
use super::generated::MachineOp;
use super::scoreboard;
use super::target::ValhallTarget;

/// The modifier key of a branch's offset.
const OFFSET: &str = "offset";

/// Legalises the allocated `shader` for `target`; returns whether anything
/// changed (`false`: it was legalised already, some instruction ends the
/// shader).
pub fn legalise(
    shader: &mut Shader<'_, MachineOp>,
    target: &ValhallTarget,
) -> Result<bool, LegaliseError> {
    let facts = target
        .flow_facts()
        .map_err(|e| LegaliseError::Unsupported(e.to_string()))?;
    if shader.insts_in_order().any(
        |(_, i)| matches!(shader.inst(i).op, Op::Opcode(o) if o.modifier(FLOW) == Some(facts.end)),
    ) {
        return Ok(false);
    }
    lathe_passes::self_copies::drop_self_copies(shader, target);
    move_split_lanes(shader, target);
    move_collect_operands(shader, target)?;
    lower_swaps(shader, target).map_err(|e| match e {
        LowerSwapError::Unsupported(m) => LegaliseError::Unsupported(m),
    })?;
    check_registers(shader, target)?;
    let branches = insert_branches(shader, target)?;
    assign_slots(shader, target, facts);
    let cfg = Cfg::compute(shader);
    let general = target.general_file().0;
    let plan = scoreboard::plan(
        shader,
        &cfg,
        &|i| scoreboard::access_of(shader, target, general, i),
        &|mask| facts.wait(mask).map_or(mask, |f| facts.waits_of(f)),
    );
    apply_flow(shader, target, facts, &cfg, &plan)?;
    patch_offsets(shader, &branches)?;
    Ok(true)
}

fn unsupported(message: String) -> LegaliseError {
    LegaliseError::Unsupported(message)
}

/// Step 2a: a split whose lane register allocation put elsewhere (a
/// message's register group read lane by lane) becomes a split in place
/// and a move out of it: `%r = split lane=k %v` is `%t = split lane=k %v`
/// with `%t` in the lane's own register, then `%r = MOV.i32 %t`.
fn move_split_lanes(shader: &mut Shader<'_, MachineOp>, target: &ValhallTarget) {
    for b in shader.layout().to_vec() {
        let mut list = Vec::with_capacity(shader.block_insts(b).len());
        let mut changed = false;
        for &i in &shader.block_insts(b).to_vec() {
            let d = shader.inst(i);
            let (Op::Split { lane }, Some(r), Some(&v)) = (d.op, d.result, d.args.first()) else {
                list.push(i);
                continue;
            };
            let (Some(base), Some(dst)) = (shader.value_reg(v), shader.value_reg(r)) else {
                list.push(i);
                continue;
            };
            let at = u32::from(base.unit) + u32::from(lane);
            if base.file != dst.file || u32::from(dst.unit) == at {
                list.push(i);
                continue;
            }
            let ty = shader.value_type(r);
            let split = shader.create_inst(Op::Split { lane }, &[v], &[], None, Some(ty));
            let t = shader
                .inst(split)
                .result
                .unwrap_or_else(|| unreachable!("a split has a result"));
            shader.set_value_reg(
                t,
                Some(lathe_ir::Reg {
                    file: base.file,
                    unit: at as u16,
                }),
            );
            let mov = shader.create_inst(Op::Opcode(target.copy(ty)), &[t], &[], None, None);
            shader.transfer_result(i, mov);
            list.extend([split, mov]);
            changed = true;
        }
        if changed {
            shader.set_block_insts(b, &list);
        }
    }
}

/// Step 2b: a collect whose operands register allocation left elsewhere
/// gets them moved into its group right before it, as one parallel copy
/// (`MOV.i32` where the destination is free of pending sources, a swap —
/// lowered with the others — through each cycle). The group's registers
/// hold nothing live across the collect but its own operands (the result
/// takes them from there on), so the moves clobber nothing.
fn move_collect_operands(
    shader: &mut Shader<'_, MachineOp>,
    target: &ValhallTarget,
) -> Result<(), LegaliseError> {
    for b in shader.layout().to_vec() {
        let mut list = Vec::with_capacity(shader.block_insts(b).len());
        let mut changed = false;
        for &i in &shader.block_insts(b).to_vec() {
            let d = shader.inst(i);
            let (Op::Collect, Some(r)) = (d.op, d.result) else {
                list.push(i);
                continue;
            };
            let Some(base) = shader.value_reg(r) else {
                list.push(i);
                continue;
            };
            let mut lanes: Vec<Value> = d.args.to_vec();
            // (lane, destination unit, value to move there)
            let mut pending: Vec<(usize, u16, Value)> = lanes
                .iter()
                .enumerate()
                .filter_map(|(k, &v)| {
                    let at = base.unit + k as u16;
                    let reg = shader.value_reg(v)?;
                    (reg.file != base.file || reg.unit != at).then_some((k, at, v))
                })
                .collect();
            if pending.is_empty() {
                list.push(i);
                continue;
            }
            let unit = |s: &Shader<'_, MachineOp>, v: Value| s.value_reg(v).map(|r| r.unit);
            while !pending.is_empty() {
                let free = pending.iter().position(|&(_, at, _)| {
                    !pending
                        .iter()
                        .any(|&(_, _, src)| unit(shader, src) == Some(at))
                });
                let place = |s: &mut Shader<'_, MachineOp>, v: Value, at: u16| {
                    s.set_value_reg(
                        v,
                        Some(lathe_ir::Reg {
                            file: base.file,
                            unit: at,
                        }),
                    );
                };
                match free {
                    Some(p) => {
                        let (k, at, src) = pending.remove(p);
                        let ty = shader.value_type(src);
                        let mov = shader.create_inst(
                            Op::Opcode(target.copy(ty)),
                            &[src],
                            &[],
                            None,
                            Some(ty),
                        );
                        let v = shader
                            .inst(mov)
                            .result
                            .unwrap_or_else(|| unreachable!("a move has a result"));
                        place(shader, v, at);
                        lanes[k] = v;
                        list.push(mov);
                    }
                    None => {
                        // Every destination still holds a pending
                        // source: exchange the first move's source with
                        // the value in its destination.
                        // A move of the cycle: its source sits where
                        // another lane goes (not in a lane already in
                        // place, which the exchange would disturb).
                        let c = pending
                            .iter()
                            .position(|&(_, _, s)| {
                                pending
                                    .iter()
                                    .any(|&(_, at, _)| unit(shader, s) == Some(at))
                            })
                            .unwrap_or(0);
                        let (k, at, src) = pending.remove(c);
                        let Some(&(_, _, other)) = pending
                            .iter()
                            .find(|&&(_, _, s)| unit(shader, s) == Some(at))
                        else {
                            return Err(unsupported(format!(
                                "collect into r{} whose operands form no cycle of moves",
                                base.unit
                            )));
                        };
                        let from = unit(shader, src).unwrap_or(at);
                        let swap = shader.create_inst(
                            Op::Swap,
                            &[src, other],
                            &[],
                            None,
                            Some(shader.value_type(src)),
                        );
                        let ty = shader.value_type(other);
                        let moved_other = shader.add_second_result(swap, ty);
                        let moved = shader
                            .inst(swap)
                            .result
                            .unwrap_or_else(|| unreachable!("a swap has a result"));
                        place(shader, moved, at);
                        place(shader, moved_other, from);
                        lanes[k] = moved;
                        for p in pending.iter_mut() {
                            if p.2 == other {
                                p.2 = moved_other;
                            } else if p.2 == src {
                                p.2 = moved;
                            }
                        }
                        list.push(swap);
                        // A value the exchange put where its lane is
                        // needs no move any more.
                        pending.retain(|&(k, at, v)| {
                            let done = unit(shader, v) == Some(at);
                            if done {
                                lanes[k] = v;
                            }
                            !done
                        });
                    }
                }
            }
            shader.set_args(i, &lanes);
            list.push(i);
            changed = true;
        }
        if changed {
            shader.set_block_insts(b, &list);
        }
    }
    Ok(())
}

/// Step 2: the meta instructions' registers agree, so they emit nothing.
fn check_registers(
    shader: &Shader<'_, MachineOp>,
    target: &ValhallTarget,
) -> Result<(), LegaliseError> {
    let general = target.general_file();
    let units = target.files()[general.index()].units;
    let entry = shader.entry();
    let reg = |v: lathe_ir::Value| {
        let r = shader.value_reg(v).ok_or_else(|| {
            LegaliseError::Invalid(format!("%{} has no register (run `ra` first)", v.index()))
        })?;
        let lanes = u32::from(shader.value_type(v).lanes.max(1));
        if r.file != general.0 || u32::from(r.unit) + lanes > units {
            return Err(unsupported(format!(
                "%{} is not in the general registers r0..r{}",
                v.index(),
                units - 1
            )));
        }
        Ok((u32::from(r.unit), lanes))
    };
    // Registers written or read so far in the entry block, for inputs.
    let mut touched = 0u64;
    let mut inputs_seen = 0u64;
    for &b in shader.layout() {
        for &i in shader.block_insts(b) {
            let d = shader.inst(i);
            for v in d.operands().chain(d.results()) {
                reg(v)?;
            }
            let name = d.op.name();
            match d.op {
                Op::Collect => {
                    let (base, _) = reg(d.result.unwrap_or(d.args[0]))?;
                    for (k, &a) in d.args.iter().enumerate() {
                        if reg(a)?.0 != base + k as u32 {
                            return Err(unsupported(format!(
                                "{name} into r{base} whose operand {k} is elsewhere needs moves"
                            )));
                        }
                    }
                }
                Op::Split { lane } => {
                    let (base, _) = reg(d.args[0])?;
                    let (r, _) = reg(d.result.unwrap_or(d.args[0]))?;
                    if r != base + u32::from(lane) {
                        return Err(unsupported(format!(
                            "{name} of lane {lane} of r{base} into r{r} needs a move"
                        )));
                    }
                }
                Op::Phi => {
                    let (r, _) = reg(d.result.unwrap_or(d.args[0]))?;
                    if let Some(&a) = d.args.iter().find(|&&a| reg(a).is_ok_and(|x| x.0 != r)) {
                        return Err(unsupported(format!(
                            "phi in r{r} of %{} in another register needs a move",
                            a.index()
                        )));
                    }
                }
                Op::Input { index } => {
                    let v = d.result.unwrap_or_else(|| unreachable!("validated input"));
                    let mask = scoreboard::reg_mask(shader, general.0, v);
                    if Some(b) != entry || (touched | inputs_seen) & mask != 0 {
                        return Err(unsupported(format!(
                            "input {index} in r{}: preloaded registers must be untouched from the \
                             start of the shader (keep inputs first in the entry block, in \
                             registers of their own)",
                            reg(v)?.0
                        )));
                    }
                    inputs_seen |= mask;
                }
                _ if Some(b) == entry => {
                    touched |= d
                        .operands()
                        .chain(d.results())
                        .fold(0, |m, v| m | scoreboard::reg_mask(shader, general.0, v));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The spec's idiom `name` (it exists: `isa/specs/mali/control.isa`).
fn idiom(target: &ValhallTarget, name: &str) -> Result<MachineOp, LegaliseError> {
    target
        .idiom(name)
        .ok_or_else(|| unsupported(format!("the Valhall spec has no `{name}` idiom")))
}

/// The block control really continues at when it enters `b`: past
/// blocks holding nothing but a `jump` (register allocation's split
/// edges without copies), which then need no instruction of their own.
fn forward(shader: &Shader<'_, MachineOp>, mut b: Block) -> Block {
    for _ in 0..shader.block_capacity() {
        match shader.block_insts(b) {
            [only] if matches!(shader.inst(*only).op, Op::Jump) => {
                b = shader.inst(*only).targets[0];
            }
            _ => break,
        }
    }
    b
}

/// A branch to insert: its opcode, operands and target.
type NewBranch = (MachineOp, Vec<lathe_ir::Value>, Block);

/// Step 3: a branch instruction for every edge that does not fall
/// through (to the block control really continues at, see [`forward`]);
/// returns each with its target block.
fn insert_branches(
    shader: &mut Shader<'_, MachineOp>,
    target: &ValhallTarget,
) -> Result<Vec<(Inst, Block)>, LegaliseError> {
    let layout = shader.layout().to_vec();
    let mut plans: Vec<(Block, Vec<NewBranch>)> = Vec::new();
    // Blocks control may enter other than by a branch instruction.
    let mut entered = vec![false; shader.block_capacity()];
    if let Some(&first) = layout.first() {
        entered[first.index()] = true;
    }
    for (k, &b) in layout.iter().enumerate() {
        let Some(term) = shader.terminator(b) else {
            continue;
        };
        let next = layout.get(k + 1).copied();
        let d = shader.inst(term);
        let targets = d.targets.to_vec();
        let mut new = Vec::new();
        match d.op {
            Op::Jump if next == Some(targets[0]) => {}
            Op::Jump => new.push((idiom(target, "jump")?, vec![], forward(shader, targets[0]))),
            Op::Branch => {
                let c = d.args[0];
                let (t, f) = (targets[0], targets[1]);
                if next == Some(f) {
                    new.push((
                        idiom(target, "branch_nonzero")?,
                        vec![c],
                        forward(shader, t),
                    ));
                } else if next == Some(t) {
                    new.push((idiom(target, "branch_zero")?, vec![c], forward(shader, f)));
                } else {
                    new.push((
                        idiom(target, "branch_nonzero")?,
                        vec![c],
                        forward(shader, t),
                    ));
                    new.push((idiom(target, "jump")?, vec![], forward(shader, f)));
                }
            }
            _ => {}
        }
        if let Some(n) = next {
            if targets.contains(&n) {
                entered[n.index()] = true;
            }
        }
        plans.push((b, new));
    }
    let mut branches = Vec::new();
    for (b, new) in plans {
        // A bare `jump` block that nothing falls into is only ever
        // passed through by the branches aimed past it: it emits nothing.
        if !entered[b.index()] && forward(shader, b) != b {
            continue;
        }
        if new.is_empty() {
            continue;
        }
        let mut insts = shader.block_insts(b).to_vec();
        let term = insts
            .pop()
            .unwrap_or_else(|| unreachable!("a block with a terminator"));
        for (op, args, to) in new {
            let i = shader.create_inst(Op::Opcode(op), &args, &[], None, None);
            insts.push(i);
            branches.push((i, to));
        }
        insts.push(term);
        shader.set_block_insts(b, &insts);
    }
    Ok(branches)
}

/// Step 4: dependency slots for the message instructions.
fn assign_slots(shader: &mut Shader<'_, MachineOp>, target: &ValhallTarget, facts: &FlowFacts) {
    let order: Vec<Inst> = shader.insts_in_order().map(|(_, i)| i).collect();
    let mut turn = 0usize;
    for i in order {
        let Op::Opcode(op) = shader.inst(i).op else {
            continue;
        };
        let leaf = target.leaf_facts(&op);
        if !leaf.message || op.modifier(SLOT).is_none() {
            continue;
        }
        let slot = match leaf.slot {
            Some(s) => s,
            None => {
                let s = facts.general[turn % facts.general.len()];
                turn += 1;
                i64::from(s)
            }
        };
        if let Some(with) = op.with_modifier(SLOT, slot as u64) {
            shader.inst_mut(i).op = Op::Opcode(with);
        }
    }
}

/// `op` with its flow field set to `flow`.
fn with_flow(op: MachineOp, flow: u64) -> Result<MachineOp, LegaliseError> {
    op.with_modifier(FLOW, flow)
        .ok_or_else(|| unsupported(format!("`{}` has no flow field", op.info().name)))
}

/// Step 5: waits, reconvergence and the end of the shader in the flow
/// fields.
fn apply_flow(
    shader: &mut Shader<'_, MachineOp>,
    target: &ValhallTarget,
    facts: &FlowFacts,
    cfg: &Cfg,
    plan: &scoreboard::Plan,
) -> Result<(), LegaliseError> {
    let nop = idiom(target, "flow_nop")?;
    let wait = |mask: u32| {
        facts
            .wait(mask)
            .ok_or_else(|| unsupported(format!("no flow value waits on slots {mask:#x}")))
    };
    let layout = shader.layout().to_vec();
    for b in layout {
        let insts = shader.block_insts(b).to_vec();
        let mut out: Vec<Inst> = Vec::with_capacity(insts.len() + 2);
        // Slots the next machine instruction must wait on for meta
        // readers and `wait_after`.
        let mut carry = 0u32;
        let mut last_machine: Option<usize> = None;
        for &i in &insts {
            let this = shader.inst(i).op;
            if this.is_terminator() {
                let terminal = match this {
                    Op::Return => Some(facts.end),
                    _ if reconverges(cfg, b) => Some(facts.reconverge),
                    _ => None,
                };
                if carry != 0 {
                    let w = shader.create_inst(
                        Op::Opcode(with_flow(nop, wait(carry)?)?),
                        &[],
                        &[],
                        None,
                        None,
                    );
                    last_machine = Some(out.len());
                    out.push(w);
                }
                match (terminal, last_machine) {
                    (Some(t), Some(k)) => {
                        let l = out[k];
                        let Op::Opcode(op) = shader.inst(l).op else {
                            unreachable!("machine instruction")
                        };
                        let flow = op.modifier(FLOW).unwrap_or(facts.none);
                        if flow != facts.none {
                            // The wait moves onto a NOP just before.
                            let w = shader.create_inst(
                                Op::Opcode(with_flow(nop, flow)?),
                                &[],
                                &[],
                                None,
                                None,
                            );
                            out.insert(k, w);
                        }
                        shader.inst_mut(l).op = Op::Opcode(with_flow(op, t)?);
                    }
                    (Some(t), None) if t == facts.end => {
                        let e = shader.create_inst(
                            Op::Opcode(with_flow(nop, t)?),
                            &[],
                            &[],
                            None,
                            None,
                        );
                        out.push(e);
                    }
                    // Mesa does not reconverge from an empty block either.
                    _ => {}
                }
                out.push(i);
                continue;
            }
            let need = carry | plan.before[i.index()];
            match this {
                Op::Opcode(op) => {
                    let with = with_flow(op, wait(need)?)?;
                    shader.inst_mut(i).op = Op::Opcode(with);
                    carry = plan.after[i.index()];
                    last_machine = Some(out.len());
                }
                _ => carry = need,
            }
            out.push(i);
        }
        shader.set_block_insts(b, &out);
    }
    Ok(())
}

/// Whether the threads of `b` may diverge or meet others at its end: it
/// ends in a two-way branch, or its one successor is a join (Mesa
/// `bi_reconverge_branches`).
fn reconverges(cfg: &Cfg, b: Block) -> bool {
    match cfg.succs(b) {
        [] => false,
        [s] => cfg.preds(*s).len() > 1,
        _ => true,
    }
}

/// Step 3, finished: each branch's offset, in instructions from the next
/// one, now that the layout's machine instructions are final.
fn patch_offsets(
    shader: &mut Shader<'_, MachineOp>,
    branches: &[(Inst, Block)],
) -> Result<(), LegaliseError> {
    let mut position = vec![0i64; shader.inst_capacity()];
    let mut start = vec![0i64; shader.block_capacity()];
    let mut n = 0i64;
    for &b in shader.layout() {
        start[b.index()] = n;
        for &i in shader.block_insts(b) {
            if matches!(shader.inst(i).op, Op::Opcode(_)) {
                position[i.index()] = n;
                n += 1;
            }
        }
    }
    for &(i, to) in branches {
        let Op::Opcode(op) = shader.inst(i).op else {
            continue;
        };
        let offset = start[to.index()] - (position[i.index()] + 1);
        let with = op.with_signed_modifier(OFFSET, offset).ok_or_else(|| {
            unsupported(format!(
                "a branch over {offset} instructions does not fit `{}`'s offset",
                op.info().name
            ))
        })?;
        shader.inst_mut(i).op = Op::Opcode(with);
    }
    Ok(())
}
