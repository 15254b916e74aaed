//! The generic optimisation pipeline both backends run before instruction
//! selection: [`fold`](crate::fold), [`simplify`](crate::simplify),
//! [`gvn`](crate::gvn), [`load_cse`](crate::load_cse),
//! [`merge_blocks`](crate::merge_blocks), [`unroll`](crate::unroll) and
//! [`dce`](crate::dce), repeated until a round
//! changes nothing (each can expose work for the others: a folded
//! constant makes an identity apply, a simplified operand makes two
//! instructions equal, an unrolled loop's copies fold), at most [`MAX_ROUNDS`] times.
//!
//! ```
//! use lathe_passes::optimise::optimise;
//!
//! // (x * 0.0 + y) * 1.0, with `x * 0.0` computed twice.
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_input slot=0 comp=1 interp=smooth\n  %2:f32 = const 0.0\n  %3:f32 = fmul %0, %2\n  %4:f32 = fmul %0, %2\n  %5:f32 = fadd %3, %4\n  %6:f32 = fadd %5, %1\n  %7:f32 = const 1.0\n  %8:f32 = fmul %6, %7\n  store_output slot=0 comp=0 %8\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(optimise(&mut shader));
//! assert_eq!(lathe_ir::print(&shader), "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=1 interp=smooth\n  store_output slot=0 comp=0 %0\n  ret\n");
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::{GenericOp, Shader};

/// Rounds after which the pipeline stops even if the last one changed
/// something (each round is linear; real shaders settle in two or three).
pub const MAX_ROUNDS: usize = 8;

/// The `optimise` pass (generic IR only).
pub struct Optimise;

impl Pass<GenericOp> for Optimise {
    fn name(&self) -> &'static str {
        "optimise"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(optimise(shader))
    }
}

/// Runs the pipeline on `shader`; returns whether anything changed.
pub fn optimise(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut changed = false;
    for _ in 0..MAX_ROUNDS {
        let mut round = crate::fold::fold(shader);
        round |= crate::simplify::simplify(shader);
        round |= crate::gvn::gvn(shader);
        round |= crate::load_cse::load_cse(shader);
        round |= crate::merge_blocks::merge_blocks(shader);
        round |= crate::unroll::unroll(shader);
        round |= crate::dce::eliminate(shader);
        if !round {
            break;
        }
        changed = true;
    }
    changed
}
