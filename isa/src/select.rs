//! Instruction selection driven by a checked rules file: the tables
//! `lathe_codegen_macros::rules!` generates ([`Rules`]) and the walk that
//! applies them to a generic shader ([`select`]).
//!
//! Every generic instruction is matched against the rules for its opcode
//! in file order; the first whose pattern matches (opcode, attributes,
//! result and operand types, nested patterns on the operands' defining
//! instructions) emits its templates. A template without literals is the
//! word the build checked, decoded at the target's generation
//! ([`MachineOp::from_word`]); a template with a literal (a constant's
//! value, a uniform's const register) is assembled with the value in place
//! by the target's assembler, and a value the encoding cannot hold makes
//! the rule not apply, so the next one is tried. The IR's structural
//! operations stay structural: phis, jumps, branches and returns keep
//! their shape, meta inputs and outputs keep theirs, and the generic
//! `load_input`/`store_output` become meta inputs and outputs numbered in
//! first-seen order (the [`Interface`] says which slot each is). Meta
//! inputs are preloaded registers: each is made once and placed at the
//! head of the entry block, whichever block read it. `collect` and
//! `split` stay structural (register groups for `group` and `ra`).

use rustc_hash::FxHashMap;

use lathe_ir::{Block, GenericOp, Op, Opcode, Shader, Type, Value};

use crate::asm_rt::Miss;
use crate::machine::{MachineOp, MachineSpec};

/// A rules file's generated tables.
#[derive(Debug)]
pub struct Rules {
    /// The ISA the rules are for.
    pub isa: &'static str,
    /// Spec generations the templates were checked at.
    pub generations: &'static [u32],
    pub rules: &'static [Rule],
}

/// One rule instance (one tuple of its `for` clause).
#[derive(Debug)]
pub struct Rule {
    pub name: &'static str,
    /// Line of the rule in the rules file.
    pub line: u32,
    /// Pattern nodes; the first is the root.
    pub nodes: &'static [Node],
    /// Placeholder types; slot 0 is `$dst`.
    pub slots: &'static [SlotInfo],
    pub insts: &'static [Template],
}

/// What a placeholder is at run time.
#[derive(Clone, Copy, Debug)]
pub enum SlotInfo {
    /// A register value of this type (`$dst`, operands, temporaries); a
    /// vector type is a register group.
    Register(Type),
    /// A number from an attribute.
    Number,
    /// A register of a file the allocator does not assign (a const
    /// register), written `PREFIX{n / COMPS}.{COMPS[n % COMPS]}`.
    Named(&'static str, &'static str),
}

/// A generic instruction pattern.
#[derive(Debug)]
pub struct Node {
    pub op: &'static str,
    pub attrs: &'static [AttrMatch],
    /// `None`: operands unconstrained.
    pub args: Option<&'static [ArgMatch]>,
    /// The result type; `None` for an instruction without a result.
    pub ty: Option<Type>,
}

/// An attribute condition.
#[derive(Debug)]
pub enum AttrMatch {
    Word(&'static str),
    Eq(&'static str, &'static str),
    /// Bind the attribute's value (the bare one when `None`) to a slot.
    Bind(Option<&'static str>, u8),
}

/// An operand condition.
#[derive(Clone, Copy, Debug)]
pub enum ArgMatch {
    Value(u8, Type),
    Node(u8),
}

/// One instruction template.
#[derive(Debug)]
pub struct Template {
    pub mnemonic: &'static str,
    /// The checked word (register numbers are cleared when decoded).
    pub word: u64,
    /// For a template without literals, per generation of
    /// [`Rules::generations`]: what [`MachineOp::from_word`] reads from
    /// `word` ([`crate::machine::read_word`]), read at build time.
    pub read: &'static [(u32, u64)],
    /// For a template with literals: text pieces with the literals'
    /// slots between them, assembled at selection time.
    pub pieces: &'static [Piece],
    pub dst: Option<u8>,
    pub srcs: &'static [u8],
    /// Per source of a structural step: the one lane it takes, or 255 for
    /// all of them (empty for an instruction).
    pub lanes: &'static [u8],
    /// A structural step (`let g: T = collect(…)`): `dst` is the group of
    /// the `srcs`' registers in order, made by a `collect` (vector parts
    /// split into their lanes first), not an instruction.
    pub collect: bool,
}

/// A piece of a literal template's text.
#[derive(Debug)]
pub enum Piece {
    Text(&'static str),
    Literal(u8),
}

/// What selection needs from a target.
pub trait SelectTarget<S: MachineSpec> {
    /// The generation (spec `gen` value) to decode and assemble at.
    fn generation(&self) -> u32;
    /// Assembles one line with the generated assembler alone: fast;
    /// [`Miss::NoForm`] when no form reads the text (definitive),
    /// [`Miss::Limit`] when a search limit may have hidden a word.
    fn assemble_generated(&self, text: &str) -> Result<u64, Miss>;
    /// Assembles one line with the spec engine (slow), for the texts the
    /// generated assembler cannot tell; `None` without diagnostics
    /// ([`crate::Isa::assemble_word`]).
    fn assemble(&self, text: &str) -> Option<u64>;
}

/// Where a meta input or output of the selected shader comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Port {
    /// A generic meta `input`/`output` of this index.
    Meta(u32),
    /// A `load_input` / `store_output` slot and component.
    Slot(u16, u8),
}

/// The selected shader's meta inputs and outputs by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interface {
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
}

/// Why a shader could not be selected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("{0}")]
    Malformed(String),
}

/// The rules by root opcode, built once per selection: for each
/// opcode its first and last rule, and after each rule the next one of
/// the same opcode (file order; `u32::MAX` ends a chain). A rules file
/// keeps an opcode's rules together, so a run of equal opcodes is
/// chained without a map lookup.
struct Index {
    ends: FxHashMap<&'static str, (u32, u32)>,
    next: Vec<u32>,
}

impl Index {
    fn new(rules: &[Rule]) -> Index {
        let mut ends: FxHashMap<&'static str, (u32, u32)> = FxHashMap::default();
        let mut next = vec![u32::MAX; rules.len()];
        let mut k = 0;
        while k < rules.len() {
            let op = rules[k].nodes[0].op;
            let mut end = k;
            while rules.get(end + 1).is_some_and(|r| r.nodes[0].op == op) {
                next[end] = end as u32 + 1;
                end += 1;
            }
            match ends.get_mut(op) {
                Some((_, last)) => {
                    next[*last as usize] = k as u32;
                    *last = end as u32;
                }
                None => {
                    ends.insert(op, (k as u32, end as u32));
                }
            }
            k = end + 1;
        }
        Index { ends, next }
    }

    /// The first rule whose root is `op` (`u32::MAX`: none).
    fn first(&self, op: &str) -> u32 {
        self.ends.get(op).map_or(u32::MAX, |&(first, _)| first)
    }
}

struct Selector<'r, 't, 'a, S: MachineSpec> {
    rules: &'r Rules,
    index: Index,
    target: &'t dyn SelectTarget<S>,
    out: Shader<'a, MachineOp<S>>,
    values: Vec<Option<Value>>,
    decoded: FxHashMap<u64, MachineOp<S>>,
    interface: Interface,
    /// Meta inputs made so far: index, type, instruction, value.
    inputs: Vec<(u32, Option<Type>, lathe_ir::Inst, Option<Value>)>,
}

/// Selects machine instructions for `generic` with `rules`; the machine
/// shader (in `arena`) and its interface.
pub fn select<'a, S: MachineSpec>(
    rules: &Rules,
    generic: &Shader<'_, GenericOp>,
    target: &dyn SelectTarget<S>,
    arena: &'a lathe_ir::Bump,
) -> Result<(Shader<'a, MachineOp<S>>, Interface), SelectError> {
    if !rules.generations.contains(&target.generation()) {
        return Err(SelectError::Unsupported(format!(
            "generation {} ({} rules are checked at {:?})",
            target.generation(),
            rules.isa,
            rules.generations
        )));
    }
    let mut s = Selector {
        rules,
        index: Index::new(rules.rules),
        target,
        out: Shader::with_capacity(arena, generic.stage, generic.len(), generic.layout().len()),
        values: vec![None; generic.value_capacity()],
        decoded: FxHashMap::default(),
        interface: Interface::default(),
        inputs: Vec::new(),
    };
    s.out.private_bytes = generic.private_bytes;
    s.run(generic)?;
    Ok((s.out, s.interface))
}

impl<'a, S: MachineSpec> Selector<'_, '_, 'a, S> {
    fn run(&mut self, g: &Shader<'_, GenericOp>) -> Result<(), SelectError> {
        let mut blocks: Vec<Option<Block>> = vec![None; g.block_capacity()];
        for &b in g.layout() {
            blocks[b.index()] = Some(self.out.add_block());
        }
        let block = |b: Block| {
            blocks[b.index()]
                .ok_or_else(|| SelectError::Malformed(format!("b{} is not laid out", b.index())))
        };
        let mut phis = Vec::new();
        // Dominators first (reverse post-order), so every operand but a
        // phi's is selected before its user even where the layout puts a
        // dominating block after the block it dominates (a loop body laid
        // out after its exit); unreachable blocks follow.
        let cfg = lathe_ir::Cfg::compute(g);
        let order: Vec<Block> = cfg
            .rpo()
            .iter()
            .copied()
            .chain(g.layout().iter().copied().filter(|&b| !cfg.is_reachable(b)))
            .collect();
        for gb in order {
            let mb = block(gb)?;
            for &i in g.block_insts(gb) {
                let d = g.inst(i);
                let result_ty = d.result.map(|r| g.value_type(r));
                if d.address.is_some() {
                    return Err(self.unsupported(d.op.name(), "an address operand"));
                }
                match d.op {
                    Op::Phi => {
                        let ty = result_ty
                            .ok_or_else(|| SelectError::Malformed("phi without result".into()))?;
                        let targets: Vec<Block> = d
                            .targets
                            .iter()
                            .map(|&t| block(t))
                            .collect::<Result<_, _>>()?;
                        let p = self
                            .out
                            .append_inst(mb, Op::Phi, &[], &targets, None, Some(ty));
                        self.define(g, i, self.out.inst(p).result)?;
                        phis.push((p, d.args.to_vec()));
                    }
                    Op::Input { index } => {
                        let k = self.port(true, Port::Meta(index));
                        let v = self.input(k, result_ty);
                        self.define(g, i, v)?;
                    }
                    Op::Output { index } => {
                        let v = self.value(d.args[0])?;
                        let k = self.port(false, Port::Meta(index));
                        self.out
                            .append_inst(mb, Op::Output { index: k }, &[v], &[], None, None);
                    }
                    Op::Jump | Op::Branch | Op::Return => {
                        let args: Vec<Value> = d
                            .args
                            .iter()
                            .map(|&a| self.value(a))
                            .collect::<Result<_, _>>()?;
                        let targets: Vec<Block> = d
                            .targets
                            .iter()
                            .map(|&t| block(t))
                            .collect::<Result<_, _>>()?;
                        self.out
                            .append_inst(mb, d.op_cast(), &args, &targets, None, None);
                    }
                    // Register groups stay structural: `group` and `ra`
                    // place a collect's operands and a split's lanes
                    // consecutively, as the instructions reading and
                    // writing the vector need.
                    Op::Collect | Op::Split { .. } => {
                        let args: Vec<Value> = d
                            .args
                            .iter()
                            .map(|&a| self.value(a))
                            .collect::<Result<_, _>>()?;
                        let op = match d.op {
                            Op::Split { lane } => Op::Split { lane },
                            _ => Op::Collect,
                        };
                        let m = self.out.append_inst(mb, op, &args, &[], None, result_ty);
                        self.define(g, i, self.out.inst(m).result)?;
                    }
                    Op::Swap => return Err(self.unsupported(d.op.name(), "two results")),
                    Op::Opcode(GenericOp::LoadInput { slot, comp, .. }) => {
                        let k = self.port(true, Port::Slot(slot, comp));
                        let v = self.input(k, result_ty);
                        self.define(g, i, v)?;
                    }
                    Op::Opcode(GenericOp::StoreOutput { slot, comp }) => {
                        let v = self.value(d.args[0])?;
                        let k = self.port(false, Port::Slot(slot, comp));
                        self.out
                            .append_inst(mb, Op::Output { index: k }, &[v], &[], None, None);
                    }
                    Op::Opcode(op) => {
                        let r = self.apply(g, mb, i, op)?;
                        self.define(g, i, r)?;
                    }
                }
            }
        }
        // Preloaded inputs head the entry block, whichever block read
        // them: the hardware loads them before the first instruction.
        if let Some(entry) = self.out.entry() {
            let mut list: Vec<lathe_ir::Inst> = self.inputs.iter().map(|x| x.2).collect();
            list.extend_from_slice(self.out.block_insts(entry));
            self.out.set_block_insts(entry, &list);
        }
        for (p, args) in phis {
            let mapped: Vec<Value> = args
                .iter()
                .map(|&a| self.value(a))
                .collect::<Result<_, _>>()?;
            self.out.set_args(p, &mapped);
        }
        Ok(())
    }

    /// The value of meta input `k`: one instruction per input, made on
    /// first use and placed at the head of the entry block at the end.
    fn input(&mut self, k: u32, ty: Option<Type>) -> Option<Value> {
        if let Some(&(_, _, _, v)) = self.inputs.iter().find(|x| (x.0, x.1) == (k, ty)) {
            return v;
        }
        let i = self
            .out
            .create_inst(Op::Input { index: k }, &[], &[], None, ty);
        let v = self.out.inst(i).result;
        self.inputs.push((k, ty, i, v));
        v
    }

    fn unsupported(&self, op: &str, what: &str) -> SelectError {
        SelectError::Unsupported(format!("{op} with {what} ({} selection)", self.rules.isa))
    }

    /// The index of meta input (or output) `port`, allocated on first use.
    fn port(&mut self, input: bool, port: Port) -> u32 {
        let list = if input {
            &mut self.interface.inputs
        } else {
            &mut self.interface.outputs
        };
        match list.iter().position(|&p| p == port) {
            Some(k) if input => k as u32,
            _ => {
                list.push(port);
                (list.len() - 1) as u32
            }
        }
    }

    fn define(
        &mut self,
        g: &Shader<'_, GenericOp>,
        i: lathe_ir::Inst,
        v: Option<Value>,
    ) -> Result<(), SelectError> {
        if let (Some(r), Some(v)) = (g.inst(i).result, v) {
            self.values[r.index()] = Some(v);
        }
        Ok(())
    }

    fn value(&self, v: Value) -> Result<Value, SelectError> {
        self.values
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| {
                SelectError::Malformed(format!("%{} is used before it is defined", v.index()))
            })
    }

    /// Applies the first matching rule to generic instruction `i`.
    fn apply(
        &mut self,
        g: &Shader<'_, GenericOp>,
        mb: Block,
        i: lathe_ir::Inst,
        op: GenericOp,
    ) -> Result<Option<Value>, SelectError> {
        let d = g.inst(i);
        let rules = self.rules.rules;
        let mut bound = Vec::new();
        let mut k = self.index.first(op.name());
        while let Some(rule) = rules.get(k as usize) {
            k = self.index.next[k as usize];
            bound.clear();
            bound.resize(rule.slots.len(), Bound::None);
            if !matches(g, rule, 0, i, &mut bound) {
                continue;
            }
            if let Some(r) = self.emit(mb, rule, &mut bound)? {
                return Ok(r);
            }
        }
        let ty = d
            .result
            .map_or_else(|| "no result".to_string(), |r| g.value_type(r).to_string());
        let mut attrs = String::new();
        let _ = op.write_attrs(d.result.map(|r| g.value_type(r)), &mut attrs);
        Err(SelectError::Unsupported(format!(
            "{}{attrs} giving {ty} ({} selection)",
            op.name(),
            self.rules.isa
        )))
    }

    /// Emits `rule`'s templates; `None` when a literal does not fit (the
    /// rule does not apply), else the result value.
    fn emit(
        &mut self,
        mb: Block,
        rule: &Rule,
        bound: &mut [Bound],
    ) -> Result<Option<Option<Value>>, SelectError> {
        let mut ops = Vec::with_capacity(rule.insts.len());
        for t in rule.insts {
            if t.collect {
                ops.push(None);
                continue;
            }
            match self.instruction(rule, t, bound) {
                Some(op) => ops.push(Some(op)),
                None => return Ok(None),
            }
        }
        for (t, op) in rule.insts.iter().zip(ops) {
            let args: Vec<Value> = t
                .srcs
                .iter()
                .map(|&s| match bound[s as usize] {
                    Bound::Value(v) => self.value(v),
                    Bound::Machine(v) => Ok(v),
                    _ => Err(SelectError::Malformed(format!(
                        "rule {} reads an unbound slot",
                        rule.name
                    ))),
                })
                .collect::<Result<_, _>>()?;
            let ty = t.dst.map(|s| match rule.slots[s as usize] {
                SlotInfo::Register(ty) => ty,
                _ => Type::U32,
            });
            let op = match op {
                Some(op) => Op::Opcode(op),
                None => {
                    let lanes = self.lanes(mb, &args, t.lanes);
                    // One lane (`collect($c[0])`) is that lane itself:
                    // a collect groups two or more.
                    let r = match lanes[..] {
                        [lane] => Some(lane),
                        _ => {
                            let inst = self.out.append_inst(mb, Op::Collect, &lanes, &[], None, ty);
                            self.out.inst(inst).result
                        }
                    };
                    if let (Some(s), Some(r)) = (t.dst, r) {
                        bound[s as usize] = Bound::Machine(r);
                    }
                    continue;
                }
            };
            let inst = self.out.append_inst(mb, op, &args, &[], None, ty);
            if let (Some(s), Some(r)) = (t.dst, self.out.inst(inst).result) {
                bound[s as usize] = Bound::Machine(r);
            }
        }
        Ok(Some(match bound.first() {
            Some(Bound::Machine(v)) => Some(*v),
            _ => None,
        }))
    }

    /// The scalar lanes of `values` in order (a vector split into its
    /// lanes).
    fn lanes(&mut self, mb: Block, values: &[Value], picks: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        for (k, &v) in values.iter().enumerate() {
            let ty = self.out.value_type(v);
            if ty.lanes <= 1 {
                out.push(v);
                continue;
            }
            let pick = picks.get(k).copied().filter(|&l| l != u8::MAX);
            let range = match pick {
                Some(l) => l..l + 1,
                None => 0..ty.lanes,
            };
            for lane in range {
                let s = self.out.append_inst(
                    mb,
                    Op::Split { lane },
                    &[v],
                    &[],
                    None,
                    Some(Type::scalar(ty.scalar)),
                );
                out.extend(self.out.inst(s).result);
            }
        }
        out
    }

    /// The machine op of template `t`.
    fn instruction(&mut self, rule: &Rule, t: &Template, bound: &[Bound]) -> Option<MachineOp<S>> {
        let g = self.target.generation();
        if t.pieces.is_empty() {
            if let Some(op) = self.decoded.get(&t.word) {
                return Some(*op);
            }
            let read = self.rules.generations.iter().position(|&x| x == g);
            let op = match read.and_then(|k| t.read.get(k)) {
                Some(&read) => MachineOp::from_read_word(t.word, g, read)?,
                None => MachineOp::from_word(t.word, g)?,
            };
            debug_assert!(
                MachineOp::from_word(t.word, g) == Some(op),
                "{}",
                t.mnemonic
            );
            self.decoded.insert(t.word, op);
            return Some(op);
        }
        // Every spelling of the literals, tried with the generated
        // assembler; the engine only when a search limit stopped it.
        let mut spellings = Vec::with_capacity(4);
        for style in 0..4 {
            let mut text = String::new();
            for p in t.pieces {
                match p {
                    Piece::Text(s) => text.push_str(s),
                    // Right after `0x` a literal is its hex digits.
                    Piece::Literal(slot) if text.ends_with("0x") => {
                        let Bound::Literal(bits, _) = bound[*slot as usize] else {
                            return None;
                        };
                        use std::fmt::Write;
                        let _ = write!(text, "{bits:X}");
                    }
                    Piece::Literal(slot) => {
                        let Bound::Literal(bits, width) = bound[*slot as usize] else {
                            return None;
                        };
                        literal_text(
                            rule.slots[*slot as usize],
                            rule.slots[0],
                            (bits, width),
                            style,
                            &mut text,
                        );
                    }
                }
            }
            if !spellings.contains(&text) {
                spellings.push(text);
            }
        }
        let mut limited = false;
        for text in &spellings {
            match self.target.assemble_generated(text) {
                Ok(word) => return MachineOp::from_word(word, g),
                Err(Miss::Limit) => limited = true,
                Err(Miss::NoForm) => {}
            }
        }
        // No form reads any spelling: the engine would find no word either
        // (and takes far longer to say so). A literal the instruction
        // cannot hold (a constant outside the immediate table) ends here,
        // and the next rule handles it.
        if !limited {
            return None;
        }
        let word = spellings
            .iter()
            .find_map(|text| self.target.assemble(text))?;
        MachineOp::from_word(word, g)
    }
}

/// A literal's text: unsigned decimal, signed decimal at its constant's
/// width (else the result's), or hex in lower or upper case (`style` 0
/// to 3); a named register for `Named` slots (`u5` for a file whose names
/// have no components).
fn literal_text(
    slot: SlotInfo,
    result: SlotInfo,
    (bits, width): (u32, Option<u32>),
    style: u8,
    out: &mut String,
) {
    use std::fmt::Write;
    match slot {
        SlotInfo::Named(prefix, "") => {
            let _ = write!(out, "{prefix}{bits}");
        }
        SlotInfo::Named(prefix, comps) => {
            let n = comps.chars().count().max(1) as u32;
            let c = comps.chars().nth((bits % n) as usize).unwrap_or('x');
            let _ = write!(out, "{prefix}{}.{c}", bits / n);
        }
        _ => {
            let width = width.unwrap_or(match result {
                SlotInfo::Register(s) if s.scalar.bits() <= 16 => 16,
                _ => 32,
            });
            let _ = match style {
                0 => write!(out, "{bits}"),
                1 if width <= 16 => write!(out, "{}", bits as u16 as i16),
                1 => write!(out, "{}", bits as i32),
                2 => write!(out, "0x{bits:x}"),
                _ => write!(out, "0x{bits:X}"),
            };
        }
    }
}

/// What a slot holds during one rule application.
#[derive(Clone, Copy, Debug)]
enum Bound {
    None,
    /// A generic value (mapped when used).
    Value(Value),
    /// A machine value the rule made.
    Machine(Value),
    /// A number and, for a constant's bits, its type's width (the signed
    /// spelling sign-extends from there).
    Literal(u32, Option<u32>),
}

/// Does generic instruction `i` match node `n` of `rule`?
fn matches(
    g: &Shader<'_, GenericOp>,
    rule: &Rule,
    n: u8,
    i: lathe_ir::Inst,
    bound: &mut [Bound],
) -> bool {
    let node = &rule.nodes[n as usize];
    let d = g.inst(i);
    let Op::Opcode(op) = d.op else { return false };
    let ty = d.result.map(|r| g.value_type(r));
    if op.name() != node.op || ty != node.ty {
        return false;
    }
    if !node.attrs.is_empty() {
        let mut text = String::new();
        let _ = op.write_attrs(ty, &mut text);
        let words: Vec<&str> = text.split_whitespace().collect();
        // A listed attribute set is complete: `mov[neg]` is not `mov abs neg`.
        if words.len() != node.attrs.len() {
            return false;
        }
        for a in node.attrs {
            let ok = match a {
                AttrMatch::Word(w) => words.contains(w),
                AttrMatch::Eq(k, v) => words.iter().any(|x| x.split_once('=') == Some((k, v))),
                AttrMatch::Bind(key, slot) => {
                    let value = match key {
                        None => words.iter().find(|x| !x.contains('=')).copied(),
                        Some(k) => words
                            .iter()
                            .find_map(|x| x.strip_prefix(k).and_then(|r| r.strip_prefix('='))),
                    };
                    let bits = match (op, value) {
                        (GenericOp::Const { bits }, _) if key.is_none() => {
                            Some((bits, ty.map(|t| t.scalar.bits())))
                        }
                        (_, Some(v)) => v.parse::<u32>().ok().map(|b| (b, None)),
                        _ => None,
                    };
                    match bits {
                        Some((b, width)) => {
                            bound[*slot as usize] = Bound::Literal(b, width);
                            true
                        }
                        None => false,
                    }
                }
            };
            if !ok {
                return false;
            }
        }
    }
    if n == 0 {
        bound[0] = Bound::None;
    }
    let Some(args) = node.args else { return true };
    if args.len() != d.args.len() {
        return false;
    }
    for (a, &v) in args.iter().zip(d.args.iter()) {
        match *a {
            ArgMatch::Value(slot, s) => {
                if g.value_type(v) != s {
                    return false;
                }
                bound[slot as usize] = Bound::Value(v);
            }
            ArgMatch::Node(k) => {
                let def = g.value_def(v);
                if g.inst(def).block.is_none() || !matches(g, rule, k, def, bound) {
                    return false;
                }
            }
        }
    }
    true
}

trait OpCast {
    fn op_cast<T>(&self) -> Op<T>;
}

impl OpCast for lathe_ir::InstData<'_, GenericOp> {
    /// The structural terminator of `self` in another vocabulary.
    fn op_cast<T>(&self) -> Op<T> {
        match self.op {
            Op::Jump => Op::Jump,
            Op::Branch => Op::Branch,
            _ => Op::Return,
        }
    }
}
