//! Instruction selection for ir3: generic IR in, ir3 machine IR out.
//!
//! Everything ir3-specific lives in `targets/adreno/rules/ir3.rules`,
//! which `lathe_codegen_macros::rules!` checks against the `.isa` spec at
//! build time (every template assembles and decodes back, its register
//! operands are the rule's placeholders) and turns into the tables
//! [`lathe_isa::select`] applies. Generic `load_input`/`store_output`
//! become meta inputs and outputs, numbered as [`Selected::interface`]
//! lists them (a fragment shader's inputs are varyings instead, fetched
//! as [`super::abi`] places them); control flow and phis stay structural, so a branch's
//! condition stays the boolean (0 or 1 in a half register) its compare
//! wrote. Short arrays are promoted to SSA values first
//! ([`lathe_passes::promote_arrays`]), the others live in private memory
//! ([`lathe_passes::private_arrays`]). What no rule covers fails with
//! `unsupported: …`.
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, select::select, target::Ir3Target};
//! use lathe_ir::GenericOp;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_uniform index=5\n  %2:f32 = fadd %0, %1\n  %3:f32 = sin %2\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! let target = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let selected = select(&generic, &target).unwrap();
//! let machine = lathe_ir::print(&selected.shader);
//! // The input is a varying fetched at the preloaded barycentrics %0;
//! // the uniform folds into the add as const register c1.y (index 5).
//! assert!(machine.contains("%1:f32 = bary.f full src1=0x2000 %0"), "{machine}");
//! assert!(machine.contains("= add.f full src2=0x1005 %1"), "{machine}");
//! assert!(machine.contains("= sin full %12"), "{machine}");
//!
//! let generic = lathe_ir::parse::<GenericOp>(&arena, "shader fragment\nb0:\n  %0:u32 = load_uniform index=0\n  %1:u32 = umul_high %0, %0\n  output index=0 %1\n  ret\n").unwrap();
//! let err = select(&generic, &target).unwrap_err();
//! assert_eq!(err.to_string(), "unsupported: umul_high giving u32 (ir3 selection)");
//! ```

use lathe_ir::{GenericOp, Op, Shader};
use lathe_isa::machine::MachineSpec;
use lathe_isa::select::SelectTarget;
pub use lathe_isa::select::{Interface, Port, SelectError};

use lathe_passes::ubo_vectors::VECTOR_BYTES;

use super::abi::ConstLayout;
use super::generated::{MachineOp, Spec, asm};
use super::target::Ir3Target;

mod rules {
    lathe_codegen_macros::rules!("rules/ir3.rules", "../../isa/specs/adreno/ir3.isa");
}

/// The ir3 rules' generated tables.
pub fn rules() -> &'static lathe_isa::select::Rules {
    &rules::RULES
}

/// A selected shader and where its meta inputs and outputs come from.
#[derive(Debug)]
pub struct Selected<'a> {
    pub shader: Shader<'a, MachineOp>,
    pub interface: Interface,
    /// What the driver puts in the const file and which meta inputs are
    /// preloaded system values ([`super::abi`]).
    pub consts: ConstLayout,
}

impl SelectTarget<Spec> for Ir3Target {
    fn generation(&self) -> u32 {
        self.generation_id()
    }

    fn assemble_generated(&self, text: &str) -> Result<u64, lathe_isa::asm_rt::Miss> {
        asm::try_assemble(text, self.generation_id())
    }

    fn assemble(&self, text: &str) -> Option<u64> {
        Spec::isa().assemble_word(text, self.generation_id())
    }
}

/// Selects ir3 instructions for `generic` (the result lives in the same
/// arena), after [`super::abi::lower`] has placed its UBO ranges, driver
/// parameters and system values.
pub fn select<'a>(
    generic: &Shader<'a, GenericOp>,
    target: &Ir3Target,
) -> Result<Selected<'a>, SelectError> {
    select_with(generic, target, &SelectOptions::default())
}

/// What [`select_with`] may leave to the hardware where the GPU has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectOptions {
    /// No preamble ([`lathe_passes::preamble`]).
    pub no_preamble: bool,
    /// No texture prefetch ([`super::prefetch`]): every sample is a `sam`.
    pub no_prefetch: bool,
}

/// [`select`], with a preamble and texture prefetches where the GPU runs
/// them unless `options` says otherwise.
pub fn select_with<'a>(
    generic: &Shader<'a, GenericOp>,
    target: &Ir3Target,
    options: &SelectOptions,
) -> Result<Selected<'a>, SelectError> {
    // Generic optimisation first (constant offsets it folds reach the
    // const file), and again once arrays are SSA values.
    let mut optimised = generic.duplicate();
    lathe_passes::optimise::optimise(&mut optimised);
    // Constant tables indexed at run time are read from a UBO, each
    // element in a vec4 of its own (ldc picks the word by an immediate).
    let constant_data =
        lathe_passes::constant_data::move_constant_arrays(&mut optimised, VECTOR_BYTES)
            .map_err(SelectError::Unsupported)?;
    // Short arrays become SSA values (selects for computed indices), the
    // others private memory (ldp/stp): no rule reads or writes an array.
    // Before the ABI lowering, which moves float constants to the const
    // file: the optimisation then still sees the elements' constants
    // (a filter kernel's zero weights drop their products and loads).
    let promoted = lathe_passes::promote_arrays::promote(&mut optimised);
    let private = lathe_passes::private_arrays::lower(&mut optimised)
        .map_err(|e| SelectError::Unsupported(format!("{e} (ir3 selection)")))?;
    if constant_data.is_some() || promoted || private {
        lathe_passes::optimise::optimise(&mut optimised);
    }
    let (mut lowered, mut consts) = super::abi::lower(&optimised, target)?;
    consts.constant_data = constant_data;
    // ldc addresses UBOs in vec4s: loads whose word in the vec4 is known
    // read it directly (the optimisation below shares their indices). A
    // compute shader's ids computed from a declared workgroup size fold.
    let vectors = lathe_passes::ubo_vectors::split_ubo_offsets(&mut lowered);
    if vectors || lowered.workgroup_size.is_some() {
        lathe_passes::optimise::optimise(&mut lowered);
    }
    // One ldc reads the words of a vec4 the shader uses (once value
    // numbering has given them one index).
    lathe_passes::ubo_vector_loads::merge_vector_loads(&mut lowered);
    // One ldib reads up to four consecutive storage-buffer words.
    lathe_passes::ssbo_vector_loads::merge_ssbo_loads(&mut lowered);
    // One stl writes up to four consecutive shared-memory words.
    lathe_passes::shared_vector_stores::merge_shared_stores(&mut lowered);
    // Samples the hardware can run before the shader starts become
    // preloaded registers.
    if !options.no_prefetch {
        super::prefetch::prefetch(&mut lowered, &mut consts, &target.prefetch_limits());
    }
    // The texture unit takes integral array layers.
    super::layers::round_layers(&mut lowered);
    // The hardware reads outputs from registers when the program ends:
    // each output is written once, by its final value, before the return.
    lathe_passes::sink_outputs::sink_outputs(&mut lowered).map_err(|e| {
        let text = e.to_string();
        SelectError::Unsupported(text.trim_start_matches("unsupported: ").to_string())
    })?;
    // Uniform expressions move into a preamble the first wave runs once
    // (a6xx on), its words after the const layout's; the preloaded
    // registers (meta inputs, vertex attributes) are read before it.
    if let Some(limit) = target.preamble_words().filter(|_| !options.no_preamble) {
        let first_word = consts.end_word().next_multiple_of(4);
        let budget = lathe_passes::preamble::Budget {
            first_word,
            words: limit.saturating_sub(first_word),
        };
        consts.preamble = lathe_passes::preamble::hoist(&mut lowered, budget, |op| {
            matches!(
                op,
                Op::Input { .. } | Op::Opcode(GenericOp::LoadInput { .. })
            )
        });
    }
    // Constant shared and private addresses: a base register the
    // accesses share plus the offset they encode.
    super::memory_offsets::split_constant_addresses(&mut lowered, target.memory_offset_limit());
    let (shader, interface) =
        lathe_isa::select::select(&rules::RULES, &lowered, target, generic.arena())?;
    Ok(Selected {
        shader,
        interface,
        consts,
    })
}
