//! Valhall target facts for the backend passes
//! ([`lathe_passes::target::TargetFacts`]), per Mali model, read from the
//! spec's tables: register files (`regfile`: 64 general registers of 32
//! bits, the FAU uniforms and special values), operand forms
//! (`Isa::operands`: FAU slots, immediate-table constants), the latency
//! table, the `message` metadata (results that arrive through a dependency
//! slot) and the occupancy expression (full thread count up to 32
//! registers, half above).
//!
//! Every value takes one 32-bit register (16-bit values use a whole one;
//! packing two into the halves is a later instruction-selection choice).
//! A register group of two or more (a staging-register tuple: texture
//! coordinates, a loaded vector) starts on an even register, as the spec's
//! staging operand requires.
//!
//! ```
//! use lathe_mali::valhall::{target::ValhallTarget, MaliModel};
//! use lathe_mali::valhall::generated::MachineOp;
//! use lathe_ir::{Op, Shader, Type};
//! use lathe_passes::target::{FileId, TargetFacts};
//!
//! let t = ValhallTarget::new("g610".parse::<MaliModel>().unwrap());
//! let fadd = Op::Opcode(MachineOp::named("FADD.f32").unwrap());
//! let load = Op::Opcode(MachineOp::named("LOAD.i32").unwrap());
//! assert_eq!(t.latency(&fadd, &fadd, 0), 0); // interlocked
//! assert!(t.is_async(&load) && !t.is_async(&fadd));
//! let gpr = t.result_class(&fadd, Type::F32).file;
//! assert_eq!(t.files()[gpr.index()].units, 64);
//! assert_eq!(t.occupancy_steps(gpr), vec![32, 64]);
//! ```

use std::sync::{Mutex, OnceLock};

use rustc_hash::FxHashMap;

use lathe_ir::{Op, Shader, Type};
use lathe_isa::ast::MetaValue;
use lathe_isa::machine::MachineSpec;
use lathe_isa::model::{EncId, RegfileKind};
use lathe_isa::operands::Role;
use lathe_passes::target::{
    Exchange, FileId, FileKind, OperandForms, PhysReg, RegClass, RegisterFile, SpillSlot,
    TargetFacts,
};

use super::MaliModel;
use super::flow::{FlowFacts, MissingFact};
use super::generated::{MachineOp, Spec};

/// The facts of one Mali model.
pub struct ValhallTarget {
    model: MaliModel,
    generation: u32,
    files: Vec<RegisterFile>,
    /// Spec register file behind each of `files`.
    spec_files: Vec<usize>,
    /// Index in `files` of the general registers.
    general: usize,
    /// Each leaf encoding's metadata facts, read on first use: the
    /// passes ask for latencies and message flags many times per
    /// instruction, and the spec keeps them as named metadata up the
    /// encoding chain.
    leaf_facts: Mutex<FxHashMap<EncId, LeafFacts>>,
    /// [`TargetFacts::fold_operand`]'s answers so far: the constant
    /// pushing asks what `fold-sources` asks again, and the answer (the
    /// operand's text in both words, the spec's `check` rules) is costly.
    folds: Mutex<FxHashMap<FoldQuestion, Option<MachineOp>>>,
    /// The flow field's facts, read once (legalisation and emission both
    /// ask).
    flow: OnceLock<Result<FlowFacts, MissingFact>>,
}

/// A [`TargetFacts::fold_operand`] question: consumer, operand, producer,
/// value type.
type FoldQuestion = (MachineOp, usize, MachineOp, Type);

/// The metadata facts of one leaf encoding the passes, legalisation
/// and the scoreboard ask for.
#[derive(Clone, Copy)]
pub(crate) struct LeafFacts {
    /// The `latency` class (an index into the spec's latency classes).
    pub latency: Option<usize>,
    /// `message = true`: the result arrives through a dependency slot.
    pub message: bool,
    /// The fixed dependency `slot`, if the spec gives one.
    pub slot: Option<i64>,
    /// Slots the hardware requires waited on before (`wait_before`) and
    /// right after (`wait_after`) the instruction.
    pub wait_before: Option<i64>,
    pub wait_after: Option<i64>,
}

fn kind(k: RegfileKind) -> FileKind {
    match k {
        RegfileKind::Gpr => FileKind::General,
        RegfileKind::Predicate => FileKind::Predicate,
        RegfileKind::Address => FileKind::Address,
        RegfileKind::Uniform => FileKind::Uniform,
        RegfileKind::Const => FileKind::Const,
    }
}

impl ValhallTarget {
    pub fn new(model: MaliModel) -> ValhallTarget {
        let isa = Spec::isa();
        let generation = model.arch().generation();
        let mut files = Vec::new();
        let mut spec_files = Vec::new();
        for (i, r) in isa.regfiles.iter().enumerate() {
            let Some(units) = r.count(generation) else {
                continue;
            };
            files.push(RegisterFile {
                name: r
                    .names
                    .as_ref()
                    .map_or(r.name.as_str(), |n| n.prefix.as_str()),
                kind: kind(r.kind),
                units,
                unit_bits: r.unit,
                allocated: r.kind == RegfileKind::Gpr,
            });
            spec_files.push(i);
        }
        let general = files
            .iter()
            .position(|f| f.kind == FileKind::General)
            .unwrap_or_else(|| unreachable!("the Valhall spec declares a gpr regfile"));
        ValhallTarget {
            model,
            generation,
            files,
            spec_files,
            general,
            leaf_facts: Mutex::default(),
            folds: Mutex::default(),
            flow: OnceLock::new(),
        }
    }

    /// The flow values and dependency slots at this model's generation.
    pub(crate) fn flow_facts(&self) -> Result<&FlowFacts, MissingFact> {
        self.flow
            .get_or_init(|| FlowFacts::new(self.generation))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The metadata facts of `m`'s encoding.
    pub(crate) fn leaf_facts(&self, m: &MachineOp) -> LeafFacts {
        let int = |key: &str| match m.meta(key) {
            Some(MetaValue::Int(v)) => Some(*v),
            _ => None,
        };
        let enc = m.encoding();
        let mut known = self.leaf_facts.lock().unwrap_or_else(|e| e.into_inner());
        *known.entry(enc).or_insert_with(|| LeafFacts {
            latency: match m.meta("latency") {
                Some(MetaValue::Ident(c)) => Spec::isa().latency.class(c),
                _ => None,
            },
            message: matches!(m.meta("message"), Some(MetaValue::Ident(v)) if v == "true"),
            slot: int("slot"),
            wait_before: int("wait_before"),
            wait_after: int("wait_after"),
        })
    }

    fn class_of(&self, ty: Type) -> RegClass {
        RegClass {
            file: FileId(self.general as u8),
            lane_units: 1,
            align: if ty.lanes >= 2 { 2 } else { 1 },
        }
    }

    fn machine(op: &Op<MachineOp>) -> Option<&MachineOp> {
        match op {
            Op::Opcode(m) => Some(m),
            _ => None,
        }
    }

    /// Bytes of thread-local storage a spill or fill can reach: the
    /// largest offset the memory messages' signed `OFFSET` field holds,
    /// plus one (the address is the thread-local pointer itself, so there
    /// is no base register to move further).
    pub fn scratch_bytes(&self) -> u32 {
        let store = Self::named("STORE.i32");
        let field = store
            .info()
            .modifiers
            .iter()
            .find(|(key, _)| key == "offset")
            .map(|(_, f)| f)
            .unwrap_or_else(|| unreachable!("the Valhall spec's STORE has OFFSET"));
        1 << (field.width - 1)
    }

    /// `{kind}.iN` (a `LOAD` or `STORE` message) of a `ty` value between
    /// its staging registers (the IR operand or result) and the
    /// thread-local storage: the address is the special FAU value
    /// `thread_local_pointer`, the slot's byte offset is the instruction's
    /// immediate offset. Built by the spec's own assembler from its text
    /// form, so the encoding is the spec's.
    ///
    /// # Panics
    ///
    /// When the slot lies at or beyond [`ValhallTarget::scratch_bytes`]:
    /// the register allocator never asks for one (`TargetFacts::scratch_reach`).
    pub fn scratch_access(&self, kind: &str, ty: Type, slot: SpillSlot) -> MachineOp {
        let registers: Vec<String> = (0..ty.lanes.max(1)).map(|r| format!("r{r}")).collect();
        let text = format!(
            "{kind}.i{}.slot0 @{}, thread_local_pointer.w0, offset:{}",
            32 * u32::from(ty.lanes.max(1)),
            registers.join(":"),
            slot.byte_offset
        );
        let word = super::assemble(&text, self.model.arch()).unwrap_or_else(|e| {
            panic!(
                "spill slot at byte {} (limit {}): {e}",
                slot.byte_offset,
                self.scratch_bytes()
            )
        });
        MachineOp::from_word(word, self.generation)
            .unwrap_or_else(|| unreachable!("`{text}` decodes as it assembled"))
    }

    /// The general registers' file (`r0`..`r63`), the one allocation
    /// assigns.
    pub fn general_file(&self) -> FileId {
        FileId(self.general as u8)
    }

    /// The model whose facts these are.
    pub fn model(&self) -> MaliModel {
        self.model
    }

    /// The generation number the spec's tables are read at (9, 10).
    pub fn generation_id(&self) -> u32 {
        self.generation
    }

    /// The spec's idiom `name` at this model's generation (registers
    /// cleared).
    pub fn idiom(&self, name: &str) -> Option<MachineOp> {
        let idiom = Spec::isa().idiom(name, self.generation)?;
        let word = super::assemble(&idiom.text, self.model.arch())
            .unwrap_or_else(|e| unreachable!("the checker assembled `{}`: {e}", idiom.text));
        MachineOp::from_word(word, self.generation)
    }

    /// [`TargetFacts::fold_operand`] of a consumer and producer that
    /// passed its cheap checks.
    fn fold_source(
        &self,
        c: &MachineOp,
        operand: usize,
        p: &MachineOp,
        ty: Type,
    ) -> Option<MachineOp> {
        let copy = self.copy(ty);
        if p.encoding() != copy.encoding() {
            return None;
        }
        let info = p.info();
        let i = (0..info.operands.len()).find(|&i| info.operands[i].role == Role::Src)?;
        // Every bit but the source's as the plain move has it.
        let source = info.operands[i].field.mask();
        if p.word() & !source != copy.word() & !source {
            return None;
        }
        c.with_source_literal(operand, p, i, self.generation)
    }

    fn named(name: &str) -> MachineOp {
        MachineOp::named(name).unwrap_or_else(|| unreachable!("the Valhall spec has `{name}`"))
    }
}

impl TargetFacts<MachineOp> for ValhallTarget {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn files(&self) -> &[RegisterFile] {
        &self.files
    }

    /// A source the semantics read as 64 bits is a register pair: its
    /// value (even a 32-bit one widened with `.w0`) starts at an even
    /// register, so the pair's second register is in the file.
    fn operand_class(&self, op: &Op<MachineOp>, operand: usize, ty: Type) -> RegClass {
        let class = self.class_of(ty);
        match Self::machine(op).and_then(|m| m.source(operand)) {
            Some(o) if o.wide => RegClass {
                align: class.align.max(2),
                ..class
            },
            _ => class,
        }
    }

    fn result_class(&self, _op: &Op<MachineOp>, ty: Type) -> RegClass {
        self.class_of(ty)
    }

    /// Registers the hardware preloads ([`super::abi::Preload`]) are
    /// fixed; the generic IR's own meta inputs are placed by the
    /// allocator (the interface then names their registers).
    fn input_register(&self, index: u32, _ty: Type) -> Option<PhysReg> {
        super::abi::Preload::register_of(index).map(|unit| PhysReg {
            file: self.general_file(),
            unit: unit.into(),
        })
    }

    fn output_register(&self, _index: u32, _ty: Type) -> Option<PhysReg> {
        None
    }

    fn latency(&self, producer: &Op<MachineOp>, consumer: &Op<MachineOp>, operand: usize) -> u32 {
        let (Some(p), Some(c)) = (Self::machine(producer), Self::machine(consumer)) else {
            return 0;
        };
        let (Some(pc), Some(cc)) = (self.leaf_facts(p).latency, self.leaf_facts(c).latency) else {
            return 0;
        };
        let field = c.source(operand).map(|o| o.field.name.as_str());
        Spec::isa()
            .latency
            .lookup(pc, cc, field, self.generation)
            .unwrap_or(0)
    }

    /// Message instructions signal a dependency slot when their result
    /// arrives; consumers wait for it with the flow bits.
    fn is_async(&self, op: &Op<MachineOp>) -> bool {
        Self::machine(op).is_some_and(|m| self.leaf_facts(m).message)
    }

    fn operand_forms(&self, op: &Op<MachineOp>, operand: usize) -> OperandForms {
        let Some(o) = Self::machine(op).and_then(|m| m.source(operand)) else {
            return OperandForms::default();
        };
        let isa = Spec::isa();
        OperandForms {
            constant: o.files.iter().any(|&f| {
                matches!(
                    isa.regfiles[f].kind,
                    RegfileKind::Uniform | RegfileKind::Const
                )
            }),
            immediate: o.accepts_immediate,
            relative: o.accepts_relative,
        }
    }

    /// A plain move of a FAU word, special value or immediate-table
    /// constant (`MOV.i32 r0, u5`) folds into a 32-bit source of an
    /// arithmetic instruction, which then reads the FAU itself: the
    /// source byte is copied with its FAU page, and the spec's `check`
    /// rules (one 64-bit FAU slot, two distinct FAU values per
    /// instruction) decide. Message instructions keep their registers
    /// (their FAU limits differ, and the spec states none for them), and
    /// so does a source read as a 64-bit pair.
    fn fold_operand(
        &self,
        consumer: &Op<MachineOp>,
        operand: usize,
        producer: &Op<MachineOp>,
        ty: Type,
    ) -> Option<MachineOp> {
        let (c, p) = (Self::machine(consumer)?, Self::machine(producer)?);
        if self.is_async(consumer) || ty.lanes > 1 || c.source(operand)?.wide {
            return None;
        }
        let key = (*c, operand, *p, ty);
        if let Some(&known) = self
            .folds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return known;
        }
        let folded = self.fold_source(c, operand, p, ty);
        self.folds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, folded);
        folded
    }

    fn occupancy(&self, file: FileId, units: u32) -> u32 {
        let Some(&spec) = self.spec_files.get(file.index()) else {
            return 0;
        };
        Spec::isa()
            .occupancy(spec, units, self.generation)
            .unwrap_or(u32::MAX)
    }

    fn copy(&self, _ty: Type) -> MachineOp {
        Self::named("MOV.i32")
    }

    /// Every value takes a whole 32-bit register: the spec's
    /// `exchange32` idiom if it has one, else `xor32` (three
    /// `LSHIFT_XOR.i32`; Valhall has no register exchange).
    fn swap(&self, _ty: Type) -> Option<Exchange<MachineOp>> {
        match self.idiom("exchange32") {
            Some(op) => Some(Exchange::Instruction(op)),
            None => self.idiom("xor32").map(Exchange::Xor),
        }
    }

    fn scratch_reach(&self) -> u32 {
        self.scratch_bytes()
    }

    /// `STORE.iN` (N = 32 × lanes) of the value's staging registers to the
    /// thread-local storage at the slot's byte offset (see
    /// [`ValhallTarget::scratch_access`]).
    fn spill(&self, ty: Type, slot: SpillSlot) -> MachineOp {
        self.scratch_access("STORE", ty, slot)
    }

    /// `LOAD.iN` of the value from the thread-local storage at the slot's
    /// byte offset (see [`ValhallTarget::spill`]).
    fn fill(&self, ty: Type, slot: SpillSlot) -> MachineOp {
        self.scratch_access("LOAD", ty, slot)
    }

    fn register_name(&self, _class: RegClass, reg: PhysReg, _ty: Type) -> String {
        format!("{}{}", self.files[reg.file.index()].name, reg.unit)
    }

    /// Branches, dependency slots, waits and the end of the shader
    /// ([`super::legalise`]).
    fn legalise(
        &self,
        shader: &mut Shader<'_, MachineOp>,
    ) -> Result<bool, lathe_passes::legalise::LegaliseError> {
        super::legalise::legalise(shader, self)
    }
}
