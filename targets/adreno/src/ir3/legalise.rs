//! Legalisation of allocated ir3 machine IR (the post-RA hook
//! [`TargetFacts::legalise`] of [`Ir3Target`]): after it, every IR
//! instruction that is a machine instruction is exactly one word of the
//! final program, in layout order, and the program obeys the hardware's
//! timing and flow rules.
//!
//! - control flow: each block's terminator is preceded by the flow
//!   instructions it becomes (the spec's idioms `branch`, `jump`, `end`;
//!   a condition held in a general register is first compared into p0
//!   with `predicate16`/`predicate32`, unless the compare that made it is
//!   read only there and may write p0 itself, the spec's
//!   `writes_predicate`); a jump to the next block in the layout, or
//!   over blocks that emit no word, is a fall-through; the IR terminators
//!   stay as the CFG's skeleton and emit nothing, as do inputs, outputs,
//!   phis (ra already placed their copies) and collects/splits whose
//!   registers agree; a split whose lane ra put elsewhere is the target's
//!   copy from the vector's lane register (one word);
//! - `(ei)` on the last varying fetch of a fragment shader (the spec's
//!   `varying_fetch` metadata); one that fetches none but has texture
//!   prefetches ([`super::prefetch`]) gets the spec's `end_input` idiom,
//!   a fetch into a register nothing reads, as Mesa's dummy `bary.f`;
//! - `(ss)`/`(sy)` on the first instruction that reads or overwrites a
//!   register an asynchronous producer (the spec's `sync` metadata) has
//!   not delivered yet, over the CFG (a `nop` carries the flag when the
//!   instruction has no field for it); the `end` counts as reading the
//!   outputs; a texture-prefetched input is pending as the `sam` it is from
//!   where the main part starts;
//! - delay slots from the spec's latency table ([`super::delay`]), over
//!   every path into a block, folded into the previous instruction's
//!   `(nopN)` where its encoding has one, else a `nop` with `(rptN)`;
//! - `(jp)` on the first instruction of every branch target;
//! - branch offsets, in instructions from the branch.
//!
//! A legalised shader is recognised (every return preceded by `end`) and
//! left alone.
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, generated::MachineOp, legalise, target::Ir3Target};
//!
//! let text = "shader fragment\nregisters gpr, a0, a1, p0, const\nb0:\n  %0:f32@gpr0 = input index=0\n  %1:f32@gpr2 = add.f full %0, %0\n  %2:f32@gpr4 = mul.f full %1, %1\n  output index=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
//! let t = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! assert!(legalise::legalise(&mut shader, &t).unwrap());
//! let printed = lathe_ir::print(&shader);
//! // The ALU result needs 3 slots before the ALU reads it: folded into
//! // the add's (nop3), then the end.
//! assert!(printed.contains("add.f full src1_r src2_r"), "{printed}");
//! assert!(printed.contains("\n  end\n  ret\n"), "{printed}");
//! ```

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use lathe_ir::{Block, Inst, Op, Reg, Shader, Stage, Type, Value};
use lathe_isa::ast::MetaValue;
use lathe_isa::machine::OperandInfo;
use lathe_passes::target::{Exchange, FileKind, TargetFacts};

use super::delay;
use super::generated::{MachineOp, Spec};
use super::target::Ir3Target;
use super::{Error, Generation};
use lathe_isa::machine::MachineSpec;

/// Why an allocated shader cannot be legalised (or emitted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LegaliseError {
    /// A construct the ir3 backend does not lower yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The shader is not allocated machine IR (a value without a
    /// register, a block without a terminator).
    #[error("{0}")]
    Malformed(String),
    /// The embedded spec lacks something legalisation asks it for.
    #[error(transparent)]
    Spec(#[from] Error),
}

/// One machine word an IR instruction becomes: the instruction and its
/// register numbers.
pub(crate) struct Word {
    pub op: MachineOp,
    pub sources: Vec<u32>,
    pub dests: Vec<u32>,
}

impl Word {
    pub fn encode(&self, generation: u32) -> u64 {
        self.op.encode(&self.sources, &self.dests, generation)
    }
}

/// Slots of context taken from the blocks before a block (more than any
/// delay the latency table asks for).
const WINDOW: usize = 16;
/// Most distinct paths followed through one way into a block.
const MAX_PATHS: usize = 16;
/// Rounds of nop placement over the CFG (each only adds nops).
const MAX_ROUNDS: usize = 8;

/// Legalises `shader` in place; `Ok(false)` if it already was.
pub fn legalise(
    shader: &mut Shader<'_, MachineOp>,
    target: &Ir3Target,
) -> Result<bool, LegaliseError> {
    legalise_with(shader, target, &[], 0, &mut delay::Decoded::default())
}

/// [`legalise`] for a shader whose meta inputs `prefetched` are texture
/// prefetches ([`super::prefetch`]: the hardware's `sam`s deliver them)
/// and whose main part starts at layout block `main` (after a preamble),
/// keeping the words it decodes in `decoded` (emission's statistics ask
/// about most of them again).
pub(crate) fn legalise_with(
    shader: &mut Shader<'_, MachineOp>,
    target: &Ir3Target,
    prefetched: &[u32],
    main: usize,
    decoded: &mut delay::Decoded,
) -> Result<bool, LegaliseError> {
    if is_legalised(shader, target) {
        return Ok(false);
    }
    let mut l = Legaliser {
        target,
        generation: Generation::from_gpu_id(target.generation_id()).ok_or_else(|| {
            LegaliseError::Malformed(format!("no generation {}", target.generation_id()))
        })?,
        flow_targets: HashMap::default(),
        ends: HashSet::default(),
        decoded: std::cell::RefCell::new(decoded),
        words: Default::default(),
        paths: Default::default(),
        prefetched,
        main,
    };
    super::collects::place(shader, target)?;
    check(shader, target)?;
    let layout = shader.layout().to_vec();
    lathe_passes::self_copies::drop_self_copies(shader, target);
    l.lower_flow(shader, &layout)?;
    l.end_input_of_prefetches(shader, &layout)?;
    l.mark_end_of_input(shader, &layout);
    l.insert_syncs(shader, &layout)?;
    l.insert_nops(shader, &layout)?;
    l.mark_jump_targets(shader, &layout)?;
    l.set_offsets(shader, &layout)?;
    Ok(true)
}

/// What legalisation would fail on, found before it changes anything:
/// blocks without terminators, values without registers, swaps without
/// an exchange instruction, collects out of place, a branch on
/// a general register while p0 holds values.
pub fn check(shader: &Shader<'_, MachineOp>, target: &Ir3Target) -> Result<(), LegaliseError> {
    let predicate = target
        .files()
        .iter()
        .position(|f| f.kind == FileKind::Predicate);
    let in_p0 = |v: Value| {
        shader
            .value_reg(v)
            .is_some_and(|r| Some(usize::from(r.file)) == predicate)
    };
    let p0_in_use = shader
        .insts_in_order()
        .any(|(_, i)| shader.inst(i).result.is_some_and(in_p0));
    check_inputs(shader, target)?;
    for &b in shader.layout() {
        let Some(term) = shader.terminator(b) else {
            return Err(LegaliseError::Malformed(format!(
                "block b{} has no terminator",
                b.index()
            )));
        };
        for &i in shader.block_insts(b) {
            word_of(shader, target, i)?;
        }
        let d = shader.inst(term);
        if matches!(d.op, Op::Branch) {
            let cond = *d
                .args
                .first()
                .ok_or_else(|| LegaliseError::Malformed("branch without a condition".into()))?;
            reg_of(shader, cond)?;
            if !in_p0(cond) && p0_in_use {
                return Err(LegaliseError::Unsupported(
                    "a branch on a general register while p0 holds values".into(),
                ));
            }
        }
    }
    Ok(())
}

/// Whether execution leaving `layout[k]` at its end reaches `to` without
/// a jump: `to` follows it, with only blocks between that run no
/// instruction and jump to their own next block (edge blocks whose
/// copies ra did not need), which emit no word.
fn falls_into(shader: &Shader<'_, MachineOp>, layout: &[Block], k: usize, to: Block) -> bool {
    for (j, &b) in layout.iter().enumerate().skip(k + 1) {
        if b == to {
            return true;
        }
        let insts = shader.block_insts(b);
        let runs = insts
            .iter()
            .any(|&i| matches!(shader.inst(i).op, Op::Opcode(_) | Op::Swap));
        let jumps_to_next = insts.last().is_some_and(|&i| {
            let d = shader.inst(i);
            matches!(d.op, Op::Jump) && d.targets.first() == layout.get(j + 1)
        });
        if runs || !jumps_to_next {
            return false;
        }
    }
    false
}

/// The hardware preloads inputs before the first instruction: each must
/// be in the entry block, its register written by nothing before it.
fn check_inputs(shader: &Shader<'_, MachineOp>, target: &Ir3Target) -> Result<(), LegaliseError> {
    let entry = shader.entry();
    let mut written: HashSet<(u8, u16)> = HashSet::default();
    for (b, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        let Op::Input { index } = d.op else {
            if Some(b) == entry {
                for v in d.result.iter().chain(d.second_result.iter()) {
                    written.extend(units_of(shader, target, *v)?);
                }
            }
            continue;
        };
        let Some(v) = d.result else { continue };
        if Some(b) != entry {
            return Err(LegaliseError::Unsupported(format!(
                "input {index} outside the entry block"
            )));
        }
        if units_of(shader, target, v)?
            .iter()
            .any(|u| written.contains(u))
        {
            return Err(LegaliseError::Unsupported(format!(
                "input {index} (%{}) sits in a register an earlier instruction writes; \
                 the hardware preloads it before the first one",
                v.index()
            )));
        }
    }
    Ok(())
}

/// Every return is preceded by the `end` idiom's instruction.
pub fn is_legalised(shader: &Shader<'_, MachineOp>, target: &Ir3Target) -> bool {
    let Some(end) = target.idiom("end") else {
        return false;
    };
    let mut any = false;
    for &b in shader.layout() {
        let insts = shader.block_insts(b);
        if let Some((&last, rest)) = insts.split_last()
            && matches!(shader.inst(last).op, Op::Return)
        {
            any = true;
            let ended = rest.last().is_some_and(
                |&i| matches!(shader.inst(i).op, Op::Opcode(m) if m.encoding() == end.encoding()),
            );
            if !ended {
                return false;
            }
        }
    }
    any
}

/// The word `i` becomes, if any (see the module docs for what emits
/// nothing).
pub(crate) fn word_of(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    i: Inst,
) -> Result<Option<Word>, LegaliseError> {
    let d = shader.inst(i);
    match d.op {
        Op::Opcode(op) => {
            let sources = op
                .value_operands(lathe_isa::operands::Role::Src)
                .zip(d.args.iter())
                .map(|(o, &v)| number(shader, target, v, o))
                .collect::<Result<_, _>>()?;
            let dests = match (op.destination(), d.result) {
                (Some(o), Some(v)) => vec![number(shader, target, v, o)?],
                _ => Vec::new(),
            };
            Ok(Some(Word { op, sources, dests }))
        }
        Op::Swap => {
            let (Some(a), Some(b)) = (d.result, d.second_result) else {
                return Err(LegaliseError::Malformed("swap without two results".into()));
            };
            let ty = shader.value_type(a);
            let Some(Exchange::Instruction(op)) = target.swap(ty) else {
                return Err(LegaliseError::Unsupported(format!(
                    "a swap of {ty} without an exchange instruction (run `lower-swap` first)"
                )));
            };
            let src = op.value_operands(lathe_isa::operands::Role::Src);
            let sources = src
                .zip(d.args.iter())
                .map(|(o, &v)| number(shader, target, v, o))
                .collect::<Result<_, _>>()?;
            let dst = op.value_operands(lathe_isa::operands::Role::Dst);
            let dests = dst
                .zip([a, b])
                .map(|(o, v)| number(shader, target, v, o))
                .collect::<Result<_, _>>()?;
            Ok(Some(Word { op, sources, dests }))
        }
        Op::Split { lane } if !in_place(shader, target, i)? => {
            // A lane ra put elsewhere is moved out of its vector.
            let (Some(r), Some(&v)) = (d.result, d.args.first()) else {
                return Err(LegaliseError::Malformed("split without operands".into()));
            };
            let op = target.copy(shader.value_type(r));
            let (Some(src), Some(dst)) = (op.source(0), op.destination()) else {
                return Err(LegaliseError::Malformed("a copy without operands".into()));
            };
            let sources = vec![number(shader, target, v, src)? + u32::from(lane)];
            let dests = vec![number(shader, target, r, dst)?];
            Ok(Some(Word { op, sources, dests }))
        }
        Op::Collect | Op::Split { .. } => {
            check_in_place(shader, target, i)?;
            Ok(None)
        }
        Op::Phi | Op::Input { .. } | Op::Output { .. } | Op::Jump | Op::Branch | Op::Return => {
            Ok(None)
        }
    }
}

/// A collect emits nothing only when ra put its operands where the
/// vector is (a split elsewhere becomes a move).
fn check_in_place(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    i: Inst,
) -> Result<(), LegaliseError> {
    if in_place(shader, target, i)? || matches!(shader.inst(i).op, Op::Split { .. }) {
        return Ok(());
    }
    let d = shader.inst(i);
    Err(LegaliseError::Unsupported(format!(
        "{} %{} whose registers differ from its operands' (ra leaves them in place)",
        d.op.name(),
        d.result.map_or(0, |r| r.index())
    )))
}

/// Whether `i` becomes a word of the program: machine instructions and
/// swaps, and splits whose lane ra put elsewhere (a copy; see
/// [`word_of`]).
fn emits_word(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    i: Inst,
) -> Result<bool, LegaliseError> {
    Ok(match shader.inst(i).op {
        Op::Opcode(_) | Op::Swap => true,
        Op::Split { .. } => !in_place(shader, target, i)?,
        _ => false,
    })
}

/// Whether a collect's operands or a split's lane sit where the vector is.
pub(super) fn in_place(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    i: Inst,
) -> Result<bool, LegaliseError> {
    let d = shader.inst(i);
    let r = d
        .result
        .ok_or_else(|| LegaliseError::Malformed("collect/split without a result".into()))?;
    let start = |v: Value| -> Result<(u8, u32), LegaliseError> {
        let reg = reg_of(shader, v)?;
        Ok((reg.file, u32::from(reg.unit)))
    };
    let lane_units =
        |v: Value| lane_units(target, shader.value_type(v)) / u32::from(shader.value_type(v).lanes);
    let (rf, ru) = start(r)?;
    let agree = match d.op {
        Op::Split { lane } => {
            let (f, u) = start(d.args[0])?;
            f == rf && u + u32::from(lane) * lane_units(r) == ru
        }
        _ => {
            let mut at = ru;
            let mut ok = true;
            for &a in d.args.iter() {
                let (f, u) = start(a)?;
                ok &= f == rf && u == at;
                at += lane_units(a) * u32::from(shader.value_type(a).lanes);
            }
            ok
        }
    };
    Ok(agree)
}

/// The register units a value of type `ty` covers.
pub(super) fn lane_units(target: &Ir3Target, ty: Type) -> u32 {
    target
        .operand_class(&Op::Phi, 0, Type::scalar(ty.scalar))
        .lane_units as u32
        * u32::from(ty.lanes)
}

fn reg_of(shader: &Shader<'_, MachineOp>, v: Value) -> Result<Reg, LegaliseError> {
    shader.value_reg(v).ok_or_else(|| {
        LegaliseError::Malformed(format!("%{} has no register (run `ra` first)", v.index()))
    })
}

/// The number operand `o` encodes for value `v`'s register: a general
/// register's component (units are halves with merged registers); a
/// special register's component inside its own file's field, or, in a
/// GPR operand, after the GPR number the spec gives the file
/// (`predicate_gpr`, `address_gpr`).
fn number(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    v: Value,
    o: &OperandInfo,
) -> Result<u32, LegaliseError> {
    let reg = reg_of(shader, v)?;
    let file = target
        .files()
        .get(usize::from(reg.file))
        .ok_or_else(|| LegaliseError::Malformed(format!("%{}: no file {}", v.index(), reg.file)))?;
    let unit = u32::from(reg.unit);
    let isa = Spec::isa();
    match file.kind {
        FileKind::General => {
            let ty = shader.value_type(v);
            let lane = target.operand_class(&Op::Phi, 0, Type::scalar(ty.scalar));
            Ok(unit / u32::from(lane.lane_units))
        }
        FileKind::Predicate | FileKind::Address => {
            let spec_file = isa.regfile(file.name);
            if spec_file.is_some_and(|f| o.files.contains(&f)) {
                return Ok(unit);
            }
            let key = match file.kind {
                FileKind::Predicate => "predicate_gpr",
                _ => "address_gpr",
            };
            let base = delay::gpr_base(key).ok_or_else(|| {
                LegaliseError::Spec(Error::Spec(format!("no operand encoding has `{key}`")))
            })?;
            Ok(base * 4 + unit)
        }
        FileKind::Uniform | FileKind::Const => Err(LegaliseError::Unsupported(format!(
            "%{} in the {} file as a register operand",
            v.index(),
            file.name
        ))),
    }
}

/// The register units (file, unit) a value occupies.
fn units_of(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    v: Value,
) -> Result<Vec<(u8, u16)>, LegaliseError> {
    let reg = reg_of(shader, v)?;
    let ty = shader.value_type(v);
    let n = match target.files()[usize::from(reg.file)].kind {
        FileKind::General => {
            let lane = target.operand_class(&Op::Phi, 0, Type::scalar(ty.scalar));
            u16::from(lane.lane_units) * u16::from(ty.lanes)
        }
        _ => u16::from(ty.lanes),
    };
    Ok((0..n).map(|k| (reg.file, reg.unit + k)).collect())
}

/// The spec's sync kind of an instruction's result (`ss`, `sy`), if any.
fn sync_kind(op: &MachineOp) -> Option<&'static str> {
    match op.meta("sync") {
        Some(MetaValue::Ident(s)) if s != "none" => Some(s.as_str()),
        _ => None,
    }
}

struct Legaliser<'t, 'd> {
    target: &'t Ir3Target,
    generation: Generation,
    /// The block each inserted jump or branch goes to.
    flow_targets: HashMap<Inst, Block>,
    /// The inserted `end`s.
    ends: HashSet<Inst>,
    /// Words decoded for the delay calculator.
    decoded: std::cell::RefCell<&'d mut delay::Decoded>,
    /// The word each instruction encodes to, kept while the delay slots
    /// are placed: every block re-reads its predecessors' words each
    /// round, and only a fold ([`Legaliser::fold_nops`]) changes one.
    words: std::cell::RefCell<HashMap<Inst, Option<u64>>>,
    /// [`Legaliser::paths_into`]'s answers by `(block, need, depth)`,
    /// with the blocks whose words they hold: kept until one of those
    /// changes.
    paths: std::cell::RefCell<HashMap<(Block, usize, usize), PathsFrom>>,
    /// Meta inputs the hardware's texture prefetches write.
    prefetched: &'t [u32],
    /// The layout index of the main part's first block (1 after a
    /// preamble, else 0).
    main: usize,
}

impl Legaliser<'_, '_> {
    fn idiom(&self, name: &str) -> Result<MachineOp, LegaliseError> {
        self.target.idiom(name).ok_or_else(|| {
            LegaliseError::Spec(Error::Spec(format!(
                "the ir3 spec has no `{name}` idiom at {}",
                self.generation
            )))
        })
    }

    fn modified(&self, op: MachineOp, key: &str, value: u64) -> Result<MachineOp, LegaliseError> {
        op.with_modifier(key, value).ok_or_else(|| {
            LegaliseError::Spec(Error::Spec(format!(
                "`{}` has no field `{key}` for {value}",
                lathe_ir::Opcode::name(&op)
            )))
        })
    }

    /// Flow instructions before each terminator, and a compare into the
    /// predicate file before each instruction that reads one of its
    /// operands from there (ir3's `kill p0.x`) while the value is a
    /// boolean in a general register.
    fn lower_flow(
        &mut self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let predicate_file = self
            .target
            .files()
            .iter()
            .position(|f| f.kind == FileKind::Predicate);
        let uses = lathe_ir::uses::Uses::compute(shader);
        for (k, &b) in layout.iter().enumerate() {
            let mut insts: Vec<Inst> = Vec::new();
            for i in shader.block_insts(b).to_vec() {
                if let Op::Opcode(op) = shader.inst(i).op {
                    let mut args = shader.inst(i).args.to_vec();
                    let reads: Vec<usize> = op
                        .value_operands(lathe_isa::operands::Role::Src)
                        .enumerate()
                        .filter(|(_, o)| {
                            !o.files.is_empty()
                                && o.files.iter().all(|&f| {
                                    Spec::isa().regfiles[f].kind
                                        == lathe_isa::model::RegfileKind::Predicate
                                })
                        })
                        .map(|(n, _)| n)
                        .collect();
                    for (unit, &n) in reads.iter().enumerate() {
                        let Some(&cond) = args.get(n) else { continue };
                        let (compare, p) = self.predicate(
                            shader,
                            predicate_file,
                            (cond, uses.of(cond).len()),
                            &insts,
                            unit as u16,
                        )?;
                        insts.extend(compare);
                        args[n] = p;
                    }
                    if !reads.is_empty() {
                        shader.set_args(i, &args);
                    }
                }
                insts.push(i);
            }
            shader.set_block_insts(b, &insts);
            let Some(term) = shader.terminator(b) else {
                continue;
            };
            let d = shader.inst(term);
            let (op, args, targets) = (d.op, d.args.to_vec(), d.targets.to_vec());
            let mut new: Vec<Inst> = Vec::new();
            match op {
                Op::Return => {
                    let end = self.idiom("end")?;
                    let i = shader.create_inst(Op::Opcode(end), &[], &[], None, None);
                    self.ends.insert(i);
                    new.push(i);
                }
                Op::Jump if !falls_into(shader, layout, k, targets[0]) => {
                    new.push(self.jump(shader, targets[0])?);
                }
                Op::Branch => {
                    let (then, other) = (targets[0], targets[1]);
                    let before = shader.block_insts(b).to_vec();
                    let (compare, pred) = self.predicate(
                        shader,
                        predicate_file,
                        (args[0], uses.of(args[0]).len()),
                        &before[..before.len() - 1],
                        0,
                    )?;
                    new.extend(compare);
                    let (taken, invert, after) = if falls_into(shader, layout, k, other) {
                        (then, false, None)
                    } else if falls_into(shader, layout, k, then) {
                        (other, true, None)
                    } else {
                        (then, false, Some(other))
                    };
                    let mut br = self.idiom("branch")?;
                    if invert {
                        br = self.modified(br, "inv1", 1)?;
                    }
                    let i = shader.create_inst(Op::Opcode(br), &[pred], &[], None, None);
                    self.flow_targets.insert(i, taken);
                    new.push(i);
                    if let Some(t) = after {
                        new.push(self.jump(shader, t)?);
                    }
                }
                _ => {}
            }
            if !new.is_empty() {
                let mut insts = shader.block_insts(b).to_vec();
                let at = insts.len() - 1;
                insts.splice(at..at, new);
                shader.set_block_insts(b, &insts);
            }
        }
        Ok(())
    }

    /// `cond` in the predicate file: itself when it is there; the compare
    /// that computed it, now writing the predicate's component `unit`
    /// (see [`compare_into_predicate`](Self::compare_into_predicate));
    /// else the compare (the spec's `predicate16`/`predicate32`) that
    /// writes it there, and its result. `cond` comes with its number of
    /// uses, `before` is what runs before its reader in the block.
    fn predicate(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        predicate_file: Option<usize>,
        (cond, uses): (Value, usize),
        before: &[Inst],
        unit: u16,
    ) -> Result<(Option<Inst>, Value), LegaliseError> {
        let reg = reg_of(shader, cond)?;
        if Some(usize::from(reg.file)) == predicate_file {
            return Ok((None, cond));
        }
        let file = predicate_file
            .ok_or_else(|| LegaliseError::Spec(Error::Spec("no predicate register file".into())))?;
        let p0 = Reg {
            file: file as u8,
            unit,
        };
        if uses == 1 && self.compare_into_predicate(shader, file, cond, before) {
            shader.set_value_reg(cond, Some(p0));
            return Ok((None, cond));
        }
        let bits = shader.value_type(cond).scalar.bits();
        let idiom = if bits <= 16 {
            "predicate16"
        } else {
            "predicate32"
        };
        let cmp = self.idiom(idiom)?;
        let i = shader.create_inst(Op::Opcode(cmp), &[cond], &[], None, Some(Type::BOOL));
        let p = shader
            .inst(i)
            .result
            .ok_or_else(|| LegaliseError::Malformed("compare without a result".into()))?;
        shader.set_value_reg(p, Some(p0));
        Ok((Some(i), p))
    }

    /// Whether the compare that computes `cond` (a leaf the spec marks
    /// `writes_predicate`) can write the predicate register itself, as
    /// Mesa's ir3 does for a condition read only once: it runs in the
    /// same block before the reader (`before`), and nothing between them
    /// reads or writes the predicate file. On success the compare is
    /// rewritten without its destination conversion: a predicate has no
    /// precision, and the hardware's own words write p0.x with the
    /// sources' precision (Mesa's vector `cmps.s.eq p0.x, r1.x, 1`).
    fn compare_into_predicate(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        predicate_file: usize,
        cond: Value,
        before: &[Inst],
    ) -> bool {
        let def = shader.value_def(cond);
        let Some(at) = before.iter().position(|&i| i == def) else {
            return false;
        };
        let Op::Opcode(op) = shader.inst(def).op else {
            return false;
        };
        if !matches!(op.meta("writes_predicate"), Some(MetaValue::Ident(v)) if v == "true") {
            return false;
        }
        let in_predicate = |v: &Value| {
            shader
                .value_reg(*v)
                .is_some_and(|r| usize::from(r.file) == predicate_file)
        };
        let touches_predicate = before[at + 1..].iter().any(|&i| {
            let d = shader.inst(i);
            d.args.iter().any(in_predicate)
                || d.result
                    .iter()
                    .chain(d.second_result.iter())
                    .any(in_predicate)
        });
        if touches_predicate {
            return false;
        }
        let Some(plain) = op.with_modifier("dst_conv", 0) else {
            return false;
        };
        shader.inst_mut(def).op = Op::Opcode(plain);
        true
    }

    fn jump(
        &mut self,
        shader: &mut Shader<'_, MachineOp>,
        to: Block,
    ) -> Result<Inst, LegaliseError> {
        let op = self.idiom("jump")?;
        let i = shader.create_inst(Op::Opcode(op), &[], &[], None, None);
        self.flow_targets.insert(i, to);
        Ok(i)
    }

    /// Whether `i` fetches a varying (the spec's `varying_fetch`).
    fn is_varying_fetch(shader: &Shader<'_, MachineOp>, i: Inst) -> bool {
        matches!(shader.inst(i).op, Op::Opcode(m)
            if matches!(m.meta("varying_fetch"), Some(MetaValue::Ident(v)) if v == "true"))
    }

    /// A fragment shader with prefetches and no varying fetch of its own
    /// still ends its input phase with an `(ei)` fetch: the spec's
    /// `end_input` idiom at the top of the main part, into (and with
    /// barycentrics read from) registers that hold nothing there, so it
    /// disturbs nothing.
    fn end_input_of_prefetches(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let Some(&main) = layout.get(self.main) else {
            return Ok(());
        };
        if shader.stage != Stage::Fragment || self.prefetched.is_empty() {
            return Ok(());
        }
        let fetches = layout
            .iter()
            .flat_map(|&b| shader.block_insts(b).iter().copied())
            .any(|i| Self::is_varying_fetch(shader, i));
        if fetches {
            return Ok(());
        }
        let op = self.idiom("end_input")?;
        let ij_ty = Type::vector(lathe_ir::Scalar::F32, 2);
        let class = self.target.result_class(&Op::Opcode(op), ij_ty);
        // Live at the main part's head: the preloaded registers, and
        // (conservatively) whatever the preamble before it defines.
        let mut taken: HashSet<Unit> = HashSet::default();
        for (k, &b) in layout.iter().enumerate() {
            for &i in shader.block_insts(b) {
                let d = shader.inst(i);
                let Some(v) = d.result else { continue };
                if k < self.main || matches!(d.op, Op::Input { .. }) {
                    taken.extend(units_of(shader, self.target, v)?);
                }
            }
        }
        let file = class.file.0;
        let (n, align) = (class.units(ij_ty) as u16, u16::from(class.align.max(1)));
        let units = self.target.files()[usize::from(file)].units as u16;
        let unit = (0..units.saturating_sub(n))
            .step_by(usize::from(align))
            .find(|&u| (u..u + n).all(|w| !taken.contains(&(file, w))))
            .ok_or_else(|| {
                LegaliseError::Unsupported(
                    "no register left for the fetch that ends the input phase".into(),
                )
            })?;
        let reg = Reg { file, unit };
        // The barycentrics it reads: a value no instruction defines and
        // no block holds (the fetch's result is never read).
        let ij = shader.create_inst(Op::Input { index: u32::MAX }, &[], &[], None, Some(ij_ty));
        let ij = shader
            .inst(ij)
            .result
            .ok_or_else(|| LegaliseError::Malformed("an input without a result".into()))?;
        shader.set_value_reg(ij, Some(reg));
        let fetch = shader.create_inst(Op::Opcode(op), &[ij], &[], None, Some(Type::F32));
        if let Some(r) = shader.inst(fetch).result {
            shader.set_value_reg(r, Some(reg));
        }
        // After the preloaded inputs (they emit nothing).
        let head = shader.block_insts(main).to_vec();
        let at = head
            .iter()
            .position(|&i| !matches!(shader.inst(i).op, Op::Input { .. }))
            .unwrap_or(head.len());
        let mut insts = head[..at].to_vec();
        insts.push(fetch);
        insts.extend_from_slice(&head[at..]);
        shader.set_block_insts(main, &insts);
        Ok(())
    }

    /// The register units the texture prefetches write: pending on the
    /// spec's `sam` sync kind where the main part starts (a wave that
    /// skips the preamble reaches it with them still in flight).
    fn prefetched_units(
        &self,
        shader: &Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<Pending, LegaliseError> {
        let mut pending = Pending::new();
        if self.prefetched.is_empty() {
            return Ok(pending);
        }
        let kind = MachineOp::named("sam")
            .and_then(|m| sync_kind(&m))
            .ok_or_else(|| {
                LegaliseError::Spec(Error::Spec("the spec's `sam` has no sync kind".into()))
            })?;
        for &b in layout {
            for &i in shader.block_insts(b) {
                if let (Op::Input { index }, Some(v)) = (shader.inst(i).op, shader.inst(i).result)
                    && self.prefetched.contains(&index)
                {
                    for u in units_of(shader, self.target, v)? {
                        pending.insert(u, kind);
                    }
                }
            }
        }
        Ok(pending)
    }

    /// `(ei)` on the last varying fetch of a fragment shader.
    fn mark_end_of_input(&self, shader: &mut Shader<'_, MachineOp>, layout: &[Block]) {
        if shader.stage != Stage::Fragment {
            return;
        }
        let last = layout
            .iter()
            .rev()
            .flat_map(|&b| shader.block_insts(b).iter().rev().copied())
            .find(|&i| Self::is_varying_fetch(shader, i));
        if let Some(i) = last
            && let Op::Opcode(m) = shader.inst(i).op
            && let Some(with) = m.with_modifier("ei", 1)
        {
            shader.inst_mut(i).op = Op::Opcode(with);
        }
    }

    /// The register units an instruction reads and writes (an output
    /// counts as read by what comes next: the `end`).
    fn accesses(
        &self,
        shader: &Shader<'_, MachineOp>,
        i: Inst,
    ) -> Result<(Vec<Unit>, Vec<Unit>), LegaliseError> {
        let d = shader.inst(i);
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        match d.op {
            Op::Opcode(_) | Op::Swap | Op::Output { .. } | Op::Split { .. } => {
                for &a in d.args.iter().chain(d.address.iter()) {
                    reads.extend(units_of(shader, self.target, a)?);
                }
                for v in d.result.iter().chain(d.second_result.iter()) {
                    writes.extend(units_of(shader, self.target, *v)?);
                }
            }
            _ => {}
        }
        Ok((reads, writes))
    }

    /// Sync flags over the CFG: a fixed point of the pending asynchronous
    /// results at each block's entry, then one pass that sets the flags.
    fn insert_syncs(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let preds = predecessors(shader, layout);
        let prefetched = self.prefetched_units(shader, layout)?;
        let main = layout.get(self.main).copied();
        let entry_of = |exit: &HashMap<Block, Pending>, b: Block| {
            let mut entry = entry_state(&preds, exit, b);
            if Some(b) == main {
                entry.extend(prefetched.iter().map(|(&u, &k)| (u, k)));
            }
            entry
        };
        // What each instruction reads, writes and produces: the rounds
        // below change no instruction.
        let steps: Vec<Vec<SyncStep>> = layout
            .iter()
            .map(|&b| self.sync_steps(shader, b))
            .collect::<Result<_, _>>()?;
        let mut exit: HashMap<Block, Pending> = HashMap::default();
        let mut changed = true;
        let mut rounds = 0;
        while changed && rounds < 64 {
            changed = false;
            rounds += 1;
            for (&b, steps) in layout.iter().zip(&steps) {
                let out = self.sync_block(shader, b, steps, entry_of(&exit, b), false)?;
                if exit.get(&b) != Some(&out) {
                    exit.insert(b, out);
                    changed = true;
                }
            }
        }
        for (&b, steps) in layout.iter().zip(&steps) {
            self.sync_block(shader, b, steps, entry_of(&exit, b), true)?;
        }
        Ok(())
    }

    /// The [`SyncStep`] of each instruction of block `b`.
    fn sync_steps(
        &self,
        shader: &Shader<'_, MachineOp>,
        b: Block,
    ) -> Result<Vec<SyncStep>, LegaliseError> {
        let mut steps = Vec::new();
        for &i in shader.block_insts(b) {
            let (reads, writes) = self.accesses(shader, i)?;
            let op = shader.inst(i).op;
            steps.push(SyncStep {
                inst: i,
                reads,
                writes,
                output: matches!(op, Op::Output { .. }),
                emits: emits_word(shader, self.target, i)?,
                sync: match op {
                    Op::Opcode(m) => sync_kind(&m),
                    _ => None,
                },
            });
        }
        Ok(steps)
    }

    fn sync_block(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        b: Block,
        steps: &[SyncStep],
        mut pending: Pending,
        apply: bool,
    ) -> Result<Pending, LegaliseError> {
        let mut out = Vec::with_capacity(steps.len());
        let mut deferred: Vec<(u8, u16)> = Vec::new();
        for step in steps {
            let i = step.inst;
            if step.output {
                deferred.extend_from_slice(&step.reads);
                out.push(i);
                continue;
            }
            if !step.emits {
                out.push(i);
                continue;
            }
            let mut kinds: Vec<&'static str> = Vec::new();
            for u in step.reads.iter().chain(&deferred).chain(&step.writes) {
                if let Some(&k) = pending.get(u)
                    && !kinds.contains(&k)
                {
                    kinds.push(k);
                }
            }
            deferred.clear();
            kinds.sort_unstable();
            pending.retain(|_, k| !kinds.contains(k));
            if apply && !kinds.is_empty() {
                let mut carrier: Option<MachineOp> = None;
                for &k in &kinds {
                    let on_self = match shader.inst(i).op {
                        Op::Opcode(m) => m.with_modifier(k, 1),
                        _ => None,
                    };
                    match on_self {
                        Some(m) => shader.inst_mut(i).op = Op::Opcode(m),
                        None => {
                            let nop = match carrier {
                                Some(n) => n,
                                None => self.idiom("nop")?,
                            };
                            carrier = Some(self.modified(nop, k, 1)?);
                        }
                    }
                }
                if let Some(nop) = carrier {
                    out.push(shader.create_inst(Op::Opcode(nop), &[], &[], None, None));
                }
            }
            if let Some(k) = step.sync {
                for &u in &step.writes {
                    pending.insert(u, k);
                }
            }
            out.push(i);
        }
        if apply {
            shader.set_block_insts(b, &out);
        }
        Ok(pending)
    }

    /// The encoded words of block `b`, with the instruction each one is.
    fn block_words(
        &self,
        shader: &Shader<'_, MachineOp>,
        b: Block,
    ) -> Result<Vec<(Inst, u64)>, LegaliseError> {
        let mut out = Vec::new();
        for &i in shader.block_insts(b) {
            if let Some(w) = self.word(shader, i)? {
                out.push((i, w));
            }
        }
        Ok(out)
    }

    /// The word `i` encodes to ([`word_of`]), remembered in `words`.
    fn word(&self, shader: &Shader<'_, MachineOp>, i: Inst) -> Result<Option<u64>, LegaliseError> {
        if let Some(&w) = self.words.borrow().get(&i) {
            return Ok(w);
        }
        let g = self.target.generation_id();
        let w = word_of(shader, self.target, i)?.map(|w| w.encode(g));
        self.words.borrow_mut().insert(i, w);
        Ok(w)
    }

    /// Every way the hardware reaches block `b`'s first word: its CFG
    /// predecessors (`None`: up to the first flow instruction to `b`, else
    /// all, falling through), then its *physical* predecessors. Lanes
    /// that diverged run one group at a time, the group at the lowest
    /// address first, so a group that ends (`end`) or jumps past `b`
    /// hands the pipeline to the group waiting at `b`: the words of such
    /// a block run up to that flow instruction (`Some`), then `b`'s. The
    /// registers are the same numbers whichever lanes wrote them, so the
    /// delay slots count those paths too.
    fn ways_in(
        &self,
        shader: &Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> HashMap<Block, Vec<(Block, Option<Inst>)>> {
        let mut ways: HashMap<Block, Vec<(Block, Option<Inst>)>> = HashMap::default();
        for (b, ps) in predecessors(shader, layout) {
            ways.entry(b)
                .or_default()
                .extend(ps.into_iter().map(|p| (p, None)));
        }
        let position: HashMap<Block, usize> =
            layout.iter().enumerate().map(|(k, &b)| (b, k)).collect();
        for (kp, &p) in layout.iter().enumerate() {
            // Blocks after `p` already given their cut: the first word
            // that leaves past them.
            let mut reached = kp + 1;
            for &i in shader.block_insts(p) {
                let past = if self.ends.contains(&i) {
                    layout.len()
                } else {
                    match self.flow_targets.get(&i).and_then(|t| position.get(t)) {
                        Some(&kt) => kt,
                        None => continue,
                    }
                };
                for &b in layout.iter().take(past).skip(reached.max(kp + 1)) {
                    ways.entry(b).or_default().push((p, Some(i)));
                }
                reached = reached.max(past);
            }
        }
        ways
    }

    /// The words that run right before block `b` is entered, one list per
    /// path (up to [`WINDOW`] words each), and the blocks they come from.
    fn paths_into(
        &self,
        shader: &Shader<'_, MachineOp>,
        preds: &HashMap<Block, Vec<(Block, Option<Inst>)>>,
        b: Block,
        need: usize,
        depth: usize,
    ) -> Result<PathsFrom, LegaliseError> {
        let Some(ps) = preds.get(&b) else {
            return Ok(Default::default());
        };
        if let Some(known) = self.paths.borrow().get(&(b, need, depth)) {
            return Ok(known.clone());
        }
        let mut ways: Vec<Vec<Vec<u64>>> = Vec::with_capacity(ps.len());
        let mut read: Vec<Block> = Vec::new();
        for &(p, leaves) in ps {
            if !read.contains(&p) {
                read.push(p);
            }
            let words = self.block_words(shader, p)?;
            // The words of `p` that run before control reaches `b`: up to
            // its first flow instruction to `b` (or the one that leaves
            // past it), else all (fall-through).
            let cut = words
                .iter()
                .position(|(i, _)| match leaves {
                    None => self.flow_targets.get(i) == Some(&b),
                    Some(at) => *i == at,
                })
                .map_or(words.len(), |k| k + 1);
            let own: Vec<u64> = words[..cut].iter().map(|&(_, w)| w).collect();
            // Each way in keeps up to MAX_PATHS distinct paths for each
            // way into `p`, so that no way is crowded out by others' many
            // paths: not the physical ones listed last, nor a loop's back
            // edge behind a header without words of its own.
            let most = MAX_PATHS * preds.get(&p).map_or(1, |w| w.len().max(1));
            let mut mine: Vec<Vec<u64>> = Vec::new();
            if own.len() >= need || depth >= 4 {
                mine.push(own[own.len().saturating_sub(need)..].to_vec());
            } else {
                let (before, also) =
                    self.paths_into(shader, preds, p, need - own.len(), depth + 1)?;
                for x in also {
                    if !read.contains(&x) {
                        read.push(x);
                    }
                }
                if before.is_empty() {
                    mine.push(own);
                } else {
                    for mut path in before {
                        path.extend_from_slice(&own);
                        if !mine.contains(&path) {
                            mine.push(path);
                        }
                        if mine.len() >= most {
                            break;
                        }
                    }
                }
            }
            ways.push(mine);
        }
        // The ways' paths taken in turn, so that a caller's limit keeps
        // some of every way.
        let mut paths = Vec::new();
        for k in 0..ways.iter().map(Vec::len).max().unwrap_or(0) {
            for path in ways.iter().filter_map(|w| w.get(k)) {
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
        }
        self.paths
            .borrow_mut()
            .insert((b, need, depth), (paths.clone(), read.clone()));
        Ok((paths, read))
    }

    /// Delay slots: rounds over the layout until no instruction needs
    /// more (each round only adds slots).
    fn insert_nops(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let preds = self.ways_in(shader, layout);
        self.words.borrow_mut().clear();
        self.paths.borrow_mut().clear();
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for &b in layout {
                if self.nops_in_block(shader, &preds, b)? {
                    // Paths through `b` hold its old words.
                    self.paths
                        .borrow_mut()
                        .retain(|_, (_, read)| !read.contains(&b));
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
        }
        Err(LegaliseError::Malformed(
            "delay slots did not settle (a loop whose nops keep growing)".into(),
        ))
    }

    fn nops_in_block(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        preds: &HashMap<Block, Vec<(Block, Option<Inst>)>>,
        b: Block,
    ) -> Result<bool, LegaliseError> {
        let g = self.target.generation_id();
        let (mut paths, _) = self.paths_into(shader, preds, b, WINDOW, 0)?;
        if paths.is_empty() {
            paths.push(Vec::new());
        }
        let insts = shader.block_insts(b).to_vec();
        let mut out: Vec<Inst> = Vec::with_capacity(insts.len());
        // Words of this block so far, with their instruction.
        let mut prefix: Vec<(Inst, u64)> = Vec::new();
        let mut changed = false;
        for i in insts {
            let Some(word) = self.word(shader, i)? else {
                out.push(i);
                continue;
            };
            let mut needed = 0;
            let recent = &prefix[prefix.len().saturating_sub(WINDOW)..];
            let empty = [Vec::new()];
            let outside: &[Vec<u64>] = if recent.len() >= WINDOW {
                &empty
            } else {
                &paths
            };
            for path in outside {
                let mut program: Vec<u64> = path.clone();
                program.extend(recent.iter().map(|&(_, w)| w));
                program.push(word);
                needed = needed.max(delay::required_nops_cached(
                    &program,
                    self.generation,
                    &mut self.decoded.borrow_mut(),
                )?);
            }
            if needed > 0 {
                changed = true;
                let folded = match prefix.last() {
                    Some(&(prev, _)) => self.fold_nops(shader, prev, needed)?,
                    None => 0,
                };
                if folded > 0
                    && let Some(last) = prefix.last_mut()
                {
                    last.1 = self.word(shader, last.0)?.unwrap_or(last.1);
                }
                let rest = needed - folded;
                if rest > 0 {
                    let nop = self.idiom("nop")?;
                    let nop = self.modified(nop, "repeat", u64::from(rest - 1))?;
                    let n = shader.create_inst(Op::Opcode(nop), &[], &[], None, None);
                    let word = nop.encode(&[], &[], g);
                    self.words.borrow_mut().insert(n, Some(word));
                    out.push(n);
                    prefix.push((n, word));
                }
            }
            out.push(i);
            prefix.push((i, word));
        }
        if changed {
            shader.set_block_insts(b, &out);
        }
        Ok(changed)
    }

    /// Folds up to `n` delay slots into `prev`'s `(nopN)` form (the
    /// spec's `nop_value` fields, checked by decoding the result); the
    /// number folded.
    fn fold_nops(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        prev: Inst,
        n: u32,
    ) -> Result<u32, LegaliseError> {
        let Op::Opcode(op) = shader.inst(prev).op else {
            return Ok(0);
        };
        let Some(w) = word_of(shader, self.target, prev)? else {
            return Ok(0);
        };
        let g = self.target.generation_id();
        let word = self.word(shader, prev)?.unwrap_or_else(|| w.encode(g));
        let have = delay::nop_slots(word, self.generation, &mut self.decoded.borrow_mut())?;
        let fields = nop_fields();
        if fields.is_empty() {
            return Ok(0);
        }
        let most = (1u32 << fields.len()) - 1;
        let total = (have + n).min(most);
        if total <= have {
            return Ok(0);
        }
        let mut m = op;
        for (bit, f) in fields.iter().enumerate() {
            match m.with_modifier(f, u64::from((total >> bit) & 1)) {
                Some(x) => m = x,
                None => return Ok(0),
            }
        }
        let word = Word {
            op: m,
            sources: w.sources,
            dests: w.dests,
        };
        // Only a word the decoder reads back as (nop`total`) is a fold.
        let slots = delay::nop_slots(
            word.encode(g),
            self.generation,
            &mut self.decoded.borrow_mut(),
        )?;
        if slots != total {
            return Ok(0);
        }
        shader.inst_mut(prev).op = Op::Opcode(m);
        self.words.borrow_mut().remove(&prev);
        Ok(total - have)
    }

    /// `(jp)` on the first instruction at each branch target (a `nop`
    /// carries it when that instruction has no field for it).
    fn mark_jump_targets(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let targets: HashSet<Block> = self.flow_targets.values().copied().collect();
        // A target block that emits nothing starts where the next one does.
        let mut marking = false;
        for &b in layout {
            marking |= targets.contains(&b);
            if !marking {
                continue;
            }
            let insts = shader.block_insts(b).to_vec();
            let Some(pos) = insts
                .iter()
                .position(|&i| matches!(shader.inst(i).op, Op::Opcode(_) | Op::Swap))
            else {
                continue;
            };
            let first = insts[pos];
            let with = match shader.inst(first).op {
                Op::Opcode(m) => m.with_modifier("jp", 1),
                _ => None,
            };
            match with {
                Some(m) => shader.inst_mut(first).op = Op::Opcode(m),
                None => {
                    let nop = self.modified(self.idiom("nop")?, "jp", 1)?;
                    let n = shader.create_inst(Op::Opcode(nop), &[], &[], None, None);
                    let mut insts = insts;
                    insts.insert(pos, n);
                    shader.set_block_insts(b, &insts);
                }
            }
            marking = false;
        }
        Ok(())
    }

    /// Each jump's and branch's offset: its target's address minus its own.
    fn set_offsets(
        &self,
        shader: &mut Shader<'_, MachineOp>,
        layout: &[Block],
    ) -> Result<(), LegaliseError> {
        let mut address: HashMap<Block, i64> = HashMap::default();
        let mut at_inst: HashMap<Inst, i64> = HashMap::default();
        let mut pc = 0i64;
        for &b in layout {
            address.insert(b, pc);
            // Every word counts, a split's copy too.
            for &i in shader.block_insts(b) {
                if emits_word(shader, self.target, i)? {
                    at_inst.insert(i, pc);
                    pc += 1;
                }
            }
        }
        for (&i, to) in &self.flow_targets {
            let (Some(&from), Some(&dest)) = (at_inst.get(&i), address.get(to)) else {
                return Err(LegaliseError::Malformed(
                    "a flow instruction left the layout".into(),
                ));
            };
            let Op::Opcode(m) = shader.inst(i).op else {
                continue;
            };
            let offset = (dest - from) as i32 as u32;
            shader.inst_mut(i).op = Op::Opcode(self.modified(m, "immed", u64::from(offset))?);
        }
        Ok(())
    }
}

/// The words on each path into a block ([`Legaliser::paths_into`]).
type Paths = Vec<Vec<u64>>;

/// [`Paths`] with the blocks whose words they hold.
type PathsFrom = (Paths, Vec<Block>);

/// A register unit: file and unit index.
type Unit = (u8, u16);

/// What the sync flags depend on of one instruction.
struct SyncStep {
    inst: Inst,
    /// Register units it reads and writes ([`Legaliser::accesses`]).
    reads: Vec<Unit>,
    writes: Vec<Unit>,
    /// An output: its registers count as read by the next word.
    output: bool,
    emits: bool,
    /// Its result's sync kind ([`sync_kind`]).
    sync: Option<&'static str>,
}

/// Register units waiting for an asynchronous result, with the sync kind.
type Pending = std::collections::BTreeMap<(u8, u16), &'static str>;

fn entry_state(
    preds: &HashMap<Block, Vec<Block>>,
    exit: &HashMap<Block, Pending>,
    b: Block,
) -> Pending {
    let mut entry = Pending::new();
    for p in preds.get(&b).into_iter().flatten() {
        if let Some(e) = exit.get(p) {
            entry.extend(e.iter().map(|(&k, &v)| (k, v)));
        }
    }
    entry
}

fn predecessors(shader: &Shader<'_, MachineOp>, layout: &[Block]) -> HashMap<Block, Vec<Block>> {
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::default();
    for &b in layout {
        for &s in shader.successors(b) {
            let list = preds.entry(s).or_default();
            if !list.contains(&b) {
                list.push(b);
            }
        }
    }
    preds
}

/// The fields whose bits, low first, count an instruction's `(nopN)`
/// slots: the names the spec's `nop_value` expression reads, in order, as
/// the lower-case keys of the IR's modifiers.
fn nop_fields() -> Vec<String> {
    fn names(e: &lathe_isa::expr::Expr, out: &mut Vec<String>) {
        use lathe_isa::expr::ExprKind;
        match &e.kind {
            ExprKind::Name(n) => {
                let key = n.to_lowercase();
                if !out.contains(&key) {
                    out.push(key);
                }
            }
            ExprKind::Unary(_, a) => names(a, out),
            ExprKind::Binary(_, a, b) => {
                names(a, out);
                names(b, out);
            }
            ExprKind::Cond(a, b, c) => {
                names(a, out);
                names(b, out);
                names(c, out);
            }
            ExprKind::Named(_, _, args) => args.iter().for_each(|a| names(a, out)),
            ExprKind::Int(_) | ExprKind::Gen => {}
        }
    }
    let mut out = Vec::new();
    if let Some(e) = Spec::isa().exprs.iter().find(|e| e.name == "nop_value") {
        names(&e.expr, &mut out);
    }
    out
}
