//! Copy propagation: the ir3 notes' rule. A plain `mov` (no abs/neg, no
//! address) whose source type equals its result type is removed, and its
//! uses read the source directly. Type-changing movs (bit casts) and movs
//! with modifiers stay.

use crate::manager::{Pass, PassFailure};
use lathe_ir::{Op, Opcode, Shader, Value};

/// The `copy-prop` pass.
pub struct CopyProp;

impl<O: Opcode> Pass<O> for CopyProp {
    fn name(&self) -> &'static str {
        "copy-prop"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        // replacement[v] = the value a copy `v` stands for.
        let mut replacement: Vec<Option<Value>> = vec![None; shader.value_capacity()];
        let mut any = false;
        for (_, i) in shader.insts_in_order() {
            let d = shader.inst(i);
            let Op::Opcode(o) = d.op else { continue };
            if !o.is_plain_copy() || d.address.is_some() {
                continue;
            }
            let (Some(r), [src]) = (d.result, &d.args[..]) else {
                continue;
            };
            if shader.value_type(r) == shader.value_type(*src) && r != *src {
                replacement[r.index()] = Some(*src);
                any = true;
            }
        }
        if !any {
            return Ok(false);
        }
        // Resolve chains (copy of a copy) to their root, compressing paths.
        // Valid SSA has no copy cycles; the step bound keeps a malformed
        // input from looping.
        let n = replacement.len();
        let resolve = |replacement: &mut Vec<Option<Value>>, v: Value| -> Value {
            let mut root = v;
            let mut steps = 0;
            while let Some(next) = replacement.get(root.index()).copied().flatten() {
                root = next;
                steps += 1;
                if steps > n {
                    return v;
                }
            }
            let mut cur = v;
            while let Some(next) = replacement.get(cur.index()).copied().flatten() {
                replacement[cur.index()] = Some(root);
                cur = next;
                if cur == root {
                    break;
                }
            }
            root
        };
        shader.rewrite_operands(|v| resolve(&mut replacement, v));
        let layout: Vec<_> = shader.layout().to_vec();
        for b in layout {
            shader.retain_insts(b, |_, d| {
                d.result.is_none_or(|r| replacement[r.index()].is_none())
            });
        }
        Ok(true)
    }
}
