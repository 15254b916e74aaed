//! Runs allocated Valhall machine IR on the generated simulator
//! ([`lathe_isa::machine_run`]); run `lower-swap` first (Valhall has no
//! exchange instruction, so swaps become three `LSHIFT_XOR.i32`).

use std::collections::BTreeMap;

use lathe_ir::{Shader, Type, Value};
use lathe_isa::machine_run::{self, Place, RunError, RunTarget};
use lathe_passes::target::{Exchange, FileId, PhysReg, TargetFacts};

use super::generated::{MachineOp, Spec, sim as generated};
use super::sim::{MAX_STEPS, Machine, SimError};
use super::target::ValhallTarget;

impl RunTarget<Spec> for ValhallTarget {
    fn place(&self, shader: &Shader<'_, MachineOp>, m: &Machine, v: Value) -> Option<Place> {
        let reg = shader.value_reg(v)?;
        let ty = shader.value_type(v);
        let class = self.result_class(&shader.inst(shader.value_def(v)).op, ty);
        let phys = PhysReg {
            file: FileId(reg.file),
            unit: reg.unit,
        };
        Place::named(m, &self.register_name(class, phys, ty))
    }

    fn exchange(&self, ty: Type) -> Option<MachineOp> {
        match self.swap(ty)? {
            Exchange::Instruction(op) => Some(op),
            Exchange::Xor(_) => None,
        }
    }

    fn exec(&self, m: &mut Machine, word: u64) -> Result<(), SimError> {
        generated::run(m, &[word], self.generation_id(), 1)
    }

    fn generation(&self) -> u32 {
        self.generation_id()
    }
}

/// Runs lane 0 of `m` through the allocated `shader` (after `lower-swap`)
/// with meta inputs `inputs`; the meta outputs by index, as raw bits.
pub fn run(
    shader: &Shader<'_, MachineOp>,
    target: &ValhallTarget,
    m: &mut Machine,
    inputs: &[u32],
) -> Result<BTreeMap<u32, u32>, RunError> {
    machine_run::run(shader, target, m, inputs, MAX_STEPS)
}
