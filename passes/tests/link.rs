//! Varying linking on small hand-written pairs: each special case of the
//! design, checked on the linked IR text.

use lathe_passes::link::{DefaultCost, LinkOptions, LinkReport, link};

fn run(vs: &str, fs: &str, options: &LinkOptions) -> (String, String, LinkReport) {
    let arena = lathe_ir::Bump::new();
    let mut p = lathe_ir::parse(&arena, vs).unwrap();
    let mut c = lathe_ir::parse(&arena, fs).unwrap();
    let report = link(&mut p, &mut c, options, &DefaultCost).unwrap();
    lathe_ir::validate(&p).unwrap();
    lathe_ir::validate(&c).unwrap();
    (lathe_ir::print(&p), lathe_ir::print(&c), report)
}

const VS_HEAD: &str = "shader vertex\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  %1:f32 = load_input slot=1 comp=0 interp=flat\n";

#[test]
fn system_values_stay_unread_varyings_go_xfb_stays() {
    let vs = format!(
        "{VS_HEAD}  store_output slot=64 comp=0 %0\n  store_output slot=65 comp=0 %1\n  store_output slot=2 comp=0 %0\n  store_output slot=3 comp=1 %1\n  store_output slot=78 comp=0 %0\n  ret\n"
    );
    let fs = "shader fragment\nb0:\n  %0:f32 = load_input slot=6 comp=0 interp=smooth\n  store_output slot=0 comp=0 %0\n  ret\n";
    let options = LinkOptions {
        xfb: vec![(3, 1)],
        ..LinkOptions::default()
    };
    let (p, c, r) = run(&vs, fs, &options);
    assert!(p.contains("store_output slot=pos comp=0"), "{p}");
    assert!(p.contains("store_output slot=psiz comp=0"), "{p}");
    assert!(!p.contains("slot=2 comp=0"), "{p}");
    assert!(!p.contains("slot=tex0"), "{p}");
    // The xfb-only output survives, compacted to VAR0.x.
    assert!(p.contains("store_output slot=0 comp=0 %1"), "{p}");
    assert_eq!(r.relocated, vec![((3, 1), (0, 0))]);
    assert_eq!(r.no_varying, vec![(64, 0), (65, 0), (0, 0)]);
    // An input nobody writes is undefined: it becomes a constant.
    assert!(!c.contains("load_input"), "{c}");
    assert!(c.contains("const 0.0"), "{c}");
}

#[test]
fn texture_coordinates_and_layer_defaults() {
    let vs = format!("{VS_HEAD}  store_output slot=64 comp=0 %0\n  ret\n");
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=78 comp=0 interp=smooth
  %1:f32 = load_input slot=78 comp=3 interp=smooth
  %2:f32 = load_input slot=78 comp=2 interp=smooth
  %3:i32 = load_input slot=70 comp=0 interp=flat
  %4:f32 = fadd %0, %1
  %5:f32 = fadd %4, %2
  store_output slot=0 comp=0 %5
  store_output slot=1 comp=0 %3
  ret\n";
    let (_, c, _) = run(&vs, fs, &LinkOptions::default());
    // .xy stays for coordinate replacement; .zw read (0, 1); layer is 0.
    assert!(
        c.contains("load_input slot=tex0 comp=0 interp=smooth"),
        "{c}"
    );
    assert!(
        !c.contains("slot=tex0 comp=3") && !c.contains("slot=tex0 comp=2"),
        "{c}"
    );
    assert!(c.contains("const 1.0") && c.contains("const 0.0"), "{c}");
    assert!(!c.contains("slot=layer"), "{c}");
}

#[test]
fn colours_propagate_only_unit_constants() {
    let vs = "shader vertex\nb0:
  %0:f32 = const 0.5
  %1:f32 = const 2.0
  store_output slot=73 comp=0 %0
  store_output slot=73 comp=1 %1
  %2:f32 = const 0.25
  store_output slot=76 comp=2 %2
  ret\n";
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=73 comp=0 interp=smooth
  %1:f32 = load_input slot=73 comp=1 interp=smooth
  %2:f32 = load_input slot=74 comp=2 interp=smooth
  store_output slot=0 comp=0 %0
  store_output slot=0 comp=1 %1
  store_output slot=0 comp=2 %2
  ret\n";
    let (p, c, _) = run(vs, fs, &LinkOptions::default());
    // 0.5 is propagated: one colour load is left.
    assert!(c.contains("const 0.5"), "{c}");
    assert_eq!(c.matches("load_input").count(), 1, "{c}");
    // 2.0 would be clamped by the vertex colour clamp: it stays a varying
    // (compacted to COL0.x, no VARn being left).
    assert!(c.contains("load_input slot=col0 comp=0"), "{c}");
    assert!(
        p.contains("store_output slot=col0 comp=0") && p.contains("const 2.0"),
        "{p}"
    );
    // BFC1 written, COL1 not: the back colour's constant reaches COL1.
    assert!(!c.contains("slot=col1") && c.contains("const 0.25"), "{c}");
}

const AFFINE_FS: &str = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=1 comp=0 interp=smooth
  %2:f32 = load_uniform index=0
  %3:f32 = fmul %0, %2
  %4:f32 = fadd %3, %1
  store_output slot=0 comp=0 %4
  ret\n";

#[test]
fn affine_expressions_move_across_interpolation_unless_infs_matter() {
    let vs = format!(
        "{VS_HEAD}  store_output slot=0 comp=0 %0\n  store_output slot=1 comp=0 %1\n  ret\n"
    );
    let (p, c, r) = run(&vs, AFFINE_FS, &LinkOptions::default());
    assert_eq!(r.backward_moves, 1);
    assert!(r.moved_interpolated);
    assert_eq!((r.before.components, r.after.components), (2, 1));
    assert!(
        p.contains("load_uniform index=0") && p.contains("fmul"),
        "{p}"
    );
    assert!(c.contains("load_input slot=0 comp=0 interp=smooth"), "{c}");
    assert!(!c.contains("fmul"), "{c}");

    let keep = LinkOptions {
        preserve_inf: true,
        ..LinkOptions::default()
    };
    let (_, c, r) = run(&vs, AFFINE_FS, &keep);
    assert_eq!(r.backward_moves, 0);
    assert!(c.contains("fmul"), "{c}");
}

#[test]
fn products_of_interpolated_inputs_and_flat_mixes_stay() {
    let vs = format!(
        "{VS_HEAD}  store_output slot=0 comp=0 %0\n  store_output slot=1 comp=0 %1\n  ret\n"
    );
    for (a, b, op) in [
        ("smooth", "smooth", "fmul"),
        ("smooth", "flat", "fadd"),
        ("smooth", "noperspective", "fadd"),
    ] {
        let fs = format!(
            "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp={a}
  %1:f32 = load_input slot=1 comp=0 interp={b}
  %2:f32 = {op} %0, %1
  store_output slot=0 comp=0 %2
  ret\n"
        );
        let (_, c, r) = run(&vs, &fs, &LinkOptions::default());
        assert_eq!(r.backward_moves, 0, "{a} {op} {b}");
        assert!(c.contains(op), "{c}");
    }
    // Two flat inputs: anything moves.
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=flat
  %1:f32 = load_input slot=1 comp=0 interp=flat
  %2:f32 = fmul %0, %1
  %3:f32 = floor %2
  store_output slot=0 comp=0 %3
  ret\n";
    let (_, c, r) = run(&vs, fs, &LinkOptions::default());
    assert_eq!(r.backward_moves, 1);
    assert_eq!(
        c,
        "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  store_output slot=0 comp=0 %0\n  ret\n"
    );
}

#[test]
fn forward_motion_shares_one_value() {
    let vs = format!(
        "{VS_HEAD}  %2:f32 = fmul %0, %1
  %3:f32 = const 1.0
  %4:f32 = fadd %2, %3
  %5:f32 = const 2.0
  %6:f32 = fmul %2, %5
  store_output slot=0 comp=0 %4
  store_output slot=0 comp=1 %6
  ret\n"
    );
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  ret\n";
    let (p, c, r) = run(&vs, fs, &LinkOptions::default());
    assert_eq!(r.forward_moves, 1, "{p}\n{c}");
    assert_eq!((r.before.components, r.after.components), (2, 1));
    // The vertex shader stores the product; the fragment shader adds and scales.
    assert!(
        p.contains("%2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2"),
        "{p}"
    );
    assert!(c.contains("fadd") && c.contains("fmul"), "{c}");
    // Without it, the backward-only pipeline keeps two components.
    let mut no_forward = LinkOptions::default();
    no_forward.steps.forward = false;
    let (_, _, r) = run(&vs, fs, &no_forward);
    assert_eq!(r.after.components, 2);
}

#[test]
fn compaction_packs_convergent_into_interpolated_holes() {
    let vs = format!(
        "{VS_HEAD}  %2:f32 = load_uniform index=0
  %3:f32 = load_uniform index=1
  %4:f32 = floor %2
  store_output slot=5 comp=2 %0
  store_output slot=9 comp=1 %4
  store_output slot=12 comp=3 %1
  ret\n"
    );
    // VAR9.y holds a uniform expression (convergent); propagation is off
    // so that compaction sees it.
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=5 comp=2 interp=smooth
  %1:f32 = load_input slot=9 comp=1 interp=smooth
  %2:f32 = load_input slot=12 comp=3 interp=flat
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=2 comp=0 %2
  ret\n";
    let mut options = LinkOptions::default();
    options.steps.propagate = false;
    let (p, c, r) = run(&vs, fs, &options);
    // Interpolated VAR0.x, the convergent one fills VAR0.y (smooth), flat in VAR1.
    assert!(c.contains("load_input slot=0 comp=0 interp=smooth"), "{c}");
    assert!(c.contains("load_input slot=0 comp=1 interp=smooth"), "{c}");
    assert!(c.contains("load_input slot=1 comp=0 interp=flat"), "{c}");
    assert!(p.contains("store_output slot=0 comp=1"), "{p}");
    assert_eq!(r.after.vec4_slots, 2);
}

#[test]
fn duplicates_merge_within_a_qualifier_only() {
    let vs = format!(
        "{VS_HEAD}  store_output slot=0 comp=0 %0\n  store_output slot=1 comp=0 %0\n  store_output slot=2 comp=0 %0\n  ret\n"
    );
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=1 comp=0 interp=smooth
  %2:f32 = load_input slot=2 comp=0 interp=flat
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=2 comp=0 %2
  ret\n";
    let mut options = LinkOptions::default();
    options.steps.backward = false;
    options.steps.forward = false;
    let (_, _, r) = run(&vs, fs, &options);
    assert_eq!(r.deduplicated, 1);
    assert_eq!(r.after.components, 2);
}

#[test]
fn backward_motion_reads_the_last_of_several_stores() {
    use lathe_ir::Scalar;
    use lathe_passes::link::generate::check_pair;
    use lathe_passes::link::harness::Scene;
    // VAR0.x is stored twice in one block: the product is what the
    // fragment shader reads, so the moved addition must use it.
    let vs = "shader vertex\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=flat
  %1:f32 = load_input slot=1 comp=0 interp=flat
  %2:f32 = fmul %0, %1
  store_output slot=pos comp=0 %0
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=0 comp=0 %2
  ret\n";
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=1 comp=0 interp=smooth
  %2:f32 = fadd %0, %1
  store_output slot=0 comp=0 %2
  ret\n";
    let (p, c, r) = run(vs, fs, &LinkOptions::default());
    assert_eq!(r.backward_moves, 1, "{p}{c}");
    assert_eq!((r.before.components, r.after.components), (2, 1));
    assert!(p.contains("fadd %2, %1"), "{p}");
    assert_eq!(c.matches("load_input").count(), 1, "{c}");
    let inputs = [((0, 0), Scalar::F32), ((1, 0), Scalar::F32)];
    let scene = Scene::random(7, &inputs, 0, 8);
    let stats = check_pair(vs, fs, &scene, &LinkOptions::default()).unwrap();
    assert_eq!(stats.compared.fragments, 8);
}

#[test]
fn colours_pack_among_themselves_from_the_first_free_channel() {
    // VAR0.xy stay in use, so colour channels start at .z; the back colour
    // follows its front colour; flat and smooth colours take a slot each.
    let vs = format!(
        "{VS_HEAD}  store_output slot=0 comp=0 %0\n  store_output slot=0 comp=1 %1\n  store_output slot=col1 comp=3 %0\n  store_output slot=bfc1 comp=3 %1\n  store_output slot=col0 comp=1 %1\n  ret\n"
    );
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=flat
  %2:f32 = load_input slot=col1 comp=3 interp=smooth
  %3:f32 = load_input slot=col0 comp=1 interp=flat
  %4:f32 = fmul %0, %2
  %5:f32 = fmul %1, %3
  store_output slot=0 comp=0 %4
  store_output slot=0 comp=1 %5
  ret\n";
    let (p, c, r) = run(&vs, fs, &LinkOptions::default());
    // VAR0 smooth x, VAR1 flat x: the first free VARn channel is VAR0.y.
    assert!(p.contains("store_output slot=col0 comp=1 %0"), "{p}");
    assert!(p.contains("store_output slot=bfc0 comp=1 %1"), "{p}");
    assert!(p.contains("store_output slot=col1 comp=1 %1"), "{p}");
    assert!(
        c.contains("load_input slot=col0 comp=1 interp=smooth"),
        "{c}"
    );
    assert!(c.contains("load_input slot=col1 comp=1 interp=flat"), "{c}");
    assert!(
        r.relocated.contains(&((74, 3), (73, 1))),
        "{:?}",
        r.relocated
    );
}

#[test]
fn two_flat_16_bit_varyings_share_a_component() {
    use lathe_ir::Scalar;
    use lathe_passes::link::generate::check_pair;
    use lathe_passes::link::harness::Scene;
    let vs = format!(
        "{VS_HEAD}  %2:f16 = cvt %0\n  %3:f16 = cvt %1\n  %4:i32 = cvt %2\n  %5:i16 = cvt %4\n  store_output slot=pos comp=0 %0\n  store_output slot=2 comp=1 %2\n  store_output slot=3 comp=0 %5\n  store_output slot=1 comp=2 %3\n  ret\n"
    );
    let fs = "shader fragment\nb0:
  %0:f16 = load_input slot=2 comp=1 interp=flat
  %1:i16 = load_input slot=3 comp=0 interp=flat
  %2:f16 = load_input slot=1 comp=2 interp=flat
  %3:f16 = fadd %0, %2
  %4:f32 = cvt %3
  %5:f32 = cvt %1
  store_output slot=0 comp=0 %4
  store_output slot=0 comp=1 %5
  ret\n";
    let options = LinkOptions {
        steps: lathe_passes::link::Steps {
            backward: false,
            forward: false,
            ..lathe_passes::link::Steps::ALL
        },
        ..LinkOptions::default()
    };
    let (p, c, r) = run(&vs, fs, &options);
    assert_eq!(r.packed_16bit, 1, "{p}{c}");
    assert_eq!((r.before.components, r.after.components), (3, 2), "{p}{c}");
    assert!(p.contains("shl"), "{p}");
    assert!(
        c.contains(":u32 = load_input slot=0 comp=1 interp=flat"),
        "{c}"
    );
    let inputs = [((0, 0), Scalar::F32), ((1, 0), Scalar::F32)];
    let scene = Scene::random(11, &inputs, 0, 8);
    let stats = check_pair(&vs, fs, &scene, &options).unwrap();
    assert_eq!(stats.compared.fragments, 8);
    assert_eq!(stats.report.packed_16bit, 1);
}

/// The `link` fuzz finding: two noperspective f16 varyings hold
/// `cvt.f16(x * x)`, which overflows to Inf at one vertex; the fragment
/// shader's `((a + b) * 0.5 + b) * 0.5` moves into the vertex shader.
/// Interpolating the inputs and then adding gives Inf, interpolating the
/// moved sum (Inf at two vertices) gives NaN.
const INF_VS: &str = "shader vertex\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=flat
  %1:f32 = load_input slot=1 comp=0 interp=flat
  %2:f32 = fmul %0, %0
  %3:f16 = cvt %2
  %4:f32 = fmul %1, %1
  %5:f16 = cvt %4
  store_output slot=pos comp=0 %0
  store_output slot=2 comp=1 %3
  store_output slot=4 comp=3 %5
  ret\n";
const INF_FS: &str = "shader fragment\nb0:
  %0:f16 = load_input slot=2 comp=1 interp=noperspective
  %1:f16 = load_input slot=4 comp=3 interp=noperspective
  %2:f16 = fadd %0, %1
  %3:f16 = const 0.5
  %4:f16 = fmul %2, %3
  %5:f16 = fadd %4, %1
  %6:f16 = fmul %5, %3
  store_output slot=0 comp=0 %6
  ret\n";

/// A scene for `INF_VS`: `x` and `y` per vertex.
fn inf_scene(x: [f32; 3], y: [f32; 3]) -> lathe_passes::link::harness::Scene {
    use lathe_ir::Scalar;
    use lathe_passes::link::harness::Scene;
    let inputs = [((0, 0), Scalar::F32), ((1, 0), Scalar::F32)];
    let mut scene = Scene::random(5, &inputs, 0, 8);
    for k in 0..3 {
        scene.vertices[k].insert((0, 0), x[k].to_bits());
        scene.vertices[k].insert((1, 0), y[k].to_bits());
    }
    scene
}

#[test]
fn moved_f16_arithmetic_overflowing_to_inf_at_a_vertex() {
    use lathe_passes::link::generate::check_pair;
    let (p, c, r) = run(INF_VS, INF_FS, &LinkOptions::default());
    assert!(r.moved_interpolated && r.backward_moves == 1, "{p}{c}");
    assert_eq!(r.after.components, 1, "{p}{c}");
    // x² = 90000 overflows f16 at vertex 1, a + b = 80000 at vertex 0:
    // Inf is interpolated, so no fragment has a required result.
    let inf = inf_scene([200.0, 300.0, 1.0], [200.0, 1.0, 1.0]);
    let stats = check_pair(INF_VS, INF_FS, &inf, &LinkOptions::default()).unwrap();
    assert_eq!(
        (stats.compared.fragments, stats.compared.non_finite),
        (0, 8)
    );
    // Finite values: every fragment compared (within the tolerance).
    let finite = inf_scene([20.0, 30.0, 1.0], [20.0, 1.0, 1.0]);
    let stats = check_pair(INF_VS, INF_FS, &finite, &LinkOptions::default()).unwrap();
    assert_eq!(
        (stats.compared.fragments, stats.compared.non_finite),
        (8, 0)
    );
    // With Infs preserved nothing moves and every fragment is compared.
    let keep = LinkOptions {
        preserve_inf: true,
        ..LinkOptions::default()
    };
    let stats = check_pair(INF_VS, INF_FS, &inf, &keep).unwrap();
    assert!(!stats.report.moved_interpolated);
    assert_eq!(
        (stats.compared.fragments, stats.compared.non_finite),
        (8, 0)
    );
}

/// The harness still fails a wrong link: a moved expression with a wrong
/// constant on finite values, and the Inf-vs-NaN difference of the fuzz
/// finding when Infs must be preserved.
#[test]
fn the_harness_rejects_wrong_links_around_inf() {
    use lathe_ir::interp::Limits;
    use lathe_passes::link::harness::{compare, run_pair};
    let arena = lathe_ir::Bump::new();
    let parse = |t: &str| lathe_ir::parse(&arena, t).unwrap();
    let moved = |k: &str| {
        let vs = INF_VS.replace(
            "  ret\n",
            &format!(
                "  %6:f16 = fadd %3, %5\n  %7:f16 = const {k}\n  %8:f16 = fmul %6, %7\n  %9:f16 = fadd %8, %5\n  %10:f16 = fmul %9, %7\n  store_output slot=0 comp=0 %10\n  ret\n"
            ),
        );
        let fs = "shader fragment\nb0:\n  %0:f16 = load_input slot=0 comp=0 interp=noperspective\n  store_output slot=0 comp=0 %0\n  ret\n";
        (vs, fs)
    };
    let (vs0, fs0) = (parse(INF_VS), parse(INF_FS));
    let report = LinkReport {
        moved_interpolated: true,
        ..LinkReport::default()
    };
    let limits = Limits::default();
    let finite = inf_scene([20.0, 30.0, 1.0], [20.0, 1.0, 1.0]);
    let before = run_pair(&vs0, &fs0, &finite, limits);
    for (k, ok) in [("0.5", true), ("0.75", false)] {
        let (vs, fs) = moved(k);
        let after = run_pair(&parse(&vs), &parse(fs), &finite, limits);
        let r = compare(&before, &after, &report, &LinkOptions::default());
        assert_eq!(r.is_ok(), ok, "constant {k}: {r:?}");
    }
    let inf = inf_scene([200.0, 300.0, 1.0], [200.0, 1.0, 1.0]);
    let before = run_pair(&vs0, &fs0, &inf, limits);
    let (vs, fs) = moved("0.5");
    let after = run_pair(&parse(&vs), &parse(fs), &inf, limits);
    let keep = LinkOptions {
        preserve_inf: true,
        ..LinkOptions::default()
    };
    let e = compare(&before, &after, &report, &keep).unwrap_err();
    assert!(e.contains("inf vs NaN"), "{e}");
}

/// Sweep finding (random seeds 604094, 908550): moved sums cancel large
/// vertex values, so the two orders round differently by much more than
/// the result's own tolerance; the harness scales the tolerance by the
/// interpolated magnitudes.
#[test]
fn moved_sums_cancelling_large_vertex_values() {
    use lathe_ir::interp::Limits;
    use lathe_passes::link::generate::check_pair;
    use lathe_passes::link::harness::{compare, run_pair};
    let vs = "shader vertex\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=flat
  %1:f32 = load_input slot=1 comp=0 interp=flat
  %2:f32 = const 250000.0
  %3:f32 = fmul %0, %2
  %4:f32 = const 0.5
  %5:f32 = fmul %3, %4
  %6:f32 = const -0.5
  %7:f32 = fmul %3, %6
  store_output slot=pos comp=0 %0
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %7
  store_output slot=0 comp=2 %1
  ret\n";
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_input slot=0 comp=2 interp=smooth
  %3:f32 = fadd %2, %1
  %4:f32 = fadd %3, %0
  store_output slot=0 comp=0 %4
  ret\n";
    let scene = inf_scene([3.7, -2.9, 1.3], [0.3, 0.7, 0.1]);
    let stats = check_pair(vs, fs, &scene, &LinkOptions::default()).unwrap();
    assert!(stats.report.moved_interpolated, "{:?}", stats.report);
    assert_eq!(stats.compared.fragments, 8);
    // The two orders really differ: compared exactly, they fail.
    let arena = lathe_ir::Bump::new();
    let (mut p, mut c) = (
        lathe_ir::parse(&arena, vs).unwrap(),
        lathe_ir::parse(&arena, fs).unwrap(),
    );
    let (p0, c0) = (
        lathe_ir::parse(&arena, vs).unwrap(),
        lathe_ir::parse(&arena, fs).unwrap(),
    );
    link(&mut p, &mut c, &LinkOptions::default(), &DefaultCost).unwrap();
    let before = run_pair(&p0, &c0, &scene, Limits::default());
    let after = run_pair(&p, &c, &scene, Limits::default());
    let exact = LinkReport::default();
    assert!(compare(&before, &after, &exact, &LinkOptions::default()).is_err());
}

/// Backward motion with an input stored in both arms of a branch: the
/// moved sum is computed at the return from a phi of the two stores; an
/// input one path leaves unwritten blocks the move.
#[test]
fn backward_motion_through_stores_in_several_blocks() {
    use lathe_passes::link::generate::check_pair;
    let vs = |else_store: &str| {
        format!(
            "shader vertex\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=flat
  %1:f32 = load_input slot=1 comp=0 interp=flat
  store_output slot=pos comp=0 %0
  %2:bool = flt %0, %1
  branch %2, b1, b2
b1:
  %3:f32 = fmul %0, %1
  store_output slot=0 comp=0 %3
  jump b3
b2:
  {else_store}
  jump b3
b3:
  store_output slot=1 comp=0 %1
  ret\n"
        )
    };
    let fs = "shader fragment\nb0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=1 comp=0 interp=smooth
  %2:f32 = const 2.0
  %3:f32 = fmul %1, %2
  %4:f32 = fadd %0, %3
  store_output slot=0 comp=0 %4
  ret\n";
    let both = vs("store_output slot=0 comp=0 %1");
    let (p, c, r) = run(&both, fs, &LinkOptions::default());
    assert_eq!(r.backward_moves, 1, "{p}{c}");
    assert_eq!((r.before.components, r.after.components), (2, 1), "{p}{c}");
    assert!(p.contains("phi [%"), "{p}");
    assert_eq!(c.matches("load_input").count(), 1, "{c}");
    // Vertices on both sides of the branch.
    let scene = inf_scene([1.5, -0.5, 3.0], [2.0, -1.0, 0.25]);
    let stats = check_pair(&both, fs, &scene, &LinkOptions::default()).unwrap();
    assert_eq!(stats.compared.fragments, 8);
    // The else path leaves VAR0.x unwritten: nothing moves.
    let one = vs("");
    let (p, c, r) = run(&one, fs, &LinkOptions::default());
    assert_eq!(r.backward_moves, 0, "{p}{c}");
}
