//! The design document's formulas, checked as properties over random scenes.

use lathe_adreno::fdm::density::{DensityLayer, DensityMap, TexelSize};
use lathe_adreno::fdm::gpu::{GpuModel, LRZ_OFFSET_ALIGN};
use lathe_adreno::fdm::grid::CellIndex;
use lathe_adreno::fdm::lrz::LrzDecision;
use lathe_adreno::fdm::scene::{PipeSize, SceneFlags, TileSize};
use lathe_adreno::fdm::space::{Extent, Framebuffer, Point, Rect, Vec2, Viewport, ceil_div};
use lathe_adreno::fdm::transform::rendering_to_gmem;
use lathe_adreno::fdm::{FdmPlan, PatchedState, Scene, ViewportPatching, parse_scene, plan};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const AREAS: [f64; 9] = [1.0, 1.0, 1.5, 2.0, 2.0, 2.7, 3.0, 4.0, 8.0];

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
        .prop_map(|(x, y, w, h)| Viewport::new(x, y, w, h, 0.0, 1.0))
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
        seed_areas in prop::collection::vec(area_strategy(), 1..=16),
        offsets in prop::collection::vec((-100i64..100, -100i64..100), 3),
        extra_viewports in 0usize..=2,
        viewports in prop::collection::vec(viewport_strategy(), 5),
        scissors in prop::collection::vec(rect_strategy(), 5),
    ) -> Scene {
        let tile = TileSize { width: 32 * tile.0, height: 16 * tile.1 };
        let texel = TexelSize { width: texel.0, height: texel.1 };
        let cols = (fb.0 as u32).div_ceil(texel.width) as usize;
        let rows = (fb.1 as u32).div_ceil(texel.height) as usize;
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
        // Keep the pipe count within the hardware's 32.
        let grid_cols = (fb.0 as u32).div_ceil(tile.width) + 1;
        let grid_rows = (fb.1 as u32).div_ceil(tile.height) + 1;
        let pipe_cols = grid_cols.div_ceil(pipe.0);
        let pipe_height = pipe.1.max(grid_rows.div_ceil(32 / pipe_cols));
        let count = (views + extra_viewports).min(viewports.len());
        Scene {
            gpu: GpuModel::ALL[gpu],
            framebuffer: Extent::new(fb.0, fb.1),
            tile,
            vsc_pipe: PipeSize { width: pipe.0, height: pipe_height },
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
    let mut single = scene.clone();
    single.gpu = GpuModel::A650;
    run(&single)
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

    /// o = b_cs − b_s/a exactly, and the patched viewport (followed by the
    /// LRZ offset o' where the hardware adds it) maps b_s onto b_cs.
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
                let user = indices(&scene, plan.patching, view);
                let (patched, after) = match &v.patched {
                    PatchedState::Rendering { viewports, .. } => (viewport_boxes(viewports), Vec2::ZERO),
                    PatchedState::Lrz { viewports, lrz_offset, .. } => (viewport_boxes(viewports), *lrz_offset),
                };
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

    /// Patched scissors lie inside the scaled bin and still cover every
    /// fragment the user's scissor and the bin have in common.
    #[test]
    fn scissors_stay_inside_the_scaled_bin(scene in scene_strategy()) {
        let plan = run(&scene);
        for bin in &plan.bins {
            for (view, v) in bin.views.iter().enumerate() {
                let (ax, ay) = (i64::from(v.frag_area.x), i64::from(v.frag_area.y));
                let (scissors, shift): (Vec<Rect<Framebuffer>>, Vec2) = match &v.patched {
                    // Compare everything in rendering space; the casts are
                    // coordinate copies for the check, not transforms.
                    PatchedState::Rendering { scissors, .. } => (
                        scissors.iter().map(|s| Rect::from_corners(s.origin.x, s.origin.y, s.end().x, s.end().y)).collect(),
                        Vec2::ZERO,
                    ),
                    PatchedState::Lrz { scissors, lrz_offset, .. } => (
                        scissors.iter().map(|s| Rect::from_corners(s.origin.x, s.origin.y, s.end().x, s.end().y)).collect(),
                        *lrz_offset,
                    ),
                };
                let bin_rect: Rect<Framebuffer> = Rect::from_corners(
                    v.rendering.origin.x, v.rendering.origin.y, v.rendering.end().x, v.rendering.end().y);
                prop_assert_eq!(v.rendering.extent.width, ceil_div(v.framebuffer.extent.width, ax));
                prop_assert_eq!(v.rendering.extent.height, ceil_div(v.framebuffer.extent.height, ay));
                for (&i, s) in indices(&scene, plan.patching, view).iter().zip(&scissors) {
                    let s = Rect::new(s.origin.shifted(shift), s.extent);
                    prop_assert!(bin_rect.contains(s), "scissor {s:?} outside bin {bin_rect:?}");
                    // Every framebuffer pixel in user scissor ∩ bin lands in a
                    // fragment inside the patched scissor: check the corners.
                    let user = scene.scissors[i].intersect(v.framebuffer);
                    if !user.is_empty() {
                        for (x, y) in [(user.origin.x, user.origin.y), (user.end().x - 1, user.end().y - 1)] {
                            let fx = x.div_euclid(ax) + v.offset.x;
                            let fy = y.div_euclid(ay) + v.offset.y;
                            let frag = Rect::from_corners(fx, fy, fx + 1, fy + 1);
                            prop_assert!(s.contains(frag), "pixel ({x}, {y}) → {frag:?} not in {s:?}");
                        }
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

    /// Whenever LRZ stays on, its offset is representable: on a740-class
    /// GPUs o' = b_cs − (b_s + b_o)/a is non-negative and 8-aligned; on
    /// earlier GPUs the bin is neither scaled nor shifted.
    #[test]
    fn lrz_offsets_are_representable(scene in scene_strategy()) {
        let plan = run(&scene);
        let registers = scene.gpu.features().lrz_offset_registers;
        for bin in &plan.bins {
            match &bin.lrz {
                LrzDecision::Disabled(_) => {
                    for v in &bin.views {
                        let in_rendering = matches!(v.patched, PatchedState::Rendering { .. });
                        prop_assert!(in_rendering);
                    }
                }
                LrzDecision::Enabled { offsets } => {
                    prop_assert!(scene.flags.lrz);
                    prop_assert_eq!(offsets.is_some(), registers);
                    for (i, v) in bin.views.iter().enumerate() {
                        match offsets {
                            Some(offsets) => {
                                let o = offsets[i];
                                let (ax, ay) = (i64::from(v.frag_area.x), i64::from(v.frag_area.y));
                                let sx = v.framebuffer.origin.x + v.bin_offset.x;
                                let sy = v.framebuffer.origin.y + v.bin_offset.y;
                                prop_assert_eq!(sx % ax, 0);
                                prop_assert_eq!(sy % ay, 0);
                                prop_assert_eq!(o, Vec2::new(bin.common_start.x - sx / ax, bin.common_start.y - sy / ay));
                                prop_assert!(o.x >= 0 && o.y >= 0);
                                prop_assert_eq!(o.x % LRZ_OFFSET_ALIGN, 0);
                                prop_assert_eq!(o.y % LRZ_OFFSET_ALIGN, 0);
                                let is_lrz_space = matches!(v.patched, PatchedState::Lrz { lrz_offset, .. } if lrz_offset == o);
                                prop_assert!(is_lrz_space);
                            }
                            None => {
                                prop_assert!(!v.frag_area.is_scaled());
                                prop_assert_eq!(v.offset, Vec2::ZERO);
                                prop_assert_eq!(v.bin_offset, Vec2::ZERO);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Fragment areas divide the tile (and b_o), and a shared scale is the
    /// same in every view.
    #[test]
    fn fragment_areas_fit_the_grid(scene in scene_strategy()) {
        let plan = run(&scene);
        for bin in &plan.bins {
            for v in &bin.views {
                prop_assert_eq!(scene.tile.width % v.frag_area.x, 0);
                prop_assert_eq!(scene.tile.height % v.frag_area.y, 0);
                prop_assert_eq!(v.bin_offset.x % i64::from(v.frag_area.x), 0);
                prop_assert_eq!(v.bin_offset.y % i64::from(v.frag_area.y), 0);
                prop_assert!(v.bin_offset.x >= 0 && v.bin_offset.x < i64::from(scene.tile.width));
                prop_assert!(v.bin_offset.y >= 0 && v.bin_offset.y < i64::from(scene.tile.height));
            }
            if plan.patching == ViewportPatching::SharedScale {
                prop_assert!(bin.views.iter().all(|v| v.frag_area == bin.views[0].frag_area));
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

/// The user viewport indices a view's patched viewports come from.
fn indices(scene: &Scene, patching: ViewportPatching, view: usize) -> Vec<usize> {
    match patching {
        ViewportPatching::SharedScale => (0..scene.viewports.len()).collect(),
        _ => vec![scene.viewport_for_view(view)],
    }
}
