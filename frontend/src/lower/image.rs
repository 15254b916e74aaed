//! Textures, images and samplers.

use super::{Lowerer, Val};
use crate::error::Error;
use crate::module::Ty;
use lathe_ir::{Scalar, Type};
use rspirv::spirv::{Dim, Op};

impl Lowerer<'_, '_, '_> {
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
            Op::ImageSampleImplicitLod => {
                let id = inst.result_id.ok_or_else(|| self.invalid("no result id"))?;
                let Val::SampledImage { image, sampler, ty } = self.get(self.id(0)?)? else {
                    return Err(self.invalid("sampling a non-sampled image"));
                };
                let Ty::Image(img) = self.ty(ty)?.clone() else {
                    return Err(self.invalid("sampled image of a non-image type"));
                };
                if inst.operands.len() > 2 {
                    return Err(self.unsupported("image operands (bias, offsets, ...)"));
                }
                if img.dim != Dim::Dim2D || img.arrayed || img.depth == 1 {
                    return Err(self.unsupported(format!(
                        "sampling a {:?} image (arrayed {}, depth {})",
                        img.dim, img.arrayed, img.depth
                    )));
                }
                if !matches!(self.ty(img.sampled_type)?, Ty::Float { bits: 32 }) {
                    return Err(self.unsupported("sampling an integer texture"));
                }
                let coord = self.leaves(self.id(1)?)?;
                if coord.len() < 2 {
                    return Err(self.invalid("texture coordinate with too few components"));
                }
                let (t, s) = (
                    u8::try_from(image).map_err(|_| self.unsupported("texture index above 255"))?,
                    u8::try_from(sampler)
                        .map_err(|_| self.unsupported("sampler index above 255"))?,
                );
                let c = self.b.collect(&coord[..2]);
                let _ = Type::vector(Scalar::F32, 2);
                let texel = self.b.sample(t, s, c);
                self.set_leaves(id, texel.to_vec());
                Ok(())
            }
            _ => Err(self.unsupported_op()),
        }
    }
}
