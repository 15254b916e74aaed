//! The register-allocation checker: proves that every use in an allocated
//! shader reads, in its register, the value the original program's operand
//! named.
//!
//! It is a forward dataflow over "which original value (and which unit of
//! it) does each register unit and each scratch slot hold, under which SSA
//! name", in the manner of regalloc2's symbolic checker. Original
//! instructions define their results; inserted copies, spills and fills
//! move whatever their source *actually* holds (not what the allocator
//! claims) under their own name; at a join the states of the predecessors
//! meet (disagreeing units hold nothing); a phi (original or made by the
//! allocator) names what its register holds, after checking at the end of
//! each predecessor that the register holds that predecessor's operand.
//! Every operand of every instruction must find its own name in its
//! register (so an allocator phi that is missing at a join where names
//! differ is caught even though the bits would be the same), and every
//! operand of an original instruction must hold the value it had before
//! allocation.

use super::{Allocation, Edit};
use crate::target::TargetFacts;
use lathe_ir::{Block, Cfg, Inst, Op, Opcode, Shader, Value};
use std::collections::HashMap;

/// An allocation that does not preserve the program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{block:?}, `{inst}`: {message}")]
pub struct CheckError {
    pub block: Block,
    pub inst: String,
    pub message: String,
}

/// What one register unit or slot holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    /// Not reached yet (the identity of the meet).
    Unknown,
    /// Unit `part` of original value `value`, under SSA name `name`.
    Holds {
        value: Value,
        name: Value,
        part: u16,
    },
    /// Nothing known (paths disagree, or never written).
    Nothing,
}

impl Cell {
    fn meet(self, other: Cell) -> Cell {
        match (self, other) {
            (Cell::Unknown, x) | (x, Cell::Unknown) => x,
            (a, b) if a == b => a,
            _ => Cell::Nothing,
        }
    }
}

#[derive(Clone, PartialEq, Debug)]
struct State {
    units: Vec<Cell>,
    /// Scratch slots by (array, element): the value held.
    slots: HashMap<(u32, u32), Option<Value>>,
}

/// Check `shader` as rewritten by an allocation `alloc` on `target`.
pub fn check<O: Opcode, T: TargetFacts<O> + ?Sized>(
    shader: &Shader<'_, O>,
    target: &T,
    alloc: &Allocation,
) -> Result<(), CheckError> {
    Checker::new(shader, target, alloc).run()
}

struct Checker<'c, 'a, O, T: ?Sized> {
    s: &'c Shader<'a, O>,
    t: &'c T,
    alloc: &'c Allocation,
    base: Vec<u32>,
    total: usize,
    cfg: Cfg,
}

impl<'c, 'a, O: Opcode, T: TargetFacts<O> + ?Sized> Checker<'c, 'a, O, T> {
    fn new(s: &'c Shader<'a, O>, t: &'c T, alloc: &'c Allocation) -> Self {
        let mut base = Vec::new();
        let mut total = 0;
        for f in t.files() {
            base.push(total);
            total += f.units;
        }
        Checker {
            s,
            t,
            alloc,
            base,
            total: total as usize,
            cfg: Cfg::compute(s),
        }
    }

    fn error(&self, b: Block, i: Inst, message: impl Into<String>) -> CheckError {
        let names = lathe_ir::printer::Names::compute(self.s);
        let mut text = String::new();
        let _ = lathe_ir::printer::write_inst(self.s, &names, i, &mut text);
        CheckError {
            block: b,
            inst: text,
            message: message.into(),
        }
    }

    fn is_original(&self, i: Inst) -> bool {
        i.0 < self.alloc.first_new_inst
    }

    /// The global units of `v`'s register.
    fn units_of(&self, v: Value) -> Option<(usize, usize)> {
        let reg = self.s.value_reg(v)?;
        let ty = self.s.value_type(v);
        let d = self.s.inst(self.s.value_def(v));
        let class = self.t.result_class(&d.op, ty);
        let start = *self.base.get(reg.file as usize)? as usize + reg.unit as usize;
        let n = class.units(ty) as usize;
        (start + n <= self.total).then_some((start, n))
    }

    /// The original value `v`'s register holds under the name `v`.
    fn read(&self, st: &State, v: Value) -> Option<Value> {
        let (_, n) = self.units_of(v)?;
        self.read_part(st, v, 0, n)
    }

    /// The original value whose units `first..first + n` `v`'s register
    /// holds under the name `v`: a split reads its lane only (the lanes
    /// split before may hold their results already).
    fn read_part(&self, st: &State, v: Value, first: usize, n: usize) -> Option<Value> {
        let (start, len) = self.units_of(v)?;
        if first + n > len {
            return None;
        }
        let Cell::Holds { value, .. } = st.units[start + first] else {
            return None;
        };
        (first..first + n)
            .all(|j| {
                st.units[start + j]
                    == Cell::Holds {
                        value,
                        name: v,
                        part: j as u16,
                    }
            })
            .then_some(value)
    }

    /// What `v`'s register holds instead, for an error message.
    fn describe_held(&self, st: &State, v: Value) -> String {
        let held = self.units_of(v).map(|(start, _)| st.units[start]);
        match held {
            Some(Cell::Holds { value, name, .. }) if name != v => format!(
                "the value defined by `{}` under the name of `{}`",
                self.describe(value),
                self.describe(name)
            ),
            Some(Cell::Holds { value, .. }) => {
                format!("the value defined by `{}`", self.describe(value))
            }
            _ => "no single value".to_string(),
        }
    }

    /// `v`'s register now holds original value `held` under the name `v`.
    fn write(&self, st: &mut State, v: Value, held: Option<Value>) {
        if let Some((start, n)) = self.units_of(v) {
            for j in 0..n {
                st.units[start + j] = match held {
                    Some(value) => Cell::Holds {
                        value,
                        name: v,
                        part: j as u16,
                    },
                    None => Cell::Nothing,
                };
            }
        }
    }

    /// An inserted instruction's operand `a` must find its name in its
    /// register too.
    fn read_inserted(
        &self,
        b: Block,
        i: Inst,
        st: &State,
        a: Value,
        verify: bool,
    ) -> Result<Option<Value>, CheckError> {
        let held = self.read(st, a);
        if verify && held.is_none() {
            return Err(self.error(
                b,
                i,
                format!(
                    "an inserted instruction's operand should be in its register but that holds {}",
                    self.describe_held(st, a)
                ),
            ));
        }
        Ok(held)
    }

    /// Run one block from `st`; with `verify`, check every original use,
    /// and in a block that ends the shader every output once more at the
    /// end: the shader's outputs are read from their registers when it
    /// ends, not when the `output` instruction is reached.
    fn transfer(&self, b: Block, st: &mut State, verify: bool) -> Result<(), CheckError> {
        let mut outputs: Vec<(Inst, Value, Value)> = Vec::new();
        for &i in self.s.block_insts(b) {
            let d = self.s.inst(i);
            let edit = self.alloc.edit(i);
            match edit {
                // Phis are written when the block is entered.
                Some(Edit::Merge) => {}
                Some(Edit::SpillBase) => {
                    if let Some(r) = d.result {
                        self.write(st, r, Some(r));
                    }
                }
                Some(Edit::Copy) => {
                    let held = match d.args.first() {
                        Some(&a) => self.read_inserted(b, i, st, a, verify)?,
                        None => None,
                    };
                    if let Some(r) = d.result {
                        self.write(st, r, held);
                    }
                }
                Some(Edit::Swap) => {
                    let mut held = Vec::with_capacity(2);
                    for &a in d.args.iter() {
                        held.push(self.read_inserted(b, i, st, a, verify)?);
                    }
                    if let (Some(a), Some(b), [x, y]) = (d.result, d.second_result, &held[..]) {
                        self.write(st, a, *x);
                        self.write(st, b, *y);
                    }
                }
                Some(Edit::Spill(slot)) => {
                    if verify {
                        self.check_base(b, i, st)?;
                    }
                    // The value is the last argument (after a base).
                    let held = match d.args.last() {
                        Some(&a) => self.read_inserted(b, i, st, a, verify)?,
                        None => None,
                    };
                    st.slots.insert((slot.array.0, slot.index), held);
                }
                Some(Edit::Fill(slot)) => {
                    if verify {
                        self.check_base(b, i, st)?;
                    }
                    let held = st.slots.get(&(slot.array.0, slot.index)).copied().flatten();
                    if let Some(r) = d.result {
                        self.write(st, r, held);
                    }
                }
                None if !self.is_original(i) => {
                    return Err(self.error(
                        b,
                        i,
                        "an inserted instruction the allocation does not list",
                    ));
                }
                None => {
                    if d.op.is_phi() {
                        continue;
                    }
                    if verify {
                        let want = self.alloc.original_operands.of(i);
                        for (k, v) in d.operands().enumerate() {
                            let Some(&w) = want.get(k) else {
                                return Err(self.error(b, i, "operand count changed"));
                            };
                            if self.units_of(v).is_none() {
                                return Err(self.error(
                                    b,
                                    i,
                                    format!("operand {k} has no register"),
                                ));
                            }
                            let held = match (d.op, d.result.and_then(|r| self.units_of(r))) {
                                (Op::Split { lane }, Some((_, n))) if k == 0 => {
                                    self.read_part(st, v, usize::from(lane) * n, n)
                                }
                                _ => self.read(st, v),
                            };
                            if held != Some(w) {
                                return Err(self.error(
                                    b,
                                    i,
                                    format!(
                                        "operand {k} should hold the value defined by `{}` but holds {}",
                                        self.describe(w),
                                        self.describe_held(st, v)
                                    ),
                                ));
                            }
                            self.check_aligned(b, i, k, v)?;
                        }
                    }
                    if verify && let (Op::Collect, Some(r)) = (d.op, d.result) {
                        self.check_in_place(b, i, r)?;
                    }
                    if let (Op::Output { .. }, Some(&v), Some(&w)) = (
                        d.op,
                        d.args.first(),
                        self.alloc.original_operands.of(i).first(),
                    ) {
                        outputs.push((i, v, w));
                    }
                    if let Some(r) = d.result {
                        if verify && self.units_of(r).is_none() {
                            return Err(self.error(b, i, "the result has no register in its file"));
                        }
                        self.write(st, r, Some(r));
                    }
                }
            }
        }
        if verify && self.cfg.succs(b).is_empty() {
            for (i, v, w) in outputs {
                if self.read(st, v) != Some(w) {
                    return Err(self.error(
                        b,
                        i,
                        format!(
                            "the output's register is overwritten before the shader ends: it \
                             holds {}",
                            self.describe_held(st, v)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Operand `k` of `i` starts at a unit its operand class aligns (a
    /// register pair's first register is even, whatever the value's own
    /// class asks).
    fn check_aligned(&self, b: Block, i: Inst, k: usize, v: Value) -> Result<(), CheckError> {
        let (Some(reg), ty) = (self.s.value_reg(v), self.s.value_type(v)) else {
            return Ok(());
        };
        let want = self.t.operand_class(&self.s.inst(i).op, k, ty);
        let align = u16::from(want.align.max(1));
        if want.file.0 == reg.file && reg.unit % align != 0 {
            return Err(self.error(
                b,
                i,
                format!(
                    "operand {k} is at unit {} of its file but the instruction reads it from a \
                     unit aligned to {align}",
                    reg.unit
                ),
            ));
        }
        Ok(())
    }

    /// A collect emits nothing: each operand must already be in its slot
    /// of the group `r`.
    fn check_in_place(&self, b: Block, i: Inst, r: Value) -> Result<(), CheckError> {
        let Some((mut at, _)) = self.units_of(r) else {
            return Ok(());
        };
        for (k, &a) in self.s.inst(i).args.iter().enumerate() {
            let Some((unit, n)) = self.units_of(a) else {
                return Ok(());
            };
            if unit != at {
                return Err(self.error(
                    b,
                    i,
                    format!(
                        "operand {k} is in global unit {unit}, not in its slot of the group \
                         (unit {at})"
                    ),
                ));
            }
            at += n;
        }
        Ok(())
    }

    /// A spill or fill with a base operand (operand 0 before a spill's
    /// value, or the address operand) reads the spill base.
    fn check_base(&self, b: Block, i: Inst, st: &State) -> Result<(), CheckError> {
        let d = self.s.inst(i);
        let stored = matches!(self.alloc.edit(i), Some(Edit::Spill(_))) as usize;
        let base = d.address.or_else(|| {
            (d.args.len() > stored)
                .then(|| d.args.first().copied())
                .flatten()
        });
        let Some(base) = base else { return Ok(()) };
        let holds = self.read(st, base);
        if holds.is_some_and(|x| self.alloc.edit(self.s.value_def(x)) == Some(Edit::SpillBase)) {
            Ok(())
        } else {
            Err(self.error(b, i, "its base register does not hold the spill base"))
        }
    }

    fn describe(&self, v: Value) -> String {
        let names = lathe_ir::printer::Names::compute(self.s);
        let mut text = String::new();
        let _ = lathe_ir::printer::write_inst(self.s, &names, self.s.value_def(v), &mut text);
        text
    }

    fn meet(&self, into: &mut State, from: &State) {
        for (a, b) in into.units.iter_mut().zip(&from.units) {
            *a = a.meet(*b);
        }
    }

    fn run(&self) -> Result<(), CheckError> {
        let nb = self.s.block_capacity();
        let empty = State {
            units: vec![Cell::Unknown; self.total],
            slots: HashMap::new(),
        };
        let mut exits: Vec<Option<State>> = vec![None; nb];
        let rpo = self.cfg.rpo().to_vec();
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &rpo {
                let mut st = self.entry_state(b, &exits, &empty);
                self.transfer(b, &mut st, false)?;
                if exits[b.index()].as_ref() != Some(&st) {
                    exits[b.index()] = Some(st);
                    changed = true;
                }
            }
        }
        for &b in &rpo {
            // Phi operands at the end of each predecessor: in the phi's
            // register, under their own name (and for an original phi,
            // holding the operand it had before allocation).
            for &i in self.s.block_insts(b) {
                let d = self.s.inst(i);
                if !d.op.is_phi() {
                    break;
                }
                let Some(r) = d.result else { continue };
                let want = self.alloc.original_operands.of(i);
                for (k, (&p, &a)) in d.targets.iter().zip(d.args.iter()).enumerate() {
                    let Some(exit) = exits[p.index()].as_ref() else {
                        continue;
                    };
                    let got = (self.units_of(a) == self.units_of(r))
                        .then(|| self.read(exit, a))
                        .flatten();
                    let right = match want.get(k) {
                        Some(&w) if self.is_original(i) => got == Some(w),
                        _ => got.is_some(),
                    };
                    if !right {
                        return Err(self.error(
                            b,
                            i,
                            format!(
                                "the phi's register does not hold its operand {k} at the end of {p:?} \
                                 (it holds {})",
                                self.describe_held(exit, a)
                            ),
                        ));
                    }
                }
            }
            // A phi kept in memory: its slot holds each predecessor's
            // operand at the end of that predecessor.
            for m in self.alloc.memory_phis.iter().filter(|m| m.block == b) {
                let d = self.s.inst(m.phi);
                let want = self.alloc.original_operands.of(m.phi);
                for (k, (&p, &w)) in d.targets.iter().zip(want).enumerate() {
                    let Some(exit) = exits[p.index()].as_ref() else {
                        continue;
                    };
                    let got = exit.slots.get(&(m.slot.array.0, m.slot.index)).copied();
                    if got != Some(Some(w)) {
                        return Err(self.error(
                            b,
                            m.phi,
                            format!(
                                "the phi's slot does not hold its operand {k} at the end of {p:?}"
                            ),
                        ));
                    }
                }
            }
            let mut st = self.entry_state(b, &exits, &empty);
            self.transfer(b, &mut st, true)?;
        }
        Ok(())
    }

    fn entry_state(&self, b: Block, exits: &[Option<State>], empty: &State) -> State {
        let mut st = empty.clone();
        if self.s.entry() == Some(b) {
            for c in st.units.iter_mut() {
                *c = Cell::Nothing;
            }
            return st;
        }
        let mut first = true;
        for &p in self.cfg.preds(b) {
            let Some(e) = exits[p.index()].as_ref() else {
                continue;
            };
            if first {
                st.slots = e.slots.clone();
                first = false;
            } else {
                st.slots.retain(|k, v| e.slots.get(k) == Some(v));
            }
            self.meet(&mut st, e);
        }
        for m in self.alloc.memory_phis.iter().filter(|m| m.block == b) {
            if let Some(r) = self.s.inst(m.phi).result {
                st.slots.insert((m.slot.array.0, m.slot.index), Some(r));
            }
        }
        // The phis name what their registers hold from here on: an
        // original phi its own value, an allocator phi the original value
        // its operands hold at the ends of the predecessors reached so far.
        for &i in self.s.block_insts(b) {
            let d = self.s.inst(i);
            if !d.op.is_phi() {
                break;
            }
            let Some(r) = d.result else { continue };
            let held = if self.is_original(i) {
                Some(r)
            } else {
                let mut held = Cell::Unknown;
                for (&p, &a) in d.targets.iter().zip(d.args.iter()) {
                    if let Some(e) = exits[p.index()].as_ref() {
                        let x = match self.read(e, a) {
                            Some(value) => Cell::Holds {
                                value,
                                name: r,
                                part: 0,
                            },
                            None => Cell::Nothing,
                        };
                        held = held.meet(x);
                    }
                }
                match held {
                    Cell::Holds { value, .. } => Some(value),
                    _ => None,
                }
            };
            self.write(&mut st, r, held);
        }
        st
    }
}
