#![no_main]
// Differential check of the IR passes; the body lives in lathe-passes so `cargo test` runs it on seeds.
libfuzzer_sys::fuzz_target!(|data: &[u8]| if let Err(e) = lathe_passes::fuzzing::differential(data) { panic!("{e}") });
