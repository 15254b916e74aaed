//! The JSON face of the planner: scene files in, plans out.
//!
//! Scene keys (unknown keys are rejected):
//!
//! | key | type | notes |
//! |---|---|---|
//! | `gpu` | string | model name, e.g. `"a740"` ([`GpuModel`] lists them) |
//! | `framebuffer`, `tile` | `{width, height}` | pixels |
//! | `vsc_pipe` | `{width, height}` | bins per visibility-stream pipe |
//! | `views` | integer | views (multiview) or layers (layered FDM), 1 to 16 ([`MAX_VIEWS`](super::gpu::MAX_VIEWS)) |
//! | `density_map` | `{texel: {width, height}, views: [[[ax, ay], …], …]}` | `texel` is one map texel's size in framebuffer pixels; per view, rows of requested fragment areas (each ≥ 1); a map smaller than the framebuffer clamps at its edge |
//! | `fdm_offset` | `[[x, y], …]` | optional, one per view, pixels; the map is read at position − offset |
//! | `per_view_viewport`, `viewport_index_written`, `layered`, `lrz` | bool | default `false` |
//! | `viewports` | `[{x, y, width, height, min_depth, max_depth}]` | default: the whole framebuffer, depth 0..1 (one per view with `per_view_viewport`) |
//! | `scissors` | `[{x, y, width, height}]` | default: the whole framebuffer, one per viewport |
//!
//! The plan lists `bins`, one per bin to render (a merged group once, under
//! its top-left cell). Each has `grid` `[col, row]`, `merged` (every cell
//! it covers, itself first), `pipe` `[x, y]`, `common_start` (`b_cs`),
//! `lrz_disabled` (why, only when LRZ is off) and `views`, per view:
//!
//! | key | meaning |
//! |---|---|
//! | `frag_area` | `[x, y]` framebuffer pixels per fragment (`1/s`) |
//! | `start`, `extent` | the bin in framebuffer space (`b_s` and size) |
//! | `render_extent` | the bin's size in rendering space (GMEM footprint) |
//! | `offset` | `o = b_cs − s·b_s` |
//! | `bin_offset` | `b_o`, the view's grid shift (zero when not shifted) |
//! | `viewports`, `scissors` | the view's user viewports/scissors in rendering space |
//! | `lrz` | `{enabled, offset}`; `offset` is `o'`, only when enabled |
//! | `lrz_space` | `{viewports, scissors}` in LRZ space (offset `o − o'`), on a740-class GPUs when LRZ is on |

use super::density::{DensityLayer, DensityMap, TexelSize};
use super::error::FdmError;
use super::gpu::GpuModel;
use super::lrz::LrzDecision;
use super::plan::{FdmPlan, ViewBin};
use super::scene::{PipeSize, Scene, SceneFlags, TileSize};
use super::space::{Extent, Point, Rect, Vec2, Viewport};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneJson {
    gpu: String,
    framebuffer: SizeJson,
    tile: SizeJson,
    vsc_pipe: SizeJson,
    views: u32,
    density_map: DensityMapJson,
    #[serde(default)]
    fdm_offset: Option<Vec<[i32; 2]>>,
    #[serde(default)]
    per_view_viewport: bool,
    #[serde(default)]
    viewport_index_written: bool,
    #[serde(default)]
    layered: bool,
    #[serde(default)]
    lrz: bool,
    #[serde(default)]
    viewports: Option<Vec<ViewportJson>>,
    #[serde(default)]
    scissors: Option<Vec<ScissorJson>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SizeJson {
    width: u32,
    height: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DensityMapJson {
    texel: SizeJson,
    views: Vec<Vec<Vec<[f64; 2]>>>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct ViewportJson {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    #[serde(default)]
    min_depth: f64,
    #[serde(default = "one")]
    max_depth: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct ScissorJson {
    x: i64,
    y: i64,
    width: i64,
    height: i64,
}

/// Parses and validates a scene. Syntax and schema errors name the field
/// being read and carry serde_json's line and column; value errors name the
/// field.
pub fn parse_scene(text: &str) -> Result<Scene, FdmError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: SceneJson =
        serde_path_to_error::deserialize(&mut de).map_err(|err| FdmError::Json {
            path: err.path().to_string(),
            source: err.into_inner(),
        })?;
    de.end().map_err(|source| FdmError::Json {
        path: ".".into(),
        source,
    })?;
    let scene = raw.into_scene()?;
    scene.validate()?;
    Ok(scene)
}

impl SceneJson {
    fn into_scene(self) -> Result<Scene, FdmError> {
        let gpu = GpuModel::from_name(&self.gpu)?;
        let framebuffer = Extent::new(
            i64::from(self.framebuffer.width),
            i64::from(self.framebuffer.height),
        );
        let layers = self
            .density_map
            .views
            .iter()
            .enumerate()
            .map(|(v, rows)| DensityLayer::from_rows(v, rows))
            .collect::<Result<Vec<_>, _>>()?;
        // Without viewports: the whole framebuffer, once per scissor given,
        // else once per view with per-view viewports, else once.
        let default_count = match (&self.scissors, self.per_view_viewport) {
            (Some(scissors), _) => scissors.len().max(1),
            (None, true) => self.views.max(1) as usize,
            (None, false) => 1,
        };
        let viewports: Vec<Viewport<_>> = match self.viewports {
            Some(list) => list
                .into_iter()
                .map(|v| Viewport::new(v.x, v.y, v.width, v.height, v.min_depth, v.max_depth))
                .collect(),
            None => vec![
                Viewport::new(
                    0.0,
                    0.0,
                    framebuffer.width as f64,
                    framebuffer.height as f64,
                    0.0,
                    1.0,
                );
                default_count
            ],
        };
        let scissors = match self.scissors {
            Some(list) => list
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    if s.width < 0 || s.height < 0 {
                        return Err(FdmError::invalid(
                            format!("scissors[{i}]"),
                            "width and height must not be negative",
                        ));
                    }
                    Ok(Rect::new(
                        Point::new(s.x, s.y),
                        Extent::new(s.width, s.height),
                    ))
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => vec![Rect::new(Point::new(0, 0), framebuffer); viewports.len()],
        };
        Ok(Scene {
            gpu,
            framebuffer,
            tile: TileSize {
                width: self.tile.width,
                height: self.tile.height,
            },
            vsc_pipe: PipeSize {
                width: self.vsc_pipe.width,
                height: self.vsc_pipe.height,
            },
            views: self.views,
            density_map: DensityMap {
                texel: TexelSize {
                    width: self.density_map.texel.width,
                    height: self.density_map.texel.height,
                },
                layers,
            },
            fdm_offset: self.fdm_offset.map(|list| {
                list.into_iter()
                    .map(|[x, y]| Vec2::new(i64::from(x), i64::from(y)))
                    .collect()
            }),
            flags: SceneFlags {
                per_view_viewport: self.per_view_viewport,
                viewport_index_written: self.viewport_index_written,
                layered: self.layered,
                lrz: self.lrz,
            },
            viewports,
            scissors,
        })
    }
}

#[derive(Serialize)]
struct PlanJson {
    gpu: &'static str,
    generation: &'static str,
    bin_merging: bool,
    lrz_offset_registers: bool,
    viewport_patching: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    shader_transform: Option<ShaderTransformJson>,
    shifted_bins: bool,
    grid: [u32; 2],
    bins: Vec<BinJson>,
}

#[derive(Serialize)]
struct ShaderTransformJson {
    viewport_index: &'static str,
    layers: u32,
    frag_coord: &'static str,
}

#[derive(Serialize)]
struct BinJson {
    grid: [u32; 2],
    merged: Vec<[u32; 2]>,
    pipe: [u32; 2],
    common_start: [i64; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    lrz_disabled: Option<String>,
    views: Vec<ViewJson>,
}

/// One view of a bin. `viewports` and `scissors` are in rendering space
/// (they map `start` onto `common_start`); `lrz_space` repeats them in LRZ
/// space when the hardware adds `lrz.offset` after LRZ.
#[derive(Serialize)]
struct ViewJson {
    frag_area: [u32; 2],
    start: [i64; 2],
    extent: [i64; 2],
    render_extent: [i64; 2],
    offset: [i64; 2],
    bin_offset: [i64; 2],
    viewports: Vec<ViewportJson>,
    scissors: Vec<ScissorJson>,
    lrz: LrzJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    lrz_space: Option<LrzSpaceJson>,
}

#[derive(Serialize)]
struct LrzJson {
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<[i64; 2]>,
}

#[derive(Serialize)]
struct LrzSpaceJson {
    viewports: Vec<ViewportJson>,
    scissors: Vec<ScissorJson>,
}

fn pair(v: Vec2) -> [i64; 2] {
    [v.x, v.y]
}

fn viewport_json<S>(v: &Viewport<S>) -> ViewportJson {
    ViewportJson {
        x: v.x,
        y: v.y,
        width: v.width,
        height: v.height,
        min_depth: v.min_depth,
        max_depth: v.max_depth,
    }
}

fn scissor_json<S>(r: &Rect<S>) -> ScissorJson {
    ScissorJson {
        x: r.origin.x,
        y: r.origin.y,
        width: r.extent.width,
        height: r.extent.height,
    }
}

fn view_json(view: &ViewBin, lrz: &LrzDecision) -> ViewJson {
    let lrz = match lrz {
        LrzDecision::Enabled { .. } => LrzJson {
            enabled: true,
            // Without offset registers LRZ space is rendering space: o' = 0.
            offset: Some(pair(
                view.lrz_patch.as_ref().map_or(Vec2::ZERO, |p| p.offset),
            )),
        },
        LrzDecision::Disabled(_) => LrzJson {
            enabled: false,
            offset: None,
        },
    };
    ViewJson {
        frag_area: [view.frag_area.x, view.frag_area.y],
        start: pair(view.framebuffer.origin.to_vec()),
        extent: [
            view.framebuffer.extent.width,
            view.framebuffer.extent.height,
        ],
        render_extent: [view.rendering.extent.width, view.rendering.extent.height],
        offset: pair(view.offset),
        bin_offset: pair(view.bin_offset),
        viewports: view.viewports.iter().map(viewport_json).collect(),
        scissors: view.scissors.iter().map(scissor_json).collect(),
        lrz,
        lrz_space: view.lrz_patch.as_ref().map(|p| LrzSpaceJson {
            viewports: p.viewports.iter().map(viewport_json).collect(),
            scissors: p.scissors.iter().map(scissor_json).collect(),
        }),
    }
}

/// Renders a plan as the pretty-printed JSON `lathe adreno fdm` prints.
pub fn plan_to_json(plan: &FdmPlan) -> Result<String, FdmError> {
    let features = plan.gpu.features();
    let out = PlanJson {
        gpu: plan.gpu.name(),
        generation: plan.gpu.generation().name(),
        bin_merging: features.bin_merging,
        lrz_offset_registers: features.lrz_offset_registers,
        viewport_patching: plan.patching.name(),
        shader_transform: plan.shader_transform.map(|t| ShaderTransformJson {
            viewport_index: "layer",
            layers: t.layers,
            frag_coord: "per layer: each bin's views[layer].frag_area and offset",
        }),
        shifted_bins: plan.shifted_bins,
        grid: [plan.grid_cols, plan.grid_rows],
        bins: plan
            .bins
            .iter()
            .map(|bin| BinJson {
                grid: [bin.grid.col, bin.grid.row],
                merged: bin.merged.iter().map(|c| [c.col, c.row]).collect(),
                pipe: [bin.pipe.x, bin.pipe.y],
                common_start: pair(bin.common_start.to_vec()),
                lrz_disabled: match &bin.lrz {
                    LrzDecision::Disabled(why) => Some(why.to_string()),
                    LrzDecision::Enabled { .. } => None,
                },
                views: bin.views.iter().map(|v| view_json(v, &bin.lrz)).collect(),
            })
            .collect(),
    };
    let pretty = serde_json::to_string_pretty(&out).map_err(FdmError::Output)?;
    Ok(inline_short_arrays(&pretty))
}

/// Rewrites pretty-printed JSON so that arrays of numbers, and arrays of
/// such arrays (`[[0, 0], [1, 0]]`), sit on one line; coordinate pairs are
/// unreadable one number per line. Strings are copied untouched.
fn inline_short_arrays(pretty: &str) -> String {
    struct OpenArray {
        start: usize,
        has_object: bool,
        nested_depth: u32,
    }
    let mut out = String::with_capacity(pretty.len());
    let mut open: Vec<OpenArray> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in pretty.chars() {
        out.push(c);
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' => open.push(OpenArray {
                start: out.len() - 1,
                has_object: false,
                nested_depth: 0,
            }),
            '{' => {
                if let Some(top) = open.last_mut() {
                    top.has_object = true;
                }
            }
            ']' => {
                let Some(done) = open.pop() else { continue };
                if !done.has_object && done.nested_depth <= 1 {
                    let compact = compact_json(&out[done.start..]);
                    out.truncate(done.start);
                    out.push_str(&compact);
                }
                if let Some(parent) = open.last_mut() {
                    parent.has_object |= done.has_object;
                    parent.nested_depth = parent.nested_depth.max(done.nested_depth + 1);
                }
            }
            _ => {}
        }
    }
    out
}

/// Drops whitespace outside strings and puts one space after each comma.
fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            c if c.is_whitespace() => {}
            ',' => out.push_str(", "),
            '"' => {
                in_string = true;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Parses a scene, plans it and renders the plan: what the CLI does.
pub fn plan_scene_json(text: &str) -> Result<String, FdmError> {
    let scene = parse_scene(text)?;
    plan_to_json(&super::plan::plan(&scene)?)
}

#[cfg(test)]
mod tests {
    use super::inline_short_arrays;

    #[test]
    fn short_arrays_go_on_one_line() {
        let pretty = "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": [\n    [\n      0,\n      0\n    ]\n  ],\n  \"s\": \"x [1,\\n 2] \\\" ]\",\n  \"o\": [\n    {\n      \"k\": 1\n    }\n  ]\n}";
        let want = "{\n  \"a\": [1, 2],\n  \"b\": [[0, 0]],\n  \"s\": \"x [1,\\n 2] \\\" ]\",\n  \"o\": [\n    {\n      \"k\": 1\n    }\n  ]\n}";
        assert_eq!(inline_short_arrays(pretty), want);
    }
}
