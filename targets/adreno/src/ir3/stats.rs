//! Statistics of an emitted ir3 program, printed as the line Mesa's
//! freedreno driver writes for shader-db (`dump_shader_info`: field names
//! and order as recent Mesa prints them), so reports can be compared with
//! Mesa's:
//!
//! ```text
//! MESA_SHADER_FRAGMENT shader: 12 inst, 4 nops, 8 non-nops, 0 mov, 0 cov, 24 dwords,
//! 0 last-baryf, 0 last-helper, 0 half, 2 full, 0 constlen, 5 cat0, ... 1 (ss),
//! 0 systall, 0 (sy), 16 waves, 0 loops
//! ```
//!
//! (one line). Counting follows Mesa: an instruction repeated with
//! `(rptN)` counts N+1, a `(nopN)` counts N more instructions and nops;
//! `mov` counts moves whose source and destination types agree, `cov` the
//! other moves; `half`/`full` are the highest vec4 register used plus one
//! (with merged registers a half register also counts its full one);
//! `constlen` is in vec4s; `stp`/`ldp` count the components every
//! private-memory store and load moves (spills and fills, and arrays kept
//! in private memory, as Mesa counts the opcodes); `waves` is the spec's occupancy at the footprint; `loops`
//! counts backward branches. `last-baryf` is the position (in counted
//! instructions) of the varying fetch with `(ei)`, `last-helper` that of
//! the last `nop` with `(eq)` (legalisation emits none yet). After
//! Mesa's fields, `preamble` counts the preamble's instructions (`shps`
//! to `shpe`), which Mesa leaves out of the others and prints as
//! `; N preamble instr`.
//!
//! Not computed: `sstall`/`systall` (Mesa's estimate of cycles stalled on
//! a sync flag uses soft delays that are no hardware fact): they print 0.

use std::fmt;

use lathe_ir::{Shader, Stage, Type};
use lathe_isa::ast::MetaValue;
use lathe_passes::target::{FileId, FileKind, SpillSlot, TargetFacts};

use super::Generation;
use super::delay;
use super::generated::{MachineOp, Spec};
use super::legalise::LegaliseError;
use super::target::Ir3Target;
use lathe_isa::machine::MachineSpec;

/// The counts of Mesa's shader-db line.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    pub stage: String,
    pub inst: u32,
    pub nops: u32,
    pub mov: u32,
    pub cov: u32,
    pub dwords: u32,
    pub last_baryf: u32,
    pub last_helper: u32,
    pub half: u32,
    pub full: u32,
    pub constlen: u32,
    pub cat: [u32; 8],
    pub stp: u32,
    pub ldp: u32,
    pub sstall: u32,
    pub ss: u32,
    pub systall: u32,
    pub sy: u32,
    pub waves: u32,
    pub loops: u32,
    /// Instructions of the preamble (`shps` to `shpe`, as Mesa counts its
    /// `preamble_instrs_count`), which run once per draw: none of the
    /// counts above includes them but the register footprint.
    pub preamble: u32,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.cat;
        write!(
            f,
            "{} shader: {} inst, {} nops, {} non-nops, {} mov, {} cov, {} dwords, \
             {} last-baryf, {} last-helper, {} half, {} full, {} constlen, \
             {} cat0, {} cat1, {} cat2, {} cat3, {} cat4, {} cat5, {} cat6, {} cat7, \
             {} stp, {} ldp, {} sstall, {} (ss), {} systall, {} (sy), {} waves, {} loops, \
             {} preamble",
            self.stage,
            self.inst,
            self.nops,
            self.inst - self.nops,
            self.mov,
            self.cov,
            self.dwords,
            self.last_baryf,
            self.last_helper,
            self.half,
            self.full,
            self.constlen,
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            c[6],
            c[7],
            self.stp,
            self.ldp,
            self.sstall,
            self.ss,
            self.systall,
            self.sy,
            self.waves,
            self.loops,
            self.preamble
        )
    }
}

/// Mesa's name of a stage in the line.
fn stage_name(stage: Stage) -> String {
    format!("MESA_SHADER_{}", stage.name().to_uppercase())
}

fn meta_text(op: &MachineOp, key: &str) -> Option<String> {
    match op.meta(key) {
        Some(MetaValue::Ident(s)) => Some(s.to_string()),
        Some(MetaValue::Int(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// The statistics of `words` (with `ops`, the instruction each encodes,
/// and `asm`, their disassembly), emitted from the legalised `shader`;
/// `decoded` holds the words the legaliser already decoded.
pub(crate) fn collect(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    words: &[u64],
    ops: &[MachineOp],
    asm: &str,
    decoded: &mut delay::Decoded,
) -> Result<Stats, LegaliseError> {
    let generation = Generation::from_gpu_id(target.generation_id())
        .ok_or_else(|| LegaliseError::Malformed("unknown generation".into()))?;
    let nop = target.idiom("nop");
    let (jump, branch) = (target.idiom("jump"), target.idiom("branch"));
    let (start, end) = (target.idiom("preamble_start"), target.idiom("preamble_end"));
    let mut in_preamble = false;
    // The spill and fill instructions (any slot: the offset is no part
    // of which instruction it is).
    let slot = SpillSlot {
        array: lathe_ir::ArrayId(0),
        index: 0,
        byte_offset: 0,
    };
    let (spill, fill) = (target.spill(Type::U32, slot), target.fill(Type::U32, slot));
    let same =
        |a: Option<MachineOp>, b: &MachineOp| a.is_some_and(|a| a.encoding() == b.encoding());

    let mut s = Stats {
        stage: stage_name(shader.stage),
        dwords: words.len() as u32 * 2,
        ..Stats::default()
    };
    let mut max_full: Option<u32> = None;
    let mut max_half: Option<u32> = None;
    let merged = target
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::General)
        .count()
        == 1;
    for (&word, &op) in words.iter().zip(ops) {
        let facts = delay::facts(word, generation, decoded)?;
        let (repeat, slots) = (facts.repeat, facts.nops);
        let count = 1 + repeat;
        for a in &facts.accesses {
            if a.special {
                continue;
            }
            let last = a.num + a.elems - 1;
            if a.half {
                max_half = max_half.max(Some(last / 4));
                if merged {
                    max_full = max_full.max(Some(last / 2 / 4));
                }
            } else {
                max_full = max_full.max(Some(last / 4));
            }
        }
        in_preamble |= same(start, &op);
        if in_preamble {
            s.preamble += count + slots;
            in_preamble = !same(end, &op);
            continue;
        }
        // Mesa's position of an instruction: the slots before it.
        let position = s.inst;
        let category: usize = meta_text(&op, "category")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
            .min(7);
        if same(nop, &op) {
            s.nops += count;
        }
        s.nops += slots;
        s.inst += count + slots;
        s.cat[category] += count;
        s.cat[0] += slots;
        if is_move(&op) {
            let types = (op.modifier("src_type"), op.modifier("dst_type"));
            if let (Some(a), Some(b)) = types {
                if a == b {
                    s.mov += count;
                } else {
                    s.cov += count;
                }
            }
        }
        // Private stores and loads (spills, fills, arrays) count the
        // components they move.
        let components = op.modifier("size").map_or(1, |n| n as u32);
        if op.encoding() == spill.encoding() {
            s.stp += components;
        }
        if op.encoding() == fill.encoding() {
            s.ldp += components;
        }
        if op.modifier("ss") == Some(1) {
            s.ss += 1;
        }
        if op.modifier("sy") == Some(1) {
            s.sy += 1;
        }
        if op.modifier("ei") == Some(1)
            && matches!(op.meta("varying_fetch"), Some(MetaValue::Ident(v)) if v == "true")
        {
            s.last_baryf = position;
        }
        // Helper invocations end at a nop with (eq).
        if same(nop, &op) && op.modifier("eq") == Some(1) {
            s.last_helper = position;
        }
        if (same(jump, &op) || same(branch, &op))
            && op.modifier("immed").is_some_and(|o| (o as u32 as i32) <= 0)
        {
            s.loops += 1;
        }
    }
    s.full = max_full.map_or(0, |m| m + 1);
    s.half = max_half.map_or(0, |m| m + 1);
    s.constlen = constlen(asm);
    let general = target
        .files()
        .iter()
        .position(|f| f.kind == FileKind::General && f.allocated)
        .unwrap_or(0);
    let unit_bits = target.files()[general].unit_bits.max(1);
    let units = s.full * 4 * (32 / unit_bits);
    s.waves = target.occupancy(FileId(general as u8), units);
    Ok(s)
}

/// Mesa's `OPC_MOV`: the spec's `cat1-mov` family (mov, cov, mova, and
/// their immediate, const and relative forms) without `movs`, which
/// reads another fiber's value.
fn is_move(op: &MachineOp) -> bool {
    let isa = Spec::isa();
    let under = |name: &str| {
        isa.chain(op.encoding())
            .any(|e| isa.encodings[e].name == name)
    };
    under("cat1-mov") && !under("cat1-movs")
}

/// Vec4 const registers the program reads: one past the highest `cN`
/// its disassembly names (the const file's register prefix from the spec).
fn constlen(asm: &str) -> u32 {
    let isa = Spec::isa();
    let Some(prefix) = isa
        .regfiles
        .iter()
        .find(|r| r.kind == lathe_isa::model::RegfileKind::Const)
        .and_then(|r| r.names.as_ref())
        .map(|n| n.prefix.clone())
    else {
        return 0;
    };
    let mut len = 0;
    for line in asm.lines() {
        let bytes = line.as_bytes();
        let mut at = 0;
        while let Some(k) = line[at..].find(prefix.as_str()) {
            let start = at + k;
            at = start + prefix.len();
            // A register name starts a word: `c12.x`, not `sync` or `rcp`.
            let word_start = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if word_start && !digits.is_empty() && line[at + digits.len()..].starts_with('.') {
                if let Ok(n) = digits.parse::<u32>() {
                    len = len.max(n + 1);
                }
            }
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::constlen;

    #[test]
    fn constlen_counts_vec4s_of_the_highest_const() {
        assert_eq!(
            constlen("add.f r0.x, c3.y, r1.x\nmul.f r0.y, r0.x, c1.w\n"),
            4
        );
        assert_eq!(constlen("(ss)end\nrcp r0.x, r0.y\n"), 0);
    }
}
