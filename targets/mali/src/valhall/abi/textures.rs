//! Texture and sampler handles: which descriptors a texture instruction
//! names, and where the instruction finds the handle.
//!
//! A Valhall texture instruction reads a resource handle in source `A`.
//! Lathe uses the form Mesa's Valhall backend emits for constant indices
//! (`.wide_indices` clear; `bi_emit_tex_valhall` / `va_tex_handle` in
//! Mesa's `bifrost_compile.c`): one 32-bit word, the texture's table in
//! bits 27..=31 and its index in 16..=26, the sampler's table in 11..=15
//! and its index in 0..=10. The semantics of the texture instructions in
//! `isa/specs/mali/semantics.isa` read the two indices back from those
//! bits, so `--verify` checks this packing against the spec.
//!
//! The tables are the driver's choice, a software ABI: Lathe takes
//! Mesa's Gallium/Valhall numbering (`enum pan_resource_table` in
//! panfrost's `pan_ir.h`): texture `n` of the generic IR is descriptor `n`
//! of resource table [`TEXTURE_TABLE`], sampler `m` descriptor `m` of
//! table [`SAMPLER_TABLE`].
//!
//! The handle is a constant outside the immediate table, so, as Mesa
//! lowers such constants, it is a FAU word the driver pushes
//! ([`TextureHandle::fau`]), after the push constants and pushed UBO
//! words, at an even word (source `A` of a texture instruction reads a
//! 64-bit FAU slot whose low word is the handle).

use lathe_ir::{GenericOp, Inst, Op, Shader};
use lathe_isa::select::SelectError;

/// The resource table of texture descriptors (Mesa's `PAN_TABLE_TEXTURE`).
pub const TEXTURE_TABLE: u32 = 4;
/// The resource table of sampler descriptors (Mesa's `PAN_TABLE_SAMPLER`).
pub const SAMPLER_TABLE: u32 = 3;
/// The resource table of storage image descriptors (Mesa's
/// `PAN_TABLE_IMAGE`): image `n` of the generic IR is its descriptor `n`,
/// which `LEA_TEX_IMM` names by table and index (the `table:0x5` of the
/// image rules in `valhall.rules`; the verifier's I/O side refuses
/// another table).
pub const IMAGE_TABLE: u32 = 5;

/// One texture/sampler pair's handle, pushed into a FAU word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureHandle {
    /// The FAU word `uN` that holds it.
    pub fau: u32,
    pub texture: u8,
    pub sampler: u8,
}

impl TextureHandle {
    /// The handle word the driver pushes.
    pub fn word(&self) -> u32 {
        (TEXTURE_TABLE << 27)
            | (u32::from(self.texture) << 16)
            | (SAMPLER_TABLE << 11)
            | u32::from(self.sampler)
    }
}

/// A shader rewritten by [`push_texture_handles`] and the handles the
/// driver pushes for it.
pub type Handled<'a> = (Shader<'a, GenericOp>, Vec<TextureHandle>);

/// The texture and sampler a generic texture instruction names.
fn texture_pair(op: &GenericOp) -> Option<(u8, u8)> {
    match *op {
        GenericOp::Sample {
            texture, sampler, ..
        }
        | GenericOp::Gather {
            texture, sampler, ..
        } => Some((texture, sampler)),
        // A fetch reads no sampler; its handle names sampler 0, as Mesa's
        // does (`sampler_index` of a `txf`).
        GenericOp::TexelFetch { texture, .. } => Some((texture, 0)),
        _ => None,
    }
}

/// Gives each distinct texture/sampler pair of `generic` a FAU word, from
/// `first_free` (the first word after the push constants and pushed UBO
/// words) up, and rewrites each sample, gather or texel fetch so that its
/// `texture` attribute names that FAU word, which is what the selection
/// rules read as source `A`, and its operands are one staging group
/// ([`super::staging`]; the copy is only selected, never interpreted).
/// `None` when the shader reads no texture.
pub fn push_texture_handles<'a>(
    generic: &Shader<'a, GenericOp>,
    first_free: u32,
    fau_words: u32,
) -> Result<Option<Handled<'a>>, SelectError> {
    let pair = |s: &Shader<'_, GenericOp>, i: Inst| match &s.inst(i).op {
        Op::Opcode(op) => texture_pair(op),
        _ => None,
    };
    if !generic
        .insts_in_order()
        .any(|(_, i)| pair(generic, i).is_some())
    {
        return Ok(None);
    }
    let mut copy = super::working_copy(generic)?;
    super::staging::lower_gradients(&mut copy)?;
    let uses: Vec<(Inst, (u8, u8))> = copy
        .insts_in_order()
        .filter_map(|(_, i)| pair(&copy, i).map(|p| (i, p)))
        .collect();
    let mut handles: Vec<TextureHandle> = Vec::new();
    let mut next = first_free.next_multiple_of(2);
    for (i, (texture, sampler)) in uses {
        let fau = match handles
            .iter()
            .find(|h| (h.texture, h.sampler) == (texture, sampler))
        {
            Some(h) => h.fau,
            None => {
                let fau = next;
                if fau >= fau_words || fau > u32::from(u8::MAX) {
                    return Err(SelectError::Unsupported(format!(
                        "texture {texture} with sampler {sampler}: no FAU word left for its handle (valhall ABI)"
                    )));
                }
                handles.push(TextureHandle {
                    fau,
                    texture,
                    sampler,
                });
                next += 2;
                fau
            }
        };
        if let Op::Opcode(
            GenericOp::Sample { texture, .. }
            | GenericOp::Gather { texture, .. }
            | GenericOp::TexelFetch { texture, .. },
        ) = &mut copy.inst_mut(i).op
        {
            *texture = fau as u8;
        }
    }
    super::staging::stage_textures(&mut copy)?;
    Ok(Some((copy, handles)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_packs_mesas_tables_and_indices() {
        let h = TextureHandle {
            fau: 0,
            texture: 5,
            sampler: 2,
        };
        // Table 4 at bit 27, texture 5 at bit 16, table 3 at bit 11.
        assert_eq!(h.word(), 0x2005_1802);
    }

    #[test]
    fn pairs_share_a_word_and_words_start_even() {
        let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_input slot=0 comp=1 interp=smooth\n  %2:f32x2 = collect %0, %1\n  %3:f32x4 = sample texture=1 sampler=1 %2\n  %4:f32x4 = sample texture=1 sampler=1 %2\n  %5:f32x4 = sample texture=0 sampler=1 %2\n  ret\n";
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let (copy, handles) = push_texture_handles(&generic, 3, 256).unwrap().unwrap();
        let words: Vec<(u32, u8, u8)> = handles
            .iter()
            .map(|h| (h.fau, h.texture, h.sampler))
            .collect();
        assert_eq!(words, [(4, 1, 1), (6, 0, 1)]);
        let printed = lathe_ir::print(&copy);
        assert_eq!(
            printed.matches("sample texture=4 sampler=1").count(),
            2,
            "{printed}"
        );
        assert!(printed.contains("sample texture=6 sampler=1"), "{printed}");
        let err = push_texture_handles(&generic, 254, 256).unwrap_err();
        assert!(err.to_string().contains("no FAU word left"), "{err}");
    }
}

// ---------------------------------------------------------------------
// Sizes

/// A texture or a storage image whose size a shader queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizedResource {
    Texture(u8),
    Image(u8),
}

/// The words the driver pushes for one [`SizedResource`] resource, from FAU word
/// `fau` on: [`SIZE_WORDS`] of them, level 0's width, height and depth,
/// the array size (layers; cubes of a cube array) and the number of
/// levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeWords {
    pub fau: u32,
    pub resource: SizedResource,
}

/// Words per [`SizeWords`].
pub const SIZE_WORDS: u32 = 5;

impl SizeWords {
    /// The words for a resource of level-0 size `size`, `array_size` layers
    /// (cubes for a cube array) and `levels` levels.
    pub fn words(size: [u32; 3], array_size: u32, levels: u32) -> [u32; SIZE_WORDS as usize] {
        [size[0], size[1], size[2], array_size, levels]
    }
}

/// A shader rewritten by [`push_sizes`] and the size words the driver
/// pushes for it.
pub type SizeQueried<'a> = (Shader<'a, GenericOp>, Vec<SizeWords>);

/// The resource a size query reads and its shape (`None` for the level
/// count, which reads no shape).
fn size_query(op: &GenericOp) -> Option<(SizedResource, Option<lathe_ir::TexShape>)> {
    match *op {
        GenericOp::TextureSize { texture, shape } => {
            Some((SizedResource::Texture(texture), Some(shape)))
        }
        GenericOp::TextureLevels { texture } => Some((SizedResource::Texture(texture), None)),
        GenericOp::ImageSize { image, shape } => Some((SizedResource::Image(image), Some(shape))),
        _ => None,
    }
}

/// Texture and image size queries as driver parameters: each queried
/// resource gets [`SIZE_WORDS`] FAU words from `first_free` up, and each
/// query becomes uniform reads of them, a level's size being
/// `max(size >> lod, 1)` (layers are not shifted). This is what Mesa's
/// Gallium panfrost driver does on Valhall: `nir_lower_tex` with
/// `lower_txs_lod` reduces a size query to level 0 shifted and clamped,
/// and the level-0 sizes are system values the driver uploads
/// (`PAN_SYSVAL_TEXTURE_SIZE`, `PAN_SYSVAL_IMAGE_SIZE` in panfrost's
/// `pan_nir_lower_sysvals.c`); the TEX family has no size query of its
/// own in the spec. `None` when the shader queries no size.
pub fn push_sizes<'a>(
    generic: &Shader<'a, GenericOp>,
    first_free: u32,
    fau_words: u32,
) -> Result<Option<SizeQueried<'a>>, SelectError> {
    let queries = |s: &Shader<'_, GenericOp>| -> Vec<Inst> {
        s.insts_in_order()
            .filter(|&(_, i)| matches!(&s.inst(i).op, Op::Opcode(op) if size_query(op).is_some()))
            .map(|(_, i)| i)
            .collect()
    };
    if queries(generic).is_empty() {
        return Ok(None);
    }
    let mut copy = super::working_copy(generic)?;
    let mut words: Vec<SizeWords> = Vec::new();
    for b in copy.layout().to_vec() {
        let old = copy.block_insts(b).to_vec();
        let mut insts = Vec::with_capacity(old.len());
        for i in old {
            let query = match &copy.inst(i).op {
                Op::Opcode(op) => size_query(op),
                _ => None,
            };
            if let Some((resource, shape)) = query {
                let fau = match words.iter().find(|w| w.resource == resource) {
                    Some(w) => w.fau,
                    None => {
                        let fau = first_free + SIZE_WORDS * words.len() as u32;
                        if fau + SIZE_WORDS > fau_words {
                            return Err(SelectError::Unsupported(format!(
                                "the size of {resource:?} does not fit in the FAU (valhall ABI)"
                            )));
                        }
                        words.push(SizeWords { fau, resource });
                        fau
                    }
                };
                lower_size_query(&mut copy, i, fau, shape, &mut insts)?;
            }
            insts.push(i);
        }
        copy.set_block_insts(b, &insts);
    }
    Ok(Some((copy, words)))
}

/// Rewrites size query `i` into reads of the words from `fau` (new
/// instructions pushed to `insts`; `i` itself becomes the last, keeping
/// its result).
fn lower_size_query(
    s: &mut Shader<'_, GenericOp>,
    i: Inst,
    fau: u32,
    shape: Option<lathe_ir::TexShape>,
    insts: &mut Vec<Inst>,
) -> Result<(), SelectError> {
    use lathe_ir::{Dim, Type, Value};
    let result = s
        .inst(i)
        .result
        .ok_or_else(|| SelectError::Malformed("a size query without a result".into()))?;
    let ty = s.value_type(result);
    let mut emit = |s: &mut Shader<'_, GenericOp>, op: GenericOp, args: &[Value], t: Type| {
        let n = s.create_inst(Op::Opcode(op), args, &[], None, Some(t));
        insts.push(n);
        s.inst(n).result.expect("created with a result")
    };
    let copy = GenericOp::Mov {
        abs: false,
        neg: false,
    };
    let word = |k: u32| GenericOp::LoadUniform { index: fau + k };
    let lanes: Vec<Value> = match shape {
        None => vec![emit(s, word(4), &[], Type::U32)],
        Some(shape) => {
            if shape.dim == Dim::D1 && ty.lanes > 1 && !shape.array {
                return Err(SelectError::Unsupported(
                    "a 1D size of several lanes".into(),
                ));
            }
            let lod = match s.inst(i).op {
                Op::Opcode(GenericOp::TextureSize { .. }) if !shape.ms => {
                    let l = s.inst(i).args[0];
                    Some(emit(s, copy, &[l], Type::U32))
                }
                _ => None,
            };
            let mut out = Vec::new();
            for k in 0..u32::from(shape.dim.size_coords()) {
                let w = emit(s, word(k), &[], Type::U32);
                out.push(match lod {
                    Some(l) => {
                        let shifted = emit(s, GenericOp::Shr, &[w, l], Type::U32);
                        let one = emit(s, GenericOp::Const { bits: 1 }, &[], Type::U32);
                        emit(s, GenericOp::UMax, &[shifted, one], Type::U32)
                    }
                    None => w,
                });
            }
            if shape.array {
                out.push(emit(s, word(3), &[], Type::U32));
            }
            out
        }
    };
    if lanes.len() != usize::from(ty.lanes.max(1)) {
        return Err(SelectError::Malformed(format!(
            "a size query giving {ty} for {} lanes",
            lanes.len()
        )));
    }
    let scalar = Type::scalar(ty.scalar);
    let typed: Vec<Value> = lanes
        .into_iter()
        .map(|v| {
            if scalar == Type::U32 {
                v
            } else {
                emit(s, copy, &[v], scalar)
            }
        })
        .collect();
    if typed.len() == 1 {
        s.inst_mut(i).op = Op::Opcode(copy);
    } else {
        s.inst_mut(i).op = Op::Collect;
    }
    s.set_args(i, &typed);
    Ok(())
}
