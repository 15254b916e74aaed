//! Redundant load elimination: a load that reads what an earlier load in
//! its block read (same operation, binding, address and type), with no
//! write to that kind of memory between them, reads the earlier result.
//!
//! [`gvn`](crate::gvn) leaves memory loads alone because a store may come
//! between two of them. Inside one block the instructions between are
//! known, so a load is redundant unless something between may write the
//! memory it reads: a store, an atomic or a barrier whose class conflicts
//! with the load's ([`lathe_ir::BarrierClass::conflicts`]; stores through
//! any binding count, since bindings may alias). Another invocation
//! writing the word between the two loads would be a data race, which is
//! undefined behaviour, so every defined run reads the same value twice.
//! Atomic loads are never merged: other invocations may change the word
//! between them without a race.
//!
//! Candidates: storage-buffer, image, shared-memory and array loads.
//!
//! ```
//! use lathe_passes::load_cse::load_cse;
//!
//! let text = "shader compute\nb0:\n  %0:u32 = const 4\n  %1:u32 = load_ssbo binding=0 %0\n  %2:u32 = load_ssbo binding=0 %0\n  %3:u32 = iadd %1, %2\n  store_ssbo binding=1 %0, %3\n  %4:u32 = load_ssbo binding=0 %0\n  store_ssbo binding=1 %0, %4\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(load_cse(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! assert!(printed.contains("iadd %1, %1"), "{printed}");
//! // The store between may write binding 0's word too (bindings alias).
//! assert!(printed.contains("store_ssbo binding=1 %0, %4"), "{printed}");
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::{BarrierClass, GenericOp, Op, Opcode, Shader, Type, Value};
use std::collections::HashMap;

/// The `load-cse` pass (generic IR only).
pub struct LoadCse;

impl Pass<GenericOp> for LoadCse {
    fn name(&self) -> &'static str {
        "load-cse"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(load_cse(shader))
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    op: GenericOp,
    args: Vec<Value>,
    address: Option<Value>,
    ty: Type,
}

/// Replaces the uses of every redundant load by the earlier load's
/// result; returns whether anything changed. The redundant loads stay,
/// unused, for `dce`.
pub fn load_cse(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut map: Vec<Value> = (0..shader.value_capacity() as u32).map(Value).collect();
    let mut changed = false;
    let mut available: HashMap<Key, (Value, BarrierClass)> = HashMap::new();
    for &b in shader.layout() {
        available.clear();
        for &i in shader.block_insts(b) {
            let data = shader.inst(i);
            let Op::Opcode(op) = data.op else {
                continue;
            };
            let effects = op.effects();
            if is_candidate(op) {
                let (Some(r), None) = (data.result, data.second_result) else {
                    continue;
                };
                let key = Key {
                    op,
                    args: data.args.iter().map(|&a| map[a.index()]).collect(),
                    address: data.address.map(|a| map[a.index()]),
                    ty: shader.value_type(r),
                };
                match available.get(&key) {
                    Some(&(earlier, _)) => {
                        map[r.index()] = earlier;
                        changed = true;
                    }
                    None => {
                        available.insert(key, (r, effects.barrier));
                    }
                }
            } else if effects.side_effects || effects.barrier != BarrierClass::NONE {
                available
                    .retain(|_, &mut (_, class)| !class.conflicts().intersects(effects.barrier));
            }
        }
    }
    if changed {
        shader.rewrite_operands(|v| map[v.index()]);
    }
    changed
}

/// A plain load of memory only stores, atomics and barriers change.
fn is_candidate(op: GenericOp) -> bool {
    matches!(
        op,
        GenericOp::LoadSsbo { .. }
            | GenericOp::LoadShared
            | GenericOp::ImageLoad { .. }
            | GenericOp::ArrayLoad { .. }
    )
}
