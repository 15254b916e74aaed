//! Two lowered stages as one pipeline: one numbering of uniform buffers.
//!
//! Each stage is lowered alone, so its `load_ubo binding=N` counts only the
//! uniform buffers that stage declares: the same `N` can name different
//! `(set, binding)` pairs in a vertex and a fragment shader. Varying
//! linking moves UBO loads from one stage into the other, so before it the
//! stages must agree: [`share_uniform_buffers`] renumbers both by the
//! pipeline's `(set, binding)` order.

use crate::Interface;
use lathe_ir::{GenericOp, Op, Shader};
use std::collections::BTreeMap;

/// Why two stages cannot share one numbering.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PipelineError {
    #[error("unsupported: {0} uniform buffers in one pipeline (at most 256)")]
    TooManyUniformBuffers(u32),
    /// A `load_ubo` whose index no interface resource covers (a shader
    /// not lowered with this interface).
    #[error("load_ubo binding={0} has no uniform buffer in the interface")]
    UnknownUniformBuffer(u8),
}

/// Renumber the uniform buffers of every stage by the `(set, binding)`
/// order of all of them together, in the IR (`load_ubo`) and in each
/// [`Interface`]'s `index`. A descriptor array keeps its elements
/// consecutive; its size is the largest any stage declares.
pub fn share_uniform_buffers(
    stages: &mut [(&mut Shader<'_, GenericOp>, &mut Interface)],
) -> Result<(), PipelineError> {
    let is_ubo = |r: &&crate::Resource| r.kind == "uniform_buffer";
    let mut sizes: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for (_, iface) in stages.iter() {
        for r in iface.resources.iter().filter(is_ubo) {
            let n = sizes.entry((r.set, r.binding)).or_insert(0);
            *n = (*n).max(r.array_size.unwrap_or(1));
        }
    }
    let mut base: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut next = 0;
    for (&key, &n) in &sizes {
        base.insert(key, next);
        next += n;
    }
    if next > u8::MAX as u32 + 1 {
        return Err(PipelineError::TooManyUniformBuffers(next));
    }
    for (shader, iface) in stages.iter_mut() {
        // Old IR index -> new one.
        let mut map: BTreeMap<u32, u32> = BTreeMap::new();
        for r in iface
            .resources
            .iter_mut()
            .filter(|r| r.kind == "uniform_buffer")
        {
            let to = base[&(r.set, r.binding)];
            for k in 0..r.array_size.unwrap_or(1) {
                map.insert(r.index + k, to + k);
            }
            r.index = to;
        }
        let loads: Vec<_> = shader.insts_in_order().map(|(_, i)| i).collect();
        for i in loads {
            if let Op::Opcode(GenericOp::LoadUbo { binding }) = shader.inst(i).op {
                let to = map
                    .get(&(binding as u32))
                    .copied()
                    .ok_or(PipelineError::UnknownUniformBuffer(binding))?;
                shader.inst_mut(i).op = Op::Opcode(GenericOp::LoadUbo { binding: to as u8 });
            }
        }
    }
    Ok(())
}
