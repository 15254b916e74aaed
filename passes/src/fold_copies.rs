//! Copy folding on machine IR: the readers of a register copy that
//! selection made read the copied value instead, and `dce` removes the
//! copy. Such copies are bit casts between scalar kinds of one width
//! (`u32` to `i32`, as `ivec2(gl_GlobalInvocationID.xy)` makes): generic IR
//! keeps them because its operand rules read kinds, but a machine
//! register holds bits, and a value and its copy hold the same ones, so
//! one register serves both. The copies register allocation needs (into
//! `collect`s, between files, for phis) are made after this pass, by
//! `group` and `ra`.
//!
//! A copy is the target's own [`TargetFacts::copy`] of a scalar kind of
//! the result's width, reading a value of that width in the class it
//! writes.

use std::rc::Rc;

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;
use lathe_ir::{Op, Opcode, Scalar, Shader, Type, Value};

/// The `fold-copies` pass.
pub struct FoldCopies<O> {
    target: Rc<dyn TargetFacts<O>>,
}

impl<O> FoldCopies<O> {
    pub fn new(target: Rc<dyn TargetFacts<O>>) -> Self {
        FoldCopies { target }
    }
}

impl<O: Opcode> Pass<O> for FoldCopies<O> {
    fn name(&self) -> &'static str {
        "fold-copies"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        // Collects and phis may join the kinds only where values are bits.
        if !O::joins_by_width() {
            return Ok(false);
        }
        // The target's copy opcode of each scalar kind but bool, with its width.
        let copies: Vec<(u32, O)> = Scalar::ALL
            .into_iter()
            .filter(|&s| s != Scalar::Bool)
            .map(|s| (s.bits(), self.target.copy(Type::scalar(s))))
            .collect();
        let mut source: Vec<Option<Value>> = vec![None; shader.value_capacity()];
        let mut any = false;
        for (_, i) in shader.insts_in_order() {
            let d = shader.inst(i);
            let (op @ Op::Opcode(o), Some(r), [a], None, None) =
                (d.op, d.result, &d.args[..], d.address, d.second_result)
            else {
                continue;
            };
            let (rt, at) = (shader.value_type(r), shader.value_type(*a));
            let bits = rt.scalar.bits();
            let is_copy = rt.is_scalar()
                && at.is_scalar()
                && at.scalar.bits() == bits
                && copies.iter().any(|&(w, c)| w == bits && c == o);
            // A copy into another register class (a move between files)
            // is a real move.
            let class = self.target.result_class(&op, rt);
            let def = shader.inst(shader.value_def(*a)).op;
            if is_copy
                && r != *a
                && self.target.operand_class(&op, 0, at) == class
                && self.target.result_class(&def, at) == class
            {
                source[r.index()] = Some(*a);
                any = true;
            }
        }
        if !any {
            return Ok(false);
        }
        // A copy of a copy reads the first one's source (SSA has no copy
        // cycles; the step bound keeps a malformed input from looping).
        let resolve = |mut v: Value| {
            for _ in 0..source.len() {
                match source.get(v.index()).copied().flatten() {
                    Some(s) => v = s,
                    None => break,
                }
            }
            v
        };
        shader.rewrite_operands(resolve);
        Ok(true)
    }
}
