//! Promote arrays to SSA values: every element of every array of scalars
//! becomes a value of its own, so `array_load`/`array_store` disappear
//! before instruction selection.
//!
//! An access at a constant index reads or replaces its element's current
//! value. An access with an address operand compares the index
//! (`address + offset`, wrapping at the address's width, which equals the
//! true index whenever the access is in bounds) with each element's: a
//! load becomes a chain of `sel`s over the elements, a store replaces each
//! element by `sel(index == k, value, element)`. Elements flow between
//! blocks through phis made at each join (Braun et al.'s construction
//! with phis filled once every predecessor is done), and phis whose
//! operands are all one value (or themselves) are removed again. An
//! element read before any store reads 0 (the IR leaves it undefined).
//!
//! The cost of a dynamic access grows with the array's length (one
//! compare and one select per element), which suits the short arrays of
//! real shaders (constant tables indexed by a vertex id, filter kernels);
//! it needs no address register, no register window kept out of
//! allocation and no private memory, and it is target-neutral. Longer
//! arrays stay in private memory ([`promoted`] decides;
//! [`crate::private_arrays`] lowers what it leaves).
//!
//! ```
//! use lathe_passes::promote_arrays::promote;
//!
//! let text = "shader vertex\narray a0: f32[2]\nb0:\n  %0:u32 = load_sysval sv=vertex_index\n  %1:f32 = const 0x3f800000\n  %2:f32 = const 0x40000000\n  array_store array=a0 offset=0 %1\n  array_store array=a0 offset=1 %2\n  %3:f32 = array_load array=a0 offset=0 addr=%0\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(promote(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! assert!(!printed.contains("array_"), "{printed}");
//! assert!(printed.contains("= sel "), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::{Block, Cfg, GenericOp, Inst, Op, Shader, Type, Value};

/// The `promote-arrays` pass (generic IR only).
pub struct PromoteArrays;

impl Pass<GenericOp> for PromoteArrays {
    fn name(&self) -> &'static str {
        "promote-arrays"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(promote(shader))
    }
}

/// A phi made for element `var` at the head of a join.
struct JoinPhi {
    inst: Inst,
    block: Block,
    var: usize,
}

/// Arrays longer than this that are indexed at run time stay in private
/// memory. A promoted array's dynamic access costs one compare and one
/// select per element, and every element holds a register for as long
/// as the array lives; a memory access costs an address computation and
/// one load or store whatever the length. At 32 words a dynamic access
/// is 64 instructions and the array alone takes half of a Valhall
/// thread's registers at full occupancy (a quarter of an ir3 wave's
/// full registers), past what a memory round trip costs. The corpus's
/// dynamically indexed arrays are 5–27 words (filter kernels, constant
/// tables indexed by a vertex id: promoted as before) or 768 (a sorted
/// fragment list: memory).
pub const MAX_DYNAMIC_LEN: u32 = 32;

/// Arrays longer than this stay in private memory even when every index
/// is a constant: each element is a value of its own, live from its
/// store to its last load, and that many exceed any register file, so
/// allocation would spill them to the same memory one by one.
pub const MAX_LEN: u32 = 256;

/// Which arrays of `shader` become SSA values (indexed by array): those
/// whose elements are not 32-bit words (private memory holds words), and
/// otherwise those no longer than [`MAX_LEN`] and, if any access has an
/// address operand, [`MAX_DYNAMIC_LEN`].
pub fn promoted(shader: &Shader<'_, GenericOp>) -> Vec<bool> {
    let mut dynamic = vec![false; shader.arrays().len()];
    for (_, i) in shader.insts_in_order() {
        let data = shader.inst(i);
        if let Op::Opcode(GenericOp::ArrayLoad { array, .. } | GenericOp::ArrayStore { array, .. }) =
            data.op
            && data.address.is_some()
            && let Some(d) = dynamic.get_mut(array.index())
        {
            *d = true;
        }
    }
    shader
        .arrays()
        .iter()
        .zip(dynamic)
        .map(|(decl, dynamic)| {
            let limit = if dynamic { MAX_DYNAMIC_LEN } else { MAX_LEN };
            decl.elem.scalar.bits() != 32 || decl.len <= limit
        })
        .collect()
}

/// Promotes the arrays [`promoted`] chooses; returns whether anything
/// changed.
pub fn promote(shader: &mut Shader<'_, GenericOp>) -> bool {
    let chosen = promoted(shader);
    // Each promoted array's first variable; `None` for arrays left alone.
    let mut first = Vec::new();
    let mut types: Vec<Type> = Vec::new();
    for (decl, &chosen) in shader.arrays().iter().zip(&chosen) {
        if !chosen {
            first.push(None);
            continue;
        }
        first.push(Some(types.len()));
        types.extend(std::iter::repeat_n(decl.elem, decl.len as usize));
    }
    let lens: Vec<u32> = shader.arrays().iter().map(|d| d.len).collect();
    let promoted = |op: &Op<GenericOp>| match op {
        Op::Opcode(GenericOp::ArrayLoad { array, .. } | GenericOp::ArrayStore { array, .. }) => {
            first[array.index()].is_some()
        }
        _ => false,
    };
    if !shader
        .insts_in_order()
        .any(|(_, i)| promoted(&shader.inst(i).op))
    {
        return false;
    }

    let cfg = Cfg::compute(shader);
    let entry = shader.entry();
    // Elements live from the entry on: a branch back to the entry block
    // would need phis there, which SSA has no place for.
    if entry.is_some_and(|e| !cfg.preds(e).is_empty()) {
        return false;
    }
    let mut exit: Vec<Option<Vec<Value>>> = vec![None; shader.block_capacity()];
    let mut phis: Vec<JoinPhi> = Vec::new();
    // Loads' results and the values they stand for.
    let mut replaced: Vec<(Value, Value)> = Vec::new();
    let unreachable: Vec<Block> = shader
        .layout()
        .iter()
        .copied()
        .filter(|&b| !cfg.is_reachable(b))
        .collect();
    let order: Vec<Block> = cfg.rpo().iter().copied().chain(unreachable).collect();
    for b in order {
        let old: Vec<Inst> = shader.block_insts(b).to_vec();
        let mut out: Vec<Inst> = Vec::with_capacity(old.len());
        let heads = old
            .iter()
            .take_while(|&&i| shader.inst(i).op.is_phi())
            .count();
        out.extend_from_slice(&old[..heads]);
        let preds = cfg.preds(b);
        let mut state: Vec<Value> = match preds {
            [p] if exit[p.index()].is_some() => exit[p.index()].clone().unwrap_or_default(),
            _ if Some(b) == entry || !cfg.is_reachable(b) => types
                .iter()
                .map(|&ty| constant(shader, &mut out, ty, 0))
                .collect(),
            _ => types
                .iter()
                .enumerate()
                .map(|(var, &ty)| {
                    let inst = shader.create_inst(Op::Phi, &[], &[], None, Some(ty));
                    out.push(inst);
                    phis.push(JoinPhi {
                        inst,
                        block: b,
                        var,
                    });
                    result(shader, inst)
                })
                .collect(),
        };
        for &i in &old[heads..] {
            let data = shader.inst(i);
            let (array, offset, store) = match data.op {
                Op::Opcode(GenericOp::ArrayLoad { array, offset }) => (array, offset, false),
                Op::Opcode(GenericOp::ArrayStore { array, offset }) => (array, offset, true),
                _ => {
                    out.push(i);
                    continue;
                }
            };
            let Some(base) = first[array.index()] else {
                out.push(i);
                continue;
            };
            let len = lens[array.index()] as usize;
            let address = data.address;
            let stored = store.then(|| data.args[0]);
            let loaded = data.result;
            let vars = base..base + len;
            match (address, stored, loaded) {
                (None, Some(v), _) => state[base + offset as usize] = v,
                (None, None, Some(r)) => replaced.push((r, state[base + offset as usize])),
                (Some(a), stored, loaded) => {
                    let index = element_index(shader, &mut out, a, offset);
                    let ity = shader.value_type(a);
                    match (stored, loaded) {
                        (Some(v), _) => {
                            for (k, var) in vars.enumerate() {
                                let hit = compare(shader, &mut out, index, ity, k as u32);
                                state[var] = select(shader, &mut out, hit, v, state[var]);
                            }
                        }
                        (None, Some(r)) => {
                            let mut v = state[base];
                            for (k, var) in vars.enumerate().skip(1) {
                                let hit = compare(shader, &mut out, index, ity, k as u32);
                                v = select(shader, &mut out, hit, state[var], v);
                            }
                            replaced.push((r, v));
                        }
                        (None, None) => {}
                    }
                }
                (None, None, None) => {}
            }
        }
        shader.set_block_insts(b, &out);
        exit[b.index()] = Some(state);
    }

    // Fill the join phis from their predecessors' final values (every
    // block of the layout was visited, so every predecessor has them).
    for phi in &phis {
        let preds = cfg.preds(phi.block).to_vec();
        let own = result(shader, phi.inst);
        let args: Vec<Value> = preds
            .iter()
            .map(|p| exit[p.index()].as_ref().map_or(own, |state| state[phi.var]))
            .collect();
        shader.set_args(phi.inst, &args);
        shader.set_targets(phi.inst, &preds);
    }

    // Every replaced value to what it stands for, then trivial phis away.
    let mut map: Vec<Value> = (0..shader.value_capacity() as u32).map(Value).collect();
    for &(from, to) in &replaced {
        map[from.index()] = to;
    }
    let mut removed = vec![false; shader.inst_capacity()];
    loop {
        let mut changed = false;
        for phi in &phis {
            if removed[phi.inst.index()] {
                continue;
            }
            let own = result(shader, phi.inst);
            let mut same: Option<Value> = None;
            let mut trivial = true;
            for &a in shader.inst(phi.inst).args.iter() {
                let a = resolve(&map, a);
                if a == own || Some(a) == same {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(a);
            }
            if let (true, Some(v)) = (trivial, same) {
                map[own.index()] = v;
                removed[phi.inst.index()] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    shader.rewrite_operands(|v| resolve(&map, v));
    for phi in &phis {
        if removed[phi.inst.index()] {
            shader.retain_insts(phi.block, |i, _| i != phi.inst);
        }
    }
    true
}

/// `v` through the replacement chain.
fn resolve(map: &[Value], mut v: Value) -> Value {
    while let Some(&next) = map.get(v.index()) {
        if next == v {
            break;
        }
        v = next;
    }
    v
}

fn result(shader: &Shader<'_, GenericOp>, i: Inst) -> Value {
    shader
        .inst(i)
        .result
        .unwrap_or_else(|| unreachable!("made with a result"))
}

/// A new instruction appended to `out`, giving its result.
fn emit(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    op: GenericOp,
    args: &[Value],
    ty: Type,
) -> Value {
    let i = shader.create_inst(Op::Opcode(op), args, &[], None, Some(ty));
    out.push(i);
    result(shader, i)
}

fn constant(shader: &mut Shader<'_, GenericOp>, out: &mut Vec<Inst>, ty: Type, bits: u32) -> Value {
    emit(shader, out, GenericOp::Const { bits }, &[], ty)
}

/// `address + offset` at the address's width.
fn element_index(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    address: Value,
    offset: u32,
) -> Value {
    if offset == 0 {
        return address;
    }
    let ty = shader.value_type(address);
    let k = constant(shader, out, ty, mask(ty, offset));
    emit(shader, out, GenericOp::IAdd, &[address, k], ty)
}

fn compare(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    index: Value,
    ty: Type,
    k: u32,
) -> Value {
    let c = constant(shader, out, ty, mask(ty, k));
    emit(shader, out, GenericOp::IEq, &[index, c], Type::BOOL)
}

fn select(
    shader: &mut Shader<'_, GenericOp>,
    out: &mut Vec<Inst>,
    cond: Value,
    a: Value,
    b: Value,
) -> Value {
    let ty = shader.value_type(a);
    emit(shader, out, GenericOp::Sel, &[cond, a, b], ty)
}

/// `bits` cut to `ty`'s width.
fn mask(ty: Type, bits: u32) -> u32 {
    match ty.scalar.bits() {
        32 => bits,
        w => bits & ((1 << w) - 1),
    }
}
