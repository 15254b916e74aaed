//! Common-subexpression elimination over the dominator tree (a global
//! value numbering by hashing): an instruction that computes what an
//! instruction dominating it already computed (same operation, same
//! operands, same result type) reads that result instead.
//!
//! Only instructions that neither have side effects nor read state other
//! instructions change qualify: arithmetic, constants, conversions,
//! `collect`/`split`, texture reads, and loads from uniforms and UBOs
//! (read-only within a shader). Loads from SSBOs, images and shared or
//! array memory, atomics and stores never do. An instruction that may be
//! undefined for some operands is still replaced by its dominating twin:
//! the twin ran first on the same operands.
//!
//! Operands of commutative operations are compared in either order
//! (integer arithmetic, bit operations, equality compares; float `+`, `*`,
//! min and max only when the shader does not preserve NaNs, whose
//! payload the operand order picks).
//!
//! ```
//! use lathe_passes::gvn::gvn;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = fmul %0, %0\n  %2:f32 = fmul %0, %0\n  %3:f32 = fadd %1, %2\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(gvn(&mut shader));
//! assert!(lathe_ir::print(&shader).contains("fadd %1, %1"));
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::{BarrierClass, Block, Cfg, DomTree, GenericOp, Op, Opcode, Shader, Type, Value};
use rustc_hash::FxHashMap;

/// The `gvn` pass (generic IR only).
pub struct Gvn;

impl Pass<GenericOp> for Gvn {
    fn name(&self) -> &'static str {
        "gvn"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(gvn(shader))
    }
}

/// What an instruction computes.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Kind {
    Generic(GenericOp),
    Collect,
    Split(u8),
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    kind: Kind,
    args: Vec<Value>,
    address: Option<Value>,
    ty: Type,
}

/// Replaces every redundant instruction's uses by its dominating twin's
/// result; returns whether anything changed. The replaced instructions
/// stay, unused, for `dce`.
pub fn gvn(shader: &mut Shader<'_, GenericOp>) -> bool {
    let relaxed = !shader.preserve_float_specials;
    let cfg = Cfg::compute(shader);
    let dom = DomTree::compute(&cfg);
    let mut map: Vec<Value> = (0..shader.value_capacity() as u32).map(Value).collect();
    // Each key's results so far, with their blocks; reverse post-order
    // visits a dominator before the blocks it dominates.
    let mut seen: FxHashMap<Key, Vec<(Block, Value)>> = FxHashMap::default();
    let mut changed = false;
    for &b in cfg.rpo() {
        for &i in shader.block_insts(b) {
            let data = shader.inst(i);
            let (Some(r), None) = (data.result, data.second_result) else {
                continue;
            };
            let kind = match data.op {
                Op::Opcode(op) if numberable(op) => Kind::Generic(op),
                Op::Collect => Kind::Collect,
                Op::Split { lane } => Kind::Split(lane),
                _ => continue,
            };
            let mut args: Vec<Value> = data.args.iter().map(|&a| map[a.index()]).collect();
            if let Kind::Generic(op) = kind {
                if commutative(op, relaxed) {
                    args.sort_unstable();
                }
            }
            let key = Key {
                kind,
                args,
                address: data.address.map(|a| map[a.index()]),
                ty: shader.value_type(r),
            };
            let twins = seen.entry(key).or_default();
            match twins.iter().find(|&&(tb, _)| dom.dominates(tb, b)) {
                Some(&(_, twin)) => {
                    map[r.index()] = twin;
                    changed = true;
                }
                None => twins.push((b, r)),
            }
        }
    }
    if changed {
        shader.rewrite_operands(|v| map[v.index()]);
    }
    changed
}

/// Computes the same value wherever its operands are the same.
fn numberable(op: GenericOp) -> bool {
    let e = op.effects();
    !e.side_effects && e.barrier == BarrierClass::NONE
}

fn commutative(op: GenericOp, relaxed: bool) -> bool {
    use GenericOp::*;
    match op {
        IAdd | IMul | IMin | IMax | UMin | UMax | And | Or | Xor | IEq | INe | FEq | FNe
        | IMulHigh | UMulHigh => true,
        FAdd | FMul | FMin | FMax => relaxed,
        _ => false,
    }
}
