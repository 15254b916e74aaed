//! `legalise`: the post-RA slot where a target makes an allocated shader
//! obey its remaining hardware rules ([`TargetFacts::legalise`]: nops and
//! sync bits on ir3, scoreboard slots on Valhall). Run it after `ra`.

use lathe_ir::{Opcode, Shader};

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;

/// Why a target could not legalise an allocated shader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LegaliseError {
    /// Something the target's legalisation does not handle yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The shader breaks a rule legalisation relies on (an operand
    /// without a register, a group whose registers disagree).
    #[error("cannot legalise: {0}")]
    Invalid(String),
}

/// Runs the target's legalisation on `shader`; returns whether anything
/// changed.
pub fn legalise<O: Opcode>(
    shader: &mut Shader<'_, O>,
    target: &dyn TargetFacts<O>,
) -> Result<bool, LegaliseError> {
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
        Ok(legalise(shader, &*self.target)?)
    }
}
