//! Step 7: compaction of the VARn varyings (FOGC included) into as few
//! vec4 slots as the groups of the design allow, renumbered from VAR0.
//!
//! Groups, in slot order:
//! 1. interpolated components, one group per qualifier and width, on
//!    vec4s of their own (the hardware interpolates a slot one way);
//! 2. convergent components (the same at every vertex, so every qualifier
//!    gives their value) fill the holes of interpolated vec4s of their
//!    width, taking that vec4's qualifier; the rest are packed as flat;
//! 3. flat components, 32- and 16-bit mixed;
//! 4. components only transform feedback reads, last, so the consumer's
//!    slots stay consecutive.
//!
//! Colours (COLn with their BFCn) are then packed among themselves
//! ([`compact_colours`]).
//!
//! The IR addresses whole 32-bit components: two flat 16-bit varyings
//! share one through bit operations (`pack16.rs`); other 16-bit
//! varyings take a component of their own. A component the consumer reads with several qualifiers or at
//! another width stays where it is and keeps its slot. Stores and loads are
//! renumbered together; the report lists the producer's moves.

use super::Link;
use super::slots::{self, Class};
use super::varyings::{
    Comp, bits, common_interp, convergent_outputs, input_loads, output_stores, result, retarget,
    stored,
};
use indexmap::IndexMap;
use lathe_ir::{Inst, Interp, InterpMode};
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Group {
    Interp(Interp, u32),
    Convergent(u32),
    Flat,
    XfbOnly,
}

struct Vec4 {
    /// Qualifier for interpolated vec4s, `None` for flat ones.
    interp: Option<(Interp, u32)>,
    comps: Vec<Comp>,
}

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    l.report.packed_16bit = super::pack16::run(l);
    let packed = l.report.packed_16bit > 0;
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let conv = convergent_outputs(l.p, &stores);
    let mut pinned: Vec<u16> = Vec::new();
    let mut groups: IndexMap<Group, Vec<Comp>> = IndexMap::new();
    let mut comps: Vec<Comp> = stores
        .keys()
        .chain(loads.keys())
        .copied()
        .filter(|c| slots::output_class(c.0) == Class::Var && slots::input_class(c.0) == Class::Var)
        .collect();
    comps.sort_unstable();
    comps.dedup();
    for &c in &comps {
        let Some(st) = stores.get(&c) else {
            // Read but never written: the removal step did not run.
            pinned.push(c.0);
            continue;
        };
        let width = bits(l.p.value_type(stored(l.p, st[0])));
        let group = match loads.get(&c) {
            None if l.opts.xfb.contains(&c) => Group::XfbOnly,
            None => {
                pinned.push(c.0);
                continue;
            }
            Some(lds) => {
                let same_width = lds
                    .iter()
                    .all(|&ld| bits(l.c.value_type(result(l.c, ld))) == width);
                match common_interp(l.c, lds) {
                    Some(q) if same_width => {
                        if q.mode == InterpMode::Flat {
                            Group::Flat
                        } else if conv.get(&c).copied().unwrap_or(false) && !l.opts.preserve_inf {
                            Group::Convergent(width)
                        } else {
                            Group::Interp(q, width)
                        }
                    }
                    _ => {
                        pinned.push(c.0);
                        continue;
                    }
                }
            }
        };
        groups.entry(group).or_default().push(c);
    }
    pinned.sort_unstable();
    pinned.dedup();

    let mut vec4s: Vec<Vec4> = Vec::new();
    for (&g, list) in &groups {
        if let Group::Interp(q, w) = g {
            for chunk in list.chunks(4) {
                vec4s.push(Vec4 {
                    interp: Some((q, w)),
                    comps: chunk.to_vec(),
                });
            }
        }
    }
    let mut flat: Vec<Comp> = groups.get(&Group::Flat).cloned().unwrap_or_default();
    for w in [32, 16] {
        let Some(list) = groups.get(&Group::Convergent(w)) else {
            continue;
        };
        let mut rest = list.iter().copied();
        for v in vec4s
            .iter_mut()
            .filter(|v| v.interp.is_some_and(|(_, vw)| vw == w))
        {
            while v.comps.len() < 4 {
                match rest.next() {
                    Some(c) => v.comps.push(c),
                    None => break,
                }
            }
        }
        flat.extend(rest);
    }
    let first_flat = vec4s.len();
    for chunk in flat.chunks(4) {
        vec4s.push(Vec4 {
            interp: None,
            comps: chunk.to_vec(),
        });
    }
    if let Some(xfb) = groups.get(&Group::XfbOnly) {
        let mut rest = xfb.iter().copied();
        if vec4s.len() > first_flat {
            let last = vec4s.last_mut().expect("a flat vec4");
            while last.comps.len() < 4 {
                match rest.next() {
                    Some(c) => last.comps.push(c),
                    None => break,
                }
            }
        }
        let rest: Vec<Comp> = rest.collect();
        for chunk in rest.chunks(4) {
            vec4s.push(Vec4 {
                interp: None,
                comps: chunk.to_vec(),
            });
        }
    }

    // Slots from VAR0, skipping pinned ones.
    let mut mapping: HashMap<Comp, (Comp, Option<Interp>)> = HashMap::new();
    let mut next = 0u16;
    for v in &vec4s {
        while pinned.contains(&next) {
            next += 1;
        }
        if next >= slots::slot::VAR_COUNT {
            return packed;
        }
        for (k, &c) in v.comps.iter().enumerate() {
            let interp = match v.interp {
                Some((q, _)) => q,
                None => Interp::FLAT,
            };
            mapping.insert(c, ((next, k as u8), Some(interp)));
        }
        next += 1;
    }
    let mut changed = packed | compact_vars(l, &stores, &loads, &groups, &mapping);
    changed |= compact_colours(l);
    changed
}

/// Renumber the VARn stores and loads by `mapping`.
fn compact_vars(
    l: &mut Link<'_, '_, '_>,
    stores: &IndexMap<Comp, Vec<Inst>>,
    loads: &IndexMap<Comp, Vec<Inst>>,
    groups: &IndexMap<Group, Vec<Comp>>,
    mapping: &HashMap<Comp, (Comp, Option<Interp>)>,
) -> bool {
    let mut changed = false;
    for (&c, list) in stores {
        if let Some(&(to, _)) = mapping.get(&c) {
            for &st in list {
                retarget(l.p, st, to, None);
            }
            if to != c {
                l.report.relocated.push((c, to));
                changed = true;
            }
        }
    }
    for (&c, list) in loads {
        if let Some(&(to, interp)) = mapping.get(&c) {
            for &ld in list {
                // Only convergent components change qualifier.
                let keep = matches!(groups_of(groups, c), Some(Group::Convergent(_)));
                let q = if keep { interp } else { None };
                changed |= q.is_some_and(|q| q != super::varyings::load_interp(l.c, ld));
                retarget(l.c, ld, to, q);
            }
        }
    }
    changed
}

fn groups_of(groups: &IndexMap<Group, Vec<Comp>>, c: Comp) -> Option<Group> {
    groups
        .iter()
        .find(|(_, list)| list.contains(&c))
        .map(|(&g, _)| g)
}

/// Colours are packed the same way but among themselves (flat shading,
/// the provoking vertex, two-sided selection and the colour clamp apply
/// to them only): the front colours the fragment shader reads, one group
/// per qualifier and width, each group from a new COLn slot, channels in
/// the rotated order that starts at the first VARn channel left unused
/// (VAR0.z unused: COL0.z, COL0.w, COL0.x, COL0.y, COL1.z, ...), so that a
/// driver can merge VARn and COLn storage. A back colour moves with its
/// front colour. Colours are left as they are when one is read two ways,
/// written at another width, or written but unread (transform feedback),
/// or when they would need more than COL0 and COL1.
fn compact_colours(l: &mut Link<'_, '_, '_>) -> bool {
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let start = super::backward::free_component(&stores, &loads).map_or(0, |c| c.1);
    let mut groups: IndexMap<(Interp, u32), Vec<Comp>> = IndexMap::new();
    let mut covered: Vec<Comp> = Vec::new();
    for (&c, lds) in &loads {
        if !matches!(slots::input_class(c.0), Class::Color { back: false, .. }) {
            continue;
        }
        let Some(q) = common_interp(l.c, lds) else {
            return false;
        };
        let width = bits(l.c.value_type(result(l.c, lds[0])));
        let back = slots::back_of(c.0).map(|b| (b, c.1));
        let written: Vec<Inst> = [Some(c), back]
            .into_iter()
            .flatten()
            .filter_map(|k| stores.get(&k))
            .flatten()
            .copied()
            .collect();
        let loaded_widths = lds
            .iter()
            .all(|&ld| bits(l.c.value_type(result(l.c, ld))) == width);
        let stored_widths = written
            .iter()
            .all(|&st| bits(l.p.value_type(stored(l.p, st))) == width);
        if written.is_empty() || !loaded_widths || !stored_widths {
            return false;
        }
        covered.extend([Some(c), back].into_iter().flatten());
        groups.entry((q, width)).or_default().push(c);
    }
    let colour_store = |c: &Comp| matches!(slots::output_class(c.0), Class::Color { .. });
    if stores
        .keys()
        .any(|c| colour_store(c) && !covered.contains(c))
    {
        return false;
    }
    let mut mapping: HashMap<Comp, Comp> = HashMap::new();
    let mut slot = slots::slot::COL0;
    for list in groups.values() {
        for chunk in list.chunks(4) {
            if slot > slots::slot::COL1 {
                return false;
            }
            for (k, &c) in chunk.iter().enumerate() {
                let to = (slot, ((start as usize + k) % 4) as u8);
                mapping.insert(c, to);
                if let (Some(b), Some(tb)) = (slots::back_of(c.0), slots::back_of(to.0)) {
                    mapping.insert((b, c.1), (tb, to.1));
                }
            }
            slot += 1;
        }
    }
    let mut changed = false;
    for (&c, list) in &stores {
        if let Some(&to) = mapping.get(&c) {
            for &st in list {
                retarget(l.p, st, to, None);
            }
            if to != c {
                l.report.relocated.push((c, to));
                changed = true;
            }
        }
    }
    for (&c, list) in &loads {
        if let Some(&to) = mapping.get(&c) {
            for &ld in list {
                retarget(l.c, ld, to, None);
            }
        }
    }
    changed
}
