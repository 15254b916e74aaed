#![no_main]
// Register allocation on random high-pressure and general programs, on small and realistic test
// register files and on the register models of ir3 a630 and Valhall g610 (whole or cut to a few
// registers, so programs spill, through a630's spill base register): no panic, checker clean,
// allocated text round-trips, the register-level run equals the original. The body is
// lathe_passes::fuzzing::regalloc, which `cargo test --test regalloc` and `--test regalloc_targets`
// run on seeds.
use lathe_adreno::ir3::{generated::MachineOp as Ir3Op, target::Ir3Target};
use lathe_ir::GenericOp;
use lathe_mali::valhall::{generated::MachineOp as ValhallOp, target::ValhallTarget};
use lathe_passes::fuzzing::regalloc::{RegisterModel, differential_on};
use lathe_passes::target::TargetFacts;
use std::sync::LazyLock;

static A630: LazyLock<Ir3Target> =
    LazyLock::new(|| Ir3Target::new("a630".parse().unwrap()).unwrap());
static G610: LazyLock<ValhallTarget> =
    LazyLock::new(|| ValhallTarget::new("g610".parse().unwrap()));

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let ir3 = RegisterModel::<Ir3Op, _>::new(&*A630);
    let valhall = RegisterModel::<ValhallOp, _>::new(&*G610);
    let real: [&dyn TargetFacts<GenericOp>; 2] = [&ir3, &valhall];
    differential_on(data, &real).unwrap();
});
