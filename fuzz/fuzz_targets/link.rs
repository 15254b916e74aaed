#![no_main]
// Varying linking on random vertex/fragment pairs: no panic, valid linked IR, and the
// two-stage harness sees the same results; the body is lathe_passes::link::generate::check,
// which `cargo test -p lathe-passes --test link_random` runs on seeds.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = lathe_passes::link::generate::check(data) {
        panic!("{e}");
    }
});
