//! Any bytes as Valhall words: decoding never panics, and whatever
//! disassembles assembles back to a word with the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = lathe_mali::valhall::fuzzing::decode_body(data) {
        panic!("{finding}");
    }
});
