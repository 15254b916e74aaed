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
    let text = &numbered(text);
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

/// `text` with its named values (`%name`) numbered in order of first
/// appearance, as the IR text form names them.
fn numbered(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let end = rest
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        let name = &rest[..end];
        let k = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_string());
            names.len() - 1
        });
        out.push_str(&k.to_string());
        rest = &rest[end..];
    }
    out + rest
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

/// A fragment shader reading `sample` of `args` (the coordinate `%c`
/// made from four varyings in [0, 1) scaled as `coord` says) and storing
/// the components of `result` it gives.
fn sampling(coord: &str, op: &str, result: &str, lanes: u32) -> String {
    let mut text = String::from("shader fragment\nb0:\n");
    for k in 0..4 {
        text += &format!("  %v{k}:f32 = load_input slot=0 comp={k} interp=smooth\n");
        text += &format!("  %u{k}:f32 = fract %v{k}\n");
    }
    // A layer in [0, 3): fractions included, so its rounding matters.
    text += "  %three:f32 = const 3.0\n  %l:f32 = fmul %u2, %three\n";
    text += "  %half:f32 = const 0.5\n  %m:f32 = fadd %u1, %half\n";
    text += &format!("{coord}  %r:{result} = {op}\n");
    if lanes == 1 {
        text += "  store_output slot=0 comp=0 %r\n";
    } else {
        for k in 0..lanes {
            text += &format!("  %s{k}:f32 = split lane={k} %r\n");
            text += &format!("  store_output slot=0 comp={k} %s{k}\n");
        }
    }
    text + "  ret\n"
}

#[test]
fn every_sampled_shape_verifies() {
    let c2 = "  %c:f32x2 = collect %u0, %u1\n";
    let c3 = "  %c:f32x3 = collect %u0, %u1, %u3\n";
    let ca = "  %c:f32x3 = collect %u0, %u1, %l\n";
    let cases = [
        (
            c3,
            "sample texture=0 sampler=0 dim=3d %c",
            ".f.32.3d.computed @",
        ),
        (
            ca,
            "sample texture=0 sampler=0 array %c",
            ".2d.array_enable.computed",
        ),
        (
            c2,
            "sample texture=0 sampler=0 lod=explicit %c, %u2",
            ".2d.explicit",
        ),
        (
            c2,
            "sample texture=0 sampler=0 lod=bias %c, %u2",
            ".computed_bias",
        ),
        (
            ca,
            "sample texture=0 sampler=0 array lod=explicit %c, %u3",
            ".array_enable.explicit",
        ),
        (
            c3,
            "sample texture=0 sampler=0 dim=3d lod=bias %c, %u2",
            ".3d.computed_bias",
        ),
        (
            c2,
            "gather texture=0 sampler=0 comp=1 %c",
            ".f.32.2d.gather4_g @",
        ),
        (
            ca,
            "gather texture=0 sampler=0 array comp=3 %c",
            ".2d.array_enable.gather4_a",
        ),
    ];
    for (coord, op, form) in cases {
        let text = sampling(coord, op, "f32x4", 4);
        let (listing, compared) = check(&text);
        assert!(listing.contains(form), "{form}\n{listing}");
        assert_eq!(compared, 16, "{listing}");
    }
}

/// Cube maps: the shader projects a direction (each lane in [-1, 1), so
/// every face is hit over the seeds' draws) on its face and packs the
/// face word into s; the simulator samples the face the word names and
/// the interpreter the face of the direction, so a face numbered or
/// placed otherwise than the texture instruction reads it fails.
#[test]
fn cube_samples_verify() {
    let dir = "  %two:f32 = const 2.0
  %mone:f32 = const -1.0
  %x:f32 = ffma %u0, %two, %mone
  %y:f32 = ffma %u1, %two, %mone
  %z:f32 = ffma %u3, %two, %mone
";
    let c3 = format!(
        "{dir}  %c:f32x3 = collect %x, %y, %z
"
    );
    let c4 = format!(
        "{dir}  %c:f32x4 = collect %x, %y, %z, %l
"
    );
    let cases = [
        (
            &c3,
            "sample texture=0 sampler=0 dim=cube %c",
            ".f.32.cube.computed @",
        ),
        (
            &c3,
            "sample texture=0 sampler=0 dim=cube lod=explicit %c, %u2",
            ".cube.explicit",
        ),
        (
            &c3,
            "sample texture=0 sampler=0 dim=cube lod=bias %c, %u2",
            ".cube.computed_bias",
        ),
        (
            &c4,
            "sample texture=0 sampler=0 dim=cube array %c",
            ".cube.array_enable.computed",
        ),
        (
            &c4,
            "sample texture=0 sampler=0 dim=cube array lod=explicit %c, %u2",
            ".cube.array_enable.explicit",
        ),
        (
            &c4,
            "sample texture=0 sampler=0 dim=cube array lod=bias %c, %u2",
            ".cube.array_enable.computed_bias",
        ),
    ];
    for (coord, op, form) in cases {
        let text = sampling(coord, op, "f32x4", 4);
        let (listing, compared) = check(&text);
        assert!(
            listing.contains(form),
            "{form}
{listing}"
        );
        assert!(listing.contains("CUBEFACE2_V9"), "{listing}");
        assert_eq!(compared, 16, "{listing}");
    }
}

#[test]
fn depth_compare_samples_verify() {
    let c2 = "  %c:f32x2 = collect %u0, %u1\n";
    let ca = "  %c:f32x3 = collect %u0, %u1, %l\n";
    let cases = [
        (
            c2,
            "sample texture=0 sampler=0 compare %c, %u3",
            ".r.2d.shadow.computed",
        ),
        (
            ca,
            "sample texture=0 sampler=0 array compare %c, %u3",
            ".array_enable.shadow.computed",
        ),
        (
            c2,
            "sample texture=0 sampler=0 lod=explicit compare %c, %u3, %u2",
            ".shadow.explicit",
        ),
    ];
    for (coord, op, form) in cases {
        let text = sampling(coord, op, "f32", 1);
        let (listing, compared) = check(&text);
        assert!(listing.contains(form), "{form}\n{listing}");
        assert_eq!(compared, 4, "{listing}");
    }
}

/// A compute-free fragment fetch: integer coordinates from varyings in
/// [0, 1) scaled to the fetched texture, at level 0 or with offsets.
fn fetching(shape: &str, coords: u32, extra: &str) -> String {
    let mut text =
        String::from("shader fragment\nb0:\n  %n:f32 = const 3.0\n  %unit:f32 = const 1.0\n");
    let mut lanes = Vec::new();
    for k in 0..coords {
        text += &format!("  %v{k}:f32 = load_input slot=0 comp={k} interp=smooth\n");
        // 1 + 3 * fract(v): 1..=3, inside after an offset of -1 or 1.
        text += &format!("  %f{k}:f32 = fract %v{k}\n  %g{k}:f32 = ffma %f{k}, %n, %unit\n");
        text += &format!("  %i{k}:i32 = cvt %g{k}\n");
        lanes.push(format!("%i{k}"));
    }
    text += &format!(
        "  %c:i32x{coords} = collect {}\n  %zero:i32 = const 0\n  %one:i32 = const 1\n  %mone:i32 = const -1\n  %o:i32x2 = collect %one, %mone\n",
        lanes.join(", ")
    );
    text += &format!("  %r:f32x4 = texel_fetch texture=0{shape} %c{extra}\n");
    for k in 0..4 {
        text += &format!("  %s{k}:f32 = split lane={k} %r\n  store_output slot=0 comp={k} %s{k}\n");
    }
    text + "  ret\n"
}

#[test]
fn texel_fetches_verify() {
    let cases = [
        (fetching("", 2, ", %zero"), "TEX_FETCH"),
        (fetching(" dim=3d", 3, ", %zero"), ".f.32.3d @"),
        (fetching(" array", 3, ", %zero"), ".2d.array_enable @"),
        (fetching(" offset", 2, ", %zero, %o"), ".2d.texel_offset @"),
        (
            fetching(" array offset", 3, ", %zero, %o"),
            ".array_enable.texel_offset @",
        ),
    ];
    for (text, form) in cases {
        let (listing, compared) = check(&text);
        assert!(listing.contains(form), "{form}\n{listing}");
        assert_eq!(compared, 16, "{listing}");
    }
}

/// Stores the lanes of `%r` (of `lanes` i32 lanes, or one) to output 0.
fn store_ints(text: &mut String, lanes: u32) {
    if lanes == 1 {
        *text += "  store_output slot=0 comp=0 %r\n";
    }
    for k in 0..lanes.min(4) {
        if lanes > 1 {
            *text +=
                &format!("  %s{k}:i32 = split lane={k} %r\n  store_output slot=0 comp={k} %s{k}\n");
        }
    }
    *text += "  ret\n";
}

#[test]
fn texture_and_image_sizes_verify() {
    let zero = "  %l:i32 = const 0\n";
    let cases = [
        ("texture_size texture=0 %l", "i32x2", 2),
        ("texture_size texture=0 dim=3d %l", "i32x3", 3),
        ("texture_size texture=0 array %l", "i32x3", 3),
        ("texture_size texture=0 dim=cube %l", "i32x2", 2),
        ("texture_size texture=0 dim=cube array %l", "i32x3", 3),
        ("texture_levels texture=0", "i32", 1),
        ("image_size image=0", "i32x2", 2),
    ];
    for (op, ty, lanes) in cases {
        let mut text = format!("shader fragment\nb0:\n{zero}  %r:{ty} = {op}\n");
        store_ints(&mut text, lanes);
        let (listing, compared) = check(&text);
        // An image's texels are compared too (the verifier's are 4×4 of
        // four words).
        let image = if op.starts_with("image") { 64 } else { 0 };
        assert_eq!(compared, 4 * lanes as usize + image, "{op}\n{listing}");
    }
}

/// A level's size is level 0's shifted and clamped: the fetched texture
/// has its whole mip chain and the level comes from an input.
#[test]
fn a_level_size_is_shifted() {
    let text = "shader fragment
b0:
  %l:i32 = load_input slot=0 comp=0 interp=flat
  %z:i32 = const 0
  %c:i32x2 = collect %z, %z
  %t:f32x4 = texel_fetch texture=0 %c, %l
  %x:f32 = split lane=0 %t
  store_output slot=1 comp=0 %x
  %r:i32x2 = texture_size texture=0 %l
  %s0:i32 = split lane=0 %r
  %s1:i32 = split lane=1 %r
  store_output slot=0 comp=0 %s0
  store_output slot=0 comp=1 %s1
  ret
";
    let (listing, compared) = check(text);
    assert!(listing.contains("RSHIFT_OR"), "{listing}");
    assert_eq!(compared, 12, "{listing}");
}

/// Storage images: each thread loads the texel at its pixel (distinct
/// per thread), scales it and stores it to another image, through
/// LD_TEX_IMM and LEA_TEX_IMM + ST_CVT; the verifier compares both
/// images word by word, so a texel addressed, loaded or stored wrongly
/// (or an image named by another descriptor) fails.
#[test]
fn image_loads_and_stores_verify() {
    for (ty, scale) in [
        (
            "f32",
            "%k:f32 = const 2.0\n  %r:f32x4 = collect %a0, %a1, %a2, %a3",
        ),
        ("u32", "%r:u32x4 = collect %t0, %t1, %t2, %t3"),
    ] {
        let mut text = format!(
            "shader fragment
b0:
  %fx:f32 = load_sysval sv=frag_coord comp=0
  %fy:f32 = load_sysval sv=frag_coord comp=1
  %x:i32 = cvt %fx
  %y:i32 = cvt %fy
  %c:i32x2 = collect %x, %y
  %t:{ty}x4 = image_load image=0 %c
"
        );
        for k in 0..4 {
            text += &format!("  %t{k}:{ty} = split lane={k} %t\n");
        }
        if ty == "f32" {
            for k in 0..4 {
                text += &format!("  %a{k}:f32 = fmul %t{k}, %k\n");
            }
        }
        text += &format!("  {scale}\n  image_store image=1 %c, %r\n  ret\n");
        let text = text.replace("%k:f32 = const 2.0\n  %r", "%r").replacen(
            "  %t:",
            "  %k:f32 = const 2.0\n  %t:",
            usize::from(ty == "f32"),
        );
        let (listing, compared) = check(&text);
        assert!(listing.contains("LD_TEX_IMM.v4"), "{listing}");
        assert!(listing.contains("LEA_TEX_IMM.slot"), "{listing}");
        assert!(listing.contains(".v4.auto"), "{listing}");
        // Two 4×4 images of four words.
        assert_eq!(compared, 2 * 64, "{text}\n{listing}");
    }
}

/// Storage image atomics: each thread exchanges, adds to and
/// compare-and-swaps the texel at its own pixel (distinct per thread) of
/// three images through LEA_TEX_IMM and ATOM_RETURN, and outputs the old
/// words; the verifier compares the outputs and the images, so a texel
/// addressed wrongly, an operation confused with another or operands
/// staged in the wrong order fails.
#[test]
fn image_atomics_return_the_old_texel_word() {
    let text = "shader fragment
b0:
  %fx:f32 = load_sysval sv=frag_coord comp=0
  %fy:f32 = load_sysval sv=frag_coord comp=1
  %x:i32 = cvt %fx
  %y:i32 = cvt %fy
  %c:i32x2 = collect %x, %y
  %v:i32 = load_uniform index=0
  %w:i32 = iadd %v, %x
  %a:i32 = image_atomic image=0 op=xchg %c, %w
  %b:i32 = image_atomic image=1 op=add %c, %w
  %d:i32 = image_atomic image=2 op=cmpxchg %c, %w, %a
  store_output slot=0 comp=0 %a
  store_output slot=0 comp=1 %b
  store_output slot=0 comp=2 %d
  ret
";
    let (listing, compared) = check(text);
    assert!(listing.contains("LEA_TEX_IMM.slot"), "{listing}");
    assert!(listing.contains(".compare.axchg"), "{listing}");
    // Three outputs of four threads and three 4×4 images of four words.
    assert_eq!(compared, 12 + 3 * 64, "{listing}");
}

/// Samples with explicit gradients, as Mesa compiles them on Valhall
/// (`nir_lower_tex` with `lower_txd`): the LOD is computed from the
/// gradients scaled by the texture's pushed level-0 size (the size words
/// and a log2 in the listing) and the sample takes it explicitly.
#[test]
fn gradient_samples_take_the_lod_their_gradients_give() {
    let grads = "  %dx:f32x2 = collect %u2, %u3\n  %dy:f32x2 = collect %u3, %u1\n";
    let c2 = format!("  %c:f32x2 = collect %u0, %u1\n{grads}");
    let ca = format!("  %c:f32x3 = collect %u0, %u1, %l\n{grads}");
    let cases = [
        (
            c2,
            "sample texture=0 sampler=0 lod=grad %c, %dx, %dy",
            ".2d.explicit",
        ),
        (
            ca,
            "sample texture=0 sampler=0 array lod=grad %c, %dx, %dy",
            ".array_enable.explicit",
        ),
    ];
    for (coord, op, form) in cases {
        let text = sampling(&coord, op, "f32x4", 4);
        let (listing, compared) = check(&text);
        assert!(listing.contains(form), "{form}\n{listing}");
        assert!(listing.contains("FLOGD"), "{listing}");
        assert_eq!(compared, 16, "{listing}");
    }
}

/// Multisampled texel fetches: the sample index rides in the third byte
/// of TEX_FETCH's offsets word (Mesa's `bi_emit_valhall_offsets`). The
/// verifier's multisampled textures repeat one value in every sample, so
/// the test also fetches each sample of a texture whose samples differ,
/// through the executor, against the interpreter: a sample index lost or
/// put in the wrong byte reads another sample.
#[test]
fn multisampled_fetches_read_the_sample_asked_for() {
    use lathe_ir::interp::run;
    use lathe_ir::texture::Texture;
    use lathe_ir::verify::Executor;
    use lathe_ir::{Dim, Invocation, Limits, Memory};

    let text = "shader fragment
b0:
  %fx:f32 = load_sysval sv=frag_coord comp=0
  %fy:f32 = load_sysval sv=frag_coord comp=1
  %x:i32 = cvt %fx
  %y:i32 = cvt %fy
  %c:i32x2 = collect %x, %y
  %k:i32 = load_uniform index=0
  %t:f32x4 = texel_fetch texture=0 ms %c, %k
  %t0:f32 = split lane=0 %t
  %t1:f32 = split lane=1 %t
  %t2:f32 = split lane=2 %t
  store_output slot=0 comp=0 %t0
  store_output slot=0 comp=1 %t1
  store_output slot=0 comp=2 %t2
  ret
";
    let (listing, _) = check(text);
    assert!(listing.contains("TEX_FETCH"), "{listing}");
    let text = numbered(text);
    // 2×2 texels of 4 samples: sample s of texel (x, y) is (x, y, s).
    let mut texture = Texture::from_fn(Dim::D2, [2, 2, 1], 1, 1, |_, _, _, _, _| [0.0; 4]);
    texture.samples = 4;
    texture.levels[0].texels = (0..16)
        .map(|t| [(t / 4 % 2) as f32, (t / 8) as f32, (t % 4) as f32, 1.0])
        .collect();
    for gpu in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
        let target = Rc::new(ValhallTarget::new(gpu.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
        for sample in 0..4 {
            let threads: Vec<Invocation> = (0..4)
                .map(|lane| {
                    let (x, y) = ((lane % 2) as f32, (lane / 2) as f32);
                    let mut inv = Invocation {
                        uniforms: vec![sample],
                        textures: vec![texture.clone()],
                        ..Default::default()
                    };
                    inv.sysvals.frag_coord = [x + 0.5, y + 0.5, 0.5, 1.0];
                    inv
                })
                .collect();
            let got = ValhallProgram::new(&out)
                .execute(&threads, &mut Memory::default())
                .unwrap_or_else(|e| panic!("{gpu}: {e}\n{}", out.compiled.listing()));
            for (inv, outcome) in threads.iter().zip(&got) {
                let want = run(&generic, inv, Limits::default()).unwrap();
                assert_eq!(
                    outcome.outputs,
                    want.outputs,
                    "{gpu} sample {sample}\n{}",
                    out.compiled.listing()
                );
            }
        }
    }
}
