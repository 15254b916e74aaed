//! Runs allocated machine IR on a spec's generated simulator, one
//! instruction at a time, so a register allocation (and what follows it,
//! such as the lowering of `swap`s) is checked on the machine's own
//! semantics rather than on the IR interpreter's.
//!
//! Every machine instruction is encoded with the registers its values
//! were given ([`MachineOp::encode`]) and executed alone; between two
//! instructions every result is let settle (the clock moves on and every
//! sync kind is waited for), because placing nops and sync bits is the
//! target's legalisation, not what this run checks. The IR's structural
//! operations are the run's own: `input index=N` writes input `N` into
//! its value's register, `output index=N` reads its operand's register,
//! phis cost nothing (their operands already sit in their register),
//! `jump`/`branch`/`ret` pick the next block (a branch reads its
//! condition's register: non-zero is true), and a remaining `swap` is
//! encoded with the target's exchange instruction. `collect` and `split`
//! are run only when their registers already agree (the lowering that
//! turns the others into moves is the backend's).
//!
//! ```text
//! run(shader, place, swap, exec, inputs) -> outputs
//! ```

use std::collections::BTreeMap;

use lathe_ir::{Op, Shader, Type, Value};

use crate::machine::{MachineOp, MachineSpec};
use crate::sim::{Machine, SimError};

/// Where a value lives in the simulator's state: file, half view,
/// component (the number the operand encodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: usize,
    pub half: bool,
    pub index: u32,
}

impl Place {
    /// The place of a register as the disassembly names it (`r1.y`,
    /// `hr3.x`, `r5`).
    pub fn named(m: &Machine, name: &str) -> Option<Place> {
        let (file, half, index) = m.parse_reg(name)?;
        Some(Place { file, half, index })
    }
}

/// What running allocated machine IR needs from its target.
pub trait RunTarget<S: MachineSpec> {
    /// The simulator location of `v`'s register (`None`: it has none).
    fn place(&self, shader: &Shader<'_, MachineOp<S>>, m: &Machine, v: Value) -> Option<Place>;
    /// The exchange instruction a `swap` of `ty` values is encoded with
    /// (its sources are the swap's operands, its destinations its
    /// results), if the target has one.
    fn exchange(&self, ty: Type) -> Option<MachineOp<S>>;
    /// The move a `split` whose result is not in its vector's lane
    /// becomes (the backend's lowering), if the target lowers them so.
    fn copy(&self, ty: Type) -> Option<MachineOp<S>> {
        let _ = ty;
        None
    }
    /// Executes one instruction word on `m`.
    fn exec(&self, m: &mut Machine, word: u64) -> Result<(), SimError>;
    /// The generation words are encoded for.
    fn generation(&self) -> u32;
}

/// Why an allocated shader could not be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("{0}")]
    Malformed(String),
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// Cycles after each instruction: more than any fixed latency.
const SETTLE: u64 = 64;

/// Runs one invocation (lane 0 of `m`) of the allocated `shader` from its
/// entry block with meta inputs `inputs`; returns the meta outputs by
/// index, as raw register bits. At most `max_steps` instructions run.
pub fn run<S: MachineSpec>(
    shader: &Shader<'_, MachineOp<S>>,
    target: &dyn RunTarget<S>,
    m: &mut Machine,
    inputs: &[u32],
    max_steps: u64,
) -> Result<BTreeMap<u32, u32>, RunError> {
    let groups: Vec<&[u32]> = inputs.iter().map(std::slice::from_ref).collect();
    run_groups(shader, target, m, &groups, max_steps)
}

/// [`run`] where meta input `k` is `inputs[k]`, one value per register of
/// a preloaded register group (a vector input).
pub fn run_groups<S: MachineSpec>(
    shader: &Shader<'_, MachineOp<S>>,
    target: &dyn RunTarget<S>,
    m: &mut Machine,
    inputs: &[&[u32]],
    max_steps: u64,
) -> Result<BTreeMap<u32, u32>, RunError> {
    let mut outputs = BTreeMap::new();
    let mut block = shader
        .entry()
        .ok_or_else(|| RunError::Malformed("no entry block".into()))?;
    let place = |m: &Machine, v: Value| {
        target.place(shader, m, v).ok_or_else(|| {
            RunError::Malformed(format!("%{} has no register of the simulator", v.index()))
        })
    };
    let mut steps = 0u64;
    loop {
        let mut next = None;
        for &i in shader.block_insts(block) {
            steps += 1;
            if steps > max_steps {
                return Err(RunError::Sim(SimError::Flow(format!(
                    "stopped after {max_steps} instructions"
                ))));
            }
            let d = shader.inst(i);
            match d.op {
                Op::Phi => {}
                Op::Input { index } => {
                    let r = d
                        .result
                        .ok_or_else(|| RunError::Malformed("input".into()))?;
                    let p = place(m, r)?;
                    let lanes = *inputs.get(index as usize).ok_or_else(|| {
                        RunError::Malformed(format!("no value for input {index}"))
                    })?;
                    for (k, &bits) in lanes.iter().enumerate() {
                        m.set(p.file, p.half, p.index + k as u32, 0, bits)
                            .ok_or_else(|| RunError::Malformed("input register".into()))?;
                    }
                }
                Op::Output { index } => {
                    let a = *d
                        .args
                        .first()
                        .ok_or_else(|| RunError::Malformed("output".into()))?;
                    let p = place(m, a)?;
                    let bits = m
                        .get(p.file, p.half, p.index, 0)
                        .ok_or_else(|| RunError::Malformed("output register".into()))?;
                    outputs.insert(index, bits);
                }
                Op::Collect | Op::Split { .. } => {
                    let r = d
                        .result
                        .ok_or_else(|| RunError::Malformed("collect".into()))?;
                    let pr = place(m, r)?;
                    let lanes: Vec<Place> = d
                        .args
                        .iter()
                        .map(|&a| place(m, a))
                        .collect::<Result<_, _>>()?;
                    let agree = match d.op {
                        Op::Split { lane } => {
                            lanes.first().map(|p| p.index + u32::from(lane)) == Some(pr.index)
                        }
                        _ => lanes
                            .iter()
                            .enumerate()
                            .all(|(k, p)| p.index == pr.index + k as u32),
                    };
                    let moved = match (d.op, lanes.first()) {
                        (Op::Split { lane }, Some(v)) if !agree => target
                            .copy(shader.value_type(r))
                            .map(|op| (op, v.index + u32::from(lane))),
                        _ => None,
                    };
                    if let Some((op, lane)) = moved {
                        execute(
                            target,
                            m,
                            op.encode(&[lane], &[pr.index], target.generation()),
                        )?;
                    } else if !agree {
                        return Err(RunError::Unsupported(format!(
                            "{} whose registers differ needs moves (the backend's lowering)",
                            d.op.name()
                        )));
                    }
                }
                Op::Swap => {
                    let (Some(a), Some(b)) = (d.result, d.second_result) else {
                        return Err(RunError::Malformed("swap".into()));
                    };
                    let ty = shader.value_type(a);
                    let op = target.exchange(ty).ok_or_else(|| {
                        RunError::Unsupported(format!(
                            "a swap of {ty} without an exchange instruction (run `lower-swap`)"
                        ))
                    })?;
                    let sources = [place(m, d.args[0])?.index, place(m, d.args[1])?.index];
                    let dests = [place(m, a)?.index, place(m, b)?.index];
                    let word = op.encode(&sources, &dests, target.generation());
                    execute(target, m, word)?;
                }
                Op::Opcode(op) => {
                    let sources: Vec<u32> = d
                        .args
                        .iter()
                        .map(|&a| place(m, a).map(|p| p.index))
                        .collect::<Result<_, _>>()?;
                    let dests: Vec<u32> = d
                        .result
                        .map(|r| place(m, r).map(|p| p.index))
                        .transpose()?
                        .into_iter()
                        .collect();
                    let word = op.encode(&sources, &dests, target.generation());
                    execute(target, m, word)?;
                }
                Op::Jump => next = d.targets.first().copied(),
                Op::Branch => {
                    let c = place(m, d.args[0])?;
                    let bits = m
                        .get(c.file, c.half, c.index, 0)
                        .ok_or_else(|| RunError::Malformed("branch condition".into()))?;
                    next = d.targets.get(usize::from(bits == 0)).copied();
                }
                Op::Return => return Ok(outputs),
            }
        }
        block = next.ok_or_else(|| {
            RunError::Malformed(format!("block b{} ends without a target", block.index()))
        })?;
    }
}

/// Runs one word, then lets every result settle.
fn execute<S: MachineSpec>(
    target: &dyn RunTarget<S>,
    m: &mut Machine,
    word: u64,
) -> Result<(), RunError> {
    m.pc = vec![Some(0); m.lanes];
    target.exec(m, word)?;
    m.cycle += SETTLE;
    for kind in 1..=u8::MAX {
        m.wait(kind);
    }
    Ok(())
}
