//! Textures on Valhall: `TEX_SINGLE` with its coordinates and results in
//! staging register groups and the texture/sampler handle in a pushed FAU
//! word (`lathe_mali::valhall::abi::textures`), compiled for g57 and g610
//! and run through `--verify`'s seam: the simulator (whose `TEX_SINGLE`
//! semantics read the texture and sampler indices back out of the handle
//! and call the I/O side's texture request) against the IR interpreter,
//! on random textures and coordinates over several seeds. A shader
//! sampling two textures checks that each handle names its own texture.

use std::rc::Rc;

use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::{target::ValhallTarget, verify::ValhallProgram};

/// Compiles `text` for g57 and g610 and verifies it over 8 seeds;
/// returns the listing (g610) and the components compared per seed.
fn check(text: &str) -> (String, usize) {
    let mut result = (String::new(), 0);
    for gpu in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let target = Rc::new(ValhallTarget::new(gpu.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{gpu}: {e}\n{text}"));
        let listing = out.compiled.listing();
        for seed in 1..=8 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let report = verify(&generic, &ValhallProgram::new(&out), &options)
                .unwrap_or_else(|e| panic!("{gpu} seed {seed}: {e}\n{text}\n{listing}"));
            result.1 = report.compared;
        }
        result.0 = listing;
    }
    result
}

#[test]
fn a_2d_sample_at_varying_coordinates_verifies() {
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = fract %0
  %3:f32 = fract %1
  %4:f32x2 = collect %2, %3
  %5:f32x4 = sample texture=0 sampler=0 %4
  %6:f32 = split lane=0 %5
  %7:f32 = split lane=1 %5
  %8:f32 = split lane=2 %5
  %9:f32 = split lane=3 %5
  store_output slot=0 comp=0 %6
  store_output slot=0 comp=1 %7
  store_output slot=0 comp=2 %8
  store_output slot=0 comp=3 %9
  ret
";
    let (listing, compared) = check(text);
    assert!(listing.contains("TEX_SINGLE"), "{listing}");
    // Four components of four threads.
    assert_eq!(compared, 16, "{listing}");
}

#[test]
fn two_textures_are_told_apart_by_their_handles() {
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = fract %0
  %3:f32 = fract %1
  %4:f32x2 = collect %2, %3
  %5:f32x4 = sample texture=0 sampler=0 %4
  %6:f32x4 = sample texture=1 sampler=1 %4
  %7:f32 = split lane=0 %5
  %8:f32 = split lane=1 %6
  %9:f32 = split lane=2 %5
  %10:f32 = split lane=3 %6
  store_output slot=0 comp=0 %7
  store_output slot=0 comp=1 %8
  store_output slot=0 comp=2 %9
  store_output slot=0 comp=3 %10
  ret
";
    let (listing, compared) = check(text);
    assert_eq!(listing.matches("TEX_SINGLE").count(), 2, "{listing}");
    assert_eq!(compared, 16, "{listing}");
}
