//! A cursor for building shaders by hand or from a frontend.
//!
//! The structural operations (blocks, branches, phis, collect/split) work for
//! any vocabulary; the generic-opcode helpers (`fadd`, `load_input`, ...)
//! exist on `Builder<GenericOp>`. Nothing is checked while building: run the
//! validator when done.

use crate::attrs::{AtomicOp, DerivMode, LodMode, PackFormat, Sysval, TexShape};
use crate::generic::{GenericOp, Interp};
use crate::opcode::{Op, Opcode};
use crate::shader::{ArrayId, Block, Inst, Shader, Value};
use crate::types::{Scalar, Type};

/// Appends instructions at the end of a current block.
pub struct Builder<'s, 'a, O> {
    shader: &'s mut Shader<'a, O>,
    block: Block,
}

impl<'s, 'a, O: Opcode> Builder<'s, 'a, O> {
    /// Start building at the end of the shader's last block, creating the
    /// entry block if there is none.
    pub fn new(shader: &'s mut Shader<'a, O>) -> Self {
        let block = match shader.layout().last() {
            Some(&b) => b,
            None => shader.add_block(),
        };
        Builder { shader, block }
    }

    pub fn shader(&mut self) -> &mut Shader<'a, O> {
        self.shader
    }

    pub fn current_block(&self) -> Block {
        self.block
    }

    /// A new block at the end of the layout (the cursor stays put).
    pub fn new_block(&mut self) -> Block {
        self.shader.add_block()
    }

    /// Move the cursor to the end of `block`.
    pub fn switch_to(&mut self, block: Block) {
        self.block = block;
    }

    /// Append any instruction; returns it and its result.
    pub fn inst(
        &mut self,
        op: Op<O>,
        args: &[Value],
        targets: &[Block],
        address: Option<Value>,
        result: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let i = self
            .shader
            .append_inst(self.block, op, args, targets, address, result);
        (i, self.shader.inst(i).result)
    }

    /// Append a vocabulary opcode with a result of type `ty`.
    pub fn op(&mut self, op: O, args: &[Value], ty: Type) -> Value {
        self.value(Op::Opcode(op), args, None, ty)
    }

    /// Append a vocabulary opcode without a result.
    pub fn op_void(&mut self, op: O, args: &[Value]) -> Inst {
        self.inst(Op::Opcode(op), args, &[], None, None).0
    }

    fn value(&mut self, op: Op<O>, args: &[Value], address: Option<Value>, ty: Type) -> Value {
        let i = self
            .shader
            .append_inst(self.block, op, args, &[], address, Some(ty));
        // append_inst always creates the result when a type is given.
        self.shader.inst(i).result.unwrap_or(Value(u32::MAX))
    }

    pub fn type_of(&self, v: Value) -> Type {
        self.shader.value_type(v)
    }

    // ----- structure -----

    pub fn jump(&mut self, target: Block) -> Inst {
        self.inst(Op::Jump, &[], &[target], None, None).0
    }

    pub fn branch(&mut self, cond: Value, then_block: Block, else_block: Block) -> Inst {
        self.inst(Op::Branch, &[cond], &[then_block, else_block], None, None)
            .0
    }

    pub fn ret(&mut self) -> Inst {
        self.inst(Op::Return, &[], &[], None, None).0
    }

    /// A phi of type `ty` with `(value, predecessor)` pairs; it must be added
    /// before the block's other instructions.
    pub fn phi(&mut self, ty: Type, incoming: &[(Value, Block)]) -> Value {
        let (vals, blocks) = split_pairs(self.shader.arena(), incoming);
        let i = self
            .shader
            .append_inst(self.block, Op::Phi, vals, blocks, None, Some(ty));
        self.shader.inst(i).result.unwrap_or(Value(u32::MAX))
    }

    /// Set a phi's incoming pairs (for loop phis whose back-edge value is
    /// built after the phi).
    pub fn set_phi_incoming(&mut self, phi: Value, incoming: &[(Value, Block)]) {
        let i = self.shader.value_def(phi);
        let (vals, blocks) = split_pairs(self.shader.arena(), incoming);
        self.shader.set_args(i, vals);
        self.shader.set_targets(i, blocks);
    }

    pub fn collect(&mut self, parts: &[Value]) -> Value {
        let scalar = parts
            .first()
            .map_or(Scalar::F32, |&v| self.shader.value_type(v).scalar);
        let ty = Type::vector(scalar, parts.len() as u8);
        self.value(Op::Collect, parts, None, ty)
    }

    /// A meta `input`: the value the hardware preloads into register
    /// `index` (only valid in the entry block).
    pub fn input(&mut self, index: u32, ty: Type) -> Value {
        self.value(Op::Input { index }, &[], None, ty)
    }

    /// A meta `output`: leave `v` in register `index` for the hardware.
    pub fn output(&mut self, index: u32, v: Value) -> Inst {
        self.inst(Op::Output { index }, &[v], &[], None, None).0
    }

    pub fn split(&mut self, vector: Value, lane: u8) -> Value {
        let ty = Type::scalar(self.shader.value_type(vector).scalar);
        self.value(Op::Split { lane }, &[vector], None, ty)
    }

    /// `if cond { then } else { else }` as a diamond; each closure returns the
    /// values to merge, pairwise, into phis of the join block, where the
    /// cursor is left.
    pub fn if_else<const N: usize>(
        &mut self,
        cond: Value,
        then_body: impl FnOnce(&mut Self) -> [Value; N],
        else_body: impl FnOnce(&mut Self) -> [Value; N],
    ) -> [Value; N] {
        let then_block = self.new_block();
        let else_block = self.new_block();
        let join = self.new_block();
        self.branch(cond, then_block, else_block);
        self.switch_to(then_block);
        let then_vals = then_body(self);
        let then_end = self.block;
        self.jump(join);
        self.switch_to(else_block);
        let else_vals = else_body(self);
        let else_end = self.block;
        self.jump(join);
        self.switch_to(join);
        let mut k = 0;
        then_vals.map(|t| {
            let e = else_vals[k];
            k += 1;
            let ty = self.shader.value_type(t);
            self.phi(ty, &[(t, then_end), (e, else_end)])
        })
    }

    /// `while cond(vars) { vars = body(vars) }` as a loop: a header holding
    /// one phi per carried value (starting at `init`), a body, and an exit
    /// block where the cursor is left. Returns the carried values as seen
    /// at the exit (the header's phis).
    pub fn loop_while<const N: usize>(
        &mut self,
        init: [Value; N],
        cond: impl FnOnce(&mut Self, [Value; N]) -> Value,
        body: impl FnOnce(&mut Self, [Value; N]) -> [Value; N],
    ) -> [Value; N] {
        let pre = self.block;
        let header = self.new_block();
        let body_block = self.new_block();
        let exit = self.new_block();
        self.jump(header);
        self.switch_to(header);
        let vars = init.map(|v| {
            let ty = self.shader.value_type(v);
            self.phi(ty, &[(v, pre)])
        });
        let c = cond(self, vars);
        self.branch(c, body_block, exit);
        self.switch_to(body_block);
        let next = body(self, vars);
        let latch = self.block;
        self.jump(header);
        for k in 0..N {
            self.set_phi_incoming(vars[k], &[(init[k], pre), (next[k], latch)]);
        }
        self.switch_to(exit);
        vars
    }
}

/// How a [`Builder::sample_with`] picks its level of detail.
#[derive(Clone, Copy, Debug)]
pub enum Lod {
    /// From the quad's coordinate derivatives.
    Implicit,
    /// Implicit plus this f32 bias.
    Bias(Value),
    /// This f32 LOD.
    Explicit(Value),
    /// From these gradients (`ddx`, `ddy`: one f32 lane per dimension).
    Grad(Value, Value),
}

/// The operands of a [`Builder::sample_with`].
#[derive(Clone, Copy, Debug)]
pub struct SampleOperands {
    /// f32 (or f32xN) coordinate, array layer last.
    pub coord: Value,
    /// Depth reference: the result is then one f32.
    pub compare: Option<Value>,
    pub lod: Lod,
    /// Constant texel offset (i32 or i32xN).
    pub offset: Option<Value>,
}

/// The present values of `parts`, in order, on the stack (building makes
/// no heap allocation per instruction).
fn present<const N: usize>(parts: [Option<Value>; N]) -> ([Value; N], usize) {
    let mut out = [Value(0); N];
    let mut n = 0;
    for v in parts.into_iter().flatten() {
        out[n] = v;
        n += 1;
    }
    (out, n)
}

/// `i32`, or `i32xN` for more than one lane.
fn int_lanes(n: u8) -> Type {
    if n == 1 {
        Type::I32
    } else {
        Type::vector(Scalar::I32, n)
    }
}

/// Unzip phi pairs into arena scratch slices (no global heap allocation).
fn split_pairs<'x>(
    arena: &'x bumpalo::Bump,
    incoming: &[(Value, Block)],
) -> (&'x [Value], &'x [Block]) {
    let vals = arena.alloc_slice_fill_iter(incoming.iter().map(|p| p.0));
    let blocks = arena.alloc_slice_fill_iter(incoming.iter().map(|p| p.1));
    (vals, blocks)
}

macro_rules! binary {
    ($($fn:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($fn), " a, b` (result has `a`'s type).")]
        pub fn $fn(&mut self, a: Value, b: Value) -> Value {
            let ty = self.type_of(a);
            self.op(GenericOp::$op, &[a, b], ty)
        }
    )*};
}

macro_rules! unary {
    ($($fn:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($fn), " a` (result has `a`'s type).")]
        pub fn $fn(&mut self, a: Value) -> Value {
            let ty = self.type_of(a);
            self.op(GenericOp::$op, &[a], ty)
        }
    )*};
}

macro_rules! compare {
    ($($fn:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($fn), " a, b` giving bool.")]
        pub fn $fn(&mut self, a: Value, b: Value) -> Value {
            self.op(GenericOp::$op, &[a, b], Type::BOOL)
        }
    )*};
}

/// Generic-opcode helpers.
impl Builder<'_, '_, GenericOp> {
    binary! {
        fadd => FAdd, fsub => FSub, fmul => FMul, fmin => FMin, fmax => FMax,
        iadd => IAdd, isub => ISub, imul => IMul, imin => IMin, imax => IMax,
        umin => UMin, umax => UMax, udiv => UDiv, umod => UMod, idiv => IDiv, irem => IRem,
        and => And, or => Or, xor => Xor, shl => Shl, shr => Shr, ashr => AShr,
        fdiv => FDiv, imul_high => IMulHigh, umul_high => UMulHigh,
    }
    unary! {
        rcp => Rcp, rsqrt => Rsqrt, sqrt => Sqrt, exp2 => Exp2, log2 => Log2,
        sin => Sin, cos => Cos, floor => Floor, not => Not, ceil => Ceil, trunc => Trunc,
        round_even => RoundEven, fract => Fract, fsign => FSign, iabs => IAbs,
        isign => ISign, bit_reverse => BitReverse, bit_count => BitCount,
        find_lsb => FindLsb, ufind_msb => UFindMsb, ifind_msb => IFindMsb,
    }
    compare! {
        feq => FEq, fne => FNe, flt => FLt, fge => FGe, ieq => IEq, ine => INe,
        ilt => ILt, ige => IGe, ult => ULt, uge => UGe,
    }

    pub fn ffma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let ty = self.type_of(a);
        self.op(GenericOp::Ffma, &[a, b, c], ty)
    }

    /// `count` bits of `base` from bit `offset`, zero-extended (all three
    /// of `base`'s type).
    pub fn ubitfield_extract(&mut self, base: Value, offset: Value, count: Value) -> Value {
        let ty = self.type_of(base);
        self.op(GenericOp::UBitfieldExtract, &[base, offset, count], ty)
    }

    /// As [`Self::ubitfield_extract`], sign-extended.
    pub fn ibitfield_extract(&mut self, base: Value, offset: Value, count: Value) -> Value {
        let ty = self.type_of(base);
        self.op(GenericOp::IBitfieldExtract, &[base, offset, count], ty)
    }

    pub fn bitfield_insert(
        &mut self,
        base: Value,
        insert: Value,
        offset: Value,
        count: Value,
    ) -> Value {
        let ty = self.type_of(base);
        self.op(
            GenericOp::BitfieldInsert,
            &[base, insert, offset, count],
            ty,
        )
    }

    /// Pack `format.lanes()` f32 values into a u32.
    pub fn pack(&mut self, format: PackFormat, lanes: &[Value]) -> Value {
        self.op(GenericOp::Pack { format }, lanes, Type::U32)
    }

    /// Lane `lane` of `packed` as f32.
    pub fn unpack(&mut self, format: PackFormat, lane: u8, packed: Value) -> Value {
        self.op(GenericOp::Unpack { format, lane }, &[packed], Type::F32)
    }

    pub fn ddx(&mut self, a: Value, mode: DerivMode) -> Value {
        let ty = self.type_of(a);
        self.op(GenericOp::Ddx { mode }, &[a], ty)
    }

    pub fn ddy(&mut self, a: Value, mode: DerivMode) -> Value {
        let ty = self.type_of(a);
        self.op(GenericOp::Ddy { mode }, &[a], ty)
    }

    /// Component `comp` of a system value, as `ty` (f32, bool, or i32/u32
    /// for the integer ones).
    pub fn load_sysval(&mut self, sysval: Sysval, comp: u8, ty: Type) -> Value {
        self.op(GenericOp::LoadSysval { sysval, comp }, &[], ty)
    }

    pub fn sel(&mut self, cond: Value, a: Value, b: Value) -> Value {
        let ty = self.type_of(a);
        self.op(GenericOp::Sel, &[cond, a, b], ty)
    }

    /// A plain copy.
    pub fn mov(&mut self, a: Value) -> Value {
        let ty = self.type_of(a);
        self.op(
            GenericOp::Mov {
                abs: false,
                neg: false,
            },
            &[a],
            ty,
        )
    }

    /// A float negation (a `mov` with the `neg` modifier).
    pub fn fneg(&mut self, a: Value) -> Value {
        let ty = self.type_of(a);
        self.op(
            GenericOp::Mov {
                abs: false,
                neg: true,
            },
            &[a],
            ty,
        )
    }

    pub fn fabs(&mut self, a: Value) -> Value {
        let ty = self.type_of(a);
        self.op(
            GenericOp::Mov {
                abs: true,
                neg: false,
            },
            &[a],
            ty,
        )
    }

    pub fn cvt(&mut self, a: Value, to: Type) -> Value {
        self.op(GenericOp::Cvt, &[a], to)
    }

    /// A constant of type `ty` from raw bits.
    pub fn const_bits(&mut self, ty: Type, bits: u32) -> Value {
        self.op(GenericOp::Const { bits }, &[], ty)
    }

    pub fn const_f32(&mut self, x: f32) -> Value {
        self.const_bits(Type::F32, x.to_bits())
    }

    /// An f16 constant, rounded to nearest even from `x`.
    pub fn const_f16(&mut self, x: f32) -> Value {
        self.const_bits(Type::F16, crate::f16::from_f32(x) as u32)
    }

    pub fn const_i32(&mut self, x: i32) -> Value {
        self.const_bits(Type::I32, x as u32)
    }

    pub fn const_u32(&mut self, x: u32) -> Value {
        self.const_bits(Type::U32, x)
    }

    pub fn const_bool(&mut self, x: bool) -> Value {
        self.const_bits(Type::BOOL, x as u32)
    }

    pub fn load_input(&mut self, slot: u16, comp: u8, interp: Interp, ty: Type) -> Value {
        self.op(GenericOp::LoadInput { slot, comp, interp }, &[], ty)
    }

    pub fn store_output(&mut self, slot: u16, comp: u8, v: Value) -> Inst {
        self.op_void(GenericOp::StoreOutput { slot, comp }, &[v])
    }

    /// Uniform word `index`, relative to `address` if given.
    pub fn load_uniform(&mut self, index: u32, address: Option<Value>, ty: Type) -> Value {
        self.value(
            Op::Opcode(GenericOp::LoadUniform { index }),
            &[],
            address,
            ty,
        )
    }

    pub fn load_ubo(&mut self, binding: u8, byte_offset: Value, ty: Type) -> Value {
        self.op(GenericOp::LoadUbo { binding }, &[byte_offset], ty)
    }

    /// Sample at `coord` (an `f32x2` collect); returns the four channels.
    pub fn sample(&mut self, texture: u8, sampler: u8, coord: Value) -> [Value; 4] {
        let operands = SampleOperands {
            coord,
            compare: None,
            lod: Lod::Implicit,
            offset: None,
        };
        let texel = self.sample_with(texture, sampler, TexShape::D2, Scalar::F32, &operands);
        [0, 1, 2, 3].map(|lane| self.split(texel, lane))
    }

    /// A general texture sample; returns the texel vector (`texel`x4), or
    /// the f32 result of a depth compare.
    pub fn sample_with(
        &mut self,
        texture: u8,
        sampler: u8,
        shape: TexShape,
        texel: Scalar,
        operands: &SampleOperands,
    ) -> Value {
        let (lod, lod_a, lod_b) = match operands.lod {
            Lod::Implicit => (LodMode::Implicit, None, None),
            Lod::Bias(v) => (LodMode::Bias, Some(v), None),
            Lod::Explicit(v) => (LodMode::Explicit, Some(v), None),
            Lod::Grad(dx, dy) => (LodMode::Grad, Some(dx), Some(dy)),
        };
        let (args, n) = present([
            Some(operands.coord),
            operands.compare,
            lod_a,
            lod_b,
            operands.offset,
        ]);
        let op = GenericOp::Sample {
            texture,
            sampler,
            shape,
            lod,
            offset: operands.offset.is_some(),
            compare: operands.compare.is_some(),
        };
        let ty = if operands.compare.is_some() {
            Type::F32
        } else {
            Type::vector(texel, 4)
        };
        self.op(op, &args[..n], ty)
    }

    /// Gather component `comp` (0 with a depth compare) of four texels.
    #[allow(clippy::too_many_arguments)]
    pub fn gather(
        &mut self,
        texture: u8,
        sampler: u8,
        shape: TexShape,
        comp: u8,
        texel: Scalar,
        coord: Value,
        compare: Option<Value>,
        offset: Option<Value>,
    ) -> Value {
        let (args, n) = present([Some(coord), compare, offset]);
        let op = GenericOp::Gather {
            texture,
            sampler,
            shape,
            comp,
            offset: offset.is_some(),
            compare: compare.is_some(),
        };
        self.op(op, &args[..n], Type::vector(texel, 4))
    }

    /// One texel at integer `coord`, mip level (or sample index when
    /// `shape.ms`) `lod_or_sample`.
    pub fn texel_fetch(
        &mut self,
        texture: u8,
        shape: TexShape,
        texel: Scalar,
        coord: Value,
        lod_or_sample: Value,
        offset: Option<Value>,
    ) -> Value {
        let (args, n) = present([Some(coord), Some(lod_or_sample), offset]);
        let op = GenericOp::TexelFetch {
            texture,
            shape,
            offset: offset.is_some(),
        };
        self.op(op, &args[..n], Type::vector(texel, 4))
    }

    /// Size of level `lod` (no lod for multisampled textures), as i32 lanes.
    pub fn texture_size(&mut self, texture: u8, shape: TexShape, lod: Option<Value>) -> Value {
        let (args, n) = present([lod]);
        let ty = int_lanes(shape.size_coords());
        self.op(GenericOp::TextureSize { texture, shape }, &args[..n], ty)
    }

    pub fn texture_levels(&mut self, texture: u8) -> Value {
        self.op(GenericOp::TextureLevels { texture }, &[], Type::I32)
    }

    pub fn image_load(
        &mut self,
        image: u8,
        shape: TexShape,
        texel: Scalar,
        coord: Value,
        sample: Option<Value>,
    ) -> Value {
        let (args, n) = present([Some(coord), sample]);
        self.op(
            GenericOp::ImageLoad { image, shape },
            &args[..n],
            Type::vector(texel, 4),
        )
    }

    /// Store `value` (a four-lane texel) at `coord`.
    pub fn image_store(
        &mut self,
        image: u8,
        shape: TexShape,
        coord: Value,
        sample: Option<Value>,
        value: Value,
    ) -> Inst {
        let (args, n) = present([Some(coord), sample, Some(value)]);
        self.op_void(GenericOp::ImageStore { image, shape }, &args[..n])
    }

    /// An image atomic; gives the old value (of `value`'s type).
    #[allow(clippy::too_many_arguments)]
    pub fn image_atomic(
        &mut self,
        image: u8,
        shape: TexShape,
        op: AtomicOp,
        coord: Value,
        sample: Option<Value>,
        value: Value,
        comparator: Option<Value>,
    ) -> Value {
        let ty = self.type_of(value);
        let (args, n) = present([Some(coord), sample, Some(value), comparator]);
        self.op(GenericOp::ImageAtomic { image, shape, op }, &args[..n], ty)
    }

    pub fn image_size(&mut self, image: u8, shape: TexShape) -> Value {
        let ty = int_lanes(shape.size_coords());
        self.op(GenericOp::ImageSize { image, shape }, &[], ty)
    }

    /// A 32-bit word of storage buffer `binding` at a u32 byte offset.
    pub fn load_ssbo(&mut self, binding: u8, byte_offset: Value, ty: Type) -> Value {
        self.op(GenericOp::LoadSsbo { binding }, &[byte_offset], ty)
    }

    pub fn store_ssbo(&mut self, binding: u8, byte_offset: Value, v: Value) -> Inst {
        self.op_void(GenericOp::StoreSsbo { binding }, &[byte_offset, v])
    }

    /// A storage-buffer atomic; gives the old value.
    pub fn ssbo_atomic(
        &mut self,
        binding: u8,
        op: AtomicOp,
        byte_offset: Value,
        value: Value,
        comparator: Option<Value>,
    ) -> Value {
        let ty = self.type_of(value);
        let (args, n) = present([Some(byte_offset), Some(value), comparator]);
        self.op(GenericOp::SsboAtomic { binding, op }, &args[..n], ty)
    }

    /// An atomic load of a storage-buffer word (i32 or u32).
    pub fn ssbo_atomic_load(&mut self, binding: u8, byte_offset: Value, ty: Type) -> Value {
        self.op(GenericOp::SsboAtomicLoad { binding }, &[byte_offset], ty)
    }

    /// An atomic store of a storage-buffer word.
    pub fn ssbo_atomic_store(&mut self, binding: u8, byte_offset: Value, v: Value) -> Inst {
        self.op_void(GenericOp::SsboAtomicStore { binding }, &[byte_offset, v])
    }

    /// Size of storage buffer `binding` in bytes.
    pub fn ssbo_size(&mut self, binding: u8) -> Value {
        self.op(GenericOp::SsboSize { binding }, &[], Type::U32)
    }

    pub fn load_shared(&mut self, byte_offset: Value, ty: Type) -> Value {
        self.op(GenericOp::LoadShared, &[byte_offset], ty)
    }

    pub fn store_shared(&mut self, byte_offset: Value, v: Value) -> Inst {
        self.op_void(GenericOp::StoreShared, &[byte_offset, v])
    }

    /// An atomic load of a shared-memory word (i32 or u32).
    pub fn shared_atomic_load(&mut self, byte_offset: Value, ty: Type) -> Value {
        self.op(GenericOp::SharedAtomicLoad, &[byte_offset], ty)
    }

    /// An atomic store of a shared-memory word.
    pub fn shared_atomic_store(&mut self, byte_offset: Value, v: Value) -> Inst {
        self.op_void(GenericOp::SharedAtomicStore, &[byte_offset, v])
    }

    /// A shared-memory atomic; gives the old value.
    pub fn shared_atomic(
        &mut self,
        op: AtomicOp,
        byte_offset: Value,
        value: Value,
        comparator: Option<Value>,
    ) -> Value {
        let ty = self.type_of(value);
        let (args, n) = present([Some(byte_offset), Some(value), comparator]);
        self.op(GenericOp::SharedAtomic { op }, &args[..n], ty)
    }

    pub fn discard(&mut self) -> Inst {
        self.op_void(GenericOp::Discard, &[])
    }

    pub fn demote(&mut self) -> Inst {
        self.op_void(GenericOp::Demote, &[])
    }

    pub fn barrier(&mut self) -> Inst {
        self.op_void(GenericOp::Barrier, &[])
    }

    pub fn control_barrier(&mut self) -> Inst {
        self.op_void(GenericOp::ControlBarrier, &[])
    }

    pub fn array_load(&mut self, array: ArrayId, offset: u32, address: Option<Value>) -> Value {
        let ty = self
            .shader
            .arrays()
            .get(array.index())
            .map_or(Type::F32, |d| d.elem);
        self.value(
            Op::Opcode(GenericOp::ArrayLoad { array, offset }),
            &[],
            address,
            ty,
        )
    }

    pub fn array_store(
        &mut self,
        array: ArrayId,
        offset: u32,
        address: Option<Value>,
        v: Value,
    ) -> Inst {
        self.inst(
            Op::Opcode(GenericOp::ArrayStore { array, offset }),
            &[v],
            &[],
            address,
            None,
        )
        .0
    }
}
