//! Texture operands converted to the forms the TEX family's staging
//! registers hold (generic IR, before selection).
//!
//! A Valhall texture instruction reads everything but its handle from
//! one group of consecutive staging registers, in the order of Mesa's
//! `enum valhall_tex_sreg` (`bi_emit_tex_valhall` in
//! `bifrost_compile.c`), each register only when used: the position
//! (x, y, and z in 3D), the array layer as an unsigned integer, the
//! depth-compare reference, one word of packed texel offsets (and a
//! fetch's LOD in its top byte), and the LOD or bias of a sample in
//! signed 8.8 fixed point. The semantics of the TEX family in
//! `isa/specs/mali/semantics.isa` read that layout back, so `--verify`
//! checks it. [`stage_textures`] rewrites the operands in place, keeping
//! the generic form valid (each converted value's bits in an operand of
//! the type the opcode takes): a sample's or gather's layer lane, a
//! sample's LOD or bias, and a fetch's LOD (or a multisampled fetch's
//! sample index) operand, which becomes the offsets word (left alone
//! when it is the constant 0 and there is no offset: no word). The rules of `valhall.rules` then `collect` the
//! operands into the staging group. The rewritten copy is only
//! selected, never interpreted.
//!
//! The conversions are Mesa's: the layer rounded to nearest even and
//! converted (`bi_emit_texc_array_index`, GL ES 3.2 section 8.14.2), the
//! LOD scaled by 1/16, clamped to [-1, 1] and by 4096 to an integer
//! (`bi_emit_texc_lod_88`), each offset's low byte in its lane
//! (`bi_emit_valhall_offsets`).

use lathe_ir::{Dim, GenericOp, Inst, LodMode, Op, Opcode, Shader, Type, Value};
use lathe_isa::select::SelectError;

/// Converts the operands of every sample, gather and texel fetch of
/// `shader` to their staging forms; an `unsupported:` error names a form
/// the backend does not compile.
pub fn stage_textures(shader: &mut Shader<'_, GenericOp>) -> Result<(), SelectError> {
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let mut insts = Vec::with_capacity(old.len());
        for i in old {
            if let Op::Opcode(op) = shader.inst(i).op {
                let mut stage = Stage {
                    shader: &mut *shader,
                    insts: &mut insts,
                };
                stage.texture(i, op)?;
            }
            insts.push(i);
        }
        shader.set_block_insts(b, &insts);
    }
    Ok(())
}

/// Rewrites every sample with explicit gradients as a sample at an
/// explicit LOD computed from them, as Mesa's Valhall path does
/// (`nir_lower_tex` with `lower_txd`, its `lower_gradient`; panfrost and
/// panvk both set it, so the TEX family's gradient descriptors are not
/// used): each gradient scaled by the level-0 size (a `texture_size`
/// query, which the driver's pushed size words answer), ρ the larger of
/// the two lengths and the LOD `log2(ρ)`. Runs before the texture
/// handles are assigned (the query names the texture). Cube maps project
/// their gradients on the face first in Mesa (`lower_gradient_cube_map`),
/// which is not done here: `unsupported:`.
pub fn lower_gradients(shader: &mut Shader<'_, GenericOp>) -> Result<(), SelectError> {
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let mut insts = Vec::with_capacity(old.len());
        for i in old {
            if let Op::Opcode(
                op @ GenericOp::Sample {
                    texture,
                    shape,
                    lod: LodMode::Grad,
                    ..
                },
            ) = shader.inst(i).op
            {
                if shape.dim == Dim::Cube {
                    let mut text = op.name().to_string();
                    let _ = op.write_attrs(None, &mut text);
                    return Err(unsupported(format!(
                        "{text}: gradients of a cube map (projected on the face)"
                    )));
                }
                let mut stage = Stage {
                    shader: &mut *shader,
                    insts: &mut insts,
                };
                stage.gradient_lod(i, op, texture, shape);
            }
            insts.push(i);
        }
        shader.set_block_insts(b, &insts);
    }
    Ok(())
}

fn unsupported(what: String) -> SelectError {
    SelectError::Unsupported(format!("{what} (valhall texture staging)"))
}

/// The instructions built before one texture instruction.
struct Stage<'s, 'a, 'b> {
    shader: &'s mut Shader<'a, GenericOp>,
    insts: &'b mut Vec<Inst>,
}

impl Stage<'_, '_, '_> {
    fn emit(&mut self, op: Op<GenericOp>, args: &[Value], ty: Type) -> Value {
        let i = self.shader.create_inst(op, args, &[], None, Some(ty));
        self.insts.push(i);
        self.shader.inst(i).result.expect("created with a result")
    }

    fn generic(&mut self, op: GenericOp, args: &[Value], ty: Type) -> Value {
        self.emit(Op::Opcode(op), args, ty)
    }

    fn constant(&mut self, bits: u32, ty: Type) -> Value {
        self.generic(GenericOp::Const { bits }, &[], ty)
    }

    /// The lanes of vector `v` (itself when scalar).
    fn lanes(&mut self, v: Value) -> Vec<Value> {
        let ty = self.shader.value_type(v);
        if ty.lanes <= 1 {
            return vec![v];
        }
        let def = self.shader.value_def(v);
        if self.shader.inst(def).op == Op::Collect {
            return self.shader.inst(def).args.to_vec();
        }
        let scalar = Type::scalar(ty.scalar);
        (0..ty.lanes)
            .map(|lane| self.emit(Op::Split { lane }, &[v], scalar))
            .collect()
    }

    /// A float layer rounded to nearest even, as an unsigned integer (a
    /// negative one saturates to 0, the first layer).
    fn layer(&mut self, l: Value) -> Value {
        let r = self.generic(GenericOp::RoundEven, &[l], Type::F32);
        self.generic(GenericOp::Cvt, &[r], Type::U32)
    }

    /// An f32 LOD or bias as signed 8.8 fixed point in the low half.
    fn lod88(&mut self, l: Value) -> Value {
        let sixteenth = self.constant(0.0625f32.to_bits(), Type::F32);
        let scaled = self.generic(GenericOp::FMul, &[l, sixteenth], Type::F32);
        let lo = self.constant((-1.0f32).to_bits(), Type::F32);
        let hi = self.constant(1.0f32.to_bits(), Type::F32);
        let clamped = self.generic(GenericOp::FMax, &[scaled, lo], Type::F32);
        let clamped = self.generic(GenericOp::FMin, &[clamped, hi], Type::F32);
        let scale = self.constant(4096.0f32.to_bits(), Type::F32);
        let fixed = self.generic(GenericOp::FMul, &[clamped, scale], Type::F32);
        let int = self.generic(GenericOp::Cvt, &[fixed], Type::I32);
        let mask = self.constant(0xffff, Type::I32);
        let low = self.generic(GenericOp::And, &[int, mask], Type::I32);
        self.cast(low, Type::U32)
    }

    /// The offsets word: the low byte of each offset lane, a sample
    /// index in the third byte (Mesa's `bi_emit_valhall_offsets`), then
    /// `lod` (an integer) in the top byte.
    fn offsets(
        &mut self,
        offset: Option<Value>,
        sample: Option<Value>,
        lod: Option<Value>,
    ) -> Value {
        let mut word = self.constant(0, Type::U32);
        let mut parts: Vec<(Value, u32)> = Vec::new();
        if let Some(o) = offset {
            for (k, lane) in self.lanes(o).into_iter().enumerate() {
                parts.push((lane, 8 * k as u32));
            }
        }
        if let Some(k) = sample {
            parts.push((k, 16));
        }
        if let Some(l) = lod {
            parts.push((l, 24));
        }
        for (v, shift) in parts {
            let v = self.cast(v, Type::U32);
            let byte = self.constant(0xff, Type::U32);
            let low = self.generic(GenericOp::And, &[v, byte], Type::U32);
            let by = self.constant(shift, Type::U32);
            let placed = self.generic(GenericOp::Shl, &[low, by], Type::U32);
            word = self.generic(GenericOp::Or, &[word, placed], Type::U32);
        }
        word
    }

    /// Whether `v` is the constant 0.
    fn is_zero(&self, v: Value) -> bool {
        let def = self.shader.value_def(v);
        matches!(
            self.shader.inst(def).op,
            Op::Opcode(GenericOp::Const { bits: 0 })
        )
    }

    /// `v`'s bits as type `ty`.
    fn cast(&mut self, v: Value, ty: Type) -> Value {
        if self.shader.value_type(v) == ty {
            return v;
        }
        self.generic(
            GenericOp::Mov {
                abs: false,
                neg: false,
            },
            &[v],
            ty,
        )
    }

    /// Sample `i` (`op`, with gradients) at the LOD its gradients give
    /// (see [`lower_gradients`]).
    fn gradient_lod(&mut self, i: Inst, op: GenericOp, texture: u8, shape: lathe_ir::TexShape) {
        let GenericOp::Sample {
            sampler,
            offset,
            compare,
            ..
        } = op
        else {
            return;
        };
        let mut args = self.shader.inst(i).args.to_vec();
        let at = 1 + usize::from(compare);
        let (Some(&ddx), Some(&ddy)) = (args.get(at), args.get(at + 1)) else {
            return;
        };
        let level = self.constant(0, Type::I32);
        let size = self.generic(
            GenericOp::TextureSize { texture, shape },
            &[level],
            Type {
                scalar: lathe_ir::Scalar::I32,
                lanes: shape.size_coords(),
            },
        );
        let size = self.lanes(size);
        let rho = |d: Value, this: &mut Self| {
            let mut sum: Option<Value> = None;
            for (k, lane) in this.lanes(d).into_iter().enumerate() {
                let extent = this.generic(GenericOp::Cvt, &[size[k]], Type::F32);
                let scaled = this.generic(GenericOp::FMul, &[lane, extent], Type::F32);
                let square = this.generic(GenericOp::FMul, &[scaled, scaled], Type::F32);
                sum = Some(match sum {
                    Some(s) => this.generic(GenericOp::FAdd, &[s, square], Type::F32),
                    None => square,
                });
            }
            let sum = sum.unwrap_or_else(|| this.constant(0, Type::F32));
            this.generic(GenericOp::Sqrt, &[sum], Type::F32)
        };
        let (rx, ry) = (rho(ddx, self), rho(ddy, self));
        let larger = self.generic(GenericOp::FMax, &[rx, ry], Type::F32);
        let lod = self.generic(GenericOp::Log2, &[larger], Type::F32);
        args.splice(at..at + 2, [lod]);
        self.shader.inst_mut(i).op = Op::Opcode(GenericOp::Sample {
            texture,
            sampler,
            shape,
            lod: LodMode::Explicit,
            offset,
            compare,
        });
        self.shader.set_args(i, &args);
    }

    /// Rewrites the operands of texture instruction `i` in place.
    fn texture(&mut self, i: Inst, op: GenericOp) -> Result<(), SelectError> {
        let mut args = self.shader.inst(i).args.to_vec();
        let name = || {
            let mut text = op.name().to_string();
            let _ = op.write_attrs(None, &mut text);
            text
        };
        let shape = match op {
            GenericOp::Sample {
                shape, lod, offset, ..
            } => {
                if lod == LodMode::Grad {
                    return Err(unsupported(format!(
                        "{}: explicit gradients not lowered (`lower_gradients`)",
                        name()
                    )));
                }
                if offset {
                    return Err(unsupported(format!(
                        "{}: texel offsets on a sample (the simulator's texture model has none)",
                        name()
                    )));
                }
                shape
            }
            GenericOp::Gather {
                shape,
                offset,
                compare,
                ..
            } => {
                if offset || compare {
                    return Err(unsupported(format!(
                        "{}: a gather with offsets or a reference (the simulator's texture model has neither)",
                        name()
                    )));
                }
                shape
            }
            GenericOp::TexelFetch { shape, .. } => shape,
            _ => return Ok(()),
        };
        // A cube sample's coordinates are projected on a face by the
        // rules (the face word and s, t: `valhall.rules`, "Cube maps");
        // its layer is converted here as an array's.
        let cube_sample = shape.dim == Dim::Cube && matches!(op, GenericOp::Sample { .. });
        if matches!(shape.dim, Dim::Cube | Dim::D1) && !cube_sample {
            return Err(unsupported(format!(
                "{}: 1D textures, cube gathers and fetches",
                name()
            )));
        }
        match op {
            GenericOp::Sample { lod, compare, .. } => {
                if shape.array {
                    args[0] = self.with_integer_layer(args[0]);
                }
                if matches!(lod, LodMode::Bias | LodMode::Explicit) {
                    let k = 1 + usize::from(compare);
                    let fixed = self.lod88(args[k]);
                    args[k] = self.cast(fixed, Type::F32);
                }
            }
            GenericOp::Gather { .. } if shape.array => {
                args[0] = self.with_integer_layer(args[0]);
            }
            GenericOp::TexelFetch { offset, .. } => {
                // A multisampled fetch's operand is the sample index (its
                // LOD is 0).
                let offsets = offset.then(|| args[2]);
                if offsets.is_some() || !self.is_zero(args[1]) {
                    let (lod, sample) = match shape.ms {
                        true => (None, Some(args[1])),
                        false => (Some(args[1]), None),
                    };
                    let word = self.offsets(offsets, sample, lod);
                    args[1] = self.cast(word, Type::I32);
                }
            }
            _ => {}
        }
        self.shader.set_args(i, &args);
        Ok(())
    }

    /// Coordinate vector `c` with its last lane (the layer) the bits of
    /// the rounded unsigned layer.
    fn with_integer_layer(&mut self, c: Value) -> Value {
        let ty = self.shader.value_type(c);
        let mut lanes = self.lanes(c);
        let Some(layer) = lanes.pop() else {
            return c;
        };
        let int = self.layer(layer);
        lanes.push(self.cast(int, Type::F32));
        self.emit(Op::Collect, &lanes, ty)
    }
}
