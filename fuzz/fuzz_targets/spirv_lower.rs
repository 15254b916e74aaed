#![no_main]
// SPIR-V lowering never panics and whatever it accepts validates; the body is
// lathe_frontend::fuzzing, which `cargo test` runs on seeds. Seed with the
// corpus modules (see the README's Fuzzing section).
libfuzzer_sys::fuzz_target!(|data: &[u8]| lathe_frontend::fuzzing::check(data).unwrap());
