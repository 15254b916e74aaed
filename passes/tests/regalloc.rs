//! Register allocation: the checker and the register-level differential
//! test on random programs (high-pressure ones and the general generator's)
//! over small and realistic register files.
//!
//! `REGALLOC_PROGRAMS=100000 cargo test -p lathe-passes --release --test
//! regalloc -- --ignored` runs a longer sweep.

use lathe_passes::fuzzing::{regalloc, seed_bytes};

fn sweep(programs: u64, first_seed: u64) {
    let mut compared = 0;
    let mut spills = 0;
    for seed in first_seed..first_seed + programs {
        let len = 64 + (seed % 7) as usize * 96;
        let data = seed_bytes(seed, len);
        match regalloc::differential(&data) {
            Ok(run) => {
                compared += run.compared as u32;
                spills += run.spills;
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(compared as u64 > programs / 2, "only {compared} runs were comparable");
    assert!(spills > 0, "no program spilled");
}

#[test]
fn random_programs_allocate_and_run_the_same_in_registers() {
    sweep(2_000, 1);
}

#[test]
#[ignore]
fn long_sweep() {
    let n = std::env::var("REGALLOC_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    sweep(n, 1_000_000);
}
