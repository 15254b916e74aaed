//! Step 2: remove outputs the consumer does not read and inputs the
//! producer does not write.
//!
//! - An unread output is removed, except system values (position, point
//!   size, clip and cull distances, layer, viewport) and outputs captured
//!   by transform feedback: those stay, and the report lists them as
//!   "no varying" (written for the fixed function or the buffer, not for
//!   the next stage).
//! - An unwritten input is undefined; it becomes the constant 0 (any value
//!   refines undefined; layer and viewport really are 0 then). A texture
//!   coordinate keeps `.xy` (point-sprite replacement may supply them) and
//!   reads `.zw` as `(0, 1)`, the replacement's values. Inputs the
//!   rasteriser makes (primitive ID, fragment position) are not varyings.

use super::Link;
use super::slots::{self, Class};
use super::varyings::{
    constant, input_loads, insert_at_entry, is_read, one_bits, output_stores, remove, replace_uses,
    result,
};
use std::collections::HashMap;

pub(crate) fn run(l: &mut Link<'_, '_, '_>) -> bool {
    let stores = output_stores(l.p);
    let loads = input_loads(l.c);
    let mut dead_stores = Vec::new();
    for (&c, list) in &stores {
        if is_read(&loads, c) || l.opts.xfb.contains(&c) {
            continue;
        }
        match slots::output_class(c.0) {
            Class::Fixed | Class::Sysval => {}
            _ => dead_stores.extend_from_slice(list),
        }
    }
    l.report.removed_outputs += dead_stores.len();
    remove(l.p, &dead_stores);

    let mut dead_loads = Vec::new();
    let mut new = Vec::new();
    let mut map = HashMap::new();
    for (&c, list) in &loads {
        let written = stores.contains_key(&c)
            || slots::back_of(c.0).is_some_and(|b| stores.contains_key(&(b, c.1)));
        if written {
            continue;
        }
        for &load in list {
            let ty = l.c.value_type(result(l.c, load));
            let bits = match (slots::input_class(c.0), c.1) {
                (Class::Fixed, _) | (Class::Tex, 0 | 1) => continue,
                (Class::Tex, 3) => match one_bits(ty) {
                    Some(b) => b,
                    None => continue,
                },
                _ => 0,
            };
            let k = constant(l.c, ty, bits);
            new.push(k);
            map.insert(result(l.c, load), result(l.c, k));
            dead_loads.push(load);
        }
    }
    l.report.removed_inputs += dead_loads.len();
    insert_at_entry(l.c, &new);
    replace_uses(l.c, &map);
    remove(l.c, &dead_loads);
    !dead_stores.is_empty() || !dead_loads.is_empty()
}
