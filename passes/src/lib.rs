//! The pass manager and Lathe's target-neutral passes.
//!
//! A [`Pass`] transforms a [`Shader`](lathe_ir::Shader) of any opcode
//! vocabulary; a [`Registry`] names passes so pipelines can be built from a
//! list of names (`dce,copy-prop,flatten`); a [`PassManager`] runs them in
//! order, validating the IR after every pass in debug builds (and so in
//! tests), keeping a dump after each pass on request (`print_after_all`),
//! and timing each one.
//!
//! Passes, one file each:
//! - [`dce`]: dead-code elimination (unreachable blocks, unused
//!   side-effect-free instructions).
//! - [`copy_prop`]: removes plain movs whose source and result types match
//!   (the ir3 notes' rule).
//! - [`flatten`]: simple if/else diamonds (and triangles) become
//!   straight-line code and their phis become `sel`; only speculatable code
//!   is hoisted (no side effects, nothing that may be undefined behaviour).
//!   One post-order sweep handles chains and any nesting depth in linear
//!   time.
//! - [`merge_blocks`]: a block whose only predecessor jumps to it
//!   unconditionally joins that predecessor (frontends leave long chains
//!   of them; each boundary costs a jump and a scheduling barrier).
//! - [`optimise`] (generic IR, before instruction selection): [`fold`]
//!   (constant folding with the interpreter's own semantics),
//!   [`simplify`] (algebraic identities; float ones only where the shader
//!   allows), [`gvn`] (common subexpressions over the dominator tree),
//!   [`load_cse`] (a load that repeats an earlier one in its block with
//!   no conflicting write between), `merge_blocks` and `dce`, to a fixed
//!   point. [`Registry::generic`] names them.
//!
//! - [`preamble`] (generic IR, for a backend whose hardware runs a
//!   preamble once per draw): expressions of uniforms only move into a
//!   preamble block that stores them into uniform words the rest reads.
//!
//! Every pass is linear in the shader's size; `cargo bench -p
//! lathe-passes` shows ns/instruction at 1k, 10k and 100k instructions for
//! a chain of diamonds and for deeply nested ones.
//!
//! Backend passes, which ask a target for its facts
//! ([`Registry::with_target`]):
//! - [`fold_copies`]: on machine IR, readers of a same-width register copy
//!   (a bit cast) read its source.
//! - [`fold_sources`]: an operand made by a constant move or a negation
//!   is read where the producer read it, when the target's encoding takes
//!   it there ([`target::TargetFacts::fold_operand`]).
//! - [`group`]: left/right neighbours of collect operands and split lanes,
//!   with copies where a value would need two places.
//! - [`depth`]: each instruction's depth in its block from the target's
//!   latencies (meta instructions take none).
//! - [`sched`]: list scheduling by critical path that switches to
//!   lowering register pressure near the occupancy step, keeping barrier
//!   classes, side effects and one address-register value at a time.
//! - [`legalise`]: the post-RA slot for the target's hardware rules
//!   ([`target::TargetFacts::legalise`], filled in by each backend).
//!
//! [`target`] is the seam through which a target states its hardware
//! facts ([`target::TargetFacts`]: register files and classes, latencies,
//! operand forms, occupancy, copy/spill/fill constructors); backend passes
//! ask only through it. [`target::test_target`] is a configurable target
//! over the generic vocabulary for tests and fuzzing.
//!
//! [`fuzzing`] holds the random program generator and the differential
//! check (interpreter before vs. after every pass) used by the
//! `ir_passes` fuzz target and by the tests.
//!
//! # Example
//!
//! Build a small fragment shader, print it, run the passes, print the
//! result and run it in the reference interpreter.
//!
//! ```
//! use lathe_ir::{Builder, GenericOp, Interp, Invocation, Limits, Shader, Stage, Type};
//! use lathe_passes::Registry;
//!
//! let arena = bumpalo::Bump::new();
//! let mut shader: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
//! let mut b = Builder::new(&mut shader);
//! let uv = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
//! let half = b.const_f32(0.5);
//! let copy = b.mov(uv);
//! let left = b.flt(copy, half);
//! // if (uv < 0.5) { c = uv * 2 } else { c = 1 - uv }
//! let [c] = b.if_else(
//!     left,
//!     |b| {
//!         let two = b.const_f32(2.0);
//!         [b.fmul(copy, two)]
//!     },
//!     |b| {
//!         let one = b.const_f32(1.0);
//!         [b.fsub(one, copy)]
//!     },
//! );
//! let unused = b.fadd(c, c);
//! let _ = unused;
//! b.store_output(0, 0, c);
//! b.ret();
//!
//! assert_eq!(lathe_ir::print(&shader), "\
//! shader fragment
//! b0:
//!   %0:f32 = load_input slot=0 comp=0 interp=smooth
//!   %1:f32 = const 0.5
//!   %2:f32 = mov %0
//!   %3:bool = flt %2, %1
//!   branch %3, b1, b2
//! b1:
//!   %4:f32 = const 2.0
//!   %5:f32 = fmul %2, %4
//!   jump b3
//! b2:
//!   %6:f32 = const 1.0
//!   %7:f32 = fsub %6, %2
//!   jump b3
//! b3:
//!   %8:f32 = phi [%5, b1], [%7, b2]
//!   %9:f32 = fadd %8, %8
//!   store_output slot=0 comp=0 %8
//!   ret
//! ");
//!
//! let mut pipeline = Registry::standard().pipeline(&["flatten", "copy-prop", "dce"]).unwrap();
//! pipeline.run(&mut shader).unwrap();
//! assert_eq!(lathe_ir::print(&shader), "\
//! shader fragment
//! b0:
//!   %0:f32 = load_input slot=0 comp=0 interp=smooth
//!   %1:f32 = const 0.5
//!   %2:bool = flt %0, %1
//!   %3:f32 = const 2.0
//!   %4:f32 = fmul %0, %3
//!   %5:f32 = const 1.0
//!   %6:f32 = fsub %5, %0
//!   %7:f32 = sel %2, %4, %6
//!   store_output slot=0 comp=0 %7
//!   ret
//! ");
//!
//! let mut inv = Invocation::default();
//! inv.inputs.insert((0, 0), 0.75f32.to_bits());
//! let out = lathe_ir::interp::run(&shader, &inv, Limits::default()).unwrap();
//! assert_eq!(out.outputs[&(0, 0)], (Type::F32, 0.25f32.to_bits()));
//! ```

pub mod constant_data;
pub mod copy_prop;
pub mod dce;
pub mod depth;
pub mod flatten;
pub mod fold;
pub mod fold_copies;
pub mod fold_sources;
pub mod fuzzing;
pub mod group;
pub mod gvn;
pub mod legalise;
pub mod link;
pub mod load_cse;
pub mod lower_swap;
pub mod manager;
pub mod merge_blocks;
pub mod optimise;
pub mod preamble;
pub mod private_arrays;
pub mod promote_arrays;
pub mod ra;
pub mod sched;
pub mod self_copies;
pub mod shared_vector_stores;
pub mod simplify;
pub mod sink_outputs;
pub mod ssbo_vector_loads;
pub mod target;
mod u32_code;
pub mod ubo_vector_loads;
pub mod ubo_vectors;
pub mod unroll;

pub use manager::{Pass, PassError, PassFailure, PassManager, PassRecord, Registry, timing_report};
