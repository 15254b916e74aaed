//! Target facts: everything a backend pass (grouping, depth, scheduling,
//! register allocation, legalisation) may ask about the hardware.
//!
//! A target implements [`TargetFacts`] for its opcode vocabulary `O` from its
//! generated `.isa` tables; passes ask only through this trait and never
//! match on a target's name. [`test_target::TestTarget`] is a small
//! configurable implementation over [`GenericOp`](lathe_ir::GenericOp) for
//! tests, fuzzing and benches, so the passes can be exercised without a
//! real ISA.
//!
//! # Register model
//!
//! A target has a list of [`RegisterFile`]s, each an array of allocation
//! *units* of `unit_bits` bits. A value is placed in a [`RegClass`]: a file,
//! the units one lane takes, and the alignment of its first unit. Classes
//! that name the same file alias: on ir3 generations with a merged register
//! file the half class (`hr`, one 16-bit unit) and the full class (`r`, two
//! 16-bit units aligned to 2) are both views of one file, so `hr1.x`..`hr1.y`
//! are the halves of `r0.y`; on older generations they are two files and do
//! not interfere. A vector value (a register group: the `collect`ed source
//! of a texture sample, the result of one) takes `lanes × lane_units`
//! consecutive units starting at a multiple of `align`.
//!
//! A placed value is a [`PhysReg`]: its file and first unit.
//!
//! # Example
//!
//! ```
//! use lathe_ir::{GenericOp, Op, Type};
//! use lathe_passes::target::{TargetFacts, test_target::TestTarget};
//!
//! let t = TestTarget::realistic();
//! let full = t.result_class(&Op::Opcode(GenericOp::FAdd), Type::F32);
//! let half = t.result_class(&Op::Opcode(GenericOp::FAdd), Type::F16);
//! assert_eq!(full.file, half.file); // merged file: halves alias fulls
//! assert_eq!((full.lane_units, full.align), (2, 2));
//! assert_eq!((half.lane_units, half.align), (1, 1));
//! ```

pub mod test_target;

use lathe_ir::{ArrayId, Op, Opcode, Shader, Type};

/// A register file's index in [`TargetFacts::files`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct FileId(pub u8);

impl FileId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a register file is for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FileKind {
    /// General-purpose registers, assigned by register allocation.
    General,
    /// Predicate registers (ir3 `p0.x`).
    Predicate,
    /// Address registers for relative addressing (ir3 `a0.x`, `a1.x`); the
    /// scheduler keeps one address value live at a time. Register
    /// allocation assigns them whatever [`RegisterFile::allocated`] says
    /// and never spills them: an operand wanted in an address register is
    /// copied there from the general register it lives in
    /// ([`TargetFacts::copy_between`]) for the instruction reading it.
    Address,
    /// Registers uniform across a wave (ir3 shared `r48.x+`, Valhall `u`
    /// registers), read-only to most instructions.
    Uniform,
    /// Constants the driver fills before the shader runs (ir3 `c`); never
    /// allocated.
    Const,
}

/// One register file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RegisterFile {
    /// Short name used in IR text (`r`, `p`, `a`, `c`).
    pub name: &'static str,
    pub kind: FileKind,
    /// Number of allocation units (the largest count a shader may use).
    pub units: u32,
    /// Width of one unit in bits (16 for ir3's merged half/full file).
    pub unit_bits: u32,
    /// Whether register allocation assigns this file.
    pub allocated: bool,
}

/// A view of a register file that values of one kind are placed in.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RegClass {
    pub file: FileId,
    /// Units one lane takes.
    pub lane_units: u8,
    /// The first unit is a multiple of this (a power of two).
    pub align: u8,
}

impl RegClass {
    /// Units a value of type `ty` takes in this class.
    pub fn units(self, ty: Type) -> u32 {
        self.lane_units as u32 * ty.lanes as u32
    }
}

/// A placed value: its file and first unit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct PhysReg {
    pub file: FileId,
    pub unit: u16,
}

/// The forms an operand can take besides a register.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct OperandForms {
    /// A constant-file register (ir3 `c3.x`, Valhall FAU).
    pub constant: bool,
    /// An immediate encoded in the instruction.
    pub immediate: bool,
    /// A register addressed relative to the address register.
    pub relative: bool,
}

/// What a target exchanges two registers with (see [`TargetFacts::swap`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Exchange<O> {
    /// One instruction that writes each of its two sources to the
    /// register of the other: its sources, in order, are the swap's
    /// operands and its destinations, in order, the swap's results (ir3's
    /// `swz`). The `swap` stays in the IR and emission encodes it with
    /// this opcode.
    Instruction(O),
    /// A bitwise exclusive or of two operands whose result takes its first
    /// operand's register; three of them exchange two registers (`x ^= y;
    /// y ^= x; x ^= y`). The `lower-swap` pass rewrites each `swap` so.
    Xor(O),
}

/// A scratch-memory location for a spilled value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SpillSlot {
    /// The scratch array the register allocator declared for values of
    /// this type (for vocabularies that model scratch as IR arrays).
    pub array: ArrayId,
    /// The element of `array`.
    pub index: u32,
    /// Byte offset in a flat per-invocation scratch area (for targets that
    /// address private memory directly).
    pub byte_offset: u32,
}

/// How spills and fills read the spill base register
/// ([`TargetFacts::spill_base_operand`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BaseOperand {
    /// Operand 0, before a spill's value.
    First,
    /// The instruction's address operand (after its other operands).
    Address,
}

/// The facts a backend pass may ask about a target, for opcode vocabulary
/// `O`. Every answer comes from the target's generated `.isa` tables.
pub trait TargetFacts<O: Opcode> {
    /// Short target name for messages (`a630`, `test`); passes never branch
    /// on it.
    fn name(&self) -> &str;

    /// The register files; [`FileId`] indexes this slice.
    fn files(&self) -> &[RegisterFile];

    /// The class of operand `operand` (0-based, the address operand counts
    /// after the others) of an instruction doing `op`, when it holds a
    /// value of type `ty`.
    fn operand_class(&self, op: &Op<O>, operand: usize, ty: Type) -> RegClass;

    /// The class of the result of an instruction doing `op`, of type `ty`.
    fn result_class(&self, op: &Op<O>, ty: Type) -> RegClass;

    /// The register the hardware preloads `input index=N` into, if fixed.
    fn input_register(&self, index: u32, ty: Type) -> Option<PhysReg>;

    /// The register the hardware reads `output index=N` from, if fixed.
    fn output_register(&self, index: u32, ty: Type) -> Option<PhysReg>;

    /// Cycles between issuing `producer` and issuing a `consumer` that reads
    /// the producer's result as operand `operand` without a stall (0: the
    /// next cycle). Meta instructions take none.
    fn latency(&self, producer: &Op<O>, consumer: &Op<O>, operand: usize) -> u32;

    /// Is `op`'s result produced asynchronously (texture fetch, memory load,
    /// special functions on ir3), so consumers need a sync mechanism (sync
    /// bit, scoreboard slot) rather than a fixed delay?
    fn is_async(&self, op: &Op<O>) -> bool;

    /// The forms operand `operand` of `op` accepts besides a register.
    fn operand_forms(&self, op: &Op<O>, operand: usize) -> OperandForms;

    /// `consumer` reading directly what `producer` makes, in place of its
    /// operand `operand` (a value of type `ty`): the instruction to use
    /// instead, whose operands are the consumer's with that one replaced
    /// by the producer's, in order. For a producer without operands (a
    /// move of a constant-file register) the operand disappears into the
    /// encoding (ir3's `add.f r0.x, r0.y, c1.x`). `None` (the default):
    /// the encoding cannot take it, and the consumer keeps the register.
    fn fold_operand(
        &self,
        consumer: &Op<O>,
        operand: usize,
        producer: &Op<O>,
        ty: Type,
    ) -> Option<O> {
        let _ = (consumer, operand, producer, ty);
        None
    }

    /// The operand of `op` that is read from the register its result is
    /// written to (a tied operand: the spec names one field as both), so
    /// register allocation gives the result that operand's register.
    /// `None` (the default): no operand is tied.
    fn tied_operand(&self, op: &Op<O>) -> Option<usize> {
        let _ = op;
        None
    }

    /// Threads (waves) in flight when a shader uses `units` units of the
    /// allocated file `file`; non-increasing in `units`.
    fn occupancy(&self, file: FileId, units: u32) -> u32;

    /// The unit counts at which occupancy drops: the largest `units` of each
    /// occupancy level, ascending. Derived from [`TargetFacts::occupancy`].
    fn occupancy_steps(&self, file: FileId) -> Vec<u32> {
        let total = self.files()[file.index()].units;
        let mut steps = Vec::new();
        let mut first = 1;
        // Occupancy does not increase with `units`, so the last count of
        // each level is a binary search away: a few evaluations per level
        // instead of two per unit.
        while first <= total {
            let level = self.occupancy(file, first);
            let (mut lo, mut hi) = (first, total);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if self.occupancy(file, mid) >= level {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            steps.push(lo);
            first = lo + 1;
        }
        steps
    }

    /// The opcode copying a scalar of type `ty` (operand 0) to a new
    /// register of the same class (the result).
    fn copy(&self, ty: Type) -> O;

    /// The opcode copying a value of type `ty` (operand 0) from a register
    /// of class `from` to one of class `to` (the result) in another file
    /// or of another width per lane, for an instruction that reads its
    /// operand in a class other than the one the value was made in, as
    /// relative addressing reads an index in the address file (ir3's
    /// `mova`). `None` (the default): the target has no such copy, and
    /// register allocation fails with `unsupported:`.
    fn copy_between(&self, from: RegClass, to: RegClass, ty: Type) -> Option<O> {
        let _ = (from, to, ty);
        None
    }

    /// How the target exchanges the registers of two scalars of type `ty`:
    /// what the IR's two-result `swap` (which register allocation breaks
    /// copy cycles with) becomes. `None`: the target has no way, and the
    /// `lower-swap` pass fails with `unsupported:`.
    fn swap(&self, ty: Type) -> Option<Exchange<O>>;

    /// The opcode storing operand 0 (of type `ty`) to `slot`; no result.
    /// With a [`TargetFacts::spill_base`], operand 0 is the base and
    /// operand 1 the value.
    fn spill(&self, ty: Type, slot: SpillSlot) -> O;

    /// The opcode loading a value of type `ty` from `slot` (the result).
    /// With a [`TargetFacts::spill_base`], operand 0 is the base.
    fn fill(&self, ty: Type, slot: SpillSlot) -> O;

    /// The opcode (no operands, one `u32` result) making the base address
    /// that spills and fills add their slot's byte offset to, for targets
    /// whose private-memory instructions read the address from a register
    /// (ir3's `stp`/`ldp`). `None` (the default): spills and fills address
    /// scratch memory on their own (the test target's arrays, Valhall's
    /// thread-local pointer).
    fn spill_base(&self) -> Option<O> {
        None
    }

    /// Where spills and fills take the [`TargetFacts::spill_base`] value:
    /// operand 0 (the default; ir3's `stp`/`ldp`) or the address operand
    /// (vocabularies whose scratch accesses index from an address register,
    /// as the generic `array_store`/`array_load` do).
    fn spill_base_operand(&self) -> BaseOperand {
        BaseOperand::First
    }

    /// Bytes of scratch memory that spills and fills reach (their offset
    /// field's range). The register allocator fails with `unsupported:`
    /// rather than hand [`TargetFacts::spill`] or [`TargetFacts::fill`] a
    /// slot at or beyond it. Unbounded by default.
    fn scratch_reach(&self) -> u32 {
        u32::MAX
    }

    /// The name of register `reg` holding a value of class `class` and
    /// type `ty`, as the target's assembly writes it (`r1.y`, `hr3.x`).
    fn register_name(&self, class: RegClass, reg: PhysReg, ty: Type) -> String;

    /// Post-RA legalisation: make an allocated shader obey the hardware's
    /// remaining rules (ir3 nops and sync bits, Valhall scoreboard slots);
    /// the `legalise` pass calls it. Returns whether anything changed, or
    /// why the shader cannot be legalised. The default does nothing: each
    /// target fills it in with its backend.
    fn legalise(&self, shader: &mut Shader<'_, O>) -> Result<bool, crate::legalise::LegaliseError> {
        let _ = shader;
        Ok(false)
    }
}
