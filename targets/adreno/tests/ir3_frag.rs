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

/// Fragment position, facing and point coordinate, each read in a way
/// that shows which thread and component it came from.
const SYSVALS: &str = "shader fragment
b0:
  %0:f32 = load_sysval sv=frag_coord comp=0
  %1:f32 = load_sysval sv=frag_coord comp=1
  %2:f32 = load_sysval sv=frag_coord comp=2
  %3:f32 = load_sysval sv=frag_coord comp=3
  %4:bool = load_sysval sv=front_facing
  %5:f32 = load_sysval sv=point_coord comp=0
  %6:f32 = load_sysval sv=point_coord comp=1
  %7:f32 = load_input slot=0 comp=0 interp=smooth
  %8:f32 = fadd %5, %7
  %9:f32 = cvt %4
  store_output slot=0 comp=0 %0
  store_output slot=0 comp=1 %1
  store_output slot=0 comp=2 %2
  store_output slot=0 comp=3 %3
  store_output slot=1 comp=0 %9
  store_output slot=1 comp=1 %8
  store_output slot=1 comp=2 %6
  ret
";

/// The register `comp` components after `reg` (`r0.x` + 1 = `r0.y`).
fn next_component(reg: &str, comp: u32) -> String {
    let (base, c) = reg.split_once('.').unwrap();
    let k = "xyzw".find(c).unwrap() as u32 + comp;
    let n: u32 = base
        .trim_start_matches(|ch: char| ch.is_alphabetic())
        .parse()
        .unwrap();
    let prefix = base.trim_end_matches(|ch: char| ch.is_ascii_digit());
    format!("{prefix}{}.{}", n + k / 4, &"xyzw"[(k % 4) as usize..][..1])
}

/// The first instruction reading `reg` (as a source), and its line.
fn first_reader<'s>(asm: &'s str, reg: &str) -> (usize, &'s str) {
    asm.lines()
        .enumerate()
        .find(|(_, l)| {
            l.split_once(", ")
                .is_some_and(|(_, srcs)| srcs.split(", ").any(|s| s == reg))
        })
        .unwrap()
}

#[test]
fn fragment_system_values_reach_the_interpreters_values() {
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let (out, asm) = compiled(SYSVALS, gpu);
        let consts = &out.compiled.interface.consts;
        // The point coordinate is two varyings after the input's.
        let pc: Vec<_> = consts
            .varyings
            .iter()
            .filter(|v| v.sysval.is_some())
            .map(|v| (v.comp, v.inloc))
            .collect();
        assert_eq!(pc, [(0, 1), (1, 2)], "{model}");
        // The position is one four-register group.
        let fc = consts
            .preloads
            .iter()
            .find(|p| p.sysval == lathe_ir::Sysval::FragCoord)
            .unwrap();
        let slot = &out.compiled.interface.inputs[fc.input as usize];
        assert_eq!(slot.ty.to_string(), "u32x4", "{model}");
        assert!(asm.contains("cov.u32f32"), "{model}\n{asm}");
        for seed in 0..6 {
            assert_eq!(run(SYSVALS, &out, gpu, seed).unwrap(), 28, "{model}");
        }
    }
}

#[test]
fn a_wrong_position_facing_or_point_coordinate_is_caught() {
    let gpu: GpuModel = "a630".parse().unwrap();
    let (out, asm) = compiled(SYSVALS, gpu);
    let interface = &out.compiled.interface;
    let input = |s: lathe_ir::Sysval| {
        let p = interface
            .consts
            .preloads
            .iter()
            .find(|p| p.sysval == s)
            .unwrap();
        interface.inputs[p.input as usize].register.clone()
    };
    let caught = |pc: usize, line: &str| {
        let wrong = with_line(&out, gpu, pc, line);
        let got = run(SYSVALS, &wrong, gpu, 1);
        assert!(
            matches!(got, Err(VerifyError::Mismatch { .. })),
            "{line}: {got:?}\n{asm}"
        );
    };
    // The position's x read from the group's y (another thread's x is
    // never the same: quads lie side by side along x).
    let x = input(lathe_ir::Sysval::FragCoord);
    let (pc, line) = first_reader(&asm, &x);
    let source = format!(", {x}");
    caught(
        pc,
        &line.replacen(&source, &format!(", {}", next_component(&x, 1)), 1),
    );
    // The facing compared the other way round.
    let face = input(lathe_ir::Sysval::FrontFacing);
    let (pc, line) = first_reader(&asm, &face);
    assert!(line.contains("cmps.u.eq"), "{line}");
    caught(pc, &line.replacen("cmps.u.eq", "cmps.u.ne", 1));
    // A point coordinate component fetched from the other's location.
    let pcs: Vec<u32> = interface
        .consts
        .varyings
        .iter()
        .filter(|v| v.sysval.is_some())
        .map(|v| v.inloc)
        .collect();
    let (pc, line) = asm
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("bary.f") && l.contains(&format!(", {}, ", pcs[0])))
        .unwrap();
    caught(
        pc,
        &line.replacen(&format!(", {}, ", pcs[0]), &format!(", {}, ", pcs[1]), 1),
    );
}

/// Coarse, default and fine derivatives of per-thread random varyings,
/// f32 and f16.
const DERIVATIVES: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f16 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = ddx %0
  %3:f32 = ddy mode=coarse %0
  %4:f32 = ddx mode=fine %0
  %5:f32 = ddy mode=fine %0
  %6:f16 = ddx %1
  %7:f16 = ddy mode=fine %1
  store_output slot=0 comp=0 %2
  store_output slot=0 comp=1 %3
  store_output slot=0 comp=2 %4
  store_output slot=0 comp=3 %5
  store_output slot=1 comp=0 %6
  store_output slot=1 comp=1 %7
  ret
";

#[test]
fn derivatives_take_the_quads_neighbours() {
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let (out, asm) = compiled(DERIVATIVES, gpu);
        for op in ["dsx (f32)", "dsy (f32)", "dsxpp.1", "dsypp.1", "dsx (f16)"] {
            assert!(asm.contains(op), "{model}: {op}\n{asm}");
        }
        for seed in 0..6 {
            assert_eq!(run(DERIVATIVES, &out, gpu, seed).unwrap(), 24, "{model}");
        }
    }
}

#[test]
fn a_derivative_along_the_wrong_axis_or_of_the_wrong_kind_is_caught() {
    let gpu: GpuModel = "a630".parse().unwrap();
    let (out, asm) = compiled(DERIVATIVES, gpu);
    for (from, to) in [
        ("dsx (f32)", "dsy (f32)"),
        ("dsy (f32)", "dsx (f32)"),
        ("dsxpp.1", "dsypp.1"),
        // A fine derivative taken coarse differs on the bottom row.
        ("dsypp.1 (x)r", "dsy (f32)(x)r"),
    ] {
        let (pc, line) = asm
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(from))
            .unwrap();
        let wrong_line = line.replacen(from, to, 1);
        let wrong = with_line(&out, gpu, pc, &wrong_line);
        let got = run(DERIVATIVES, &wrong, gpu, 1);
        assert!(
            matches!(got, Err(VerifyError::Mismatch { .. })),
            "{wrong_line}: {got:?}\n{asm}"
        );
    }
}

/// A sampled colour at an unmodified varying pair, times another varying
/// (so the shader fetches varyings itself and keeps the pixel-centre pair).
const PREFETCHED: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=1 sampler=1 %2
  %4:f32 = split lane=0 %3
  %5:f32 = split lane=1 %3
  %6:f32 = load_input slot=1 comp=0 interp=smooth
  %7:f32 = fmul %4, %6
  store_output slot=0 comp=0 %7
  store_output slot=0 comp=1 %5
  ret
";

/// Only the sampled colour: no varying is fetched by the shader itself.
const ONLY_PREFETCHED: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=0 sampler=0 %2
  %4:f32 = split lane=0 %3
  %5:f32 = split lane=3 %3
  store_output slot=0 comp=0 %4
  store_output slot=0 comp=3 %5
  ret
";

#[test]
fn samples_at_an_unmodified_varying_are_prefetched_and_verify() {
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        for text in [PREFETCHED, ONLY_PREFETCHED] {
            let (out, asm) = compiled(text, gpu);
            let consts = &out.compiled.interface.consts;
            assert!(!asm.contains("sam"), "{gpu}: {asm}");
            assert_eq!(consts.prefetches.len(), 1, "{gpu}");
            assert_eq!(consts.prefetches[0].inloc, 0, "{gpu}");
            // The shader waits for the prefetch before reading it.
            assert!(asm.contains("(sy)"), "{gpu}: {asm}");
            // The input phase ends with (ei) even with no fetch of its own.
            assert!(asm.contains("(ei)"), "{gpu}: {asm}");
            for seed in 1..4 {
                let n = run(text, &out, gpu, seed).unwrap_or_else(|e| panic!("{gpu}: {e}\n{asm}"));
                assert!(n > 0);
            }
        }
    }
}

#[test]
fn a_wrong_prefetch_description_or_a_missing_wait_is_caught() {
    let gpu: GpuModel = "a630".parse().unwrap();
    let (out, asm) = compiled(PREFETCHED, gpu);
    assert!(run(PREFETCHED, &out, gpu, 1).is_ok());
    let with = |change: &dyn Fn(&mut lathe_adreno::ir3::prefetch::Prefetch)| {
        let mut c = out.compiled.clone();
        change(&mut c.interface.consts.prefetches[0]);
        Output {
            compiled: c,
            ports: out.ports.clone(),
            dumps: Vec::new(),
        }
    };
    // Another varying pair, texture or write mask.
    let wrong: [&dyn Fn(&mut lathe_adreno::ir3::prefetch::Prefetch); 3] =
        [&|p| p.inloc = 1, &|p| p.texture = 0, &|p| p.wrmask = 0b1110];
    for (k, change) in wrong.into_iter().enumerate() {
        assert!(
            run(PREFETCHED, &with(change), gpu, 1).is_err(),
            "change {k}\n{asm}"
        );
    }
    // The first reader of the prefetched registers without its (sy).
    let (pc, line) = asm
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("(sy)"))
        .unwrap();
    let unsynced = with_line(&out, gpu, pc, line.trim_start_matches("(sy)"));
    let err = run(PREFETCHED, &unsynced, gpu, 1).unwrap_err().to_string();
    assert!(err.contains("texture prefetch"), "{err}");
}

#[test]
fn gpus_without_prefetch_sample_in_the_shader() {
    // a610 (Mesa's a6xx_gen1_low) has none.
    let gpu: GpuModel = "a610".parse().unwrap();
    let (out, asm) = compiled(PREFETCHED, gpu);
    assert!(asm.contains("sam"), "{gpu}: {asm}");
    assert!(out.compiled.interface.consts.prefetches.is_empty(), "{gpu}");
    run(PREFETCHED, &out, gpu, 1).unwrap_or_else(|e| panic!("{gpu}: {e}\n{asm}"));
}

/// A prefetched sample scaled by a uniform expression the preamble
/// computes (a6xx on), with no varying fetched by the shader itself.
const PREFETCHED_AFTER_PREAMBLE: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=0 sampler=0 %2
  %4:f32 = split lane=0 %3
  %5:f32 = load_uniform index=0
  %6:f32 = load_uniform index=1
  %7:f32 = fmul %5, %6
  %8:f32 = fadd %7, %5
  %9:f32 = fmul %4, %8
  store_output slot=0 comp=0 %9
  ret
";

#[test]
fn the_main_part_after_a_preamble_ends_the_input_phase_and_waits_for_the_prefetch() {
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        let text = PREFETCHED_AFTER_PREAMBLE;
        let (out, asm) = compiled(text, gpu);
        assert_eq!(out.compiled.interface.consts.prefetches.len(), 1, "{gpu}");
        // Waves that skip the preamble start at the main part: its
        // (ei) fetch and its wait for the prefetch are there.
        let (preamble, main) = asm
            .split_once("shpe")
            .unwrap_or_else(|| panic!("{gpu}: no preamble\n{asm}"));
        assert!(!preamble.contains("(ei)"), "{gpu}: {asm}");
        assert!(main.contains("(ei)"), "{gpu}: {asm}");
        let first_reader = main
            .lines()
            .skip(1)
            .find(|l| !l.contains("bary.f"))
            .unwrap();
        assert!(first_reader.contains("(sy)"), "{gpu}: {asm}");
        for seed in 1..4 {
            run(text, &out, gpu, seed).unwrap_or_else(|e| panic!("{gpu}: {e}\n{asm}"));
        }
    }
}

#[test]
fn up_to_the_specs_prefetch_count_are_prefetched_and_the_rest_sampled() {
    // Five samples at one varying pair: four prefetches (the spec's
    // fs_prefetch_count on a6xx/a7xx), the fifth a `sam`.
    let mut text = String::from(
        "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_input slot=0 comp=1 interp=smooth\n  %2:f32x2 = collect %0, %1\n",
    );
    for t in 0..5 {
        text += &format!(
            "  %{s}:f32x4 = sample texture={t} sampler={t} %2\n  %{x}:f32 = split lane={} %{s}\n  store_output slot={t} comp=0 %{x}\n",
            t % 4,
            s = 10 + 2 * t,
            x = 11 + 2 * t,
        );
    }
    text += "  ret\n";
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        let (out, asm) = compiled(&text, gpu);
        let prefetches = &out.compiled.interface.consts.prefetches;
        assert_eq!(prefetches.len(), 4, "{gpu}: {prefetches:?}\n{asm}");
        assert_eq!(asm.matches("sam ").count(), 1, "{gpu}: {asm}");
        run(&text, &out, gpu, 1).unwrap_or_else(|e| panic!("{gpu}: {e}\n{asm}"));
    }
}
