//! Arithmetic, comparisons, conversions, composites and matrices, all
//! scalarised: an operation on vectors becomes one IR instruction per lane.

use super::{Lowerer, Val};
use crate::error::Error;
use crate::module::Ty;
use lathe_ir::{GenericOp, Scalar, Type, Value};
use rspirv::spirv::Op;
use std::rc::Rc;

/// How a comparison reads its operands.
#[derive(Clone, Copy)]
enum Cmp {
    /// `op(a, b)` on the type given.
    Direct(GenericOp, Option<Type>),
    /// `op(b, a)`.
    Swapped(GenericOp, Option<Type>),
    /// `!op(a, b)` (unordered float comparisons).
    Negated(GenericOp),
    NegatedSwapped(GenericOp),
}

impl Lowerer<'_, '_, '_> {
    fn result_id(&self) -> Result<u32, Error> {
        self.m.insts[self.at]
            .result_id
            .ok_or_else(|| self.invalid("no result id"))
    }

    fn result_types(&mut self) -> Result<Rc<[Type]>, Error> {
        let ty = self.m.insts[self.at]
            .result_type
            .ok_or_else(|| self.invalid("no result type"))?;
        self.leaf_types(ty)
    }

    /// `(columns, rows)` of a matrix type, `(1, n)` for a vector.
    pub(super) fn shape(&self, ty: u32) -> Result<(u32, u32), Error> {
        Ok(match self.ty(ty)? {
            Ty::Matrix { column, n } => match self.ty(*column)? {
                Ty::Vector { n: rows, .. } => (*n, *rows),
                _ => return Err(self.invalid("matrix of non-vectors")),
            },
            Ty::Vector { n, .. } => (1, *n),
            _ => (1, 1),
        })
    }

    fn operand_type(&self, k: usize) -> Result<u32, Error> {
        let id = self.id(k)?;
        self.m
            .def(id)
            .and_then(|d| self.m.insts[d].result_type)
            .ok_or_else(|| self.invalid(format!("%{id} has no type")))
    }

    /// Apply `f` lane by lane to operand 0 (cast to the result's lane type).
    fn map1(&mut self, f: impl Fn(&mut Self, Value, Type) -> Value) -> Result<(), Error> {
        let tys = self.result_types()?;
        let a = self.leaves_n(self.id(0)?, tys.len())?;
        let mut out = Vec::with_capacity(tys.len());
        for (k, &t) in tys.iter().enumerate() {
            let x = self.cast(a[k], t);
            out.push(f(self, x, t));
        }
        let id = self.result_id()?;
        self.set_leaves(id, out);
        Ok(())
    }

    /// Apply `f` lane by lane to operands 0 and 1 (cast to the result's lane type).
    fn map2(&mut self, f: impl Fn(&mut Self, Value, Value, Type) -> Value) -> Result<(), Error> {
        let tys = self.result_types()?;
        let a = self.leaves_n(self.id(0)?, tys.len())?;
        let b = self.leaves_n(self.id(1)?, tys.len())?;
        let mut out = Vec::with_capacity(tys.len());
        for (k, &t) in tys.iter().enumerate() {
            let x = self.cast(a[k], t);
            let y = self.cast(b[k], t);
            out.push(f(self, x, y, t));
        }
        let id = self.result_id()?;
        self.set_leaves(id, out);
        Ok(())
    }

    fn op2(&mut self, op: GenericOp) -> Result<(), Error> {
        self.map2(|l, x, y, t| l.b.op(op, &[x, y], t))
    }

    fn compare(&mut self, cmp: Cmp) -> Result<(), Error> {
        let n = self.result_types()?.len();
        let a = self.leaves_n(self.id(0)?, n)?;
        let b = self.leaves_n(self.id(1)?, n)?;
        let mut out = Vec::with_capacity(a.len());
        for k in 0..a.len() {
            let (x, y) = (a[k], b[k]);
            let t = self.b.type_of(x);
            let v = match cmp {
                Cmp::Direct(op, want) | Cmp::Swapped(op, want) => {
                    let want = want.unwrap_or(t);
                    let (x, y) = (self.cast(x, want), self.cast(y, want));
                    let (x, y) = if matches!(cmp, Cmp::Swapped(..)) {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    self.b.op(op, &[x, y], Type::BOOL)
                }
                Cmp::Negated(op) => {
                    let c = self.b.op(op, &[x, y], Type::BOOL);
                    self.b.not(c)
                }
                Cmp::NegatedSwapped(op) => {
                    let c = self.b.op(op, &[y, x], Type::BOOL);
                    self.b.not(c)
                }
            };
            out.push(v);
        }
        let id = self.result_id()?;
        self.set_leaves(id, out);
        Ok(())
    }

    /// `a / b` in float.
    pub(super) fn fdiv(&mut self, a: Value, b: Value) -> Value {
        let ty = self.b.type_of(a);
        self.b.op(GenericOp::FDiv, &[a, b], ty)
    }

    fn unary_op(&mut self, op: GenericOp, x: Value) -> Value {
        let ty = self.b.type_of(x);
        self.b.op(op, &[x], ty)
    }

    /// Truncation toward zero.
    pub(super) fn ftrunc(&mut self, x: Value) -> Value {
        self.unary_op(GenericOp::Trunc, x)
    }

    /// Fractional part `x - floor(x)`.
    pub(super) fn ffract(&mut self, x: Value) -> Value {
        self.unary_op(GenericOp::Fract, x)
    }

    pub(super) fn fceil(&mut self, x: Value) -> Value {
        self.unary_op(GenericOp::Ceil, x)
    }

    pub(super) fn int_unary(&mut self, op: GenericOp, x: Value) -> Value {
        self.unary_op(op, x)
    }

    /// Sum of lane products.
    pub(super) fn dot(&mut self, a: &[Value], b: &[Value]) -> Value {
        let (Some(&a0), Some(&b0)) = (a.first(), b.first()) else {
            // Only reached for malformed input, which check_new then reports.
            return self.constant(Type::BOOL, 0);
        };
        let mut acc = self.b.fmul(a0, b0);
        for k in 1..a.len().min(b.len()) {
            acc = self.b.ffma(a[k], b[k], acc);
        }
        acc
    }

    pub(super) fn alu(&mut self) -> Result<(), Error> {
        use GenericOp as G;
        let op = self.m.insts[self.at].class.opcode;
        match op {
            Op::FAdd => self.op2(G::FAdd),
            Op::FSub => self.op2(G::FSub),
            Op::FMul => self.op2(G::FMul),
            Op::FDiv => self.map2(|l, x, y, _| l.fdiv(x, y)),
            Op::FMod => self.map2(|l, x, y, _| {
                let q = l.fdiv(x, y);
                let f = l.b.floor(q);
                let p = l.b.fmul(y, f);
                l.b.fsub(x, p)
            }),
            Op::FRem => self.map2(|l, x, y, _| {
                let q = l.fdiv(x, y);
                let f = l.ftrunc(q);
                let p = l.b.fmul(y, f);
                l.b.fsub(x, p)
            }),
            Op::FNegate => self.map1(|l, x, _| l.b.fneg(x)),
            Op::IAdd => self.op2(G::IAdd),
            Op::ISub => self.op2(G::ISub),
            Op::IMul => self.op2(G::IMul),
            Op::UDiv => self.unsigned2(G::UDiv),
            Op::UMod => self.unsigned2(G::UMod),
            Op::SDiv => self.signed2(G::IDiv),
            Op::SRem => self.signed2(G::IRem),
            Op::SMod => self.map2(|l, x, y, t| {
                let (x, y) = (l.cast(x, Type::I32), l.cast(y, Type::I32));
                let r = l.b.irem(x, y);
                let zero = l.constant(Type::I32, 0);
                let nonzero = l.b.ine(r, zero);
                let rneg = l.b.ilt(r, zero);
                let yneg = l.b.ilt(y, zero);
                let differ = l.b.xor(rneg, yneg);
                let fix = l.b.and(nonzero, differ);
                let adj = l.b.iadd(r, y);
                let v = l.b.sel(fix, adj, r);
                l.cast(v, t)
            }),
            Op::SNegate => self.map1(|l, x, t| {
                let z = l.constant(t, 0);
                l.b.isub(z, x)
            }),
            Op::Not => self.map1(|l, x, _| l.b.not(x)),
            Op::BitwiseAnd | Op::LogicalAnd => self.op2(G::And),
            Op::BitwiseOr | Op::LogicalOr => self.op2(G::Or),
            Op::BitwiseXor | Op::LogicalNotEqual => self.op2(G::Xor),
            Op::LogicalNot => self.map1(|l, x, _| l.b.not(x)),
            Op::LogicalEqual => self.compare(Cmp::Direct(G::IEq, None)),
            Op::ShiftLeftLogical => self.op2(G::Shl),
            Op::ShiftRightLogical => self.unsigned2(G::Shr),
            Op::ShiftRightArithmetic => self.signed2(G::AShr),
            Op::IEqual => self.compare(Cmp::Direct(G::IEq, None)),
            Op::INotEqual => self.compare(Cmp::Direct(G::INe, None)),
            Op::SLessThan => self.compare(Cmp::Direct(G::ILt, Some(Type::I32))),
            Op::SGreaterThanEqual => self.compare(Cmp::Direct(G::IGe, Some(Type::I32))),
            Op::SGreaterThan => self.compare(Cmp::Swapped(G::ILt, Some(Type::I32))),
            Op::SLessThanEqual => self.compare(Cmp::Swapped(G::IGe, Some(Type::I32))),
            Op::ULessThan => self.compare(Cmp::Direct(G::ULt, Some(Type::U32))),
            Op::UGreaterThanEqual => self.compare(Cmp::Direct(G::UGe, Some(Type::U32))),
            Op::UGreaterThan => self.compare(Cmp::Swapped(G::ULt, Some(Type::U32))),
            Op::ULessThanEqual => self.compare(Cmp::Swapped(G::UGe, Some(Type::U32))),
            Op::FOrdEqual => self.compare(Cmp::Direct(G::FEq, None)),
            Op::FUnordNotEqual => self.compare(Cmp::Direct(G::FNe, None)),
            Op::FOrdLessThan => self.compare(Cmp::Direct(G::FLt, None)),
            Op::FOrdGreaterThan => self.compare(Cmp::Swapped(G::FLt, None)),
            Op::FOrdLessThanEqual => self.compare(Cmp::Swapped(G::FGe, None)),
            Op::FOrdGreaterThanEqual => self.compare(Cmp::Direct(G::FGe, None)),
            Op::FUnordLessThan => self.compare(Cmp::Negated(G::FGe)),
            Op::FUnordGreaterThanEqual => self.compare(Cmp::Negated(G::FLt)),
            Op::FUnordGreaterThan => self.compare(Cmp::NegatedSwapped(G::FGe)),
            Op::FUnordLessThanEqual => self.compare(Cmp::NegatedSwapped(G::FLt)),
            Op::FUnordEqual => self.compare(Cmp::Negated(G::FNe)),
            Op::FOrdNotEqual => {
                // Ordered and unequal: a < b or b < a.
                let n = self.result_types()?.len();
                let a = self.leaves_n(self.id(0)?, n)?;
                let b = self.leaves_n(self.id(1)?, n)?;
                let out: Vec<Value> = a
                    .iter()
                    .zip(b.iter())
                    .map(|(&x, &y)| {
                        let lt = self.b.flt(x, y);
                        let gt = self.b.flt(y, x);
                        self.b.or(lt, gt)
                    })
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::IsNan => {
                let a = self.leaves(self.id(0)?)?;
                let out: Vec<Value> = a.iter().map(|&x| self.b.fne(x, x)).collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::IsInf => {
                let a = self.leaves(self.id(0)?)?;
                let out: Vec<Value> = a
                    .iter()
                    .map(|&x| {
                        let t = self.b.type_of(x);
                        let inf = self.const_float(t, f32::INFINITY);
                        let ax = self.b.fabs(x);
                        self.b.feq(ax, inf)
                    })
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::Any | Op::All => {
                let a = self.leaves(self.id(0)?)?;
                if a.is_empty() {
                    return Err(self.invalid("Any/All of an empty value"));
                }
                let mut acc = a[0];
                for &x in &a[1..] {
                    acc = if op == Op::Any {
                        self.b.or(acc, x)
                    } else {
                        self.b.and(acc, x)
                    };
                }
                let id = self.result_id()?;
                self.set_leaves(id, vec![acc]);
                Ok(())
            }
            Op::Select => {
                let tys = self.result_types()?;
                let c = self.leaves(self.id(0)?)?;
                let a = self.leaves_n(self.id(1)?, tys.len())?;
                let b = self.leaves_n(self.id(2)?, tys.len())?;
                if c.len() != 1 && c.len() != tys.len() {
                    return Err(self.invalid("select condition of the wrong size"));
                }
                let out: Vec<Value> = (0..tys.len())
                    .map(|k| {
                        let (x, y) = (self.cast(a[k], tys[k]), self.cast(b[k], tys[k]));
                        self.b.sel(c[k.min(c.len() - 1)], x, y)
                    })
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::ConvertFToS | Op::ConvertFToU | Op::FConvert | Op::SConvert | Op::UConvert => {
                let from = match op {
                    Op::SConvert => Some(Type::I32),
                    Op::UConvert => Some(Type::U32),
                    _ => None,
                };
                self.convert(from)
            }
            Op::ConvertSToF => self.convert(Some(Type::I32)),
            Op::ConvertUToF => self.convert(Some(Type::U32)),
            Op::Bitcast => {
                let tys = self.result_types()?;
                let a = self.leaves(self.id(0)?)?;
                if a.len() != tys.len() {
                    return Err(
                        self.unsupported("bitcast between vectors of different lane counts")
                    );
                }
                let out: Vec<Value> = a
                    .iter()
                    .zip(tys.iter())
                    .map(|(&x, &t)| self.cast(x, t))
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::CopyObject | Op::CopyLogical => {
                let v = self.get(self.id(0)?)?;
                let id = self.result_id()?;
                self.set(id, v);
                Ok(())
            }
            Op::CompositeConstruct => {
                let n = self.m.insts[self.at].operands.len();
                let tys = self.result_types()?;
                let mut out = Vec::with_capacity(tys.len());
                for k in 0..n {
                    out.extend_from_slice(&self.leaves(self.id(k)?)?);
                }
                if out.len() != tys.len() {
                    return Err(self.invalid("composite constituents do not fill the type"));
                }
                let out: Vec<Value> = out
                    .iter()
                    .zip(tys.iter())
                    .map(|(&x, &t)| self.cast(x, t))
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::CompositeExtract => {
                let ty = self.operand_type(0)?;
                let a = self.leaves(self.id(0)?)?;
                let (start, _, len) = self.composite_range(ty, 1)?;
                if start + len > a.len() {
                    return Err(self.invalid("composite index out of range"));
                }
                let id = self.result_id()?;
                self.set_leaves(id, a[start..start + len].to_vec());
                Ok(())
            }
            Op::CompositeInsert => {
                let ty = self.operand_type(1)?;
                let obj = self.leaves(self.id(0)?)?;
                let mut a = self.leaves(self.id(1)?)?.to_vec();
                let (start, _, len) = self.composite_range(ty, 2)?;
                if obj.len() != len || start + len > a.len() {
                    return Err(self.invalid("inserted object does not fit"));
                }
                a[start..start + len].copy_from_slice(&obj);
                let id = self.result_id()?;
                self.set_leaves(id, a);
                Ok(())
            }
            Op::VectorShuffle => {
                let a = self.leaves(self.id(0)?)?;
                let b = self.leaves(self.id(1)?)?;
                let tys = self.result_types()?;
                let n = self.m.insts[self.at].operands.len() - 2;
                if n != tys.len() {
                    return Err(self.invalid(format!(
                        "OpVectorShuffle selects {n} components for a result of {}",
                        tys.len()
                    )));
                }
                let mut out = Vec::with_capacity(n);
                for (k, &ty) in tys.iter().enumerate() {
                    let c = self.lit(2 + k)? as usize;
                    let v = if c < a.len() {
                        a[c]
                    } else if c - a.len() < b.len() {
                        b[c - a.len()]
                    } else {
                        self.constant(ty, 0)
                    };
                    if self.b.type_of(v) != ty {
                        return Err(self.invalid("OpVectorShuffle component of the wrong type"));
                    }
                    out.push(v);
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::VectorExtractDynamic => {
                let a = self.leaves(self.id(0)?)?;
                let idx = self.scalar(self.id(1)?)?;
                let idx = self.cast(idx, Type::U32);
                let Some(&first) = a.first() else {
                    return Err(self.invalid("extract from an empty vector"));
                };
                let mut r = first;
                for (k, &x) in a.iter().enumerate().skip(1) {
                    let c = self.const_u32(k as u32);
                    let eq = self.b.ieq(idx, c);
                    r = self.b.sel(eq, x, r);
                }
                let id = self.result_id()?;
                self.set_leaves(id, vec![r]);
                Ok(())
            }
            Op::VectorInsertDynamic => {
                let a = self.leaves(self.id(0)?)?;
                let x = self.scalar(self.id(1)?)?;
                let idx = self.scalar(self.id(2)?)?;
                let idx = self.cast(idx, Type::U32);
                let out: Vec<Value> = a
                    .iter()
                    .enumerate()
                    .map(|(k, &old)| {
                        let c = self.const_u32(k as u32);
                        let eq = self.b.ieq(idx, c);
                        self.b.sel(eq, x, old)
                    })
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::Dot => {
                let a = self.leaves(self.id(0)?)?;
                let b = self.leaves_n(self.id(1)?, a.len())?;
                let d = self.dot(&a, &b);
                let id = self.result_id()?;
                self.set_leaves(id, vec![d]);
                Ok(())
            }
            Op::VectorTimesScalar | Op::MatrixTimesScalar => {
                let a = self.leaves(self.id(0)?)?;
                let s = self.scalar(self.id(1)?)?;
                let out: Vec<Value> = a.iter().map(|&x| self.b.fmul(x, s)).collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::MatrixTimesVector => {
                let (cols, rows) = self.shape(self.operand_type(0)?)?;
                let m = self.leaves_n(self.id(0)?, (cols * rows) as usize)?;
                let v = self.leaves_n(self.id(1)?, cols as usize)?;
                let out = self.mat_mul(&m, cols, rows, &v, 1);
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::VectorTimesMatrix => {
                // v^T M: lane c is dot(v, column c).
                let (cols, rows) = self.shape(self.operand_type(1)?)?;
                let v = self.leaves_n(self.id(0)?, rows as usize)?;
                let m = self.leaves_n(self.id(1)?, (cols * rows) as usize)?;
                let out: Vec<Value> = (0..cols as usize)
                    .map(|c| {
                        let col = m[c * rows as usize..(c + 1) * rows as usize].to_vec();
                        self.dot(&v, &col)
                    })
                    .collect();
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::MatrixTimesMatrix => {
                let (cols, rows) = self.shape(self.operand_type(0)?)?;
                let (rcols, rrows) = self.shape(self.operand_type(1)?)?;
                if rrows != cols {
                    return Err(self.invalid("matrix product of mismatched shapes"));
                }
                let a = self.leaves_n(self.id(0)?, (cols * rows) as usize)?;
                let b = self.leaves_n(self.id(1)?, (rcols * cols) as usize)?;
                let out = self.mat_mul(&a, cols, rows, &b, rcols);
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::OuterProduct => {
                let a = self.leaves(self.id(0)?)?;
                let b = self.leaves(self.id(1)?)?;
                let mut out = Vec::with_capacity(a.len() * b.len());
                for &y in b.iter() {
                    for &x in a.iter() {
                        out.push(self.b.fmul(x, y));
                    }
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::Transpose => {
                let (cols, rows) = self.shape(self.operand_type(0)?)?;
                let m = self.leaves_n(self.id(0)?, (cols * rows) as usize)?;
                let mut out = Vec::with_capacity(m.len());
                for r in 0..rows as usize {
                    for c in 0..cols as usize {
                        out.push(m[c * rows as usize + r]);
                    }
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::QuantizeToF16 => self.map1(|l, x, t| {
                // Round to binary16 and back (nearest even; too large becomes
                // an infinity, as the conversion gives).
                let h = l.b.cvt(x, Type::F16);
                l.b.cvt(h, t)
            }),
            Op::UMulExtended | Op::SMulExtended => {
                // A struct {low, high} of the operands' shape.
                let tys = self.result_types()?;
                let n = tys.len() / 2;
                let (high, as_ty) = if op == Op::UMulExtended {
                    (G::UMulHigh, Type::U32)
                } else {
                    (G::IMulHigh, Type::I32)
                };
                let a = self.leaves_n(self.id(0)?, n)?;
                let b = self.leaves_n(self.id(1)?, n)?;
                let mut out = Vec::with_capacity(2 * n);
                for part in [G::IMul, high] {
                    for k in 0..n {
                        let (x, y) = (self.cast(a[k], as_ty), self.cast(b[k], as_ty));
                        let v = self.b.op(part, &[x, y], as_ty);
                        out.push(self.cast(v, tys[out.len()]));
                    }
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::ControlBarrier => {
                self.b.op_void(G::ControlBarrier, &[]);
                Ok(())
            }
            Op::MemoryBarrier => {
                self.b.barrier();
                Ok(())
            }
            Op::BitReverse => self.map1(|l, x, _| l.b.op(G::BitReverse, &[x], l.b.type_of(x))),
            Op::BitCount => self.map1(|l, x, t| {
                let v = l.b.op(G::BitCount, &[x], t);
                l.cast(v, t)
            }),
            Op::BitFieldInsert => {
                let tys = self.result_types()?;
                let base = self.leaves_n(self.id(0)?, tys.len())?;
                let ins = self.leaves_n(self.id(1)?, tys.len())?;
                let off = self.scalar(self.id(2)?)?;
                let count = self.scalar(self.id(3)?)?;
                let mut out = Vec::new();
                for k in 0..tys.len() {
                    let t = tys[k];
                    let (o, c) = (self.cast(off, t), self.cast(count, t));
                    out.push(self.b.op(G::BitfieldInsert, &[base[k], ins[k], o, c], t));
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            Op::BitFieldSExtract | Op::BitFieldUExtract => {
                let tys = self.result_types()?;
                let base = self.leaves_n(self.id(0)?, tys.len())?;
                let off = self.scalar(self.id(1)?)?;
                let count = self.scalar(self.id(2)?)?;
                let (g, as_ty) = if op == Op::BitFieldSExtract {
                    (G::IBitfieldExtract, Type::I32)
                } else {
                    (G::UBitfieldExtract, Type::U32)
                };
                let mut out = Vec::new();
                for k in 0..tys.len() {
                    let x = self.cast(base[k], as_ty);
                    let (o, c) = (self.cast(off, as_ty), self.cast(count, as_ty));
                    let v = self.b.op(g, &[x, o, c], as_ty);
                    out.push(self.cast(v, tys[k]));
                }
                let id = self.result_id()?;
                self.set_leaves(id, out);
                Ok(())
            }
            _ => self.more_ops(),
        }
    }

    /// `A (cols x rows) * B (bcols columns of cols)`, column-major leaves.
    fn mat_mul(
        &mut self,
        a: &[Value],
        cols: u32,
        rows: u32,
        b: &[Value],
        bcols: u32,
    ) -> Vec<Value> {
        let (cols, rows) = (cols as usize, rows as usize);
        let mut out = Vec::with_capacity(rows * bcols as usize);
        for j in 0..bcols as usize {
            for r in 0..rows {
                let mut acc = self.b.fmul(a[r], b[j * cols]);
                for k in 1..cols {
                    acc = self.b.ffma(a[k * rows + r], b[j * cols + k], acc);
                }
                out.push(acc);
            }
        }
        out
    }

    fn signed2(&mut self, op: GenericOp) -> Result<(), Error> {
        self.map2(|l, x, y, t| {
            let (x, y) = (l.cast(x, Type::I32), l.cast(y, Type::I32));
            let v = l.b.op(op, &[x, y], Type::I32);
            l.cast(v, t)
        })
    }

    fn unsigned2(&mut self, op: GenericOp) -> Result<(), Error> {
        self.map2(|l, x, y, t| {
            let (x, y) = (l.cast(x, Type::U32), l.cast(y, Type::U32));
            let v = l.b.op(op, &[x, y], Type::U32);
            l.cast(v, t)
        })
    }

    /// A numeric conversion; `from` reinterprets the source first (signedness).
    fn convert(&mut self, from: Option<Type>) -> Result<(), Error> {
        let tys = self.result_types()?;
        let a = self.leaves_n(self.id(0)?, tys.len())?;
        let mut out = Vec::with_capacity(a.len());
        for (k, &x) in a.iter().enumerate() {
            let x = match from {
                Some(f) if self.b.type_of(x).scalar.bits() == f.scalar.bits() => self.cast(x, f),
                _ => x,
            };
            let t = tys[k];
            out.push(if self.b.type_of(x) == t {
                x
            } else if self.b.type_of(x).scalar == Scalar::Bool || t.scalar == Scalar::Bool {
                return Err(self.unsupported("conversion to or from bool"));
            } else {
                self.b.cvt(x, t)
            });
        }
        let id = self.result_id()?;
        self.set_leaves(id, out);
        Ok(())
    }

    /// Leaf range `(start, type, len)` selected by the literal indices from operand `first` on.
    fn composite_range(&mut self, mut ty: u32, first: usize) -> Result<(usize, u32, usize), Error> {
        let n = self.m.insts[self.at].operands.len();
        let mut start = 0usize;
        for k in first..n {
            let idx = self.lit(k)?;
            match self.ty(ty)?.clone() {
                Ty::Struct { members } => {
                    let Some(&mem) = members.get(idx as usize) else {
                        return Err(self.invalid("member index out of range"));
                    };
                    for &m in &members[..idx as usize] {
                        start += self.leaf_count(m)? as usize;
                    }
                    ty = mem;
                }
                Ty::Vector { elem, .. } | Ty::Array { elem, .. } => {
                    start += idx as usize * self.leaf_count(elem)? as usize;
                    ty = elem;
                }
                Ty::Matrix { column, .. } => {
                    start += idx as usize * self.leaf_count(column)? as usize;
                    ty = column;
                }
                _ => return Err(self.invalid("composite index into a scalar")),
            }
        }
        let len = self.leaf_count(ty)? as usize;
        Ok((start, ty, len))
    }

    /// Instructions of later vocabulary (textures, derivatives, ...).
    fn more_ops(&mut self) -> Result<(), Error> {
        let _ = Val::Sampler { index: 0 };
        self.image_op()
    }
}
