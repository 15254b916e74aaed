//! Texture shapes beyond 2D on ir3 (cube, cube array, 2D array, 3D:
//! samples, bias and explicit LOD, gathers, texel fetches, sizes), each
//! compiled for a630 and a740 and run through `--verify`'s seam: the
//! simulator's harness (its own cube-face and layer model,
//! `lathe_isa::sim_texture`) against the IR interpreter (`lathe_ir::texture`)
//! on random textures and coordinates, over several seeds. Layers come
//! straight from random floats (ties such as 0.5 included), so a layer
//! rounded any other way than to nearest even is caught.

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::{GpuModel, target::Ir3Target, verify::Ir3Program};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, verify};

/// A fragment shader sampling with `op` at coordinates built from
/// `coords` float inputs (the first `fract`ed ones in [0, 1)), writing the
/// four channels.
fn float_sample(op: &str, coords: usize, fracted: usize, extra: Option<&str>) -> String {
    let mut s = String::from("shader fragment\nb0:\n");
    let mut lanes = Vec::new();
    for k in 0..coords {
        s += &format!("  %i{k}:f32 = load_input slot=0 comp={k} interp=smooth\n");
        if k < fracted {
            s += &format!("  %c{k}:f32 = fract %i{k}\n");
            lanes.push(format!("%c{k}"));
        } else {
            lanes.push(format!("%i{k}"));
        }
    }
    s += &format!("  %co:f32x{coords} = collect {}\n", lanes.join(", "));
    let mut args = "%co".to_string();
    if let Some(e) = extra {
        s += &format!("  %e:f32 = const {e}\n");
        args += ", %e";
    }
    s += &format!("  %r:f32x4 = {op} {args}\n");
    for c in 0..4 {
        s += &format!("  %o{c}:f32 = split lane={c} %r\n  store_output slot=0 comp={c} %o{c}\n");
    }
    s + "  ret\n"
}

/// `text` with its value names (`%co`, `%i0`, …) numbered in order of
/// first appearance, as the IR text form wants them.
fn numbered(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..=at]);
        let tail = &rest[at + 1..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].to_string();
        let k = names.iter().position(|n| *n == name).unwrap_or_else(|| {
            names.push(name);
            names.len() - 1
        });
        out.push_str(&k.to_string());
        rest = &tail[end..];
    }
    out + rest
}

fn check(text: &str) {
    let text = &numbered(text);
    for gpu in ["a630", "a740"] {
        let gpu: GpuModel = gpu.parse().unwrap();
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let target = Rc::new(Ir3Target::new(gpu).unwrap());
        let out = compile_with(&generic, &target, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{gpu:?}: {e}\n{text}"));
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        for seed in 1..=12 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let report = verify(&generic, &program, &options).unwrap_or_else(|e| {
                panic!("{gpu:?} seed {seed}: {e}\n{text}\n{}", out.compiled.asm)
            });
            assert!(report.compared > 0);
        }
    }
}

#[test]
fn cube_samples_agree() {
    check(&float_sample(
        "sample texture=0 sampler=0 dim=cube",
        3,
        0,
        None,
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 dim=cube lod=explicit",
        3,
        0,
        Some("0x0"),
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 dim=cube lod=bias",
        3,
        0,
        Some("0x3f800000"),
    ));
}

#[test]
fn cube_array_samples_agree() {
    check(&float_sample(
        "sample texture=0 sampler=0 dim=cube array",
        4,
        0,
        None,
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 dim=cube array lod=explicit",
        4,
        0,
        Some("0x0"),
    ));
}

#[test]
fn array_samples_and_gathers_agree() {
    check(&float_sample(
        "sample texture=0 sampler=0 array",
        3,
        2,
        None,
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 array lod=bias",
        3,
        2,
        Some("0xbf800000"),
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 array lod=explicit",
        3,
        2,
        Some("0x0"),
    ));
    for comp in 0..4 {
        check(&float_sample(
            &format!("gather texture=0 sampler=0 array comp={comp}"),
            3,
            2,
            None,
        ));
    }
}

#[test]
fn samples_3d_agree() {
    check(&float_sample(
        "sample texture=0 sampler=0 dim=3d",
        3,
        3,
        None,
    ));
    check(&float_sample(
        "sample texture=0 sampler=0 dim=3d lod=explicit",
        3,
        3,
        Some("0x0"),
    ));
}

/// Texel fetches (coordinates masked into the 4×4×4 / 4×4×2 textures the
/// verifier draws) and size queries.
#[test]
fn fetches_and_sizes_agree() {
    for (shape, mask) in [("dim=3d", [3, 3, 3]), ("array", [3, 3, 1])] {
        let text = format!(
            "shader fragment
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = load_input slot=0 comp=1 interp=flat
  %2:i32 = load_input slot=0 comp=2 interp=flat
  %m0:i32 = const {}
  %m1:i32 = const {}
  %m2:i32 = const {}
  %3:i32 = and %0, %m0
  %4:i32 = and %1, %m1
  %5:i32 = and %2, %m2
  %6:i32x3 = collect %3, %4, %5
  %z:i32 = const 0
  %7:f32x4 = texel_fetch texture=0 {shape} %6, %z
  %8:f32 = split lane=0 %7
  %9:f32 = split lane=3 %7
  %s:i32x3 = texture_size texture=0 {shape} %z
  %s0:i32 = split lane=0 %s
  %s1:i32 = split lane=1 %s
  %s2:i32 = split lane=2 %s
  store_output slot=0 comp=0 %8
  store_output slot=0 comp=1 %9
  store_output slot=1 comp=0 %s0
  store_output slot=1 comp=1 %s1
  store_output slot=1 comp=2 %s2
  ret
",
            mask[0], mask[1], mask[2]
        );
        check(&text);
    }
    for shape in ["dim=cube", "dim=cube array"] {
        let lanes = if shape.contains("array") { 3 } else { 2 };
        let mut text = format!(
            "shader fragment\nb0:\n  %z:i32 = const 0\n  %s:i32x{lanes} = texture_size texture=0 {shape} %z\n"
        );
        for c in 0..lanes {
            text +=
                &format!("  %s{c}:i32 = split lane={c} %s\n  store_output slot=0 comp={c} %s{c}\n");
        }
        text += "  ret\n";
        check(&text);
    }
}

/// Texel fetches from a multisampled texture: every sample of each
/// texel (coordinates masked into the verifier's 4×4 texture).
#[test]
fn multisampled_fetches_agree() {
    let mut text = String::from(
        "shader fragment\nb0:\n  %x:i32 = load_input slot=0 comp=0 interp=flat\n  %y:i32 = load_input slot=0 comp=1 interp=flat\n  %m:i32 = const 3\n  %a:i32 = and %x, %m\n  %b:i32 = and %y, %m\n  %c:i32x2 = collect %a, %b\n",
    );
    for s in 0..4 {
        text += &format!(
            "  %s{s}:i32 = const {s}\n  %t{s}:f32x4 = texel_fetch texture=0 ms %c, %s{s}\n  %o{s}:f32 = split lane={s} %t{s}\n  store_output slot=0 comp={s} %o{s}\n"
        );
    }
    text += "  ret\n";
    check(&text);
}

/// The size of a multisampled texture (no LOD operand: level 0).
#[test]
fn multisampled_sizes_agree() {
    let mut text = String::from("shader fragment\nb0:\n  %s:i32x2 = texture_size texture=0 ms\n");
    for c in 0..2 {
        text += &format!("  %s{c}:i32 = split lane={c} %s\n  store_output slot=0 comp={c} %s{c}\n");
    }
    text += "  ret\n";
    check(&text);
}

/// A fragment shader comparing the reference `fract(input)` with the
/// texel of `op` (a `compare` sample) at `coords` float inputs (the
/// first `fracted` ones in [0, 1)), writing the one result.
fn compare_sample(op: &str, coords: usize, fracted: usize, extra: Option<&str>) -> String {
    let mut s = String::from("shader fragment\nb0:\n");
    let mut lanes = Vec::new();
    for k in 0..=coords {
        s += &format!("  %i{k}:f32 = load_input slot=0 comp={k} interp=smooth\n");
        if k < fracted || k == coords {
            s += &format!("  %c{k}:f32 = fract %i{k}\n");
            lanes.push(format!("%c{k}"));
        } else {
            lanes.push(format!("%i{k}"));
        }
    }
    let reference = lanes.pop().expect("the reference lane");
    s += &format!("  %co:f32x{coords} = collect {}\n", lanes.join(", "));
    let mut args = format!("%co, {reference}");
    if let Some(e) = extra {
        s += &format!("  %e:f32 = const {e}\n");
        args += ", %e";
    }
    s += &format!("  %r:f32 = {op} {args}\n  store_output slot=0 comp=0 %r\n");
    s + "  ret\n"
}

/// Depth-compare samples of every shape and LOD mode: the reference
/// goes between the position and the layer, where the harness reads it.
#[test]
fn compare_samples_agree() {
    for (shape, coords, fracted) in [
        ("", 2, 2),
        ("dim=cube", 3, 0),
        ("array", 3, 2),
        ("dim=cube array", 4, 0),
    ] {
        for (lod, extra) in [
            ("", None),
            ("lod=bias", Some("0x3f800000")),
            ("lod=explicit", Some("0x0")),
        ] {
            check(&compare_sample(
                &format!("sample texture=0 sampler=0 {shape} {lod} compare"),
                coords,
                fracted,
                extra,
            ));
        }
    }
}

/// Explicit-gradient samples (`samgq`): the gradients follow the
/// coordinates padded to four registers in one group.
#[test]
fn gradient_samples_agree() {
    for (shape, coords, fracted) in [("", 2, 2), ("array", 3, 2)] {
        let mut s = String::from("shader fragment\nb0:\n");
        let mut lanes = Vec::new();
        for k in 0..coords + 4 {
            s += &format!(
                "  %i{k}:f32 = load_input slot={} comp={} interp=smooth\n",
                k / 4,
                k % 4
            );
            if k < fracted {
                s += &format!("  %c{k}:f32 = fract %i{k}\n");
                lanes.push(format!("%c{k}"));
            } else {
                lanes.push(format!("%i{k}"));
            }
        }
        let dy = lanes.split_off(coords + 2);
        let dx = lanes.split_off(coords);
        s += &format!("  %co:f32x{coords} = collect {}\n", lanes.join(", "));
        s += &format!("  %dx:f32x2 = collect {}\n", dx.join(", "));
        s += &format!("  %dy:f32x2 = collect {}\n", dy.join(", "));
        s += &format!("  %r:f32x4 = sample texture=0 sampler=0 {shape} lod=grad %co, %dx, %dy\n");
        for c in 0..4 {
            s +=
                &format!("  %o{c}:f32 = split lane={c} %r\n  store_output slot=0 comp={c} %o{c}\n");
        }
        check(&(s + "  ret\n"));
    }
}
