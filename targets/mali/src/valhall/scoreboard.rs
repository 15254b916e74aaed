//! Which dependency slots each instruction of an allocated Valhall shader
//! must wait on, by forward dataflow over the control-flow graph (the
//! model Mesa's `va_insert_flow.c` describes, computed here on Lathe's
//! IR):
//!
//! - a message instruction (`meta message = true`) leaves the registers
//!   it writes pending on its slot until an instruction waits on it;
//! - an instruction reading or overwriting a pending register waits on
//!   that register's slot (read after write, write after write; the
//!   hardware itself stalls on staging registers a message still reads,
//!   so write after read needs nothing);
//! - a message instruction whose memory accesses must stay ordered after
//!   a pending one (the `effects` barrier classes: a load after a store,
//!   a store after a load or store) waits on that one's slot;
//! - an instruction's `wait_before` / `wait_after` metadata adds the
//!   slots the hardware requires around it (ATEST, BLEND, barriers);
//! - a block starts with every register any predecessor may leave
//!   pending, so a consumer after a join or around a loop waits whenever
//!   some path needs it.
//!
//! Waiting on a slot completes everything pending on it, so the slot's
//! whole record is cleared.

use super::target::ValhallTarget;
use lathe_ir::{BarrierClass, Block, Inst, Op, Opcode, Shader, Value, cfg::Cfg};

use super::generated::MachineOp;

/// Dependency slots the flow field can name (bit N of a wait mask).
const SLOTS: usize = 8;

/// What one instruction does to the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Access {
    /// Registers read (bit N: rN).
    pub reads: u64,
    /// Registers written.
    pub writes: u64,
    /// The slot a message instruction signals.
    pub slot: Option<u8>,
    /// Memory-like state a message instruction touches.
    pub class: BarrierClass,
    /// Slots the hardware requires waited on before it.
    pub wait_before: u32,
    /// Slots waited on right after it.
    pub wait_after: u32,
}

/// Registers pending on each slot, and the memory classes of the
/// accesses pending there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    regs: [u64; SLOTS],
    classes: [u8; SLOTS],
}

impl State {
    fn join(&mut self, other: &State) {
        for s in 0..SLOTS {
            self.regs[s] |= other.regs[s];
            self.classes[s] |= other.classes[s];
        }
    }

    fn pop(&mut self, mask: u32) {
        for s in 0..SLOTS {
            if mask & (1 << s) != 0 {
                self.regs[s] = 0;
                self.classes[s] = 0;
            }
        }
    }

    /// The slots `a` must wait on before it issues.
    fn needs(&self, a: &Access) -> u32 {
        let mut wait = a.wait_before;
        for s in 0..SLOTS {
            let registers = self.regs[s] & (a.reads | a.writes) != 0;
            let memory = a.slot.is_some() && BarrierClass(self.classes[s]).must_precede(a.class);
            if registers || memory {
                wait |= 1 << s;
            }
        }
        wait
    }

    /// Applies `a`, having waited on `waited` (what the flow value
    /// chosen for the wait covers); returns nothing, the caller records.
    fn step(&mut self, a: &Access, waited: u32, waited_after: u32) {
        self.pop(waited);
        if let Some(s) = a.slot {
            let s = usize::from(s) % SLOTS;
            self.regs[s] |= a.writes;
            self.classes[s] |= a.class.0;
        }
        self.pop(waited_after);
    }
}

/// The waits of every instruction of a shader, indexed by [`Inst`].
pub(crate) struct Plan {
    /// Slots to wait on before the instruction (meta readers included:
    /// their wait goes on the next machine instruction).
    pub before: Vec<u32>,
    /// Slots to wait on right after it.
    pub after: Vec<u32>,
}

/// Runs the dataflow over the blocks of `shader` in `cfg`, with each
/// instruction's [`Access`] from `access` and `cover` giving the slots a
/// wait for a mask really waits on (the flow value chosen may wait on
/// more).
pub(crate) fn plan(
    shader: &Shader<'_, MachineOp>,
    cfg: &Cfg,
    access: &dyn Fn(Inst) -> Option<Access>,
    cover: &dyn Fn(u32) -> u32,
) -> Plan {
    let n = shader.block_capacity();
    let mut out: Vec<Option<State>> = vec![None; n];
    let mut before = vec![0; shader.inst_capacity()];
    let mut after = vec![0; shader.inst_capacity()];
    let blocks: Vec<Block> = cfg.rpo().to_vec();
    let accesses: Vec<Vec<(Inst, Access)>> = blocks
        .iter()
        .map(|&b| {
            shader
                .block_insts(b)
                .iter()
                .filter_map(|&i| access(i).map(|a| (i, a)))
                .collect()
        })
        .collect();
    // Iterate in reverse post-order until no block's exit state grows.
    let mut changed = true;
    while changed {
        changed = false;
        for (k, &b) in blocks.iter().enumerate() {
            let mut st = State::default();
            for p in cfg.preds(b) {
                if let Some(o) = &out[p.index()] {
                    st.join(o);
                }
            }
            for &(i, a) in &accesses[k] {
                let need = st.needs(&a);
                let waited = if need == 0 { 0 } else { cover(need) };
                let waited_after = if a.wait_after == 0 {
                    0
                } else {
                    cover(a.wait_after)
                };
                before[i.index()] = need;
                after[i.index()] = a.wait_after;
                st.step(&a, waited, waited_after);
            }
            if out[b.index()] != Some(st) {
                out[b.index()] = Some(st);
                changed = true;
            }
        }
    }
    Plan { before, after }
}

/// Bits of the general registers `v` occupies (`general` is the
/// register file index of the general registers in the shader).
pub(crate) fn reg_mask(shader: &Shader<'_, MachineOp>, general: u8, v: Value) -> u64 {
    let Some(r) = shader.value_reg(v) else {
        return 0;
    };
    if r.file != general {
        return 0;
    }
    let lanes = u32::from(shader.value_type(v).lanes.max(1));
    let bits = if lanes >= 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    };
    bits.checked_shl(u32::from(r.unit)).unwrap_or(0)
}

/// The [`Access`] of instruction `i`: machine instructions by their
/// operands and metadata, `output` as a read of its operand (the value
/// must be complete when the shader ends), other meta instructions as
/// nothing.
pub(crate) fn access_of(
    shader: &Shader<'_, MachineOp>,
    target: &ValhallTarget,
    general: u8,
    i: Inst,
) -> Option<Access> {
    let d = shader.inst(i);
    let reads = d
        .args
        .iter()
        .fold(0, |m, &v| m | reg_mask(shader, general, v));
    match d.op {
        Op::Opcode(op) => {
            let writes = d.results().fold(0, |m, v| m | reg_mask(shader, general, v));
            let facts = target.leaf_facts(&op);
            let message = facts.message;
            let slot = message
                .then(|| {
                    op.modifier(super::flow::SLOT)
                        .map(|s| s as u8)
                        .or_else(|| facts.slot.map(|s| s as u8))
                })
                .flatten();
            Some(Access {
                reads,
                writes,
                slot,
                class: if message {
                    op.effects().barrier
                } else {
                    BarrierClass::NONE
                },
                wait_before: facts.wait_before.unwrap_or(0) as u32,
                wait_after: facts.wait_after.unwrap_or(0) as u32,
            })
        }
        Op::Output { .. } => Some(Access {
            reads,
            ..Access::default()
        }),
        _ => None,
    }
}
