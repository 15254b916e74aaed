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
//! An entry point that cannot be fed (storage images, which the oracle
//! does not bind; undefined behaviour with synthetic data) is listed with
//! the reason.

#[path = "../../frontend/tests/support/corpus.rs"]
mod corpus;
mod support;

use lathe_frontend::{Options, lower_spirv};
use lathe_ir::interp::{Memory, run_workgroup};
use lathe_ir::{GenericOp, Invocation, Limits, Op, Stage};
use lathe_oracle::{ComputeJob, ResourceBinding, Sampler};
use std::collections::BTreeMap;
use std::time::Instant;
use support::bind::{Bound, Buffer, bind};
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
/// The corpus has 29 compute entry points.
const MIN_COMPARED: usize = 12;

struct Setup {
    resources: Vec<ResourceBinding>,
    push: Vec<u32>,
    base: Invocation,
    memory: Memory,
    buffers: Vec<Buffer>,
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
    let Bound {
        resources,
        push,
        base,
        memory,
        buffers,
    } = bind(interface, reflection, rng, elements, TEX, |_| {
        Sampler::default()
    })?;
    Ok(Setup {
        resources,
        push,
        base,
        memory,
        buffers,
        workgroup_size,
    })
}

/// The storage buffers after one workgroup in the interpreter, the shader
/// lowered and perturbed with `perturbation`'s seed, its invocations run
/// in local-index order or, with `reversed`, the other way round.
fn interpret(
    words: &[u32],
    entry: &str,
    s: &Setup,
    perturbation: Option<u64>,
    reversed: bool,
) -> Result<Vec<Vec<u32>>, lathe_ir::InterpError> {
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
        max_steps: 50_000_000,
    };
    run_workgroup(&lowered.shader, &lanes, &mut memory, limits)?;
    Ok(memory.ssbos)
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
    if s.buffers.is_empty() {
        return Outcome::Skipped("no storage buffer to compare".into());
    }
    let classes = output_classes(&lowered.shader, |op| match op {
        Op::Opcode(GenericOp::StoreSsbo { binding } | GenericOp::SsboAtomic { binding, .. }) => {
            Some(*binding as usize)
        }
        _ => None,
    });
    let expected = match interpret(&words, &case.entry, &s, None, false) {
        Ok(e) => e,
        Err(e) if e.is_undefined() => {
            return Outcome::Skipped(format!(
                "undefined behaviour with these inputs (the shader expects other data): {e}"
            ));
        }
        Err(e) => return Outcome::Differs(format!("interpreter: {e}")),
    };
    // How far each word moves when inexact operations move within bounds.
    let mut spread: Vec<Vec<f64>> = expected.iter().map(|b| vec![0.0; b.len()]).collect();
    if classes.values().any(|&c| c != OpClass::Exact) {
        for k in 0..PERTURBATIONS {
            let moved = interpret(&words, &case.entry, &s, Some(seed + k), false).ok();
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
    let reversed = match interpret(&words, &case.entry, &s, None, true) {
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
        let name = format!("{} ({})", case.path, case.entry);
        match compare(case, &dir, &mut stats) {
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
