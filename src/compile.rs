//! One call from a shader to a binary: what a driver embeds instead of
//! the CLI. The frontend lowers SPIR-V (or WGSL) to generic IR, then the
//! target's backend compiles it ([`lathe_adreno::ir3::compile`]).
//!
//! ```
//! use lathe::compile::{Source, compile_ir3};
//! use lathe::frontend::Options;
//!
//! let wgsl = "@fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(1.0, 0.5, 0.25, 1.0); }";
//! let gpu = "a630".parse().unwrap();
//! let out = compile_ir3(Source::Wgsl(wgsl), &Options::default(), gpu).unwrap();
//! assert_eq!(out.compiled.words.len(), out.compiled.asm.lines().count());
//! // What the backend does not cover yet fails plainly, never panics.
//! let image = "@group(0) @binding(0) var img: texture_storage_1d<rgba8unorm, write>;\n\
//!              @compute @workgroup_size(1) fn main() { textureStore(img, 0, vec4<f32>(1.0)); }";
//! let err = compile_ir3(Source::Wgsl(image), &Options::default(), gpu).unwrap_err();
//! assert!(err.to_string().starts_with("unsupported:"), "{err}");
//! ```

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileError, CompileOptions, Output, compile_with};
use lathe_adreno::ir3::{GpuModel, target::Ir3Target, verify::Ir3Program};
use lathe_frontend::{Lowered, Options, lower_spirv, lower_wgsl};
use lathe_ir::verify::{self, Report, VerifyError};

/// A shader module.
#[derive(Clone, Copy, Debug)]
pub enum Source<'s> {
    /// SPIR-V words.
    Spirv(&'s [u32]),
    /// WGSL text.
    Wgsl(&'s str),
}

/// Why a shader did not compile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Frontend(#[from] lathe_frontend::Error),
    #[error(transparent)]
    Ir3(#[from] CompileError),
    #[error(transparent)]
    Valhall(#[from] lathe_mali::valhall::compile::CompileError),
    #[error("{0}")]
    Target(String),
    #[error("verify: {0}")]
    Verify(#[from] VerifyError),
}

/// Lowers the entry point `options` selects to generic IR in `arena`.
pub fn lower<'a>(
    arena: &'a lathe_ir::Bump,
    source: Source<'_>,
    options: &Options,
) -> Result<Lowered<'a>, Error> {
    Ok(match source {
        Source::Spirv(words) => lower_spirv(arena, words, options)?,
        Source::Wgsl(text) => lower_wgsl(arena, text, options)?,
    })
}

/// Compiles the entry point `options` selects for the Adreno GPU `gpu`.
pub fn compile_ir3(source: Source<'_>, options: &Options, gpu: GpuModel) -> Result<Output, Error> {
    compile_ir3_with(source, options, gpu, &CompileOptions::default())
}

/// [`compile_ir3`] with backend options (dumps after each pass).
pub fn compile_ir3_with(
    source: Source<'_>,
    options: &Options,
    gpu: GpuModel,
    backend: &CompileOptions,
) -> Result<Output, Error> {
    let arena = lathe_ir::Bump::new();
    compile_lowered_ir3(&lower(&arena, source, options)?, gpu, backend)
}

/// Compiles an already [`lower`]ed shader for the Adreno GPU `gpu`.
pub fn compile_lowered_ir3(
    lowered: &Lowered<'_>,
    gpu: GpuModel,
    backend: &CompileOptions,
) -> Result<Output, Error> {
    let target = Rc::new(Ir3Target::new(gpu).map_err(|e| Error::Target(e.to_string()))?);
    Ok(compile_with(&lowered.shader, &target, backend)?)
}

/// Compiles for `gpu` and checks the program on the generated simulator
/// against the IR interpreter on random inputs ([`lathe_ir::verify`]):
/// what `lathe compile --verify` runs.
///
/// ```
/// use lathe::compile::{Source, verify_ir3};
///
/// let wgsl = "struct P { x: f32, y: f32 }\nvar<immediate> p: P;\n\
///             @fragment fn main() -> @location(0) vec4<f32> {\n\
///             return vec4<f32>(p.x * 2.0, inverseSqrt(p.x * p.y + 1.0), 0.0, 1.0); }";
/// let gpu = "a630".parse().unwrap();
/// let options = lathe_ir::verify::Options { seed: 7, ..Default::default() };
/// let (_, report) = verify_ir3(Source::Wgsl(wgsl), &Default::default(), gpu, &options).unwrap();
/// assert_eq!((report.threads, report.compared), (4, 16));
/// ```
pub fn verify_ir3(
    source: Source<'_>,
    options: &Options,
    gpu: GpuModel,
    verify: &verify::Options,
) -> Result<(Output, Report), Error> {
    let arena = lathe_ir::Bump::new();
    let lowered = lower(&arena, source, options)?;
    let out = compile_lowered_ir3(&lowered, gpu, &CompileOptions::default())?;
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let report = verify::verify(&lowered.shader, &program, &with_workgroup(verify, &lowered))?;
    Ok((out, report))
}

/// Compiles the entry point `options` selects for the Mali Valhall GPU
/// `gpu` ([`lathe_mali::valhall::compile`]).
///
/// ```
/// use lathe::compile::{Source, compile_valhall};
/// use lathe::frontend::Options;
///
/// let wgsl = "struct P { x: f32, y: f32 }\nvar<immediate> p: P;\n\
///             @fragment fn main() -> @location(0) vec4<f32> {\n\
///             return vec4<f32>(p.x * p.y, 0.5, 0.0, 1.0); }";
/// let gpu = "g610".parse().unwrap();
/// let out = compile_valhall(Source::Wgsl(wgsl), &Options::default(), gpu).unwrap();
/// assert!(out.compiled.listing().contains("FMA.f32"), "{}", out.compiled.listing());
/// ```
pub fn compile_valhall(
    source: Source<'_>,
    options: &Options,
    gpu: lathe_mali::valhall::MaliModel,
) -> Result<lathe_mali::valhall::compile::Output, Error> {
    let arena = lathe_ir::Bump::new();
    let lowered = lower(&arena, source, options)?;
    compile_lowered_valhall(&lowered, gpu, &Default::default())
}

/// Compiles an already [`lower`]ed shader for the Mali Valhall GPU `gpu`.
pub fn compile_lowered_valhall(
    lowered: &Lowered<'_>,
    gpu: lathe_mali::valhall::MaliModel,
    backend: &lathe_mali::valhall::compile::CompileOptions,
) -> Result<lathe_mali::valhall::compile::Output, Error> {
    let target = Rc::new(lathe_mali::valhall::target::ValhallTarget::new(gpu));
    Ok(lathe_mali::valhall::compile::compile_with(
        &lowered.shader,
        &target,
        backend,
    )?)
}

/// Compiles for the Mali Valhall GPU `gpu` and verifies the program on
/// the simulator against the interpreter (`lathe compile --verify`).
///
/// ```
/// use lathe::compile::{Source, verify_valhall};
///
/// let wgsl = "@fragment fn main(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> {\n\
///             return c * c.w; }";
/// let gpu = "g610".parse().unwrap();
/// let options = lathe_ir::verify::Options::default();
/// let (_, report) = verify_valhall(Source::Wgsl(wgsl), &Default::default(), gpu, &options).unwrap();
/// assert_eq!((report.threads, report.compared), (4, 16));
/// ```
pub fn verify_valhall(
    source: Source<'_>,
    options: &Options,
    gpu: lathe_mali::valhall::MaliModel,
    verify: &verify::Options,
) -> Result<(lathe_mali::valhall::compile::Output, Report), Error> {
    let arena = lathe_ir::Bump::new();
    let lowered = lower(&arena, source, options)?;
    let out = compile_lowered_valhall(&lowered, gpu, &Default::default())?;
    let report = verify::verify(
        &lowered.shader,
        &lathe_mali::valhall::verify::ValhallProgram::new(&out),
        &with_workgroup(verify, &lowered),
    )?;
    Ok((out, report))
}

/// `options` with the workgroup size the shader declares, unless the
/// caller chose one.
fn with_workgroup(options: &verify::Options, lowered: &Lowered<'_>) -> verify::Options {
    verify::Options {
        workgroup_size: options.workgroup_size.or(lowered.interface.workgroup_size),
        ..*options
    }
}
