//! Put the arrays [`crate::promote_arrays`] leaves in private memory:
//! every `array_load`/`array_store` still in the shader becomes a
//! `load_private`/`store_private` of one 32-bit word at a byte offset
//! computed in the IR (`index × 4 + base`), so selection sees plain
//! address arithmetic and one memory access.
//!
//! Layout: the arrays take consecutive word-aligned ranges from byte 0
//! in declaration order (arrays without accesses take none), and the
//! shader's [`lathe_ir::Shader::private_bytes`] says where they end: a
//! register allocator's spill slots start there, so the two never
//! overlap. An index past the array is undefined behaviour in the IR
//! (the interpreter reports it), so the address may then be anything.
//!
//! ```
//! use lathe_passes::private_arrays::lower;
//!
//! let text = "shader vertex\narray a0: f32[2]\nb0:\n  %0:u32 = load_sysval sv=vertex_index\n  %1:f32 = const 0x3f800000\n  array_store array=a0 offset=1 %1\n  %3:f32 = array_load array=a0 offset=0 addr=%0\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(lower(&mut shader).unwrap());
//! let printed = lathe_ir::print(&shader);
//! assert!(!printed.contains("array_"), "{printed}");
//! assert!(printed.contains("private 8"), "{printed}");
//! assert!(printed.contains("= load_private "), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use crate::u32_code::{constant, emit};
use lathe_ir::{GenericOp, Inst, Op, Shader, Type, Value};

/// Bytes per array element in private memory: one 32-bit word.
const WORD: u32 = 4;

/// Lowers every array access left in `shader` to private memory; returns
/// whether anything changed, or what is unsupported: an array whose
/// elements are not 32-bit words or an address that is no integer.
pub fn lower(shader: &mut Shader<'_, GenericOp>) -> Result<bool, String> {
    let arrays = shader.arrays().to_vec();
    let mut used = vec![false; arrays.len()];
    for (_, i) in shader.insts_in_order() {
        if let Some((array, _)) = access(&shader.inst(i).op) {
            used[array] = true;
        }
    }
    if !used.contains(&true) {
        return Ok(false);
    }
    // Each used array's first byte.
    let mut base = vec![0u32; arrays.len()];
    let mut end = shader.private_bytes;
    for (k, decl) in arrays.iter().enumerate() {
        if !used[k] {
            continue;
        }
        if decl.elem.scalar.bits() != 32 || !decl.elem.is_scalar() {
            return Err(format!(
                "array a{k} of {} in private memory (words only)",
                decl.elem
            ));
        }
        base[k] = end;
        end = decl
            .len
            .checked_mul(WORD)
            .and_then(|n| end.checked_add(n))
            .ok_or_else(|| format!("array a{k} of {} elements in private memory", decl.len))?;
    }
    shader.private_bytes = end;

    // Loads' results and the private loads that give them.
    let mut map: Vec<Value> = (0..shader.value_capacity() as u32).map(Value).collect();
    for b in shader.layout().to_vec() {
        let old: Vec<Inst> = shader.block_insts(b).to_vec();
        let mut out = Vec::with_capacity(old.len());
        for i in old {
            let Some((array, offset)) = access(&shader.inst(i).op) else {
                out.push(i);
                continue;
            };
            let data = shader.inst(i);
            let (address, result) = (data.address, data.result);
            let stored = result
                .is_none()
                .then(|| data.args.first().copied())
                .flatten();
            let at = base[array] + offset * WORD;
            let byte = byte_offset(shader, &mut out, address, at)?;
            match (stored, result) {
                (Some(v), None) => {
                    let s = shader.create_inst(
                        Op::Opcode(GenericOp::StorePrivate),
                        &[byte, v],
                        &[],
                        None,
                        None,
                    );
                    out.push(s);
                }
                (None, Some(r)) => {
                    let ty = shader.value_type(r);
                    let l = shader.create_inst(
                        Op::Opcode(GenericOp::LoadPrivate),
                        &[byte],
                        &[],
                        None,
                        Some(ty),
                    );
                    out.push(l);
                    map[r.index()] = shader.inst(l).result.unwrap_or(r);
                }
                // A malformed access (the validator rejects both).
                _ => return Err("array access without a value or with two".into()),
            }
        }
        shader.set_block_insts(b, &out);
    }
    shader.rewrite_operands(|v| map.get(v.index()).copied().unwrap_or(v));
    Ok(true)
}

/// The array index and constant element offset of an array access.
fn access(op: &Op<GenericOp>) -> Option<(usize, u32)> {
    match *op {
        Op::Opcode(
            GenericOp::ArrayLoad { array, offset } | GenericOp::ArrayStore { array, offset },
        ) => Some((array.index(), offset)),
        _ => None,
    }
}

/// `address × 4 + at` as a u32 byte offset (the constant `at` without an
/// address), instructions appended to `out`.
fn byte_offset(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    address: Option<Value>,
    at: u32,
) -> Result<Value, String> {
    let at = constant(shader, out, at);
    let Some(a) = address else {
        return Ok(at);
    };
    let ty = shader.value_type(a);
    if !ty.is_scalar() || !ty.scalar.is_int() {
        return Err(format!("array index of type {ty}"));
    }
    // An in-bounds index is small and not negative, so zero-extending a
    // narrow one or reading an i32's bits as u32 keeps it.
    let index = match ty.scalar.bits() {
        32 if ty == Type::U32 => a,
        32 => emit(
            shader,
            out,
            GenericOp::Mov {
                abs: false,
                neg: false,
            },
            &[a],
        ),
        _ => emit(shader, out, GenericOp::Cvt, &[a]),
    };
    let two = constant(shader, out, WORD.trailing_zeros());
    let scaled = emit(shader, out, GenericOp::Shl, &[index, two]);
    Ok(emit(shader, out, GenericOp::IAdd, &[scaled, at]))
}
