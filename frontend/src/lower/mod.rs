//! SPIR-V to generic IR: entry-point selection, inlining, control flow,
//! memory, and the driver interface.
//!
//! Every SPIR-V value is scalarised into its leaves (vectors, matrices,
//! arrays and structs flattened in member order). Function-local and
//! private variables, and outputs, become SSA variables per leaf ([`Ssa`]);
//! locals indexed by a run-time value become IR arrays. Calls are inlined
//! at the call site. Outputs are stored once, in a single exit block that
//! every `OpReturn` of the entry point reaches.

mod alu;
mod dominance;
pub(crate) mod glsl;
mod image;
mod io;
mod memory;

use crate::Options;
use crate::consts::{self, Constants, leaf_types};
use crate::error::Error;
use crate::interface::Interface;
use crate::module::{Module, Ty, id_operand, lit_operand};
use crate::ssa::{Ssa, Var};
use io::IoLeaf;
use lathe_ir::{ArrayId, Block, Builder, GenericOp, Shader, Stage, Type, Value};
use memory::{Ptr, Storage};
use rspirv::spirv::{ExecutionMode, ExecutionModel, Op};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

/// A lowered SPIR-V value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// Scalar leaves.
    Leaves(Rc<[Value]>),
    Ptr(Rc<Ptr>),
    /// A texture / storage image: its IR index and SPIR-V image type.
    Image {
        index: u32,
        ty: u32,
    },
    Sampler {
        index: u32,
    },
    SampledImage {
        image: u32,
        sampler: u32,
        ty: u32,
    },
    /// `OpImageTexelPointer`: a storage-image texel for atomics.
    TexelPtr {
        image: u8,
        shape: lathe_ir::TexShape,
        coord: Value,
        sample: Option<Value>,
    },
}

/// Where returns of the function being lowered go.
struct ReturnTo {
    block: Block,
    /// SSA variables receiving the returned value's leaves.
    vars: Vec<Var>,
}

/// Per-function CFG facts, computed once per function.
struct FuncCfg {
    /// Reachable blocks, in module order: `(label, first inst, end)`.
    blocks: Vec<(u32, usize, usize)>,
    preds: HashMap<u32, u32>,
    /// Locals and globals indexed by a run-time value somewhere in the function.
    dynamic_locals: HashSet<u32>,
}

pub(crate) struct Lowerer<'m, 's, 'a> {
    m: &'m Module,
    c: Constants,
    b: Builder<'s, 'a, GenericOp>,
    ssa: Ssa,
    stage: Stage,
    vals: HashMap<u32, Val>,
    vars: HashMap<u32, Storage>,
    leaf_cache: HashMap<u32, Rc<[Type]>>,
    const_cache: HashMap<(Type, u32), Value>,
    labels: HashMap<u32, Block>,
    /// Last IR block of each lowered SPIR-V block (the predecessor OpPhi names).
    block_end: HashMap<u32, Block>,
    returns: Vec<ReturnTo>,
    cfgs: HashMap<u32, Rc<FuncCfg>>,
    /// Output leaves: SSA variable, where it goes, and whether it was written.
    outputs: Vec<(Var, IoLeaf, bool)>,
    /// Input leaves, indexed by `Storage::Input::first` plus the leaf.
    inputs: Vec<IoLeaf>,
    iface: Interface,
    /// Index of the instruction being lowered (for error offsets).
    at: usize,
    depth: u32,
}

/// Lower one entry point of `m` into `shader`.
pub(crate) fn lower<'a>(
    m: &Module,
    opts: &Options,
    shader: &mut Shader<'a, GenericOp>,
) -> Result<Interface, Error> {
    let entry = select_entry(m, opts)?;
    let stage = match entry.model {
        ExecutionModel::Vertex => Stage::Vertex,
        ExecutionModel::Fragment => Stage::Fragment,
        ExecutionModel::GLCompute => Stage::Compute,
        other => {
            return Err(Error::Unsupported {
                feature: format!("{other:?} shaders"),
                what: "op OpEntryPoint".into(),
                offset: 0,
            });
        }
    };
    for &(cap, at) in &m.capabilities {
        use rspirv::spirv::Capability as C;
        if matches!(
            cap,
            C::Float64
                | C::Int64
                | C::Int8
                | C::Kernel
                | C::Addresses
                | C::Linkage
                | C::Tessellation
                | C::Int64Atomics
        ) {
            return Err(Error::Unsupported {
                feature: format!("capability {cap:?}"),
                what: format!("capability {cap:?}"),
                offset: m.offsets[at],
            });
        }
    }
    let c = consts::evaluate(m, &opts.spec)?;
    shader.stage = stage;
    // SPV_KHR_float_controls: without this mode Vulkan lets float results
    // ignore signed zeros, infinities and NaNs, which optimisation uses.
    shader.preserve_float_specials = m.exec_modes.iter().any(|(f, mode, _, _)| {
        *f == entry.function && *mode == ExecutionMode::SignedZeroInfNanPreserve
    });
    let entry_block = shader.add_block();
    let mut l = Lowerer {
        m,
        c,
        b: Builder::new(shader),
        ssa: Ssa::new(),
        stage,
        vals: HashMap::default(),
        vars: HashMap::default(),
        leaf_cache: HashMap::default(),
        const_cache: HashMap::default(),
        labels: HashMap::default(),
        block_end: HashMap::default(),
        returns: Vec::new(),
        cfgs: HashMap::default(),
        outputs: Vec::new(),
        inputs: Vec::new(),
        iface: Interface {
            entry: entry.name.clone(),
            stage: stage.name().to_string(),
            ..Interface::default()
        },
        at: 0,
        depth: 0,
    };
    l.b.switch_to(entry_block);
    l.ssa.expect_preds(l.b.shader(), entry_block, 0);
    l.iface.spec_constants = l.c.spec.clone();
    l.workgroup_size(entry.function)?;
    let used = l.used_globals(entry.function)?;
    l.declare_globals(&used)?;

    // The exit block goes last in the layout, after the body.
    let exit = l.b.shader().create_block();
    l.returns.push(ReturnTo {
        block: exit,
        vars: Vec::new(),
    });
    l.inline(entry.function, &[])?;
    l.ssa.seal(l.b.shader(), exit);
    l.b.shader().append_to_layout(exit);
    l.b.switch_to(exit);
    l.store_outputs();
    l.b.ret();
    let Lowerer { ssa, iface, .. } = l;
    ssa.finish(shader, entry_block);
    Ok(iface)
}

fn select_entry<'m>(m: &'m Module, opts: &Options) -> Result<&'m crate::module::EntryPoint, Error> {
    let model = opts.stage.map(|s| match s {
        Stage::Vertex => ExecutionModel::Vertex,
        Stage::Fragment => ExecutionModel::Fragment,
        Stage::Compute => ExecutionModel::GLCompute,
    });
    let found: Vec<_> = m
        .entry_points
        .iter()
        .filter(|e| opts.entry.as_deref().is_none_or(|n| n == e.name))
        .filter(|e| model.is_none_or(|s| s == e.model))
        .collect();
    let list = || {
        m.entry_points
            .iter()
            .map(|e| format!("{} ({:?})", e.name, e.model))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::EntryPoint(format!(
            "no entry point matches (the module has: {})",
            list()
        ))),
        _ => Err(Error::EntryPoint(format!(
            "several entry points match; pick one with --entry/--stage (the module has: {})",
            list()
        ))),
    }
}

impl<'a> Lowerer<'_, '_, 'a> {
    fn unsupported(&self, feature: impl Into<String>) -> Error {
        self.m.unsupported(self.at, feature)
    }

    fn unsupported_op(&self) -> Error {
        let name = self.m.insts.get(self.at).map_or("?", |i| i.class.opname);
        self.unsupported(format!("instruction Op{name}"))
    }

    fn invalid(&self, message: impl Into<String>) -> Error {
        Error::Invalid {
            message: message.into(),
            offset: self.m.offsets.get(self.at).copied().unwrap_or(0),
        }
    }

    fn ty(&self, id: u32) -> Result<&Ty, Error> {
        self.m
            .ty(id)
            .ok_or_else(|| self.invalid(format!("%{id} is not a type")))
    }

    /// The scalar leaf types of a type.
    fn leaf_types(&mut self, ty: u32) -> Result<Rc<[Type]>, Error> {
        if let Some(t) = self.leaf_cache.get(&ty) {
            return Ok(t.clone());
        }
        let mut out = Vec::new();
        leaf_types(self.m, &self.c.values, ty, &mut out).map_err(|e| self.unsupported(e))?;
        let rc: Rc<[Type]> = out.into();
        self.leaf_cache.insert(ty, rc.clone());
        Ok(rc)
    }

    fn leaf_count(&mut self, ty: u32) -> Result<u32, Error> {
        Ok(self.leaf_types(ty)?.len() as u32)
    }

    /// A constant in the entry block (one instruction per distinct value).
    fn constant(&mut self, ty: Type, bits: u32) -> Value {
        if let Some(&v) = self.const_cache.get(&(ty, bits)) {
            return v;
        }
        let shader = self.b.shader();
        let i = shader.create_inst(
            lathe_ir::Op::Opcode(GenericOp::Const { bits }),
            &[],
            &[],
            None,
            Some(ty),
        );
        let v = shader.inst(i).result.unwrap_or(Value(u32::MAX));
        self.ssa.prologue.push(i);
        self.const_cache.insert((ty, bits), v);
        v
    }

    fn const_u32(&mut self, x: u32) -> Value {
        self.constant(Type::U32, x)
    }

    /// A float constant of type `ty` (f32 or f16).
    fn const_float(&mut self, ty: Type, x: f32) -> Value {
        if ty == Type::F16 {
            self.constant(ty, lathe_ir::f16::from_f32(x) as u32)
        } else {
            self.constant(Type::F32, x.to_bits())
        }
    }

    fn get(&mut self, id: u32) -> Result<Val, Error> {
        if let Some(v) = self.vals.get(&id) {
            return Ok(v.clone());
        }
        if let Some(bits) = self.c.values.get(&id).cloned() {
            let ty = self
                .m
                .def(id)
                .and_then(|d| self.m.insts[d].result_type)
                .ok_or_else(|| self.invalid("constant without a type"))?;
            let tys = self.leaf_types(ty)?;
            let leaves: Rc<[Value]> = tys
                .iter()
                .zip(bits)
                .map(|(&t, b)| self.constant(t, b))
                .collect();
            // Constants live in the entry block and dominate every use:
            // materialise each one once.
            self.vals.insert(id, Val::Leaves(leaves.clone()));
            return Ok(Val::Leaves(leaves));
        }
        match self.m.def(id).map(|d| self.m.insts[d].class.opcode) {
            Some(Op::SpecConstantOp) => {
                Err(self.unsupported(format!("OpSpecConstantOp %{id} that cannot be folded")))
            }
            Some(Op::Undef) => {
                let ty = self
                    .m
                    .def(id)
                    .and_then(|d| self.m.insts[d].result_type)
                    .unwrap_or(0);
                let tys = self.leaf_types(ty)?;
                let leaves: Rc<[Value]> = tys.iter().map(|&t| self.constant(t, 0)).collect();
                Ok(Val::Leaves(leaves))
            }
            _ => Err(self.invalid(format!("%{id} is used before it is defined"))),
        }
    }

    fn leaves(&mut self, id: u32) -> Result<Rc<[Value]>, Error> {
        match self.get(id)? {
            Val::Leaves(l) => Ok(l),
            _ => Err(self.invalid(format!("%{id} is not a value"))),
        }
    }

    /// A one-leaf value.
    fn scalar(&mut self, id: u32) -> Result<Value, Error> {
        match *self.leaves(id)? {
            [v] => Ok(v),
            _ => Err(self.invalid(format!("%{id} is not a scalar"))),
        }
    }

    /// A value of exactly `n` leaves.
    fn leaves_n(&mut self, id: u32, n: usize) -> Result<Rc<[Value]>, Error> {
        let l = self.leaves(id)?;
        if l.len() != n || n == 0 {
            return Err(self.invalid(format!("%{id} has {} components, expected {n}", l.len())));
        }
        Ok(l)
    }

    /// Check the IR instructions made since `from` against their opcodes'
    /// operand rules, so that an ill-typed SPIR-V instruction is reported
    /// as such instead of producing IR that does not validate.
    fn check_new(&mut self, from: usize) -> Result<(), Error> {
        let shader = self.b.shader();
        let mut types = Vec::new();
        let mut problem = None;
        for i in from..shader.inst_capacity() {
            let data = shader.inst(lathe_ir::Inst(i as u32));
            types.clear();
            types.extend(data.args.iter().map(|&a| shader.value_type(a)));
            let result = data.result.map(|r| shader.value_type(r));
            let verdict = match data.op {
                lathe_ir::Op::Opcode(o) => lathe_ir::Opcode::check(
                    &o,
                    &lathe_ir::Signature {
                        operands: &types,
                        result,
                        has_address: data.address.is_some(),
                        arrays: shader.arrays(),
                    },
                ),
                lathe_ir::Op::Collect if types.windows(2).any(|w| w[0] != w[1]) => {
                    Err("collect of mixed types".to_string())
                }
                lathe_ir::Op::Branch if types.first() != Some(&Type::BOOL) => {
                    Err("branch condition is not bool".to_string())
                }
                _ => Ok(()),
            };
            if let Err(msg) = verdict {
                problem = Some(msg);
                break;
            }
        }
        match problem {
            Some(msg) => {
                let name = self.m.insts.get(self.at).map_or("?", |i| i.class.opname);
                Err(self.invalid(format!("operands of Op{name} do not fit its types ({msg})")))
            }
            None => Ok(()),
        }
    }

    /// Operand `k` of the current instruction as an id.
    fn id(&self, k: usize) -> Result<u32, Error> {
        id_operand(&self.m.insts[self.at], k)
            .ok_or_else(|| self.invalid(format!("operand {k} is not an id")))
    }

    fn lit(&self, k: usize) -> Result<u32, Error> {
        lit_operand(&self.m.insts[self.at], k)
            .ok_or_else(|| self.invalid(format!("operand {k} is not a literal")))
    }

    fn set(&mut self, id: u32, v: Val) {
        self.vals.insert(id, v);
    }

    fn set_leaves(&mut self, id: u32, leaves: Vec<Value>) {
        self.vals.insert(id, Val::Leaves(leaves.into()));
    }

    /// Reinterpret `v` as `ty` (same width): a `mov`, or nothing.
    fn cast(&mut self, v: Value, ty: Type) -> Value {
        if self.b.type_of(v) == ty {
            v
        } else {
            self.b.op(
                GenericOp::Mov {
                    abs: false,
                    neg: false,
                },
                &[v],
                ty,
            )
        }
    }

    /// The constant value of an id, if it is one.
    fn const_value(&self, id: u32) -> Option<u32> {
        self.c.values.get(&id).and_then(|v| v.first().copied())
    }

    fn workgroup_size(&mut self, function: u32) -> Result<(), Error> {
        if self.stage != Stage::Compute {
            return Ok(());
        }
        let mut size = None;
        for (f, mode, lits, at) in &self.m.exec_modes {
            if *f != function {
                continue;
            }
            match mode {
                ExecutionMode::LocalSize if lits.len() == 3 => {
                    size = Some([lits[0], lits[1], lits[2]])
                }
                ExecutionMode::LocalSizeId if lits.len() == 3 => {
                    let mut s = [0; 3];
                    for k in 0..3 {
                        s[k] = self.const_value(lits[k]).ok_or_else(|| {
                            self.m.unsupported(*at, "LocalSizeId of a non-constant")
                        })?;
                    }
                    size = Some(s);
                }
                _ => {}
            }
        }
        // The WorkgroupSize built-in constant overrides the execution mode.
        for (&id, d) in &self.m.decos {
            if d.builtin == Some(rspirv::spirv::BuiltIn::WorkgroupSize)
                && let Some(v) = self.c.values.get(&id)
                && v.len() == 3
            {
                size = Some([v[0], v[1], v[2]]);
            }
        }
        self.iface.workgroup_size = size;
        self.b.shader().workgroup_size = size;
        Ok(())
    }

    /// Global variables referenced from the functions the entry point reaches.
    fn used_globals(&self, entry: u32) -> Result<HashSet<u32>, Error> {
        let globals: HashSet<u32> = self.m.globals.iter().copied().collect();
        let mut used = HashSet::default();
        let mut seen = HashSet::default();
        let mut stack = vec![entry];
        while let Some(f) = stack.pop() {
            if !seen.insert(f) {
                continue;
            }
            let func = self
                .m
                .functions
                .get(&f)
                .ok_or_else(|| self.invalid(format!("%{f} is not a function")))?;
            let end = func.blocks.last().map_or(func.start, |b| b.2);
            for inst in &self.m.insts[func.start..end] {
                for op in &inst.operands {
                    if let rspirv::dr::Operand::IdRef(id) = op {
                        if globals.contains(id) {
                            used.insert(*id);
                        }
                        if inst.class.opcode == Op::FunctionCall
                            && self.m.functions.contains_key(id)
                        {
                            stack.push(*id);
                        }
                    }
                }
            }
        }
        Ok(used)
    }

    fn block_for(&mut self, label: u32, cfg: &FuncCfg) -> Block {
        if let Some(&b) = self.labels.get(&label) {
            return b;
        }
        let b = self.b.new_block();
        self.labels.insert(label, b);
        let n = cfg.preds.get(&label).copied().unwrap_or(0);
        self.ssa.expect_preds(self.b.shader(), b, n);
        b
    }

    fn func_cfg(&mut self, f: u32) -> Result<Rc<FuncCfg>, Error> {
        if let Some(c) = self.cfgs.get(&f) {
            return Ok(c.clone());
        }
        let func = self
            .m
            .functions
            .get(&f)
            .ok_or_else(|| self.invalid(format!("%{f} is not a function")))?;
        let index: HashMap<u32, usize> = func
            .blocks
            .iter()
            .enumerate()
            .map(|(k, b)| (b.0, k))
            .collect();
        let mut reachable = vec![false; func.blocks.len()];
        let mut preds: HashMap<u32, u32> = HashMap::default();
        let mut stack = Vec::new();
        if !func.blocks.is_empty() {
            reachable[0] = true;
            stack.push(0);
        }
        while let Some(k) = stack.pop() {
            let (_, _, end) = func.blocks[k];
            for t in successors(&self.m.insts[end - 1]) {
                let Some(&tk) = index.get(&t) else {
                    self.at = end - 1;
                    return Err(
                        self.invalid(format!("branch to %{t}, not a block of this function"))
                    );
                };
                *preds.entry(t).or_default() += 1;
                if !reachable[tk] {
                    reachable[tk] = true;
                    stack.push(tk);
                }
            }
        }
        let blocks: Vec<_> = func
            .blocks
            .iter()
            .zip(&reachable)
            .filter(|(_, r)| **r)
            .map(|(b, _)| *b)
            .collect();
        let locals_from = self.m.functions.values().map(|f| f.start).min();
        if let Err(v) = dominance::check(
            &self.m.insts,
            &blocks,
            |id| self.m.def(id),
            locals_from.unwrap_or(usize::MAX),
            &func.params,
        ) {
            self.at = v.at;
            return Err(self.invalid(format!(
                "%{} is used where its definition does not dominate the use",
                v.id
            )));
        }
        // Locals reached through an access chain with a run-time index.
        let params = func.params.clone();
        let mut root: HashMap<u32, u32> = self
            .m
            .globals
            .iter()
            .chain(&params)
            .map(|&g| (g, g))
            .collect();
        let mut dynamic_locals = HashSet::default();
        // Guard against recursion (invalid SPIR-V) while callees are scanned.
        self.cfgs.insert(
            f,
            Rc::new(FuncCfg {
                blocks: Vec::new(),
                preds: HashMap::default(),
                dynamic_locals: HashSet::default(),
            }),
        );
        for &(_, start, end) in &blocks {
            for at in start..end {
                let inst = &self.m.insts[at];
                match inst.class.opcode {
                    // A pointer argument the callee indexes at run time makes
                    // the caller's variable an array too.
                    Op::FunctionCall => {
                        let Some(callee) =
                            id_operand(inst, 0).filter(|c| self.m.functions.contains_key(c))
                        else {
                            continue;
                        };
                        let callee_params = self.m.functions[&callee].params.clone();
                        let args: Vec<Option<u32>> = (1..inst.operands.len())
                            .map(|k| id_operand(inst, k))
                            .collect();
                        let callee_cfg = self.func_cfg(callee)?;
                        for (p, a) in callee_params.iter().zip(args) {
                            if callee_cfg.dynamic_locals.contains(p)
                                && let Some(r) = a.and_then(|a| root.get(&a).copied())
                            {
                                dynamic_locals.insert(r);
                            }
                        }
                    }
                    Op::Variable => {
                        if let Some(id) = inst.result_id {
                            root.insert(id, id);
                        }
                    }
                    Op::AccessChain | Op::InBoundsAccessChain => {
                        let base = id_operand(inst, 0).and_then(|b| root.get(&b).copied());
                        if let (Some(base), Some(id)) = (base, inst.result_id) {
                            root.insert(id, base);
                            let dynamic = (1..inst.operands.len()).any(|k| {
                                id_operand(inst, k).is_some_and(|i| !self.c.values.contains_key(&i))
                            });
                            if dynamic {
                                dynamic_locals.insert(base);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let cfg = Rc::new(FuncCfg {
            blocks,
            preds,
            dynamic_locals,
        });
        self.cfgs.insert(f, cfg.clone());
        Ok(cfg)
    }

    /// Lower function `f` at the current position, its parameters bound to
    /// `args`; returns the returned value (if any) with the cursor after
    /// the call.
    fn inline(&mut self, f: u32, args: &[Val]) -> Result<Option<Val>, Error> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(self.unsupported("calls nested deeper than 64 (recursion?)"));
        }
        let cfg = self.func_cfg(f)?;
        let func = &self.m.functions[&f];
        if func.params.len() != args.len() {
            return Err(self.invalid("call with the wrong number of arguments"));
        }
        for (&p, a) in func.params.iter().zip(args) {
            self.vals.insert(p, a.clone());
        }
        for &(label, _, _) in &cfg.blocks {
            self.labels.remove(&label);
        }
        let top = self.depth == 1;
        let ret_ty = self.m.insts[func.start].result_type.unwrap_or(0);
        if !top {
            let cont = self.b.new_block();
            let vars = if matches!(self.m.ty(ret_ty), Some(Ty::Void) | None) {
                Vec::new()
            } else {
                let tys = self.leaf_types(ret_ty)?;
                tys.iter().map(|&t| self.ssa.new_var(t)).collect()
            };
            self.returns.push(ReturnTo { block: cont, vars });
        }
        let Some(&(first, _, _)) = cfg.blocks.first() else {
            return Err(self.invalid("function without blocks"));
        };
        // Enter the function: its first block has the call site as its only
        // predecessor (SPIR-V forbids branching to a function's entry block).
        let entry = self.b.new_block();
        self.labels.insert(first, entry);
        let here = self.b.current_block();
        self.b.jump(entry);
        self.ssa.edge(self.b.shader(), here, entry);
        self.ssa.expect_preds(self.b.shader(), entry, 1);

        let mut phis = Vec::new();
        for &(label, start, end) in &cfg.blocks {
            let block = self.block_for(label, &cfg);
            self.b.switch_to(block);
            for at in start + 1..end {
                self.at = at;
                let inst = &self.m.insts[at];
                match inst.class.opcode {
                    Op::Phi => {
                        self.phi_placeholder()?;
                        phis.push((at, block));
                    }
                    Op::Variable => self.local_variable(&cfg)?,
                    op if crate::module::is_terminator(op) => {
                        self.block_end.insert(label, self.b.current_block());
                        self.terminator(&cfg)?;
                    }
                    _ => {
                        let from = self.b.shader().inst_capacity();
                        self.instruction()?;
                        self.check_new(from)?;
                    }
                }
            }
        }
        for (at, block) in phis {
            self.at = at;
            self.complete_phi(block)?;
        }
        self.depth -= 1;
        if top {
            return Ok(None);
        }
        let ret = self
            .returns
            .pop()
            .ok_or_else(|| self.invalid("return stack"))?;
        self.ssa.seal(self.b.shader(), ret.block);
        self.b.switch_to(ret.block);
        if ret.vars.is_empty() {
            return Ok(None);
        }
        let cur = self.b.current_block();
        let leaves: Vec<Value> = ret
            .vars
            .iter()
            .map(|&v| self.ssa.read(self.b.shader(), v, cur))
            .collect();
        Ok(Some(Val::Leaves(leaves.into())))
    }

    /// Create the IR phis of an `OpPhi` now (so uses see them) and record
    /// its operands, filled in once every predecessor is lowered.
    fn phi_placeholder(&mut self) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) else {
            return Err(self.invalid("OpPhi without id or type"));
        };
        if matches!(
            self.ty(ty)?,
            Ty::Pointer { .. } | Ty::Image(_) | Ty::SampledImage { .. } | Ty::Sampler
        ) {
            return Err(self.unsupported("OpPhi of pointers or handles"));
        }
        let block = self.b.current_block();
        let tys = self.leaf_types(ty)?;
        let leaves: Vec<Value> = tys
            .iter()
            .map(|&t| self.ssa.add_phi(self.b.shader(), block, t))
            .collect();
        self.set_leaves(id, leaves);
        Ok(())
    }

    fn complete_phi(&mut self, block: Block) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let id = inst
            .result_id
            .ok_or_else(|| self.invalid("OpPhi without id"))?;
        let Val::Leaves(phis) = self.get(id)? else {
            return Err(self.unsupported("OpPhi of pointers or handles"));
        };
        let mut per_leaf: Vec<Vec<(Value, Block)>> = vec![Vec::new(); phis.len()];
        let n = inst.operands.len() / 2;
        for k in 0..n {
            let v = self.id(2 * k)?;
            let pred = self.id(2 * k + 1)?;
            let Some(&pred_block) = self.block_end.get(&pred) else {
                // An edge from an unreachable block.
                continue;
            };
            let leaves = self.leaves(v)?;
            if leaves.len() != phis.len() {
                return Err(self.invalid("OpPhi operand of the wrong type"));
            }
            for (j, &l) in leaves.iter().enumerate() {
                if self.b.type_of(l) != self.b.type_of(phis[j]) {
                    return Err(self.invalid("OpPhi operand of the wrong type"));
                }
                per_leaf[j].push((l, pred_block));
            }
        }
        // Each predecessor of the block must be named exactly once: an
        // operand naming something that is not a block of the function (or
        // missing a predecessor) would leave the phi without a value on an
        // edge.
        let mut named: Vec<Block> = per_leaf
            .first()
            .map(|ops| ops.iter().map(|&(_, b)| b).collect())
            .unwrap_or_default();
        let mut preds = self.ssa.preds(block).to_vec();
        named.sort_unstable_by_key(|b| b.index());
        preds.sort_unstable_by_key(|b| b.index());
        if !phis.is_empty() && named != preds {
            return Err(self.invalid("OpPhi does not name each predecessor of its block once"));
        }
        for (j, ops) in per_leaf.into_iter().enumerate() {
            self.ssa.set_phi_operands(phis[j], ops);
        }
        Ok(())
    }

    fn terminator(&mut self, cfg: &FuncCfg) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let here = self.b.current_block();
        match inst.class.opcode {
            Op::Branch => {
                let t = self.block_for(self.id(0)?, cfg);
                self.b.jump(t);
                self.ssa.edge(self.b.shader(), here, t);
            }
            Op::BranchConditional => {
                let cond = self.scalar(self.id(0)?)?;
                if self.b.type_of(cond) != Type::BOOL {
                    return Err(self.invalid("branch condition is not a bool"));
                }
                let (tl, fl) = (self.id(1)?, self.id(2)?);
                let t = self.block_for(tl, cfg);
                if tl == fl {
                    self.b.jump(t);
                    self.ssa.edge(self.b.shader(), here, t);
                } else {
                    let f = self.block_for(fl, cfg);
                    self.b.branch(cond, t, f);
                    self.ssa.edge(self.b.shader(), here, t);
                    self.ssa.edge(self.b.shader(), here, f);
                }
            }
            Op::Switch => {
                let sel = self.scalar(self.id(0)?)?;
                let ty = self.b.type_of(sel);
                if !ty.scalar.is_int() {
                    return Err(self.invalid("switch selector is not an integer"));
                }
                let default = self.id(1)?;
                let n = (inst.operands.len() - 2) / 2;
                for k in 0..n {
                    let value = self.lit(2 + 2 * k)?;
                    let target = self.id(3 + 2 * k)?;
                    let c = self.constant(ty, value);
                    let eq = self.b.ieq(sel, c);
                    let t = self.block_for(target, cfg);
                    let next = self.b.new_block();
                    let cur = self.b.current_block();
                    self.b.branch(eq, t, next);
                    self.ssa.edge(self.b.shader(), cur, t);
                    self.ssa.edge(self.b.shader(), cur, next);
                    self.ssa.seal(self.b.shader(), next);
                    self.b.switch_to(next);
                }
                let t = self.block_for(default, cfg);
                let cur = self.b.current_block();
                self.b.jump(t);
                self.ssa.edge(self.b.shader(), cur, t);
            }
            Op::Return | Op::ReturnValue => {
                let ret_block = self
                    .returns
                    .last()
                    .map(|r| r.block)
                    .ok_or_else(|| self.invalid("return"))?;
                if inst.class.opcode == Op::ReturnValue {
                    let leaves = self.leaves(self.id(0)?)?;
                    let vars = self
                        .returns
                        .last()
                        .map(|r| r.vars.clone())
                        .unwrap_or_default();
                    for (&var, &v) in vars.iter().zip(leaves.iter()) {
                        let v = self.cast(v, self.ssa.var_type(var));
                        self.ssa.write(var, here, v);
                    }
                }
                self.b.jump(ret_block);
                self.ssa.edge(self.b.shader(), here, ret_block);
            }
            Op::Kill | Op::TerminateInvocation => {
                self.b.discard();
                self.b.ret();
            }
            Op::Unreachable => {
                self.b.ret();
            }
            _ => return Err(self.unsupported_op()),
        }
        Ok(())
    }

    /// A function-scope `OpVariable`.
    fn local_variable(&mut self, cfg: &FuncCfg) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let id = inst
            .result_id
            .ok_or_else(|| self.invalid("OpVariable without id"))?;
        let ptr_ty = inst
            .result_type
            .ok_or_else(|| self.invalid("OpVariable without type"))?;
        let Ty::Pointer { pointee, .. } = self.ty(ptr_ty)?.clone() else {
            return Err(self.invalid("OpVariable of a non-pointer type"));
        };
        let init = id_operand(inst, 1);
        let storage = if cfg.dynamic_locals.contains(&id) {
            self.array_storage(pointee)?
        } else {
            self.ssa_storage(pointee)?
        };
        self.vars.insert(id, storage);
        let ptr = Rc::new(Ptr {
            var: id,
            ty: pointee,
            path: Vec::new(),
        });
        self.set(id, Val::Ptr(ptr.clone()));
        if let Some(init) = init {
            let v = self.get(init)?;
            self.store(&ptr, v)?;
        } else if let Storage::Ssa { base, count } = self.vars[&id] {
            // Reads before any write see zero, not an operandless phi.
            let cur = self.b.current_block();
            for k in 0..count {
                let ty = self.ssa.var_type(base + k);
                let z = self.constant(ty, 0);
                self.ssa.write(base + k, cur, z);
            }
        }
        Ok(())
    }

    fn ssa_storage(&mut self, pointee: u32) -> Result<Storage, Error> {
        let tys = self.leaf_types(pointee)?;
        let base = self.ssa.new_var(*tys.first().unwrap_or(&Type::U32));
        for &t in tys.iter().skip(1) {
            self.ssa.new_var(t);
        }
        if tys.is_empty() {
            return Ok(Storage::Ssa { base, count: 0 });
        }
        // new_var hands out consecutive numbers.
        let _ = self.ssa.var_type(base);
        Ok(Storage::Ssa {
            base,
            count: tys.len() as u32,
        })
    }

    fn array_storage(&mut self, pointee: u32) -> Result<Storage, Error> {
        let tys = self.leaf_types(pointee)?;
        let Some(&elem) = tys.first() else {
            return Err(self.unsupported("empty dynamically indexed variable"));
        };
        let mixed = tys.iter().any(|&t| t != elem);
        if mixed
            && tys
                .iter()
                .any(|t| t.scalar.bits() != 32 && t.scalar != lathe_ir::Scalar::Bool)
        {
            return Err(
                self.unsupported("dynamically indexed local mixing 16-bit and other scalars")
            );
        }
        let id: ArrayId = self.b.shader().add_array(lathe_ir::ArrayDecl {
            elem: if mixed { Type::U32 } else { elem },
            len: tys.len() as u32,
        });
        Ok(Storage::Array {
            array: id,
            tys: mixed.then_some(tys),
        })
    }

    /// One non-terminator instruction.
    fn instruction(&mut self) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let op = inst.class.opcode;
        match op {
            Op::Nop
            | Op::Line
            | Op::NoLine
            | Op::SelectionMerge
            | Op::LoopMerge
            | Op::Name
            | Op::ModuleProcessed
            | Op::Undef => Ok(()),
            Op::Load | Op::Store | Op::AccessChain | Op::InBoundsAccessChain | Op::CopyMemory => {
                self.memory()
            }
            Op::FunctionCall => {
                let f = self.id(0)?;
                let mut args = Vec::new();
                for k in 1..inst.operands.len() {
                    args.push(self.get(self.id(k)?)?);
                }
                let id = inst.result_id;
                let at = self.at;
                let r = self.inline(f, &args)?;
                self.at = at;
                if let (Some(id), Some(r)) = (id, r) {
                    self.set(id, r);
                }
                Ok(())
            }
            Op::ExtInst => self.ext_inst(),
            _ => self.alu(),
        }
    }

    fn store_outputs(&mut self) {
        let exit = self.b.current_block();
        for k in 0..self.outputs.len() {
            let (var, leaf, written) = self.outputs[k];
            if !written {
                continue;
            }
            let v = self.ssa.read(self.b.shader(), var, exit);
            if let Some(slot) = leaf.slot {
                self.b.store_output(slot, leaf.comp, v);
            }
        }
    }
}

/// Branch targets of a terminator (with repetition, one per edge).
fn successors(inst: &rspirv::dr::Instruction) -> Vec<u32> {
    match inst.class.opcode {
        Op::Branch => id_operand(inst, 0).into_iter().collect(),
        Op::BranchConditional => {
            let (t, f) = (id_operand(inst, 1), id_operand(inst, 2));
            if t == f {
                t.into_iter().collect()
            } else {
                t.into_iter().chain(f).collect()
            }
        }
        Op::Switch => {
            let mut v: Vec<u32> = id_operand(inst, 1).into_iter().collect();
            let n = inst.operands.len().saturating_sub(2) / 2;
            v.extend((0..n).filter_map(|k| id_operand(inst, 3 + 2 * k)));
            v
        }
        _ => Vec::new(),
    }
}
