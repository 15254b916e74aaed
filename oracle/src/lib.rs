//! A Vulkan oracle for Lathe's differential tests (dev-only, not published).
//!
//! It runs SPIR-V on Mesa's lavapipe — a conformant Vulkan implementation
//! on the CPU — through [`ash`], so tests can compare what a real driver
//! computes with what Lathe's IR interpreter computes for the same shader
//! and inputs. The Vulkan loader is opened at run time
//! ([`ash::Entry::load`]); when it or lavapipe is missing, [`Oracle::new`]
//! returns an error saying to install them
//! (`apt-get install -y mesa-vulkan-drivers libvulkan1`; `.ci/run` does so).
//!
//! Two kinds of job:
//!
//! - [`ComputeJob`]: a compute entry point with specialization constants,
//!   buffers, textures and storage images by set/binding, push constants
//!   and a workgroup count; returns every storage buffer's and storage
//!   image's final contents.
//! - [`FragmentJob`]: a fragment entry point drawn on one full-screen
//!   triangle by a built-in vertex shader whose varyings are given per
//!   vertex ([`Varying`]), into 32-bit RGBA targets; returns every target's
//!   texels.
//!
//! Every value crosses the API as raw 32-bit words, so results can be
//! compared bit for bit.
//!
//! ```no_run
//! use lathe_oracle::{ComputeJob, Oracle, Resource, ResourceBinding};
//! # fn spirv() -> Vec<u32> { vec![] }
//! let oracle = Oracle::new()?;
//! let words = spirv(); // a compute shader doubling `data[id]` at set 0, binding 0
//! let out = oracle.run_compute(&ComputeJob {
//!     spirv: &words,
//!     entry_point: "main",
//!     specialization: &[],
//!     resources: &[ResourceBinding::new(0, 0, Resource::StorageBuffer(vec![1, 2, 3, 4]))],
//!     push_constants: &[],
//!     workgroups: [4, 1, 1],
//! })?;
//! assert_eq!(out.storage_buffers[&(0, 0)], vec![2, 4, 6, 8]);
//! # Ok::<(), lathe_oracle::OracleError>(())
//! ```

mod compute;
mod device;
mod gpu;
mod render;
mod vertex;

pub use device::Oracle;
use std::collections::BTreeMap;

/// What to install when the oracle cannot run.
pub const INSTALL_HINT: &str =
    "install lavapipe and the Vulkan loader: apt-get install -y mesa-vulkan-drivers libvulkan1";

/// Why a job could not run.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("the Vulkan loader (libvulkan.so.1) could not be opened: {0}; {INSTALL_HINT}")]
    NoLoader(String),
    #[error("no lavapipe (llvmpipe) device among the Vulkan devices [{found}]; {INSTALL_HINT}")]
    NoLavapipe { found: String },
    #[error("lavapipe reports Vulkan {found}; the oracle needs 1.3 (Mesa 22.3 or later)")]
    OldDriver { found: String },
    #[error("{call} failed: {result}")]
    Vulkan {
        call: &'static str,
        result: ash::vk::Result,
    },
    #[error("invalid job: {0}")]
    InvalidJob(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("the built-in vertex shader did not compile: {0}")]
    VertexShader(String),
}

/// The scalar kind of a varying, texel or render target component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    Float,
    Sint,
    Uint,
}

/// A 32-bit specialization constant value by its `SpecId` (booleans are
/// 0 or 1, as `VkBool32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecConstant {
    pub id: u32,
    pub bits: u32,
}

/// A resource bound at `set`/`binding`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceBinding {
    pub set: u32,
    pub binding: u32,
    pub resource: Resource,
}

impl ResourceBinding {
    pub fn new(set: u32, binding: u32, resource: Resource) -> Self {
        ResourceBinding {
            set,
            binding,
            resource,
        }
    }
}

/// A descriptor's contents.
#[derive(Clone, Debug, PartialEq)]
pub enum Resource {
    /// A storage buffer's initial words (read back after the job).
    StorageBuffer(Vec<u32>),
    /// A uniform buffer's words.
    UniformBuffer(Vec<u32>),
    /// A texture with its sampler in one descriptor (GLSL `sampler2D`).
    CombinedImageSampler(Texture, Sampler),
    /// A texture alone (WGSL `texture_2d`).
    SampledImage(Texture),
    /// A sampler alone (WGSL `sampler`).
    Sampler(Sampler),
    /// A storage image (GLSL `image2D`, WGSL `texture_storage_2d`) of the
    /// given format, read back after a compute job
    /// ([`ComputeOutput::storage_images`]). Not for depth textures.
    StorageImage(Texture, StorageFormat),
}

/// A storage image's texel format. Texels cross the API as raw bits of
/// the format's components, one per word: 32-bit components as they are
/// (of the texture's [`ScalarKind`]), 8-bit unorm components as `0..=255`,
/// 16-bit float components as their half-precision bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageFormat {
    /// Four 32-bit components (`R32G32B32A32_*`).
    Rgba32,
    /// One 32-bit component (`R32_*`; the format of image atomics); the
    /// other words of a texel are ignored and read back as 0.
    R32,
    /// `R8G8B8A8_UNORM` (the texture's kind must be float).
    Rgba8Unorm,
    /// `R16G16B16A16_SFLOAT` (the texture's kind must be float).
    Rgba16Float,
}

/// How a texture is viewed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureDim {
    D2,
    /// `layers` array layers.
    D2Array,
    /// Six faces in `layers` (+X, −X, +Y, −Y, +Z, −Z), square.
    Cube,
    /// `layers` is the depth.
    D3,
}

/// A single-level RGBA texture of 32-bit components (`R32G32B32A32_SFLOAT`,
/// `_SINT` or `_UINT` by `kind`), or a depth texture (`D32_SFLOAT`), texels
/// as raw bits.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    pub dim: TextureDim,
    pub kind: ScalarKind,
    /// A depth texture (`D32_SFLOAT`, `kind` float): component 0 of each
    /// texel is its depth, the others are ignored (a depth texture reads
    /// as `(d, 0, 0, 1)`).
    pub depth: bool,
    pub width: u32,
    pub height: u32,
    /// Array layers, cube faces (6) or depth; 1 for a plain 2D texture.
    pub layers: u32,
    /// `width * height * layers` texels: row-major, layer after layer.
    pub texels: Vec<[u32; 4]>,
}

impl Texture {
    /// A plain 2D float texture from its texels (row-major).
    pub fn rgba32f(width: u32, height: u32, texels: &[[f32; 4]]) -> Self {
        Texture {
            dim: TextureDim::D2,
            kind: ScalarKind::Float,
            depth: false,
            width,
            height,
            layers: 1,
            texels: texels.iter().map(|t| t.map(f32::to_bits)).collect(),
        }
    }
}

/// How coordinates outside `[0, 1]` are wrapped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AddressMode {
    #[default]
    ClampToEdge,
    Repeat,
    MirroredRepeat,
}

/// A sampler: always nearest filtering (magnification, minification and
/// mipmap), no anisotropy, normalized coordinates — the filtering whose
/// result is an exact texel value — with an optional depth comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampler {
    pub address_mode: AddressMode,
    /// Depth comparison `reference OP texel` (for depth textures sampled
    /// with a reference value); `None` samples texels as they are.
    pub compare: Option<CompareOp>,
}

/// A sampler's depth-comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Never,
    Less,
    Equal,
    LessOrEqual,
    Greater,
    NotEqual,
    GreaterOrEqual,
    Always,
}

/// A compute dispatch.
#[derive(Clone, Copy, Debug)]
pub struct ComputeJob<'a> {
    /// The module's words.
    pub spirv: &'a [u32],
    pub entry_point: &'a str,
    pub specialization: &'a [SpecConstant],
    pub resources: &'a [ResourceBinding],
    /// The push-constant block's words (offset 0), empty when none.
    pub push_constants: &'a [u32],
    /// Workgroups along x, y, z.
    pub workgroups: [u32; 3],
}

/// What a compute job left behind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeOutput {
    /// Every storage buffer's final words by `(set, binding)`.
    pub storage_buffers: BTreeMap<(u32, u32), Vec<u32>>,
    /// Every storage image's final texels by `(set, binding)`, in the
    /// layout and encoding of [`Texture::texels`] and [`StorageFormat`].
    pub storage_images: BTreeMap<(u32, u32), Vec<[u32; 4]>>,
}

/// A fragment shader input fed by the built-in vertex shader.
///
/// The triangle's vertices are, in framebuffer pixels, `(0, 0)`,
/// `(2W, 0)` and `(0, 2H)` for a `W`×`H` target (clip-space `(-1,-1)`,
/// `(3,-1)`, `(-1,3)`, all at `w = 1`, `z = 0.5`), so every pixel is
/// covered once. A smooth varying with vertex values `v0`, `v1`, `v2`
/// equals `v0 + (v1-v0)·x/(2W) + (v2-v0)·y/(2H)` at the pixel centre
/// `(x, y)`; [`Varying::affine`] builds one from that formula.
#[derive(Clone, Debug, PartialEq)]
pub struct Varying {
    pub location: u32,
    pub kind: ScalarKind,
    /// 1 to 4.
    pub components: u32,
    /// Flat-shaded (the provoking vertex 0's value everywhere); integer
    /// varyings must be flat.
    pub flat: bool,
    /// Raw bits per vertex and component.
    pub vertices: [[u32; 4]; 3],
}

impl Varying {
    /// A smooth float varying equal to `base + dx·x + dy·y` at pixel centre
    /// `(x, y)` of a `width`×`height` target. With dyadic `base`, `dx`, `dy`
    /// (small powers of two) every value involved is exact in `f32`.
    pub fn affine(
        location: u32,
        width: u32,
        height: u32,
        base: [f32; 4],
        dx: [f32; 4],
        dy: [f32; 4],
        components: u32,
    ) -> Self {
        let (w2, h2) = (2.0 * width as f32, 2.0 * height as f32);
        let at = |fx: f32, fy: f32| {
            std::array::from_fn(|c| (base[c] + dx[c] * fx * w2 + dy[c] * fy * h2).to_bits())
        };
        Varying {
            location,
            kind: ScalarKind::Float,
            components,
            flat: false,
            vertices: [at(0.0, 0.0), at(1.0, 0.0), at(0.0, 1.0)],
        }
    }
}

/// A fragment draw.
#[derive(Clone, Copy, Debug)]
pub struct FragmentJob<'a> {
    pub spirv: &'a [u32],
    pub entry_point: &'a str,
    pub specialization: &'a [SpecConstant],
    pub resources: &'a [ResourceBinding],
    pub push_constants: &'a [u32],
    /// The fragment shader's inputs by location.
    pub varyings: &'a [Varying],
    /// One RGBA target per output location `0..targets.len()`, of the
    /// given component kind.
    pub targets: &'a [ScalarKind],
    pub width: u32,
    pub height: u32,
    /// Every target's initial texel (raw bits), left where a fragment is
    /// discarded.
    pub clear: [u32; 4],
}

/// The rendered targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub width: u32,
    pub height: u32,
    /// Per target location, `width * height` texels, row-major from the
    /// top-left pixel (framebuffer `(0, 0)`).
    pub targets: Vec<Vec<[u32; 4]>>,
}

impl Rendered {
    /// The texel of target `location` at pixel `(x, y)`.
    pub fn texel(&self, location: usize, x: u32, y: u32) -> [u32; 4] {
        self.targets[location][(y * self.width + x) as usize]
    }
}
