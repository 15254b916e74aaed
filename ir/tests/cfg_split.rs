//! `Cfg::split_edges` updates the graph in place after critical edges are
//! split; it must agree with computing the graph again from the shader.

use lathe_ir::{Block, Bump, Cfg, DomTree, GenericOp, Op, Shader, parse};

/// A loop whose latch branches back to the header or out, and a branch
/// into a join that another block also enters: both are critical edges,
/// one of them a back edge, one a repeated target.
const TEXT: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:bool = input index=1
  branch %1, b1, b3
b1:
  %2:u32 = phi [%0, b0], [%3, b2]
  jump b2
b2:
  %3:u32 = iadd %2, %2
  %4:bool = ilt %3, %0
  branch %4, b1, b3
b3:
  %5:u32 = phi [%0, b0], [%3, b2]
  %6:bool = input index=2
  branch %6, b4, b4
b4:
  %7:u32 = phi [%5, b3], [%5, b3]
  output index=0 %7
  ret
";

/// Split every edge out of a block with several successors, as the
/// register allocator does, and note the splits.
fn split_all(s: &mut Shader<'_, GenericOp>, cfg: &Cfg) -> Vec<(Block, usize, Block)> {
    let mut splits = Vec::new();
    for &b in cfg.rpo() {
        let Some(term) = s.terminator(b) else {
            continue;
        };
        let targets = cfg.succs(b).to_vec();
        if targets.len() < 2 {
            continue;
        }
        for (k, &t) in targets.iter().enumerate() {
            let n = s.add_block();
            s.append_inst(n, Op::Jump, &[], &[t], None, None);
            s.inst_mut(term).targets[k] = n;
            splits.push((b, k, n));
        }
    }
    splits
}

fn sorted(list: &[Block]) -> Vec<Block> {
    let mut v = list.to_vec();
    v.sort();
    v
}

#[test]
fn split_edges_agrees_with_a_fresh_graph() {
    let arena = Bump::new();
    let mut s: Shader<GenericOp> = parse(&arena, TEXT).unwrap();
    let mut cfg = Cfg::compute(&s);
    let splits = split_all(&mut s, &cfg);
    assert_eq!(splits.len(), 6);
    cfg.split_edges(&splits);
    let fresh = Cfg::compute(&s);
    let dom = DomTree::compute(&fresh);
    assert_eq!(sorted(cfg.rpo()), sorted(fresh.rpo()));
    for &b in fresh.rpo() {
        assert_eq!(cfg.succs(b), fresh.succs(b), "successors of {b:?}");
        // Predecessor order may differ (new blocks are last in the layout).
        assert_eq!(
            sorted(cfg.preds(b)),
            sorted(fresh.preds(b)),
            "preds of {b:?}"
        );
        // A reverse post-order: every edge that is not a back edge goes
        // forward, and every block comes after its dominators.
        let at = cfg.rpo_index(b).unwrap();
        for &t in cfg.succs(b) {
            if !dom.dominates(t, b) {
                assert!(at < cfg.rpo_index(t).unwrap(), "edge {b:?} -> {t:?}");
            }
        }
    }
    // Each split block follows the block it was split from.
    for &(from, _, new) in &splits {
        assert!(cfg.rpo_index(from).unwrap() < cfg.rpo_index(new).unwrap());
    }
}
