//! Any bytes as ir3 words: decoding never panics, and whatever disassembles
//! assembles back to a word with the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = lathe_adreno::ir3::fuzzing::decode_body(data) {
        panic!("{e}");
    }
});
