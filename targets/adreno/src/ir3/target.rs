//! ir3 target facts for the backend passes ([`lathe_passes::target::TargetFacts`]),
//! per GPU generation, read from the spec's tables: register files
//! (`regfile`, with a6xx+'s half registers inside the full ones), operand
//! classes and forms (`Isa::operands`), the latency table, the `sync`
//! metadata (asynchronous results) and the occupancy expression.
//!
//! Register units: with merged registers (a6xx+) one file of 16-bit units,
//! a full value taking two aligned units (`hr0.x`, `hr0.y` are `r0.x`);
//! before, a full file of 32-bit units and a separate half file.
//!
//! ```
//! use lathe_adreno::ir3::{target::Ir3Target, GpuModel};
//! use lathe_adreno::ir3::generated::MachineOp;
//! use lathe_ir::{Op, Type};
//! use lathe_passes::target::TargetFacts;
//!
//! let t = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let add = Op::Opcode(MachineOp::named("add.f").unwrap());
//! let rsq = Op::Opcode(MachineOp::named("rsq").unwrap());
//! // From the spec's latency table: ALU to SFU needs 6 cycles.
//! assert_eq!(t.latency(&add, &rsq, 0), 6);
//! assert!(t.is_async(&rsq));
//! let full = t.result_class(&add, Type::F32);
//! let half = t.result_class(&add, Type::F16);
//! assert_eq!(full.file, half.file); // merged on a6xx
//! ```

use std::sync::OnceLock;

use lathe_ir::{Op, Type};
use lathe_isa::EncId;
use lathe_isa::ast::MetaValue;
use lathe_isa::machine::MachineSpec;
use lathe_isa::model::RegfileKind;
use lathe_isa::operands::Role;
use lathe_passes::target::{
    Exchange, FileId, FileKind, OperandForms, PhysReg, RegClass, RegisterFile, SpillSlot,
    TargetFacts,
};

use super::generated::{MachineOp, Spec};
use super::{Error, GpuModel};

/// The facts of one Adreno GPU model.
pub struct Ir3Target {
    model: GpuModel,
    generation: u32,
    files: Vec<RegisterFile>,
    /// Spec register file behind each of `files`.
    spec_files: Vec<usize>,
    /// Index in `files` of the full and the half general file (equal when
    /// merged).
    full: usize,
    half: usize,
    merged: bool,
    /// Idioms already assembled (the allocator asks for its exchange at
    /// every swap; assembling text each time dominated large shaders).
    idioms: std::sync::Mutex<rustc_hash::FxHashMap<String, Option<MachineOp>>>,
    /// Each encoding's [`LeafFacts`], read from the spec the first time
    /// a pass asks about one of its instructions (the scheduler asks
    /// about every pair it orders).
    leaves: Box<[OnceLock<LeafFacts>]>,
    /// [`TargetFacts::copy`]'s opcode by type, parsed once.
    copies: std::sync::Mutex<rustc_hash::FxHashMap<Type, MachineOp>>,
}

/// What the passes ask of every instruction of one leaf encoding: its
/// metadata, whatever the word.
#[derive(Clone, Copy)]
struct LeafFacts {
    /// The `latency` class's index in the spec's latency table.
    class: Option<usize>,
    /// Whether the leaf or a level above it, or a `when` variant of one,
    /// has `result_regfile` metadata: without, no word of the leaf
    /// names its result's file.
    names_result_file: bool,
    /// The `sync` metadata when not `none`: the result is asynchronous.
    sync: Option<&'static str>,
}

impl LeafFacts {
    fn of(leaf: EncId) -> LeafFacts {
        let isa = Spec::isa();
        let ident = |key: &str| match isa.meta(leaf, key) {
            Some(MetaValue::Ident(s)) => Some(s.as_str()),
            _ => None,
        };
        let names_result_file = isa.chain(leaf).any(|enc| {
            let e = &isa.encodings[enc];
            e.meta.iter().any(|(k, _, _)| *k == "result_regfile")
                || e.whens
                    .iter()
                    .any(|w| w.meta.iter().any(|(k, _, _)| *k == "result_regfile"))
        });
        LeafFacts {
            class: ident("latency").and_then(|c| isa.latency.class(c)),
            names_result_file,
            sync: ident("sync").filter(|&s| s != "none"),
        }
    }
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

impl Ir3Target {
    pub fn new(model: GpuModel) -> Result<Ir3Target, Error> {
        let isa = Spec::isa();
        let generation = model.generation().gpu_id();
        let mut files = Vec::new();
        let mut spec_files = Vec::new();
        for (i, r) in isa.regfiles.iter().enumerate() {
            let Some(count) = r.count(generation) else {
                continue;
            };
            // A file inside another is a view of it, not a file of its own.
            if r.inside(generation).is_some() {
                continue;
            }
            let holds_half = isa.regfiles.iter().any(|h| h.inside(generation) == Some(i));
            let (units, unit_bits) = if holds_half {
                (count * 2, r.unit / 2)
            } else {
                (count, r.unit)
            };
            files.push(RegisterFile {
                name: r.name.as_str(),
                kind: kind(r.kind),
                units,
                unit_bits,
                allocated: r.kind == RegfileKind::Gpr,
            });
            spec_files.push(i);
        }
        let general = |bits: u32| {
            isa.regfiles
                .iter()
                .position(|r| r.kind == RegfileKind::Gpr && r.unit == bits)
        };
        let spec_err = |what: &str| Error::Spec(format!("ir3 spec: no {what} register file"));
        let full_spec = general(32).ok_or_else(|| spec_err("32-bit general"))?;
        let half_spec = general(16).ok_or_else(|| spec_err("16-bit general"))?;
        let merged = isa.regfiles[half_spec].inside(generation) == Some(full_spec);
        let index_of = |s: usize| spec_files.iter().position(|&f| f == s);
        let full = index_of(full_spec).ok_or_else(|| spec_err("full"))?;
        let half = if merged {
            full
        } else {
            index_of(half_spec).ok_or_else(|| spec_err("half"))?
        };
        Ok(Ir3Target {
            model,
            generation,
            files,
            spec_files,
            full,
            half,
            merged,
            idioms: Default::default(),
            leaves: (0..isa.encodings.len()).map(|_| OnceLock::new()).collect(),
            copies: Default::default(),
        })
    }

    fn class_of(&self, ty: Type) -> RegClass {
        let half = ty.scalar.bits() <= 16;
        let (file, lane_units) = match (self.merged, half) {
            (true, true) => (self.full, 1),
            (true, false) => (self.full, 2),
            (false, true) => (self.half, 1),
            (false, false) => (self.full, 1),
        };
        RegClass {
            file: FileId(file as u8),
            lane_units,
            align: lane_units,
        }
    }

    fn op_info(op: &Op<MachineOp>) -> Option<&MachineOp> {
        match op {
            Op::Opcode(m) => Some(m),
            _ => None,
        }
    }

    /// The [`LeafFacts`] of `m`'s encoding.
    fn leaf(&self, m: &MachineOp) -> LeafFacts {
        let leaf = m.encoding();
        match self.leaves.get(leaf) {
            Some(facts) => *facts.get_or_init(|| LeafFacts::of(leaf)),
            None => LeafFacts::of(leaf),
        }
    }

    /// The file the spec's `result_regfile` metadata names for `m`'s word.
    fn result_file(&self, m: &MachineOp) -> Option<FileId> {
        if !self.leaf(m).names_result_file {
            return None;
        }
        let Some(lathe_isa::ast::MetaValue::Ident(name)) =
            m.variant_meta("result_regfile", self.generation)
        else {
            return None;
        };
        let spec = Spec::isa().regfile(name)?;
        let index = self.spec_files.iter().position(|&f| f == spec)?;
        Some(FileId(index as u8))
    }

    /// The const register a plain move copies: `m` has no register
    /// source, one literal source naming a register of a const file, the
    /// same source and result type, and every other modifier at its
    /// default (no repeat, rounding or relative destination).
    fn const_move(&self, m: &MachineOp) -> Option<(usize, u64)> {
        if m.source(0).is_some() || m.modifier("src_type")? != m.modifier("dst_type")? {
            return None;
        }
        let info = m.info();
        let plain = info.modifiers.iter().all(|(key, f)| {
            key == "src_type" || key == "dst_type" || f.extract(m.word()) == f.default.unwrap_or(0)
        });
        let mut sources = (0..info.operands.len()).filter(|&i| info.operands[i].role == Role::Src);
        let (Some(i), None) = (sources.next(), sources.next()) else {
            return None;
        };
        let (file, number) = m.literal_register(i, self.generation)?;
        (plain && Spec::isa().regfiles[file].kind == RegfileKind::Const).then_some((file, number))
    }

    /// Bytes of private memory a spill or fill reaches from a base of 0:
    /// the private-memory instructions' signed offset field holds offsets
    /// below this (4 KiB: 13 bits). Mesa moves larger offsets into the
    /// base register; here the register allocator must stay below.
    pub fn scratch_bytes(&self) -> u32 {
        let ldp = MachineOp::named("ldp").unwrap_or_else(|| unreachable!("the ir3 spec has ldp"));
        let field = ldp
            .info()
            .modifiers
            .iter()
            .find(|(key, _)| key == "off")
            .map(|(_, f)| f)
            .unwrap_or_else(|| unreachable!("the ir3 spec's ldp has OFF"));
        1 << (field.width - 1)
    }

    /// `ldp` (`load`) or `stp` of a `ty` value between a register and
    /// private memory at the base register plus the slot's byte offset,
    /// `lanes` components at once. Built by the spec's assembler from its
    /// text form, so the encoding (offset units and split fields) is the
    /// spec's; the register numbers are then cleared for the allocator.
    ///
    /// # Panics
    ///
    /// When the slot lies at or beyond [`Ir3Target::scratch_bytes`]; the
    /// register allocator never asks for one (`TargetFacts::scratch_reach`).
    pub fn scratch_access(&self, load: bool, ty: Type, slot: SpillSlot) -> MachineOp {
        let offset = match slot.byte_offset {
            0 => String::new(),
            n => format!("+{n}"),
        };
        let half = if ty.scalar.bits() <= 16 { "h" } else { "" };
        let (name, lanes) = (Self::type_name(ty), ty.lanes.max(1));
        let text = if load {
            format!("ldp.{name} {half}r0.x, p[r0.x{offset}], {lanes}")
        } else {
            format!("stp.{name} p[r0.x{offset}], r0.x, {lanes}")
        };
        if slot.byte_offset >= self.scratch_bytes() {
            panic!(
                "spill slot at byte {} (limit {})",
                slot.byte_offset,
                self.scratch_bytes()
            );
        }
        self.assembled(&text)
    }

    /// 32-bit words of the const file (the spec's `const` register file).
    pub fn const_words(&self) -> u32 {
        self.files
            .iter()
            .filter(|f| f.kind == FileKind::Const)
            .map(|f| f.units * f.unit_bits / 32)
            .sum()
    }

    /// The const words a preamble may store into (`stc` with an
    /// immediate destination: the spec's `const-dst-imm` offset field
    /// reaches them, within the const file), or `None` when the GPU runs
    /// no preamble (its generation has no `preamble_start` idiom).
    pub fn preamble_words(&self) -> Option<u32> {
        let isa = Spec::isa();
        isa.idiom("preamble_start", self.generation)?;
        let dst = isa.encoding("const-dst-imm")?;
        let width = isa.encodings[dst].plain.item("OFFSET")?.width();
        Some(
            self.const_words()
                .min(1u32.checked_shl(width).unwrap_or(u32::MAX)),
        )
    }

    /// The non-negative byte offsets every shared and private load and
    /// store (`ldl`, `stl`, `ldp`, `stp`) adds to its address register:
    /// `0..limit` (the spec's `OFF` fields, signed when of type `offset`).
    pub fn memory_offset_limit(&self) -> u32 {
        let isa = Spec::isa();
        ["ldl", "stl", "ldp", "stp"]
            .into_iter()
            .map(|name| {
                let field = isa.encoding(name).and_then(|e| {
                    isa.chain(e).find_map(|e| {
                        isa.encodings[e]
                            .plain
                            .item("OFF")
                            .map(|f| (f.width(), f.ty().clone()))
                    })
                });
                match field {
                    Some((w, lathe_isa::model::FieldType::Offset)) => 1u32 << (w - 1).min(31),
                    Some((w, _)) => 1u32.checked_shl(w).unwrap_or(u32::MAX),
                    None => 0,
                }
            })
            .min()
            .unwrap_or(0)
    }

    /// The generation number the spec's tables are read at (Mesa's
    /// `gpu_id`: 600 for a6xx).
    pub fn generation_id(&self) -> u32 {
        self.generation
    }

    /// What this model's texture prefetch can do (the spec's
    /// `fs_prefetch_*` expressions; no prefetch when the GPU table says
    /// the model has none).
    pub fn prefetch_limits(&self) -> super::prefetch::Limits {
        let fact = |name: &str| {
            Spec::isa()
                .call(name, &[], self.generation)
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(0)
        };
        super::prefetch::Limits {
            count: if self.model.has_tex_prefetch() {
                fact("fs_prefetch_count")
            } else {
                0
            },
            texture_max: fact("fs_prefetch_tex_max"),
            sampler_max: fact("fs_prefetch_samp_max"),
            dst_max: fact("fs_prefetch_dst_max"),
            ij_reg: fact("fs_prefetch_ij_reg"),
        }
    }

    /// The spec's idiom `name` at this generation (registers cleared).
    pub fn idiom(&self, name: &str) -> Option<MachineOp> {
        // A poisoned lock only means another thread panicked while
        // inserting; the map itself is still consistent.
        let mut idioms = self.idioms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(op) = idioms.get(name) {
            return *op;
        }
        let op = Spec::isa()
            .idiom(name, self.generation)
            .map(|idiom| self.assembled(&idiom.text));
        idioms.insert(name.to_string(), op);
        op
    }

    /// The machine op of one line of assembly (registers cleared).
    fn assembled(&self, text: &str) -> MachineOp {
        let word = super::assemble(text, self.model.generation())
            .unwrap_or_else(|e| unreachable!("`{text}` assembles: {e}"));
        MachineOp::from_word(word, self.generation)
            .unwrap_or_else(|| unreachable!("`{text}` decodes as it assembled"))
    }

    /// The ir3 spelling of an IR scalar type, for `mov`'s type fields.
    fn type_name(ty: Type) -> &'static str {
        use lathe_ir::Scalar;
        match ty.scalar {
            Scalar::F16 => "f16",
            Scalar::F32 => "f32",
            Scalar::I16 | Scalar::Bool => "s16",
            Scalar::I32 => "s32",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
        }
    }

    /// `name` with the `type` enum fields `fields` set to `ty`'s ir3 type.
    fn typed(&self, name: &str, fields: &[&str], ty: Type) -> MachineOp {
        let isa = Spec::isa();
        let value = isa
            .enums
            .iter()
            .find(|e| e.name == "type")
            .and_then(|e| e.values.iter().find(|(_, s, _)| s == Self::type_name(ty)))
            .map_or(0, |(v, _, _)| *v)
            .to_string();
        let attrs: Vec<lathe_ir::Attr> = fields
            .iter()
            .map(|f| lathe_ir::Attr {
                key: Some(f),
                value: &value,
            })
            .collect();
        <MachineOp as lathe_ir::Opcode>::parse(name, &attrs, Some(ty)).unwrap_or_else(|e| {
            unreachable!("the ir3 spec has `{name}` with {fields:?}: {}", e.message)
        })
    }
}

impl TargetFacts<MachineOp> for Ir3Target {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn files(&self) -> &[RegisterFile] {
        &self.files
    }

    fn operand_class(&self, _op: &Op<MachineOp>, _operand: usize, ty: Type) -> RegClass {
        self.class_of(ty)
    }

    /// The general class of the value's width, unless the instruction (or
    /// the variant its word selects) names its result's file in the spec
    /// (`meta result_regfile`: mova's a0.x, mova1's a1.x).
    fn result_class(&self, op: &Op<MachineOp>, ty: Type) -> RegClass {
        match Self::op_info(op).and_then(|m| self.result_file(m)) {
            Some(file) => RegClass {
                file,
                lane_units: 1,
                align: 1,
            },
            None => self.class_of(ty),
        }
    }

    /// Inputs and outputs have no fixed registers in machine IR text yet
    /// (the driver interface that places them is the backend's issue).
    fn input_register(&self, _index: u32, _ty: Type) -> Option<PhysReg> {
        None
    }

    fn output_register(&self, _index: u32, _ty: Type) -> Option<PhysReg> {
        None
    }

    fn latency(&self, producer: &Op<MachineOp>, consumer: &Op<MachineOp>, operand: usize) -> u32 {
        let (Some(p), Some(c)) = (Self::op_info(producer), Self::op_info(consumer)) else {
            return 0;
        };
        let (Some(pc), Some(cc)) = (self.leaf(p).class, self.leaf(c).class) else {
            return 0;
        };
        let field = c.source(operand).map(|o| o.field.name.as_str());
        Spec::isa()
            .latency
            .lookup(pc, cc, field, self.generation)
            .unwrap_or(0)
    }

    fn is_async(&self, op: &Op<MachineOp>) -> bool {
        Self::op_info(op).is_some_and(|m| self.leaf(m).sync.is_some())
    }

    /// A destination field the spec marks `tied` (atomic.b's SRC1).
    fn tied_operand(&self, op: &Op<MachineOp>) -> Option<usize> {
        Self::op_info(op)?.tied_source()
    }

    fn operand_forms(&self, op: &Op<MachineOp>, operand: usize) -> OperandForms {
        let Some(o) = Self::op_info(op).and_then(|m| m.source(operand)) else {
            return OperandForms::default();
        };
        let isa = Spec::isa();
        OperandForms {
            constant: o
                .files
                .iter()
                .any(|&f| isa.regfiles[f].kind == RegfileKind::Const),
            immediate: o.accepts_immediate,
            relative: o.accepts_relative,
        }
    }

    /// A move of one const register folds into a source the spec lets
    /// name a const (`const_srcs`), while the instruction's
    /// `const_src_limit` allows another. Full-precision scalars only: a
    /// half-precision source reads a const register differently.
    fn fold_operand(
        &self,
        consumer: &Op<MachineOp>,
        operand: usize,
        producer: &Op<MachineOp>,
        ty: Type,
    ) -> Option<MachineOp> {
        let (Some(c), Some(p)) = (Self::op_info(consumer), Self::op_info(producer)) else {
            return None;
        };
        if ty.lanes > 1 || ty.scalar.bits() != 32 {
            return None;
        }
        let (file, number) = self.const_move(p)?;
        let field = &c.source(operand)?.field.name;
        if !matches!(c.meta("const_srcs"), Some(MetaValue::List(l)) if l.contains(field)) {
            return None;
        }
        let limit = match c.meta("const_src_limit") {
            Some(MetaValue::Int(n)) if *n > 0 => *n as usize,
            _ => usize::MAX,
        };
        let isa = Spec::isa();
        let consts = (0..c.info().operands.len())
            .filter_map(|i| c.literal_register(i, self.generation))
            .filter(|&(f, _)| isa.regfiles[f].kind == RegfileKind::Const)
            .count();
        if consts >= limit {
            return None;
        }
        c.with_source_register(operand, file, number, self.generation)
    }

    fn occupancy(&self, file: FileId, units: u32) -> u32 {
        let Some(&spec) = self.spec_files.get(file.index()) else {
            return 0;
        };
        // Merged files count 16-bit units; the expression counts the
        // spec file's own (32-bit) units.
        let own = if self.merged && file.index() == self.full {
            units.div_ceil(2)
        } else {
            units
        };
        Spec::isa()
            .occupancy(spec, own, self.generation)
            .unwrap_or(u32::MAX)
    }

    fn copy(&self, ty: Type) -> MachineOp {
        // A poisoned lock only means another thread panicked while
        // inserting; the map itself is still consistent.
        let mut copies = self.copies.lock().unwrap_or_else(|e| e.into_inner());
        *copies
            .entry(ty)
            .or_insert_with(|| self.typed("mov-gpr", &["src_type", "dst_type"], ty))
    }

    /// The spec's `exchange16`/`exchange32` idiom (`swz`, a5xx on), else
    /// its `xor16`/`xor32` (three `xor.b`), by the value's width.
    fn swap(&self, ty: Type) -> Option<Exchange<MachineOp>> {
        let bits = if ty.scalar.bits() <= 16 { 16 } else { 32 };
        match self.idiom(&format!("exchange{bits}")) {
            Some(op) => Some(Exchange::Instruction(op)),
            None => self.idiom(&format!("xor{bits}")).map(Exchange::Xor),
        }
    }

    fn scratch_reach(&self) -> u32 {
        self.scratch_bytes()
    }

    /// `stp` of the value (operand 1) at the base (operand 0) plus the
    /// slot's byte offset (see [`Ir3Target::scratch_access`]).
    fn spill(&self, ty: Type, slot: SpillSlot) -> MachineOp {
        self.scratch_access(false, ty, slot)
    }

    /// `ldp` of the value at the base (operand 0) plus the slot's byte
    /// offset (see [`Ir3Target::scratch_access`]).
    fn fill(&self, ty: Type, slot: SpillSlot) -> MachineOp {
        self.scratch_access(true, ty, slot)
    }

    /// `mov.u32u32` of the immediate 0: private memory is addressed from
    /// a register, and spills keep their whole offset in the instruction.
    fn spill_base(&self) -> Option<MachineOp> {
        Some(self.assembled("mov.u32u32 r0.x, 0"))
    }

    /// [`super::legalise::legalise`]: nops, sync flags, flow instructions
    /// and branch offsets. A shader it cannot legalise is left as it was
    /// (false); [`super::emit::emit`] then reports why.
    fn legalise(
        &self,
        shader: &mut lathe_ir::Shader<'_, MachineOp>,
    ) -> Result<bool, lathe_passes::legalise::LegaliseError> {
        Ok(super::legalise::check(shader, self).is_ok()
            && super::legalise::legalise(shader, self).unwrap_or(false))
    }

    fn register_name(&self, _class: RegClass, reg: PhysReg, ty: Type) -> String {
        const COMP: [char; 4] = ['x', 'y', 'z', 'w'];
        let file = &self.files[reg.file.index()];
        let unit = u32::from(reg.unit);
        let half = ty.scalar.bits() <= 16;
        let component = if self.merged && !half { unit / 2 } else { unit };
        let prefix = match (file.kind, half) {
            (FileKind::General, true) => "hr",
            (FileKind::General, false) => "r",
            _ => file.name,
        };
        format!(
            "{prefix}{}.{}",
            component / 4,
            COMP[(component % 4) as usize]
        )
    }
}
