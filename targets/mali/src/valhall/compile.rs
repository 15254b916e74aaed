//! The Valhall backend end to end: generic IR in, an emitted program out.
//!
//! [`compile`] runs instruction selection (the rules in
//! `targets/mali/rules/valhall.rules`), the shared backend passes
//! ([`BACKEND_PASSES`]: grouping, depths, scheduling) and register
//! allocation with the [`ValhallTarget`]'s facts, then legalisation
//! (branches, dependency slots, waits, the end of the shader) and
//! emission. Allocation first aims at the register count that keeps the
//! most threads in flight (32 of the 64 registers: the spec's occupancy
//! steps); only a shader that would spill there is allocated again over
//! the whole file. A driver that already has generic IR calls this;
//! `lathe::compile` wraps it with the SPIR-V/WGSL frontend.
//!
//! ```
//! use lathe_mali::valhall::{compile::compile, target::ValhallTarget, MaliModel};
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_uniform index=0\n  %1:f32 = load_uniform index=1\n  %2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let target = std::rc::Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
//! let out = compile(&generic, &target).unwrap();
//! assert!(out.listing().contains("FMA.f32"), "{}", out.listing());
//! assert_eq!(out.threads, 2);
//! ```

use std::rc::Rc;

use lathe_ir::{GenericOp, Shader};
use lathe_isa::select::SelectError;
use lathe_passes::legalise::LegaliseError;
use lathe_passes::manager::{PassError, Registry};
use lathe_passes::ra::{RaError, RaOptions, allocate};
use lathe_passes::target::TargetFacts;

use super::abi::{self, Io};
use super::emit::{Compiled, EmitError, emit};
use super::generated::MachineOp;
use super::select::{Port, select};
use super::target::ValhallTarget;

/// The shared passes between selection and register allocation, in
/// order.
pub const BACKEND_PASSES: &[&str] = &[
    "fold-copies",
    "fold-sources",
    "dce",
    "group",
    "depth",
    "sched",
];

/// Why a shader did not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error(transparent)]
    Ra(#[from] RaError),
    #[error(transparent)]
    Legalise(#[from] LegaliseError),
    #[error(transparent)]
    Emit(#[from] EmitError),
}

/// Options of one [`compile_with`] run.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Keep the machine IR printed after selection, every backend pass,
    /// `ra` and `legalise` (`lathe compile --print-after all`).
    pub dumps: bool,
}

/// A compiled shader, where its inputs and outputs live and, when asked
/// for, the machine IR after each stage.
#[derive(Debug)]
pub struct Output {
    pub compiled: Compiled,
    /// Each meta input: where the value comes from and the general
    /// register the driver preloads it into.
    pub inputs: Vec<(Port, u32)>,
    /// Each meta output: what it is and the register holding it when the
    /// shader ends.
    pub outputs: Vec<(Port, u32)>,
    /// The varyings, attributes, render targets and preloaded registers
    /// the shader's messages use ([`abi`]).
    pub io: Io,
    /// `(stage, machine IR text)` after `select`, each backend pass, `ra`
    /// and `legalise`.
    pub dumps: Vec<(&'static str, String)>,
    /// A vertex shader with varyings: the IDVS varying shader (Mesa's
    /// secondary shader), this being the position shader
    /// ([`abi::vertex`]).
    pub varying: Option<Box<Output>>,
}

impl Output {
    /// The statistics of the whole shader: this one's, plus the varying
    /// shader's for an IDVS pair ([`super::stats::Stats::with_varying`]).
    pub fn stats(&self) -> super::stats::Stats {
        match &self.varying {
            Some(v) => self.compiled.stats.with_varying(&v.compiled.stats),
            None => self.compiled.stats.clone(),
        }
    }
}

/// Compiles `generic` for `target`.
pub fn compile(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<ValhallTarget>,
) -> Result<Compiled, CompileError> {
    Ok(compile_with(generic, target, &CompileOptions::default())?.compiled)
}

/// [`compile`] with options. A vertex shader is compiled as the IDVS
/// position shader and, when it has varyings, the varying shader
/// ([`abi::vertex`]).
pub fn compile_with(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<ValhallTarget>,
    options: &CompileOptions,
) -> Result<Output, CompileError> {
    use abi::vertex::{self, Variant};
    if generic.stage != lathe_ir::Stage::Vertex {
        return compile_variant(generic, target, options);
    }
    // Unsupported outputs fail before either variant is compiled.
    vertex::output_slots(generic)?;
    let has_varyings = vertex::has_varyings(generic);
    let position = vertex::specialise(generic, Variant::Position)?;
    let mut out = compile_variant(position.as_ref().unwrap_or(generic), target, options)?;
    out.io.variant = Some(Variant::Position);
    out.compiled.stats.variant = Some(Variant::Position);
    if has_varyings {
        let varying = vertex::specialise(generic, Variant::Varying)?;
        let mut v = compile_variant(varying.as_ref().unwrap_or(generic), target, options)?;
        v.io.variant = Some(Variant::Varying);
        v.compiled.stats.variant = Some(Variant::Varying);
        out.io.varyings = v.io.varyings.clone();
        out.varying = Some(Box::new(v));
    }
    Ok(out)
}

/// One shader (or one IDVS variant) compiled.
fn compile_variant(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<ValhallTarget>,
    options: &CompileOptions,
) -> Result<Output, CompileError> {
    // UBO words at constant offsets are read from the FAU.
    let fau_words = target
        .files()
        .iter()
        .find(|f| f.kind == lathe_passes::target::FileKind::Uniform)
        .map_or(0, |f| f.units);
    // Generic optimisation first: constant offsets it folds become FAU
    // pushes.
    let mut optimised = generic.duplicate();
    lathe_passes::optimise::optimise(&mut optimised);
    // Constant tables indexed at run time are read from a UBO (LOAD at
    // the computed offset), their words packed.
    let constant_data = lathe_passes::constant_data::move_constant_arrays(&mut optimised, 4)
        .map_err(SelectError::Unsupported)?;
    if constant_data.is_some() {
        lathe_passes::optimise::optimise(&mut optimised);
    }
    let generic = &optimised;
    // System values packed in preloaded registers are unpacked first.
    let unpacked = abi::unpack_preloads(generic)?;
    let generic = unpacked.as_ref().unwrap_or(generic);
    let (pushed_shader, pushed) = match abi::push_ubos(generic, fau_words)? {
        Some((shader, words)) => (Some(shader), words),
        None => (None, Vec::new()),
    };
    let generic = pushed_shader.as_ref().unwrap_or(generic);
    // Buffers read or written in memory get base addresses in the FAU.
    let (addressed_shader, addresses, sizes) = match abi::address_buffers(generic, fau_words)? {
        Some((shader, addresses, sizes)) => (Some(shader), addresses, sizes),
        None => (None, Vec::new(), Vec::new()),
    };
    let generic = addressed_shader.as_ref().unwrap_or(generic);
    // Texture handles follow the words pushed so far (uniforms, pushed
    // UBO words, buffer addresses and sizes).
    let first_free = std::iter::once(abi::uniform_words(generic))
        .chain(addresses.iter().map(|a| a.fau + 2))
        .chain(sizes.iter().map(|s| s.fau + 1))
        .max()
        .unwrap_or(0);
    let (handled_shader, textures) =
        match abi::textures::push_texture_handles(generic, first_free, fau_words)? {
            Some((shader, handles)) => (Some(shader), handles),
            None => (None, Vec::new()),
        };
    let generic = handled_shader.as_ref().unwrap_or(generic);
    // Texture and image sizes follow the handles.
    let first_free = textures
        .iter()
        .map(|h| h.fau + 2)
        .max()
        .unwrap_or(first_free);
    let (sized_shader, texture_sizes) =
        match abi::textures::push_sizes(generic, first_free, fau_words)? {
            Some((shader, words)) => (Some(shader), words),
            None => (None, Vec::new()),
        };
    let generic = sized_shader.as_ref().unwrap_or(generic);
    // Dispatch values no register holds follow the sizes.
    let first_free = texture_sizes
        .iter()
        .map(|w| w.fau + abi::textures::SIZE_WORDS)
        .max()
        .unwrap_or(first_free);
    let (driver_shader, driver_words) =
        match abi::push_driver_words(generic, first_free, fau_words)? {
            Some((shader, words)) => (Some(shader), words),
            None => (None, Vec::new()),
        };
    let generic = driver_shader.as_ref().unwrap_or(generic);
    // Constants outside the immediate table follow the dispatch values.
    let first_free = driver_words
        .iter()
        .map(|w| w.fau + 1)
        .max()
        .unwrap_or(first_free);
    let fau = FauRoom {
        first_free,
        words: fau_words,
    };
    let mut out = compile_goal(generic, target, options, fau)?;
    out.io.pushed = pushed;
    out.io.textures = textures;
    out.io.texture_sizes = texture_sizes;
    out.io.addresses = addresses;
    out.io.sizes = sizes;
    out.io.driver_words = driver_words;
    out.io.constant_data = constant_data;
    Ok(out)
}

/// The FAU words left for constants: from `first_free` up to `words`.
#[derive(Clone, Copy, Debug)]
struct FauRoom {
    first_free: u32,
    words: u32,
}

/// [`compile_with`] after the UBO push.
fn compile_goal(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<ValhallTarget>,
    options: &CompileOptions,
    fau: FauRoom,
) -> Result<Output, CompileError> {
    // The thread count of the smallest footprint is the goal; a shader
    // that spills under it is compiled again with the whole file.
    let general = target.general_file();
    let best = target
        .occupancy_steps(general)
        .into_iter()
        .map(|units| target.occupancy(general, units))
        .max();
    if let Some(out) = run(generic, target, options, fau, best)? {
        return Ok(out);
    }
    match run(generic, target, options, fau, None)? {
        Some(out) => Ok(out),
        None => unreachable!("a run without a goal keeps its result"),
    }
}

/// One compilation, register allocation keeping `goal` threads; `None`
/// when that made it spill.
fn run(
    generic: &Shader<'_, GenericOp>,
    target: &Rc<ValhallTarget>,
    options: &CompileOptions,
    fau: FauRoom,
    goal: Option<u32>,
) -> Result<Option<Output>, CompileError> {
    let mut dumps = Vec::new();
    let selected = select(generic, target)?;
    let interface = selected.interface;
    let mut shader = selected.shader;
    let mut io = abi::lower(&mut shader, &interface, generic, target)?;
    io.constants = abi::constants::push_constants(&mut shader, target, fau.first_free, fau.words);
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
    let allocation = allocate(
        &mut shader,
        target.as_ref(),
        RaOptions {
            occupancy_goal: goal,
            ..RaOptions::default()
        },
    )?;
    if goal.is_some() && allocation.spills > 0 {
        return Ok(None);
    }
    if options.dumps {
        dumps.push(("ra", lathe_ir::print(&shader)));
    }
    target.legalise(&mut shader)?;
    if options.dumps {
        dumps.push(("legalise", lathe_ir::print(&shader)));
    }
    let compiled = emit(&shader, target)?;
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        let (list, ports, index, value) = match d.op {
            lathe_ir::Op::Input { index } => (&mut inputs, &interface.inputs, index, d.result),
            lathe_ir::Op::Output { index } => (
                &mut outputs,
                &interface.outputs,
                index,
                d.args.first().copied(),
            ),
            _ => continue,
        };
        if let (Some(&port), Some(reg)) = (
            ports.get(index as usize),
            value.and_then(|v| shader.value_reg(v)),
        ) {
            list.push((port, u32::from(reg.unit)));
        }
    }
    Ok(Some(Output {
        compiled,
        inputs,
        outputs,
        io,
        dumps,
        varying: None,
    }))
}
