//! SSA liveness: the values live into and out of each block, found by
//! walking each use back to its definition (linear in the total size of the
//! live ranges, no per-block bit sets).

use lathe_ir::{Block, Cfg, Opcode, Shader, Value};

/// Live-in and live-out values of every block (phi results are not
/// live-in: they are defined at the block's top; phi operands are live out
/// of the predecessor they come from).
pub struct Liveness {
    pub live_in: Vec<Vec<Value>>,
    pub live_out: Vec<Vec<Value>>,
}

impl Liveness {
    pub fn compute<O: Opcode>(shader: &Shader<'_, O>, cfg: &Cfg) -> Liveness {
        let nb = shader.block_capacity();
        let nv = shader.value_capacity();
        let mut def_block = vec![None; nv];
        for &b in cfg.rpo() {
            for &i in shader.block_insts(b) {
                if let Some(r) = shader.inst(i).result {
                    def_block[r.index()] = Some(b);
                }
            }
        }
        // Uses per value: (block where the value must be live at the end,
        // or live in).
        let mut live_in = vec![Vec::new(); nb];
        let mut live_out = vec![Vec::new(); nb];
        // The last value that marked a block, so each is marked once.
        let mut in_mark = vec![u32::MAX; nb];
        let mut out_mark = vec![u32::MAX; nb];
        let mut uses: Vec<(Value, Block, bool)> = Vec::new();
        for &b in cfg.rpo() {
            for &i in shader.block_insts(b) {
                let d = shader.inst(i);
                if d.op.is_phi() {
                    for (&v, &p) in d.args.iter().zip(d.targets.iter()) {
                        uses.push((v, p, true));
                    }
                } else {
                    for v in d.operands() {
                        uses.push((v, b, false));
                    }
                }
            }
        }
        // Grouped by value with a counting sort (linear, one sequential
        // pass each way, where a comparison sort grew with the program).
        let mut start = vec![0u32; nv + 1];
        for u in &uses {
            start[u.0.index() + 1] += 1;
        }
        for k in 0..nv {
            start[k + 1] += start[k];
        }
        let mut sorted = vec![(Value(0), Block(0), false); uses.len()];
        for u in uses {
            let at = &mut start[u.0.index()];
            sorted[*at as usize] = u;
            *at += 1;
        }
        let uses = sorted;
        let mut work: Vec<Block> = Vec::new();
        for (v, b, at_end) in uses {
            let Some(db) = def_block.get(v.index()).copied().flatten() else {
                continue;
            };
            let tag = v.0;
            if at_end {
                // Live out of the phi's predecessor.
                if out_mark[b.index()] != tag {
                    out_mark[b.index()] = tag;
                    live_out[b.index()].push(v);
                }
                if db != b {
                    work.push(b);
                }
            } else if db != b {
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
                    if p != db {
                        work.push(p);
                    }
                }
            }
        }
        Liveness { live_in, live_out }
    }
}
