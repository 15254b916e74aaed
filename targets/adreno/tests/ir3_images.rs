//! Storage images on ir3 (a6xx IBOs: typed `ldib.b`/`stib.b`,
//! `atomic.b` and `resinfo.b`), each compiled for a630 and a740 and run
//! through `--verify`'s seam: the simulator's harness images
//! (`lathe_isa::sim_io::Harness::images`, in the IBO slots the ABI gives
//! them after the storage buffers) against the IR interpreter's, over
//! several seeds. The verifier's images are 4×4 2D with four 32-bit words
//! per texel, so coordinates are masked into them.

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::{GpuModel, target::Ir3Target, verify::Ir3Program};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};

/// Verifies `text` on a630 and a740 and returns their disassemblies.
fn check(text: &str) -> Vec<String> {
    let mut asm = Vec::new();
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let target = Rc::new(Ir3Target::new(gpu).unwrap());
        let out = compile_with(&generic, &target, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{gpu:?}: {e}\n{text}"));
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        for seed in 1..=8 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let report = verify(&generic, &program, &options).unwrap_or_else(|e| {
                panic!("{gpu:?} seed {seed}: {e}\n{text}\n{}", out.compiled.asm)
            });
            assert!(report.compared > 0);
        }
        asm.push(out.compiled.asm);
    }
    asm
}

/// A compute shader's texel coordinates from its local id: x and y of
/// the 4×4 image (`%x`, `%y`), also the layer 0 of an array (`%c3`).
const COORDS: &str = "b0:
  %0:u32 = load_sysval sv=local_invocation_index
  %1:u32 = const 3
  %2:u32 = and %0, %1
  %3:u32 = const 2
  %4:u32 = shr %0, %3
  %5:u32 = and %4, %1
  %6:i32 = cvt %2
  %7:i32 = cvt %5
  %8:i32x2 = collect %6, %7
  %9:i32 = const 0
  %10:i32x3 = collect %6, %7, %9
";

/// Loads from one image and stores to another (behind a storage buffer,
/// so the slots are not the image indices), with sizes written to the
/// buffer.
#[test]
fn loads_stores_and_sizes_agree() {
    let text = format!(
        "shader compute
{COORDS}  %11:f32x4 = image_load image=0 %8
  image_store image=1 %8, %11
  %12:u32x4 = image_load image=1 array %10
  image_store image=0 array %10, %12
  %13:i32x2 = image_size image=0
  %14:i32 = split lane=0 %13
  %15:i32 = split lane=1 %13
  %16:i32x3 = image_size image=1 array
  %17:i32 = split lane=2 %16
  %18:i32 = iadd %14, %15
  %19:i32 = iadd %18, %17
  %20:u32 = shl %0, %3
  %21:u32 = cvt %19
  store_ssbo binding=0 %20, %21
  ret
"
    );
    check(&text);
}

/// Image atomics: each op on texel (x, 0) of a 4×4 image by every
/// thread, the old values written to a buffer.
#[test]
fn atomics_agree() {
    for op in [
        "add", "xchg", "and", "or", "xor", "imin", "imax", "umin", "umax",
    ] {
        let text = format!(
            "shader compute
{COORDS}  %11:u32 = const 7
  %12:u32 = imul %0, %11
  %13:i32x2 = collect %6, %9
  %14:u32 = image_atomic image=0 op={op} %13, %12
  %15:u32 = shl %0, %3
  store_ssbo binding=0 %15, %14
  ret
"
        );
        check(&text);
    }
}

/// A load one texel left of x (out of bounds at x = 0, as an image
/// filter's border reads) is an undefined value: the harness gives zeros
/// instead of faulting, the interpreter does not compare those texels,
/// and every other stored texel is compared.
#[test]
fn a_load_outside_the_image_is_an_undefined_value() {
    let text = format!(
        "shader compute
{COORDS}  %11:i32 = const 1
  %12:i32 = isub %6, %11
  %13:i32x2 = collect %12, %7
  %14:f32x4 = image_load image=0 %13
  image_store image=1 %8, %14
  ret
"
    );
    check(&text);
}

/// Bit casts between scalar kinds of one width (GLSL's
/// `ivec2(gl_GlobalInvocationID.xy)`) cost no move: the coordinate
/// collect reads the cast values' own registers (each cast is the only
/// reader of its value, so the collect needs no copy either).
#[test]
fn bit_casts_cost_no_moves() {
    let text = "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_index
  %1:u32 = const 3
  %2:u32 = and %0, %1
  %3:u32 = const 2
  %4:u32 = shr %0, %3
  %5:u32 = and %4, %1
  %6:i32 = mov %2
  %7:i32 = mov %5
  %8:i32x2 = collect %6, %7
  %9:f32x4 = image_load image=0 %8
  image_store image=1 %8, %9
  ret
";
    for asm in check(text) {
        // Moves of a general register (the constant moves stay).
        let copies = asm.lines().filter(|l| {
            l.contains("mov") && l.rsplit(", ").next().is_some_and(|s| s.starts_with('r'))
        });
        assert_eq!(copies.count(), 0, "{asm}");
    }
}
