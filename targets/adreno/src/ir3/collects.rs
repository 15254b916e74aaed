//! `collect`s that `ra` left out of place become moves.
//!
//! `ra` gives a collect's vector its registers like any result and puts
//! the operands where it can; an operand defined while the registers its
//! lane needs were taken (a varying fetched while its barycentric pair
//! still lived there) sits elsewhere. [`place`] copies each such operand
//! into its lane right before the collect, with the target's copy
//! instruction. The lanes hold nothing live but the collect's own dying
//! operands (the vector is written there), so the copies are a parallel
//! copy among the operands: each is ordered before the copies that
//! overwrite its source; a cycle is `unsupported:`.
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, collects, generated::MachineOp, target::Ir3Target};
//!
//! let text = "shader fragment\nregisters gpr, a0, a1, p0, const\nb0:\n  %0:f32@gpr6 = input index=0\n  %1:f32@gpr0 = input index=1\n  %2:f32x2@gpr0 = collect %0, %1\n  output index=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
//! let target = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! assert_eq!(collects::place(&mut shader, &target).unwrap(), 2);
//! // r0.x moves up to r0.y first, then r1.z down to r0.x.
//! let text = lathe_ir::print(&shader);
//! let at = |s: &str| text.find(s).unwrap();
//! assert!(at("%2:f32@gpr2 = mov-gpr") < at("%3:f32@gpr0 = mov-gpr"), "{text}");
//! assert!(text.contains("= collect %3, %2"), "{text}");
//! ```

use lathe_ir::{Op, Reg, Shader, Value};
use lathe_passes::target::TargetFacts;

use super::generated::MachineOp;
use super::legalise::{LegaliseError, in_place, lane_units};
use super::target::Ir3Target;

/// Moves the operands of every out-of-place collect into their lanes;
/// the number of moves made.
pub fn place(
    shader: &mut Shader<'_, MachineOp>,
    target: &Ir3Target,
) -> Result<usize, LegaliseError> {
    let mut made = 0;
    for b in shader.layout().to_vec() {
        let insts = shader.block_insts(b).to_vec();
        let mut out = Vec::with_capacity(insts.len());
        for i in insts {
            if matches!(shader.inst(i).op, Op::Collect) && !in_place(shader, target, i)? {
                made += moves(shader, target, i, &mut out)?;
            }
            out.push(i);
        }
        shader.set_block_insts(b, &out);
    }
    Ok(made)
}

/// The moves of collect `i`, appended to `out`; its operands renamed.
fn moves(
    shader: &mut Shader<'_, MachineOp>,
    target: &Ir3Target,
    i: lathe_ir::Inst,
    out: &mut Vec<lathe_ir::Inst>,
) -> Result<usize, LegaliseError> {
    let d = shader.inst(i);
    let reg = |v: Value| {
        shader.value_reg(v).ok_or_else(|| {
            LegaliseError::Malformed(format!("%{} has no register (run `ra` first)", v.index()))
        })
    };
    let to = reg(d
        .result
        .ok_or_else(|| LegaliseError::Malformed("collect without a result".into()))?)?;
    let mut args = d.args.to_vec();
    // (lane, its operand's register, the lane's register).
    let mut pending: Vec<(usize, Reg, Reg)> = Vec::new();
    let mut unit = u32::from(to.unit);
    for (k, &a) in args.iter().enumerate() {
        let ty = shader.value_type(a);
        let from = reg(a)?;
        let lane = Reg {
            file: to.file,
            unit: unit as u16,
        };
        if ty.is_vector() {
            return Err(LegaliseError::Unsupported(format!(
                "collect %{} of a vector out of place",
                d.result.map_or(0, |r| r.index())
            )));
        }
        if from != lane {
            pending.push((k, from, lane));
        }
        unit += lane_units(target, ty);
    }
    let made = pending.len();
    while !pending.is_empty() {
        // A move whose lane no other pending move still reads from.
        let next = pending
            .iter()
            .position(|&(_, _, lane)| !pending.iter().any(|&(_, from, _)| from == lane))
            .ok_or_else(|| {
                LegaliseError::Unsupported(format!(
                    "collect %{} whose operands sit in each other's lanes (a cycle)",
                    shader.inst(i).result.map_or(0, |r| r.index())
                ))
            })?;
        let (k, _, lane) = pending.remove(next);
        let ty = shader.value_type(args[k]);
        let copy = Op::Opcode(target.copy(ty));
        let c = shader.create_inst(copy, &[args[k]], &[], None, Some(ty));
        let v = shader.inst(c).result.expect("created with a result");
        shader.set_value_reg(v, Some(lane));
        args[k] = v;
        out.push(c);
    }
    shader.set_args(i, &args);
    Ok(made)
}
