//! The differential check on a fixed seed set: for random valid programs
//! and inputs, the interpreter's outcome is the same before and after each
//! pass and the whole pipeline.

use lathe_passes::fuzzing::{differential_stats, seed_bytes};

#[test]
fn passes_preserve_behaviour_on_seed_programs() {
    let mut compared = 0;
    let mut changed = [0usize; 4];
    let mut insts = 0;
    let seeds = 300;
    for seed in 0..seeds {
        let data = seed_bytes(seed, 256 + (seed as usize * 37) % 3000);
        match differential_stats(&data) {
            Ok(stats) => {
                compared += stats.compared as usize;
                for (total, fired) in changed.iter_mut().zip(stats.changed) {
                    *total += fired as usize;
                }
                insts += stats.insts;
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    eprintln!(
        "compared {compared}/{seeds}, changed by dce/copy-prop/merge-blocks/flatten: {changed:?}, {insts} instructions"
    );
    // The check must not be vacuous: most runs are defined, and every pass
    // fires on a good share of programs.
    assert!(
        compared > seeds as usize / 3,
        "only {compared} defined runs"
    );
    for (k, &c) in changed.iter().enumerate() {
        assert!(
            c > seeds as usize / 10,
            "pass {k} changed only {c} programs"
        );
    }
}
