//! One line of statistics per compiled shader, with the field names and
//! order of Mesa's Valhall shader-db line (`valhall_stats_fprintf`, from
//! the `shader-stats` description Mesa generates it from):
//!
//! ```text
//! fragment shader: 6 instrs, 0.078125 cycles, 0.078125 fma, 0.000000 cvt, 0.062500 sfu, 0.000000 v, 0.000000 t, 0.000000 ls, 48 code size, 2 threads, 0 loops, 0:0 spills:fills
//! ```
//!
//! (`targets/mali/examples/valhall-machine.lir` after `ra`, `legalise`
//! and emission: five FMA and one FRSQ.)
//!
//! Each unit's figure is its instruction count (from the spec's `unit`
//! metadata) divided by the unit's issue rate (the spec's
//! `issue_rate_UNIT` expressions, Mesa's normalisation); `cycles` is the
//! largest of them, the unit that bounds the shader. Loops are the
//! control-flow graph's loop headers; spills and fills the stores and
//! loads that address the thread-local storage pointer itself, where
//! register allocation puts them.

use std::fmt;

use lathe_ir::cfg::{Cfg, DomTree, Loops};
use lathe_ir::{Op, Shader, Stage, Type};
use lathe_isa::ast::MetaValue;
use lathe_isa::machine::MachineSpec;
use lathe_passes::target::{SpillSlot, TargetFacts};

use super::abi::vertex::Variant;
use super::generated::{MachineOp, Spec};
use super::target::ValhallTarget;

/// Mesa's Valhall shader statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub stage: Stage,
    /// Which IDVS shader of a vertex shader this is (printed as the
    /// stage, as Mesa prints `MESA_SHADER_POSITION` / `_VARYING`).
    pub variant: Option<Variant>,
    /// Instructions emitted.
    pub instrs: u32,
    /// Estimated cycles: the busiest unit's.
    pub cycles: f64,
    pub fma: f64,
    pub cvt: f64,
    pub sfu: f64,
    /// Varying unit.
    pub v: f64,
    /// Texture unit.
    pub t: f64,
    /// Load/store unit.
    pub ls: f64,
    /// Bytes of machine code.
    pub code_size: u32,
    /// Threads in flight relative to the core's maximum (the spec's
    /// occupancy: 2 up to 32 registers, 1 above).
    pub threads: u32,
    pub loops: u32,
    pub spills: u32,
    pub fills: u32,
}

impl Stats {
    /// The statistics of an IDVS pair as one vertex shader: this position
    /// shader's and the `varying` shader's work added (both run for a
    /// visible vertex), the fewer threads of the two, and the stage line
    /// `vertex` (Mesa prints one line per variant; `lathe stats` keeps
    /// one row per shader).
    pub fn with_varying(&self, varying: &Stats) -> Stats {
        Stats {
            stage: self.stage,
            variant: None,
            instrs: self.instrs + varying.instrs,
            cycles: self.cycles + varying.cycles,
            fma: self.fma + varying.fma,
            cvt: self.cvt + varying.cvt,
            sfu: self.sfu + varying.sfu,
            v: self.v + varying.v,
            t: self.t + varying.t,
            ls: self.ls + varying.ls,
            code_size: self.code_size + varying.code_size,
            threads: self.threads.min(varying.threads),
            loops: self.loops + varying.loops,
            spills: self.spills + varying.spills,
            fills: self.fills + varying.fills,
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} shader: {} instrs, {:.6} cycles, {:.6} fma, {:.6} cvt, {:.6} sfu, {:.6} v, \
             {:.6} t, {:.6} ls, {} code size, {} threads, {} loops, {}:{} spills:fills",
            self.variant.map_or(self.stage.name(), Variant::name),
            self.instrs,
            self.cycles,
            self.fma,
            self.cvt,
            self.sfu,
            self.v,
            self.t,
            self.ls,
            self.code_size,
            self.threads,
            self.loops,
            self.spills,
            self.fills
        )
    }
}

/// Why statistics could not be gathered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// The spec lacks a fact the estimate needs.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// The units the statistics count, in the line's order.
const UNITS: [&str; 6] = ["fma", "cvt", "sfu", "v", "t", "ls"];

/// The units instructions of spec unit `unit` issue on (VT: both V and T).
fn counted_units(unit: &str) -> &'static [usize] {
    match unit {
        "fma" => &[0],
        "cvt" => &[1],
        "sfu" => &[2],
        "v" => &[3],
        "t" => &[4],
        "vt" => &[3, 4],
        "ls" => &[5],
        _ => &[],
    }
}

/// Statistics of the legalised `shader` (its machine instructions in
/// layout order are the program) running at `threads`.
pub fn gather(
    shader: &Shader<'_, MachineOp>,
    target: &ValhallTarget,
    threads: u32,
) -> Result<Stats, StatsError> {
    let generation = target.generation_id();
    let mut rates = [0f64; UNITS.len()];
    for (k, u) in UNITS.iter().enumerate() {
        let rate = Spec::isa()
            .call(&format!("issue_rate_{u}"), &[], generation)
            .filter(|&r| r > 0)
            .ok_or_else(|| {
                StatsError::Unsupported(format!(
                    "the Valhall spec gives no issue rate for unit {u} (`issue_rate_{u}`)"
                ))
            })?;
        rates[k] = rate as f64;
    }
    // Built on the first memory access: most shaders have none.
    let scratch = std::cell::OnceCell::new();
    let scratch = || {
        *scratch.get_or_init(|| {
            target.spill(
                Type::U32,
                SpillSlot {
                    array: lathe_ir::ArrayId(0),
                    index: 0,
                    byte_offset: 0,
                },
            )
        })
    };
    let mut counts = [0u32; UNITS.len()];
    let (mut instrs, mut spills, mut fills) = (0u32, 0u32, 0u32);
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        let Op::Opcode(op) = d.op else { continue };
        instrs += 1;
        if let Some(MetaValue::Ident(unit)) = op.meta("unit") {
            for &k in counted_units(&unit.to_ascii_lowercase()) {
                counts[k] += 1;
            }
        }
        if op.info().effects.barrier != lathe_ir::BarrierClass::NONE
            && addresses_like(&op, &scratch())
        {
            if d.result.is_some() {
                fills += 1;
            } else {
                spills += 1;
            }
        }
    }
    let per_unit: Vec<f64> = counts
        .iter()
        .zip(rates)
        .map(|(&c, r)| f64::from(c) / r)
        .collect();
    let cfg = Cfg::compute(shader);
    let dom = DomTree::compute(&cfg);
    let loops = Loops::compute(&cfg, &dom).headers().len() as u32;
    let word_bytes = Spec::isa().width / 8;
    Ok(Stats {
        stage: shader.stage,
        variant: None,
        instrs,
        cycles: per_unit.iter().copied().fold(0.0, f64::max),
        fma: per_unit[0],
        cvt: per_unit[1],
        sfu: per_unit[2],
        v: per_unit[3],
        t: per_unit[4],
        ls: per_unit[5],
        code_size: instrs * word_bytes,
        threads,
        loops,
        spills,
        fills,
    })
}

/// Is `op` a message with the same literal address operands (and FAU
/// page) as `scratch`, the thread-local storage pointer?
fn addresses_like(op: &MachineOp, scratch: &MachineOp) -> bool {
    let info = op.info();
    let sinfo = scratch.info();
    let literal = |m: &MachineOp, key: &str| {
        let info = m.info();
        info.operands
            .iter()
            .position(|o| o.key == key)
            .filter(|&k| m.is_literal(k))
            .map(|k| info.operands[k].field.extract(m.word()))
    };
    let address_keys: Vec<&str> = sinfo
        .operands
        .iter()
        .enumerate()
        .filter(|&(k, _)| scratch.is_literal(k))
        .map(|(_, o)| o.key.as_str())
        .collect();
    !address_keys.is_empty()
        && info.effects.barrier != lathe_ir::BarrierClass::NONE
        && address_keys
            .iter()
            .all(|key| literal(op, key).is_some() && literal(op, key) == literal(scratch, key))
        && op.modifier("page") == scratch.modifier("page")
}
