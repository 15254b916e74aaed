//! Constants outside the immediate table, pushed into FAU words.
//!
//! The rules file materialises a 32-bit constant the immediate table
//! does not hold with `IADD_IMM.i32 $dst, 0x0, #K` (rule `const32`), one
//! instruction per constant. An arithmetic instruction reads a FAU word
//! as a source for free, so [`push_constants`] gives each such constant
//! that some reader could read there ([`TargetFacts::fold_operand`]) a
//! FAU word the driver fills with its bits, and the materialisation
//! becomes a move of that word, which `fold-sources` then folds into its
//! readers (a reader that cannot take it still reads the moved register:
//! one instruction either way). Mesa 25 materialises these per use
//! (`va_lower_constants`: "TODO: Optimize to uniform").

use std::collections::HashMap;

use lathe_ir::{Inst, Op, Shader, Value};
use lathe_passes::target::TargetFacts;

use super::super::generated::MachineOp;
use super::super::target::ValhallTarget;

/// One constant and the FAU word `fau` the driver pushes it into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantWord {
    pub fau: u32,
    pub bits: u32,
}

/// Rewrites the constant materialisations of `shader` that a reader
/// could read from the FAU into moves of FAU words, from word
/// `first_free` on while words below `fau_words` last (equal constants
/// share a word); returns the words the driver pushes.
pub fn push_constants(
    shader: &mut Shader<'_, MachineOp>,
    target: &ValhallTarget,
    first_free: u32,
    fau_words: u32,
) -> Vec<ConstantWord> {
    let arch = target.model().arch();
    let assembled = |text: &str| {
        super::super::assemble(text, arch)
            .ok()
            .and_then(|w| MachineOp::from_word(w, target.generation_id()))
    };
    let Some(materialise) = MachineOp::named("IADD_IMM.i32") else {
        return Vec::new();
    };
    let mut words: Vec<ConstantWord> = Vec::new();
    let mut next = first_free;
    let order: Vec<Inst> = shader.insts_in_order().map(|(_, i)| i).collect();
    // Each value's readers: (instruction, operand).
    let mut readers: HashMap<Value, Vec<(Inst, usize)>> = HashMap::new();
    for &j in &order {
        for (k, &a) in shader.inst(j).args.iter().enumerate() {
            readers.entry(a).or_default().push((j, k));
        }
    }
    for i in order {
        let d = shader.inst(i);
        let (Op::Opcode(op), Some(result)) = (d.op, d.result) else {
            continue;
        };
        if op.encoding() != materialise.encoding() || !d.args.is_empty() {
            continue;
        }
        let Some(bits) = op.modifier("imm").and_then(|k| u32::try_from(k).ok()) else {
            continue;
        };
        // Only the rule's exact form: zero plus the constant.
        if assembled(&format!("IADD_IMM.i32 r0, 0x0, #0x{bits:X}")) != Some(op) {
            continue;
        }
        let fau = match words.iter().find(|w| w.bits == bits) {
            Some(w) => w.fau,
            None if next < fau_words => next,
            None => continue,
        };
        let Some(mov) = assembled(&format!("MOV.i32 r0, u{fau}")) else {
            continue;
        };
        let ty = shader.value_type(result);
        let producer = Op::Opcode(mov);
        let folds = readers.get(&result).is_some_and(|r| {
            r.iter().any(|&(j, k)| {
                target
                    .fold_operand(&shader.inst(j).op, k, &producer, ty)
                    .is_some()
            })
        });
        if !folds {
            continue;
        }
        if fau == next {
            words.push(ConstantWord { fau, bits });
            next += 1;
        }
        shader.inst_mut(i).op = Op::Opcode(mov);
    }
    words
}
