//! Unroll: a loop whose trip count is a compile-time constant becomes that
//! many copies of its body in straight-line order.
//!
//! Shaders loop over small kernels (`for (int i = 0; i < 9; ++i)`): each
//! trip pays the compare, the branch and, on ir3, the nops around a
//! divergent branch; and an array the loop indexes with its counter can
//! only be read through selects or memory. Unrolled, the counter is a
//! constant in each copy, [`fold`](crate::fold) turns the array accesses
//! static (then promotion makes them plain values), and the copies
//! schedule together.
//!
//! A loop qualifies when it is a natural loop with one back edge, one
//! entry edge from outside, and its header is the only block with an edge
//! leaving it (the header's conditional branch: the frontends' `for` and
//! `while` shape, once [`merge_blocks`](crate::merge_blocks) has joined
//! the header with its test); the exit test must evaluate to a constant in
//! every trip when the header's phis are followed from their constant
//! entry values through the pure scalar arithmetic of the back edge
//! ([`lathe_ir::scalar_ops::eval`], the interpreter's own definition).
//! Loops nested inside are copied as they are.
//!
//! # Cost rule
//!
//! At most [`MAX_TRIPS`] trips. A loop that indexes an array with a
//! run-time address may grow to [`MAX_UNROLLED`] instructions (trips ×
//! the loop's instructions): unrolled, its array becomes registers, which
//! saves more than the growth costs; these are the limits Mesa's NIR
//! applies for ir3 and Valhall (32 iterations, 26 instructions each), and
//! both force loops indexing arrays in temporaries to unroll. Any other
//! loop only to [`MAX_UNROLLED_PLAIN`], where the compare, branch and
//! (ir3) nops of each trip are a large share of it; beyond that the copies
//! mostly add code (Mesa's Valhall keeps sascha's 49-sample mirror loop
//! and 25-tap blur loops rolled).
//!
//! ```
//! use lathe_passes::unroll::unroll;
//!
//! // Three trips of `acc += acc`, from 1.0.
//! let text = "shader fragment\nb0:\n  %0:i32 = const 0\n  %1:f32 = const 1.0\n  %2:i32 = const 3\n  %3:i32 = const 1\n  jump b1\nb1:\n  %4:i32 = phi [%0, b0], [%8, b2]\n  %5:f32 = phi [%1, b0], [%7, b2]\n  %6:bool = ilt %4, %2\n  branch %6, b2, b3\nb2:\n  %7:f32 = fadd %5, %5\n  %8:i32 = iadd %4, %3\n  jump b1\nb3:\n  store_output slot=0 comp=0 %5\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(unroll(&mut shader));
//! lathe_ir::validate(&shader).unwrap();
//! lathe_passes::optimise::optimise(&mut shader);
//! assert_eq!(
//!     lathe_ir::print(&shader),
//!     "shader fragment\nb0:\n  %0:f32 = const 8.0\n  store_output slot=0 comp=0 %0\n  ret\n"
//! );
//! ```

use crate::manager::{Pass, PassFailure};
use lathe_ir::scalar_ops::eval;
use lathe_ir::{Block, Cfg, DomTree, GenericOp, Inst, Loops, Op, Shader, Value};
use std::collections::HashMap;

/// The most trips a loop may make to be unrolled.
pub const MAX_TRIPS: u32 = 32;

/// The most instructions an unrolled loop may have (trips × instructions
/// of one trip, phis and branches not counted).
pub const MAX_UNROLLED: usize = 32 * 26;

/// The most instructions an unrolled loop that indexes no array at run
/// time may have.
pub const MAX_UNROLLED_PLAIN: usize = 128;

/// How deep the trip-count evaluation follows a value's operands.
const MAX_EVAL_DEPTH: u32 = 32;

/// The `unroll` pass (generic IR only).
pub struct Unroll;

impl Pass<GenericOp> for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(unroll(shader))
    }
}

/// Unrolls every loop that qualifies (smallest first, so an inner loop is
/// unrolled before the loop around it is measured); returns whether
/// anything changed.
pub fn unroll(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut changed = false;
    // Each round unrolls one loop and recomputes the analyses; a shader
    // has few loops, and each success removes one.
    while let Some(plan) = next_plan(shader) {
        apply(shader, &plan);
        changed = true;
    }
    changed
}

/// A loop chosen for unrolling.
struct Plan {
    header: Block,
    /// The loop's blocks in layout order (the header among them).
    blocks: Vec<Block>,
    preheader: Block,
    latch: Block,
    /// Where the header's branch leaves the loop.
    exit: Block,
    /// The header's successor inside the loop.
    body: Block,
    trips: u32,
}

fn next_plan(shader: &Shader<'_, GenericOp>) -> Option<Plan> {
    let cfg = Cfg::compute(shader);
    let dom = DomTree::compute(&cfg);
    let loops = Loops::compute(&cfg, &dom);
    if !loops.irreducible_edges().is_empty() {
        return None;
    }
    let mut candidates: Vec<(usize, Block, Vec<bool>)> = loops
        .headers()
        .iter()
        .filter_map(|&h| {
            let member = natural_loop(shader, &cfg, &dom, h)?;
            Some((member.iter().filter(|&&m| m).count(), h, member))
        })
        .collect();
    candidates.sort_by_key(|&(size, h, _)| (size, h.index()));
    candidates
        .into_iter()
        .find_map(|(_, h, member)| plan(shader, &cfg, h, member))
}

/// The blocks of `header`'s loop (by block index), when it has exactly
/// one back edge.
fn natural_loop(
    shader: &Shader<'_, GenericOp>,
    cfg: &Cfg,
    dom: &DomTree,
    header: Block,
) -> Option<Vec<bool>> {
    let latches: Vec<Block> = cfg
        .preds(header)
        .iter()
        .copied()
        .filter(|&p| dom.dominates(header, p))
        .collect();
    let [latch] = latches[..] else {
        return None;
    };
    let mut member = vec![false; shader.block_capacity()];
    member[header.index()] = true;
    let mut work = vec![latch];
    while let Some(b) = work.pop() {
        if !member[b.index()] {
            member[b.index()] = true;
            work.extend(cfg.preds(b).iter().copied());
        }
    }
    Some(member)
}

fn plan(
    shader: &Shader<'_, GenericOp>,
    cfg: &Cfg,
    header: Block,
    member: Vec<bool>,
) -> Option<Plan> {
    let inside = |b: Block| member.get(b.index()).copied().unwrap_or(false);
    let outside: Vec<Block> = cfg
        .preds(header)
        .iter()
        .copied()
        .filter(|&p| !inside(p))
        .collect();
    let [preheader] = outside[..] else {
        return None;
    };
    let latch = *cfg.preds(header).iter().find(|&&p| inside(p))?;
    if latch == header {
        // A loop of one block tests at its end; not the shape handled.
        return None;
    }
    let blocks: Vec<Block> = shader
        .layout()
        .iter()
        .copied()
        .filter(|&b| inside(b))
        .collect();
    // Only the header's branch leaves the loop.
    for &b in &blocks {
        if b != header && cfg.succs(b).iter().any(|&s| !inside(s)) {
            return None;
        }
    }
    let term = shader.inst(shader.terminator(header)?);
    let (Op::Branch, [cond], &[then, other]) = (term.op, &term.args[..], &term.targets[..]) else {
        return None;
    };
    let (body, exit, continue_if) = match (inside(then), inside(other)) {
        (true, false) => (then, other, true),
        (false, true) => (other, then, false),
        _ => return None,
    };
    let mut size = 0;
    let mut indexes_arrays = false;
    for &b in &blocks {
        for &i in shader.block_insts(b) {
            let data = shader.inst(i);
            if data.second_result.is_some() {
                return None;
            }
            indexes_arrays |= data.address.is_some()
                && matches!(
                    data.op,
                    Op::Opcode(GenericOp::ArrayLoad { .. } | GenericOp::ArrayStore { .. })
                );
            if !data.op.is_phi() && !data.op.is_terminator() {
                size += 1;
            }
        }
    }
    let trips = trip_count(shader, header, preheader, latch, *cond, continue_if)?;
    let budget = if indexes_arrays {
        MAX_UNROLLED
    } else {
        MAX_UNROLLED_PLAIN
    };
    if trips > MAX_TRIPS || trips as usize * size > budget {
        return None;
    }
    Some(Plan {
        header,
        blocks,
        preheader,
        latch,
        exit,
        body,
        trips,
    })
}

/// The header's phis and their operands from the preheader and the latch.
fn header_phis(
    shader: &Shader<'_, GenericOp>,
    header: Block,
    preheader: Block,
    latch: Block,
) -> Vec<(Value, Value, Value)> {
    shader
        .block_insts(header)
        .iter()
        .map(|&i| shader.inst(i))
        .take_while(|d| d.op.is_phi())
        .filter_map(|d| {
            let from = |pred: Block| d.targets.iter().position(|&t| t == pred).map(|k| d.args[k]);
            Some((d.result?, from(preheader)?, from(latch)?))
        })
        .collect()
}

/// How many times the loop's body runs, found by running the exit test
/// on the header's phis trip by trip; `None` when the test is not a
/// constant in some trip or the loop runs more than [`MAX_TRIPS`] times.
fn trip_count(
    shader: &Shader<'_, GenericOp>,
    header: Block,
    preheader: Block,
    latch: Block,
    cond: Value,
    continue_if: bool,
) -> Option<u32> {
    let phis = header_phis(shader, header, preheader, latch);
    let mut known: HashMap<Value, u32> = HashMap::new();
    for &(phi, entry, _) in &phis {
        if let Some(bits) = evaluate(shader, entry, &HashMap::new(), &mut HashMap::new(), 0) {
            known.insert(phi, bits);
        }
    }
    for trip in 0..=MAX_TRIPS {
        let test = evaluate(shader, cond, &known, &mut HashMap::new(), 0)?;
        if (test & 1 == 1) != continue_if {
            return Some(trip);
        }
        let mut memo = HashMap::new();
        known = phis
            .iter()
            .filter(|(phi, _, _)| known.contains_key(phi))
            .filter_map(|&(phi, _, back)| {
                Some((phi, evaluate(shader, back, &known, &mut memo, 0)?))
            })
            .collect();
    }
    None
}

/// The bits of `v` given the header phis' values in `known`, following
/// pure scalar operations only.
fn evaluate(
    shader: &Shader<'_, GenericOp>,
    v: Value,
    known: &HashMap<Value, u32>,
    memo: &mut HashMap<Value, u32>,
    depth: u32,
) -> Option<u32> {
    if let Some(&bits) = known.get(&v).or_else(|| memo.get(&v)) {
        return Some(bits);
    }
    let ty = shader.value_type(v);
    let data = shader.inst(shader.value_def(v));
    let Op::Opcode(op) = data.op else {
        return None;
    };
    if depth > MAX_EVAL_DEPTH || ty.lanes != 1 || data.address.is_some() {
        return None;
    }
    let mut operands = Vec::with_capacity(data.args.len());
    for &a in data.args.iter() {
        let at = shader.value_type(a);
        if at.lanes != 1 {
            return None;
        }
        operands.push((at.scalar, evaluate(shader, a, known, memo, depth + 1)?));
    }
    let bits = eval(op, ty.scalar, &operands).ok()?;
    memo.insert(v, bits);
    Some(bits)
}

/// Replaces the loop by `trips` copies of it, each entered at its header
/// copy with the phis resolved, and a last header copy that falls through
/// to the exit.
fn apply(shader: &mut Shader<'_, GenericOp>, plan: &Plan) {
    let phis = header_phis(shader, plan.header, plan.preheader, plan.latch);
    // The value each original value stands for in the last copy made
    // (values from outside the loop stand for themselves).
    let mut previous: HashMap<Value, Value> = HashMap::new();
    let mut first_header = None;
    // The previous copy's back edge, to point at the next header copy.
    let mut pending_latch: Option<Inst> = None;
    for trip in 0..=plan.trips {
        let last = trip == plan.trips;
        let copied: Vec<Block> = if last {
            vec![plan.header]
        } else {
            plan.blocks.clone()
        };
        let mut blocks: HashMap<Block, Block> = HashMap::new();
        for &b in &copied {
            let nb = shader.create_block();
            shader.insert_into_layout(nb, Some(plan.header));
            blocks.insert(b, nb);
        }
        let mut map: HashMap<Value, Value> = HashMap::new();
        for &(phi, entry, back) in &phis {
            let v = if trip == 0 {
                entry
            } else {
                *previous.get(&back).unwrap_or(&back)
            };
            map.insert(phi, v);
        }
        let mut made = Vec::new();
        for &b in &copied {
            let nb = blocks[&b];
            for &i in shader.block_insts(b).to_vec().iter() {
                let data = shader.inst(i);
                if b == plan.header && data.op.is_phi() {
                    continue;
                }
                let (op, args, mut targets, address, result) = (
                    data.op,
                    data.args.to_vec(),
                    data.targets.to_vec(),
                    data.address,
                    data.result.map(|r| shader.value_type(r)),
                );
                let old_result = data.result;
                let (op, args) = if b == plan.header && op.is_terminator() {
                    targets = vec![if last { plan.exit } else { blocks[&plan.body] }];
                    (Op::Jump, Vec::new())
                } else {
                    for t in targets.iter_mut() {
                        // A branch back to the header goes to the next
                        // copy's, made later; a phi's header is this copy's.
                        if *t != plan.header || op.is_phi() {
                            *t = *blocks.get(t).unwrap_or(t);
                        }
                    }
                    (op, args)
                };
                let back_edge = op.is_terminator() && targets.contains(&plan.header);
                let ni = shader.append_inst(nb, op, &args, &targets, address, result);
                if let (Some(old), Some(new)) = (old_result, shader.inst(ni).result) {
                    map.insert(old, new);
                }
                made.push((ni, back_edge));
            }
        }
        // Operands to this copy's values, now that all exist.
        for &(ni, _) in &made {
            let data = shader.inst(ni);
            let args: Vec<Value> = data.args.iter().map(|a| *map.get(a).unwrap_or(a)).collect();
            let address = data.address.map(|a| *map.get(&a).unwrap_or(&a));
            shader.set_args(ni, &args);
            shader.inst_mut(ni).address = address;
        }
        let header_copy = blocks[&plan.header];
        if let Some(jump) = pending_latch.take() {
            let targets: Vec<Block> = shader
                .inst(jump)
                .targets
                .iter()
                .map(|&t| if t == plan.header { header_copy } else { t })
                .collect();
            shader.set_targets(jump, &targets);
        }
        pending_latch = made
            .iter()
            .find(|&&(_, back_edge)| back_edge)
            .map(|&(ni, _)| ni);
        first_header.get_or_insert(header_copy);
        if last {
            // The exit's phis came from the header; now from its last copy.
            retarget_phis(shader, plan.exit, plan.header, header_copy, &map);
        }
        previous = map;
    }
    let first = first_header.expect("one header copy at least");
    let pre_term = shader
        .terminator(plan.preheader)
        .expect("a preheader ends in a branch");
    let targets: Vec<Block> = shader
        .inst(pre_term)
        .targets
        .iter()
        .map(|&t| if t == plan.header { first } else { t })
        .collect();
    shader.set_targets(pre_term, &targets);
    // Values of the header used after the loop are its last copy's.
    let renamed: HashMap<Value, Value> = shader
        .block_insts(plan.header)
        .iter()
        .filter_map(|&i| shader.inst(i).result)
        .filter_map(|v| Some((v, *previous.get(&v)?)))
        .collect();
    shader.remove_blocks(&plan.blocks);
    shader.rewrite_operands(|v| *renamed.get(&v).unwrap_or(&v));
}

/// Points the phis of `block` that name `from` at `to`, their operands
/// through `map`.
fn retarget_phis(
    shader: &mut Shader<'_, GenericOp>,
    block: Block,
    from: Block,
    to: Block,
    map: &HashMap<Value, Value>,
) {
    let phis: Vec<Inst> = shader
        .block_insts(block)
        .iter()
        .copied()
        .take_while(|&i| shader.inst(i).op.is_phi())
        .collect();
    for phi in phis {
        let data = shader.inst_mut(phi);
        for k in 0..data.targets.len() {
            if data.targets[k] == from {
                data.targets[k] = to;
                data.args[k] = *map.get(&data.args[k]).unwrap_or(&data.args[k]);
            }
        }
    }
}
