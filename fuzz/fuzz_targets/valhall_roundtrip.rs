//! Arbitrary Valhall instructions through disassembly and assembly.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = lathe_mali::valhall::fuzzing::roundtrip_body(data) {
        panic!("{finding}");
    }
});
