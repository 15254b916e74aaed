//! The whole Valhall backend checked by execution: a generic program runs
//! in the IR interpreter and, compiled for a Mali model
//! ([`compile`](super::compile)), as one program over several threads on
//! the generated simulator with its hazard detection on. The body of the
//! `valhall_select` test and of the `compile_valhall` fuzz target
//! ([`compile_body`]).

use std::rc::Rc;

use arbitrary::Unstructured;
use lathe_ir::interp::{self, Invocation, Limits};
use lathe_ir::{GenericOp, Op, Shader};
use lathe_passes::fuzzing::select::{Vocabulary, agree, random_program};
use lathe_passes::fuzzing::{GenLimits, generate};

use lathe_ir::Memory;
use lathe_ir::verify::Executor;

use super::abi::RENDER_TARGETS;
use super::compile::{CompileError, CompileOptions, compile_with};
use super::select::SelectError;
use super::target::ValhallTarget;
use super::verify::ValhallProgram;
use super::{MaliModel, assemble};

/// How outputs are compared.
#[derive(Clone, Copy, Debug)]
pub enum Compare {
    /// Every output bit for bit, except float output slots from this one
    /// on, which agree within a tolerance (approximated values).
    From(u16),
    /// Not at all: approximated values may steer control flow; only the
    /// compilation and a hazard-free run are checked.
    Nothing,
}

/// What one check did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Compiled, ran and (as asked) compared.
    Ran,
    /// Some thread hits undefined behaviour in the interpreter.
    Undefined,
    /// The backend does not cover the program (`unsupported: …`).
    Unsupported(String),
}

/// Runs `generic` with one invocation per thread (a multiple of four
/// threads: fragment quads) in the interpreter and compiled for `model`
/// on the simulator; `Err` names the first difference, hazard or
/// compilation failure that is not `unsupported:`.
pub fn differential(
    generic: &Shader<'_, GenericOp>,
    threads: &[Invocation],
    model: MaliModel,
    compare: Compare,
) -> Result<Checked, String> {
    lathe_ir::validate(generic).map_err(|e| format!("invalid program: {e:?}"))?;
    let arena = lathe_ir::Bump::new();
    let generic = &past_render_targets_as_meta_outputs(&arena, generic)?;
    let mut want = Vec::new();
    for t in threads {
        match interp::run(generic, t, Limits::default()) {
            Ok(o) => want.push(o),
            Err(e) if e.is_undefined() => return Ok(Checked::Undefined),
            Err(e) => return Err(format!("interpreter: {e}")),
        }
    }
    let target = Rc::new(ValhallTarget::new(model));
    let out = match compile_with(generic, &target, &CompileOptions::default()) {
        Ok(out) => out,
        Err(CompileError::Select(SelectError::Unsupported(m))) => {
            return Ok(Checked::Unsupported(m));
        }
        Err(e) if e.to_string().starts_with("unsupported:") => {
            return Ok(Checked::Unsupported(e.to_string()));
        }
        Err(e) => return Err(format!("{model}: {e}")),
    };
    let compiled = &out.compiled;
    let listing = compiled.listing();
    for (word, text) in compiled.words.iter().zip(&compiled.disassembly) {
        if assemble(text, compiled.model.arch()) != Ok(*word) {
            return Err(format!("`{text}` does not assemble back\n{listing}"));
        }
    }
    let got = ValhallProgram::new(&out)
        .execute(threads, &mut Memory::default())
        .map_err(|e| format!("{model}: {e}\n{listing}"))?;
    let Compare::From(approximate) = compare else {
        return Ok(Checked::Ran);
    };
    for (lane, (w, g)) in want.iter().zip(&got).enumerate() {
        let slots = w.outputs.iter().map(|(&(slot, comp), &v)| {
            (
                slot,
                format!("slot {slot}.{comp}"),
                v,
                g.outputs.get(&(slot, comp)),
            )
        });
        let metas = w.meta_outputs.iter().map(|(&k, &v)| {
            let slot = u16::try_from(k).unwrap_or(u16::MAX);
            (
                slot,
                format!("slot {slot} (in a register)"),
                v,
                g.meta_outputs.get(&k),
            )
        });
        for (slot, what, (ty, w), g) in slots.chain(metas) {
            let Some(&(_, g)) = g else {
                return Err(format!(
                    "{model} thread {lane}: output {what} not written\n{listing}"
                ));
            };
            let mask = if ty.scalar.bits() <= 16 {
                0xffff
            } else {
                u32::MAX
            };
            if !agree(ty, w & mask, g & mask, slot >= approximate) {
                return Err(format!(
                    "{model} thread {lane}: output {what} ({ty}): interpreter {w:#x}, simulator {g:#x}\n{listing}"
                ));
            }
        }
    }
    Ok(Checked::Ran)
}

/// `generic` with its `store_output`s to slots past the render targets
/// made meta outputs of the slot's number (a register at the end): the
/// selection generator writes its approximated values to slots from 16
/// on, more than a fragment shader blends.
fn past_render_targets_as_meta_outputs<'a>(
    arena: &'a lathe_ir::Bump,
    generic: &Shader<'_, GenericOp>,
) -> Result<Shader<'a, GenericOp>, String> {
    let mut copy = lathe_ir::parse::<GenericOp>(arena, &lathe_ir::print(generic))
        .map_err(|e| format!("the program does not read back: {e}"))?;
    let stores: Vec<(lathe_ir::Inst, u16)> = copy
        .insts_in_order()
        .filter_map(|(_, i)| match copy.inst(i).op {
            Op::Opcode(GenericOp::StoreOutput { slot, comp: 0 }) if slot >= RENDER_TARGETS => {
                Some((i, slot))
            }
            _ => None,
        })
        .collect();
    for (i, slot) in stores {
        copy.inst_mut(i).op = Op::Output {
            index: u32::from(slot),
        };
    }
    Ok(copy)
}

/// Operations whose results the backend approximates.
fn approximated(op: &Op<GenericOp>) -> bool {
    use GenericOp::*;
    matches!(
        op,
        Op::Opcode(Rcp | Rsqrt | Sqrt | Exp2 | Log2 | FDiv | Sin | Cos)
    )
}

/// `compile_valhall`: random valid generic programs through the whole
/// backend for g57 and g610 over a quad: no panic, no hazard, and the
/// interpreter's outputs (bit for bit, approximated values within a
/// tolerance, or not compared when approximated values may steer control
/// flow). Two programs come from `data`: the selection generator's
/// ([`lathe_passes::fuzzing::select::random_program`], seeded by the first
/// eight bytes) and the general one's ([`lathe_passes::fuzzing::generate`],
/// from all of them; its programs use arrays, buffers and textures the
/// backend may not cover, and those are skipped). Returns how many
/// (program, model) pairs compiled and ran.
pub fn compile_body(data: &[u8]) -> Result<usize, String> {
    let arena = lathe_ir::Bump::new();
    let mut seed = [0u8; 8];
    for (s, d) in seed.iter_mut().zip(data) {
        *s = *d;
    }
    let (mut shader, invocation) = random_program(
        &arena,
        u64::from_le_bytes(seed),
        Vocabulary { approx: APPROX },
    );
    // Results are compared bit for bit: the generic optimiser must keep
    // signed zeros, infinities and NaNs (`(x - x) * y` is -0.0 for a
    // negative y, not the 0.0 the relaxed rules fold it to).
    shader.preserve_float_specials = true;
    let mut ran = run_models(&shader, &invocation, Compare::From(16))?;
    let mut u = Unstructured::new(data);
    if let Ok(mut generated) = generate(&arena, &mut u, GenLimits::default()) {
        generated.shader.preserve_float_specials = true;
        ran += run_general(&generated.shader, &generated.invocation)?;
    }
    Ok(ran)
}

/// What the Valhall rules approximate (the selection generator's
/// vocabulary for this backend).
pub const APPROX: &[GenericOp] = &[
    GenericOp::FDiv,
    GenericOp::Rcp,
    GenericOp::Rsqrt,
    GenericOp::Sqrt,
    GenericOp::Exp2,
    GenericOp::Log2,
];

/// A general generator's program on both models: compared bit for bit
/// unless something in it is approximated.
fn run_general(shader: &Shader<'_, GenericOp>, invocation: &Invocation) -> Result<usize, String> {
    let compare = if shader
        .insts_in_order()
        .any(|(_, i)| approximated(&shader.inst(i).op))
    {
        Compare::Nothing
    } else {
        Compare::From(u16::MAX)
    };
    run_models(shader, invocation, compare)
}

/// `shader` on g57 and g610 over a quad of `invocation`; how many ran.
fn run_models(
    shader: &Shader<'_, GenericOp>,
    invocation: &Invocation,
    compare: Compare,
) -> Result<usize, String> {
    let threads = vec![invocation.clone(); 4];
    let mut ran = 0;
    for model in ["g57", "g610"] {
        let model = model
            .parse::<MaliModel>()
            .map_err(|e| format!("{model}: {e}"))?;
        if differential(shader, &threads, model, compare)? == Checked::Ran {
            ran += 1;
        }
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_body_holds_on_seeds() {
        let mut ran = 0;
        for seed in 0..20 {
            let data = lathe_passes::fuzzing::seed_bytes(seed, 256);
            ran += compile_body(&data).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        eprintln!("{ran} of 80 compiled and ran");
        assert!(ran > 0, "no seed reaches the backend");
    }
}
