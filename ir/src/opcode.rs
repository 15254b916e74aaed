//! The opcode vocabulary as a trait, and the structural operations every
//! vocabulary shares (meta instructions and control flow).
//!
//! An instruction's operation is an [`Op<O>`]: either one of the structural
//! operations the IR itself understands (phi, collect, split, input, output,
//! jump, branch, ret) or a vocabulary opcode `O`. Before instruction selection
//! `O` is [`GenericOp`](crate::GenericOp); after it, a target's generated
//! machine opcode type. Passes only ask `O` questions through [`Opcode`].

use crate::types::Type;
use std::fmt;

/// Memory-like state an instruction reads or writes. Accesses whose classes
/// conflict keep their program order (ir3's `barrier_class`): a read of a
/// class conflicts with a write of it, a write with both.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct BarrierClass(pub u8);

impl BarrierClass {
    pub const NONE: BarrierClass = BarrierClass(0);
    /// Reads an array element (possibly through the address register).
    pub const ARRAY_R: BarrierClass = BarrierClass(1);
    /// Writes an array element.
    pub const ARRAY_W: BarrierClass = BarrierClass(2);
    /// Reads a memory buffer that a shader may also write.
    pub const BUFFER_R: BarrierClass = BarrierClass(4);
    /// Writes a memory buffer.
    pub const BUFFER_W: BarrierClass = BarrierClass(8);
    /// Writes a shader output (or ends the invocation's output, as discard does).
    pub const OUTPUT_W: BarrierClass = BarrierClass(16);
    /// Reads workgroup shared memory.
    pub const SHARED_R: BarrierClass = BarrierClass(32);
    /// Writes workgroup shared memory.
    pub const SHARED_W: BarrierClass = BarrierClass(64);
    /// A full barrier: ordered against everything.
    pub const ALL: BarrierClass = BarrierClass(0x7f);

    pub fn union(self, other: BarrierClass) -> BarrierClass {
        BarrierClass(self.0 | other.0)
    }

    pub fn intersects(self, other: BarrierClass) -> bool {
        self.0 & other.0 != 0
    }

    /// The classes an access of this class must stay ordered against.
    pub fn conflicts(self) -> BarrierClass {
        let mut c = 0;
        if self.0 & Self::ARRAY_R.0 != 0 {
            c |= Self::ARRAY_W.0;
        }
        if self.0 & Self::ARRAY_W.0 != 0 {
            c |= Self::ARRAY_R.0 | Self::ARRAY_W.0;
        }
        if self.0 & Self::BUFFER_R.0 != 0 {
            c |= Self::BUFFER_W.0;
        }
        if self.0 & Self::BUFFER_W.0 != 0 {
            c |= Self::BUFFER_R.0 | Self::BUFFER_W.0;
        }
        if self.0 & Self::OUTPUT_W.0 != 0 {
            c |= Self::OUTPUT_W.0;
        }
        if self.0 & Self::SHARED_R.0 != 0 {
            c |= Self::SHARED_W.0;
        }
        if self.0 & Self::SHARED_W.0 != 0 {
            c |= Self::SHARED_R.0 | Self::SHARED_W.0;
        }
        BarrierClass(c)
    }

    /// Must an access of class `self` stay before a later one of `later`?
    pub fn must_precede(self, later: BarrierClass) -> bool {
        self.conflicts().intersects(later)
    }
}

/// What an instruction does besides computing its result.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Effects {
    /// Observable beyond its result (stores, discard, barriers): never
    /// removed when unused, never moved across control flow.
    pub side_effects: bool,
    /// May have undefined behaviour for some operand values (out-of-range
    /// conversion, division by zero, out-of-bounds access): never executed
    /// speculatively.
    pub may_trap: bool,
    /// Memory-like state touched, for ordering.
    pub barrier: BarrierClass,
}

impl Effects {
    pub const PURE: Effects = Effects {
        side_effects: false,
        may_trap: false,
        barrier: BarrierClass::NONE,
    };

    /// Safe to execute on a path that would not have executed it.
    pub fn speculatable(self) -> bool {
        !self.side_effects && !self.may_trap && self.barrier == BarrierClass::NONE
    }
}

/// One attribute token of an instruction in the text form: `key=value` or
/// a bare `value` (as in `const 1.5`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Attr<'t> {
    pub key: Option<&'t str>,
    pub value: &'t str,
}

/// Why a vocabulary rejected an opcode name or its attributes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AttrError {
    /// The offending attribute's index, or `None` for the opcode name itself.
    pub attr: Option<usize>,
    pub message: String,
}

impl AttrError {
    pub fn on(attr: usize, message: impl Into<String>) -> AttrError {
        AttrError {
            attr: Some(attr),
            message: message.into(),
        }
    }

    pub fn on_name(message: impl Into<String>) -> AttrError {
        AttrError {
            attr: None,
            message: message.into(),
        }
    }
}

/// What the validator tells a vocabulary about one instruction.
pub struct Signature<'c> {
    pub operands: &'c [Type],
    pub result: Option<Type>,
    pub has_address: bool,
    pub arrays: &'c [crate::ArrayDecl],
}

/// An opcode vocabulary: generic ops, or a target's machine ops.
pub trait Opcode: Copy + Eq + fmt::Debug + 'static {
    /// The mnemonic in the text form. Must not be one of the structural
    /// names (`phi`, `collect`, `split`, `swap`, `input`, `output`, `jump`, `branch`,
    /// `ret`).
    fn name(&self) -> &'static str;

    /// Write the attributes, each preceded by one space (`" slot=0"`).
    /// `result` is the instruction's result type, for typed immediates.
    fn write_attrs(&self, result: Option<Type>, out: &mut dyn fmt::Write) -> fmt::Result;

    /// Rebuild an opcode from its mnemonic and attributes.
    fn parse(name: &str, attrs: &[Attr<'_>], result: Option<Type>) -> Result<Self, AttrError>;

    /// Check operand count and types, result type and address use.
    fn check(&self, sig: &Signature<'_>) -> Result<(), String>;

    fn effects(&self) -> Effects;

    /// `true` for a plain copy: the result equals operand 0 bit for bit
    /// whenever their types match (a `mov` without modifiers). Copy
    /// propagation removes these.
    fn is_plain_copy(&self) -> bool;

    /// The two-way select `sel cond, a, b` of this vocabulary, which flatten
    /// uses to replace phis. `None` if the vocabulary has none.
    fn select() -> Option<Self>;

    /// `true` when a value is only its register's bits, so a `collect` or
    /// phi may join operands of one width but different scalar kinds
    /// (`u32` and `i32`): machine code, once a bit cast between them no
    /// longer costs a move. Generic IR keeps the kinds its interpreter
    /// and operand rules read.
    fn joins_by_width() -> bool {
        false
    }
}

/// An instruction's operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op<O> {
    /// `phi [v, b], ...`: one operand per predecessor, paired with it.
    Phi,
    /// Groups scalar operands into a vector (a register group).
    Collect,
    /// Takes lane `lane` out of a vector.
    Split { lane: u8 },
    /// `%a, %b = swap %x, %y`: exchanges two scalars of one width. It has
    /// two results: `%a` is `%x`'s value and `%b` is `%y`'s; after
    /// register allocation `%a` sits in `%y`'s register and `%b` in
    /// `%x`'s (register allocation uses it to break copy cycles; a target
    /// lowers it to its exchange instruction or a copy sequence).
    Swap,
    /// A value the hardware preloads into a register before the shader
    /// starts (machine level), numbered by `index`.
    Input { index: u32 },
    /// A value the shader leaves in a register for the hardware.
    Output { index: u32 },
    /// Unconditional branch to `targets[0]`.
    Jump,
    /// `branch cond, then, else`.
    Branch,
    /// End of the invocation.
    Return,
    /// An opcode from the vocabulary.
    Opcode(O),
}

impl<O: Opcode> Op<O> {
    pub fn is_terminator(&self) -> bool {
        matches!(self, Op::Jump | Op::Branch | Op::Return)
    }

    pub fn is_phi(&self) -> bool {
        matches!(self, Op::Phi)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::Phi => "phi",
            Op::Collect => "collect",
            Op::Split { .. } => "split",
            Op::Swap => "swap",
            Op::Input { .. } => "input",
            Op::Output { .. } => "output",
            Op::Jump => "jump",
            Op::Branch => "branch",
            Op::Return => "ret",
            Op::Opcode(o) => o.name(),
        }
    }

    pub fn effects(&self) -> Effects {
        match self {
            Op::Phi | Op::Collect | Op::Split { .. } | Op::Swap | Op::Input { .. } => Effects::PURE,
            Op::Output { .. } => Effects {
                side_effects: true,
                may_trap: false,
                barrier: BarrierClass::OUTPUT_W,
            },
            Op::Jump | Op::Branch | Op::Return => Effects {
                side_effects: true,
                may_trap: false,
                barrier: BarrierClass::NONE,
            },
            Op::Opcode(o) => o.effects(),
        }
    }
}

/// The structural mnemonics, which no vocabulary may reuse.
pub const STRUCTURAL_NAMES: [&str; 8] = [
    "phi", "collect", "split", "input", "output", "jump", "branch", "ret",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_classes_order_writes_against_reads() {
        let r = BarrierClass::ARRAY_R;
        let w = BarrierClass::ARRAY_W;
        assert!(!r.must_precede(r));
        assert!(r.must_precede(w));
        assert!(w.must_precede(r));
        assert!(w.must_precede(w));
        assert!(!w.must_precede(BarrierClass::BUFFER_R));
        assert!(BarrierClass::SHARED_W.must_precede(BarrierClass::SHARED_R));
        assert!(!BarrierClass::SHARED_R.must_precede(BarrierClass::SHARED_R));
        assert!(!BarrierClass::SHARED_W.must_precede(BarrierClass::BUFFER_R));
        assert!(BarrierClass::ALL.must_precede(BarrierClass::SHARED_R));
        assert!(BarrierClass::ALL.must_precede(BarrierClass::OUTPUT_W));
        assert!(BarrierClass::OUTPUT_W.must_precede(BarrierClass::ALL));
    }
}
