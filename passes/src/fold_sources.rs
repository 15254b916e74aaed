//! Source folding on machine IR: an instruction reading a value that a
//! cheap producer made (a move of a constant-file register, a negation)
//! reads what the producer read instead, when the target's encoding can
//! take it there ([`TargetFacts::fold_operand`]). ir3 then adds a const
//! register straight into `add.f r0.x, r0.y, c1.x` instead of copying it
//! to a register first. A producer left without readers is removed by
//! `dce`, which runs after this pass.

use std::rc::Rc;

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;
use lathe_ir::{Op, Opcode, Shader, Value};

/// The `fold-sources` pass.
pub struct FoldSources<O> {
    target: Rc<dyn TargetFacts<O>>,
}

impl<O> FoldSources<O> {
    pub fn new(target: Rc<dyn TargetFacts<O>>) -> Self {
        FoldSources { target }
    }
}

impl<O: Opcode> Pass<O> for FoldSources<O> {
    fn name(&self) -> &'static str {
        "fold-sources"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        let order: Vec<_> = shader.insts_in_order().map(|(_, i)| i).collect();
        let mut changed = false;
        for i in order {
            let d = shader.inst(i);
            // Relative accesses keep their operands: the address register
            // orders them and the encodings restrict them further.
            if !matches!(d.op, Op::Opcode(_)) || d.address.is_some() {
                continue;
            }
            let mut op = d.op;
            let mut args: Vec<Value> = d.args.to_vec();
            let mut k = 0;
            let mut folded = false;
            while k < args.len() {
                let v = args[k];
                let p = shader.inst(shader.value_def(v));
                let cheap = matches!(p.op, Op::Opcode(_))
                    && p.address.is_none()
                    && p.second_result.is_none()
                    && p.args.len() <= 1;
                let new = cheap
                    .then(|| {
                        self.target
                            .fold_operand(&op, k, &p.op, shader.value_type(v))
                    })
                    .flatten();
                match new {
                    Some(o) => {
                        let reads: Vec<Value> = p.args.to_vec();
                        args.splice(k..=k, reads.iter().copied());
                        op = Op::Opcode(o);
                        folded = true;
                        k += reads.len();
                    }
                    None => k += 1,
                }
            }
            if folded {
                shader.inst_mut(i).op = op;
                shader.set_args(i, &args);
                changed = true;
            }
        }
        Ok(changed)
    }
}
