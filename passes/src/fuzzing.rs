//! Random valid programs and the differential check behind the
//! `ir_passes` fuzz target.
//!
//! [`generate`] turns arbitrary bytes into a valid generic-level shader (and
//! inputs to run it on): straight-line arithmetic over every scalar type
//! (signed division included), copies, conversions, if/else diamonds and
//! triangles with phis, bounded loops, array and uniform accesses with
//! address operands, UBO loads, texture samples through collect/split,
//! barriers, meta inputs and outputs, output stores, discards and demotes,
//! and the newer pure vocabulary: fdiv and float rounding, integer sign
//! and high multiplies, bit counts/reversal/search and bit fields, pack and
//! unpack, derivatives and system values. Some programs hit undefined behaviour on their inputs;
//! that is deliberate, so passes are also tested on code they must not
//! speculate.
//!
//! [`differential`] runs the interpreter before and after each pass and
//! after the whole pipeline, and requires identical outcomes whenever the
//! original run was defined.

pub mod arrays;
pub mod divide;
pub mod regalloc;
pub mod select;

use crate::manager::Registry;
use arbitrary::{Result as ArbResult, Unstructured};
use bumpalo::Bump;
use lathe_ir::attrs::SysvalKind;
use lathe_ir::interp::{self, InterpError, Invocation, Limits, Texture};
use lathe_ir::{
    ArrayDecl, ArrayId, Builder, DerivMode, GenericOp, Interp, PackFormat, Scalar, Shader, Stage,
    Sysval, Type, Value,
};

/// Size limits for generated programs.
#[derive(Clone, Copy, Debug)]
pub struct GenLimits {
    pub max_insts: usize,
    pub max_depth: u32,
    /// Arrays, UBO loads, texture samples, barriers, discards and
    /// demotes, derivatives and system values; without them, programs
    /// keep to arithmetic, control flow, uniforms, inputs and outputs
    /// (what a backend covers first).
    pub resources: bool,
}

impl Default for GenLimits {
    fn default() -> Self {
        GenLimits {
            max_insts: 400,
            max_depth: 3,
            resources: true,
        }
    }
}

/// A generated program and the inputs to run it on.
pub struct Generated<'a> {
    pub shader: Shader<'a, GenericOp>,
    pub invocation: Invocation,
}

const TYPES: [Scalar; 7] = Scalar::ALL;
const UNIFORMS: usize = 8;
const UBO_WORDS: usize = 4;
const ARRAY_LEN: u32 = 4;

struct Gen<'u, 'd, 's, 'a> {
    u: &'u mut Unstructured<'d>,
    b: Builder<'s, 'a, GenericOp>,
    /// Values usable at the cursor (they dominate it).
    avail: Vec<Value>,
    inputs: Vec<(u16, u8, Scalar)>,
    array: ArrayId,
    budget: usize,
    limits: GenLimits,
}

/// Build a random valid program from `u`.
pub fn generate<'a>(
    arena: &'a Bump,
    u: &mut Unstructured<'_>,
    limits: GenLimits,
) -> ArbResult<Generated<'a>> {
    let mut shader = Shader::new(arena, Stage::Fragment);
    let array = shader.add_array(ArrayDecl {
        elem: Type::F32,
        len: ARRAY_LEN,
    });
    let inputs = {
        let mut g = Gen {
            u,
            b: Builder::new(&mut shader),
            avail: Vec::new(),
            inputs: Vec::new(),
            array,
            budget: limits.max_insts,
            limits,
        };
        g.prologue()?;
        g.region(0)?;
        g.epilogue()?;
        std::mem::take(&mut g.inputs)
    };
    let mut inv = Invocation::default();
    for (slot, comp, ty) in inputs {
        let bits = u.arbitrary::<u32>()?;
        let bits = match ty {
            // Favour ordinary values so more runs are defined.
            Scalar::F32 if bits & 3 != 0 => (((bits >> 8) % 2001) as f32 / 100.0 - 10.0).to_bits(),
            Scalar::F16 if bits & 3 != 0 => {
                lathe_ir::f16::from_f32(((bits >> 8) % 201) as f32 / 10.0 - 10.0) as u32
            }
            _ => bits,
        };
        inv.inputs.insert((slot, comp), bits);
    }
    for _ in 0..UNIFORMS {
        inv.uniforms.push(u.arbitrary::<u32>()? % 64);
    }
    inv.meta_inputs.push(u.arbitrary::<u32>()?);
    let mut ubo = Vec::with_capacity(UBO_WORDS);
    for _ in 0..UBO_WORDS {
        ubo.push(u.arbitrary::<u32>()?);
    }
    inv.ubos.push(ubo);
    let mut texels = Vec::with_capacity(4);
    for k in 0..4u8 {
        let c = k as f32 / 4.0;
        texels.push([c, 1.0 - c, 0.5, -c]);
    }
    inv.textures.push(Texture::rgba_2d(2, 2, texels));
    Ok(Generated {
        shader,
        invocation: inv,
    })
}

impl Gen<'_, '_, '_, '_> {
    fn ty(&self, v: Value) -> Scalar {
        self.b.type_of(v).scalar
    }

    fn pick_type(&mut self) -> ArbResult<Scalar> {
        Ok(*self.u.choose(&TYPES)?)
    }

    /// A value of scalar type `s`: an available one, or a new constant.
    fn pick(&mut self, s: Scalar) -> ArbResult<Value> {
        let n = self.avail.iter().filter(|&&v| self.ty(v) == s).count();
        if n > 0 && !self.u.ratio(1u8, 8u8)? {
            let k = self.u.choose_index(n)?;
            if let Some(&v) = self.avail.iter().filter(|&&v| self.ty(v) == s).nth(k) {
                return Ok(v);
            }
        }
        self.constant(s)
    }

    fn constant(&mut self, s: Scalar) -> ArbResult<Value> {
        let raw: u32 = self.u.arbitrary()?;
        let bits = match s {
            Scalar::Bool => raw & 1,
            Scalar::F32 if raw & 1 == 0 => (((raw >> 4) % 41) as f32 / 4.0 - 5.0).to_bits(),
            Scalar::F16 if raw & 1 == 0 => {
                lathe_ir::f16::from_f32(((raw >> 4) % 41) as f32 / 4.0 - 5.0) as u32
            }
            Scalar::F16 | Scalar::I16 | Scalar::U16 => raw & 0xffff,
            _ if raw & 1 == 0 => (raw >> 4) % 8,
            _ => raw,
        };
        let v = self.b.const_bits(Type::scalar(s), bits);
        self.push(v);
        Ok(v)
    }

    fn push(&mut self, v: Value) {
        self.avail.push(v);
        self.budget = self.budget.saturating_sub(1);
    }

    fn prologue(&mut self) -> ArbResult<()> {
        for (k, s) in [
            Scalar::F32,
            Scalar::F16,
            Scalar::I32,
            Scalar::U32,
            Scalar::I16,
        ]
        .into_iter()
        .enumerate()
        {
            let interp = if s.is_float() {
                Interp::SMOOTH
            } else {
                Interp::FLAT
            };
            let v = self.b.load_input(k as u16, 0, interp, Type::scalar(s));
            self.inputs.push((k as u16, 0, s));
            self.push(v);
        }
        let x = self.avail[0];
        let meta = self.b.input(0, Type::U32);
        self.push(meta);
        // Initialise the array so most later reads are defined.
        for k in 0..if self.limits.resources { ARRAY_LEN } else { 0 } {
            let v = self.pick(Scalar::F32)?;
            self.b.array_store(self.array, k, None, v);
        }
        let zero = self.b.const_f32(0.0);
        let c = self.b.flt(x, zero);
        self.push(zero);
        self.push(c);
        Ok(())
    }

    fn epilogue(&mut self) -> ArbResult<()> {
        for slot in 0..3u16 {
            let s = *self.u.choose(&[
                Scalar::F32,
                Scalar::F16,
                Scalar::I32,
                Scalar::U32,
                Scalar::I16,
            ])?;
            let v = self.pick(s)?;
            self.b.store_output(slot, 0, v);
        }
        let s = self.pick_type()?;
        let v = self.pick(s)?;
        self.b.output(0, v);
        self.b.ret();
        Ok(())
    }

    /// A sequence of statements at nesting `depth`.
    fn region(&mut self, depth: u32) -> ArbResult<()> {
        let count = self.u.int_in_range(1..=12u8)?;
        for _ in 0..count {
            if self.budget == 0 || self.u.is_empty() {
                break;
            }
            self.statement(depth)?;
        }
        Ok(())
    }

    fn statement(&mut self, depth: u32) -> ArbResult<()> {
        use GenericOp::*;
        let nested = depth < self.limits.max_depth;
        match self.u.int_in_range(0..=29u8)? {
            0 | 1 => {
                let s = *self.u.choose(&[Scalar::F32, Scalar::F16])?;
                let op = *self.u.choose(&[FAdd, FSub, FMul, FDiv, FMin, FMax])?;
                let (a, b) = (self.pick(s)?, self.pick(s)?);
                let v = self.b.op(op, &[a, b], Type::scalar(s));
                self.push(v);
            }
            2 => {
                let s = *self.u.choose(&[Scalar::F32, Scalar::F16])?;
                let (a, b, c) = (self.pick(s)?, self.pick(s)?, self.pick(s)?);
                let v = self.b.op(Ffma, &[a, b, c], Type::scalar(s));
                self.push(v);
            }
            3 => {
                let s = *self.u.choose(&[Scalar::F32, Scalar::F16])?;
                let op = *self.u.choose(&[
                    Rcp, Rsqrt, Sqrt, Exp2, Log2, Sin, Cos, Floor, Ceil, Trunc, RoundEven, Fract,
                    FSign,
                ])?;
                let a = self.pick(s)?;
                let v = self.b.op(op, &[a], Type::scalar(s));
                self.push(v);
            }
            4 | 5 => {
                let s = *self
                    .u
                    .choose(&[Scalar::I32, Scalar::U32, Scalar::I16, Scalar::U16])?;
                let mut ops = vec![IAdd, ISub, IMul, And, Or, Xor];
                match s {
                    Scalar::U32 | Scalar::U16 => ops.extend([UMin, UMax, UDiv, UMod]),
                    _ => ops.extend([IMin, IMax, IDiv, IRem]),
                }
                match s {
                    Scalar::I32 => ops.push(IMulHigh),
                    Scalar::U32 => ops.push(UMulHigh),
                    _ => {}
                }
                let op = *self.u.choose(&ops)?;
                let (a, b) = (self.pick(s)?, self.pick(s)?);
                let v = self.b.op(op, &[a, b], Type::scalar(s));
                self.push(v);
            }
            6 => {
                let s = *self.u.choose(&[Scalar::I32, Scalar::U32, Scalar::I16])?;
                let op = *self.u.choose(&[Shl, Shr, AShr])?;
                let a = self.pick(s)?;
                let mut amount = self.pick(s)?;
                if !self.u.ratio(1u8, 4u8)? {
                    // Usually keep the amount in range, as shaders do.
                    let seven = self.b.const_bits(Type::scalar(s), 7);
                    self.push(seven);
                    amount = self.b.and(amount, seven);
                    self.push(amount);
                }
                let v = self.b.op(op, &[a, amount], Type::scalar(s));
                self.push(v);
            }
            7 => {
                let (op, s) = *self.u.choose(&[
                    (FLt, Scalar::F32),
                    (FGe, Scalar::F16),
                    (FEq, Scalar::F32),
                    (FNe, Scalar::F16),
                    (ILt, Scalar::I32),
                    (IGe, Scalar::I16),
                    (IEq, Scalar::U32),
                    (INe, Scalar::Bool),
                    (ULt, Scalar::U32),
                    (UGe, Scalar::U16),
                ])?;
                let (a, b) = (self.pick(s)?, self.pick(s)?);
                let v = self.b.op(op, &[a, b], Type::BOOL);
                self.push(v);
            }
            8 => {
                let s = self.pick_type()?;
                let c = self.pick(Scalar::Bool)?;
                let (a, b) = (self.pick(s)?, self.pick(s)?);
                let v = self.b.op(Sel, &[c, a, b], Type::scalar(s));
                self.push(v);
            }
            9 => {
                let numeric = [
                    Scalar::F32,
                    Scalar::F16,
                    Scalar::I32,
                    Scalar::U32,
                    Scalar::I16,
                    Scalar::U16,
                ];
                let from = *self.u.choose(&Scalar::ALL)?;
                let to = *self.u.choose(&numeric)?;
                let a = self.pick(from)?;
                let v = self.b.op(Cvt, &[a], Type::scalar(to));
                self.push(v);
            }
            10 | 11 => {
                // Copies: plain (copy-prop fodder), with modifiers, or bit casts.
                let s = self.pick_type()?;
                let a = self.pick(s)?;
                let kind = self.u.int_in_range(0..=3u8)?;
                let v = match (kind, s) {
                    (1, Scalar::F32 | Scalar::F16) => {
                        let (abs, neg) = (self.u.arbitrary()?, self.u.arbitrary()?);
                        self.b.op(Mov { abs, neg }, &[a], Type::scalar(s))
                    }
                    (2, Scalar::F32) => self.b.op(
                        Mov {
                            abs: false,
                            neg: false,
                        },
                        &[a],
                        Type::U32,
                    ),
                    (2, Scalar::I16) => self.b.op(
                        Mov {
                            abs: false,
                            neg: false,
                        },
                        &[a],
                        Type::F16,
                    ),
                    _ => self.b.mov(a),
                };
                self.push(v);
            }
            12 | 13 if nested => self.if_else(depth)?,
            14 if nested => self.triangle(depth)?,
            15 if nested && depth < 2 => self.loop_(depth)?,
            16 => {
                let s = *self
                    .u
                    .choose(&[Scalar::F32, Scalar::I32, Scalar::U32, Scalar::F16])?;
                let v = self.pick(s)?;
                let slot = self.u.int_in_range(0..=4u16)?;
                let comp = self.u.int_in_range(0..=3u8)?;
                self.b.store_output(slot, comp, v);
            }
            17 if self.limits.resources => {
                // Array traffic, through the address operand half the time.
                let addr = if self.u.arbitrary()? {
                    let i = self.pick(Scalar::I32)?;
                    let three = self.b.const_i32(3);
                    self.push(three);
                    let masked = self.b.and(i, three);
                    self.push(masked);
                    Some(masked)
                } else {
                    None
                };
                let offset = if addr.is_some() {
                    0
                } else {
                    self.u.int_in_range(0..=ARRAY_LEN - 1)?
                };
                if self.u.arbitrary()? {
                    let v = self.pick(Scalar::F32)?;
                    self.b.array_store(self.array, offset, addr, v);
                } else {
                    let v = self.b.array_load(self.array, offset, addr);
                    self.push(v);
                }
            }
            18 => {
                let addr = if self.u.arbitrary()? {
                    let a = self.pick(Scalar::U32)?;
                    let three = self.b.const_u32(3);
                    self.push(three);
                    // Out of range only when the raw value is used (1 in 4).
                    if self.u.ratio(1u8, 4u8)? {
                        Some(a)
                    } else {
                        let masked = self.b.and(a, three);
                        self.push(masked);
                        Some(masked)
                    }
                } else {
                    None
                };
                let index = self.u.int_in_range(0..=UNIFORMS as u32 - 4)?;
                let s = *self.u.choose(&[Scalar::F32, Scalar::I32, Scalar::U32])?;
                let v = self.b.load_uniform(index, addr, Type::scalar(s));
                self.push(v);
            }
            19 if depth > 0 && self.limits.resources => {
                if self.u.ratio(1u8, 4u8)? {
                    if self.u.arbitrary()? {
                        self.b.discard();
                    } else {
                        self.b.demote();
                    }
                }
            }
            20 if self.limits.resources => {
                self.b.barrier();
            }
            21 if self.limits.resources => {
                // A UBO word: usually an aligned in-bounds offset.
                let raw = self.pick(Scalar::U32)?;
                let offset = if self.u.ratio(1u8, 4u8)? {
                    raw
                } else {
                    let mask = self.b.const_u32(4 * (UBO_WORDS as u32 - 1));
                    self.push(mask);
                    let aligned = self.b.and(raw, mask);
                    self.push(aligned);
                    aligned
                };
                let s = *self.u.choose(&[Scalar::F32, Scalar::I32, Scalar::U32])?;
                let v = self.b.load_ubo(0, offset, Type::scalar(s));
                self.push(v);
            }
            22 if self.limits.resources => {
                // A texture sample at a collected coordinate, split apart.
                let (x, y) = (self.pick(Scalar::F32)?, self.pick(Scalar::F32)?);
                let coord = self.b.collect(&[x, y]);
                let texel = self.b.sample(0, 0, coord);
                for v in texel {
                    self.push(v);
                }
            }
            23 => {
                let s = *self.u.choose(&[Scalar::I32, Scalar::U32])?;
                let op = *self.u.choose(&[
                    IAbs, ISign, BitReverse, BitCount, FindLsb, UFindMsb, IFindMsb,
                ])?;
                let op = match (op, s) {
                    // iabs/isign are signed only.
                    (IAbs | ISign, Scalar::U32) => BitCount,
                    _ => op,
                };
                let a = self.pick(s)?;
                let v = self.b.op(op, &[a], Type::scalar(s));
                self.push(v);
            }
            24 => {
                // Bit fields: offset and count usually masked to 0..=15.
                let s = *self.u.choose(&[Scalar::I32, Scalar::U32])?;
                let base = self.pick(s)?;
                let mut field = [self.pick(s)?, self.pick(s)?];
                if !self.u.ratio(1u8, 4u8)? {
                    let fifteen = self.b.const_bits(Type::scalar(s), 15);
                    self.push(fifteen);
                    for f in &mut field {
                        *f = self.b.and(*f, fifteen);
                        self.push(*f);
                    }
                }
                let v = match self.u.int_in_range(0..=2u8)? {
                    0 => self.b.ubitfield_extract(base, field[0], field[1]),
                    1 => self.b.ibitfield_extract(base, field[0], field[1]),
                    _ => {
                        let insert = self.pick(s)?;
                        self.b.bitfield_insert(base, insert, field[0], field[1])
                    }
                };
                self.push(v);
            }
            25 => {
                let format = *self.u.choose(PackFormat::ALL)?;
                if self.u.arbitrary()? {
                    let mut lanes = Vec::with_capacity(4);
                    for _ in 0..format.lanes() {
                        lanes.push(self.pick(Scalar::F32)?);
                    }
                    let v = self.b.pack(format, &lanes);
                    self.push(v);
                } else {
                    let w = self.pick(Scalar::U32)?;
                    let lane = self.u.int_in_range(0..=format.lanes() - 1)?;
                    let v = self.b.unpack(format, lane, w);
                    self.push(v);
                }
            }
            26 if self.limits.resources => {
                // Derivatives (a lone invocation's quad is four copies of it).
                let s = *self.u.choose(&[Scalar::F32, Scalar::F16])?;
                let a = self.pick(s)?;
                let mode = *self.u.choose(DerivMode::ALL)?;
                let v = if self.u.arbitrary()? {
                    self.b.ddx(a, mode)
                } else {
                    self.b.ddy(a, mode)
                };
                self.push(v);
            }
            27 if self.limits.resources => {
                let sysval = *self.u.choose(Sysval::ALL)?;
                let comp = self.u.int_in_range(0..=sysval.comps() - 1)?;
                let ty = match sysval.kind() {
                    SysvalKind::Float => Type::F32,
                    SysvalKind::Bool => Type::BOOL,
                    SysvalKind::Int => Type::U32,
                };
                let v = self.b.load_sysval(sysval, comp, ty);
                self.push(v);
            }
            29 => self.fall_through()?,
            _ => {
                // Register groups: collect two f32s and split them again.
                let (x, y) = (self.pick(Scalar::F32)?, self.pick(Scalar::F32)?);
                let pair = self.b.collect(&[x, y]);
                let lane = self.u.int_in_range(0..=1u8)?;
                let v = self.b.split(pair, lane);
                self.push(v);
            }
        }
        Ok(())
    }

    /// Values to merge at a join: `k` random available values.
    fn phi_sources(&mut self) -> ArbResult<Vec<Value>> {
        let k = self.u.int_in_range(0..=3usize)?;
        let mut out = Vec::with_capacity(k);
        for _ in 0..k {
            if self.avail.is_empty() {
                break;
            }
            let idx = self.u.choose_index(self.avail.len())?;
            out.push(self.avail[idx]);
        }
        Ok(out)
    }

    fn if_else(&mut self, depth: u32) -> ArbResult<()> {
        let c = self.pick(Scalar::Bool)?;
        let then_b = self.b.new_block();
        let else_b = self.b.new_block();
        let join = self.b.new_block();
        self.b.branch(c, then_b, else_b);
        let mark = self.avail.len();

        self.b.switch_to(then_b);
        self.region(depth + 1)?;
        let then_vals = self.phi_sources()?;
        let then_end = self.b.current_block();
        self.b.jump(join);
        self.avail.truncate(mark);

        self.b.switch_to(else_b);
        self.region(depth + 1)?;
        let mut else_vals = Vec::with_capacity(then_vals.len());
        for &t in &then_vals {
            let s = self.ty(t);
            else_vals.push(self.pick(s)?);
        }
        let else_end = self.b.current_block();
        self.b.jump(join);
        self.avail.truncate(mark);

        self.b.switch_to(join);
        for (t, e) in then_vals.into_iter().zip(else_vals) {
            let ty = self.b.type_of(t);
            let v = self.b.phi(ty, &[(t, then_end), (e, else_end)]);
            self.push(v);
        }
        Ok(())
    }

    /// The block ends in a jump to a new block that only it reaches (what
    /// frontends leave after inlining), passing up to two values through
    /// one-operand phis.
    fn fall_through(&mut self) -> ArbResult<()> {
        let mut through = Vec::new();
        for _ in 0..self.u.int_in_range(0..=2u8)? {
            let s = self.pick_type()?;
            through.push(self.pick(s)?);
        }
        let from = self.b.current_block();
        let next = self.b.new_block();
        self.b.jump(next);
        self.b.switch_to(next);
        for v in through {
            let ty = self.b.type_of(v);
            let p = self.b.phi(ty, &[(v, from)]);
            self.push(p);
        }
        Ok(())
    }

    /// `if c { body }` with the join reached directly from the branch.
    fn triangle(&mut self, depth: u32) -> ArbResult<()> {
        let c = self.pick(Scalar::Bool)?;
        // Values merged at the join from the branch side; picked (and any
        // constants made) before the branch ends the block.
        let mut outside = Vec::new();
        for _ in 0..self.u.int_in_range(0..=2u8)? {
            let s = self.pick_type()?;
            outside.push(self.pick(s)?);
        }
        let head = self.b.current_block();
        let body = self.b.new_block();
        let join = self.b.new_block();
        let body_first: bool = self.u.arbitrary()?;
        if body_first {
            self.b.branch(c, body, join);
        } else {
            self.b.branch(c, join, body);
        }
        let mark = self.avail.len();
        self.b.switch_to(body);
        self.region(depth + 1)?;
        let mut inside = Vec::with_capacity(outside.len());
        for &o in &outside {
            let s = self.ty(o);
            inside.push(self.pick(s)?);
        }
        let body_end = self.b.current_block();
        self.b.jump(join);
        self.avail.truncate(mark);
        self.b.switch_to(join);
        for (o, i) in outside.into_iter().zip(inside) {
            let ty = self.b.type_of(o);
            let v = self.b.phi(ty, &[(i, body_end), (o, head)]);
            self.push(v);
        }
        Ok(())
    }

    /// A counted loop of 0..=3 iterations carrying one value.
    fn loop_(&mut self, depth: u32) -> ArbResult<()> {
        let carried_ty = *self.u.choose(&[Scalar::F32, Scalar::I32, Scalar::U32])?;
        let init = self.pick(carried_ty)?;
        let trips = self.u.int_in_range(0..=3i32)?;
        let zero = self.b.const_i32(0);
        let one = self.b.const_i32(1);
        let limit = self.b.const_i32(trips);
        for v in [zero, one, limit] {
            self.push(v);
        }
        let pre = self.b.current_block();
        let header = self.b.new_block();
        let body = self.b.new_block();
        let exit = self.b.new_block();
        self.b.jump(header);

        self.b.switch_to(header);
        let i = self.b.phi(Type::I32, &[(zero, pre)]);
        let acc = self.b.phi(Type::scalar(carried_ty), &[(init, pre)]);
        let c = self.b.ilt(i, limit);
        self.b.branch(c, body, exit);
        let mark = self.avail.len();
        self.avail.extend([i, acc]);

        self.b.switch_to(body);
        self.region(depth + 1)?;
        let next_acc = self.pick(carried_ty)?;
        let next_i = self.b.iadd(i, one);
        let latch = self.b.current_block();
        self.b.jump(header);
        self.b.set_phi_incoming(i, &[(zero, pre), (next_i, latch)]);
        self.b
            .set_phi_incoming(acc, &[(init, pre), (next_acc, latch)]);
        self.avail.truncate(mark);

        self.b.switch_to(exit);
        self.avail.extend([i, acc]);
        Ok(())
    }
}

/// A differential mismatch or a broken invariant, with the program text.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("generator produced invalid IR: {error}\n{program}")]
    InvalidProgram { error: String, program: String },
    #[error("text round trip changed the program:\n{program}\n---\n{reprinted}")]
    RoundTrip { program: String, reprinted: String },
    #[error("after `{stage}`: {detail}\nprogram:\n{program}\nafter:\n{after}")]
    Mismatch {
        stage: String,
        detail: String,
        program: String,
        after: String,
    },
}

/// What a differential run exercised.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DiffStats {
    /// The original run was defined, so outcomes were compared.
    pub compared: bool,
    /// Passes (by registry order) that changed the program.
    pub changed: [bool; 4],
    pub insts: usize,
}

/// Run the differential check on fuzzer bytes. Inputs too short to make a
/// program pass trivially.
pub fn differential(data: &[u8]) -> Result<(), DiffError> {
    differential_stats(data).map(|_| ())
}

/// [`differential`], also saying what was exercised.
pub fn differential_stats(data: &[u8]) -> Result<DiffStats, DiffError> {
    let mut u = Unstructured::new(data);
    let arena = Bump::new();
    let Ok(generated) = generate(&arena, &mut u, GenLimits::default()) else {
        return Ok(DiffStats::default());
    };
    let shader = generated.shader;
    let inv = generated.invocation;
    let program = lathe_ir::print(&shader);
    if let Err(e) = lathe_ir::validate(&shader) {
        return Err(DiffError::InvalidProgram {
            error: e.to_string(),
            program,
        });
    }
    let reparsed = parse(&arena, &program)?;
    let reprinted = lathe_ir::print(&reparsed);
    if reprinted != program {
        return Err(DiffError::RoundTrip { program, reprinted });
    }
    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let before = interp::run(&shader, &inv, limits);
    let expected = match before {
        Ok(o) => Some(o),
        Err(InterpError::Undefined { .. } | InterpError::StepLimit(_)) => None,
        Err(e) => {
            return Err(DiffError::InvalidProgram {
                error: format!("interpreter: {e}"),
                program,
            });
        }
    };
    let mut stats = DiffStats {
        compared: expected.is_some(),
        insts: shader.len(),
        ..DiffStats::default()
    };
    let registry = Registry::<GenericOp>::standard();
    let names = registry.names();
    // Each pass alone, then the whole pipeline.
    let mut stages: Vec<Vec<&str>> = names.iter().map(|&n| vec![n]).collect();
    stages.push(names.clone());
    stages.push(vec!["flatten", "copy-prop", "dce", "flatten"]);
    for (k, stage) in stages.iter().enumerate() {
        let mut s = parse(&arena, &program)?;
        let label = stage.join(",");
        let mismatch = |detail: String, after: String| DiffError::Mismatch {
            stage: label.clone(),
            detail,
            program: program.clone(),
            after,
        };
        let mut pm = registry
            .pipeline(stage)
            .map_err(|e| mismatch(e.to_string(), String::new()))?;
        pm.verify = true;
        let records = pm
            .run(&mut s)
            .map_err(|e| mismatch(e.to_string(), String::new()))?;
        if k < names.len() {
            stats.changed[k] = records.iter().any(|r| r.changed);
        }
        if let Some(expected) = &expected {
            let after = interp::run(&s, &inv, limits);
            if after.as_ref() != Ok(expected) {
                return Err(mismatch(
                    format!("expected {expected:?}, got {after:?}"),
                    lathe_ir::print(&s),
                ));
            }
        }
    }
    Ok(stats)
}

fn parse<'a>(arena: &'a Bump, text: &str) -> Result<Shader<'a, GenericOp>, DiffError> {
    lathe_ir::parse(arena, text).map_err(|e| DiffError::InvalidProgram {
        error: format!("printed text does not parse: {e}"),
        program: text.to_string(),
    })
}

/// Deterministic pseudo-random byte strings (xorshift), for seed corpora.
pub fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
