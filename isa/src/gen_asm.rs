//! Assembly as generated code: every display template, per leaf and per
//! combination of its `when`s, becomes a static form (see
//! [`crate::asm_rt`]) whose names are resolved here, at expansion time,
//! exactly as the engine resolves them; mnemonics go into a perfect hash.
//! The engine stays the oracle: the `lathe-adreno` / `lathe-mali`
//! differential tests compare both on every line the disassembler prints.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::asm_rt::{in_set, mnemonic_hash};
use crate::display::MAX_DEPTH;
use crate::expr::{BinOp, Expr, ExprKind};
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
            if seen.contains(n) {
                return 0;
            }
            seen.push(n.clone());
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
    for (name, shift) in ts {
        let Some(Resolved::Item(ItemRef::Field(f))) = resolve(isa, leaf, var, name) else {
            return None;
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
        parts.push(quote! { (#sh, #w, #r) });
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
                    let mut t: Vec<&str> = isa.enums[*e]
                        .values
                        .iter()
                        .map(|(_, s, _)| s.as_str())
                        .collect();
                    t.extend(DIGITS);
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

/// Whether the mnemonic of a template always starts a token of the text:
/// whatever precedes it ends in a byte outside `charset`.
fn mnemonic_starts_token(
    isa: &Isa,
    leaf: EncId,
    var: &Variant,
    pieces: &[Piece],
    charset: &[u64; 4],
) -> bool {
    let Some(at) = pieces.iter().position(|p| *p == Piece::Mnemonic) else {
        return false;
    };
    for p in pieces[..at].iter().rev() {
        let Some((ends, empty)) = piece_endings(isa, leaf, var, p) else {
            return false;
        };
        if ends.iter().any(|&b| in_set(charset, b)) {
            return false;
        }
        if !empty {
            return true;
        }
    }
    true
}

struct Gen<'a> {
    isa: &'a Isa,
    /// Sub-encoding trees used, to emit their forms once.
    trees: BTreeSet<EncId>,
}

/// A form's code and, for instructions, its mnemonic.
struct FormCode {
    code: TokenStream,
    mnemonic: Option<String>,
    var: Variant,
    leaf: EncId,
}

impl Gen<'_> {
    fn mnemonic(&self, leaf: EncId, var: &Variant) -> String {
        levels(self.isa, leaf, var)
            .into_iter()
            .find_map(|l| l.mnemonic.clone())
            .unwrap_or_else(|| self.isa.encodings[leaf].name.clone())
    }

    /// The form of `leaf` in variant `var`, if it can read anything.
    fn form(&mut self, leaf: EncId, var: &Variant) -> Option<FormCode> {
        let isa = self.isa;
        let lv = levels(isa, leaf, var);
        let t = lv.iter().find_map(|l| l.display.as_ref())?;
        let e = &isa.encodings[leaf];
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
            // An active `when` holds: its `FIELD == N` conjuncts fix bits
            // the text of this variant may not show (`r<a0.x>` is OFFSET 0).
            if let Some(j) = var[k] {
                for (name, n) in isa.when_equalities(&enc.whens[j].cond) {
                    let Some(Resolved::Item(ItemRef::Field(f))) = resolve(isa, leaf, var, name)
                    else {
                        continue;
                    };
                    if let Some(bits) = f.holding(n) {
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
        let mut ops = Vec::new();
        for p in &t.pieces {
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
                            let binds = self.binds(leaf, var, *tree, binds);
                            quote! { Op::Sub { forms: &#forms, ranges: #ranges, binds: &[#(#binds),*] } }
                        }
                        ty => {
                            let read = read_tokens(ty)?;
                            let w = Literal::u32_unsuffixed(f.width);
                            let r = ranges_tokens(&f.ranges);
                            quote! { Op::Value { read: #read, width: #w, to: To::Field(#r) } }
                        }
                    },
                    Resolved::Item(ItemRef::Derived(d)) => {
                        let read = read_tokens(&d.ty)?;
                        let w = Literal::u32_unsuffixed(d.width);
                        let to = invert(isa, leaf, var, &d.expr).unwrap_or(quote! { To::Drop });
                        quote! { Op::Value { read: #read, width: #w, to: #to } }
                    }
                },
            });
        }
        let g = e.generation;
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
        let code = quote! {
            Form { gen_min: #gmin, gen_max: #gmax, fixed_mask: #fm, fixed: #fv,
                   hidden: #hm, defaults: #dv, search: #sm, ops: &[#(#ops),*] }
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
        binds: &[(String, String)],
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
                            ItemRef::Derived(_) => quote! { To::Drop },
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

/// A perfect hash of `keys` by hash and displace: keys fall into
/// buckets by one hash; each bucket, largest first, gets the first
/// displacement that puts all its keys into free slots. Returns the
/// displacements and the slots (key indices).
fn perfect_hash(keys: &[&str]) -> (Vec<u64>, Vec<Option<usize>>) {
    let size = (keys.len() * 2).next_power_of_two().max(2);
    let nb = (keys.len() / 2).next_power_of_two().max(1);
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for (i, k) in keys.iter().enumerate() {
        buckets[(mnemonic_hash(0, k.as_bytes()) as usize) & (nb - 1)].push(i);
    }
    let mut order: Vec<usize> = (0..nb).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(buckets[b].len()));
    let mut slots: Vec<Option<usize>> = vec![None; size];
    let mut disp = vec![0u64; nb];
    for b in order {
        if buckets[b].is_empty() {
            continue;
        }
        for d in 1u64.. {
            let places: Vec<usize> = buckets[b]
                .iter()
                .map(|&i| (mnemonic_hash(d, keys[i].as_bytes()) as usize) & (size - 1))
                .collect();
            let distinct = places
                .iter()
                .enumerate()
                .all(|(j, p)| !places[..j].contains(p));
            if distinct && places.iter().all(|&p| slots[p].is_none()) {
                for (&i, &p) in buckets[b].iter().zip(&places) {
                    slots[p] = Some(i);
                }
                disp[b] = d;
                break;
            }
        }
    }
    (disp, slots)
}

/// The `asm` module of an `isa!` expansion.
pub(crate) fn asm_module(isa: &Isa) -> TokenStream {
    let mut g = Gen {
        isa,
        trees: BTreeSet::new(),
    };
    let forms = g.forms_of(isa.instructions().collect());

    let mut charset = [0u64; 4];
    for f in &forms {
        for b in f.mnemonic.iter().flat_map(|m| m.bytes()) {
            charset[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
    let mut by_mnemonic: BTreeMap<&str, Vec<u16>> = BTreeMap::new();
    let mut always: Vec<u16> = Vec::new();
    for (i, f) in forms.iter().enumerate() {
        let pieces = &levels(isa, f.leaf, &f.var)
            .into_iter()
            .find_map(|l| l.display.as_ref())
            .map(|t| t.pieces.clone())
            .unwrap_or_default();
        match &f.mnemonic {
            Some(m)
                if !m.is_empty()
                    && mnemonic_starts_token(isa, f.leaf, &f.var, pieces, &charset) =>
            {
                by_mnemonic.entry(m.as_str()).or_default().push(i as u16)
            }
            _ => always.push(i as u16),
        }
    }
    let keys: Vec<&str> = by_mnemonic.keys().copied().collect();
    let (disp, slots) = perfect_hash(&keys);
    let slot_code = slots.iter().map(|s| match s {
        Some(k) => {
            let m = keys[*k];
            let ids = &by_mnemonic[m];
            quote! { (#m, &[#(#ids),*]) }
        }
        None => quote! { ("", &[]) },
    });
    let min_len = keys.iter().map(|k| k.len()).min().unwrap_or(1);
    let max_len = keys.iter().map(|k| k.len()).max().unwrap_or(0);

    // Sub-encoding trees, transitively.
    let mut done: BTreeSet<EncId> = BTreeSet::new();
    let mut subs = TokenStream::new();
    while let Some(&tree) = g.trees.iter().find(|t| !done.contains(t)) {
        done.insert(tree);
        let fs = g.forms_of(isa.leaves(tree).collect());
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
    let nslots = slots.len();
    let nalways = always.len();
    let cs = charset.iter().map(|w| Literal::u64_unsuffixed(*w));
    let disp = disp.iter().map(|d| Literal::u64_unsuffixed(*d));

    quote! {
        /// Assembly as generated code: static forms read from the display
        /// templates, mnemonics by perfect hash, every word confirmed by
        /// the generated disassembler. No spec at run time.
        pub mod asm {
            #![allow(clippy::all)]
            use ::lathe_isa::asm_rt::{Bind, Form, Num, Op, Read, Table, To};

            #(#enums)*
            #subs
            static FORMS: [Form; #nforms] = [#(#codes),*];
            static ALWAYS: [u16; #nalways] = [#(#always),*];
            static SLOTS: [(&str, &[u16]); #nslots] = [#(#slot_code),*];
            static TABLE: Table = Table {
                forms: &FORMS,
                always: &ALWAYS,
                slots: &SLOTS,
                displace: &[#(#disp),*],
                charset: [#(#cs),*],
                min_len: #min_len,
                max_len: #max_len,
            };

            /// The word whose text at `generation` is exactly `text`, read
            /// with generated code only; `None` when the fast path cannot
            /// tell (the engine then assembles or explains the error).
            pub fn assemble(text: &str, generation: u32) -> Option<u64> {
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
