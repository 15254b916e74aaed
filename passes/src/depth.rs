//! `depth`: how many cycles into its block each instruction can issue at
//! the earliest, from the target's latencies (the ir3 notes' depth pass).
//!
//! An instruction's depth is the largest, over the operands defined in
//! the same block, of the producer's depth plus the target's latency
//! between the two plus one; meta instructions (phi, collect, split,
//! input, output) take no cycle and add no latency, so a value passes
//! through them at its producer's depth. Values from other blocks are
//! ready at depth 0. [`depths`] is the entry point; the scheduler uses
//! it, and the `depth` pass computes it on its own for `--print-after-all`
//! style inspection (it never changes the shader).
//!
//! ```
//! use lathe_ir::{GenericOp, Shader};
//! use lathe_passes::{depth, target::test_target::TestTarget};
//!
//! let arena = bumpalo::Bump::new();
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = fadd %0, %0\n  %2:f32 = fmul %1, %0\n  store_output slot=0 comp=0 %2\n  ret\n";
//! let shader: Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
//! let mut target = TestTarget::realistic();
//! target.alu_latency = 3;
//! let d = depth::depths(&shader, &target);
//! let insts: Vec<_> = shader.block_insts(shader.entry().unwrap()).to_vec();
//! // load_input issues at cycle 0 (depth 1); fadd 3 cycles later; fmul 3 after
//! // fadd; the store after fmul; `ret` depends on nothing in the block.
//! assert_eq!(insts.iter().map(|&i| d.of(i)).collect::<Vec<_>>(), [1, 5, 9, 13, 1]);
//! ```

use lathe_ir::{Inst, Op, Opcode, Shader};

use crate::manager::{Pass, PassFailure};
use crate::target::TargetFacts;

/// Depths of every instruction, indexed by instruction.
#[derive(Clone, Debug, Default)]
pub struct Depths {
    depth: Vec<u32>,
}

impl Depths {
    /// The depth of `inst` (0 for instructions not in a block).
    pub fn of(&self, inst: Inst) -> u32 {
        self.depth.get(inst.index()).copied().unwrap_or(0)
    }
}

/// Whether `op` is a meta instruction: no machine instruction, no cycle.
pub fn is_meta<O>(op: &Op<O>) -> bool {
    matches!(
        op,
        Op::Phi | Op::Collect | Op::Split { .. } | Op::Input { .. } | Op::Output { .. }
    )
}

/// The depth of every instruction of `shader`, block by block.
pub fn depths<O: Opcode>(shader: &Shader<'_, O>, target: &dyn TargetFacts<O>) -> Depths {
    let mut depth = vec![0u32; shader.inst_capacity()];
    for &block in shader.layout() {
        for &i in shader.block_insts(block) {
            let data = shader.inst(i);
            let meta = is_meta(&data.op);
            let mut ready = 0u32;
            if !data.op.is_phi() {
                for (k, v) in data.operands().enumerate() {
                    let def = shader.value_def(v);
                    let producer = shader.inst(def);
                    if producer.block != Some(block) {
                        continue;
                    }
                    let wait = if meta || is_meta(&producer.op) {
                        0
                    } else {
                        target.latency(&producer.op, &data.op, k)
                    };
                    ready = ready.max(depth[def.index()] + wait);
                }
            }
            depth[i.index()] = ready + u32::from(!meta);
        }
    }
    Depths { depth }
}

/// The `depth` pass: computes [`depths`] and keeps them (the shader is
/// left as it is).
pub struct Depth<O> {
    target: std::rc::Rc<dyn TargetFacts<O>>,
    /// The depths of the last run.
    pub last: Depths,
}

impl<O: Opcode> Depth<O> {
    pub fn new(target: std::rc::Rc<dyn TargetFacts<O>>) -> Self {
        Depth {
            target,
            last: Depths::default(),
        }
    }
}

impl<O: Opcode> Pass<O> for Depth<O> {
    fn name(&self) -> &'static str {
        "depth"
    }

    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure> {
        self.last = depths(shader, &*self.target);
        Ok(false)
    }
}
