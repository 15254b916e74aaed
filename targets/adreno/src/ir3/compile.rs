//! The ir3 backend end to end: generic IR in, an emitted program out.
//!
//! [`compile`] places UBO ranges, driver parameters and system values
//! ([`super::abi`]), runs instruction selection (the rules in
//! `targets/adreno/rules/ir3.rules`), the shared backend passes
//! ([`BACKEND_PASSES`]: dead code, grouping, depths, scheduling, register
//! allocation with the [`Ir3Target`]'s facts), then legalisation and
//! emission. A
//! driver that already has generic IR calls this; `lathe::compile` wraps
//! it with the SPIR-V/WGSL frontend.
//!
//! ```
//! use lathe_adreno::ir3::{compile::compile, target::Ir3Target, GpuModel};
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_uniform index=0\n  %1:f32 = load_uniform index=1\n  %2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let target = std::rc::Rc::new(Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap());
//! let out = compile(&generic, &target).unwrap();
//! assert!(out.asm.contains("mul.f"), "{}", out.asm);
//! assert!(out.asm.trim_end().ends_with("end"));
//! ```

use std::rc::Rc;

use lathe_ir::{GenericOp, Shader};
use lathe_passes::manager::{PassError, Registry};

use super::emit::{Compiled, EmitError, emit_program};
use super::generated::MachineOp;
use super::select::{Interface, SelectOptions, select_with};
use super::target::Ir3Target;
use lathe_isa::select::SelectError;

/// The shared passes between selection and legalisation, in order
/// (`fold-copies` reads past bit casts, `fold-sources` reads const
/// registers where the encodings take them; `dce` then removes the moves
/// that no longer have readers).
pub const BACKEND_PASSES: &[&str] = &[
    "fold-copies",
    "fold-sources",
    "dce",
    "group",
    "depth",
    "sched",
    "ra",
];

/// Why a shader did not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error(transparent)]
    Emit(#[from] EmitError),
}

/// Options of one [`compile_with`] run.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Keep the machine IR printed after selection and after every
    /// backend pass (`lathe compile --print-after all`).
    pub dumps: bool,
    /// Keep every expression in the main part: no preamble, as on GPUs
    /// without one (Mesa's `IR3_SHADER_DEBUG=nopreamble`; `lathe compile
    /// --no-preamble`).
    pub no_preamble: bool,
    /// Sample every texture in the shader: no texture prefetch
    /// ([`super::prefetch`]), as on GPUs without one.
    pub no_prefetch: bool,
}

/// A compiled shader and, when asked for, the machine IR after each stage.
#[derive(Debug)]
pub struct Output {
    pub compiled: Compiled,
    /// Where each meta input and output index of `compiled.interface`
    /// comes from in the generic shader (a slot, a meta index).
    pub ports: Interface,
    /// `(stage, machine IR text)` after `select` and each backend pass.
    pub dumps: Vec<(&'static str, String)>,
}

/// Compiles `generic` for `target`.
pub fn compile(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<Ir3Target>,
) -> Result<Compiled, CompileError> {
    Ok(compile_with(generic, target, &CompileOptions::default())?.compiled)
}

/// [`compile`] with options.
pub fn compile_with(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<Ir3Target>,
    options: &CompileOptions,
) -> Result<Output, CompileError> {
    let mut dumps = Vec::new();
    let select = SelectOptions {
        no_preamble: options.no_preamble,
        no_prefetch: options.no_prefetch,
    };
    let selected = select_with(generic, target, &select)?;
    let mut shader = selected.shader;
    if options.dumps {
        dumps.push(("select", lathe_ir::print(&shader)));
    }
    let registry = Registry::<MachineOp>::with_target(target.clone());
    let mut pipeline = registry.pipeline(BACKEND_PASSES)?;
    pipeline.print_after_all = options.dumps;
    for record in pipeline.run(&mut shader)? {
        if let Some(dump) = record.dump {
            dumps.push((record.name, dump));
        }
    }
    let compiled = emit_program(&mut shader, target, selected.consts, &selected.interface)?;
    Ok(Output {
        compiled,
        ports: selected.interface,
        dumps,
    })
}
