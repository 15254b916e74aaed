//! The reference interpreter for generic-level shaders.
//!
//! It runs one invocation, a 2×2 fragment quad in lockstep, or a compute
//! workgroup (or a whole dispatch) on given inputs and returns the outputs
//! it wrote. Arithmetic is exact IEEE 754 binary32/binary16 with
//! round-to-nearest-even wherever IEEE defines the result (`+ - * /`,
//! `ffma`, `sqrt`, `rcp` as a division, conversions, min/max, compares,
//! `floor ceil trunc round_even fract fsign`); subnormals are kept.
//! `rsqrt`, `exp2`, `log2`, `sin` and `cos` have no IEEE-defined result:
//! they are computed in `f64` with the host's math library (Rust `std`,
//! which calls the platform libm) and rounded once — compare those against
//! a driver within the Vulkan precision bounds, not bit for bit.
//!
//! Undefined behaviour is an error, never an invented value: out-of-range
//! float→int conversion or NaN input to it, shifts by the type width or
//! more (a negative signed amount counts as huge), division by zero, the
//! overflowing signed division `MIN / -1` (`idiv`, `irem`), bit fields
//! with `offset + count > 32`, out-of-bounds or uninitialised array and
//! shared-memory reads, out-of-bounds or misaligned uniform/UBO/storage
//! accesses, NaN texture coordinates, out-of-bounds texel fetches and image
//! accesses, derivatives and control barriers in non-uniform control flow,
//! and data races: conflicting accesses to one memory word by different
//! invocations with no control barrier between them ([`crate::races`];
//! separate runs on one [`Memory`] are separate, concurrent invocations).
//! Other texture semantics are in [`crate::texture`]; pack/unpack and bit
//! operations in [`crate::scalar_ops`].
//!
//! Integer `iadd`, `isub` and `imul` wrap in two's complement for signed
//! types too, as GLSL and SPIR-V define them: signed overflow there is a
//! defined result, not undefined behaviour. IEEE operations never trap:
//! `rcp 0` is infinity, `sqrt -1` and `0 * inf` are NaN. `cvt` from bool
//! gives 1 (or 1.0) for true, f32→f16 rounds to nearest even.
//!
//! # Groups and lockstep
//!
//! [`run_quad`] runs four fragment invocations (quad positions 0 = top
//! left, 1 = top right, 2 = bottom left, 3 = bottom right) in lockstep:
//! each runs, in order, until it reaches a derivative (`ddx`, `ddy`, or an
//! implicit-LOD `sample`); when all four wait at the same instruction for
//! the same time, the derivatives are taken and all continue. Coarse (and
//! default) `ddx` is `v[1] - v[0]` and `ddy` is `v[2] - v[0]` for all four;
//! fine `ddx` is the difference within the invocation's row, fine `ddy`
//! within its column; implicit LOD uses the coarse gradients of the
//! coordinate. Helper invocations (from [`SysVals::helper_invocation`], or
//! after `demote`) run on but write no outputs or memory (their atomics
//! are skipped and give 0). In a quad, `discard` drops the invocation's
//! outputs and makes it a helper too, so later derivatives of the other
//! three stay defined, as drivers do; undefined behaviour in a helper only
//! makes that invocation's values undefined, an error if a derivative
//! later needs them. A derivative reached by some invocations of the quad
//! but not all (one has ended, or waits elsewhere) is undefined.
//!
//! [`run`] runs one invocation as if its quad were four copies of it:
//! derivatives are `v - v` (0, or NaN for infinities), implicit LOD is
//! level 0 magnified, `discard` ends the invocation at once.
//!
//! [`run_workgroup`] and [`dispatch`] run compute invocations in
//! local-index order, each until it reaches a `control_barrier` (all must
//! reach the same one) or ends; memory operations, atomics included, so
//! happen in invocation order between barriers, and workgroups run one
//! after another in x, y, z order. Only commutative atomic results are
//! therefore comparable with a parallel driver, unless the run follows
//! the order a driver's run took ([`Memory::atomic_order`]).

use crate::atomic_order::{AtomicEvent, AtomicOrder};
use crate::attrs::{AtomicOp, DerivMode, LodMode, Sysval};
use crate::exactness::{Exactness, Taint, Written};
use crate::generic::GenericOp;
use crate::opcode::Op;
use crate::printer::{Names, write_inst};
use crate::races::{Accesses, Accessor, AtomicEffect, Kind, Word};
use crate::scalar_ops::{self, float_value, int_value, mask, round_to};
use crate::shader::{Block, Inst, Shader, Value};
use crate::texture::{self, Image, LodInput, SampleRequest, Sampler};
use crate::types::{Scalar, Type};
use std::collections::{BTreeMap, HashMap};

pub use crate::texture::Texture;

/// Everything one invocation reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Invocation {
    /// `load_input` values by `(slot, component)`, as raw bits of the
    /// loaded type (16-bit types in the low bits).
    pub inputs: HashMap<(u16, u8), u32>,
    /// Meta `input index=N` values.
    pub meta_inputs: Vec<u32>,
    /// Uniform words; push constants are uniforms (word `N` = byte `4 * N`).
    pub uniforms: Vec<u32>,
    /// UBO contents by binding, in 32-bit words.
    pub ubos: Vec<Vec<u32>>,
    /// Sampled textures by `texture=` index.
    pub textures: Vec<Texture>,
    /// Samplers by `sampler=` index; a missing one is [`Sampler::default`]
    /// (nearest, clamp to edge).
    pub samplers: Vec<Sampler>,
    /// What `load_sysval` reads.
    pub sysvals: SysVals,
}

/// Memory that invocations share and write: storage buffers, storage
/// images and workgroup shared memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memory {
    /// Storage buffers by binding, in 32-bit words.
    pub ssbos: Vec<Vec<u32>>,
    /// Storage images by `image=` index.
    pub images: Vec<Image>,
    /// Shared memory words (`None` until written: reading one is undefined).
    pub shared: Vec<Option<u32>>,
    /// Who touched which word, to report data races between the runs on
    /// this memory (see [`crate::races`]).
    pub accesses: Accesses,
    /// The type and exactness of every word and texel written.
    pub written: Written,
    /// An executor's storage-buffer atomics, in the order it performed
    /// them (the interpreter logs none).
    pub atomic_log: Vec<AtomicEvent>,
    /// An order of storage-buffer atomics for the interpreter to follow
    /// ([`crate::atomic_order`]); `None`: the interpreter's own order,
    /// order-dependent results undefined.
    pub atomic_order: Option<AtomicOrder>,
}

/// The system values of one invocation (all zero / false by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SysVals {
    pub frag_coord: [f32; 4],
    pub front_facing: bool,
    pub sample_id: u32,
    pub sample_pos: [f32; 2],
    pub sample_mask_in: u32,
    pub point_coord: [f32; 2],
    /// A helper invocation from the start (outside the primitive).
    pub helper_invocation: bool,
    pub vertex_index: u32,
    pub instance_index: u32,
    pub base_vertex: u32,
    pub base_instance: u32,
    pub view_index: u32,
    pub local_invocation_id: [u32; 3],
    pub global_invocation_id: [u32; 3],
    pub workgroup_id: [u32; 3],
    pub num_workgroups: [u32; 3],
    pub local_invocation_index: u32,
}

impl SysVals {
    /// Component `comp` of `sysval` as raw bits (`bool` as 0/1).
    pub fn get(&self, sysval: Sysval, comp: u8) -> u32 {
        let c = comp as usize;
        let float = |v: &[f32]| v.get(c).map_or(0, |x| x.to_bits());
        let int = |v: &[u32]| v.get(c).copied().unwrap_or(0);
        match sysval {
            Sysval::FragCoord => float(&self.frag_coord),
            Sysval::FrontFacing => self.front_facing as u32,
            Sysval::SampleId => self.sample_id,
            Sysval::SamplePos => float(&self.sample_pos),
            Sysval::SampleMaskIn => self.sample_mask_in,
            Sysval::PointCoord => float(&self.point_coord),
            Sysval::HelperInvocation => self.helper_invocation as u32,
            Sysval::VertexIndex => self.vertex_index,
            Sysval::InstanceIndex => self.instance_index,
            Sysval::BaseVertex => self.base_vertex,
            Sysval::BaseInstance => self.base_instance,
            Sysval::ViewIndex => self.view_index,
            Sysval::LocalInvocationId => int(&self.local_invocation_id),
            Sysval::GlobalInvocationId => int(&self.global_invocation_id),
            Sysval::WorkgroupId => int(&self.workgroup_id),
            Sysval::NumWorkgroups => int(&self.num_workgroups),
            Sysval::LocalInvocationIndex => self.local_invocation_index,
        }
    }
}

/// What an invocation produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `store_output` values by `(slot, component)`: type and bits.
    pub outputs: BTreeMap<(u16, u8), (Type, u32)>,
    /// Meta `output index=N` values.
    pub meta_outputs: BTreeMap<u32, (Type, u32)>,
    /// The invocation was discarded (its outputs are then empty).
    pub discarded: bool,
    /// The outputs whose value is not exact (see [`crate::exactness`]);
    /// the others are exact.
    pub inexact: BTreeMap<(u16, u8), Exactness>,
    /// The meta outputs whose value is not exact.
    pub inexact_meta: BTreeMap<u32, Exactness>,
}

/// Why an invocation could not produce an outcome.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("undefined behaviour at `{context}`: {reason}")]
    Undefined {
        inst: Inst,
        context: String,
        reason: String,
        /// The input words the instruction's addresses are computed from
        /// (traced only under [`Limits::sources`]; empty otherwise).
        sources: Vec<Source>,
    },
    #[error("missing input: {0}")]
    MissingInput(String),
    #[error("step limit of {0} instructions reached (the shader may not terminate)")]
    StepLimit(u64),
    #[error("malformed shader (run the validator): {0}")]
    Malformed(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The run's atomics differ from the order it was to follow
    /// ([`Memory::atomic_order`]).
    #[error("atomic order: {0}")]
    AtomicOrder(String),
}

impl InterpError {
    /// Undefined behaviour (as opposed to a step-limit stop, missing inputs
    /// or a malformed shader).
    pub fn is_undefined(&self) -> bool {
        matches!(self, InterpError::Undefined { .. })
    }
}

/// Limits for one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum instructions executed before giving up.
    pub max_steps: u64,
    /// Trace which input words every value is computed from (its
    /// provenance, through data flow but not through arrays, written
    /// memory or control flow), so that undefined behaviour at a memory
    /// access names the words its address came from
    /// ([`InterpError::Undefined`]'s `sources`): the verifier re-rolls
    /// them. Slower; off by default.
    pub sources: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 1_000_000,
            sources: false,
        }
    }
}

/// An input word a value is computed from (see [`Limits::sources`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// Uniform (push-constant) word `word`.
    Uniform { word: u32 },
    /// Word `word` of UBO `binding`.
    Ubo { binding: u8, word: u32 },
    /// Word `word` of storage buffer `binding`, as the inputs gave it
    /// (a word the shader wrote is no input).
    Ssbo { binding: u8, word: u32 },
    /// Input `(slot, comp)` of the invocation.
    Input { slot: u16, comp: u8 },
    /// Meta input `index` of the invocation.
    Meta { index: u32 },
}

/// Most sources a value keeps: a value computed from more (a running
/// sum over a buffer) keeps the first in order.
const MAX_SOURCES: usize = 64;

/// The union of two sorted source lists, at most [`MAX_SOURCES`] long.
fn union_sources(a: &[Source], b: &[Source]) -> Vec<Source> {
    let mut out: Vec<Source> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    out.truncate(MAX_SOURCES);
    out
}

/// Run one invocation (derivatives see a quad of four copies of it; see
/// the module docs). Storage buffers, images and shared memory are empty.
pub fn run(
    shader: &Shader<'_, GenericOp>,
    inv: &Invocation,
    limits: Limits,
) -> Result<Outcome, InterpError> {
    run_with_memory(shader, inv, &mut Memory::default(), limits)
}

/// Run one invocation on `memory`, which it may write.
pub fn run_with_memory(
    shader: &Shader<'_, GenericOp>,
    inv: &Invocation,
    memory: &mut Memory,
    limits: Limits,
) -> Result<Outcome, InterpError> {
    let lanes = vec![Machine::new(shader, inv, inv.sysvals.clone())];
    let mut out = Group::new(lanes, GroupKind::Single).run(memory, limits)?;
    out.pop()
        .ok_or_else(|| InterpError::Malformed("no invocation".into()))
}

/// Where a value lives in a flat register store: its first slot and the
/// slots it covers (register allocation's units, numbered across files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub slot: u32,
    pub width: u32,
}

/// Run one invocation of an allocated shader with every value read and
/// written through a register store instead of by SSA name: `places[v]`
/// is where value `v` lives. Writing a value clobbers every value that
/// overlaps its slots, and reading a clobbered value is an error, so a
/// wrong allocation gives a wrong outcome or an error.
pub fn run_placed(
    shader: &Shader<'_, GenericOp>,
    inv: &Invocation,
    limits: Limits,
    places: &[Option<Placement>],
) -> Result<Outcome, InterpError> {
    let mut m = Machine::new(shader, inv, inv.sysvals.clone());
    let slots = places
        .iter()
        .flatten()
        .map(|p| (p.slot + p.width) as usize)
        .max()
        .unwrap_or(0);
    m.values = vec![None; slots];
    m.taints = vec![Taint::EXACT; slots];
    m.widths = vec![0; slots];
    m.places = Some(places);
    let mut out = Group::new(vec![m], GroupKind::Single).run(&mut Memory::default(), limits)?;
    out.pop()
        .ok_or_else(|| InterpError::Malformed("no invocation".into()))
}

/// Run a small group of invocations (in order, independently).
pub fn run_group(
    shader: &Shader<'_, GenericOp>,
    group: &[Invocation],
    limits: Limits,
) -> Vec<Result<Outcome, InterpError>> {
    group.iter().map(|inv| run(shader, inv, limits)).collect()
}

/// Run a 2×2 fragment quad in lockstep (positions: top left, top right,
/// bottom left, bottom right), on `memory`.
pub fn run_quad(
    shader: &Shader<'_, GenericOp>,
    quad: &[Invocation; 4],
    memory: &mut Memory,
    limits: Limits,
) -> Result<[Outcome; 4], InterpError> {
    let lanes = quad
        .iter()
        .map(|inv| Machine::new(shader, inv, inv.sysvals.clone()))
        .collect();
    let out = Group::new(lanes, GroupKind::Quad).run(memory, limits)?;
    out.try_into()
        .map_err(|_| InterpError::Malformed("quad lost an invocation".into()))
}

/// Run one compute workgroup: `lanes` in local-index order, synchronised
/// at `control_barrier`s, on `memory` (whose `shared` words the caller
/// sets up).
pub fn run_workgroup(
    shader: &Shader<'_, GenericOp>,
    lanes: &[Invocation],
    memory: &mut Memory,
    limits: Limits,
) -> Result<Vec<Outcome>, InterpError> {
    let machines = lanes
        .iter()
        .map(|inv| Machine::new(shader, inv, inv.sysvals.clone()))
        .collect();
    Group::new(machines, GroupKind::Workgroup).run(memory, limits)
}

/// The shape of a compute dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub workgroup_size: [u32; 3],
    pub num_workgroups: [u32; 3],
    /// Shared-memory words each workgroup gets (uninitialised).
    pub shared_words: usize,
}

/// Run a whole compute dispatch on `memory`: workgroups one after another
/// (x fastest), each with fresh shared memory; `base` supplies uniforms,
/// UBOs and textures, the compute system values are filled in per
/// invocation.
pub fn dispatch(
    shader: &Shader<'_, GenericOp>,
    base: &Invocation,
    d: &Dispatch,
    memory: &mut Memory,
    limits: Limits,
) -> Result<(), InterpError> {
    let [sx, sy, sz] = d.workgroup_size;
    let [gx, gy, gz] = d.num_workgroups;
    for wz in 0..gz {
        for wy in 0..gy {
            for wx in 0..gx {
                let mut lanes = Vec::with_capacity((sx * sy * sz) as usize);
                for lz in 0..sz {
                    for ly in 0..sy {
                        for lx in 0..sx {
                            let mut sv = base.sysvals.clone();
                            sv.local_invocation_id = [lx, ly, lz];
                            sv.workgroup_id = [wx, wy, wz];
                            sv.num_workgroups = d.num_workgroups;
                            sv.global_invocation_id = [wx * sx + lx, wy * sy + ly, wz * sz + lz];
                            sv.local_invocation_index = (lz * sy + ly) * sx + lx;
                            lanes.push(Machine::new(shader, base, sv));
                        }
                    }
                }
                memory.shared = vec![None; d.shared_words];
                Group::new(lanes, GroupKind::Workgroup).run(memory, limits)?;
            }
        }
    }
    Ok(())
}

/// Runs `run` (the runs of some invocations on `memory`) and, when an
/// atomic's result turned out to depend on the order of other
/// invocations' atomics, runs it again from the same memory: an atomic
/// learns only of the atomics run before it, so the first run leaves the
/// results of those that ran first defined; the second knows all of the
/// first's atomics ([`crate::races`]). Both runs take the same path up to
/// the first undefined value, and branching on one or addressing with
/// one is undefined behaviour, so the second run's atomics are the
/// first's.
pub fn run_in_hindsight<T>(
    memory: &mut Memory,
    mut run: impl FnMut(&mut Memory) -> Result<T, InterpError>,
) -> Result<T, InterpError> {
    let start = memory.clone();
    let out = run(memory)?;
    if !memory.accesses.ordered() {
        return Ok(out);
    }
    let first = std::mem::take(&mut memory.accesses);
    *memory = Memory {
        accesses: Accesses::in_hindsight(&start.accesses, first),
        ..start
    };
    run(memory)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum GroupKind {
    /// One invocation standing for a quad of copies of itself.
    Single,
    /// A fragment quad.
    Quad,
    /// A compute workgroup.
    Workgroup,
}

/// Where a lane stands.
enum LaneState {
    Running,
    /// Stopped before this synchronising instruction.
    Waiting(Inst),
    Done,
    /// A helper lane hit undefined behaviour: its values are unusable.
    Dead(InterpError),
}

struct Group<'m, 'a> {
    lanes: Vec<Machine<'m, 'a>>,
    states: Vec<LaneState>,
    kind: GroupKind,
}

impl<'m, 'a> Group<'m, 'a> {
    fn new(lanes: Vec<Machine<'m, 'a>>, kind: GroupKind) -> Self {
        let states = lanes.iter().map(|_| LaneState::Running).collect();
        Group {
            lanes,
            states,
            kind,
        }
    }

    fn run(mut self, memory: &mut Memory, limits: Limits) -> Result<Vec<Outcome>, InterpError> {
        let first = memory.accesses.new_threads(self.lanes.len());
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            lane.who = Accessor {
                thread: first.wrapping_add(k as u32),
                group: first,
                epoch: 0,
            };
            if limits.sources {
                lane.sources = vec![Vec::new(); lane.values.len()];
            }
        }
        loop {
            for (k, lane) in self.lanes.iter_mut().enumerate() {
                if !matches!(self.states[k], LaneState::Running) {
                    continue;
                }
                self.states[k] = match lane.advance(memory, limits, self.kind) {
                    Ok(Some(i)) => LaneState::Waiting(i),
                    Ok(None) => LaneState::Done,
                    Err(e) if lane.helper && e.is_undefined() && self.kind == GroupKind::Quad => {
                        LaneState::Dead(e)
                    }
                    Err(e) => return Err(e),
                };
            }
            let Some(at) = self.states.iter().find_map(|s| match s {
                LaneState::Waiting(i) => Some(*i),
                _ => None,
            }) else {
                break;
            };
            self.synchronise(at)?;
        }
        Ok(self
            .lanes
            .into_iter()
            .map(|mut lane| {
                if lane.helper {
                    lane.out.outputs.clear();
                    lane.out.meta_outputs.clear();
                    lane.out.inexact.clear();
                    lane.out.inexact_meta.clear();
                    lane.out.discarded = true;
                }
                lane.out
            })
            .collect())
    }

    /// Lanes wait at `at` (the first waiting lane's instruction): when
    /// every lane does, having synchronised equally often, run it for all
    /// of them together. Otherwise a control barrier is undefined
    /// behaviour, and a derivative (or implicit-LOD sample) is run for the
    /// lanes that wait at the earliest such instruction in layout order
    /// (a branch's body precedes where it joins) with an undefined result.
    fn synchronise(&mut self, at: Inst) -> Result<(), InterpError> {
        let first = 0;
        let syncs = self.lanes[first].syncs;
        let mut uniform = true;
        for (k, state) in self.states.iter().enumerate() {
            uniform &= match state {
                LaneState::Waiting(i) => *i == at && self.lanes[k].syncs == syncs,
                LaneState::Dead(e) => return Err(e.clone()),
                _ => false,
            };
        }
        let op = match self.lanes[first].shader.inst(at).op {
            Op::Opcode(op) => op,
            _ => return Err(InterpError::Malformed("synchronising a meta op".into())),
        };
        if !uniform {
            if self.kind == GroupKind::Workgroup {
                let k = self
                    .states
                    .iter()
                    .position(|s| !matches!(s, LaneState::Waiting(i) if *i == at))
                    .unwrap_or(0);
                return Err(self.lanes[first].ub(
                    at,
                    format!(
                        "control barrier in non-uniform control flow (invocation {k} is elsewhere)"
                    ),
                ));
            }
            return self.diverged();
        }
        let results: Vec<Option<Val>> = match op {
            GenericOp::ControlBarrier => vec![None; self.lanes.len()],
            _ if self.kind == GroupKind::Workgroup => {
                return Err(InterpError::Unsupported(
                    "derivatives outside a fragment quad".into(),
                ));
            }
            GenericOp::Ddx { mode } | GenericOp::Ddy { mode } => {
                let arg = self.lanes[first].arg_value(at, 0)?;
                let ty = self.lanes[first].shader.value_type(arg).scalar;
                let vals = self.quad(|lane| lane.scalar(arg))?;
                let x = matches!(op, GenericOp::Ddx { .. });
                (0..self.lanes.len())
                    .map(|k| Some(Val::S(derivative(ty, &vals, k, x, mode))))
                    .collect()
            }
            GenericOp::Sample { .. } => {
                let coord = self.lanes[first].arg_value(at, 0)?;
                let coords = self.quad(|lane| lane.lanes_of(coord))?;
                let n = coords[0].len().min(3);
                let grad = |a: usize, b: usize| -> [f32; 3] {
                    std::array::from_fn(|c| {
                        if c < n {
                            f32::from_bits(coords[a][c]) - f32::from_bits(coords[b][c])
                        } else {
                            0.0
                        }
                    })
                };
                let grads = (grad(1, 0), grad(2, 0));
                let mut out = Vec::with_capacity(self.lanes.len());
                for lane in &self.lanes {
                    out.push(Some(lane.texture(at, op, Some(grads))?));
                }
                out
            }
            _ => return Err(InterpError::Malformed("unexpected synchronisation".into())),
        };
        for ((lane, state), val) in self.lanes.iter_mut().zip(&mut self.states).zip(results) {
            if op == GenericOp::ControlBarrier {
                lane.who.epoch += 1;
            }
            lane.finish_sync(at, val, true)?;
            *state = LaneState::Running;
        }
        Ok(())
    }

    /// A quad's lanes wait at different derivatives (or some have ended):
    /// those at the one earliest in layout run it alone, with an
    /// undefined result (the derivative of values some lanes of the quad
    /// do not compute).
    fn diverged(&mut self) -> Result<(), InterpError> {
        let shader = self.lanes[0].shader;
        let order: HashMap<Inst, usize> = shader
            .insts_in_order()
            .enumerate()
            .map(|(k, (_, i))| (i, k))
            .collect();
        let earliest = self
            .states
            .iter()
            .filter_map(|s| match s {
                LaneState::Waiting(i) => Some(*i),
                _ => None,
            })
            .min_by_key(|i| order.get(i).copied().unwrap_or(usize::MAX))
            .ok_or_else(|| InterpError::Malformed("no lane waits".into()))?;
        let op = match shader.inst(earliest).op {
            Op::Opcode(op) => op,
            _ => return Err(InterpError::Malformed("synchronising a meta op".into())),
        };
        for (lane, state) in self.lanes.iter_mut().zip(&mut self.states) {
            if !matches!(state, LaneState::Waiting(i) if *i == earliest) {
                continue;
            }
            let val = match op {
                GenericOp::Sample { .. } => lane.texture(earliest, op, None)?,
                _ => Val::S(0),
            };
            lane.finish_sync(earliest, Some(val), false)?;
            *state = LaneState::Running;
        }
        Ok(())
    }

    /// `f` of each quad lane; a single lane stands for all four.
    fn quad<T: Clone>(
        &self,
        f: impl Fn(&Machine<'m, 'a>) -> Result<T, InterpError>,
    ) -> Result<[T; 4], InterpError> {
        let vals = self.lanes.iter().map(f).collect::<Result<Vec<T>, _>>()?;
        match vals.len() {
            1 => Ok(std::array::from_fn(|_| vals[0].clone())),
            4 => Ok(std::array::from_fn(|k| vals[k].clone())),
            n => Err(InterpError::Malformed(format!("a quad of {n} invocations"))),
        }
    }
}

/// A derivative for quad lane `k` of values `v` (float bits of `ty`).
fn derivative(ty: Scalar, v: &[u32; 4], k: usize, x: bool, mode: DerivMode) -> u32 {
    let (a, b) = match (mode, x) {
        (DerivMode::Fine, true) => (v[(k & 2) + 1], v[k & 2]),
        (DerivMode::Fine, false) => (v[2 + (k & 1)], v[k & 1]),
        (_, true) => (v[1], v[0]),
        (_, false) => (v[2], v[0]),
    };
    if ty == Scalar::F32 {
        (f32::from_bits(a) - f32::from_bits(b)).to_bits()
    } else {
        round_to(ty, float_value(ty, a) - float_value(ty, b))
    }
}

/// The result of one atomic read-modify-write on `old`.
fn atomic(op: AtomicOp, old: u32, v: u32, comparator: u32) -> u32 {
    match op {
        AtomicOp::Add => old.wrapping_add(v),
        AtomicOp::IMin => (old as i32).min(v as i32) as u32,
        AtomicOp::IMax => (old as i32).max(v as i32) as u32,
        AtomicOp::UMin => old.min(v),
        AtomicOp::UMax => old.max(v),
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => old ^ v,
        AtomicOp::Exchange => v,
        AtomicOp::CompareExchange => {
            if old == comparator {
                v
            } else {
                old
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Val {
    S(u32),
    V(Vec<u32>),
}

impl Val {
    /// A scalar for one lane, a vector otherwise.
    fn from_lanes(lanes: Vec<u32>) -> Val {
        if lanes.len() == 1 {
            Val::S(lanes[0])
        } else {
            Val::V(lanes)
        }
    }
}

struct Machine<'m, 'a> {
    shader: &'m Shader<'a, GenericOp>,
    inv: &'m Invocation,
    sysvals: SysVals,
    /// By value, or by slot when `places` is set.
    values: Vec<Option<Val>>,
    /// The exactness of each of `values`.
    taints: Vec<Taint>,
    /// What the current memory or texture read read: the exactness of
    /// the data, joined into its result's.
    loaded: Taint,
    /// Under [`Limits::sources`], each value's sources (by slot, as
    /// `values`); empty otherwise.
    sources: Vec<Vec<Source>>,
    /// The input words the current read read (joined into its result's
    /// sources).
    loaded_from: Vec<Source>,
    /// Register mode ([`run_placed`]): each value's slots, and the width
    /// of the value last written at each slot.
    places: Option<&'m [Option<Placement>]>,
    widths: Vec<u32>,
    /// Array elements and their exactness (`None` until written).
    arrays: Vec<Vec<Option<(u32, Taint)>>>,
    /// Private-memory words and their exactness (`None` until written).
    private: Vec<Option<(u32, Taint)>>,
    out: Outcome,
    /// Where execution stands: block, index in it, the block before.
    block: Option<Block>,
    pos: usize,
    prev: Option<Block>,
    steps: u64,
    /// A helper invocation: runs, but writes no outputs or memory.
    helper: bool,
    /// Synchronisations completed (lanes meeting at one must agree).
    syncs: u64,
    /// This invocation as its memory accesses are recorded.
    who: Accessor,
}

impl<'m, 'a> Machine<'m, 'a> {
    fn new(shader: &'m Shader<'a, GenericOp>, inv: &'m Invocation, sysvals: SysVals) -> Self {
        Machine {
            shader,
            inv,
            helper: sysvals.helper_invocation,
            sysvals,
            values: vec![None; shader.value_capacity()],
            taints: vec![Taint::EXACT; shader.value_capacity()],
            loaded: Taint::EXACT,
            sources: Vec::new(),
            loaded_from: Vec::new(),
            places: None,
            widths: Vec::new(),
            arrays: shader
                .arrays()
                .iter()
                .map(|a| vec![None; a.len as usize])
                .collect(),
            private: vec![None; shader.private_bytes as usize / 4],
            out: Outcome::default(),
            block: shader.entry(),
            pos: 0,
            prev: None,
            steps: 0,
            syncs: 0,
            who: Accessor {
                thread: 0,
                group: 0,
                epoch: 0,
            },
        }
    }

    fn ub(&self, i: Inst, reason: impl Into<String>) -> InterpError {
        let names = Names::compute(self.shader);
        let mut context = String::new();
        let _ = write_inst(self.shader, &names, i, &mut context);
        let sources = match self.shader.inst(i).op {
            Op::Opcode(op) if !self.sources.is_empty() => addresses(op, self.shader.inst(i))
                .into_iter()
                .fold(Vec::new(), |acc, (v, _)| {
                    union_sources(&acc, self.sources_of(v))
                }),
            _ => Vec::new(),
        };
        InterpError::Undefined {
            inst: i,
            context,
            reason: reason.into(),
            sources,
        }
    }

    /// The input words `v` is computed from (empty unless traced).
    fn sources_of(&self, v: Value) -> &[Source] {
        self.slot(v)
            .ok()
            .and_then(|s| self.sources.get(s))
            .map_or(&[], Vec::as_slice)
    }

    /// Sets `v`'s sources, when they are traced.
    fn set_sources(&mut self, v: Value, sources: Vec<Source>) {
        if let Some(slot) = self.slot(v).ok().filter(|_| !self.sources.is_empty())
            && let Some(s) = self.sources.get_mut(slot)
        {
            *s = sources;
        }
    }

    /// The union of the sources of `d`'s operands, and of the word the
    /// instruction read.
    fn operand_sources(&mut self, d: &crate::shader::InstData<'_, GenericOp>) -> Vec<Source> {
        let read = std::mem::take(&mut self.loaded_from);
        if self.sources.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<Source> = read;
        for v in d.operands() {
            out = union_sources(&out, self.sources_of(v));
        }
        out
    }

    /// The private-memory word that `load_private`/`store_private` `i`
    /// addresses (its byte offset operand, aligned and in bounds).
    fn private_word(&self, i: Inst) -> Result<usize, InterpError> {
        let offset = self.arg(i, 0)?;
        if offset % 4 != 0 {
            return Err(self.ub(
                i,
                format!("private byte offset {offset} is not 4-byte aligned"),
            ));
        }
        let at = offset as usize / 4;
        if at >= self.private.len() {
            return Err(self.ub(
                i,
                format!(
                    "private byte offset {offset} is out of bounds ({} bytes)",
                    self.private.len() * 4
                ),
            ));
        }
        Ok(at)
    }

    /// Where `v` is stored: its index, or its register slot.
    fn slot(&self, v: Value) -> Result<usize, InterpError> {
        match self.places {
            None => Ok(v.index()),
            Some(places) => places
                .get(v.index())
                .copied()
                .flatten()
                .map(|p| p.slot as usize)
                .ok_or_else(|| InterpError::Malformed(format!("value {v:?} has no register"))),
        }
    }

    /// Write `v` (of exactness `taint`), clobbering whatever overlaps its
    /// slots in register mode; a scalar written exactly over one lane of a
    /// vector (a lane split into the vector's own register) leaves the
    /// vector there with that lane's bits replaced.
    fn store(&mut self, v: Value, val: Val, taint: Taint) -> Result<(), InterpError> {
        let s = self.slot(v)?;
        if let Some(places) = self.places {
            let width = places[v.index()].map_or(1, |p| p.width) as usize;
            let bits = match val {
                Val::S(b) => Some(b),
                Val::V(_) => None,
            };
            // A value covers at most 32 units (f32x16 in 16-bit units).
            for t in s.saturating_sub(32)..=s {
                let covers = t + self.widths[t] as usize > s;
                if !covers {
                    continue;
                }
                let lane = self.lane_at(t, s, width);
                match (&mut self.values[t], lane, bits) {
                    (Some(Val::V(lanes)), Some(k), Some(b)) => {
                        lanes[k] = b;
                        self.taints[t] = self.taints[t].replace_lane(k, taint.whole());
                        if t == s {
                            return Ok(());
                        }
                    }
                    (Some(Val::V(_)), _, _) if t < s => self.keep_lanes_outside(t, s, width),
                    (x, _, _) if t < s => *x = None,
                    _ => {}
                }
            }
            for t in s + 1..(s + width).min(self.values.len()) {
                self.values[t] = None;
            }
            self.widths[s] = width as u32;
        }
        self.values[s] = Some(val);
        self.taints[s] = taint;
        Ok(())
    }

    /// The vector stored at slot `t` is partly overwritten by a value at
    /// `s..s + width` (`t < s`): its lanes outside that range keep their
    /// bits in their registers, as scalars (register mode).
    fn keep_lanes_outside(&mut self, t: usize, s: usize, width: usize) {
        let Some(Val::V(lanes)) = self.values[t].take() else {
            return;
        };
        let lane_width = self.widths[t] as usize / lanes.len().max(1);
        let taint = self.taints[t];
        for (k, &b) in lanes.iter().enumerate() {
            let at = t + k * lane_width;
            let clobbered = at < s + width && s < at + lane_width;
            if lane_width == 0 || clobbered || (at != t && self.values[at].is_some()) {
                continue;
            }
            self.values[at] = Some(Val::S(b));
            self.widths[at] = lane_width as u32;
            self.taints[at] = Taint::splat(taint.lane(k), 1);
        }
    }

    /// The lane of the vector stored at slot `t` that slots `s..s + width`
    /// are exactly, if any (register mode).
    fn lane_at(&self, t: usize, s: usize, width: usize) -> Option<usize> {
        let Some(Val::V(lanes)) = &self.values[t] else {
            return None;
        };
        let lane_width = self.widths[t] as usize / lanes.len().max(1);
        (lane_width == width && width > 0 && (s - t) % width == 0)
            .then_some((s - t) / width)
            .filter(|&k| k < lanes.len())
    }

    /// The exactness of `v`'s lanes (in register mode, of lane 0 of the
    /// vector stored at a scalar's register, see `read`).
    fn taint(&self, v: Value) -> Taint {
        let Ok(s) = self.slot(v) else {
            return Taint::default();
        };
        let taint = self.taints.get(s).copied().unwrap_or_default();
        if let (Some(Some(Val::V(_))), Some(places)) = (self.values.get(s), self.places) {
            let width = places[v.index()].map_or(1, |p| p.width) as usize;
            if self.widths[s] as usize != width && self.lane_at(s, s, width) == Some(0) {
                return Taint::splat(taint.lane(0), 1);
            }
        }
        taint
    }

    /// Undefined behaviour unless `v` is defined: what a branch decides on
    /// and what addresses memory cannot be poison.
    fn defined(&self, i: Inst, v: Value, what: &str) -> Result<(), InterpError> {
        if self.taint(v).whole() == Exactness::Undefined {
            return Err(self.ub(i, format!("{what} is an undefined value")));
        }
        Ok(())
    }

    fn get(&self, v: Value) -> Result<&Val, InterpError> {
        self.values
            .get(self.slot(v)?)
            .and_then(|x| x.as_ref())
            .ok_or_else(|| InterpError::Malformed(format!("value {v:?} used before it is defined")))
    }

    /// `v`'s value; in register mode a scalar whose register is lane 0 of
    /// a vector stored there (see `store`) reads that lane.
    fn read(&self, v: Value) -> Result<Val, InterpError> {
        let val = self.get(v)?;
        if let (Val::V(lanes), Some(places)) = (val, self.places) {
            let s = self.slot(v)?;
            let width = places[v.index()].map_or(1, |p| p.width) as usize;
            if self.widths[s] as usize != width && self.lane_at(s, s, width) == Some(0) {
                return Ok(Val::S(lanes[0]));
            }
        }
        Ok(val.clone())
    }

    fn scalar(&self, v: Value) -> Result<u32, InterpError> {
        match self.read(v)? {
            Val::S(b) => Ok(b),
            Val::V(_) => Err(InterpError::Malformed(format!(
                "vector {v:?} used as a scalar"
            ))),
        }
    }

    /// The lanes of a scalar (one) or vector value.
    fn lanes_of(&self, v: Value) -> Result<Vec<u32>, InterpError> {
        Ok(match self.read(v)? {
            Val::S(b) => vec![b],
            Val::V(l) => l,
        })
    }

    /// Run until the invocation ends (`None`) or reaches an instruction
    /// its group must execute together (`Some`, not yet executed).
    fn advance(
        &mut self,
        memory: &mut Memory,
        limits: Limits,
        kind: GroupKind,
    ) -> Result<Option<Inst>, InterpError> {
        let s = self.shader;
        loop {
            let block = self
                .block
                .ok_or_else(|| InterpError::Malformed("no entry block".into()))?;
            let insts = s.block_insts(block);
            if self.pos == 0 {
                self.phis(insts)?;
            }
            let Some(&i) = insts.get(self.pos) else {
                return Err(InterpError::Malformed(
                    "block ends without a terminator".into(),
                ));
            };
            self.steps += 1;
            if self.steps > limits.max_steps {
                return Err(InterpError::StepLimit(limits.max_steps));
            }
            match self.step(i, memory)? {
                Flow::Continue => self.pos += 1,
                Flow::Goto(b) => {
                    self.prev = Some(block);
                    self.block = Some(b);
                    self.pos = 0;
                }
                Flow::Return => return Ok(None),
                Flow::Discard => {
                    self.helper = true;
                    if kind != GroupKind::Quad {
                        return Ok(None);
                    }
                    // The quad's other invocations may still need this one.
                    self.pos += 1;
                }
                Flow::Sync => return Ok(Some(i)),
            }
        }
    }

    /// Phis read their inputs together, then all are written; leaves the
    /// position after them.
    fn phis(&mut self, insts: &[Inst]) -> Result<(), InterpError> {
        let s = self.shader;
        let phi_count = insts.iter().take_while(|&&i| s.inst(i).op.is_phi()).count();
        let mut phi_vals = Vec::with_capacity(phi_count);
        for &i in &insts[..phi_count] {
            let d = s.inst(i);
            let k = self
                .prev
                .and_then(|p| d.targets.iter().position(|&t| t == p))
                .ok_or_else(|| {
                    InterpError::Malformed("phi has no value for the edge taken".into())
                })?;
            let v = d
                .args
                .get(k)
                .ok_or_else(|| InterpError::Malformed("phi arity".into()))?;
            phi_vals.push((
                d.result,
                self.read(*v)?,
                self.taint(*v),
                self.sources_of(*v).to_vec(),
            ));
        }
        for (r, v, t, sources) in phi_vals {
            if let Some(r) = r {
                self.store(r, v, t)?;
                self.set_sources(r, sources);
            }
        }
        self.pos = phi_count;
        Ok(())
    }

    /// Complete the synchronising instruction `at` with its result, which
    /// is undefined when the group did not execute it together (and then
    /// the lanes have not synchronised).
    fn finish_sync(
        &mut self,
        at: Inst,
        val: Option<Val>,
        uniform: bool,
    ) -> Result<(), InterpError> {
        if let Some(val) = val {
            let d = self.shader.inst(at);
            let r = d.result.ok_or_else(|| {
                InterpError::Malformed("value-producing instruction without a result".into())
            })?;
            let lanes = self.shader.value_type(r).lanes as usize;
            let operands = d.operands().map(|v| self.taint(v).whole()).max();
            let e = if uniform {
                operands.unwrap_or_default()
            } else {
                Exactness::Undefined
            };
            self.store(r, val, Taint::splat(e, lanes))?;
        }
        self.pos += 1;
        self.syncs += u64::from(uniform);
        Ok(())
    }

    fn step(&mut self, i: Inst, memory: &mut Memory) -> Result<Flow, InterpError> {
        let s = self.shader;
        let d = s.inst(i);
        let result_ty = d.result.map(|r| s.value_type(r));
        let val =
            match d.op {
                Op::Jump => {
                    return d
                        .targets
                        .first()
                        .map(|&b| Flow::Goto(b))
                        .ok_or_else(|| InterpError::Malformed("jump without target".into()));
                }
                Op::Branch => {
                    let cond = *d
                        .args
                        .first()
                        .ok_or_else(|| InterpError::Malformed("branch".into()))?;
                    self.defined(i, cond, "the branch condition")?;
                    let c = self.scalar(cond)?;
                    let k = if c & 1 == 1 { 0 } else { 1 };
                    return d
                        .targets
                        .get(k)
                        .map(|&b| Flow::Goto(b))
                        .ok_or_else(|| InterpError::Malformed("branch needs two targets".into()));
                }
                Op::Return => return Ok(Flow::Return),
                Op::Phi => return Err(InterpError::Malformed("phi after a non-phi".into())),
                Op::Swap => {
                    let (Some(a), Some(b), [x, y]) = (d.result, d.second_result, &*d.args) else {
                        return Err(InterpError::Malformed("swap".into()));
                    };
                    // Read both before writing either: in register mode the
                    // results overwrite the operands' registers.
                    let (vx, vy) = (self.read(*x)?, self.read(*y)?);
                    let (tx, ty) = (self.taint(*x), self.taint(*y));
                    let (sx, sy) = (self.sources_of(*x).to_vec(), self.sources_of(*y).to_vec());
                    self.store(a, vx, tx)?;
                    self.store(b, vy, ty)?;
                    self.set_sources(a, sx);
                    self.set_sources(b, sy);
                    return Ok(Flow::Continue);
                }
                Op::Collect => {
                    let mut lanes = Vec::with_capacity(d.args.len());
                    for &a in d.args.iter() {
                        lanes.push(self.scalar(a)?);
                    }
                    Val::V(lanes)
                }
                Op::Split { lane } => {
                    let a = *d
                        .args
                        .first()
                        .ok_or_else(|| InterpError::Malformed("split".into()))?;
                    match self.get(a)? {
                        Val::V(l) => Val::S(*l.get(lane as usize).ok_or_else(|| {
                            InterpError::Malformed("split lane out of range".into())
                        })?),
                        Val::S(_) => {
                            return Err(InterpError::Malformed("split of a scalar".into()));
                        }
                    }
                }
                Op::Input { index } => {
                    self.loaded_from = vec![Source::Meta { index }];
                    Val::S(
                        *self.inv.meta_inputs.get(index as usize).ok_or_else(|| {
                            InterpError::MissingInput(format!("meta input {index}"))
                        })?,
                    )
                }
                Op::Output { index } => {
                    let a = *d
                        .args
                        .first()
                        .ok_or_else(|| InterpError::Malformed("output".into()))?;
                    let ty = s.value_type(a);
                    let bits = self.scalar(a)?;
                    self.out.meta_outputs.insert(index, (ty, bits));
                    match self.taint(a).whole() {
                        Exactness::Exact => self.out.inexact_meta.remove(&index),
                        e => self.out.inexact_meta.insert(index, e),
                    };
                    return Ok(Flow::Continue);
                }
                Op::Opcode(op) => {
                    for (v, what) in addresses(op, d) {
                        self.defined(i, v, what)?;
                    }
                    self.loaded = Taint::EXACT;
                    self.loaded_from.clear();
                    match self.generic(i, op, result_ty, memory)? {
                        Some(Generic::Value(v)) => v,
                        Some(Generic::Flow(f)) => return Ok(f),
                        None => return Ok(Flow::Continue),
                    }
                }
            };
        let taint = match d.op {
            Op::Collect => (0..).zip(d.args.iter()).fold(Taint::EXACT, |t, (k, &a)| {
                t.with_lane(k, self.taint(a).lane(0))
            }),
            Op::Split { lane } => {
                let a = self.taint(d.args[0]).lane(lane as usize);
                Taint::splat(a, 1)
            }
            Op::Opcode(op) => {
                let source = if approximate(op) {
                    Exactness::Approximate
                } else {
                    Exactness::Exact
                };
                let operands = d.operands().map(|v| self.taint(v).whole());
                let e = operands.fold(source, Exactness::max);
                let lanes = result_ty.map_or(1, |t| t.lanes as usize);
                let loaded = std::mem::take(&mut self.loaded);
                let mut t = Taint::splat(e, lanes);
                for k in 0..lanes {
                    t = t.with_lane(k, loaded.lane(k));
                }
                t
            }
            _ => Taint::EXACT,
        };
        let sources = self.operand_sources(d);
        match d.result {
            Some(r) => {
                self.store(r, val, taint)?;
                self.set_sources(r, sources);
            }
            None => {
                return Err(InterpError::Malformed(
                    "value-producing instruction without a result".into(),
                ));
            }
        }
        Ok(Flow::Continue)
    }

    fn arg(&self, i: Inst, n: usize) -> Result<u32, InterpError> {
        let v = *self
            .shader
            .inst(i)
            .args
            .get(n)
            .ok_or_else(|| InterpError::Malformed("missing operand".into()))?;
        self.scalar(v)
    }

    fn arg_type_full(&self, i: Inst, n: usize) -> Result<Type, InterpError> {
        self.shader
            .inst(i)
            .args
            .get(n)
            .map(|&v| self.shader.value_type(v))
            .ok_or_else(|| InterpError::Malformed("missing operand".into()))
    }

    /// Address operand as a signed element offset (0 when absent).
    fn address(&self, i: Inst) -> Result<i64, InterpError> {
        match self.shader.inst(i).address {
            Some(a) => {
                let ty = self.shader.value_type(a).scalar;
                Ok(int_value(ty, self.scalar(a)?))
            }
            None => Ok(0),
        }
    }

    fn generic(
        &mut self,
        i: Inst,
        op: GenericOp,
        result: Option<Type>,
        memory: &mut Memory,
    ) -> Result<Option<Generic>, InterpError> {
        use GenericOp::*;
        let rs = || {
            result
                .map(|t| t.scalar)
                .ok_or_else(|| InterpError::Malformed(format!("{op:?} needs a result")))
        };
        let s = |v: u32| Ok(Some(Generic::Value(Val::S(v))));
        match op {
            LoadSysval {
                sysval: Sysval::HelperInvocation,
                ..
            } => s(self.helper as u32),
            LoadSysval { sysval, comp } => s(self.sysvals.get(sysval, comp)),
            // Executed by the group together (see `Group::synchronise`).
            Ddx { .. }
            | Ddy { .. }
            | ControlBarrier
            | Sample {
                lod: LodMode::Implicit | LodMode::Bias,
                ..
            } => Ok(Some(Generic::Flow(Flow::Sync))),
            Sample { .. }
            | Gather { .. }
            | TexelFetch { .. }
            | TextureSize { .. }
            | TextureLevels { .. } => Ok(Some(Generic::Value(self.texture(i, op, None)?))),
            ImageLoad { .. } | ImageStore { .. } | ImageAtomic { .. } | ImageSize { .. } => {
                Ok(self.image(i, op, memory)?.map(Generic::Value))
            }
            LoadSsbo { .. }
            | StoreSsbo { .. }
            | SsboAtomic { .. }
            | SsboSize { .. }
            | SsboAtomicLoad { .. }
            | SsboAtomicStore { .. }
            | LoadShared
            | StoreShared
            | SharedAtomic { .. }
            | SharedAtomicLoad
            | SharedAtomicStore => Ok(self.buffer(i, op, memory)?.map(Generic::Value)),
            Demote => {
                self.helper = true;
                Ok(None)
            }
            StoreUniform { .. } => Err(InterpError::Unsupported(
                "store_uniform (a backend's preamble: interpret the shader before it is split)".into(),
            )),
            LoadVarying { .. } => Err(InterpError::Unsupported(
                "load_varying (a backend's form of load_input: interpret the shader before its ABI lowering)".into(),
            )),
            LoadInput { slot, comp, .. } => {
                let ty = rs()?;
                let bits = self.inv.inputs.get(&(slot, comp)).ok_or_else(|| {
                    InterpError::MissingInput(format!("slot {slot} component {comp}"))
                })?;
                self.loaded_from = vec![Source::Input { slot, comp }];
                s(mask(ty, *bits))
            }
            StoreOutput { slot, comp } => {
                let ty = self.arg_type_full(i, 0)?;
                let bits = self.arg(i, 0)?;
                self.out.outputs.insert((slot, comp), (ty, bits));
                match self.taint(self.arg_value(i, 0)?).whole() {
                    Exactness::Exact => self.out.inexact.remove(&(slot, comp)),
                    e => self.out.inexact.insert((slot, comp), e),
                };
                Ok(None)
            }
            LoadUniform { index } => {
                let ty = rs()?;
                let at = index as i64 + self.address(i)?;
                match usize::try_from(at)
                    .ok()
                    .and_then(|k| self.inv.uniforms.get(k))
                {
                    Some(&w) => {
                        self.loaded_from = vec![Source::Uniform { word: at as u32 }];
                        s(mask(ty, w))
                    }
                    None => Err(self.ub(i, format!("uniform {at} is out of bounds"))),
                }
            }
            LoadUbo { binding } => {
                let offset = self.arg(i, 0)?;
                let Some(ubo) = self.inv.ubos.get(binding as usize) else {
                    return Err(InterpError::MissingInput(format!("UBO binding {binding}")));
                };
                if offset % 4 != 0 {
                    return Err(self.ub(i, format!("UBO offset {offset} is not 4-byte aligned")));
                }
                match ubo.get(offset as usize / 4) {
                    Some(&w) => {
                        self.loaded_from = vec![Source::Ubo {
                            binding,
                            word: offset / 4,
                        }];
                        s(w)
                    }
                    None => Err(self.ub(i, format!("UBO offset {offset} is out of bounds"))),
                }
            }
            LoadUboVec4 { binding, comp } => {
                let index = self.arg(i, 0)?;
                let Some(ubo) = self.inv.ubos.get(binding as usize) else {
                    return Err(InterpError::MissingInput(format!("UBO binding {binding}")));
                };
                let lanes = result.map_or(1, |t| t.lanes);
                let mut words = Vec::with_capacity(usize::from(lanes));
                for c in comp..comp + lanes {
                    let word = u64::from(index) * 4 + u64::from(c);
                    match usize::try_from(word).ok().and_then(|w| ubo.get(w)) {
                        Some(&w) => {
                            words.push(w);
                            self.loaded_from.push(Source::Ubo {
                                binding,
                                word: word as u32,
                            });
                        }
                        None => {
                            return Err(self.ub(
                                i,
                                format!("UBO vector {index} component {c} is out of bounds"),
                            ));
                        }
                    }
                }
                Ok(Some(Generic::Value(Val::from_lanes(words))))
            }
            Discard => Ok(Some(Generic::Flow(Flow::Discard))),
            Barrier => Ok(None),
            ArrayLoad { array, offset } => {
                let at = offset as i64 + self.address(i)?;
                let slot = self
                    .arrays
                    .get(array.index())
                    .and_then(|a| usize::try_from(at).ok().and_then(|k| a.get(k)));
                match slot {
                    Some(&Some((v, taint))) => {
                        self.loaded = taint;
                        s(v)
                    }
                    Some(None) => {
                        Err(self.ub(i, format!("element {at} is read before it is written")))
                    }
                    None => Err(self.ub(i, format!("element {at} is out of bounds"))),
                }
            }
            ArrayStore { array, offset } => {
                let at = offset as i64 + self.address(i)?;
                let v = self.arg(i, 0)?;
                let len = self.arrays.get(array.index()).map_or(0, |a| a.len());
                match usize::try_from(at).ok().filter(|&k| k < len) {
                    Some(k) => {
                        let taint = self.taint(self.arg_value(i, 0)?);
                        self.arrays[array.index()][k] = Some((v, taint));
                        Ok(None)
                    }
                    None => Err(self.ub(i, format!("element {at} is out of bounds"))),
                }
            }
            LoadPrivate => {
                let at = self.private_word(i)?;
                match self.private[at] {
                    Some((v, taint)) => {
                        self.loaded = taint;
                        s(v)
                    }
                    None => Err(self.ub(i, "private memory read before it is written")),
                }
            }
            StorePrivate => {
                let at = self.private_word(i)?;
                let v = self.arg(i, 1)?;
                let taint = self.taint(self.arg_value(i, 1)?);
                self.private[at] = Some((v, taint));
                Ok(None)
            }
            // Every arithmetic, logic, compare, select, conversion and bit
            // opcode: one definition, shared with constant folding.
            _ => {
                let ty = rs()?;
                let args = &self.shader.inst(i).args;
                let mut operands = [(Scalar::Bool, 0); 4];
                if args.len() > operands.len() {
                    return Err(InterpError::Malformed(format!("{op:?} with {} operands", args.len())));
                }
                for (slot, &v) in operands.iter_mut().zip(args.iter()) {
                    *slot = (self.shader.value_type(v).scalar, self.scalar(v)?);
                }
                let poison = args.iter().any(|&v| self.taint(v).whole() == Exactness::Undefined);
                match scalar_ops::eval(op, ty, &operands[..args.len()]) {
                    Ok(bits) => s(bits),
                    // An undefined operand may be any value: the result
                    // is undefined, not the behaviour.
                    Err(scalar_ops::EvalError::Undefined(_)) if poison => s(0),
                    Err(scalar_ops::EvalError::Undefined(reason)) => Err(self.ub(i, reason)),
                    Err(scalar_ops::EvalError::NotScalar) => Err(InterpError::Malformed(format!("{op:?} on these operands"))),
                }
            }
        }
    }

    /// Operand `n` of `i` as a value handle.
    fn arg_value(&self, i: Inst, n: usize) -> Result<Value, InterpError> {
        self.shader
            .inst(i)
            .args
            .get(n)
            .copied()
            .ok_or_else(|| InterpError::Malformed("missing operand".into()))
    }

    /// The operands of `i`, each as its lanes.
    fn operand_lanes(&self, i: Inst) -> Result<Vec<Vec<u32>>, InterpError> {
        self.shader
            .inst(i)
            .args
            .iter()
            .map(|&v| self.lanes_of(v))
            .collect()
    }

    /// Texture reads: `sample` (with the quad's coordinate gradients for
    /// implicit LOD), `gather`, `texel_fetch`, `texture_size`,
    /// `texture_levels`.
    fn texture(
        &self,
        i: Inst,
        op: GenericOp,
        quad_grads: Option<([f32; 3], [f32; 3])>,
    ) -> Result<Val, InterpError> {
        let args = self.operand_lanes(i)?;
        let mut next = args.iter();
        let mut take = || {
            next.next()
                .cloned()
                .ok_or_else(|| InterpError::Malformed("missing texture operand".into()))
        };
        let floats = |l: &[u32]| -> [f32; 4] {
            std::array::from_fn(|k| l.get(k).map_or(0.0, |&b| f32::from_bits(b)))
        };
        let ints =
            |l: &[u32]| -> [i32; 3] { std::array::from_fn(|k| l.get(k).map_or(0, |&b| b as i32)) };
        let texture = |t: u8| {
            self.inv
                .textures
                .get(t as usize)
                .ok_or_else(|| InterpError::MissingInput(format!("texture {t}")))
        };
        let result = self
            .shader
            .inst(i)
            .result
            .map(|r| self.shader.value_type(r));
        let integer = result.is_some_and(|t| t.scalar != Scalar::F32);
        let ub = |reason: String| self.ub(i, reason);
        let xyz = |g: [f32; 4]| [g[0], g[1], g[2]];
        match op {
            GenericOp::Sample {
                texture: t,
                sampler,
                shape,
                lod,
                offset,
                compare,
            } => {
                let coord = floats(&take()?);
                let dref = if compare {
                    Some(floats(&take()?)[0])
                } else {
                    None
                };
                let zero = ([0.0; 3], [0.0; 3]);
                let implicit = || {
                    let (dx, dy) = quad_grads.unwrap_or(zero);
                    LodInput::Grad(dx, dy)
                };
                let (lod, bias) = match lod {
                    LodMode::Implicit => (implicit(), 0.0),
                    LodMode::Bias => (implicit(), floats(&take()?)[0]),
                    LodMode::Explicit => (LodInput::Lod(floats(&take()?)[0]), 0.0),
                    LodMode::Grad => {
                        let dx = xyz(floats(&take()?));
                        (LodInput::Grad(dx, xyz(floats(&take()?))), 0.0)
                    }
                };
                let offset = if offset { ints(&take()?) } else { [0; 3] };
                let sampler = self
                    .inv
                    .samplers
                    .get(sampler as usize)
                    .copied()
                    .unwrap_or_default();
                let req = SampleRequest {
                    shape,
                    coord,
                    lod,
                    bias,
                    offset,
                    dref,
                    gather: None,
                    integer,
                };
                let bits = texture::sample(texture(t)?, &sampler, &req).map_err(ub)?;
                Ok(if compare {
                    Val::S(bits[0])
                } else {
                    Val::V(bits.to_vec())
                })
            }
            GenericOp::Gather {
                texture: t,
                sampler,
                shape,
                comp,
                offset,
                compare,
            } => {
                let coord = floats(&take()?);
                let dref = if compare {
                    Some(floats(&take()?)[0])
                } else {
                    None
                };
                let offset = if offset { ints(&take()?) } else { [0; 3] };
                let sampler = self
                    .inv
                    .samplers
                    .get(sampler as usize)
                    .copied()
                    .unwrap_or_default();
                let req = SampleRequest {
                    shape,
                    coord,
                    lod: LodInput::Lod(0.0),
                    bias: 0.0,
                    offset,
                    dref,
                    gather: Some(comp),
                    integer,
                };
                let bits = texture::sample(texture(t)?, &sampler, &req).map_err(ub)?;
                Ok(Val::V(bits.to_vec()))
            }
            GenericOp::TexelFetch {
                texture: t,
                shape,
                offset,
            } => {
                let coord: Vec<i32> = take()?.iter().map(|&b| b as i32).collect();
                let lod = take()?[0] as i32;
                let offset = if offset { ints(&take()?) } else { [0; 3] };
                let bits = texture::fetch(texture(t)?, shape, &coord, lod, offset).map_err(ub)?;
                Ok(Val::V(bits.to_vec()))
            }
            GenericOp::TextureSize { texture: t, shape } => {
                let lod = if shape.ms { 0 } else { take()?[0] as i32 };
                Ok(Val::from_lanes(
                    texture::size(texture(t)?, shape, lod).map_err(ub)?,
                ))
            }
            GenericOp::TextureLevels { texture: t } => Ok(Val::S(texture(t)?.levels.len() as u32)),
            _ => Err(InterpError::Malformed(format!(
                "{op:?} is not a texture read"
            ))),
        }
    }

    /// Storage images. `None` for a store.
    fn image(
        &mut self,
        i: Inst,
        op: GenericOp,
        memory: &mut Memory,
    ) -> Result<Option<Val>, InterpError> {
        let (image, shape) = match op {
            GenericOp::ImageLoad { image, shape }
            | GenericOp::ImageStore { image, shape }
            | GenericOp::ImageAtomic { image, shape, .. }
            | GenericOp::ImageSize { image, shape } => (image, shape),
            _ => return Err(InterpError::Malformed(format!("{op:?} is not an image op"))),
        };
        let img = memory
            .images
            .get(image as usize)
            .ok_or_else(|| InterpError::MissingInput(format!("image {image}")))?;
        if let GenericOp::ImageSize { .. } = op {
            return Ok(Some(Val::from_lanes(img.size(shape))));
        }
        let args = self.operand_lanes(i)?;
        let coord: Vec<i32> = args[0].iter().map(|&b| b as i32).collect();
        let (sample, rest) = if shape.ms {
            (args.get(1).map_or(0, |l| l[0] as i32), 2)
        } else {
            (0, 1)
        };
        let idx = match img.index(shape, &coord, sample) {
            Ok(idx) => idx,
            // Without robust image access an out-of-bounds load gives an
            // undefined value (Vulkan's texel coordinate validation); a
            // store or atomic may write anywhere in the image.
            Err(_) if matches!(op, GenericOp::ImageLoad { .. }) => {
                self.loaded = Taint::splat(Exactness::Undefined, 4);
                return Ok(Some(Val::V(vec![0; 4])));
            }
            Err(r) => return Err(self.ub(i, r)),
        };
        let kind = match op {
            GenericOp::ImageLoad { .. } => Kind::Read,
            GenericOp::ImageStore { .. } => Kind::Write,
            _ => Kind::Atomic,
        };
        let texel = Word::Image {
            image,
            texel: idx as u32,
        };
        self.access(i, &mut memory.accesses, texel, kind)?;
        let word = texel;
        let stored = memory.written.get(word).map_or(Taint::EXACT, |(_, t)| t);
        let img = &mut memory.images[image as usize];
        let channels = img.channels.min(4) as usize;
        let texel = &mut img.texels[idx];
        let operand = |k: usize| -> Result<&Vec<u32>, InterpError> {
            args.get(rest + k)
                .ok_or_else(|| InterpError::Malformed("missing image operand".into()))
        };
        match op {
            GenericOp::ImageLoad { .. } => {
                let float = self
                    .shader
                    .inst(i)
                    .result
                    .is_some_and(|r| self.shader.value_type(r).scalar == Scalar::F32);
                let one = if float { 1.0f32.to_bits() } else { 1 };
                let lanes = (0..4)
                    .map(|c| {
                        if c < channels {
                            texel[c]
                        } else if c == 3 {
                            one
                        } else {
                            0
                        }
                    })
                    .collect();
                self.loaded =
                    (0..channels).fold(Taint::EXACT, |t, c| t.with_lane(c, stored.lane(c)));
                Ok(Some(Val::V(lanes)))
            }
            GenericOp::ImageStore { .. } => {
                let value = operand(0)?;
                if !self.helper {
                    texel[..channels].copy_from_slice(&value[..channels]);
                    let v =
                        *self.shader.inst(i).args.get(rest).ok_or_else(|| {
                            InterpError::Malformed("missing image operand".into())
                        })?;
                    let ty = self.shader.value_type(v).scalar;
                    memory.written.set(word, ty, self.taint(v));
                }
                Ok(None)
            }
            GenericOp::ImageAtomic { op: a, .. } => {
                let v = operand(0)?[0];
                let cmp = if a == AtomicOp::CompareExchange {
                    operand(1)?[0]
                } else {
                    0
                };
                if self.helper {
                    return Ok(Some(Val::S(0)));
                }
                let old = texel[0];
                texel[0] = atomic(a, old, v, cmp);
                let args = &self.shader.inst(i).args[rest..];
                let ty = args
                    .first()
                    .map_or(Scalar::U32, |&v| self.shader.value_type(v).scalar);
                let old_taint = match a {
                    AtomicOp::Exchange => Exactness::Exact,
                    _ => stored.lane(0),
                };
                let new = self.joined(i, rest, old_taint);
                let (read, left) = self.atomic_taints(
                    word,
                    AtomicEffect::of(a),
                    new,
                    (&mut memory.accesses, &memory.written),
                );
                self.loaded = read;
                memory
                    .written
                    .set(word, ty, stored.with_lane(0, left.lane(0)));
                Ok(Some(Val::S(old)))
            }
            _ => Err(InterpError::Malformed(format!("{op:?} is not an image op"))),
        }
    }

    /// Storage buffers and shared memory. `None` for a store.
    fn buffer(
        &mut self,
        i: Inst,
        op: GenericOp,
        memory: &mut Memory,
    ) -> Result<Option<Val>, InterpError> {
        use GenericOp::*;
        if let SsboSize { binding } = op {
            let buf = memory
                .ssbos
                .get(binding as usize)
                .ok_or_else(|| InterpError::MissingInput(format!("storage buffer {binding}")))?;
            return Ok(Some(Val::S((buf.len() * 4) as u32)));
        }
        let offset = self.arg(i, 0)?;
        if offset % 4 != 0 {
            return Err(self.ub(i, format!("byte offset {offset} is not 4-byte aligned")));
        }
        let at = offset as usize / 4;
        let oob = || self.ub(i, format!("byte offset {offset} is out of bounds"));
        let kind = match op {
            LoadSsbo { .. } | LoadShared => Kind::Read,
            StoreSsbo { .. } | StoreShared => Kind::Write,
            _ => Kind::Atomic,
        };
        match op {
            // A vector result reads consecutive words, lane k at word k.
            LoadSsbo { binding } => {
                let lanes = self
                    .shader
                    .inst(i)
                    .result
                    .map_or(1, |r| usize::from(self.shader.value_type(r).lanes));
                let mut words = Vec::with_capacity(lanes);
                let mut taint = Taint::EXACT;
                let mut sources = Vec::new();
                for k in 0..lanes {
                    let buf = memory.ssbos.get(binding as usize).ok_or_else(|| {
                        InterpError::MissingInput(format!("storage buffer {binding}"))
                    })?;
                    let Some(&w) = buf.get(at + k) else {
                        let byte = offset as usize + 4 * k;
                        return Err(self.ub(i, format!("byte offset {byte} is out of bounds")));
                    };
                    let mut cell = Some(w);
                    let word = Word::Ssbo {
                        binding,
                        word: (at + k) as u32,
                    };
                    self.access(i, &mut memory.accesses, word, kind)?;
                    if let Some(Val::S(v)) =
                        self.memory_op(i, op, word, &mut cell, memory_parts(memory))?
                    {
                        words.push(v);
                    }
                    taint = taint.with_lane(k, self.loaded.lane(0));
                    sources.append(&mut self.loaded_from);
                }
                self.loaded = taint;
                self.loaded_from = sources;
                Ok(Some(Val::from_lanes(words)))
            }
            StoreSsbo { binding }
            | SsboAtomic { binding, .. }
            | SsboAtomicLoad { binding }
            | SsboAtomicStore { binding } => {
                let buf = memory.ssbos.get(binding as usize).ok_or_else(|| {
                    InterpError::MissingInput(format!("storage buffer {binding}"))
                })?;
                buf.get(at).ok_or_else(oob)?;
                let word = Word::Ssbo {
                    binding,
                    word: at as u32,
                };
                self.access(i, &mut memory.accesses, word, kind)?;
                // An atomic on a word whose order is fixed takes its
                // result from that order.
                let followed = match (op, &mut memory.atomic_order) {
                    (SsboAtomic { .. }, Some(order))
                        if !self.helper && order.orders(binding, at as u32) =>
                    {
                        Some(
                            order
                                .take(self.who.thread, binding, at as u32)
                                .map_err(InterpError::AtomicOrder)?,
                        )
                    }
                    _ => None,
                };
                let w = &mut memory.ssbos[binding as usize][at];
                // Storage buffers are always initialised.
                let mut cell = Some(*w);
                let result = match followed {
                    Some(event) => {
                        self.followed_atomic(i, op, word, event, memory_parts(memory))?
                    }
                    None => self.memory_op(i, op, word, &mut cell, memory_parts(memory))?,
                };
                if let Some((_, new)) = followed {
                    cell = Some(new);
                }
                if let Some(v) = cell {
                    memory.ssbos[binding as usize][at] = v;
                }
                Ok(result)
            }
            // A vector value writes consecutive words, lane k at word k.
            StoreShared => {
                let value = self.arg_value(i, 1)?;
                let lanes = self.lanes_of(value)?;
                let taint = self.taint(value);
                let ty = self.shader.value_type(value).scalar;
                for (k, v) in lanes.into_iter().enumerate() {
                    if memory.shared.get(at + k).is_none() {
                        let byte = offset as usize + 4 * k;
                        return Err(self.ub(i, format!("byte offset {byte} is out of bounds")));
                    }
                    let word = Word::Shared {
                        group: self.who.group,
                        word: (at + k) as u32,
                    };
                    self.access(i, &mut memory.accesses, word, kind)?;
                    if !self.helper {
                        memory.written.set(word, ty, Taint::splat(taint.lane(k), 1));
                        memory.shared[at + k] = Some(v);
                    }
                }
                Ok(None)
            }
            _ => {
                memory.shared.get(at).ok_or_else(oob)?;
                let word = Word::Shared {
                    group: self.who.group,
                    word: at as u32,
                };
                self.access(i, &mut memory.accesses, word, kind)?;
                let mut cell = memory.shared[at];
                let result = self.memory_op(i, op, word, &mut cell, memory_parts(memory))?;
                memory.shared[at] = cell;
                Ok(result)
            }
        }
    }

    /// Records an access by this invocation (a helper's stores and
    /// atomics do not happen); a data race is undefined behaviour.
    fn access(
        &self,
        i: Inst,
        accesses: &mut Accesses,
        word: Word,
        kind: Kind,
    ) -> Result<(), InterpError> {
        if self.helper && kind != Kind::Read {
            return Ok(());
        }
        accesses
            .record(word, self.who, kind)
            .map_err(|race| self.ub(i, race))
    }

    /// The exactness an atomic reads from `word` (its old value's, or
    /// undefined when the order of other invocations' atomics decides
    /// it), and the exactness it leaves there: `new` (that of what the
    /// value it computes is computed from), or undefined when the order
    /// decides.
    fn atomic_taints(
        &self,
        word: Word,
        effect: AtomicEffect,
        new: Exactness,
        (accesses, written): (&mut Accesses, &Written),
    ) -> (Taint, Taint) {
        let old = written.get(word).map_or(Taint::EXACT, |(_, t)| t);
        let order = accesses.atomic(word, self.who, effect);
        let undefined = |yes: bool, t: Taint| {
            if yes {
                Taint::splat(Exactness::Undefined, 1)
            } else {
                t
            }
        };
        (
            undefined(order.result, old),
            undefined(order.word, Taint::splat(new, 1)),
        )
    }

    /// The join of the exactness of `i`'s operands from `first` on and of
    /// `old` (the word's old value's, for an atomic whose new value
    /// depends on it).
    fn joined(&self, i: Inst, first: usize, old: Exactness) -> Exactness {
        self.shader.inst(i).args[first..]
            .iter()
            .map(|&v| self.taint(v).whole())
            .fold(old, Exactness::max)
    }

    /// An atomic on `word` that follows an order: it returns the event's
    /// old value, and must compute the event's new value from it; the
    /// result is as exact as the word (no other order is possible).
    fn followed_atomic(
        &mut self,
        i: Inst,
        op: GenericOp,
        word: Word,
        (old, new): (u32, u32),
        (accesses, written): (&mut Accesses, &mut Written),
    ) -> Result<Option<Val>, InterpError> {
        let GenericOp::SsboAtomic { op: a, .. } = op else {
            return Err(InterpError::Malformed(format!("{op:?} is not an atomic")));
        };
        let v = self.arg(i, 1)?;
        let cmp = if a == AtomicOp::CompareExchange {
            self.arg(i, 2)?
        } else {
            0
        };
        let computed = atomic(a, old, v, cmp);
        if computed != new {
            return Err(InterpError::AtomicOrder(format!(
                "{word}: {a:?} of {v:#x} on {old:#x} gives {computed:#x}, the compiled program left {new:#x}"
            )));
        }
        let value = self.arg_value(i, 1)?;
        let old_taint = written.get(word).map_or(Taint::EXACT, |(_, t)| t);
        let new_taint = self.joined(i, 1, old_taint.whole());
        // Recorded for races; the order decides nothing here.
        accesses.atomic(word, self.who, AtomicEffect::of(a));
        self.loaded = old_taint;
        written.set(
            word,
            self.shader.value_type(value).scalar,
            Taint::splat(new_taint, 1),
        );
        Ok(Some(Val::S(old)))
    }

    /// One load, store or atomic on memory word `word` (`cell`: its value,
    /// `None` if never written).
    fn memory_op(
        &mut self,
        i: Inst,
        op: GenericOp,
        word: Word,
        cell: &mut Option<u32>,
        (accesses, written): (&mut Accesses, &mut Written),
    ) -> Result<Option<Val>, InterpError> {
        use GenericOp::*;
        let uninit = || self.ub(i, "shared memory read before it is written");
        match op {
            LoadSsbo { .. } | LoadShared => {
                let v = cell.ok_or_else(uninit)?;
                self.loaded = written.get(word).map_or(Taint::EXACT, |(_, t)| t);
                if let (Word::Ssbo { binding, word }, None) = (word, written.get(word)) {
                    self.loaded_from = vec![Source::Ssbo { binding, word }];
                }
                Ok(Some(Val::S(v)))
            }
            StoreSsbo { .. } => {
                let v = self.arg(i, 1)?;
                if !self.helper {
                    let value = self.arg_value(i, 1)?;
                    let ty = self.shader.value_type(value).scalar;
                    written.set(word, ty, self.taint(value));
                    *cell = Some(v);
                }
                Ok(None)
            }
            SsboAtomic { op: a, .. } | SharedAtomic { op: a } => {
                let v = self.arg(i, 1)?;
                let cmp = if a == AtomicOp::CompareExchange {
                    self.arg(i, 2)?
                } else {
                    0
                };
                let old = cell.ok_or_else(uninit)?;
                if self.helper {
                    return Ok(Some(Val::S(0)));
                }
                let value = self.arg_value(i, 1)?;
                // An exchange's new value is its operand alone.
                let old_taint = match a {
                    AtomicOp::Exchange => Exactness::Exact,
                    _ => written
                        .get(word)
                        .map_or(Exactness::Exact, |(_, t)| t.whole()),
                };
                let new = self.joined(i, 1, old_taint);
                let (read, left) =
                    self.atomic_taints(word, AtomicEffect::of(a), new, (accesses, written));
                self.loaded = read;
                written.set(word, self.shader.value_type(value).scalar, left);
                *cell = Some(atomic(a, old, v, cmp));
                Ok(Some(Val::S(old)))
            }
            SsboAtomicLoad { .. } | SharedAtomicLoad => {
                let v = cell.ok_or_else(uninit)?;
                let (read, _) = self.atomic_taints(
                    word,
                    AtomicEffect::Reads,
                    Exactness::Exact,
                    (accesses, written),
                );
                self.loaded = read;
                Ok(Some(Val::S(v)))
            }
            SsboAtomicStore { .. } | SharedAtomicStore => {
                let v = self.arg(i, 1)?;
                if !self.helper {
                    let value = self.arg_value(i, 1)?;
                    let new = self.joined(i, 1, Exactness::Exact);
                    let (_, left) =
                        self.atomic_taints(word, AtomicEffect::Replaces, new, (accesses, written));
                    written.set(word, self.shader.value_type(value).scalar, left);
                    *cell = Some(v);
                }
                Ok(None)
            }
            _ => Err(InterpError::Malformed(format!("{op:?} is not a memory op"))),
        }
    }
}

/// The parts of `memory` an access updates besides the word itself.
fn memory_parts(memory: &mut Memory) -> (&mut Accesses, &mut Written) {
    (&mut memory.accesses, &mut memory.written)
}

/// The operands of `op` that address memory or decide which texel is
/// read: undefined behaviour when undefined.
fn addresses(
    op: GenericOp,
    d: &crate::shader::InstData<'_, GenericOp>,
) -> Vec<(Value, &'static str)> {
    use GenericOp::*;
    let mut out: Vec<(Value, &'static str)> =
        d.address.iter().map(|&a| (a, "the address")).collect();
    let first = match op {
        LoadUbo { .. }
        | LoadUboVec4 { .. }
        | LoadSsbo { .. }
        | StoreSsbo { .. }
        | SsboAtomic { .. }
        | SsboAtomicLoad { .. }
        | SsboAtomicStore { .. }
        | LoadShared
        | StoreShared
        | SharedAtomic { .. }
        | SharedAtomicLoad
        | SharedAtomicStore
        | LoadPrivate
        | StorePrivate => 1,
        TexelFetch { .. } => 2,
        TextureSize { shape, .. } if !shape.ms => 1,
        ImageLoad { shape, .. } | ImageStore { shape, .. } | ImageAtomic { shape, .. } => {
            1 + usize::from(shape.ms)
        }
        _ => 0,
    };
    out.extend(
        d.args
            .iter()
            .take(first)
            .map(|&a| (a, "a memory or texel address")),
    );
    out
}

/// An operation whose result IEEE does not pin, or that GPUs compute in
/// their special-function units.
fn approximate(op: GenericOp) -> bool {
    use GenericOp::*;
    matches!(op, Rcp | Rsqrt | Sqrt | FDiv | Exp2 | Log2 | Sin | Cos)
}

enum Flow {
    Continue,
    Goto(Block),
    Return,
    Discard,
    /// The group executes this instruction together.
    Sync,
}

enum Generic {
    Value(Val),
    Flow(Flow),
}
