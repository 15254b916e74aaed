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
use lathe_oracle::{ScalarKind, StorageFormat, Texture, TextureDim};

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

/// A `size`×`size` storage image of `image`'s type and format on both
/// sides (2 layers when arrayed). Float texels are sixteenths in `[0, 1]`
/// (exact in every supported format; 8-bit unorm ones 0 or 1, the only
/// values whose conversion is exact), integers as [`word`].
pub fn storage_image(
    rng: &mut Rng,
    image: ImageType,
    size: u32,
) -> Result<(Texture, StorageFormat, lathe_ir::texture::Image), String> {
    use rspirv::spirv::{Dim, ImageFormat as F};
    let (format, channels) = match image.format {
        F::Rgba32f | F::Rgba32i | F::Rgba32ui => (StorageFormat::Rgba32, 4),
        F::R32f | F::R32i | F::R32ui => (StorageFormat::R32, 1),
        F::Rgba8 => (StorageFormat::Rgba8Unorm, 4),
        F::Rgba16f => (StorageFormat::Rgba16Float, 4),
        other => {
            return Err(format!(
                "unsupported: {other:?} storage images in the oracle"
            ));
        }
    };
    if image.dim != Dim::Dim2D || image.multisampled {
        return Err(format!(
            "unsupported: {:?}{} storage images in the oracle",
            image.dim,
            if image.multisampled {
                " multisampled"
            } else {
                ""
            }
        ));
    }
    let layers = if image.arrayed { 2 } else { 1 };
    let n = (size * size * layers) as usize;
    // (interpreter words, oracle words) per texel.
    let texels: Vec<([u32; 4], [u32; 4])> = (0..n)
        .map(|_| {
            let mut ours = [0u32; 4];
            let mut theirs = [0u32; 4];
            for c in 0..channels {
                let (o, t) = match (format, image.texel) {
                    (StorageFormat::Rgba8Unorm, _) => {
                        let one = rng.chance(50);
                        (
                            if one { 1f32 } else { 0.0 }.to_bits(),
                            if one { 255 } else { 0 },
                        )
                    }
                    (StorageFormat::Rgba16Float, _) => {
                        let x = rng.below(17) as f32 / 16.0;
                        (x.to_bits(), exact_half(x))
                    }
                    (_, Word::Float) => {
                        let x = (rng.below(17) as f32 / 16.0).to_bits();
                        (x, x)
                    }
                    (_, kind) => {
                        let w = word(rng, kind);
                        (w, w)
                    }
                };
                ours[c] = o;
                theirs[c] = t;
            }
            (ours, theirs)
        })
        .collect();
    let oracle_texture = Texture {
        dim: if image.arrayed {
            TextureDim::D2Array
        } else {
            TextureDim::D2
        },
        kind: scalar_kind(image.texel),
        depth: false,
        width: size,
        height: size,
        layers,
        texels: texels.iter().map(|t| t.1).collect(),
    };
    let ir = lathe_ir::texture::Image {
        layers,
        texels: texels.iter().map(|t| t.0).collect(),
        ..lathe_ir::texture::Image::new_2d(size, size, channels as u8)
    };
    Ok((oracle_texture, format, ir))
}

/// The half-precision bits of `x`, a normal half value or 0 (checked).
pub fn exact_half(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let (sign, exp, mantissa) = (b >> 31, ((b >> 23) & 0xff) as i32 - 127 + 15, b & 0x7f_ffff);
    assert!(
        (1..31).contains(&exp) && mantissa & 0x1fff == 0,
        "{x} is not a normal half"
    );
    (sign << 15) | ((exp as u32) << 10) | (mantissa >> 13)
}
