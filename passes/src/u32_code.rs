//! Small builders the address-computing passes share
//! ([`crate::constant_data`], [`crate::ubo_vectors`],
//! [`crate::private_arrays`]): `u32` instructions appended to a list the
//! pass writes into a block, and reading a constant operand.

use lathe_ir::{GenericOp, Inst, Op, Shader, Type, Value};

/// The bits of `v` when a `const` defines it.
pub(crate) fn const_bits(shader: &Shader<'_, GenericOp>, v: Value) -> Option<u32> {
    match shader.inst(shader.value_def(v)).op {
        Op::Opcode(GenericOp::Const { bits }) => Some(bits),
        _ => None,
    }
}

/// A new `u32` instruction appended to `out`, giving its result.
pub(crate) fn emit(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    op: GenericOp,
    args: &[Value],
) -> Value {
    let i = shader.create_inst(Op::Opcode(op), args, &[], None, Some(Type::U32));
    out.push(i);
    shader
        .inst(i)
        .result
        .unwrap_or_else(|| unreachable!("made with a result"))
}

/// A new `u32` constant appended to `out`.
pub(crate) fn constant(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    bits: u32,
) -> Value {
    emit(shader, out, GenericOp::Const { bits }, &[])
}
