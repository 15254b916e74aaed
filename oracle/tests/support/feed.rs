//! Synthetic inputs for corpus shaders, chosen by the type each word is
//! read as (from [`super::reflect`]), never by shader:
//!
//! - floats: sixteenths in `[1/16, 1]` — exact, normal, non-negative and
//!   non-zero, so `pow`, `sqrt`, `log` and divisions by uniforms stay
//!   defined the way real scene constants keep them;
//! - signed and unsigned integers: `0..=3` (counts, indices and enums in
//!   real shaders are small; larger ones index out of bounds);
//! - booleans: 0 or 1;
//! - padding: 0.

use super::random_compute::Rng;
use super::reflect::{ImageType, Layout, Word};
use lathe_oracle::{ScalarKind, Texture, TextureDim};

/// One word of type `word`.
pub fn word(rng: &mut Rng, word: Word) -> u32 {
    match word {
        Word::Float => ((1 + rng.below(16)) as f32 / 16.0).to_bits(),
        Word::Sint | Word::Uint => rng.below(4),
        Word::Bool => rng.below(2),
    }
}

/// A block's words with `elements` run-time array elements.
pub fn block(rng: &mut Rng, layout: &Layout, elements: u32) -> Vec<u32> {
    (0..layout.words_with(elements))
        .map(|i| layout.word(i).map_or(0, |w| word(rng, w)))
        .collect()
}

/// A texel of a texture whose components are read as `kind`.
pub fn texel(rng: &mut Rng, kind: Word) -> [u32; 4] {
    std::array::from_fn(|_| word(rng, kind))
}

/// The oracle's component kind for words of `word`.
pub fn scalar_kind(word: Word) -> ScalarKind {
    match word {
        Word::Float => ScalarKind::Float,
        Word::Sint => ScalarKind::Sint,
        Word::Uint | Word::Bool => ScalarKind::Uint,
    }
}

/// A `size`×`size` texture of `image`'s type on both sides (cube faces of
/// that size, 2 array layers, depth 4), texels from [`texel`].
pub fn texture(
    rng: &mut Rng,
    image: ImageType,
    size: u32,
) -> Result<(Texture, lathe_ir::Texture), String> {
    use rspirv::spirv::Dim;
    if image.multisampled {
        return Err("unsupported: multisampled textures".into());
    }
    let (dim, ir_dim, layers) = match (image.dim, image.arrayed) {
        (Dim::Dim2D, false) => (TextureDim::D2, lathe_ir::Dim::D2, 1),
        (Dim::Dim2D, true) => (TextureDim::D2Array, lathe_ir::Dim::D2, 2),
        (Dim::DimCube, false) => (TextureDim::Cube, lathe_ir::Dim::Cube, 6),
        (Dim::Dim3D, false) => (TextureDim::D3, lathe_ir::Dim::D3, 4),
        (dim, arrayed) => {
            return Err(format!(
                "unsupported: {dim:?} textures{} in the oracle",
                if arrayed { " (arrayed)" } else { "" }
            ));
        }
    };
    // A depth texture reads as (d, 0, 0, 1).
    let texels: Vec<[u32; 4]> = (0..size * size * layers)
        .map(|_| match image.depth {
            true => [word(rng, Word::Float), 0, 0, 1f32.to_bits()],
            false => texel(rng, image.texel),
        })
        .collect();
    if image.depth && dim == TextureDim::D3 {
        return Err("unsupported: 3D depth textures".into());
    }
    let oracle_texture = Texture {
        dim,
        kind: scalar_kind(image.texel),
        depth: image.depth,
        width: size,
        height: size,
        layers,
        texels: texels.clone(),
    };
    let (size, ir_layers) = match dim {
        TextureDim::D3 => ([size, size, layers], 1),
        _ => ([size, size, 1], layers),
    };
    let mut next = texels.iter();
    let ir = lathe_ir::Texture::from_fn(ir_dim, size, ir_layers, 1, |_, _, _, _, _| {
        next.next().expect("texel count").map(f32::from_bits)
    });
    Ok((oracle_texture, ir))
}
