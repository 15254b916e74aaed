//! SSA construction for function-local variables while the CFG is being
//! built: Braun, Buchwald, Hack, Leißa, Mallon and Zwinkau, "Simple and
//! Efficient Construction of Static Single Assignment Form" (CC 2013).
//!
//! Every scalar leaf of a local variable is one SSA variable. A block is
//! *sealed* once all its predecessors are known; reading a variable in an
//! unsealed block places an operandless phi that is completed at sealing.
//! Phis are detached instructions kept per block and spliced in front of
//! the block's instructions at the end; trivial phis (all operands the same
//! value or the phi itself) are then replaced by that value.

use lathe_ir::{Block, GenericOp, Inst, Op, Shader, Type, Value};
use rustc_hash::FxHashMap as HashMap;

/// Identifies one SSA variable (a scalar leaf of some local variable).
pub type Var = u32;

#[derive(Default)]
struct BlockState {
    sealed: bool,
    /// How many predecessors the block will have (`u32::MAX`: sealed by hand).
    expected: u32,
    preds: Vec<Block>,
    incomplete: Vec<(Var, Value)>,
    phis: Vec<Inst>,
}

struct Phi {
    block: Block,
    operands: Vec<(Value, Block)>,
}

pub struct Ssa {
    var_types: Vec<Type>,
    defs: HashMap<(Var, Block), Value>,
    blocks: Vec<BlockState>,
    phis: HashMap<Value, Phi>,
    /// Zero constants standing for undefined values, by type.
    undef: HashMap<Type, Value>,
    /// Detached instructions to place at the top of the entry block.
    pub prologue: Vec<Inst>,
}

impl Ssa {
    pub fn new() -> Ssa {
        Ssa {
            var_types: Vec::new(),
            defs: HashMap::default(),
            blocks: Vec::new(),
            phis: HashMap::default(),
            undef: HashMap::default(),
            prologue: Vec::new(),
        }
    }

    pub fn new_var(&mut self, ty: Type) -> Var {
        self.var_types.push(ty);
        (self.var_types.len() - 1) as Var
    }

    pub fn var_type(&self, v: Var) -> Type {
        self.var_types[v as usize]
    }

    fn state(&mut self, b: Block) -> &mut BlockState {
        if self.blocks.len() <= b.index() {
            self.blocks.resize_with(b.index() + 1, || BlockState {
                expected: u32::MAX,
                ..BlockState::default()
            });
        }
        &mut self.blocks[b.index()]
    }

    /// Declare how many predecessor edges `b` will get; it seals itself when
    /// the last one is added.
    pub fn expect_preds(&mut self, shader: &mut Shader<'_, GenericOp>, b: Block, n: u32) {
        let st = self.state(b);
        st.expected = n;
        if st.preds.len() as u32 >= n && !st.sealed {
            self.seal(shader, b);
        }
    }

    /// Record the CFG edge `from -> to`.
    pub fn edge(&mut self, shader: &mut Shader<'_, GenericOp>, from: Block, to: Block) {
        let st = self.state(to);
        st.preds.push(from);
        if st.preds.len() as u32 == st.expected && !st.sealed {
            self.seal(shader, to);
        }
    }

    /// The predecessors recorded so far for `block`.
    pub fn preds(&self, block: Block) -> &[Block] {
        self.blocks
            .get(block.index())
            .map_or(&[], |st| st.preds.as_slice())
    }

    pub fn write(&mut self, var: Var, block: Block, v: Value) {
        self.defs.insert((var, block), v);
    }

    pub fn read(&mut self, shader: &mut Shader<'_, GenericOp>, var: Var, block: Block) -> Value {
        if let Some(&v) = self.defs.get(&(var, block)) {
            return v;
        }
        self.read_recursive(shader, var, block)
    }

    fn read_recursive(
        &mut self,
        shader: &mut Shader<'_, GenericOp>,
        var: Var,
        block: Block,
    ) -> Value {
        let ty = self.var_types[var as usize];
        let v = if !self.state(block).sealed {
            let phi = self.new_phi(shader, block, ty);
            self.state(block).incomplete.push((var, phi));
            phi
        } else {
            let preds = self.state(block).preds.clone();
            match preds.as_slice() {
                [] => self.undef(shader, ty),
                [p] => self.read(shader, var, *p),
                _ => {
                    let phi = self.new_phi(shader, block, ty);
                    self.write(var, block, phi);
                    self.add_operands(shader, var, phi);
                    phi
                }
            }
        };
        self.write(var, block, v);
        v
    }

    fn new_phi(&mut self, shader: &mut Shader<'_, GenericOp>, block: Block, ty: Type) -> Value {
        let i = shader.create_inst(Op::Phi, &[], &[], None, Some(ty));
        let v = shader.inst(i).result.unwrap_or(Value(u32::MAX));
        self.state(block).phis.push(i);
        self.phis.insert(
            v,
            Phi {
                block,
                operands: Vec::new(),
            },
        );
        v
    }

    /// A phi made by the caller (a SPIR-V `OpPhi` leaf), spliced like ours.
    pub fn add_phi(&mut self, shader: &mut Shader<'_, GenericOp>, block: Block, ty: Type) -> Value {
        self.new_phi(shader, block, ty)
    }

    pub fn set_phi_operands(&mut self, phi: Value, operands: Vec<(Value, Block)>) {
        if let Some(p) = self.phis.get_mut(&phi) {
            p.operands = operands;
        }
    }

    fn add_operands(&mut self, shader: &mut Shader<'_, GenericOp>, var: Var, phi: Value) {
        let block = self.phis[&phi].block;
        let preds = self.state(block).preds.clone();
        let mut ops = Vec::with_capacity(preds.len());
        for p in preds {
            ops.push((self.read(shader, var, p), p));
        }
        if let Some(p) = self.phis.get_mut(&phi) {
            p.operands = ops;
        }
    }

    pub fn seal(&mut self, shader: &mut Shader<'_, GenericOp>, block: Block) {
        let pending = std::mem::take(&mut self.state(block).incomplete);
        self.state(block).sealed = true;
        for (var, phi) in pending {
            self.add_operands(shader, var, phi);
        }
    }

    /// A zero constant of `ty` standing for an undefined value.
    pub fn undef(&mut self, shader: &mut Shader<'_, GenericOp>, ty: Type) -> Value {
        if let Some(&v) = self.undef.get(&ty) {
            return v;
        }
        let i = shader.create_inst(
            Op::Opcode(GenericOp::Const { bits: 0 }),
            &[],
            &[],
            None,
            Some(ty),
        );
        let v = shader.inst(i).result.unwrap_or(Value(u32::MAX));
        self.prologue.push(i);
        self.undef.insert(ty, v);
        v
    }

    /// Remove trivial phis, write the others' operands, and splice phis and
    /// the prologue into their blocks.
    pub fn finish(mut self, shader: &mut Shader<'_, GenericOp>, entry: Block) {
        let mut alias: HashMap<Value, Value> = HashMap::default();
        fn resolve(alias: &HashMap<Value, Value>, mut v: Value) -> Value {
            while let Some(&a) = alias.get(&v) {
                v = a;
            }
            v
        }
        let mut order: Vec<Value> = self.phis.keys().copied().collect();
        order.sort();
        loop {
            let mut changed = false;
            for &phi in &order {
                if alias.contains_key(&phi) {
                    continue;
                }
                let mut same: Option<Value> = None;
                let mut trivial = true;
                for &(op, _) in &self.phis[&phi].operands {
                    let op = resolve(&alias, op);
                    if op == phi || Some(op) == same {
                        continue;
                    }
                    if same.is_some() {
                        trivial = false;
                        break;
                    }
                    same = Some(op);
                }
                if trivial {
                    let ty = shader.value_type(phi);
                    let to = match same {
                        Some(v) => v,
                        None => self.undef(shader, ty),
                    };
                    alias.insert(phi, to);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for &phi in &order {
            if alias.contains_key(&phi) {
                continue;
            }
            let p = &self.phis[&phi];
            let vals: Vec<Value> = p
                .operands
                .iter()
                .map(|&(v, _)| resolve(&alias, v))
                .collect();
            let blocks: Vec<Block> = p.operands.iter().map(|&(_, b)| b).collect();
            let inst = shader.value_def(phi);
            shader.set_args(inst, &vals);
            shader.set_targets(inst, &blocks);
        }
        for b in 0..self.blocks.len() {
            let block = Block(b as u32);
            let mut front: Vec<Inst> = self.blocks[b]
                .phis
                .iter()
                .copied()
                .filter(|&i| {
                    shader
                        .inst(i)
                        .result
                        .is_some_and(|v| !alias.contains_key(&v))
                })
                .collect();
            if block == entry {
                front.extend_from_slice(&self.prologue);
            }
            if front.is_empty() || !shader.is_in_layout(block) {
                continue;
            }
            front.extend_from_slice(shader.block_insts(block));
            shader.set_block_insts(block, &front);
        }
        if !alias.is_empty() {
            shader.rewrite_operands(|v| resolve(&alias, v));
        }
    }
}
