//! Arbitrary ir3 instructions through disassembly and assembly.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lathe_adreno::ir3::fuzzing::roundtrip_body(data) {
        panic!("{e}");
    }
});
