//! Textures, storage images and samplers: sampling (implicit, bias,
//! explicit LOD, gradients, offsets, depth compare, projection), gather,
//! texel fetch, size and level queries, image load and store.

use super::{Lowerer, Val};
use crate::error::Error;
use crate::module::{ImageTy, Ty};
use lathe_ir::builder::{Lod, SampleOperands};
use lathe_ir::{Dim, Scalar, TexShape, Type, Value};
use rspirv::dr::Operand;
use rspirv::spirv::{self, ImageOperands, Op};

/// The optional operands after an `ImageOperands` mask.
#[derive(Default)]
struct Extra {
    bias: Option<u32>,
    lod: Option<u32>,
    grad: Option<(u32, u32)>,
    offset: Option<u32>,
    sample: Option<u32>,
}

impl Lowerer<'_, '_, '_> {
    /// The IR shape and texel scalar of an image type.
    fn tex_shape(&self, img: &ImageTy) -> Result<(TexShape, Scalar), Error> {
        let dim = match img.dim {
            spirv::Dim::Dim1D => Dim::D1,
            spirv::Dim::Dim2D => Dim::D2,
            spirv::Dim::Dim3D => Dim::D3,
            spirv::Dim::DimCube => Dim::Cube,
            other => return Err(self.unsupported(format!("{other:?} images"))),
        };
        let texel = match self.ty(img.sampled_type)? {
            Ty::Float { bits: 32 } => Scalar::F32,
            Ty::Int {
                bits: 32,
                signed: true,
            } => Scalar::I32,
            Ty::Int {
                bits: 32,
                signed: false,
            } => Scalar::U32,
            other => return Err(self.unsupported(format!("images of {other:?} texels"))),
        };
        if img.multisampled && (dim != Dim::D2) {
            return Err(self.invalid("multisampled image that is not 2D"));
        }
        Ok((
            TexShape {
                dim,
                array: img.arrayed,
                ms: img.multisampled,
            },
            texel,
        ))
    }

    fn image_type(&self, ty: u32) -> Result<ImageTy, Error> {
        match self.ty(ty)? {
            Ty::Image(img) => Ok(*img),
            _ => Err(self.invalid("not an image type")),
        }
    }

    /// Operands from index `k` on: an `ImageOperands` mask and its ids.
    fn image_operands(&self, k: usize) -> Result<Extra, Error> {
        let inst = &self.m.insts[self.at];
        let Some(Operand::ImageOperands(mask)) = inst.operands.get(k) else {
            return Ok(Extra::default());
        };
        let mut next = k + 1;
        let mut take = |this: &Self| -> Result<u32, Error> {
            let id = this.id(next)?;
            next += 1;
            Ok(id)
        };
        let mut e = Extra::default();
        let supported = ImageOperands::BIAS
            | ImageOperands::LOD
            | ImageOperands::GRAD
            | ImageOperands::CONST_OFFSET
            | ImageOperands::OFFSET
            | ImageOperands::SAMPLE
            | ImageOperands::NON_PRIVATE_TEXEL
            | ImageOperands::VOLATILE_TEXEL
            | ImageOperands::ZERO_EXTEND
            | ImageOperands::SIGN_EXTEND
            | ImageOperands::NONTEMPORAL;
        if !supported.contains(*mask) {
            return Err(self.unsupported(format!("image operands {mask:?}")));
        }
        // The ids follow the mask in bit order.
        if mask.contains(ImageOperands::BIAS) {
            e.bias = Some(take(self)?);
        }
        if mask.contains(ImageOperands::LOD) {
            e.lod = Some(take(self)?);
        }
        if mask.contains(ImageOperands::GRAD) {
            e.grad = Some((take(self)?, take(self)?));
        }
        if mask.contains(ImageOperands::CONST_OFFSET) {
            e.offset = Some(take(self)?);
        }
        if mask.contains(ImageOperands::OFFSET) {
            e.offset = Some(take(self)?);
        }
        if mask.contains(ImageOperands::SAMPLE) {
            e.sample = Some(take(self)?);
        }
        Ok(e)
    }

    fn index_u8(&self, index: u32, what: &str) -> Result<u8, Error> {
        u8::try_from(index).map_err(|_| self.unsupported(format!("{what} index {index} above 255")))
    }

    /// The first `n` leaves of `id` as `ty` lanes, collected when `n > 1`.
    fn lanes(&mut self, id: u32, n: u8, ty: Type) -> Result<Value, Error> {
        let l = self.leaves(id)?;
        if l.len() < n as usize || n == 0 {
            return Err(self.invalid("image coordinate or offset with too few components"));
        }
        let parts: Vec<Value> = l[..n as usize].iter().map(|&v| self.cast(v, ty)).collect();
        if parts.iter().any(|&p| self.b.type_of(p) != ty) {
            return Err(self.invalid("image coordinate or offset of the wrong type"));
        }
        Ok(if n == 1 {
            parts[0]
        } else {
            self.b.collect(&parts)
        })
    }

    /// Split a texel vector into the result's leaves.
    fn texel_result(&mut self, texel: Value, count: usize) -> Result<(), Error> {
        let id = self.m.insts[self.at]
            .result_id
            .ok_or_else(|| self.invalid("no result id"))?;
        let rty = self.m.insts[self.at]
            .result_type
            .ok_or_else(|| self.invalid("no result type"))?;
        let tys = self.leaf_types(rty)?;
        if tys.len() > count {
            return Err(self.invalid("image result wider than the texel"));
        }
        let mut out = Vec::with_capacity(tys.len());
        for (k, &t) in tys.iter().enumerate() {
            let v = if count == 1 {
                texel
            } else {
                self.b.split(texel, k as u8)
            };
            out.push(self.cast(v, t));
        }
        self.set_leaves(id, out);
        Ok(())
    }

    fn sample_op(&mut self, op: Op) -> Result<(), Error> {
        let Val::SampledImage { image, sampler, ty } = self.get(self.id(0)?)? else {
            return Err(self.invalid("sampling a non-sampled image"));
        };
        let img = self.image_type(ty)?;
        let (shape, texel) = self.tex_shape(&img)?;
        if shape.ms {
            return Err(self.invalid("sampling a multisampled image"));
        }
        let proj = matches!(
            op,
            Op::ImageSampleProjImplicitLod
                | Op::ImageSampleProjExplicitLod
                | Op::ImageSampleProjDrefImplicitLod
                | Op::ImageSampleProjDrefExplicitLod
        );
        let dref = matches!(
            op,
            Op::ImageSampleDrefImplicitLod
                | Op::ImageSampleDrefExplicitLod
                | Op::ImageSampleProjDrefImplicitLod
                | Op::ImageSampleProjDrefExplicitLod
        );
        let n = shape.sample_coords();
        let coord_id = self.id(1)?;
        let coord = if proj {
            // Divide by the last used component.
            let l = self.leaves(coord_id)?;
            if l.len() < n as usize + 1 || shape.array || shape.dim == Dim::Cube {
                return Err(
                    self.invalid("projective sample of a cube or array, or a short coordinate")
                );
            }
            let q = l[n as usize];
            let r = self.b.rcp(q);
            let parts: Vec<Value> = l[..n as usize].iter().map(|&c| self.b.fmul(c, r)).collect();
            if n == 1 {
                parts[0]
            } else {
                self.b.collect(&parts)
            }
        } else {
            self.lanes(coord_id, n, Type::F32)?
        };
        let (compare, extra_at) = if dref {
            (Some(self.scalar(self.id(2)?)?), 3)
        } else {
            (None, 2)
        };
        let e = self.image_operands(extra_at)?;
        let lod = if let Some(b) = e.bias {
            Lod::Bias(self.scalar(b)?)
        } else if let Some(l) = e.lod {
            Lod::Explicit(self.scalar(l)?)
        } else if let Some((dx, dy)) = e.grad {
            let g = shape.dim.sample_coords();
            Lod::Grad(self.lanes(dx, g, Type::F32)?, self.lanes(dy, g, Type::F32)?)
        } else {
            Lod::Implicit
        };
        if e.sample.is_some() {
            return Err(self.invalid("Sample operand on a sampling instruction"));
        }
        let offset = match e.offset {
            Some(o) => Some(self.lanes(o, shape.offset_coords(), Type::I32)?),
            None => None,
        };
        let operands = SampleOperands {
            coord,
            compare,
            lod,
            offset,
        };
        let (t, s) = (
            self.index_u8(image, "texture")?,
            self.index_u8(sampler, "sampler")?,
        );
        let v = self.b.sample_with(t, s, shape, texel, &operands);
        self.texel_result(v, if dref { 1 } else { 4 })
    }

    pub(super) fn image_op(&mut self) -> Result<(), Error> {
        let inst = &self.m.insts[self.at];
        let op = inst.class.opcode;
        match op {
            Op::SampledImage => {
                let id = inst.result_id.ok_or_else(|| self.invalid("no result id"))?;
                let (Val::Image { index, ty }, Val::Sampler { index: sampler }) =
                    (self.get(self.id(0)?)?, self.get(self.id(1)?)?)
                else {
                    return Err(self.invalid("OpSampledImage of a non-image or non-sampler"));
                };
                self.set(
                    id,
                    Val::SampledImage {
                        image: index,
                        sampler,
                        ty,
                    },
                );
                Ok(())
            }
            Op::Image => {
                let id = inst.result_id.ok_or_else(|| self.invalid("no result id"))?;
                let Val::SampledImage { image, ty, .. } = self.get(self.id(0)?)? else {
                    return Err(self.invalid("OpImage of a non-sampled image"));
                };
                self.set(id, Val::Image { index: image, ty });
                Ok(())
            }
            Op::ImageSampleImplicitLod
            | Op::ImageSampleExplicitLod
            | Op::ImageSampleDrefImplicitLod
            | Op::ImageSampleDrefExplicitLod
            | Op::ImageSampleProjImplicitLod
            | Op::ImageSampleProjExplicitLod
            | Op::ImageSampleProjDrefImplicitLod
            | Op::ImageSampleProjDrefExplicitLod => self.sample_op(op),
            Op::ImageGather | Op::ImageDrefGather => {
                let Val::SampledImage { image, sampler, ty } = self.get(self.id(0)?)? else {
                    return Err(self.invalid("gathering from a non-sampled image"));
                };
                let img = self.image_type(ty)?;
                let (shape, texel) = self.tex_shape(&img)?;
                let coord = self.lanes(self.id(1)?, shape.sample_coords(), Type::F32)?;
                let (comp, compare) = if op == Op::ImageGather {
                    let c = self
                        .const_value(self.id(2)?)
                        .ok_or_else(|| self.invalid("gather component is not a constant"))?;
                    (c, None)
                } else {
                    (0, Some(self.scalar(self.id(2)?)?))
                };
                if comp > 3 {
                    return Err(self.invalid("gather component above 3"));
                }
                let e = self.image_operands(3)?;
                let offset = match e.offset {
                    Some(o) => Some(self.lanes(o, shape.offset_coords(), Type::I32)?),
                    None => None,
                };
                let (t, s) = (
                    self.index_u8(image, "texture")?,
                    self.index_u8(sampler, "sampler")?,
                );
                let v = self
                    .b
                    .gather(t, s, shape, comp as u8, texel, coord, compare, offset);
                self.texel_result(v, 4)
            }
            Op::ImageFetch => {
                let Val::Image { index, ty } = self.get(self.id(0)?)? else {
                    return Err(self.invalid("fetching from a non-image"));
                };
                let img = self.image_type(ty)?;
                let (shape, texel) = self.tex_shape(&img)?;
                let coord = self.lanes(self.id(1)?, shape.texel_coords(), Type::I32)?;
                let e = self.image_operands(2)?;
                let lod_or_sample = match (shape.ms, e.lod, e.sample) {
                    (false, Some(l), _) => self.scalar(l)?,
                    (false, None, _) => self.constant(Type::I32, 0),
                    (true, _, Some(s)) => self.scalar(s)?,
                    (true, _, None) => {
                        return Err(self.invalid("multisampled fetch without a sample"));
                    }
                };
                let lod_or_sample = self.cast(lod_or_sample, Type::I32);
                let offset = match e.offset {
                    Some(o) => Some(self.lanes(o, shape.offset_coords(), Type::I32)?),
                    None => None,
                };
                let t = self.index_u8(index, "texture")?;
                let v = self
                    .b
                    .texel_fetch(t, shape, texel, coord, lod_or_sample, offset);
                self.texel_result(v, 4)
            }
            Op::ImageQuerySizeLod | Op::ImageQuerySize => {
                let image = match self.get(self.id(0)?)? {
                    Val::Image { index, ty } => (index, ty),
                    Val::SampledImage { image, ty, .. } => (image, ty),
                    _ => return Err(self.invalid("size query of a non-image")),
                };
                let img = self.image_type(image.1)?;
                let (shape, _) = self.tex_shape(&img)?;
                let n = shape.size_coords() as usize;
                let v = if img.sampled == 2 {
                    let i = self.index_u8(image.0, "image")?;
                    self.b.image_size(i, shape)
                } else {
                    let lod = if op == Op::ImageQuerySizeLod {
                        let l = self.scalar(self.id(1)?)?;
                        Some(self.cast(l, Type::I32))
                    } else if shape.ms {
                        None
                    } else {
                        Some(self.constant(Type::I32, 0))
                    };
                    let t = self.index_u8(image.0, "texture")?;
                    self.b.texture_size(t, shape, lod)
                };
                self.texel_result(v, n)
            }
            Op::ImageQueryLevels => {
                let (index, _) = match self.get(self.id(0)?)? {
                    Val::Image { index, ty } => (index, ty),
                    Val::SampledImage { image, ty, .. } => (image, ty),
                    _ => return Err(self.invalid("level query of a non-image")),
                };
                let t = self.index_u8(index, "texture")?;
                let v = self.b.texture_levels(t);
                self.texel_result(v, 1)
            }
            Op::ImageRead | Op::ImageWrite => {
                let Val::Image { index, ty } = self.get(self.id(0)?)? else {
                    return Err(self.invalid("image access to a non-image"));
                };
                let img = self.image_type(ty)?;
                if img.dim == spirv::Dim::DimSubpassData {
                    return self.subpass_load(index, img);
                }
                let (shape, texel) = self.tex_shape(&img)?;
                let coord = self.lanes(self.id(1)?, shape.texel_coords(), Type::I32)?;
                let i = self.index_u8(index, "image")?;
                let value_at = if op == Op::ImageWrite { Some(2) } else { None };
                let e = self.image_operands(if op == Op::ImageWrite { 3 } else { 2 })?;
                let sample = match (shape.ms, e.sample) {
                    (true, Some(s)) => {
                        let s = self.scalar(s)?;
                        Some(self.cast(s, Type::I32))
                    }
                    (true, None) => {
                        return Err(self.invalid("multisampled image access without a sample"));
                    }
                    (false, _) => None,
                };
                match value_at {
                    None => {
                        let v = self.b.image_load(i, shape, texel, coord, sample);
                        self.texel_result(v, 4)
                    }
                    Some(k) => {
                        let l = self.leaves(self.id(k)?)?;
                        if l.is_empty() || l.len() > 4 {
                            return Err(self.invalid("image store of a bad texel"));
                        }
                        // Missing lanes are written as zero (the format ignores them).
                        let ty = Type::scalar(texel);
                        let mut parts: Vec<Value> = l.iter().map(|&v| self.cast(v, ty)).collect();
                        while parts.len() < 4 {
                            parts.push(self.constant(ty, 0));
                        }
                        let v = self.b.collect(&parts);
                        self.b.image_store(i, shape, coord, sample, v);
                        Ok(())
                    }
                }
            }
            Op::ImageTexelPointer => {
                let id = self.m.insts[self.at]
                    .result_id
                    .ok_or_else(|| self.invalid("no result id"))?;
                let ptr = self.pointer_of_image(self.id(0)?)?;
                let Val::Image { index, ty } = ptr else {
                    return Err(self.invalid("texel pointer into a non-image"));
                };
                let img = self.image_type(ty)?;
                let (shape, _) = self.tex_shape(&img)?;
                let coord = self.lanes(self.id(1)?, shape.texel_coords(), Type::I32)?;
                let sample = if shape.ms {
                    let s = self.scalar(self.id(2)?)?;
                    Some(self.cast(s, Type::I32))
                } else {
                    None
                };
                let image = self.index_u8(index, "image")?;
                self.set(
                    id,
                    Val::TexelPtr {
                        image,
                        shape,
                        coord,
                        sample,
                    },
                );
                Ok(())
            }
            Op::DPdx
            | Op::DPdy
            | Op::DPdxFine
            | Op::DPdyFine
            | Op::DPdxCoarse
            | Op::DPdyCoarse
            | Op::Fwidth
            | Op::FwidthFine
            | Op::FwidthCoarse => self.derivative(op),
            Op::DemoteToHelperInvocation => {
                self.b.op_void(lathe_ir::GenericOp::Demote, &[]);
                Ok(())
            }
            Op::IsHelperInvocationEXT => {
                let id = self.m.insts[self.at]
                    .result_id
                    .ok_or_else(|| self.invalid("no result id"))?;
                let v = self
                    .b
                    .load_sysval(lathe_ir::Sysval::HelperInvocation, 0, Type::BOOL);
                self.set_leaves(id, vec![v]);
                Ok(())
            }
            _ => self.buffer_op(),
        }
    }

    /// An input-attachment read: a texel fetch at the fragment's pixel
    /// plus the instruction's (constant) offset, from the same sample.
    fn subpass_load(&mut self, index: u32, img: ImageTy) -> Result<(), Error> {
        if self.stage != lathe_ir::Stage::Fragment
            || self.m.insts[self.at].class.opcode != Op::ImageRead
        {
            return Err(self.invalid("input attachments are read in fragment shaders"));
        }
        let texel = match self.ty(img.sampled_type)? {
            Ty::Float { bits: 32 } => Scalar::F32,
            Ty::Int {
                bits: 32,
                signed: true,
            } => Scalar::I32,
            Ty::Int {
                bits: 32,
                signed: false,
            } => Scalar::U32,
            other => return Err(self.unsupported(format!("input attachments of {other:?}"))),
        };
        if img.arrayed {
            return Err(self.unsupported("arrayed (multiview) input attachments"));
        }
        let offset = self.leaves(self.id(1)?)?;
        if offset.len() < 2 {
            return Err(self.invalid("input attachment coordinate with too few components"));
        }
        let mut parts = Vec::with_capacity(2);
        for (k, &o) in offset[..2].iter().enumerate() {
            let f = self
                .b
                .load_sysval(lathe_ir::Sysval::FragCoord, k as u8, Type::F32);
            let i = self.b.cvt(f, Type::I32);
            let o = self.cast(o, Type::I32);
            parts.push(self.b.iadd(i, o));
        }
        let coord = self.b.collect(&parts);
        let shape = TexShape {
            dim: Dim::D2,
            array: false,
            ms: img.multisampled,
        };
        let lod_or_sample = if img.multisampled {
            self.b.load_sysval(lathe_ir::Sysval::SampleId, 0, Type::I32)
        } else {
            self.constant(Type::I32, 0)
        };
        let t = self.index_u8(index, "texture")?;
        let v = self
            .b
            .texel_fetch(t, shape, texel, coord, lod_or_sample, None);
        self.texel_result(v, 4)
    }

    fn derivative(&mut self, op: Op) -> Result<(), Error> {
        use lathe_ir::DerivMode as M;
        let mode = match op {
            Op::DPdxFine | Op::DPdyFine | Op::FwidthFine => M::Fine,
            Op::DPdxCoarse | Op::DPdyCoarse | Op::FwidthCoarse => M::Coarse,
            _ => M::Default,
        };
        let id = self.m.insts[self.at]
            .result_id
            .ok_or_else(|| self.invalid("no result id"))?;
        let a = self.leaves(self.id(0)?)?;
        let mut out = Vec::with_capacity(a.len());
        for &x in a.iter() {
            out.push(match op {
                Op::DPdx | Op::DPdxFine | Op::DPdxCoarse => self.b.ddx(x, mode),
                Op::DPdy | Op::DPdyFine | Op::DPdyCoarse => self.b.ddy(x, mode),
                _ => {
                    let dx = self.b.ddx(x, mode);
                    let dy = self.b.ddy(x, mode);
                    let (ax, ay) = (self.b.fabs(dx), self.b.fabs(dy));
                    self.b.fadd(ax, ay)
                }
            });
        }
        self.set_leaves(id, out);
        Ok(())
    }
}
