//! `sched`: pre-RA list scheduling of each block by critical path, watching
//! register pressure.
//!
//! Within a block (phis and meta inputs stay first, meta outputs and the
//! terminator last) an instruction
//! may issue once the instructions it depends on have: the producers of
//! its operands in the block (including the address operand), the
//! accesses [`lathe_ir::ordering_deps`] keeps in order (barrier classes),
//! and, for an instruction with side effects or one that may trap, the
//! last earlier instruction with side effects. Among those, the one
//! on the longest remaining latency path (its *height*, from the target's
//! latencies) goes first, preferring instructions whose operands are ready
//! at the current cycle; this hides latency, at the price of keeping more
//! values live.
//!
//! Pressure: the allocated register files' live units are tracked as the
//! schedule grows. The goal is the occupancy step just below the block's
//! pressure in program order (reaching it would run more threads); when
//! the live units come within a margin of that goal the scheduler switches
//! to picking the instruction that grows pressure least (one that ends
//! live ranges first). Only one address-register value is live at a time:
//! an instruction writing a new one waits until every use of the current
//! one is scheduled.
//!
//! Bound: a block's new order is kept only if its maximum pressure stays
//! within the occupancy level of the program order (it never loses
//! occupancy against program order). An order that loses it is redone
//! with the switch to pressure made ever earlier (margins of 1/8, 1/4,
//! 1/2 of the goal, then from the start), and last in program order with
//! only its stalls filled by later ready instructions that keep every file
//! within that level; only when every one loses does the block keep its
//! order.
//! Values live through the block without a use in it are not counted (the
//! same amount in both orders).
//!
//! [`schedule`] is the entry point.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lathe_ir::{Block, Inst, Op, Opcode, Shader, Value};

use crate::depth::is_meta;
use crate::manager::{Pass, PassFailure};
use crate::target::{FileKind, TargetFacts};

/// A candidate's rank (lower is better): blocked, growth or lateness,
/// height from the end, lateness, program position.
type Key = (bool, i64, u32, u32, u32);

/// How many of the highest ready candidates are compared per step.
const WINDOW: usize = 16;

/// What scheduling did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedStats {
    /// Blocks whose order changed.
    pub reordered: usize,
    /// Blocks kept in program order because the new order lost occupancy.
    pub kept: usize,
}

/// Schedules every block of `shader`.
pub fn schedule<O: Opcode>(shader: &mut Shader<'_, O>, target: &dyn TargetFacts<O>) -> SchedStats {
    let mut stats = SchedStats::default();
    let uses = UseBlocks::compute(shader, target);
    let mut scratch = Scratch {
        pos: vec![u32::MAX; shader.inst_capacity()],
        slot: vec![NONE; shader.value_capacity()],
        steps: (0..target.files().len())
            .map(|f| target.occupancy_steps(crate::target::FileId(f as u8)))
            .collect(),
    };
    let blocks: Vec<Block> = shader.layout().to_vec();
    for b in blocks {
        let old: Vec<Inst> = shader.block_insts(b).to_vec();
        let order = schedule_block(shader, target, b, &old, &uses, &mut scratch);
        match order {
            Some(new) if new != old => {
                shader.set_block_insts(b, &new);
                stats.reordered += 1;
            }
            Some(_) => {}
            None => stats.kept += 1,
        }
    }
    stats
}

/// For each value: does any use sit outside the block's schedulable body
/// (another block, a phi, a terminator)? Those values never die in a body.
/// Also the register units it takes and whether it is an address value,
/// asked of the target once per value rather than at every scheduling step.
struct UseBlocks {
    escapes: Vec<bool>,
    /// Uses inside bodies, per value.
    body_uses: Vec<u32>,
    /// (file, units) per value in an allocated file.
    units: Vec<Option<(usize, u32)>>,
    /// Values in an address-register file.
    address: Vec<bool>,
}

impl UseBlocks {
    fn compute<O: Opcode>(shader: &Shader<'_, O>, target: &dyn TargetFacts<O>) -> UseBlocks {
        let n = shader.value_capacity();
        let mut escapes = vec![false; n];
        let mut body_uses = vec![0u32; n];
        let mut units = vec![None; n];
        let mut address = vec![false; n];
        let files = target.files();
        for (b, i) in shader.insts_in_order() {
            let d = shader.inst(i);
            if let Some(r) = d.result {
                let ty = shader.value_type(r);
                let class = target.result_class(&d.op, ty);
                let file = &files[class.file.index()];
                if file.allocated {
                    units[r.index()] = Some((class.file.index(), class.units(ty)));
                }
                address[r.index()] = file.kind == FileKind::Address;
            }
            let in_body = !d.op.is_phi() && !d.op.is_terminator();
            for v in d.operands() {
                let def_block = shader.inst(shader.value_def(v)).block;
                if in_body && def_block == Some(b) {
                    body_uses[v.index()] += 1;
                } else if def_block != Some(b) || !in_body {
                    escapes[v.index()] = true;
                }
            }
        }
        UseBlocks {
            escapes,
            body_uses,
            units,
            address,
        }
    }
}

/// Per-shader tables reused by every block (reset after each use, so the
/// work stays proportional to the block).
struct Scratch {
    /// Position of each instruction in the block body being scheduled.
    pos: Vec<u32>,
    /// Slot of each value in the body being scheduled (see [`Body`]).
    slot: Vec<u32>,
    /// Occupancy steps per file (asked once, not per block).
    steps: Vec<Vec<u32>>,
}

/// Live units per allocated file along an order.
struct Pressure {
    live: Vec<u32>,
    max: Vec<u32>,
}

impl Pressure {
    fn new(files: usize) -> Self {
        Pressure {
            live: vec![0; files],
            max: vec![0; files],
        }
    }

    fn add(&mut self, u: Option<(usize, u32)>, sign: i64) {
        if let Some((f, n)) = u {
            self.live[f] = (i64::from(self.live[f]) + sign * i64::from(n)).max(0) as u32;
            self.max[f] = self.max[f].max(self.live[f]);
        }
    }
}

/// The body's instructions in a new order, or `None` to keep the block.
fn schedule_block<O: Opcode>(
    shader: &Shader<'_, O>,
    target: &dyn TargetFacts<O>,
    block: Block,
    old: &[Inst],
    uses: &UseBlocks,
    scratch: &mut Scratch,
) -> Option<Vec<Inst>> {
    let phis = old
        .iter()
        .take_while(|&&i| shader.inst(i).op.is_phi())
        .count();
    let term = usize::from(
        old.last()
            .is_some_and(|&i| shader.inst(i).op.is_terminator()),
    );
    let mut body = &old[phis..old.len() - term];
    // The hardware preloads inputs before the first instruction: they stay
    // at the head, or register allocation would see them defined late and
    // could hand their registers to values computed before them.
    let is_input = |i: &Inst| matches!(shader.inst(*i).op, Op::Input { .. });
    let inputs: Vec<Inst> = body.iter().copied().filter(is_input).collect();
    // Outputs are read where the program ends: they stay at the tail, in
    // order, or register allocation would see an output's value die early
    // and hand its register to a value computed after it.
    let is_output = |i: &Inst| matches!(shader.inst(*i).op, Op::Output { .. });
    let outputs: Vec<Inst> = body.iter().copied().filter(is_output).collect();
    let rest: Vec<Inst>;
    if !inputs.is_empty() || !outputs.is_empty() {
        rest = body
            .iter()
            .copied()
            .filter(|i| !is_input(i) && !is_output(i))
            .collect();
        body = &rest;
    }
    if body.len() < 2 && inputs.is_empty() && outputs.is_empty() {
        return Some(old.to_vec());
    }
    for (k, &i) in body.iter().enumerate() {
        scratch.pos[i.index()] = k as u32;
    }
    let order = if body.len() < 2 {
        Some(body.to_vec())
    } else {
        schedule_body(shader, target, block, body, uses, scratch)
    };
    for &i in body {
        scratch.pos[i.index()] = u32::MAX;
    }
    let mut out = Vec::with_capacity(old.len());
    out.extend_from_slice(&old[..phis]);
    out.extend_from_slice(&inputs);
    out.extend(order?);
    out.extend_from_slice(&outputs);
    out.extend_from_slice(&old[old.len() - term..]);
    Some(out)
}

/// No slot / not in the body.
const NONE: u32 = u32::MAX;

/// A block body in compact form, in body order: scheduling then touches
/// only these small dense arrays, never the shader's instruction records
/// (at 100k instructions those no longer fit in the caches, and the
/// scheduler visits instructions out of order).
///
/// Values the body reads or writes get *slots*: node `k`'s result is slot
/// `k`; values from outside the body (other blocks, the block's phis) get
/// slots from `n` on, in order of first use.
struct Body {
    /// Per node: a meta instruction (no cycle, no latency).
    meta: Vec<bool>,
    /// Per node: its result's slot, or [`NONE`].
    result: Vec<u32>,
    /// Per node: its distinct operands `ops[op_start[k]..op_start[k + 1]]`.
    op_start: Vec<u32>,
    /// (slot, occurrences in the node's operands).
    ops: Vec<(u32, u32)>,
    /// Per node: its dependence successors `succs[succ_start[k]..]`.
    succ_start: Vec<u32>,
    /// (successor node, latency).
    succs: Vec<(u32, u32)>,
    /// Per node: dependence predecessors (edges, with repeats).
    preds: Vec<u32>,
    /// Per slot: (file, units) in an allocated file.
    units: Vec<Option<(usize, u32)>>,
    /// Per slot: used outside the body (never dies in it).
    escapes: Vec<bool>,
    /// Per slot: uses in the body.
    body_uses: Vec<u32>,
    /// Per slot: an address-register value.
    address: Vec<bool>,
}

impl Body {
    fn nodes(&self) -> usize {
        self.meta.len()
    }

    fn ops(&self, k: usize) -> &[(u32, u32)] {
        &self.ops[self.op_start[k] as usize..self.op_start[k + 1] as usize]
    }

    fn succs(&self, k: usize) -> &[(u32, u32)] {
        &self.succs[self.succ_start[k] as usize..self.succ_start[k + 1] as usize]
    }

    /// Whether slot `s` is counted as it dies in the body: defined in it,
    /// or from outside but used nowhere else.
    fn dies_here(&self, s: u32) -> bool {
        (s as usize) < self.nodes() || !self.escapes[s as usize]
    }

    /// One sequential walk over the body: nodes, slots and dependences.
    fn build<O: Opcode>(
        shader: &Shader<'_, O>,
        target: &dyn TargetFacts<O>,
        block: Block,
        body: &[Inst],
        uses: &UseBlocks,
        scratch: &mut Scratch,
    ) -> Body {
        let n = body.len();
        let pos = &scratch.pos;
        let slot_of = &mut scratch.slot;
        let mut b = Body {
            meta: Vec::with_capacity(n),
            result: Vec::with_capacity(n),
            op_start: Vec::with_capacity(n + 1),
            ops: Vec::with_capacity(2 * n),
            succ_start: vec![0; n + 1],
            succs: Vec::new(),
            preds: vec![0; n],
            units: Vec::with_capacity(n),
            escapes: Vec::with_capacity(n),
            body_uses: Vec::with_capacity(n),
            address: Vec::with_capacity(n),
        };
        let add_slot = |b: &mut Body, v: Value| {
            b.units.push(uses.units[v.index()]);
            b.escapes.push(uses.escapes[v.index()]);
            b.body_uses.push(uses.body_uses[v.index()]);
            b.address.push(uses.address[v.index()]);
        };
        // Node results first, so that slot k is node k's result.
        for &i in body {
            let d = shader.inst(i);
            b.meta.push(is_meta(&d.op));
            match d.result {
                Some(r) => {
                    slot_of[r.index()] = b.result.len() as u32;
                    b.result.push(b.result.len() as u32);
                    add_slot(&mut b, r);
                }
                None => {
                    b.result.push(NONE);
                    b.units.push(None);
                    b.escapes.push(false);
                    b.body_uses.push(0);
                    b.address.push(false);
                }
            }
        }
        // Edges (from, to, latency) in body order of `to`.
        let mut edges: Vec<(u32, u32, u32)> = Vec::with_capacity(2 * n);
        let mut outside: Vec<Value> = Vec::new();
        let mut last_effect: Option<u32> = None;
        for (k, &i) in body.iter().enumerate() {
            let d = shader.inst(i);
            b.op_start.push(b.ops.len() as u32);
            let first = b.ops.len();
            for (op_index, v) in d.operands().enumerate() {
                let def = shader.value_def(v);
                let p = pos[def.index()];
                if p != NONE {
                    let producer = &shader.inst(def).op;
                    let lat = if b.meta[p as usize] || b.meta[k] {
                        0
                    } else {
                        target.latency(producer, &d.op, op_index)
                    };
                    edges.push((p, k as u32, lat));
                }
                if slot_of[v.index()] == NONE {
                    slot_of[v.index()] = b.units.len() as u32;
                    outside.push(v);
                    add_slot(&mut b, v);
                }
                let s = slot_of[v.index()];
                match b.ops[first..].iter_mut().find(|(t, _)| *t == s) {
                    Some((_, m)) => *m += 1,
                    None => b.ops.push((s, 1)),
                }
            }
            // Side effects keep their order; an instruction that may trap
            // stays after them (a discard must still come first).
            let fx = d.op.effects();
            if fx.side_effects || fx.may_trap {
                if let Some(e) = last_effect {
                    edges.push((e, k as u32, 0));
                }
            }
            if fx.side_effects {
                last_effect = Some(k as u32);
            }
        }
        b.op_start.push(b.ops.len() as u32);
        for (a, c) in lathe_ir::ordering_deps(shader, block) {
            let (pa, pc) = (pos[a.index()], pos[c.index()]);
            if pa != NONE && pc != NONE && pa < pc {
                edges.push((pa, pc, 0));
            }
        }
        // Successor lists by counting sort on the source.
        for &(a, c, _) in &edges {
            b.succ_start[a as usize + 1] += 1;
            b.preds[c as usize] += 1;
        }
        for k in 0..n {
            b.succ_start[k + 1] += b.succ_start[k];
        }
        let mut fill = b.succ_start.clone();
        b.succs = vec![(0, 0); edges.len()];
        for &(a, c, lat) in &edges {
            b.succs[fill[a as usize] as usize] = (c, lat);
            fill[a as usize] += 1;
        }
        // Leave the value → slot table all NONE again.
        for &i in body {
            if let Some(r) = shader.inst(i).result {
                slot_of[r.index()] = NONE;
            }
        }
        for v in outside {
            slot_of[v.index()] = NONE;
        }
        b
    }

    /// Maximum live units per file along `order` (node indices). Values
    /// from outside are live from the start until their last use.
    fn pressure(&self, files: usize, order: impl Iterator<Item = usize>) -> Vec<u32> {
        let mut p = self.at_start(files);
        let mut count = vec![0u32; self.units.len()];
        for &(s, m) in &self.ops {
            count[s as usize] += m;
        }
        for k in order {
            for &(s, m) in self.ops(k) {
                let c = &mut count[s as usize];
                *c -= m;
                if *c == 0 && !self.escapes[s as usize] {
                    p.add(self.units[s as usize], -1);
                }
            }
            let r = self.result[k];
            if r != NONE {
                let u = self.units[r as usize];
                p.add(u, 1);
                if self.body_uses[r as usize] == 0 && !self.escapes[r as usize] {
                    p.add(u, -1);
                }
            }
        }
        p.max
    }

    /// Live units before the first node: the values from outside the body
    /// it reads (live from the start until their last use).
    fn at_start(&self, files: usize) -> Pressure {
        let mut p = Pressure::new(files);
        for s in self.nodes()..self.units.len() {
            p.add(self.units[s], 1);
        }
        p
    }

    /// How many units scheduling node `k` now adds (its result) minus
    /// those it ends.
    fn growth(&self, k: usize, remaining: &[u32]) -> i64 {
        let mut g = 0i64;
        let r = self.result[k];
        if r != NONE {
            if let Some((_, n)) = self.units[r as usize] {
                g += i64::from(n);
            }
        }
        for &(s, m) in self.ops(k) {
            let s = s as usize;
            if !self.escapes[s] && remaining[s] == m {
                if let Some((_, n)) = self.units[s] {
                    g -= i64::from(n);
                }
            }
        }
        g
    }
}

/// The body in a new order, or `None` when that order loses occupancy.
fn schedule_body<O: Opcode>(
    shader: &Shader<'_, O>,
    target: &dyn TargetFacts<O>,
    block: Block,
    body: &[Inst],
    uses: &UseBlocks,
    scratch: &mut Scratch,
) -> Option<Vec<Inst>> {
    let n = body.len();
    let g = Body::build(shader, target, block, body, uses, scratch);
    // Heights, from the end (program order is a topological order).
    let mut height = vec![0u32; n];
    for k in (0..n).rev() {
        let below = g
            .succs(k)
            .iter()
            .map(|&(s, lat)| lat + height[s as usize])
            .max()
            .unwrap_or(0);
        height[k] = u32::from(!g.meta[k]) + below;
    }

    // Pressure in program order, and the goal.
    let files = target.files();
    let program_max = g.pressure(files.len(), 0..n);
    let mut goal = vec![u32::MAX; files.len()];
    let mut level_top = vec![u32::MAX; files.len()];
    for (f, file) in files.iter().enumerate() {
        if !file.allocated || file.kind != FileKind::General {
            continue;
        }
        let steps = &scratch.steps[f];
        let p = program_max[f];
        level_top[f] = steps.iter().copied().find(|&s| s >= p).unwrap_or(p);
        goal[f] = steps
            .iter()
            .copied()
            .rev()
            .find(|&s| s < p)
            .unwrap_or(level_top[f]);
    }

    // Latency first until pressure nears the goal; when that order loses
    // occupancy, switch to saving registers ever earlier, then keep
    // program order and only fill its stalls, before giving up.
    let modes = [8, 4, 2, 1]
        .map(|margin_div| Mode::Latency { margin_div })
        .into_iter()
        .chain([Mode::FillStalls]);
    for mode in modes {
        let out = list_schedule(&g, target, &height, &goal, &level_top, mode);
        let new_max = g.pressure(files.len(), out.iter().map(|&k| k as usize));
        let loses_occupancy = new_max
            .iter()
            .zip(&level_top)
            .any(|(&m, &top)| top != u32::MAX && m > top);
        if !loses_occupancy && out.len() == n {
            return Some(out.iter().map(|&k| body[k as usize]).collect());
        }
    }
    None
}

/// How a list-scheduling run ranks its ready instructions.
#[derive(Clone, Copy)]
enum Mode {
    /// Latency first (the longest path to the block's end), pressure first
    /// once the live units come within `goal / margin_div` of the goal.
    Latency { margin_div: u32 },
    /// Program order, except that while the next instruction waits for an
    /// operand a later ready one issues if every file stays within the
    /// program order's occupancy level: a long block whose program order
    /// keeps pressure low (a frontend's straight-line code) gets its
    /// stalls filled without losing threads.
    FillStalls,
}

/// One list-scheduling run ranking candidates by `mode`; `cap` is the
/// occupancy level per file that [`Mode::FillStalls`] keeps within.
fn list_schedule<O: Opcode>(
    g: &Body,
    target: &dyn TargetFacts<O>,
    height: &[u32],
    goal: &[u32],
    cap: &[u32],
    mode: Mode,
) -> Vec<u32> {
    // The ready heap's priority: the height, or in program order.
    let priority = |k: usize| match mode {
        Mode::Latency { .. } => height[k],
        Mode::FillStalls => u32::MAX - k as u32,
    };
    let n = height.len();
    let files = target.files();
    // Counted as in `Body::pressure`, which judges the order: the goal and
    // the cap include the values from outside the body.
    let mut pressure = g.at_start(files.len());
    let mut remaining = g.body_uses.clone();
    let mut preds = g.preds.clone();
    let mut earliest = vec![0u64; n];
    let mut ready: BinaryHeap<(u32, Reverse<u32>)> = BinaryHeap::new();
    for (k, &p) in preds.iter().enumerate() {
        if p == 0 {
            ready.push((priority(k), Reverse(k as u32)));
        }
    }
    let mut address_live: Option<u32> = None;
    let mut cycle = 0u64;
    let mut out: Vec<u32> = Vec::with_capacity(n);
    // The WINDOW highest ready candidates; it persists across steps and
    // trades places with the heap only when a newly ready candidate ranks
    // higher, so a step costs O(WINDOW) plus amortised O(log n).
    let mut window: Vec<(u32, Reverse<u32>)> = Vec::with_capacity(WINDOW);
    loop {
        while window.len() < WINDOW {
            match ready.pop() {
                Some(c) => window.push(c),
                None => break,
            }
        }
        while let Some(&top) = ready.peek() {
            let (m, &low) = window
                .iter()
                .enumerate()
                .min_by_key(|&(_, c)| *c)
                .expect("a full window");
            if top <= low {
                break;
            }
            ready.pop();
            window[m] = top;
            ready.push(low);
        }
        if window.is_empty() {
            break;
        }
        let tight = match mode {
            Mode::Latency { margin_div } => files.iter().enumerate().any(|(f, file)| {
                file.allocated && goal[f] != u32::MAX && {
                    let margin = (goal[f] / margin_div).max(2);
                    pressure.live[f] + margin >= goal[f]
                }
            }),
            Mode::FillStalls => false,
        };
        let next_in_order = window.iter().map(|&(_, Reverse(k))| k).min();
        let mut best: Option<(usize, Key)> = None;
        for (w, &(h, Reverse(k))) in window.iter().enumerate() {
            let r = g.result[k as usize];
            let blocked = r != NONE && g.address[r as usize] && address_live.is_some();
            let on_time = earliest[k as usize] <= cycle;
            // Lower keys are better: not blocked, then (pressure) least
            // growth or (latency) on time, then height, then program order;
            // filling stalls: on time and within the cap (or next in
            // program order), then program order.
            let key = if let Mode::FillStalls = mode {
                let growth = g.growth(k as usize, &remaining);
                let fits = growth <= 0
                    || pressure.live.iter().zip(cap).all(|(&live, &top)| {
                        top == u32::MAX || i64::from(live) + growth <= i64::from(top)
                    });
                let fills = on_time && (fits || Some(k) == next_in_order);
                (blocked, i64::from(!fills), 0, 0, k)
            } else if tight {
                let growth = g.growth(k as usize, &remaining);
                (blocked, growth, u32::MAX - h, u32::from(!on_time), k)
            } else {
                (blocked, i64::from(!on_time), u32::MAX - h, 0, k)
            };
            if best.is_none_or(|(_, bk)| key < bk) {
                best = Some((w, key));
            }
        }
        let (w, _) = best.expect("a non-empty window");
        let (_, Reverse(k)) = window.swap_remove(w);
        let k = k as usize;
        cycle = cycle.max(earliest[k]) + u64::from(!g.meta[k]);
        // Operands whose last use this is die; the result becomes live.
        for &(s, m) in g.ops(k) {
            if g.dies_here(s) {
                let left = &mut remaining[s as usize];
                *left = left.saturating_sub(m);
                if *left == 0 && !g.escapes[s as usize] {
                    pressure.add(g.units[s as usize], -1);
                }
                if *left == 0 && address_live == Some(s) {
                    address_live = None;
                }
            }
        }
        let r = g.result[k];
        if r != NONE {
            let u = g.units[r as usize];
            pressure.add(u, 1);
            if g.address[r as usize] && remaining[r as usize] > 0 {
                address_live = Some(r);
            }
            if remaining[r as usize] == 0 && !g.escapes[r as usize] {
                pressure.add(u, -1);
            }
        }
        out.push(k as u32);
        for &(s, lat) in g.succs(k) {
            let s = s as usize;
            earliest[s] = earliest[s].max(cycle + u64::from(lat));
            preds[s] -= 1;
            if preds[s] == 0 {
                ready.push((priority(s), Reverse(s as u32)));
            }
        }
    }
    debug_assert_eq!(out.len(), n, "every body instruction scheduled");
    out
}

/// The `sched` pass.
pub struct Sched<O> {
    target: std::rc::Rc<dyn TargetFacts<O>>,
    /// What the last run did.
    pub last: SchedStats,
}

impl<O: Opcode> Sched<O> {
    pub fn new(target: std::rc::Rc<dyn TargetFacts<O>>) -> Self {
        Sched {
            target,
            last: SchedStats::default(),
        }
    }
}

impl<O: Opcode> Pass<O> for Sched<O> {
    fn name(&self) -> &'static str {
        "sched"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        self.last = schedule(shader, &*self.target);
        Ok(self.last.reordered > 0)
    }
}
