//! Runs allocated ir3 machine IR on the generated simulator
//! ([`lathe_isa::machine_run`]): each value's register comes from the
//! allocation through [`Ir3Target`]'s register names, a `swap` is encoded
//! with the spec's exchange idiom (`swz`).
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, generated::MachineOp, run, sim, target::Ir3Target};
//! use lathe_passes::target::TargetFacts;
//!
//! let text = "shader fragment\nregisters gpr\nb0:\n  %0:u32@gpr4 = input index=0\n  %1:u32@gpr2 = input index=1\n  %2:u32@gpr2, %3:u32@gpr4 = swap %0, %1\n  output index=0 %2\n  output index=1 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
//! let t = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let out = run::run(&shader, &t, &mut sim::machine(1), &[7, 9]).unwrap();
//! // Units count halves: r0.z and r0.y trade values through one `swz`.
//! assert_eq!(out.get(&0), Some(&7));
//! assert_eq!(out.get(&1), Some(&9));
//! ```

use std::collections::BTreeMap;

use lathe_ir::{Shader, Type, Value};
use lathe_isa::machine_run::{self, Place, RunError, RunTarget};
use lathe_passes::target::{Exchange, FileId, PhysReg, TargetFacts};

use super::generated::{MachineOp, Spec, sim as generated};
use super::sim::{MAX_STEPS, Machine, SimError};
use super::target::Ir3Target;

impl RunTarget<Spec> for Ir3Target {
    fn place(&self, shader: &Shader<'_, MachineOp>, m: &Machine, v: Value) -> Option<Place> {
        let reg = shader.value_reg(v)?;
        let ty = shader.value_type(v);
        let op = shader.inst(shader.value_def(v)).op;
        let class = self.result_class(&op, ty);
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

    fn copy(&self, ty: Type) -> Option<MachineOp> {
        Some(TargetFacts::copy(self, ty))
    }

    fn exec(&self, m: &mut Machine, word: u64) -> Result<(), SimError> {
        generated::run(m, &[word], self.generation_id(), 1)
    }

    fn generation(&self) -> u32 {
        self.generation_id()
    }
}

/// Runs lane 0 of `m` through the allocated `shader` with meta inputs
/// `inputs`; the meta outputs by index, as raw register bits.
pub fn run(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    m: &mut Machine,
    inputs: &[u32],
) -> Result<BTreeMap<u32, u32>, RunError> {
    machine_run::run(shader, target, m, inputs, MAX_STEPS)
}

/// [`run`] with preloaded register groups: meta input `k` is `inputs[k]`,
/// one value per register (a fragment shader's barycentric pairs).
pub fn run_groups(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    m: &mut Machine,
    inputs: &[&[u32]],
) -> Result<BTreeMap<u32, u32>, RunError> {
    machine_run::run_groups(shader, target, m, inputs, MAX_STEPS)
}
