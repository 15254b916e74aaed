//! Variables, pointers, loads and stores.
//!
//! A pointer is a variable plus an access path. Private, function and
//! output variables are SSA variables per scalar leaf (or an IR array when
//! indexed at run time), inputs are `load_input`s per leaf, and buffers are
//! addressed in bytes with their explicit layout (`Offset`, `ArrayStride`,
//! `MatrixStride`, `RowMajor`).

use super::{Lowerer, Val};
use crate::error::Error;
use crate::module::Ty;
use crate::ssa::Var;
use lathe_ir::{ArrayId, GenericOp, Type, Value};
use rspirv::spirv::Op;

use std::rc::Rc;

/// One step of an access chain.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Index {
    Const(u32),
    Dynamic(Value),
}

#[derive(Clone, Debug)]
pub(crate) struct Ptr {
    pub var: u32,
    /// The pointee type at the end of `path`.
    pub ty: u32,
    pub path: Vec<Index>,
}

/// How a variable's contents are held.
#[derive(Clone, Debug)]
pub(crate) enum Storage {
    /// One SSA variable per leaf, `base..base + count`.
    Ssa {
        base: Var,
        count: u32,
    },
    /// An IR array, one element per leaf; leaves of mixed types are kept
    /// as `u32` bits (`tys` then holds each leaf's own type).
    Array {
        array: ArrayId,
        tys: Option<Rc<[Type]>>,
    },
    /// Shader inputs: entry `k` of the lowerer's input table per leaf.
    Input {
        first: usize,
    },
    /// Shader outputs: entries `first..` of the lowerer's output table.
    Output {
        first: usize,
    },
    /// A uniform buffer: IR index `index` of `load_ubo`.
    Ubo {
        index: u32,
    },
    /// A storage buffer: IR index `index` of the SSBO ops.
    Ssbo {
        index: u32,
    },
    /// Workgroup memory at byte `base`, one 32-bit word per leaf.
    Workgroup {
        base: u32,
    },
    PushConstant,
    /// A texture, image or sampler (or an array of them) at IR index `index`.
    Handle {
        index: u32,
        sampler: Option<u32>,
        ty: u32,
    },
}

/// A position inside a buffer with an explicit layout.
#[derive(Clone, Copy)]
struct BufPos {
    offset: u32,
    dynamic: Option<Value>,
    ty: u32,
    /// `(MatrixStride, RowMajor)` of the innermost matrix-holding member.
    matrix: Option<(u32, bool)>,
    /// Byte step between a vector's components (a row-major column strides by MatrixStride).
    comp_stride: u32,
}

impl Lowerer<'_, '_, '_> {
    pub(super) fn memory(&mut self) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        match inst.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain => {
                let id = inst.result_id.ok_or_else(|| self.invalid("no result id"))?;
                let base = self.pointer(self.id(0)?)?;
                let mut path = base.path.clone();
                let mut ty = base.ty;
                for k in 1..inst.operands.len() {
                    let idx_id = self.id(k)?;
                    let index = match self.const_value(idx_id) {
                        Some(c) => Index::Const(c),
                        None => Index::Dynamic(self.scalar(idx_id)?),
                    };
                    ty = self.step_type(ty, index)?;
                    path.push(index);
                }
                let ptr = Ptr {
                    var: base.var,
                    ty,
                    path,
                };
                self.set(id, Val::Ptr(Rc::new(ptr)));
                Ok(())
            }
            Op::Load => {
                let id = inst.result_id.ok_or_else(|| self.invalid("no result id"))?;
                let ptr = self.pointer(self.id(0)?)?;
                let v = self.load(&ptr)?;
                self.set(id, v);
                Ok(())
            }
            Op::Store => {
                let ptr = self.pointer(self.id(0)?)?;
                let v = self.get(self.id(1)?)?;
                self.store(&ptr, v)
            }
            Op::CopyMemory => {
                let dst = self.pointer(self.id(0)?)?;
                let src = self.pointer(self.id(1)?)?;
                let v = self.load(&src)?;
                self.store(&dst, v)
            }
            _ => Err(self.unsupported_op()),
        }
    }

    pub(super) fn pointer(&mut self, id: u32) -> Result<Rc<Ptr>, Error> {
        match self.get(id)? {
            Val::Ptr(p) => Ok(p),
            _ => Err(self.invalid(format!("%{id} is not a pointer"))),
        }
    }

    /// The type one access-chain step below `ty`.
    fn step_type(&self, ty: u32, index: Index) -> Result<u32, Error> {
        Ok(match self.ty(ty)? {
            Ty::Struct { members } => match index {
                Index::Const(k) => *members
                    .get(k as usize)
                    .ok_or_else(|| self.invalid("struct member index out of range"))?,
                Index::Dynamic(_) => return Err(self.invalid("struct indexed at run time")),
            },
            Ty::Vector { elem, .. } | Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => *elem,
            Ty::Matrix { column, .. } => *column,
            _ => return Err(self.invalid("access chain into a scalar")),
        })
    }

    /// Leaf offset of a path: constant part and run-time part (in leaves).
    fn leaf_offset(&mut self, root: u32, path: &[Index]) -> Result<(u32, Option<Value>), Error> {
        let mut ty = root;
        let mut offset = 0u32;
        let mut dynamic: Option<Value> = None;
        for &index in path {
            let next = self.step_type(ty, index)?;
            match self.ty(ty)?.clone() {
                Ty::Struct { members } => {
                    if let Index::Const(k) = index {
                        for &mem in &members[..k as usize] {
                            offset += self.leaf_count(mem)?;
                        }
                    }
                }
                Ty::RuntimeArray { .. } => {
                    return Err(self.unsupported("runtime array outside a buffer"));
                }
                other => {
                    let stride = self.leaf_count(next)?;
                    match index {
                        Index::Const(k) => {
                            // Invalid SPIR-V otherwise; would address
                            // past the variable's leaves.
                            let len = match other {
                                Ty::Vector { n, .. } | Ty::Matrix { n, .. } => n,
                                Ty::Array { len, .. } => {
                                    crate::consts::array_len(&self.c.values, len)
                                        .map_err(|e| self.invalid(e))?
                                }
                                _ => 0,
                            };
                            if k >= len {
                                return Err(self.invalid(format!(
                                    "constant index {k} is out of range (length {len})"
                                )));
                            }
                            offset += k * stride;
                        }
                        Index::Dynamic(v) => {
                            let v = self.cast(v, Type::U32);
                            let s = self.const_u32(stride);
                            let scaled = if stride == 1 { v } else { self.b.imul(v, s) };
                            dynamic = Some(match dynamic {
                                Some(d) => self.b.iadd(d, scaled),
                                None => scaled,
                            });
                        }
                    }
                }
            }
            ty = next;
        }
        Ok((offset, dynamic))
    }

    pub(super) fn load(&mut self, ptr: &Ptr) -> Result<Val, Error> {
        let storage = self.vars.get(&ptr.var).cloned().ok_or_else(|| {
            self.unsupported(format!(
                "access to variable %{} of an unsupported storage class",
                ptr.var
            ))
        })?;
        let var_ty = self.var_type(ptr.var)?;
        match storage {
            Storage::Ssa { base, .. } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                if dynamic.is_some() {
                    return Err(
                        self.unsupported("run-time index into a variable held in registers")
                    );
                }
                let n = self.leaf_count(ptr.ty)?;
                let cur = self.b.current_block();
                let leaves: Vec<Value> = (0..n)
                    .map(|k| self.ssa.read(self.b.shader(), base + offset + k, cur))
                    .collect();
                Ok(Val::Leaves(leaves.into()))
            }
            Storage::Array { array, tys } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                let want = self.leaf_types(ptr.ty)?;
                let mut leaves = Vec::with_capacity(want.len());
                for (k, &t) in want.iter().enumerate() {
                    let v = self.b.array_load(array, offset + k as u32, dynamic);
                    leaves.push(match &tys {
                        Some(_) => self.word_as(v, t),
                        None => v,
                    });
                }
                Ok(Val::Leaves(leaves.into()))
            }
            Storage::Output { first } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                if dynamic.is_some() {
                    return Err(self.unsupported("run-time index into a shader output"));
                }
                let n = self.leaf_count(ptr.ty)?;
                let cur = self.b.current_block();
                let leaves: Vec<Value> = (0..n as usize)
                    .map(|k| {
                        let var = self.outputs[first + offset as usize + k].0;
                        self.ssa.read(self.b.shader(), var, cur)
                    })
                    .collect();
                Ok(Val::Leaves(leaves.into()))
            }
            Storage::Input { first } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                if dynamic.is_some() {
                    return Err(self.unsupported("run-time index into a shader input"));
                }
                let n = self.leaf_count(ptr.ty)?;
                let tys = self.leaf_types(ptr.ty)?;
                let mut leaves = Vec::with_capacity(n as usize);
                for k in 0..n as usize {
                    let leaf = self.inputs[first + offset as usize + k];
                    leaves.push(self.load_input_leaf(leaf, tys[k])?);
                }
                Ok(Val::Leaves(leaves.into()))
            }
            Storage::Ubo { .. } | Storage::PushConstant | Storage::Ssbo { .. } => {
                let pos = self.buffer_pos(var_ty, &ptr.path)?;
                let mut words = Vec::new();
                self.buffer_words(pos, &mut words)?;
                let mut out = Vec::with_capacity(words.len());
                for (offset, t) in words {
                    out.push(self.buffer_word(&storage, offset, pos.dynamic, t)?);
                }
                Ok(Val::Leaves(out.into()))
            }
            Storage::Workgroup { base } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                let tys = self.leaf_types(ptr.ty)?;
                let mut out = Vec::with_capacity(tys.len());
                for (k, &t) in tys.iter().enumerate() {
                    let at = self.shared_address(base, offset + k as u32, dynamic);
                    let w = self
                        .b
                        .load_shared(at, if t == Type::BOOL { Type::U32 } else { t });
                    out.push(self.word_as(w, t));
                }
                Ok(Val::Leaves(out.into()))
            }
            Storage::Handle { index, sampler, ty } => {
                let mut index = index;
                let mut sampler = sampler;
                for step in &ptr.path {
                    match step {
                        Index::Const(k) => {
                            index += k;
                            sampler = sampler.map(|s| s + k);
                        }
                        Index::Dynamic(_) => {
                            return Err(self.unsupported(
                                "run-time index into an array of textures or samplers",
                            ));
                        }
                    }
                }
                Ok(match (self.ty(ty)?, sampler) {
                    (Ty::Sampler, _) => Val::Sampler { index },
                    (Ty::SampledImage { image }, Some(s)) => Val::SampledImage {
                        image: index,
                        sampler: s,
                        ty: *image,
                    },
                    _ => Val::Image { index, ty },
                })
            }
        }
    }

    pub(super) fn store(&mut self, ptr: &Ptr, v: Val) -> Result<(), Error> {
        let Val::Leaves(leaves) = v else {
            return Err(self.unsupported("storing a pointer or handle"));
        };
        let storage = self.vars.get(&ptr.var).cloned().ok_or_else(|| {
            self.unsupported(format!(
                "access to variable %{} of an unsupported storage class",
                ptr.var
            ))
        })?;
        let var_ty = self.var_type(ptr.var)?;
        let (offset, dynamic) = match storage {
            Storage::Ssa { .. }
            | Storage::Array { .. }
            | Storage::Output { .. }
            | Storage::Workgroup { .. } => self.leaf_offset(var_ty, &ptr.path)?,
            Storage::Ssbo { index } => {
                let pos = self.buffer_pos(var_ty, &ptr.path)?;
                let mut words = Vec::new();
                self.buffer_words(pos, &mut words)?;
                if words.len() != leaves.len() {
                    return Err(self.invalid("stored value does not fit the pointer's type"));
                }
                let binding = self.index_u8_buffer(index)?;
                for ((off, t), &l) in words.into_iter().zip(leaves.iter()) {
                    let at = self.byte_address(off, pos.dynamic);
                    let l = self.cast(l, t);
                    self.b.store_ssbo(binding, at, l);
                }
                return Ok(());
            }
            _ => return Err(self.unsupported("store to a read-only or unsupported storage class")),
        };
        if self.leaf_count(ptr.ty)? as usize != leaves.len() {
            return Err(self.invalid("stored value does not fit the pointer's type"));
        }
        let cur = self.b.current_block();
        match storage {
            Storage::Ssa { base, .. } => {
                if dynamic.is_some() {
                    return Err(
                        self.unsupported("run-time index into a variable held in registers")
                    );
                }
                for (k, &l) in leaves.iter().enumerate() {
                    let var = base + offset + k as u32;
                    let l = self.cast(l, self.ssa.var_type(var));
                    self.ssa.write(var, cur, l);
                }
            }
            Storage::Array { array, tys } => {
                let elem = self.b.shader().arrays()[array.index()].elem;
                for (k, &l) in leaves.iter().enumerate() {
                    let l = match tys {
                        Some(_) => self.as_word(l),
                        None => self.cast(l, elem),
                    };
                    self.b.array_store(array, offset + k as u32, dynamic, l);
                }
            }
            Storage::Output { first } => {
                if dynamic.is_some() {
                    return Err(self.unsupported("run-time index into a shader output"));
                }
                for (k, &l) in leaves.iter().enumerate() {
                    let entry = first + offset as usize + k;
                    let var = self.outputs[entry].0;
                    let l = self.cast(l, self.ssa.var_type(var));
                    self.ssa.write(var, cur, l);
                    self.outputs[entry].2 = true;
                }
            }
            Storage::Workgroup { base } => {
                for (k, &l) in leaves.iter().enumerate() {
                    let at = self.shared_address(base, offset + k as u32, dynamic);
                    let w = self.as_word(l);
                    self.b.store_shared(at, w);
                }
            }
            _ => unreachable!("filtered above"),
        }
        Ok(())
    }

    /// `offset + dynamic` as a u32 value.
    fn byte_address(&mut self, offset: u32, dynamic: Option<Value>) -> Value {
        let c = self.const_u32(offset);
        match dynamic {
            Some(d) if offset == 0 => d,
            Some(d) => self.b.iadd(d, c),
            None => c,
        }
    }

    /// Byte address of leaf `leaf` (+ `dynamic` leaves) of a workgroup variable at `base`.
    fn shared_address(&mut self, base: u32, leaf: u32, dynamic: Option<Value>) -> Value {
        let dynamic = dynamic.map(|d| {
            let four = self.const_u32(4);
            self.b.imul(d, four)
        });
        self.byte_address(base + 4 * leaf, dynamic)
    }

    fn index_u8_buffer(&self, index: u32) -> Result<u8, Error> {
        u8::try_from(index).map_err(|_| self.unsupported("more than 256 buffers"))
    }

    /// The image a pointer operand of `OpImageTexelPointer` designates.
    pub(super) fn pointer_of_image(&mut self, id: u32) -> Result<Val, Error> {
        let ptr = self.pointer(id)?;
        self.load(&ptr)
    }

    /// An atomic on a storage-image texel.
    fn image_atomic(
        &mut self,
        op: Op,
        atomic: Option<lathe_ir::AtomicOp>,
        image: u8,
        shape: lathe_ir::TexShape,
        coord: Value,
        sample: Option<Value>,
    ) -> Result<(), Error> {
        use lathe_ir::AtomicOp as A;
        let Some(a) = atomic else {
            return Err(self.unsupported("atomic load or store on an image texel"));
        };
        let rty = self.m.insts[self.at]
            .result_type
            .ok_or_else(|| self.invalid("no result type"))?;
        let t = match self.leaf_types(rty)?.as_ref() {
            [t] if t.scalar.bits() == 32 && t.scalar.is_int() => *t,
            _ => {
                return Err(
                    self.unsupported("image atomic on something other than a 32-bit integer")
                );
            }
        };
        let t = match a {
            A::IMin | A::IMax => Type::I32,
            A::UMin | A::UMax => Type::U32,
            _ => t,
        };
        let value = match op {
            Op::AtomicIIncrement => self.constant(t, 1),
            Op::AtomicIDecrement => self.constant(t, u32::MAX),
            Op::AtomicCompareExchange => self.scalar(self.id(4)?)?,
            _ => self.scalar(self.id(3)?)?,
        };
        let value = self.cast(value, t);
        let value = if op == Op::AtomicISub {
            let z = self.constant(t, 0);
            self.b.isub(z, value)
        } else {
            value
        };
        let comparator = if op == Op::AtomicCompareExchange {
            let c = self.scalar(self.id(5)?)?;
            Some(self.cast(c, t))
        } else {
            None
        };
        let old = self
            .b
            .image_atomic(image, shape, a, coord, sample, value, comparator);
        let id = self.m.insts[self.at]
            .result_id
            .ok_or_else(|| self.invalid("no result id"))?;
        let want = self.leaf_types(rty)?[0];
        let old = self.cast(old, want);
        self.set_leaves(id, vec![old]);
        Ok(())
    }

    /// Where the 32-bit scalar a pointer designates lives, for atomics.
    fn word_of(&mut self, ptr: &Ptr) -> Result<(Storage, Value, Type), Error> {
        let storage = self
            .vars
            .get(&ptr.var)
            .cloned()
            .ok_or_else(|| self.unsupported("atomic on an unsupported storage class"))?;
        let var_ty = self.var_type(ptr.var)?;
        let t = match self.leaf_types(ptr.ty)?.as_ref() {
            [t] if t.scalar.bits() == 32 && t.scalar.is_int() => *t,
            _ => return Err(self.unsupported("atomic on something other than a 32-bit integer")),
        };
        let at = match storage {
            Storage::Ssbo { .. } => {
                let pos = self.buffer_pos(var_ty, &ptr.path)?;
                self.byte_address(pos.offset, pos.dynamic)
            }
            Storage::Workgroup { base } => {
                let (offset, dynamic) = self.leaf_offset(var_ty, &ptr.path)?;
                self.shared_address(base, offset, dynamic)
            }
            _ => {
                return Err(self.unsupported("atomic outside storage buffers and workgroup memory"));
            }
        };
        Ok((storage, at, t))
    }

    /// Atomics and `OpArrayLength`.
    pub(super) fn buffer_op(&mut self) -> Result<(), Error> {
        use lathe_ir::AtomicOp as A;
        let inst = &self.m.insts[self.at];
        let op = inst.class.opcode;
        let result = inst.result_id;
        if op == Op::ArrayLength {
            let ptr = self.pointer(self.id(0)?)?;
            let member = self.lit(1)?;
            let Some(Storage::Ssbo { index }) = self.vars.get(&ptr.var).cloned() else {
                return Err(self.unsupported("OpArrayLength outside a storage buffer"));
            };
            let Ty::Struct { members } = self.ty(ptr.ty)?.clone() else {
                return Err(self.invalid("OpArrayLength of a non-struct"));
            };
            let Some(&arr) = members.get(member as usize) else {
                return Err(self.invalid("OpArrayLength member out of range"));
            };
            let off = self
                .m
                .member_deco(ptr.ty, member)
                .and_then(|d| d.offset)
                .unwrap_or(0);
            let stride = self
                .m
                .deco(arr)
                .and_then(|d| d.array_stride)
                .filter(|&s| s > 0)
                .ok_or_else(|| {
                    self.unsupported("runtime array without an ArrayStride decoration")
                })?;
            if !ptr.path.is_empty() {
                return Err(self.unsupported("OpArrayLength through an access chain"));
            }
            let binding = self.index_u8_buffer(index)?;
            let size = self.b.ssbo_size(binding);
            let o = self.const_u32(off);
            let rest = self.b.isub(size, o);
            let s = self.const_u32(stride);
            let n = self.b.udiv(rest, s);
            let id = result.ok_or_else(|| self.invalid("no result id"))?;
            self.set_leaves(id, vec![n]);
            return Ok(());
        }
        let atomic = match op {
            Op::AtomicLoad | Op::AtomicStore => None,
            Op::AtomicExchange => Some(A::Exchange),
            Op::AtomicCompareExchange => Some(A::CompareExchange),
            Op::AtomicIIncrement | Op::AtomicIDecrement | Op::AtomicIAdd | Op::AtomicISub => {
                Some(A::Add)
            }
            Op::AtomicSMin => Some(A::IMin),
            Op::AtomicUMin => Some(A::UMin),
            Op::AtomicSMax => Some(A::IMax),
            Op::AtomicUMax => Some(A::UMax),
            Op::AtomicAnd => Some(A::And),
            Op::AtomicOr => Some(A::Or),
            Op::AtomicXor => Some(A::Xor),
            _ => return Err(self.unsupported_op()),
        };
        if let Val::TexelPtr {
            image,
            shape,
            coord,
            sample,
        } = self.get(self.id(0)?)?
        {
            return self.image_atomic(op, atomic, image, shape, coord, sample);
        }
        let ptr = self.pointer(self.id(0)?)?;
        let (storage, at, t) = self.word_of(&ptr)?;
        let t = match atomic {
            Some(A::IMin | A::IMax) => Type::I32,
            Some(A::UMin | A::UMax) => Type::U32,
            _ => t,
        };
        // Operands: pointer, scope, semantics [, unequal semantics], value [, comparator].
        let value = match op {
            Op::AtomicLoad => None,
            Op::AtomicIIncrement => Some(self.constant(t, 1)),
            Op::AtomicIDecrement => Some(self.constant(t, u32::MAX)),
            Op::AtomicCompareExchange => Some(self.scalar(self.id(4)?)?),
            _ => Some(self.scalar(self.id(3)?)?),
        };
        let value = value.map(|v| self.cast(v, t));
        let value = match (op, value) {
            (Op::AtomicISub, Some(v)) => {
                let z = self.constant(t, 0);
                Some(self.b.isub(z, v))
            }
            (_, v) => v,
        };
        let comparator = if op == Op::AtomicCompareExchange {
            let c = self.scalar(self.id(5)?)?;
            Some(self.cast(c, t))
        } else {
            None
        };
        let old = match (storage, atomic, value) {
            (Storage::Ssbo { index }, None, None) => {
                let b = self.index_u8_buffer(index)?;
                Some(self.b.ssbo_atomic_load(b, at, t))
            }
            (Storage::Ssbo { index }, None, Some(v)) => {
                let b = self.index_u8_buffer(index)?;
                self.b.ssbo_atomic_store(b, at, v);
                None
            }
            (Storage::Ssbo { index }, Some(a), Some(v)) => {
                let b = self.index_u8_buffer(index)?;
                Some(self.b.ssbo_atomic(b, a, at, v, comparator))
            }
            (Storage::Workgroup { .. }, None, None) => Some(self.b.shared_atomic_load(at, t)),
            (Storage::Workgroup { .. }, None, Some(v)) => {
                self.b.shared_atomic_store(at, v);
                None
            }
            (Storage::Workgroup { .. }, Some(a), Some(v)) => {
                let (args, n) = match comparator {
                    Some(c) => ([at, v, c], 3),
                    None => ([at, v, v], 2),
                };
                Some(
                    self.b
                        .op(lathe_ir::GenericOp::SharedAtomic { op: a }, &args[..n], t),
                )
            }
            _ => return Err(self.invalid("malformed atomic")),
        };
        if let (Some(id), Some(old)) = (result, old) {
            let rty = self.m.insts[self.at]
                .result_type
                .ok_or_else(|| self.invalid("no result type"))?;
            let want = *self.leaf_types(rty)?.first().unwrap_or(&t);
            let old = self.cast(old, want);
            self.set_leaves(id, vec![old]);
        }
        Ok(())
    }

    /// A leaf as `u32` bits (bool as 0 or 1).
    fn as_word(&mut self, v: Value) -> Value {
        if self.b.type_of(v) == Type::BOOL {
            let (one, zero) = (self.const_u32(1), self.const_u32(0));
            self.b.sel(v, one, zero)
        } else {
            self.cast(v, Type::U32)
        }
    }

    /// The inverse of [`Self::as_word`].
    fn word_as(&mut self, v: Value, t: Type) -> Value {
        if t == Type::BOOL {
            let zero = self.const_u32(0);
            self.b.ine(v, zero)
        } else {
            self.cast(v, t)
        }
    }

    /// The pointee type of a variable.
    fn var_type(&self, var: u32) -> Result<u32, Error> {
        let ptr_ty = self
            .m
            .def(var)
            .and_then(|d| self.m.insts[d].result_type)
            .ok_or_else(|| self.invalid("variable without a type"))?;
        match self.ty(ptr_ty)? {
            Ty::Pointer { pointee, .. } => Ok(*pointee),
            _ => Err(self.invalid("variable of a non-pointer type")),
        }
    }

    /// `base + k * stride` bytes; decorations of a malformed module can
    /// push that past what a 32-bit offset holds.
    fn byte_offset(&self, base: u32, k: u32, stride: u32) -> Result<u32, Error> {
        u32::try_from(u64::from(base) + u64::from(k) * u64::from(stride))
            .map_err(|_| self.invalid("buffer offset past 4 GiB"))
    }

    fn buffer_pos(&mut self, root: u32, path: &[Index]) -> Result<BufPos, Error> {
        let mut pos = BufPos {
            offset: 0,
            dynamic: None,
            ty: root,
            matrix: None,
            comp_stride: 4,
        };
        for &index in path {
            let ty = pos.ty;
            let next = self.step_type(ty, index)?;
            let stride = match self.ty(ty)?.clone() {
                Ty::Struct { .. } => {
                    let Index::Const(k) = index else {
                        return Err(self.invalid("struct indexed at run time"));
                    };
                    let d = self.m.member_deco(ty, k);
                    let off = d.and_then(|d| d.offset).ok_or_else(|| {
                        self.unsupported("buffer member without an Offset decoration")
                    })?;
                    pos.offset = self.byte_offset(pos.offset, 1, off)?;
                    pos.matrix = d.and_then(|d| d.matrix_stride.map(|s| (s, d.row_major)));
                    pos.ty = next;
                    continue;
                }
                Ty::Array { .. } | Ty::RuntimeArray { .. } => self
                    .m
                    .deco(ty)
                    .and_then(|d| d.array_stride)
                    .ok_or_else(|| {
                        self.unsupported("buffer array without an ArrayStride decoration")
                    })?,
                Ty::Matrix { .. } => {
                    let (stride, row_major) = pos.matrix.ok_or_else(|| {
                        self.unsupported("buffer matrix without a MatrixStride decoration")
                    })?;
                    if row_major {
                        pos.comp_stride = stride;
                        4
                    } else {
                        stride
                    }
                }
                Ty::Vector { .. } => pos.comp_stride,
                _ => return Err(self.invalid("access chain into a scalar")),
            };
            match index {
                Index::Const(k) => pos.offset = self.byte_offset(pos.offset, k, stride)?,
                Index::Dynamic(v) => {
                    let v = self.cast(v, Type::U32);
                    let s = self.const_u32(stride);
                    let scaled = self.b.imul(v, s);
                    pos.dynamic = Some(match pos.dynamic {
                        Some(d) => self.b.iadd(d, scaled),
                        None => scaled,
                    });
                }
            }
            pos.ty = next;
        }
        Ok(pos)
    }

    /// Byte offsets and scalar types of the 32-bit words of the value at
    /// `pos`, in leaf order (the run-time part, `pos.dynamic`, adds to all).
    fn buffer_words(&mut self, pos: BufPos, out: &mut Vec<(u32, Type)>) -> Result<(), Error> {
        if out.len() as u64 > crate::consts::MAX_LEAVES {
            return Err(self.unsupported("buffer value too large to scalarise"));
        }
        let ty = self.ty(pos.ty)?.clone();
        // `pos` moved by `k` elements of `stride` bytes, now of type `ty`.
        let at = |this: &Self, pos: BufPos, k: u32, stride: u32, ty: u32| {
            Ok::<_, Error>(BufPos {
                offset: this.byte_offset(pos.offset, k, stride)?,
                ty,
                ..pos
            })
        };
        match ty {
            Ty::Vector { elem, n } => {
                for k in 0..n {
                    self.buffer_words(at(self, pos, k, pos.comp_stride, elem)?, out)?;
                }
            }
            Ty::Matrix { column, n } => {
                let (stride, row_major) = pos.matrix.ok_or_else(|| {
                    self.unsupported("buffer matrix without a MatrixStride decoration")
                })?;
                for k in 0..n {
                    let col = if row_major {
                        BufPos {
                            comp_stride: stride,
                            ..at(self, pos, k, 4, column)?
                        }
                    } else {
                        BufPos {
                            comp_stride: 4,
                            ..at(self, pos, k, stride, column)?
                        }
                    };
                    self.buffer_words(col, out)?;
                }
            }
            Ty::Array { elem, len } => {
                let n = crate::consts::array_len(&self.c.values, len)
                    .map_err(|e| self.unsupported(e))?;
                let stride = self
                    .m
                    .deco(pos.ty)
                    .and_then(|d| d.array_stride)
                    .ok_or_else(|| {
                        self.unsupported("buffer array without an ArrayStride decoration")
                    })?;
                for k in 0..n {
                    self.buffer_words(at(self, pos, k, stride, elem)?, out)?;
                }
            }
            Ty::Struct { members } => {
                for (k, &mem) in members.iter().enumerate() {
                    let d = self.m.member_deco(pos.ty, k as u32);
                    let off = d.and_then(|d| d.offset).ok_or_else(|| {
                        self.unsupported("buffer member without an Offset decoration")
                    })?;
                    let matrix = d.and_then(|d| d.matrix_stride.map(|s| (s, d.row_major)));
                    let p = BufPos {
                        matrix,
                        comp_stride: 4,
                        ..at(self, pos, 1, off, mem)?
                    };
                    self.buffer_words(p, out)?;
                }
            }
            Ty::RuntimeArray { .. } => {
                return Err(self.unsupported("loading or storing a whole runtime array"));
            }
            other => {
                let Some(t) = crate::consts::scalar_type(&other) else {
                    return Err(self.unsupported(format!("buffer scalar of type {other:?}")));
                };
                if t.scalar.bits() != 32 {
                    return Err(self.unsupported(format!("{t} in a buffer")));
                }
                out.push((pos.offset, t));
            }
        }
        Ok(())
    }

    /// One 32-bit word of a buffer at `offset + dynamic` bytes.
    fn buffer_word(
        &mut self,
        storage: &Storage,
        offset: u32,
        dynamic: Option<Value>,
        t: Type,
    ) -> Result<Value, Error> {
        match storage {
            Storage::Ubo { index } => {
                let c = self.const_u32(offset);
                let at = match dynamic {
                    Some(d) if offset == 0 => d,
                    Some(d) => self.b.iadd(d, c),
                    None => c,
                };
                let binding = u8::try_from(*index)
                    .map_err(|_| self.unsupported("more than 256 uniform buffers"))?;
                Ok(self.b.load_ubo(binding, at, t))
            }
            Storage::PushConstant => {
                let words = dynamic.map(|d| {
                    let two = self.const_u32(2);
                    self.b.shr(d, two)
                });
                Ok(self.b.load_uniform(offset / 4, words, t))
            }
            Storage::Ssbo { index } => {
                let at = self.byte_address(offset, dynamic);
                let b = self.index_u8_buffer(*index)?;
                Ok(self.b.load_ssbo(b, at, t))
            }
            _ => Err(self.invalid("not a buffer")),
        }
    }

    /// A `GenericOp` load of one input leaf.
    pub(super) fn load_input_leaf(
        &mut self,
        leaf: super::io::IoLeaf,
        ty: Type,
    ) -> Result<Value, Error> {
        match leaf.slot {
            Some(slot) => Ok(self.b.op(
                GenericOp::LoadInput {
                    slot,
                    comp: leaf.comp,
                    interp: leaf.interp,
                },
                &[],
                ty,
            )),
            None => self.builtin_input(leaf, ty),
        }
    }
}
