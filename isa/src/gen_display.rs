//! Display as generated code: every encoding's templates, overrides,
//! derived values, expressions, enums and sub-encoding operands become
//! straight-line Rust that writes into the caller's buffer.
//!
//! Names are resolved here, at expansion time: each name an encoding can
//! be asked for gets a small id, and per leaf a `match` says which of its
//! items (fields and derived values of each chain level and each `when`)
//! answers it. The only run-time decisions left are the ones the engine
//! makes per word — which `when` of a level is active, evaluated lazily in
//! the engine's order by [`crate::gen_rt::Ctx::active`] — so the generated
//! text equals the engine's (the `lathe-adreno` / `lathe-mali` differential
//! tests compare both on the vectors and on millions of random words).

use std::collections::HashMap;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use crate::display::MAX_DEPTH;
use crate::expr::{BinOp, Expr, ExprKind, MAX_EVAL_DEPTH, UnOp};
use crate::model::{EncId, FieldType, Isa, ItemRef, Level, Piece, Template};

/// Interned names: every name any template, expression or bind mentions.
#[derive(Default)]
struct Names {
    ids: HashMap<String, u16>,
    list: Vec<String>,
}

impl Names {
    fn id(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.list.len() as u16;
        self.ids.insert(name.to_string(), i);
        self.list.push(name.to_string());
        i
    }
}

/// One item of a leaf's scope: where it is defined and what it is.
struct Item<'a> {
    level: usize,
    when: Option<usize>,
    item: ItemRef<'a>,
}

/// Generation state for one leaf.
struct LeafGen<'a> {
    isa: &'a Isa,
    leaf: EncId,
    chain: Vec<EncId>,
    items: Vec<Item<'a>>,
    /// Names this leaf may be asked for (ids).
    asked: Vec<u16>,
    locals: usize,
    /// A leaf of a sub-encoding tree (its names may be the caller's params).
    in_sub_tree: bool,
    /// Derived values being inlined (to stop at self-reference).
    inlining: Vec<usize>,
    /// Per chain level, the active `when` as inline code, if it can be.
    inline_active: Vec<Option<TokenStream>>,
}

fn lit_u64(v: u64) -> Literal {
    Literal::u64_unsuffixed(v)
}

fn fn_ident(prefix: &str, enc: EncId) -> Ident {
    format_ident!("{}_{}", prefix, enc)
}

fn level_of(isa: &Isa, enc: EncId, when: Option<usize>) -> &Level {
    let e = &isa.encodings[enc];
    match when {
        Some(j) => &e.whens[j].level,
        None => &e.plain,
    }
}

impl<'a> LeafGen<'a> {
    fn new(isa: &'a Isa, leaf: EncId) -> Self {
        let chain: Vec<EncId> = isa.chain(leaf).take(MAX_DEPTH).collect();
        let mut items = Vec::new();
        for (k, &enc) in chain.iter().enumerate() {
            let e = &isa.encodings[enc];
            let levels = (0..e.whens.len()).map(Some).chain(std::iter::once(None));
            for when in levels {
                let lvl = level_of(isa, enc, when);
                for f in &lvl.fields {
                    items.push(Item {
                        level: k,
                        when,
                        item: ItemRef::Field(f),
                    });
                }
                for d in &lvl.deriveds {
                    items.push(Item {
                        level: k,
                        when,
                        item: ItemRef::Derived(d),
                    });
                }
            }
        }
        LeafGen {
            isa,
            leaf,
            chain,
            items,
            asked: Vec::new(),
            locals: 0,
            in_sub_tree: isa.encodings[leaf].root != isa.root,
            inlining: Vec::new(),
            inline_active: Vec::new(),
        }
    }

    /// Where `name` resolves when no `when` can change the answer:
    /// `Some(Some(item))` locally, `Some(None)` not in this scope (a
    /// caller's param, if any), `None` when it depends on the word.
    fn static_item(&self, name: &str) -> Option<Option<usize>> {
        for k in 0..self.chain.len() {
            if (0..self.when_count(k)).any(|j| self.find_item(k, Some(j), name).is_some()) {
                return None;
            }
            if let Some(i) = self.find_item(k, None, name) {
                return Some(Some(i));
            }
        }
        Some(None)
    }

    /// An item's value as `Option<i64>` code, derived values inlined
    /// (falling back to the `item` function on self-reference).
    fn item_value(&mut self, names: &mut Names, i: usize) -> TokenStream {
        match self.items[i].item {
            ItemRef::Field(f) => {
                let x = extract(&f.ranges);
                quote! { { let w = c.word; Some(#x as i64) } }
            }
            ItemRef::Derived(d) => {
                if self.inlining.contains(&i) || self.inlining.len() > 6 {
                    let item = fn_ident("item", self.leaf);
                    let i = Literal::u16_unsuffixed(i as u16);
                    return quote! { #item(c, #i) };
                }
                self.inlining.push(i);
                let e = d.expr.clone();
                let code = self.guarded(names, &e);
                self.inlining.pop();
                code
            }
        }
    }

    fn name(&self) -> &str {
        &self.isa.encodings[self.leaf].name
    }

    fn item_name(&self, i: usize) -> &str {
        match self.items[i].item {
            ItemRef::Field(f) => &f.name,
            ItemRef::Derived(d) => &d.name,
        }
    }

    fn find_item(&self, level: usize, when: Option<usize>, name: &str) -> Option<usize> {
        (0..self.items.len()).find(|&i| {
            let it = &self.items[i];
            it.level == level && it.when == when && self.item_name(i) == name
        })
    }

    fn when_count(&self, level: usize) -> usize {
        self.isa.encodings[self.chain[level]].whens.len()
    }

    fn active(&self, level: usize) -> TokenStream {
        if let Some(Some(code)) = self.inline_active.get(level) {
            return code.clone();
        }
        let n = self.when_count(level);
        let cond = fn_ident("cond", self.leaf);
        let k = Literal::usize_unsuffixed(level);
        let n = Literal::usize_unsuffixed(n);
        quote! { c.active(#k, #n, #cond) }
    }

    /// Whether `e` reads only fields that no `when` redefines (and
    /// constants, the generation, named expressions of those): its value
    /// then does not depend on which `when` is active or being tested.
    fn reads_plain_fields(&self, e: &Expr, depth: usize) -> bool {
        if depth > MAX_EVAL_DEPTH {
            return false;
        }
        let go = |x: &Expr| self.reads_plain_fields(x, depth + 1);
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Gen => true,
            ExprKind::Name(n) => matches!(
                self.static_item(n),
                Some(Some(i)) if matches!(self.items[i].item, ItemRef::Field(_))
            ),
            ExprKind::Named(_, idx, args) => {
                args.is_empty()
                    && (*idx)
                        .and_then(|i| self.isa.exprs.get(i))
                        .is_some_and(|n| n.params.is_empty() && go(&n.expr))
            }
            ExprKind::Unary(_, a) => go(a),
            ExprKind::Binary(_, a, b) => go(a) && go(b),
            ExprKind::Cond(c, a, b) => go(c) && go(a) && go(b),
        }
    }

    /// For each level whose `when` conditions all read plain fields, the
    /// active `when` as inline code (the first that holds, in order): the
    /// engine's lazy choice, which lets a candidate see its own items,
    /// cannot differ there, and a field test is cheaper than the state
    /// machine of [`crate::gen_rt::Ctx::active`].
    fn prepare_inline_active(&mut self, names: &mut Names) {
        let mut out = Vec::new();
        for k in 0..self.chain.len() {
            let whens = &self.isa.encodings[self.chain[k]].whens;
            if whens.is_empty()
                || whens.len() > 127
                || !whens.iter().all(|w| self.reads_plain_fields(&w.cond, 0))
            {
                out.push(None);
                continue;
            }
            let mut tests = TokenStream::new();
            for (j, w) in whens.iter().enumerate() {
                let code = self.expr(names, &w.cond, &[], 0);
                let j = Literal::usize_unsuffixed(j);
                tests.extend(quote! { if (#code) != 0 { return Some(#j); } });
            }
            out.push(Some(quote! {
                (|| -> Option<usize> { #tests None })()
            }));
        }
        self.inline_active = out;
    }

    /// The `which` arm for one name: the engine's `find` order (each level
    /// from the leaf up: its active `when`, then its plain body).
    fn which_arm(&self, name: &str) -> TokenStream {
        let mut body = TokenStream::new();
        for k in 0..self.chain.len() {
            let nw = self.when_count(k);
            if nw > 0 {
                let arms: Vec<TokenStream> = (0..nw)
                    .filter_map(|j| {
                        self.find_item(k, Some(j), name).map(|i| {
                            let j = Literal::usize_unsuffixed(j);
                            let i = Literal::u16_unsuffixed(i as u16);
                            quote! { Some(#j) => return #i, }
                        })
                    })
                    .collect();
                let active = self.active(k);
                if arms.is_empty() {
                    body.extend(quote! { let _ = #active; });
                } else {
                    body.extend(quote! { match #active { #(#arms)* _ => {} } });
                }
            }
            if let Some(i) = self.find_item(k, None, name) {
                let i = Literal::u16_unsuffixed(i as u16);
                body.extend(quote! { return #i; });
                return quote! { { #body } };
            }
        }
        body.extend(quote! { NOT_FOUND });
        quote! { { #body } }
    }

    fn local(&mut self) -> Ident {
        self.locals += 1;
        format_ident!("v{}", self.locals)
    }

    /// Code of type `i64` (using `?` for a missing name) for `e`, with
    /// `params` the expression-function parameters in scope (innermost
    /// last).
    fn expr(
        &mut self,
        names: &mut Names,
        e: &Expr,
        params: &[(String, Option<Ident>)],
        depth: usize,
    ) -> TokenStream {
        if depth > MAX_EVAL_DEPTH {
            return quote! { return None };
        }
        match &e.kind {
            ExprKind::Int(v) => {
                let v = Literal::i64_suffixed(*v);
                quote! { (#v) }
            }
            ExprKind::Gen => quote! { i64::from(c.generation) },
            ExprKind::Name(n) => {
                if let Some((_, v)) = params.iter().rev().find(|(p, _)| p == n) {
                    return match v {
                        Some(v) => quote! { #v },
                        None => quote! { return None },
                    };
                }
                let id = names.id(n);
                match self.static_item(n) {
                    Some(Some(i)) => {
                        let v = self.item_value(names, i);
                        return quote! { #v? };
                    }
                    Some(None) if !self.in_sub_tree => return quote! { return None },
                    Some(None) => {
                        let id = Literal::u16_unsuffixed(id);
                        return quote! { c.param_value(#id)? };
                    }
                    None => {}
                }
                if !self.asked.contains(&id) {
                    self.asked.push(id);
                }
                let val = fn_ident("val", self.leaf);
                let id = Literal::u16_unsuffixed(id);
                quote! { #val(c, #id)? }
            }
            ExprKind::Named(_, idx, args) => {
                let Some(named) = (*idx).and_then(|i| self.isa.exprs.get(i)) else {
                    return quote! { return None };
                };
                if args.is_empty() {
                    return self.expr(names, &named.expr, params, depth + 1);
                }
                let mut lets = TokenStream::new();
                let mut inner: Vec<(String, Option<Ident>)> = params.to_vec();
                let mut values = Vec::new();
                for a in args {
                    let code = self.expr(names, a, params, depth + 1);
                    let v = self.local();
                    lets.extend(quote! { let #v: i64 = #code; });
                    values.push(v);
                }
                for (k, p) in named.params.iter().enumerate() {
                    let bound = if k < args.len().min(crate::expr::MAX_PARAMS) {
                        Some(values[k].clone())
                    } else {
                        None
                    };
                    inner.push((p.to_string(), bound));
                }
                let body = self.expr(names, &named.expr, &inner, depth + 1);
                quote! { { #lets #body } }
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(names, a, params, depth + 1);
                let op = match op {
                    UnOp::Not => quote! { Not },
                    UnOp::BitNot => quote! { BitNot },
                    UnOp::Neg => quote! { Neg },
                };
                quote! { ::lathe_isa::expr::UnOp::#op.apply(#a) }
            }
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(names, a, params, depth + 1);
                let b = self.expr(names, b, params, depth + 1);
                let name = format_ident!("{}", format!("{op:?}"));
                let apply = quote! { ::lathe_isa::expr::BinOp::#name.apply(a, #b) };
                match op {
                    BinOp::And => quote! { { let a: i64 = #a; if a == 0 { 0 } else { #apply } } },
                    BinOp::Or => quote! { { let a: i64 = #a; if a != 0 { 1 } else { #apply } } },
                    _ => quote! { { let a: i64 = #a; #apply } },
                }
            }
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(names, c, params, depth + 1);
                let a = self.expr(names, a, params, depth + 1);
                let b = self.expr(names, b, params, depth + 1);
                quote! { if #c != 0 { #a } else { #b } }
            }
        }
    }

    /// A top-level expression as `Option<i64>` under the nesting guard.
    fn guarded(&mut self, names: &mut Names, e: &Expr) -> TokenStream {
        let body = self.expr(names, e, &[], 0);
        quote! {
            c.guard(|| -> Option<i64> { Some(#body) })
        }
    }
}

fn extract(ranges: &[crate::ast::BitRange]) -> TokenStream {
    let mut parts = Vec::new();
    let mut shift = 0u32;
    for r in ranges {
        let low = Literal::u32_unsuffixed(r.low);
        let m = lit_u64(if r.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << r.width()) - 1
        });
        let s = Literal::u32_unsuffixed(shift);
        parts.push(quote! { (((w >> #low) & #m) << #s) });
        shift += r.width();
    }
    if parts.is_empty() {
        quote! { 0u64 }
    } else {
        quote! { (#(#parts)|*) }
    }
}

/// Code writing `v` (a `u64` in scope) of scalar type `ty` to `out`,
/// specialised per type: flags test and write a literal, enums `match`.
fn write_scalar_code(isa: &Isa, ty: &FieldType, width: u32) -> TokenStream {
    match ty {
        FieldType::Uint | FieldType::AbsBranch | FieldType::Bool(None) => {
            quote! { ::lathe_isa::format::write_u64(out, v)?; }
        }
        FieldType::Int | FieldType::Branch => {
            let w = Literal::u32_unsuffixed(width);
            quote! { ::lathe_isa::format::write_int(out, v, #w)?; }
        }
        FieldType::Bool(Some(t)) => quote! { if v != 0 { out.write_str(#t)?; } },
        FieldType::BoolInv(t) => quote! { if v == 0 { out.write_str(#t)?; } },
        FieldType::Enum(e) => {
            let mut seen: Vec<u64> = Vec::new();
            let mut arms = Vec::new();
            for (v, t, _) in &isa.enums[*e].values {
                if seen.contains(v) {
                    continue;
                }
                seen.push(*v);
                let v = lit_u64(*v);
                arms.push(quote! { #v => out.write_str(#t)?, });
            }
            quote! {
                match v {
                    #(#arms)*
                    _ => ::lathe_isa::format::write_u64(out, v)?,
                }
            }
        }
        FieldType::Fixed(r) => {
            let (r, w) = (Literal::u32_unsuffixed(*r), Literal::u32_unsuffixed(width));
            quote! { ::lathe_isa::format::write_plain(out, &::lathe_isa::model::FieldType::Fixed(#r), v, #w)?; }
        }
        ty => {
            let variant = format_ident!(
                "{}",
                match ty {
                    FieldType::Hex => "Hex",
                    FieldType::HexUpper => "HexUpper",
                    FieldType::Offset => "Offset",
                    FieldType::Uoffset => "Uoffset",
                    FieldType::Float => "Float",
                    // Sub-encodings are written by their own code; the
                    // engine would show the raw number.
                    _ => "Uint",
                }
            );
            let w = Literal::u32_unsuffixed(width);
            quote! { ::lathe_isa::format::write_plain(out, &::lathe_isa::model::FieldType::#variant, v, #w)?; }
        }
    }
}

/// Functions for one leaf: `cond_N`, `which_N`, `item_N`, `val_N`,
/// `name_N` (write a name), `check_N` and `write_N`.
fn leaf_items(isa: &Isa, names: &mut Names, leaf: EncId) -> TokenStream {
    let mut g = LeafGen::new(isa, leaf);
    g.prepare_inline_active(names);
    let leaf_name = g.name().to_string();

    // An instruction answers the typed accessors for every name it has.
    let mut typed = TokenStream::new();
    if isa.encodings[leaf].root == isa.root {
        let infos: Vec<TokenStream> = (0..g.items.len())
            .map(|i| item_info(isa, g.items[i].item))
            .collect();
        for i in 0..g.items.len() {
            let id = names.id(g.item_name(i));
            if !g.asked.contains(&id) {
                g.asked.push(id);
            }
        }
        let n = infos.len();
        let items = format_ident!("ITEMS_{}", leaf);
        let field = fn_ident("field", leaf);
        let which = fn_ident("which", leaf);
        let item = fn_ident("item", leaf);
        typed = quote! {
            static #items: [ItemInfo; #n] = [#(#infos),*];
            #[allow(clippy::all)]
            fn #field(c: &Ctx<'_>, n: u16) -> Option<(&'static ItemInfo, i64)> {
                match #which(c, n) {
                    NOT_FOUND => None,
                    i => Some((&#items[usize::from(i)], #item(c, i)?)),
                }
            }
        };
    }

    // Conditions of the `when`s of every level.
    let mut cond_arms = Vec::new();
    for k in 0..g.chain.len() {
        let enc = g.chain[k];
        for (j, w) in isa.encodings[enc].whens.iter().enumerate() {
            let code = g.guarded(names, &w.cond);
            let (k, j) = (Literal::usize_unsuffixed(k), Literal::usize_unsuffixed(j));
            cond_arms.push(quote! { (#k, #j) => #code, });
        }
    }

    // Item values.
    let mut val_arms = Vec::new();
    for i in 0..g.items.len() {
        let code = match g.items[i].item {
            ItemRef::Field(f) => {
                let x = extract(&f.ranges);
                quote! { { let w = c.word; Some(#x as i64) } }
            }
            ItemRef::Derived(d) => {
                let e = d.expr.clone();
                g.guarded(names, &e)
            }
        };
        let i = Literal::u16_unsuffixed(i as u16);
        val_arms.push(quote! { #i => #code, });
    }

    // Item writers.
    let mut write_arms = Vec::new();
    let mut write_bodies = Vec::new();
    for i in 0..g.items.len() {
        let item = g.items[i].item;
        let iname = g.item_name(i).to_string();
        let body = match item.ty() {
            FieldType::Sub(tree, binds) => {
                let tw = isa.encodings[*tree].width;
                let m = lit_u64(if tw >= 64 { u64::MAX } else { (1u64 << tw) - 1 });
                let tname = isa.encodings[*tree].name.clone();
                let pairs: Vec<TokenStream> = binds
                    .iter()
                    .map(|(p, b)| {
                        let p = Literal::u16_unsuffixed(names.id(p));
                        let bid = names.id(b);
                        if !g.asked.contains(&bid) {
                            g.asked.push(bid);
                        }
                        let b = Literal::u16_unsuffixed(bid);
                        quote! { (#p, #b) }
                    })
                    .collect();
                let decode = format_ident!("decode_tree_{}", tree);
                let val = fn_ident("val", leaf);
                let nm = fn_ident("name", leaf);
                // The tree's own leaves called directly (small enough to
                // inline), not through the dispatch over every leaf.
                let direct = isa.leaves(*tree).map(|l| {
                    let id = Literal::usize_unsuffixed(l);
                    let w = fn_ident("write", l);
                    quote! { #id => #w(&sc, out), }
                });
                quote! {
                    let v = v & #m;
                    let sub = #decode(v, c.generation).ok_or_else(|| DisasmError::NoSubMatch {
                        tree: #tname.to_string(), value: v, generation: c.generation,
                    })?;
                    static BINDS: &[(u16, u16)] = &[#(#pairs),*];
                    let caller = Caller { ctx: c, binds: BINDS, value: #val, write: #nm };
                    let sc = Ctx::new(v, c.generation, c.validate, Some(caller));
                    match sub {
                        #(#direct)*
                        _ => write_leaf(sub, &sc, out),
                    }
                }
            }
            FieldType::Enum(e) if isa.enums[*e].strict => {
                let code = write_scalar_code(isa, item.ty(), item.width());
                let t = format_ident!("ENUM_{}", e);
                let en = isa.enums[*e].name.clone();
                quote! {
                    if c.validate && enum_text(&#t, v).is_none() {
                        return Err(DisasmError::Reserved {
                            leaf: #leaf_name.to_string(), field: #iname.to_string(),
                            enum_name: #en.to_string(), value: v,
                        });
                    }
                    #code
                    Ok(())
                }
            }
            ty => {
                let code = write_scalar_code(isa, ty, item.width());
                quote! { #code Ok(()) }
            }
        };
        write_bodies.push(body.clone());
        let i = Literal::u16_unsuffixed(i as u16);
        write_arms.push(quote! { #i => { #body } });
    }

    // Templates and mnemonics, chosen like the engine: per level from the
    // leaf up, the active `when`'s one, else the plain one.
    let mut templates: Vec<&Template> = Vec::new();
    let mut tsel = TokenStream::new();
    for k in 0..g.chain.len() {
        let enc = g.chain[k];
        let e = &isa.encodings[enc];
        if !e.whens.is_empty() {
            let active = g.active(k);
            let mut tarms = Vec::new();
            for (j, w) in e.whens.iter().enumerate() {
                if let Some(t) = &w.level.display {
                    let jl = Literal::usize_unsuffixed(j);
                    let ti = Literal::usize_unsuffixed(templates.len());
                    templates.push(t);
                    tarms.push(quote! { Some(#jl) => break 't #ti, });
                }
            }
            if tarms.is_empty() {
                tsel.extend(quote! { let _ = #active; });
            } else {
                tsel.extend(quote! { match #active { #(#tarms)* _ => {} } });
            }
        }
        if let Some(t) = &e.plain.display {
            let ti = Literal::usize_unsuffixed(templates.len());
            templates.push(t);
            tsel.extend(quote! { break 't #ti; });
            break;
        }
    }
    // Mnemonic chain is independent of where the template was found.
    let mut msel_full = TokenStream::new();
    for k in 0..g.chain.len() {
        let e = &isa.encodings[g.chain[k]];
        if !e.whens.is_empty() {
            let active = g.active(k);
            let marms: Vec<TokenStream> = e
                .whens
                .iter()
                .enumerate()
                .filter_map(|(j, w)| {
                    w.level.mnemonic.as_ref().map(|m| {
                        let jl = Literal::usize_unsuffixed(j);
                        quote! { Some(#jl) => break 'm #m, }
                    })
                })
                .collect();
            if marms.is_empty() {
                msel_full.extend(quote! { let _ = #active; });
            } else {
                msel_full.extend(quote! { match #active { #(#marms)* _ => {} } });
            }
        }
        if let Some(m) = &e.plain.mnemonic {
            msel_full.extend(quote! { break 'm #m; });
            break;
        }
    }
    let mnemonic = quote! { 'm: { #msel_full #leaf_name } };

    let nm = fn_ident("name", leaf);
    let witem = fn_ident("witem", leaf);
    let mut template_arms = Vec::new();
    let _ = &witem;
    for (ti, t) in templates.iter().enumerate() {
        let mut writes = Vec::new();
        for p in &t.pieces {
            writes.push(match p {
                Piece::Lit(s) => quote! { out.write_str(#s)?; },
                Piece::Mnemonic => quote! { out.write_str(#mnemonic)?; },
                Piece::Field(n, _) => {
                    let id = names.id(n);
                    let unresolved = quote! {
                        DisasmError::Unresolved { name: #n.to_string(), leaf: #leaf_name.to_string() }
                    };
                    match g.static_item(n) {
                        Some(Some(i)) => {
                            let v = g.item_value(names, i);
                            let body = &write_bodies[i];
                            quote! {
                                let v = #v.ok_or_else(|| #unresolved)? as u64;
                                let r: Result<(), DisasmError> = { #body };
                                r?;
                            }
                        }
                        Some(None) if !g.in_sub_tree => quote! { return Err(#unresolved); },
                        Some(None) => {
                            let id = Literal::u16_unsuffixed(id);
                            quote! {
                                if !c.param_write(#id, out)? { return Err(#unresolved); }
                            }
                        }
                        // Which item shows the name depends on the
                        // active `when`s: decided here, each candidate
                        // written inline (not through `name_N`'s dispatch
                        // by name id, item and writer).
                        None => {
                            let which = g.which_arm(n);
                            let shown: Vec<usize> = (0..g.items.len())
                                .filter(|&i| g.item_name(i) == n.as_str())
                                .collect();
                            let arms: Vec<TokenStream> = shown
                                .into_iter()
                                .map(|i| {
                                    let v = g.item_value(names, i);
                                    let body = &write_bodies[i];
                                    let il = Literal::u16_unsuffixed(i as u16);
                                    quote! {
                                        #il => {
                                            let v = #v.ok_or_else(|| #unresolved)? as u64;
                                            let r: Result<(), DisasmError> = { #body };
                                            r?;
                                        }
                                    }
                                })
                                .collect();
                            let id = Literal::u16_unsuffixed(id);
                            quote! {
                                let i: u16 = (|| -> u16 #which)();
                                match i {
                                    #(#arms)*
                                    _ => if !c.param_write(#id, out)? { return Err(#unresolved); },
                                }
                            }
                        }
                    }
                }
            });
        }
        let ti = Literal::usize_unsuffixed(ti);
        template_arms.push(quote! { #ti => { #(#writes)* Ok(()) } });
    }

    // Unexpected bits: set don't-care bits, and `assert`s of the active
    // variant of each level that do not hold.
    let mut notes = TokenStream::new();
    let dontcare = isa.encodings[leaf].dontcare;
    if dontcare != 0 {
        let m = lit_u64(dontcare);
        notes.extend(quote! {
            let dc = c.word & #m;
            if dc != 0 { out.dont_care(#leaf_name, dc); }
        });
    }
    for k in 0..g.chain.len() {
        let e = &isa.encodings[g.chain[k]];
        let asserts = |lvl: &Level| {
            let tests = lvl.asserts.iter().map(|a| {
                let (m, v) = (lit_u64(a.mask), lit_u64(a.value));
                quote! {
                    let f = c.word & #m;
                    if f != #v { out.assert_failed(#leaf_name, #m, #v, f); }
                }
            });
            quote! { #(#tests)* }
        };
        let plain = asserts(&e.plain);
        if e.whens.is_empty() {
            notes.extend(plain);
        } else {
            let active = g.active(k);
            let arms = e.whens.iter().enumerate().map(|(j, w)| {
                let jl = Literal::usize_unsuffixed(j);
                let code = asserts(&w.level);
                quote! { Some(#jl) => { #code } }
            });
            notes.extend(quote! { match #active { #(#arms)* _ => { #plain } } });
        }
    }

    // Validity rules, in the engine's order.
    let mut checks = TokenStream::new();
    let which = fn_ident("which", leaf);
    for k in 0..g.chain.len() {
        let enc = g.chain[k];
        let e = &isa.encodings[enc];
        let per_level = |g: &mut LeafGen, names: &mut Names, when: Option<usize>| {
            let lvl = level_of(isa, enc, when);
            let mut code = TokenStream::new();
            for chk in &lvl.checks {
                let v = g.guarded(names, &chk.expr);
                let msg = &chk.message;
                let text = chk.expr.to_string();
                code.extend(quote! {
                    match #v {
                        Some(0) => return Err(DisasmError::Check { leaf: #leaf_name.to_string(), message: #msg.to_string() }),
                        Some(_) => {}
                        None => return Err(DisasmError::Unresolved { name: #text.to_string(), leaf: #leaf_name.to_string() }),
                    }
                });
            }
            for f in &lvl.fields {
                let FieldType::Enum(en) = f.ty else { continue };
                if !isa.enums[en].strict {
                    continue;
                }
                let Some(i) = g.find_item(k, when, &f.name) else {
                    continue;
                };
                let id = names.id(&f.name);
                if !g.asked.contains(&id) {
                    g.asked.push(id);
                }
                let id = Literal::u16_unsuffixed(id);
                let i = Literal::u16_unsuffixed(i as u16);
                let t = format_ident!("ENUM_{}", en);
                let x = extract(&f.ranges);
                let fname = &f.name;
                let ename = &isa.enums[en].name;
                code.extend(quote! {
                    {
                        let w = c.word;
                        let v: u64 = #x;
                        if #which(c, #id) == #i && enum_text(&#t, v).is_none() {
                            return Err(DisasmError::Reserved {
                                leaf: #leaf_name.to_string(), field: #fname.to_string(),
                                enum_name: #ename.to_string(), value: v,
                            });
                        }
                    }
                });
            }
            code
        };
        if !e.whens.is_empty() {
            let active = g.active(k);
            let mut arms = Vec::new();
            for j in 0..e.whens.len() {
                let code = per_level(&mut g, names, Some(j));
                if !code.is_empty() {
                    let jl = Literal::usize_unsuffixed(j);
                    arms.push(quote! { Some(#jl) => { #code } });
                }
            }
            if arms.is_empty() {
                checks.extend(quote! { let _ = #active; });
            } else {
                checks.extend(quote! { match #active { #(#arms)* _ => {} } });
            }
        }
        let code = per_level(&mut g, names, None);
        checks.extend(code);
    }

    // Name resolution for every name this leaf can be asked for.
    let mut asked = g.asked.clone();
    asked.sort_unstable();
    let which_arms: Vec<TokenStream> = asked
        .iter()
        .map(|&id| {
            let arm = g.which_arm(&names.list[usize::from(id)]);
            let id = Literal::u16_unsuffixed(id);
            quote! { #id => #arm, }
        })
        .collect();

    let cond = fn_ident("cond", leaf);
    let item = fn_ident("item", leaf);
    let val = fn_ident("val", leaf);
    let check = fn_ident("check", leaf);
    let write = fn_ident("write", leaf);
    let tcount = templates.len();
    let template_expr = if tcount == 0 {
        quote! { return Err(DisasmError::NoTemplate { leaf: #leaf_name.to_string() }) }
    } else {
        quote! { 't: { #tsel #[allow(unreachable_code)] { return Err(DisasmError::NoTemplate { leaf: #leaf_name.to_string() }) } } }
    };

    quote! {
        #typed
        #[allow(dead_code, unused_variables, unreachable_patterns, unreachable_code, unused_braces, clippy::all)]
        fn #cond(c: &Ctx<'_>, k: usize, j: usize) -> Option<i64> {
            match (k, j) { #(#cond_arms)* _ => None }
        }
        #[allow(unused_variables, unreachable_patterns, unreachable_code, unused_braces, clippy::all)]
        fn #which(c: &Ctx<'_>, n: u16) -> u16 {
            match n { #(#which_arms)* _ => NOT_FOUND }
        }
        #[allow(unused_variables, unreachable_patterns, unreachable_code, unused_braces, clippy::all)]
        fn #item(c: &Ctx<'_>, i: u16) -> Option<i64> {
            match i { #(#val_arms)* _ => None }
        }
        #[allow(dead_code, clippy::all)]
        fn #val(c: &Ctx<'_>, n: u16) -> Option<i64> {
            match #which(c, n) {
                NOT_FOUND => c.param_value(n),
                i => #item(c, i),
            }
        }
        #[allow(unused_variables, unreachable_patterns, unreachable_code, unused_braces, clippy::all)]
        fn #witem(c: &Ctx<'_>, i: u16, v: u64, out: &mut Buf<'_>) -> Result<(), DisasmError> {
            match i { #(#write_arms)* _ => Ok(()) }
        }
        #[allow(clippy::all)]
        fn #nm(c: &Ctx<'_>, n: u16, out: &mut Buf<'_>) -> Result<(), DisasmError> {
            let unresolved = || DisasmError::Unresolved { name: NAMES[usize::from(n)].to_string(), leaf: #leaf_name.to_string() };
            match #which(c, n) {
                NOT_FOUND => {
                    if c.param_write(n, out)? { Ok(()) } else { Err(unresolved()) }
                }
                i => {
                    let v = #item(c, i).ok_or_else(unresolved)? as u64;
                    #witem(c, i, v, out)
                }
            }
        }
        #[allow(unused_variables, unreachable_patterns, unreachable_code, unused_braces, clippy::all)]
        fn #check(c: &Ctx<'_>) -> Result<(), DisasmError> {
            #checks
            Ok(())
        }
        #[allow(unused_variables, unreachable_patterns, unreachable_code, unused_labels, unused_braces, clippy::all)]
        fn #write(c: &Ctx<'_>, out: &mut Buf<'_>) -> Result<(), DisasmError> {
            if c.validate { #check(c)?; }
            #notes
            let t: usize = #template_expr;
            match t { #(#template_arms)* _ => Err(DisasmError::NoTemplate { leaf: #leaf_name.to_string() }) }
        }
    }
}

/// The typed accessors' view of one item.
fn item_info(isa: &Isa, item: ItemRef<'_>) -> TokenStream {
    let (derived, width, ranges) = match item {
        ItemRef::Field(f) => (false, f.width, f.ranges.as_slice()),
        ItemRef::Derived(d) => (true, d.width, &[][..]),
    };
    let ty = item.ty();
    let t = match ty {
        FieldType::Uint
        | FieldType::Hex
        | FieldType::HexUpper
        | FieldType::Uoffset
        | FieldType::AbsBranch => quote! { ItemTy::Uint },
        FieldType::Int | FieldType::Offset | FieldType::Branch => quote! { ItemTy::Int },
        FieldType::Bool(_) | FieldType::BoolInv(_) => quote! { ItemTy::Bool },
        FieldType::Float => quote! { ItemTy::Float },
        FieldType::Fixed(r) => {
            let r = Literal::u32_unsuffixed(*r);
            quote! { ItemTy::Fixed(#r) }
        }
        FieldType::Enum(e) => {
            let e = Literal::usize_unsuffixed(*e);
            quote! { ItemTy::Enum(#e) }
        }
        FieldType::Sub(tree, _) => {
            let t = Literal::usize_unsuffixed(*tree);
            let w = Literal::u32_unsuffixed(isa.encodings[*tree].width);
            quote! { ItemTy::Sub { tree: #t, width: #w } }
        }
    };
    let conv = match crate::fields::Conv::of(ty) {
        crate::fields::Conv::Float => quote! { Conv::Float },
        crate::fields::Conv::Fixed(r) => {
            let r = Literal::u32_unsuffixed(r);
            quote! { Conv::Fixed(#r) }
        }
        crate::fields::Conv::Signed => quote! { Conv::Signed },
        crate::fields::Conv::Unsigned => quote! { Conv::Unsigned },
    };
    let rs = ranges.iter().map(|r| {
        let (l, w) = (
            Literal::u32_unsuffixed(r.low),
            Literal::u32_unsuffixed(r.width()),
        );
        quote! { (#l, #w) }
    });
    let describe = ty.describe(isa);
    let width = Literal::u32_unsuffixed(width);
    quote! {
        ItemInfo { derived: #derived, width: #width, ranges: &[#(#rs),*], ty: #t, conv: #conv, describe: #describe }
    }
}

/// The `display` module of an `isa!` expansion: `write_word` shows one
/// instruction word with generated code only.
/// `fields` are the instruction field names in the order of the generated
/// `Field` enum: they get the first name ids, so a `Field` is its own id.
pub(crate) fn display_module(isa: &Isa, fields: &[String]) -> TokenStream {
    let mut names = Names::default();
    for f in fields {
        names.id(f);
    }
    let mut leaves: Vec<EncId> = Vec::new();
    for (root, _) in &isa.decoders {
        leaves.extend(isa.leaves(*root));
    }
    leaves.sort_unstable();
    leaves.dedup();

    let mut fns = TokenStream::new();
    for &l in &leaves {
        fns.extend(leaf_items(isa, &mut names, l));
    }
    let dispatch = leaves.iter().map(|&l| {
        let w = fn_ident("write", l);
        let id = Literal::usize_unsuffixed(l);
        quote! { #id => #w(c, out), }
    });
    let field_dispatch = leaves
        .iter()
        .filter(|&&l| isa.encodings[l].root == isa.root)
        .map(|&l| {
            let f = fn_ident("field", l);
            let id = Literal::usize_unsuffixed(l);
            quote! { #id => #f(&c, n), }
        });
    let sub_trees: Vec<EncId> = isa
        .decoders
        .iter()
        .map(|(r, _)| *r)
        .filter(|&r| r != isa.root)
        .collect();
    let sub_leaf_arms = sub_trees.iter().map(|&r| {
        let f = format_ident!("decode_tree_{}", r);
        let id = Literal::usize_unsuffixed(r);
        quote! { #id => #f(bits, generation), }
    });
    let root_id = Literal::usize_unsuffixed(isa.root);
    let tree_arms = sub_trees.iter().map(|&r| {
        let f = format_ident!("decode_tree_{}", r);
        let id = Literal::usize_unsuffixed(r);
        quote! { #id => Some(#f(word, generation)), }
    });
    let leaf_name_arms = leaves
        .iter()
        .filter(|&&l| isa.encodings[l].root != isa.root)
        .map(|&l| {
            let id = Literal::usize_unsuffixed(l);
            let name = &isa.encodings[l].name;
            quote! { #id => Some(#name), }
        });

    let subtrees = isa
        .decoders
        .iter()
        .filter(|(r, _)| *r != isa.root)
        .map(|(r, t)| {
            let f = format_ident!("decode_tree_{}", r);
            let body = if t.nodes.is_empty() {
                quote! { None }
            } else {
                crate::codegen::tree_tokens(t, 0, &|enc| {
                    let id = Literal::usize_unsuffixed(enc);
                    quote! { #id }
                })
            };
            quote! {
                #[allow(unused_comparisons, clippy::all)]
                fn #f(word: u64, generation: u32) -> Option<usize> { #body }
            }
        });

    let enums = isa.enums.iter().enumerate().map(|(i, e)| {
        let mut vals: Vec<(u64, &str)> = Vec::new();
        for (v, s, _) in &e.values {
            if !vals.iter().any(|(x, _)| x == v) {
                vals.push((*v, s.as_str()));
            }
        }
        vals.sort_by_key(|(v, _)| *v);
        let n = vals.len();
        let t = format_ident!("ENUM_{}", i);
        let pairs = vals.iter().map(|(v, s)| {
            let v = lit_u64(*v);
            quote! { (#v, #s) }
        });
        quote! {
            #[allow(dead_code)]
            static #t: [(u64, &str); #n] = [#(#pairs),*];
        }
    });
    let name_list = names.list.clone();
    let notes_asserts = isa.notes_asserts;
    let word_mask = lit_u64(if isa.width >= 64 {
        u64::MAX
    } else {
        (1u64 << isa.width) - 1
    });

    quote! {
        /// Disassembly as generated code: no spec at run time, no name
        /// lookups, nothing allocated per instruction.
        pub mod display {
            #![allow(non_snake_case, clippy::all)]
            use ::std::fmt::Write;
            use ::lathe_isa::DisasmError;
            use ::lathe_isa::gen_rt::{Buf, Caller, Ctx, ItemInfo, ItemTy, enum_text};
            use ::lathe_isa::fields::Conv;
            use super::Opcode;

            const NOT_FOUND: u16 = u16::MAX;
            /// Every name the templates and expressions mention, by id.
            static NAMES: &[&str] = &[#(#name_list),*];

            #(#enums)*
            #(#subtrees)*
            #fns

            /// Field or derived value number `n` (a `Field` as `u16`) of
            /// the instruction `word` decodes to, resolved with its active
            /// overrides: how to read it and its value.
            pub fn field(word: u64, generation: u32, n: u16) -> Option<(&'static ItemInfo, i64)> {
                let word = word & #word_mask;
                let op = Opcode::decode(word, generation)?;
                let c = Ctx::new(word, generation, false, None);
                match op.encoding() {
                    #(#field_dispatch)*
                    _ => None,
                }
            }

            /// The leaf of the tree rooted at `root` that `word` decodes
            /// to at `generation`, `None` outside when `root` has no tree:
            /// the spec's decision trees as code (`Isa::tree_lookup`).
            pub fn decode_tree(root: usize, word: u64, generation: u32) -> Option<Option<usize>> {
                match root {
                    #root_id => Some(Opcode::decode(word, generation).map(Opcode::encoding)),
                    #(#tree_arms)*
                    _ => None,
                }
            }

            /// The name of the leaf of sub-encoding tree `tree` that `bits`
            /// decode to.
            #[allow(unused_variables)]
            pub fn sub_leaf(tree: usize, bits: u64, generation: u32) -> Option<&'static str> {
                let leaf: Option<usize> = match tree {
                    #(#sub_leaf_arms)*
                    _ => None,
                };
                match leaf? {
                    #(#leaf_name_arms)*
                    _ => None,
                }
            }

            /// Applies the spec's `check` rules and strict enums to `word`
            /// (the display's validation, without keeping the text).
            pub fn validate(word: u64, generation: u32) -> Result<Opcode, DisasmError> {
                ::lathe_isa::gen_rt::with_spare(|s| push_word(word, generation, true, false, s))
            }

            fn write_leaf(leaf: usize, c: &Ctx<'_>, out: &mut Buf<'_>) -> Result<(), DisasmError> {
                match leaf {
                    #(#dispatch)*
                    _ => Err(DisasmError::NoMatch { word: c.word, generation: c.generation }),
                }
            }

            /// The unexpected bits of `word` (set don't-care bits, `assert`s
            /// that do not hold) in the instruction and in every
            /// sub-encoding its text shows, in display order.
            pub fn warnings(word: u64, generation: u32) -> Vec<::lathe_isa::DecodeWarning> {
                let word = word & #word_mask;
                let Some(op) = Opcode::decode(word, generation) else {
                    return Vec::new();
                };
                let c = Ctx::new(word, generation, false, None);
                let mut text = String::new();
                let mut buf = Buf::new(&mut text, true, true);
                // Display errors only cut the walk short; what was found stands.
                let _ = write_leaf(op.encoding(), &c, &mut buf);
                buf.into_warnings()
            }

            /// Appends the text of `word` at `generation` to `out` and
            /// returns its opcode; `validate` enforces the spec's `check`
            /// rules and strict enums (an error, and `out` unchanged);
            /// `note` appends a `\t; ` note naming set don't-care bits (and,
            /// if the spec says `notes asserts;`, `assert` bits that
            /// differ), as Mesa's decoder does with errors shown.
            pub fn push_word(word: u64, generation: u32, validate: bool, note: bool, out: &mut String) -> Result<Opcode, DisasmError> {
                let word = word & #word_mask;
                let op = Opcode::decode(word, generation).ok_or(DisasmError::NoMatch { word, generation })?;
                let start = out.len();
                let c = Ctx::new(word, generation, validate, None);
                let mut buf = Buf::new(out, note, note && #notes_asserts);
                let r = write_leaf(op.encoding(), &c, &mut buf);
                let warnings = buf.into_warnings();
                match r {
                    Ok(()) => {
                        ::lathe_isa::gen_rt::write_note(out, &warnings)?;
                        Ok(op)
                    }
                    Err(e) => {
                        out.truncate(start);
                        Err(e)
                    }
                }
            }

            /// [`push_word`] for any writer (through a per-thread buffer,
            /// so nothing is allocated per instruction).
            pub fn write_word(word: u64, generation: u32, validate: bool, note: bool, out: &mut dyn Write) -> Result<Opcode, DisasmError> {
                ::lathe_isa::gen_rt::with_spare(|s| {
                    let op = push_word(word, generation, validate, note, s)?;
                    out.write_str(s)?;
                    Ok(op)
                })
            }
        }
    }
}
