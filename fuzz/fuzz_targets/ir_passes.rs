#![no_main]
// Differential check of the IR passes; the body is lathe_passes::fuzzing, which `cargo test` runs on seeds.
libfuzzer_sys::fuzz_target!(|data: &[u8]| lathe_passes::fuzzing::differential(data).unwrap());
