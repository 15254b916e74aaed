//! Def→use queries, and the ordering edges barrier classes imply.
//!
//! Use→def is stored in each instruction (its operand list); def→use is
//! computed on demand into one flat table, so building and rewriting
//! instructions never maintains per-value lists.

use crate::opcode::{BarrierClass, Opcode};
use crate::shader::{Block, Inst, Shader, Value};

/// Where a value is used: the using instruction and the operand position
/// (`args.len()` denotes the address operand).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Use {
    pub inst: Inst,
    pub operand: u32,
}

/// All uses of every value in the layout, grouped by value.
pub struct Uses {
    start: Vec<u32>,
    uses: Vec<Use>,
}

impl Uses {
    pub fn compute<O: Opcode>(shader: &Shader<'_, O>) -> Uses {
        let n = shader.value_capacity();
        let mut count = vec![0u32; n + 1];
        for (_, i) in shader.insts_in_order() {
            for v in shader.inst(i).operands() {
                if v.index() < n {
                    count[v.index() + 1] += 1;
                }
            }
        }
        for k in 1..=n {
            count[k] += count[k - 1];
        }
        let mut fill = count.clone();
        let mut uses = vec![
            Use {
                inst: Inst(0),
                operand: 0
            };
            count[n] as usize
        ];
        for (_, i) in shader.insts_in_order() {
            for (k, v) in shader.inst(i).operands().enumerate() {
                if v.index() < n {
                    uses[fill[v.index()] as usize] = Use {
                        inst: i,
                        operand: k as u32,
                    };
                    fill[v.index()] += 1;
                }
            }
        }
        Uses { start: count, uses }
    }

    /// The uses of `v`, in layout order.
    pub fn of(&self, v: Value) -> &[Use] {
        match (self.start.get(v.index()), self.start.get(v.index() + 1)) {
            (Some(&a), Some(&b)) => &self.uses[a as usize..b as usize],
            _ => &[],
        }
    }

    pub fn is_used(&self, v: Value) -> bool {
        !self.of(v).is_empty()
    }
}

/// The extra dependencies barrier classes impose inside one block: pairs
/// `(earlier, later)` that a scheduler must keep in order beyond SSA edges.
///
/// Linear: each access depends on the last conflicting write, and a write
/// also on every read since that write.
pub fn ordering_deps<O: Opcode>(shader: &Shader<'_, O>, block: Block) -> Vec<(Inst, Inst)> {
    const CLASSES: [(BarrierClass, BarrierClass); 2] = [
        (BarrierClass::ARRAY_R, BarrierClass::ARRAY_W),
        (BarrierClass::BUFFER_R, BarrierClass::BUFFER_W),
    ];
    let mut deps = Vec::new();
    let mut last_write: [Option<Inst>; 3] = [None; 3];
    let mut reads_since: [Vec<Inst>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for &i in shader.block_insts(block) {
        let class = shader.inst(i).op.effects().barrier;
        // Resource k: 0 = arrays, 1 = buffers, 2 = outputs (write-only).
        for k in 0..3 {
            let (read, write) = if k < 2 {
                (
                    class.intersects(CLASSES[k].0),
                    class.intersects(CLASSES[k].1),
                )
            } else {
                (false, class.intersects(BarrierClass::OUTPUT_W))
            };
            if write {
                deps.extend(last_write[k].map(|w| (w, i)));
                deps.extend(reads_since[k].drain(..).map(|r| (r, i)));
                last_write[k] = Some(i);
            } else if read {
                deps.extend(last_write[k].map(|w| (w, i)));
                reads_since[k].push(i);
            }
        }
    }
    deps.sort_unstable();
    deps.dedup();
    deps
}
