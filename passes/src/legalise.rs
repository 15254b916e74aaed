//! `legalise`: the post-RA slot where a target makes an allocated shader
//! obey its remaining hardware rules ([`TargetFacts::legalise`]: nops and
//! sync bits on ir3, scoreboard slots on Valhall). Run it after `ra`.

use lathe_ir::{Opcode, Shader};

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;

/// Runs the target's legalisation on `shader`.
pub fn legalise<O: Opcode>(shader: &mut Shader<'_, O>, target: &dyn TargetFacts<O>) -> bool {
    target.legalise(shader)
}

/// The `legalise` pass.
pub struct Legalise<O> {
    target: std::rc::Rc<dyn TargetFacts<O>>,
}

impl<O: Opcode> Legalise<O> {
    pub fn new(target: std::rc::Rc<dyn TargetFacts<O>>) -> Self {
        Legalise { target }
    }
}

impl<O: Opcode> Pass<O> for Legalise<O> {
    fn name(&self) -> &'static str {
        "legalise"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        Ok(legalise(shader, &*self.target))
    }
}
