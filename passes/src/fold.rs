//! Constant folding: a pure scalar operation whose operands are all
//! constants becomes the constant it computes, and a branch on a constant
//! becomes a jump, and an array access whose address operand is a
//! constant becomes a static access at the element it names.
//!
//! Values come from [`lathe_ir::scalar_ops::eval`], the function the
//! interpreter itself runs for these opcodes, so a folded constant is by
//! construction the value the reference computes. An operation that would
//! be undefined for its constant operands (a division by zero, a shift by
//! the width) is left as it is.
//!
//! ```
//! use lathe_passes::fold::fold;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = const 2.0\n  %1:f32 = fmul %0, %0\n  store_output slot=0 comp=0 %1\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(fold(&mut shader));
//! assert!(lathe_ir::print(&shader).contains("%1:f32 = const 4.0"));
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::scalar_ops::eval;
use lathe_ir::{GenericOp, Inst, Op, Shader, Value};

/// The `fold` pass (generic IR only).
pub struct Fold;

impl Pass<GenericOp> for Fold {
    fn name(&self) -> &'static str {
        "fold"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(fold(shader))
    }
}

/// The bits of `v` when a scalar `const` defines it.
pub(crate) fn constant(shader: &Shader<'_, GenericOp>, v: Value) -> Option<u32> {
    match shader.inst(shader.value_def(v)).op {
        Op::Opcode(GenericOp::Const { bits }) if shader.value_type(v).lanes == 1 => Some(bits),
        _ => None,
    }
}

/// Folds every foldable instruction in one pass over the layout (operands
/// come before their uses there, except through phis, which never fold);
/// returns whether anything changed.
pub fn fold(shader: &mut Shader<'_, GenericOp>) -> bool {
    let order: Vec<(lathe_ir::Block, Inst)> = shader.insts_in_order().collect();
    let mut changed = false;
    let mut branches = Vec::new();
    for (b, i) in order {
        let data = shader.inst(i);
        match data.op {
            Op::Branch => {
                if let Some(c) = data.args.first().and_then(|&c| constant(shader, c)) {
                    branches.push((b, i, c & 1 == 1));
                }
            }
            Op::Opcode(GenericOp::ArrayLoad { .. } | GenericOp::ArrayStore { .. }) => {
                changed |= static_array_access(shader, i);
            }
            Op::Opcode(op) if !matches!(op, GenericOp::Const { .. }) => {
                let Some(r) = data.result else { continue };
                let ty = shader.value_type(r);
                if ty.lanes != 1 || data.args.is_empty() || data.address.is_some() {
                    continue;
                }
                let mut operands = Vec::with_capacity(data.args.len());
                for &a in data.args.iter() {
                    match constant(shader, a) {
                        Some(bits) => operands.push((shader.value_type(a).scalar, bits)),
                        None => break,
                    }
                }
                if operands.len() != data.args.len() {
                    continue;
                }
                if let Ok(bits) = eval(op, ty.scalar, &operands) {
                    shader.inst_mut(i).op = Op::Opcode(GenericOp::Const { bits });
                    shader.set_args(i, &[]);
                    changed = true;
                }
            }
            _ => {}
        }
    }
    for (b, i, taken) in branches {
        changed |= branch_to_jump(shader, b, i, taken);
    }
    changed
}

/// Makes the array access `i` static when its address operand is a
/// constant and the element it names (`address + offset`, wrapping at the
/// address's width) is inside the array; an access outside is left for
/// the backends to treat as they treat any out-of-bounds index.
fn static_array_access(shader: &mut Shader<'_, GenericOp>, i: Inst) -> bool {
    let data = shader.inst(i);
    let (
        Some(address),
        Op::Opcode(
            GenericOp::ArrayLoad { array, offset } | GenericOp::ArrayStore { array, offset },
        ),
    ) = (data.address, data.op)
    else {
        return false;
    };
    let Some(bits) = constant(shader, address) else {
        return false;
    };
    let width = shader.value_type(address).scalar.bits();
    let index = bits.wrapping_add(offset) & (u32::MAX >> (32 - width.min(32)));
    let Some(decl) = shader.arrays().get(array.index()) else {
        return false;
    };
    if index >= decl.len {
        return false;
    }
    let data = shader.inst_mut(i);
    data.op = Op::Opcode(match data.op {
        Op::Opcode(GenericOp::ArrayLoad { .. }) => GenericOp::ArrayLoad {
            array,
            offset: index,
        },
        _ => GenericOp::ArrayStore {
            array,
            offset: index,
        },
    });
    data.address = None;
    true
}

/// Turns the branch `i` ending `b` into a jump to the side `taken`
/// chooses; the other successor's phis forget the edge from `b`.
fn branch_to_jump(
    shader: &mut Shader<'_, GenericOp>,
    b: lathe_ir::Block,
    i: Inst,
    taken: bool,
) -> bool {
    let targets = shader.inst(i).targets.to_vec();
    let [then, other] = targets[..] else {
        return false;
    };
    let (to, dropped) = if taken { (then, other) } else { (other, then) };
    if to == dropped {
        return false;
    }
    let phis: Vec<Inst> = shader
        .block_insts(dropped)
        .iter()
        .copied()
        .take_while(|&p| shader.inst(p).op.is_phi())
        .collect();
    for phi in phis {
        let data = shader.inst(phi);
        let (vals, blocks): (Vec<Value>, Vec<lathe_ir::Block>) = data
            .args
            .iter()
            .zip(data.targets.iter())
            .filter(|&(_, &t)| t != b)
            .map(|(&v, &t)| (v, t))
            .unzip();
        shader.set_args(phi, &vals);
        shader.set_targets(phi, &blocks);
    }
    shader.inst_mut(i).op = Op::Jump;
    shader.set_args(i, &[]);
    shader.set_targets(i, &[to]);
    true
}
