//! Instruction selection for Valhall: generic IR in, Valhall machine IR
//! out.
//!
//! Everything Valhall-specific lives in `targets/mali/rules/valhall.rules`,
//! which `lathe_codegen_macros::rules!` checks against the `.isa` spec at
//! build time (every template assembles and decodes back at v9 and v10,
//! its register operands are the rule's placeholders) and turns into the
//! tables [`lathe_isa::select`] applies. Uniforms and constants are read
//! through the FAU where the spec's assembler accepts them (one 64-bit FAU
//! slot per instruction, immediates from the table); where it does not, the
//! next rule moves them into a register. Generic `load_input`/`store_output`
//! become meta inputs and outputs, numbered as [`Selected::interface`]
//! lists them; control flow and phis stay structural (a branch's condition
//! is the 0-or-1 register its compare wrote; legalisation turns it into
//! `BRANCHZ`). Short arrays are promoted to SSA values first
//! ([`lathe_passes::promote_arrays`], on a copy of the shader), the
//! others live in private memory ([`lathe_passes::private_arrays`]). What no
//! rule covers fails with `unsupported: …`.
//!
//! ```
//! use lathe_mali::valhall::{select::select, target::ValhallTarget, MaliModel};
//! use lathe_ir::GenericOp;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_uniform index=5\n  %2:f32 = fadd %0, %1\n  %3:f32 = const 0x3f800000\n  %4:f32 = fmul %2, %3\n  store_output slot=0 comp=0 %4\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! let target = ValhallTarget::new("g610".parse::<MaliModel>().unwrap());
//! let selected = select(&generic, &target).unwrap();
//! let machine = lathe_ir::print(&selected.shader);
//! // The uniform folds into the add as FAU word u5 (source byte 0x85),
//! // 1.0 into the multiply as immediate-table entry 16 (0xd0); the moves
//! // left for them are dead (the backend's `dce` drops them).
//! assert!(machine.contains("= FADD.f32 b=0x85 %0"), "{machine}");
//! assert!(machine.contains("= FMA.f32 c_neg b=0xd0 c=0xc0 %2"), "{machine}");
//!
//! let generic = lathe_ir::parse::<GenericOp>(&arena, "shader fragment\nb0:\n  %0:u32 = const 4\n  %1:u32 = umul_high %0, %0\n  output index=0 %1\n  ret\n").unwrap();
//! let err = select(&generic, &target).unwrap_err();
//! assert_eq!(err.to_string(), "unsupported: umul_high giving u32 (valhall selection)");
//! ```

use lathe_ir::{DerivMode, GenericOp, Op, Shader};
use lathe_isa::select::SelectTarget;
pub use lathe_isa::select::{Interface, Port, SelectError};

use super::generated::{MachineOp, Spec};
use super::target::ValhallTarget;

mod rules {
    lathe_codegen_macros::rules!("rules/valhall.rules", "../../isa/specs/mali/valhall.isa");
}

/// The Valhall rules' generated tables.
pub fn rules() -> &'static lathe_isa::select::Rules {
    &rules::RULES
}

/// A selected shader and where its meta inputs and outputs come from.
#[derive(Debug)]
pub struct Selected<'a> {
    pub shader: Shader<'a, MachineOp>,
    pub interface: Interface,
}

impl SelectTarget<Spec> for ValhallTarget {
    fn generation(&self) -> u32 {
        self.generation_id()
    }

    fn assemble_generated(&self, text: &str) -> Result<u64, lathe_isa::asm_rt::Miss> {
        super::generated::asm::try_assemble(text, self.generation_id())
    }

    fn assemble(&self, text: &str) -> Option<u64> {
        // A word the generated decoder also reads, as `Instr::assemble` gives.
        let g = self.generation_id();
        let word = super::isa().assemble_word(text, g)?;
        super::Instr::decode(word, g).map(|_| word)
    }
}

/// Selects Valhall instructions for `generic` (the result lives in the
/// same arena).
pub fn select<'a>(
    generic: &Shader<'a, GenericOp>,
    target: &ValhallTarget,
) -> Result<Selected<'a>, SelectError> {
    refuse_fine_derivatives(generic)?;
    let placed = place_arrays(generic)?;
    let generic = placed.as_ref().unwrap_or(generic);
    let (shader, interface) =
        lathe_isa::select::select(&rules::RULES, generic, target, generic.arena())?;
    Ok(Selected { shader, interface })
}

/// Fine derivatives read the thread's row or column from the `lane_id`
/// special value, which the simulator holds once for all threads; the
/// derivative rules of `valhall.rules` are coarse and match every mode.
fn refuse_fine_derivatives(generic: &Shader<'_, GenericOp>) -> Result<(), SelectError> {
    let fine = generic.insts_in_order().any(|(_, i)| {
        matches!(
            generic.inst(i).op,
            Op::Opcode(
                GenericOp::Ddx {
                    mode: DerivMode::Fine
                } | GenericOp::Ddy {
                    mode: DerivMode::Fine
                }
            )
        )
    });
    if fine {
        return Err(SelectError::Unsupported(
            "fine derivatives (ddx/ddy mode=fine: lane_id is not modelled per thread) (valhall selection)"
                .into(),
        ));
    }
    Ok(())
}

/// A copy of `generic` (in the same arena) with its short arrays promoted
/// to SSA values (selects for computed indices) and the others in
/// private memory (LOAD/STORE at the thread-local pointer): no rule reads
/// or writes an array. `None` when the shader accesses no array.
fn place_arrays<'a>(
    generic: &Shader<'a, GenericOp>,
) -> Result<Option<Shader<'a, GenericOp>>, SelectError> {
    let accesses_arrays = generic.insts_in_order().any(|(_, i)| {
        matches!(
            generic.inst(i).op,
            Op::Opcode(GenericOp::ArrayLoad { .. } | GenericOp::ArrayStore { .. })
        )
    });
    if !accesses_arrays {
        return Ok(None);
    }
    let mut copy = super::abi::working_copy(generic)?;
    lathe_passes::promote_arrays::promote(&mut copy);
    lathe_passes::private_arrays::lower(&mut copy)
        .map_err(|e| SelectError::Unsupported(format!("{e} (valhall selection)")))?;
    Ok(Some(copy))
}
