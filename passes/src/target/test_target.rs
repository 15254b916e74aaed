//! A small configurable target over the generic vocabulary, for tests,
//! fuzzing and benches of the backend passes without a real ISA.
//!
//! It models an ir3-like machine: one general file whose 32-bit values
//! take two 16-bit units when half and full registers are merged (or two
//! separate files when not), register groups (vectors) aligned to a whole
//! group of `group_align` lanes, fixed registers for meta inputs and
//! outputs, ALU and asynchronous (transcendental, texture, memory)
//! latencies, and an occupancy curve with steps. Spills and fills are
//! `array_store`/`array_load` on scratch arrays the register allocator
//! declares, so the reference interpreter runs allocated programs as is.
//!
//! Its numbers are made up for testing; the real targets take theirs from
//! their `.isa` specs.

use super::{
    FileId, FileKind, OperandForms, PhysReg, RegClass, RegisterFile, SpillSlot, TargetFacts,
};
use lathe_ir::{GenericOp, Op, Type};

/// Configuration of a [`TestTarget`].
#[derive(Clone, Debug)]
pub struct TestTarget {
    /// Full (32-bit) registers available.
    pub full_registers: u32,
    /// Half registers live inside full ones (one file of 16-bit units);
    /// otherwise half values get their own file of `full_registers * 2`.
    pub merged: bool,
    /// A vector of `n` lanes starts at a multiple of `min(n, group_align)`
    /// lanes (1: groups need only be contiguous).
    pub group_align: u8,
    /// Delay between a simple ALU result and its use.
    pub alu_latency: u32,
    /// Delay of asynchronous results (transcendentals, samples, loads).
    pub async_latency: u32,
    /// Bytes of scratch memory spills and fills reach (unbounded: `u32::MAX`).
    pub scratch_reach: u32,
    files: Vec<RegisterFile>,
    /// The address file ([`TestTarget::with_address_file`]).
    address: Option<FileId>,
}

impl TestTarget {
    pub fn new(full_registers: u32, merged: bool, group_align: u8) -> TestTarget {
        let mut files = Vec::with_capacity(2);
        if merged {
            files.push(RegisterFile {
                name: "r",
                kind: FileKind::General,
                units: full_registers * 2,
                unit_bits: 16,
                allocated: true,
            });
        } else {
            files.push(RegisterFile {
                name: "r",
                kind: FileKind::General,
                units: full_registers,
                unit_bits: 32,
                allocated: true,
            });
            files.push(RegisterFile {
                name: "hr",
                kind: FileKind::General,
                units: full_registers * 2,
                unit_bits: 16,
                allocated: true,
            });
        }
        TestTarget {
            full_registers,
            merged,
            group_align,
            alu_latency: 3,
            async_latency: 10,
            scratch_reach: u32::MAX,
            files,
            address: None,
        }
    }

    /// The same target with an address file holding one 32-bit value, as
    /// ir3's `a0.x`: the address operand of `array_load` and
    /// `array_store` is read from it, and a `mov` copies an index there
    /// from a general register ([`TargetFacts::copy_between`]).
    pub fn with_address_file(mut self) -> TestTarget {
        let full = self.class_of(Type::I32);
        self.address = Some(FileId(self.files.len() as u8));
        self.files.push(RegisterFile {
            name: "a",
            kind: FileKind::Address,
            units: full.lane_units as u32,
            unit_bits: 32 / full.lane_units as u32,
            allocated: false,
        });
        self
    }

    /// A realistic file: 192 full registers (48 × vec4, as ir3's a6xx),
    /// merged half registers, groups aligned to two lanes.
    pub fn realistic() -> TestTarget {
        TestTarget::new(192, true, 2)
    }

    /// A tiny merged file of `full_registers` full registers, to force
    /// spilling and live-range splitting.
    pub fn small(full_registers: u32) -> TestTarget {
        TestTarget::new(full_registers, true, 2)
    }

    fn is_half(ty: Type) -> bool {
        ty.scalar.bits() <= 16
    }

    fn class_of(&self, ty: Type) -> RegClass {
        let half = Self::is_half(ty);
        let (file, lane_units) = match (self.merged, half) {
            (true, true) => (FileId(0), 1),
            (true, false) => (FileId(0), 2),
            (false, true) => (FileId(1), 1),
            (false, false) => (FileId(0), 1),
        };
        let group = if ty.lanes > 1 {
            ty.lanes.min(self.group_align).max(1)
        } else {
            1
        };
        RegClass {
            file,
            lane_units,
            align: lane_units * group,
        }
    }

    fn fixed(&self, index: u32, ty: Type) -> Option<PhysReg> {
        let class = self.class_of(ty);
        let unit = index * class.align as u32;
        (unit < self.files[class.file.index()].units).then_some(PhysReg {
            file: class.file,
            unit: unit as u16,
        })
    }

    fn is_async_op(op: &GenericOp) -> bool {
        use GenericOp::*;
        op.is_float_unary() && *op != Floor
            || matches!(
                op,
                Sample { .. } | LoadUbo { .. } | ArrayLoad { .. } | LoadUniform { .. }
            )
    }
}

impl TargetFacts<GenericOp> for TestTarget {
    fn name(&self) -> &str {
        "test"
    }

    fn files(&self) -> &[RegisterFile] {
        &self.files
    }

    fn operand_class(&self, op: &Op<GenericOp>, operand: usize, ty: Type) -> RegClass {
        use GenericOp::{ArrayLoad, ArrayStore};
        let class = self.class_of(ty);
        // The address operand comes after the others: the index of a
        // load, after the value of a store.
        let address = match op {
            Op::Opcode(ArrayLoad { .. }) => operand == 0,
            Op::Opcode(ArrayStore { .. }) => operand == 1,
            _ => false,
        };
        match self.address {
            Some(file) if address => RegClass { file, ..class },
            _ => class,
        }
    }

    fn result_class(&self, _op: &Op<GenericOp>, ty: Type) -> RegClass {
        self.class_of(ty)
    }

    fn input_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.fixed(index, ty)
    }

    fn output_register(&self, index: u32, ty: Type) -> Option<PhysReg> {
        self.fixed(index, ty)
    }

    fn latency(&self, producer: &Op<GenericOp>, _consumer: &Op<GenericOp>, _operand: usize) -> u32 {
        match producer {
            Op::Opcode(op) if Self::is_async_op(op) => self.async_latency,
            Op::Opcode(_) => self.alu_latency,
            _ => 0,
        }
    }

    fn is_async(&self, op: &Op<GenericOp>) -> bool {
        matches!(op, Op::Opcode(o) if Self::is_async_op(o))
    }

    fn operand_forms(&self, op: &Op<GenericOp>, operand: usize) -> OperandForms {
        use GenericOp::*;
        match op {
            // Binary ALU operations take a constant or an immediate second
            // operand, as ir3's cat2 does.
            Op::Opcode(
                FAdd | FSub | FMul | FMin | FMax | IAdd | ISub | IMul | And | Or | Xor | Shl | Shr
                | AShr,
            ) if operand == 1 => OperandForms {
                constant: true,
                immediate: true,
                relative: false,
            },
            Op::Opcode(Mov { .. }) => OperandForms {
                constant: true,
                immediate: true,
                relative: true,
            },
            _ => OperandForms::default(),
        }
    }

    fn occupancy(&self, file: FileId, units: u32) -> u32 {
        // Waves in flight: the file holds `total` units per lane of every
        // wave, in granules of 8 full registers, at most 16 waves.
        let total = self.files[file.index()].units;
        let granule = 16 * 32 / self.files[file.index()].unit_bits;
        let used = units.max(1).div_ceil(granule) * granule;
        (total * 4 / used).clamp(1, 16)
    }

    fn copy(&self, _ty: Type) -> GenericOp {
        GenericOp::Mov {
            abs: false,
            neg: false,
        }
    }

    /// None: the reference interpreter runs the IR's `swap` as it is.
    fn swap(&self, _ty: Type) -> Option<super::Exchange<GenericOp>> {
        None
    }

    /// A `mov` from a general register into the address file.
    fn copy_between(&self, from: RegClass, to: RegClass, ty: Type) -> Option<GenericOp> {
        let general = self.class_of(ty);
        (from == general && Some(to.file) == self.address && ty.is_scalar()).then_some(
            GenericOp::Mov {
                abs: false,
                neg: false,
            },
        )
    }

    fn scratch_reach(&self) -> u32 {
        self.scratch_reach
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

    fn register_name(&self, class: RegClass, reg: PhysReg, _ty: Type) -> String {
        const LANES: [char; 4] = ['x', 'y', 'z', 'w'];
        let unit = reg.unit as u32;
        let half = if self.merged {
            class.lane_units == 1
        } else {
            class.file == FileId(1)
        };
        // Index in registers of this value's width.
        let n = if self.merged && !half { unit / 2 } else { unit };
        format!(
            "{}r{}.{}",
            if half { "h" } else { "" },
            n / 4,
            LANES[(n % 4) as usize]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lathe_ir::Scalar;

    #[test]
    fn merged_half_registers_are_halves_of_full_ones() {
        let t = TestTarget::realistic();
        let f = t.result_class(&Op::Phi, Type::F32);
        let h = t.result_class(&Op::Phi, Type::F16);
        let r = |unit| PhysReg {
            file: FileId(0),
            unit,
        };
        assert_eq!(t.register_name(f, r(6), Type::F32), "r0.w");
        assert_eq!(t.register_name(h, r(6), Type::F16), "hr1.z");
        assert_eq!(t.register_name(h, r(7), Type::F16), "hr1.w");
        let sep = TestTarget::new(8, false, 1);
        let f = sep.result_class(&Op::Phi, Type::F32);
        let h = sep.result_class(&Op::Phi, Type::F16);
        assert_ne!(f.file, h.file);
        assert_eq!(sep.register_name(f, r(6), Type::F32), "r1.z");
    }

    #[test]
    fn groups_are_aligned_to_group_align_lanes() {
        let t = TestTarget::new(16, true, 2);
        let v4 = t.result_class(&Op::Collect, Type::vector(Scalar::F32, 4));
        assert_eq!(
            (
                v4.lane_units,
                v4.align,
                v4.units(Type::vector(Scalar::F32, 4))
            ),
            (2, 4, 8)
        );
    }

    #[test]
    fn occupancy_falls_in_steps() {
        let t = TestTarget::realistic();
        let steps = t.occupancy_steps(FileId(0));
        assert_eq!(*steps.last().unwrap(), 384);
        assert!(steps.windows(2).all(|w| w[0] < w[1]));
        for w in steps.windows(2) {
            assert!(t.occupancy(FileId(0), w[0]) > t.occupancy(FileId(0), w[0] + 1));
        }
        // No drop between steps either.
        for u in (1..384).filter(|u| !steps.contains(u)) {
            assert_eq!(t.occupancy(FileId(0), u), t.occupancy(FileId(0), u + 1));
        }
        assert_eq!(t.occupancy(FileId(0), 1), 16);
        assert_eq!(t.occupancy(FileId(0), 384), 4);
    }
}
