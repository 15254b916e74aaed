//! Algebraic simplification: an instruction that computes one of its own
//! operands, a constant, or the same value with a cheaper operation is
//! replaced by it.
//!
//! Exact identities hold for every operand bit pattern and always apply:
//! integer `x + 0`, `x - 0`, `x - x`, `x * 1`, `x * 0`, `x / 1`; bit
//! operations with 0, all ones or the same operand twice; shifts by 0 and
//! of 0; `not not x`; min/max of a value with itself; integer compares of
//! a value with itself; `sel` with equal arms or a constant condition;
//! double negation; a plain copy or a conversion to the same type; a lane
//! split out of a `collect`. A product with a power of two becomes a left
//! shift, an unsigned quotient by one a right shift and a remainder a
//! mask, a signed quotient or remainder shifts of the dividend biased
//! towards zero (cheaper where a 32-bit multiply takes several
//! instructions and a division about twenty).
//!
//! A division by a constant becomes a multiplication by its reciprocal
//! (when that is a normal float): both targets divide through the
//! reciprocal anyway, and this way the reciprocal is computed once, at
//! compile time, instead of by every copy of an unrolled loop.
//!
//! Float identities that only fail for signed zeros, infinities or NaNs
//! (`x * 0 → 0`, `x * 1 → x`, `x * -1 → -x`, `x ± 0 → x`, `x - x → 0`,
//! `x / 1 → x`, `fma` with a 0 or 1 factor or a 0 addend) apply only when
//! the shader does not ask to preserve those
//! ([`Shader::preserve_float_specials`], SPIR-V's
//! `SignedZeroInfNanPreserve`); Vulkan does not require them otherwise.
//!
//! ```
//! use lathe_passes::simplify::simplify;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = const 0.0\n  %2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(simplify(&mut shader));
//! // The product becomes the constant (`dce` then drops the unused one).
//! assert!(lathe_ir::print(&shader).contains("%2:f32 = const 0.0"));
//! ```

use std::collections::HashMap;

use crate::fold::constant;
use crate::manager::{Pass, PassFailure};
use lathe_ir::{GenericOp, Inst, Op, Scalar, Shader, Type, Value};

/// The `simplify` pass (generic IR only).
pub struct Simplify;

impl Pass<GenericOp> for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(simplify(shader))
    }
}

/// What an instruction becomes.
enum Rewrite {
    /// Every use reads this value instead.
    Value(Value),
    /// The instruction becomes this constant.
    Const(u32),
    /// The instruction becomes this operation on these operands.
    Op(GenericOp, Vec<Value>),
    /// The instruction becomes the last of these operations; the others,
    /// and the constants they read, are new instructions before it, all
    /// of the result's type.
    Chain(Vec<(GenericOp, Vec<Operand>)>),
}

/// An operand of a step of [`Rewrite::Chain`].
enum Operand {
    Value(Value),
    /// A new constant with these bits.
    Const(u32),
    /// The result of an earlier step.
    Step(usize),
}

/// `op(x, c)` for a new constant `c`.
fn with_const(op: GenericOp, x: Value, c: u32) -> Rewrite {
    Rewrite::Chain(vec![(op, vec![Operand::Value(x), Operand::Const(c)])])
}

/// Simplifies every instruction once, in layout order; returns whether
/// anything changed. Replaced instructions stay, unused, for `dce`.
pub fn simplify(shader: &mut Shader<'_, GenericOp>) -> bool {
    let relaxed = !shader.preserve_float_specials;
    let order: Vec<Inst> = shader.insts_in_order().map(|(_, i)| i).collect();
    let mut map: Vec<Value> = (0..shader.value_capacity() as u32).map(Value).collect();
    let mut replaced = false;
    let mut changed = false;
    // New instructions, each to go before the next (the last before the
    // instruction it rewrites).
    let mut before: HashMap<Inst, Inst> = HashMap::new();
    for i in order {
        let data = shader.inst(i);
        let Some(r) = data.result else { continue };
        if data.address.is_some() {
            continue;
        }
        let args: Vec<Value> = data.args.iter().map(|&a| resolve(&map, a)).collect();
        let rewrite = match data.op {
            Op::Opcode(op) => rule(shader, op, &args, shader.value_type(r), relaxed),
            Op::Split { lane } => split_of_collect(shader, args[0], lane),
            _ => None,
        };
        match rewrite {
            Some(Rewrite::Value(v)) if shader.value_type(v) == shader.value_type(r) && v != r => {
                map[r.index()] = v;
                replaced = true;
                changed = true;
            }
            Some(Rewrite::Const(bits)) => {
                shader.inst_mut(i).op = Op::Opcode(GenericOp::Const { bits });
                shader.set_args(i, &[]);
                changed = true;
            }
            Some(Rewrite::Op(op, operands)) => {
                shader.inst_mut(i).op = Op::Opcode(op);
                shader.set_args(i, &operands);
                changed = true;
            }
            Some(Rewrite::Chain(steps)) => {
                let ty = shader.value_type(r);
                let mut new = NewInsts {
                    ty,
                    at: i,
                    last: None,
                    before: &mut before,
                };
                let mut made: Vec<Value> = Vec::with_capacity(steps.len());
                let last = steps.len() - 1;
                for (n, (op, operands)) in steps.into_iter().enumerate() {
                    let mut args = Vec::with_capacity(operands.len());
                    for o in operands {
                        args.push(match o {
                            Operand::Value(v) => v,
                            Operand::Step(s) => made[s],
                            Operand::Const(bits) => {
                                new.push(shader, GenericOp::Const { bits }, &[])
                            }
                        });
                    }
                    if n == last {
                        shader.inst_mut(i).op = Op::Opcode(op);
                        shader.set_args(i, &args);
                    } else {
                        made.push(new.push(shader, op, &args));
                    }
                }
                changed = true;
            }
            _ => {}
        }
    }
    shader.insert_before(&before);
    if replaced {
        shader.rewrite_operands(|v| resolve(&map, v));
    }
    changed
}

/// New instructions of type `ty` going, in creation order, before `at`.
struct NewInsts<'a> {
    ty: Type,
    at: Inst,
    /// The last one created.
    last: Option<Inst>,
    before: &'a mut HashMap<Inst, Inst>,
}

impl NewInsts<'_> {
    /// A new `op args` after the earlier new ones; its result.
    fn push(&mut self, shader: &mut Shader<'_, GenericOp>, op: GenericOp, args: &[Value]) -> Value {
        let n = shader.create_inst(Op::Opcode(op), args, &[], None, Some(self.ty));
        if let Some(prev) = self.last.replace(n) {
            self.before.insert(n, prev);
        }
        self.before.insert(self.at, n);
        shader
            .inst(n)
            .result
            .unwrap_or_else(|| unreachable!("made with a result"))
    }
}

/// `v` through the replacement chain.
fn resolve(map: &[Value], mut v: Value) -> Value {
    while let Some(&next) = map.get(v.index()) {
        if next == v {
            break;
        }
        v = next;
    }
    v
}

/// Lane `lane` of a `collect`, read directly.
fn split_of_collect(shader: &Shader<'_, GenericOp>, v: Value, lane: u8) -> Option<Rewrite> {
    let def = shader.inst(shader.value_def(v));
    match def.op {
        Op::Collect => def.args.get(lane as usize).map(|&x| Rewrite::Value(x)),
        _ => None,
    }
}

/// All ones in `ty`'s width.
fn ones(ty: Scalar) -> u32 {
    match ty.bits() {
        32 => u32::MAX,
        w => (1 << w) - 1,
    }
}

/// Float constants of `ty` (`f32` or `f16` bits).
fn float_bits(ty: Scalar, x: f32) -> u32 {
    if ty == Scalar::F16 {
        lathe_ir::f16::from_f32(x) as u32
    } else {
        x.to_bits()
    }
}

/// The one rule that applies to `op` on `args`, if any.
fn rule(
    shader: &Shader<'_, GenericOp>,
    op: GenericOp,
    args: &[Value],
    ty: Type,
    relaxed: bool,
) -> Option<Rewrite> {
    use GenericOp::*;
    use Rewrite::{Const as K, Value as V};
    if ty.lanes != 1 {
        return None;
    }
    let s = ty.scalar;
    let k = |n: usize| args.get(n).and_then(|&a| constant(shader, a));
    // The operand that is not constant `c` in a two-operand commutative op.
    let other = |c: u32| match (k(0), k(1)) {
        (Some(x), _) if x == c => Some(args[1]),
        (_, Some(y)) if y == c => Some(args[0]),
        _ => None,
    };
    let same = args.len() == 2 && args[0] == args[1];
    let int = !s.is_float();
    let fzero = |n: usize| k(n).is_some_and(|b| b & !sign_mask(s) == 0) && s.is_float();
    match op {
        IAdd if int => other(0).map(V),
        ISub if int && k(1) == Some(0) => Some(V(args[0])),
        ISub if int && same => Some(K(0)),
        IMul if int => other(1)
            .map(V)
            .or_else(|| other(0).map(|_| K(0)))
            .or_else(|| power_of_two_factor(args, k(0), k(1), s)),
        UDiv | IDiv if k(1) == Some(1) => Some(V(args[0])),
        // Unsigned division and remainder by 2^n: a shift and a mask.
        UDiv | UMod if int => match k(1).map(|c| c & ones(s)) {
            Some(c) if c.is_power_of_two() && c > 1 => Some(if op == UDiv {
                with_const(Shr, args[0], c.trailing_zeros())
            } else {
                with_const(And, args[0], c - 1)
            }),
            _ => None,
        },
        // Signed ones by a positive 2^n: shifts of the dividend biased
        // towards zero.
        IDiv | IRem if int => k(1)
            .map(|c| c & ones(s))
            .filter(|&c| c.is_power_of_two() && c > 1 && c < 1 << (s.bits() - 1))
            .map(|c| signed_by_power_of_two(op, s, args[0], c.trailing_zeros())),
        And if same => Some(V(args[0])),
        And => other(ones(s)).map(V).or_else(|| other(0).map(|_| K(0))),
        Or if same => Some(V(args[0])),
        Or => other(0)
            .map(V)
            .or_else(|| other(ones(s)).map(|_| K(ones(s)))),
        Xor if same => Some(K(0)),
        Xor => other(0).map(V),
        Not => not_of(shader, args[0]).map(V),
        Shl | Shr | AShr if k(1) == Some(0) => Some(V(args[0])),
        Shl | Shr | AShr if k(0) == Some(0) => Some(K(0)),
        IMin | IMax | UMin | UMax | FMin | FMax if same => Some(V(args[0])),
        IEq | IGe | UGe if same => Some(K(1)),
        INe | ILt | ULt if same => Some(K(0)),
        Sel if args[1] == args[2] => Some(V(args[1])),
        Sel => k(0).map(|c| V(if c & 1 == 1 { args[1] } else { args[2] })),
        Mov {
            abs: false,
            neg: false,
        } => Some(V(args[0])),
        Mov { abs, neg } => negation_of_negation(shader, args[0], abs, neg),
        Cvt if shader.value_type(args[0]) == ty => Some(V(args[0])),
        // Only signed zeros, infinities and NaNs tell these apart.
        FMul if relaxed && (fzero(0) || fzero(1)) => Some(K(0)),
        FMul if relaxed => other(float_bits(s, 1.0)).map(V).or_else(|| {
            other(float_bits(s, -1.0)).map(|x| {
                Rewrite::Op(
                    Mov {
                        abs: false,
                        neg: true,
                    },
                    vec![x],
                )
            })
        }),
        FAdd if relaxed && fzero(1) => Some(V(args[0])),
        FAdd if relaxed && fzero(0) => Some(V(args[1])),
        FSub if relaxed && fzero(1) => Some(V(args[0])),
        FSub if relaxed && same => Some(K(0)),
        FDiv if relaxed && k(1) == Some(float_bits(s, 1.0)) => Some(V(args[0])),
        FDiv => k(1)
            .and_then(|c| normal_reciprocal(s, c))
            .map(|r| with_const(FMul, args[0], r)),
        Ffma if relaxed && (fzero(0) || fzero(1)) => Some(V(args[2])),
        Ffma if relaxed && fzero(2) => Some(Rewrite::Op(FMul, args[..2].to_vec())),
        Ffma if relaxed && k(0) == Some(float_bits(s, 1.0)) => {
            Some(Rewrite::Op(FAdd, vec![args[1], args[2]]))
        }
        Ffma if relaxed && k(1) == Some(float_bits(s, 1.0)) => {
            Some(Rewrite::Op(FAdd, vec![args[0], args[2]]))
        }
        _ => None,
    }
}

/// `x * 2^n` (either order, `0 < n < width`) as `x << n`.
fn power_of_two_factor(
    args: &[Value],
    a: Option<u32>,
    b: Option<u32>,
    s: Scalar,
) -> Option<Rewrite> {
    let shift = |c: u32| {
        (c.is_power_of_two() && c > 1 && c.trailing_zeros() < s.bits()).then(|| c.trailing_zeros())
    };
    match (a.and_then(shift), b.and_then(shift)) {
        (_, Some(n)) => Some(with_const(GenericOp::Shl, args[0], n)),
        (Some(n), _) => Some(with_const(GenericOp::Shl, args[1], n)),
        _ => None,
    }
}

/// `x idiv 2^n` or `x irem 2^n` in `ty` (`0 < n < width - 1`). An
/// arithmetic shift alone rounds towards minus infinity; adding `2^n - 1`
/// to a negative `x` first (its sign bits shifted down) rounds towards
/// zero. The remainder is `x` minus the biased `x` with its low `n` bits
/// cleared.
fn signed_by_power_of_two(op: GenericOp, ty: Scalar, x: Value, n: u32) -> Rewrite {
    use GenericOp::{AShr, And, IAdd, ISub, Shr};
    use Operand::{Const, Step, Value as V};
    let width = ty.bits();
    let mut steps = vec![
        (AShr, vec![V(x), Const(width - 1)]),
        (Shr, vec![Step(0), Const(width - n)]),
        (IAdd, vec![V(x), Step(1)]),
    ];
    if op == GenericOp::IDiv {
        steps.push((AShr, vec![Step(2), Const(n)]));
    } else {
        steps.push((And, vec![Step(2), Const(ones(ty) << n & ones(ty))]));
        steps.push((ISub, vec![V(x), Step(3)]));
    }
    Rewrite::Chain(steps)
}

/// The bits of `1 / c` (the interpreter's `rcp`) when it is a normal
/// float of `ty` (a zero, infinite, NaN or subnormal reciprocal would
/// not divide as the division does).
fn normal_reciprocal(ty: Scalar, c: u32) -> Option<u32> {
    let r = lathe_ir::scalar_ops::eval(GenericOp::Rcp, ty, &[(ty, c)]).ok()?;
    let normal = match ty {
        Scalar::F32 => f32::from_bits(r).is_normal(),
        Scalar::F16 => {
            let exponent = (r >> 10) & 0x1f;
            exponent != 0 && exponent != 0x1f
        }
        _ => false,
    };
    normal.then_some(r)
}

/// The float sign bit of `ty` (0 for other types).
fn sign_mask(ty: Scalar) -> u32 {
    match ty {
        Scalar::F32 => 0x8000_0000,
        Scalar::F16 => 0x8000,
        _ => 0,
    }
}

/// `x` when `v` is `not x`.
fn not_of(shader: &Shader<'_, GenericOp>, v: Value) -> Option<Value> {
    let def = shader.inst(shader.value_def(v));
    match def.op {
        Op::Opcode(GenericOp::Not) => def.args.first().copied(),
        _ => None,
    }
}

/// `mov.neg` of `mov.neg x` is `x`; any modifier over a plain negation of
/// `x` reads `x` with the modifiers combined (`abs` discards the inner
/// sign flip).
fn negation_of_negation(
    shader: &Shader<'_, GenericOp>,
    v: Value,
    abs: bool,
    neg: bool,
) -> Option<Rewrite> {
    let def = shader.inst(shader.value_def(v));
    let Op::Opcode(GenericOp::Mov {
        abs: false,
        neg: true,
    }) = def.op
    else {
        return None;
    };
    let x = *def.args.first()?;
    if shader.value_type(x) != shader.value_type(v) {
        return None;
    }
    if !abs && neg {
        return Some(Rewrite::Value(x));
    }
    // abs(-x) == abs(x); -abs(-x) == -abs(x).
    Some(Rewrite::Op(GenericOp::Mov { abs, neg }, vec![x]))
}
