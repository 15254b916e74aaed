//! The two-stage harness on random vertex/fragment pairs: linking keeps
//! every fragment's outputs (and the vertex shader's system values and
//! transform-feedback outputs), and no step adds components. Thousands of
//! pairs per run; more with `LINK_PAIRS=100000 cargo test --release -p
//! lathe-passes --test link_random`.

use lathe_passes::fuzzing::seed_bytes;
use lathe_passes::link::generate::check;

#[test]
fn random_pairs_behave_the_same_after_linking() {
    let pairs: u64 = std::env::var("LINK_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let mut fragments = 0;
    let mut linked = 0;
    let mut totals = [0usize; 8];
    let (mut before, mut after) = (0, 0);
    for seed in 0..pairs {
        let data = seed_bytes(seed, 200 + (seed as usize * 53) % 600);
        let stats = match check(&data) {
            Ok(s) => s,
            Err(e) => panic!("seed {seed}: {e}"),
        };
        if stats.report.before.components == 0 {
            continue;
        }
        linked += 1;
        fragments += stats.compared.fragments;
        let r = &stats.report;
        before += r.before.components;
        after += r.after.components;
        for (t, n) in totals.iter_mut().zip([
            r.removed_outputs,
            r.removed_inputs,
            r.propagated,
            r.deduplicated,
            r.backward_moves,
            r.forward_moves,
            r.relocated.len(),
            r.packed_16bit,
        ]) {
            *t += (n > 0) as usize;
        }
    }
    eprintln!(
        "{linked} pairs linked, {fragments} fragments compared, components {before} -> {after}; \
         pairs where removal(out, in)/propagation/dedup/backward/forward/compaction/16-bit packing fired: {totals:?}"
    );
    assert!(
        linked as u64 > pairs * 9 / 10,
        "only {linked} pairs generated"
    );
    assert!(
        fragments > linked * 3,
        "only {fragments} fragments compared"
    );
    for (k, &t) in totals.iter().enumerate() {
        assert!(t as u64 > pairs / 100, "step {k} fired on only {t} pairs");
    }
}

/// The README's numbers: vec4 slots and components after each step,
/// summed over random pairs, and what forward motion adds beyond the
/// backward pass. `cargo test --release -p lathe-passes --test link_random
/// -- --ignored --nocapture`.
#[test]
#[ignore]
fn per_step_totals() {
    use lathe_passes::link::generate::{check_pair, pair};
    let mut steps: Vec<(&str, usize, usize)> = Vec::new();
    let (mut before, mut no_forward) = ((0, 0), (0, 0));
    for seed in 0..2000u64 {
        let data = seed_bytes(seed, 200 + (seed as usize * 53) % 600);
        let Ok(p) = pair(&mut arbitrary::Unstructured::new(&data)) else {
            continue;
        };
        let all = check_pair(&p.vs, &p.fs, &p.scene, &p.options)
            .unwrap()
            .report;
        before.0 += all.before.vec4_slots;
        before.1 += all.before.components;
        for (k, (name, n)) in all.after_step.iter().enumerate() {
            if steps.len() <= k {
                steps.push((name, 0, 0));
            }
            steps[k].1 += n.vec4_slots;
            steps[k].2 += n.components;
        }
        let mut options = p.options.clone();
        options.steps.forward = false;
        let r = check_pair(&p.vs, &p.fs, &p.scene, &options).unwrap().report;
        no_forward.0 += r.after.vec4_slots;
        no_forward.1 += r.after.components;
    }
    eprintln!("before: {} vec4 slots, {} components", before.0, before.1);
    for (name, v, c) in steps {
        eprintln!("after {name}: {v} vec4 slots, {c} components");
    }
    eprintln!(
        "all steps but forward: {} vec4 slots, {} components",
        no_forward.0, no_forward.1
    );
}

/// A long sweep that keeps going after a failure and prints each failing
/// seed's first line (the whole pair with `LINK_PAIRS=1`): `LINK_FROM=0 LINK_PAIRS=100000 cargo test --release
/// -p lathe-passes --test link_random -- --ignored --nocapture sweep`.
#[test]
#[ignore]
fn sweep() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (from, pairs) = (env("LINK_FROM", 0), env("LINK_PAIRS", 100_000));
    let (mut failed, mut fragments, mut non_finite) = (0, 0, 0);
    for seed in from..from + pairs {
        let data = seed_bytes(seed, 200 + (seed as usize * 53) % 600);
        match check(&data) {
            Ok(s) => {
                fragments += s.compared.fragments;
                non_finite += s.compared.non_finite;
            }
            Err(e) => {
                failed += 1;
                // One seed: the whole pair.
                let shown = if pairs == 1 {
                    &e
                } else {
                    e.lines().next().unwrap_or("")
                };
                eprintln!("seed {seed}: {shown}");
            }
        }
    }
    eprintln!(
        "seeds {from}..{}: {failed} failed, {fragments} fragments compared, \
         {non_finite} not compared (non-finite interpolated values)",
        from + pairs
    );
    assert_eq!(failed, 0);
}
