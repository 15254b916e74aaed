//! Runs Valhall machine code: the simulator `isa!` generates from the
//! `semantics` blocks of `isa/specs/mali/semantics.isa` and the register
//! files the spec's `regfile` declarations name (`r0`..`r63`, uniforms
//! `u0`..`u255`, special FAU values `sr0`..`sr127`), over a group of
//! threads in lockstep. ALU results are interlocked by the hardware (the
//! spec's latency table says 0), so hazards come only from message
//! results that a consumer reads without waiting for their slot.
//!
//! ```
//! use lathe_mali::valhall::{assemble_source, sim, Arch};
//!
//! let program = assemble_source("FADD.f32 r0, r1, u4\nNOP.end\n", Arch::V10).unwrap();
//! let mut m = sim::machine(4);
//! let (r1, _, i1) = m.parse_reg("r1").unwrap();
//! let (u, _, i4) = m.parse_reg("u4").unwrap();
//! m.set(u, false, i4, 0, 2.0f32.to_bits());
//! for lane in 0..4 {
//!     m.set(r1, false, i1, lane, 1.5f32.to_bits());
//! }
//! sim::run(&mut m, &program, Arch::V10).unwrap();
//! let (r0, _, i0) = m.parse_reg("r0").unwrap();
//! assert_eq!(m.get(r0, false, i0, 3), Some(3.5f32.to_bits()));
//! ```

use super::Arch;
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
pub fn prepare(program: &[u64], arch: Arch) -> Program {
    generated::prepare(program, arch.generation())
}

/// Runs a [`prepare`]d `program` from its first instruction until every
/// thread ends (`.end` flow, a discard, or running off the end).
pub fn run_program(m: &mut Machine, program: &Program) -> Result<(), SimError> {
    program.run(m, MAX_STEPS)
}

/// Runs `program` from its first instruction until every thread ends
/// (`.end` flow, a discard, or running off the end).
pub fn run(m: &mut Machine, program: &[u64], arch: Arch) -> Result<(), SimError> {
    run_program(m, &prepare(program, arch))
}

/// Whether the spec gives `opcode` semantics the simulator executes.
pub fn covers(opcode: Opcode) -> bool {
    generated::covers(opcode)
}
