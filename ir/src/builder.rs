//! A cursor for building shaders by hand or from a frontend.
//!
//! The structural operations (blocks, branches, phis, collect/split) work for
//! any vocabulary; the generic-opcode helpers (`fadd`, `load_input`, ...)
//! exist on `Builder<GenericOp>`. Nothing is checked while building: run the
//! validator when done.

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
    }
    unary! {
        rcp => Rcp, rsqrt => Rsqrt, sqrt => Sqrt, exp2 => Exp2, log2 => Log2,
        sin => Sin, cos => Cos, floor => Floor, not => Not,
    }
    compare! {
        feq => FEq, fne => FNe, flt => FLt, fge => FGe, ieq => IEq, ine => INe,
        ilt => ILt, ige => IGe, ult => ULt, uge => UGe,
    }

    pub fn ffma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let ty = self.type_of(a);
        self.op(GenericOp::Ffma, &[a, b, c], ty)
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
        let texel = self.op(
            GenericOp::Sample { texture, sampler },
            &[coord],
            Type::vector(Scalar::F32, 4),
        );
        [0, 1, 2, 3].map(|lane| self.split(texel, lane))
    }

    pub fn discard(&mut self) -> Inst {
        self.op_void(GenericOp::Discard, &[])
    }

    pub fn barrier(&mut self) -> Inst {
        self.op_void(GenericOp::Barrier, &[])
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
