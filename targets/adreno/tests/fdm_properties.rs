//! The design document's formulas, checked as properties over random scenes.
//!
//! Several properties compare the planner with small independent oracles
//! written here from the document and the issue (grid geometry, density
//! sampling and rounding, scissor rounding, LRZ), so a planner that is
//! self-consistent but follows the wrong rule still fails.

use lathe_adreno::fdm::density::{DensityLayer, DensityMap, TexelSize};
use lathe_adreno::fdm::gpu::{GpuModel, LRZ_OFFSET_ALIGN};
use lathe_adreno::fdm::grid::CellIndex;
use lathe_adreno::fdm::lrz::LrzDecision;
use lathe_adreno::fdm::scene::{PipeSize, SceneFlags, TileSize};
use lathe_adreno::fdm::space::{Extent, Framebuffer, Point, Rect, Vec2, Viewport, ceil_div};
use lathe_adreno::fdm::transform::rendering_to_gmem;
use lathe_adreno::fdm::{
    FdmPlan, Scene, ViewBin, ViewportPatching, parse_scene, plan, plan_scene_json,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// Requested areas: whole numbers, ties of fractional parts (1.5 × 2.5),
/// fractions that round up only sometimes (1.9, 2.7), and values that do
/// not divide any tile (3, 5, 6).
const AREAS: [f64; 14] = [
    1.0, 1.0, 1.5, 1.9, 2.0, 2.0, 2.5, 2.7, 3.0, 3.4, 4.0, 5.0, 6.0, 8.0,
];

fn area_strategy() -> impl Strategy<Value = [f64; 2]> {
    (0..AREAS.len(), 0..AREAS.len()).prop_map(|(x, y)| [AREAS[x], AREAS[y]])
}

fn rect_strategy() -> impl Strategy<Value = Rect<Framebuffer>> {
    (0i64..300, 0i64..200, 0i64..300, 0i64..200)
        .prop_map(|(x, y, w, h)| Rect::new(Point::new(x, y), Extent::new(w, h)))
}

fn viewport_strategy() -> impl Strategy<Value = Viewport<Framebuffer>> {
    (
        -50.0f64..300.0,
        -50.0f64..200.0,
        1.0f64..400.0,
        prop_oneof![1.0f64..300.0, -300.0f64..-1.0],
    )
        // Quantised to 1/64 so the values have short decimal forms, which
        // serde_json parses exactly (the JSON round trip is checked).
        .prop_map(|(x, y, w, h)| {
            let q = |v: f64| (v * 64.0).round() / 64.0;
            Viewport::new(q(x), q(y), q(w), q(h), 0.0, 1.0)
        })
}

prop_compose! {
    fn scene_strategy()(
        gpu in 0..GpuModel::ALL.len(),
        fb in (1i64..=400, 1i64..=300),
        tile in (1u32..=4, 1u32..=4),
        texel in (prop_oneof![Just(16u32), Just(32), Just(64)], prop_oneof![Just(16u32), Just(32), Just(64)]),
        views in 1usize..=3,
        pipe in (1u32..=6, 1u32..=6),
        flags in any::<[bool; 4]>(),
        has_offset in any::<bool>(),
        small_map in any::<bool>(),
        seed_areas in prop::collection::vec(area_strategy(), 1..=16),
        offsets in prop::collection::vec((-100i64..100, -100i64..100), 3),
        extra_viewports in 0usize..=2,
        viewports in prop::collection::vec(viewport_strategy(), 5),
        scissors in prop::collection::vec(rect_strategy(), 5),
    ) -> Scene {
        let tile = TileSize { width: 32 * tile.0, height: 16 * tile.1 };
        let texel = TexelSize { width: texel.0, height: texel.1 };
        let mut cols = (fb.0 as u32).div_ceil(texel.width) as usize;
        let mut rows = (fb.1 as u32).div_ceil(texel.height) as usize;
        if small_map {
            // A map smaller than the framebuffer: sampling must clamp.
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        }
        // Fill each view's map by cycling through the random areas, offset
        // per view so views differ.
        let layers = (0..views)
            .map(|v| {
                let grid: Vec<Vec<[f64; 2]>> = (0..rows)
                    .map(|r| (0..cols).map(|c| seed_areas[(r * 7 + c * 3 + v * 5) % seed_areas.len()]).collect())
                    .collect();
                DensityLayer::from_rows(v, &grid).unwrap()
            })
            .collect();
        let count = (views + extra_viewports).min(viewports.len());
        Scene {
            gpu: GpuModel::ALL[gpu],
            framebuffer: Extent::new(fb.0, fb.1),
            tile,
            vsc_pipe: PipeSize { width: pipe.0, height: pipe.1 },
            views: views as u32,
            density_map: DensityMap { texel, layers },
            fdm_offset: has_offset.then(|| offsets[..views].iter().map(|&(x, y)| Vec2::new(x, y)).collect()),
            flags: SceneFlags {
                per_view_viewport: flags[0],
                viewport_index_written: flags[1],
                layered: flags[2],
                lrz: flags[3],
            },
            viewports: viewports[..count].to_vec(),
            scissors: scissors[..count].to_vec(),
        }
    }
}

fn run(scene: &Scene) -> FdmPlan {
    match plan(scene) {
        Ok(p) => p,
        Err(err) => panic!("valid scene rejected: {err}\n{scene:?}"),
    }
}

/// One view of one grid cell: its framebuffer rectangle and fragment area.
type CellView = (Rect<Framebuffer>, (u32, u32));

/// The framebuffer rectangle and fragment area of every grid cell per view,
/// taken from a plan of the same scene on a GPU that never merges.
fn unmerged_cells(scene: &Scene) -> HashMap<CellIndex, Vec<CellView>> {
    run(&unmerged(scene))
        .bins
        .into_iter()
        .map(|b| {
            assert_eq!(b.merged, vec![b.grid], "a650 must not merge");
            (
                b.grid,
                b.views
                    .iter()
                    .map(|v| (v.framebuffer, (v.frag_area.x, v.frag_area.y)))
                    .collect(),
            )
        })
        .collect()
}

fn unmerged(scene: &Scene) -> Scene {
    let mut single = scene.clone();
    single.gpu = GpuModel::A650;
    single
}

// ---- Oracles, written from the issue text independently of the planner ----

/// Scale shared by all views: the shader writes the viewport index and the
/// viewports are not per view.
fn shares_scale(scene: &Scene) -> bool {
    scene.flags.viewport_index_written && !scene.flags.per_view_viewport
}

fn user_offset(scene: &Scene, view: usize) -> Vec2 {
    scene
        .fdm_offset
        .as_ref()
        .map_or(Vec2::ZERO, |offsets| offsets[view])
}

/// `b_o`: the user offset negated, wrapped into one tile; zero when the
/// grid does not move (no offset, or a shared scale).
fn expected_bin_offset(scene: &Scene, view: usize) -> Vec2 {
    if scene.fdm_offset.is_none() || shares_scale(scene) {
        return Vec2::ZERO;
    }
    let o = user_offset(scene, view);
    let (w, h) = (i64::from(scene.tile.width), i64::from(scene.tile.height));
    Vec2::new((-o.x).rem_euclid(w), (-o.y).rem_euclid(h))
}

/// The framebuffer rectangle of cell `(col, row)` in a view shifted by `b_o`.
fn expected_cell_rect(scene: &Scene, cell: CellIndex, b_o: Vec2) -> Rect<Framebuffer> {
    let span = |i: u32, tile: u32, shift: i64, limit: i64| {
        let (i, tile) = (i64::from(i), i64::from(tile));
        let start = if i == 0 { 0 } else { i * tile - shift };
        let end = ((i + 1) * tile - shift).min(limit).max(start);
        (start, end)
    };
    let (x0, x1) = span(cell.col, scene.tile.width, b_o.x, scene.framebuffer.width);
    let (y0, y1) = span(cell.row, scene.tile.height, b_o.y, scene.framebuffer.height);
    Rect::from_corners(x0, y0, x1, y1)
}

/// Round down; the axis with the larger fraction (y on a tie) rounds up if
/// the product stays within the requested area; then each axis decreases
/// until it divides the tile and the bin shift.
fn expected_area(requested: [f64; 2], tile: TileSize, b_o: Vec2) -> (u32, u32) {
    let (rx, ry) = (requested[0], requested[1]);
    let (mut x, mut y) = (rx.floor(), ry.floor());
    if rx - x > ry - y {
        if (x + 1.0) * y <= rx * ry {
            x += 1.0;
        }
    } else if x * (y + 1.0) <= rx * ry {
        y += 1.0;
    }
    let (mut x, mut y) = (x as i64, y as i64);
    while i64::from(tile.width) % x != 0 || b_o.x % x != 0 {
        x -= 1;
    }
    while i64::from(tile.height) % y != 0 || b_o.y % y != 0 {
        y -= 1;
    }
    (x as u32, y as u32)
}

/// The map value at the centre of `rect` moved by `-offset`, clamped.
fn sample(scene: &Scene, view: usize, rect: Rect<Framebuffer>, offset: Vec2) -> [f64; 2] {
    let layer = &scene.density_map.layers[view];
    let cx = (rect.origin.x - offset.x) as f64 + rect.extent.width as f64 / 2.0;
    let cy = (rect.origin.y - offset.y) as f64 + rect.extent.height as f64 / 2.0;
    let col = (cx / f64::from(scene.density_map.texel.width)).floor() as i64;
    let row = (cy / f64::from(scene.density_map.texel.height)).floor() as i64;
    let col = col.clamp(0, i64::from(layer.cols()) - 1) as u32;
    let row = row.clamp(0, i64::from(layer.rows()) - 1) as u32;
    layer.texel(col, row).unwrap()
}

/// `o' = b_cs − (b_s + b_o)/a`, asserting it is exact.
fn lrz_offset_of(bin_common: Point<lathe_adreno::fdm::space::Rendering>, v: &ViewBin) -> Vec2 {
    let (ax, ay) = (i64::from(v.frag_area.x), i64::from(v.frag_area.y));
    let sx = v.framebuffer.origin.x + v.bin_offset.x;
    let sy = v.framebuffer.origin.y + v.bin_offset.y;
    assert_eq!((sx % ax, sy % ay), (0, 0), "o' not an integer");
    Vec2::new(bin_common.x - sx / ax, bin_common.y - sy / ay)
}

/// The user viewport indices a view's patched viewports come from.
fn indices(scene: &Scene, view: usize) -> Vec<usize> {
    if shares_scale(scene) {
        (0..scene.viewports.len()).collect()
    } else if scene.flags.per_view_viewport {
        vec![view]
    } else {
        vec![0]
    }
}

/// Writes a scene in the CLI's JSON format.
fn scene_to_json(scene: &Scene) -> String {
    let layers: Vec<Value> = scene
        .density_map
        .layers
        .iter()
        .map(|l| {
            (0..l.rows())
                .map(|r| {
                    (0..l.cols())
                        .map(|c| json!(l.texel(c, r).unwrap()))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
                .into()
        })
        .collect();
    let mut v = json!({
        "gpu": scene.gpu.name(),
        "framebuffer": {"width": scene.framebuffer.width, "height": scene.framebuffer.height},
        "tile": {"width": scene.tile.width, "height": scene.tile.height},
        "vsc_pipe": {"width": scene.vsc_pipe.width, "height": scene.vsc_pipe.height},
        "views": scene.views,
        "density_map": {
            "texel": {"width": scene.density_map.texel.width, "height": scene.density_map.texel.height},
            "views": layers,
        },
        "per_view_viewport": scene.flags.per_view_viewport,
        "viewport_index_written": scene.flags.viewport_index_written,
        "layered": scene.flags.layered,
        "lrz": scene.flags.lrz,
        "viewports": scene.viewports.iter().map(|p| json!({
            "x": p.x, "y": p.y, "width": p.width, "height": p.height,
            "min_depth": p.min_depth, "max_depth": p.max_depth,
        })).collect::<Vec<_>>(),
        "scissors": scene.scissors.iter().map(|s| json!({
            "x": s.origin.x, "y": s.origin.y, "width": s.extent.width, "height": s.extent.height,
        })).collect::<Vec<_>>(),
    });
    if let Some(offsets) = &scene.fdm_offset {
        v["fdm_offset"] = offsets.iter().map(|o| json!([o.x, o.y])).collect();
    }
    v.to_string()
}

fn pair(v: &Value) -> (i64, i64) {
    (v[0].as_i64().unwrap(), v[1].as_i64().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Per view, the bins cover the framebuffer exactly once: all inside,
    /// pairwise disjoint, areas adding up to the framebuffer's. This holds
    /// with and without FDM offset shifting.
    #[test]
    fn bins_tile_the_framebuffer(scene in scene_strategy()) {
        let plan = run(&scene);
        let fb: Rect<Framebuffer> = Rect::new(Point::new(0, 0), scene.framebuffer);
        for view in 0..scene.views as usize {
            let rects: Vec<Rect<Framebuffer>> = plan
                .bins
                .iter()
                .map(|b| b.views[view].framebuffer)
                .filter(|r| !r.is_empty())
                .collect();
            let mut total = 0;
            for (i, a) in rects.iter().enumerate() {
                prop_assert!(fb.contains(*a), "{a:?} outside {fb:?}");
                total += a.extent.width * a.extent.height;
                for b in &rects[i + 1..] {
                    prop_assert!(a.intersect(*b).is_empty(), "{a:?} overlaps {b:?}");
                }
            }
            prop_assert_eq!(total, scene.framebuffer.width * scene.framebuffer.height);
        }
        // Without per-view shifting, bins are the plain grid.
        if !plan.shifted_bins {
            for bin in &plan.bins {
                for v in &bin.views {
                    prop_assert_eq!(v.framebuffer.origin.to_vec(), bin.common_start.to_vec());
                    prop_assert_eq!(v.bin_offset, Vec2::ZERO);
                }
            }
        }
    }

    /// Grid geometry and fragment areas against the oracles: b_o is the
    /// negated, wrapped user offset (zero with a shared scale); cells start
    /// at b_cs − b_o except the first row/column, which only shrink; each
    /// view's area is the map at the cell centre minus the offset, rounded
    /// and fitted; a shared scale is the per-axis minimum over the views.
    #[test]
    fn grid_and_areas_follow_the_rules(scene in scene_strategy()) {
        let plan = run(&unmerged(&scene));
        prop_assert_eq!(plan.shifted_bins, scene.fdm_offset.is_some() && !shares_scale(&scene));
        let extra = u32::from(plan.shifted_bins);
        prop_assert_eq!(plan.grid_cols, (scene.framebuffer.width as u32).div_ceil(scene.tile.width) + extra);
        prop_assert_eq!(plan.grid_rows, (scene.framebuffer.height as u32).div_ceil(scene.tile.height) + extra);
        for bin in &plan.bins {
            prop_assert_eq!(
                bin.common_start.to_vec(),
                Vec2::new(i64::from(bin.grid.col * scene.tile.width), i64::from(bin.grid.row * scene.tile.height))
            );
            let mut wanted = Vec::new();
            for (view, v) in bin.views.iter().enumerate() {
                let b_o = expected_bin_offset(&scene, view);
                prop_assert_eq!(v.bin_offset, b_o);
                let rect = expected_cell_rect(&scene, bin.grid, b_o);
                prop_assert_eq!(v.framebuffer, rect);
                let requested = sample(&scene, view, rect, user_offset(&scene, view));
                wanted.push(expected_area(requested, scene.tile, b_o));
            }
            if shares_scale(&scene) {
                let min = wanted.iter().fold((u32::MAX, u32::MAX), |m, a| (m.0.min(a.0), m.1.min(a.1)));
                wanted.fill(min);
            }
            for (v, want) in bin.views.iter().zip(&wanted) {
                prop_assert_eq!((v.frag_area.x, v.frag_area.y), *want, "bin {:?}", bin.grid);
            }
        }
    }

    /// o = b_cs − b_s/a exactly, and each patched viewport maps b_s onto
    /// b_cs (in LRZ space: onto b_cs − o', which the hardware adds back).
    #[test]
    fn viewport_maps_bin_start_to_common_start(scene in scene_strategy()) {
        let plan = run(&scene);
        for bin in &plan.bins {
            for (view, v) in bin.views.iter().enumerate() {
                let (ax, ay) = (i64::from(v.frag_area.x), i64::from(v.frag_area.y));
                let b_s = v.framebuffer.origin;
                prop_assert_eq!(b_s.x % ax, 0);
                prop_assert_eq!(b_s.y % ay, 0);
                prop_assert_eq!(v.offset, Vec2::new(bin.common_start.x - b_s.x / ax, bin.common_start.y - b_s.y / ay));
                prop_assert_eq!(v.rendering.origin, bin.common_start);
                let user = indices(&scene, view);
                let mut spaces = vec![(viewport_boxes(&v.viewports), Vec2::ZERO)];
                if let Some(patch) = &v.lrz_patch {
                    spaces.push((viewport_boxes(&patch.viewports), patch.offset));
                }
                for (patched, after) in spaces {
                    prop_assert_eq!(user.len(), patched.len());
                    for (&i, &(px, py, pw, ph)) in user.iter().zip(&patched) {
                        let u = scene.viewports[i];
                        // The affine map the patched viewport implies.
                        let map_x = |x: f64| (x - u.x) * (pw / u.width) + px;
                        let map_y = |y: f64| (y - u.y) * (ph / u.height) + py;
                        let got = (map_x(b_s.x as f64) + after.x as f64, map_y(b_s.y as f64) + after.y as f64);
                        let want = (bin.common_start.x as f64, bin.common_start.y as f64);
                        prop_assert!((got.0 - want.0).abs() < 1e-6 && (got.1 - want.1).abs() < 1e-6,
                            "viewport {i} maps b_s {b_s:?} to {got:?}, want {want:?}");
                        prop_assert!((pw * ax as f64 - u.width).abs() < 1e-9);
                        prop_assert!((ph * ay as f64 - u.height).abs() < 1e-9);
                    }
                }
            }
        }
    }

    /// Patched scissors are exactly the user scissor rounded outwards
    /// (start down, end up, per axis by its own area) and clipped to the
    /// scaled bin; every one, empty or not, lies inside the scaled bin; the
    /// LRZ-space copy is the same rectangle moved by −o'.
    #[test]
    fn scissors_stay_inside_the_scaled_bin(scene in scene_strategy()) {
        let plan = run(&scene);
        for bin in &plan.bins {
            for (view, v) in bin.views.iter().enumerate() {
                let (ax, ay) = (i64::from(v.frag_area.x), i64::from(v.frag_area.y));
                let r = v.rendering;
                prop_assert_eq!(r.extent.width, ceil_div(v.framebuffer.extent.width, ax));
                prop_assert_eq!(r.extent.height, ceil_div(v.framebuffer.extent.height, ay));
                let user = indices(&scene, view);
                prop_assert_eq!(user.len(), v.scissors.len());
                for (&i, s) in user.iter().zip(&v.scissors) {
                    prop_assert!(s.origin.x >= r.origin.x && s.origin.y >= r.origin.y
                        && s.end().x <= r.end().x && s.end().y <= r.end().y,
                        "scissor {s:?} outside bin {r:?}");
                    let u = scene.scissors[i];
                    let x0 = (u.origin.x.div_euclid(ax) + v.offset.x).max(r.origin.x);
                    let y0 = (u.origin.y.div_euclid(ay) + v.offset.y).max(r.origin.y);
                    let x1 = (ceil_div(u.end().x, ax) + v.offset.x).min(r.end().x);
                    let y1 = (ceil_div(u.end().y, ay) + v.offset.y).min(r.end().y);
                    if u.is_empty() || x1 <= x0 || y1 <= y0 {
                        prop_assert!(s.extent.width == 0 && s.extent.height == 0, "{s:?} should be empty");
                    } else {
                        prop_assert_eq!((s.origin.x, s.origin.y, s.end().x, s.end().y), (x0, y0, x1, y1));
                    }
                }
                if let Some(patch) = &v.lrz_patch {
                    prop_assert_eq!(patch.scissors.len(), v.scissors.len());
                    for (l, s) in patch.scissors.iter().zip(&v.scissors) {
                        let back = (l.origin.x + patch.offset.x, l.origin.y + patch.offset.y, l.extent.width, l.extent.height);
                        prop_assert_eq!(back, (s.origin.x, s.origin.y, s.extent.width, s.extent.height));
                    }
                }
            }
        }
    }

    /// Merged bins: rectangles of cells covering the grid once, one pipe,
    /// the same fragment area per view in every cell, and no larger than an
    /// unscaled bin in rendering space. Only a7xx merges.
    #[test]
    fn merged_bins_obey_the_rules(scene in scene_strategy()) {
        let plan = run(&scene);
        let cells = unmerged_cells(&scene);
        let mut seen = HashSet::new();
        for bin in &plan.bins {
            if !scene.gpu.features().bin_merging {
                prop_assert_eq!(&bin.merged, &vec![bin.grid]);
            }
            prop_assert_eq!(bin.merged[0], bin.grid);
            let max_col = bin.merged.iter().map(|c| c.col).max().unwrap();
            let max_row = bin.merged.iter().map(|c| c.row).max().unwrap();
            let width = max_col - bin.grid.col + 1;
            let height = max_row - bin.grid.row + 1;
            prop_assert_eq!(bin.merged.len() as u32, width * height, "not a rectangle: {:?}", bin.merged);
            for cell in &bin.merged {
                prop_assert!(seen.insert(*cell), "cell {cell:?} in two bins");
                prop_assert_eq!(cell.col / scene.vsc_pipe.width, bin.pipe.x);
                prop_assert_eq!(cell.row / scene.vsc_pipe.height, bin.pipe.y);
                let Some(per_view) = cells.get(cell) else {
                    return Err(TestCaseError::fail(format!("merged cell {cell:?} does not exist")));
                };
                for (v, (rect, area)) in per_view.iter().enumerate() {
                    prop_assert_eq!(*area, (bin.views[v].frag_area.x, bin.views[v].frag_area.y));
                    prop_assert!(rect.is_empty() || bin.views[v].framebuffer.contains(*rect));
                }
            }
            for v in &bin.views {
                // The bin's far corner in GMEM space stays within one tile.
                let end = rendering_to_gmem(v.rendering.end(), bin.common_start);
                prop_assert!(end.x <= i64::from(scene.tile.width));
                prop_assert!(end.y <= i64::from(scene.tile.height));
            }
        }
        prop_assert_eq!(seen.len(), cells.len(), "merging lost or invented cells");
    }

    /// LRZ is on exactly when it may be: requested, and on a740-class GPUs
    /// every view's o' = b_cs − (b_s + b_o)/a non-negative and 8-aligned;
    /// on earlier GPUs every view unscaled with o' = 0 (rendering space is
    /// the binning space the LRZ buffer was written in).
    #[test]
    fn lrz_is_on_exactly_when_representable(scene in scene_strategy()) {
        let plan = run(&scene);
        let registers = scene.gpu.features().lrz_offset_registers;
        for bin in &plan.bins {
            let offsets: Vec<Vec2> = bin.views.iter().map(|v| lrz_offset_of(bin.common_start, v)).collect();
            let representable = if registers {
                offsets.iter().all(|o| o.x >= 0 && o.y >= 0 && o.x % LRZ_OFFSET_ALIGN == 0 && o.y % LRZ_OFFSET_ALIGN == 0)
            } else {
                bin.views.iter().all(|v| !v.frag_area.is_scaled()) && offsets.iter().all(|&o| o == Vec2::ZERO)
            };
            let enabled = scene.flags.lrz && representable;
            match &bin.lrz {
                LrzDecision::Disabled(why) => {
                    prop_assert!(!enabled, "LRZ disabled ({why}) in bin {:?} with o' {offsets:?}", bin.grid);
                    prop_assert!(bin.views.iter().all(|v| v.lrz_patch.is_none()));
                }
                LrzDecision::Enabled { offsets: got } => {
                    prop_assert!(enabled, "LRZ enabled in bin {:?} with o' {offsets:?}", bin.grid);
                    if registers {
                        prop_assert_eq!(got.as_ref(), Some(&offsets));
                        for (v, o) in bin.views.iter().zip(&offsets) {
                            prop_assert_eq!(v.lrz_patch.as_ref().map(|p| p.offset), Some(*o));
                        }
                    } else {
                        prop_assert_eq!(got, &None);
                        prop_assert!(bin.views.iter().all(|v| v.lrz_patch.is_none()));
                    }
                }
            }
        }
    }

    /// The CLI path: the scene survives a trip through its JSON form, and
    /// the printed plan carries the keys with the plan's values.
    #[test]
    fn json_output_matches_the_plan(scene in scene_strategy()) {
        let text = scene_to_json(&scene);
        prop_assert_eq!(&parse_scene(&text).unwrap(), &scene);
        let plan = run(&scene);
        let out: Value = serde_json::from_str(&plan_scene_json(&text).unwrap()).unwrap();
        let bins = out["bins"].as_array().unwrap();
        prop_assert_eq!(bins.len(), plan.bins.len());
        for (b, bin) in bins.iter().zip(&plan.bins) {
            prop_assert_eq!(pair(&b["grid"]), (i64::from(bin.grid.col), i64::from(bin.grid.row)));
            let merged: Vec<(i64, i64)> = b["merged"].as_array().unwrap().iter().map(pair).collect();
            let want: Vec<(i64, i64)> = bin.merged.iter().map(|c| (i64::from(c.col), i64::from(c.row))).collect();
            prop_assert_eq!(merged, want);
            prop_assert_eq!(pair(&b["pipe"]), (i64::from(bin.pipe.x), i64::from(bin.pipe.y)));
            prop_assert_eq!(pair(&b["common_start"]), (bin.common_start.x, bin.common_start.y));
            let views = b["views"].as_array().unwrap();
            prop_assert_eq!(views.len(), scene.views as usize);
            for (j, v) in views.iter().zip(&bin.views) {
                prop_assert_eq!(pair(&j["frag_area"]), (i64::from(v.frag_area.x), i64::from(v.frag_area.y)));
                prop_assert_eq!(pair(&j["start"]), (v.framebuffer.origin.x, v.framebuffer.origin.y));
                prop_assert_eq!(pair(&j["extent"]), (v.framebuffer.extent.width, v.framebuffer.extent.height));
                prop_assert_eq!(pair(&j["offset"]), (v.offset.x, v.offset.y));
                for (jv, pv) in j["viewports"].as_array().unwrap().iter().zip(&v.viewports) {
                    for (key, want) in [("x", pv.x), ("y", pv.y), ("width", pv.width), ("height", pv.height), ("min_depth", pv.min_depth), ("max_depth", pv.max_depth)] {
                        // serde_json's default parser may be one ulp off
                        // on long decimals; the printer itself is exact.
                        let got = jv[key].as_f64().unwrap();
                        prop_assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{key}: {got} vs {want}");
                    }
                }
                prop_assert_eq!(j["viewports"].as_array().unwrap().len(), v.viewports.len());
                let scissors: Vec<(i64, i64, i64, i64)> = j["scissors"].as_array().unwrap().iter()
                    .map(|s| (s["x"].as_i64().unwrap(), s["y"].as_i64().unwrap(), s["width"].as_i64().unwrap(), s["height"].as_i64().unwrap()))
                    .collect();
                let want: Vec<(i64, i64, i64, i64)> = v.scissors.iter().map(|s| (s.origin.x, s.origin.y, s.extent.width, s.extent.height)).collect();
                prop_assert_eq!(scissors, want);
                let lrz = &j["lrz"];
                match &bin.lrz {
                    LrzDecision::Enabled { offsets } => {
                        prop_assert_eq!(lrz["enabled"].as_bool(), Some(true));
                        let o = v.lrz_patch.as_ref().map_or(Vec2::ZERO, |p| p.offset);
                        prop_assert_eq!(pair(&lrz["offset"]), (o.x, o.y));
                        prop_assert_eq!(offsets.is_some(), j.get("lrz_space").is_some());
                    }
                    LrzDecision::Disabled(_) => {
                        prop_assert_eq!(lrz, &json!({"enabled": false}));
                        prop_assert!(j.get("lrz_space").is_none());
                    }
                }
            }
        }
    }

    /// Arbitrary text never panics the parser.
    #[test]
    fn parser_never_panics(text in "\\PC{0,200}") {
        let _ = parse_scene(&text);
    }
}

/// `(x, y, width, height)` of each viewport, whatever its space.
fn viewport_boxes<S>(viewports: &[Viewport<S>]) -> Vec<(f64, f64, f64, f64)> {
    viewports
        .iter()
        .map(|p| (p.x, p.y, p.width, p.height))
        .collect()
}

/// Scene types' `ViewportPatching` agrees with the oracle's notion of a
/// shared scale for every flag combination.
#[test]
fn patching_follows_the_flags() {
    for bits in 0..8u8 {
        let flags = SceneFlags {
            per_view_viewport: bits & 1 != 0,
            viewport_index_written: bits & 2 != 0,
            layered: bits & 4 != 0,
            lrz: false,
        };
        let text = include_str!("../examples/fdm/multiview_a650.json");
        let mut scene = parse_scene(text).unwrap();
        scene.flags = flags;
        let shared = scene.viewport_patching() == ViewportPatching::SharedScale;
        assert_eq!(shared, shares_scale(&scene), "{flags:?}");
    }
}
