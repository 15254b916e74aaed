//! The interpreter's texture and image model: exact, documented, and
//! configurable to match a Vulkan driver's sampler state.
//!
//! # Textures (read through `sample`, `gather`, `texel_fetch`)
//!
//! A [`Texture`] holds mip levels of RGBA texels as `f32` (an integer
//! texture keeps its integer bits in those words: `f32::from_bits`).
//! Layers are stored layer-major; a cube texture has `6 * cubes` layers,
//! face `f` of cube `c` being layer `6 * c + f` (faces `+X -X +Y -Y +Z -Z`).
//!
//! A sample runs these steps, all in `f32` arithmetic in this order
//! (following the Vulkan specification's "Texel Filtering" chapter):
//!
//! 1. A NaN coordinate is undefined behaviour. The array layer is
//!    `clamp(round_even(l), 0, layers - 1)`.
//! 2. Cube: the major axis is the component of largest magnitude, ties
//!    going to z, then y (`|z| >= |x| && |z| >= |y|` picks z, else
//!    `|y| >= |x|` picks y, else x); the face coordinates `sc, tc, ma`
//!    follow the Vulkan face table, `s = 0.5 * (sc / |ma|) + 0.5`, and
//!    likewise `t`. Gradients are projected with the quotient rule on the
//!    same face. Cube faces are not seamless: filtering clamps to the face
//!    edge (so compare against a driver with nearest filtering, or away
//!    from face edges).
//! 3. LOD: explicit, or `log2(max(ρx, ρy))` where `ρ = sqrt(Σ (d_i * size_i)²)`
//!    from the gradients scaled by the level-0 size (implicit LOD takes
//!    the gradients from the quad, see [`crate::interp`]); then
//!    `λ' = λ + clamp(sampler.lod_bias + bias, -16, 16)` and
//!    `λ = clamp(λ', min_lod, max_lod)`. A NaN λ is undefined.
//! 4. `λ <= 0` magnifies: `mag_filter` on level 0. Otherwise `min_filter`
//!    on `d = clamp(λ, 0, levels - 1)`: with `mipmap_mode` nearest the
//!    level `ceil(d + 0.5) - 1`; with linear the levels `floor(d)` and
//!    `min(floor(d) + 1, levels - 1)` blended as `(1 - δ) * a + δ * b`,
//!    `δ = d - floor(d)`.
//! 5. On a level of size `w×h×d` (`max(1, size >> level)`), with texel
//!    offset `o`: nearest reads texel `floor(s * w + o)`; linear reads
//!    `i0 = floor(s * w + o - 0.5)` and `i0 + 1` with weight
//!    `α = frac(s * w + o - 0.5)` (and likewise `j`, `k`), combined as
//!    `(1-α)(1-β)τ00 + α(1-β)τ10 + (1-α)βτ01 + αβτ11` (for 3D, that
//!    bilinear result on slice `k0` times `1-γ` plus on `k1` times `γ`).
//! 6. Wrapping per axis: repeat `i mod n`; mirrored repeat
//!    `m = i mod 2n, m < n ? m : 2n - 1 - m`; clamp to edge
//!    `clamp(i, 0, n - 1)`; clamp to border gives the sampler's border
//!    colour for the whole texel.
//! 7. Depth compare replaces each texel by `1.0` if `dref OP texel.r` else
//!    `0.0` before filtering, and gives that one float.
//! 8. Gather reads the linear footprint of level 0 and returns component
//!    `comp` of texels `(i0,j1), (i1,j1), (i1,j0), (i0,j0)` in that order.
//!
//! Linear filtering of an integer texture is undefined.
//!
//! `texel_fetch` reads `(x + o, y + o, z + o)` of level `lod` (or sample
//! `s` of a multisampled texture); any coordinate, layer, level or sample
//! outside the texture is undefined behaviour (no robustness).
//!
//! # Images (read and written through `image_*`)
//!
//! An [`Image`] holds texels of `channels` 32-bit words (the bits of
//! `f32`, `i32` or `u32`, as the shader's view type says: `rgba32f`,
//! `r32ui` and the like). A load returns the missing channels as `0, 0, 1`
//! (`1.0` for float views); a store writes the first `channels` words;
//! atomics work on channel 0. Out-of-bounds access is undefined behaviour.

use crate::attrs::{Dim, TexShape};

/// Filter of a [`Sampler`] (magnification, minification or between mips).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Filter {
    #[default]
    Nearest,
    Linear,
}

/// Address mode of a [`Sampler`] along one axis.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Wrap {
    Repeat,
    MirroredRepeat,
    #[default]
    ClampToEdge,
    ClampToBorder,
}

/// Depth-compare operator of a [`Sampler`] (`dref OP texel`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum CompareOp {
    Never,
    Less,
    Equal,
    #[default]
    LessOrEqual,
    Greater,
    NotEqual,
    GreaterOrEqual,
    Always,
}

impl CompareOp {
    fn test(self, dref: f32, texel: f32) -> bool {
        match self {
            CompareOp::Never => false,
            CompareOp::Less => dref < texel,
            CompareOp::Equal => dref == texel,
            CompareOp::LessOrEqual => dref <= texel,
            CompareOp::Greater => dref > texel,
            CompareOp::NotEqual => dref != texel,
            CompareOp::GreaterOrEqual => dref >= texel,
            CompareOp::Always => true,
        }
    }
}

/// Sampler state, as a Vulkan `VkSamplerCreateInfo` would give it. The
/// default is nearest everywhere, clamp to edge, no bias, LOD clamp
/// `0..=1000` (`VK_LOD_CLAMP_NONE`), compare `<=`, transparent black border.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Sampler {
    pub mag_filter: Filter,
    pub min_filter: Filter,
    pub mipmap_mode: Filter,
    /// Address modes for u, v, w.
    pub wrap: [Wrap; 3],
    pub lod_bias: f32,
    pub min_lod: f32,
    pub max_lod: f32,
    pub compare: CompareOp,
    pub border: [f32; 4],
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            mipmap_mode: Filter::Nearest,
            wrap: [Wrap::ClampToEdge; 3],
            lod_bias: 0.0,
            min_lod: 0.0,
            max_lod: 1000.0,
            compare: CompareOp::LessOrEqual,
            border: [0.0; 4],
        }
    }
}

/// One mip level: `width * height * depth * layers * samples` texels,
/// sample fastest, then x, y, z, layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub texels: Vec<[f32; 4]>,
}

/// A sampled texture (see the module docs for the model).
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    pub dim: Dim,
    /// Array layers (for cubes, `6 *` the number of cubes); 1 if not arrayed.
    pub layers: u32,
    /// Samples per texel (1 unless multisampled).
    pub samples: u32,
    /// Level 0 first; each at most half the size of the one before.
    pub levels: Vec<Level>,
}

impl Texture {
    /// A single-level, single-layer 2D texture of `width * height` texels,
    /// row-major.
    pub fn rgba_2d(width: u32, height: u32, texels: Vec<[f32; 4]>) -> Texture {
        Texture {
            dim: Dim::D2,
            layers: 1,
            samples: 1,
            levels: vec![Level {
                width,
                height,
                depth: 1,
                texels,
            }],
        }
    }

    /// A texture with the full mip chain of `width × height × depth` and
    /// `layers` layers, texel values from `f(level, layer, x, y, z)`.
    pub fn from_fn(
        dim: Dim,
        size: [u32; 3],
        layers: u32,
        levels: u32,
        mut f: impl FnMut(u32, u32, u32, u32, u32) -> [f32; 4],
    ) -> Texture {
        let levels = (0..levels)
            .map(|l| {
                let [w, h, d] = size.map(|n| (n >> l).max(1));
                let mut texels = Vec::with_capacity((w * h * d * layers) as usize);
                for layer in 0..layers {
                    for z in 0..d {
                        for y in 0..h {
                            for x in 0..w {
                                texels.push(f(l, layer, x, y, z));
                            }
                        }
                    }
                }
                Level {
                    width: w,
                    height: h,
                    depth: d,
                    texels,
                }
            })
            .collect();
        Texture {
            dim,
            layers,
            samples: 1,
            levels,
        }
    }
}

/// A storage image (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    /// Array layers (cube faces count as layers).
    pub layers: u32,
    pub samples: u32,
    /// 32-bit words per texel that the format stores (1..=4).
    pub channels: u8,
    /// `width * height * depth * layers * samples` texels, sample fastest,
    /// then x, y, z, layer.
    pub texels: Vec<[u32; 4]>,
}

impl Image {
    /// A zeroed 2D image of `channels` words per texel.
    pub fn new_2d(width: u32, height: u32, channels: u8) -> Image {
        Image {
            width,
            height,
            depth: 1,
            layers: 1,
            samples: 1,
            channels,
            texels: vec![[0; 4]; (width * height) as usize],
        }
    }

    /// Index of texel `coord` (`x, y, z/layer...` as the shape says) or the
    /// reason it is out of bounds.
    pub(crate) fn index(
        &self,
        shape: TexShape,
        coord: &[i32],
        sample: i32,
    ) -> Result<usize, String> {
        let (x, y, z, layer) = split_texel_coord(shape, coord);
        let inside = |v: i32, n: u32| v >= 0 && (v as u32) < n;
        if !(inside(x, self.width)
            && inside(y, self.height)
            && inside(z, self.depth)
            && inside(layer, self.layers)
            && inside(sample, self.samples))
        {
            return Err(format!(
                "image coordinate {coord:?} (sample {sample}) is out of bounds"
            ));
        }
        let at = (((layer as u32 * self.depth + z as u32) * self.height + y as u32) * self.width
            + x as u32)
            * self.samples
            + sample as u32;
        Ok(at as usize)
    }

    /// Size as a size query reports it: `w [h [d]] [layers]`.
    pub(crate) fn size(&self, shape: TexShape) -> Vec<u32> {
        size_lanes(shape, [self.width, self.height, self.depth], self.layers)
    }
}

/// `x, y, z, layer` of an integer texel coordinate (cube faces are layers).
fn split_texel_coord(shape: TexShape, coord: &[i32]) -> (i32, i32, i32, i32) {
    let c = |k: usize| coord.get(k).copied().unwrap_or(0);
    match (shape.dim, shape.array) {
        (Dim::D1, false) => (c(0), 0, 0, 0),
        (Dim::D1, true) => (c(0), 0, 0, c(1)),
        (Dim::D2, false) => (c(0), c(1), 0, 0),
        (Dim::D2, true) | (Dim::Cube, _) => (c(0), c(1), 0, c(2)),
        (Dim::D3, _) => (c(0), c(1), c(2), 0),
    }
}

/// The lanes of a size query: the dimensions the shape has, then layers
/// (cube arrays report cubes, not faces).
fn size_lanes(shape: TexShape, size: [u32; 3], layers: u32) -> Vec<u32> {
    let mut out: Vec<u32> = size[..shape.dim.size_coords() as usize].to_vec();
    if shape.array {
        out.push(if shape.dim == Dim::Cube {
            layers / 6
        } else {
            layers
        });
    }
    out
}

/// Where a sample's level of detail comes from.
#[derive(Clone, Copy, Debug)]
pub enum LodInput {
    /// An explicit LOD.
    Lod(f32),
    /// Gradients of the coordinate (without the layer) along x and y.
    Grad([f32; 3], [f32; 3]),
}

/// One `sample` or `gather`.
#[derive(Clone, Copy, Debug)]
pub struct SampleRequest {
    pub shape: TexShape,
    /// Coordinates, layer last if arrayed.
    pub coord: [f32; 4],
    pub lod: LodInput,
    /// Shader bias (`lod=bias`), 0 otherwise.
    pub bias: f32,
    pub offset: [i32; 3],
    pub dref: Option<f32>,
    /// `Some(comp)` for a gather.
    pub gather: Option<u8>,
    /// The texel type is an integer (linear filtering is then undefined).
    pub integer: bool,
}

/// Sample `tex` through `sampler`: the texel as raw bits (for a depth
/// compare, lane 0 holds the result). `Err` is the reason the access is
/// undefined.
pub fn sample(tex: &Texture, sampler: &Sampler, req: &SampleRequest) -> Result<[u32; 4], String> {
    let n = req.shape.sample_coords() as usize;
    if req.coord[..n].iter().any(|c| c.is_nan()) {
        return Err("NaN texture coordinate".into());
    }
    if tex.levels.is_empty() || tex.layers == 0 {
        return Err("the texture has no texels".into());
    }
    let dims = req.shape.dim.sample_coords() as usize;
    let mut layer = if req.shape.array {
        let faces = if req.shape.dim == Dim::Cube { 6 } else { 1 };
        let count = (tex.layers / faces).max(1);
        req.coord[dims]
            .round_ties_even()
            .clamp(0.0, (count - 1) as f32) as u32
    } else {
        0
    };
    let (mut st, mut grads) = ([0.0f32; 3], None);
    st[..dims].copy_from_slice(&req.coord[..dims]);
    if let LodInput::Grad(dx, dy) = req.lod {
        grads = Some((dx, dy));
    }
    if req.shape.dim == Dim::Cube {
        let (face, s, t, g) = cube_project(req.coord, grads);
        layer = layer * 6 + face;
        st = [s, t, 0.0];
        grads = g;
    }
    if layer >= tex.layers {
        return Err(format!(
            "layer {layer} is past the texture's {}",
            tex.layers
        ));
    }
    let base = &tex.levels[0];
    let size = [base.width, base.height, base.depth];
    let face_dims = if req.shape.dim == Dim::Cube { 2 } else { dims };
    let lambda_base = match req.lod {
        LodInput::Lod(l) => l,
        LodInput::Grad(..) => {
            let (dx, dy) = grads.unwrap_or(([0.0; 3], [0.0; 3]));
            let rho = |d: [f32; 3]| -> f32 {
                let mut sum = 0.0f32;
                for k in 0..face_dims {
                    let v = d[k] * size[k] as f32;
                    sum += v * v;
                }
                sum.sqrt()
            };
            ((rho(dx).max(rho(dy))) as f64).log2() as f32
        }
    };
    let lambda = (lambda_base + (sampler.lod_bias + req.bias).clamp(-16.0, 16.0))
        .clamp(sampler.min_lod, sampler.max_lod);
    if lambda.is_nan() {
        return Err("the level of detail is NaN".into());
    }
    let q = (tex.levels.len() - 1) as f32;
    let read = |level: usize, filter: Filter| -> Result<[f32; 4], String> {
        filter_level(tex, sampler, req, st, face_dims, layer, level, filter)
    };
    let texel = if req.gather.is_some() {
        read(0, Filter::Linear)?
    } else if lambda <= 0.0 {
        read(0, sampler.mag_filter)?
    } else {
        let d = lambda.clamp(0.0, q);
        match sampler.mipmap_mode {
            Filter::Nearest => read(((d + 0.5).ceil() - 1.0) as usize, sampler.min_filter)?,
            Filter::Linear => {
                let hi = d.floor();
                let delta = d - hi;
                let a = read(hi as usize, sampler.min_filter)?;
                if delta == 0.0 {
                    a
                } else {
                    let b = read((hi + 1.0).min(q) as usize, sampler.min_filter)?;
                    std::array::from_fn(|c| (1.0 - delta) * a[c] + delta * b[c])
                }
            }
        }
    };
    Ok(texel.map(f32::to_bits))
}

/// `(face, s, t, projected gradients)` of a cube direction.
#[allow(clippy::type_complexity)]
fn cube_project(
    c: [f32; 4],
    grads: Option<([f32; 3], [f32; 3])>,
) -> (u32, f32, f32, Option<([f32; 3], [f32; 3])>) {
    let [x, y, z, _] = c;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    // (face, sc axis, sc sign, tc axis, tc sign, ma axis)
    let (face, sa, ss, ta, ts, ma) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, 0, 1.0, 1, -1.0, 2)
        } else {
            (5, 0, -1.0, 1, -1.0, 2)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, 0, 1.0, 2, 1.0, 1)
        } else {
            (3, 0, 1.0, 2, -1.0, 1)
        }
    } else if x >= 0.0 {
        (0, 2, -1.0, 1, -1.0, 0)
    } else {
        (1, 2, 1.0, 1, -1.0, 0)
    };
    let m = c[ma].abs();
    let (sc, tc) = (ss * c[sa], ts * c[ta]);
    let s = 0.5 * (sc / m) + 0.5;
    let t = 0.5 * (tc / m) + 0.5;
    let project = |d: [f32; 3]| -> [f32; 3] {
        // d|ma| has the sign of ma's component.
        let dm = d[ma] * c[ma].signum();
        let q = |num: f32, dnum: f32| 0.5 * (dnum * m - num * dm) / (m * m);
        [q(sc, ss * d[sa]), q(tc, ts * d[ta]), 0.0]
    };
    (face, s, t, grads.map(|(dx, dy)| (project(dx), project(dy))))
}

/// Wrap texel index `i` on an axis of `n` texels; `None` means the border.
fn wrap(mode: Wrap, i: i64, n: u32) -> Option<u32> {
    let n = n as i64;
    Some(match mode {
        Wrap::Repeat => i.rem_euclid(n),
        Wrap::MirroredRepeat => {
            let m = i.rem_euclid(2 * n);
            if m < n { m } else { 2 * n - 1 - m }
        }
        Wrap::ClampToEdge => i.clamp(0, n - 1),
        Wrap::ClampToBorder => {
            if i < 0 || i >= n {
                return None;
            }
            i
        }
    } as u32)
}

/// One filtered read of one level (or, for a gather, the four texels).
#[allow(clippy::too_many_arguments)]
fn filter_level(
    tex: &Texture,
    sampler: &Sampler,
    req: &SampleRequest,
    st: [f32; 3],
    dims: usize,
    layer: u32,
    level: usize,
    filter: Filter,
) -> Result<[f32; 4], String> {
    let lv = tex
        .levels
        .get(level)
        .ok_or_else(|| format!("level {level} is missing"))?;
    let size = [lv.width, lv.height, lv.depth];
    let cube = req.shape.dim == Dim::Cube;
    // Cube faces clamp to their edges whatever the sampler says.
    let mode = |k: usize| {
        if cube {
            Wrap::ClampToEdge
        } else {
            sampler.wrap[k]
        }
    };
    let texel = |i: [i64; 3]| -> Result<[f32; 4], String> {
        let mut at = [0u32; 3];
        for k in 0..3 {
            if k < dims {
                match wrap(mode(k), i[k], size[k]) {
                    Some(v) => at[k] = v,
                    None => return Ok(sampler.border),
                }
            }
        }
        let idx =
            (((layer * lv.depth + at[2]) * lv.height + at[1]) * lv.width + at[0]) * tex.samples;
        let t = *lv
            .texels
            .get(idx as usize)
            .ok_or_else(|| format!("texel {at:?} of level {level} is missing"))?;
        Ok(match req.dref {
            Some(dref) => {
                let pass = sampler.compare.test(dref, t[0]);
                [if pass { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0]
            }
            None => t,
        })
    };
    let pos = |k: usize| st[k] * size[k] as f32 + req.offset[k] as f32;
    if filter == Filter::Nearest && req.gather.is_none() {
        let mut i = [0i64; 3];
        for (k, v) in i.iter_mut().enumerate().take(dims) {
            *v = pos(k).floor() as i64;
        }
        return texel(i);
    }
    if req.integer {
        return Err("linear filtering of an integer texture".into());
    }
    let mut i0 = [0i64; 3];
    let mut w = [0.0f32; 3];
    for k in 0..dims {
        let u = pos(k) - 0.5;
        let f = u.floor();
        i0[k] = f as i64;
        w[k] = u - f;
    }
    let at = |di: i64, dj: i64, dk: i64| texel([i0[0] + di, i0[1] + dj, i0[2] + dk]);
    if let Some(comp) = req.gather {
        let c = comp as usize;
        return Ok([
            at(0, 1, 0)?[c],
            at(1, 1, 0)?[c],
            at(1, 0, 0)?[c],
            at(0, 0, 0)?[c],
        ]);
    }
    let lerp1 = |dj: i64, dk: i64| -> Result<[f32; 4], String> {
        let (a, b) = (at(0, dj, dk)?, at(1, dj, dk)?);
        Ok(std::array::from_fn(|c| (1.0 - w[0]) * a[c] + w[0] * b[c]))
    };
    match dims {
        1 => lerp1(0, 0),
        _ => {
            let bilinear = |dk: i64| -> Result<[f32; 4], String> {
                let (t00, t10, t01, t11) =
                    (at(0, 0, dk)?, at(1, 0, dk)?, at(0, 1, dk)?, at(1, 1, dk)?);
                let (a, b) = (w[0], w[1]);
                Ok(std::array::from_fn(|c| {
                    (1.0 - a) * (1.0 - b) * t00[c]
                        + a * (1.0 - b) * t10[c]
                        + (1.0 - a) * b * t01[c]
                        + a * b * t11[c]
                }))
            };
            if dims == 2 {
                bilinear(0)
            } else {
                let (p, r) = (bilinear(0)?, bilinear(1)?);
                let g = w[2];
                Ok(std::array::from_fn(|c| (1.0 - g) * p[c] + g * r[c]))
            }
        }
    }
}

/// `texel_fetch`: the texel at an integer coordinate of level `lod` (or
/// sample `lod` when multisampled), offset by `offset`.
pub fn fetch(
    tex: &Texture,
    shape: TexShape,
    coord: &[i32],
    lod_or_sample: i32,
    offset: [i32; 3],
) -> Result<[u32; 4], String> {
    let (x, y, z, layer) = split_texel_coord(shape, coord);
    let (x, y, z) = (x + offset[0], y + offset[1], z + offset[2]);
    let (level, sample) = if shape.ms {
        (0, lod_or_sample)
    } else {
        (lod_or_sample, 0)
    };
    let lv = usize::try_from(level)
        .ok()
        .and_then(|l| tex.levels.get(l))
        .ok_or_else(|| format!("level {level} is outside the texture"))?;
    let inside = |v: i32, n: u32| v >= 0 && (v as u32) < n;
    if !(inside(x, lv.width)
        && inside(y, lv.height)
        && inside(z, lv.depth)
        && inside(layer, tex.layers)
        && inside(sample, tex.samples))
    {
        return Err(format!(
            "texel ({x}, {y}, {z}) layer {layer} sample {sample} is out of bounds"
        ));
    }
    let idx = ((((layer as u32 * lv.depth + z as u32) * lv.height + y as u32) * lv.width
        + x as u32)
        * tex.samples
        + sample as u32) as usize;
    lv.texels
        .get(idx)
        .map(|t| t.map(f32::to_bits))
        .ok_or_else(|| "the texture has too few texels".to_string())
}

/// `texture_size` of level `lod` (ignored when multisampled).
pub fn size(tex: &Texture, shape: TexShape, lod: i32) -> Result<Vec<u32>, String> {
    let level = if shape.ms { 0 } else { lod };
    let lv = usize::try_from(level)
        .ok()
        .and_then(|l| tex.levels.get(l))
        .ok_or_else(|| format!("level {level} is outside the texture"))?;
    Ok(size_lanes(
        shape,
        [lv.width, lv.height, lv.depth],
        tex.layers,
    ))
}
