//! Assembly as generated code: every display template, per leaf and per
//! combination of its `when`s, becomes a static form (see
//! [`crate::asm_rt`]) whose names are resolved here, at expansion time,
//! exactly as the engine resolves them; mnemonics go into a sorted table.
//! The engine stays the oracle: the `lathe-adreno` / `lathe-mali`
//! differential tests compare both on every line the disassembler prints.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::asm_rt::{BEFORE_KEY, IN_KEYS, LATE_FIRST, in_set};
use crate::display::MAX_DEPTH;
use crate::expr::{BinOp, Expr, ExprEnv, ExprKind, UnOp};
use crate::model::{EncId, Field, FieldType, Isa, ItemRef, Level, Piece};

/// One combination of active `when`s along a leaf's chain.
type Variant = [Option<usize>; MAX_DEPTH];

/// The engine's order of variants: for each level with `when`s, each
/// `when` then none; later levels vary fastest.
fn variants(isa: &Isa, leaf: EncId) -> Vec<Variant> {
    let mut out = vec![[None; MAX_DEPTH]];
    for (k, enc) in isa.chain(leaf).take(MAX_DEPTH).enumerate() {
        let n = isa.encodings[enc].whens.len();
        if n == 0 {
            continue;
        }
        let mut next = Vec::with_capacity(out.len() * (n + 1));
        for v in &out {
            for j in 0..n.min(127) {
                let mut w = *v;
                w[k] = Some(j);
                next.push(w);
            }
            next.push(*v);
        }
        out = next;
    }
    out
}

/// The levels a variant sees, in lookup order.
fn levels<'a>(isa: &'a Isa, leaf: EncId, var: &Variant) -> Vec<&'a Level> {
    let mut v = Vec::new();
    for (k, enc) in isa.chain(leaf).take(MAX_DEPTH).enumerate() {
        let e = &isa.encodings[enc];
        if let Some(j) = var[k] {
            v.push(&e.whens[j].level);
        }
        v.push(&e.plain);
    }
    v
}

enum Resolved<'a> {
    Item(ItemRef<'a>),
    Param(usize),
}

fn resolve<'a>(isa: &'a Isa, leaf: EncId, var: &Variant, name: &str) -> Option<Resolved<'a>> {
    for l in levels(isa, leaf, var) {
        if let Some(it) = l.item(name) {
            return Some(Resolved::Item(it));
        }
    }
    let root = &isa.encodings[isa.encodings[leaf].root];
    root.params
        .iter()
        .position(|p| p == name)
        .map(Resolved::Param)
}

/// The bits of the fields `e` reads in the scope of `leaf`/`var`, through
/// derived values and named expressions (params of the caller excluded).
fn expr_fields(isa: &Isa, leaf: EncId, var: &Variant, e: &Expr, seen: &mut Vec<String>) -> u64 {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Gen => 0,
        ExprKind::Name(n) => {
            if seen.iter().any(|s| s == n) {
                return 0;
            }
            seen.push(n.to_string());
            match resolve(isa, leaf, var, n) {
                Some(Resolved::Item(ItemRef::Field(f))) if !matches!(f.ty, FieldType::Sub(..)) => {
                    f.mask()
                }
                Some(Resolved::Item(ItemRef::Derived(d))) => {
                    expr_fields(isa, leaf, var, &d.expr, seen)
                }
                _ => 0,
            }
        }
        ExprKind::Named(_, idx, args) => {
            let mut m = args
                .iter()
                .map(|a| expr_fields(isa, leaf, var, a, seen))
                .fold(0, |a, b| a | b);
            if let Some(named) = idx.and_then(|i| isa.exprs.get(i)) {
                m |= expr_fields(isa, leaf, var, &named.expr, seen);
            }
            m
        }
        ExprKind::Unary(_, a) => expr_fields(isa, leaf, var, a, seen),
        ExprKind::Binary(_, a, b) => {
            expr_fields(isa, leaf, var, a, seen) | expr_fields(isa, leaf, var, b, seen)
        }
        ExprKind::Cond(c, a, b) => {
            expr_fields(isa, leaf, var, c, seen)
                | expr_fields(isa, leaf, var, a, seen)
                | expr_fields(isa, leaf, var, b, seen)
        }
    }
}

/// A derived value that is bit fields side by side (`(HI << 8) | LO`,
/// `HI * 32 | LO`): where each part of a shown value goes, as
/// `To::Parts`; `None` for anything else (the confirmation checks it).
fn invert(isa: &Isa, leaf: EncId, var: &Variant, e: &Expr) -> Option<TokenStream> {
    fn terms<'e>(e: &'e Expr, out: &mut Vec<(&'e str, u32)>) -> bool {
        match &e.kind {
            ExprKind::Binary(BinOp::BitOr, a, b) => terms(a, out) && terms(b, out),
            ExprKind::Name(n) => {
                out.push((n, 0));
                true
            }
            ExprKind::Binary(op, a, b) => match (&a.kind, &b.kind, op) {
                (ExprKind::Name(n), ExprKind::Int(k), BinOp::Shl) if (0..64).contains(k) => {
                    out.push((n, *k as u32));
                    true
                }
                (ExprKind::Name(n), ExprKind::Int(k), BinOp::Mul)
                    if *k > 0 && (*k as u64).is_power_of_two() =>
                {
                    out.push((n, k.trailing_zeros()));
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }
    let mut ts = Vec::new();
    if !terms(e, &mut ts) || ts.len() < 2 {
        return None;
    }
    let mut used = 0u64;
    let mut parts = Vec::new();
    // A sub-encoding's param (`BASE_HI` of `(BASE_HI * 2) | BASE_LO`):
    // its width is its caller's, so it must be the highest part.
    let mut param = None;
    for (name, shift) in ts {
        let f = match resolve(isa, leaf, var, name) {
            Some(Resolved::Item(ItemRef::Field(f))) => f,
            Some(Resolved::Param(i)) if param.is_none() => {
                param = Some((shift, i));
                continue;
            }
            _ => return None,
        };
        if matches!(f.ty, FieldType::Sub(..)) || shift + f.width > 64 {
            return None;
        }
        let bits = if f.width >= 64 {
            u64::MAX
        } else {
            ((1u64 << f.width) - 1) << shift
        };
        if used & bits != 0 {
            return None;
        }
        used |= bits;
        let (sh, w, r) = (
            Literal::u32_unsuffixed(shift),
            Literal::u32_unsuffixed(f.width),
            ranges_tokens(&f.ranges),
        );
        parts.push(quote! { (#sh, #w, Slot::Field(#r)) });
    }
    if let Some((shift, i)) = param {
        if used >> shift != 0 {
            return None;
        }
        // The fields beside it stay unknown, as in the engine, whose
        // search may override a caller's assert there (cat5 asserts bit
        // 47, where `BASE_LO` of `.base1` goes).
        parts.clear();
        let (sh, i) = (
            Literal::u32_unsuffixed(shift),
            Literal::u16_unsuffixed(i as u16),
        );
        parts.push(quote! { (#sh, 0, Slot::Param(#i)) });
    }
    Some(quote! { To::Parts(&[#(#parts),*]) })
}

fn ranges_tokens(ranges: &[crate::ast::BitRange]) -> TokenStream {
    let rs = ranges.iter().map(|r| {
        let (l, w) = (
            Literal::u32_unsuffixed(r.low),
            Literal::u32_unsuffixed(r.width()),
        );
        quote! { (#l, #w) }
    });
    quote! { &[#(#rs),*] }
}

/// A derived value that is one field plus a constant (`D_MINUS_ONE + 1`):
/// the shown value minus the constant goes into the field.
fn invert_add(isa: &Isa, leaf: EncId, var: &Variant, e: &Expr) -> Option<TokenStream> {
    let (name, add) = match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b) => match (&a.kind, &b.kind) {
            (ExprKind::Name(n), ExprKind::Int(k)) | (ExprKind::Int(k), ExprKind::Name(n)) => {
                (n, *k)
            }
            _ => return None,
        },
        ExprKind::Binary(BinOp::Sub, a, b) => match (&a.kind, &b.kind) {
            (ExprKind::Name(n), ExprKind::Int(k)) => (n, k.checked_neg()?),
            _ => return None,
        },
        _ => return None,
    };
    let Some(Resolved::Item(ItemRef::Field(f))) = resolve(isa, leaf, var, name) else {
        return None;
    };
    if matches!(f.ty, FieldType::Sub(..)) || f.width >= 64 {
        return None;
    }
    let (add, w, r) = (
        Literal::i64_unsuffixed(add),
        Literal::u32_unsuffixed(f.width),
        ranges_tokens(&f.ranges),
    );
    Some(quote! { To::Add(#add, #w, #r) })
}

/// The field bits an expression reads in the scope of `leaf`/`var`
/// (through derived values and named expressions), or `None` if it also
/// reads a param, the generation or anything else the word does not fix.
/// With `subs`, a sub-encoding operand reads as its field's bits (as the
/// engine evaluates it); without, it is not pure.
fn pure_inputs(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    e: &Expr,
    subs: bool,
    depth: usize,
) -> Option<u64> {
    if depth > crate::expr::MAX_EVAL_DEPTH {
        return None;
    }
    let go = |x: &Expr| pure_inputs(isa, leaf, var, x, subs, depth + 1);
    Some(match &e.kind {
        ExprKind::Int(_) => 0,
        ExprKind::Gen => return None,
        ExprKind::Name(n) => match resolve(isa, leaf, var, n)? {
            Resolved::Item(ItemRef::Field(f)) if subs || !matches!(f.ty, FieldType::Sub(..)) => {
                f.mask()
            }
            Resolved::Item(ItemRef::Derived(d)) => go(&d.expr)?,
            _ => return None,
        },
        ExprKind::Named(_, idx, args) => {
            let named = idx.and_then(|i| isa.exprs.get(i))?;
            // Parameters of expression functions are not followed.
            if !named.params.is_empty() {
                return None;
            }
            let mut m = go(&named.expr)?;
            for a in args {
                m |= go(a)?;
            }
            m
        }
        ExprKind::Unary(_, a) => go(a)?,
        ExprKind::Binary(_, a, b) => go(a)? | go(b)?,
        ExprKind::Cond(c, a, b) => go(c)? | go(a)? | go(b)?,
    })
}

/// Expressions of one leaf/variant evaluated over a word at expansion
/// time (fields read as their raw bits, as the engine reads them).
struct WordEnv<'a> {
    isa: &'a Isa,
    leaf: EncId,
    var: Variant,
    word: u64,
    generation: u32,
    depth: std::cell::Cell<usize>,
}

impl ExprEnv for WordEnv<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        match resolve(self.isa, self.leaf, &self.var, name)? {
            // A sub-encoding operand reads as its bits, as in the engine.
            Resolved::Item(ItemRef::Field(f)) => Some(f.extract(self.word) as i64),
            Resolved::Item(ItemRef::Derived(d)) => {
                let n = self.depth.get();
                if n > crate::expr::MAX_EVAL_DEPTH {
                    return None;
                }
                self.depth.set(n + 1);
                let v = d.expr.eval(self, n + 1).ok();
                self.depth.set(n);
                v
            }
            _ => None,
        }
    }
    fn generation(&self) -> u32 {
        self.generation
    }
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)> {
        self.isa
            .exprs
            .get(index)
            .map(|n| (n.params.as_slice(), &*n.expr))
    }
}

/// Most unshown bits a shown derived value may read to get a table.
const MAX_TABLE_BITS: u32 = 8;
/// Most assignments kept per shown value.
const MAX_TABLE_ENTRIES: usize = 16;

/// The value a derived of type `ty` and `width` shows for `v`, as the
/// assembler reads it back.
fn shown_key(ty: &FieldType, width: u32, v: i64) -> u64 {
    match ty {
        FieldType::Bool(_) | FieldType::BoolInv(_) => u64::from(v != 0),
        _ if width >= 64 => v as u64,
        _ => (v as u64) & ((1u64 << width) - 1),
    }
}

/// Every assignment of the `inputs` bits of `base`, the default first,
/// with the value `d` shows for it: `(value shown, bits)`.
fn assignments(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    d: &crate::model::Derived,
    generation: u32,
    base: u64,
    inputs: u64,
) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    let default = base & inputs;
    let mut sub = 0u64;
    loop {
        let bits = default ^ sub;
        let env = WordEnv {
            isa,
            leaf,
            var: *var,
            word: (base & !inputs) | bits,
            generation,
            depth: std::cell::Cell::new(0),
        };
        let v = d.expr.eval(&env, 0).ok()?;
        out.push((shown_key(&d.ty, d.width, v), bits));
        sub = (sub | !inputs).wrapping_add(1) & inputs;
        if sub == 0 {
            return Some(out);
        }
    }
}

/// A shown derived value that reads only unshown bits of its own scope:
/// every assignment of those bits evaluated here, at expansion time, and
/// kept per value shown (`To::Table`), default first, so reading the
/// value sets the bits instead of searching for them at run time.
#[allow(clippy::too_many_arguments)]
fn derived_table(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    d: &crate::model::Derived,
    generation: u32,
    known: u64,
    base: u64,
    shown: u64,
) -> Option<TokenStream> {
    let inputs = pure_inputs(isa, leaf, var, &d.expr, false, 0)? & !known;
    if inputs == 0 || inputs & shown != 0 || inputs.count_ones() > MAX_TABLE_BITS {
        return None;
    }
    let mut entries: Vec<(u64, u64)> = Vec::new();
    for (key, bits) in assignments(isa, leaf, var, d, generation, base, inputs)? {
        if entries.iter().filter(|(k, _)| *k == key).count() < MAX_TABLE_ENTRIES {
            entries.push((key, bits));
        }
    }
    let m = Literal::u64_unsuffixed(inputs);
    let es = entries.iter().map(|(k, b)| {
        let (k, b) = (Literal::u64_unsuffixed(*k), Literal::u64_unsuffixed(*b));
        quote! { (#k, #b) }
    });
    Some(quote! { To::Table(#m, &[#(#es),*]) })
}

/// A shown derived value that reads a sub-encoding operand's bits
/// (`RCK = TYPE == 7`, where TYPE shows `(f32)` or nothing): every
/// assignment of the bits it reads evaluated here, at expansion time, and
/// the values only one assignment shows kept with it (`To::Pin`), so
/// reading such a value sets the operand's bits instead of leaving them
/// to the search.
fn derived_pin(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    d: &crate::model::Derived,
    generation: u32,
    known: u64,
    base: u64,
) -> Option<TokenStream> {
    let inputs = pure_inputs(isa, leaf, var, &d.expr, true, 0)? & !known;
    let plain = pure_inputs(isa, leaf, var, &d.expr, false, 0);
    if plain.is_some() || inputs == 0 || inputs.count_ones() > MAX_TABLE_BITS {
        return None;
    }
    let mut entries: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (key, bits) in assignments(isa, leaf, var, d, generation, base, inputs)? {
        entries.entry(key).or_default().push(bits);
    }
    let es: Vec<TokenStream> = entries
        .iter()
        .filter_map(|(k, bits)| match bits[..] {
            [b] => {
                let (k, b) = (Literal::u64_unsuffixed(*k), Literal::u64_unsuffixed(b));
                Some(quote! { (#k, #b) })
            }
            _ => None,
        })
        .collect();
    if es.is_empty() {
        return None;
    }
    let m = Literal::u64_unsuffixed(inputs);
    Some(quote! { To::Pin(#m, &[#(#es),*]) })
}

/// A derived value that reads nothing (`NUM_SRC = 1`): `To::Const`.
fn const_derived(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    d: &crate::model::Derived,
) -> Option<TokenStream> {
    if pure_inputs(isa, leaf, var, &d.expr, false, 0)? != 0 {
        return None;
    }
    let env = WordEnv {
        isa,
        leaf,
        var: *var,
        word: 0,
        generation: 0,
        depth: std::cell::Cell::new(0),
    };
    let v = shown_key(&d.ty, d.width, d.expr.eval(&env, 0).ok()?);
    let v = Literal::u64_unsuffixed(v);
    Some(quote! { To::Const(#v) })
}

/// Values 0..GUARD_VALUES of each param are tabulated by a guard.
const GUARD_VALUES: u64 = 8;
/// Most params a guard tabulates.
const MAX_GUARD_PARAMS: usize = 4;

/// Params of a sub-encoding bound to values at expansion time.
struct ParamEnv<'a> {
    isa: &'a Isa,
    leaf: EncId,
    var: Variant,
    values: &'a [(usize, i64)],
}

impl ExprEnv for ParamEnv<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        match resolve(self.isa, self.leaf, &self.var, name)? {
            Resolved::Param(i) => self.values.iter().find(|(p, _)| *p == i).map(|(_, v)| *v),
            Resolved::Item(_) => None,
        }
    }
    fn generation(&self) -> u32 {
        0
    }
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)> {
        self.isa
            .exprs
            .get(index)
            .map(|n| (n.params.as_slice(), &*n.expr))
    }
}

/// The params an expression reads, if it reads nothing else.
fn only_params(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    e: &Expr,
    depth: usize,
    out: &mut Vec<usize>,
) -> bool {
    if depth > crate::expr::MAX_EVAL_DEPTH {
        return false;
    }
    let go = |x: &Expr, out: &mut Vec<usize>| only_params(isa, leaf, var, x, depth + 1, out);
    match &e.kind {
        ExprKind::Int(_) => true,
        ExprKind::Gen => false,
        ExprKind::Name(n) => match resolve(isa, leaf, var, n) {
            Some(Resolved::Param(i)) => {
                if !out.contains(&i) {
                    out.push(i);
                }
                true
            }
            _ => false,
        },
        ExprKind::Named(_, idx, args) => {
            let Some(named) = idx.and_then(|i| isa.exprs.get(i)) else {
                return false;
            };
            named.params.is_empty() && args.is_empty() && go(&named.expr, out)
        }
        ExprKind::Unary(_, a) => go(a, out),
        ExprKind::Binary(_, a, b) => go(a, out) && go(b, out),
        ExprKind::Cond(c, a, b) => go(c, out) && go(a, out) && go(b, out),
    }
}

/// Values 0..PARAM_VALUES of a param are tried by [`param_derived`].
const PARAM_VALUES: i64 = 8;

/// A shown derived value of a sub-encoding that reads one param only
/// (`HALF = !FULL` shown as `h`): the value shown for each param value
/// below 8 (`To::Param`), so reading a value sets the caller's field the
/// param is bound to when only one value that field can hold shows it
/// (for a field of at most 3 bits, every one of its values is here).
fn param_derived(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    d: &crate::model::Derived,
) -> Option<TokenStream> {
    let mut ps = Vec::new();
    if !only_params(isa, leaf, var, &d.expr, 0, &mut ps) || ps.len() != 1 {
        return None;
    }
    let p = ps[0];
    let mut by_key: Vec<(u64, Vec<i64>)> = Vec::new();
    for v in 0..PARAM_VALUES {
        let values = [(p, v)];
        let env = ParamEnv {
            isa,
            leaf,
            var: *var,
            values: &values,
        };
        let key = shown_key(&d.ty, d.width, d.expr.eval(&env, 0).ok()?);
        match by_key.iter_mut().find(|(k, _)| *k == key) {
            Some((_, vs)) => vs.push(v),
            None => by_key.push((key, vec![v])),
        }
    }
    let entries = by_key.iter().flat_map(|(k, vs)| {
        vs.iter().map(move |v| {
            let (k, v) = (
                Literal::u64_unsuffixed(*k),
                Literal::u64_unsuffixed(*v as u64),
            );
            quote! { (#k, #v) }
        })
    });
    let p = Literal::u16_unsuffixed(p as u16);
    Some(quote! { To::Param(#p, &[#(#entries),*]) })
}

/// For a sub-encoding form: the `when` conditions of its variant that
/// read only params (the active one holds, those before it do not),
/// tabulated over small param values at expansion time, so a caller whose
/// params are known skips forms its text cannot be: `(params, allowed
/// value combinations as a bit set)`.
fn param_guard(isa: &Isa, leaf: EncId, var: &Variant) -> Option<(Vec<usize>, Vec<u64>)> {
    let mut conds: Vec<(Variant, &Expr, bool)> = Vec::new();
    let mut params = Vec::new();
    for (k, enc) in isa.chain(leaf).take(MAX_DEPTH).enumerate() {
        for (i, w) in isa.encodings[enc].whens.iter().enumerate() {
            if var[k].is_some_and(|j| i > j) {
                break;
            }
            let mut seen_by = *var;
            seen_by[k] = Some(i);
            let mut ps = params.clone();
            if only_params(isa, leaf, &seen_by, &w.cond, 0, &mut ps) {
                params = ps;
                conds.push((seen_by, &w.cond, var[k] == Some(i)));
            }
        }
    }
    if conds.is_empty() || params.len() > MAX_GUARD_PARAMS {
        return None;
    }
    let n = GUARD_VALUES.pow(params.len() as u32);
    let mut bits = vec![0u64; n.div_ceil(64) as usize];
    for idx in 0..n {
        let values: Vec<(usize, i64)> = params
            .iter()
            .enumerate()
            .map(|(k, &p)| {
                (
                    p,
                    ((idx / GUARD_VALUES.pow(k as u32)) % GUARD_VALUES) as i64,
                )
            })
            .collect();
        let ok = conds.iter().all(|(seen_by, cond, holds)| {
            let env = ParamEnv {
                isa,
                leaf,
                var: *seen_by,
                values: &values,
            };
            // What cannot be evaluated here is left to the confirmation.
            cond.eval(&env, 0).map_or(true, |v| (v != 0) == *holds)
        });
        if ok {
            bits[(idx / 64) as usize] |= 1 << (idx % 64);
        }
    }
    let all = (0..n).all(|i| bits[(i / 64) as usize] >> (i % 64) & 1 == 1);
    (!all).then_some((params, bits))
}

/// One fact a `when` condition (or its being false) states about a
/// single name: `NAME == k` (`true`) or `NAME != k` (`false`).
type Pin<'e> = (&'e str, bool, i64);

/// The pins of `e` when it holds (`holds`) or when it does not. Parts it
/// cannot read say nothing.
fn cond_pins<'e>(isa: &'e Isa, e: &'e Expr, holds: bool, depth: usize, out: &mut Vec<Pin<'e>>) {
    if depth > crate::expr::MAX_EVAL_DEPTH {
        return;
    }
    match (&e.kind, holds) {
        (ExprKind::Binary(BinOp::And, a, b), true) | (ExprKind::Binary(BinOp::Or, a, b), false) => {
            cond_pins(isa, a, holds, depth + 1, out);
            cond_pins(isa, b, holds, depth + 1, out);
        }
        (ExprKind::Name(n), _) => out.push((n, !holds, 0)),
        (ExprKind::Unary(UnOp::Not, a), _) => {
            if let ExprKind::Name(n) = &a.kind {
                out.push((n, holds, 0));
            }
        }
        (ExprKind::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b), _) => {
            if let (ExprKind::Name(n), ExprKind::Int(k)) | (ExprKind::Int(k), ExprKind::Name(n)) =
                (&a.kind, &b.kind)
            {
                out.push((n, (*op == BinOp::Eq) == holds, *k));
            }
        }
        (ExprKind::Named(_, Some(i), args), _) if args.is_empty() => {
            if let Some(named) = isa.exprs.get(*i).filter(|n| n.params.is_empty()) {
                cond_pins(isa, &named.expr, holds, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// The bits of `f` a pin fixes, if it fixes them all.
fn pin_bits(f: &Field, equal: bool, k: i64) -> Option<u64> {
    match (equal, k) {
        (true, k) => f.holding(k),
        (false, 0 | 1) if f.width == 1 => f.holding(1 - k),
        _ => None,
    }
}

/// How a value of `ty` is read; `None` for sub-encodings.
fn read_tokens(ty: &FieldType) -> Option<TokenStream> {
    let num = |n: TokenStream| Some(quote! { Read::Num(Num::#n) });
    match ty {
        FieldType::Uint => num(quote! { Uint }),
        FieldType::Int => num(quote! { Int }),
        FieldType::Hex => num(quote! { Hex }),
        FieldType::HexUpper => num(quote! { HexUpper }),
        FieldType::Offset => num(quote! { Offset }),
        FieldType::Uoffset => num(quote! { Uoffset }),
        FieldType::Float => num(quote! { Float }),
        FieldType::Fixed(r) => {
            let r = Literal::u32_unsuffixed(*r);
            num(quote! { Fixed(#r) })
        }
        FieldType::Branch => num(quote! { Branch }),
        FieldType::AbsBranch => num(quote! { AbsBranch }),
        FieldType::Bool(None) => num(quote! { Bool }),
        FieldType::Bool(Some(t)) => Some(quote! { Read::Flag(#t) }),
        FieldType::BoolInv(t) => Some(quote! { Read::FlagInv(#t) }),
        FieldType::Enum(e) => {
            let t = format_ident!("ENUM_{}", e);
            Some(quote! { Read::Enum(&#t) })
        }
        FieldType::Sub(..) => None,
    }
}

const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// What the texts a piece prints may end with, for the mnemonic
/// dispatch: `Some(last bytes, may be empty)`, `None` if unknown.
fn piece_endings(isa: &Isa, leaf: EncId, var: &Variant, p: &Piece) -> Option<(Vec<u8>, bool)> {
    let texts: Vec<&str> = match p {
        Piece::Lit(s) => vec![s.as_str()],
        Piece::Mnemonic => return None,
        Piece::Field(name, _) => match resolve(isa, leaf, var, name)? {
            Resolved::Param(_) => return None,
            Resolved::Item(it) => match it.ty() {
                FieldType::Bool(Some(t)) | FieldType::BoolInv(t) => vec![t.as_str(), ""],
                // Values without a text print as numbers.
                FieldType::Enum(e) => {
                    let values = &isa.enums[*e].values;
                    let mut t: Vec<&str> = values.iter().map(|(_, s, _)| s.as_str()).collect();
                    let w = it.width();
                    let covered =
                        w < 16 && (0..1u64 << w).all(|v| values.iter().any(|(x, _, _)| *x == v));
                    if !covered {
                        t.extend(DIGITS);
                    }
                    t
                }
                FieldType::Uint
                | FieldType::Int
                | FieldType::Branch
                | FieldType::AbsBranch
                | FieldType::Bool(None) => DIGITS.to_vec(),
                _ => return None,
            },
        },
    };
    let mut ends = Vec::new();
    let mut empty = false;
    for t in texts {
        match t.as_bytes().last() {
            Some(&b) => ends.push(b),
            None => empty = true,
        }
    }
    Some((ends, empty))
}

/// The bytes of `charset` the pieces before `pieces[at]` may end the
/// text with (empty: the piece always starts a token); `None` if unknown.
fn ends_before(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    pieces: &[Piece],
    at: usize,
    charset: &[u64; 4],
) -> Option<[u64; 4]> {
    let mut set = [0u64; 4];
    for p in pieces[..at].iter().rev() {
        let (ends, empty) = piece_endings(isa, leaf, var, p)?;
        for b in ends.into_iter().filter(|&b| in_set(charset, b)) {
            set[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        if !empty {
            break;
        }
    }
    Some(set)
}

/// The dispatch key of a template: its mnemonic, or else the first run of
/// `charset` bytes in a literal (`mova` of `mova a0.x, …`), with the
/// bytes of `charset` the text before it may end with (the key is then
/// not always the start of a token); `None` if it has none.
fn dispatch_key(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    pieces: &[Piece],
    mnemonic: &str,
    charset: &[u64; 4],
) -> Option<(String, [u64; 4])> {
    // The mnemonic first, wherever it is; else the literals in order.
    let mnemonic_at = pieces
        .iter()
        .position(|p| *p == Piece::Mnemonic)
        .filter(|_| !mnemonic.is_empty());
    let order = mnemonic_at.into_iter().chain(0..pieces.len());
    for at in order {
        let text = match &pieces[at] {
            Piece::Mnemonic if mnemonic_at == Some(at) => mnemonic,
            Piece::Lit(s) if mnemonic_at.is_none() => s.as_str(),
            _ => continue,
        };
        let b = text.as_bytes();
        let Some(j) = b.iter().position(|&c| in_set(charset, c)) else {
            continue;
        };
        let end = b[j..]
            .iter()
            .position(|&c| !in_set(charset, c))
            .map_or(b.len(), |n| j + n);
        let before = if j > 0 {
            [0; 4]
        } else {
            ends_before(isa, leaf, var, pieces, at, charset)?
        };
        return Some((text[j..end].to_string(), before));
    }
    None
}

/// Code calling `found` with the forms of every key of `keys` (sorted,
/// all sharing their first `depth` bytes with `t`) that is a prefix of
/// `t`: one `match` per byte where keys part, runs they share compared
/// at once.
fn key_trie(keys: &[(&[u8], &[u16])], depth: usize) -> TokenStream {
    let mut code = TokenStream::new();
    let mut rest = keys;
    if let Some((_, ids)) = rest.first().filter(|(k, _)| k.len() == depth) {
        code.extend(quote! { found(&[#(#ids),*]); });
        rest = &rest[1..];
    }
    let mut arms = Vec::new();
    while let Some((first, _)) = rest.first() {
        let c = first[depth];
        let n = rest.iter().take_while(|(k, _)| k[depth] == c).count();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        // Bytes every key of the group shares after `c`.
        let shortest = group
            .iter()
            .map(|(k, _)| k.len())
            .min()
            .unwrap_or(depth + 1);
        let mut end = depth + 1;
        while end < shortest && group.iter().all(|(k, _)| k[end] == first[end]) {
            end += 1;
        }
        let inner = key_trie(group, end);
        let c = Literal::u8_unsuffixed(c);
        arms.push(if end == depth + 1 {
            quote! { Some(#c) => { #inner } }
        } else {
            let run = Literal::byte_string(&first[depth + 1..end]);
            let (from, to) = (
                Literal::usize_unsuffixed(depth + 1),
                Literal::usize_unsuffixed(end),
            );
            quote! { Some(#c) => if t.get(#from..#to) == Some(&#run[..]) { #inner } }
        });
    }
    if !arms.is_empty() {
        let d = Literal::usize_unsuffixed(depth);
        code.extend(quote! {
            match t.get(#d) {
                #(#arms)*
                _ => {}
            }
        });
    }
    code
}

struct Gen<'a> {
    isa: &'a Isa,
    /// Sub-encoding trees used, to emit their forms once.
    trees: BTreeSet<EncId>,
    /// The forms of each sub-encoding tree, once made.
    tree_forms: BTreeMap<EncId, Vec<FormCode>>,
    /// Trees whose forms are being made (a tree that contains itself).
    making: BTreeSet<EncId>,
}

/// The bytes a text can start with, and whether it can be empty.
#[derive(Clone, Copy, PartialEq)]
struct First {
    bytes: [u64; 4],
    empty: bool,
}

impl First {
    /// Anything (also what is not known).
    const ANY: First = First {
        bytes: [u64::MAX; 4],
        empty: true,
    };
    const EMPTY: First = First {
        bytes: [0; 4],
        empty: true,
    };

    fn of_bytes(bytes: &[u8], empty: bool) -> First {
        let mut f = First {
            bytes: [0; 4],
            empty,
        };
        for &b in bytes {
            f.bytes[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        f
    }

    /// A text that starts with `t` (which may be empty).
    fn of_text(t: &str) -> First {
        match t.as_bytes().first() {
            Some(&b) => First::of_bytes(&[b], false),
            None => First::EMPTY,
        }
    }

    fn or(self, o: First) -> First {
        let mut bytes = self.bytes;
        for (a, b) in bytes.iter_mut().zip(o.bytes) {
            *a |= b;
        }
        First {
            bytes,
            empty: self.empty || o.empty,
        }
    }

    /// As the run time reads it: every byte when the text may be empty.
    fn tokens(self) -> TokenStream {
        let bytes = if self.empty {
            [u64::MAX; 4]
        } else {
            self.bytes
        };
        let b = bytes.iter().map(|w| Literal::u64_unsuffixed(*w));
        quote! { [#(#b),*] }
    }
}

const DIGIT_BYTES: &[u8] = b"0123456789";

/// The bytes the text of a `width`-bit value of scalar type `ty` can
/// start with (a superset of what `format::read_scalar` and the enum
/// reading accept).
fn scalar_first(isa: &Isa, ty: &FieldType, width: u32) -> First {
    match ty {
        FieldType::Uint | FieldType::AbsBranch => First::of_bytes(DIGIT_BYTES, false),
        FieldType::Int | FieldType::Branch => {
            First::of_bytes(DIGIT_BYTES, false).or(First::of_bytes(b"-", false))
        }
        FieldType::Hex | FieldType::HexUpper => First::of_bytes(b"0123456789abcdefABCDEF", false),
        FieldType::Offset => First::of_bytes(b"+-", true),
        FieldType::Uoffset => First::of_bytes(b"+", true),
        FieldType::Float | FieldType::Fixed(_) => First::of_bytes(b"0123456789+-.in", false),
        FieldType::Bool(None) => First::of_bytes(b"01", false),
        FieldType::Bool(Some(t)) | FieldType::BoolInv(t) => First::of_text(t).or(First::EMPTY),
        // Listed texts, or a number for a value without one.
        FieldType::Enum(e) => {
            let values = &isa.enums[*e].values;
            let covered =
                width < 16 && (0..1u64 << width).all(|v| values.iter().any(|(x, _, _)| *x == v));
            let numbers = if covered {
                First {
                    bytes: [0; 4],
                    empty: false,
                }
            } else {
                First::of_bytes(DIGIT_BYTES, false)
            };
            values
                .iter()
                .fold(numbers, |f, (_, t, _)| f.or(First::of_text(t)))
        }
        FieldType::Sub(..) => First::ANY,
    }
}

/// A form's code and, for instructions, its mnemonic.
struct FormCode {
    code: TokenStream,
    mnemonic: Option<String>,
    var: Variant,
    leaf: EncId,
}

impl Gen<'_> {
    /// The bytes the text of `leaf` in variant `var` can start with, its
    /// params reading as `params` say.
    fn form_first(&self, leaf: EncId, var: &Variant, params: &[First], depth: usize) -> First {
        let isa = self.isa;
        let Some(t) = levels(isa, leaf, var)
            .into_iter()
            .find_map(|l| l.display.as_ref())
        else {
            return First::ANY;
        };
        let mut acc = First::EMPTY;
        for p in &t.pieces {
            let f = match p {
                Piece::Lit(s) => First::of_text(s),
                Piece::Mnemonic => First::of_text(&self.mnemonic(leaf, var)),
                Piece::Field(name, _) => match resolve(isa, leaf, var, name) {
                    Some(Resolved::Param(i)) => params.get(i).copied().unwrap_or(First::ANY),
                    Some(Resolved::Item(ItemRef::Field(Field {
                        ty: FieldType::Sub(tree, binds),
                        ..
                    }))) => self.tree_first(leaf, var, *tree, binds, params, depth + 1),
                    Some(Resolved::Item(it)) => scalar_first(isa, it.ty(), it.width()),
                    None => First::ANY,
                },
            };
            acc = First {
                bytes: acc.or(f).bytes,
                empty: f.empty,
            };
            if !f.empty {
                return acc;
            }
        }
        acc
    }

    /// The bytes a sub-encoding operand of `tree` shown by `leaf`/`var`
    /// (whose own params read as `params`) can start with.
    fn tree_first(
        &self,
        leaf: EncId,
        var: &Variant,
        tree: EncId,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        params: &[First],
        depth: usize,
    ) -> First {
        if depth >= MAX_DEPTH {
            return First::ANY;
        }
        let inner = self.sub_params(leaf, var, tree, binds, params);
        let mut f = First {
            bytes: [0; 4],
            empty: false,
        };
        for l in self.isa.leaves(tree) {
            for v in variants(self.isa, l) {
                f = f.or(self.form_first(l, &v, &inner, depth));
            }
        }
        f
    }

    /// How the params of `tree` read, as bound by `leaf`/`var`.
    fn sub_params(
        &self,
        leaf: EncId,
        var: &Variant,
        tree: EncId,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        params: &[First],
    ) -> Vec<First> {
        let isa = self.isa;
        isa.encodings[tree]
            .params
            .iter()
            .map(|p| {
                let Some((_, caller)) = binds.iter().find(|(x, _)| x == p) else {
                    return First::ANY;
                };
                match resolve(isa, leaf, var, caller) {
                    Some(Resolved::Param(j)) => params.get(j).copied().unwrap_or(First::ANY),
                    Some(Resolved::Item(it)) => scalar_first(isa, it.ty(), it.width()),
                    None => First::ANY,
                }
            })
            .collect()
    }

    /// The forms of sub-encoding tree `tree` (made once), as (leaf,
    /// variant); `None` while they are being made.
    fn sub_forms(&mut self, tree: EncId) -> Option<Vec<(EncId, Variant)>> {
        if !self.tree_forms.contains_key(&tree) {
            if !self.making.insert(tree) {
                return None;
            }
            let fs = self.forms_of(self.isa.leaves(tree).collect());
            self.making.remove(&tree);
            self.tree_forms.insert(tree, fs);
        }
        Some(
            self.tree_forms[&tree]
                .iter()
                .map(|f| (f.leaf, f.var))
                .collect(),
        )
    }

    /// Whether the text of `pieces` (of `leaf` in variant `var`) can begin
    /// with `t`; in a sub-encoding (`in_sub`) the caller's text follows.
    /// `true` when not known.
    fn can_begin(
        &self,
        leaf: EncId,
        var: &Variant,
        pieces: &[Piece],
        t: &[u8],
        in_sub: bool,
        depth: usize,
    ) -> bool {
        let isa = self.isa;
        let Some((p, rest)) = pieces.split_first() else {
            return t.is_empty() || in_sub;
        };
        if t.is_empty() || depth > 64 {
            return true;
        }
        let go = |x: &[u8]| self.can_begin(leaf, var, rest, x, in_sub, depth + 1);
        // The exact texts the piece can show, and whether it can show none.
        let (texts, empty): (Vec<String>, bool) = match p {
            Piece::Lit(s) => (vec![s.to_string()], s.is_empty()),
            Piece::Mnemonic => (vec![self.mnemonic(leaf, var)], false),
            Piece::Field(name, _) => match resolve(isa, leaf, var, name) {
                Some(Resolved::Item(it)) => match it.ty() {
                    FieldType::Bool(Some(x)) | FieldType::BoolInv(x) => (vec![x.to_string()], true),
                    FieldType::Sub(..) => return true,
                    // Its texts exactly, and a number for a value without one.
                    FieldType::Enum(e) => {
                        let values = &isa.enums[*e].values;
                        let w = it.width();
                        let covered = w < 16
                            && (0..1u64 << w).all(|v| values.iter().any(|(x, _, _)| *x == v));
                        if !covered && t[0].is_ascii_digit() {
                            return true;
                        }
                        let texts: Vec<String> =
                            values.iter().map(|(_, s, _)| s.to_string()).collect();
                        let empty = texts.iter().any(String::is_empty);
                        (texts, empty)
                    }
                    ty => {
                        let f = scalar_first(isa, ty, it.width());
                        if in_set(&f.bytes, t[0]) {
                            return true;
                        }
                        (Vec::new(), f.empty)
                    }
                },
                _ => return true,
            },
        };
        texts.iter().any(|x| {
            let x = x.as_bytes();
            x.starts_with(t) || (!x.is_empty() && t.starts_with(x) && go(&t[x.len()..]))
        }) || (empty && go(t))
    }

    fn mnemonic(&self, leaf: EncId, var: &Variant) -> String {
        levels(self.isa, leaf, var)
            .into_iter()
            .find_map(|l| l.mnemonic.as_ref().map(|m| m.to_string()))
            .unwrap_or_else(|| self.isa.encodings[leaf].name.to_string())
    }

    /// The form of `leaf` in variant `var`, if it can read anything.
    fn form(&mut self, leaf: EncId, var: &Variant) -> Option<FormCode> {
        let isa = self.isa;
        let lv = levels(isa, leaf, var);
        let t = lv.iter().find_map(|l| l.display.as_ref())?;
        let e = &isa.encodings[leaf];
        let g = e.generation;
        // Pattern, don't-care (written as zero) and the variant's asserts.
        let (mut mask, mut value) = (e.mask, e.match_bits & e.mask);
        let mut set = |m: u64, v: u64| {
            if (value ^ v) & mask & m != 0 {
                return false;
            }
            value = (value & !m) | (v & m);
            mask |= m;
            true
        };
        set(e.dontcare, 0);
        for (k, enc) in isa.chain(leaf).take(MAX_DEPTH).enumerate() {
            let enc = &isa.encodings[enc];
            let level = match var[k] {
                Some(j) => &enc.whens[j].level,
                None => &enc.plain,
            };
            for a in &level.asserts {
                if !set(a.mask, a.value) {
                    return None;
                }
            }
            // The active `when` holds and those before it do not: what that
            // says about single fields fixes bits the text of this variant
            // may not show (`r<a0.x>` is OFFSET 0).
            for (i, w) in enc.whens.iter().enumerate() {
                let holds = var[k] == Some(i);
                if var[k].is_some_and(|j| i > j) {
                    break;
                }
                let mut seen_by = *var;
                seen_by[k] = Some(i);
                let mut pins = Vec::new();
                cond_pins(isa, &w.cond, holds, 0, &mut pins);
                for (name, equal, n) in pins {
                    let Some(Resolved::Item(ItemRef::Field(f))) =
                        resolve(isa, leaf, &seen_by, name)
                    else {
                        continue;
                    };
                    if let Some(bits) = pin_bits(f, equal, n) {
                        if !set(f.mask(), bits) {
                            return None;
                        }
                    }
                }
            }
        }
        // Fields in scope (first of each name), with their defaults.
        let (mut hidden, mut defaults) = (0u64, 0u64);
        let mut seen: Vec<&str> = Vec::new();
        for l in &lv {
            for f in &l.fields {
                if seen.contains(&f.name.as_str()) {
                    continue;
                }
                seen.push(&f.name);
                if matches!(f.ty, FieldType::Sub(..)) {
                    continue;
                }
                hidden |= f.mask();
                defaults |= f.insert(0, f.default.unwrap_or(0));
            }
        }
        // Bits worth varying when the defaults do not print back: what the
        // shown derived values, the `when` conditions, the checks and the
        // sub-encodings' params read.
        let mut search = 0u64;
        let mut seen = Vec::new();
        for (k, enc) in isa.chain(leaf).take(MAX_DEPTH).enumerate() {
            let enc = &isa.encodings[enc];
            for w in &enc.whens {
                search |= expr_fields(isa, leaf, var, &w.cond, &mut seen);
            }
            let level = match var[k] {
                Some(j) => &enc.whens[j].level,
                None => &enc.plain,
            };
            for c in &level.checks {
                search |= expr_fields(isa, leaf, var, &c.expr, &mut seen);
            }
        }
        for p in &t.pieces {
            let Piece::Field(name, _) = p else { continue };
            match resolve(isa, leaf, var, name) {
                Some(Resolved::Item(ItemRef::Derived(d))) => {
                    search |= expr_fields(isa, leaf, var, &d.expr, &mut seen);
                }
                Some(Resolved::Item(ItemRef::Field(Field {
                    ty: FieldType::Sub(_, binds),
                    ..
                }))) => {
                    for (_, caller) in binds {
                        let e = Expr {
                            kind: ExprKind::Name(caller.clone()),
                            span: Default::default(),
                        };
                        search |= expr_fields(isa, leaf, var, &e, &mut Vec::new());
                    }
                }
                _ => {}
            }
        }
        // Bits the text shows directly (fields, and derived values that
        // are fields side by side or a field plus a constant).
        let mut shown = 0u64;
        for p in &t.pieces {
            let Piece::Field(name, _) = p else { continue };
            match resolve(isa, leaf, var, name) {
                Some(Resolved::Item(ItemRef::Field(f))) if !matches!(f.ty, FieldType::Sub(..)) => {
                    shown |= f.mask()
                }
                Some(Resolved::Item(ItemRef::Derived(d)))
                    if invert(isa, leaf, var, &d.expr).is_some()
                        || invert_add(isa, leaf, var, &d.expr).is_some() =>
                {
                    shown |= pure_inputs(isa, leaf, var, &d.expr, false, 0).unwrap_or(0);
                }
                _ => {}
            }
        }
        let base = (value & mask) | (defaults & !mask);
        let in_sub = isa.encodings[leaf].root != isa.root;
        let mut ops = Vec::new();
        for (at, p) in t.pieces.iter().enumerate() {
            // A flag whose text the pieces after it cannot begin with is
            // present whenever the text has it here: no choice to make.
            let alone = match p {
                Piece::Field(name, _) => match resolve(isa, leaf, var, name) {
                    Some(Resolved::Item(it)) => match it.ty() {
                        FieldType::Bool(Some(x)) | FieldType::BoolInv(x) if !x.is_empty() => {
                            !self.can_begin(leaf, var, &t.pieces[at + 1..], x.as_bytes(), in_sub, 0)
                        }
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            };
            ops.push(match p {
                Piece::Lit(s) => quote! { Op::Lit(#s) },
                Piece::Mnemonic => {
                    let m = self.mnemonic(leaf, var);
                    quote! { Op::Lit(#m) }
                }
                Piece::Field(name, _) => match resolve(isa, leaf, var, name)? {
                    Resolved::Param(i) => {
                        let i = Literal::u16_unsuffixed(i as u16);
                        quote! { Op::Param(#i) }
                    }
                    Resolved::Item(ItemRef::Field(f)) => match &f.ty {
                        FieldType::Sub(tree, binds) => {
                            self.trees.insert(*tree);
                            let forms = format_ident!("SUB_{}", tree);
                            let ranges = ranges_tokens(&f.ranges);
                            // What each form's text can start with here,
                            // so forms the text cannot be are skipped.
                            // The caller's own params are not known.
                            let firsts = match self.sub_forms(*tree) {
                                Some(list) => {
                                    let ps = self.sub_params(leaf, var, *tree, binds, &[]);
                                    list.iter()
                                        .map(|(l, v)| self.form_first(*l, v, &ps, 0).tokens())
                                        .collect()
                                }
                                None => Vec::new(),
                            };
                            let binds = self.binds(leaf, var, *tree, binds, (g.min, mask, base, shown));
                            // The caller's default for the whole operand
                            // (`TYPE … default 1`) fills the bits its text
                            // leaves unshown.
                            let default = match f.default {
                                Some(d) => {
                                    let d = Literal::u64_unsuffixed(d);
                                    quote! { Some(#d) }
                                }
                                None => quote! { None },
                            };
                            quote! { Op::Sub { forms: &#forms, ranges: #ranges, binds: &[#(#binds),*], firsts: &[#(#firsts),*], default: #default } }
                        }
                        ty => {
                            let read = read_tokens(ty)?;
                            let w = Literal::u32_unsuffixed(f.width);
                            let r = ranges_tokens(&f.ranges);
                            quote! { Op::Value { read: #read, width: #w, to: To::Field(#r), alone: #alone } }
                        }
                    },
                    Resolved::Item(ItemRef::Derived(d)) => {
                        let read = read_tokens(&d.ty)?;
                        let w = Literal::u32_unsuffixed(d.width);
                        let to = invert(isa, leaf, var, &d.expr)
                            .or_else(|| invert_add(isa, leaf, var, &d.expr))
                            .or_else(|| const_derived(isa, leaf, var, d))
                            .or_else(|| {
                                derived_table(isa, leaf, var, d, g.min, mask, base, shown)
                            })
                            .or_else(|| derived_pin(isa, leaf, var, d, g.min, mask, base))
                            .or_else(|| param_derived(isa, leaf, var, d))
                            .unwrap_or(quote! { To::Drop });
                        quote! { Op::Value { read: #read, width: #w, to: #to, alone: #alone } }
                    }
                },
            });
        }
        let (gmin, gmax) = (
            Literal::u32_unsuffixed(g.min),
            Literal::u32_unsuffixed(g.max),
        );
        let (fm, fv, hm, dv, sm) = (
            Literal::u64_unsuffixed(mask),
            Literal::u64_unsuffixed(value),
            Literal::u64_unsuffixed(hidden),
            Literal::u64_unsuffixed(defaults),
            Literal::u64_unsuffixed(search & hidden),
        );
        let (guard, allowed) = param_guard(isa, leaf, var).unwrap_or_default();
        let guard = guard.iter().map(|&p| Literal::u16_unsuffixed(p as u16));
        let allowed = allowed.iter().map(|&b| Literal::u64_unsuffixed(b));
        // The longest literal of an instruction's text (of 3 bytes or
        // more): a line without it is not tried (`(nop` of the `(nopN)`
        // forms).
        let needs = if isa.encodings[leaf].root == isa.root {
            t.pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Lit(s) if s.len() >= 3 => Some(s.as_str()),
                    _ => None,
                })
                .max_by_key(|s| s.len())
                .unwrap_or("")
        } else {
            ""
        };
        let code = quote! {
            Form { gen_min: #gmin, gen_max: #gmax, fixed_mask: #fm, fixed: #fv, needs: #needs,
                   guard: &[#(#guard),*], allowed: &[#(#allowed),*],
                   hidden: #hm, defaults: #dv, search: #sm,
                   ops: &[#(#ops),*] }
        };
        let mnemonic = t
            .pieces
            .contains(&Piece::Mnemonic)
            .then(|| self.mnemonic(leaf, var));
        Some(FormCode {
            code,
            mnemonic,
            var: *var,
            leaf,
        })
    }

    /// The binds of `tree`'s params (in its order) as seen from the caller.
    fn binds(
        &self,
        leaf: EncId,
        var: &Variant,
        tree: EncId,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        (generation, known, base, shown): (u32, u64, u64, u64),
    ) -> Vec<TokenStream> {
        let isa = self.isa;
        isa.encodings[tree]
            .params
            .iter()
            .map(|p| {
                let Some((_, caller)) = binds.iter().find(|(x, _)| x == p) else {
                    return quote! { Bind::Never };
                };
                match resolve(isa, leaf, var, caller) {
                    Some(Resolved::Item(it)) => {
                        let Some(read) = read_tokens(it.ty()) else {
                            return quote! { Bind::Never };
                        };
                        let w = Literal::u32_unsuffixed(it.width());
                        let to = match it {
                            ItemRef::Field(f) => {
                                let r = ranges_tokens(&f.ranges);
                                quote! { To::Field(#r) }
                            }
                            // A derived value the operand shows (`HALF =
                            // !FULL` as `h`) sets the unshown bits it reads.
                            ItemRef::Derived(d) => const_derived(isa, leaf, var, d)
                                .or_else(|| {
                                    derived_table(isa, leaf, var, d, generation, known, base, shown)
                                })
                                .unwrap_or(quote! { To::Drop }),
                        };
                        quote! { Bind::Item { read: #read, width: #w, to: #to } }
                    }
                    Some(Resolved::Param(i)) => {
                        let i = Literal::u16_unsuffixed(i as u16);
                        quote! { Bind::Up(#i) }
                    }
                    None => quote! { Bind::Never },
                }
            })
            .collect()
    }

    fn forms_of(&mut self, leaves: Vec<EncId>) -> Vec<FormCode> {
        let mut out = Vec::new();
        for leaf in leaves {
            for var in variants(self.isa, leaf) {
                out.extend(self.form(leaf, &var));
            }
        }
        out
    }
}

/// The `asm` module of an `isa!` expansion.
pub(crate) fn asm_module(isa: &Isa) -> TokenStream {
    let mut g = Gen {
        isa,
        trees: BTreeSet::new(),
        tree_forms: BTreeMap::new(),
        making: BTreeSet::new(),
    };
    let forms = g.forms_of(isa.instructions().collect());

    let mut charset = [0u64; 4];
    for f in &forms {
        for b in f.mnemonic.iter().flat_map(|m| m.bytes()) {
            charset[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
    let mut by_key: BTreeMap<String, Vec<u16>> = BTreeMap::new();
    let mut always: Vec<u16> = Vec::new();
    let (mut after, mut late_first) = ([0u64; 4], [0u64; 4]);
    for (i, f) in forms.iter().enumerate() {
        let pieces = &levels(isa, f.leaf, &f.var)
            .into_iter()
            .find_map(|l| l.display.as_ref())
            .map(|t| t.pieces.clone())
            .unwrap_or_default();
        let m = f.mnemonic.as_deref().unwrap_or("");
        match dispatch_key(isa, f.leaf, &f.var, pieces, m, &charset) {
            Some((key, before)) => {
                if before != [0; 4] {
                    for (a, b) in after.iter_mut().zip(before) {
                        *a |= b;
                    }
                    let c = key.as_bytes()[0];
                    late_first[usize::from(c >> 6)] |= 1 << (c & 63);
                }
                by_key.entry(key).or_default().push(i as u16)
            }
            None => always.push(i as u16),
        }
    }
    // Sorted by bytes (the order of a `BTreeMap` of strings).
    let keys: Vec<(&[u8], &[u16])> = by_key
        .iter()
        .map(|(k, v)| (k.as_bytes(), v.as_slice()))
        .collect();
    let trie = key_trie(&keys, 0);

    // Sub-encoding trees, transitively.
    let mut done: BTreeSet<EncId> = BTreeSet::new();
    let mut subs = TokenStream::new();
    while let Some(&tree) = g.trees.iter().find(|t| !done.contains(t)) {
        done.insert(tree);
        if !g.tree_forms.contains_key(&tree) {
            let fs = g.forms_of(isa.leaves(tree).collect());
            g.tree_forms.insert(tree, fs);
        }
        let fs = &g.tree_forms[&tree];
        let n = fs.len();
        let name = format_ident!("SUB_{}", tree);
        let codes = fs.iter().map(|f| &f.code);
        subs.extend(quote! { static #name: [Form; #n] = [#(#codes),*]; });
    }

    let enums = isa.enums.iter().enumerate().map(|(i, e)| {
        let mut vals: Vec<(u64, &str)> =
            e.values.iter().map(|(v, s, _)| (*v, s.as_str())).collect();
        // Longest text first, so the first full reading is the likely one.
        vals.sort_by_key(|(_, s)| std::cmp::Reverse(s.len()));
        let n = vals.len();
        let t = format_ident!("ENUM_{}", i);
        let pairs = vals.iter().map(|(v, s)| {
            let v = Literal::u64_unsuffixed(*v);
            quote! { (#v, #s) }
        });
        quote! { #[allow(dead_code)] static #t: [(u64, &str); #n] = [#(#pairs),*]; }
    });

    let nforms = forms.len();
    let codes = forms.iter().map(|f| &f.code);
    let nalways = always.len();
    let classes = (0..=255u8).map(|b| {
        let mut c = 0u8;
        for (set, bit) in [
            (&charset, IN_KEYS),
            (&after, BEFORE_KEY),
            (&late_first, LATE_FIRST),
        ] {
            if in_set(set, b) {
                c |= bit;
            }
        }
        Literal::u8_unsuffixed(c)
    });

    quote! {
        /// Assembly as generated code: static forms read from the display
        /// templates, mnemonics by a sorted table, every word confirmed by
        /// the generated disassembler. No spec at run time.
        pub mod asm {
            #![allow(clippy::all)]
            use ::lathe_isa::asm_rt::{Bind, Form, Num, Op, Read, Slot, Table, To};

            #(#enums)*
            #subs
            static FORMS: [Form; #nforms] = [#(#codes),*];
            static ALWAYS: [u16; #nalways] = [#(#always),*];
            /// The forms of every mnemonic that starts `t`: the sorted
            /// mnemonics as a tree of byte matches.
            #[allow(unused_variables)]
            fn lookup(t: &[u8], found: &mut dyn FnMut(&'static [u16])) {
                #trie
            }
            static TABLE: Table = Table {
                forms: &FORMS,
                always: &ALWAYS,
                lookup,
                classes: [#(#classes),*],
            };

            /// The word whose text at `generation` is exactly `text`, read
            /// with generated code only; `None` when the fast path cannot
            /// tell (the engine then assembles or explains the error).
            pub fn assemble(text: &str, generation: u32) -> Option<u64> {
                try_assemble(text, generation).ok()
            }

            /// As [`assemble`], saying why no word was found:
            /// `Miss::NoForm` when no form reads the text (the engine finds
            /// none either), `Miss::Limit` when a search limit may have hidden
            /// one.
            pub fn try_assemble(text: &str, generation: u32) -> Result<u64, ::lathe_isa::asm_rt::Miss> {
                ::lathe_isa::gen_rt::with_spare(|s| {
                    ::lathe_isa::asm_rt::assemble(&TABLE, text, generation, &mut |w| {
                        s.clear();
                        super::display::push_word(w, generation, true, false, s).is_ok() && s == text
                    })
                })
            }
        }
    }
}
