//! Runs ir3 machine code: the simulator `isa!` generates from the
//! `machine` and `semantics` blocks of `isa/specs/adreno/semantics.isa`
//! (see [`super::generated::sim`]), driven over a group of threads in
//! lockstep, with the spec's latency table and sync facts as the timing
//! model: a read before its producer's result is ready (too few nops, no
//! `(ss)`/`(sy)`) stops the run with [`SimError::Hazard`].
//!
//! ```
//! use lathe_adreno::ir3::{assemble_source, Generation, sim};
//!
//! let g = Generation::A6xx;
//! let program = assemble_source("add.f r0.x, r0.y, r0.z\nend\n", g).unwrap();
//! let mut m = sim::machine(4);
//! let (file, half, index) = m.parse_reg("r0.y").unwrap();
//! for lane in 0..4 {
//!     m.set(file, half, index, lane, 1.5f32.to_bits());
//! }
//! sim::run(&mut m, &program, g).unwrap();
//! let (file, half, index) = m.parse_reg("r0.x").unwrap();
//! assert_eq!(m.get(file, half, index, 0), Some(1.5f32.to_bits()));
//!
//! // The SFU result needs (ss) before it is read.
//! let racy = assemble_source("rcp r0.x, r0.y\nadd.f r1.x, r0.x, r0.x\n", g).unwrap();
//! let err = sim::run(&mut sim::machine(4), &racy, g).unwrap_err();
//! assert!(matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, .. }));
//! ```

use super::Generation;
use super::generated::{Opcode, sim as generated};

pub use lathe_isa::sim::{Machine, Program, SimError};

/// At most this many instructions issue in one [`run`] (loops that never
/// end stop with [`SimError::Flow`]).
pub const MAX_STEPS: u64 = 1 << 22;

/// A machine of `lanes` threads (4 is a 2×2 quad), registers zeroed.
pub fn machine(lanes: usize) -> Machine {
    generated::machine(lanes)
}

/// Decodes `program` once, for running it on many machines with
/// [`run_program`] (a word that does not decode or has no semantics is
/// an error only when it executes).
pub fn prepare(program: &[u64], generation: Generation) -> Program {
    generated::prepare(program, generation.gpu_id())
}

/// Runs a [`prepare`]d `program` from its first instruction until every
/// thread ends.
pub fn run_program(m: &mut Machine, program: &Program) -> Result<(), SimError> {
    program.run(m, MAX_STEPS)
}

/// Runs `program` from its first instruction until every thread ends.
pub fn run(m: &mut Machine, program: &[u64], generation: Generation) -> Result<(), SimError> {
    run_program(m, &prepare(program, generation))
}

/// Whether the spec gives `opcode` semantics the simulator executes.
pub fn covers(opcode: Opcode) -> bool {
    generated::covers(opcode)
}
