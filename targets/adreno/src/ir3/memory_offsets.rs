//! Constant shared and private memory addresses as a base register plus
//! the offset the access encodes (generic IR, right before selection).
//!
//! `ldl`/`stl`/`ldp`/`stp` add a signed immediate to their address
//! register. A constant address `k` becomes `base + (k - base)`, `base`
//! the multiple of the offset limit at or below `k`: one `const` per base
//! at the top of the entry block, shared by every access it reaches (one
//! register), instead of a move into a register before every access.
//! WGSL's zero-initialisation of workgroup memory stores at thousands of
//! constant addresses; Mesa addresses them the same way. This runs after
//! the last optimisation, which would fold the sums back.
//!
//! ```
//! use lathe_adreno::ir3::memory_offsets::split_constant_addresses;
//!
//! let text = "shader compute\nb0:\n  %0:u32 = const 0\n  %1:u32 = const 8\n  %2:u32 = const 5000\n  store_shared %1, %0\n  store_shared %2, %0\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(split_constant_addresses(&mut shader, 4096));
//! lathe_ir::validate(&shader).unwrap();
//! let out = lathe_ir::print(&shader);
//! // 8 is base 0 plus 8, 5000 base 4096 plus 904.
//! assert!(out.contains("const 4096"), "{out}");
//! assert!(out.contains("const 904"), "{out}");
//! assert_eq!(out.matches("= iadd").count(), 2, "{out}");
//! ```

use std::collections::HashMap;

use lathe_ir::{GenericOp, Inst, Op, Shader, Type, Value};

/// Rewrites the constant addresses of shared and private loads and stores
/// into `base + offset` with `0 <= offset < limit` (the offset the
/// accesses encode, a power of two); returns whether anything changed.
pub fn split_constant_addresses(shader: &mut Shader<'_, GenericOp>, limit: u32) -> bool {
    let Some(entry) = shader.entry() else {
        return false;
    };
    if !limit.is_power_of_two() {
        return false;
    }
    let accesses: Vec<(Inst, u32)> = shader
        .insts_in_order()
        .filter_map(|(_, i)| {
            let data = shader.inst(i);
            let addressed = matches!(
                data.op,
                Op::Opcode(
                    GenericOp::LoadShared
                        | GenericOp::StoreShared
                        | GenericOp::LoadPrivate
                        | GenericOp::StorePrivate
                )
            );
            let address = *data.args.first()?;
            match shader.inst(shader.value_def(address)).op {
                Op::Opcode(GenericOp::Const { bits }) if addressed => Some((i, bits)),
                _ => None,
            }
        })
        .collect();
    if accesses.is_empty() {
        return false;
    }
    let mut bases: HashMap<u32, Value> = HashMap::new();
    let mut new_bases: Vec<Inst> = Vec::new();
    let mut before: HashMap<Inst, Inst> = HashMap::new();
    for (i, k) in accesses {
        let offset = k & (limit - 1);
        let base = *bases.entry(k - offset).or_insert_with(|| {
            let (inst, v) = constant(shader, k - offset);
            new_bases.push(inst);
            v
        });
        let address = if offset == 0 {
            base
        } else {
            let (c, offset) = constant(shader, offset);
            let sum = shader.create_inst(
                Op::Opcode(GenericOp::IAdd),
                &[base, offset],
                &[],
                None,
                Some(Type::U32),
            );
            before.insert(i, sum);
            before.insert(sum, c);
            result(shader, sum)
        };
        let mut args = shader.inst(i).args.to_vec();
        args[0] = address;
        shader.set_args(i, &args);
    }
    shader.insert_before(&before);
    let mut top = new_bases;
    top.extend_from_slice(shader.block_insts(entry));
    shader.set_block_insts(entry, &top);
    true
}

/// A new, unplaced `const bits` of type `u32` and its value.
fn constant(shader: &mut Shader<'_, GenericOp>, bits: u32) -> (Inst, Value) {
    let op = Op::Opcode(GenericOp::Const { bits });
    let i = shader.create_inst(op, &[], &[], None, Some(Type::U32));
    (i, result(shader, i))
}

fn result(shader: &Shader<'_, GenericOp>, i: Inst) -> Value {
    shader
        .inst(i)
        .result
        .unwrap_or_else(|| unreachable!("made with a result"))
}
