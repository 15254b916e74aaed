//! `ra`: SSA register allocation with live-range splitting and spilling.
//!
//! One public entry point, [`allocate`] (and the [`Ra`] pass around it,
//! registered as `ra` in every [`Registry`](crate::Registry) with a target).
//!
//! # Representation
//!
//! The allocated program is still SSA, and every value has exactly one
//! register: [`ValueData::reg`](lathe_ir::ValueData), printed after the
//! type as `%3:f32@r4` (file `r`, first unit 4) with the files declared by
//! a `registers r` line, so the allocated text parses back. Moving a value
//! (to split its live range, make room for a register group, or meet a
//! fixed register) is a copy that defines a new value in the new register;
//! spilling stores a value to a scratch array the allocator declares and a
//! fill defines a new value. A phi's operands are in the phi's register at
//! the end of their predecessors, so phis cost nothing. `collect` and
//! `split` read their operands and write their results in registers like
//! any instruction (a later lowering turns the ones whose registers differ
//! into moves).
//!
//! # Algorithm
//!
//! Blocks are visited in reverse post-order, so every block's dominators
//! come first and each value is placed when defined, in dominance order
//! (the interference of SSA values is chordal: with no constraints a free
//! register always exists when the register count is the maximum number of
//! live units, MaxLive). Inside a block a value may move; at a join the
//! first visited predecessor decides where each live value enters, and
//! every other predecessor ends with a parallel copy (plus stores and
//! fills) that puts its values there, with new phis naming the merged
//! values. Such a phi is a placeholder name until the join's last
//! predecessor is done, and is made only if its operands differ (most
//! values entering a loop come back unchanged); the few instructions that
//! read a placeholder are rewritten at the end. Critical edges into joins
//! are split first so those copies have a place. Parallel copies are sequentialised with the fewest instructions:
//! one move per value outside cycles, and k - 1 two-result `swap`s for a
//! cycle of k values of one width (a target lowers `swap` to its exchange
//! instruction, see [`TargetFacts::swap`]). A cycle mixing widths (halves
//! and fulls of a merged file) cannot be turned by swapping whole values:
//! one value goes through a free register, or through scratch memory when
//! the file is full (counted in [`Allocation::cycles_via_memory`]).
//!
//! When registers run out, the live value whose next use is furthest away
//! is spilled (Braun and Hack's heuristic, with next uses measured inside
//! the block and values live out counted as used after the block's end);
//! each value is stored at most once on a path and filled before a use.
//! A register group that has no free aligned window moves the values in
//! the cheapest window elsewhere (or spills them). A join with more phis
//! than registers left keeps the rest in memory ([`MemoryPhi`]): its
//! predecessors store their operands to the phi's slot. Register groups
//! and address values keep the register they were made in while live
//! (groups may so live across blocks); an operand an instruction reads in
//! another class than its value's (an index in the address file) is
//! copied there for that instruction ([`TargetFacts::copy_between`]).
//!
//! The checker [`check`] proves the result (every use reads the value its
//! definition produced, through copies, spills, fills and joins); it runs
//! after every allocation in debug builds.

mod affinity;
pub mod check;
mod liveness;

use crate::manager::{Pass, PassFailure};
use crate::target::{
    BaseOperand, FileId, FileKind, PhysReg, RegClass, RegisterFile, SpillSlot, TargetFacts,
};
use affinity::Affinity;
use lathe_ir::{
    ArrayDecl, ArrayId, Block, Cfg, Inst, InstData, Op, Opcode, Reg, Shader, Type, Value,
};
use liveness::{Liveness, Use};
use std::rc::Rc;

/// Why a shader could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaError {
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Knobs for one allocation.
#[derive(Clone, Copy, Debug, Default)]
pub struct RaOptions {
    /// Use at most this many units of each allocated file (spilling the
    /// rest); `None` allows the whole file.
    pub max_units: Option<u32>,
    /// Keep at least this many threads in flight: the unit limit becomes
    /// the largest count at which [`TargetFacts::occupancy`] reaches it.
    pub occupancy_goal: Option<u32>,
}

/// What an inserted instruction does, for the checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Copies operand 0 to the result's register.
    Copy,
    /// Exchanges its two operands' registers (a `swap`).
    Swap,
    /// Stores operand 0 to a scratch slot.
    Spill(SpillSlot),
    /// Loads the result from a scratch slot.
    Fill(SpillSlot),
    /// A phi the allocator made to name a value arriving in one register
    /// from several predecessors.
    Merge,
    /// Defines the base address spills and fills read
    /// ([`TargetFacts::spill_base`]), in a register kept for it.
    SpillBase,
}

/// The result of an allocation besides the rewritten shader.
#[derive(Debug, Default, Clone)]
pub struct Allocation {
    /// Instructions that existed before allocation are below this handle.
    pub first_new_inst: u32,
    /// What each inserted instruction does, indexed by its handle minus
    /// `first_new_inst` (`None`: removed again).
    pub edits: Vec<Option<Edit>>,
    /// Units used per file (one past the highest unit written).
    pub units_used: Vec<u32>,
    pub spills: u32,
    pub fills: u32,
    pub copies: u32,
    /// Swaps turning copy cycles at joins.
    pub swaps: u32,
    /// Copy cycles mixing value widths (no swap of whole values turns
    /// them), broken through a free register, or through scratch memory
    /// when the file is full.
    pub cycles_via_register: u32,
    pub cycles_via_memory: u32,
    /// Phis kept in scratch memory rather than a register.
    pub memory_phis: Vec<MemoryPhi>,
    /// Operands of each original instruction before allocation (address
    /// operand last), for the checker.
    pub original_operands: OriginalOperands,
}

/// An original phi whose value enters its block in scratch memory: a join
/// with more values arriving in registers than the file holds. The phi is
/// removed from the block; each predecessor ends by storing its operand to
/// `slot` (after the join's copies have no register to spare, through a
/// register it frees for the moment), and the block's uses fill it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPhi {
    pub block: Block,
    pub phi: Inst,
    pub slot: SpillSlot,
}

/// The operands every original instruction had before allocation, in one
/// flat array.
#[derive(Debug, Default, Clone)]
pub struct OriginalOperands {
    /// Where each instruction's operands are in `values` (start, count),
    /// by instruction handle.
    spans: Vec<(u32, u32)>,
    values: Vec<Value>,
}

impl OriginalOperands {
    fn new(insts: usize) -> Self {
        OriginalOperands {
            spans: vec![(0, 0); insts],
            values: Vec::with_capacity(insts * 2),
        }
    }

    /// Note `i`'s operands; returns where they are in `values`.
    fn record(&mut self, i: Inst, operands: impl Iterator<Item = Value>) -> (usize, usize) {
        let start = self.values.len();
        self.values.extend(operands);
        self.spans[i.index()] = (start as u32, (self.values.len() - start) as u32);
        (start, self.values.len())
    }

    /// The operands `i` had (empty for an inserted instruction).
    pub fn of(&self, i: Inst) -> &[Value] {
        match self.spans.get(i.index()) {
            Some(&(start, n)) => &self.values[start as usize..(start + n) as usize],
            None => &[],
        }
    }
}

impl Allocation {
    /// Registers kept for a spill base ([`Edit::SpillBase`]): 0 or 1.
    pub fn spill_bases(&self) -> u32 {
        self.edits
            .iter()
            .filter(|e| **e == Some(Edit::SpillBase))
            .count() as u32
    }

    /// What `i` does if the allocator inserted it.
    pub fn edit(&self, i: Inst) -> Option<Edit> {
        let k = i.index().checked_sub(self.first_new_inst as usize)?;
        self.edits.get(k).copied().flatten()
    }

    fn record(&mut self, i: Inst, edit: Edit) {
        let k = i.index() - self.first_new_inst as usize;
        if self.edits.len() <= k {
            self.edits.resize(k + 1, None);
        }
        self.edits[k] = Some(edit);
    }
}

/// The `ra` pass.
pub struct Ra<O> {
    pub target: Rc<dyn TargetFacts<O>>,
    pub options: RaOptions,
    /// The last allocation's statistics and edits.
    pub last: Option<Allocation>,
}

impl<O: Opcode> Ra<O> {
    pub fn new(target: Rc<dyn TargetFacts<O>>) -> Self {
        Ra {
            target,
            options: RaOptions::default(),
            last: None,
        }
    }
}

impl<O: Opcode> Pass<O> for Ra<O> {
    fn name(&self) -> &'static str {
        "ra"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        self.last = None;
        self.last = Some(allocate(shader, self.target.as_ref(), self.options)?);
        Ok(true)
    }
}

/// Allocate registers for `shader` on `target`. The shader is rewritten in
/// place (copies, spills, fills, phis, split edges) and every value gets a
/// register; in debug builds the result is checked by [`check::check`].
pub fn allocate<O: Opcode, T: TargetFacts<O> + ?Sized>(
    shader: &mut Shader<'_, O>,
    target: &T,
    options: RaOptions,
) -> Result<Allocation, RaError> {
    let alloc = match Allocator::new(shader, target, options, false)?.run()? {
        Outcome::Done(alloc) => alloc,
        Outcome::NeedsBase(original) => {
            // The target addresses scratch memory from a register: start
            // again with one kept for the base from the entry on.
            restore(shader, &original);
            match Allocator::new(shader, target, options, true)?.run()? {
                Outcome::Done(alloc) => alloc,
                Outcome::NeedsBase(_) => unreachable!("the second run has a spill base"),
            }
        }
    };
    #[cfg(debug_assertions)]
    if let Err(e) = check::check(shader, target, &alloc) {
        panic!(
            "register allocation checker: {e}\n{}",
            lathe_ir::print(shader)
        );
    }
    Ok(alloc)
}

/// How a run of the allocator ended.
enum Outcome {
    Done(Allocation),
    /// It had to spill on a target that addresses scratch memory from a
    /// base register, and no register was kept for one: the operands the
    /// instructions had, to start again from.
    NeedsBase(OriginalOperands),
}

/// Undo a stopped run: every original instruction gets its operands back
/// and no value keeps a register. (The run's new instructions were never
/// placed in a block: block lists are written only when a run completes.)
fn restore<O: Opcode>(s: &mut Shader<'_, O>, original: &OriginalOperands) {
    for k in 0..original.spans.len() {
        let i = Inst(k as u32);
        let ops = original.of(i);
        if s.inst(i).block.is_none() {
            continue;
        }
        let nargs = s.inst(i).args.len();
        s.set_args(i, &ops[..nargs]);
        if let Some(&a) = ops.get(nargs) {
            s.inst_mut(i).address = Some(a);
        }
    }
    for v in 0..s.value_capacity() {
        s.set_value_reg(Value(v as u32), None);
    }
}

/// The register kept for the spill base: its value and global unit.
#[derive(Clone, Copy, Debug)]
struct SpillBase<O> {
    op: O,
    value: Option<Value>,
    unit: u32,
    units: u32,
    class: RegClass,
}

/// A value's place at a program point.
#[derive(Clone, Copy, Debug)]
struct Place {
    /// The original value.
    value: Value,
    /// Its current SSA name.
    name: Value,
    /// Its first global unit, when in a register.
    unit: Option<u32>,
    /// A copy is in its scratch slot.
    in_memory: bool,
}

/// No unit, no slot, no block.
const NONE: u32 = u32::MAX;

/// Names from this one up stand for allocator phis not made yet (see
/// [`JoinMerges`]); the instructions that read one are listed and
/// rewritten once the phis are settled.
const PENDING: u32 = 1 << 31;

fn is_pending(v: Value) -> bool {
    v.0 >= PENDING
}

/// What the allocator knows of one original value, in one record: the
/// values live at a point are scattered over the program, so one table
/// per field would cost a cache line per field and value.
#[derive(Clone, Copy, Debug)]
struct Val {
    /// Its current SSA name.
    name: Value,
    /// Its first global unit, or [`NONE`] when not in a register.
    unit: u32,
    /// The last block it was found live out of.
    out_stamp: u32,
    /// Its spill slot (an index in `Allocator::slots`), or [`NONE`].
    slot: u32,
    /// Its uses in the current block: the block they were gathered for,
    /// and where their positions are in `Allocator::positions`.
    uses_block: u32,
    uses_start: u32,
    uses_end: u32,
    class: RegClass,
    ty: Type,
    /// Units it takes.
    units: u16,
    /// A copy is in its spill slot.
    in_mem: bool,
    /// It keeps its register while live (see `Allocator::stays`).
    stays: bool,
    /// Every read of it is a split of a lane no other split reads, in the
    /// block defining it: a lane already split is never read again, so its
    /// units may go to the split's result while the vector lives on.
    split_apart: bool,
}

impl Val {
    fn unit(&self) -> Option<u32> {
        (self.unit != NONE).then_some(self.unit)
    }
}

/// One original instruction as the allocation walk needs it. The walk
/// reads these (compact, in the order it visits them) instead of the
/// shader's instruction records, which it writes only to rename operands.
#[derive(Clone, Copy)]
struct Step<O> {
    inst: Inst,
    op: Op<O>,
    result: Option<Value>,
    /// Its operands (address last) in `OriginalOperands::values`.
    start: u32,
    count: u16,
    nargs: u16,
}

impl<O: Opcode> Step<O> {
    fn new(inst: Inst, d: &InstData<'_, O>, start: usize, end: usize) -> Step<O> {
        Step {
            inst,
            op: d.op,
            result: d.result,
            start: start as u32,
            count: (end - start) as u16,
            nargs: d.args.len() as u16,
        }
    }

    fn operands<'v>(&self, values: &'v [Value]) -> &'v [Value] {
        &values[self.start as usize..self.start as usize + self.count as usize]
    }
}

/// Allocator phis at a join while its predecessors are fixed up: every
/// value entering in a register is named by one (its uses in the blocks
/// after read the placeholder name `PENDING + id`), and most turn out to
/// have one operand only, so none is made until the join is complete.
#[derive(Default)]
struct JoinMerges {
    /// (original value, placeholder id, unit), sorted by value.
    list: Vec<(Value, u32, u32)>,
    /// Operands, one per predecessor of the join, merge after merge.
    args: Vec<Value>,
}

/// An allocator phi with more than one distinct operand when its join was
/// complete; made at the end unless it turns out trivial after all (an
/// operand that was pending then may have become the phi itself).
struct KeptMerge {
    id: u32,
    block: Block,
    value: Value,
    unit: u32,
    /// Its operands in `Allocator::kept_args`.
    args: (u32, u32),
}

struct Allocator<'s, 'a, O: Opcode, T: ?Sized> {
    s: &'s mut Shader<'a, O>,
    t: &'s T,
    /// First global unit of each file, and the units each may use.
    base: Vec<u32>,
    limit: Vec<u32>,
    /// Per original value.
    vals: Vec<Val>,
    /// Spill slots, indexed by `Val::slot`.
    slots: Vec<SpillSlot>,
    /// Which original value holds each global unit.
    owner: Vec<Option<Value>>,
    /// Values in registers (may hold stale entries; checked against `unit`).
    entry: Vec<Option<Vec<Place>>>,
    exit: Vec<Option<Vec<Place>>>,
    /// Instruction list being built for each block that got new
    /// instructions (empty for the others).
    lists: Vec<Vec<Inst>>,
    /// Per block whose list is not rewritten: how many of its original
    /// instructions are done (they keep their places); [`NONE`] once the
    /// block's list is being rebuilt in `lists`.
    kept_prefix: Vec<u32>,
    /// Pending allocator phis at each join.
    merges: Vec<JoinMerges>,
    /// What each placeholder stands for (itself while undecided).
    merge_names: Vec<Value>,
    kept: Vec<KeptMerge>,
    kept_args: Vec<Value>,
    /// Instructions that read a placeholder name.
    reads_pending: Vec<Inst>,
    done: Vec<bool>,
    /// Per block: more than one predecessor, or phis.
    joins: Vec<bool>,
    live: Liveness,
    /// Shared so a block's predecessor list can be read while `self`
    /// changes.
    cfg: Rc<Cfg>,
    /// The original instructions in the order of the walk, and each
    /// block's range in it.
    steps: Vec<Step<O>>,
    block_steps: Vec<(u32, u32)>,
    /// Dropped snapshots, reused for new ones.
    pool: Vec<Vec<Place>>,
    /// Scratch arrays by type, in order of first use, with their lengths.
    scratch: Vec<(Type, u32)>,
    scratch_base: u32,
    scratch_bytes: u32,
    /// A slot was needed at or beyond the target's scratch reach.
    scratch_past_reach: bool,
    alloc: Allocation,
    /// Registers of operands dying at the current instruction: free for its
    /// result, but not for values moved before it.
    dying: Vec<(u32, u32)>,
    /// Registers holding copies of the current instruction's operands in
    /// another class (see [`TargetFacts::copy_between`]): taken until the
    /// instruction has read them.
    temps: Vec<(u32, u32)>,
    /// Operands of the current instruction that it reads from a unit
    /// aligned more strictly than their own class asks (a register pair's
    /// even first register): a value moved while the instruction is
    /// placed keeps that alignment.
    operand_aligns: Vec<(Value, u8)>,
    /// One past the highest global unit used so far, per file.
    high: Vec<u32>,
    /// The block whose uses `Val::uses_*` describe, their positions, and
    /// the (position, value) pairs they were gathered from.
    uses_block: u32,
    positions: Vec<u32>,
    block_uses: Vec<(u32, Value)>,
    /// The current block's last `output`, and the values earlier outputs
    /// read, held in their registers until it (see `gather_uses`).
    last_output: u32,
    held_outputs: Vec<Value>,
    /// Scratch lists reused from instruction to instruction: the current
    /// instruction's operands, and those dying at it.
    operands: Vec<Value>,
    dead: Vec<Value>,
    /// The names a collect reads, slot by slot, once its operands are
    /// placed in its group (see `Allocator::form_group`).
    group_args: Vec<Value>,
    /// Per block: successors not entered yet (its exit snapshot is
    /// dropped at 0), and predecessors not done yet (its entry snapshot is
    /// emptied and its allocator phis settled at 0).
    succs_left: Vec<u32>,
    preds_left: Vec<u32>,
    /// The register kept for the spill base (second run on targets that
    /// have one).
    spill_base: Option<SpillBase<O>>,
    /// A spill or fill was needed on a target with a spill base, and no
    /// register was kept for it.
    needs_base: bool,
    /// Values that would like related registers (see [`affinity`]).
    affinity: Affinity,
}

const FAR: u32 = 1 << 20;

impl<'s, 'a, O: Opcode, T: TargetFacts<O> + ?Sized> Allocator<'s, 'a, O, T> {
    fn new(
        s: &'s mut Shader<'a, O>,
        t: &'s T,
        options: RaOptions,
        keep_base: bool,
    ) -> Result<Self, RaError> {
        let mut cfg = drop_unreachable(s);
        let files = t.files();
        let mut base = Vec::with_capacity(files.len());
        let mut limit = Vec::with_capacity(files.len());
        let mut total = 0;
        for (k, f) in files.iter().enumerate() {
            base.push(total);
            let mut l = f.units;
            if let Some(m) = options.max_units {
                l = l.min(m);
            }
            if let (Some(goal), true) = (options.occupancy_goal, f.allocated) {
                let fid = FileId(k as u8);
                let best = t
                    .occupancy_steps(fid)
                    .into_iter()
                    .filter(|&u| t.occupancy(fid, u) >= goal)
                    .max();
                if let Some(b) = best {
                    l = l.min(b);
                }
            }
            limit.push(if assigned(f) { l } else { 0 });
            total += f.units;
        }
        // The spill base takes the highest aligned register under the
        // limit of its file, out of reach of every other value.
        let spill_base = match t.spill_base().filter(|_| keep_base) {
            Some(op) => {
                let class = t.result_class(&Op::Opcode(op), Type::U32);
                let units = class.units(Type::U32);
                let f = class.file.index();
                let align = class.align.max(1) as u32;
                let top = limit.get(f).copied().unwrap_or(0);
                if top < units || !files[f].allocated {
                    return Err(RaError::Unsupported(format!(
                        "file {} has no register left for the spill base",
                        files.get(f).map_or("?", |x| x.name)
                    )));
                }
                let kept = (top - units) / align * align;
                limit[f] = kept;
                Some(SpillBase {
                    op,
                    value: None,
                    unit: base[f] + kept,
                    units,
                    class,
                })
            }
            None => None,
        };
        let nv = s.value_capacity();
        debug_assert!(
            nv < PENDING as usize,
            "value handles stay below the placeholders"
        );
        let mut vals: Vec<Val> = (0..nv as u32)
            .map(|v| Val {
                name: Value(v),
                unit: NONE,
                out_stamp: NONE,
                slot: NONE,
                uses_block: NONE,
                uses_start: 0,
                uses_end: 0,
                class: RegClass {
                    file: FileId(0),
                    lane_units: 1,
                    align: 1,
                },
                ty: Type::F32,
                units: 1,
                in_mem: false,
                stays: false,
                split_apart: false,
            })
            .collect();
        // Per value: the lanes splits read, or `READ_WHOLE` once something
        // else reads it (see `Val::split_apart`).
        const READ_WHOLE: u64 = u64::MAX;
        let mut split_lanes = vec![0u64; nv];
        // One walk over the program gathers everything later steps need
        // from the instructions (a walk costs a cache miss per block or so
        // once the program is larger than the caches): the operands before
        // allocation, each result's class, where values are defined, and
        // the uses liveness starts from; it also splits critical edges
        // into joins, so every join's predecessors end in a plain jump
        // (the fix-up copies go there).
        let mut original_operands = OriginalOperands::new(s.inst_capacity());
        let mut def_block = vec![NONE; nv];
        let mut uses: Vec<Use> = Vec::with_capacity(s.inst_capacity() * 2);
        let mut joins = vec![false; s.block_capacity()];
        let mut phis: Vec<Inst> = Vec::new();
        let mut splits: Vec<(Block, usize, Block)> = Vec::new();
        // Collects, splits and copies: their results join their operands'
        // affinity sets once every class is known.
        let mut related: Vec<Inst> = Vec::new();
        let mut steps: Vec<Step<O>> = Vec::with_capacity(s.len() + 16);
        let mut block_steps = vec![(0, 0); s.block_capacity()];
        for &b in cfg.rpo() {
            joins[b.index()] = is_join(s, &cfg, b);
            let first = steps.len() as u32;
            for &i in s.block_insts(b) {
                let d = s.inst(i);
                let (start, end) = original_operands.record(i, d.operands());
                steps.push(Step::new(i, d, start, end));
                if d.op.is_phi() {
                    // Its operands' uses are read once the edges are split.
                    phis.push(i);
                } else {
                    uses.extend(d.operands().map(|v| Use::live_in(v, b)));
                }
                for (k, v) in d.operands().enumerate() {
                    let lanes = &mut split_lanes[v.index()];
                    *lanes = match d.op {
                        Op::Split { lane }
                            if k == 0 && lane < 63 && def_block[v.index()] == b.0 =>
                        {
                            let bit = 1u64 << lane;
                            if *lanes & bit == 0 {
                                *lanes | bit
                            } else {
                                READ_WHOLE
                            }
                        }
                        _ => READ_WHOLE,
                    };
                }
                if let Some(r) = d.result {
                    def_block[r.index()] = b.0;
                    let ty = s.value_type(r);
                    let copy = d.args.len() == 1 && d.op == Op::Opcode(t.copy(ty));
                    if copy || matches!(d.op, Op::Collect | Op::Split { .. }) {
                        related.push(i);
                    }
                    let class = t.result_class(&d.op, ty);
                    if files.get(class.file.index()).is_none_or(|f| !assigned(f)) {
                        return Err(RaError::Unsupported(format!(
                            "a {} result in a file the allocator does not assign",
                            d.op.name()
                        )));
                    }
                    let val = &mut vals[r.index()];
                    val.class = class;
                    val.ty = ty;
                    val.units = class.units(ty) as u16;
                    val.stays =
                        ty.is_vector() || files[class.file.index()].kind == FileKind::Address;
                }
            }
            block_steps[b.index()] = (first, steps.len() as u32);
            let before = splits.len();
            split_critical_edges(s, &cfg, b, &mut splits);
            for &(_, _, n) in &splits[before..] {
                // A new block's one instruction: a jump.
                let i = s.block_insts(n)[0];
                let at = original_operands.values.len();
                block_steps.resize(s.block_capacity(), (0, 0));
                block_steps[n.index()] = (steps.len() as u32, steps.len() as u32 + 1);
                steps.push(Step::new(i, s.inst(i), at, at));
            }
        }
        cfg.split_edges(&splits);
        for (val, &lanes) in vals.iter_mut().zip(&split_lanes) {
            val.split_apart = lanes != 0 && lanes != READ_WHOLE;
        }
        joins.resize(s.block_capacity(), false);
        for &i in &phis {
            let d = s.inst(i);
            for (&v, &p) in d.args.iter().zip(d.targets.iter()) {
                uses.push(Use::live_out(v, p));
            }
        }
        let live = Liveness::compute(&cfg, s.block_capacity(), &def_block, uses);
        let affinity = affinity::build(s, &vals, &live, &phis, &related);
        let nb = s.block_capacity();
        let scratch_base = s.arrays().len() as u32;
        let high = base.clone();
        Ok(Allocator {
            base,
            limit,
            vals,
            slots: Vec::new(),
            owner: vec![None; total as usize],
            entry: vec![None; nb],
            exit: vec![None; nb],
            lists: vec![Vec::new(); nb],
            kept_prefix: vec![0; nb],
            merges: (0..nb).map(|_| JoinMerges::default()).collect(),
            merge_names: Vec::new(),
            kept: Vec::new(),
            kept_args: Vec::new(),
            reads_pending: Vec::new(),
            done: vec![false; nb],
            joins,
            live,
            cfg: Rc::new(cfg),
            steps,
            block_steps,
            pool: Vec::new(),
            scratch: Vec::new(),
            scratch_base,
            // Spill slots follow the shader's own private memory.
            scratch_bytes: s.private_bytes,
            scratch_past_reach: false,
            alloc: Allocation {
                first_new_inst: s.inst_capacity() as u32,
                original_operands,
                ..Allocation::default()
            },
            dying: Vec::new(),
            temps: Vec::new(),
            operand_aligns: Vec::new(),
            high,
            uses_block: NONE,
            positions: Vec::new(),
            block_uses: Vec::new(),
            last_output: NONE,
            held_outputs: Vec::new(),
            operands: Vec::new(),
            dead: Vec::new(),
            group_args: Vec::new(),
            spill_base,
            needs_base: false,
            affinity,
            succs_left: vec![0; nb],
            preds_left: vec![0; nb],
            s,
            t,
        })
    }

    fn run(mut self) -> Result<Outcome, RaError> {
        let names: Vec<&str> = self.t.files().iter().map(|f| f.name).collect();
        self.s.set_register_files(&names);
        let rpo = self.cfg.rpo().to_vec();
        if let (Some(base), Some(&entry)) = (self.spill_base.as_mut(), rpo.first()) {
            let i = self
                .s
                .create_inst(Op::Opcode(base.op), &[], &[], None, Some(Type::U32));
            let r = self.s.inst(i).result.unwrap_or(Value(0));
            base.value = Some(r);
            let unit = base.unit;
            let f = base.class.file.index();
            self.high[f] = self.high[f].max(unit + base.units);
            self.s.set_value_reg(r, Some(self.to_reg(unit)));
            self.alloc.record(i, Edit::SpillBase);
            self.push_new(entry, i);
        }
        let live = std::mem::take(&mut self.live);
        let steps = std::mem::take(&mut self.steps);
        for &b in &rpo {
            self.block(b, &live, &steps)?;
            if self.needs_base {
                return Ok(Outcome::NeedsBase(self.alloc.original_operands));
            }
        }
        if self.scratch_past_reach {
            return Err(RaError::Unsupported(format!(
                "spill slots need {} bytes of scratch memory but the target's spills and fills reach {} \
                 (moving larger offsets into the base address is not implemented)",
                self.scratch_bytes,
                self.t.scratch_reach()
            )));
        }
        self.settle_merges();
        for &b in &rpo {
            // Blocks without new instructions are left as they are.
            let list = std::mem::take(&mut self.lists[b.index()]);
            if self.kept_prefix[b.index()] == NONE {
                self.s.set_block_insts(b, &list);
            }
        }
        // The whole per-invocation private area: the shader's, then spills.
        self.s.private_bytes = self.scratch_bytes;
        for (ty, len) in std::mem::take(&mut self.scratch) {
            self.s.add_array(ArrayDecl {
                elem: ty,
                len: len.max(1),
            });
        }
        // Every register given to a value went through `occupy` or a
        // parking copy, both of which raise `high`.
        self.alloc.units_used = self
            .high
            .iter()
            .zip(&self.base)
            .map(|(h, b)| h - b)
            .collect();
        Ok(Outcome::Done(self.alloc))
    }

    // ----- state -----

    fn file_range(&self, class: RegClass) -> (u32, u32) {
        let f = class.file.index();
        (self.base[f], self.base[f] + self.limit[f])
    }

    fn val(&self, v: Value) -> &Val {
        &self.vals[v.index()]
    }

    fn unit_of(&self, v: Value) -> Option<u32> {
        self.vals[v.index()].unit()
    }

    fn units_of(&self, v: Value) -> u32 {
        self.vals[v.index()].units as u32
    }

    fn occupy(&mut self, v: Value, unit: u32) {
        let val = &mut self.vals[v.index()];
        val.unit = unit;
        let (n, f) = (val.units as u32, val.class.file.index());
        for u in unit..unit + n {
            self.owner[u as usize] = Some(v);
        }
        self.high[f] = self.high[f].max(unit + n);
    }

    fn release(&mut self, v: Value) {
        let val = &mut self.vals[v.index()];
        if val.unit != NONE {
            let (unit, n) = (val.unit, val.units as u32);
            val.unit = NONE;
            for u in unit..unit + n {
                if self.owner[u as usize] == Some(v) {
                    self.owner[u as usize] = None;
                }
            }
        }
    }

    fn to_reg(&self, unit: u32) -> Reg {
        let f = self.base.iter().rposition(|&b| b <= unit).unwrap_or(0);
        Reg {
            file: f as u8,
            unit: (unit - self.base[f]) as u16,
        }
    }

    /// Note that `i` reads `args`: if one is a placeholder, `i` is
    /// rewritten when the allocator phis are settled.
    fn note_reads(&mut self, i: Inst, args: &[Value]) {
        if args.iter().any(|&a| is_pending(a)) {
            self.reads_pending.push(i);
        }
    }

    /// A new instruction defining a new name for original value `v` at
    /// global unit `unit`.
    fn new_def(
        &mut self,
        op: Op<O>,
        (args, address): (&[Value], Option<Value>),
        v: Value,
        unit: u32,
        edit: Edit,
    ) -> Inst {
        let ty = self.val(v).ty;
        let i = self.s.create_inst(op, args, &[], address, Some(ty));
        self.note_reads(i, args);
        let r = self.s.inst(i).result.unwrap_or(Value(0));
        self.s.set_value_reg(r, Some(self.to_reg(unit)));
        self.alloc.record(i, edit);
        i
    }

    /// A new scratch slot for a value of type `ty`.
    fn fresh_slot(&mut self, ty: Type) -> SpillSlot {
        let k = match self.scratch.iter().position(|x| x.0 == ty) {
            Some(k) => k,
            None => {
                self.scratch.push((ty, 0));
                self.scratch.len() - 1
            }
        };
        let index = self.scratch[k].1;
        self.scratch[k].1 += 1;
        let mut byte_offset = self.scratch_bytes;
        if byte_offset >= self.t.scratch_reach() {
            // The allocation fails at the end of `run`; offset 0 keeps the
            // target's spill and fill builders within their encoding.
            self.scratch_past_reach = true;
            byte_offset = 0;
        }
        let slot = SpillSlot {
            array: ArrayId(self.scratch_base + k as u32),
            index,
            byte_offset,
        };
        let bytes = ty.scalar.bits().div_ceil(32) * 4 * ty.lanes as u32;
        self.scratch_bytes = self.scratch_bytes.saturating_add(bytes);
        slot
    }

    /// The slot original value `v` is spilled to.
    fn slot(&mut self, v: Value) -> SpillSlot {
        let k = self.val(v).slot;
        if k != NONE {
            return self.slots[k as usize];
        }
        let slot = self.fresh_slot(self.val(v).ty);
        self.vals[v.index()].slot = self.slots.len() as u32;
        self.slots.push(slot);
        slot
    }

    /// Store `name` (a name of original `v`) to `slot`.
    fn store_inst(&mut self, v: Value, name: Value, slot: SpillSlot) -> Inst {
        let ty = self.val(v).ty;
        let op = Op::Opcode(self.t.spill(ty, slot));
        let i = match self.base_value() {
            Some(base) if self.t.spill_base_operand() == BaseOperand::First => {
                self.s.create_inst(op, &[base, name], &[], None, None)
            }
            base => self.s.create_inst(op, &[name], &[], base, None),
        };
        self.note_reads(i, &[name]);
        self.alloc.record(i, Edit::Spill(slot));
        self.alloc.spills += 1;
        i
    }

    /// Load original `v` from `slot` into global unit `unit`.
    fn fill_inst(&mut self, v: Value, slot: SpillSlot, unit: u32) -> Inst {
        let ty = self.val(v).ty;
        let op = Op::Opcode(self.t.fill(ty, slot));
        let base = self.base_value();
        let operands: (&[Value], Option<Value>) = match base {
            Some(b) if self.t.spill_base_operand() == BaseOperand::First => (&[b], None),
            b => (&[], b),
        };
        let i = self.new_def(op, operands, v, unit, Edit::Fill(slot));
        self.alloc.fills += 1;
        i
    }

    fn copy_inst(&mut self, from: Value, v: Value, unit: u32) -> Inst {
        let ty = self.val(v).ty;
        let op = Op::Opcode(self.t.copy(ty));
        self.alloc.copies += 1;
        self.new_def(op, (&[from], None), v, unit, Edit::Copy)
    }

    /// The spill base's value for a new spill or fill; notes that one is
    /// needed when the target has a base and no register was kept for it.
    fn base_value(&mut self) -> Option<Value> {
        match &self.spill_base {
            Some(base) => base.value,
            None => {
                self.needs_base |= self.t.spill_base().is_some();
                None
            }
        }
    }

    /// Fail when a fixed register would overwrite the spill base's.
    fn outside_base(&self, unit: u32, n: u32) -> Result<(), RaError> {
        match &self.spill_base {
            Some(b) if unit < b.unit + b.units && b.unit < unit + n => Err(RaError::Unsupported(
                "a fixed input or output register is the one kept for the spill base".into(),
            )),
            _ => Ok(()),
        }
    }

    // ----- instruction lists -----

    /// Original instruction `i`, the next of `b`'s, is done.
    fn push_original(&mut self, b: Block, i: Inst) {
        if self.kept_prefix[b.index()] != NONE {
            debug_assert_eq!(
                self.s
                    .block_insts(b)
                    .get(self.kept_prefix[b.index()] as usize),
                Some(&i)
            );
            self.kept_prefix[b.index()] += 1;
        } else {
            self.lists[b.index()].push(i);
        }
    }

    /// New instruction `i` goes after what `b` has so far.
    fn push_new(&mut self, b: Block, i: Inst) {
        self.list_of(b).push(i);
    }

    /// `b`'s new instruction list, made from the original instructions
    /// done so far when it gets its first new instruction or loses one
    /// (most blocks do neither, and keep their list untouched).
    fn list_of(&mut self, b: Block) -> &mut Vec<Inst> {
        let list = &mut self.lists[b.index()];
        let done = self.kept_prefix[b.index()];
        if done != NONE {
            list.reserve(done as usize + 4);
            list.extend_from_slice(&self.s.block_insts(b)[..done as usize]);
            self.kept_prefix[b.index()] = NONE;
        }
        list
    }

    // ----- free space -----

    fn is_free(&self, unit: u32, n: u32, avoid: &[(u32, u32)]) -> bool {
        (unit..unit + n).all(|u| self.owner[u as usize].is_none())
            && avoid.iter().all(|&(a, m)| unit + n <= a || a + m <= unit)
            && !self.holds_temp(unit, n)
    }

    /// Does a unit of `unit..unit + n` hold an operand's copy in another
    /// class?
    fn holds_temp(&self, unit: u32, n: u32) -> bool {
        self.temps
            .iter()
            .any(|&(a, m)| unit < a + m && a < unit + n)
    }

    /// The lowest free aligned window for `class` × `units`, avoiding the
    /// given unit ranges.
    fn find_free(&self, class: RegClass, n: u32, avoid: &[(u32, u32)]) -> Option<u32> {
        let (lo, hi) = self.file_range(class);
        let align = class.align.max(1) as u32;
        let mut u = lo;
        while u + n <= hi {
            if self.is_free(u, n, avoid) {
                return Some(u);
            }
            u += align;
        }
        None
    }

    fn free_units(&self, class: RegClass) -> u32 {
        let (lo, hi) = self.file_range(class);
        (lo..hi)
            .filter(|&u| self.owner[u as usize].is_none())
            .count() as u32
    }

    /// Does `v` hold every unit of `unit..unit + n`?
    fn held_by(&self, unit: u32, n: u32, v: Value) -> bool {
        (unit..unit + n).all(|u| self.owner[u as usize] == Some(v))
    }

    /// Is `unit..unit + n` inside `class`'s file, aligned for it, and
    /// free?
    fn fits(&self, class: RegClass, unit: u32, n: u32) -> bool {
        let (lo, hi) = self.file_range(class);
        unit >= lo
            && unit + n <= hi
            && (unit - lo) % class.align.max(1) as u32 == 0
            && self.is_free(unit, n, &[])
    }

    /// Where `v`, about to be defined, would like to go: its affinity
    /// set's unit for it when that is free, or, when no member of its set
    /// is placed yet, its place in the lowest free window holding the
    /// whole set. `None` leaves the choice to the caller.
    fn preferred_free(&mut self, v: Value) -> Option<u32> {
        let info = *self.val(v);
        let n = info.units as u32;
        if let Some(u) = self.affinity.preferred(v) {
            let u = u32::try_from(u).ok()?;
            return self.fits(info.class, u, n).then_some(u);
        }
        let (span, align, at) = self.affinity.unplaced_span(v)?;
        let window = RegClass {
            align: align.max(info.class.align),
            ..info.class
        };
        let start = self.find_free(window, span, &[])?;
        Some(start + at).filter(|&u| self.fits(info.class, u, n))
    }

    // ----- next uses -----

    /// Gather the uses in block `b`'s instructions `insts` (phis read at
    /// the predecessors' ends, not here): each value's positions, in order,
    /// in one flat array. An output's value is read when the shader ends,
    /// so it is used again at the block's last output: no fill or result
    /// may take its register before then.
    fn gather_uses(&mut self, b: Block, steps: &[Step<O>]) {
        let block = b.0;
        self.uses_block = block;
        let mut uses = std::mem::take(&mut self.block_uses);
        uses.clear();
        let values = &self.alloc.original_operands.values;
        let last_output = steps
            .iter()
            .rposition(|x| matches!(x.op, Op::Output { .. }))
            .map(|k| k as u32);
        self.last_output = last_output.unwrap_or(NONE);
        self.held_outputs.clear();
        let mut held_to_end = false;
        for (k, step) in steps.iter().enumerate() {
            if !step.op.is_phi() {
                uses.extend(step.operands(values).iter().map(|&v| (k as u32, v)));
            }
            if let (Op::Output { .. }, Some(last)) = (step.op, last_output)
                && last > k as u32
            {
                held_to_end = true;
            }
        }
        if let Some(last) = last_output.filter(|_| held_to_end) {
            for step in steps.iter().take(last as usize) {
                if let Op::Output { .. } = step.op {
                    uses.extend(step.operands(values).iter().map(|&v| (last, v)));
                }
            }
            // Positions per value must be in order.
            uses.sort_by_key(|&(k, _)| k);
        }
        // Count, lay the ranges out, then place the positions in order.
        for &(_, v) in &uses {
            let val = &mut self.vals[v.index()];
            if val.uses_block != block {
                val.uses_block = block;
                val.uses_start = NONE;
                val.uses_end = 0;
            }
            val.uses_end += 1;
        }
        let mut next = 0;
        for &(_, v) in &uses {
            let val = &mut self.vals[v.index()];
            if val.uses_start == NONE {
                // `uses_end` held the count; it becomes the cursor.
                val.uses_start = next;
                next += val.uses_end;
                val.uses_end = val.uses_start;
            }
        }
        self.positions.clear();
        self.positions.resize(next as usize, 0);
        for &(k, v) in &uses {
            let val = &mut self.vals[v.index()];
            self.positions[val.uses_end as usize] = k;
            val.uses_end += 1;
        }
        self.block_uses = uses;
    }

    /// The first use of `v` in the current block at or after `pos`.
    fn next_use(&self, v: Value, pos: u32) -> Option<u32> {
        let val = self.vals.get(v.index())?;
        if val.uses_block != self.uses_block {
            return None;
        }
        let p = &self.positions[val.uses_start as usize..val.uses_end as usize];
        let k = p.partition_point(|&q| q < pos);
        p.get(k).copied()
    }

    // ----- blocks -----

    fn block(&mut self, b: Block, live: &Liveness, steps: &[Step<O>]) -> Result<(), RaError> {
        let bi = b.index() as u32;
        let (first, end) = self.block_steps[b.index()];
        let steps = &steps[first as usize..end as usize];
        let live_out = live.live_out(b);
        for &v in live_out {
            self.vals[v.index()].out_stamp = bi;
        }
        self.gather_uses(b, steps);
        self.enter(b, steps, live.live_in(b))?;
        let phis = steps.iter().take_while(|x| x.op.is_phi()).count();
        for (pos, step) in steps.iter().enumerate().skip(phis) {
            self.instruction(b, step, pos as u32)?;
        }
        // The state at the end, before the terminator (which has run its
        // operands already and defines nothing).
        let places = self.snapshot(live_out);
        // Leave the register file empty for the next block: what is still
        // in a register is live out.
        for p in &places {
            if p.unit.is_some() {
                self.release(p.value);
            }
        }
        debug_assert!(self.owner.iter().all(Option::is_none));
        self.exit[b.index()] = Some(places);
        self.done[b.index()] = true;
        // Back edges: successors already entered need their copies now.
        let mut waiting = 0;
        for k in 0..self.cfg.succs(b).len() {
            let succs = self.cfg.succs(b);
            let s = succs[k];
            if succs[..k].contains(&s) {
                continue;
            }
            if self.entry[s.index()].is_none() {
                waiting += 1;
            } else if self.is_join(s) {
                self.fixup(b, s)?;
                self.preds_left[s.index()] -= 1;
                if self.preds_left[s.index()] == 0 {
                    // Every predecessor has made its copies.
                    self.entry_done(s);
                    self.finish_join(s);
                }
            }
        }
        // Snapshots are dropped once nothing reads them, so the memory in
        // use follows the live part of the program, not its size.
        self.succs_left[b.index()] = waiting;
        if waiting == 0 {
            self.drop_exit(b);
        }
        Ok(())
    }

    /// The places of `values` now, in a list from the pool of dropped
    /// snapshots (one allocation per block would be scattered over the
    /// heap).
    fn snapshot(&mut self, values: &[Value]) -> Vec<Place> {
        debug_assert!(values.is_sorted(), "liveness lists are sorted by value");
        let mut places = self.pool.pop().unwrap_or_default();
        places.clear();
        places.extend(values.iter().map(|&v| {
            let val = self.val(v);
            Place {
                value: v,
                name: val.name,
                unit: val.unit(),
                in_memory: val.in_mem,
            }
        }));
        places
    }

    /// Nothing reads `b`'s exit snapshot any more.
    fn drop_exit(&mut self, b: Block) {
        if let Some(places) = self.exit[b.index()].take() {
            self.pool.push(places);
        }
    }

    /// `b` was entered and no predecessor needs its entry snapshot.
    fn entry_done(&mut self, b: Block) {
        if let Some(places) = self.entry[b.index()].replace(Vec::new()) {
            self.pool.push(places);
        }
    }

    /// Put the values of `live_in` back where `from` (a predecessor's
    /// exit) has them. Both lists are sorted by value: walk them together.
    fn restore_live_in(&mut self, from: &[Place], live_in: &[Value]) {
        let mut k = 0;
        for x in from {
            while k < live_in.len() && live_in[k] < x.value {
                k += 1;
            }
            if live_in.get(k) == Some(&x.value) {
                self.restore_one(x);
            }
        }
    }

    fn restore_one(&mut self, p: &Place) {
        let val = &mut self.vals[p.value.index()];
        val.name = p.name;
        val.in_mem = p.in_memory;
        val.unit = NONE;
        if let Some(u) = p.unit {
            self.occupy(p.value, u);
        }
    }

    /// More than one predecessor, or phis.
    fn is_join(&self, b: Block) -> bool {
        self.joins[b.index()]
    }

    /// Set up the state at the top of `b`: live-ins and phis placed.
    fn enter(&mut self, b: Block, steps: &[Step<O>], live_in: &[Value]) -> Result<(), RaError> {
        self.enter_with(b, steps, live_in)?;
        let mut waiting = 0;
        for k in 0..self.cfg.preds(b).len() {
            let preds = self.cfg.preds(b);
            let p = preds[k];
            if preds[..k].contains(&p) {
                continue;
            }
            if !self.done[p.index()] {
                waiting += 1;
                continue;
            }
            self.succs_left[p.index()] -= 1;
            if self.succs_left[p.index()] == 0 {
                self.drop_exit(p);
            }
        }
        self.preds_left[b.index()] = waiting;
        if waiting == 0 {
            // Only joins with a predecessor still to come keep their entry
            // state; the others just note that they were entered.
            self.entry_done(b);
            self.finish_join(b);
        }
        Ok(())
    }

    fn enter_with(
        &mut self,
        b: Block,
        steps: &[Step<O>],
        live_in: &[Value],
    ) -> Result<(), RaError> {
        if !self.is_join(b) {
            if let Some(&p) = self.cfg.preds(b).first() {
                let exit = self.exit[p.index()].take().unwrap_or_default();
                self.restore_live_in(&exit, live_in);
                self.exit[p.index()] = Some(exit);
            }
            self.entry[b.index()] = Some(Vec::new());
            return Ok(());
        }
        let cfg = Rc::clone(&self.cfg);
        let preds = cfg.preds(b);
        let first = preds.iter().copied().find(|p| self.done[p.index()]);
        let from = first
            .and_then(|p| self.exit[p.index()].take())
            .unwrap_or_default();
        let all_done = preds.iter().all(|p| self.done[p.index()]);
        self.restore_live_in(&from, live_in);
        // Original phis: each needs a register, taken from live-ins that
        // are used furthest away when the file is full.
        let nphis = steps.iter().take_while(|x| x.op.is_phi()).count();
        let phis = &steps[..nphis];
        let mut placed: Vec<Value> = Vec::with_capacity(phis.len());
        for &Step { inst: i, .. } in phis {
            let r = self.s.inst(i).result.unwrap_or(Value(0));
            let (class, units) = (self.val(r).class, self.units_of(r));
            // Prefer the register its first predecessor's operand is in.
            let hint = first.and_then(|p| {
                let d = self.s.inst(i);
                let k = d.targets.iter().position(|&t| t == p)?;
                let arg = d.args[k];
                place_of(&from, arg).and_then(|x| x.unit)
            });
            let preferred = self
                .preferred_free(r)
                .or_else(|| hint.filter(|&u| self.is_free(u, units, &[])));
            let unit = match preferred {
                Some(u) => Some(u),
                None => loop {
                    if let Some(u) = self.find_free(class, units, &[]) {
                        break Some(u);
                    }
                    // Live-ins leave registers by being stored on every
                    // incoming edge (the fix-up copies do it); when only
                    // phis are left, this phi's value stays in memory.
                    let Some(victim) = self.victim(class, &placed, 0) else {
                        break None;
                    };
                    self.vals[victim.index()].in_mem = true;
                    self.release(victim);
                },
            };
            let Some(unit) = unit else {
                self.memory_phi(b, i, r);
                continue;
            };
            self.occupy(r, unit);
            self.affinity.placed(r, unit);
            self.s.set_value_reg(r, Some(self.to_reg(unit)));
            self.push_original(b, i);
            placed.push(r);
        }
        if let Some(p) = first {
            self.exit[p.index()] = Some(from);
        }
        // Values entering in a register get an allocator phi naming them,
        // unless every predecessor is done and agrees already. The phi is
        // only a placeholder until the join is complete.
        let mut entry = self.snapshot(live_in);
        let mut merges = std::mem::take(&mut self.merges[b.index()]);
        for p in entry.iter_mut() {
            let Some(unit) = p.unit else { continue };
            let agree = all_done
                && preds.iter().all(|q| {
                    self.exit[q.index()].as_ref().is_some_and(|e| {
                        place_of(e, p.value)
                            .is_some_and(|x| x.name == p.name && x.unit == Some(unit))
                    })
                });
            if agree {
                continue;
            }
            let id = self.merge_names.len() as u32;
            let name = Value(PENDING + id);
            self.merge_names.push(name);
            merges.list.push((p.value, id, unit));
            merges.args.extend(std::iter::repeat_n(p.name, preds.len()));
            p.name = name;
            self.vals[p.value.index()].name = name;
        }
        self.merges[b.index()] = merges;
        self.entry[b.index()] = Some(entry);
        // Phi results nobody reads free their registers at once.
        for phi in phis {
            let r = phi.result.unwrap_or(Value(0));
            if self.next_use(r, 0).is_none() && self.val(r).out_stamp != b.index() as u32 {
                self.release(r);
            }
        }
        for &p in preds {
            if self.done[p.index()] {
                self.fixup(p, b)?;
            }
        }
        Ok(())
    }

    /// Original phi `i` of `b` (result `r`) gets no register: its value
    /// enters in its spill slot, and the phi leaves the block.
    fn memory_phi(&mut self, b: Block, phi: Inst, r: Value) {
        let slot = self.slot(r);
        self.vals[r.index()].in_mem = true;
        self.list_of(b);
        self.alloc.memory_phis.push(MemoryPhi {
            block: b,
            phi,
            slot,
        });
    }

    /// Values that keep their register while live: register groups (their
    /// copy and spill are not target facts) and address values (never
    /// spilled).
    fn stays(&self, v: Value) -> bool {
        self.val(v).stays
    }

    /// The live value (not in `pinned`) in `class`'s file whose next use
    /// is furthest from `pos`.
    fn victim(&self, class: RegClass, pinned: &[Value], pos: u32) -> Option<Value> {
        let (lo, hi) = self.file_range(class);
        let mut best: Option<(u32, Value)> = None;
        let mut u = lo;
        while u < hi {
            if let Some(v) = self.owner[u as usize] {
                let n = self.units_of(v);
                if self.val(v).unit != u {
                    // A lane of a vector split apart (see `Val::split_apart`).
                    u += 1;
                    continue;
                }
                if !pinned.contains(&v) && !self.stays(v) {
                    let d = self.next_use(v, pos).unwrap_or(FAR);
                    if best.is_none_or(|(bd, _)| d > bd) {
                        best = Some((d, v));
                    }
                }
                u += n.max(1);
            } else {
                u += 1;
            }
        }
        best.map(|b| b.1)
    }

    /// Spill `v` out of its register (storing it first if needed) at the
    /// end of `b`'s list so far.
    fn spill(&mut self, b: Block, v: Value) {
        if !self.val(v).in_mem {
            let slot = self.slot(v);
            let i = self.store_inst(v, self.val(v).name, slot);
            self.push_new(b, i);
            self.vals[v.index()].in_mem = true;
        }
        self.release(v);
    }

    /// A window of `n` units for `class`, freeing one by moving or spilling
    /// live values (never those in `pinned`).
    fn make_room(
        &mut self,
        b: Block,
        class: RegClass,
        n: u32,
        pinned: &[Value],
        pos: u32,
    ) -> Result<u32, RaError> {
        loop {
            if let Some(u) = self.find_free(class, n, &[]) {
                return Ok(u);
            }
            if self.free_units(class) >= n {
                // Enough units, but scattered: empty the window holding the
                // fewest values by moving them elsewhere.
                if let Some(u) = self.evict_window(b, class, n) {
                    return Ok(u);
                }
            }
            let victim = self.victim(class, pinned, pos).ok_or_else(|| {
                let file = &self.t.files()[class.file.index()];
                RaError::Unsupported(match file.kind {
                    FileKind::Address => format!(
                        "more values in address file {} than it holds at once: address values \
                         are not spilled, and rematerialising one is not implemented (the \
                         scheduler keeps one live at a time)",
                        file.name
                    ),
                    _ => format!(
                        "an instruction needs more than the {} units of file {}",
                        self.limit[class.file.index()],
                        file.name
                    ),
                })
            })?;
            self.spill(b, victim);
        }
    }

    /// Move the values out of the cheapest aligned window of `n` units
    /// into free units elsewhere; `None` if no window can be emptied so.
    /// Operands of the current instruction may move (they are renamed
    /// after), groups may not.
    fn evict_window(&mut self, b: Block, class: RegClass, n: u32) -> Option<u32> {
        let (lo, hi) = self.file_range(class);
        let align = class.align.max(1) as u32;
        let mut best: Option<(u32, u32)> = None;
        let mut u = lo;
        while u + n <= hi {
            let mut cost = 0;
            let mut ok = !self.holds_temp(u, n);
            for w in u..u + n {
                if let Some(v) = self.owner[w as usize] {
                    if self.stays(v) {
                        ok = false;
                        break;
                    }
                    cost += 1;
                }
            }
            if ok && best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, u));
            }
            u += align;
        }
        let (_, start) = best?;
        let mut movers: Vec<Value> = (start..start + n)
            .filter_map(|w| self.owner[w as usize])
            .collect();
        movers.dedup();
        // Find new homes first, so a failure changes nothing.
        let mut homes = Vec::with_capacity(movers.len());
        let mut avoid = self.dying.clone();
        avoid.push((start, n));
        for &v in &movers {
            let info = *self.val(v);
            let home = self.find_free(self.home_class(v), info.units as u32, &avoid)?;
            avoid.push((home, info.units as u32));
            homes.push(home);
        }
        for (&v, &home) in movers.iter().zip(&homes) {
            self.move_value(b, v, home);
        }
        Some(start)
    }

    /// The class a live value moved now needs: its own, aligned as the
    /// current instruction reads it.
    fn home_class(&self, v: Value) -> RegClass {
        let class = self.val(v).class;
        match self.operand_aligns.iter().find(|(o, _)| *o == v) {
            Some(&(_, align)) => RegClass {
                align: class.align.max(align),
                ..class
            },
            None => class,
        }
    }

    /// Copy live `v` to `home`, renaming it there.
    fn move_value(&mut self, b: Block, v: Value, home: u32) {
        let from = self.val(v).name;
        self.release(v);
        let i = self.copy_inst(from, v, home);
        self.push_new(b, i);
        self.vals[v.index()].name = self.s.inst(i).result.unwrap_or(Value(0));
        self.occupy(v, home);
    }

    /// Move live `o` to a free place outside `avoid`; false if none.
    fn relocate(&mut self, b: Block, o: Value, avoid: (u32, u32)) -> bool {
        let info = *self.val(o);
        if self.stays(o) {
            return false;
        }
        match self.find_free(self.home_class(o), info.units as u32, &[avoid]) {
            Some(home) => {
                self.move_value(b, o, home);
                true
            }
            None => false,
        }
    }

    /// Put `v` in a register (filling it) if it is not in one.
    fn ensure_in_reg(
        &mut self,
        b: Block,
        v: Value,
        pinned: &[Value],
        pos: u32,
    ) -> Result<(), RaError> {
        if self.unit_of(v).is_some() {
            return Ok(());
        }
        let info = *self.val(v);
        let u = self.make_room(b, info.class, info.units as u32, pinned, pos)?;
        let slot = self.slot(v);
        let i = self.fill_inst(v, slot, u);
        self.push_new(b, i);
        let r = self.s.inst(i).result.unwrap_or(Value(0));
        self.vals[v.index()].name = r;
        self.occupy(v, u);
        Ok(())
    }

    /// Move `v` (in a register) to `unit`, moving whatever is there away.
    fn move_to(&mut self, b: Block, v: Value, unit: u32, pinned: &[Value]) -> Result<(), RaError> {
        if self.unit_of(v) == Some(unit) {
            return Ok(());
        }
        let n = self.units_of(v);
        let occupants: Vec<Value> = (unit..unit + n)
            .filter_map(|w| self.owner[w as usize])
            .filter(|&o| o != v)
            .collect();
        for o in occupants {
            if self.unit_of(o).is_none() || self.relocate(b, o, (unit, n)) {
                continue;
            }
            if pinned.contains(&o) {
                return Err(RaError::Unsupported(
                    "two operands need the same fixed register".into(),
                ));
            }
            self.spill(b, o);
        }
        self.move_value(b, v, unit);
        Ok(())
    }

    fn instruction(&mut self, b: Block, step: &Step<O>, pos: u32) -> Result<(), RaError> {
        let mut operands = std::mem::take(&mut self.operands);
        operands.clear();
        operands.extend_from_slice(step.operands(&self.alloc.original_operands.values));
        let (i, op, nargs, result) = (step.inst, step.op, step.nargs as usize, step.result);
        let done = self.instruction_with(b, i, pos, op, &operands, nargs, result);
        self.operands = operands;
        done
    }

    #[allow(clippy::too_many_arguments)]
    fn instruction_with(
        &mut self,
        b: Block,
        i: Inst,
        pos: u32,
        op: Op<O>,
        operands: &[Value],
        nargs: usize,
        result: Option<Value>,
    ) -> Result<(), RaError> {
        // Operands in registers of their class; none of them may be
        // spilled to make room for another.
        let pinned = operands;
        self.operand_aligns.clear();
        for (k, &v) in operands.iter().enumerate() {
            let (want, have) = (
                self.t.operand_class(&op, k, self.val(v).ty),
                self.val(v).class,
            );
            if want.file == have.file && want.align > have.align {
                self.operand_aligns.push((v, want.align));
            }
        }
        for &v in operands {
            self.ensure_in_reg(b, v, pinned, pos)?;
        }
        // Operands read in another class than their own: copied there
        // for this instruction only.
        let mut renamed: Vec<(usize, Value)> = Vec::new();
        for (k, &v) in operands.iter().enumerate() {
            let ty = self.val(v).ty;
            let want = self.t.operand_class(&op, k, ty);
            let have = self.val(v).class;
            if want.file != have.file || want.lane_units != have.lane_units {
                let Some(copy) = self.t.copy_between(have, want, ty) else {
                    let files = self.t.files();
                    return Err(RaError::Unsupported(format!(
                        "operand {k} of {} needs a {} register ({} units per lane) but its \
                         value is in {} ({} units per lane): the target facts name no copy \
                         between these register classes",
                        op.name(),
                        files[want.file.index()].name,
                        want.lane_units,
                        files[have.file.index()].name,
                        have.lane_units
                    )));
                };
                let n = want.units(ty);
                let u = self.make_room(b, want, n, pinned, pos)?;
                // Read the name after making room, which may move `v`.
                let name = self.val(v).name;
                let i = self.new_def(Op::Opcode(copy), (&[name], None), v, u, Edit::Copy);
                self.alloc.copies += 1;
                self.push_new(b, i);
                let f = want.file.index();
                self.high[f] = self.high[f].max(u + n);
                self.temps.push((u, n));
                renamed.push((k, self.s.inst(i).result.unwrap_or(Value(0))));
                continue;
            }
            let unit = self.unit_of(v).unwrap_or(0);
            let aligned = (unit - self.base[want.file.index()]) % want.align.max(1) as u32 == 0;
            if !aligned {
                let u = self.make_room(b, want, self.units_of(v), pinned, pos)?;
                self.move_to(b, v, u, pinned)?;
            }
        }
        // A tied operand's register becomes the result's: one that lives
        // on (or is read twice here) is copied first, and the copy dies.
        let bi = b.index() as u32;
        let tied_unit = match (result, self.t.tied_operand(&op)) {
            (Some(r), Some(k)) if k < nargs => {
                Some(self.tie(b, pos, operands, k, r, pinned, &mut renamed)?)
            }
            _ => None,
        };
        // A register group is formed where its result goes: the collect's
        // operands are moved or copied into their slots first.
        let group_at = match (op, result) {
            (Op::Collect, Some(r)) => {
                Some(self.form_group(b, pos, &operands[..nargs], r, &mut renamed)?)
            }
            _ => None,
        };
        if let Op::Output { index } = op
            && let Some(&v) = operands.first()
        {
            if let Some(fixed) = self.t.output_register(index, self.val(v).ty) {
                let unit = self.base[fixed.file.index()] + fixed.unit as u32;
                self.outside_base(unit, self.units_of(v))?;
                self.move_to(b, v, unit, pinned)?;
            }
            // Read again when the shader ends (see `gather_uses`): from
            // here on it is neither moved nor spilled.
            if pos < self.last_output {
                self.vals[v.index()].stays = true;
                self.held_outputs.push(v);
            }
        }
        // A split's result would like its lane's register (free when the
        // vector dies here, or given to it when the vector is split apart).
        let lane_at = match (op, operands.first(), result) {
            (Op::Split { lane }, Some(&v), Some(r))
                if self.val(v).class.file == self.val(r).class.file =>
            {
                let n = self.units_of(r);
                self.unit_of(v)
                    .map(|u| u + u32::from(lane) * n)
                    .map(|u| (u, self.val(v).split_apart && self.held_by(u, n, v)))
            }
            _ => None,
        };
        // Operands dying here free their registers for the result, and so
        // do the copies made for this instruction.
        self.dying.append(&mut self.temps);
        let mut dead = std::mem::take(&mut self.dead);
        dead.clear();
        let dies = |v: Value| self.next_use(v, pos + 1).is_none() && self.val(v).out_stamp != bi;
        dead.extend(operands.iter().copied().filter(|&v| dies(v)));
        if pos == self.last_output {
            dead.extend(self.held_outputs.iter().copied().filter(|&v| dies(v)));
        }
        dead.sort_unstable();
        dead.dedup();
        let is_terminator = op.is_terminator();
        if !is_terminator {
            for &v in &dead {
                if let Some(u) = self.unit_of(v) {
                    self.dying.push((u, self.units_of(v)));
                }
                self.release(v);
            }
        }
        if let Some(r) = result {
            let info = *self.val(r);
            let fixed = match op {
                Op::Input { index } => self.t.input_register(index, info.ty),
                _ => None,
            };
            let unit = match fixed {
                Some(PhysReg { file, unit }) => {
                    let u = self.base[file.index()] + unit as u32;
                    self.outside_base(u, info.units as u32)?;
                    let occupants: Vec<Value> = (u..u + info.units as u32)
                        .filter_map(|w| self.owner[w as usize])
                        .collect();
                    for o in occupants {
                        if self.unit_of(o).is_some() && !self.relocate(b, o, (u, info.units as u32))
                        {
                            self.spill(b, o);
                        }
                    }
                    u
                }
                None if tied_unit.is_some() => tied_unit.unwrap_or(0),
                None => {
                    let n = info.units as u32;
                    let lane = lane_at
                        .filter(|&(u, given)| {
                            if given {
                                let lo = self.file_range(info.class).0;
                                (u - lo) % info.class.align.max(1) as u32 == 0
                            } else {
                                self.fits(info.class, u, n)
                            }
                        })
                        .map(|(u, _)| u);
                    match group_at
                        .or(lane)
                        .or_else(|| self.preferred_free(r))
                        .or_else(|| self.find_free(info.class, n, &[]))
                    {
                        Some(u) => u,
                        None => self.make_room(b, info.class, n, operands, pos)?,
                    }
                }
            };
            self.occupy(r, unit);
            self.affinity.placed(r, unit);
            self.s.set_value_reg(r, Some(self.to_reg(unit)));
        }
        self.dying.clear();
        self.operand_aligns.clear();
        // Rewrite the operands to their current names (moves above may
        // have renamed live ones): most keep their names, and their
        // instruction is not touched.
        if !renamed.is_empty() || operands.iter().any(|v| self.vals[v.index()].name != *v) {
            let vals = &self.vals;
            let data = self.s.inst_mut(i);
            let mut pending = false;
            for (a, v) in data.args.iter_mut().zip(operands) {
                *a = vals[v.index()].name;
                pending |= is_pending(*a);
            }
            if let Some(a) = data.address.as_mut() {
                *a = vals[operands[nargs].index()].name;
                pending |= is_pending(*a);
            }
            for (k, name) in renamed {
                pending |= is_pending(name);
                match data.args.get_mut(k) {
                    Some(a) => *a = name,
                    None => data.address = Some(name),
                }
            }
            if pending {
                self.reads_pending.push(i);
            }
        }
        self.push_original(b, i);
        if let Some(r) = result
            && self.next_use(r, pos + 1).is_none()
            && self.val(r).out_stamp != bi
        {
            self.release(r);
        }
        if is_terminator {
            for &v in &dead {
                self.release(v);
            }
        }
        self.dead = dead;
        Ok(())
    }

    /// The unit the result `r` of an instruction at `pos` takes for its
    /// tied operand `k`: the operand's own when it dies here and is read
    /// once, else a copy's made now (it dies here; the name read goes to
    /// `renamed`).
    #[allow(clippy::too_many_arguments)]
    fn tie(
        &mut self,
        b: Block,
        pos: u32,
        operands: &[Value],
        k: usize,
        r: Value,
        pinned: &[Value],
        renamed: &mut Vec<(usize, Value)>,
    ) -> Result<u32, RaError> {
        let v = operands[k];
        let (have, want) = (*self.val(v), *self.val(r));
        if have.class != want.class || have.units != want.units {
            return Err(RaError::Unsupported(
                "a tied operand in another register class than its result".into(),
            ));
        }
        let bi = b.index() as u32;
        let dies = self.next_use(v, pos + 1).is_none()
            && have.out_stamp != bi
            && operands.iter().filter(|&&o| o == v).count() == 1
            && !renamed.iter().any(|&(j, _)| j == k);
        if dies && let Some(u) = self.unit_of(v) {
            return Ok(u);
        }
        let n = have.units as u32;
        let u = self.make_room(b, have.class, n, pinned, pos)?;
        let name = renamed
            .iter()
            .find(|&&(j, _)| j == k)
            .map_or(self.val(v).name, |&(_, c)| c);
        let copy = self.t.copy(have.ty);
        let i = self.new_def(Op::Opcode(copy), (&[name], None), v, u, Edit::Copy);
        self.alloc.copies += 1;
        self.push_new(b, i);
        let f = have.class.file.index();
        self.high[f] = self.high[f].max(u + n);
        self.temps.push((u, n));
        renamed.retain(|&(j, _)| j != k);
        renamed.push((k, self.s.inst(i).result.unwrap_or(Value(0))));
        Ok(u)
    }

    /// Place a collect's operands where its group `r` goes: the aligned
    /// window that costs the fewest moves (operands dying here already in
    /// their slots cost none; other values in it move out), then one
    /// parallel copy into the slots. An operand dying here moves; one that
    /// lives on (in a later group too) or is read twice is copied. Returns
    /// the window; the names the collect reads go to `renamed`.
    fn form_group(
        &mut self,
        b: Block,
        pos: u32,
        args: &[Value],
        r: Value,
        renamed: &mut Vec<(usize, Value)>,
    ) -> Result<u32, RaError> {
        let info = *self.val(r);
        let n = info.units as u32;
        let bi = b.index() as u32;
        let dying: Vec<bool> = args
            .iter()
            .map(|&v| self.next_use(v, pos + 1).is_none() && self.val(v).out_stamp != bi)
            .collect();
        let stays_put = |v: Value| args.iter().zip(&dying).any(|(&a, &d)| a == v && d);
        let file = info.class.file.index();
        if n > self.limit[file] {
            return Err(RaError::Unsupported(format!(
                "a register group of {n} units needs more than the {} units of file {}",
                self.limit[file],
                self.t.files()[file].name
            )));
        }
        let start = loop {
            let preferred = self
                .affinity
                .preferred(r)
                .and_then(|u| u32::try_from(u).ok());
            let Some(start) = self.group_window(info.class, n, args, &dying, preferred) else {
                return Err(RaError::Unsupported(format!(
                    "no aligned window of {n} units in file {} for a register group: every one \
                     holds another group or an address value",
                    self.t.files()[info.class.file.index()].name
                )));
            };
            // Empty the window of everything but operands dying here.
            let occupant = (start..start + n)
                .filter_map(|w| self.owner[w as usize])
                .find(|&v| !stays_put(v));
            let Some(o) = occupant else {
                break start;
            };
            if self.relocate(b, o, (start, n)) {
                continue;
            }
            if !args.contains(&o) {
                self.spill(b, o);
                continue;
            }
            // An operand that lives on and no free register outside the
            // window to move it to: spill another value to make one.
            let victim = self.victim(info.class, args, pos).ok_or_else(|| {
                RaError::Unsupported(format!(
                    "a register group of {n} units and its operands need more than the {} units \
                     of file {}",
                    self.limit[info.class.file.index()],
                    self.t.files()[info.class.file.index()].name
                ))
            })?;
            self.spill(b, victim);
        };
        let mut moves = Vec::with_capacity(args.len());
        let mut at = start;
        for (k, &a) in args.iter().enumerate() {
            let v = self.val(a);
            moves.push(Move {
                value: a,
                name: v.name,
                src: v.unit,
                dst: at,
                phi: PhiArg::Group(k),
            });
            at += v.units as u32;
        }
        self.group_args.clear();
        self.group_args.resize(args.len(), Value(0));
        let mut out = Vec::new();
        self.sequentialise(moves, &mut out, true)?;
        for i in out {
            self.push_new(b, i);
        }
        renamed.extend(self.group_args.iter().copied().enumerate());
        Ok(start)
    }

    /// The aligned window of `n` units for a group of `args` that needs
    /// the fewest moves, or `None` if each holds a value that stays
    /// (another group, an address value) or a temporary copy.
    fn group_window(
        &self,
        class: RegClass,
        n: u32,
        args: &[Value],
        dying: &[bool],
        preferred: Option<u32>,
    ) -> Option<u32> {
        let (lo, hi) = self.file_range(class);
        let align = class.align.max(1) as u32;
        let mut best: Option<(u32, u32)> = None;
        // The group's affinity window first, so it wins a tie.
        let preferred = preferred.filter(|&u| u >= lo && u + n <= hi && (u - lo) % align == 0);
        let windows = preferred
            .into_iter()
            .chain((lo..(hi + 1).saturating_sub(n)).step_by(align as usize));
        'window: for start in windows {
            if self.holds_temp(start, n) {
                continue;
            }
            let mut cost = 0;
            let mut last = None;
            for w in start..start + n {
                let Some(v) = self.owner[w as usize] else {
                    continue;
                };
                if last == Some(v) {
                    continue;
                }
                last = Some(v);
                if self.stays(v) {
                    continue 'window;
                }
                cost += match args.iter().position(|&a| a == v) {
                    Some(k) if dying[k] => 0,
                    // Out of the window and copied back in.
                    Some(_) => 2,
                    None => 1,
                };
            }
            let mut at = start;
            for (k, &a) in args.iter().enumerate() {
                if !(dying[k] && self.unit_of(a) == Some(at)) {
                    cost += 1;
                }
                at += self.units_of(a);
            }
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, start));
            }
        }
        best.map(|(_, u)| u)
    }

    /// Make the end of `p` (a predecessor of join `s`) agree with `s`'s
    /// entry: stores, a parallel copy, fills, and the phi operands.
    fn fixup(&mut self, p: Block, s: Block) -> Result<(), RaError> {
        let mut exit = self.exit[p.index()].take().unwrap_or_default();
        let entry = self.entry[s.index()].take().unwrap_or_default();
        let fixed = self.fixup_with(p, s, &mut exit, &entry);
        self.exit[p.index()] = Some(exit);
        self.entry[s.index()] = Some(entry);
        fixed
    }

    fn fixup_with(
        &mut self,
        p: Block,
        s: Block,
        exit: &mut [Place],
        entry: &[Place],
    ) -> Result<(), RaError> {
        let phis: Vec<Inst> = self
            .s
            .block_insts(s)
            .iter()
            .copied()
            .take_while(|&i| self.s.inst(i).op.is_phi())
            .collect();
        // Phis kept in memory first, while the registers are as `p` left
        // them: their operands go to the phis' slots. An operand that is
        // itself one of these phis, in memory only, is read from a copy of
        // its slot, as the slot may be written first.
        let mut stores: Vec<Inst> = Vec::new();
        let mut moved: Vec<(Value, SpillSlot)> = Vec::new();
        for &i in &phis {
            let r = self.s.inst(i).result.unwrap_or(Value(0));
            let memory = i.0 < self.alloc.first_new_inst && self.s.value_reg(r).is_none();
            if memory && place_of(exit, r).is_some_and(|x| x.unit.is_none()) {
                let (from, to) = (self.slot(r), self.fresh_slot(self.val(r).ty));
                self.copy_through_register(exit, r, from, to, &mut stores)?;
                moved.push((r, to));
            }
        }
        for &i in &phis {
            let d = self.s.inst(i);
            let (Some(k), Some(r)) = (d.targets.iter().position(|&t| t == p), d.result) else {
                continue;
            };
            if i.0 < self.alloc.first_new_inst && self.s.value_reg(r).is_none() {
                let arg = self.alloc.original_operands.of(i)[k];
                let slot = self.slot(r);
                let have = *phi_operand_place(exit, arg, p)?;
                match have.unit {
                    Some(_) => stores.push(self.store_inst(arg, have.name, slot)),
                    None => {
                        let from = slot_at_edge(&moved, arg).unwrap_or_else(|| self.slot(arg));
                        self.copy_through_register(exit, arg, from, slot, &mut stores)?;
                    }
                }
            }
        }
        let mut moves: Vec<Move> = Vec::new();
        let mut fills: Vec<(Value, u32, PhiArg)> = Vec::new();
        let preds = self.cfg.preds(s);
        let (npreds, k) = (preds.len(), preds.iter().position(|&q| q == p).unwrap_or(0));
        // Merged live-ins. The entry, the exit and the join's allocator
        // phis are all sorted by value: walk them together.
        let (mut at_exit, mut at_merge) = (0, 0);
        for want in entry {
            while exit.get(at_exit).is_some_and(|x| x.value < want.value) {
                at_exit += 1;
            }
            let Some(&have) = exit.get(at_exit).filter(|x| x.value == want.value) else {
                continue;
            };
            if want.in_memory && !have.in_memory {
                let slot = self.slot(want.value);
                stores.push(self.store_inst(want.value, have.name, slot));
            }
            if let Some(unit) = want.unit {
                let list = &self.merges[s.index()].list;
                while list.get(at_merge).is_some_and(|m| m.0 < want.value) {
                    at_merge += 1;
                }
                let phi = match list.get(at_merge) {
                    Some(m) if m.0 == want.value => {
                        PhiArg::Merge(s, (at_merge * npreds + k) as u32)
                    }
                    _ => PhiArg::None,
                };
                if have.unit != Some(unit) && self.val(want.value).ty.is_vector() {
                    return Err(group_move(self.val(want.value).ty, s));
                }
                match have.unit {
                    Some(src) => moves.push(Move {
                        value: want.value,
                        name: have.name,
                        src,
                        dst: unit,
                        phi,
                    }),
                    None => fills.push((want.value, unit, phi)),
                }
            }
        }
        // Original phis in registers.
        for i in phis {
            let d = self.s.inst(i);
            if i.0 >= self.alloc.first_new_inst {
                continue;
            }
            let Some(k) = d.targets.iter().position(|&t| t == p) else {
                continue;
            };
            let arg = self.alloc.original_operands.of(i)[k];
            let r = d.result.unwrap_or(Value(0));
            let Some(reg) = self.s.value_reg(r) else {
                continue;
            };
            let dst = self.base[reg.file as usize] + reg.unit as u32;
            let have = *phi_operand_place(exit, arg, p)?;
            match have.unit {
                Some(src) => moves.push(Move {
                    value: arg,
                    name: have.name,
                    src,
                    dst,
                    phi: PhiArg::Phi(i, k),
                }),
                None => fills.push((arg, dst, PhiArg::Phi(i, k))),
            }
        }
        let mut out: Vec<Inst> = stores;
        self.sequentialise(moves, &mut out, false)?;
        for (v, dst, phi) in fills {
            let slot = slot_at_edge(&moved, v).unwrap_or_else(|| self.slot(v));
            let i = self.fill_inst(v, slot, dst);
            out.push(i);
            let r = self.s.inst(i).result.unwrap_or(Value(0));
            self.set_phi_arg(phi, r);
        }
        // Before `p`'s terminator.
        if !out.is_empty() {
            let list = self.list_of(p);
            let at = list.len().saturating_sub(1);
            list.splice(at..at, out);
        }
        Ok(())
    }

    /// Copy original value `v` from scratch slot `from` to slot `to` at the
    /// end of a block whose places there are `exit`, through a register: a
    /// free one, or else one whose values are stored (if they are not
    /// already) and filled back after under new names, which `exit` then
    /// lists.
    fn copy_through_register(
        &mut self,
        exit: &mut [Place],
        v: Value,
        from: SpillSlot,
        to: SpillSlot,
        out: &mut Vec<Inst>,
    ) -> Result<(), RaError> {
        let info = *self.val(v);
        let n = info.units as u32;
        let taken: Vec<(u32, u32)> = exit
            .iter()
            .filter_map(|x| Some((x.unit?, self.units_of(x.value))))
            .collect();
        let overlaps = |u: u32, &(a, m): &(u32, u32)| u < a + m && a < u + n;
        let (lo, hi) = self.file_range(info.class);
        let align = info.class.align.max(1) as usize;
        let windows = || (lo..hi.saturating_sub(n - 1)).step_by(align);
        // Groups never leave their registers.
        let groups: Vec<(u32, u32)> = exit
            .iter()
            .filter(|x| self.stays(x.value))
            .filter_map(|x| Some((x.unit?, self.units_of(x.value))))
            .collect();
        let window = windows()
            .find(|&u| !taken.iter().any(|t| overlaps(u, t)))
            .or_else(|| windows().find(|&u| !groups.iter().any(|t| overlaps(u, t))))
            .ok_or_else(|| {
                RaError::Unsupported(format!(
                    "a {} value does not fit in file {} ({} units)",
                    info.ty,
                    self.t.files()[info.class.file.index()].name,
                    self.limit[info.class.file.index()]
                ))
            })?;
        let evicted: Vec<usize> = (0..exit.len())
            .filter(|&e| {
                exit[e]
                    .unit
                    .is_some_and(|u| overlaps(window, &(u, self.units_of(exit[e].value))))
            })
            .collect();
        // A phi kept in memory has a slot this edge may be writing: its
        // value waits in a slot of its own.
        let mut parked = Vec::with_capacity(evicted.len());
        for &e in &evicted {
            let x = exit[e];
            let at = match self.s.value_reg(x.value) {
                None => self.fresh_slot(self.val(x.value).ty),
                Some(_) => self.slot(x.value),
            };
            if !x.in_memory || at != self.slot(x.value) {
                out.push(self.store_inst(x.value, x.name, at));
            }
            exit[e].in_memory = true;
            parked.push(at);
        }
        let fill = self.fill_inst(v, from, window);
        out.push(fill);
        let name = self.s.inst(fill).result.unwrap_or(Value(0));
        out.push(self.store_inst(v, name, to));
        for (&e, &at) in evicted.iter().zip(&parked) {
            let x = exit[e];
            let fill = self.fill_inst(x.value, at, x.unit.unwrap_or(window));
            out.push(fill);
            exit[e].name = self.s.inst(fill).result.unwrap_or(Value(0));
        }
        Ok(())
    }

    /// Emit a parallel copy as moves and swaps into `out`, with the fewest
    /// instructions: a move whose destination no pending move still reads
    /// goes first (one per value outside cycles); what remains are cycles,
    /// and a cycle of k values of one width takes k - 1 swaps. A cycle
    /// whose values differ in width (halves and fulls of a merged file)
    /// cannot be turned by swaps of whole values: one of its values goes
    /// through a free register (one the shader uses already if possible),
    /// or through scratch memory when every register is taken.
    ///
    /// With `others_live`, values outside the moves hold registers too (a
    /// collect's operands are placed while other values are live), so a
    /// parked value avoids their units as well.
    fn sequentialise(
        &mut self,
        moves: Vec<Move>,
        out: &mut Vec<Inst>,
        others_live: bool,
    ) -> Result<(), RaError> {
        let size = |v: Value, me: &Self| me.units_of(v);
        let overlaps = |a: u32, n: u32, b: u32, m: u32| a < b + m && b < a + n;
        let mut pending: Vec<Move> = Vec::with_capacity(moves.len());
        // Units a value parked in a free register must not take: values
        // already in place and done moves (pending ones are added below).
        let mut busy: Vec<(u32, u32)> = Vec::new();
        let mut deferred: Vec<(Value, SpillSlot, u32, PhiArg)> = Vec::new();
        for m in moves {
            if m.src == m.dst {
                self.set_phi_arg(m.phi, m.name);
                busy.push((m.dst, size(m.value, self)));
            } else {
                pending.push(m);
            }
        }
        while !pending.is_empty() {
            let ready = (0..pending.len()).find(|&k| {
                let m = &pending[k];
                let n = size(m.value, self);
                pending
                    .iter()
                    .enumerate()
                    .all(|(j, o)| j == k || !overlaps(m.dst, n, o.src, size(o.value, self)))
            });
            if let Some(k) = ready {
                let m = pending.swap_remove(k);
                busy.push((m.dst, size(m.value, self)));
                let i = self.copy_inst(m.name, m.value, m.dst);
                out.push(i);
                let r = self.s.inst(i).result.unwrap_or(Value(0));
                self.set_phi_arg(m.phi, r);
                continue;
            }
            // Every destination is still read: cycles remain, and moves
            // waiting for them. Turn a cycle by a swap of a value some move
            // waits for with the value in its destination.
            let waited_for = |k: usize, me: &Self| {
                let m = &pending[k];
                pending.iter().enumerate().any(|(j, o)| {
                    j != k && overlaps(o.dst, size(o.value, me), m.src, size(m.value, me))
                })
            };
            let pair = (0..pending.len())
                .filter(|&k| waited_for(k, self))
                .find_map(|k| {
                    let m = &pending[k];
                    (0..pending.len())
                        .find(|&j| {
                            j != k
                                && pending[j].src == m.dst
                                && self.swappable(m.value, pending[j].value)
                        })
                        .map(|j| (k, j))
                });
            if let Some((k, j)) = pair {
                let (m, o) = (pending[k], pending[j]);
                let (to_m, to_o) = self.swap_inst(m, o, out);
                self.set_phi_arg(m.phi, to_m);
                pending.swap_remove(k);
                // `o`'s value (and any other move of it) now starts where
                // `m`'s was.
                for x in pending.iter_mut() {
                    if x.value == o.value && x.src == o.src {
                        x.src = m.src;
                        x.name = to_o;
                    } else if x.value == m.value && x.src == m.src {
                        x.src = m.dst;
                        x.name = to_m;
                    }
                }
                busy.push((m.dst, size(m.value, self)));
                let mut k = 0;
                while k < pending.len() {
                    let x = pending[k];
                    if x.src == x.dst {
                        self.set_phi_arg(x.phi, x.name);
                        busy.push((x.dst, size(x.value, self)));
                        pending.swap_remove(k);
                    } else {
                        k += 1;
                    }
                }
                continue;
            }
            // Mixed widths: park a value some move waits for in a free
            // register. Nothing waits for it there, so no value is parked
            // twice.
            let k = (0..pending.len())
                .find(|&k| waited_for(k, self))
                .unwrap_or(0);
            let m = pending[k];
            let info = *self.val(m.value);
            let mut avoid = busy.clone();
            for o in &pending {
                avoid.push((o.src, size(o.value, self)));
                avoid.push((o.dst, size(o.value, self)));
            }
            let (lo, hi) = self.file_range(info.class);
            let used = hi.min(self.high[info.class.file.index()]);
            let align = info.class.align.max(1) as u32;
            let free_in = |top: u32| {
                let mut u = lo;
                while u + info.units as u32 <= top {
                    if avoid
                        .iter()
                        .all(|&(a, n)| !overlaps(u, info.units as u32, a, n))
                        && (!others_live || self.is_free(u, info.units as u32, &[]))
                    {
                        return Some(u);
                    }
                    u += align;
                }
                None
            };
            match free_in(used).or_else(|| free_in(hi)) {
                Some(t) => {
                    self.alloc.cycles_via_register += 1;
                    let f = info.class.file.index();
                    self.high[f] = self.high[f].max(t + info.units as u32);
                    let i = self.copy_inst(m.name, m.value, t);
                    out.push(i);
                    pending[k].src = t;
                    pending[k].name = self.s.inst(i).result.unwrap_or(Value(0));
                }
                None => {
                    // A full file and mixed widths: no swap of whole
                    // values turns the cycle, so one value goes through a
                    // fresh scratch slot and comes back after the moves.
                    self.alloc.cycles_via_memory += 1;
                    let slot = self.fresh_slot(info.ty);
                    out.push(self.store_inst(m.value, m.name, slot));
                    pending.swap_remove(k);
                    deferred.push((m.value, slot, m.dst, m.phi));
                }
            }
        }
        for (v, slot, dst, phi) in deferred {
            let i = self.fill_inst(v, slot, dst);
            out.push(i);
            let r = self.s.inst(i).result.unwrap_or(Value(0));
            self.set_phi_arg(phi, r);
        }
        Ok(())
    }

    /// Can the registers of `a` and `b` be exchanged by one swap: scalars
    /// of one width taking the same units.
    fn swappable(&self, a: Value, b: Value) -> bool {
        let (x, y) = (self.val(a), self.val(b));
        x.ty.is_scalar()
            && y.ty.is_scalar()
            && x.ty.scalar.bits() == y.ty.scalar.bits()
            && x.units == y.units
            && x.class.file == y.class.file
    }

    /// Exchange `m`'s value (at `m.src`) with `o`'s (at `m.dst`): the new
    /// names of `m`'s value (now at `m.dst`) and `o`'s (now at `m.src`).
    fn swap_inst(&mut self, m: Move, o: Move, out: &mut Vec<Inst>) -> (Value, Value) {
        let (tm, to) = (self.val(m.value).ty, self.val(o.value).ty);
        let i = self
            .s
            .create_inst(Op::Swap, &[m.name, o.name], &[], None, Some(tm));
        self.note_reads(i, &[m.name, o.name]);
        let a = self.s.inst(i).result.unwrap_or(Value(0));
        let b = self.s.add_second_result(i, to);
        self.s.set_value_reg(a, Some(self.to_reg(m.dst)));
        self.s.set_value_reg(b, Some(self.to_reg(m.src)));
        self.alloc.record(i, Edit::Swap);
        self.alloc.swaps += 1;
        out.push(i);
        (a, b)
    }

    fn set_phi_arg(&mut self, phi: PhiArg, v: Value) {
        match phi {
            PhiArg::None => {}
            PhiArg::Phi(i, k) => {
                if let Some(a) = self.s.inst_mut(i).args.get_mut(k) {
                    *a = v;
                }
                self.note_reads(i, &[v]);
            }
            PhiArg::Merge(b, at) => self.merges[b.index()].args[at as usize] = v,
            PhiArg::Group(k) => self.group_args[k] = v,
        }
    }

    /// Decide the allocator phis of join `b` once every predecessor has
    /// given its operands: a phi whose operands are one value (besides
    /// itself) stands for that value from now on; the others are kept.
    fn finish_join(&mut self, b: Block) {
        let JoinMerges { list, args } = std::mem::take(&mut self.merges[b.index()]);
        if list.is_empty() {
            return;
        }
        let n = args.len() / list.len();
        for (k, &(value, id, unit)) in list.iter().enumerate() {
            let ops = &args[k * n..(k + 1) * n];
            match single_operand(&mut self.merge_names, id, ops) {
                Some(x) => self.merge_names[id as usize] = x,
                None => {
                    let start = self.kept_args.len() as u32;
                    self.kept_args.extend_from_slice(ops);
                    self.kept.push(KeptMerge {
                        id,
                        block: b,
                        value,
                        unit,
                        args: (start, self.kept_args.len() as u32),
                    });
                }
            }
        }
    }

    /// Make the allocator phis that stay and give every instruction that
    /// read a placeholder the name it stands for. A kept phi may still be
    /// trivial (an operand pending when its join was complete may have
    /// become the phi itself): a worklist revisits the phis reading a
    /// decided one, so this is linear in the kept phis' size (times the
    /// depth of phis deciding into each other).
    fn settle_merges(&mut self) {
        debug_assert!(self.merges.iter().all(|m| m.list.is_empty()));
        let kept = std::mem::take(&mut self.kept);
        let mut kept_args = std::mem::take(&mut self.kept_args);
        // Every placeholder not kept is decided: operands are real values
        // or kept phis from here on.
        for a in kept_args.iter_mut() {
            *a = resolve(&mut self.merge_names, *a);
        }
        let mut by_id: Vec<(u32, u32)> = (0..kept.len() as u32)
            .map(|k| (kept[k as usize].id, k))
            .collect();
        by_id.sort_unstable();
        let index_of = |v: Value| {
            let id = v.0 - PENDING;
            by_id
                .binary_search_by_key(&id, |x| x.0)
                .ok()
                .map(|at| by_id[at].1 as usize)
        };
        // The phis reading each kept phi, as linked lists (a decided phi's
        // readers join those of the phi it became).
        let mut users = Users::new(kept.len());
        for (k, m) in kept.iter().enumerate() {
            for &a in kept_args[m.args.0 as usize..m.args.1 as usize].iter() {
                if let Some(j) = is_pending(a).then(|| index_of(a)).flatten() {
                    users.add(j, k as u32);
                }
            }
        }
        let mut trivial = vec![false; kept.len()];
        let mut work: Vec<u32> = (0..kept.len() as u32).collect();
        while let Some(k) = work.pop() {
            let m = &kept[k as usize];
            if trivial[k as usize] {
                continue;
            }
            let ops = &kept_args[m.args.0 as usize..m.args.1 as usize];
            if let Some(x) = single_operand(&mut self.merge_names, m.id, ops) {
                self.merge_names[m.id as usize] = x;
                trivial[k as usize] = true;
                users.visit(k as usize, |u| work.push(u));
                if let Some(j) = is_pending(x).then(|| index_of(x)).flatten() {
                    users.append(k as usize, j);
                }
            }
        }
        let ops = |m: &KeptMerge| &kept_args[m.args.0 as usize..m.args.1 as usize];
        // The phis that stay go to the top of their joins (a join's kept
        // phis are next to each other).
        let mut made: Vec<Inst> = Vec::new();
        for (k, m) in kept.iter().enumerate() {
            if !trivial[k] {
                let args: Vec<Value> = ops(m)
                    .iter()
                    .map(|&a| resolve(&mut self.merge_names, a))
                    .collect();
                let preds = self.cfg.preds(m.block);
                let ty = self.val(m.value).ty;
                let i = self.s.create_inst(Op::Phi, &args, preds, None, Some(ty));
                self.note_reads(i, &args);
                let r = self.s.inst(i).result.unwrap_or(Value(0));
                self.s.set_value_reg(r, Some(self.to_reg(m.unit)));
                self.alloc.record(i, Edit::Merge);
                self.merge_names[m.id as usize] = r;
                made.push(i);
            }
            if kept.get(k + 1).is_none_or(|next| next.block != m.block) && !made.is_empty() {
                self.list_of(m.block).splice(0..0, made.drain(..));
            }
        }
        let names = &mut self.merge_names;
        for &i in &self.reads_pending {
            let d = self.s.inst_mut(i);
            for a in d.args.iter_mut() {
                *a = resolve(names, *a);
            }
            if let Some(a) = d.address.as_mut() {
                *a = resolve(names, *a);
            }
            debug_assert!(!d.operands().any(is_pending), "a placeholder is left");
        }
    }
}

/// The phis reading each kept allocator phi, as linked lists that join in
/// constant time.
struct Users {
    head: Vec<u32>,
    tail: Vec<u32>,
    /// (reader, next entry).
    entries: Vec<(u32, u32)>,
}

impl Users {
    fn new(phis: usize) -> Users {
        Users {
            head: vec![NONE; phis],
            tail: vec![NONE; phis],
            entries: Vec::new(),
        }
    }

    fn add(&mut self, of: usize, reader: u32) {
        let e = self.entries.len() as u32;
        self.entries.push((reader, NONE));
        match self.tail[of] {
            NONE => self.head[of] = e,
            t => self.entries[t as usize].1 = e,
        }
        self.tail[of] = e;
    }

    fn visit(&self, of: usize, mut f: impl FnMut(u32)) {
        let mut e = self.head[of];
        while e != NONE {
            f(self.entries[e as usize].0);
            e = self.entries[e as usize].1;
        }
    }

    /// Move the readers of `from` to the end of those of `to`.
    fn append(&mut self, from: usize, to: usize) {
        if self.head[from] == NONE || from == to {
            return;
        }
        match self.tail[to] {
            NONE => self.head[to] = self.head[from],
            t => self.entries[t as usize].1 = self.head[from],
        }
        self.tail[to] = self.tail[from];
        self.head[from] = NONE;
        self.tail[from] = NONE;
    }
}

/// The one value an allocator phi's operands `ops` name besides the phi
/// itself (placeholder `id`), if there is exactly one.
fn single_operand(names: &mut [Value], id: u32, ops: &[Value]) -> Option<Value> {
    let me = Value(PENDING + id);
    let mut first = None;
    for &a in ops {
        let a = resolve(names, a);
        if a == me {
            continue;
        }
        match first {
            None => first = Some(a),
            Some(f) if f == a => {}
            Some(_) => return None,
        }
    }
    first
}

/// What name `v` stands for now: itself, unless it is a placeholder that
/// was decided. Chains are shortened as they are followed, so later
/// lookups take one step.
fn resolve(names: &mut [Value], v: Value) -> Value {
    let mut root = v;
    while is_pending(root) {
        let next = names[(root.0 - PENDING) as usize];
        if next == root {
            break;
        }
        root = next;
    }
    let mut x = v;
    while is_pending(x) && x != root {
        let slot = &mut names[(x.0 - PENDING) as usize];
        x = std::mem::replace(slot, root);
    }
    root
}

/// The place of `v` in a snapshot (snapshots follow the liveness lists,
/// which are sorted by value).
fn place_of(places: &[Place], v: Value) -> Option<&Place> {
    places
        .binary_search_by_key(&v, |p| p.value)
        .ok()
        .map(|k| &places[k])
}

/// A register group would have to move at join `b`. Groups live across
/// blocks stay where they were defined (they are never moved to make room
/// nor spilled, and phis are scalar), so this takes a group moved to a
/// fixed output register on one path only.
fn group_move(ty: Type, b: Block) -> RaError {
    RaError::Unsupported(format!(
        "a register group ({ty}) would move at the entry of block b{}: a group moved on \
         one path only needs a copy of the whole group, which the target facts do not name",
        b.index()
    ))
}

/// The slot `v` was copied to at the edge being fixed up, if it was.
fn slot_at_edge(moved: &[(Value, SpillSlot)], v: Value) -> Option<SpillSlot> {
    moved.iter().find(|m| m.0 == v).map(|m| m.1)
}

/// The place of phi operand `arg` at the end of predecessor `p`.
fn phi_operand_place(exit: &[Place], arg: Value, p: Block) -> Result<&Place, RaError> {
    place_of(exit, arg).ok_or_else(|| {
        RaError::Unsupported(format!(
            "a phi operand is not live out of its predecessor b{} (liveness and the phi \
             disagree)",
            p.index()
        ))
    })
}

/// The phi operand a join move feeds.
#[derive(Clone, Copy, Debug)]
enum PhiArg {
    None,
    /// Operand k of an original phi.
    Phi(Inst, usize),
    /// An allocator phi's operand: its index in the join's `JoinMerges::args`.
    Merge(Block, u32),
    /// Operand k of the collect being placed (`Allocator::group_args`).
    Group(usize),
}

/// One value to move at a join.
#[derive(Clone, Copy, Debug)]
struct Move {
    value: Value,
    name: Value,
    src: u32,
    dst: u32,
    phi: PhiArg,
}

/// Drop unreachable blocks (and phi entries from them); returns the
/// control-flow graph of the result.
fn drop_unreachable<O: Opcode>(s: &mut Shader<'_, O>) -> Cfg {
    let cfg = Cfg::compute(s);
    let dead: Vec<Block> = s
        .layout()
        .iter()
        .copied()
        .filter(|&b| !cfg.is_reachable(b))
        .collect();
    if dead.is_empty() {
        return cfg;
    }
    for &b in cfg.rpo() {
        for &i in s.block_insts(b).to_vec().iter() {
            let d = s.inst(i);
            if !d.op.is_phi() {
                break;
            }
            let keep: Vec<(Value, Block)> = d
                .args
                .iter()
                .copied()
                .zip(d.targets.iter().copied())
                .filter(|(_, t)| cfg.is_reachable(*t))
                .collect();
            let (args, targets): (Vec<Value>, Vec<Block>) = keep.into_iter().unzip();
            s.set_args(i, &args);
            s.set_targets(i, &targets);
        }
    }
    s.remove_blocks(&dead);
    Cfg::compute(s)
}

/// Register allocation assigns the file: general files the target marks
/// so, and address files (whose values are never spilled).
fn assigned(f: &RegisterFile) -> bool {
    f.allocated || f.kind == FileKind::Address
}

/// More than one predecessor, or phis: its predecessors end with copies.
fn is_join<O: Opcode>(s: &Shader<'_, O>, cfg: &Cfg, b: Block) -> bool {
    cfg.preds(b).len() > 1
        || s.block_insts(b)
            .first()
            .is_some_and(|&i| s.inst(i).op.is_phi())
}

/// Give each edge from `b` (a block with several successors) into a join a
/// block of its own that jumps there, noting (b, successor index, new
/// block) in `splits` for the control-flow graph.
///
/// The new block is laid out just before the join (after `b` for an edge
/// back to an earlier block): diverged threads run the lowest address
/// first, so threads that took the edge wait there until the others
/// reach the join. At the end of the layout, they would wait until the
/// others had run the rest of the program (barriers included).
fn split_critical_edges<O: Opcode>(
    s: &mut Shader<'_, O>,
    cfg: &Cfg,
    b: Block,
    splits: &mut Vec<(Block, usize, Block)>,
) {
    let Some(term) = s.terminator(b) else {
        return;
    };
    let targets = cfg.succs(b);
    if targets.len() < 2 {
        return;
    }
    for (k, &t) in targets.iter().enumerate() {
        if !is_join(s, cfg, t) {
            continue;
        }
        let n = s.create_block();
        let layout = s.layout();
        let position = |x: Block| layout.iter().position(|&y| y == x);
        let before = match (position(b), position(t)) {
            (Some(from), Some(to)) if to > from => Some(t),
            (Some(from), _) => layout.get(from + 1).copied(),
            _ => None,
        };
        s.insert_into_layout(n, before);
        s.append_inst(n, Op::Jump, &[], &[t], None, None);
        s.inst_mut(term).targets[k] = n;
        // The first phi entry from `b` now comes from `n`.
        for &i in s.block_insts(t).to_vec().iter() {
            if !s.inst(i).op.is_phi() {
                break;
            }
            if let Some(x) = s.inst_mut(i).targets.iter_mut().find(|x| **x == b) {
                *x = n;
            }
        }
        splits.push((b, k, n));
    }
}
