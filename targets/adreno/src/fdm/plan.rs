//! The planner: one pure function from a [`Scene`] to an [`FdmPlan`].

use super::density::{fit_fragment_area, round_fragment_area};
use super::error::FdmError;
use super::gpu::GpuModel;
use super::grid::{BinGrid, CellIndex, PipeIndex, bin_offset};
use super::lrz::{LrzDecision, LrzView, decide_lrz};
use super::merge::{MergeCell, MergeGrid, MergeGroup};
use super::scene::{Scene, ViewportPatching};
use super::space::{FragArea, Framebuffer, Lrz, Point, Rect, Rendering, Vec2, Viewport};
use super::transform::{BinTransform, per_bin_offset};

/// What the shader has to do itself because the hardware cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderTransform {
    /// Layered FDM: the last pre-rasterization stage must write
    /// `ViewportIndex = Layer` so that layer `i` uses the viewport the driver
    /// patched for view `i`, and `FragCoord` must be mapped back to
    /// framebuffer space with that layer's `frag_area` and `offset` (from
    /// each bin), which the driver passes per layer.
    pub layers: u32,
}

/// On GPUs with LRZ offset registers, when LRZ stays on: the viewports
/// and scissors as the driver programs them, in LRZ space (offset `o − o'`),
/// with the per-layer offset `o'` the hardware adds after LRZ.
#[derive(Clone, Debug, PartialEq)]
pub struct LrzPatch {
    /// `o' = b_cs − (b_s + b_o)·s`.
    pub offset: Vec2,
    pub viewports: Vec<Viewport<Lrz>>,
    pub scissors: Vec<Rect<Lrz>>,
}

/// One view of one (possibly merged) bin.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewBin {
    /// Fragment area the view renders this bin with (`1/s`).
    pub frag_area: FragArea,
    /// `b_o`, this view's bin shift (zero unless bins are shifted).
    pub bin_offset: Vec2,
    /// What the bin covers in framebuffer space; `origin` is `b_s`.
    pub framebuffer: Rect<Framebuffer>,
    /// The same bin in rendering space: starts at `b_cs`, and its extent is
    /// the GMEM footprint.
    pub rendering: Rect<Rendering>,
    /// `o = b_cs − s·b_s`: rendering = framebuffer / area + `offset`.
    pub offset: Vec2,
    /// The user viewports this view uses, mapped to rendering space.
    pub viewports: Vec<Viewport<Rendering>>,
    /// The matching scissors in rendering space, rounded outwards and
    /// clipped to [`ViewBin::rendering`].
    pub scissors: Vec<Rect<Rendering>>,
    /// The same viewports and scissors in LRZ space, when the bin keeps LRZ
    /// through the offset registers.
    pub lrz_patch: Option<LrzPatch>,
}

/// One bin to render (merged bins appear once).
#[derive(Clone, Debug, PartialEq)]
pub struct BinPlan {
    /// The top-left grid cell.
    pub grid: CellIndex,
    /// Every grid cell this bin covers, itself first.
    pub merged: Vec<CellIndex>,
    pub pipe: PipeIndex,
    /// `b_cs`.
    pub common_start: Point<Rendering>,
    pub lrz: LrzDecision,
    pub views: Vec<ViewBin>,
}

/// The full FDM plan of a render pass.
#[derive(Clone, Debug, PartialEq)]
pub struct FdmPlan {
    pub gpu: GpuModel,
    pub patching: ViewportPatching,
    pub shader_transform: Option<ShaderTransform>,
    /// Whether each view's bins are shifted by its `b_o`.
    pub shifted_bins: bool,
    pub grid_cols: u32,
    pub grid_rows: u32,
    pub bins: Vec<BinPlan>,
}

/// Plans every bin of `scene`: fragment areas, offsets, patched viewports
/// and scissors, merging and LRZ. Validates the scene first.
pub fn plan(scene: &Scene) -> Result<FdmPlan, FdmError> {
    scene.validate()?;
    let features = scene.gpu.features();
    let patching = scene.viewport_patching();
    let shifted = scene.shifts_bins();
    let views = scene.views as usize;
    let user_offsets: Vec<Vec2> = match &scene.fdm_offset {
        Some(offsets) => offsets.clone(),
        None => vec![Vec2::ZERO; views],
    };
    let bin_offsets: Vec<Vec2> = user_offsets
        .iter()
        .map(|&u| {
            if shifted {
                bin_offset(u, scene.tile)
            } else {
                Vec2::ZERO
            }
        })
        .collect();

    let grid = BinGrid::new(scene.framebuffer, scene.tile, shifted);
    let cells: Vec<Option<MergeCell>> = grid
        .cells()
        .map(|cell| {
            let rects: Vec<Rect<Framebuffer>> = bin_offsets
                .iter()
                .map(|&b_o| grid.view_rect(cell, b_o))
                .collect();
            if rects.iter().all(|r| r.is_empty()) {
                return None;
            }
            let mut areas: Vec<FragArea> = (0..views)
                .map(|v| {
                    let requested = scene
                        .density_map
                        .requested_area(v, rects[v], user_offsets[v])
                        .unwrap_or([1.0, 1.0]);
                    fit_fragment_area(round_fragment_area(requested), scene.tile, bin_offsets[v])
                })
                .collect();
            if patching == ViewportPatching::SharedScale {
                // Highest resolution wins on each axis; it still divides
                // the tile because each candidate did.
                let shared = areas
                    .iter()
                    .copied()
                    .reduce(FragArea::min)
                    .unwrap_or(FragArea::ONE);
                areas.fill(shared);
            }
            Some(MergeCell {
                pipe: grid.pipe_of(cell, scene.vsc_pipe),
                areas,
                rects,
            })
        })
        .collect();

    let merge_grid = MergeGrid {
        cols: grid.cols(),
        rows: grid.rows(),
        cells: &cells,
        tile: scene.tile,
    };
    let groups = merge_grid.merge(features.bin_merging);

    let mut bins = Vec::with_capacity(groups.len());
    for group in &groups {
        bins.push(plan_bin(
            scene,
            &grid,
            &merge_grid,
            group,
            &bin_offsets,
            patching,
        )?);
    }

    Ok(FdmPlan {
        gpu: scene.gpu,
        patching,
        shader_transform: (patching == ViewportPatching::LayeredShader).then_some(
            ShaderTransform {
                layers: scene.views,
            },
        ),
        shifted_bins: shifted,
        grid_cols: grid.cols(),
        grid_rows: grid.rows(),
        bins,
    })
}

/// The viewports (as user indices) view `view` uses.
fn viewport_indices(scene: &Scene, patching: ViewportPatching, view: usize) -> Vec<usize> {
    match patching {
        ViewportPatching::SharedScale => (0..scene.viewports.len()).collect(),
        _ => vec![scene.viewport_for_view(view)],
    }
}

fn plan_bin(
    scene: &Scene,
    grid: &BinGrid,
    merge_grid: &MergeGrid<'_>,
    group: &MergeGroup,
    bin_offsets: &[Vec2],
    patching: ViewportPatching,
) -> Result<BinPlan, FdmError> {
    let anchor = group.anchor;
    let cell = merge_grid
        .cell(anchor)
        .ok_or(FdmError::Internal("merge group anchored on an empty cell"))?;
    let common_start = grid.common_start(anchor);

    // Geometry per view: b_s, extent, o, and the rendering-space bin.
    struct Geometry {
        area: FragArea,
        rect: Rect<Framebuffer>,
        offset: Vec2,
        to_rendering: BinTransform<Framebuffer, Rendering>,
    }
    let mut geometry = Vec::with_capacity(cell.areas.len());
    for (v, &area) in cell.areas.iter().enumerate() {
        let rect = merge_grid
            .group_rect(group, v)
            .ok_or(FdmError::Internal("merge group with a missing cell"))?;
        let offset = per_bin_offset(area, rect.origin, common_start)?;
        geometry.push(Geometry {
            area,
            rect,
            offset,
            to_rendering: BinTransform::new(area, offset),
        });
    }

    let lrz_views: Vec<LrzView> = geometry
        .iter()
        .zip(bin_offsets)
        .map(|(g, &b_o)| LrzView {
            area: g.area,
            bin_start: g.rect.origin,
            common_start,
            bin_offset: b_o,
        })
        .collect();
    let lrz = decide_lrz(scene.gpu.features(), scene.flags.lrz, &lrz_views);

    let mut views = Vec::with_capacity(geometry.len());
    for (v, g) in geometry.iter().enumerate() {
        let unaligned = || FdmError::UnalignedBinStart {
            start_x: g.rect.origin.x,
            start_y: g.rect.origin.y,
            area_x: g.area.x,
            area_y: g.area.y,
        };
        let rendering = g.to_rendering.map_bin(g.rect).ok_or_else(unaligned)?;
        let indices = viewport_indices(scene, patching, v);
        let lrz_patch = match &lrz {
            LrzDecision::Enabled {
                offsets: Some(offsets),
            } => {
                let lrz_offset = offsets[v];
                let to_lrz: BinTransform<Framebuffer, Lrz> = g.to_rendering.rebased(lrz_offset);
                let bin = to_lrz.map_bin(g.rect).ok_or_else(unaligned)?;
                Some(LrzPatch {
                    offset: lrz_offset,
                    viewports: indices
                        .iter()
                        .map(|&i| to_lrz.map_viewport(&scene.viewports[i]))
                        .collect(),
                    scissors: indices
                        .iter()
                        .map(|&i| to_lrz.map_scissor(scene.scissors[i]).clipped_to(bin))
                        .collect(),
                })
            }
            _ => None,
        };
        views.push(ViewBin {
            frag_area: g.area,
            bin_offset: bin_offsets[v],
            framebuffer: g.rect,
            rendering,
            offset: g.offset,
            viewports: indices
                .iter()
                .map(|&i| g.to_rendering.map_viewport(&scene.viewports[i]))
                .collect(),
            scissors: indices
                .iter()
                .map(|&i| {
                    g.to_rendering
                        .map_scissor(scene.scissors[i])
                        .clipped_to(rendering)
                })
                .collect(),
            lrz_patch,
        });
    }

    Ok(BinPlan {
        grid: anchor,
        merged: group.cells().collect(),
        pipe: cell.pipe,
        common_start,
        lrz,
        views,
    })
}
