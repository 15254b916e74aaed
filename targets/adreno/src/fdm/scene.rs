//! The planner's input: one render pass as the driver sees it.

use super::density::DensityMap;
use super::error::FdmError;
use super::gpu::{GpuModel, MAX_FRAMEBUFFER_SIZE, MAX_VIEWS, TILE_ALIGN_HEIGHT, TILE_ALIGN_WIDTH};
use super::space::{Extent, Framebuffer, Rect, Vec2, Viewport};

/// Most viewports (and scissors) a pipeline may use on Adreno.
pub const MAX_VIEWPORTS: usize = 16;

/// Bin (tile) size in framebuffer pixels, before any FDM scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSize {
    pub width: u32,
    pub height: u32,
}

/// Visibility-stream pipe size, in bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeSize {
    pub width: u32,
    pub height: u32,
}

/// The render-pass and pipeline facts that change how FDM is implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SceneFlags {
    /// `VK_QCOM_multiview_per_view_viewport`: view `i` uses viewport `i`.
    pub per_view_viewport: bool,
    /// A pre-rasterization shader writes `ViewportIndex`. Forces a shared
    /// scale unless `per_view_viewport` is set.
    pub viewport_index_written: bool,
    /// `VK_VALVE_fragment_density_map_layered`: views are framebuffer layers
    /// selected by the shader rather than multiview views.
    pub layered: bool,
    /// The render pass would like to use LRZ.
    pub lrz: bool,
}

/// One render pass with a fragment density map.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub gpu: GpuModel,
    pub framebuffer: Extent<Framebuffer>,
    pub tile: TileSize,
    pub vsc_pipe: PipeSize,
    /// Number of views (multiview) or layers (layered FDM).
    pub views: u32,
    pub density_map: DensityMap,
    /// Per-view `VK_EXT_fragment_density_map_offset` offsets, in pixels.
    pub fdm_offset: Option<Vec<Vec2>>,
    pub flags: SceneFlags,
    pub viewports: Vec<Viewport<Framebuffer>>,
    /// One scissor per viewport.
    pub scissors: Vec<Rect<Framebuffer>>,
}

/// How the user's viewports reach each view, which decides whether the
/// scale can differ between views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewportPatching {
    /// The user gave one viewport per view (`VK_QCOM_multiview_per_view_viewport`);
    /// viewport `i` is transformed with view `i`'s scale.
    PerViewViewport,
    /// Viewport 0 is copied once per view, each copy transformed with its
    /// view's scale, and the hardware's per-view viewport bit selects them.
    DuplicatedViewport,
    /// Layered FDM: like [`ViewportPatching::DuplicatedViewport`] (or
    /// per-view viewports when the user gave them), but the hardware bit
    /// selects by view, not layer, so the shader must pick the viewport.
    LayeredShader,
    /// The shader picks viewports itself and they are not per view, so one
    /// scale (the per-axis minimum fragment area over the views, i.e. the
    /// highest resolution) is shared by all views, their loads and stores.
    SharedScale,
}

impl ViewportPatching {
    pub const fn name(self) -> &'static str {
        match self {
            ViewportPatching::PerViewViewport => "per_view_viewport",
            ViewportPatching::DuplicatedViewport => "duplicated_viewport",
            ViewportPatching::LayeredShader => "layered_shader",
            ViewportPatching::SharedScale => "shared_scale",
        }
    }
}

impl Scene {
    /// Chooses the viewport patching path. The scale has to be shared by
    /// all views only when the shader writes the viewport index *and* the
    /// user's viewports are not per view: the driver then cannot know which
    /// view a primitive's viewport belongs to. With per-view viewports
    /// (`VK_QCOM_multiview_per_view_viewport`) view `i` still uses viewport
    /// `i`, so each view keeps its own scale.
    pub fn viewport_patching(&self) -> ViewportPatching {
        if self.flags.viewport_index_written && !self.flags.per_view_viewport {
            ViewportPatching::SharedScale
        } else if self.flags.layered {
            ViewportPatching::LayeredShader
        } else if self.flags.per_view_viewport {
            ViewportPatching::PerViewViewport
        } else {
            ViewportPatching::DuplicatedViewport
        }
    }

    /// Whether each view's bins are shifted by its own `b_o`. That needs a
    /// per-view scale; with a shared scale (whatever the view count, as the
    /// established driver does) only the density sampling position moves.
    pub fn shifts_bins(&self) -> bool {
        self.fdm_offset.is_some() && self.viewport_patching() != ViewportPatching::SharedScale
    }

    /// Index of the user viewport (and scissor) view `view` uses when scales
    /// are per view.
    pub fn viewport_for_view(&self, view: usize) -> usize {
        if self.flags.per_view_viewport {
            view
        } else {
            0
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), FdmError> {
        check_size(
            "framebuffer.width",
            self.framebuffer.width,
            MAX_FRAMEBUFFER_SIZE,
        )?;
        check_size(
            "framebuffer.height",
            self.framebuffer.height,
            MAX_FRAMEBUFFER_SIZE,
        )?;
        check_tile("tile.width", self.tile.width, TILE_ALIGN_WIDTH)?;
        check_tile("tile.height", self.tile.height, TILE_ALIGN_HEIGHT)?;
        if self.vsc_pipe.width == 0 {
            return Err(FdmError::invalid(
                "vsc_pipe.width",
                "must be at least 1 bin",
            ));
        }
        if self.vsc_pipe.height == 0 {
            return Err(FdmError::invalid(
                "vsc_pipe.height",
                "must be at least 1 bin",
            ));
        }
        if self.views == 0 {
            return Err(FdmError::invalid("views", "must be at least 1"));
        }
        if self.views > MAX_VIEWS {
            return Err(FdmError::invalid(
                "views",
                format!(
                    "{} views requested; Adreno supports at most {MAX_VIEWS}",
                    self.views
                ),
            ));
        }
        self.density_map.validate(self.views)?;
        if let Some(offsets) = &self.fdm_offset {
            if offsets.len() != self.views as usize {
                return Err(FdmError::invalid(
                    "fdm_offset",
                    format!(
                        "has {} entries but there are {} views",
                        offsets.len(),
                        self.views
                    ),
                ));
            }
            let limit = i64::from(MAX_FRAMEBUFFER_SIZE);
            for (i, o) in offsets.iter().enumerate() {
                if o.x.abs() > limit || o.y.abs() > limit {
                    return Err(FdmError::invalid(
                        format!("fdm_offset[{i}]"),
                        format!("[{}, {}] is larger than {limit} pixels", o.x, o.y),
                    ));
                }
            }
        }
        self.validate_viewports()
    }

    fn validate_viewports(&self) -> Result<(), FdmError> {
        if self.viewports.is_empty() {
            return Err(FdmError::invalid(
                "viewports",
                "at least one viewport is required",
            ));
        }
        if self.viewports.len() > MAX_VIEWPORTS {
            return Err(FdmError::invalid(
                "viewports",
                format!(
                    "{} viewports; at most {MAX_VIEWPORTS} are supported",
                    self.viewports.len()
                ),
            ));
        }
        if self.scissors.len() != self.viewports.len() {
            return Err(FdmError::invalid(
                "scissors",
                format!(
                    "has {} entries but there are {} viewports (Vulkan needs one scissor per viewport)",
                    self.scissors.len(),
                    self.viewports.len()
                ),
            ));
        }
        if self.flags.per_view_viewport && self.viewports.len() < self.views as usize {
            return Err(FdmError::invalid(
                "viewports",
                format!(
                    "per_view_viewport needs one viewport per view: {} views but {} viewports",
                    self.views,
                    self.viewports.len()
                ),
            ));
        }
        for (i, v) in self.viewports.iter().enumerate() {
            let field = format!("viewports[{i}]");
            let all = [v.x, v.y, v.width, v.height, v.min_depth, v.max_depth];
            if all.iter().any(|c| !c.is_finite()) {
                return Err(FdmError::invalid(
                    field,
                    "every component must be a finite number",
                ));
            }
            if v.width <= 0.0 {
                return Err(FdmError::invalid(
                    format!("{field}.width"),
                    "must be greater than 0",
                ));
            }
            if v.height == 0.0 {
                return Err(FdmError::invalid(
                    format!("{field}.height"),
                    "must not be 0",
                ));
            }
        }
        for (i, s) in self.scissors.iter().enumerate() {
            if s.origin.x < 0 || s.origin.y < 0 {
                return Err(FdmError::invalid(
                    format!("scissors[{i}]"),
                    "x and y must not be negative (Vulkan requirement)",
                ));
            }
            if s.end().x > i64::from(i32::MAX) || s.end().y > i64::from(i32::MAX) {
                return Err(FdmError::invalid(
                    format!("scissors[{i}]"),
                    "x + width and y + height must fit in a signed 32-bit integer",
                ));
            }
        }
        Ok(())
    }
}

fn check_size(field: &str, value: i64, max: u32) -> Result<(), FdmError> {
    if value <= 0 {
        return Err(FdmError::invalid(field, "must be at least 1 pixel"));
    }
    if value > i64::from(max) {
        return Err(FdmError::invalid(
            field,
            format!("{value} is larger than the limit {max}"),
        ));
    }
    Ok(())
}

fn check_tile(field: &str, value: u32, align: u32) -> Result<(), FdmError> {
    if value == 0 {
        return Err(FdmError::invalid(field, "must not be 0"));
    }
    if value % align != 0 {
        return Err(FdmError::invalid(
            field,
            format!("{value} is not a multiple of {align}, which the hardware requires"),
        ));
    }
    Ok(())
}
