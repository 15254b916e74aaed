//! The two-stage differential harness: run a vertex shader on a
//! triangle's three vertices in the reference interpreter, interpolate
//! each output the way the fragment shader's load asks, run the fragment
//! shader at random sample positions, and compare a pair before and after
//! [`link`](super::link).
//!
//! Vertex `k` runs with `vertex_index = k`; each fragment's `frag_coord`
//! is its pixel centre in a 4×4-pixel triangle (other system values are zero).
//!
//! Interpolation model (per fragment, per load):
//! - `flat`: the provoking vertex's bits;
//! - otherwise float loads get `v0 + b1·(v1 − v0) + b2·(v2 − v0)` in `f64`,
//!   rounded once to the load's type, with barycentrics `b` drawn per
//!   fragment separately for the pixel centre, the centroid and the sample
//!   location, and perspective-corrected by each vertex's random `w`
//!   (`bᵢ/wᵢ`, renormalised) unless `noperspective`. The form returns a
//!   vertex value when all three are equal (so convergent varyings read the
//!   same under every qualifier, as on hardware; equal finite bits are
//!   returned as they are, keeping the sign of zero); an infinity at the
//!   first vertex, or two opposite ones, give NaN (`Inf − Inf`), as
//!   hardware interpolation of this form does. Non-float loads
//!   interpolated anyway get the provoking vertex's bits.
//!
//! Comparison: system-value and transform-feedback outputs of every
//! vertex must be equal bit for bit (following compaction's moves), and so
//! must every fragment's outputs and discard — except that when the link
//! moved code across interpolation ([`LinkReport::moved_interpolated`]),
//! float outputs may differ by `TOLERANCE_F32` (`TOLERANCE_F16`) times
//! `1 + max(|a|, |b|, m)`, where `m` is the largest magnitude of the vertex
//! values either pair interpolates: the moved code is sums of interpolated
//! values times convergent factors, reassociated across interpolation,
//! and the rounding error of a sum is bounded relative to its terms, not
//! to its result (which cancellation can make small: vertex values of
//! ±30000 interpolating to −16 in f16 differ by whole units between the
//! two orders). NaN equals NaN. Runs the original pair cannot
//! complete (undefined behaviour, an unwritten varying read, the step
//! limit) are not compared; the linked pair must then still not fail
//! where the original did not.
//!
//! Infinities and NaNs across interpolation: unless the pair was linked
//! with [`LinkOptions::preserve_inf`](super::LinkOptions::preserve_inf),
//! fragments of a triangle where either pair interpolates a non-finite
//! value (an Inf or NaN vertex value of a float varying the fragment
//! shader reads with a non-flat qualifier) are not compared; they are
//! counted in [`Compared::non_finite`]. Why this is the rule and not a
//! defect of the pass:
//! - the moves the design allows across interpolation
//!   (`interp(x) + interp(y) = interp(x + y)`, `interp(x) * c =
//!   interp(x * c)`, ...) are identities of real arithmetic; on finite
//!   values floating point keeps them up to rounding (the tolerance), on
//!   Inf and NaN it does not (`Inf − Inf`, `Inf · 0`), and a sum moved to
//!   the vertices can overflow there although no fragment's value does
//!   (or the reverse). The design says so ("Inf values break code motion
//!   across interpolation"; "interp(Inf, i, j) = NaN") and allows the moves,
//!   convergent varyings made flat and propagated uniform expressions
//!   exactly when Infs need not be preserved;
//! - Vulkan's environment for SPIR-V ("Precision and Operation of SPIR-V
//!   Instructions") lets an implementation, by default, "assume that
//!   arguments and results are not NaNs or infinities"; only the
//!   `SignedZeroInfNanPreserve` execution mode forbids it, and even then
//!   fragment-stage float `Input` loads (interpolation) are exempt. A
//!   pipeline that interpolates Inf or NaN without that mode has no
//!   required result for those fragments.
//!
//! With `preserve_inf` nothing of this is excused: the pass moves nothing
//! across interpolation, propagated expressions get `x * 0 + x`, and every
//! fragment is compared as above. Vertex outputs and the fragments of triangles with finite varyings are
//! checked in full either way.

use super::slots::{self, Class};
use super::varyings::Comp;
use super::{LinkOptions, LinkReport};
use lathe_ir::interp::{self, InterpError, Invocation, Limits, Memory, Outcome, Texture};
use lathe_ir::{Dim, GenericOp, Interp, InterpLoc, InterpMode, Op, Scalar, Shader, TexShape, Type};
use std::collections::{BTreeMap, HashMap};

pub const TOLERANCE_F32: f64 = 1e-4;
pub const TOLERANCE_F16: f64 = 3e-2;

/// Everything a pair runs on.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// Vertex shader inputs of the three vertices.
    pub vertices: [HashMap<Comp, u32>; 3],
    /// Clip-space `w` of each vertex (positive).
    pub w: [f64; 3],
    /// Which vertex flat inputs come from.
    pub provoking: usize,
    pub uniforms: Vec<u32>,
    pub ubos: Vec<Vec<u32>>,
    /// Storage buffers each invocation starts from (its writes are not
    /// compared, nor seen by other invocations).
    pub ssbos: Vec<Vec<u32>>,
    pub textures: Vec<Texture>,
    /// Per fragment: barycentrics at the pixel centre, centroid and sample.
    pub fragments: Vec<[[f64; 3]; 3]>,
}

impl Scene {
    /// A scene from a pseudo-random seed: vertex inputs for `inputs`,
    /// `uniforms` words, one UBO, `fragments` sample points.
    pub fn random(
        seed: u64,
        inputs: &[(Comp, Scalar)],
        uniforms: usize,
        fragments: usize,
    ) -> Scene {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut scene = Scene {
            w: [
                0.5 + r.unit() * 2.0,
                0.5 + r.unit() * 2.0,
                0.5 + r.unit() * 2.0,
            ],
            provoking: (r.next() % 3) as usize,
            ..Scene::default()
        };
        for v in &mut scene.vertices {
            for &(c, ty) in inputs {
                v.insert(c, r.value(ty));
            }
        }
        for _ in 0..uniforms {
            scene.uniforms.push(r.value(Scalar::F32));
        }
        scene
            .ubos
            .push((0..8).map(|_| r.value(Scalar::F32)).collect());
        scene
            .textures
            .push(Texture::rgba_2d(2, 2, vec![[0.25, 0.5, 0.75, 1.0]; 4]));
        for _ in 0..fragments {
            scene.fragments.push([r.bary(), r.bary(), r.bary()]);
        }
        scene
    }
}

impl Scene {
    /// A scene for any pair (a real one, say): inputs for every vertex
    /// shader `load_input`, uniform words, UBOs and storage buffers covering
    /// every access of either shader (16 KiB per buffer for dynamic
    /// offsets), one small
    /// mipmapped texture per texture index in the shape the shaders sample
    /// it, and `fragments` sample points. Words read as integers at fixed
    /// places hold 0..=3 (loop counts and indices stay in range), all other
    /// words floats in [-4, 4).
    pub fn for_pair(
        vs: &Shader<'_, GenericOp>,
        fs: &Shader<'_, GenericOp>,
        seed: u64,
        fragments: usize,
    ) -> Scene {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut scene = Scene::random(seed, &[], 0, fragments);
        scene.ubos.clear();
        scene.textures.clear();
        let small_int = |r: &mut Rng| (r.next() % 4) as u32;
        let mut inputs: Vec<(Comp, Scalar)> = Vec::new();
        // Typed words read at fixed places.
        let mut words: Vec<(Buffer, u32, Scalar)> = Vec::new();
        let mut shapes: BTreeMap<u8, TexShape> = BTreeMap::new();
        for s in [vs, fs] {
            for (_, i) in s.insts_in_order() {
                let d = s.inst(i);
                let Op::Opcode(op) = d.op else { continue };
                let ty = d.result.map(|v| s.value_type(v).scalar);
                let fixed = |k: usize| -> Option<u32> {
                    d.args
                        .get(k)
                        .and_then(|&a| match s.inst(s.value_def(a)).op {
                            Op::Opcode(GenericOp::Const { bits }) => Some(bits),
                            _ => None,
                        })
                };
                match op {
                    GenericOp::LoadInput { slot, comp, .. } if std::ptr::eq(s, vs) => {
                        inputs.push(((slot, comp), ty.unwrap_or(Scalar::F32)));
                    }
                    GenericOp::LoadUniform { index } => {
                        words.push((Buffer::Uniforms, index, ty.unwrap_or(Scalar::F32)));
                    }
                    GenericOp::LoadUbo { binding } => {
                        let at = fixed(0).map_or(u32::MAX, |b| b / 4);
                        words.push((Buffer::Ubo(binding), at, ty.unwrap_or(Scalar::F32)));
                    }
                    GenericOp::LoadSsbo { binding }
                    | GenericOp::StoreSsbo { binding }
                    | GenericOp::SsboAtomic { binding, .. }
                    | GenericOp::SsboAtomicLoad { binding }
                    | GenericOp::SsboAtomicStore { binding }
                    | GenericOp::SsboSize { binding } => {
                        let at = fixed(0).map_or(u32::MAX, |b| b / 4);
                        let ty = ty.unwrap_or(Scalar::F32);
                        words.push((Buffer::Ssbo(binding), at, ty));
                    }
                    GenericOp::Sample { texture, shape, .. }
                    | GenericOp::Gather { texture, shape, .. }
                    | GenericOp::TexelFetch { texture, shape, .. }
                    | GenericOp::TextureSize { texture, shape } => {
                        shapes.insert(texture, shape);
                    }
                    GenericOp::TextureLevels { texture } => {
                        shapes.entry(texture).or_insert(TexShape::D2);
                    }
                    _ => {}
                }
            }
        }
        for v in 0..3 {
            for &(c, ty) in &inputs {
                let bits = if ty.is_float() {
                    r.value(ty)
                } else {
                    small_int(&mut r)
                };
                scene.vertices[v].insert(c, bits);
            }
        }
        const BUFFER_WORDS: usize = 4096;
        const UNIFORM_WORDS: usize = 64;
        let fill = |r: &mut Rng, n: usize| (0..n).map(|_| r.value(Scalar::F32)).collect();
        scene.uniforms = fill(&mut r, UNIFORM_WORDS);
        for &(buffer, at, ty) in &words {
            let (list, b) = match buffer {
                Buffer::Uniforms => (None, 0),
                Buffer::Ubo(b) => (Some(&mut scene.ubos), b),
                Buffer::Ssbo(b) => (Some(&mut scene.ssbos), b),
            };
            let store = match list {
                None => &mut scene.uniforms,
                Some(list) => {
                    while list.len() <= b as usize {
                        list.push(fill(&mut r, BUFFER_WORDS));
                    }
                    &mut list[b as usize]
                }
            };
            if (at as usize) < BUFFER_WORDS {
                if store.len() <= at as usize {
                    let more: Vec<u32> = fill(&mut r, at as usize + 1 - store.len());
                    store.extend(more);
                }
                if !ty.is_float() {
                    store[at as usize] = small_int(&mut r);
                }
            }
        }
        for (&t, &shape) in &shapes {
            while scene.textures.len() <= t as usize {
                scene.textures.push(Texture::rgba_2d(1, 1, vec![[0.5; 4]]));
            }
            scene.textures[t as usize] = test_texture(&mut r, shape);
        }
        scene
    }
}

/// Where a word a shader reads lives.
#[derive(Clone, Copy)]
enum Buffer {
    Uniforms,
    Ubo(u8),
    Ssbo(u8),
}

/// A 4×4(×4) texture with three levels of random texels, in `shape`.
fn test_texture(r: &mut Rng, shape: TexShape) -> Texture {
    let layers = match shape.dim {
        Dim::Cube => 6,
        _ => 1,
    } * if shape.array { 2 } else { 1 };
    let size = match shape.dim {
        Dim::D1 => [4, 1, 1],
        Dim::D3 => [4, 4, 4],
        _ => [4, 4, 1],
    };
    let mut t = Texture::from_fn(shape.dim, size, layers, 3, |_, _, _, _, _| {
        [
            r.unit() as f32,
            r.unit() as f32,
            r.unit() as f32,
            r.unit() as f32,
        ]
    });
    if shape.ms {
        // One level; each texel repeated per sample.
        let samples = 4;
        let mut level = t.levels.swap_remove(0);
        level.texels = level
            .texels
            .iter()
            .flat_map(|&x| std::iter::repeat_n(x, samples))
            .collect();
        t.levels = vec![level];
        t.samples = samples as u32;
    }
    t
}

impl Scene {
    /// The memory one invocation starts with.
    fn memory(&self) -> Memory {
        Memory {
            ssbos: self.ssbos.clone(),
            ..Memory::default()
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn bary(&mut self) -> [f64; 3] {
        let (a, b) = (self.unit(), self.unit());
        let (a, b) = if a + b > 1.0 {
            (1.0 - a, 1.0 - b)
        } else {
            (a, b)
        };
        [1.0 - a - b, a, b]
    }
    fn value(&mut self, ty: Scalar) -> u32 {
        let x = self.unit() * 8.0 - 4.0;
        match ty {
            Scalar::F32 => (x as f32).to_bits(),
            Scalar::F16 => lathe_ir::f16::from_f64(x) as u32,
            Scalar::I16 => (x * 8.0) as i16 as u16 as u32,
            _ => (x * 8.0) as i32 as u32,
        }
    }
}

/// What a pair did on a scene.
#[derive(Debug)]
pub struct PairRun {
    /// The vertex shader's outcome per vertex, or why it failed.
    pub vertices: Result<[Outcome; 3], InterpError>,
    /// Each fragment's outcome.
    pub fragments: Vec<Result<Outcome, InterpError>>,
    /// A float varying the fragment shader interpolates (non-flat load)
    /// holds Inf or NaN at some vertex.
    pub interpolates_non_finite: bool,
    /// The largest magnitude among those vertex values.
    pub interpolated_magnitude: f64,
}

/// Run a pair on a scene.
pub fn run_pair(
    vs: &Shader<'_, GenericOp>,
    fs: &Shader<'_, GenericOp>,
    scene: &Scene,
    limits: Limits,
) -> PairRun {
    let base = Invocation {
        uniforms: scene.uniforms.clone(),
        ubos: scene.ubos.clone(),
        textures: scene.textures.clone(),
        ..Invocation::default()
    };
    let mut outs = Vec::with_capacity(3);
    for (k, v) in scene.vertices.iter().enumerate() {
        let mut inv = Invocation {
            inputs: v.clone(),
            ..base.clone()
        };
        inv.sysvals.vertex_index = k as u32;
        match interp::run_with_memory(vs, &inv, &mut scene.memory(), limits) {
            Ok(o) => outs.push(o),
            Err(e) => {
                return PairRun {
                    vertices: Err(e),
                    fragments: Vec::new(),
                    interpolates_non_finite: false,
                    interpolated_magnitude: 0.0,
                };
            }
        }
    }
    let outs: [Outcome; 3] = [outs[0].clone(), outs[1].clone(), outs[2].clone()];
    // The interpreter keys inputs by (slot, component) only: give each
    // distinct (slot, component, qualifier, type) load its own key.
    let arena = lathe_ir::Bump::new();
    let mut fs2: Shader<GenericOp> =
        lathe_ir::parse(&arena, &lathe_ir::print(fs)).expect("printed IR parses");
    let mut keys: Vec<(Comp, Interp, Type)> = Vec::new();
    for (_, i) in fs2.insts_in_order().collect::<Vec<_>>() {
        let d = fs2.inst(i);
        let Op::Opcode(GenericOp::LoadInput { slot, comp, interp }) = d.op else {
            continue;
        };
        let ty = fs2.value_type(d.result.expect("load result"));
        let key = ((slot, comp), interp, ty);
        let k = keys.iter().position(|x| *x == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        });
        fs2.inst_mut(i).op = Op::Opcode(GenericOp::LoadInput {
            slot: k as u16,
            comp: 0,
            interp,
        });
    }
    // The vertex values the fragment shader interpolates.
    let interpolated: Vec<f64> = keys
        .iter()
        .filter(|(_, q, ty)| q.mode != InterpMode::Flat && ty.scalar.is_float())
        .flat_map(|&(c, _, ty)| {
            outs.iter().filter_map(move |o| {
                o.outputs
                    .get(&c)
                    .map(|&(_, bits)| float_of(ty.scalar, bits))
            })
        })
        .collect();
    let interpolates_non_finite = interpolated.iter().any(|x| !x.is_finite());
    let interpolated_magnitude = interpolated.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let fragments = scene
        .fragments
        .iter()
        .map(|bary| {
            let mut inv = base.clone();
            // A 4×4-pixel triangle (texel fetches at the fragment position
            // stay inside the 4×4 textures of `Scene::for_pair`).
            let centre = bary[0];
            inv.sysvals.frag_coord = [(4.0 * centre[1]) as f32, (4.0 * centre[2]) as f32, 0.5, 1.0];
            for (k, &(c, q, ty)) in keys.iter().enumerate() {
                if let Some(bits) = interpolate(&outs, c, q, ty, bary, scene) {
                    inv.inputs.insert((k as u16, 0), bits);
                }
            }
            interp::run_with_memory(&fs2, &inv, &mut scene.memory(), limits)
        })
        .collect();
    PairRun {
        vertices: Ok(outs),
        fragments,
        interpolates_non_finite,
        interpolated_magnitude,
    }
}

fn float_of(ty: Scalar, bits: u32) -> f64 {
    match ty {
        Scalar::F16 => lathe_ir::f16::to_f64(bits as u16),
        _ => f32::from_bits(bits) as f64,
    }
}

fn interpolate(
    outs: &[Outcome; 3],
    c: Comp,
    q: Interp,
    ty: Type,
    bary: &[[f64; 3]; 3],
    scene: &Scene,
) -> Option<u32> {
    let mut v = [0u32; 3];
    for (k, o) in outs.iter().enumerate() {
        v[k] = o.outputs.get(&c)?.1;
    }
    if q.mode == InterpMode::Flat || !ty.scalar.is_float() {
        return Some(v[scene.provoking]);
    }
    let b = bary[match q.loc {
        InterpLoc::Center => 0,
        InterpLoc::Centroid => 1,
        InterpLoc::Sample => 2,
    }];
    let b = if q.mode == InterpMode::Smooth {
        let p = [b[0] / scene.w[0], b[1] / scene.w[1], b[2] / scene.w[2]];
        let sum = p[0] + p[1] + p[2];
        [p[0] / sum, p[1] / sum, p[2] / sum]
    } else {
        b
    };
    let x = v.map(|bits| float_of(ty.scalar, bits));
    if v[0] == v[1] && v[1] == v[2] && x[0].is_finite() {
        return Some(v[0]);
    }
    let r = x[0] + b[1] * (x[1] - x[0]) + b[2] * (x[2] - x[0]);
    Some(match ty.scalar {
        Scalar::F16 => lathe_ir::f16::from_f64(r) as u32,
        _ => (r as f32).to_bits(),
    })
}

/// What a comparison covered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    /// Fragments compared (the original completed).
    pub fragments: usize,
    /// Fragments not compared because the original could not complete.
    pub skipped: usize,
    /// Fragments not compared because a non-finite value crossed
    /// interpolation without `preserve_inf` (see the module docs).
    pub non_finite: usize,
    /// Why the first run of the original pair that could not complete
    /// failed (a vertex or a fragment).
    pub first_failure: Option<String>,
}

/// Compare the original pair's run with the linked pair's, linked with
/// `options` into `report`.
pub fn compare(
    before: &PairRun,
    after: &PairRun,
    report: &LinkReport,
    options: &LinkOptions,
) -> Result<Compared, String> {
    let xfb = &options.xfb;
    let vb = match &before.vertices {
        Ok(v) => v,
        Err(e) => {
            return Ok(Compared {
                first_failure: Some(format!("vertex: {e}")),
                ..Compared::default()
            });
        }
    };
    let va = after
        .vertices
        .as_ref()
        .map_err(|e| format!("the linked vertex shader failed: {e}"))?;
    let moved: HashMap<Comp, Comp> = report.relocated.iter().copied().collect();
    for k in 0..3 {
        for (&c, &(ty, bits)) in &vb[k].outputs {
            let keep = slots::output_class(c.0) == Class::Sysval || xfb.contains(&c);
            if !keep {
                continue;
            }
            let to = moved.get(&c).copied().unwrap_or(c);
            let got = va[k].outputs.get(&to).map(|x| x.1);
            if got != Some(bits) {
                return Err(format!(
                    "vertex {k}: output {c:?} ({ty}) was {bits:#x}, linked {to:?} is {got:x?}"
                ));
            }
        }
    }
    // Rounding errors of moved sums scale with their terms (interpolated
    // values), not with the result.
    let inexact = report.moved_interpolated.then(|| {
        before
            .interpolated_magnitude
            .max(after.interpolated_magnitude)
    });
    let mut n = Compared::default();
    if !options.preserve_inf && (before.interpolates_non_finite || after.interpolates_non_finite) {
        n.non_finite = before.fragments.len();
        return Ok(n);
    }
    for (k, (b, a)) in before.fragments.iter().zip(&after.fragments).enumerate() {
        let b = match b {
            Ok(b) => b,
            Err(e) => {
                n.skipped += 1;
                n.first_failure
                    .get_or_insert_with(|| format!("fragment {k}: {e}"));
                continue;
            }
        };
        let a = a
            .as_ref()
            .map_err(|e| format!("fragment {k}: the linked fragment shader failed: {e}"))?;
        if a.discarded != b.discarded {
            return Err(format!(
                "fragment {k}: discard {} vs {}",
                b.discarded, a.discarded
            ));
        }
        same_outputs(&b.outputs, &a.outputs, inexact).map_err(|e| format!("fragment {k}: {e}"))?;
        n.fragments += 1;
    }
    Ok(n)
}

/// Equal outputs; with `inexact = Some(scale)`, floats within the
/// tolerance of `1 + max(|a|, |b|, scale)`.
fn same_outputs(
    b: &BTreeMap<Comp, (Type, u32)>,
    a: &BTreeMap<Comp, (Type, u32)>,
    inexact: Option<f64>,
) -> Result<(), String> {
    if b.keys().ne(a.keys()) {
        return Err(format!("outputs {:?} vs {:?}", b.keys(), a.keys()));
    }
    for (c, &(ty, x)) in b {
        let (ty2, y) = a[c];
        if ty != ty2 {
            return Err(format!("output {c:?}: type {ty} vs {ty2}"));
        }
        if x == y {
            continue;
        }
        if ty.scalar.is_float() {
            let (fx, fy) = (float_of(ty.scalar, x), float_of(ty.scalar, y));
            if fx.is_nan() && fy.is_nan() {
                continue;
            }
            let tol = if ty.scalar == Scalar::F16 {
                TOLERANCE_F16
            } else {
                TOLERANCE_F32
            };
            if let Some(scale) = inexact
                && (fx - fy).abs() <= tol * (1.0 + fx.abs().max(fy.abs()).max(scale))
            {
                continue;
            }
            return Err(format!("output {c:?}: {fx} vs {fy} ({ty})"));
        }
        return Err(format!("output {c:?}: {x:#x} vs {y:#x} ({ty})"));
    }
    Ok(())
}
