//! Differential verification of compiled code: a target runs its
//! compiled program (on its generated simulator) and the reference
//! [interpreter](crate::interp) runs the generic shader it came from, on
//! the same random inputs; every output and every storage-buffer word
//! must agree. This is what `lathe compile --verify` does, whatever the
//! target: a target plugs in by implementing [`Executor`].
//!
//! Inputs come from what the shader reads ([`random_inputs`]): varyings
//! and attributes by slot, uniforms (push constants), UBO and SSBO words,
//! textures, system values, meta inputs — drawn from a seed, so a run
//! reproduces. Values are small (floats in ±10 with a few exact specials,
//! integers half small and half any), so most draws stay clear of
//! undefined behaviour; a draw the interpreter finds undefined, or whose
//! run does not end within the interpreter's step limit (a loop whose
//! bounds come from uniforms may not end on random ones), is replaced by
//! the next one, up to [`Options::draws`]. Before that, a draw whose run
//! reads or writes out of bounds at an address computed from input words
//! (an index from a uniform, a linked list's next index from a buffer)
//! is repaired: the interpreter names the words the address came from
//! and they are re-rolled towards small values ([`Report::repaired`]).
//!
//! Threads: fragment shaders run as 2×2 quads in lockstep
//! ([`interp::run_quad`]; the executor runs the same lanes together),
//! compute shaders as one workgroup of [`Options::threads`] invocations
//! (at most the declared [`Options::workgroup_size`]; a data race between
//! them is undefined behaviour, see [`crate::races`]),
//! vertex shaders as independent invocations (vertex index = thread;
//! when the shader writes no memory, a thread whose run is undefined, as
//! a vertex index past a constant table, is left out of the comparison
//! and the others are compared).
//!
//! Tolerance: bits must be equal, except that any two NaNs agree, that
//! +0 and -0 agree unless the shader preserves float specials
//! ([`Shader::preserve_float_specials`]: otherwise an optimiser may fold
//! `(x - x) * y` to +0), and that each output, storage-buffer word and
//! image channel is compared as exact as the interpreter found it
//! ([`crate::exactness`], through data flow, arrays and memory): a float
//! computed from an approximate operation (`rcp`, `rsqrt`, `sqrt`,
//! `fdiv`, `exp2`, `log2`, `sin`, `cos`, whose results IEEE does not pin
//! or that GPUs compute in their special-function units) agrees within
//! [`F32_TOLERANCE`] / [`F16_TOLERANCE`] (absolute + relative), integers
//! are always exact, and an undefined value (an out-of-bounds image load,
//! a derivative in non-uniform control flow, an atomic whose result the
//! order of other invocations' atomics decides) is not compared. A draw
//! of a shader with storage-buffer atomics that is undefined, or leaves
//! values undefined, is run by the executor first: the order its atomics
//! took, checked for legality, is followed by the interpreter
//! ([`crate::atomic_order`]) and the results compared exactly. Memory
//! words are compared as the type last stored to them. Of the defined
//! draws, the first with no undefined value is compared, else the one
//! with the fewest; a run whose every value is undefined verifies
//! nothing and fails ([`VerifyError::NoDefinedOutput`]).
//!
//! ```
//! use lathe_ir::verify::{self, ExecError, Executor, Options};
//! use lathe_ir::{GenericOp, Invocation, Memory, Outcome};
//!
//! /// An "executor" that runs the interpreter itself: always agrees.
//! struct Same<'s, 'a>(&'s lathe_ir::Shader<'a, GenericOp>);
//! impl Executor for Same<'_, '_> {
//!     fn execute(&self, threads: &[Invocation], memory: &mut Memory) -> Result<Vec<Outcome>, ExecError> {
//!         let quad: &[Invocation; 4] = threads.try_into().unwrap();
//!         lathe_ir::interp::run_quad(self.0, quad, memory, Default::default())
//!             .map(Vec::from)
//!             .map_err(|e| ExecError::Failed(e.to_string()))
//!     }
//! }
//! let arena = lathe_ir::Bump::new();
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_uniform index=2\n  %2:f32 = fmul %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n";
//! let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! let report = verify::verify(&shader, &Same(&shader), &Options::default()).unwrap();
//! assert_eq!((report.threads, report.compared), (4, 4));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::atomic_order::AtomicOrder;
use crate::attrs::{Dim, TexShape};
use crate::exactness::Exactness;
use crate::f16;
use crate::generic::GenericOp;
use crate::interp::{self, Invocation, Limits, Memory, Outcome, SysVals};
use crate::opcode::{BarrierClass, Op};
use crate::shader::{Shader, Stage, Value};
use crate::texture::{Level, Texture};
use crate::types::{Scalar, Type};

/// Absolute and relative tolerance of approximate f32 outputs.
pub const F32_TOLERANCE: (f64, f64) = (1e-5, 1e-4);
/// Absolute and relative tolerance of approximate f16 outputs.
pub const F16_TOLERANCE: (f64, f64) = (1e-3, 2e-3);

/// Words of each UBO and SSBO the shader uses.
pub const BUFFER_WORDS: usize = 1024;
/// Shared-memory words of a compute workgroup.
pub const SHARED_WORDS: usize = 4096;

/// Runs a compiled program: one outcome per thread, in thread order.
/// Threads of a fragment shader are 2×2 quads (lanes 0–3 are one quad),
/// of a compute shader one workgroup; `memory` holds the storage buffers
/// and images the program reads and writes.
pub trait Executor {
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError>;
}

/// Why an [`Executor`] did not produce outcomes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The simulator's timing model caught a read before its producer's
    /// result was ready (a legalisation defect).
    #[error("hazard: {0}")]
    Hazard(String),
    /// Anything else (a fault, an input the executor cannot provide).
    #[error("{0}")]
    Failed(String),
}

/// How to verify.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Seed of the random inputs.
    pub seed: u64,
    /// Threads per run (a multiple of 4 for fragment shaders).
    pub threads: usize,
    /// Input draws to try before giving up when the interpreter finds
    /// every one undefined.
    pub draws: u32,
    /// A compute shader's declared workgroup size (from its interface):
    /// a run is one workgroup, so it has at most this many threads, with
    /// local ids laid out in it. `None`: a row of `threads`.
    pub workgroup_size: Option<[u32; 3]>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 1,
            threads: 4,
            draws: 16,
            workgroup_size: None,
        }
    }
}

/// A verification that passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub threads: usize,
    /// Output components, buffer words and image channels compared.
    pub compared: usize,
    /// Those left out as undefined values.
    pub undefined: usize,
    /// The draw (0-based) whose inputs were defined.
    pub draw: u32,
    /// Rounds of input repair that draw needed (see the module docs): 0 when
    /// its random inputs were defined as drawn.
    pub repaired: u32,
}

/// Why verification failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "mismatch: {what} of thread {thread} ({ty}{approx}): interpreter 0x{expected:08x} ({}), compiled 0x{got:08x} ({})",
        show(*ty, *expected),
        show(*ty, *got),
        approx = if *approximate { ", approximate" } else { "" }
    )]
    Mismatch {
        /// `output slot S comp C`, `meta output N`, `ssbo B word W`, ...
        what: String,
        thread: usize,
        ty: Type,
        expected: u32,
        got: u32,
        approximate: bool,
    },
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The executor's atomics are no legal order, or not the ones the
    /// interpreter performs ([`crate::atomic_order`]).
    #[error("atomic order: {0}")]
    AtomicOrder(String),
    #[error("interpreter: {0}")]
    Interpreter(String),
    #[error(
        "no defined run: every one of {draws} input draws is undefined behaviour or does not end (last: {last})"
    )]
    Undefined { draws: u32, last: String },
    #[error(
        "no defined output: every one of the {undefined} values the interpreter computed is undefined, so nothing was compared"
    )]
    NoDefinedOutput { undefined: usize },
}

impl VerifyError {
    /// The simulator reported a timing hazard (`lathe compile --verify`
    /// exits with 3).
    pub fn is_hazard(&self) -> bool {
        matches!(self, VerifyError::Exec(ExecError::Hazard(_)))
    }
}

fn show(ty: Type, bits: u32) -> String {
    match ty.scalar {
        Scalar::F32 => format!("{:?}", f32::from_bits(bits)),
        Scalar::F16 => format!("{:?}", f16::to_f32(bits as u16)),
        s if s.is_signed_int() && s.bits() == 16 => (bits as u16 as i16).to_string(),
        s if s.is_signed_int() => (bits as i32).to_string(),
        _ => bits.to_string(),
    }
}

/// Runs `shader` in the interpreter and `exec` on the same random inputs
/// and compares their outputs and storage buffers.
pub fn verify(
    shader: &Shader<'_, GenericOp>,
    exec: &dyn Executor,
    options: &Options,
) -> Result<Report, VerifyError> {
    let rules = Rules {
        signed_zeros: shader.preserve_float_specials,
    };
    let ordered_atomics = shader
        .insts_in_order()
        .any(|(_, i)| matches!(shader.inst(i).op, Op::Opcode(GenericOp::SsboAtomic { .. })));
    let mut last = String::new();
    // The defined draw with the fewest undefined values so far.
    let mut best: Option<Interpreted> = None;
    for draw in 0..options.draws.max(1) {
        let seed = options
            .seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(draw as u64);
        // The second half of the draws keep texel fetches in bounds.
        let bounded = draw >= options.draws.max(1) / 2;
        let (mut threads, mut memory) = draw_inputs(shader, seed, options, bounded);
        let mut want_memory = memory.clone();
        let mut repair = Repair::new(seed);
        let mut run_inputs = None;
        let want = loop {
            let outcome = interp::run_in_hindsight(&mut want_memory, |m| {
                interpret(shader, &threads, m, Limits::default())
            });
            match outcome {
                Err(e) if e.is_undefined() && repair.rounds < MAX_REPAIRS => {
                    if !repair.reroll(shader, &mut threads, &mut memory) {
                        break Err(e);
                    }
                    want_memory = memory.clone();
                }
                o => break o,
            }
        };
        let mut run = match want {
            Ok(want) => Some(Interpreted {
                undefined: undefined_values(&want, &want_memory),
                draw,
                repaired: repair.rounds,
                threads,
                memory,
                want,
                want_memory,
                executed: None,
            }),
            // A run past the step limit does not end on these inputs (a
            // loop stepping by a uniform that is 0 or negative, a sample
            // count in the billions): like undefined behaviour, nothing
            // to compare, so the next draw is tried.
            Err(e) if e.is_undefined() || matches!(e, interp::InterpError::StepLimit(_)) => {
                last = e.to_string();
                run_inputs = Some((threads, memory));
                None
            }
            Err(e) => return Err(VerifyError::Interpreter(e.to_string())),
        };
        // Atomics whose order decides a result: follow the compiled
        // program's order.
        if ordered_atomics && run.as_ref().is_none_or(|r| r.undefined > 0) {
            let (threads, memory) = match (&run, run_inputs.take()) {
                (_, Some(inputs)) => inputs,
                (Some(r), None) => (r.threads.clone(), r.memory.clone()),
                (None, None) => continue,
            };
            match ordered(shader, exec, (threads, memory), (draw, repair.rounds))? {
                Ok(o) => {
                    if run.as_ref().is_none_or(|r| o.undefined < r.undefined) {
                        run = Some(o);
                    }
                }
                Err(why) => last = why,
            }
        }
        let Some(run) = run else { continue };
        let done = run.undefined == 0;
        if best.as_ref().is_none_or(|b| run.undefined < b.undefined) {
            best = Some(run);
        }
        if done {
            break;
        }
    }
    let Some(run) = best else {
        return Err(VerifyError::Undefined {
            draws: options.draws.max(1),
            last,
        });
    };
    let (got, got_memory) = match run.executed {
        Some(executed) => executed,
        None => {
            let mut got_memory = run.memory;
            (exec.execute(&run.threads, &mut got_memory)?, got_memory)
        }
    };
    let counts =
        compare(rules, &run.want, &got)? + compare_memory(rules, &run.want_memory, &got_memory)?;
    if counts.compared == 0 && counts.undefined > 0 {
        return Err(VerifyError::NoDefinedOutput {
            undefined: counts.undefined,
        });
    }
    Ok(Report {
        threads: run.threads.len(),
        compared: counts.compared,
        undefined: counts.undefined,
        draw: run.draw,
        repaired: run.repaired,
    })
}

/// Most input repairs of one draw (each re-rolls the words one
/// out-of-bounds access was computed from).
const MAX_REPAIRS: u32 = 64;

/// Input repair by provenance: when a draw's run is undefined behaviour
/// at a memory access (an index computed from random words points out of
/// bounds), the interpreter runs the draw again tracing where every
/// value comes from ([`Limits::sources`]), and the input words the
/// access's address was computed from (uniform, UBO, storage-buffer and
/// input words) are re-rolled towards small values: integers in `0..4`,
/// floats in `[0, 1)`, the range halving with each re-roll of the same
/// word down to 0, which addresses the first element. This is how a
/// driver's data looks to a shader that indexes with it (a slice offset,
/// a linked list's next index), without a rule per shader.
struct Repair {
    rng: Rng,
    /// Re-rolls per word so far.
    times: BTreeMap<interp::Source, u32>,
    /// Rounds of re-rolls done.
    rounds: u32,
}

impl Repair {
    fn new(seed: u64) -> Repair {
        Repair {
            rng: Rng(seed ^ 0x7e9a_17ed_5eed),
            times: BTreeMap::new(),
            rounds: 0,
        }
    }

    /// Runs `threads` again tracing sources and re-rolls the words the
    /// failing access's address came from; false when it names none (the
    /// undefined behaviour is no access addressed by input words).
    fn reroll(
        &mut self,
        shader: &Shader<'_, GenericOp>,
        threads: &mut [Invocation],
        memory: &mut Memory,
    ) -> bool {
        let traced = Limits {
            sources: true,
            ..Limits::default()
        };
        let mut scratch = memory.clone();
        let sources =
            match interp::run_in_hindsight(&mut scratch, |m| interpret(shader, threads, m, traced))
            {
                Err(interp::InterpError::Undefined { sources, .. }) if !sources.is_empty() => {
                    sources
                }
                _ => return false,
            };
        let r = reads(shader);
        for source in sources {
            let times = self.times.entry(source).or_insert(0);
            let range = 4u64 >> (*times).min(3);
            *times += 1;
            let mut small = |s: Scalar| match s {
                Scalar::F32 => (self.rng.below(range * 256) as f32 / 1024.0).to_bits(),
                Scalar::F16 => f16::from_f32(self.rng.below(range * 256) as f32 / 1024.0) as u32,
                _ => self.rng.below(range) as u32,
            };
            use interp::Source;
            match source {
                Source::Uniform { word } => {
                    let bits = small(r.uniforms.get(&word).copied().unwrap_or(Scalar::U32));
                    for t in threads.iter_mut() {
                        if let Some(w) = t.uniforms.get_mut(word as usize) {
                            *w = bits;
                        }
                    }
                }
                Source::Ubo { binding, word } => {
                    let bits = small(r.ubos.get(&binding).copied().unwrap_or(Scalar::U32));
                    for t in threads.iter_mut() {
                        if let Some(w) = t
                            .ubos
                            .get_mut(binding as usize)
                            .and_then(|b| b.get_mut(word as usize))
                        {
                            *w = bits;
                        }
                    }
                }
                Source::Ssbo { binding, word } => {
                    let bits = small(r.ssbos.get(&binding).copied().unwrap_or(Scalar::U32));
                    if let Some(w) = memory
                        .ssbos
                        .get_mut(binding as usize)
                        .and_then(|b| b.get_mut(word as usize))
                    {
                        *w = bits;
                    }
                }
                Source::Input { slot, comp } => {
                    let s = r.inputs.get(&(slot, comp)).copied().unwrap_or(Scalar::U32);
                    for t in threads.iter_mut() {
                        t.inputs.insert((slot, comp), small(s));
                    }
                }
                Source::Meta { index } => {
                    let s = r.meta_inputs.get(&index).copied().unwrap_or(Scalar::U32);
                    for t in threads.iter_mut() {
                        if let Some(w) = t.meta_inputs.get_mut(index as usize) {
                            *w = small(s);
                        }
                    }
                }
            }
        }
        self.rounds += 1;
        true
    }
}

/// A defined draw: its inputs and what the interpreter made of them.
struct Interpreted {
    draw: u32,
    repaired: u32,
    threads: Vec<Invocation>,
    memory: Memory,
    want: Vec<Option<Outcome>>,
    want_memory: Memory,
    /// Outputs, buffer words and image channels it left undefined.
    undefined: usize,
    /// The executor's outcomes and memory, when the interpreter followed
    /// its order of atomics.
    executed: Option<(Vec<Outcome>, Memory)>,
}

/// The draw `inputs` run by `exec` first, then by the interpreter
/// following the order of storage-buffer atomics the executor's run
/// fixed ([`crate::atomic_order`]); `Ok(Err(why))` when the draw is
/// still undefined (or the executor cannot run it) and the next one
/// should be tried. An illegal order, or atomics that differ from the
/// interpreter's, fail verification.
fn ordered(
    shader: &Shader<'_, GenericOp>,
    exec: &dyn Executor,
    (threads, memory): (Vec<Invocation>, Memory),
    (draw, repaired): (u32, u32),
) -> Result<Result<Interpreted, String>, VerifyError> {
    let mut got_memory = memory.clone();
    let got = match exec.execute(&threads, &mut got_memory) {
        Ok(got) => got,
        Err(e @ ExecError::Hazard(_)) => return Err(e.into()),
        Err(e) => return Ok(Err(format!("following the program's atomics: {e}"))),
    };
    let order = AtomicOrder::new(&got_memory.atomic_log, &memory.ssbos)
        .map_err(VerifyError::AtomicOrder)?;
    let mut want_memory = Memory {
        atomic_order: Some(order),
        ..memory.clone()
    };
    let want = match interp::run_in_hindsight(&mut want_memory, |m| {
        interpret(shader, &threads, m, Limits::default())
    }) {
        Ok(want) => want,
        Err(interp::InterpError::AtomicOrder(e)) => return Err(VerifyError::AtomicOrder(e)),
        Err(e) if e.is_undefined() || matches!(e, interp::InterpError::StepLimit(_)) => {
            return Ok(Err(format!("following the program's atomics: {e}")));
        }
        Err(e) => return Err(VerifyError::Interpreter(e.to_string())),
    };
    let order = want_memory.atomic_order.take().unwrap_or_default();
    order.finish().map_err(VerifyError::AtomicOrder)?;
    // Each run leaves the word as the whole order does.
    for ((binding, word), value) in order.finals() {
        if let Some(w) = want_memory
            .ssbos
            .get_mut(usize::from(binding))
            .and_then(|b| b.get_mut(word as usize))
        {
            *w = value;
        }
    }
    Ok(Ok(Interpreted {
        draw,
        repaired,
        undefined: undefined_values(&want, &want_memory),
        threads,
        memory,
        want,
        want_memory,
        executed: Some((got, got_memory)),
    }))
}

/// How many of a run's outputs and written memory words are undefined.
fn undefined_values(want: &[Option<Outcome>], memory: &Memory) -> usize {
    let outputs: usize = want
        .iter()
        .flatten()
        .map(|o| {
            let undefined = |e: &Exactness| *e == Exactness::Undefined;
            o.inexact.values().filter(|e| undefined(e)).count()
                + o.inexact_meta.values().filter(|e| undefined(e)).count()
        })
        .sum();
    outputs + memory.written.undefined()
}

/// How values are compared beyond their [`Exactness`].
#[derive(Clone, Copy, Debug)]
struct Rules {
    /// +0 and -0 differ (the shader preserves float specials).
    signed_zeros: bool,
}

/// Values compared and values left out as undefined.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    compared: usize,
    undefined: usize,
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            compared: self.compared + o.compared,
            undefined: self.undefined + o.undefined,
        }
    }
}

impl Counts {
    /// Compares one value of type `ty` as `exactness` says: counts it, or
    /// the mismatch (`what` names it for the message).
    fn value(
        &mut self,
        rules: Rules,
        (ty, exactness): (Type, Exactness),
        (expected, got): (u32, u32),
        what: impl FnOnce() -> (String, usize),
    ) -> Result<(), VerifyError> {
        let approximate = match exactness {
            Exactness::Undefined => {
                self.undefined += 1;
                return Ok(());
            }
            e => e == Exactness::Approximate,
        };
        if !agree(rules, ty, expected, got, approximate) {
            let (what, thread) = what();
            return Err(VerifyError::Mismatch {
                what,
                thread,
                ty,
                expected,
                got,
                approximate,
            });
        }
        self.compared += 1;
        Ok(())
    }
}

/// The interpreter's outcomes for `threads` as the stage groups them;
/// `None` for a vertex-like thread whose run is undefined while the
/// others' are not (see [`independent_threads`]).
fn interpret(
    shader: &Shader<'_, GenericOp>,
    threads: &[Invocation],
    memory: &mut Memory,
    limits: Limits,
) -> Result<Vec<Option<Outcome>>, interp::InterpError> {
    match shader.stage {
        Stage::Fragment => {
            let mut out = Vec::with_capacity(threads.len());
            for quad in threads.chunks(4) {
                let quad: &[Invocation; 4] = quad.try_into().map_err(|_| {
                    interp::InterpError::Malformed("fragment threads come in quads of 4".into())
                })?;
                out.extend(
                    interp::run_quad(shader, quad, memory, limits)?
                        .into_iter()
                        .map(Some),
                );
            }
            Ok(out)
        }
        Stage::Compute => Ok(interp::run_workgroup(shader, threads, memory, limits)?
            .into_iter()
            .map(Some)
            .collect()),
        _ => {
            let skip_undefined = independent_threads(shader);
            let mut out = Vec::with_capacity(threads.len());
            let mut undefined = None;
            for inv in threads {
                match interp::run_with_memory(shader, inv, memory, limits) {
                    Ok(o) => out.push(Some(o)),
                    Err(e) if skip_undefined && e.is_undefined() => {
                        out.push(None);
                        undefined = Some(e);
                    }
                    Err(e) => return Err(e),
                }
            }
            match undefined {
                Some(e) if out.iter().all(Option::is_none) => Err(e),
                _ => Ok(out),
            }
        }
    }
}

/// Vertex-like threads are independent invocations: when the shader
/// writes no memory, one whose run is undefined (a vertex index past the
/// end of a constant table, say) leaves the others' outcomes defined, so
/// only that thread goes uncompared.
fn independent_threads(shader: &Shader<'_, GenericOp>) -> bool {
    let writes = BarrierClass::BUFFER_W.union(BarrierClass::SHARED_W);
    !shader
        .insts_in_order()
        .any(|(_, i)| shader.inst(i).op.effects().barrier.intersects(writes))
}

/// Compares outcomes thread by thread.
fn compare(rules: Rules, want: &[Option<Outcome>], got: &[Outcome]) -> Result<Counts, VerifyError> {
    if want.len() != got.len() {
        return Err(ExecError::Failed(format!(
            "{} outcomes for {} threads",
            got.len(),
            want.len()
        ))
        .into());
    }
    let mut counts = Counts::default();
    for (thread, (w, g)) in want.iter().zip(got).enumerate() {
        let Some(w) = w else { continue };
        if w.discarded != g.discarded {
            return Err(VerifyError::Mismatch {
                what: "discard".into(),
                thread,
                ty: Type::BOOL,
                expected: w.discarded as u32,
                got: g.discarded as u32,
                approximate: false,
            });
        }
        let slots = w.outputs.iter().map(|(&(s, c), &v)| {
            let e = w.inexact.get(&(s, c)).copied().unwrap_or_default();
            (Key::Slot(s, c), v, e, g.outputs.get(&(s, c)).copied())
        });
        let metas = w.meta_outputs.iter().map(|(&k, &v)| {
            let e = w.inexact_meta.get(&k).copied().unwrap_or_default();
            (Key::Meta(k), v, e, g.meta_outputs.get(&k).copied())
        });
        for (key, (ty, expected), exactness, got) in slots.chain(metas) {
            let Some((got_ty, got)) = got else {
                return Err(
                    ExecError::Failed(format!("{key} of thread {thread} not written")).into(),
                );
            };
            // An f32 output the program hands on as an f16 (a format the
            // hardware reads, as Mali's point size) is compared at that
            // precision.
            let (ty, expected) = if ty == Type::F32 && got_ty == Type::F16 {
                (
                    Type::F16,
                    u32::from(f16::from_f32(f32::from_bits(expected))),
                )
            } else {
                (ty, expected)
            };
            counts.value(rules, (ty, exactness), (expected, got), || {
                (key.to_string(), thread)
            })?;
        }
    }
    Ok(counts)
}

/// Compares storage buffers and images word by word, each as the type
/// and exactness of its last write (a word never written is exact bits).
fn compare_memory(rules: Rules, want: &Memory, got: &Memory) -> Result<Counts, VerifyError> {
    let mut counts = Counts::default();
    let as_written = |w: Option<(Scalar, Exactness)>| {
        w.map_or((Type::U32, Exactness::Exact), |(s, e)| (Type::scalar(s), e))
    };
    for (binding, (w, g)) in want.ssbos.iter().zip(&got.ssbos).enumerate() {
        for (word, (&expected, &got)) in w.iter().zip(g).enumerate() {
            let written = want.written.ssbo(binding as u8, word as u32);
            counts.value(rules, as_written(written), (expected, got), || {
                (format!("ssbo {binding} word {word}"), 0)
            })?;
        }
    }
    for (index, (w, g)) in want.images.iter().zip(&got.images).enumerate() {
        for (texel, (e, t)) in w.texels.iter().zip(&g.texels).enumerate() {
            for c in 0..w.channels as usize {
                let written = want.written.texel(index as u8, texel as u32, c);
                counts.value(rules, as_written(written), (e[c], t[c]), || {
                    (format!("image {index} texel {texel} channel {c}"), 0)
                })?;
            }
        }
    }
    Ok(counts)
}

/// Equal bits, both NaN, both zeros (unless `rules` keep signed zeros),
/// or (approximate floats) within tolerance. 16-bit types compare their
/// low 16 bits.
fn agree(rules: Rules, ty: Type, want: u32, got: u32, approximate: bool) -> bool {
    let mask = if ty.scalar.bits() <= 16 {
        0xffff
    } else {
        u32::MAX
    };
    let (want, got) = (want & mask, got & mask);
    if want == got {
        return true;
    }
    let (w, g, (abs, rel)) = match ty.scalar {
        Scalar::F32 => (
            f32::from_bits(want) as f64,
            f32::from_bits(got) as f64,
            F32_TOLERANCE,
        ),
        Scalar::F16 => (
            f16::to_f64(want as u16),
            f16::to_f64(got as u16),
            F16_TOLERANCE,
        ),
        _ => return false,
    };
    if w.is_nan() && g.is_nan() {
        return true;
    }
    if w == 0.0 && g == 0.0 && !rules.signed_zeros {
        return true;
    }
    approximate && (w - g).abs() <= abs + rel * w.abs().max(g.abs())
}

/// An output, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Slot(u16, u8),
    Meta(u32),
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Slot(s, c) => write!(f, "output slot {s} comp {c}"),
            Key::Meta(k) => write!(f, "meta output {k}"),
        }
    }
}

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Random bits of a value of type `s`.
    fn bits(&mut self, s: Scalar) -> u32 {
        let small_float = |r: &mut Rng| {
            const SPECIAL: [f32; 4] = [0.0, 1.0, 0.5, -1.0];
            if r.below(8) == 0 {
                SPECIAL[r.below(4) as usize]
            } else {
                (r.below(2001) as f32 - 1000.0) / 100.0
            }
        };
        match s {
            Scalar::Bool => self.below(2) as u32,
            Scalar::F32 => small_float(self).to_bits(),
            Scalar::F16 => f16::from_f32(small_float(self)) as u32,
            _ => {
                let raw = if self.below(2) == 0 {
                    self.below(64) as u32
                } else {
                    self.next() as u32
                };
                if s.bits() <= 16 { raw & 0xffff } else { raw }
            }
        }
    }

    /// A value that addresses texels: a float in `[0, 1)`, an integer in
    /// `0..4`; 0 for a `level` (level 0, sample 0).
    fn texel_address(&mut self, s: Scalar, level: bool) -> u32 {
        if level {
            return 0;
        }
        match s {
            Scalar::F32 => (self.below(1024) as f32 / 1024.0).to_bits(),
            Scalar::F16 => f16::from_f32(self.below(1024) as f32 / 1024.0) as u32,
            Scalar::Bool => self.below(2) as u32,
            _ => self.below(4) as u32,
        }
    }

    fn unit(&mut self) -> f32 {
        self.below(1025) as f32 / 1024.0
    }
}

/// What a shader reads, gathered once.
#[derive(Default)]
struct Reads {
    inputs: BTreeMap<(u16, u8), Scalar>,
    meta_inputs: BTreeMap<u32, Scalar>,
    /// Uniform word → its type; `dynamic` when an address is added.
    uniforms: BTreeMap<u32, Scalar>,
    dynamic_uniform: Option<Scalar>,
    ubos: BTreeMap<u8, Scalar>,
    ssbos: BTreeMap<u8, Scalar>,
    textures: BTreeMap<u8, TexShape>,
    images: BTreeSet<u8>,
    /// What texel fetches address texels with: the inputs, uniforms and
    /// meta inputs their coordinates and levels are computed from, and
    /// the textures they read.
    fetch: FetchSources,
    /// Storage buffers whose loaded integer words reach the address of a
    /// storage-buffer access (a linked list, an index table): bounded
    /// draws fill them with indices.
    index_buffers: BTreeSet<u8>,
}

/// See [`Reads::index_buffers`]: walks the byte offset of every storage
/// buffer access back through instructions without memory effects (and
/// array elements to the values stored to the array) to the buffer
/// loads it is computed from.
fn index_buffers(shader: &Shader<'_, GenericOp>) -> BTreeSet<u8> {
    use GenericOp::*;
    let mut found = BTreeSet::new();
    let mut stored: Vec<Vec<Value>> = vec![Vec::new(); shader.arrays().len()];
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        if let (Op::Opcode(ArrayStore { array, .. }), Some(&v)) = (d.op, d.args.first())
            && let Some(values) = stored.get_mut(array.index())
        {
            values.push(v);
        }
    }
    let mut seen = vec![false; shader.value_capacity()];
    let mut work: Vec<Value> = shader
        .insts_in_order()
        .filter_map(|(_, i)| {
            let d = shader.inst(i);
            match d.op {
                Op::Opcode(
                    LoadSsbo { .. }
                    | StoreSsbo { .. }
                    | SsboAtomic { .. }
                    | SsboAtomicLoad { .. }
                    | SsboAtomicStore { .. },
                ) => d.args.first().copied(),
                _ => None,
            }
        })
        .collect();
    while let Some(v) = work.pop() {
        if std::mem::replace(&mut seen[v.index()], true) {
            continue;
        }
        let d = shader.inst(shader.value_def(v));
        match d.op {
            // Only integer words are indices: a float that reaches an
            // address through a compare (a ray's nearest hit picking a
            // quad) must keep float inputs; small integers as float bits
            // are denormals, which the hardware may flush and so decide
            // such compares differently from the interpreter.
            Op::Opcode(LoadSsbo { binding }) if shader.value_type(v).scalar.is_int() => {
                found.insert(binding);
            }
            Op::Opcode(LoadSsbo { .. }) => {}
            // An array element is whatever was stored to the array.
            Op::Opcode(ArrayLoad { array, .. }) => work.extend(stored[array.index()].iter()),
            op if op.effects().barrier == BarrierClass::NONE => work.extend(d.operands()),
            _ => {}
        }
    }
    found
}

/// See [`Reads::fetch`]: per source, whether it reaches a level (or
/// sample index) rather than only coordinates (or array element indices,
/// which bounded draws address the same way: integers in `0..4`).
#[derive(Default)]
struct FetchSources {
    inputs: BTreeMap<(u16, u8), bool>,
    uniforms: BTreeMap<u32, bool>,
    meta_inputs: BTreeMap<u32, bool>,
    textures: BTreeSet<u8>,
}

impl FetchSources {
    /// Walks the operands of every `texel_fetch` back to the inputs they
    /// are computed from (through any instruction but memory reads).
    fn of(shader: &Shader<'_, GenericOp>) -> FetchSources {
        let mut f = FetchSources::default();
        // Levels first, so that a source of both is a level.
        for level in [true, false] {
            let mut seen = vec![false; shader.value_capacity()];
            let mut work = Vec::new();
            for (_, i) in shader.insts_in_order() {
                let d = shader.inst(i);
                match d.op {
                    Op::Opcode(GenericOp::TexelFetch { texture, .. }) => {
                        f.textures.insert(texture);
                        // Operand 0 is the coordinate, 1 the level (or sample).
                        work.extend(d.args.get(usize::from(level)).copied());
                    }
                    // An element index is addressed like a coordinate.
                    Op::Opcode(GenericOp::ArrayLoad { .. } | GenericOp::ArrayStore { .. })
                        if !level =>
                    {
                        work.extend(d.address);
                    }
                    _ => {}
                }
            }
            while let Some(v) = work.pop() {
                if std::mem::replace(&mut seen[v.index()], true) {
                    continue;
                }
                let d = shader.inst(shader.value_def(v));
                match d.op {
                    Op::Opcode(GenericOp::LoadInput { slot, comp, .. }) => {
                        f.inputs.entry((slot, comp)).or_insert(level);
                    }
                    Op::Opcode(GenericOp::LoadUniform { index }) => {
                        f.uniforms.entry(index).or_insert(level);
                    }
                    Op::Input { index } => {
                        f.meta_inputs.entry(index).or_insert(level);
                    }
                    op if op.effects().barrier == BarrierClass::NONE => work.extend(d.operands()),
                    _ => {}
                }
            }
        }
        f
    }

    fn is_empty(&self) -> bool {
        self.textures.is_empty()
            && self.inputs.is_empty()
            && self.uniforms.is_empty()
            && self.meta_inputs.is_empty()
    }
}

fn reads(shader: &Shader<'_, GenericOp>) -> Reads {
    use GenericOp::*;
    let mut r = Reads {
        fetch: FetchSources::of(shader),
        index_buffers: index_buffers(shader),
        ..Reads::default()
    };
    let mut sized = BTreeSet::new();
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        let ty = d.result.map(|v| shader.value_type(v).scalar);
        let arg_ty = |k: usize| d.args.get(k).map(|&v| shader.value_type(v).scalar);
        match d.op {
            Op::Input { index } => {
                r.meta_inputs.insert(index, ty.unwrap_or(Scalar::U32));
            }
            Op::Opcode(LoadInput { slot, comp, .. }) => {
                r.inputs.insert((slot, comp), ty.unwrap_or(Scalar::U32));
            }
            Op::Opcode(LoadUniform { index }) => {
                let s = ty.unwrap_or(Scalar::U32);
                r.uniforms.insert(index, s);
                if d.address.is_some() || !d.args.is_empty() {
                    r.dynamic_uniform = Some(s);
                }
            }
            Op::Opcode(LoadUbo { binding } | LoadUboVec4 { binding, .. }) => {
                r.ubos.entry(binding).or_insert(ty.unwrap_or(Scalar::U32));
            }
            Op::Opcode(LoadSsbo { binding } | SsboAtomicLoad { binding }) => {
                r.ssbos.entry(binding).or_insert(ty.unwrap_or(Scalar::U32));
            }
            Op::Opcode(
                StoreSsbo { binding } | SsboAtomic { binding, .. } | SsboAtomicStore { binding },
            ) => {
                let s = arg_ty(1).unwrap_or(Scalar::U32);
                r.ssbos.entry(binding).or_insert(s);
            }
            // No value: the buffer's accesses say what its words hold
            // (sized buffers are often read as floats after their size).
            Op::Opcode(SsboSize { binding }) => {
                sized.insert(binding);
            }
            Op::Opcode(
                Sample { texture, shape, .. }
                | Gather { texture, shape, .. }
                | TexelFetch { texture, shape, .. }
                | TextureSize { texture, shape },
            ) => {
                r.textures.insert(texture, shape);
            }
            Op::Opcode(TextureLevels { texture }) => {
                r.textures.entry(texture).or_insert(TexShape::D2);
            }
            Op::Opcode(
                ImageLoad { image, .. }
                | ImageStore { image, .. }
                | ImageAtomic { image, .. }
                | ImageSize { image, .. },
            ) => {
                r.images.insert(image);
            }
            _ => {}
        }
    }
    for binding in sized {
        r.ssbos.entry(binding).or_insert(Scalar::U32);
    }
    r
}

/// Random inputs for `threads` invocations of `shader` (and the memory
/// they share), from `seed`. Fragment threads get distinct fragment
/// coordinates across their quad, compute threads consecutive local
/// indices of one workgroup, vertex threads consecutive vertex indices.
pub fn random_inputs(
    shader: &Shader<'_, GenericOp>,
    seed: u64,
    threads: usize,
) -> (Vec<Invocation>, Memory) {
    let options = Options {
        threads,
        ..Options::default()
    };
    draw_inputs(shader, seed, &options, false)
}

/// Side of the textures a bounded draw gives texel fetches (with their
/// whole mip chain): coordinates computed as `uv * 256` from a unit `uv`
/// stay inside.
pub const FETCH_TEXTURE_SIZE: u32 = 256;

/// [`random_inputs`]; when `bounded`, the inputs texel fetches are
/// computed from (see [`FetchSources`]) are drawn as a driver would give
/// them to a shader that addresses texels with them, floats in `[0, 1)`
/// and integers in `0..4`, and the fetched textures are
/// [`FETCH_TEXTURE_SIZE`] square with all their levels, so the draw is
/// defined where a random one almost never is.
fn draw_inputs(
    shader: &Shader<'_, GenericOp>,
    seed: u64,
    options: &Options,
    bounded: bool,
) -> (Vec<Invocation>, Memory) {
    // A run never has more threads than the workgroup it stands for
    // (more would be invocations of other workgroups, sharing memory
    // without the barriers of one).
    let workgroup = options
        .workgroup_size
        .filter(|_| shader.stage == Stage::Compute)
        .map(|[x, y, z]| [x.max(1), y.max(1), z.max(1)]);
    let threads = workgroup.map_or(options.threads, |[x, y, z]| {
        options.threads.min((x * y * z) as usize)
    });
    let r = reads(shader);
    let bounded = bounded && !(r.fetch.is_empty() && r.index_buffers.is_empty());
    let mut rng = Rng(seed);
    // What every thread shares: uniforms, UBOs, textures.
    let mut base = Invocation::default();
    let uniform_words = r.uniforms.keys().max().map_or(0, |&m| {
        m as usize + 1 + if r.dynamic_uniform.is_some() { 256 } else { 0 }
    });
    base.uniforms = (0..uniform_words as u32)
        .map(|k| {
            let s = r
                .uniforms
                .get(&k)
                .copied()
                .or(r.dynamic_uniform)
                .unwrap_or(Scalar::U32);
            if let Some(&level) = r.fetch.uniforms.get(&k).filter(|_| bounded) {
                rng.texel_address(s, level)
            } else {
                rng.bits(s)
            }
        })
        .collect();
    let ubo_count = r.ubos.keys().max().map_or(0, |&b| b as usize + 1);
    base.ubos = (0..ubo_count as u8)
        .map(|b| {
            let s = r.ubos.get(&b).copied().unwrap_or(Scalar::U32);
            (0..BUFFER_WORDS).map(|_| rng.bits(s)).collect()
        })
        .collect();
    let texture_count = r.textures.keys().max().map_or(0, |&t| t as usize + 1);
    base.textures = (0..texture_count as u8)
        .map(|t| {
            let shape = r.textures.get(&t).copied().unwrap_or(TexShape::D2);
            if bounded && r.fetch.textures.contains(&t) {
                fetched_texture(&mut rng, shape)
            } else {
                random_texture(&mut rng, shape)
            }
        })
        .collect();
    let mut memory = Memory::default();
    let ssbo_count = r.ssbos.keys().max().map_or(0, |&b| b as usize + 1);
    memory.ssbos = (0..ssbo_count as u8)
        .map(|b| {
            let s = r.ssbos.get(&b).copied().unwrap_or(Scalar::U32);
            if bounded && r.index_buffers.contains(&b) {
                // Every word an index in `0..4` (whatever else it is
                // read as), so each one addresses inside the buffer.
                (0..BUFFER_WORDS).map(|_| rng.below(4) as u32).collect()
            } else {
                (0..BUFFER_WORDS).map(|_| rng.bits(s)).collect()
            }
        })
        .collect();
    let image_count = r.images.last().map_or(0, |&i| i as usize + 1);
    // Storage images are 4×4 2D here: other shapes read out of bounds,
    // which is undefined, so such a draw is not compared.
    memory.images = (0..image_count)
        .map(|_| {
            let mut image = crate::texture::Image::new_2d(4, 4, 4);
            for t in &mut image.texels {
                *t = [0; 4].map(|_| rng.below(64) as u32);
            }
            image
        })
        .collect();
    if shader.stage == Stage::Compute {
        memory.shared = vec![None; SHARED_WORDS];
    }
    let front_facing = rng.below(2) == 1;
    let invocations = (0..threads)
        .map(|t| {
            let mut inv = base.clone();
            for (&key, &s) in &r.inputs {
                let bits = if let Some(&level) = r.fetch.inputs.get(&key).filter(|_| bounded) {
                    rng.texel_address(s, level)
                } else {
                    rng.bits(s)
                };
                inv.inputs.insert(key, bits);
            }
            let metas = r.meta_inputs.keys().max().map_or(0, |&m| m as usize + 1);
            inv.meta_inputs = (0..metas as u32)
                .map(|k| {
                    let s = r.meta_inputs.get(&k).copied().unwrap_or(Scalar::U32);
                    if let Some(&level) = r.fetch.meta_inputs.get(&k).filter(|_| bounded) {
                        rng.texel_address(s, level)
                    } else {
                        rng.bits(s)
                    }
                })
                .collect();
            inv.sysvals = sysvals(shader.stage, t, workgroup, front_facing, &mut rng);
            inv
        })
        .collect();
    (invocations, memory)
}

fn sysvals(
    stage: Stage,
    t: usize,
    workgroup: Option<[u32; 3]>,
    front_facing: bool,
    rng: &mut Rng,
) -> SysVals {
    let t32 = t as u32;
    let mut s = SysVals::default();
    match stage {
        Stage::Fragment => {
            // Quads side by side along x; lane order within a quad is
            // top left, top right, bottom left, bottom right.
            let (quad, lane) = (t32 / 4, t32 % 4);
            let x = (2 * quad + lane % 2) as f32 + 0.5;
            let y = (lane / 2) as f32 + 0.5;
            s.frag_coord = [x, y, rng.unit(), 1.0];
            s.front_facing = front_facing;
            s.sample_mask_in = 1;
            s.sample_pos = [0.5, 0.5];
            s.point_coord = [rng.unit(), rng.unit()];
        }
        Stage::Compute => {
            // Workgroup 0: x fastest, as the local index counts.
            let [x, y, _] = workgroup.unwrap_or([u32::MAX, 1, 1]);
            let id = [t32 % x, t32 / x % y, t32 / x / y];
            s.local_invocation_id = id;
            s.local_invocation_index = t32;
            s.global_invocation_id = id;
            s.num_workgroups = [1, 1, 1];
        }
        _ => {
            s.vertex_index = t32;
            s.instance_index = 0;
        }
    }
    s
}

/// A [`FETCH_TEXTURE_SIZE`] texture of `shape` with its whole mip chain
/// (a 3D one 16³; arrays with 4 layers, as many as `0..4` reaches),
/// texels random in [0, 1].
fn fetched_texture(rng: &mut Rng, shape: TexShape) -> Texture {
    let n = FETCH_TEXTURE_SIZE;
    let size = match shape.dim {
        Dim::D1 => [n, 1, 1],
        Dim::D3 => [16, 16, 16],
        _ => [n, n, 1],
    };
    let layers = match (shape.dim, shape.array) {
        (Dim::Cube, true) => 24,
        (Dim::Cube, false) => 6,
        (_, true) => 4,
        _ => 1,
    };
    let levels = 32 - size[0].leading_zeros();
    let mut t = Texture::from_fn(shape.dim, size, layers, levels, |_, _, _, _, _| {
        [0; 4].map(|_| rng.unit())
    });
    if shape.ms {
        t.samples = 4;
        t.levels.truncate(1);
        let texels = &mut t.levels[0].texels;
        *texels = texels.iter().flat_map(|&x| [x; 4]).collect();
    }
    t
}

/// A small texture of random texels in [0, 1] of `shape`'s dimension
/// (arrays with 2 layers, cubes with 6 faces), one level.
fn random_texture(rng: &mut Rng, shape: TexShape) -> Texture {
    let (width, height, depth) = match shape.dim {
        Dim::D1 => (4, 1, 1),
        Dim::D3 => (4, 4, 4),
        _ => (4, 4, 1),
    };
    let layers = match (shape.dim, shape.array) {
        (Dim::Cube, true) => 12,
        (Dim::Cube, false) => 6,
        (_, true) => 2,
        _ => 1,
    };
    let samples = if shape.ms { 4 } else { 1 };
    let texels = (0..width * height * depth * layers * samples)
        .map(|_| [0; 4].map(|_| rng.unit()))
        .collect();
    Texture {
        dim: shape.dim,
        layers,
        samples,
        levels: vec![Level {
            width,
            height,
            depth,
            texels,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An executor that runs the interpreter: it agrees whenever the run
    /// is defined.
    struct Interpreter<'s, 'a>(&'s Shader<'a, GenericOp>);

    impl Executor for Interpreter<'_, '_> {
        fn execute(
            &self,
            threads: &[Invocation],
            memory: &mut Memory,
        ) -> Result<Vec<Outcome>, ExecError> {
            let out = interpret(self.0, threads, memory, Limits::default())
                .map_err(|e| ExecError::Failed(e.to_string()))?;
            Ok(out.into_iter().map(Option::unwrap_or_default).collect())
        }
    }

    /// An integer word that addresses a buffer (a list's next index)
    /// makes its buffer an index buffer; floats that only pick an index
    /// through a compare (a ray's nearest hit) do not: small integers as
    /// float bits would be denormals the hardware may flush.
    #[test]
    fn only_integer_words_that_reach_an_address_make_index_buffers() {
        let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 4
  %2:u32 = load_ssbo binding=0 %0
  %3:f32 = load_ssbo binding=2 %0
  %4:f32 = load_ssbo binding=2 %1
  %5:bool = flt %3, %4
  %6:u32 = sel %5, %2, %1
  %7:u32 = load_ssbo binding=1 %6
  store_ssbo binding=3 %0, %7
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        assert_eq!(index_buffers(&shader), BTreeSet::from([0]));
    }

    /// A fetch at `uv * 256` and level `lod` from varyings (as WGSL's
    /// `textureLoad(t, vec2i(uv * 256.0), i32(lod))`): random inputs put
    /// it outside a small texture; bounded draws keep it inside.
    #[test]
    fn texel_fetches_get_inputs_that_address_texels() {
        let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_input slot=1 comp=0 interp=flat
  %3:f32 = const 0x43800000
  %4:f32 = fmul %0, %3
  %5:f32 = fmul %1, %3
  %6:i32 = cvt %4
  %7:i32 = cvt %5
  %8:i32x2 = collect %6, %7
  %9:i32 = cvt %2
  %10:f32x4 = texel_fetch texture=0 %8, %9
  %11:f32 = split lane=0 %10
  store_output slot=0 comp=0 %11
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let sources = FetchSources::of(&shader);
        assert_eq!(sources.inputs.get(&(0, 0)), Some(&false));
        assert_eq!(sources.inputs.get(&(1, 0)), Some(&true));
        let mut random_defined = 0;
        for seed in 1..=8 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let defined = |bounded| {
                let (threads, mut memory) = draw_inputs(&shader, seed, &options, bounded);
                interpret(&shader, &threads, &mut memory, Limits::default()).is_ok()
            };
            assert!(defined(true), "seed {seed}: a bounded draw is undefined");
            random_defined += usize::from(defined(false));
            // Random draws that fetch outside are repaired, or a bounded
            // draw is compared.
            let report = verify(&shader, &Interpreter(&shader), &options).unwrap();
            assert_eq!(report.compared, 4);
        }
        assert!(random_defined <= 1, "{random_defined} random draws defined");
    }

    /// Every invocation reads and rewrites word 0 (wgpu's
    /// `timestamp_queries` `main_cs`, declared `@workgroup_size(1)`):
    /// several invocations race, so no run of four is defined; a run of
    /// the declared single invocation is.
    #[test]
    fn runs_are_one_workgroup_of_the_declared_size() {
        let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 3
  %2:u32 = load_ssbo binding=0 %0
  %3:u32 = imul %2, %1
  store_ssbo binding=0 %0, %3
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let err = verify(&shader, &Interpreter(&shader), &Options::default()).unwrap_err();
        assert!(
            matches!(&err, VerifyError::Undefined { last, .. } if last.contains("data race")),
            "{err}"
        );
        let options = Options {
            workgroup_size: Some([1, 1, 1]),
            ..Options::default()
        };
        let report = verify(&shader, &Interpreter(&shader), &options).unwrap();
        assert_eq!(report.threads, 1);
    }

    #[test]
    fn local_ids_follow_the_workgroup_shape() {
        let text = "shader compute\nb0:\n  ret\n";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let options = Options {
            threads: 8,
            workgroup_size: Some([2, 2, 4]),
            ..Options::default()
        };
        let (threads, _) = draw_inputs(&shader, 1, &options, false);
        let ids: Vec<[u32; 3]> = threads
            .iter()
            .map(|t| t.sysvals.local_invocation_id)
            .collect();
        assert_eq!(
            ids[..5],
            [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]
        );
        assert_eq!(threads.len(), 8);
    }

    /// A loop stepping by a uniform (`for (x = 0; x < 6.28; x += step)`,
    /// as Sascha Willems' irradiance-cube shader): random steps of 0 or
    /// less never end, and those draws give way to ones that do.
    #[test]
    fn draws_whose_runs_do_not_end_give_way_to_ones_that_do() {
        let text = "shader fragment
b0:
  %0:f32 = const 0
  %1:f32 = const 0x40c90fdb
  %2:f32 = load_uniform index=0
  jump b1
b1:
  %3:f32 = phi [%0, b0], [%5, b2]
  %4:bool = flt %3, %1
  branch %4, b2, b3
b2:
  %5:f32 = fadd %3, %2
  jump b1
b3:
  store_output slot=0 comp=0 %3
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let mut skipped = 0;
        for seed in 1..=8 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let report = verify(&shader, &Interpreter(&shader), &options).unwrap();
            skipped += report.draw;
        }
        assert!(skipped > 0, "no draw stepped by 0 or less");
    }

    /// The interpreter, then a change to the memory it wrote (a compiled
    /// program one ulp off).
    struct Nudged<'s, 'a>(&'s Shader<'a, GenericOp>, fn(&mut Memory));

    impl Executor for Nudged<'_, '_> {
        fn execute(
            &self,
            threads: &[Invocation],
            memory: &mut Memory,
        ) -> Result<Vec<Outcome>, ExecError> {
            let out = Interpreter(self.0).execute(threads, memory)?;
            (self.1)(memory);
            Ok(out)
        }
    }

    /// wgpu's boids: a velocity computed with a division stored to a
    /// storage buffer, beside an integer word in the same buffer.
    #[test]
    fn approximate_floats_stored_to_buffers_agree_within_the_tolerance() {
        let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 4
  %2:f32 = load_ssbo binding=0 %0
  %3:f32 = load_ssbo binding=0 %1
  %4:f32 = fdiv %2, %3
  %5:u32 = const 3
  store_ssbo binding=1 %0, %4
  store_ssbo binding=1 %1, %5
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let options = Options {
            workgroup_size: Some([1, 1, 1]),
            ..Options::default()
        };
        let ulp_off = Nudged(&shader, |m| m.ssbos[1][0] ^= 1);
        verify(&shader, &ulp_off, &options).unwrap();
        let int_off = Nudged(&shader, |m| m.ssbos[1][1] += 1);
        let err = verify(&shader, &int_off, &options).unwrap_err();
        assert!(matches!(err, VerifyError::Mismatch { .. }), "{err}");
        let far_off = Nudged(&shader, |m| m.ssbos[1][0] ^= 1 << 22);
        let err = verify(&shader, &far_off, &options).unwrap_err();
        assert!(matches!(err, VerifyError::Mismatch { .. }), "{err}");
    }

    /// Sascha Willems' tonemapper and probability map: texels computed with
    /// approximate operations stored to a storage image.
    #[test]
    fn approximate_floats_stored_to_images_agree_within_the_tolerance() {
        let text = "shader compute
b0:
  %0:u32 = const 0
  %1:f32 = load_ssbo binding=0 %0
  %2:f32 = rsqrt %1
  %3:i32 = const 0
  %4:i32x2 = collect %3, %3
  %5:f32x4 = collect %2, %2, %2, %2
  image_store image=0 %4, %5
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        let options = Options {
            workgroup_size: Some([1, 1, 1]),
            ..Options::default()
        };
        let ulp_off = Nudged(&shader, |m| m.images[0].texels[0][0] ^= 1);
        verify(&shader, &ulp_off, &options).unwrap();
        let far_off = Nudged(&shader, |m| m.images[0].texels[0][1] ^= 1 << 22);
        let err = verify(&shader, &far_off, &options).unwrap_err();
        assert!(matches!(err, VerifyError::Mismatch { .. }), "{err}");
    }

    /// Sascha Willems' subpass composition loops over `lights.length()`
    /// (an `ssbo_size`) before it loads the lights' floats: the buffer
    /// still holds floats drawn as floats, not random bits (which read as
    /// 1e38s, infinities and NaNs).
    #[test]
    fn a_buffers_size_does_not_decide_what_its_words_hold() {
        let text = "shader fragment
b0:
  %0:u32 = ssbo_size binding=0
  %1:u32 = const 0
  %2:f32 = load_ssbo binding=0 %1
  store_output slot=0 comp=0 %2
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        for seed in 1..=4 {
            let (_, memory) = random_inputs(&shader, seed, 4);
            assert!(
                memory.ssbos[0]
                    .iter()
                    .all(|&w| f32::from_bits(w).abs() <= 10.0),
                "seed {seed}: words are not the small floats a float buffer gets"
            );
        }
    }

    /// webgpu-samples' generateMipmap `fscube`: a constant table of six
    /// face matrices indexed by a flat varying. Random integers run past
    /// it; bounded draws give the index values in `0..4`.
    #[test]
    fn array_indices_from_inputs_get_inputs_that_address_elements() {
        let text = "shader fragment
array a0: f32[6]
b0:
  %0:f32 = const 1.5
  array_store array=a0 offset=0 %0
  array_store array=a0 offset=1 %0
  array_store array=a0 offset=2 %0
  array_store array=a0 offset=3 %0
  array_store array=a0 offset=4 %0
  array_store array=a0 offset=5 %0
  %1:u32 = load_input slot=0 comp=0 interp=flat
  %2:f32 = array_load array=a0 offset=0 addr=%1
  store_output slot=0 comp=0 %2
  ret
";
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, text).unwrap();
        assert_eq!(FetchSources::of(&shader).inputs.get(&(0, 0)), Some(&false));
        for seed in 1..=8 {
            let options = Options {
                seed,
                ..Options::default()
            };
            verify(&shader, &Interpreter(&shader), &options).unwrap();
        }
    }

    /// The interpreter, then a change to every thread's outcome.
    struct Changed<'s, 'a>(&'s Shader<'a, GenericOp>, fn(&mut Outcome));

    impl Executor for Changed<'_, '_> {
        fn execute(
            &self,
            threads: &[Invocation],
            memory: &mut Memory,
        ) -> Result<Vec<Outcome>, ExecError> {
            let mut out = Interpreter(self.0).execute(threads, memory)?;
            out.iter_mut().for_each(self.1);
            Ok(out)
        }
    }

    /// The optimiser folds `(x - x) * y` to +0 where the interpreter gives
    /// -0 for a negative `y`: Vulkan allows it unless the shader preserves
    /// float specials.
    #[test]
    fn zeros_of_either_sign_agree_unless_the_shader_preserves_specials() {
        let positive_zero: fn(&mut Outcome) = |o| {
            for (_, bits) in o.outputs.values_mut() {
                *bits &= 0x7fff_ffff;
            }
        };
        for (header, agrees) in [("", true), (" preserve_float_specials", false)] {
            let text = format!(
                "shader fragment{header}\nb0:\n  %0:f32 = const 0x80000000\n  store_output slot=0 comp=0 %0\n  ret\n"
            );
            let arena = crate::Bump::new();
            let shader = crate::parse::<GenericOp>(&arena, &text).unwrap();
            let result = verify(
                &shader,
                &Changed(&shader, positive_zero),
                &Options::default(),
            );
            assert_eq!(result.is_ok(), agrees, "{header}: {result:?}");
        }
    }

    /// A fragment shader whose left column takes `ddx` and right column
    /// `ddy` of an input: each in non-uniform control flow, so undefined;
    /// with `defined`, it outputs the input too.
    fn divergent_derivatives(defined: bool) -> String {
        format!(
            "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_sysval sv=frag_coord comp=0
  %2:f32 = const 1.0
  %3:bool = flt %1, %2
  branch %3, b1, b2
b1:
  %4:f32 = ddx %0
  jump b3
b2:
  %5:f32 = ddy %0
  jump b3
b3:
  %6:f32 = phi [%4, b1], [%5, b2]
  store_output slot=0 comp=0 %6
{}  ret
",
            if defined {
                "  store_output slot=0 comp=1 %0\n"
            } else {
                ""
            }
        )
    }

    #[test]
    fn undefined_outputs_are_not_compared_but_some_output_must_be_defined() {
        let garbage: fn(&mut Outcome) = |o| {
            if let Some((_, bits)) = o.outputs.get_mut(&(0, 0)) {
                *bits ^= 0x1234_5678;
            }
        };
        let arena = crate::Bump::new();
        let shader = crate::parse::<GenericOp>(&arena, &divergent_derivatives(true)).unwrap();
        let report = verify(&shader, &Changed(&shader, garbage), &Options::default()).unwrap();
        assert_eq!((report.compared, report.undefined), (4, 4));
        let shader = crate::parse::<GenericOp>(&arena, &divergent_derivatives(false)).unwrap();
        let err = verify(&shader, &Changed(&shader, garbage), &Options::default()).unwrap_err();
        assert_eq!(err, VerifyError::NoDefinedOutput { undefined: 4 });
    }
}
