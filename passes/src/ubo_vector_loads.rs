//! One load per UBO vector: the `load_ubo_vec4`s of one block that read
//! words of the same vector (same binding, same index value, same scalar
//! type) become one vector-result `load_ubo_vec4` of the words from the
//! lowest to the highest, and `split`s of it, for hardware whose vector
//! load writes consecutive registers (ir3's `ldc` of up to four words).
//! Run it after value numbering, which makes the index values of one
//! array element's loads the same value (see [`crate::ubo_vectors`]).
//!
//! ```
//! use lathe_passes::ubo_vector_loads::merge_vector_loads;
//!
//! let text = "shader vertex\nb0:\n  %0:u32 = load_uniform index=0\n  %1:f32 = load_ubo_vec4 binding=1 comp=2 %0\n  %2:f32 = load_ubo_vec4 binding=1 comp=1 %0\n  %3:f32 = fadd %1, %2\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(merge_vector_loads(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! // Words 1 and 2 in one load, from word 1.
//! assert!(printed.contains(":f32x2 = load_ubo_vec4 binding=1 comp=1 %0"), "{printed}");
//! // Word 2 is lane 1, word 1 lane 0.
//! assert!(printed.contains(":f32 = split lane=1 %1\n  %3:f32 = split lane=0 %1"), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use std::collections::HashMap;

use crate::manager::{Pass, PassFailure};
use lathe_ir::{GenericOp, Inst, Op, Scalar, Shader, Type, Value};

/// The `ubo-vector-loads` pass (generic IR only).
pub struct UboVectorLoads;

impl Pass<GenericOp> for UboVectorLoads {
    fn name(&self) -> &'static str {
        "ubo-vector-loads"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(merge_vector_loads(shader))
    }
}

/// What the loads of one vector share.
type VectorKey = (u8, Value, Scalar);

/// Merges the scalar `load_ubo_vec4`s of each block that read one vector;
/// returns whether anything changed.
pub fn merge_vector_loads(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut before: HashMap<Inst, Inst> = HashMap::new();
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        // The loads of each vector, vectors by their first load, loads in
        // block order (deterministic output).
        let mut groups: Vec<(VectorKey, Vec<(Inst, u8)>)> = Vec::new();
        let mut group_of: HashMap<VectorKey, usize> = HashMap::new();
        for &i in &old {
            if let Some((key, comp)) = scalar_load(shader, i) {
                let g = *group_of.entry(key).or_insert_with(|| {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                });
                groups[g].1.push((i, comp));
            }
        }
        // The merged load goes before the first load of its vector.
        for ((binding, index, scalar), loads) in groups {
            let comps = || loads.iter().map(|&(_, c)| c);
            let (Some(lo), Some(hi)) = (comps().min(), comps().max()) else {
                continue;
            };
            if lo == hi {
                continue;
            }
            let op = GenericOp::LoadUboVec4 { binding, comp: lo };
            let lanes: Vec<(Inst, u8)> = loads.iter().map(|&(i, c)| (i, c - lo)).collect();
            let merged = merge_loads(shader, op, index, scalar, hi - lo + 1, &lanes);
            before.insert(loads[0].0, merged);
        }
    }
    shader.insert_before(&before);
    !before.is_empty()
}

/// A new `op` load of `words` words of `scalar` at `address`; each of
/// `loads` (instruction, lane) becomes a `split` of that lane of it.
/// Returns the new load, not yet in a block.
pub(crate) fn merge_loads(
    shader: &mut Shader<'_, GenericOp>,
    op: GenericOp,
    address: Value,
    scalar: Scalar,
    words: u8,
    loads: &[(Inst, u8)],
) -> Inst {
    let ty = Type::vector(scalar, words);
    let merged = shader.create_inst(Op::Opcode(op), &[address], &[], None, Some(ty));
    let vector = shader
        .inst(merged)
        .result
        .unwrap_or_else(|| unreachable!("made with a result"));
    for &(i, lane) in loads {
        shader.inst_mut(i).op = Op::Split { lane };
        shader.set_args(i, &[vector]);
    }
    merged
}

/// The vector and component a one-word `load_ubo_vec4` reads.
fn scalar_load(shader: &Shader<'_, GenericOp>, i: Inst) -> Option<(VectorKey, u8)> {
    let d = shader.inst(i);
    let Op::Opcode(GenericOp::LoadUboVec4 { binding, comp }) = d.op else {
        return None;
    };
    let ty = shader.value_type(d.result?);
    ty.is_scalar()
        .then(|| ((binding, d.args[0], ty.scalar), comp))
}
