//! Reading a SPIR-V binary into indexed tables: instructions with their
//! word offsets, types, decorations, names and (specialised) constants.

use crate::error::Error;
use rspirv::binary::{Consumer, ParseAction as Action};
use rspirv::dr::{Instruction, ModuleHeader, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Dim, ImageFormat, Op, StorageClass};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A SPIR-V type, as the lowering needs it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Void,
    Bool,
    Int {
        bits: u32,
        signed: bool,
    },
    Float {
        bits: u32,
    },
    Vector {
        elem: u32,
        n: u32,
    },
    Matrix {
        column: u32,
        n: u32,
    },
    /// `len` is the (specialised) element count.
    Array {
        elem: u32,
        len: u32,
    },
    RuntimeArray {
        elem: u32,
    },
    Struct {
        members: Vec<u32>,
    },
    Pointer {
        class: StorageClass,
        pointee: u32,
    },
    Image(ImageTy),
    SampledImage {
        image: u32,
    },
    Sampler,
    Function,
    /// Any other type instruction (kept so the error can name it).
    Other(Op),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageTy {
    pub sampled_type: u32,
    pub dim: Dim,
    /// 0 = not depth, 1 = depth, 2 = unknown.
    pub depth: u32,
    pub arrayed: bool,
    pub multisampled: bool,
    /// 1 = sampled, 2 = storage.
    pub sampled: u32,
    pub format: ImageFormat,
}

/// Decorations of one id or struct member that the lowering reads.
#[derive(Clone, Debug, Default)]
pub struct Decos {
    pub location: Option<u32>,
    pub component: Option<u32>,
    pub binding: Option<u32>,
    pub set: Option<u32>,
    pub builtin: Option<BuiltIn>,
    pub offset: Option<u32>,
    pub array_stride: Option<u32>,
    pub matrix_stride: Option<u32>,
    pub row_major: bool,
    pub flat: bool,
    pub noperspective: bool,
    pub centroid: bool,
    pub sample: bool,
    pub spec_id: Option<u32>,
    pub block: bool,
    pub buffer_block: bool,
}

/// A function's instruction range and its blocks.
#[derive(Clone, Debug, Default)]
pub struct Function {
    /// Index of `OpFunction`.
    pub start: usize,
    pub params: Vec<u32>,
    /// `(label id, index of OpLabel, index one past the terminator)`.
    pub blocks: Vec<(u32, usize, usize)>,
}

/// An entry point.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    pub model: rspirv::spirv::ExecutionModel,
    pub function: u32,
    pub name: String,
}

/// The indexed module.
pub struct Module {
    pub insts: Vec<Instruction>,
    /// Word offset of each instruction in the binary.
    pub offsets: Vec<u32>,
    /// Defining instruction index per id (`u32::MAX` if none).
    defs: Vec<u32>,
    pub types: HashMap<u32, Ty>,
    pub decos: HashMap<u32, Decos>,
    pub member_decos: HashMap<(u32, u32), Decos>,
    pub names: HashMap<u32, String>,
    pub member_names: HashMap<(u32, u32), String>,
    pub entry_points: Vec<EntryPoint>,
    /// `(function, mode, literal operands, instruction index)`.
    pub exec_modes: Vec<(u32, rspirv::spirv::ExecutionMode, Vec<u32>, usize)>,
    pub functions: HashMap<u32, Function>,
    /// The id of the `GLSL.std.450` import, if any.
    pub glsl_ext: Option<u32>,
    /// Imports of `NonSemantic.*` sets (debug printf, shader debug info): no effect on results.
    pub nonsemantic_ext: Vec<u32>,
    /// Global `OpVariable`s in order.
    pub globals: Vec<u32>,
    pub capabilities: Vec<(rspirv::spirv::Capability, usize)>,
    /// Pointer types declared ahead by `OpTypeForwardPointer`.
    forward_pointers: HashSet<u32>,
}

struct Collect {
    insts: Vec<Instruction>,
}

impl Consumer for Collect {
    fn initialize(&mut self) -> Action {
        Action::Continue
    }
    fn finalize(&mut self) -> Action {
        Action::Continue
    }
    fn consume_header(&mut self, _: ModuleHeader) -> Action {
        Action::Continue
    }
    fn consume_instruction(&mut self, inst: Instruction) -> Action {
        self.insts.push(inst);
        Action::Continue
    }
}

/// rspirv's decoder panics on an `OpSpecConstantOp` whose wrapped opcode
/// has an operand whose layout depends on context (a literal sized by a
/// type, `OpSwitch`'s pairs, a nested `OpSpecConstantOp`); none of those
/// opcodes is allowed there, so such an instruction is rejected first.
fn check_spec_constant_op(words: &[u32], at: usize, count: usize) -> Result<(), Error> {
    use rspirv::grammar::{INSTRUCTION_TABLE, OperandKind};
    if words[at] & 0xffff != rspirv::spirv::Op::SpecConstantOp as u32 || count < 4 {
        return Ok(());
    }
    let inner = words[at + 3];
    let Some(grammar) = INSTRUCTION_TABLE.lookup_opcode(inner) else {
        return Ok(()); // rspirv reports an unknown opcode itself
    };
    let contextual = grammar.operands.iter().any(|o| {
        matches!(
            o.kind,
            OperandKind::LiteralContextDependentNumber
                | OperandKind::PairLiteralIntegerIdRef
                | OperandKind::LiteralSpecConstantOpInteger
        )
    });
    if contextual {
        return Err(Error::Parse(format!(
            "OpSpecConstantOp at word offset {at} wraps Op{}, which is not allowed there",
            grammar.opname
        )));
    }
    Ok(())
}

/// SPIR-V's id bound above which the tables would be unreasonable.
const MAX_BOUND: u32 = 1 << 22;

impl Module {
    /// Parse and index a binary given as words.
    pub fn read(words: &[u32]) -> Result<Module, Error> {
        if words.len() < 5 {
            return Err(Error::Parse("shorter than the 5-word header".into()));
        }
        if words[0] != rspirv::spirv::MAGIC_NUMBER {
            return Err(Error::Parse(format!(
                "bad magic number {:#010x} (expected {:#010x})",
                words[0],
                rspirv::spirv::MAGIC_NUMBER
            )));
        }
        let bound = words[3];
        if bound > MAX_BOUND {
            return Err(Error::Parse(format!("id bound {bound} is too large")));
        }
        // Where each instruction starts. Checked before rspirv sees the
        // module: its decoder slices past the end of the binary (a panic)
        // when an instruction's word count runs past it.
        let mut offsets = Vec::new();
        let mut at = 5usize;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            if count == 0 {
                return Err(Error::Parse(format!(
                    "instruction at word offset {at} has a word count of 0"
                )));
            }
            if at + count > words.len() {
                return Err(Error::Parse(format!(
                    "instruction at word offset {at} ({count} words) runs past the end of the module ({} words)",
                    words.len()
                )));
            }
            check_spec_constant_op(words, at, count)?;
            offsets.push(at as u32);
            at += count;
        }
        let mut collect = Collect {
            insts: Vec::with_capacity(offsets.len()),
        };
        // A safety net for other decoder panics (fuzzing aborts on any
        // panic, so the checks above are what keep it clean).
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rspirv::binary::parse_words(words, &mut collect)
        }));
        match parsed {
            Ok(r) => r.map_err(|e| Error::Parse(e.to_string()))?,
            Err(_) => {
                return Err(Error::Parse(
                    "rspirv's decoder failed on a malformed instruction".into(),
                ));
            }
        }
        let mut m = Module {
            insts: collect.insts,
            offsets,
            defs: vec![u32::MAX; bound as usize],
            types: HashMap::default(),
            decos: HashMap::default(),
            member_decos: HashMap::default(),
            names: HashMap::default(),
            member_names: HashMap::default(),
            entry_points: Vec::new(),
            exec_modes: Vec::new(),
            functions: HashMap::default(),
            glsl_ext: None,
            nonsemantic_ext: Vec::new(),
            globals: Vec::new(),
            capabilities: Vec::new(),
            forward_pointers: HashSet::default(),
        };
        m.index()?;
        Ok(m)
    }

    fn invalid(&self, at: usize, message: impl Into<String>) -> Error {
        Error::Invalid {
            message: message.into(),
            offset: self.offsets.get(at).copied().unwrap_or(0),
        }
    }

    /// An `unsupported:` error naming the instruction at index `at`.
    pub fn unsupported(&self, at: usize, feature: impl Into<String>) -> Error {
        let what = match self.insts.get(at) {
            Some(i) => format!("op Op{}", i.class.opname),
            None => "module".to_string(),
        };
        Error::Unsupported {
            feature: feature.into(),
            what,
            offset: self.offsets.get(at).copied().unwrap_or(0),
        }
    }

    pub fn def(&self, id: u32) -> Option<usize> {
        self.defs
            .get(id as usize)
            .copied()
            .filter(|&d| d != u32::MAX)
            .map(|d| d as usize)
    }

    pub fn ty(&self, id: u32) -> Option<&Ty> {
        self.types.get(&id)
    }

    pub fn deco(&self, id: u32) -> Option<&Decos> {
        self.decos.get(&id)
    }

    pub fn member_deco(&self, id: u32, member: u32) -> Option<&Decos> {
        self.member_decos.get(&(id, member))
    }

    fn index(&mut self) -> Result<(), Error> {
        let mut current: Option<(u32, Function)> = None;
        let mut block_start: Option<(u32, usize)> = None;
        for at in 0..self.insts.len() {
            let inst = &self.insts[at];
            if let Some(id) = inst.result_id {
                match self.defs.get_mut(id as usize) {
                    Some(slot) if *slot == u32::MAX => *slot = at as u32,
                    Some(_) => return Err(self.invalid(at, format!("id %{id} defined twice"))),
                    None => {
                        return Err(self.invalid(at, format!("id %{id} is not below the bound")));
                    }
                }
            }
            let opcode = inst.class.opcode;
            match opcode {
                Op::Capability => {
                    if let Some(Operand::Capability(c)) = inst.operands.first() {
                        self.capabilities.push((*c, at));
                    }
                }
                Op::ExtInstImport => {
                    if let Some(Operand::LiteralString(s)) = inst.operands.first() {
                        if s == "GLSL.std.450" {
                            self.glsl_ext = inst.result_id;
                        } else if s.starts_with("NonSemantic.") {
                            self.nonsemantic_ext.extend(inst.result_id);
                        }
                    }
                }
                Op::EntryPoint => {
                    if let (
                        Some(Operand::ExecutionModel(model)),
                        Some(Operand::IdRef(f)),
                        Some(Operand::LiteralString(name)),
                    ) = (
                        inst.operands.first(),
                        inst.operands.get(1),
                        inst.operands.get(2),
                    ) {
                        self.entry_points.push(EntryPoint {
                            model: *model,
                            function: *f,
                            name: name.clone(),
                        });
                    }
                }
                Op::ExecutionMode | Op::ExecutionModeId => {
                    if let (Some(Operand::IdRef(f)), Some(Operand::ExecutionMode(mode))) =
                        (inst.operands.first(), inst.operands.get(1))
                    {
                        let lits = inst.operands[2..]
                            .iter()
                            .filter_map(|o| match o {
                                Operand::LiteralBit32(x) | Operand::IdRef(x) => Some(*x),
                                _ => None,
                            })
                            .collect();
                        self.exec_modes.push((*f, *mode, lits, at));
                    }
                }
                Op::Name => {
                    if let (Some(Operand::IdRef(id)), Some(Operand::LiteralString(s))) =
                        (inst.operands.first(), inst.operands.get(1))
                        && !s.is_empty()
                    {
                        self.names.insert(*id, s.clone());
                    }
                }
                Op::MemberName => {
                    if let (
                        Some(Operand::IdRef(id)),
                        Some(Operand::LiteralBit32(m)),
                        Some(Operand::LiteralString(s)),
                    ) = (
                        inst.operands.first(),
                        inst.operands.get(1),
                        inst.operands.get(2),
                    ) {
                        self.member_names.insert((*id, *m), s.clone());
                    }
                }
                Op::Decorate => {
                    if let Some(Operand::IdRef(id)) = inst.operands.first() {
                        let d = self.decos.entry(*id).or_default();
                        apply_decoration(d, &inst.operands[1..]);
                    }
                }
                Op::MemberDecorate => {
                    if let (Some(Operand::IdRef(id)), Some(Operand::LiteralBit32(m))) =
                        (inst.operands.first(), inst.operands.get(1))
                    {
                        let d = self.member_decos.entry((*id, *m)).or_default();
                        apply_decoration(d, &inst.operands[2..]);
                    }
                }
                Op::Function => {
                    let id = inst
                        .result_id
                        .ok_or_else(|| self.invalid(at, "OpFunction without id"))?;
                    current = Some((
                        id,
                        Function {
                            start: at,
                            ..Function::default()
                        },
                    ));
                }
                Op::FunctionParameter => {
                    if let (Some((_, f)), Some(id)) = (current.as_mut(), inst.result_id) {
                        f.params.push(id);
                    }
                }
                Op::Label => {
                    if current.is_none() {
                        return Err(self.invalid(at, "OpLabel outside a function"));
                    }
                    block_start = inst.result_id.map(|id| (id, at));
                }
                Op::FunctionEnd => {
                    let Some((id, f)) = current.take() else {
                        return Err(self.invalid(at, "OpFunctionEnd outside a function"));
                    };
                    self.functions.insert(id, f);
                }
                Op::Variable if current.is_none() => {
                    if let Some(id) = inst.result_id {
                        self.globals.push(id);
                    }
                }
                _ => {}
            }
            if is_terminator(opcode) {
                match (block_start.take(), current.as_mut()) {
                    (Some((label, start)), Some((_, f))) => f.blocks.push((label, start, at + 1)),
                    _ => return Err(self.invalid(at, "terminator outside a block")),
                }
            }
            if is_type(opcode) {
                self.read_type(at)?;
            }
        }
        if current.is_some() {
            return Err(self.invalid(
                self.insts.len().saturating_sub(1),
                "function without OpFunctionEnd",
            ));
        }
        Ok(())
    }

    fn read_type(&mut self, at: usize) -> Result<(), Error> {
        let inst = &self.insts[at];
        if inst.class.opcode == Op::TypeForwardPointer {
            if let Some(Operand::IdRef(ptr)) = inst.operands.first() {
                self.forward_pointers.insert(*ptr);
            }
            return Ok(());
        }
        let Some(id) = inst.result_id else {
            return Ok(());
        };
        let lit = |k: usize| match inst.operands.get(k) {
            Some(Operand::LiteralBit32(x)) => Some(*x),
            _ => None,
        };
        let idr = |k: usize| match inst.operands.get(k) {
            Some(Operand::IdRef(x)) => Some(*x),
            _ => None,
        };
        let bad = || self.invalid(at, format!("malformed Op{}", inst.class.opname));
        let ty = match inst.class.opcode {
            Op::TypeVoid => Ty::Void,
            Op::TypeBool => Ty::Bool,
            Op::TypeInt => Ty::Int {
                bits: lit(0).ok_or_else(bad)?,
                signed: lit(1).ok_or_else(bad)? != 0,
            },
            Op::TypeFloat => Ty::Float {
                bits: lit(0).ok_or_else(bad)?,
            },
            Op::TypeVector => Ty::Vector {
                elem: idr(0).ok_or_else(bad)?,
                n: lit(1).ok_or_else(bad)?,
            },
            Op::TypeMatrix => Ty::Matrix {
                column: idr(0).ok_or_else(bad)?,
                n: lit(1).ok_or_else(bad)?,
            },
            // The length is a constant resolved once constants are known.
            Op::TypeArray => Ty::Array {
                elem: idr(0).ok_or_else(bad)?,
                len: idr(1).ok_or_else(bad)?,
            },
            Op::TypeRuntimeArray => Ty::RuntimeArray {
                elem: idr(0).ok_or_else(bad)?,
            },
            Op::TypeStruct => Ty::Struct {
                members: (0..inst.operands.len()).filter_map(idr).collect(),
            },
            Op::TypePointer => match (inst.operands.first(), idr(1)) {
                (Some(Operand::StorageClass(class)), Some(pointee)) => Ty::Pointer {
                    class: *class,
                    pointee,
                },
                _ => return Err(bad()),
            },
            Op::TypeImage => match inst.operands.as_slice() {
                [
                    Operand::IdRef(sampled_type),
                    Operand::Dim(dim),
                    Operand::LiteralBit32(depth),
                    Operand::LiteralBit32(arrayed),
                    Operand::LiteralBit32(ms),
                    Operand::LiteralBit32(sampled),
                    Operand::ImageFormat(format),
                    ..,
                ] => Ty::Image(ImageTy {
                    sampled_type: *sampled_type,
                    dim: *dim,
                    depth: *depth,
                    arrayed: *arrayed != 0,
                    multisampled: *ms != 0,
                    sampled: *sampled,
                    format: *format,
                }),
                _ => return Err(bad()),
            },
            Op::TypeSampledImage => Ty::SampledImage {
                image: idr(0).ok_or_else(bad)?,
            },
            Op::TypeSampler => Ty::Sampler,
            Op::TypeFunction => Ty::Function,
            other => Ty::Other(other),
        };
        // SPIR-V vectors have at least 2 components and matrices at least
        // 2 columns; the lowering divides by these counts.
        if let Ty::Vector { n, .. } | Ty::Matrix { n, .. } = ty
            && n < 2
        {
            return Err(self.invalid(at, format!("Op{} with {n} components", inst.class.opname)));
        }
        // Types are declared before they are named (only a forward-declared
        // pointer may come later), so no type contains itself: the walks
        // over component types rely on that to end.
        let parts: &[u32] = match &ty {
            Ty::Vector { elem, .. } | Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                std::slice::from_ref(elem)
            }
            Ty::Matrix { column, .. } => std::slice::from_ref(column),
            Ty::Struct { members } => members,
            Ty::SampledImage { image } => std::slice::from_ref(image),
            Ty::Pointer { pointee, .. } => std::slice::from_ref(pointee),
            _ => &[],
        };
        if let Some(p) = parts
            .iter()
            .find(|p| !self.types.contains_key(p) && !self.forward_pointers.contains(p))
        {
            return Err(self.invalid(
                at,
                format!(
                    "Op{} names %{p}, not a type declared before it",
                    inst.class.opname
                ),
            ));
        }
        self.types.insert(id, ty);
        Ok(())
    }
}

fn apply_decoration(d: &mut Decos, ops: &[Operand]) {
    let lit = ops.get(1).and_then(|o| match o {
        Operand::LiteralBit32(x) => Some(*x),
        _ => None,
    });
    let Some(Operand::Decoration(kind)) = ops.first() else {
        return;
    };
    match kind {
        Decoration::Location => d.location = lit,
        Decoration::Component => d.component = lit,
        Decoration::Binding => d.binding = lit,
        Decoration::DescriptorSet => d.set = lit,
        Decoration::Offset => d.offset = lit,
        Decoration::ArrayStride => d.array_stride = lit,
        Decoration::MatrixStride => d.matrix_stride = lit,
        Decoration::SpecId => d.spec_id = lit,
        Decoration::RowMajor => d.row_major = true,
        Decoration::Flat => d.flat = true,
        Decoration::NoPerspective => d.noperspective = true,
        Decoration::Centroid => d.centroid = true,
        Decoration::Sample => d.sample = true,
        Decoration::Block => d.block = true,
        Decoration::BufferBlock => d.buffer_block = true,
        Decoration::BuiltIn => {
            if let Some(Operand::BuiltIn(b)) = ops.get(1) {
                d.builtin = Some(*b);
            }
        }
        _ => {}
    }
}

fn is_type(op: Op) -> bool {
    matches!(
        op,
        Op::TypeVoid
            | Op::TypeBool
            | Op::TypeInt
            | Op::TypeFloat
            | Op::TypeVector
            | Op::TypeMatrix
            | Op::TypeImage
            | Op::TypeSampler
            | Op::TypeSampledImage
            | Op::TypeArray
            | Op::TypeRuntimeArray
            | Op::TypeStruct
            | Op::TypeOpaque
            | Op::TypePointer
            | Op::TypeFunction
            | Op::TypeEvent
            | Op::TypeDeviceEvent
            | Op::TypeReserveId
            | Op::TypeQueue
            | Op::TypePipe
            | Op::TypeForwardPointer
            | Op::TypeAccelerationStructureKHR
            | Op::TypeRayQueryKHR
    )
}

pub fn is_terminator(op: Op) -> bool {
    matches!(
        op,
        Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::ReturnValue
            | Op::Kill
            | Op::TerminateInvocation
            | Op::Unreachable
    )
}

/// The id operand `k` of an instruction.
pub fn id_operand(inst: &Instruction, k: usize) -> Option<u32> {
    match inst.operands.get(k) {
        Some(Operand::IdRef(x)) => Some(*x),
        _ => None,
    }
}

/// The 32-bit literal operand `k` of an instruction.
pub fn lit_operand(inst: &Instruction, k: usize) -> Option<u32> {
    match inst.operands.get(k) {
        Some(Operand::LiteralBit32(x)) => Some(*x),
        _ => None,
    }
}
