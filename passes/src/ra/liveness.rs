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
///
/// All lists of one kind are in one flat array, block after block: one
/// vector per block cost an allocation (and its regrowth) each, scattered
/// over the heap, which is what a large program paid most for.
#[derive(Default)]
pub struct Liveness {
    live_in: Sets,
    live_out: Sets,
}

/// One list of values per block, in one array.
#[derive(Default)]
struct Sets {
    /// Block `b`'s list is `values[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    values: Vec<Value>,
}

impl Sets {
    /// Lists from (block, value) pairs in value order: a stable counting
    /// sort by block keeps each list sorted by value.
    fn from_pairs(blocks: usize, pairs: &[(u32, Value)]) -> Sets {
        let mut start = vec![0u32; blocks + 1];
        for &(b, _) in pairs {
            start[b as usize + 1] += 1;
        }
        for k in 0..blocks {
            start[k + 1] += start[k];
        }
        let mut at = start.clone();
        let mut values = vec![Value(0); pairs.len()];
        for &(b, v) in pairs {
            let slot = &mut at[b as usize];
            values[*slot as usize] = v;
            *slot += 1;
        }
        Sets { start, values }
    }

    fn of(&self, b: Block) -> &[Value] {
        match (self.start.get(b.index()), self.start.get(b.index() + 1)) {
            (Some(&s), Some(&e)) => &self.values[s as usize..e as usize],
            _ => &[],
        }
    }
}

impl Liveness {
    /// The values live into `b`, sorted.
    pub fn live_in(&self, b: Block) -> &[Value] {
        self.live_in.of(b)
    }

    /// The values live out of `b`, sorted.
    pub fn live_out(&self, b: Block) -> &[Value] {
        self.live_out.of(b)
    }

    /// Liveness for `blocks` blocks from the program's `uses` and the
    /// block defining each value (`u32::MAX`: none), gathered by the
    /// caller in its own walk over the instructions.
    pub fn compute(cfg: &Cfg, blocks: usize, def_block: &[u32], uses: Vec<Use>) -> Liveness {
        let nb = blocks;
        let nv = def_block.len();
        // (block, value) pairs, produced value after value.
        let mut ins: Vec<(u32, Value)> = Vec::with_capacity(uses.len());
        let mut outs: Vec<(u32, Value)> = Vec::with_capacity(uses.len());
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
                    outs.push((b.0, v));
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
                ins.push((x.0, v));
                for &p in cfg.preds(x) {
                    if !cfg.is_reachable(p) {
                        continue;
                    }
                    if out_mark[p.index()] != tag {
                        out_mark[p.index()] = tag;
                        outs.push((p.0, v));
                    }
                    if p.0 != db {
                        work.push(p);
                    }
                }
            }
        }
        Liveness {
            live_in: Sets::from_pairs(nb, &ins),
            live_out: Sets::from_pairs(nb, &outs),
        }
    }
}
