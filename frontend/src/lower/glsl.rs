//! `GLSL.std.450` extended instructions, expanded into generic opcodes.
//!
//! Inverse trigonometry goes through one `atan` on [0, 1]: the minimax
//! polynomial of Abramowitz and Stegun 4.4.49 (absolute error below 1e-7
//! in exact arithmetic), with `atan(x) = pi/2 - atan(1/x)` above 1, and
//! `asin`, `acos`, `atan2` derived from it. `exp`, `log` and `pow` go
//! through `exp2`/`log2`; hyperbolic functions through `exp`, their
//! inverses through `log` (`asinh` of `|x|`, so negative arguments do
//! not cancel). `frexp`, `ldexp` and `modf` are exact bit and rounding
//! operations.

use super::Lowerer;
use crate::error::Error;
use lathe_ir::{Type, Value};
use rspirv::spirv::GlslStd450Op as G;

const ATAN_COEFFS: [f32; 8] = [
    0.999_999_33,
    -0.333_298_56,
    0.199_465_36,
    -0.139_085_34,
    0.096_420_04,
    -0.055_909_886,
    0.021_861_23,
    -0.004_054_058,
];

/// Every GLSL.std.450 instruction the lowering expands (the others fail
/// with `unsupported:`). Tests enumerate it to check that each one is
/// exercised against a Vulkan driver.
pub const LOWERED: &[G] = &[
    G::Round,
    G::RoundEven,
    G::Trunc,
    G::FAbs,
    G::SAbs,
    G::FSign,
    G::SSign,
    G::Floor,
    G::Ceil,
    G::Fract,
    G::Radians,
    G::Degrees,
    G::Sin,
    G::Cos,
    G::Tan,
    G::Asin,
    G::Acos,
    G::Atan,
    G::Sinh,
    G::Cosh,
    G::Tanh,
    G::Asinh,
    G::Acosh,
    G::Atanh,
    G::Atan2,
    G::Pow,
    G::Exp,
    G::Log,
    G::Exp2,
    G::Log2,
    G::Sqrt,
    G::InverseSqrt,
    G::Determinant,
    G::MatrixInverse,
    G::Modf,
    G::ModfStruct,
    G::FMin,
    G::UMin,
    G::SMin,
    G::FMax,
    G::UMax,
    G::SMax,
    G::FClamp,
    G::UClamp,
    G::SClamp,
    G::FMix,
    G::Step,
    G::SmoothStep,
    G::Fma,
    G::Frexp,
    G::FrexpStruct,
    G::Ldexp,
    G::PackSnorm4x8,
    G::PackUnorm4x8,
    G::PackSnorm2x16,
    G::PackUnorm2x16,
    G::PackHalf2x16,
    G::UnpackSnorm2x16,
    G::UnpackUnorm2x16,
    G::UnpackHalf2x16,
    G::UnpackSnorm4x8,
    G::UnpackUnorm4x8,
    G::Length,
    G::Distance,
    G::Cross,
    G::Normalize,
    G::FaceForward,
    G::Reflect,
    G::Refract,
    G::FindILsb,
    G::FindSMsb,
    G::FindUMsb,
    G::NMin,
    G::NMax,
    G::NClamp,
];

impl Lowerer<'_, '_, '_> {
    pub(super) fn ext_inst(&mut self) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let set = self.id(0)?;
        if self.m.nonsemantic_ext.contains(&set) {
            // Debug printf and debug info have no effect on the shader's results.
            return Ok(());
        }
        if Some(set) != self.m.glsl_ext {
            return Err(self.unsupported("extended instruction set other than GLSL.std.450"));
        }
        let number = match inst.operands.get(1) {
            Some(rspirv::dr::Operand::LiteralExtInstInteger(n)) => *n,
            _ => return Err(self.invalid("OpExtInst without an instruction number")),
        };
        let Some(op) = G::from_u32(number) else {
            return Err(self.invalid(format!("unknown GLSL.std.450 instruction {number}")));
        };
        let id = self.m.insts[self.at]
            .result_id
            .ok_or_else(|| self.invalid("no result id"))?;
        let rty = self.m.insts[self.at]
            .result_type
            .ok_or_else(|| self.invalid("no result type"))?;
        let tys = self.leaf_types(rty)?;
        if !LOWERED.contains(&op) {
            return Err(self.unsupported(format!("GLSL.std.450 {op:?}")));
        }
        let nargs = inst.operands.len() - 2;
        // Modf and Frexp write their second result through a pointer.
        let values = if matches!(op, G::Modf | G::Frexp) {
            nargs.min(1)
        } else {
            nargs
        };
        let mut args = Vec::with_capacity(nargs);
        for k in 0..values {
            args.push(self.leaves(self.id(2 + k)?)?);
        }
        let arity = match op {
            G::Atan2
            | G::Pow
            | G::FMin
            | G::NMin
            | G::FMax
            | G::NMax
            | G::UMin
            | G::UMax
            | G::SMin
            | G::SMax
            | G::Step
            | G::Distance
            | G::Cross
            | G::Reflect
            | G::Ldexp
            | G::Modf
            | G::Frexp => 2,
            G::FClamp
            | G::NClamp
            | G::UClamp
            | G::SClamp
            | G::FMix
            | G::SmoothStep
            | G::Fma
            | G::FaceForward
            | G::Refract => 3,
            _ => 1,
        };
        if nargs != arity {
            return Err(self.invalid(format!(
                "GLSL.std.450 {op:?} takes {arity} operand(s), has {nargs}"
            )));
        }
        let n = tys.len();
        let fits = |k: usize, len: usize| args.get(k).is_some_and(|a| a.len() == len && len > 0);
        let shapes_ok = match op {
            G::Length => n == 1 && fits(0, args[0].len()),
            G::Distance => n == 1 && fits(0, args[0].len()) && fits(1, args[0].len()),
            G::Cross => n == 3 && fits(0, 3) && fits(1, 3),
            G::Refract => fits(0, n) && fits(1, n) && fits(2, 1),
            G::Determinant => n == 1,
            // {fract, whole} or {fract, exp}: two results of the operand's shape.
            G::ModfStruct | G::FrexpStruct => n % 2 == 0 && fits(0, n / 2),
            G::Modf | G::Frexp => fits(0, n),
            G::MatrixInverse
            | G::PackHalf2x16
            | G::PackUnorm4x8
            | G::PackSnorm4x8
            | G::PackUnorm2x16
            | G::PackSnorm2x16
            | G::UnpackHalf2x16
            | G::UnpackUnorm4x8
            | G::UnpackSnorm4x8
            | G::UnpackUnorm2x16
            | G::UnpackSnorm2x16 => true,
            _ => (0..nargs).all(|k| fits(k, n)),
        };
        if !shapes_ok {
            return Err(self.invalid(format!(
                "operands of GLSL.std.450 {op:?} do not fit its result"
            )));
        }
        let arg = |k: usize| args[k].clone();
        // Lane-wise operations.
        let lanes = |l: &mut Self, f: &dyn Fn(&mut Self, &[Value], Type) -> Value| -> Vec<Value> {
            (0..tys.len())
                .map(|j| {
                    let xs: Vec<Value> = args.iter().map(|a| a[j.min(a.len() - 1)]).collect();
                    let xs: Vec<Value> = xs.iter().map(|&x| l.cast(x, tys[j])).collect();
                    f(l, &xs, tys[j])
                })
                .collect()
        };
        let out: Vec<Value> = match op {
            G::FAbs => lanes(self, &|l, x, _| l.b.fabs(x[0])),
            G::SAbs => lanes(self, &|l, x, t| {
                l.signed1(lathe_ir::GenericOp::IAbs, x[0], t)
            }),
            G::FSign => lanes(self, &|l, x, _| {
                l.int_unary(lathe_ir::GenericOp::FSign, x[0])
            }),
            G::SSign => lanes(self, &|l, x, t| {
                l.signed1(lathe_ir::GenericOp::ISign, x[0], t)
            }),
            G::FindILsb => lanes(self, &|l, x, _| {
                l.int_unary(lathe_ir::GenericOp::FindLsb, x[0])
            }),
            G::FindSMsb => lanes(self, &|l, x, t| {
                l.signed1(lathe_ir::GenericOp::IFindMsb, x[0], t)
            }),
            G::FindUMsb => lanes(self, &|l, x, t| {
                let u = l.cast(x[0], Type::U32);
                let v = l.b.op(lathe_ir::GenericOp::UFindMsb, &[u], Type::U32);
                l.cast(v, t)
            }),
            G::Floor => lanes(self, &|l, x, _| l.b.floor(x[0])),
            G::Ceil => lanes(self, &|l, x, _| l.fceil(x[0])),
            G::Trunc => lanes(self, &|l, x, _| l.ftrunc(x[0])),
            G::Fract => lanes(self, &|l, x, _| l.ffract(x[0])),
            G::Round => lanes(self, &|l, x, t| {
                // Half away from zero: t = trunc(x), plus sign(x) when
                // |x - t| >= 0.5. (x - t is exact; trunc(x + 0.5) is not:
                // 0.49999997 + 0.5 rounds up to 1.)
                let tr = l.ftrunc(x[0]);
                let d = l.b.fsub(x[0], tr);
                let ad = l.b.fabs(d);
                let (z, h, one, m_one) = (
                    l.const_float(t, 0.0),
                    l.const_float(t, 0.5),
                    l.const_float(t, 1.0),
                    l.const_float(t, -1.0),
                );
                let far = l.b.fge(ad, h);
                let neg = l.b.flt(x[0], z);
                let step = l.b.sel(neg, m_one, one);
                let away = l.b.fadd(tr, step);
                l.b.sel(far, away, tr)
            }),
            G::RoundEven => lanes(self, &|l, x, _| {
                l.int_unary(lathe_ir::GenericOp::RoundEven, x[0])
            }),
            G::Radians => lanes(self, &|l, x, t| {
                let k = l.const_float(t, std::f32::consts::PI / 180.0);
                l.b.fmul(x[0], k)
            }),
            G::Degrees => lanes(self, &|l, x, t| {
                let k = l.const_float(t, 180.0 / std::f32::consts::PI);
                l.b.fmul(x[0], k)
            }),
            G::Sin => lanes(self, &|l, x, _| l.b.sin(x[0])),
            G::Cos => lanes(self, &|l, x, _| l.b.cos(x[0])),
            G::Tan => lanes(self, &|l, x, _| {
                let s = l.b.sin(x[0]);
                let c = l.b.cos(x[0]);
                l.fdiv(s, c)
            }),
            G::Atan => lanes(self, &|l, x, _| l.atan(x[0])),
            G::Atan2 => lanes(self, &|l, x, _| l.atan2(x[0], x[1])),
            G::Asin => lanes(self, &|l, x, t| {
                let c = l.sqrt_one_minus_sq(x[0], t);
                l.atan2(x[0], c)
            }),
            G::Acos => lanes(self, &|l, x, t| {
                let s = l.sqrt_one_minus_sq(x[0], t);
                l.atan2(s, x[0])
            }),
            G::Sinh | G::Cosh | G::Tanh => lanes(self, &|l, x, t| {
                let e = l.exp(x[0]);
                let one = l.const_float(t, 1.0);
                let ie = l.fdiv(one, e);
                match op {
                    G::Sinh | G::Cosh => {
                        let s = if op == G::Sinh {
                            l.b.fsub(e, ie)
                        } else {
                            l.b.fadd(e, ie)
                        };
                        let h = l.const_float(t, 0.5);
                        l.b.fmul(s, h)
                    }
                    _ => {
                        // tanh = (e - 1/e) / (e + 1/e), saturated where e overflows.
                        let num = l.b.fsub(e, ie);
                        let den = l.b.fadd(e, ie);
                        let q = l.fdiv(num, den);
                        let big = l.const_float(t, 10.0);
                        let ax = l.b.fabs(x[0]);
                        let sat = l.b.flt(big, ax);
                        let zero = l.const_float(t, 0.0);
                        let neg = l.b.flt(x[0], zero);
                        let m1 = l.const_float(t, -1.0);
                        let sign = l.b.sel(neg, m1, one);
                        l.b.sel(sat, sign, q)
                    }
                }
            }),
            G::Pow => lanes(self, &|l, x, _| {
                let lg = l.b.log2(x[0]);
                let p = l.b.fmul(x[1], lg);
                l.b.exp2(p)
            }),
            G::Exp => lanes(self, &|l, x, _| l.exp(x[0])),
            G::Log => lanes(self, &|l, x, t| {
                let lg = l.b.log2(x[0]);
                let k = l.const_float(t, std::f32::consts::LN_2);
                l.b.fmul(lg, k)
            }),
            G::Exp2 => lanes(self, &|l, x, _| l.b.exp2(x[0])),
            G::Log2 => lanes(self, &|l, x, _| l.b.log2(x[0])),
            G::Sqrt => lanes(self, &|l, x, _| l.b.sqrt(x[0])),
            G::InverseSqrt => lanes(self, &|l, x, _| l.b.rsqrt(x[0])),
            G::FMin | G::NMin => lanes(self, &|l, x, _| l.b.fmin(x[0], x[1])),
            G::FMax | G::NMax => lanes(self, &|l, x, _| l.b.fmax(x[0], x[1])),
            G::UMin => lanes(self, &|l, x, t| {
                l.int2(lathe_ir::GenericOp::UMin, Type::U32, x[0], x[1], t)
            }),
            G::UMax => lanes(self, &|l, x, t| {
                l.int2(lathe_ir::GenericOp::UMax, Type::U32, x[0], x[1], t)
            }),
            G::SMin => lanes(self, &|l, x, t| {
                l.int2(lathe_ir::GenericOp::IMin, Type::I32, x[0], x[1], t)
            }),
            G::SMax => lanes(self, &|l, x, t| {
                l.int2(lathe_ir::GenericOp::IMax, Type::I32, x[0], x[1], t)
            }),
            G::FClamp | G::NClamp => lanes(self, &|l, x, _| {
                let lo = l.b.fmax(x[0], x[1]);
                l.b.fmin(lo, x[2])
            }),
            G::UClamp => lanes(self, &|l, x, t| {
                let lo = l.int2(lathe_ir::GenericOp::UMax, Type::U32, x[0], x[1], t);
                l.int2(lathe_ir::GenericOp::UMin, Type::U32, lo, x[2], t)
            }),
            G::SClamp => lanes(self, &|l, x, t| {
                let lo = l.int2(lathe_ir::GenericOp::IMax, Type::I32, x[0], x[1], t);
                l.int2(lathe_ir::GenericOp::IMin, Type::I32, lo, x[2], t)
            }),
            G::FMix => lanes(self, &|l, x, _| {
                // x + a (y - x)
                let d = l.b.fsub(x[1], x[0]);
                l.b.ffma(x[2], d, x[0])
            }),
            G::Step => lanes(self, &|l, x, t| {
                let (z, one) = (l.const_float(t, 0.0), l.const_float(t, 1.0));
                let lt = l.b.flt(x[1], x[0]);
                l.b.sel(lt, z, one)
            }),
            G::SmoothStep => lanes(self, &|l, x, t| {
                let num = l.b.fsub(x[2], x[0]);
                let den = l.b.fsub(x[1], x[0]);
                let q = l.fdiv(num, den);
                let (z, one) = (l.const_float(t, 0.0), l.const_float(t, 1.0));
                let lo = l.b.fmax(q, z);
                let c = l.b.fmin(lo, one);
                let (two, three) = (l.const_float(t, -2.0), l.const_float(t, 3.0));
                let k = l.b.ffma(two, c, three);
                let c2 = l.b.fmul(c, c);
                l.b.fmul(c2, k)
            }),
            G::Fma => lanes(self, &|l, x, _| l.b.ffma(x[0], x[1], x[2])),
            G::Length => {
                let a = arg(0);
                let d = self.dot(&a, &a);
                vec![self.b.sqrt(d)]
            }
            G::Distance => {
                let (a, b) = (arg(0), arg(1));
                let d: Vec<Value> = a
                    .iter()
                    .zip(b.iter())
                    .map(|(&x, &y)| self.b.fsub(x, y))
                    .collect();
                let s = self.dot(&d, &d);
                vec![self.b.sqrt(s)]
            }
            G::Normalize => {
                let a = arg(0);
                let d = self.dot(&a, &a);
                let r = self.b.rsqrt(d);
                a.iter().map(|&x| self.b.fmul(x, r)).collect()
            }
            G::Cross => {
                let (a, b) = (arg(0), arg(1));
                let lane = |l: &mut Self, i: usize, j: usize| {
                    let p = l.b.fmul(a[i], b[j]);
                    let q = l.b.fmul(a[j], b[i]);
                    l.b.fsub(p, q)
                };
                vec![lane(self, 1, 2), lane(self, 2, 0), lane(self, 0, 1)]
            }
            G::FaceForward => {
                // dot(Nref, I) < 0 ? N : -N
                let (n, i, nref) = (arg(0), arg(1), arg(2));
                let d = self.dot(&nref, &i);
                let z = self.const_float(tys[0], 0.0);
                let neg = self.b.flt(d, z);
                n.iter()
                    .map(|&x| {
                        let nx = self.b.fneg(x);
                        self.b.sel(neg, x, nx)
                    })
                    .collect()
            }
            G::Reflect => {
                // I - 2 dot(N, I) N
                let (i, n) = (arg(0), arg(1));
                let d = self.dot(&n, &i);
                let m2 = self.const_float(tys[0], -2.0);
                let k = self.b.fmul(d, m2);
                i.iter()
                    .zip(n.iter())
                    .map(|(&x, &y)| self.b.ffma(k, y, x))
                    .collect()
            }
            G::Refract => {
                let (i, n, eta) = (arg(0), arg(1), arg(2)[0]);
                let t = tys[0];
                let d = self.dot(&n, &i);
                let one = self.const_float(t, 1.0);
                let zero = self.const_float(t, 0.0);
                // k = 1 - eta^2 (1 - d^2)
                let d2 = self.b.fmul(d, d);
                let omd2 = self.b.fsub(one, d2);
                let e2 = self.b.fmul(eta, eta);
                let p = self.b.fmul(e2, omd2);
                let k = self.b.fsub(one, p);
                let neg = self.b.flt(k, zero);
                let sk = self.b.sqrt(k);
                let c = self.b.ffma(eta, d, sk);
                i.iter()
                    .zip(n.iter())
                    .map(|(&x, &y)| {
                        let ex = self.b.fmul(eta, x);
                        let cy = self.b.fmul(c, y);
                        let r = self.b.fsub(ex, cy);
                        self.b.sel(neg, zero, r)
                    })
                    .collect()
            }
            G::Determinant | G::MatrixInverse => {
                let (cols, rows) = self.shape(self.operand_ty(2)?)?;
                let m = arg(0);
                if cols != rows || m.len() != (cols * rows) as usize || cols > 4 {
                    return Err(self.invalid("determinant or inverse of a non-square matrix"));
                }
                if op == G::Determinant {
                    vec![self.determinant(&m, cols as usize)]
                } else {
                    self.inverse(&m, cols as usize)?
                }
            }
            G::PackHalf2x16
            | G::PackUnorm4x8
            | G::PackSnorm4x8
            | G::PackUnorm2x16
            | G::PackSnorm2x16 => {
                let format = pack_format(op);
                let a = arg(0);
                if a.len() != format.lanes() as usize || tys.len() != 1 {
                    return Err(self.invalid("pack of the wrong number of lanes"));
                }
                let v = self
                    .b
                    .op(lathe_ir::GenericOp::Pack { format }, &a, Type::U32);
                vec![self.cast(v, tys[0])]
            }
            G::UnpackHalf2x16
            | G::UnpackUnorm4x8
            | G::UnpackSnorm4x8
            | G::UnpackUnorm2x16
            | G::UnpackSnorm2x16 => {
                let format = pack_format(op);
                let a = arg(0);
                if a.len() != 1 || tys.len() != format.lanes() as usize {
                    return Err(self.invalid("unpack into the wrong number of lanes"));
                }
                let w = self.cast(a[0], Type::U32);
                (0..format.lanes())
                    .map(|lane| {
                        self.b.op(
                            lathe_ir::GenericOp::Unpack { format, lane },
                            &[w],
                            Type::F32,
                        )
                    })
                    .collect()
            }
            G::Asinh => lanes(self, &|l, x, t| {
                // sign(x) * log(|x| + sqrt(x^2 + 1))
                let one = l.const_float(t, 1.0);
                let ax = l.b.fabs(x[0]);
                let sq = l.b.ffma(x[0], x[0], one);
                let s = l.b.sqrt(sq);
                let sum = l.b.fadd(ax, s);
                let r = l.ln(sum);
                let zero = l.const_float(t, 0.0);
                let neg = l.b.flt(x[0], zero);
                let nr = l.b.fneg(r);
                l.b.sel(neg, nr, r)
            }),
            G::Acosh => lanes(self, &|l, x, t| {
                // log(x + sqrt(x^2 - 1)), undefined below 1
                let m1 = l.const_float(t, -1.0);
                let sq = l.b.ffma(x[0], x[0], m1);
                let s = l.b.sqrt(sq);
                let sum = l.b.fadd(x[0], s);
                l.ln(sum)
            }),
            G::Atanh => lanes(self, &|l, x, t| {
                // 0.5 * log((1 + x) / (1 - x)), undefined outside (-1, 1)
                let one = l.const_float(t, 1.0);
                let num = l.b.fadd(one, x[0]);
                let den = l.b.fsub(one, x[0]);
                let q = l.fdiv(num, den);
                let lg = l.ln(q);
                let h = l.const_float(t, 0.5);
                l.b.fmul(lg, h)
            }),
            G::Ldexp => {
                let (x, e) = (arg(0), arg(1));
                (0..n)
                    .map(|j| {
                        let v = self.cast(x[j], tys[j]);
                        self.ldexp(v, e[j])
                    })
                    .collect()
            }
            G::ModfStruct | G::Modf => {
                let x = arg(0);
                let whole: Vec<Value> = x.iter().map(|&v| self.ftrunc(v)).collect();
                let mut fract: Vec<Value> = x
                    .iter()
                    .zip(&whole)
                    .map(|(&v, &w)| self.b.fsub(v, w))
                    .collect();
                if op == G::Modf {
                    self.store_through(3, whole)?;
                } else {
                    fract.extend(whole);
                }
                fract
            }
            G::FrexpStruct | G::Frexp => {
                let x = arg(0);
                let lanes = if op == G::Frexp { n } else { n / 2 };
                let exp_ty = if op == G::Frexp {
                    self.pointee_leaf(3)?
                } else {
                    tys[lanes]
                };
                let (mut fract, exps): (Vec<Value>, Vec<Value>) = (0..lanes)
                    .map(|j| {
                        let v = self.cast(x[j], tys[j]);
                        self.frexp(v, exp_ty)
                    })
                    .unzip();
                if op == G::Frexp {
                    self.store_through(3, exps)?;
                } else {
                    fract.extend(exps);
                }
                fract
            }
            _ => return Err(self.unsupported(format!("GLSL.std.450 {op:?}"))),
        };
        self.set_leaves(id, out);
        Ok(())
    }

    /// `ln(x)` as `log2(x) * ln 2`.
    fn ln(&mut self, x: Value) -> Value {
        let t = self.b.type_of(x);
        let lg = self.b.log2(x);
        let k = self.const_float(t, std::f32::consts::LN_2);
        self.b.fmul(lg, k)
    }

    /// `x * 2^e` (f32): two exact multiplications by powers of two built
    /// from their exponent bits, so every `e` whose result is a normal
    /// float works (`e` is clamped to the range where that can be).
    fn ldexp(&mut self, x: Value, e: Value) -> Value {
        let e = self.cast(e, Type::I32);
        let (lo, hi) = (
            self.constant(Type::I32, -252i32 as u32),
            self.constant(Type::I32, 254),
        );
        let e = self.b.op(lathe_ir::GenericOp::IMax, &[e, lo], Type::I32);
        let e = self.b.op(lathe_ir::GenericOp::IMin, &[e, hi], Type::I32);
        let one = self.constant(Type::I32, 1);
        let half = self.b.op(lathe_ir::GenericOp::AShr, &[e, one], Type::I32);
        let rest = self.b.isub(e, half);
        let mut r = x;
        for part in [half, rest] {
            let bias = self.constant(Type::I32, 127);
            let biased = self.b.iadd(part, bias);
            let shift = self.constant(Type::I32, 23);
            let bits = self
                .b
                .op(lathe_ir::GenericOp::Shl, &[biased, shift], Type::I32);
            let scale = self.cast(bits, Type::F32);
            r = self.b.fmul(r, scale);
        }
        r
    }

    /// `(fract, exp)` with `x = fract * 2^exp`, `|fract|` in [0.5, 1)
    /// (f32); zero (and a denormal, which may be flushed) gives `(x, 0)`.
    fn frexp(&mut self, x: Value, exp_ty: Type) -> (Value, Value) {
        let bits = self.cast(x, Type::U32);
        let (shift, mask) = (self.const_u32(23), self.const_u32(0xff));
        let sh = self
            .b
            .op(lathe_ir::GenericOp::Shr, &[bits, shift], Type::U32);
        let biased = self.b.and(sh, mask);
        let biased = self.cast(biased, Type::I32);
        let zero = self.constant(Type::I32, 0);
        let is_zero = self.b.ieq(biased, zero);
        let bias = self.constant(Type::I32, 126);
        let exp = self.b.isub(biased, bias);
        let exp = self.b.sel(is_zero, zero, exp);
        let (keep, half) = (self.const_u32(0x807f_ffff), self.const_u32(0x3f00_0000));
        let m = self.b.and(bits, keep);
        let m = self.b.or(m, half);
        let m = self.cast(m, Type::F32);
        let fract = self.b.sel(is_zero, x, m);
        (fract, self.cast(exp, exp_ty))
    }

    /// Store `leaves` through the pointer operand `k` (Modf, Frexp).
    fn store_through(&mut self, k: usize, leaves: Vec<Value>) -> Result<(), Error> {
        let ptr = self.pointer(self.id(k)?)?;
        self.store(&ptr, super::Val::Leaves(leaves.into()))
    }

    /// The scalar type behind the pointer operand `k`.
    fn pointee_leaf(&mut self, k: usize) -> Result<Type, Error> {
        let ptr = self.pointer(self.id(k)?)?;
        let tys = self.leaf_types(ptr.ty)?;
        tys.first()
            .copied()
            .ok_or_else(|| self.invalid("pointer to an empty type"))
    }

    /// A signed-integer unary op, result reinterpreted as `t`.
    fn signed1(&mut self, op: lathe_ir::GenericOp, x: Value, t: Type) -> Value {
        let x = self.cast(x, Type::I32);
        let v = self.b.op(op, &[x], Type::I32);
        self.cast(v, t)
    }

    fn operand_ty(&self, k: usize) -> Result<u32, Error> {
        let id = self.id(k)?;
        self.m
            .def(id)
            .and_then(|d| self.m.insts[d].result_type)
            .ok_or_else(|| self.invalid("operand without a type"))
    }

    /// An integer op on `as_ty`, result reinterpreted as `t`.
    fn int2(&mut self, op: lathe_ir::GenericOp, as_ty: Type, x: Value, y: Value, t: Type) -> Value {
        let (x, y) = (self.cast(x, as_ty), self.cast(y, as_ty));
        let v = self.b.op(op, &[x, y], as_ty);
        self.cast(v, t)
    }

    fn exp(&mut self, x: Value) -> Value {
        let t = self.b.type_of(x);
        let k = self.const_float(t, std::f32::consts::LOG2_E);
        let p = self.b.fmul(x, k);
        self.b.exp2(p)
    }

    /// `sqrt(1 - x^2)`.
    fn sqrt_one_minus_sq(&mut self, x: Value, t: Type) -> Value {
        let one = self.const_float(t, 1.0);
        let x2 = self.b.fmul(x, x);
        let d = self.b.fsub(one, x2);
        let zero = self.const_float(t, 0.0);
        let d = self.b.fmax(d, zero);
        self.b.sqrt(d)
    }

    /// `atan(x)` for any x: the odd polynomial on |x| <= 1, reflected above.
    fn atan(&mut self, x: Value) -> Value {
        let t = self.b.type_of(x);
        let one = self.const_float(t, 1.0);
        let ax = self.b.fabs(x);
        let big = self.b.flt(one, ax);
        let inv = self.fdiv(one, ax);
        let u = self.b.sel(big, inv, ax);
        let p = self.atan_poly(u);
        let half_pi = self.const_float(t, std::f32::consts::FRAC_PI_2);
        let r = self.b.fsub(half_pi, p);
        let r = self.b.sel(big, r, p);
        let zero = self.const_float(t, 0.0);
        let neg = self.b.flt(x, zero);
        let nr = self.b.fneg(r);
        self.b.sel(neg, nr, r)
    }

    /// The A&S 4.4.49 polynomial `u * P(u^2)` for 0 <= u <= 1.
    fn atan_poly(&mut self, u: Value) -> Value {
        let t = self.b.type_of(u);
        let u2 = self.b.fmul(u, u);
        let mut acc = self.const_float(t, ATAN_COEFFS[7]);
        for &c in ATAN_COEFFS[..7].iter().rev() {
            let k = self.const_float(t, c);
            acc = self.b.ffma(acc, u2, k);
        }
        self.b.fmul(acc, u)
    }

    /// `atan2(y, x)` in (-pi, pi].
    fn atan2(&mut self, y: Value, x: Value) -> Value {
        let t = self.b.type_of(y);
        let ax = self.b.fabs(x);
        let ay = self.b.fabs(y);
        // atan(min/max) on [0, 1], then unfold the octant.
        let mx = self.b.fmax(ax, ay);
        let mn = self.b.fmin(ax, ay);
        let q = self.fdiv(mn, mx);
        let zero = self.const_float(t, 0.0);
        let both_zero = self.b.feq(mx, zero);
        let q = self.b.sel(both_zero, zero, q);
        let a = self.atan_poly(q);
        let steep = self.b.flt(ax, ay);
        let half_pi = self.const_float(t, std::f32::consts::FRAC_PI_2);
        let a2 = self.b.fsub(half_pi, a);
        let a = self.b.sel(steep, a2, a);
        let pi = self.const_float(t, std::f32::consts::PI);
        let left = self.b.flt(x, zero);
        let a3 = self.b.fsub(pi, a);
        let a = self.b.sel(left, a3, a);
        let below = self.b.flt(y, zero);
        let na = self.b.fneg(a);
        self.b.sel(below, na, a)
    }

    /// Determinant of an n x n column-major matrix by cofactor expansion.
    fn determinant(&mut self, m: &[Value], n: usize) -> Value {
        if n == 1 {
            return m[0];
        }
        if n == 2 {
            let a = self.b.fmul(m[0], m[3]);
            let b = self.b.fmul(m[2], m[1]);
            return self.b.fsub(a, b);
        }
        let mut acc: Option<Value> = None;
        for c in 0..n {
            let minor = minor(m, n, 0, c);
            let d = self.determinant(&minor, n - 1);
            let term = self.b.fmul(m[c * n], d);
            acc = Some(match acc {
                None => term,
                Some(a) if c % 2 == 1 => self.b.fsub(a, term),
                Some(a) => self.b.fadd(a, term),
            });
        }
        acc.unwrap_or(m[0])
    }

    /// Inverse as adjugate / determinant.
    fn inverse(&mut self, m: &[Value], n: usize) -> Result<Vec<Value>, Error> {
        if !(2..=4).contains(&n) {
            return Err(self.unsupported("inverse of a matrix larger than 4x4"));
        }
        let det = self.determinant(m, n);
        let t = self.b.type_of(det);
        let one = self.const_float(t, 1.0);
        let inv_det = self.fdiv(one, det);
        let mut out = vec![m[0]; n * n];
        for c in 0..n {
            for r in 0..n {
                // inverse[c][r] = cofactor(r, c) / det (transposed cofactor matrix).
                let cof = minor(m, n, c, r);
                let d = self.determinant(&cof, n - 1);
                let d = if (r + c) % 2 == 1 { self.b.fneg(d) } else { d };
                out[c * n + r] = self.b.fmul(d, inv_det);
            }
        }
        Ok(out)
    }
}

fn pack_format(op: G) -> lathe_ir::PackFormat {
    use lathe_ir::PackFormat as P;
    match op {
        G::PackHalf2x16 | G::UnpackHalf2x16 => P::Half2x16,
        G::PackUnorm4x8 | G::UnpackUnorm4x8 => P::Unorm4x8,
        G::PackSnorm4x8 | G::UnpackSnorm4x8 => P::Snorm4x8,
        G::PackUnorm2x16 | G::UnpackUnorm2x16 => P::Unorm2x16,
        _ => P::Snorm2x16,
    }
}

/// The column-major (n-1)x(n-1) minor without row `row` and column `col`.
fn minor(m: &[Value], n: usize, row: usize, col: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity((n - 1) * (n - 1));
    for c in (0..n).filter(|&c| c != col) {
        for r in (0..n).filter(|&r| r != row) {
            out.push(m[c * n + r]);
        }
    }
    out
}
