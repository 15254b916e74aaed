//! Fragment-shader I/O on ir3 through `--verify`'s seam: varyings are
//! fetched with `bary.f` at the preloaded barycentric pair of their
//! interpolation or with `flat.b`, from the varying component (`inloc`)
//! the interface reports, and the simulator, given per-thread varyings
//! and pairs by `Ir3Program`, computes the interpreter's inputs. A
//! program that reads the wrong pair or the wrong component is caught.

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, Output, compile_with};
use lathe_adreno::ir3::{GpuModel, assemble, target::Ir3Target, verify::Ir3Program};
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_ir::{GenericOp, InterpLoc, InterpMode};

const VARYINGS: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth loc=centroid
  %2:u32 = load_input slot=1 comp=2 interp=flat
  %3:f32 = load_input slot=2 comp=0 interp=noperspective
  %4:f16 = load_input slot=3 comp=0 interp=noperspective loc=sample
  %5:f32 = fadd %0, %1
  %6:f32 = fmul %5, %3
  %7:f16 = fadd %4, %4
  store_output slot=0 comp=0 %6
  store_output slot=0 comp=1 %2
  store_output slot=1 comp=0 %7
  ret
";

fn compiled(text: &str, gpu: GpuModel) -> (Output, String) {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
    let asm = out.compiled.asm.clone();
    (out, asm)
}

fn run(text: &str, out: &Output, gpu: GpuModel, seed: u64) -> Result<usize, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let options = Options {
        seed,
        ..Options::default()
    };
    verify(&generic, &program, &options).map(|r| r.compared)
}

/// `out` with its instruction `pc` replaced by `line`.
fn with_line(out: &Output, gpu: GpuModel, pc: usize, line: &str) -> Output {
    let mut c = out.compiled.clone();
    c.words[pc] = assemble(line, gpu.generation()).unwrap();
    Output {
        compiled: c,
        ports: out.ports.clone(),
        dumps: Vec::new(),
    }
}

#[test]
fn varyings_are_fetched_at_their_inloc_and_pair_and_verify() {
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let (out, asm) = compiled(VARYINGS, gpu);
        let consts = &out.compiled.interface.consts;
        // One pair per interpolation read, each an f32x2 input.
        let pairs: Vec<_> = consts
            .barycentrics
            .iter()
            .map(|b| (b.mode, b.loc))
            .collect();
        assert_eq!(
            pairs,
            [
                (InterpMode::Smooth, InterpLoc::Center),
                (InterpMode::Smooth, InterpLoc::Centroid),
                (InterpMode::NoPerspective, InterpLoc::Center),
                (InterpMode::NoPerspective, InterpLoc::Sample),
            ],
            "{model}"
        );
        for b in &consts.barycentrics {
            let slot = &out.compiled.interface.inputs[b.input as usize];
            assert_eq!(slot.ty.to_string(), "f32x2", "{model}");
        }
        // Slots' components are consecutive from 0, slot after slot.
        let inlocs: Vec<_> = consts
            .varyings
            .iter()
            .map(|v| (v.slot, v.comp, v.inloc))
            .collect();
        assert_eq!(
            inlocs,
            [(0, 0, 0), (0, 1, 1), (1, 2, 4), (2, 0, 5), (3, 0, 6)],
            "{model}"
        );
        assert_eq!(asm.matches("bary.f").count(), 4, "{model}\n{asm}");
        assert_eq!(asm.matches("flat.b").count(), 1, "{model}\n{asm}");
        assert!(asm.contains("bary.f hr"), "{model}: the f16 input\n{asm}");
        // The last fetch ends the input phase.
        let last = asm
            .lines()
            .rfind(|l| l.contains("bary.f") || l.contains("flat.b"))
            .unwrap();
        assert!(last.contains("(ei)"), "{model}: {last}");
        for seed in 0..6 {
            assert_eq!(run(VARYINGS, &out, gpu, seed).unwrap(), 12, "{model}");
        }
    }
}

#[test]
fn a_fetch_from_another_component_or_pair_is_caught() {
    let gpu: GpuModel = "a630".parse().unwrap();
    let (out, asm) = compiled(VARYINGS, gpu);
    let fetches: Vec<(usize, &str)> = asm
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("bary.f") && !l.contains("bary.f h"))
        .collect();
    let (pc, line) = fetches[0];
    let parts: Vec<&str> = line.split(", ").collect();
    // Another interpolated varying's component.
    let inloc: u32 = parts[1].parse().unwrap();
    let other = out
        .compiled
        .interface
        .consts
        .varyings
        .iter()
        .find(|v| v.inloc != inloc && v.interp.mode != InterpMode::Flat)
        .unwrap();
    let moved = format!("{}, {}, {}", parts[0], other.inloc, parts[2]);
    let wrong = with_line(&out, gpu, pc, &moved);
    assert!(
        matches!(
            run(VARYINGS, &wrong, gpu, 1),
            Err(VerifyError::Mismatch { .. })
        ),
        "{moved}"
    );
    // Another fetch's barycentric pair.
    let other = fetches
        .iter()
        .map(|(_, l)| l.rsplit(", ").next().unwrap())
        .find(|ij| *ij != parts[2])
        .unwrap();
    let swapped = format!("{}, {}, {other}", parts[0], parts[1]);
    let wrong = with_line(&out, gpu, pc, &swapped);
    assert!(
        matches!(
            run(VARYINGS, &wrong, gpu, 1),
            Err(VerifyError::Mismatch { .. })
        ),
        "{swapped}"
    );
}
