//! Corpus fragment shaders drawn by lavapipe on a full-screen triangle and
//! run, 2×2 quad by 2×2 quad in lockstep (`run_quad`, so derivatives and
//! implicit-LOD sampling are those of real quads), in Lathe's IR
//! interpreter after `lathe-frontend` lowered the same SPIR-V; every
//! output component the interpreter writes must agree with lavapipe's
//! RGBA 32-bit target.
//!
//! Inputs are known exactly at every pixel and typed from the module
//! (`support/reflect.rs` reads the SPIR-V types and layout decorations,
//! `support/feed.rs` picks values per type, never per shader):
//!
//! - smooth float varyings are affine in the pixel centre with dyadic
//!   coefficients, non-negative over the target (`0.25..=2`), so
//!   lavapipe's interpolation is exact and equals the interpreter's input;
//!   flat varyings are constants, integer ones `0..=3`;
//! - uniform-buffer and push-constant words hold floats in `[1/16, 1]`,
//!   integers `0..=3` or booleans, as the block's member types say;
//! - textures are 8×8 (cube faces, 2 array layers, depth 4), one level,
//!   texels from the same per-type choice, sampled with nearest filtering
//!   and clamp-to-edge (both sides' default);
//! - `FragCoord` is the pixel centre at depth 0.5, w 1; the triangle is
//!   back-facing (`FrontFacing` false) and has primitive id 0.
//!
//! Tolerances, per output component, are those of the least exact float
//! operation in the component's data-flow cone (`support/cone.rs`:
//! integers and exactly defined floats equal, correctly rounded arithmetic
//! within 2^-16, transcendentals within 2^-10, relative to
//! `max(1, |value|)`).
//!
//! A shader the harness cannot feed is listed with the reason and not
//! compared; at least [`MIN_COMPARED`] must be compared.

#[path = "../../frontend/tests/support/corpus.rs"]
mod corpus;
mod support;

use lathe_frontend::{Interface, Options, lower_spirv};
use lathe_ir::interp::{Memory, run_quad};
use lathe_ir::{DerivMode, GenericOp, Invocation, Limits, LodMode, Op, Shader, Stage};
use lathe_oracle::{CompareOp, FragmentJob, ResourceBinding, Sampler, ScalarKind, Varying};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;
use support::bind::{Bound, bind, set};
use support::cone::{OpClass, output_classes};
use support::perturb::perturb;
use support::random_compute::Rng;
use support::reflect::{Reflection, Word, reflect};
use support::{corpus_spirv, feed, oracle, seed_of};

const W: u32 = 8;
const H: u32 = 8;
/// The corpus has 210 fragment entry points; fewer compared means the
/// harness or the frontend regressed.
const MIN_COMPARED: usize = 150;
/// Texture size (and cube face size; 2 array layers, depth 4).
const TEX: u32 = 8;
/// A component whose propagated bound (`support/perturb.rs`) exceeds
/// this, relative to `max(1, |value|)`, is not determined by the spec's
/// precision: counted as ill-conditioned, not compared.
const ILL_CONDITIONED: f64 = 1.0 / 256.0;
const PERTURBATIONS: u64 = 4;
/// Run-time arrays in storage buffers get this many elements.
const RUNTIME_ELEMENTS: u32 = 16;
/// Colour targets a shader may write (Vulkan guarantees 4; lavapipe has 8).
const MAX_TARGETS: usize = 8;

fn interface_kind(scalar: &str) -> Result<ScalarKind, String> {
    match scalar {
        "f32" => Ok(ScalarKind::Float),
        "i32" => Ok(ScalarKind::Sint),
        "u32" | "bool" => Ok(ScalarKind::Uint),
        other => Err(format!("unsupported: {other} varyings")),
    }
}

/// Everything one draw needs, on both sides.
struct Setup {
    varyings: Vec<Varying>,
    resources: Vec<ResourceBinding>,
    push: Vec<u32>,
    targets: Vec<ScalarKind>,
    /// Interpreter inputs shared by every pixel (varyings and the
    /// fragment coordinate are added per pixel).
    base: Invocation,
    /// Storage buffers (read only: shaders that store are not fed).
    memory: Memory,
}

/// The varyings, one per location, from the interface's inputs.
fn varyings(
    interface: &Interface,
    rng: &mut Rng,
    base: &mut Invocation,
) -> Result<Vec<Varying>, String> {
    // (kind, flat, components used) per location.
    let mut locations: BTreeMap<u32, (ScalarKind, bool, u32)> = BTreeMap::new();
    for input in &interface.inputs {
        if let Some(b) = &input.builtin {
            match b.as_str() {
                "FragCoord" | "FrontFacing" | "HelperInvocation" => {}
                "PrimitiveId" | "Layer" | "ViewportIndex" => {
                    let slot = match b.as_str() {
                        "PrimitiveId" => lathe_ir::slot::PRIMITIVE_ID,
                        "Layer" => lathe_ir::slot::LAYER,
                        _ => lathe_ir::slot::VIEWPORT,
                    };
                    base.inputs.insert((slot, 0), 0);
                }
                other => return Err(format!("built-in input {other} (one sample, no points)")),
            }
            continue;
        }
        let location = input.location.ok_or("an input without a location")?;
        let kind = interface_kind(&input.scalar)?;
        let flat = kind != ScalarKind::Float || input.interpolation.as_deref() == Some("flat");
        for l in location..location + input.locations {
            let e = locations.entry(l).or_insert((kind, flat, 0));
            if e.0 != kind || e.1 != flat {
                return Err(format!(
                    "location {l} holds inputs of different types or interpolation"
                ));
            }
            e.2 = e.2.max(input.component + input.lanes);
        }
    }
    let mut out = Vec::new();
    for (&location, &(kind, flat, components)) in &locations {
        let v = if flat {
            let word = match kind {
                ScalarKind::Float => Word::Float,
                ScalarKind::Sint => Word::Sint,
                ScalarKind::Uint => Word::Uint,
            };
            let c = feed::texel(rng, word);
            Varying {
                location,
                kind,
                components,
                flat: true,
                vertices: [c; 3],
            }
        } else {
            // Over the 8x8 target: 0.5..=1 plus at most ±8·(1/32) per axis.
            let pick = |rng: &mut Rng, steps: &[f32]| -> [f32; 4] {
                std::array::from_fn(|_| *rng.pick(steps))
            };
            let base = pick(rng, &[0.5, 0.75, 1.0]);
            let dx = pick(rng, &[-1.0 / 32.0, 0.0, 1.0 / 64.0, 1.0 / 32.0]);
            let dy = pick(rng, &[-1.0 / 32.0, 0.0, 1.0 / 64.0, 1.0 / 32.0]);
            Varying::affine(location, W, H, base, dx, dy, components)
        };
        out.push(v);
    }
    Ok(out)
}

/// Samplers whose index is in `compare_with` compare `reference <= texel`.
fn setup(
    interface: &Interface,
    reflection: &Reflection,
    compare_with: &BTreeSet<u32>,
    rng: &mut Rng,
) -> Result<Setup, String> {
    let sampler = |index: u32| Sampler {
        compare: compare_with
            .contains(&index)
            .then_some(CompareOp::LessOrEqual),
        ..Sampler::default()
    };
    let Bound {
        resources,
        push,
        mut base,
        memory,
        ..
    } = bind(interface, reflection, rng, RUNTIME_ELEMENTS, TEX, sampler)?;
    let varyings = varyings(interface, rng, &mut base)?;
    let mut targets = Vec::new();
    for output in &interface.outputs {
        match output.builtin.as_deref() {
            None => {}
            // No depth attachment: the depth written is not compared.
            Some("FragDepth") => continue,
            Some(other) => return Err(format!("unsupported: built-in output {other}")),
        }
        let location = output.location.ok_or("an output without a location")? as usize;
        let kind = interface_kind(&output.scalar)?;
        for l in location..location + output.locations as usize {
            if l >= MAX_TARGETS {
                return Err(format!("unsupported: colour output at location {l}"));
            }
            set(&mut targets, l, kind, ScalarKind::Float);
        }
    }
    if targets.is_empty() {
        return Err("no colour output".into());
    }
    Ok(Setup {
        varyings,
        resources,
        push,
        targets,
        base,
        memory,
    })
}

/// The interpreter inputs of pixel `(x, y)`.
fn pixel(s: &Setup, x: u32, y: u32) -> Invocation {
    let mut inv = s.base.clone();
    inv.sysvals.frag_coord = [x as f32 + 0.5, y as f32 + 0.5, 0.5, 1.0];
    for v in &s.varyings {
        for c in 0..v.components as usize {
            let bits = if v.flat {
                v.vertices[0][c]
            } else {
                let at = |k: usize| f32::from_bits(v.vertices[k][c]);
                let (fx, fy) = (
                    (x as f32 + 0.5) / (2 * W) as f32,
                    (y as f32 + 0.5) / (2 * H) as f32,
                );
                (at(0) + (at(1) - at(0)) * fx + (at(2) - at(0)) * fy).to_bits()
            };
            inv.inputs.insert((v.location as u16, c as u8), bits);
        }
    }
    inv
}

/// Per-class counts of compared components and the largest difference.
#[derive(Default)]
struct Stats {
    components: BTreeMap<String, usize>,
    worst: BTreeMap<String, f64>,
    /// Components whose interpreter value is NaN or infinite.
    non_finite: usize,
    /// Components the perturbation shows the spec's bounds do not determine.
    ill_conditioned: usize,
    /// Quads run invocation by invocation (implicit-LOD sampling in
    /// non-uniform control flow).
    split_quads: usize,
    pixels: usize,
    /// Shaders with components not compared, and how many.
    partial: Vec<String>,
    /// Generic opcodes of the compared shaders.
    opcodes: BTreeSet<String>,
}

enum Outcome {
    Compared,
    Skipped(String),
    Differs(String),
}

/// Lavapipe takes every derivative at fine granularity, coarse and
/// unqualified ones included (the spec allows it; `lavapipe_derivatives_are_fine`
/// checks it), where the interpreter's coarse/default ones subtract the
/// quad's first row or column: make the lowered shader ask for what the
/// driver does.
fn as_lavapipe_derives(shader: &mut Shader<'_, GenericOp>) {
    let insts: Vec<_> = shader.insts_in_order().map(|(_, i)| i).collect();
    for i in insts {
        let op = &mut shader.inst_mut(i).op;
        match op {
            Op::Opcode(GenericOp::Ddx { mode }) | Op::Opcode(GenericOp::Ddy { mode }) => {
                *mode = DerivMode::Fine
            }
            _ => {}
        }
    }
}

/// Lower `words`' fragment entry point as lavapipe runs it, perturbed
/// (`support/perturb.rs`) with the given seed.
fn lower<'a>(
    arena: &'a lathe_ir::Bump,
    words: &[u32],
    entry: &str,
    perturbation: Option<u64>,
) -> Result<lathe_frontend::Lowered<'a>, String> {
    let opts = Options {
        entry: Some(entry.to_string()),
        stage: Some(Stage::Fragment),
        ..Options::default()
    };
    let mut lowered = lower_spirv(arena, words, &opts).map_err(|e| format!("frontend: {e}"))?;
    as_lavapipe_derives(&mut lowered.shader);
    if let Some(seed) = perturbation {
        perturb(&mut lowered.shader, seed);
    }
    Ok(lowered)
}

/// Run every pixel in the interpreter, quad by quad. A quad whose
/// implicit-LOD sample sits in non-uniform control flow is run invocation
/// by invocation: every texture has one level and nearest filtering for
/// both magnification and minification, so the LOD cannot change the
/// texel read. Any other undefined behaviour is returned.
fn interpret(
    shader: &Shader<'_, GenericOp>,
    s: &Setup,
    split_quads: &mut usize,
) -> Result<Vec<lathe_ir::Outcome>, lathe_ir::InterpError> {
    let limits = Limits {
        max_steps: 500_000,
        ..Limits::default()
    };
    let mut expected = vec![lathe_ir::Outcome::default(); (W * H) as usize];
    for qy in (0..H).step_by(2) {
        for qx in (0..W).step_by(2) {
            let at = [(qx, qy), (qx + 1, qy), (qx, qy + 1), (qx + 1, qy + 1)];
            let quad = at.map(|(x, y)| pixel(s, x, y));
            let out = match run_quad(shader, &quad, &mut s.memory.clone(), limits) {
                Ok(out) => out.to_vec(),
                Err(lathe_ir::InterpError::Undefined { inst, reason, .. })
                    if reason.contains("non-uniform control flow")
                        && matches!(
                            shader.inst(inst).op,
                            Op::Opcode(GenericOp::Sample {
                                lod: LodMode::Implicit | LodMode::Bias,
                                ..
                            })
                        ) =>
                {
                    *split_quads += 1;
                    quad.iter()
                        .map(|inv| lathe_ir::interp::run(shader, inv, limits))
                        .collect::<Result<_, _>>()?
                }
                Err(e) => return Err(e),
            };
            for ((x, y), o) in at.into_iter().zip(out) {
                expected[(y * W + x) as usize] = o;
            }
        }
    }
    Ok(expected)
}

/// Whether the shader stores to storage buffers or images.
fn writes_memory(shader: &Shader<'_, GenericOp>) -> bool {
    shader.insts_in_order().any(|(_, i)| {
        matches!(
            shader.inst(i).op,
            Op::Opcode(
                GenericOp::StoreSsbo { .. }
                    | GenericOp::SsboAtomic { .. }
                    | GenericOp::SsboAtomicStore { .. }
                    | GenericOp::ImageStore { .. }
                    | GenericOp::ImageAtomic { .. }
            )
        )
    })
}

/// The sampler indices of the shader's depth-compare samples and gathers.
fn compare_samplers(shader: &Shader<'_, GenericOp>) -> BTreeSet<u32> {
    shader
        .insts_in_order()
        .filter_map(|(_, i)| match shader.inst(i).op {
            Op::Opcode(GenericOp::Sample {
                sampler,
                compare: true,
                ..
            })
            | Op::Opcode(GenericOp::Gather {
                sampler,
                compare: true,
                ..
            }) => Some(sampler as u32),
            _ => None,
        })
        .collect()
}

fn compare(case: &corpus::Case, dir: &std::path::Path, stats: &mut Stats) -> Outcome {
    let words = match corpus_spirv(
        dir,
        &case.path,
        case.wgsl,
        &case.entry,
        Stage::Fragment,
        &case.overrides,
    ) {
        Ok(w) => w,
        Err(e) => return Outcome::Skipped(format!("SPIR-V: {e}")),
    };
    let arena = lathe_ir::Bump::new();
    let lowered = match lower(&arena, &words, &case.entry, None) {
        Ok(l) => l,
        Err(e) => return Outcome::Skipped(e),
    };
    let reflection = match reflect(&words) {
        Ok(r) => r,
        Err(e) => return Outcome::Skipped(format!("reflection: {e}")),
    };
    let seed = seed_of(&case.path, &case.entry);
    let mut rng = Rng::new(seed);
    if writes_memory(&lowered.shader) {
        return Outcome::Skipped(
            "unsupported: stores to storage buffers or images (the oracle reads back only render targets from draws)"
                .into(),
        );
    }
    let compare_with = compare_samplers(&lowered.shader);
    let s = match setup(&lowered.interface, &reflection, &compare_with, &mut rng) {
        Ok(s) => s,
        Err(e) => return Outcome::Skipped(e),
    };
    let classes = output_classes(&lowered.shader, |op| match op {
        Op::Opcode(GenericOp::StoreOutput { slot, comp }) => Some((*slot, *comp)),
        _ => None,
    });
    // The interpreter first: a shader it cannot run is reported before
    // lavapipe is asked (a runaway loop would stall the driver).
    let mut split = 0;
    let expected = match interpret(&lowered.shader, &s, &mut split) {
        Ok(e) => e,
        Err(e) if e.is_undefined() => {
            return Outcome::Skipped(format!(
                "undefined behaviour with these inputs (the shader expects other data): {e}"
            ));
        }
        Err(e) => return Outcome::Differs(format!("interpreter: {e}")),
    };
    // The same pixels with every inexact operation moved by its bound.
    let mut spread = vec![[[0f64; 4]; MAX_TARGETS]; (W * H) as usize];
    if classes.values().any(|&c| c != OpClass::Exact) {
        for k in 0..PERTURBATIONS {
            let arena = lathe_ir::Bump::new();
            let moved = lower(&arena, &words, &case.entry, Some(seed + k))
                .and_then(|l| interpret(&l.shader, &s, &mut 0).map_err(|e| e.to_string()));
            for (p, base) in expected.iter().enumerate() {
                for (&(slot, c), &(_, bits)) in &base.outputs {
                    let Some(cell) = spread[p].get_mut(slot as usize) else {
                        continue;
                    };
                    let moved_bits = moved
                        .as_ref()
                        .ok()
                        .and_then(|m| m[p].outputs.get(&(slot, c)))
                        .map(|&(_, b)| b);
                    let delta = match moved_bits {
                        Some(m) => (f32::from_bits(m) as f64 - f32::from_bits(bits) as f64).abs(),
                        None => f64::INFINITY,
                    };
                    let d = &mut cell[c as usize];
                    *d = d.max(if delta.is_nan() { f64::INFINITY } else { delta });
                }
            }
        }
    }
    let clear = [0xdead_beef; 4];
    let rendered = match oracle().render_fragment(&FragmentJob {
        spirv: &words,
        entry_point: &case.entry,
        specialization: &[],
        resources: &s.resources,
        push_constants: &s.push,
        varyings: &s.varyings,
        targets: &s.targets,
        width: W,
        height: H,
        clear,
    }) {
        Ok(r) => r,
        Err(e) => return Outcome::Differs(format!("lavapipe: {e}")),
    };
    let mut bad = Vec::new();
    let mut local = Stats::default();
    for y in 0..H {
        for x in 0..W {
            let p = (y * W + x) as usize;
            let out = &expected[p];
            for (location, &kind) in s.targets.iter().enumerate() {
                let texel = rendered.texel(location, x, y);
                for c in 0..4u8 {
                    let key = (location as u16, c);
                    let (want, class) = if out.discarded {
                        (clear[c as usize], OpClass::Exact)
                    } else {
                        match out.outputs.get(&key) {
                            Some(&(_, bits)) => (bits, classes[&key]),
                            None => continue,
                        }
                    };
                    let got = texel[c as usize];
                    if kind != ScalarKind::Float {
                        *local.components.entry("Integer".into()).or_default() += 1;
                        if got != want {
                            bad.push(format!(
                                "pixel ({x}, {y}) location {location}.{c}: lavapipe 0x{got:08x}, interpreter 0x{want:08x}"
                            ));
                        }
                        continue;
                    }
                    let (a, b) = (f32::from_bits(got) as f64, f32::from_bits(want) as f64);
                    if !b.is_finite() {
                        // Without SignedZeroInfNanPreserve a driver may
                        // assume no NaN or infinity arises.
                        local.non_finite += 1;
                        continue;
                    }
                    let moved = spread[p][location][c as usize];
                    if moved > ILL_CONDITIONED * b.abs().max(1.0) {
                        local.ill_conditioned += 1;
                        continue;
                    }
                    let name = format!("{class:?}");
                    *local.components.entry(name.clone()).or_default() += 1;
                    if class != OpClass::Exact && a.is_finite() {
                        let rel = (a - b).abs() / a.abs().max(b.abs()).max(1.0);
                        let w = local.worst.entry(name).or_default();
                        *w = w.max(rel);
                    }
                    if !class.agree(got, want, moved) {
                        bad.push(format!(
                            "pixel ({x}, {y}) location {location}.{c} ({class:?}): lavapipe {a:e} (0x{got:08x}), interpreter {b:e} (0x{want:08x})",
                        ));
                    }
                }
            }
        }
    }
    if !bad.is_empty() {
        return Outcome::Differs(format!(
            "{} components differ, e.g.\n    {}",
            bad.len(),
            bad[..bad.len().min(4)].join("\n    ")
        ));
    }
    for (k, n) in local.components {
        *stats.components.entry(k).or_default() += n;
    }
    for (k, w) in local.worst {
        let e = stats.worst.entry(k).or_default();
        *e = e.max(w);
    }
    if local.non_finite + local.ill_conditioned > 0 {
        stats.partial.push(format!(
            "{} ({}): {} NaN/infinite, {} ill-conditioned",
            case.path, case.entry, local.non_finite, local.ill_conditioned
        ));
    }
    stats.non_finite += local.non_finite;
    stats.ill_conditioned += local.ill_conditioned;
    stats.split_quads += split;
    stats.pixels += (W * H) as usize;
    support::opcodes(&lathe_ir::print(&lowered.shader), &mut stats.opcodes);
    Outcome::Compared
}

/// Lavapipe's derivatives are fine ones whatever the shader asks for
/// (what [`as_lavapipe_derives`] relies on): `p = (x + y + 1)²` over the
/// pixels, whose fine and coarse differences disagree on odd rows.
#[test]
fn lavapipe_derivatives_are_fine() {
    let src = "@fragment fn main(@location(0) v: f32) -> @location(0) vec4<f32> {
        let p = v * v * 64.0;
        return vec4<f32>(dpdx(p), dpdy(p), dpdxCoarse(p), dpdyCoarse(p));
    }";
    let words = support::wgsl_to_spirv(src, naga::ShaderStage::Fragment).expect("probe compiles");
    let v = [Varying::affine(
        0, 4, 4, [0.0; 4], [0.125; 4], [0.125; 4], 1,
    )];
    let r = oracle()
        .render_fragment(&FragmentJob {
            spirv: &words,
            entry_point: "main",
            specialization: &[],
            resources: &[],
            push_constants: &[],
            varyings: &v,
            targets: &[ScalarKind::Float],
            width: 4,
            height: 4,
            clear: [0; 4],
        })
        .expect("probe draws");
    let p = |x: u32, y: u32| ((x + y + 1) * (x + y + 1)) as f32;
    for y in 0..4 {
        for x in 0..4 {
            let (x0, y0) = (x & !1, y & !1);
            let fine = [p(x0 + 1, y) - p(x0, y), p(x, y0 + 1) - p(x, y0)];
            let got = r.texel(0, x, y).map(f32::from_bits);
            assert_eq!(
                got,
                [fine[0], fine[1], fine[0], fine[1]],
                "pixel ({x}, {y})"
            );
        }
    }
}

#[test]
fn corpus_fragment_shaders_match_lavapipe() {
    let dir = corpus::corpus_dir();
    let cases: Vec<_> = corpus::cases(&dir)
        .into_iter()
        .filter(|c| c.stage == Stage::Fragment)
        .collect();
    let start = Instant::now();
    let mut stats = Stats::default();
    let (mut compared, mut skipped, mut differ) = (0, Vec::new(), Vec::new());
    for case in &cases {
        let name = format!("{} ({})", case.path, case.entry);
        match compare(case, &dir, &mut stats) {
            Outcome::Compared => compared += 1,
            Outcome::Skipped(why) => skipped.push(format!("{name}: {why}")),
            Outcome::Differs(why) => differ.push(format!("{name}: {why}")),
        }
    }
    println!(
        "{} fragment entry points: {compared} compared ({} pixels of {W}x{H}), {} not fed, {} differ, {:.1} s",
        cases.len(),
        stats.pixels,
        skipped.len(),
        differ.len(),
        start.elapsed().as_secs_f64()
    );
    println!(
        "  not compared: {} NaN/infinite components, {} ill-conditioned components; {} quads run per invocation",
        stats.non_finite, stats.ill_conditioned, stats.split_quads
    );
    for (class, n) in &stats.components {
        let worst = stats.worst.get(class).map_or(String::new(), |w| {
            format!(", largest relative difference {w:.2e}")
        });
        println!("  {class}: {n} components{worst}");
    }
    for p in &stats.partial {
        println!("  partly compared: {p}");
    }
    for s in &skipped {
        println!("  not fed: {s}");
    }
    // The fragment-only opcodes the compute suite cannot reach (the meta
    // `input`/`output` of hand-written IR and the private-memory ops only
    // backends make excepted) must be reached here.
    let fragment_only: Vec<&str> = support::COMPUTE_UNREACHABLE
        .iter()
        .map(|(op, _)| *op)
        .filter(|op| !matches!(*op, "input" | "output" | "load_private" | "store_private"))
        .collect();
    let missing: Vec<&&str> = fragment_only
        .iter()
        .filter(|op| !stats.opcodes.contains(**op))
        .collect();
    println!(
        "  fragment-only opcodes reached by the compared shaders: {} of {fragment_only:?}",
        fragment_only.len() - missing.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // No corpus shader demotes (OpDemoteToHelperInvocation), so `demote`
    // is checked only by the IR's own interpreter tests.
    assert_eq!(
        missing,
        [&"demote"],
        "fragment-only opcodes no compared corpus shader reaches (expected: demote only)"
    );
    assert!(
        compared >= MIN_COMPARED,
        "only {compared} corpus fragment shaders compared (want {MIN_COMPARED})"
    );
}
