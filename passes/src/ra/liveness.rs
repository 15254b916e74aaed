//! SSA liveness: the values live into and out of each block, found by
//! walking each use back to its definition (linear in the total size of the
//! live ranges, no per-block bit sets).

use lathe_ir::{Block, Cfg, Value};

/// A use liveness starts from: its value is live into a block (an
/// ordinary operand), or live out of one (a phi operand, read at the end
/// of the predecessor it comes from).
#[derive(Clone, Copy)]
pub struct Use {
    value: Value,
    /// The block, with [`Use::OUT`] set for a phi operand.
    block: u32,
}

impl Use {
    const OUT: u32 = 1 << 31;

    pub fn live_in(value: Value, block: Block) -> Use {
        Use {
            value,
            block: block.0,
        }
    }

    pub fn live_out(value: Value, block: Block) -> Use {
        Use {
            value,
            block: block.0 | Use::OUT,
        }
    }
}

/// Live-in and live-out values of every block, each list sorted by value
/// (phi results are not live-in: they are defined at the block's top; phi
/// operands are live out of the predecessor they come from).
pub struct Liveness {
    pub live_in: Vec<Vec<Value>>,
    pub live_out: Vec<Vec<Value>>,
}

impl Liveness {
    /// Liveness for `blocks` blocks from the program's `uses` and the
    /// block defining each value (`u32::MAX`: none), gathered by the
    /// caller in its own walk over the instructions.
    pub fn compute(cfg: &Cfg, blocks: usize, def_block: &[u32], uses: Vec<Use>) -> Liveness {
        let nb = blocks;
        let nv = def_block.len();
        let mut live_in = vec![Vec::new(); nb];
        let mut live_out = vec![Vec::new(); nb];
        // The last value that marked a block, so each is marked once.
        let mut in_mark = vec![u32::MAX; nb];
        let mut out_mark = vec![u32::MAX; nb];
        // Grouped by value with a counting sort (linear, one sequential
        // pass each way, where a comparison sort grew with the program).
        let mut start = vec![0u32; nv + 1];
        for u in &uses {
            start[u.value.index() + 1] += 1;
        }
        for k in 0..nv {
            start[k + 1] += start[k];
        }
        let mut sorted = vec![Use::live_in(Value(0), Block(0)); uses.len()];
        for u in uses {
            let at = &mut start[u.value.index()];
            sorted[*at as usize] = u;
            *at += 1;
        }
        let mut work: Vec<Block> = Vec::new();
        for Use { value: v, block } in sorted {
            let Some(&db) = def_block.get(v.index()).filter(|&&d| d != u32::MAX) else {
                continue;
            };
            let (b, at_end) = (Block(block & !Use::OUT), block & Use::OUT != 0);
            let tag = v.0;
            if at_end {
                // Live out of the phi's predecessor.
                if out_mark[b.index()] != tag {
                    out_mark[b.index()] = tag;
                    live_out[b.index()].push(v);
                }
            }
            if db != b.0 {
                work.push(b);
            }
            while let Some(x) = work.pop() {
                if in_mark[x.index()] == tag {
                    continue;
                }
                in_mark[x.index()] = tag;
                live_in[x.index()].push(v);
                for &p in cfg.preds(x) {
                    if !cfg.is_reachable(p) {
                        continue;
                    }
                    if out_mark[p.index()] != tag {
                        out_mark[p.index()] = tag;
                        live_out[p.index()].push(v);
                    }
                    if p.0 != db {
                        work.push(p);
                    }
                }
            }
        }
        Liveness { live_in, live_out }
    }
}
