//! Varying linking on the corpus's vertex/fragment pairs: each pair runs
//! through the two-stage harness (`lathe_passes::link::harness`) before and
//! after linking and must give the same fragments.
//!
//! Pairing rule. Every fragment entry point that lowers is paired with one
//! vertex entry point that lowers and whose outputs cover its inputs: each
//! user location component (`VARn.c`) the fragment shader loads is stored
//! by the vertex shader with the same bit width ("matching locations").
//! Among those, the best by, in order: same file (a WGSL file with both
//! stages), same sample folder, same name once stage words are dropped
//! (`foo.vert`/`foo.frag`, `vs_sky`/`fs_sky`, `vertexWriteGBuffers`/
//! `fragmentWriteGBuffers`), most name words shared; then the first in
//! manifest order. WebGPU samples also look in `webgpu-samples/_shared`
//! (their common vertex shaders), after their own folder. Vertex entry
//! points that no fragment shader chose are listed as unpaired (depth-only
//! and shadow passes, or their fragment shader does not lower).
//!
//! Before linking, both stages get one numbering of uniform buffers
//! (`lathe_frontend::pipeline`), as the pipeline layout gives them.
//!
//! `cargo test -p lathe-frontend --test link_corpus -- --nocapture` prints
//! every pair, the unpaired and unsupported entry points with reasons, and
//! the vec4 slots and components before and after each step of the pass
//! (the README's numbers).

mod support;

use lathe_frontend::Interface;
use lathe_frontend::pipeline::share_uniform_buffers;
use lathe_ir::interp::Limits;
use lathe_ir::{GenericOp, Op, Shader, Stage};
use lathe_passes::link::generate::check_pair_limited;
use lathe_passes::link::harness::Scene;
use lathe_passes::link::{Count, DefaultCost, LinkOptions, Steps, link, slot};
use std::collections::BTreeMap;
use std::path::Path;
use support::corpus::{Case, cases, corpus_dir, lower};

/// Fewer pairs than this means the frontend or the pairing regressed.
const MIN_PAIRS: usize = 190;

fn lower_pair_stage<'a>(
    arena: &'a lathe_ir::Bump,
    dir: &Path,
    case: &Case,
) -> Result<(Shader<'a, GenericOp>, Interface), String> {
    let lowered = lower(arena, dir, case).map_err(|e| e.to_string())?;
    Ok((lowered.shader, lowered.interface))
}

/// A lowered entry point: where it is, its name words, and its varyings.
struct Entry {
    case: usize,
    folder: String,
    words: Vec<String>,
    /// User-location components with their bit width: stored (vertex) or
    /// loaded (fragment).
    varyings: BTreeMap<(u16, u8), u32>,
}

const STAGE_WORDS: &[&str] = &[
    "vs", "fs", "vert", "frag", "vertex", "fragment", "main", "wgsl", "my",
];

/// Lower-case name words of the file stem and the entry point, without
/// stage words: `vertexWriteGBuffers.wgsl:main` -> `write g buffers`.
fn name_words(path: &str, entry: &str) -> Vec<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let mut words = Vec::new();
    for part in [file, entry] {
        let mut w = String::new();
        let mut prev_lower = false;
        for ch in part.chars() {
            let split = !ch.is_alphanumeric() || (ch.is_uppercase() && prev_lower);
            if split && !w.is_empty() {
                words.push(std::mem::take(&mut w));
            }
            if ch.is_alphanumeric() {
                w.push(ch.to_ascii_lowercase());
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        }
        if !w.is_empty() {
            words.push(w);
        }
    }
    words.retain(|w| !STAGE_WORDS.contains(&w.as_str()));
    words
}

fn user_varyings(s: &Shader<'_, GenericOp>, stage: Stage) -> BTreeMap<(u16, u8), u32> {
    let mut out = BTreeMap::new();
    for (_, i) in s.insts_in_order() {
        let d = s.inst(i);
        let (slot, comp, ty) = match (d.op, stage) {
            (Op::Opcode(GenericOp::StoreOutput { slot, comp }), Stage::Vertex) => {
                (slot, comp, s.value_type(d.args[0]))
            }
            (Op::Opcode(GenericOp::LoadInput { slot, comp, .. }), Stage::Fragment) => {
                (slot, comp, s.value_type(d.result.expect("load result")))
            }
            _ => continue,
        };
        if slot < slot::VAR_COUNT {
            out.insert((slot, comp), ty.scalar.bits());
        }
    }
    out
}

/// The pairing score of vertex `v` for fragment `f` (higher is better), or
/// `None` if `v` does not write what `f` reads.
fn score(v: &Entry, f: &Entry, cases: &[Case]) -> Option<(bool, bool, bool, usize)> {
    let covers = f
        .varyings
        .iter()
        .all(|(c, bits)| v.varyings.get(c) == Some(bits));
    let same_folder = v.folder == f.folder;
    let shared = v.folder == "webgpu-samples/_shared" && f.folder.starts_with("webgpu-samples/");
    if !covers || !(same_folder || shared) {
        return None;
    }
    let common = v.words.iter().filter(|w| f.words.contains(w)).count();
    Some((
        cases[v.case].path == cases[f.case].path,
        same_folder,
        v.words == f.words,
        common,
    ))
}

fn add(total: &mut (usize, usize), n: Count) {
    total.0 += n.vec4_slots;
    total.1 += n.components;
}

#[test]
fn corpus_pairs_behave_the_same_after_linking() {
    let dir = corpus_dir();
    let cases = cases(&dir);
    let mut unsupported = Vec::new();
    let (mut vertex, mut fragment) = (Vec::new(), Vec::new());
    for (k, case) in cases.iter().enumerate() {
        if case.stage == Stage::Compute {
            continue;
        }
        let arena = lathe_ir::Bump::new();
        let (shader, _) = match lower_pair_stage(&arena, &dir, case) {
            Ok(x) => x,
            Err(e) => {
                unsupported.push(format!("{}:{}: {e}", case.path, case.entry));
                continue;
            }
        };
        let entry = Entry {
            case: k,
            folder: case.path.rsplit_once('/').map_or("", |p| p.0).to_string(),
            words: name_words(&case.path, &case.entry),
            varyings: user_varyings(&shader, case.stage),
        };
        match case.stage {
            Stage::Vertex => vertex.push(entry),
            _ => fragment.push(entry),
        }
    }

    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut unpaired = Vec::new();
    for (fi, f) in fragment.iter().enumerate() {
        let best = vertex
            .iter()
            .enumerate()
            .filter_map(|(vi, v)| score(v, f, &cases).map(|s| (s, std::cmp::Reverse(vi))))
            .max();
        match best {
            Some((_, std::cmp::Reverse(vi))) => pairs.push((vi, fi)),
            None => unpaired.push(format!(
                "fragment {}:{}: no vertex shader in its folder writes its inputs {:?}",
                cases[f.case].path,
                cases[f.case].entry,
                f.varyings.keys().collect::<Vec<_>>()
            )),
        }
    }
    for (vi, v) in vertex.iter().enumerate() {
        if !pairs.iter().any(|p| p.0 == vi) {
            unpaired.push(format!(
                "vertex {}:{}: no fragment shader chose it",
                cases[v.case].path, cases[v.case].entry
            ));
        }
    }

    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let options = LinkOptions::default();
    let mut failures = Vec::new();
    let mut not_compared = Vec::new();
    let mut fragments = 0;
    let mut before = (0, 0);
    let mut after_step: Vec<(&str, (usize, usize))> = Vec::new();
    let mut no_forward = (0, 0);
    let mut forward_wins = Vec::new();
    for (n, &(vi, fi)) in pairs.iter().enumerate() {
        let (vc, fc) = (&cases[vertex[vi].case], &cases[fragment[fi].case]);
        let name = format!("{}:{} + {}:{}", vc.path, vc.entry, fc.path, fc.entry);
        let arena = lathe_ir::Bump::new();
        let (mut vs, mut vs_if) = lower_pair_stage(&arena, &dir, vc).expect("lowered before");
        let (mut fs, mut fs_if) = lower_pair_stage(&arena, &dir, fc).expect("lowered before");
        if let Err(e) = share_uniform_buffers(&mut [(&mut vs, &mut vs_if), (&mut fs, &mut fs_if)]) {
            failures.push(format!("{name}: {e}"));
            continue;
        }
        let scene = Scene::for_pair(&vs, &fs, n as u64 + 1, 4);
        let (vs_text, fs_text) = (lathe_ir::print(&vs), lathe_ir::print(&fs));
        let stats = match check_pair_limited(&vs_text, &fs_text, &scene, &options, limits) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let r = &stats.report;
        if stats.compared.fragments == 0 {
            let why = match &stats.compared.first_failure {
                Some(f) => f.clone(),
                None if stats.compared.non_finite > 0 => {
                    "an Inf or NaN is interpolated (no required result without preserve_inf)".into()
                }
                None => "?".into(),
            };
            not_compared.push(format!("{name}: {why}"));
        }
        fragments += stats.compared.fragments;
        add(&mut before, r.before);
        for (k, &(step, count)) in r.after_step.iter().enumerate() {
            if after_step.len() <= k {
                after_step.push((step, (0, 0)));
            }
            add(&mut after_step[k].1, count);
        }
        // The same link without forward motion: what forward adds.
        let options = LinkOptions {
            steps: Steps {
                forward: false,
                ..Steps::ALL
            },
            ..LinkOptions::default()
        };
        let parse = |t: &str| lathe_ir::parse(&arena, t).expect("printed IR parses");
        let (mut vs2, mut fs2) = (parse(&vs_text), parse(&fs_text));
        let without = link(&mut vs2, &mut fs2, &options, &DefaultCost).expect("linked once");
        add(&mut no_forward, without.after);
        if without.after.components > r.after.components {
            forward_wins.push(format!(
                "{name}: components {} -> {} (without forward motion {}), vec4 slots {} -> {} (without {})",
                r.before.components,
                r.after.components,
                without.after.components,
                r.before.vec4_slots,
                r.after.vec4_slots,
                without.after.vec4_slots
            ));
        }
        println!(
            "pair {name}: {} fragments compared; vec4 slots {} -> {}, components {} -> {}",
            stats.compared.fragments,
            r.before.vec4_slots,
            r.after.vec4_slots,
            r.before.components,
            r.after.components
        );
    }

    println!(
        "{} pairs, {fragments} fragments compared, {} pairs not compared",
        pairs.len(),
        not_compared.len()
    );
    println!("before: {} vec4 slots, {} components", before.0, before.1);
    let mut last = before;
    for (step, (v, c)) in &after_step {
        println!(
            "after {step}: {v} vec4 slots, {c} components (saved {} slots, {} components)",
            last.0 as i64 - *v as i64,
            last.1 as i64 - *c as i64
        );
        last = (*v, *c);
    }
    println!(
        "all steps but forward: {} vec4 slots, {} components",
        no_forward.0, no_forward.1
    );
    println!(
        "forward motion beyond the backward pass on {} pairs:",
        forward_wins.len()
    );
    for w in &forward_wins {
        println!("  {w}");
    }
    println!(
        "not compared (the original pair cannot run on the scene, or interpolates Inf or NaN):"
    );
    for u in &not_compared {
        println!("  {u}");
    }
    println!("unpaired:");
    for u in &unpaired {
        println!("  {u}");
    }
    println!("unsupported (do not lower):");
    for u in &unsupported {
        println!("  {u}");
    }
    assert!(
        failures.is_empty(),
        "{} pairs differ after linking:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        pairs.len() >= MIN_PAIRS,
        "only {} pairs (at least {MIN_PAIRS} expected)",
        pairs.len()
    );
    assert!(
        not_compared.len() * 5 <= pairs.len(),
        "{} of {} pairs could not be compared",
        not_compared.len(),
        pairs.len()
    );
}
