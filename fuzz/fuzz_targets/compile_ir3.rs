//! Random valid generic IR through the whole ir3 backend (selection,
//! grouping, scheduling, register allocation, legalisation, emission):
//! no panic, errors only `unsupported: …`, and every program that
//! compiles computes on the generated simulator what the IR interpreter
//! computes, without a hazard.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lathe_adreno::ir3::fuzzing::compile_body(data) {
        panic!("{e}");
    }
});
