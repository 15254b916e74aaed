//! Storage: a shader's instructions, values and blocks, all in one bump arena.
//!
//! Handles ([`Inst`], [`Value`], [`Block`], [`ArrayId`]) are `u32` indices into
//! arena-allocated tables. Operand and target lists are arena slices. Nothing
//! is freed individually: removing an instruction only unlinks it from its
//! block; the arena is dropped wholesale when compilation ends.

use crate::opcode::{Op, Opcode};
use crate::types::Type;
use bumpalo::Bump;
use bumpalo::collections::Vec as BVec;
use std::fmt;

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

handle!(
    /// An instruction of a [`Shader`].
    Inst,
    "inst"
);
handle!(
    /// An SSA value of a [`Shader`]; each is defined by exactly one instruction.
    Value,
    "%"
);
handle!(
    /// A basic block of a [`Shader`].
    Block,
    "b"
);
handle!(
    /// A declared array of a [`Shader`].
    ArrayId,
    "a"
);

/// The pipeline stage a shader runs in.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Stage {
    Vertex,
    Fragment,
    Compute,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
            Stage::Compute => "compute",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        [Stage::Vertex, Stage::Fragment, Stage::Compute]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// A register array (ir3 `ir3_array`): consecutive elements accessed with a
/// constant offset plus an optional address-register value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ArrayDecl {
    pub elem: Type,
    pub len: u32,
}

/// One instruction.
#[derive(Debug)]
pub struct InstData<'a, O> {
    pub op: Op<O>,
    /// SSA operands (use→def edges), in order.
    pub args: &'a mut [Value],
    /// Branch targets, or for a phi the predecessor each operand comes from.
    pub targets: &'a mut [Block],
    /// The address-register value of a relative access: a virtual operand
    /// after `args` that orders this instruction after the address write.
    pub address: Option<Value>,
    pub result: Option<Value>,
    /// The second result of a two-result instruction (`swap`).
    pub second_result: Option<Value>,
    /// The block holding it, `None` once removed.
    pub block: Option<Block>,
}

impl<O> InstData<'_, O> {
    /// All SSA operands including the address operand, which comes last.
    pub fn operands(&self) -> impl Iterator<Item = Value> + '_ {
        self.args.iter().copied().chain(self.address)
    }

    /// The values it defines: the result, then the second result.
    pub fn results(&self) -> impl Iterator<Item = Value> + '_ {
        self.result.into_iter().chain(self.second_result)
    }
}

/// A physical register given to a value by register allocation: a register
/// file (an index into [`Shader::register_files`]) and the first allocation
/// unit of the value in it. Printed after the value's type as
/// `%3:f32@r4` (file `r`, unit 4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Reg {
    pub file: u8,
    pub unit: u16,
}

/// One value: its type, its defining instruction and, after register
/// allocation, its register.
#[derive(Clone, Copy, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: Inst,
    pub reg: Option<Reg>,
}

/// One basic block: an ordered list of instructions ending in a terminator.
#[derive(Debug)]
pub struct BlockData<'a> {
    pub insts: BVec<'a, Inst>,
    /// Whether it is in the shader's block layout.
    pub in_layout: bool,
}

/// [`Shader::with_capacity`] reserves one more instruction and value per
/// this many asked for: room for the copies, spills and fills the backend
/// passes insert. Growing past the reservation copies the whole table to
/// fresh arena memory (at 100k instructions that copy and its page faults
/// cost more than a pass like `group` itself), while reserved memory that
/// is never written stays untouched virtual memory.
const INSERT_HEADROOM: usize = 2;

/// A shader in SSA form, stored in the arena `'a`.
pub struct Shader<'a, O> {
    arena: &'a Bump,
    pub stage: Stage,
    /// Whether float operations must keep signed zeros, infinities and NaNs
    /// exactly (SPIR-V `SignedZeroInfNanPreserve`). When false, as Vulkan
    /// allows by default, optimisations may fold `x * 0.0` to `0.0` and
    /// `x + 0.0` to `x`. Printed as `preserve_float_specials` after the
    /// stage in the text form's header.
    pub preserve_float_specials: bool,
    /// Bytes of private (per-invocation scratch) memory the shader's own
    /// `load_private`/`store_private` address, from byte 0; a register
    /// allocator's spill slots follow them. Printed as a `private N` line.
    pub private_bytes: u32,
    /// A compute shader's workgroup size, when the module declares it
    /// (backends then need no driver parameter for it). Printed as a
    /// `workgroup_size X Y Z` line.
    pub workgroup_size: Option<[u32; 3]>,
    insts: BVec<'a, InstData<'a, O>>,
    values: BVec<'a, ValueData>,
    blocks: BVec<'a, BlockData<'a>>,
    layout: BVec<'a, Block>,
    arrays: BVec<'a, ArrayDecl>,
    register_files: BVec<'a, &'a str>,
}

impl<'a, O: Opcode> Shader<'a, O> {
    /// An empty shader (no blocks) in `arena`.
    pub fn new(arena: &'a Bump, stage: Stage) -> Self {
        Self::with_capacity(arena, stage, 0, 0)
    }

    /// An empty shader with room for `insts` instructions and values and
    /// `blocks` blocks reserved up front in the arena, plus half as many
    /// instructions and values again for what later passes insert (see
    /// `INSERT_HEADROOM`).
    pub fn with_capacity(arena: &'a Bump, stage: Stage, insts: usize, blocks: usize) -> Self {
        let room = insts + insts / INSERT_HEADROOM;
        Shader {
            arena,
            stage,
            preserve_float_specials: false,
            private_bytes: 0,
            workgroup_size: None,
            insts: BVec::with_capacity_in(room, arena),
            values: BVec::with_capacity_in(room, arena),
            blocks: BVec::with_capacity_in(blocks, arena),
            layout: BVec::with_capacity_in(blocks, arena),
            arrays: BVec::new_in(arena),
            register_files: BVec::new_in(arena),
        }
    }

    pub fn arena(&self) -> &'a Bump {
        self.arena
    }

    /// A copy in the same arena, with the same instruction, value and
    /// block numbers, for passes that must leave the original intact.
    pub fn duplicate(&self) -> Self {
        let arena = self.arena;
        let mut insts = BVec::with_capacity_in(self.insts.capacity(), arena);
        for d in self.insts.iter() {
            insts.push(InstData {
                op: d.op,
                args: arena.alloc_slice_copy(d.args),
                targets: arena.alloc_slice_copy(d.targets),
                address: d.address,
                result: d.result,
                second_result: d.second_result,
                block: d.block,
            });
        }
        let mut values = BVec::with_capacity_in(self.values.capacity(), arena);
        values.extend_from_slice(&self.values);
        let mut blocks = BVec::with_capacity_in(self.blocks.capacity(), arena);
        for b in self.blocks.iter() {
            let mut list = BVec::with_capacity_in(b.insts.len(), arena);
            list.extend_from_slice(&b.insts);
            blocks.push(BlockData {
                insts: list,
                in_layout: b.in_layout,
            });
        }
        let mut layout = BVec::with_capacity_in(self.layout.len(), arena);
        layout.extend_from_slice(&self.layout);
        let mut arrays = BVec::with_capacity_in(self.arrays.len(), arena);
        arrays.extend_from_slice(&self.arrays);
        let mut register_files = BVec::with_capacity_in(self.register_files.len(), arena);
        register_files.extend_from_slice(&self.register_files);
        Shader {
            arena,
            stage: self.stage,
            preserve_float_specials: self.preserve_float_specials,
            private_bytes: self.private_bytes,
            workgroup_size: self.workgroup_size,
            insts,
            values,
            blocks,
            layout,
            arrays,
            register_files,
        }
    }

    // ----- blocks -----

    /// A new block, appended to the layout.
    pub fn add_block(&mut self) -> Block {
        let b = self.create_block();
        self.append_to_layout(b);
        b
    }

    /// A new block that is not yet in the layout.
    pub fn create_block(&mut self) -> Block {
        let b = Block(self.blocks.len() as u32);
        self.blocks.push(BlockData {
            insts: BVec::new_in(self.arena),
            in_layout: false,
        });
        b
    }

    /// Put a block created with [`Shader::create_block`] at the end of the layout.
    pub fn append_to_layout(&mut self, b: Block) {
        if !self.blocks[b.index()].in_layout {
            self.blocks[b.index()].in_layout = true;
            self.layout.push(b);
        }
    }

    /// Put a block created with [`Shader::create_block`] into the layout
    /// just before `before` (at the end when `before` is `None` or not
    /// laid out).
    pub fn insert_into_layout(&mut self, b: Block, before: Option<Block>) {
        if self.blocks[b.index()].in_layout {
            return;
        }
        self.blocks[b.index()].in_layout = true;
        let at = before
            .and_then(|x| self.layout.iter().position(|&y| y == x))
            .unwrap_or(self.layout.len());
        self.layout.insert(at, b);
    }

    /// Take a block out of the layout, unlinking its instructions.
    pub fn remove_block(&mut self, b: Block) {
        let data = &mut self.blocks[b.index()];
        if !data.in_layout {
            return;
        }
        data.in_layout = false;
        let insts = std::mem::replace(&mut data.insts, BVec::new_in(self.arena));
        for &i in insts.iter() {
            self.insts[i.index()].block = None;
        }
        self.layout.retain(|&x| x != b);
    }

    /// Take several blocks out of the layout at once (one sweep of the
    /// layout, so passes removing many blocks stay linear).
    pub fn remove_blocks(&mut self, dead: &[Block]) {
        let mut is_dead = vec![false; self.blocks.len()];
        for &b in dead {
            if let Some(d) = is_dead.get_mut(b.index()) {
                *d = true;
            }
        }
        for &b in dead {
            let Some(data) = self.blocks.get_mut(b.index()) else {
                continue;
            };
            data.in_layout = false;
            let insts = std::mem::replace(&mut data.insts, BVec::new_in(self.arena));
            for &i in insts.iter() {
                self.insts[i.index()].block = None;
            }
        }
        self.layout.retain(|b| !is_dead[b.index()]);
    }

    /// Blocks in layout order; the first is the entry.
    pub fn layout(&self) -> &[Block] {
        &self.layout
    }

    pub fn entry(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    /// Number of blocks ever created (handles are below this).
    pub fn block_capacity(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_in_layout(&self, b: Block) -> bool {
        self.blocks.get(b.index()).is_some_and(|d| d.in_layout)
    }

    pub fn block_insts(&self, b: Block) -> &[Inst] {
        &self.blocks[b.index()].insts
    }

    /// Replace a block's instruction list (instructions dropped from it are
    /// unlinked, new ones are linked to `b`).
    pub fn set_block_insts(&mut self, b: Block, insts: &[Inst]) {
        let old = std::mem::replace(&mut self.blocks[b.index()].insts, BVec::new_in(self.arena));
        for &i in old.iter() {
            self.insts[i.index()].block = None;
        }
        let mut list = BVec::with_capacity_in(insts.len(), self.arena);
        for &i in insts {
            self.insts[i.index()].block = Some(b);
            list.push(i);
        }
        self.blocks[b.index()].insts = list;
    }

    /// Places each detached instruction `new[&i]` just before `i` (in
    /// `i`'s block), and so on down the chain: `new[&new[&i]]` goes just
    /// before `new[&i]`.
    pub fn insert_before(&mut self, new: &std::collections::HashMap<Inst, Inst>) {
        let mut blocks: Vec<Block> = new
            .keys()
            .filter_map(|&i| self.insts[i.index()].block)
            .collect();
        blocks.sort_unstable_by_key(|b| b.index());
        blocks.dedup();
        for b in blocks {
            let old = self.block_insts(b).to_vec();
            let mut out = Vec::with_capacity(old.len() + new.len());
            for i in old {
                let at = out.len();
                let mut next = new.get(&i);
                while let Some(&k) = next {
                    out.insert(at, k);
                    next = new.get(&k);
                }
                out.push(i);
            }
            self.set_block_insts(b, &out);
        }
    }

    /// Append an existing (detached or moved) instruction to `b`.
    pub fn push_inst(&mut self, b: Block, i: Inst) {
        self.insts[i.index()].block = Some(b);
        self.blocks[b.index()].insts.push(i);
    }

    /// Remove and unlink the last instruction of `b`.
    pub fn pop_inst(&mut self, b: Block) -> Option<Inst> {
        let i = self.blocks[b.index()].insts.pop()?;
        self.insts[i.index()].block = None;
        Some(i)
    }

    /// Keep only the instructions of `b` for which `keep` is true.
    pub fn retain_insts(&mut self, b: Block, mut keep: impl FnMut(Inst, &InstData<'a, O>) -> bool) {
        let insts = &mut self.insts;
        self.blocks[b.index()].insts.retain(|i| {
            let k = keep(*i, &insts[i.index()]);
            if !k {
                insts[i.index()].block = None;
            }
            k
        });
    }

    /// The block's last instruction if it is a terminator.
    pub fn terminator(&self, b: Block) -> Option<Inst> {
        let last = *self.blocks[b.index()].insts.last()?;
        self.insts[last.index()].op.is_terminator().then_some(last)
    }

    /// Successor blocks, from the terminator (empty without one).
    pub fn successors(&self, b: Block) -> &[Block] {
        match self.terminator(b) {
            Some(t) => &self.insts[t.index()].targets[..],
            None => &[],
        }
    }

    // ----- instructions -----

    /// Append an instruction to `block`. Operand lists are copied into the
    /// arena; a result value of type `result` is created when given.
    pub fn append_inst(
        &mut self,
        block: Block,
        op: Op<O>,
        args: &[Value],
        targets: &[Block],
        address: Option<Value>,
        result: Option<Type>,
    ) -> Inst {
        let i = self.create_inst(op, args, targets, address, result);
        self.insts[i.index()].block = Some(block);
        self.blocks[block.index()].insts.push(i);
        i
    }

    /// Create an instruction that is not in any block yet.
    pub fn create_inst(
        &mut self,
        op: Op<O>,
        args: &[Value],
        targets: &[Block],
        address: Option<Value>,
        result: Option<Type>,
    ) -> Inst {
        let i = Inst(self.insts.len() as u32);
        let result = result.map(|ty| self.new_value(ty, i));
        let args = self.arena.alloc_slice_copy(args);
        let targets = self.arena.alloc_slice_copy(targets);
        self.insts.push(InstData {
            op,
            args,
            targets,
            address,
            result,
            second_result: None,
            block: None,
        });
        i
    }

    /// Give `i` a second result of type `ty` (a `swap`'s second value).
    pub fn add_second_result(&mut self, i: Inst, ty: Type) -> Value {
        let v = self.new_value(ty, i);
        self.insts[i.index()].second_result = Some(v);
        v
    }

    /// A value defined by `def` (the parser uses this for forward references).
    pub(crate) fn new_value(&mut self, ty: Type, def: Inst) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueData { ty, def, reg: None });
        v
    }

    pub(crate) fn value_data_mut(&mut self, v: Value) -> &mut ValueData {
        &mut self.values[v.index()]
    }

    pub fn inst(&self, i: Inst) -> &InstData<'a, O> {
        &self.insts[i.index()]
    }

    pub fn inst_mut(&mut self, i: Inst) -> &mut InstData<'a, O> {
        &mut self.insts[i.index()]
    }

    /// Number of instructions ever created (handles are below this).
    pub fn inst_capacity(&self) -> usize {
        self.insts.len()
    }

    /// Number of values ever created (handles are below this).
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }

    /// Move `from`'s result value to `to` (which must have none), so every
    /// use of it now reads `to`'s result without rewriting operands.
    pub fn transfer_result(&mut self, from: Inst, to: Inst) {
        if let Some(v) = self.insts[from.index()].result.take() {
            self.insts[to.index()].result = Some(v);
            self.values[v.index()].def = to;
        }
    }

    /// Replace an instruction's operand list (copied into the arena).
    pub fn set_args(&mut self, i: Inst, args: &[Value]) {
        self.insts[i.index()].args = self.arena.alloc_slice_copy(args);
    }

    /// Replace an instruction's target list (copied into the arena).
    pub fn set_targets(&mut self, i: Inst, targets: &[Block]) {
        self.insts[i.index()].targets = self.arena.alloc_slice_copy(targets);
    }

    /// Instructions in layout order, block by block.
    pub fn insts_in_order(&self) -> impl Iterator<Item = (Block, Inst)> + '_ {
        self.layout
            .iter()
            .flat_map(move |&b| self.blocks[b.index()].insts.iter().map(move |&i| (b, i)))
    }

    /// Count of instructions in the layout.
    pub fn len(&self) -> usize {
        self.layout
            .iter()
            .map(|b| self.blocks[b.index()].insts.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // ----- values -----

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }

    /// The instruction defining `v` (use→def).
    pub fn value_def(&self, v: Value) -> Inst {
        self.values[v.index()].def
    }

    /// Rewrite every operand (including addresses and phi operands) of
    /// every instruction in the layout through `map`.
    pub fn rewrite_operands(&mut self, mut map: impl FnMut(Value) -> Value) {
        for &b in self.layout.iter() {
            for &i in self.blocks[b.index()].insts.iter() {
                let data = &mut self.insts[i.index()];
                for a in data.args.iter_mut() {
                    *a = map(*a);
                }
                if let Some(addr) = data.address.as_mut() {
                    *addr = map(*addr);
                }
            }
        }
    }

    /// The register allocated to `v`, if any.
    pub fn value_reg(&self, v: Value) -> Option<Reg> {
        self.values[v.index()].reg
    }

    /// Give `v` a register (register allocation), or take it away.
    pub fn set_value_reg(&mut self, v: Value, reg: Option<Reg>) {
        self.values[v.index()].reg = reg;
    }

    // ----- registers -----

    /// Names of the register files [`Reg::file`] indexes (empty before
    /// register allocation).
    pub fn register_files(&self) -> &[&'a str] {
        &self.register_files
    }

    /// Declare the register files, by name, in the target's order.
    pub fn set_register_files(&mut self, names: &[&str]) {
        self.register_files.clear();
        for n in names {
            let n: &'a str = self.arena.alloc_str(n);
            self.register_files.push(n);
        }
    }

    // ----- arrays -----

    pub fn add_array(&mut self, decl: ArrayDecl) -> ArrayId {
        self.arrays.push(decl);
        ArrayId(self.arrays.len() as u32 - 1)
    }

    pub fn arrays(&self) -> &[ArrayDecl] {
        &self.arrays
    }
}

/// Debug output is the text form.
impl<O: Opcode> fmt::Debug for Shader<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::printer::print(self))
    }
}
