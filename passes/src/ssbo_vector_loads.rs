//! One load per run of storage-buffer words: the one-word `load_ssbo`s of
//! a block that read one buffer at constant distances from one base
//! offset (`base + 4k`), with no instruction that may write a buffer
//! between them, become one vector-result `load_ssbo` of up to four
//! consecutive words and `split`s of it, for hardware whose buffer load
//! writes consecutive registers (ir3's `ldib` of up to four words). The
//! words between two words the shader reads lie in the buffer too, so a
//! run may read words nobody uses. Run it after value numbering, which
//! gives the offsets of one structure one base value.
//!
//! ```
//! use lathe_passes::ssbo_vector_loads::merge_ssbo_loads;
//!
//! let text = "shader vertex\nb0:\n  %0:u32 = load_uniform index=0\n  %1:u32 = const 8\n  %2:u32 = iadd %0, %1\n  %3:f32 = load_ssbo binding=1 %2\n  %4:f32 = load_ssbo binding=1 %0\n  %5:f32 = fadd %3, %4\n  store_output slot=0 comp=0 %5\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(merge_ssbo_loads(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! // Words 0 to 2 from the base, in one load.
//! assert!(printed.contains(":f32x3 = load_ssbo binding=1 %0"), "{printed}");
//! assert!(printed.contains(":f32 = split lane=2 %"), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use std::collections::HashMap;

use crate::manager::{Pass, PassFailure};
use crate::u32_code::const_bits;
use lathe_ir::{BarrierClass, GenericOp, Inst, Op, Scalar, Shader, Value};

/// The `ssbo-vector-loads` pass (generic IR only).
pub struct SsboVectorLoads;

impl Pass<GenericOp> for SsboVectorLoads {
    fn name(&self) -> &'static str {
        "ssbo-vector-loads"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(merge_ssbo_loads(shader))
    }
}

/// Words one load reads at most.
const MAX_WORDS: u32 = 4;

/// What the loads of one run share: binding, base offset (none for
/// constant offsets), the stretch between buffer writes, scalar type.
type RunKey = (u8, Option<Value>, u32, Scalar);

/// A load of a run: the instruction, its byte distance from the base,
/// its offset value.
type Member = (Inst, u32, Value);

/// Merges the one-word `load_ssbo`s of each block that read nearby words;
/// returns whether anything changed.
pub fn merge_ssbo_loads(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut before: HashMap<Inst, Inst> = HashMap::new();
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let position: HashMap<Inst, usize> = old.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        // Loads by what they share, in block order (deterministic output).
        let mut groups: Vec<(RunKey, Vec<Member>)> = Vec::new();
        let mut group_of: HashMap<RunKey, usize> = HashMap::new();
        let mut stretch = 0;
        for &i in &old {
            let d = shader.inst(i);
            if let Some((binding, scalar)) = scalar_load(shader, i) {
                let offset = d.args[0];
                let (base, distance) = split_offset(shader, offset);
                let key = (binding, base, stretch, scalar);
                let g = *group_of.entry(key).or_insert_with(|| {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                });
                groups[g].1.push((i, distance, offset));
            } else if d.op.effects().barrier.intersects(BarrierClass::BUFFER_W) {
                stretch += 1;
            }
        }
        for ((binding, _, _, scalar), mut loads) in groups {
            loads.sort_by_key(|&(i, distance, _)| (distance, position[&i]));
            for run in runs(&loads) {
                let (_, lo, offset) = run[0];
                let hi = run[run.len() - 1].1;
                if lo == hi {
                    continue;
                }
                // The merged load goes before the run's first load in the
                // block, which its offset must reach.
                let Some(&first) = run.iter().map(|(i, _, _)| i).min_by_key(|&i| position[i])
                else {
                    continue;
                };
                let def = shader.value_def(offset);
                if position.get(&def).is_some_and(|&p| p > position[&first]) {
                    continue;
                }
                let words = ((hi - lo) / 4 + 1) as u8;
                let members: Vec<(Inst, u8)> = run
                    .iter()
                    .map(|&(i, distance, _)| (i, ((distance - lo) / 4) as u8))
                    .collect();
                let op = GenericOp::LoadSsbo { binding };
                let merged = crate::ubo_vector_loads::merge_loads(
                    shader, op, offset, scalar, words, &members,
                );
                before.insert(first, merged);
            }
        }
    }
    shader.insert_before(&before);
    !before.is_empty()
}

/// The runs of `loads` (sorted by distance) one load can read: from the
/// lowest word, up to [`MAX_WORDS`] words of the same alignment.
fn runs(loads: &[Member]) -> Vec<&[Member]> {
    let mut out = Vec::new();
    let mut start = 0;
    for k in 1..=loads.len() {
        let ends = k == loads.len() || {
            let gap = loads[k].1 - loads[start].1;
            gap % 4 != 0 || gap / 4 >= MAX_WORDS
        };
        if ends {
            out.push(&loads[start..k]);
            start = k;
        }
    }
    out
}

/// The binding and type of a one-word `load_ssbo`.
fn scalar_load(shader: &Shader<'_, GenericOp>, i: Inst) -> Option<(u8, Scalar)> {
    let d = shader.inst(i);
    let Op::Opcode(GenericOp::LoadSsbo { binding }) = d.op else {
        return None;
    };
    let ty = shader.value_type(d.result?);
    ty.is_scalar().then_some((binding, ty.scalar))
}

/// `offset` as a base and a constant distance: `base + k` (either order),
/// a constant `k` (no base), else the offset itself at distance 0.
pub(crate) fn split_offset(shader: &Shader<'_, GenericOp>, offset: Value) -> (Option<Value>, u32) {
    if let Some(k) = const_bits(shader, offset) {
        return (None, k);
    }
    let d = shader.inst(shader.value_def(offset));
    if let (Op::Opcode(GenericOp::IAdd), &[a, b]) = (d.op, &d.args[..]) {
        match (const_bits(shader, a), const_bits(shader, b)) {
            (_, Some(k)) => return (Some(a), k),
            (Some(k), _) => return (Some(b), k),
            _ => {}
        }
    }
    (Some(offset), 0)
}
