//! The preamble: expressions that depend on uniforms only are computed
//! once per draw or dispatch instead of once per invocation.
//!
//! A value is *uniform* when every invocation of a draw computes the same
//! bits for it: constants, uniform words (`load_uniform` without an
//! address: push constants, driver parameters and the UBO words a backend
//! has placed in its const file), UBO loads at uniform offsets, and pure
//! operations of uniform operands. [`hoist`] picks the uniform 32-bit
//! scalars that the per-invocation code reads, copies what computes them
//! into a new entry block (the *preamble*) that ends by storing each into
//! a uniform word of its own (`store_uniform`), and turns each into a
//! `load_uniform` of that word where it was computed, so the computation
//! left behind is dead.
//!
//! Cost rule (as Mesa's `ir3_nir_opt_preamble` weighs instructions saved
//! against const space): a candidate saves the instructions of its
//! expression that are not themselves uniform reads or constants, on
//! every invocation, and costs one uniform word, which the target reads
//! as a const source (no instruction where the reader's encoding takes
//! one, a move otherwise). Candidates are taken by instructions saved,
//! most first, while words are left in the budget the target gives
//! (the const file after its own layout).
//!
//! The preamble block runs before everything else; the values the
//! hardware preloads into registers (the `preloaded` instructions of the
//! old entry block) move to its head, so the preamble does not take their
//! registers before they are read. Operations that may be undefined for
//! some operands (`Effects::may_trap`) are hoisted only from the entry
//! block, which every invocation runs: the preamble never computes what
//! no invocation would have.
//!
//! ```
//! use lathe_passes::preamble::{hoist, Budget};
//! use lathe_ir::{GenericOp, Op};
//!
//! let text = "shader vertex\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_uniform index=0\n  %2:f32 = load_uniform index=1\n  %3:f32 = fmul %1, %2\n  %4:f32 = fadd %3, %1\n  %5:f32 = fmul %0, %4\n  store_output slot=0 comp=0 %5\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! let preloaded = |op: &Op<GenericOp>| matches!(op, Op::Opcode(GenericOp::LoadInput { .. }));
//! let hoisted = hoist(&mut shader, Budget { first_word: 8, words: 4 }, preloaded).unwrap();
//! assert_eq!((hoisted.first_word, hoisted.words), (8, 1));
//! let text = lathe_ir::print(&shader);
//! // The preamble stores %4 into word 8; the main part reads it there.
//! assert!(text.contains("store_uniform index=8"), "{text}");
//! let (preamble, main) = text.split_once("b1:").unwrap();
//! assert!(preamble.contains("fadd") && main.contains("load_uniform index=8"), "{text}");
//! assert!(!main.contains("fadd"), "{text}");
//! ```

use std::collections::{HashMap, HashSet};

use lathe_ir::{Block, GenericOp, Inst, Op, Opcode, Scalar, Shader, Type, Value};

/// The uniform words the preamble may store into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub first_word: u32,
    pub words: u32,
}

/// The uniform words a preamble stores: `first_word..first_word + words`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hoisted {
    pub first_word: u32,
    pub words: u32,
}

/// Moves the uniform expressions worth it into a preamble block laid out
/// first (see the module docs); `None` when nothing is (the shader is
/// unchanged). `preloaded` names the instructions that read what the
/// hardware preloads into registers.
pub fn hoist(
    shader: &mut Shader<'_, GenericOp>,
    budget: Budget,
    preloaded: impl Fn(&Op<GenericOp>) -> bool,
) -> Option<Hoisted> {
    let entry = shader.entry()?;
    let uniform = uniform_values(shader, entry);
    let is_uniform = |v: Value| uniform.get(v.index()).copied().unwrap_or(false);
    let mut chosen = candidates(shader, &is_uniform);
    chosen.truncate(budget.words as usize);
    if chosen.is_empty() {
        return None;
    }

    // The preamble: preloads first, then each value's expression (once),
    // stored into its word.
    let pre = shader.create_block();
    shader.insert_into_layout(pre, Some(entry));
    let (moved, kept): (Vec<Inst>, Vec<Inst>) = shader
        .block_insts(entry)
        .iter()
        .partition(|&&i| preloaded(&shader.inst(i).op));
    shader.set_block_insts(entry, &kept);
    for &i in &moved {
        shader.push_inst(pre, i);
        shader.inst_mut(i).block = Some(pre);
    }
    let mut copies: HashMap<Value, Value> = HashMap::new();
    for (k, &(v, _)) in chosen.iter().enumerate() {
        let copy = copy_expression(shader, pre, v, &mut copies);
        let index = budget.first_word + k as u32;
        let op = Op::Opcode(GenericOp::StoreUniform { index });
        shader.append_inst(pre, op, &[copy], &[], None, None);
    }
    shader.append_inst(pre, Op::Jump, &[], &[entry], None, None);

    // The main part reads each value from its word.
    for (k, &(v, _)) in chosen.iter().enumerate() {
        let def = shader.value_def(v);
        let index = budget.first_word + k as u32;
        shader.inst_mut(def).op = Op::Opcode(GenericOp::LoadUniform { index });
        shader.set_args(def, &[]);
        shader.inst_mut(def).address = None;
    }
    crate::dce::eliminate(shader);
    Some(Hoisted {
        first_word: budget.first_word,
        words: chosen.len() as u32,
    })
}

/// Whether `op` reads only its operands and state that is the same for
/// every invocation of a draw.
fn reads_only_uniform_state(shader: &Shader<'_, GenericOp>, i: Inst) -> bool {
    let d = shader.inst(i);
    if d.address.is_some() {
        return false;
    }
    match d.op {
        Op::Collect | Op::Split { .. } => true,
        Op::Opcode(op) => {
            let effects = op.effects();
            let invocation_state = matches!(
                op,
                GenericOp::LoadSysval { .. }
                    | GenericOp::LoadInput { .. }
                    | GenericOp::LoadVarying { .. }
                    | GenericOp::Ddx { .. }
                    | GenericOp::Ddy { .. }
                    | GenericOp::Sample { .. }
                    | GenericOp::Gather { .. }
                    | GenericOp::TexelFetch { .. }
                    | GenericOp::TextureSize { .. }
                    | GenericOp::TextureLevels { .. }
            );
            !effects.side_effects
                && effects.barrier == lathe_ir::BarrierClass::NONE
                && !invocation_state
        }
        _ => false,
    }
}

/// Per value: whether it is uniform (operands before users: a phi is
/// never uniform, so one pass over the layout decides every value).
fn uniform_values(shader: &Shader<'_, GenericOp>, entry: Block) -> Vec<bool> {
    let mut uniform = vec![false; shader.value_capacity()];
    for &b in shader.layout() {
        for &i in shader.block_insts(b) {
            let d = shader.inst(i);
            let Some(r) = d.result else { continue };
            let speculable = b == entry
                || match d.op {
                    Op::Opcode(op) => !op.effects().may_trap,
                    _ => true,
                };
            uniform[r.index()] = speculable
                && reads_only_uniform_state(shader, i)
                && d.args.iter().all(|a| uniform[a.index()]);
        }
    }
    uniform
}

/// Instructions an expression costs per invocation: its operations, not
/// the uniform reads and constants it starts from.
fn is_operation(op: &Op<GenericOp>) -> bool {
    !matches!(
        op,
        Op::Opcode(GenericOp::Const { .. } | GenericOp::LoadUniform { .. })
    )
}

/// The uniform 32-bit scalars a non-uniform instruction reads, with the
/// operations each saves, most first (ties in program order).
fn candidates(
    shader: &Shader<'_, GenericOp>,
    is_uniform: &impl Fn(Value) -> bool,
) -> Vec<(Value, u32)> {
    let mut read: Vec<Value> = Vec::new();
    let mut seen = vec![false; shader.value_capacity()];
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        if d.result.is_some_and(is_uniform) {
            continue;
        }
        for v in d.operands() {
            let ty = shader.value_type(v);
            let word = ty.lanes == 1 && ty.scalar != Scalar::Bool && ty.scalar.bits() == 32;
            if is_uniform(v)
                && word
                && !seen[v.index()]
                && is_operation(&shader.inst(shader.value_def(v)).op)
            {
                seen[v.index()] = true;
                read.push(v);
            }
        }
    }
    let mut out: Vec<(Value, u32)> = read
        .into_iter()
        .map(|v| (v, operations(shader, v)))
        .collect();
    out.sort_by_key(|&(_, saved)| std::cmp::Reverse(saved));
    out
}

/// Operations counted per candidate at most: enough to rank them, and
/// the walks stay linear in the shader's size.
const MAX_COUNTED: u32 = 64;

/// The operations of `v`'s expression (each counted once), up to
/// [`MAX_COUNTED`].
fn operations(shader: &Shader<'_, GenericOp>, v: Value) -> u32 {
    let mut seen: HashSet<Value> = HashSet::new();
    let mut work = vec![v];
    let mut count = 0;
    while let Some(v) = work.pop() {
        if count == MAX_COUNTED || !seen.insert(v) {
            continue;
        }
        let d = shader.inst(shader.value_def(v));
        if is_operation(&d.op) {
            count += 1;
            work.extend(d.args.iter().copied());
        }
    }
    count
}

/// A copy of `v`'s expression at the end of `block`, operands first
/// (values copied before are reused; an explicit stack, as expressions
/// may be long chains).
fn copy_expression(
    shader: &mut Shader<'_, GenericOp>,
    block: Block,
    v: Value,
    copies: &mut HashMap<Value, Value>,
) -> Value {
    let mut work = vec![v];
    while let Some(&top) = work.last() {
        if copies.contains_key(&top) {
            work.pop();
            continue;
        }
        let def = shader.value_def(top);
        let args: Vec<Value> = shader.inst(def).args.to_vec();
        let missing: Vec<Value> = args
            .iter()
            .copied()
            .filter(|a| !copies.contains_key(a))
            .collect();
        if !missing.is_empty() {
            work.extend(missing);
            continue;
        }
        work.pop();
        let args: Vec<Value> = args.iter().map(|a| copies[a]).collect();
        let op = shader.inst(def).op;
        let ty: Type = shader.value_type(top);
        let i = shader.append_inst(block, op, &args, &[], None, Some(ty));
        let c = shader.inst(i).result.expect("created with a result");
        copies.insert(top, c);
    }
    copies[&v]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hoisted(text: &str, words: u32) -> (Option<Hoisted>, String) {
        let arena = lathe_ir::Bump::new();
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let preloaded = |op: &Op<GenericOp>| matches!(op, Op::Input { .. });
        let budget = Budget {
            first_word: 16,
            words,
        };
        let h = hoist(&mut shader, budget, preloaded);
        lathe_ir::validate(&shader).unwrap();
        (h, lathe_ir::print(&shader))
    }

    const TWO: &str = "shader fragment\nb0:\n  %0:f32 = input index=0\n  %1:f32 = load_uniform index=0\n  %2:f32 = load_uniform index=1\n  %3:f32 = fadd %1, %2\n  %4:f32 = fmul %3, %3\n  %5:f32 = rcp %4\n  %6:f32 = fmul %1, %2\n  %7:f32 = fmul %0, %5\n  %8:f32 = fadd %7, %6\n  store_output slot=0 comp=0 %8\n  ret\n";

    #[test]
    fn no_budget_changes_nothing() {
        let arena = lathe_ir::Bump::new();
        let before = lathe_ir::print(&lathe_ir::parse::<GenericOp>(&arena, TWO).unwrap());
        assert_eq!(hoisted(TWO, 0), (None, before));
    }

    #[test]
    fn the_longest_expression_is_taken_first_and_inputs_lead_the_preamble() {
        let (h, text) = hoisted(TWO, 1);
        assert_eq!(h.map(|h| h.words), Some(1));
        // rcp(fmul(fadd)) saves three operations, the lone fmul one.
        let (preamble, main) = text.split_once("b1:").unwrap();
        assert!(preamble.contains("rcp") && !main.contains("rcp"), "{text}");
        assert!(main.contains("load_uniform index=16"), "{text}");
        assert_eq!(main.matches("fmul").count(), 2, "{text}");
        let first = text.lines().nth(2).unwrap();
        assert!(first.ends_with("= input index=0"), "{text}");
        let (h, text) = hoisted(TWO, 8);
        assert_eq!(h.map(|h| h.words), Some(2));
        let (preamble, main) = text.split_once("b1:").unwrap();
        assert_eq!(preamble.matches("store_uniform").count(), 2, "{text}");
        assert_eq!(main.matches("fmul").count(), 1, "{text}");
        assert!(main.contains("load_uniform index=17"), "{text}");
    }

    #[test]
    fn what_may_be_undefined_is_hoisted_only_from_the_entry() {
        let guarded = "shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:u32 = load_uniform index=0\n  %2:u32 = load_uniform index=1\n  %3:bool = ine %2, %0\n  branch %3, b1, b2\nb1:\n  %4:u32 = udiv %1, %2\n  %5:u32 = iadd %4, %0\n  store_output slot=0 comp=0 %5\n  jump b2\nb2:\n  ret\n";
        assert_eq!(hoisted(guarded, 4).0, None);
        let entry = "shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:u32 = load_uniform index=0\n  %2:u32 = load_uniform index=1\n  %4:u32 = udiv %1, %2\n  %5:u32 = iadd %4, %0\n  store_output slot=0 comp=0 %5\n  ret\n";
        let (h, text) = hoisted(entry, 4);
        assert_eq!(h.map(|h| h.words), Some(1), "{text}");
        assert!(text.contains("store_uniform index=16"), "{text}");
    }
}
