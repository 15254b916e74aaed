//! The shader interface a driver needs beside the IR, serialisable to JSON.

use indexmap::IndexMap;
use serde::Serialize;

/// Everything a driver must know to bind and launch the lowered shader.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Interface {
    /// The entry point's name.
    pub entry: String,
    /// `vertex`, `fragment` or `compute`.
    pub stage: String,
    /// Shader inputs, one per variable or block member (in declaration order).
    pub inputs: Vec<Varying>,
    /// Shader outputs, one per variable or block member the shader writes.
    pub outputs: Vec<Varying>,
    /// Descriptor resources used by the entry point, by `(set, binding)` order.
    pub resources: Vec<Resource>,
    /// Byte range of push constants the shader declares, if any.
    pub push_constants: Option<PushConstants>,
    /// Local workgroup size (compute only), after specialization.
    pub workgroup_size: Option<[u32; 3]>,
    /// Specialization constants by SpecId, with the value used.
    pub spec_constants: IndexMap<u32, SpecConstant>,
}

/// One input or output.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Varying {
    /// Source name when the module carries debug names.
    pub name: Option<String>,
    /// `Location` decoration (none for built-ins).
    pub location: Option<u32>,
    /// First component (`Component` decoration, 0 by default).
    pub component: u32,
    /// Number of locations it occupies (matrices and arrays take several).
    pub locations: u32,
    /// The IR value type of one location's scalars, e.g. `f32`, and the lanes used per location.
    pub scalar: String,
    pub lanes: u32,
    /// `smooth`, `flat` or `noperspective` (fragment inputs only).
    pub interpolation: Option<String>,
    /// `centroid` or `sample` when decorated.
    pub sampling: Option<String>,
    /// SPIR-V built-in name (`Position`, `FragCoord`, ...).
    pub builtin: Option<String>,
    /// The IR slot of `load_input` / `store_output` (locations 0..=31,
    /// built-ins from 64), or `None` for built-ins read as system values.
    pub slot: Option<u16>,
}

/// A descriptor-set resource.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Resource {
    pub name: Option<String>,
    pub set: u32,
    pub binding: u32,
    /// `uniform_buffer`, `storage_buffer`, `combined_image_sampler`,
    /// `sampled_image`, `storage_image`, `sampler` or `input_attachment`.
    pub kind: String,
    /// Descriptor count: 1 for a single resource, `None` for a runtime-sized array.
    pub array_size: Option<u32>,
    /// First IR index of the resource in its kind's numbering (the
    /// `binding=` of `load_ubo`, the `texture=`/`sampler=` of sampling ops, ...).
    pub index: u32,
    /// For combined image samplers: the IR sampler index (textures and samplers are numbered apart).
    pub sampler_index: Option<u32>,
}

/// The push-constant byte range.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct PushConstants {
    pub offset: u32,
    pub size: u32,
}

/// A specialization constant.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SpecConstant {
    pub name: Option<String>,
    /// `bool`, `i32`, `u32`, `f32`, ...
    #[serde(rename = "type")]
    pub ty: String,
    /// The module's default, as the 32-bit pattern.
    pub default: u32,
    /// The value used for this compilation (the caller's override or the default).
    pub value: u32,
}
