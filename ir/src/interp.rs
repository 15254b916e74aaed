//! The reference interpreter for generic-level shaders.
//!
//! It runs one invocation (or a small group, one after another) on given
//! inputs and returns the outputs it wrote. Arithmetic is exact IEEE 754
//! binary32/binary16 with round-to-nearest-even wherever IEEE defines the
//! result (`+ - *`, `ffma`, `sqrt`, `rcp` as a division, conversions,
//! min/max, compares, `floor`); subnormals are kept. `rsqrt`, `exp2`,
//! `log2`, `sin` and `cos` have no IEEE-defined result: they are computed in
//! `f64` with the host's math library and rounded once.
//!
//! Undefined behaviour is an error, never an invented value: out-of-range
//! float→int conversion or NaN input to it, shifts by the type width or
//! more (a negative signed amount counts as huge), division by zero, the
//! overflowing signed division `MIN / -1` (`idiv`, `irem`), out-of-bounds
//! or uninitialised array reads, out-of-bounds uniform/UBO reads, and NaN
//! texture coordinates.
//!
//! Integer `iadd`, `isub` and `imul` wrap in two's complement for signed
//! types too, as GLSL and SPIR-V define them: signed overflow there is a
//! defined result, not undefined behaviour. IEEE operations never trap:
//! `rcp 0` is infinity, `sqrt -1` and `0 * inf` are NaN.

use crate::attrs::Sysval;
use crate::f16;
use crate::generic::GenericOp;
use crate::opcode::Op;
use crate::printer::{Names, write_inst};
use crate::scalar_ops;
use crate::shader::{Block, Inst, Shader, Value};
use crate::types::{Scalar, Type};
use std::collections::{BTreeMap, HashMap};

/// An RGBA f32 texture, sampled with nearest filtering and clamp-to-edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    pub width: u32,
    pub height: u32,
    /// Row-major, `width * height` texels.
    pub texels: Vec<[f32; 4]>,
}

/// Everything one invocation reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Invocation {
    /// `load_input` values by `(slot, component)`, as raw bits of the
    /// loaded type (16-bit types in the low bits).
    pub inputs: HashMap<(u16, u8), u32>,
    /// Meta `input index=N` values.
    pub meta_inputs: Vec<u32>,
    /// Uniform words.
    pub uniforms: Vec<u32>,
    /// UBO contents by binding, in 32-bit words.
    pub ubos: Vec<Vec<u32>>,
    pub textures: Vec<Texture>,
    /// What `load_sysval` reads.
    pub sysvals: SysVals,
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
}

/// Why an invocation could not produce an outcome.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("undefined behaviour at `{context}`: {reason}")]
    Undefined {
        inst: Inst,
        context: String,
        reason: String,
    },
    #[error("missing input: {0}")]
    MissingInput(String),
    #[error("step limit of {0} instructions reached (the shader may not terminate)")]
    StepLimit(u64),
    #[error("malformed shader (run the validator): {0}")]
    Malformed(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 1_000_000,
        }
    }
}

/// Run one invocation.
pub fn run(
    shader: &Shader<'_, GenericOp>,
    inv: &Invocation,
    limits: Limits,
) -> Result<Outcome, InterpError> {
    Machine::new(shader, inv).run(limits)
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
    let mut m = Machine::new(shader, inv);
    let slots = places
        .iter()
        .flatten()
        .map(|p| (p.slot + p.width) as usize)
        .max()
        .unwrap_or(0);
    m.values = vec![None; slots];
    m.widths = vec![0; slots];
    m.places = Some(places);
    m.run(limits)
}

/// Run a small group of invocations (in order, independently).
pub fn run_group(
    shader: &Shader<'_, GenericOp>,
    group: &[Invocation],
    limits: Limits,
) -> Vec<Result<Outcome, InterpError>> {
    group.iter().map(|inv| run(shader, inv, limits)).collect()
}

#[derive(Clone, Debug)]
enum Val {
    S(u32),
    V(Vec<u32>),
}

struct Machine<'m, 'a> {
    shader: &'m Shader<'a, GenericOp>,
    inv: &'m Invocation,
    /// By value, or by slot when `places` is set.
    values: Vec<Option<Val>>,
    /// Register mode ([`run_placed`]): each value's slots, and the width
    /// of the value last written at each slot.
    places: Option<&'m [Option<Placement>]>,
    widths: Vec<u32>,
    arrays: Vec<Vec<Option<u32>>>,
    out: Outcome,
}

fn mask(ty: Scalar, bits: u32) -> u32 {
    match ty.bits() {
        1 => bits & 1,
        16 => bits & 0xffff,
        _ => bits,
    }
}

/// Integer value of `bits` read as `ty` (sign-extended for signed types).
fn int_value(ty: Scalar, bits: u32) -> i64 {
    match ty {
        Scalar::I16 => bits as u16 as i16 as i64,
        Scalar::I32 => bits as i32 as i64,
        _ => mask(ty, bits) as i64,
    }
}

/// Exact value of float bits as f64.
fn float_value(ty: Scalar, bits: u32) -> f64 {
    match ty {
        Scalar::F16 => f16::to_f64(bits as u16),
        _ => f32::from_bits(bits) as f64,
    }
}

/// Round an f64 to the float type (single rounding from the f64 value).
fn round_to(ty: Scalar, x: f64) -> u32 {
    match ty {
        Scalar::F16 => f16::from_f64(x) as u32,
        _ => (x as f32).to_bits(),
    }
}

fn sign_bit(ty: Scalar) -> u32 {
    if ty == Scalar::F16 {
        0x8000
    } else {
        0x8000_0000
    }
}

/// `ceil`, `trunc`, `round_even`, `fract` and `fsign` on float bits.
/// Integral results are exact in the type; `fract` (`x - floor(x)`) is one
/// IEEE subtraction, rounded once (so `fract(-tiny)` is `1.0`, and
/// `fract(±inf)` is NaN); `fsign(NaN)` is `+0.0`, as Mesa's NIR defines it.
fn rounding(op: GenericOp, ty: Scalar, a: u32) -> u32 {
    if ty == Scalar::F32 {
        let x = f32::from_bits(a);
        let r = match op {
            GenericOp::Ceil => x.ceil(),
            GenericOp::Trunc => x.trunc(),
            GenericOp::RoundEven => x.round_ties_even(),
            GenericOp::Fract => x - x.floor(),
            _ if x.is_nan() => 0.0,
            _ if x == 0.0 => x,
            _ => 1.0f32.copysign(x),
        };
        return r.to_bits();
    }
    // binary16: every operation below is exact in f64 before the one rounding.
    let x = float_value(ty, a);
    let r = match op {
        GenericOp::Ceil => x.ceil(),
        GenericOp::Trunc => x.trunc(),
        GenericOp::RoundEven => x.round_ties_even(),
        GenericOp::Fract => x - x.floor(),
        _ if x.is_nan() => 0.0,
        _ if x == 0.0 => x,
        _ => 1.0f64.copysign(x),
    };
    round_to(ty, r)
}

fn is_nan(ty: Scalar, bits: u32) -> bool {
    float_value(ty, bits).is_nan()
}

/// IEEE minNum/maxNum with -0 < +0; returns one operand's bits unchanged.
fn min_max(ty: Scalar, a: u32, b: u32, want_min: bool) -> u32 {
    if is_nan(ty, a) {
        return b;
    }
    if is_nan(ty, b) {
        return a;
    }
    let (x, y) = (float_value(ty, a), float_value(ty, b));
    if x == y {
        // Only ±0 compare equal with different bits.
        let a_neg = a & sign_bit(ty) != 0;
        return if a_neg == want_min { a } else { b };
    }
    if (x < y) == want_min { a } else { b }
}

impl<'m, 'a> Machine<'m, 'a> {
    fn new(shader: &'m Shader<'a, GenericOp>, inv: &'m Invocation) -> Self {
        Machine {
            shader,
            inv,
            values: vec![None; shader.value_capacity()],
            places: None,
            widths: Vec::new(),
            arrays: shader
                .arrays()
                .iter()
                .map(|a| vec![None; a.len as usize])
                .collect(),
            out: Outcome::default(),
        }
    }

    fn ub(&self, i: Inst, reason: impl Into<String>) -> InterpError {
        let names = Names::compute(self.shader);
        let mut context = String::new();
        let _ = write_inst(self.shader, &names, i, &mut context);
        InterpError::Undefined {
            inst: i,
            context,
            reason: reason.into(),
        }
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

    /// Write `v`, clobbering whatever overlaps its slots in register mode.
    fn store(&mut self, v: Value, val: Val) -> Result<(), InterpError> {
        let s = self.slot(v)?;
        if let Some(places) = self.places {
            let width = places[v.index()].map_or(1, |p| p.width) as usize;
            // A value covers at most 32 units (f32x16 in 16-bit units).
            for t in s.saturating_sub(32)..s {
                if self.values[t].is_some() && t + self.widths[t] as usize > s {
                    self.values[t] = None;
                }
            }
            for t in s + 1..(s + width).min(self.values.len()) {
                self.values[t] = None;
            }
            self.widths[s] = width as u32;
        }
        self.values[s] = Some(val);
        Ok(())
    }

    fn get(&self, v: Value) -> Result<&Val, InterpError> {
        self.values
            .get(self.slot(v)?)
            .and_then(|x| x.as_ref())
            .ok_or_else(|| InterpError::Malformed(format!("value {v:?} used before it is defined")))
    }

    fn scalar(&self, v: Value) -> Result<u32, InterpError> {
        match self.get(v)? {
            Val::S(b) => Ok(*b),
            Val::V(_) => Err(InterpError::Malformed(format!(
                "vector {v:?} used as a scalar"
            ))),
        }
    }

    fn run(mut self, limits: Limits) -> Result<Outcome, InterpError> {
        let s = self.shader;
        let mut block = s
            .entry()
            .ok_or_else(|| InterpError::Malformed("no entry block".into()))?;
        let mut prev: Option<Block> = None;
        let mut steps = 0u64;
        loop {
            let insts = s.block_insts(block);
            // Phis read their inputs together, then all are written.
            let phi_count = insts.iter().take_while(|&&i| s.inst(i).op.is_phi()).count();
            let mut phi_vals = Vec::with_capacity(phi_count);
            for &i in &insts[..phi_count] {
                let d = s.inst(i);
                let k = prev
                    .and_then(|p| d.targets.iter().position(|&t| t == p))
                    .ok_or_else(|| {
                        InterpError::Malformed("phi has no value for the edge taken".into())
                    })?;
                let v = d
                    .args
                    .get(k)
                    .ok_or_else(|| InterpError::Malformed("phi arity".into()))?;
                phi_vals.push((d.result, self.get(*v)?.clone()));
            }
            for (r, v) in phi_vals {
                if let Some(r) = r {
                    self.store(r, v)?;
                }
            }
            let mut next: Option<Block> = None;
            for &i in &insts[phi_count..] {
                steps += 1;
                if steps > limits.max_steps {
                    return Err(InterpError::StepLimit(limits.max_steps));
                }
                match self.step(i)? {
                    Flow::Continue => {}
                    Flow::Goto(b) => {
                        next = Some(b);
                        break;
                    }
                    Flow::Return => return Ok(self.out),
                    Flow::Discard => {
                        self.out.outputs.clear();
                        self.out.meta_outputs.clear();
                        self.out.discarded = true;
                        return Ok(self.out);
                    }
                }
            }
            let Some(n) = next else {
                return Err(InterpError::Malformed(
                    "block ends without a terminator".into(),
                ));
            };
            prev = Some(block);
            block = n;
        }
    }

    fn step(&mut self, i: Inst) -> Result<Flow, InterpError> {
        let s = self.shader;
        let d = s.inst(i);
        let result_ty = d.result.map(|r| s.value_type(r));
        let val = match d.op {
            Op::Jump => {
                return d
                    .targets
                    .first()
                    .map(|&b| Flow::Goto(b))
                    .ok_or_else(|| InterpError::Malformed("jump without target".into()));
            }
            Op::Branch => {
                let c = self.scalar(
                    *d.args
                        .first()
                        .ok_or_else(|| InterpError::Malformed("branch".into()))?,
                )?;
                let k = if c & 1 == 1 { 0 } else { 1 };
                return d
                    .targets
                    .get(k)
                    .map(|&b| Flow::Goto(b))
                    .ok_or_else(|| InterpError::Malformed("branch needs two targets".into()));
            }
            Op::Return => return Ok(Flow::Return),
            Op::Phi => return Err(InterpError::Malformed("phi after a non-phi".into())),
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
                    Val::V(l) => {
                        Val::S(*l.get(lane as usize).ok_or_else(|| {
                            InterpError::Malformed("split lane out of range".into())
                        })?)
                    }
                    Val::S(_) => return Err(InterpError::Malformed("split of a scalar".into())),
                }
            }
            Op::Input { index } => Val::S(
                *self
                    .inv
                    .meta_inputs
                    .get(index as usize)
                    .ok_or_else(|| InterpError::MissingInput(format!("meta input {index}")))?,
            ),
            Op::Output { index } => {
                let a = *d
                    .args
                    .first()
                    .ok_or_else(|| InterpError::Malformed("output".into()))?;
                let ty = s.value_type(a);
                let bits = self.scalar(a)?;
                self.out.meta_outputs.insert(index, (ty, bits));
                return Ok(Flow::Continue);
            }
            Op::Opcode(op) => match self.generic(i, op, result_ty)? {
                Some(Generic::Value(v)) => v,
                Some(Generic::Flow(f)) => return Ok(f),
                None => return Ok(Flow::Continue),
            },
        };
        match d.result {
            Some(r) => self.store(r, val)?,
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

    fn arg_type(&self, i: Inst, n: usize) -> Result<Scalar, InterpError> {
        self.shader
            .inst(i)
            .args
            .get(n)
            .map(|&v| self.shader.value_type(v).scalar)
            .ok_or_else(|| InterpError::Malformed("missing operand".into()))
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
    ) -> Result<Option<Generic>, InterpError> {
        use GenericOp::*;
        let rs = || {
            result
                .map(|t| t.scalar)
                .ok_or_else(|| InterpError::Malformed(format!("{op:?} needs a result")))
        };
        let s = |v: u32| Ok(Some(Generic::Value(Val::S(v))));
        match op {
            Const { bits } => s(mask(rs()?, bits)),
            Mov { abs, neg } => {
                let ty = rs()?;
                let mut b = mask(ty, self.arg(i, 0)?);
                if abs {
                    b &= !sign_bit(ty);
                }
                if neg {
                    b ^= sign_bit(ty);
                }
                s(b)
            }
            Cvt => {
                let from = self.arg_type(i, 0)?;
                let to = rs()?;
                let a = self.arg(i, 0)?;
                s(self.convert(i, from, to, a)?)
            }
            FAdd | FSub | FMul => {
                let ty = rs()?;
                let (a, b) = (self.arg(i, 0)?, self.arg(i, 1)?);
                let r = if ty == Scalar::F32 {
                    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                    match op {
                        FAdd => x + y,
                        FSub => x - y,
                        _ => x * y,
                    }
                    .to_bits()
                } else {
                    // Exact in f64 for binary16 operands: one rounding.
                    let (x, y) = (float_value(ty, a), float_value(ty, b));
                    round_to(
                        ty,
                        match op {
                            FAdd => x + y,
                            FSub => x - y,
                            _ => x * y,
                        },
                    )
                };
                s(r)
            }
            FMin | FMax => {
                let ty = rs()?;
                s(min_max(ty, self.arg(i, 0)?, self.arg(i, 1)?, op == FMin))
            }
            Ffma => {
                let ty = rs()?;
                let (a, b, c) = (self.arg(i, 0)?, self.arg(i, 1)?, self.arg(i, 2)?);
                if ty == Scalar::F32 {
                    s(f32::from_bits(a)
                        .mul_add(f32::from_bits(b), f32::from_bits(c))
                        .to_bits())
                } else {
                    s(f16::fma(a as u16, b as u16, c as u16) as u32)
                }
            }
            Rcp | Rsqrt | Sqrt | Exp2 | Log2 | Sin | Cos | Floor => {
                let ty = rs()?;
                let a = self.arg(i, 0)?;
                if ty == Scalar::F32 {
                    let x = f32::from_bits(a);
                    let r = match op {
                        Rcp => 1.0 / x,
                        Sqrt => x.sqrt(),
                        Floor => x.floor(),
                        Rsqrt => (1.0 / (x as f64).sqrt()) as f32,
                        Exp2 => (x as f64).exp2() as f32,
                        Log2 => (x as f64).log2() as f32,
                        Sin => (x as f64).sin() as f32,
                        _ => (x as f64).cos() as f32,
                    };
                    s(r.to_bits())
                } else {
                    let x = float_value(ty, a);
                    let r = match op {
                        Rcp => 1.0 / x,
                        Sqrt => x.sqrt(),
                        Floor => x.floor(),
                        Rsqrt => 1.0 / x.sqrt(),
                        Exp2 => x.exp2(),
                        Log2 => x.log2(),
                        Sin => x.sin(),
                        _ => x.cos(),
                    };
                    s(round_to(ty, r))
                }
            }
            FDiv => {
                let ty = rs()?;
                let (a, b) = (self.arg(i, 0)?, self.arg(i, 1)?);
                if ty == Scalar::F32 {
                    s((f32::from_bits(a) / f32::from_bits(b)).to_bits())
                } else {
                    // binary16 quotients round once from f64 (53 >= 2 * 11 + 2 bits).
                    s(round_to(ty, float_value(ty, a) / float_value(ty, b)))
                }
            }
            Ceil | Trunc | RoundEven | Fract | FSign => {
                let ty = rs()?;
                let a = self.arg(i, 0)?;
                s(rounding(op, ty, a))
            }
            IAbs | ISign => {
                let ty = rs()?;
                let x = int_value(ty, self.arg(i, 0)?);
                let r = if op == IAbs { x.abs() } else { x.signum() };
                s(mask(ty, r as u32))
            }
            IMulHigh => {
                let (x, y) = (self.arg(i, 0)? as i32 as i64, self.arg(i, 1)? as i32 as i64);
                s(((x * y) >> 32) as u32)
            }
            UMulHigh => {
                let (x, y) = (self.arg(i, 0)? as u64, self.arg(i, 1)? as u64);
                s(((x * y) >> 32) as u32)
            }
            UBitfieldExtract | IBitfieldExtract => {
                let (base, offset, count) = (self.arg(i, 0)?, self.arg(i, 1)?, self.arg(i, 2)?);
                match scalar_ops::bitfield_extract(base, offset, count, op == IBitfieldExtract) {
                    Some(r) => s(r),
                    None => Err(self.ub(i, format!("bit field {offset}+{count} exceeds 32 bits"))),
                }
            }
            BitfieldInsert => {
                let (base, insert) = (self.arg(i, 0)?, self.arg(i, 1)?);
                let (offset, count) = (self.arg(i, 2)?, self.arg(i, 3)?);
                match scalar_ops::bitfield_insert(base, insert, offset, count) {
                    Some(r) => s(r),
                    None => Err(self.ub(i, format!("bit field {offset}+{count} exceeds 32 bits"))),
                }
            }
            BitReverse => s(self.arg(i, 0)?.reverse_bits()),
            BitCount => s(self.arg(i, 0)?.count_ones()),
            FindLsb => s(scalar_ops::find_lsb(self.arg(i, 0)?)),
            UFindMsb => s(scalar_ops::ufind_msb(self.arg(i, 0)?)),
            IFindMsb => s(scalar_ops::ifind_msb(self.arg(i, 0)?)),
            Pack { format } => {
                let mut lanes = [0.0f32; 4];
                let n = format.lanes() as usize;
                for (k, lane) in lanes.iter_mut().enumerate().take(n) {
                    *lane = f32::from_bits(self.arg(i, k)?);
                }
                s(scalar_ops::pack(format, &lanes[..n]))
            }
            Unpack { format, lane } => {
                s(scalar_ops::unpack(format, self.arg(i, 0)?, lane).to_bits())
            }
            LoadSysval { sysval, comp } => s(self.inv.sysvals.get(sysval, comp)),
            Ddx { .. } | Ddy { .. } => Err(InterpError::Unsupported(
                "derivatives in the interpreter (quad execution comes next)".into(),
            )),
            Gather { .. }
            | TexelFetch { .. }
            | TextureSize { .. }
            | TextureLevels { .. }
            | ImageLoad { .. }
            | ImageStore { .. }
            | ImageAtomic { .. }
            | ImageSize { .. }
            | LoadSsbo { .. }
            | StoreSsbo { .. }
            | SsboAtomic { .. }
            | SsboSize { .. }
            | LoadShared
            | StoreShared
            | SharedAtomic { .. }
            | ControlBarrier
            | Demote => Err(InterpError::Unsupported(format!(
                "`{}` in the interpreter (not implemented yet)",
                crate::Opcode::name(&op)
            ))),
            IDiv | IRem => {
                let ty = rs()?;
                let (x, y) = (
                    int_value(ty, self.arg(i, 0)?),
                    int_value(ty, self.arg(i, 1)?),
                );
                if y == 0 {
                    return Err(self.ub(i, "division by zero"));
                }
                let min = -(1i64 << (ty.bits() - 1));
                if x == min && y == -1 {
                    return Err(self.ub(
                        i,
                        format!("signed overflow: {x} / -1 does not fit {}", ty.name()),
                    ));
                }
                // i64 division truncates toward zero, as the opcodes do.
                let r = if op == IDiv { x / y } else { x % y };
                s(mask(ty, r as u32))
            }
            IAdd | ISub | IMul | IMin | IMax | UMin | UMax | UDiv | UMod | And | Or | Xor => {
                let ty = rs()?;
                let (a, b) = (mask(ty, self.arg(i, 0)?), mask(ty, self.arg(i, 1)?));
                let (x, y) = (int_value(ty, a), int_value(ty, b));
                let r = match op {
                    IAdd => a.wrapping_add(b),
                    ISub => a.wrapping_sub(b),
                    IMul => a.wrapping_mul(b),
                    IMin => x.min(y) as u32,
                    IMax => x.max(y) as u32,
                    UMin => a.min(b),
                    UMax => a.max(b),
                    UDiv | UMod => {
                        if b == 0 {
                            return Err(self.ub(i, "division by zero"));
                        }
                        if op == UDiv { a / b } else { a % b }
                    }
                    And => a & b,
                    Or => a | b,
                    _ => a ^ b,
                };
                s(mask(ty, r))
            }
            Not => {
                let ty = rs()?;
                s(mask(ty, !self.arg(i, 0)?))
            }
            Shl | Shr | AShr => {
                let ty = rs()?;
                let a = mask(ty, self.arg(i, 0)?);
                let amount = mask(ty, self.arg(i, 1)?);
                let width = ty.bits();
                if amount >= width {
                    return Err(self.ub(i, format!("shift by {amount} on a {width}-bit value")));
                }
                let r = match op {
                    Shl => a << amount,
                    Shr => a >> amount,
                    _ => {
                        (int_value(
                            if width == 16 {
                                Scalar::I16
                            } else {
                                Scalar::I32
                            },
                            a,
                        ) >> amount) as u32
                    }
                };
                s(mask(ty, r))
            }
            FEq | FNe | FLt | FGe => {
                let ty = self.arg_type(i, 0)?;
                let (x, y) = (
                    float_value(ty, self.arg(i, 0)?),
                    float_value(ty, self.arg(i, 1)?),
                );
                let r = match op {
                    FEq => x == y,
                    FNe => x != y,
                    FLt => x < y,
                    _ => x >= y,
                };
                s(r as u32)
            }
            IEq | INe | ILt | IGe | ULt | UGe => {
                let ty = self.arg_type(i, 0)?;
                let (a, b) = (mask(ty, self.arg(i, 0)?), mask(ty, self.arg(i, 1)?));
                let (x, y) = (int_value(ty, a), int_value(ty, b));
                let r = match op {
                    IEq => a == b,
                    INe => a != b,
                    ILt => x < y,
                    IGe => x >= y,
                    ULt => a < b,
                    _ => a >= b,
                };
                s(r as u32)
            }
            Sel => {
                let c = self.arg(i, 0)?;
                s(if c & 1 == 1 {
                    self.arg(i, 1)?
                } else {
                    self.arg(i, 2)?
                })
            }
            LoadInput { slot, comp, .. } => {
                let ty = rs()?;
                let bits = self.inv.inputs.get(&(slot, comp)).ok_or_else(|| {
                    InterpError::MissingInput(format!("slot {slot} component {comp}"))
                })?;
                s(mask(ty, *bits))
            }
            StoreOutput { slot, comp } => {
                let ty = self.arg_type_full(i, 0)?;
                let bits = self.arg(i, 0)?;
                self.out.outputs.insert((slot, comp), (ty, bits));
                Ok(None)
            }
            LoadUniform { index } => {
                let ty = rs()?;
                let at = index as i64 + self.address(i)?;
                match usize::try_from(at)
                    .ok()
                    .and_then(|k| self.inv.uniforms.get(k))
                {
                    Some(&w) => s(mask(ty, w)),
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
                    Some(&w) => s(w),
                    None => Err(self.ub(i, format!("UBO offset {offset} is out of bounds"))),
                }
            }
            Sample {
                shape,
                lod,
                offset,
                compare,
                ..
            } if shape != crate::attrs::TexShape::D2
                || lod != crate::attrs::LodMode::Implicit
                || offset
                || compare =>
            {
                Err(InterpError::Unsupported(
                    "sampling other than implicit-LOD 2D in the interpreter".into(),
                ))
            }
            Sample { texture, .. } => {
                let coord_value =
                    *self.shader.inst(i).args.first().ok_or_else(|| {
                        InterpError::Malformed("sample needs a coordinate".into())
                    })?;
                let coord = match self.get(coord_value)? {
                    Val::V(l) if l.len() == 2 => [f32::from_bits(l[0]), f32::from_bits(l[1])],
                    _ => return Err(InterpError::Malformed("sample coordinate".into())),
                };
                let Some(tex) = self.inv.textures.get(texture as usize) else {
                    return Err(InterpError::MissingInput(format!("texture {texture}")));
                };
                if coord.iter().any(|c| c.is_nan()) {
                    return Err(self.ub(i, "NaN texture coordinate"));
                }
                let texel = |c: f32, size: u32| -> usize {
                    let t = (c as f64 * size as f64).floor();
                    t.clamp(0.0, size.saturating_sub(1) as f64) as usize
                };
                let (x, y) = (texel(coord[0], tex.width), texel(coord[1], tex.height));
                let Some(t) = tex.texels.get(y * tex.width as usize + x) else {
                    return Err(InterpError::MissingInput(format!(
                        "texture {texture} has too few texels"
                    )));
                };
                Ok(Some(Generic::Value(Val::V(
                    t.iter().map(|c| c.to_bits()).collect(),
                ))))
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
                    Some(Some(v)) => s(*v),
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
                        self.arrays[array.index()][k] = Some(v);
                        Ok(None)
                    }
                    None => Err(self.ub(i, format!("element {at} is out of bounds"))),
                }
            }
        }
    }

    fn convert(&self, i: Inst, from: Scalar, to: Scalar, a: u32) -> Result<u32, InterpError> {
        if from == Scalar::Bool {
            // true is 1 (or 1.0), false 0.
            let one = a & 1;
            return Ok(match to {
                Scalar::F32 => (one as f32).to_bits(),
                Scalar::F16 => f16::from_f32(one as f32) as u32,
                _ => one,
            });
        }
        if from.is_float() {
            let x = float_value(from, a);
            if to.is_float() {
                if from == to {
                    return Ok(a);
                }
                return Ok(round_to(to, x));
            }
            if x.is_nan() {
                return Err(self.ub(i, "NaN converted to an integer"));
            }
            let t = x.trunc();
            let (lo, hi) = match to {
                Scalar::I16 => (i16::MIN as f64, i16::MAX as f64),
                Scalar::I32 => (i32::MIN as f64, i32::MAX as f64),
                Scalar::U16 => (0.0, u16::MAX as f64),
                _ => (0.0, u32::MAX as f64),
            };
            if t < lo || t > hi {
                return Err(self.ub(i, format!("{x} is out of range for {}", to.name())));
            }
            return Ok(mask(to, t as i64 as u32));
        }
        let v = int_value(from, a);
        if to.is_float() {
            // i64 -> f32 rounds once to nearest even; v is exact in f64.
            return Ok(match to {
                Scalar::F32 => (v as f32).to_bits(),
                _ => f16::from_f64(v as f64) as u32,
            });
        }
        Ok(mask(to, v as u32))
    }
}

enum Flow {
    Continue,
    Goto(Block),
    Return,
    Discard,
}

enum Generic {
    Value(Val),
    Flow(Flow),
}
