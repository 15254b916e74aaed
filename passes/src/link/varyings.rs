//! What passes between the two shaders, gathered from the IR, and the
//! small editing helpers every step shares (cloning expressions across
//! shaders, inserting and removing instructions).

use super::slots::{self, Class};
use indexmap::IndexMap;
use lathe_ir::{
    Block, GenericOp, Inst, Interp, InterpMode, Op, Opcode, Scalar, Shader, Sysval, Type, Value,
};
use std::collections::HashMap;

/// One scalar varying component: `(slot, component)`.
pub type Comp = (u16, u8);

/// The generic opcode of an instruction, if it has one.
pub(crate) fn generic(s: &Shader<'_, GenericOp>, i: Inst) -> Option<GenericOp> {
    match s.inst(i).op {
        Op::Opcode(o) => Some(o),
        _ => None,
    }
}

/// Output stores of the producer per component, in layout order.
pub(crate) fn output_stores(s: &Shader<'_, GenericOp>) -> IndexMap<Comp, Vec<Inst>> {
    let mut map: IndexMap<Comp, Vec<Inst>> = IndexMap::new();
    for (_, i) in s.insts_in_order() {
        if let Some(GenericOp::StoreOutput { slot, comp }) = generic(s, i) {
            map.entry((slot, comp)).or_default().push(i);
        }
    }
    map
}

/// Input loads of the consumer per component, in layout order.
pub(crate) fn input_loads(s: &Shader<'_, GenericOp>) -> IndexMap<Comp, Vec<Inst>> {
    let mut map: IndexMap<Comp, Vec<Inst>> = IndexMap::new();
    for (_, i) in s.insts_in_order() {
        if let Some(GenericOp::LoadInput { slot, comp, .. }) = generic(s, i) {
            map.entry((slot, comp)).or_default().push(i);
        }
    }
    map
}

pub(crate) fn load_interp(s: &Shader<'_, GenericOp>, i: Inst) -> Interp {
    match generic(s, i) {
        Some(GenericOp::LoadInput { interp, .. }) => interp,
        _ => Interp::FLAT,
    }
}

/// The one qualifier all loads of a component use, `None` if they differ.
pub(crate) fn common_interp(s: &Shader<'_, GenericOp>, loads: &[Inst]) -> Option<Interp> {
    let first = load_interp(s, *loads.first()?);
    loads
        .iter()
        .all(|&l| load_interp(s, l) == first)
        .then_some(first)
}

/// The value a store writes.
pub(crate) fn stored(s: &Shader<'_, GenericOp>, store: Inst) -> Value {
    s.inst(store).args[0]
}

pub(crate) fn result(s: &Shader<'_, GenericOp>, i: Inst) -> Value {
    s.inst(i).result.expect("value-producing instruction")
}

/// Width in bits of a varying component's type (16 or 32).
pub(crate) fn bits(ty: Type) -> u32 {
    ty.scalar.bits()
}

/// Does the consumer read this producer output (a back colour is read
/// through its front colour)?
pub(crate) fn is_read(loads: &IndexMap<Comp, Vec<Inst>>, c: Comp) -> bool {
    loads.contains_key(&(slots::front_of(c.0), c.1))
}

/// Values that are the same for every vertex of a primitive: constants,
/// uniform and UBO loads at such offsets, the per-draw and per-instance
/// system values, and pure arithmetic on them (the vertex divergence
/// analysis the design asks for; phis, inputs and the vertex index
/// diverge).
pub(crate) fn convergent_values(s: &Shader<'_, GenericOp>) -> Vec<bool> {
    let mut conv = vec![false; s.value_capacity()];
    // Layout order visits definitions before uses except through phis,
    // which are divergent here anyway.
    for (_, i) in s.insts_in_order() {
        let d = s.inst(i);
        let Some(r) = d.result else { continue };
        let ok = match d.op {
            Op::Opcode(GenericOp::LoadInput { .. }) => false,
            Op::Opcode(GenericOp::LoadSysval { sysval, .. }) => matches!(
                sysval,
                Sysval::InstanceIndex
                    | Sysval::BaseVertex
                    | Sysval::BaseInstance
                    | Sysval::ViewIndex
            ),
            Op::Opcode(GenericOp::ArrayLoad { .. }) => false,
            Op::Opcode(o) => !o.effects().side_effects && d.operands().all(|v| conv[v.index()]),
            Op::Collect | Op::Split { .. } => d.operands().all(|v| conv[v.index()]),
            _ => false,
        };
        conv[r.index()] = ok;
    }
    conv
}

/// Producer outputs that are convergent: one value, convergent, stored in
/// blocks every run executes (so every vertex ends with that value).
pub(crate) fn convergent_outputs(
    s: &Shader<'_, GenericOp>,
    stores: &IndexMap<Comp, Vec<Inst>>,
) -> IndexMap<Comp, bool> {
    let conv = convergent_values(s);
    let always = super::graph::unconditional_blocks(s);
    stores
        .iter()
        .map(|(&c, list)| {
            let v = stored(s, list[0]);
            let ok = conv[v.index()]
                && list.iter().all(|&st| {
                    stored(s, st) == v && s.inst(st).block.is_some_and(|b| always[b.index()])
                });
            (c, ok)
        })
        .collect()
}

/// Does `ty` interpolate (a float)?
pub(crate) fn interpolable(ty: Type) -> bool {
    ty.scalar.is_float()
}

pub(crate) fn is_interpolated(i: Interp) -> bool {
    i.mode != InterpMode::Flat
}

/// A bit-for-bit reinterpretation of `v` as `ty` (equal widths), or `v`.
pub(crate) fn cast(
    s: &mut Shader<'_, GenericOp>,
    v: Value,
    ty: Type,
    out: &mut Vec<Inst>,
) -> Value {
    if s.value_type(v) == ty {
        return v;
    }
    let i = s.create_inst(
        Op::Opcode(GenericOp::Mov {
            abs: false,
            neg: false,
        }),
        &[v],
        &[],
        None,
        Some(ty),
    );
    out.push(i);
    result(s, i)
}

/// Copy the expression computing `v` in `src` into `dst` as detached
/// instructions appended to `out` in dependency order. `leaf` may supply a
/// `dst` value for a `src` value (cast to its type when it differs); other
/// instructions are copied with their opcodes.
pub(crate) fn clone_expr(
    src: &Shader<'_, GenericOp>,
    v: Value,
    dst: &mut Shader<'_, GenericOp>,
    leaf: &mut dyn FnMut(Value) -> Option<Value>,
    memo: &mut HashMap<Value, Value>,
    out: &mut Vec<Inst>,
) -> Value {
    if let Some(&x) = memo.get(&v) {
        return x;
    }
    let ty = src.value_type(v);
    let x = if let Some(x) = leaf(v) {
        cast(dst, x, ty, out)
    } else {
        let d = src.inst(src.value_def(v));
        let op = d.op;
        let args: Vec<Value> = d.args.to_vec();
        let args: Vec<Value> = args
            .into_iter()
            .map(|a| clone_expr(src, a, dst, leaf, memo, out))
            .collect();
        let i = dst.create_inst(op, &args, &[], None, Some(ty));
        out.push(i);
        result(dst, i)
    };
    memo.insert(v, x);
    x
}

/// Put detached instructions at the start of the entry block.
pub(crate) fn insert_at_entry(s: &mut Shader<'_, GenericOp>, new: &[Inst]) {
    let Some(entry) = s.entry() else { return };
    let old = s.block_insts(entry).to_vec();
    let phis = old.iter().take_while(|&&i| s.inst(i).op.is_phi()).count();
    let mut list = old[..phis].to_vec();
    list.extend_from_slice(new);
    list.extend_from_slice(&old[phis..]);
    s.set_block_insts(entry, &list);
}

/// Put detached instructions just before a block's terminator.
pub(crate) fn insert_before_end(s: &mut Shader<'_, GenericOp>, b: Block, new: &[Inst]) {
    let mut list = s.block_insts(b).to_vec();
    let at = if s.terminator(b).is_some() {
        list.len() - 1
    } else {
        list.len()
    };
    list.splice(at..at, new.iter().copied());
    s.set_block_insts(b, &list);
}

/// Unlink instructions from their blocks.
pub(crate) fn remove(s: &mut Shader<'_, GenericOp>, dead: &[Inst]) {
    let mut is_dead = vec![false; s.inst_capacity()];
    for &i in dead {
        is_dead[i.index()] = true;
    }
    for b in s.layout().to_vec() {
        s.retain_insts(b, |i, _| !is_dead[i.index()]);
    }
}

/// Make every use of a key read its value instead.
pub(crate) fn replace_uses(s: &mut Shader<'_, GenericOp>, map: &HashMap<Value, Value>) {
    if !map.is_empty() {
        s.rewrite_operands(|v| map.get(&v).copied().unwrap_or(v));
    }
}

/// A new load of `comp` with the given qualifier and type, detached.
pub(crate) fn new_load(s: &mut Shader<'_, GenericOp>, c: Comp, interp: Interp, ty: Type) -> Inst {
    s.create_inst(
        Op::Opcode(GenericOp::LoadInput {
            slot: c.0,
            comp: c.1,
            interp,
        }),
        &[],
        &[],
        None,
        Some(ty),
    )
}

/// Rewrite a load or store to another component (and qualifier).
pub(crate) fn retarget(s: &mut Shader<'_, GenericOp>, i: Inst, to: Comp, interp: Option<Interp>) {
    let op = match s.inst(i).op {
        Op::Opcode(GenericOp::LoadInput { interp: old, .. }) => GenericOp::LoadInput {
            slot: to.0,
            comp: to.1,
            interp: interp.unwrap_or(old),
        },
        Op::Opcode(GenericOp::StoreOutput { .. }) => GenericOp::StoreOutput {
            slot: to.0,
            comp: to.1,
        },
        _ => return,
    };
    s.inst_mut(i).op = Op::Opcode(op);
}

/// A constant of `ty` (detached).
pub(crate) fn constant(s: &mut Shader<'_, GenericOp>, ty: Type, bits: u32) -> Inst {
    s.create_inst(
        Op::Opcode(GenericOp::Const { bits }),
        &[],
        &[],
        None,
        Some(ty),
    )
}

/// The bits of `1.0` in a float type.
pub(crate) fn one_bits(ty: Type) -> Option<u32> {
    match ty.scalar {
        Scalar::F32 => Some(1.0f32.to_bits()),
        Scalar::F16 => Some(0x3c00),
        _ => None,
    }
}

/// A count of varyings: distinct vec4 slots and scalar components.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub vec4_slots: usize,
    pub components: usize,
}

/// One varying component as the interface sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Varying {
    pub slot: u16,
    pub comp: u8,
    /// The producer's stored type, or the consumer's loaded one.
    pub ty: Type,
    /// The consumer's qualifiers (several if it loads the component more
    /// than one way); empty when the consumer does not read it.
    pub interp: Vec<Interp>,
    pub written: bool,
    pub read: bool,
}

/// The varyings between two shaders: components the producer writes (other
/// than system values nobody reads) or the consumer reads (other than
/// rasteriser-made inputs), ordered by slot.
pub fn varyings(
    producer: &Shader<'_, GenericOp>,
    consumer: &Shader<'_, GenericOp>,
) -> Vec<Varying> {
    let stores = output_stores(producer);
    let loads = input_loads(consumer);
    let mut all: IndexMap<Comp, Varying> = IndexMap::new();
    for (&c, list) in &stores {
        let class = slots::output_class(c.0);
        let read = is_read(&loads, c);
        if class == Class::Fixed || (class == Class::Sysval && !read) {
            continue;
        }
        all.insert(
            c,
            Varying {
                slot: c.0,
                comp: c.1,
                ty: producer.value_type(stored(producer, list[0])),
                interp: Vec::new(),
                written: true,
                read,
            },
        );
    }
    for (&c, list) in &loads {
        if slots::input_class(c.0) == Class::Fixed {
            continue;
        }
        let ty = consumer.value_type(result(consumer, list[0]));
        let v = all.entry(c).or_insert(Varying {
            slot: c.0,
            comp: c.1,
            ty,
            interp: Vec::new(),
            written: false,
            read: true,
        });
        v.read = true;
        for &l in list {
            let q = load_interp(consumer, l);
            if !v.interp.contains(&q) {
                v.interp.push(q);
            }
        }
    }
    all.sort_keys();
    all.into_values().collect()
}

/// Count vec4 slots and components of [`varyings`].
pub fn count(producer: &Shader<'_, GenericOp>, consumer: &Shader<'_, GenericOp>) -> Count {
    let v = varyings(producer, consumer);
    let mut slots: Vec<u16> = v.iter().map(|v| v.slot).collect();
    slots.dedup();
    Count {
        vec4_slots: slots.len(),
        components: v.len(),
    }
}
