//! How far a lowered shader's outputs move when every inexact operation is
//! pushed to the edge of its Vulkan precision bound — an empirical
//! propagation of the spec's bounds through the shader. The move is part
//! of each output's tolerance; an output that moves a lot is
//! ill-conditioned: the spec's bounds do not pin it down
//! (`fract(sin(x) * 43758.5453)`, a texel chosen by a computed direction
//! at a texel edge), so any driver value is conforming.

use lathe_ir::{GenericOp, Op, Shader, Type, Value};
use std::collections::HashMap;

/// Move every inexact `f32` result by its bound, with a sign drawn per
/// instruction from `seed`, by rewriting the shader: products, sums and
/// `fma` by 2^-23 relative (a rounding the driver may do differently,
/// contraction included), `fdiv`/`rcp`/`unpack` by 2^-22 (2.5 ulp),
/// `sqrt` and `rsqrt` by 2^-21 (5 and 2 ulp), `sin`/`cos` by 2^-11
/// absolute, `exp2`/`log2` by 2^-19 relative (`exp2`'s `3 + 2|x|` ulp up
/// to `|x| = 6`) plus 2^-21 absolute (`log2` near 1).
pub fn perturb(shader: &mut Shader<'_, GenericOp>, seed: u64) {
    let mut rng = super::random_compute::Rng::new(seed);
    let mut replaced: HashMap<Value, Value> = HashMap::new();
    let mut added = Vec::new();
    for b in shader.layout().to_vec() {
        let mut list = Vec::new();
        for i in shader.block_insts(b).to_vec() {
            list.push(i);
            let d = shader.inst(i);
            let (Some(v), Op::Opcode(op)) = (d.result, d.op) else {
                continue;
            };
            if shader.value_type(v) != Type::F32 {
                continue;
            }
            use GenericOp as G;
            let (relative, absolute) = match op {
                G::FAdd | G::FSub | G::FMul | G::Ffma => (-23, None),
                G::FDiv | G::Rcp | G::Unpack { .. } => (-22, None),
                G::Sqrt | G::Rsqrt => (-21, None),
                G::Sin | G::Cos => (-60, Some(-11)),
                G::Exp2 | G::Log2 => (-19, Some(-21)),
                _ => continue,
            };
            let sign = if rng.chance(50) { 1.0 } else { -1.0 };
            let scale = 1.0 + sign * 2f32.powi(relative);
            let shift = absolute.map_or(0.0, |e| sign * 2f32.powi(e));
            let konst = |bits: f32| {
                Op::Opcode(GenericOp::Const {
                    bits: bits.to_bits(),
                })
            };
            let s = shader.create_inst(konst(scale), &[], &[], None, Some(Type::F32));
            let a = shader.create_inst(konst(shift), &[], &[], None, Some(Type::F32));
            let (sv, av) = (
                shader.inst(s).result.expect("const"),
                shader.inst(a).result.expect("const"),
            );
            let out = shader.create_inst(
                Op::Opcode(GenericOp::Ffma),
                &[v, sv, av],
                &[],
                None,
                Some(Type::F32),
            );
            replaced.insert(v, shader.inst(out).result.expect("ffma"));
            added.push((out, v));
            list.extend([s, a, out]);
        }
        shader.set_block_insts(b, &list);
    }
    shader.rewrite_operands(|v| replaced.get(&v).copied().unwrap_or(v));
    for (out, v) in added {
        let args: Vec<Value> = shader.inst(out).args.to_vec();
        shader.set_args(out, &[v, args[1], args[2]]);
    }
}
