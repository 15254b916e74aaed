//! Hand-checked FDM plans. Every expected value below was worked out by
//! hand from the formulas in the comments, not copied from program output.

use lathe_adreno::fdm::lrz::{LrzDecision, LrzDisabled};
use lathe_adreno::fdm::space::Vec2;
use lathe_adreno::fdm::{FdmPlan, parse_scene, plan, plan_scene_json};
use serde_json::{Value, json};

const MULTIVIEW_A650: &str = include_str!("../examples/fdm/multiview_a650.json");
const OFFSET_LRZ_A740: &str = include_str!("../examples/fdm/offset_lrz_a740.json");
const STEREO_A750: &str = include_str!("../examples/fdm/foveated_stereo_a750.json");

fn plan_json(text: &str) -> Value {
    let out = plan_scene_json(text).unwrap_or_else(|e| panic!("scene rejected: {e}"));
    serde_json::from_str(&out).expect("planner printed invalid JSON")
}

fn plan_of(text: &str) -> FdmPlan {
    plan(&parse_scene(text).unwrap()).unwrap()
}

/// Edits a scene given as JSON text and returns the new text.
fn edit(text: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    f(&mut v);
    v.to_string()
}

fn viewport(x: f64, y: f64, w: f64, h: f64) -> Value {
    json!({"x": x, "y": y, "width": w, "height": h, "min_depth": 0.0, "max_depth": 1.0})
}

fn scissor(x: i64, y: i64, w: i64, h: i64) -> Value {
    json!({"x": x, "y": y, "width": w, "height": h})
}

/// Two views, 128×32 framebuffer in two 64×32 bins, a650 (no merging, no
/// LRZ offset registers). View 1 asks for 2×2 fragments in bin 1.
///
/// Bin (1,0), view 1: b_s = b_cs = (64, 0), a = 2 → o = (64 − 32, 0 − 0) =
/// (32, 0). 64×32 pixels → 32×16 fragments. Viewport (0,0,128,32) →
/// (0/2 + 32, 0/2 + 0, 64, 16). Scissor x ∈ [10, 110) → [5, 55) + 32 =
/// [37, 87), y [0, 32) → [0, 16); the bin is [64, 96) × [0, 16), so the
/// result is x = 64, width 87 − 64 = 23, height 16.
/// Bin (1,0), view 0: identity; scissor [10,110) ∩ [64,128) → (64, 0, 46, 32).
/// Bin (0,0): both views identity; scissor [10, 64) → (10, 0, 54, 32).
/// LRZ: bin 0 has identity transforms in every view → on, offset 0; bin 1
/// has a scaled view and a650 has no offset registers → off.
#[test]
fn multiview_with_different_scales_per_view() {
    let identity_view = |x: i64, sc: Value, lrz: Value| {
        json!({
            "frag_area": [1, 1], "start": [x, 0], "extent": [64, 32], "render_extent": [64, 32],
            "offset": [0, 0], "bin_offset": [0, 0],
            "viewports": [viewport(0.0, 0.0, 128.0, 32.0)], "scissors": [sc], "lrz": lrz
        })
    };
    let off = json!({"enabled": false});
    let on = json!({"enabled": true, "offset": [0, 0]});
    let expected = json!({
        "gpu": "a650", "generation": "a6xx", "bin_merging": false, "lrz_offset_registers": false,
        "viewport_patching": "duplicated_viewport", "shifted_bins": false, "grid": [2, 1],
        "bins": [
            {
                "grid": [0, 0], "merged": [[0, 0]], "pipe": [0, 0], "common_start": [0, 0],
                "views": [
                    identity_view(0, scissor(10, 0, 54, 32), on.clone()),
                    identity_view(0, scissor(10, 0, 54, 32), on),
                ]
            },
            {
                "grid": [1, 0], "merged": [[1, 0]], "pipe": [0, 0], "common_start": [64, 0],
                "lrz_disabled": "view 1 is scaled and this GPU has no LRZ offset registers",
                "views": [
                    identity_view(64, scissor(64, 0, 46, 32), off.clone()),
                    {
                        "frag_area": [2, 2], "start": [64, 0], "extent": [64, 32], "render_extent": [32, 16],
                        "offset": [32, 0], "bin_offset": [0, 0],
                        "viewports": [viewport(32.0, 0.0, 64.0, 16.0)],
                        "scissors": [scissor(64, 0, 23, 16)],
                        "lrz": off
                    }
                ]
            }
        ]
    });
    assert_eq!(plan_json(MULTIVIEW_A650), expected);
}

/// a740, one view, FDM offset +16 on x, 64×32 bins, 128×32 framebuffer.
///
/// b_o = (−16 mod 64, 0) = (48, 0). The grid gains a column and a row:
/// 3×2 cells. Row 1 starts at y = 32 = the framebuffer height: empty, so
/// dropped. Columns: col 0 = [0, 64 − 48) = [0, 16); col 1 = [64 − 48,
/// 128 − 48) = [16, 80); col 2 = [80, 144) clipped to [80, 128).
/// Density (32-wide texels, sampled at centre − 16): col 0 centre 8 → −8 →
/// texel 0 (clamped) → 4×1; col 1 centre 48 → 32 → texel 1 → 2×1; col 2
/// centre 104 → 88 → texel 2 → 2×1. 4 divides gcd(64, 48) = 16, fine.
/// Merging: cols 1 and 2 have equal areas, one pipe, and (128 − 16)/2 = 56
/// ≤ 64 rendering pixels wide → one bin covering [16, 128).
/// Bin (0,0): o = (0 − 0/4, 0) = (0, 0); 16/4 = 4 fragments wide.
///   o' = 0 − (0 + 48)/4 = −12 → negative → LRZ off.
///   Viewport (0,0,128,32) → (0, 0, 32, 32). Scissor [0,128) → [0, 32) ∩
///   bin [0, 4) → (0, 0, 4, 32).
/// Bin (1,0): b_cs = (64, 0), b_s = (16, 0), o = (64 − 8, 0) = (56, 0).
///   Rendering space: viewport → (0/2 + 56, 0, 64, 32); scissor [0,128) →
///   [56, 120) ∩ bin [64, 120) → (64, 0, 56, 32).
///   o' = 64 − (16 + 48)/2 = 32 on x, 0 on y: aligned → LRZ on. In LRZ
///   space the offset is o − o' = (24, 0) (= b_o/2): viewport (24, 0, 64,
///   32); the bin starts at b_cs − o' = (32, 0), 56×32; scissor [0,128) →
///   [24, 88) ∩ [32, 88) → (32, 0, 56, 32).
#[test]
fn fdm_offset_with_lrz_on_a740() {
    let expected = json!({
        "gpu": "a740", "generation": "a7xx", "bin_merging": true, "lrz_offset_registers": true,
        "viewport_patching": "duplicated_viewport", "shifted_bins": true, "grid": [3, 2],
        "bins": [
            {
                "grid": [0, 0], "merged": [[0, 0]], "pipe": [0, 0], "common_start": [0, 0],
                "lrz_disabled": "view 0: LRZ offset [-12, 0] is negative",
                "views": [{
                    "frag_area": [4, 1], "start": [0, 0], "extent": [16, 32], "render_extent": [4, 32],
                    "offset": [0, 0], "bin_offset": [48, 0],
                    "viewports": [viewport(0.0, 0.0, 32.0, 32.0)],
                    "scissors": [scissor(0, 0, 4, 32)],
                    "lrz": {"enabled": false}
                }]
            },
            {
                "grid": [1, 0], "merged": [[1, 0], [2, 0]], "pipe": [0, 0], "common_start": [64, 0],
                "views": [{
                    "frag_area": [2, 1], "start": [16, 0], "extent": [112, 32], "render_extent": [56, 32],
                    "offset": [56, 0], "bin_offset": [48, 0],
                    "viewports": [viewport(56.0, 0.0, 64.0, 32.0)],
                    "scissors": [scissor(64, 0, 56, 32)],
                    "lrz": {"enabled": true, "offset": [32, 0]},
                    "lrz_space": {
                        "viewports": [viewport(24.0, 0.0, 64.0, 32.0)],
                        "scissors": [scissor(32, 0, 56, 32)]
                    }
                }]
            }
        ]
    });
    assert_eq!(plan_json(OFFSET_LRZ_A740), expected);
}

/// The same scene on a730: merging still happens (a7xx) but there are no
/// LRZ offset registers, so the scaled merged bin loses LRZ and has no
/// LRZ-space patch; rendering space uses the full offset o = (56, 0).
#[test]
fn a730_merges_but_has_no_lrz_offsets() {
    let plan = plan_of(&edit(OFFSET_LRZ_A740, |v| v["gpu"] = json!("a730")));
    assert_eq!(plan.bins.len(), 2);
    let merged = &plan.bins[1];
    assert_eq!(merged.merged.len(), 2);
    assert_eq!(
        merged.lrz,
        LrzDecision::Disabled(LrzDisabled::ScaledWithoutOffsetRegisters { view: 0 })
    );
    let view = &merged.views[0];
    assert_eq!(view.offset, Vec2::new(56, 0));
    assert!(view.lrz_patch.is_none());
    let (viewports, scissors) = (&view.viewports, &view.scissors);
    // 0/2 + 56 = 56; scissor [0,128) → [56, 120) ∩ bin [64, 120) → 64, 56 wide.
    assert_eq!(viewports[0].x, 56.0);
    assert_eq!((scissors[0].origin.x, scissors[0].extent.width), (64, 56));
}

/// The shader writes the viewport index: one scale for all views, the
/// per-axis minimum area. View 0 wants 2×4 in bin 1, view 1 wants 4×2, so
/// both get 2×2. Two viewports, both transformed for every view.
/// Bin (1,0): o = (64 − 64/2, 0) = (32, 0). Viewport 0 (0,0,128,32) →
/// (32, 0, 64, 16); viewport 1 (64,0,64,32) → (64/2 + 32, 0, 32, 16) =
/// (64, 0, 32, 16). Full scissors → [32, 96) × [0, 16) ∩ bin [64, 96) ×
/// [0, 16) → (64, 0, 32, 16).
#[test]
fn viewport_index_written_shares_the_minimum_area() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["viewport_index_written"] = json!(true);
        v["density_map"]["views"] = json!([[[[1, 1], [2, 4]]], [[[1, 1], [4, 2]]]]);
        v["viewports"] = json!([
            {"x": 0, "y": 0, "width": 128, "height": 32},
            {"x": 64, "y": 0, "width": 64, "height": 32}
        ]);
        v["scissors"] = json!([scissor(0, 0, 128, 32), scissor(0, 0, 128, 32)]);
    });
    let out = plan_json(&scene);
    assert_eq!(out["viewport_patching"], "shared_scale");
    for view in out["bins"][1]["views"].as_array().unwrap() {
        assert_eq!(view["frag_area"], json!([2, 2]));
        assert_eq!(view["offset"], json!([32, 0]));
        assert_eq!(
            view["viewports"],
            json!([
                viewport(32.0, 0.0, 64.0, 16.0),
                viewport(64.0, 0.0, 32.0, 16.0)
            ])
        );
        assert_eq!(
            view["scissors"],
            json!([scissor(64, 0, 32, 16), scissor(64, 0, 32, 16)])
        );
    }
}

/// Shared scale with an FDM offset: bins cannot move per view, so the grid
/// keeps 2×1 cells and only the sampling point moves. View 1's offset of
/// +64 makes bin 1 (centre 96) read at 32 → texel 0 → 1×1, so the shared
/// area of bin 1 is min(2×4, 1×1) = 1×1 (view 0 alone would be 2×4).
#[test]
fn shared_scale_with_offset_only_moves_sampling() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["viewport_index_written"] = json!(true);
        v["density_map"]["views"] = json!([[[[1, 1], [2, 4]]], [[[1, 1], [4, 2]]]]);
        v["fdm_offset"] = json!([[0, 0], [64, 0]]);
    });
    let plan = plan_of(&scene);
    assert!(!plan.shifted_bins);
    assert_eq!((plan.grid_cols, plan.grid_rows), (2, 1));
    for view in &plan.bins[1].views {
        assert_eq!((view.frag_area.x, view.frag_area.y), (1, 1));
        assert_eq!(view.bin_offset, Vec2::ZERO);
    }
}

/// Stereo a750 sample: view 0 offset −32 → b_o = (32, 0); view 1 offset +32
/// → b_o = (−32 mod 128, 0) = (96, 0). Bin (1,1), view 0: b_s = (128 − 32,
/// 64) = (96, 64), 128×64; centre (160, 96) − (−32, 0) = (192, 96) → texel
/// (1, 1) → 1×1, so o = (128 − 96, 64 − 64) = (32, 0). View 1: b_s = (128 −
/// 96, 64) = (32, 64); centre (96, 96) − (32, 0) = (64, 96) → texel (0, 1)
/// → 2×2 (2 divides gcd(128, 96) = 32), o = (128 − 16, 64 − 32) = (112, 32).
/// Its neighbours differ in area or pipe (2×2-bin pipes), so it is not
/// merged. LRZ: view 0 o' = (128 − 128, 64 − 64) = (0, 0); view 1 o' =
/// (128 − (32 + 96)/2, 64 − 64/2) = (64, 32): both aligned → on.
#[test]
fn stereo_offsets_shift_each_view_differently() {
    let plan = plan_of(STEREO_A750);
    assert!(plan.shifted_bins);
    assert_eq!((plan.grid_cols, plan.grid_rows), (5, 5));
    let bin = plan
        .bins
        .iter()
        .find(|b| (b.grid.col, b.grid.row) == (1, 1))
        .unwrap();
    assert_eq!(bin.merged.len(), 1);
    let (v0, v1) = (&bin.views[0], &bin.views[1]);
    assert_eq!((v0.framebuffer.origin.x, v0.framebuffer.origin.y), (96, 64));
    assert_eq!(
        (v0.frag_area.x, v0.frag_area.y, v0.offset),
        (1, 1, Vec2::new(32, 0))
    );
    assert_eq!((v1.framebuffer.origin.x, v1.framebuffer.origin.y), (32, 64));
    assert_eq!(
        (v1.frag_area.x, v1.frag_area.y, v1.offset),
        (2, 2, Vec2::new(112, 32))
    );
    assert_eq!(
        bin.lrz,
        LrzDecision::Enabled {
            offsets: Some(vec![Vec2::new(0, 0), Vec2::new(64, 32)])
        }
    );
    // Row 4 starts at y = 256 in both views (b_o.y = 0): no bin there.
    assert!(plan.bins.iter().all(|b| b.grid.row < 4));
}

/// a730, 256×64 framebuffer in 32×32 bins, every texel asking for 4×4.
/// Each bin is 8×8 fragments; 4 of them side by side are 32 wide, and two
/// rows are 16 high, so with 4×2-bin pipes each pipe becomes one bin. With
/// 2×1-bin pipes only pairs can merge. a650 never merges.
/// Group (4..7, 0..1): b_s = b_cs = (128, 0), o = (128 − 32, 0) = (96, 0).
#[test]
fn merging_respects_pipes_and_gmem_size() {
    let row = json!([
        [4, 4],
        [4, 4],
        [4, 4],
        [4, 4],
        [4, 4],
        [4, 4],
        [4, 4],
        [4, 4]
    ]);
    let scene = |gpu: &str, pw: u32, ph: u32| {
        json!({
            "gpu": gpu, "framebuffer": {"width": 256, "height": 64}, "tile": {"width": 32, "height": 32},
            "vsc_pipe": {"width": pw, "height": ph}, "views": 1,
            "density_map": {"texel": {"width": 32, "height": 32}, "views": [[row, row]]}
        })
        .to_string()
    };
    let big = plan_of(&scene("a730", 4, 2));
    assert_eq!(big.bins.len(), 2);
    assert_eq!(big.bins[1].merged.len(), 8);
    let v = &big.bins[1].views[0];
    assert_eq!(
        (
            v.framebuffer.origin.x,
            v.framebuffer.extent.width,
            v.framebuffer.extent.height
        ),
        (128, 128, 64)
    );
    assert_eq!(
        (v.rendering.extent.width, v.rendering.extent.height),
        (32, 16)
    );
    assert_eq!(v.offset, Vec2::new(96, 0));

    let pairs = plan_of(&scene("a730", 2, 1));
    assert_eq!(pairs.bins.len(), 8);
    assert!(
        pairs
            .bins
            .iter()
            .all(|b| b.merged.len() == 2 && b.merged[1].col == b.grid.col + 1)
    );

    assert_eq!(plan_of(&scene("a650", 4, 2)).bins.len(), 16);
}

/// Layered FDM: the hardware per-view viewport bit selects by view, not
/// layer, so the plan asks the shader to select the viewport by layer.
#[test]
fn layered_fdm_needs_a_shader_transform() {
    let out = plan_json(&edit(MULTIVIEW_A650, |v| v["layered"] = json!(true)));
    assert_eq!(out["viewport_patching"], "layered_shader");
    assert_eq!(out["shader_transform"]["viewport_index"], "layer");
    assert_eq!(out["shader_transform"]["layers"], 2);
    // Without layered FDM there is no shader transform.
    assert!(plan_json(MULTIVIEW_A650).get("shader_transform").is_none());
}

/// Per-view viewports: view i uses viewport i. In bin (1,0), view 0 is
/// unscaled and keeps viewport 0 as given; view 1 (2×2, o = (32, 0)) maps
/// viewport 1 (64, 0, 64, 32) to (64/2 + 32, 0, 32, 16) = (64, 0, 32, 16).
#[test]
fn per_view_viewports_follow_their_view() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["per_view_viewport"] = json!(true);
        v["viewports"] = json!([
            {"x": 0, "y": 0, "width": 128, "height": 32},
            {"x": 64, "y": 0, "width": 64, "height": 32}
        ]);
        v["scissors"] = json!([scissor(0, 0, 128, 32), scissor(0, 0, 128, 32)]);
    });
    let out = plan_json(&scene);
    assert_eq!(out["viewport_patching"], "per_view_viewport");
    let views = &out["bins"][1]["views"];
    assert_eq!(
        views[0]["viewports"],
        json!([viewport(0.0, 0.0, 128.0, 32.0)])
    );
    assert_eq!(
        views[1]["viewports"],
        json!([viewport(64.0, 0.0, 32.0, 16.0)])
    );
}

/// Per-view viewports are available, so writing the viewport index does
/// not force a shared scale: view 0 keeps 1×1 and view 1 keeps 2×2 in bin
/// 1, exactly as without `viewport_index_written`.
#[test]
fn per_view_viewports_keep_per_view_scales_when_index_is_written() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["per_view_viewport"] = json!(true);
        v["viewport_index_written"] = json!(true);
        v["viewports"] = json!([
            {"x": 0, "y": 0, "width": 128, "height": 32},
            {"x": 0, "y": 0, "width": 128, "height": 32}
        ]);
        v["scissors"] = json!([scissor(0, 0, 128, 32), scissor(0, 0, 128, 32)]);
        v["fdm_offset"] = json!([[0, 0], [-8, 0]]);
    });
    let out = plan_json(&scene);
    assert_eq!(out["viewport_patching"], "per_view_viewport");
    // Scales are per view, so the grid shifts per view (b_o = 8 for view 1).
    assert_eq!(out["shifted_bins"], true);
    let bin = &out["bins"][1];
    assert_eq!(bin["views"][0]["frag_area"], json!([1, 1]));
    assert_eq!(bin["views"][1]["frag_area"], json!([2, 2]));
    // View 1: b_s = 64 − 8 = 56, o = (64 − 28, 0 − 0) = (36, 0).
    assert_eq!(bin["views"][1]["start"], json!([56, 0]));
    assert_eq!(bin["views"][1]["offset"], json!([36, 0]));
}

/// One view whose shader writes the viewport index: the scale is "shared"
/// (the driver cannot shift bins per view), so even a single view keeps the
/// plain grid and the offset only moves the sampling point. Offset +64
/// reads bin 1 (centre 96) at 32, i.e. texel 0 of view 1's map → 1×1.
#[test]
fn shared_scale_never_shifts_bins_even_with_one_view() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["views"] = json!(1);
        v["viewport_index_written"] = json!(true);
        v["density_map"]["views"] = json!([[[[1, 1], [2, 2]]]]);
        v["fdm_offset"] = json!([[64, 0]]);
    });
    let plan = plan_of(&scene);
    assert!(!plan.shifted_bins);
    assert_eq!((plan.grid_cols, plan.grid_rows), (2, 1));
    let view = &plan.bins[1].views[0];
    assert_eq!(
        (view.framebuffer.origin.x, view.bin_offset),
        (64, Vec2::ZERO)
    );
    assert_eq!((view.frag_area.x, view.frag_area.y), (1, 1));
}

/// A density map smaller than the framebuffer is read with clamping: one
/// 64×32 texel asking for 2×2 covers a 128×32 framebuffer, so bin 1 (centre
/// x = 96 → texel 1 → clamped to texel 0) is 2×2 too.
#[test]
fn small_density_map_clamps_to_its_edge() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["density_map"]["views"] = json!([[[[2, 2]]], [[[1, 1]]]]);
    });
    let out = plan_json(&scene);
    for bin in out["bins"].as_array().unwrap() {
        assert_eq!(bin["views"][0]["frag_area"], json!([2, 2]));
        assert_eq!(bin["views"][1]["frag_area"], json!([1, 1]));
    }
}

/// The rounding rule on its edge cases, through whole scenes (64×32 bins,
/// so nothing is cut by the fit step).
/// 1.5 × 1.5: equal fractions, y is the candidate, 1 × 2 = 2 ≤ 2.25 → 1×2.
/// 2.5 × 1.2: x has the larger fraction, 3 × 1 = 3 ≤ 3.0 → 3×1, then 3 does
///   not divide 64 → 2×1.
/// 3.4 × 1.5: y has the larger fraction, 3 × 2 = 6 > 5.1 → stays 3×1 (x is
///   not tried), and 3 → 2 to divide 64.
/// 1.9 × 3.9: equal fractions, 1 × 4 = 4 ≤ 7.41 → 1×4.
#[test]
fn fragment_area_rounding_edge_cases() {
    for (requested, want) in [
        ([1.5, 1.5], [1, 2]),
        ([2.5, 1.2], [2, 1]),
        ([3.4, 1.5], [2, 1]),
        ([1.9, 3.9], [1, 4]),
        ([4.0, 4.0], [4, 4]),
    ] {
        let scene = edit(MULTIVIEW_A650, |v| {
            v["views"] = json!(1);
            v["density_map"]["views"] = json!([[[requested, requested]]]);
        });
        let out = plan_json(&scene);
        assert_eq!(
            out["bins"][0]["views"][0]["frag_area"],
            json!(want),
            "{requested:?}"
        );
    }
}

/// a650 (no LRZ offset registers), one unscaled view, FDM offset +16:
/// b_o = 48. Column 0: b_s = b_cs = 0, o' = 0 − (0 + 48) = −48 ≠ 0 → LRZ
/// off (the LRZ buffer was written 48 pixels over). Column 1: b_s = 16,
/// o = 64 − 16 = 48 = b_o, o' = 64 − (16 + 48) = 0 → on. Column 2: b_s =
/// 80, o' = 128 − 128 = 0 → on.
#[test]
fn older_gpus_keep_lrz_inside_a_shifted_grid() {
    let scene = edit(OFFSET_LRZ_A740, |v| {
        v["gpu"] = json!("a650");
        v["density_map"]["views"] = json!([[[[1, 1], [1, 1], [1, 1], [1, 1]]]]);
    });
    let out = plan_json(&scene);
    let bins = out["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 3);
    assert_eq!(bins[0]["views"][0]["lrz"], json!({"enabled": false}));
    assert_eq!(
        bins[0]["lrz_disabled"],
        "view 0: rendering space is -48, 0 pixels off the binning pass and this GPU has no LRZ offset registers"
    );
    for bin in &bins[1..] {
        assert_eq!(bin["views"][0]["offset"], json!([48, 0]));
        assert_eq!(
            bin["views"][0]["lrz"],
            json!({"enabled": true, "offset": [0, 0]})
        );
    }
}

/// A scissor that misses a bin becomes 0×0 inside the bin. Scissor
/// [0, 10) × [0, 32): bin 1 view 0 (identity) clips [0, 10) against
/// [64, 128) → empty at (64, 0); view 1 (2×2, o = (32, 0)) maps it to
/// [32, 37) × [0, 16), which misses [64, 96) → empty at (64, 0).
#[test]
fn scissor_missing_the_bin_is_empty_inside_it() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["scissors"] = json!([scissor(0, 0, 10, 32)]);
    });
    let out = plan_json(&scene);
    for view in out["bins"][1]["views"].as_array().unwrap() {
        assert_eq!(view["scissors"], json!([scissor(64, 0, 0, 0)]));
    }
    assert_eq!(
        out["bins"][0]["views"][1]["scissors"],
        json!([scissor(0, 0, 10, 32)])
    );
}

/// Pipe sizes are the driver's choice; a grid needing more than the
/// hardware's 32 pipes still plans (64 bins in 1×1 pipes: bin 63 is in
/// pipe (63, 0)).
#[test]
fn small_pipes_still_plan() {
    let scene = edit(MULTIVIEW_A650, |v| {
        v["framebuffer"] = json!({"width": 2048, "height": 32});
        v["tile"] = json!({"width": 32, "height": 32});
        v["vsc_pipe"] = json!({"width": 1, "height": 1});
        v["density_map"]["texel"]["width"] = json!(2048);
    });
    let out = plan_json(&scene);
    let bins = out["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 64);
    assert_eq!(bins[63]["pipe"], json!([63, 0]));
}

/// Without `viewports`, per-view viewports default to the whole
/// framebuffer once per view.
#[test]
fn default_viewports_cover_every_view() {
    let scene = edit(MULTIVIEW_A650, |v| {
        let obj = v.as_object_mut().unwrap();
        obj.remove("viewports");
        obj.remove("scissors");
        obj.insert("per_view_viewport".into(), json!(true));
    });
    let out = plan_json(&scene);
    // Bin 1, view 1: 2×2 with o = (32, 0): (0/2 + 32, 0, 64, 16).
    assert_eq!(
        out["bins"][1]["views"][1]["viewports"],
        json!([viewport(32.0, 0.0, 64.0, 16.0)])
    );
    assert_eq!(
        out["bins"][1]["views"][1]["scissors"],
        json!([scissor(64, 0, 32, 16)])
    );
}

fn error_of(text: &str) -> String {
    match plan_scene_json(text) {
        Ok(_) => panic!("scene accepted but should be rejected:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_scenes_name_the_field() {
    let cases: Vec<(String, &str)> = vec![
        (
            edit(MULTIVIEW_A650, |v| v["tile"]["width"] = json!(48)),
            "tile.width: 48 is not a multiple of 32",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["tile"]["height"] = json!(40)),
            "tile.height: 40 is not a multiple of 16",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["tile"]["width"] = json!(0)),
            "tile.width: must not be 0",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["framebuffer"]["height"] = json!(0)),
            "framebuffer.height: must be at least 1",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["views"] = json!(3)),
            "density_map.views: has 2 entries but views is 3",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["views"] = json!(0)),
            "views: must be at least 1",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["views"] = json!(17)),
            "views: 17 views requested; Adreno supports at most 16",
        ),
        (
            edit(MULTIVIEW_A650, |v| {
                v["density_map"]["views"][1][0][1] = json!([0.5, 2.0])
            }),
            "density_map.views[1][0][1][0]: fragment area 0.5 must be a finite number >= 1",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["density_map"]["views"][0] = json!([])),
            "density_map.views[0]: has no rows",
        ),
        (
            edit(MULTIVIEW_A650, |v| {
                v["density_map"]["texel"]["width"] = json!(0)
            }),
            "density_map.texel.width: must not be 0",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["framebuffer"]["width"] = json!(0)),
            "framebuffer.width: must be at least 1 pixel",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["framebuffer"]["width"] = json!(16385)),
            "framebuffer.width: 16385 is larger than the limit 16384",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["tile"]["height"] = json!(0)),
            "tile.height: must not be 0",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["gpu"] = json!("a999")),
            "gpu: unknown model `a999`; valid models are a610, a612",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["per_view_viewport"] = json!(true)),
            "viewports: per_view_viewport needs one viewport per view: 2 views but 1 viewports",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["scissors"] = json!([])),
            "scissors: has 0 entries but there are 1 viewports",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["fdm_offset"] = json!([[0, 0]])),
            "fdm_offset: has 1 entries but there are 2 views",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["vsc_pipe"]["width"] = json!(0)),
            "vsc_pipe.width: must be at least 1 bin",
        ),
        (
            edit(MULTIVIEW_A650, |v| v["vsc_pipe"]["height"] = json!(0)),
            "vsc_pipe.height: must be at least 1 bin",
        ),
    ];
    for (scene, want) in cases {
        let got = error_of(&scene);
        assert!(got.starts_with(want), "want `{want}…`, got `{got}`");
    }
}

#[test]
fn json_errors_carry_path_and_position() {
    let unknown = error_of(&MULTIVIEW_A650.replace("\"tile\"", "\"tiles\""));
    assert!(
        unknown.contains("unknown field `tiles`") && unknown.contains("line 4"),
        "{unknown}"
    );

    let negative = error_of(&MULTIVIEW_A650.replace(
        "\"width\": 64, \"height\": 32 }",
        "\"width\": -1, \"height\": 32 }",
    ));
    assert!(
        negative.starts_with("scene JSON: tile.width:"),
        "{negative}"
    );
    assert!(negative.contains("line 4"), "{negative}");

    let missing = error_of(r#"{"gpu": "a650"}"#);
    assert!(missing.contains("missing field `framebuffer`"), "{missing}");

    let trailing = error_of(&format!("{MULTIVIEW_A650} x"));
    assert!(trailing.contains("trailing characters"), "{trailing}");
}
