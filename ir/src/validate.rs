//! The validator: the rules every shader must satisfy between passes.
//!
//! Checked: block terminators, CFG shape (reducible, distinct branch
//! targets, an entry without predecessors), SSA (every operand defined
//! once, in the layout, and its definition dominating the use; phi operands
//! dominating the end of their predecessor), phi placement and arity (one
//! incoming value per predecessor, so no phis where there are no
//! predecessors), the meta
//! instructions' rules (collect groups 2..=16 scalars of one type into a
//! vector, split takes a lane of one, input (a scalar or a preloaded
//! register group) only in the entry block, output
//! takes one scalar, no address operands on any of them), and each
//! vocabulary opcode's own operand rules.
//!
//! Blocks the entry cannot reach are allowed (frontends produce them, `dce`
//! removes them); as usual they count as dominated by every block, so the
//! dominance rule holds trivially inside them.

use crate::cfg::{Cfg, DomTree, Loops};
use crate::opcode::{Op, Opcode, Signature};
use crate::printer::{Names, write_inst};
use crate::shader::{Block, Inst, Shader, Value};
use crate::types::Type;
use std::fmt;

/// One broken rule, located at an instruction or a block.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Violation {
    pub block: Option<Block>,
    pub inst: Option<Inst>,
    pub message: String,
    /// The instruction or block as printed (canonical names).
    pub context: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.context.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.context, self.message)
        }
    }
}

/// Every violation found (at most [`ValidationError::MAX`]).
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub struct ValidationError {
    pub violations: Vec<Violation>,
}

impl ValidationError {
    pub const MAX: usize = 32;
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid IR:")?;
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

/// Check a shader; `Ok` when every rule holds.
pub fn validate<O: Opcode>(shader: &Shader<'_, O>) -> Result<(), ValidationError> {
    let mut v = Validator {
        shader,
        names: Names::compute(shader),
        violations: Vec::new(),
        pred_stamp: vec![0; shader.block_capacity()],
        stamp: 0,
    };
    v.run();
    if v.violations.is_empty() {
        Ok(())
    } else {
        Err(ValidationError {
            violations: v.violations,
        })
    }
}

struct Validator<'v, 'a, O> {
    shader: &'v Shader<'a, O>,
    names: Names,
    violations: Vec<Violation>,
    /// Per block: the phi check that last marked it a predecessor.
    pred_stamp: Vec<u32>,
    stamp: u32,
}

impl<O: Opcode> Validator<'_, '_, O> {
    fn at_inst(&mut self, i: Inst, message: impl Into<String>) {
        if self.violations.len() >= ValidationError::MAX {
            return;
        }
        let mut context = String::new();
        let _ = write_inst(self.shader, &self.names, i, &mut context);
        self.violations.push(Violation {
            block: self.shader.inst(i).block,
            inst: Some(i),
            message: message.into(),
            context,
        });
    }

    fn at_block(&mut self, b: Block, message: impl Into<String>) {
        if self.violations.len() >= ValidationError::MAX {
            return;
        }
        self.violations.push(Violation {
            block: Some(b),
            inst: None,
            message: message.into(),
            context: format!("{}:", self.names.block(b)),
        });
    }

    fn run(&mut self) {
        let s = self.shader;
        let Some(entry) = s.entry() else {
            self.violations.push(Violation {
                block: None,
                inst: None,
                message: "shader has no blocks".into(),
                context: String::new(),
            });
            return;
        };
        // Position of each instruction inside its block, for same-block
        // dominance; u32::MAX when not in the layout.
        let mut pos = vec![u32::MAX; s.inst_capacity()];
        let mut seen_block = vec![false; s.block_capacity()];
        for &b in s.layout() {
            if std::mem::replace(&mut seen_block[b.index()], true) {
                self.at_block(b, "block appears twice in the layout");
            }
            for (k, &i) in s.block_insts(b).iter().enumerate() {
                if pos[i.index()] != u32::MAX {
                    self.at_inst(i, "instruction appears twice");
                }
                pos[i.index()] = k as u32;
                if s.inst(i).block != Some(b) {
                    self.at_inst(i, "instruction's block link is stale");
                }
            }
        }
        self.check_block_shapes();
        let cfg = Cfg::compute(s);
        let dom = DomTree::compute(&cfg);
        if !cfg.preds(entry).is_empty() {
            self.at_block(entry, "the entry block has predecessors");
        }
        for &(from, to) in Loops::compute(&cfg, &dom).irreducible_edges() {
            let name = self.names.block(to).to_string();
            self.at_block(
                from,
                format!("edge to {name} makes the control flow irreducible"),
            );
        }
        for &b in s.layout() {
            for (k, &i) in s.block_insts(b).iter().enumerate() {
                self.check_inst(b, k as u32, i, &cfg, &dom, &pos);
            }
        }
    }

    fn check_block_shapes(&mut self) {
        let s = self.shader;
        for &b in s.layout() {
            let insts = s.block_insts(b);
            if insts.is_empty() {
                self.at_block(b, "block is empty (it needs a terminator)");
                continue;
            }
            let mut phis_done = false;
            for (k, &i) in insts.iter().enumerate() {
                let op = s.inst(i).op;
                let last = k + 1 == insts.len();
                if op.is_terminator() && !last {
                    self.at_inst(i, "terminator in the middle of a block");
                }
                if last && !op.is_terminator() {
                    self.at_inst(
                        i,
                        "block does not end in a terminator (jump, branch or ret)",
                    );
                }
                if op.is_phi() {
                    if phis_done {
                        self.at_inst(i, "phi after a non-phi instruction");
                    }
                } else {
                    phis_done = true;
                }
            }
            for &t in s.successors(b) {
                if !s.is_in_layout(t) {
                    let name = self.names.block(t).to_string();
                    self.at_block(b, format!("branches to {name}, which is not in the layout"));
                }
            }
        }
    }

    /// The type of a valid operand, or `None` after reporting it.
    fn operand_type(&mut self, user: Inst, v: Value) -> Option<Type> {
        let s = self.shader;
        if v.index() >= s.value_capacity() {
            self.at_inst(user, format!("operand {v:?} does not exist"));
            return None;
        }
        let def = s.value_def(v);
        if def.index() >= s.inst_capacity() || !s.inst(def).results().any(|r| r == v) {
            self.at_inst(user, format!("operand {v:?} has no defining instruction"));
            return None;
        }
        Some(s.value_type(v))
    }

    #[allow(clippy::too_many_arguments)]
    fn check_inst(&mut self, b: Block, k: u32, i: Inst, cfg: &Cfg, dom: &DomTree, pos: &[u32]) {
        let s = self.shader;
        let data = s.inst(i);
        for r in data.results() {
            if r.index() >= s.value_capacity() || s.value_def(r) != i {
                self.at_inst(i, "result value is not linked back to this instruction");
            }
        }
        if data.second_result.is_some() && !matches!(data.op, Op::Swap) {
            self.at_inst(i, "only swap has a second result");
        }
        // SSA: defined, in the layout, dominating.
        let mut types = Vec::with_capacity(data.args.len());
        for (n, v) in data.operands().enumerate() {
            let Some(ty) = self.operand_type(i, v) else {
                return;
            };
            if n < data.args.len() {
                types.push(ty);
            }
            let def = s.value_def(v);
            let Some(def_block) = s.inst(def).block.filter(|&db| s.is_in_layout(db)) else {
                let name = self.names.value(v).to_string();
                self.at_inst(
                    i,
                    format!("operand {name} is defined by a removed instruction"),
                );
                continue;
            };
            let ok = if data.op.is_phi() && n < data.args.len() {
                // Must dominate the end of the incoming predecessor; an
                // unreachable predecessor is dominated by everything.
                match data.targets.get(n) {
                    Some(&pred) => !cfg.is_reachable(pred) || dom.dominates(def_block, pred),
                    None => true, // arity is reported below
                }
            } else if def_block == b {
                pos[def.index()] < k
            } else {
                dom.dominates(def_block, b)
            };
            if !ok && cfg.is_reachable(b) {
                let name = self.names.value(v).to_string();
                self.at_inst(i, format!("operand {name} does not dominate this use"));
            }
        }
        let result = data.result.map(|r| s.value_type(r));
        if let Err(m) = self.check_op(b, i, &types, result, cfg) {
            self.at_inst(i, m);
        }
    }

    fn check_op(
        &mut self,
        b: Block,
        i: Inst,
        types: &[Type],
        result: Option<Type>,
        cfg: &Cfg,
    ) -> Result<(), String> {
        let s = self.shader;
        let data = s.inst(i);
        let meta_no_address = || {
            if data.address.is_some() {
                Err("only vocabulary opcodes take an address operand".to_string())
            } else {
                Ok(())
            }
        };
        // Two types a phi or collect may join: equal, or on machine IR of
        // one width and lane count.
        let joinable = |a: Type, b: Type| {
            a == b
                || (O::joins_by_width() && a.lanes == b.lanes && a.scalar.bits() == b.scalar.bits())
        };
        let targets = |n: usize| {
            if data.targets.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "needs {n} block target(s), has {}",
                    data.targets.len()
                ))
            }
        };
        match data.op {
            Op::Opcode(o) => {
                targets(0)?;
                o.check(&Signature {
                    operands: types,
                    result,
                    has_address: data.address.is_some(),
                    arrays: s.arrays(),
                })?;
                if let Some(a) = data.address {
                    let t = s.value_type(a);
                    if !(t == Type::I32 || t == Type::U32 || t == Type::I16) {
                        return Err(format!("address operand must be i16, i32 or u32, not {t}"));
                    }
                }
                Ok(())
            }
            Op::Phi => {
                meta_no_address()?;
                let r = result.ok_or("phi needs a result")?;
                if !r.is_scalar() {
                    return Err("phis are scalar".into());
                }
                if types.iter().any(|&t| !joinable(t, r)) {
                    return Err(format!("phi operands must all be {r}"));
                }
                let preds = cfg.preds(b);
                if preds.is_empty() {
                    return Err("phi in a block without predecessors has no incoming value".into());
                }
                if data.args.len() != data.targets.len() || data.targets.len() != preds.len() {
                    return Err(format!(
                        "phi has {} incoming value(s) but the block has {} predecessor(s)",
                        data.targets.len(),
                        preds.len()
                    ));
                }
                // Stamp this block's predecessors, then cross each incoming
                // block off once: linear however many predecessors there are.
                self.stamp += 1;
                let stamp = self.stamp;
                for p in preds {
                    self.pred_stamp[p.index()] = stamp;
                }
                let mut bad = None;
                for t in data.targets.iter() {
                    match self.pred_stamp.get_mut(t.index()) {
                        Some(mark) if *mark == stamp => *mark = 0,
                        _ => {
                            bad = Some(*t);
                            break;
                        }
                    }
                }
                match bad {
                    Some(t) => Err(format!(
                        "phi incoming block {} is not a distinct predecessor",
                        self.names.block(t)
                    )),
                    None => Ok(()),
                }
            }
            Op::Collect => {
                meta_no_address()?;
                targets(0)?;
                let r = result.ok_or("collect needs a result")?;
                let first = types.first().ok_or("collect needs operands")?;
                if types.len() < 2 || types.len() > Type::MAX_LANES as usize {
                    return Err(format!("collect groups 2..={} scalars", Type::MAX_LANES));
                }
                if types.iter().any(|&t| !joinable(t, *first)) || !first.is_scalar() {
                    return Err("collect operands must be scalars of one type".into());
                }
                if !joinable(r, Type::vector(first.scalar, types.len() as u8)) {
                    return Err(format!(
                        "collect of {} {} gives {}x{}",
                        types.len(),
                        first,
                        first,
                        types.len()
                    ));
                }
                Ok(())
            }
            Op::Swap => {
                meta_no_address()?;
                targets(0)?;
                let [x, y] = types else {
                    return Err("swap takes two scalars".into());
                };
                if !x.is_scalar() || !y.is_scalar() || x.scalar.bits() != y.scalar.bits() {
                    return Err(format!(
                        "swap exchanges two scalars of one width, not {x} and {y}"
                    ));
                }
                let second = data.second_result.map(|v| s.value_type(v));
                if result != Some(*x) || second != Some(*y) {
                    return Err(format!("swap of {x} and {y} gives `%a:{x}, %b:{y}`"));
                }
                // Allocated: the values trade registers.
                let reg = |v: Value| s.value_reg(v);
                if let (Some(a), Some(b)) = (data.result, data.second_result)
                    && let Some(rx) = reg(data.args[0])
                    && (reg(a) != reg(data.args[1]) || reg(b) != Some(rx))
                {
                    return Err("swap's results must take each other's operand registers".into());
                }
                Ok(())
            }
            Op::Split { lane } => {
                meta_no_address()?;
                targets(0)?;
                let [src] = types else {
                    return Err("split takes one vector operand".into());
                };
                if !src.is_vector() || lane >= src.lanes {
                    return Err(format!("lane {lane} is not in {src}"));
                }
                if result != Some(Type::scalar(src.scalar)) {
                    return Err(format!("split of {src} gives {}", src.scalar.name()));
                }
                Ok(())
            }
            Op::Input { .. } => {
                meta_no_address()?;
                targets(0)?;
                if s.entry() != Some(b) {
                    return Err(
                        "input reads a preloaded register: only the entry block has them".into(),
                    );
                }
                // A vector input is a preloaded register group (ir3's
                // barycentric pairs).
                if !types.is_empty() || result.is_none() {
                    return Err("input has no operands and a result".into());
                }
                Ok(())
            }
            Op::Output { .. } => {
                meta_no_address()?;
                targets(0)?;
                if types.len() != 1 || !types[0].is_scalar() || result.is_some() {
                    return Err("output takes one scalar and has no result".into());
                }
                Ok(())
            }
            Op::Jump | Op::Return | Op::Branch => {
                meta_no_address()?;
                if result.is_some() {
                    return Err("terminators have no result".into());
                }
                match data.op {
                    Op::Jump => {
                        targets(1)?;
                        if !types.is_empty() {
                            return Err("jump takes no operands".into());
                        }
                    }
                    Op::Return => {
                        targets(0)?;
                        if !types.is_empty() {
                            return Err("ret takes no operands".into());
                        }
                    }
                    _ => {
                        targets(2)?;
                        if types != [Type::BOOL] {
                            return Err("branch takes one bool condition".into());
                        }
                        if data.targets[0] == data.targets[1] {
                            return Err("branch targets must differ".into());
                        }
                    }
                }
                Ok(())
            }
        }
    }
}
