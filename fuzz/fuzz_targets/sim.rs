//! Any bytes as an ir3 program for the generated simulator: it never
//! panics (errors and hazards are results).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lathe_adreno::ir3::fuzzing::sim_body(data) {
        panic!("{e}");
    }
});
