//! Step 4: outputs that always hold the same value are one varying.
//!
//! Two consumed outputs are duplicates when their stores write the same SSA
//! values in the same blocks in the same order (so every run leaves them
//! equal), their widths match, and the consumer reads them the same way:
//! the same single interpolation qualifier, in the same category (VARn
//! with VARn, colours with colours, where a colour's key also covers its
//! back colour's stores). The consumer's loads of the later one are
//! retargeted to the first; the stores left unread go in the next removal.
//! Texture coordinates are never merged (point-sprite replacement).

use super::Link;
use super::slots::{self, Class};
use super::varyings::{Comp, bits, common_interp, input_loads, output_stores, retarget, stored};
use indexmap::IndexMap;
use lathe_ir::{Block, Inst, Interp, Value};

#[derive(PartialEq, Eq, Hash)]
struct Key {
    color: bool,
    interp: Interp,
    bits: u32,
    front: Vec<(Option<Block>, Value)>,
    back: Vec<(Option<Block>, Value)>,
}

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let key_of = |list: Option<&Vec<Inst>>| -> Vec<(Option<Block>, Value)> {
        list.into_iter()
            .flatten()
            .map(|&s| (l.p.inst(s).block, stored(l.p, s)))
            .collect()
    };
    let mut first: IndexMap<Key, Comp> = IndexMap::new();
    let mut moves: Vec<(Inst, Comp)> = Vec::new();
    for (&c, list) in &loads {
        let color = match slots::input_class(c.0) {
            Class::Var => false,
            Class::Color { back: false, .. } => true,
            _ => continue,
        };
        let Some(front_stores) = stores.get(&c) else {
            continue;
        };
        let Some(interp) = common_interp(l.c, list) else {
            continue;
        };
        let width = bits(l.p.value_type(stored(l.p, front_stores[0])));
        let widths_match = list
            .iter()
            .all(|&ld| bits(l.c.value_type(l.c.inst(ld).result.expect("load"))) == width);
        if !widths_match {
            continue;
        }
        let key = Key {
            color,
            interp,
            bits: width,
            front: key_of(Some(front_stores)),
            back: key_of(slots::back_of(c.0).and_then(|b| stores.get(&(b, c.1)))),
        };
        match first.get(&key) {
            Some(&kept) => {
                moves.extend(list.iter().map(|&ld| (ld, kept)));
                l.report.deduplicated += 1;
            }
            None => {
                first.insert(key, c);
            }
        }
    }
    for &(ld, to) in &moves {
        retarget(l.c, ld, to, None);
    }
    !moves.is_empty()
}
