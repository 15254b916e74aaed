//! Register allocation under test: high-pressure random programs and the
//! differential check behind the `regalloc` fuzz target.
//!
//! [`pressure_program`] builds programs that keep many values live at
//! once (more than small register files hold), in every width (16-bit
//! halves share the merged file with 32-bit values), with loops whose
//! carried values are permuted every iteration (phi webs whose copies form
//! cycles), diamonds that swap values between arms, register groups
//! (`collect` into `sample`, `split` out, sometimes live across a diamond
//! or a loop), loops carrying more values than a small file holds (phis
//! kept in memory), relative addressing of an array by computed indices
//! (copied into the address file on targets that have one), fixed meta
//! inputs and outputs.
//! [`differential`] allocates such a program (and the general generator's)
//! on a target, runs the checker, prints and parses the allocated text
//! back, and runs the interpreter with every value read and written
//! through its register ([`lathe_ir::interp::run_placed`]): the outcome
//! must equal the original program's.

use super::{DiffError, GenLimits, generate};
use crate::ra::{self, RaOptions};
use crate::target::test_target::TestTarget;
use crate::target::{
    BaseOperand, FileId, FileKind, OperandForms, PhysReg, RegClass, RegisterFile, SpillSlot,
    TargetFacts,
};
use arbitrary::{Result as ArbResult, Unstructured};
use bumpalo::Bump;
use lathe_ir::interp::{self, InterpError, Invocation, Limits, Placement, Texture};
use lathe_ir::{
    ArrayDecl, ArrayId, Builder, Cfg, GenericOp, Interp, Op, Opcode, Scalar, Shader, Stage, Type,
    Value,
};
use std::collections::HashSet;
use std::marker::PhantomData;

/// What one differential run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RaRun {
    /// The original run was defined, so outcomes were compared.
    pub compared: bool,
    pub insts: usize,
    pub spills: u32,
    pub fills: u32,
    pub copies: u32,
    /// Units used in file 0.
    pub units: u32,
    /// Registers kept for a spill base (0 or 1).
    pub spill_bases: u32,
    /// Phis kept in scratch memory ([`ra::MemoryPhi`]).
    pub memory_phis: u32,
    /// Register groups read in a block other than their own.
    pub groups_across_blocks: u32,
    /// Values placed in an address file.
    pub address_values: u32,
    /// `collect` operands read twice by one collect or by two collects
    /// (each needs a copy in its slot).
    pub shared_group_operands: u32,
    /// `collect` operands the allocator moved or copied into their slot.
    pub placed_group_operands: u32,
    /// Collects in programs that spilled.
    pub groups_under_spilling: u32,
}

const TYPES: [Scalar; 4] = [Scalar::F32, Scalar::I32, Scalar::F16, Scalar::U32];

struct Pressure<'u, 'd, 's, 'a> {
    u: &'u mut Unstructured<'d>,
    b: Builder<'s, 'a, GenericOp>,
    /// Live values, by type.
    vals: Vec<Vec<Value>>,
    budget: u32,
    groups: bool,
    /// At most this many values stay live (older ones die).
    max_values: usize,
    /// An array of four f32 written whole at the start, indexed by
    /// computed values (relative addressing).
    array: ArrayId,
}

/// A high-pressure program and its inputs; `groups` allows register
/// groups (`collect`, `sample`, `split`).
pub fn pressure_program<'a>(
    arena: &'a Bump,
    u: &mut Unstructured<'_>,
    groups: bool,
) -> ArbResult<(Shader<'a, GenericOp>, Invocation)> {
    let statements = u.int_in_range(20..=220)?;
    pressure_program_sized(arena, u, groups, statements, 200)
}

/// [`pressure_program`] with `statements` statements (top-level regions
/// follow each other until they are used up) and at most `max_values`
/// values live at once, for benches at a chosen size.
pub fn pressure_program_sized<'a>(
    arena: &'a Bump,
    u: &mut Unstructured<'_>,
    groups: bool,
    statements: u32,
    max_values: usize,
) -> ArbResult<(Shader<'a, GenericOp>, Invocation)> {
    pressure_program_segments(arena, u, groups, 1, statements, max_values)
}

/// `segments` pressure programs one after the other in one shader, each
/// of `statements` statements: each loads the inputs, runs its regions
/// and folds what is live into outputs. A program of 100 segments has the
/// shape of one segment (blocks, phis and groups per instruction, values
/// live at each point), so benches can compare cost per instruction
/// across sizes; a single program of 100 times the statements would not
/// (its fixed prologue and epilogue weigh less, and it has relatively
/// more blocks).
pub fn pressure_program_segments<'a>(
    arena: &'a Bump,
    u: &mut Unstructured<'_>,
    groups: bool,
    segments: u32,
    statements: u32,
    max_values: usize,
) -> ArbResult<(Shader<'a, GenericOp>, Invocation)> {
    let mut shader = Shader::new(arena, Stage::Fragment);
    let mut inv = Invocation::default();
    {
        let array = shader.add_array(ArrayDecl {
            elem: Type::F32,
            len: 4,
        });
        let mut g = Pressure {
            u,
            b: Builder::new(&mut shader),
            vals: vec![Vec::new(); TYPES.len()],
            budget: statements,
            groups,
            max_values,
            array,
        };
        let meta = g.b.input(0, Type::U32);
        for segment in 0..segments {
            g.vals[3].push(meta);
            g.budget = statements;
            let wide = g.u.int_in_range(2..=40u16)?;
            for n in 0..wide {
                let (slot, comp) = (n / 4, (n % 4) as u8);
                let k = g.u.choose_index(TYPES.len())?;
                let ty = TYPES[k];
                let interp = if ty.is_float() {
                    Interp::SMOOTH
                } else {
                    Interp::FLAT
                };
                let v = g.b.load_input(slot, comp, interp, Type::scalar(ty));
                g.vals[k].push(v);
                let bits: u32 = g.u.arbitrary()?;
                let bits = match ty {
                    Scalar::F32 => ((bits % 200) as f32 / 8.0 - 12.0).to_bits(),
                    Scalar::F16 => lathe_ir::f16::from_f32((bits % 200) as f32 / 8.0 - 12.0) as u32,
                    _ => bits,
                };
                // A later segment loading a slot again reads what the
                // first one did.
                inv.inputs.entry((slot, comp)).or_insert(bits);
            }
            for k in 0..4 {
                let v = g.pick(0)?;
                g.b.array_store(array, k, None, v);
            }
            while g.budget > 0 && !g.u.is_empty() {
                g.region(0)?;
            }
            g.fold(segment + 1 == segments)?;
        }
        g.b.ret();
    }
    inv.meta_inputs.push(u.arbitrary()?);
    inv.textures.push(Texture::rgba_2d(
        2,
        2,
        vec![
            [0.0, 1.0, 2.0, 3.0],
            [4.0, 5.0, 6.0, 7.0],
            [8.0, 9.0, 10.0, 11.0],
            [12.0, 13.0, 14.0, 15.0],
        ],
    ));
    Ok((shader, inv))
}

impl Pressure<'_, '_, '_, '_> {
    fn pick(&mut self, k: usize) -> ArbResult<Value> {
        if self.vals[k].is_empty() {
            let v = match TYPES[k] {
                Scalar::F32 => self.b.const_f32(1.5),
                Scalar::F16 => self.b.const_f16(0.5),
                Scalar::I32 => self.b.const_i32(3),
                _ => self.b.const_u32(7),
            };
            self.vals[k].push(v);
        }
        let n = self.vals[k].len();
        Ok(self.vals[k][self.u.choose_index(n)?])
    }

    fn arith(&mut self, k: usize, a: Value, b: Value) -> Value {
        use GenericOp::*;
        let op = match TYPES[k] {
            Scalar::F32 | Scalar::F16 => FAdd,
            Scalar::I32 => IAdd,
            _ => Xor,
        };
        self.b.op(op, &[a, b], Type::scalar(TYPES[k]))
    }

    /// Drop the oldest values of the longest lists until at most
    /// `max_values` are live (groups, joins and loops add values without
    /// dropping any). Draws no input, so smaller programs are unchanged.
    fn trim(&mut self) {
        while self.vals.iter().map(Vec::len).sum::<usize>() > self.max_values {
            let k = (0..self.vals.len())
                .max_by_key(|&k| (self.vals[k].len(), usize::MAX - k))
                .unwrap_or(0);
            self.vals[k].remove(0);
        }
    }

    fn region(&mut self, depth: u32) -> ArbResult<()> {
        while self.budget > 0 && !self.u.is_empty() {
            self.budget -= 1;
            self.trim();
            match self.u.int_in_range(0..=9u8)? {
                0..=3 => {
                    // New value; sometimes one old one dies.
                    let k = self.u.choose_index(TYPES.len())?;
                    let (a, b) = (self.pick(k)?, self.pick(k)?);
                    let v = self.arith(k, a, b);
                    let live: usize = self.vals.iter().map(Vec::len).sum();
                    if (live >= self.max_values || self.u.ratio(1u8, 3u8)?)
                        && !self.vals[k].is_empty()
                    {
                        let j = self.u.choose_index(self.vals[k].len())?;
                        self.vals[k].swap_remove(j);
                    }
                    self.vals[k].push(v);
                }
                4 if depth < 2 => self.diamond(depth)?,
                5 if depth < 2 => self.permuting_loop(depth)?,
                6 if self.groups => {
                    // A register group: sample at a collected coordinate,
                    // sometimes after a diamond or a loop (the group is
                    // live across their blocks; no other group is made
                    // meanwhile, so a small file still holds it).
                    let (x, y) = (self.pick(0)?, self.pick(0)?);
                    let coord = self.b.collect(&[x, y]);
                    if depth < 2 && self.u.ratio(1u8, 3u8)? {
                        self.groups = false;
                        if self.u.arbitrary()? {
                            self.diamond(depth)?;
                        } else {
                            self.permuting_loop(depth)?;
                        }
                        self.groups = true;
                    }
                    let texel = self.b.sample(0, 0, coord);
                    let keep = self.u.int_in_range(1..=4usize)?;
                    self.vals[0].extend(texel.into_iter().take(keep));
                }
                7 if self.groups => {
                    let (x, y, z) = (self.pick(0)?, self.pick(0)?, self.pick(0)?);
                    let group = self.b.collect(&[x, y, z]);
                    let lane = self.u.int_in_range(0..=2u8)?;
                    let v = self.b.split(group, lane);
                    self.vals[0].push(v);
                    if self.u.arbitrary()? {
                        // A second group sharing operands with the first,
                        // one of them twice (each read needs its own slot).
                        let group = self.b.collect(&[y, x, x]);
                        let lane = self.u.int_in_range(0..=2u8)?;
                        let v = self.b.split(group, lane);
                        self.vals[0].push(v);
                    }
                }
                8 => {
                    let k = self.u.choose_index(TYPES.len())?;
                    let v = self.pick(k)?;
                    let slot = self.u.int_in_range(0..=7u16)?;
                    if TYPES[k] != Scalar::U32 || slot > 0 {
                        self.b.store_output(slot, 0, v);
                    }
                }
                9 if self.u.ratio(1u8, 2u8)? => {
                    // Relative addressing: an element picked by a computed
                    // index (in the address file on targets that have one),
                    // read or written.
                    let (x, mask) = (self.pick(1)?, self.b.const_i32(3));
                    let index = self.b.op(GenericOp::And, &[x, mask], Type::I32);
                    if self.u.arbitrary()? {
                        let v = self.b.array_load(self.array, 0, Some(index));
                        self.vals[0].push(v);
                    } else {
                        let v = self.pick(0)?;
                        self.b.array_store(self.array, 0, Some(index), v);
                    }
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// `if c {..} else {..}` merging values swapped between the arms.
    fn diamond(&mut self, depth: u32) -> ArbResult<()> {
        let (a, b) = (self.pick(1)?, self.pick(1)?);
        let c = self.b.ilt(a, b);
        let saved = self.vals.clone();
        let then_b = self.b.new_block();
        let else_b = self.b.new_block();
        let join = self.b.new_block();
        self.b.branch(c, then_b, else_b);
        self.b.switch_to(then_b);
        self.region(depth + 1)?;
        let k = self.u.choose_index(TYPES.len())?;
        let merged = self.u.int_in_range(0..=4usize)?;
        let mut then_vals = Vec::new();
        for _ in 0..merged {
            then_vals.push(self.pick(k)?);
        }
        let then_end = self.b.current_block();
        self.b.jump(join);
        self.vals = saved.clone();
        self.b.switch_to(else_b);
        self.region(depth + 1)?;
        let mut else_vals = Vec::new();
        for _ in 0..merged {
            else_vals.push(self.pick(k)?);
        }
        let else_end = self.b.current_block();
        self.b.jump(join);
        self.vals = saved;
        self.b.switch_to(join);
        for (t, e) in then_vals.into_iter().zip(else_vals) {
            let v = self
                .b
                .phi(Type::scalar(TYPES[k]), &[(t, then_end), (e, else_end)]);
            self.vals[k].push(v);
        }
        Ok(())
    }

    /// A loop of 0..=3 trips carrying values of one type that trade places
    /// every iteration.
    fn permuting_loop(&mut self, depth: u32) -> ArbResult<()> {
        let k = self.u.choose_index(TYPES.len())?;
        // Sometimes more values than a small file holds: some phis are
        // then kept in memory.
        let carried = match self.u.ratio(1u8, 5u8)? {
            true => self.u.int_in_range(5..=14usize)?,
            false => self.u.int_in_range(1..=4usize)?,
        };
        let mut init = Vec::with_capacity(carried);
        for _ in 0..carried {
            init.push(self.pick(k)?);
        }
        let trips = self.u.int_in_range(0..=3i32)?;
        let zero = self.b.const_i32(0);
        let one = self.b.const_i32(1);
        let limit = self.b.const_i32(trips);
        let pre = self.b.current_block();
        let header = self.b.new_block();
        let body = self.b.new_block();
        let exit = self.b.new_block();
        self.b.jump(header);
        self.b.switch_to(header);
        let ty = Type::scalar(TYPES[k]);
        let i = self.b.phi(Type::I32, &[(zero, pre)]);
        let phis: Vec<Value> = init.iter().map(|&v| self.b.phi(ty, &[(v, pre)])).collect();
        let c = self.b.ilt(i, limit);
        self.b.branch(c, body, exit);
        self.b.switch_to(body);
        let saved = self.vals.clone();
        self.vals[k].extend(phis.iter().copied());
        self.region(depth + 1)?;
        // Rotate (a cycle of copies), sometimes changing one value.
        let shift = self.u.int_in_range(1..=carried)?;
        let mut next: Vec<Value> = (0..carried).map(|j| phis[(j + shift) % carried]).collect();
        if self.u.arbitrary()? {
            let j = self.u.choose_index(carried)?;
            let other = self.pick(k)?;
            next[j] = self.arith(k, next[j], other);
        }
        let next_i = self.b.iadd(i, one);
        let latch = self.b.current_block();
        self.b.jump(header);
        self.b.set_phi_incoming(i, &[(zero, pre), (next_i, latch)]);
        for (j, &p) in phis.iter().enumerate() {
            self.b
                .set_phi_incoming(p, &[(init[j], pre), (next[j], latch)]);
        }
        self.vals = saved;
        self.b.switch_to(exit);
        self.vals[k].extend(phis);
        Ok(())
    }

    /// Fold every live value into a few outputs, so all stay live to here
    /// (the u32 ones into the meta output at the program's end).
    fn fold(&mut self, last: bool) -> ArbResult<()> {
        for (k, ty) in TYPES.iter().enumerate() {
            let vals = std::mem::take(&mut self.vals[k]);
            let Some((&first, rest)) = vals.split_first() else {
                continue;
            };
            let mut acc = first;
            for &v in rest {
                acc = self.arith(k, acc, v);
            }
            if *ty == Scalar::U32 && last {
                self.b.output(0, acc);
            } else {
                self.b.store_output(8 + k as u16, 0, acc);
            }
        }
        Ok(())
    }
}

/// The most units of each file live at once (MaxLive): the lower bound on
/// registers for programs without register constraints. A plain iterative
/// liveness, independent of the allocator's, so it can judge it.
pub fn max_live<T: TargetFacts<GenericOp> + ?Sized>(s: &Shader<'_, GenericOp>, t: &T) -> Vec<u32> {
    let cfg = Cfg::compute(s);
    let units = |v: Value| {
        let d = s.inst(s.value_def(v));
        let c = t.result_class(&d.op, s.value_type(v));
        (c.file.index(), c.units(s.value_type(v)))
    };
    let n = s.block_capacity();
    let mut live_in: Vec<HashSet<Value>> = vec![HashSet::new(); n];
    let live_out_of = |b, live_in: &Vec<HashSet<Value>>| {
        let mut out = HashSet::new();
        for &succ in cfg.succs(b) {
            for &i in s.block_insts(succ) {
                let d = s.inst(i);
                if d.op.is_phi() {
                    for (&v, &p) in d.args.iter().zip(d.targets.iter()) {
                        if p == b {
                            out.insert(v);
                        }
                    }
                }
            }
            for &v in &live_in[succ.index()] {
                out.insert(v);
            }
        }
        out
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo().iter().rev() {
            let mut live = live_out_of(b, &live_in);
            for &i in s.block_insts(b).iter().rev() {
                let d = s.inst(i);
                if let Some(r) = d.result {
                    live.remove(&r);
                }
                if !d.op.is_phi() {
                    live.extend(d.operands());
                }
            }
            if live != live_in[b.index()] {
                live_in[b.index()] = live;
                changed = true;
            }
        }
    }
    let mut best = vec![0u32; t.files().len()];
    let mut note = |set: &HashSet<Value>, extra: &[Value]| {
        let mut sum = vec![0u32; best.len()];
        for &v in set.iter().chain(extra) {
            let (f, u) = units(v);
            sum[f] += u;
        }
        for (b, s) in best.iter_mut().zip(sum) {
            *b = (*b).max(s);
        }
    };
    for &b in cfg.rpo() {
        let mut live = live_out_of(b, &live_in);
        let insts = s.block_insts(b);
        for &i in insts.iter().rev() {
            let d = s.inst(i);
            if d.op.is_phi() {
                break;
            }
            if let Some(r) = d.result {
                live.remove(&r);
                note(&live, &[r]);
            }
            live.extend(d.operands());
            note(&live, &[]);
        }
        let phis: Vec<Value> = insts
            .iter()
            .filter(|&&i| s.inst(i).op.is_phi())
            .filter_map(|&i| s.inst(i).result)
            .collect();
        let ins: HashSet<Value> = live_in[b.index()].clone();
        note(&ins, &phis);
    }
    best
}

/// Where each value of an allocated shader lives, for
/// [`interp::run_placed`].
pub fn placements<T: TargetFacts<GenericOp> + ?Sized>(
    shader: &Shader<'_, GenericOp>,
    target: &T,
) -> Vec<Option<Placement>> {
    let mut base = Vec::new();
    let mut total = 0;
    for f in target.files() {
        base.push(total);
        total += f.units;
    }
    let mut places = vec![None; shader.value_capacity()];
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        for r in d.results() {
            let Some(reg) = shader.value_reg(r) else {
                continue;
            };
            let ty = shader.value_type(r);
            let class = target.result_class(&d.op, ty);
            places[r.index()] = Some(Placement {
                slot: base[reg.file as usize] + reg.unit as u32,
                width: class.units(ty),
            });
        }
    }
    places
}

/// A real target's register model over the generic vocabulary, so the
/// reference interpreter can run programs allocated on its registers: its
/// files, the class of a value of each type (that of the target's copy of
/// it), fixed input and output registers, occupancy, scratch reach and
/// whether spills and fills read a base register. Copies are generic
/// `mov`s, spills and fills `array_store`/`array_load` on the allocator's
/// scratch arrays; a target with a [`TargetFacts::spill_base`] gets a
/// `const 0` base read as the arrays' address operand, so the allocator's
/// base register is exercised and checked here too.
pub struct RegisterModel<'t, O, T: ?Sized> {
    target: &'t T,
    op: PhantomData<O>,
}

impl<'t, O: Opcode, T: TargetFacts<O> + ?Sized> RegisterModel<'t, O, T> {
    pub fn new(target: &'t T) -> Self {
        RegisterModel {
            target,
            op: PhantomData,
        }
    }

    fn class(&self, ty: Type) -> RegClass {
        self.target
            .result_class(&Op::Opcode(self.target.copy(ty)), ty)
    }
}

impl<O: Opcode, T: TargetFacts<O> + ?Sized> TargetFacts<GenericOp> for RegisterModel<'_, O, T> {
    fn name(&self) -> &str {
        self.target.name()
    }

    fn files(&self) -> &[RegisterFile] {
        self.target.files()
    }

    fn operand_class(&self, _op: &Op<GenericOp>, _operand: usize, ty: Type) -> RegClass {
        self.class(ty)
    }

    fn result_class(&self, _op: &Op<GenericOp>, ty: Type) -> RegClass {
        self.class(ty)
    }

    fn input_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.target.input_register(index, ty)
    }

    fn output_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.target.output_register(index, ty)
    }

    fn latency(
        &self,
        _producer: &Op<GenericOp>,
        _consumer: &Op<GenericOp>,
        _operand: usize,
    ) -> u32 {
        0
    }

    fn is_async(&self, _op: &Op<GenericOp>) -> bool {
        false
    }

    fn operand_forms(&self, _op: &Op<GenericOp>, _operand: usize) -> OperandForms {
        OperandForms::default()
    }

    fn occupancy(&self, file: FileId, units: u32) -> u32 {
        self.target.occupancy(file, units)
    }

    fn copy(&self, _ty: Type) -> GenericOp {
        GenericOp::Mov {
            abs: false,
            neg: false,
        }
    }

    /// None: the reference interpreter runs the IR's `swap` as it is.
    fn swap(&self, _ty: Type) -> Option<crate::target::Exchange<GenericOp>> {
        None
    }

    fn spill(&self, _ty: Type, slot: SpillSlot) -> GenericOp {
        GenericOp::ArrayStore {
            array: slot.array,
            offset: slot.index,
        }
    }

    fn fill(&self, _ty: Type, slot: SpillSlot) -> GenericOp {
        GenericOp::ArrayLoad {
            array: slot.array,
            offset: slot.index,
        }
    }

    fn spill_base(&self) -> Option<GenericOp> {
        self.target
            .spill_base()
            .map(|_| GenericOp::Const { bits: 0 })
    }

    fn spill_base_operand(&self) -> BaseOperand {
        BaseOperand::Address
    }

    fn scratch_reach(&self) -> u32 {
        self.target.scratch_reach()
    }

    fn register_name(&self, class: RegClass, reg: PhysReg, ty: Type) -> String {
        self.target.register_name(class, reg, ty)
    }
}

/// Allocate `program` on `target` and compare the register-level run with
/// `expected` (when the original run was defined).
pub fn check_allocation<T: TargetFacts<GenericOp> + ?Sized>(
    program: &str,
    inv: &Invocation,
    target: &T,
    options: RaOptions,
) -> Result<RaRun, DiffError> {
    let arena = Bump::new();
    let parse = |text: &str| -> Result<Shader<'_, GenericOp>, DiffError> {
        lathe_ir::parse(&arena, text).map_err(|e| DiffError::InvalidProgram {
            error: format!("text does not parse: {e}"),
            program: text.to_string(),
        })
    };
    let original = parse(program)?;
    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let expected = match interp::run(&original, inv, limits) {
        Ok(o) => Some(o),
        Err(InterpError::Undefined { .. } | InterpError::StepLimit(_)) => None,
        Err(e) => {
            return Err(DiffError::InvalidProgram {
                error: format!("interpreter: {e}"),
                program: program.to_string(),
            });
        }
    };
    let mut s = parse(program)?;
    let mismatch = |detail: String, after: String| DiffError::Mismatch {
        stage: format!(
            "ra on {} ({} units in file {})",
            target.name(),
            options.max_units.unwrap_or(target.files()[0].units),
            target.files()[0].name
        ),
        detail,
        program: program.to_string(),
        after,
    };
    let alloc = ra::allocate(&mut s, target, options)
        .map_err(|e| mismatch(e.to_string(), String::new()))?;
    let text = lathe_ir::print(&s);
    lathe_ir::validate(&s).map_err(|e| mismatch(format!("invalid after ra: {e}"), text.clone()))?;
    ra::check::check(&s, target, &alloc)
        .map_err(|e| mismatch(format!("checker: {e}"), text.clone()))?;
    let reparsed = parse(&text)?;
    if lathe_ir::print(&reparsed) != text {
        return Err(mismatch("allocated text does not round-trip".into(), text));
    }
    let limit = options.max_units.unwrap_or(target.files()[0].units);
    if alloc.units_used.first().is_some_and(|&u| u > limit) {
        return Err(mismatch(format!("uses {:?} units", alloc.units_used), text));
    }
    if let Some(expected) = &expected {
        let places = placements(&reparsed, target);
        let got = interp::run_placed(&reparsed, inv, limits, &places);
        if got.as_ref() != Ok(expected) {
            return Err(mismatch(
                format!("expected {expected:?}, got {got:?}"),
                text,
            ));
        }
    }
    Ok(RaRun {
        compared: expected.is_some(),
        insts: s.len(),
        spills: alloc.spills,
        fills: alloc.fills,
        copies: alloc.copies,
        units: alloc.units_used.first().copied().unwrap_or(0),
        spill_bases: alloc.spill_bases(),
        memory_phis: alloc.memory_phis.len() as u32,
        groups_across_blocks: groups_across_blocks(&original),
        address_values: address_values(&s, target),
        shared_group_operands: shared_group_operands(&original),
        placed_group_operands: placed_group_operands(&s, &alloc),
        groups_under_spilling: if alloc.spills > 0 {
            collects(&original).count() as u32
        } else {
            0
        },
    })
}

/// Values in a register of an address file.
fn address_values<T: TargetFacts<GenericOp> + ?Sized>(s: &Shader<'_, GenericOp>, t: &T) -> u32 {
    (0..s.value_capacity())
        .filter_map(|v| s.value_reg(Value(v as u32)))
        .filter(|r| t.files()[r.file as usize].kind == FileKind::Address)
        .count() as u32
}

/// The `collect` instructions of `s`.
fn collects<'s>(
    s: &'s Shader<'_, GenericOp>,
) -> impl Iterator<Item = &'s lathe_ir::InstData<'s, GenericOp>> + 's {
    s.insts_in_order()
        .map(move |(_, i)| s.inst(i))
        .filter(|d| matches!(d.op, Op::Collect))
}

/// Operand reads of collects beyond the first read of each value.
fn shared_group_operands(s: &Shader<'_, GenericOp>) -> u32 {
    let mut seen = HashSet::new();
    collects(s)
        .flat_map(|d| d.args.iter())
        .filter(|&&v| !seen.insert(v))
        .count() as u32
}

/// Collect operands defined by an allocator copy or swap.
fn placed_group_operands(s: &Shader<'_, GenericOp>, alloc: &ra::Allocation) -> u32 {
    collects(s)
        .flat_map(|d| d.args.iter())
        .filter(|&&v| {
            matches!(
                alloc.edit(s.value_def(v)),
                Some(ra::Edit::Copy | ra::Edit::Swap)
            )
        })
        .count() as u32
}

/// Register groups (vector values) some instruction reads in a block
/// other than the one defining them.
fn groups_across_blocks(s: &Shader<'_, GenericOp>) -> u32 {
    let mut seen = HashSet::new();
    for (b, i) in s.insts_in_order() {
        for v in s.inst(i).operands() {
            if s.value_type(v).is_vector() && s.inst(s.value_def(v)).block != Some(b) {
                seen.insert(v);
            }
        }
    }
    seen.len() as u32
}

/// The differential check on fuzzer bytes: a pressure program or a general
/// one (first byte), on a small or a realistic register file.
pub fn differential(data: &[u8]) -> Result<RaRun, DiffError> {
    differential_on(data, &[])
}

/// [`differential`] also on `real` targets' register models (see
/// [`RegisterModel`]): the first byte picks the program kind, the target,
/// and for a real target whether its file is cut to a few registers (so
/// programs spill, through the target's spill base if it has one).
pub fn differential_on(
    data: &[u8],
    real: &[&dyn TargetFacts<GenericOp>],
) -> Result<RaRun, DiffError> {
    let Some((&mode, rest)) = data.split_first() else {
        return Ok(RaRun::default());
    };
    let mut u = Unstructured::new(rest);
    let arena = Bump::new();
    let made = if mode & 1 == 0 {
        pressure_program(&arena, &mut u, true)
    } else {
        generate(&arena, &mut u, GenLimits::default()).map(|g| (g.shader, g.invocation))
    };
    let Ok((shader, inv)) = made else {
        return Ok(RaRun::default());
    };
    let program = lathe_ir::print(&shader);
    if let Err(e) = lathe_ir::validate(&shader) {
        return Err(DiffError::InvalidProgram {
            error: e.to_string(),
            program,
        });
    }
    let pick = (mode >> 1) as usize % (4 + 2 * real.len());
    if pick >= 4 {
        let target = real[(pick - 4) / 2];
        // Cut to 16 of the first file's units, or the whole file.
        let options = RaOptions {
            max_units: (pick % 2 == 0).then_some(16),
            ..RaOptions::default()
        };
        return check_allocation(&program, &inv, target, options);
    }
    let target = match pick {
        0 => TestTarget::small(6).with_address_file(),
        1 => TestTarget::small(8),
        2 => TestTarget::new(12, false, 1).with_address_file(),
        _ => TestTarget::realistic(),
    };
    check_allocation(&program, &inv, &target, RaOptions::default())
}
