//! Real shaders in: SPIR-V (and WGSL, through naga) lowered to Lathe's
//! generic IR, plus the [`Interface`] a driver needs to bind and launch it.
//!
//! GLSL users compile with glslang (`glslangValidator -V shader.frag -o
//! shader.spv`) and hand over the SPIR-V. WGSL goes through naga's WGSL
//! front end, validator and SPIR-V writer, then the same SPIR-V lowering.
//!
//! ```
//! use lathe_frontend::{Options, lower_wgsl};
//! let arena = lathe_ir::Bump::new();
//! let src = "@fragment fn main(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c * 0.5; }";
//! let lowered = lower_wgsl(&arena, src, &Options::default()).unwrap();
//! lathe_ir::validate(&lowered.shader).unwrap();
//! assert_eq!(lowered.interface.inputs[0].location, Some(0));
//! assert!(lathe_ir::print(&lowered.shader).contains("store_output slot=0 comp=3"));
//! ```

mod consts;
pub mod error;
pub mod fuzzing;
pub mod interface;
mod lower;
mod module;
pub mod pipeline;
mod ssa;
pub mod wgsl;

pub use error::Error;
pub use interface::{Interface, PushConstants, Resource, SpecConstant, Varying};
/// The GLSL.std.450 instructions the lowering expands into generic ops.
pub use lower::glsl::LOWERED as GLSL_STD450_LOWERED;

use lathe_ir::{Bump, GenericOp, Shader, Stage};

/// The passes run after lowering unless [`Options::passes`] is false.
pub const DEFAULT_PASSES: &[&str] = &["flatten", "copy-prop", "dce"];

/// What to lower and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Entry point name (needed when several match).
    pub entry: Option<String>,
    /// Entry point stage (needed when several match).
    pub stage: Option<Stage>,
    /// Specialization overrides: `(SpecId or name, value)`. For WGSL the
    /// key is an override's name or `@id`.
    pub spec: Vec<(String, String)>,
    /// Run [`DEFAULT_PASSES`] after lowering.
    pub passes: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            entry: None,
            stage: None,
            spec: Vec::new(),
            passes: true,
        }
    }
}

/// A lowered shader and its interface.
pub struct Lowered<'a> {
    pub shader: Shader<'a, GenericOp>,
    pub interface: Interface,
}

/// Bytes of a `.spv` file as words (either byte order).
pub fn spirv_words(bytes: &[u8]) -> Result<Vec<u32>, Error> {
    if bytes.len() % 4 != 0 {
        return Err(Error::Parse(format!(
            "{} bytes is not a whole number of words",
            bytes.len()
        )));
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if le.first() == Some(&rspirv::spirv::MAGIC_NUMBER.swap_bytes()) {
        return Ok(le.into_iter().map(u32::swap_bytes).collect());
    }
    Ok(le)
}

/// The entry points of a SPIR-V module in declaration order: name and
/// stage (`None` for a stage Lathe does not lower, e.g. geometry).
pub fn spirv_entry_points(words: &[u32]) -> Result<Vec<(String, Option<Stage>)>, Error> {
    use rspirv::spirv::ExecutionModel;
    let module = module::Module::read(words)?;
    Ok(module
        .entry_points
        .iter()
        .map(|e| {
            let stage = match e.model {
                ExecutionModel::Vertex => Some(Stage::Vertex),
                ExecutionModel::Fragment => Some(Stage::Fragment),
                ExecutionModel::GLCompute => Some(Stage::Compute),
                _ => None,
            };
            (e.name.clone(), stage)
        })
        .collect())
}

/// Lower one entry point of a SPIR-V module.
pub fn lower_spirv<'a>(
    arena: &'a Bump,
    words: &[u32],
    opts: &Options,
) -> Result<Lowered<'a>, Error> {
    let module = module::Module::read(words)?;
    // Room for about as many IR instructions as the module has, so the
    // arena's vectors do not regrow (and copy) through the lowering.
    let mut shader = Shader::with_capacity(
        arena,
        Stage::Fragment,
        module.insts.len() * 2,
        module.insts.len() / 8,
    );
    let interface = lower::lower(&module, opts, &mut shader)?;
    lathe_ir::validate(&shader).map_err(|e| Error::Internal(e.to_string()))?;
    if opts.passes {
        let registry = lathe_passes::Registry::<GenericOp>::standard();
        let mut pipeline = registry
            .pipeline(DEFAULT_PASSES)
            .map_err(|e| Error::Internal(e.to_string()))?;
        pipeline
            .run(&mut shader)
            .map_err(|e| Error::Internal(e.to_string()))?;
    }
    Ok(Lowered { shader, interface })
}

/// Lower one entry point of a WGSL source (through naga's SPIR-V writer).
pub fn lower_wgsl<'a>(arena: &'a Bump, source: &str, opts: &Options) -> Result<Lowered<'a>, Error> {
    let words = wgsl::to_spirv(source, opts.entry.as_deref(), opts.stage, &opts.spec)?;
    // naga has applied the overrides; the SPIR-V has no spec constants left.
    let spv_opts = Options {
        spec: Vec::new(),
        ..opts.clone()
    };
    lower_spirv(arena, &words, &spv_opts)
}
