//! `sched`: pre-RA list scheduling of each block by critical path, watching
//! register pressure.
//!
//! Within a block (phis stay first, the terminator last) an instruction
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
//! occupancy against program order); otherwise the block keeps its order.
//! Values live through the block without a use in it are not counted (the
//! same amount in both orders).
//!
//! [`schedule`] is the entry point.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lathe_ir::{Block, Inst, Opcode, Shader, Value};

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
        count: vec![0; shader.value_capacity()],
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
    /// Uses left per value.
    count: Vec<u32>,
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
    let body = &old[phis..old.len() - term];
    if body.len() < 2 {
        return Some(old.to_vec());
    }
    for (k, &i) in body.iter().enumerate() {
        scratch.pos[i.index()] = k as u32;
    }
    let order = schedule_body(shader, target, block, body, uses, scratch);
    for &i in body {
        scratch.pos[i.index()] = u32::MAX;
    }
    let mut out = Vec::with_capacity(old.len());
    out.extend_from_slice(&old[..phis]);
    out.extend(order?);
    out.extend_from_slice(&old[old.len() - term..]);
    Some(out)
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
    let pos = &scratch.pos;
    let n = body.len();
    // Edges: (successor, latency), and predecessor counts.
    let mut succs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let mut preds = vec![0u32; n];
    let mut add_edge = |a: usize, b: usize, lat: u32, succs: &mut Vec<Vec<(u32, u32)>>| {
        succs[a].push((b as u32, lat));
        preds[b] += 1;
    };
    let mut last_effect: Option<usize> = None;
    for (k, &i) in body.iter().enumerate() {
        let d = shader.inst(i);
        for (op_index, v) in d.operands().enumerate() {
            let def = shader.value_def(v);
            let p = pos[def.index()];
            if p != u32::MAX {
                let producer = &shader.inst(def).op;
                let lat = if is_meta(producer) || is_meta(&d.op) {
                    0
                } else {
                    target.latency(producer, &d.op, op_index)
                };
                add_edge(p as usize, k, lat, &mut succs);
            }
        }
        // Side effects keep their order; an instruction that may trap
        // stays after them (a discard must still come first).
        let fx = d.op.effects();
        if fx.side_effects || fx.may_trap {
            if let Some(e) = last_effect {
                add_edge(e, k, 0, &mut succs);
            }
        }
        if fx.side_effects {
            last_effect = Some(k);
        }
    }
    for (a, b) in lathe_ir::ordering_deps(shader, block) {
        let (pa, pb) = (pos[a.index()], pos[b.index()]);
        if pa != u32::MAX && pb != u32::MAX && pa < pb {
            add_edge(pa as usize, pb as usize, 0, &mut succs);
        }
    }
    // Heights, from the end (program order is a topological order).
    let mut height = vec![0u32; n];
    for k in (0..n).rev() {
        let own = u32::from(!is_meta(&shader.inst(body[k]).op));
        let below = succs[k]
            .iter()
            .map(|&(s, lat)| lat + height[s as usize])
            .max()
            .unwrap_or(0);
        height[k] = own + below;
    }

    // Pressure in program order, and the goal.
    let program_max = simulate(shader, target, body, uses, pos, &mut scratch.count);
    let files = target.files();
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

    // List scheduling.
    let mut pressure = Pressure::new(files.len());
    let mut remaining = std::mem::take(&mut scratch.count);
    for &i in body {
        for v in shader.inst(i).operands() {
            remaining[v.index()] = uses.body_uses[v.index()];
        }
    }
    let writes_address: Vec<bool> = body
        .iter()
        .map(|&i| {
            shader
                .inst(i)
                .result
                .is_some_and(|r| uses.address[r.index()])
        })
        .collect();
    let mut earliest = vec![0u64; n];
    let mut ready: BinaryHeap<(u32, Reverse<u32>)> = BinaryHeap::new();
    for (k, &p) in preds.iter().enumerate() {
        if p == 0 {
            ready.push((height[k], Reverse(k as u32)));
        }
    }
    let mut address_live: Option<Value> = None;
    let mut cycle = 0u64;
    let mut out: Vec<Inst> = Vec::with_capacity(n);
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
        let tight = files.iter().enumerate().any(|(f, file)| {
            file.allocated && goal[f] != u32::MAX && {
                let margin = (goal[f] / 8).max(2);
                pressure.live[f] + margin >= goal[f]
            }
        });
        let mut best: Option<(usize, Key)> = None;
        for (w, &(h, Reverse(k))) in window.iter().enumerate() {
            let blocked = writes_address[k as usize] && address_live.is_some();
            let on_time = earliest[k as usize] <= cycle;
            // Lower keys are better: not blocked, then (pressure) least
            // growth or (latency) on time, then height, then program order.
            let key = if tight {
                let growth = growth(shader.inst(body[k as usize]), &remaining, uses);
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
        let i = body[k];
        let d = shader.inst(i);
        cycle = cycle.max(earliest[k]) + u64::from(!is_meta(&d.op));
        // Operands whose last use this is die; the result becomes live.
        for v in d.operands() {
            if pos[shader.value_def(v).index()] != u32::MAX || !uses.escapes[v.index()] {
                let left = &mut remaining[v.index()];
                *left = left.saturating_sub(1);
                if *left == 0 && !uses.escapes[v.index()] {
                    let u = uses.units[v.index()];
                    pressure.add(u, -1);
                }
                if *left == 0 && address_live == Some(v) {
                    address_live = None;
                }
            }
        }
        if let Some(r) = d.result {
            let u = uses.units[r.index()];
            pressure.add(u, 1);
            if uses.address[r.index()] && remaining[r.index()] > 0 {
                address_live = Some(r);
            }
            if remaining[r.index()] == 0 && !uses.escapes[r.index()] {
                pressure.add(u, -1);
            }
        }
        out.push(i);
        for &(s, lat) in &succs[k] {
            let s = s as usize;
            earliest[s] = earliest[s].max(cycle + u64::from(lat));
            preds[s] -= 1;
            if preds[s] == 0 {
                ready.push((height[s], Reverse(s as u32)));
            }
        }
    }
    for &i in body {
        for v in shader.inst(i).operands() {
            remaining[v.index()] = 0;
        }
    }
    scratch.count = remaining;
    debug_assert_eq!(out.len(), n, "every body instruction scheduled");
    let new_max = simulate(shader, target, &out, uses, &scratch.pos, &mut scratch.count);
    let loses_occupancy = new_max
        .iter()
        .zip(&level_top)
        .any(|(&m, &top)| top != u32::MAX && m > top);
    (!loses_occupancy && out.len() == n).then_some(out)
}

/// How many units scheduling `d` now adds (its result) minus those it ends.
fn growth<O: Opcode>(d: &lathe_ir::InstData<'_, O>, remaining: &[u32], uses: &UseBlocks) -> i64 {
    let mut g = 0i64;
    if let Some(r) = d.result {
        if let Some((_, n)) = uses.units[r.index()] {
            g += i64::from(n);
        }
    }
    for (k, v) in d.operands().enumerate() {
        if d.operands().take(k).any(|w| w == v) {
            continue;
        }
        let uses_here = d.operands().filter(|&w| w == v).count() as u32;
        if !uses.escapes[v.index()] && remaining[v.index()] == uses_here {
            if let Some((_, n)) = uses.units[v.index()] {
                g -= i64::from(n);
            }
        }
    }
    g
}

/// Maximum live units per file along `order` (values from outside the
/// order are live from its start until their last use in it). `pos` marks
/// the instructions of the order; `count` is all zero and is left so.
fn simulate<O: Opcode>(
    shader: &Shader<'_, O>,
    target: &dyn TargetFacts<O>,
    order: &[Inst],
    uses: &UseBlocks,
    pos: &[u32],
    count: &mut [u32],
) -> Vec<u32> {
    let mut p = Pressure::new(target.files().len());
    let in_order = |v: Value| pos[shader.value_def(v).index()] != u32::MAX;
    for &i in order {
        for v in shader.inst(i).operands() {
            if count[v.index()] == 0 && !in_order(v) {
                // A live-in used here: live from the start.
                let u = uses.units[v.index()];
                p.add(u, 1);
            }
            count[v.index()] += 1;
        }
    }
    for &i in order {
        let d = shader.inst(i);
        for v in d.operands() {
            count[v.index()] -= 1;
            if count[v.index()] == 0 && !uses.escapes[v.index()] {
                let u = uses.units[v.index()];
                p.add(u, -1);
            }
        }
        if let Some(r) = d.result {
            let u = uses.units[r.index()];
            p.add(u, 1);
            if uses.body_uses[r.index()] == 0 && !uses.escapes[r.index()] {
                p.add(u, -1);
            }
        }
    }
    p.max
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
