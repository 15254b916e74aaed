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
    let mut copy = lathe_ir::parse::<GenericOp>(generic.arena(), &lathe_ir::print(generic))
        .map_err(|e| SelectError::Malformed(format!("the shader does not read back: {e}")))?;
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
