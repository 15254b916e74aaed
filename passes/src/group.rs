//! `group`: register groups (the ir3 notes' grouping pass). The sources of
//! a `collect` must land in consecutive registers, and so do the lanes a
//! `split` takes out of a vector. This pass gives every grouped value its
//! left and right neighbour, and where one value would need two places (it
//! feeds two collects, or one collect twice, or it already has a place as
//! a split lane, a phi, a preloaded input or another vector) it inserts a
//! copy (the target's [`TargetFacts::copy`]) right before the collect and
//! groups the copy instead. Split lanes gathered again in their order
//! need none: that group lies inside their vector's. Afterwards every value sits in at most one
//! group at one lane, so an assignment satisfying all groups always exists
//! (given enough registers: each group in its own range).
//!
//! [`group`] is the entry point; it returns the neighbours.
//!
//! ```
//! use lathe_ir::{GenericOp, Shader};
//! use lathe_passes::{group, target::test_target::TestTarget};
//!
//! let arena = bumpalo::Bump::new();
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_input slot=0 comp=1 interp=smooth\n  %2:f32x2 = collect %0, %1\n  %3:f32x2 = collect %1, %0\n  %4:f32x4 = sample texture=0 sampler=0 %2\n  %5:f32x4 = sample texture=0 sampler=0 %3\n  %6:f32 = split lane=0 %4\n  %7:f32 = split lane=0 %5\n  store_output slot=0 comp=0 %6\n  store_output slot=0 comp=1 %7\n  ret\n";
//! let mut shader: Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
//! let groups = group::group(&mut shader, &TestTarget::realistic());
//! // The second collect needs %0 and %1 in the other order: both are copied.
//! assert_eq!(groups.copies, 2);
//! lathe_ir::validate(&shader).unwrap();
//! ```

use lathe_ir::{Block, Inst, Op, Opcode, Shader, Value};

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;

/// The neighbours of every grouped value.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    /// Per value: its left neighbour's number plus one (0: none). Zero
    /// means none so that the tables start as fresh zeroed memory.
    left: Vec<u32>,
    right: Vec<u32>,
    /// Copies inserted to resolve conflicts.
    pub copies: usize,
}

impl Groups {
    /// The value that must sit in the register just below `v`'s.
    pub fn left(&self, v: Value) -> Option<Value> {
        Self::neighbour(&self.left, v)
    }

    /// The value that must sit in the register just above `v`'s.
    pub fn right(&self, v: Value) -> Option<Value> {
        Self::neighbour(&self.right, v)
    }

    fn neighbour(table: &[u32], v: Value) -> Option<Value> {
        match table.get(v.index()).copied() {
            None | Some(0) => None,
            Some(n) => Some(Value(n - 1)),
        }
    }

    /// Makes `b` the right neighbour of `a`.
    fn link(&mut self, a: Value, b: Value) {
        self.right[a.index()] = b.0 + 1;
        self.left[b.index()] = a.0 + 1;
    }
}

/// Groups the operands of every `collect` and the lanes of every `split`,
/// inserting copies where a value would need two places.
///
/// One walk over the shader: a block's instruction list is rebuilt only
/// when copies go into it, and a value's own place (split lane, phi,
/// input, vector) is read off its definition when a collect asks.
pub fn group<O: Opcode>(shader: &mut Shader<'_, O>, target: &dyn TargetFacts<O>) -> Groups {
    let n = shader.value_capacity();
    let mut g = Groups {
        left: vec![0; n],
        right: vec![0; n],
        copies: 0,
    };
    // Values given a place in a collect's group so far.
    let mut claimed = vec![false; n];
    // Split lanes by vector: (vector, lane, value).
    let mut lanes: Vec<(Value, u8, Value)> = Vec::new();
    let blocks: Vec<Block> = shader.layout().to_vec();
    for b in blocks {
        // The block's new list, once a copy has gone into it.
        let mut rebuilt: Option<Vec<Inst>> = None;
        for at in 0..shader.block_insts(b).len() {
            let i = shader.block_insts(b)[at];
            match shader.inst(i).op {
                Op::Collect => {
                    let args: Vec<Value> = shader.inst(i).args.to_vec();
                    let mut fixed = args.clone();
                    let lanes_in_order = regroups_lanes(shader, &args);
                    for (k, &v) in args.iter().enumerate() {
                        let twice_here = args[..k].contains(&v);
                        let own_place = !lanes_in_order && has_own_place(shader, v);
                        if claimed[v.index()] || own_place || twice_here {
                            let ty = shader.value_type(v);
                            let c = shader.create_inst(
                                Op::Opcode(target.copy(ty)),
                                &[v],
                                &[],
                                None,
                                Some(ty),
                            );
                            rebuilt
                                .get_or_insert_with(|| {
                                    // Room for a copy per four instructions, so the list is
                                    // rarely regrown.
                                    let old = shader.block_insts(b);
                                    let mut list = Vec::with_capacity(old.len() + old.len() / 4);
                                    list.extend_from_slice(&old[..at]);
                                    list
                                })
                                .push(c);
                            g.copies += 1;
                            let r = shader.inst(c).result.expect("copy result");
                            let n = shader.value_capacity();
                            claimed.resize(n, false);
                            g.left.resize(n, 0);
                            g.right.resize(n, 0);
                            claimed[r.index()] = true;
                            fixed[k] = r;
                        } else {
                            claimed[v.index()] = true;
                        }
                    }
                    if fixed != args {
                        shader.set_args(i, &fixed);
                    }
                    for w in fixed.windows(2) {
                        g.link(w[0], w[1]);
                    }
                }
                Op::Split { lane } => {
                    let d = shader.inst(i);
                    if let (Some(&v), Some(r)) = (d.args.first(), d.result) {
                        lanes.push((v, lane, r));
                    }
                }
                _ => {}
            }
            if let Some(list) = &mut rebuilt {
                list.push(i);
            }
        }
        if let Some(list) = rebuilt {
            shader.set_block_insts(b, &list);
        }
    }
    lanes.sort_unstable_by_key(|&(v, lane, _)| (v, lane));
    for w in lanes.windows(2) {
        let ((v0, l0, a), (v1, l1, b)) = (w[0], w[1]);
        if v0 == v1 && l1 == l0 + 1 {
            g.link(a, b);
        }
    }
    g
}

/// Whether `args` are consecutive lanes of one vector in order (split
/// lanes regathered): their group lies inside the vector's, so each lane
/// keeps its one place and needs no copy.
fn regroups_lanes<O: Opcode>(shader: &Shader<'_, O>, args: &[Value]) -> bool {
    let split = |v: Value| {
        let d = shader.inst(shader.value_def(v));
        match (d.op, d.args.first()) {
            (Op::Split { lane }, Some(&vector)) => Some((vector, u32::from(lane))),
            _ => None,
        }
    };
    let Some((vector, first)) = args.first().and_then(|&v| split(v)) else {
        return false;
    };
    (0..)
        .zip(args)
        .all(|(k, &v)| split(v) == Some((vector, first + k)))
}

/// Whether `v` has a place of its own that a collect cannot move: a split
/// lane, a phi, a preloaded input, a collect's vector or any vector.
fn has_own_place<O: Opcode>(shader: &Shader<'_, O>, v: Value) -> bool {
    matches!(
        shader.inst(shader.value_def(v)).op,
        Op::Split { .. } | Op::Phi | Op::Input { .. } | Op::Collect
    ) || shader.value_type(v).is_vector()
}

/// The `group` pass.
pub struct Group<O> {
    target: std::rc::Rc<dyn TargetFacts<O>>,
    /// The neighbours found by the last run.
    pub last: Groups,
}

impl<O: Opcode> Group<O> {
    pub fn new(target: std::rc::Rc<dyn TargetFacts<O>>) -> Self {
        Group {
            target,
            last: Groups::default(),
        }
    }
}

impl<O: Opcode> Pass<O> for Group<O> {
    fn name(&self) -> &'static str {
        "group"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        self.last = group(shader, &*self.target);
        Ok(self.last.copies > 0)
    }
}
