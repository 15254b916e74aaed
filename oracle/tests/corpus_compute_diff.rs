//! Corpus compute shaders dispatched on lavapipe and, lowered by
//! `lathe-frontend` from the same SPIR-V, in the IR interpreter's
//! `dispatch`, on the same synthetic inputs; every storage-buffer word must
//! agree afterwards.
//!
//! Inputs are typed from the module (`support/reflect.rs`) and chosen per
//! type (`support/feed.rs`): storage and uniform buffers sized from their
//! block layout (run-time arrays get one element per invocation, at least
//! [`MIN_ELEMENTS`]), floats in `[1/16, 1]`, integers `0..=3`; one
//! workgroup of the shader's declared size.
//!
//! Comparison per word, by the type the block declares there: integers and
//! padding bit for bit; floats as `support/cone.rs` says for the least
//! exact operation in the cone of the values stored to that buffer, plus
//! the move under perturbation of every inexact operation within its
//! Vulkan bound (`support/perturb.rs`); NaN/infinite interpreter values
//! and ill-conditioned words are counted, not compared, and so are racy
//! words: those that change when the interpreter runs the invocations in
//! the opposite order (`atomicLoad` of a counter without a barrier).
//!
//! Storage images (2D, arrayed or not; RGBA32, R32, RGBA8 unorm, RGBA16
//! float) are as large as the workgroup (at least [`TEX`] square), fed
//! with float components exact in their format, and compared per
//! component like buffer words, lavapipe's 8-bit unorm and 16-bit float
//! components decoded and allowed the format's rounding step (the
//! interpreter stores `f32`s; unorm values clamped to `[0, 1]`).
//!
//! An entry point that cannot be fed (undefined behaviour with synthetic
//! data, resources the oracle does not bind) is listed with the reason.

#[path = "../../frontend/tests/support/corpus.rs"]
mod corpus;
mod support;

use lathe_frontend::{Options, lower_spirv};
use lathe_ir::interp::{Memory, run_workgroup};
use lathe_ir::texture::Image;
use lathe_ir::{GenericOp, Invocation, Limits, Op, Stage};
use lathe_oracle::{ComputeJob, ResourceBinding, Sampler, StorageFormat};
use std::collections::BTreeMap;
use std::time::Instant;
use support::bind::{Bound, Buffer, StorageImage, bind};
use support::cone::{OpClass, output_classes};
use support::perturb::perturb;
use support::random_compute::Rng;
use support::reflect::{Word, reflect};
use support::{corpus_spirv, oracle, seed_of};

/// Run-time arrays get at least this many elements.
const MIN_ELEMENTS: u32 = 64;
/// Shared-memory words every workgroup gets (more than the corpus uses).
const SHARED_WORDS: usize = 1 << 14;
/// Texture size.
const TEX: u32 = 8;
/// Perturbed runs per shader.
const PERTURBATIONS: u64 = 4;
/// Words whose perturbation move exceeds this (relative to
/// `max(1, |value|)`) are ill-conditioned.
const ILL_CONDITIONED: f64 = 1.0 / 256.0;
/// Interpreter work one run of a workgroup may take in the debug suite,
/// in steps times invocations: a shader that needs more (the 16x16 ray
/// tracer: six debug runs take about 2 minutes) is listed as not fed.
/// `LATHE_CORPUS_LANE_STEPS=1000000000` raises the budget.
fn max_steps(lanes: u64) -> u64 {
    let budget = std::env::var("LATHE_CORPUS_LANE_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4_000_000u64);
    budget / lanes.max(1)
}
/// The corpus has 31 compute entry points; 18 are compared. Since the
/// interpreter reports data races as undefined behaviour, computecloth's
/// `cloth.comp` and gameOfLife's `compute.wgsl` are not fed: on these
/// random inputs two invocations store to one word with no barrier
/// between them.
const MIN_COMPARED: usize = 18;

struct Setup {
    resources: Vec<ResourceBinding>,
    push: Vec<u32>,
    base: Invocation,
    memory: Memory,
    buffers: Vec<Buffer>,
    images: Vec<StorageImage>,
    workgroup_size: [u32; 3],
}

fn setup(
    interface: &lathe_frontend::Interface,
    reflection: &support::reflect::Reflection,
    rng: &mut Rng,
) -> Result<Setup, String> {
    let workgroup_size = interface
        .workgroup_size
        .ok_or("no workgroup size in the interface")?;
    let elements = MIN_ELEMENTS.max(workgroup_size.iter().product());
    // Images cover the workgroup (shaders index them by invocation id).
    let tex = TEX.max(workgroup_size[0]).max(workgroup_size[1]);
    let Bound {
        resources,
        push,
        base,
        memory,
        buffers,
        images,
    } = bind(interface, reflection, rng, elements, tex, |_| {
        Sampler::default()
    })?;
    Ok(Setup {
        resources,
        push,
        base,
        memory,
        buffers,
        images,
        workgroup_size,
    })
}

/// The storage buffers and images after one workgroup in the interpreter, the shader
/// lowered and perturbed with `perturbation`'s seed, its invocations run
/// in local-index order or, with `reversed`, the other way round.
fn interpret(
    words: &[u32],
    entry: &str,
    s: &Setup,
    perturbation: Option<u64>,
    reversed: bool,
) -> Result<(Vec<Vec<u32>>, Vec<Image>), lathe_ir::InterpError> {
    let arena = lathe_ir::Bump::new();
    let opts = Options {
        entry: Some(entry.to_string()),
        stage: Some(Stage::Compute),
        ..Options::default()
    };
    let mut lowered = lower_spirv(&arena, words, &opts)
        .map_err(|e| lathe_ir::InterpError::Malformed(format!("frontend: {e}")))?;
    if let Some(seed) = perturbation {
        perturb(&mut lowered.shader, seed);
    }
    let [sx, sy, sz] = s.workgroup_size;
    let mut lanes = Vec::new();
    for z in 0..sz {
        for y in 0..sy {
            for x in 0..sx {
                let mut inv = s.base.clone();
                let v = &mut inv.sysvals;
                v.local_invocation_id = [x, y, z];
                v.global_invocation_id = [x, y, z];
                v.workgroup_id = [0; 3];
                v.num_workgroups = [1; 3];
                v.local_invocation_index = (z * sy + y) * sx + x;
                lanes.push(inv);
            }
        }
    }
    if reversed {
        lanes.reverse();
    }
    let mut memory = s.memory.clone();
    memory.shared = vec![None; SHARED_WORDS];
    let limits = Limits {
        max_steps: max_steps(lanes.len() as u64),
        ..Limits::default()
    };
    run_workgroup(&lowered.shader, &lanes, &mut memory, limits)?;
    Ok((memory.ssbos, memory.images))
}

#[derive(Default)]
struct Stats {
    words: BTreeMap<String, usize>,
    non_finite: usize,
    ill_conditioned: usize,
    /// Words that differ between running the invocations forwards and
    /// backwards (a race in the shader: any value is right).
    racy: usize,
    partial: Vec<String>,
}

enum Outcome {
    Compared,
    Skipped(String),
    Differs(String),
}

fn compare(case: &corpus::Case, dir: &std::path::Path, stats: &mut Stats) -> Outcome {
    let words = match corpus_spirv(
        dir,
        &case.path,
        case.wgsl,
        &case.entry,
        Stage::Compute,
        &case.overrides,
    ) {
        Ok(w) => w,
        Err(e) => return Outcome::Skipped(format!("SPIR-V: {e}")),
    };
    let arena = lathe_ir::Bump::new();
    let opts = Options {
        entry: Some(case.entry.clone()),
        stage: Some(Stage::Compute),
        ..Options::default()
    };
    let lowered = match lower_spirv(&arena, &words, &opts) {
        Ok(l) => l,
        Err(e) => return Outcome::Skipped(format!("frontend: {e}")),
    };
    let reflection = match reflect(&words) {
        Ok(r) => r,
        Err(e) => return Outcome::Skipped(format!("reflection: {e}")),
    };
    let seed = seed_of(&case.path, &case.entry);
    let mut rng = Rng::new(seed);
    let s = match setup(&lowered.interface, &reflection, &mut rng) {
        Ok(s) => s,
        Err(e) => return Outcome::Skipped(e),
    };
    if s.buffers.is_empty() && s.images.is_empty() {
        return Outcome::Skipped("no storage buffer or image to compare".into());
    }
    let classes = output_classes(&lowered.shader, |op| match op {
        Op::Opcode(
            GenericOp::StoreSsbo { binding }
            | GenericOp::SsboAtomic { binding, .. }
            | GenericOp::SsboAtomicStore { binding },
        ) => Some(*binding as usize),
        _ => None,
    });
    let image_classes = output_classes(&lowered.shader, |op| match op {
        Op::Opcode(GenericOp::ImageStore { image, .. }) => Some(*image as usize),
        _ => None,
    });
    let (expected, expected_images) = match interpret(&words, &case.entry, &s, None, false) {
        Ok(e) => e,
        Err(e) if e.is_undefined() => {
            return Outcome::Skipped(format!(
                "undefined behaviour with these inputs (the shader expects other data): {e}"
            ));
        }
        Err(lathe_ir::InterpError::StepLimit(n)) => {
            return Outcome::Skipped(format!(
                "more than {n} interpreter steps per invocation group (too slow for the debug suite; LATHE_CORPUS_LANE_STEPS raises the budget)"
            ));
        }
        Err(e) => return Outcome::Differs(format!("interpreter: {e}")),
    };
    // How far each word moves when inexact operations move within bounds.
    let mut spread: Vec<Vec<f64>> = expected.iter().map(|b| vec![0.0; b.len()]).collect();
    let mut image_spread: Vec<Vec<[f64; 4]>> = expected_images
        .iter()
        .map(|i| vec![[0.0; 4]; i.texels.len()])
        .collect();
    if classes
        .values()
        .chain(image_classes.values())
        .any(|&c| c != OpClass::Exact)
    {
        for k in 0..PERTURBATIONS {
            let run = interpret(&words, &case.entry, &s, Some(seed + k), false).ok();
            let (moved, moved_images) = match run {
                Some((b, i)) => (Some(b), Some(i)),
                None => (None, None),
            };
            for (m, image) in expected_images.iter().enumerate() {
                for (t, texel) in image.texels.iter().enumerate() {
                    for c in 0..4 {
                        let delta = moved_images
                            .as_ref()
                            .and_then(|i| Some(i.get(m)?.texels.get(t)?[c]))
                            .map_or(f64::INFINITY, |x| {
                                (f32::from_bits(x) as f64 - f32::from_bits(texel[c]) as f64).abs()
                            });
                        let d = &mut image_spread[m][t][c];
                        *d = d.max(if delta.is_nan() { f64::INFINITY } else { delta });
                    }
                }
            }
            for (b, buffer) in expected.iter().enumerate() {
                for (w, &bits) in buffer.iter().enumerate() {
                    let delta = moved
                        .as_ref()
                        .and_then(|m| m.get(b)?.get(w))
                        .map_or(f64::INFINITY, |&m| {
                            (f32::from_bits(m) as f64 - f32::from_bits(bits) as f64).abs()
                        });
                    let d = &mut spread[b][w];
                    *d = d.max(if delta.is_nan() { f64::INFINITY } else { delta });
                }
            }
        }
    }
    // Words that change with the order invocations run in race.
    let (reversed, reversed_images) = match interpret(&words, &case.entry, &s, None, true) {
        Ok(r) => r,
        Err(e) => return Outcome::Differs(format!("interpreter, reversed order: {e}")),
    };
    let size = s.workgroup_size;
    let out = match oracle().run_compute(&ComputeJob {
        spirv: &words,
        entry_point: &case.entry,
        specialization: &[],
        resources: &s.resources,
        push_constants: &s.push,
        workgroups: [1, 1, 1],
    }) {
        Ok(o) => o,
        Err(e) => return Outcome::Differs(format!("lavapipe: {e}")),
    };
    let mut bad = Vec::new();
    let mut local = Stats::default();
    for buffer in &s.buffers {
        let got = &out.storage_buffers[&(buffer.set, buffer.binding)];
        let want = &expected[buffer.index];
        let class = classes
            .get(&buffer.index)
            .copied()
            .unwrap_or(OpClass::Exact);
        for (w, (&g, &e)) in got.iter().zip(want).enumerate() {
            if reversed[buffer.index][w] != e {
                local.racy += 1;
                continue;
            }
            let (ok, name) = match buffer.layout.word(w) {
                Some(Word::Float) => {
                    let value = f32::from_bits(e) as f64;
                    let moved = spread[buffer.index][w];
                    if !value.is_finite() {
                        local.non_finite += 1;
                        continue;
                    }
                    if moved > ILL_CONDITIONED * value.abs().max(1.0) {
                        local.ill_conditioned += 1;
                        continue;
                    }
                    (class.agree(g, e, moved), format!("{class:?}"))
                }
                _ => (g == e, "Integer or padding".to_string()),
            };
            *local.words.entry(name).or_default() += 1;
            if !ok {
                bad.push(format!(
                    "set {} binding {} word {w}: lavapipe 0x{g:08x} ({:e}), interpreter 0x{e:08x} ({:e})",
                    buffer.set,
                    buffer.binding,
                    f32::from_bits(g),
                    f32::from_bits(e)
                ));
            }
        }
    }
    for image in &s.images {
        let got = &out.storage_images[&(image.set, image.binding)];
        let want = &expected_images[image.index].texels;
        let class = image_classes
            .get(&image.index)
            .copied()
            .unwrap_or(OpClass::Exact);
        let channels = expected_images[image.index].channels as usize;
        for (t, (g, e)) in got.iter().zip(want).enumerate() {
            for c in 0..channels {
                if reversed_images[image.index].texels[t][c] != e[c] {
                    local.racy += 1;
                    continue;
                }
                let (ok, name) = if image.float {
                    let value = f32::from_bits(e[c]) as f64;
                    let moved = image_spread[image.index][t][c];
                    if !value.is_finite() {
                        local.non_finite += 1;
                        continue;
                    }
                    if moved > ILL_CONDITIONED * value.abs().max(1.0) {
                        local.ill_conditioned += 1;
                        continue;
                    }
                    let (g, quantum) = decode(image.format, g[c]);
                    let e = quantize(image.format, e[c]);
                    (
                        class.agree(g, e, moved + quantum),
                        format!("{class:?} ({:?} image)", image.format),
                    )
                } else {
                    (g[c] == e[c], "Integer image".to_string())
                };
                *local.words.entry(name).or_default() += 1;
                if !ok {
                    bad.push(format!(
                        "set {} binding {} texel {t} component {c}: lavapipe {:x?}, interpreter {:x?}",
                        image.set, image.binding, g, e
                    ));
                }
            }
        }
    }
    if !bad.is_empty() {
        return Outcome::Differs(format!(
            "workgroup {size:?}: {} words differ, e.g.\n    {}",
            bad.len(),
            bad[..bad.len().min(4)].join("\n    ")
        ));
    }
    for (k, n) in local.words {
        *stats.words.entry(k).or_default() += n;
    }
    if local.non_finite + local.ill_conditioned + local.racy > 0 {
        stats.partial.push(format!(
            "{} ({}): {} NaN/infinite, {} ill-conditioned, {} racy",
            case.path, case.entry, local.non_finite, local.ill_conditioned, local.racy
        ));
    }
    stats.racy += local.racy;
    stats.non_finite += local.non_finite;
    stats.ill_conditioned += local.ill_conditioned;
    Outcome::Compared
}

#[test]
fn corpus_compute_shaders_match_lavapipe() {
    let dir = corpus::corpus_dir();
    let cases: Vec<_> = corpus::cases(&dir)
        .into_iter()
        .filter(|c| c.stage == Stage::Compute)
        .collect();
    let start = Instant::now();
    let mut stats = Stats::default();
    let (mut compared, mut skipped, mut differ) = (Vec::new(), Vec::new(), Vec::new());
    for case in &cases {
        let t = Instant::now();
        let outcome = compare(case, &dir, &mut stats);
        let name = format!(
            "{} ({}) {:.1} s",
            case.path,
            case.entry,
            t.elapsed().as_secs_f64()
        );
        match outcome {
            Outcome::Compared => compared.push(name),
            Outcome::Skipped(why) => skipped.push(format!("{name}: {why}")),
            Outcome::Differs(why) => differ.push(format!("{name}: {why}")),
        }
    }
    println!(
        "{} compute entry points: {} compared, {} not fed, {} differ, {:.1} s",
        cases.len(),
        compared.len(),
        skipped.len(),
        differ.len(),
        start.elapsed().as_secs_f64()
    );
    for (class, n) in &stats.words {
        println!("  {class}: {n} words");
    }
    println!(
        "  not compared: {} NaN/infinite words, {} ill-conditioned words, {} racy words",
        stats.non_finite, stats.ill_conditioned, stats.racy
    );
    for c in &compared {
        println!("  compared: {c}");
    }
    for p in &stats.partial {
        println!("  partly compared: {p}");
    }
    for s in &skipped {
        println!("  not fed: {s}");
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(
        compared.len() >= MIN_COMPARED,
        "only {} corpus compute shaders compared (want {MIN_COMPARED})",
        compared.len()
    );
}

/// A storage image component lavapipe wrote, as `f32` bits, and the
/// quantum its format rounds to at that value (a unorm step; half an ulp
/// of the half).
fn decode(format: StorageFormat, bits: u32) -> (u32, f64) {
    match format {
        StorageFormat::Rgba8Unorm => ((bits as f32 / 255.0).to_bits(), 1.0 / 255.0),
        StorageFormat::Rgba16Float => {
            let x = half_to_f32(bits as u16);
            (x.to_bits(), (x.abs() as f64).max(6.1e-5) * 2f64.powi(-11))
        }
        StorageFormat::Rgba32 | StorageFormat::R32 => (bits, 0.0),
    }
}

/// The interpreter's `f32` component as the format stores it (unorm
/// values clamped to `[0, 1]`; rounding left to [`decode`]'s quantum).
fn quantize(format: StorageFormat, bits: u32) -> u32 {
    match format {
        StorageFormat::Rgba8Unorm => f32::from_bits(bits).clamp(0.0, 1.0).to_bits(),
        _ => bits,
    }
}

/// A half's value.
fn half_to_f32(h: u16) -> f32 {
    let (sign, exp, mantissa) = (
        (h >> 15) as u32,
        ((h >> 10) & 0x1f) as i32,
        (h & 0x3ff) as f32,
    );
    let magnitude = match exp {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    };
    if sign == 1 { -magnitude } else { magnitude }
}
