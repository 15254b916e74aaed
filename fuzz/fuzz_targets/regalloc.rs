#![no_main]
// Register allocation on random high-pressure and general programs, small and realistic register
// files: no panic, checker clean, allocated text round-trips, the register-level run equals the
// original. The body is lathe_passes::fuzzing::regalloc, which `cargo test --test regalloc` runs on seeds.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    lathe_passes::fuzzing::regalloc::differential(data).unwrap();
});
