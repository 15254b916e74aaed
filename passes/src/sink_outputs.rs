//! `sink-outputs`: each output written once, where the shader returns.
//!
//! A shader's output is what the last `store_output` of its slot (or meta
//! `output` of its index) left when the invocation returns, on whichever
//! path it took. Targets that read outputs from registers when the program
//! ends (ir3, Valhall) need every output's final value live in one
//! register at the end, so [`sink_outputs`] turns the stores of each
//! output into an SSA value carried to the return — phis where paths
//! join, a zero where a path stores nothing (there the output is
//! undefined: the interpreter reports none) — and writes each output once,
//! in order of first store, just before the one `ret` (several returns
//! first jump to one new exit block). Stores of one output with different
//! types of one width are reinterpreted to the first store's type with a
//! `mov`; different widths are `unsupported:`.
//!
//! ```
//! use lathe_ir::GenericOp;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = const 0.0\n  %2:bool = flt %0, %1\n  store_output slot=0 comp=0 %0\n  branch %2, b1, b2\nb1:\n  store_output slot=0 comp=0 %1\n  jump b2\nb2:\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! lathe_passes::sink_outputs::sink_outputs(&mut shader).unwrap();
//! let out = lathe_ir::print(&shader);
//! // One store, in the returning block, of the value the paths join.
//! assert_eq!(out.matches("store_output").count(), 1, "{out}");
//! assert!(out.contains("phi"), "{out}");
//! ```

use lathe_ir::{Block, Cfg, GenericOp, Inst, Op, Shader, Type, Value};

/// Why the outputs could not be sunk.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// A store of an output whose width differs from its first store's.
    #[error("unsupported: {port} is stored as {first} and as {other} (different widths)")]
    MixedWidths {
        port: String,
        first: Type,
        other: Type,
    },
    /// The entry block is a loop header: no edge brings the value an
    /// output has before the shader runs.
    #[error("unsupported: outputs stored in a loop through the entry block")]
    EntryLoop,
}

/// Rewrites `shader` so that each output is written once, before its only
/// `ret`. Shaders that never return are left as they are.
pub fn sink_outputs(shader: &mut Shader<'_, GenericOp>) -> Result<(), SinkError> {
    let Some(entry) = shader.entry() else {
        return Ok(());
    };
    let mut s = Sinker {
        ports: Vec::new(),
        local: vec![Vec::new(); shader.block_capacity()],
        entry_value: Vec::new(),
        undef: Vec::new(),
        phis: Vec::new(),
        visiting: vec![false; shader.block_capacity()],
        entry,
    };
    s.collect(shader)?;
    if s.ports.is_empty() {
        return Ok(());
    }
    let Some(exit) = single_exit(shader) else {
        return Ok(());
    };
    // The exit block may be new.
    s.local.resize(shader.block_capacity(), Vec::new());
    s.visiting.resize(shader.block_capacity(), false);
    let cfg = Cfg::compute(shader);
    if !cfg.preds(entry).is_empty() {
        return Err(SinkError::EntryLoop);
    }
    s.entry_value = vec![vec![None; s.ports.len()]; shader.block_capacity()];
    s.undef = vec![None; s.ports.len()];
    let finals: Vec<Value> = (0..s.ports.len())
        .map(|p| s.end_value(shader, &cfg, exit, p))
        .collect();
    let replaced = s.drop_trivial_phis(shader);
    let resolve = |v: Value| resolve(&replaced, v);
    // Place the phis that stay, after each block's own phis.
    let mut by_block: Vec<Vec<Inst>> = vec![Vec::new(); shader.block_capacity()];
    for &(b, phi) in &s.phis {
        let v = shader.inst(phi).result.expect("phis have results");
        if replaced[v.index()].is_none() {
            let args: Vec<Value> = shader.inst(phi).args.iter().map(|&a| resolve(a)).collect();
            shader.set_args(phi, &args);
            by_block[b.index()].push(phi);
        }
    }
    for b in shader.layout().to_vec() {
        let new = std::mem::take(&mut by_block[b.index()]);
        if new.is_empty() {
            continue;
        }
        let old = shader.block_insts(b);
        let head = old
            .iter()
            .take_while(|&&i| shader.inst(i).op.is_phi())
            .count();
        let list: Vec<Inst> = old[..head]
            .iter()
            .chain(&new)
            .chain(&old[head..])
            .copied()
            .collect();
        shader.set_block_insts(b, &list);
    }
    let ret = shader.pop_inst(exit).expect("the exit block returns");
    for (p, v) in s.ports.iter().zip(finals) {
        shader.append_inst(exit, p.op, &[resolve(v)], &[], None, None);
    }
    shader.push_inst(exit, ret);
    Ok(())
}

/// One output: the instruction that writes it and the type it is kept in.
struct Port {
    op: Op<GenericOp>,
    ty: Type,
}

struct Sinker {
    ports: Vec<Port>,
    /// Per block: the value each port's last store in the block left.
    local: Vec<Vec<Option<Value>>>,
    /// Per block and port: the value on entry, once known.
    entry_value: Vec<Vec<Option<Value>>>,
    /// Per port: its zero, made on first need.
    undef: Vec<Option<Value>>,
    /// Phis made, with their blocks (placed at the end).
    phis: Vec<(Block, Inst)>,
    /// Per block: its entry value is being looked for.
    visiting: Vec<bool>,
    entry: Block,
}

impl Sinker {
    /// Takes every store out of its block, recording per block the value
    /// each port's last store left (reinterpreted to the port's type).
    fn collect(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<(), SinkError> {
        let layout = shader.layout().to_vec();
        for b in layout {
            let mut list = Vec::new();
            let old = shader.block_insts(b).to_vec();
            for i in old {
                let d = shader.inst(i);
                let is_store = matches!(
                    d.op,
                    Op::Output { .. } | Op::Opcode(GenericOp::StoreOutput { .. })
                );
                if !is_store {
                    list.push(i);
                    continue;
                }
                let (op, mut v) = (d.op, d.args[0]);
                let ty = shader.value_type(v);
                let p = match self.ports.iter().position(|p| p.op == op) {
                    Some(p) => p,
                    None => {
                        self.ports.push(Port { op, ty });
                        self.ports.len() - 1
                    }
                };
                let want = self.ports[p].ty;
                if ty != want {
                    if ty.scalar.bits() != want.scalar.bits() || ty.lanes != want.lanes {
                        return Err(SinkError::MixedWidths {
                            port: port_name(op),
                            first: want,
                            other: ty,
                        });
                    }
                    let m = shader.create_inst(
                        Op::Opcode(GenericOp::Mov {
                            abs: false,
                            neg: false,
                        }),
                        &[v],
                        &[],
                        None,
                        Some(want),
                    );
                    list.push(m);
                    v = shader.inst(m).result.expect("created with a result");
                }
                let local = &mut self.local[b.index()];
                if local.len() <= p {
                    local.resize(p + 1, None);
                }
                local[p] = Some(v);
            }
            shader.set_block_insts(b, &list);
        }
        Ok(())
    }

    /// The value port `p` holds at the end of block `b`.
    fn end_value(
        &mut self,
        shader: &mut Shader<'_, GenericOp>,
        cfg: &Cfg,
        b: Block,
        p: usize,
    ) -> Value {
        match self.local[b.index()].get(p) {
            Some(&Some(v)) => v,
            _ => self.value_on_entry(shader, cfg, b, p),
        }
    }

    /// The value port `p` holds on entry to block `b`.
    fn value_on_entry(
        &mut self,
        shader: &mut Shader<'_, GenericOp>,
        cfg: &Cfg,
        b: Block,
        p: usize,
    ) -> Value {
        if let Some(v) = self.entry_value[b.index()][p] {
            return v;
        }
        let preds = cfg.preds(b).to_vec();
        match preds.as_slice() {
            [] => {
                let v = self.undef(shader, p);
                self.entry_value[b.index()][p] = Some(v);
                v
            }
            [pred] => {
                // An unreachable cycle of single-predecessor blocks comes
                // back here: the output is undefined there.
                if std::mem::replace(&mut self.visiting[b.index()], true) {
                    return self.undef(shader, p);
                }
                let v = self.end_value(shader, cfg, *pred, p);
                self.visiting[b.index()] = false;
                self.entry_value[b.index()][p] = Some(v);
                v
            }
            _ => {
                let ty = self.ports[p].ty;
                let phi = shader.create_inst(Op::Phi, &[], &preds, None, Some(ty));
                let v = shader.inst(phi).result.expect("created with a result");
                self.entry_value[b.index()][p] = Some(v);
                self.phis.push((b, phi));
                let args: Vec<Value> = preds
                    .iter()
                    .map(|&pred| self.end_value(shader, cfg, pred, p))
                    .collect();
                shader.set_args(phi, &args);
                v
            }
        }
    }

    /// Port `p`'s zero, at the head of the entry block.
    fn undef(&mut self, shader: &mut Shader<'_, GenericOp>, p: usize) -> Value {
        if let Some(v) = self.undef[p] {
            return v;
        }
        let i = shader.create_inst(
            Op::Opcode(GenericOp::Const { bits: 0 }),
            &[],
            &[],
            None,
            Some(self.ports[p].ty),
        );
        let mut list = vec![i];
        list.extend_from_slice(shader.block_insts(self.entry));
        shader.set_block_insts(self.entry, &list);
        let v = shader.inst(i).result.expect("created with a result");
        self.undef[p] = Some(v);
        v
    }

    /// Phis whose operands are one value (besides themselves) are that
    /// value: the replacement of each such phi's value, by value index.
    fn drop_trivial_phis(&self, shader: &Shader<'_, GenericOp>) -> Vec<Option<Value>> {
        let mut replaced: Vec<Option<Value>> = vec![None; shader.value_capacity()];
        loop {
            let mut changed = false;
            for &(_, phi) in &self.phis {
                let d = shader.inst(phi);
                let me = d.result.expect("phis have results");
                if replaced[me.index()].is_some() {
                    continue;
                }
                let mut only = None;
                let mut trivial = true;
                for &a in d.args.iter() {
                    let a = resolve(&replaced, a);
                    if a == me || Some(a) == only {
                        continue;
                    }
                    if only.is_some() {
                        trivial = false;
                        break;
                    }
                    only = Some(a);
                }
                if let (true, Some(v)) = (trivial, only) {
                    replaced[me.index()] = Some(v);
                    changed = true;
                }
            }
            if !changed {
                return replaced;
            }
        }
    }
}

/// `v` after the phi replacements.
fn resolve(replaced: &[Option<Value>], mut v: Value) -> Value {
    while let Some(Some(r)) = replaced.get(v.index()) {
        v = *r;
    }
    v
}

fn port_name(op: Op<GenericOp>) -> String {
    match op {
        Op::Opcode(GenericOp::StoreOutput { slot, comp }) => {
            format!("output slot {slot} comp {comp}")
        }
        Op::Output { index } => format!("meta output {index}"),
        _ => op.name().to_string(),
    }
}

/// The one block that returns, making one when several do (each then
/// jumps to it); `None` when no block returns.
fn single_exit(shader: &mut Shader<'_, GenericOp>) -> Option<Block> {
    let rets: Vec<Block> = shader
        .layout()
        .iter()
        .copied()
        .filter(|&b| {
            shader
                .terminator(b)
                .is_some_and(|t| matches!(shader.inst(t).op, Op::Return))
        })
        .collect();
    match rets.as_slice() {
        [] => None,
        [only] => Some(*only),
        _ => {
            let exit = shader.add_block();
            for &b in &rets {
                shader.pop_inst(b);
                shader.append_inst(b, Op::Jump, &[], &[exit], None, None);
            }
            shader.append_inst(exit, Op::Return, &[], &[], None, None);
            Some(exit)
        }
    }
}
