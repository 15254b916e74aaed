//! `lower-swap`: after register allocation, turn each two-result `swap`
//! into what the target exchanges registers with ([`TargetFacts::swap`]).
//!
//! A target with an exchange instruction ([`Exchange::Instruction`], ir3's
//! `swz`) keeps the `swap`: it is one instruction already, which emission
//! encodes with the target's opcode. A target without one
//! ([`Exchange::Xor`], Valhall) gets three exclusive ors in its place,
//! each writing its first operand's register:
//!
//! ```text
//! %a@y, %b@x = swap %x@x, %y@y      becomes      %t@x = xor %x, %y
//!                                                %a@y = xor %y, %t    (x's value)
//!                                                %b@x = xor %t, %a    (y's value)
//! ```
//!
//! The result is still SSA with every value in a register, so the
//! allocation's meaning is unchanged. [`lower_swaps`] is the entry point.

use lathe_ir::{Inst, Op, Opcode, Shader, Value};

use crate::manager::{Pass, PassFailure};
use crate::target::{Exchange, TargetFacts};

/// Why swaps could not be lowered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerSwapError {
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Rewrites every `swap` of the allocated `shader` that `target` lowers to
/// exclusive ors; returns whether anything changed.
pub fn lower_swaps<O: Opcode>(
    shader: &mut Shader<'_, O>,
    target: &dyn TargetFacts<O>,
) -> Result<bool, LowerSwapError> {
    // The second result of each rewritten swap becomes a new value; uses
    // are renamed in one pass at the end.
    let mut renamed: Vec<(Value, Value)> = Vec::new();
    let layout: Vec<_> = shader.layout().to_vec();
    for b in layout {
        let insts = shader.block_insts(b).to_vec();
        if !insts.iter().any(|&i| matches!(shader.inst(i).op, Op::Swap)) {
            continue;
        }
        let mut out: Vec<Inst> = Vec::with_capacity(insts.len() + 2);
        for i in insts {
            let d = shader.inst(i);
            let (Op::Swap, &[x, y], Some(a), Some(b2)) =
                (d.op, &*d.args, d.result, d.second_result)
            else {
                out.push(i);
                continue;
            };
            let ty = shader.value_type(x);
            let xor = match target.swap(ty) {
                Some(Exchange::Instruction(_)) => {
                    out.push(i);
                    continue;
                }
                Some(Exchange::Xor(op)) => op,
                None => {
                    return Err(LowerSwapError::Unsupported(format!(
                        "{} has no way to exchange two {ty} registers",
                        target.name()
                    )));
                }
            };
            let (rx, ry) = (shader.value_reg(x), shader.value_reg(y));
            let t_inst = shader.create_inst(Op::Opcode(xor), &[x, y], &[], None, Some(ty));
            let t = shader.inst(t_inst).result.unwrap_or(x);
            shader.set_value_reg(t, rx);
            let a_inst = shader.create_inst(Op::Opcode(xor), &[y, t], &[], None, None);
            shader.transfer_result(i, a_inst);
            shader.set_value_reg(a, ry);
            let b_inst = shader.create_inst(Op::Opcode(xor), &[t, a], &[], None, Some(ty));
            let b_new = shader.inst(b_inst).result.unwrap_or(x);
            shader.set_value_reg(b_new, rx);
            renamed.push((b2, b_new));
            out.extend([t_inst, a_inst, b_inst]);
        }
        shader.set_block_insts(b, &out);
    }
    if renamed.is_empty() {
        return Ok(false);
    }
    let mut map: Vec<Option<Value>> = vec![None; shader.value_capacity()];
    for (old, new) in renamed {
        map[old.index()] = Some(new);
    }
    shader.rewrite_operands(|v| map[v.index()].unwrap_or(v));
    Ok(true)
}

/// The `lower-swap` pass.
pub struct LowerSwap<O> {
    target: std::rc::Rc<dyn TargetFacts<O>>,
}

impl<O: Opcode> LowerSwap<O> {
    pub fn new(target: std::rc::Rc<dyn TargetFacts<O>>) -> Self {
        LowerSwap { target }
    }
}

impl<O: Opcode> Pass<O> for LowerSwap<O> {
    fn name(&self) -> &'static str {
        "lower-swap"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        Ok(lower_swaps(shader, &*self.target)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::test_target::TestTarget;
    use lathe_ir::GenericOp;

    #[test]
    fn a_target_without_an_exchange_is_unsupported() {
        let arena = lathe_ir::Bump::new();
        let text = "shader fragment\nregisters r\nb0:\n  %0:u32@r0 = input index=0\n  %1:u32@r2 = input index=1\n  %2:u32@r2, %3:u32@r0 = swap %0, %1\n  output index=0 %2\n  ret\n";
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let err = lower_swaps(&mut shader, &TestTarget::realistic()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported: test has no way to exchange two u32 registers"
        );
        // A shader without swaps is left alone on any target.
        let text = "shader fragment\nb0:\n  %0:u32 = input index=0\n  output index=0 %0\n  ret\n";
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        assert_eq!(
            lower_swaps(&mut shader, &TestTarget::realistic()),
            Ok(false)
        );
    }
}
