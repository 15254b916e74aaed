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
    let zero_plus = std::cell::OnceCell::new();
    let mut words: Vec<ConstantWord> = Vec::new();
    let mut next = first_free;
    let order: Vec<Inst> = shader.insts_in_order().map(|(_, i)| i).collect();
    // The materialisations, in program order.
    let candidates: Vec<(Inst, MachineOp, Value)> = order
        .iter()
        .filter_map(|&i| {
            let d = shader.inst(i);
            match (d.op, d.result) {
                (Op::Opcode(op), Some(result))
                    if d.args.is_empty() && op.encoding() == materialise.encoding() =>
                {
                    Some((i, op, result))
                }
                _ => None,
            }
        })
        .collect();
    // Each materialised value's readers: (instruction, operand).
    let mut readers: Vec<Option<Vec<(Inst, usize)>>> = vec![None; shader.value_capacity()];
    for &(_, _, result) in &candidates {
        readers[result.index()] = Some(Vec::new());
    }
    for &j in &order {
        for (k, &a) in shader.inst(j).args.iter().enumerate() {
            if let Some(list) = &mut readers[a.index()] {
                list.push((j, k));
            }
        }
    }
    for (i, op, result) in candidates {
        let Some(bits) = op.modifier("imm").and_then(|k| u32::try_from(k).ok()) else {
            continue;
        };
        // Only the rule's exact form: zero plus the constant (the form
        // assembled once, its immediate set per constant).
        let rule_form = zero_plus
            .get_or_init(|| assembled("IADD_IMM.i32 r0, 0x0, #0x0"))
            .and_then(|form| form.with_modifier("imm", bits.into()));
        if rule_form != Some(op) {
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
        let folds = readers[result.index()].as_ref().is_some_and(|r| {
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
