//! Fragment density map (FDM) bin planning for Adreno.
//!
//! A Vulkan driver that renders with `VK_EXT_fragment_density_map` on a
//! tiler renders some bins (tiles) at lower resolution and scales them up
//! when it writes them back to memory. For every bin of a render pass it
//! must decide, per view, the fragment area, and patch the viewport,
//! scissor and LRZ state to match. [`plan()`] does that as pure math: a
//! [`Scene`] in, an [`FdmPlan`] out.
//!
//! # Four coordinate spaces
//!
//! Each has its own marker type in [`space`], so values cannot be mixed up.
//!
//! * **Framebuffer space** ([`space::Framebuffer`]): the final image. The
//!   application states everything here; a bin starts at `b_s`.
//! * **Rendering space** ([`space::Rendering`]): where the rasterizer really
//!   works. Framebuffer coordinates are divided by the fragment area `a`
//!   (multiplied by the scale `s = 1/a`) and shifted by an integer offset
//!   `o`, chosen per bin and per view so that the bin's start lands on the
//!   *common bin start* `b_cs`.
//! * **GMEM space** ([`space::Gmem`]): rendering space with its origin moved
//!   to `b_cs`, as the hardware's window-offset registers do. `b_cs` is one
//!   value for all views (there is one window offset register), so it is
//!   the bin's position in the unscaled grid, FDM or not.
//! * **LRZ space** ([`space::Lrz`]): on a740-class GPUs only. The rasterizer
//!   runs viewport, scissor and LRZ here, then adds a per-layer offset `o'`
//!   to reach rendering space, so the LRZ buffer written at full resolution
//!   can be read by scaled bins.
//!
//! # The transforms
//!
//! * **Per-bin offset** ([`transform::per_bin_offset`]): the transform is
//!   `x' = x/a + o`, and requiring `b_s ↦ b_cs` gives `o = b_cs − b_s/a`.
//!   Fragment areas are chosen so `a` divides `b_s`, which keeps `o` an
//!   exact integer ([`density`] explains how areas are read and rounded).
//! * **Viewports** are mapped with the same formula in floating point;
//!   depth is untouched. **Scissors** round outwards (start down, end up)
//!   and are then clipped to the bin's rendering-space rectangle, which
//!   replaces the hardware window scissor that cannot be per view (a
//!   scissor missing the bin becomes 0×0 at the bin's edge).
//! * **Which viewport each view uses** ([`ViewportPatching`]): one user
//!   viewport copied per view, the user's per-view viewports, the layered
//!   case where the shader has to select them, or — when the shader writes
//!   the viewport index and the viewports are not per view — a single
//!   scale shared by all views, the per-axis minimum fragment area (the
//!   highest resolution wins).
//! * **FDM offset** ([`grid`]): each view's bins shift by `b_o`, the user
//!   offset negated and wrapped into one bin; an extra column and row
//!   appear; the first column and row shrink instead of moving. With a
//!   shared scale the bins cannot move per view, so only the density
//!   sampling point moves.
//! * **Bin merging** ([`merge`], a7xx): neighbouring bins of one pipe with
//!   equal fragment areas become one bin while the result still fits an
//!   unscaled bin in rendering space.
//! * **LRZ** ([`lrz`]): `o' = b_cs − (b_s + b_o)/a` on a740-class GPUs,
//!   kept only when non-negative and 8-aligned; earlier GPUs disable LRZ in
//!   scaled bins, and in unscaled ones whose rendering space is shifted
//!   against the binning pass (`o' ≠ 0`, the first row/column of a shifted
//!   grid).
//!
//! # Worked example
//!
//! A 256×64 framebuffer in 64×32 bins on an a650 (no merging), one view,
//! with the third column of the density map asking for 2×2 fragments.
//! Bin `(2, 1)` starts at `b_s = b_cs = (128, 32)`. With `a = (2, 2)`:
//! `o = (128 − 128/2, 32 − 32/2) = (64, 16)`. The bin's 64×32 pixels
//! become 32×16 fragments at rendering `(128, 32)`. The full-framebuffer
//! viewport `(0, 0, 256, 64)` becomes `(0/2 + 64, 0/2 + 16, 128, 32)`, and
//! the full scissor `[0, 256) × [0, 64)` maps to `[64, 192) × [16, 48)`,
//! which the bin `[128, 160) × [32, 48)` clips to itself.
//!
//! ```
//! use lathe_adreno::fdm::{parse_scene, plan};
//!
//! let row = "[[1,1],[1,1],[2,2],[1,1]]";
//! let scene = parse_scene(&format!(r#"{{
//!     "gpu": "a650",
//!     "framebuffer": {{"width": 256, "height": 64}},
//!     "tile": {{"width": 64, "height": 32}},
//!     "vsc_pipe": {{"width": 4, "height": 2}},
//!     "views": 1,
//!     "density_map": {{"texel": {{"width": 64, "height": 32}}, "views": [[{row}, {row}]]}}
//! }}"#))?;
//! let plan = plan(&scene)?;
//! let bin = plan.bins.iter().find(|b| (b.grid.col, b.grid.row) == (2, 1)).unwrap();
//! let view = &bin.views[0];
//! assert_eq!((view.frag_area.x, view.frag_area.y), (2, 2));
//! assert_eq!((view.offset.x, view.offset.y), (64, 16));
//! assert_eq!((view.rendering.extent.width, view.rendering.extent.height), (32, 16));
//! let (viewports, scissors) = (&view.viewports, &view.scissors);
//! assert_eq!((viewports[0].x, viewports[0].y, viewports[0].width), (64.0, 16.0, 128.0));
//! assert_eq!((scissors[0].origin.x, scissors[0].origin.y), (128, 32));
//! assert_eq!((scissors[0].extent.width, scissors[0].extent.height), (32, 16));
//! # Ok::<(), lathe_adreno::fdm::FdmError>(())
//! ```
//!
//! On an a740 the same scene merges bins `(2, 0)` and `(2, 1)` (same area,
//! same pipe, 32×32 fragments fit a 64×32 bin), and because
//! `o' = (128 − 64, 0 − 0) = (64, 0)` is aligned, LRZ stays on; the driver
//! then programs the viewport in LRZ space with offset `o − o' = (0, 0)`
//! ([`plan::LrzPatch`]), while [`ViewBin::viewports`] stay in rendering
//! space.

pub mod density;
pub mod error;
pub mod gpu;
pub mod grid;
pub mod json;
pub mod lrz;
pub mod merge;
pub mod plan;
pub mod scene;
pub mod space;
pub mod transform;

pub use error::FdmError;
pub use gpu::GpuModel;
pub use json::{parse_scene, plan_scene_json, plan_to_json};
pub use plan::{BinPlan, FdmPlan, LrzPatch, ViewBin, plan};
pub use scene::{Scene, ViewportPatching};
