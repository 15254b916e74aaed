#![no_main]
// Random valid generic IR through the whole Valhall backend (selection, group/depth/sched, ra,
// legalise, emit) on g57 and g610, run on the generated simulator with hazard detection against
// the IR interpreter. The body is lathe_mali::valhall::differential::compile_body, which
// `cargo test -p lathe-mali --lib differential` runs on seeds.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    lathe_mali::valhall::differential::compile_body(data).unwrap();
});
