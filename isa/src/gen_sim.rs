//! Generates the `sim` module of `isa!` output: the spec's register files,
//! one operand decoder per operand sub-encoding tree, and one straight-line
//! `exec` function per instruction with semantics, built from the
//! `semantics` blocks of its encoding chain (see [`crate::semantics`]).
//! Field values, `when`-free derived values and named expressions are
//! compiled to bit extractions at expansion time; type aliases become one
//! monomorphic copy of the body per choice. The run-time pieces (values,
//! primitives, machine state, timing) are in [`crate::sim`].

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::ast::MetaValue;
use crate::check::rust_name;
use crate::codegen::tree_tokens;
use crate::expr::{Expr, ExprKind};
use crate::model::{EncId, FieldType, Isa, ItemRef};
use crate::semantics::{
    GroupCount, IoArg, Literal as Lit, Mod, SArg, SExpr, SExprKind, Stmt, Ty, io_effect,
    parse_literal,
};

/// Compiles field expressions of one encoding leaf to `i64` code over the
/// word `w`, the generation and the tree's params `p`.
struct Scope<'a> {
    isa: &'a Isa,
    leaf: EncId,
    /// Bindings of named-expression parameters, innermost last.
    bound: Vec<(String, TokenStream)>,
    depth: usize,
}

impl<'a> Scope<'a> {
    fn new(isa: &'a Isa, leaf: EncId) -> Self {
        Scope {
            isa,
            leaf,
            bound: Vec::new(),
            depth: 0,
        }
    }

    fn item(&self, name: &str) -> Option<ItemRef<'a>> {
        let isa = self.isa;
        for e in isa.chain(self.leaf) {
            if let Some(i) = isa.encodings[e].plain.item(name) {
                return Some(i);
            }
        }
        for e in isa.chain(self.leaf) {
            for w in &isa.encodings[e].whens {
                if let Some(i) = w.level.item(name) {
                    return Some(i);
                }
            }
        }
        None
    }

    fn name(&mut self, name: &str) -> TokenStream {
        if let Some((_, t)) = self.bound.iter().rev().find(|(n, _)| n == name) {
            return t.clone();
        }
        match self.item(name) {
            Some(ItemRef::Field(f)) => {
                let x = extract(f);
                quote! { (#x as i64) }
            }
            Some(ItemRef::Derived(d)) if self.depth < 16 => {
                self.depth += 1;
                let saved = std::mem::take(&mut self.bound);
                let t = self.expr(&d.expr);
                self.bound = saved;
                self.depth -= 1;
                t
            }
            _ => {
                let root = self.isa.encodings[self.leaf].root;
                match self.isa.encodings[root]
                    .params
                    .iter()
                    .position(|p| p == name)
                {
                    Some(i) => {
                        let i = Literal::usize_unsuffixed(i);
                        quote! { p[#i] }
                    }
                    // The checker rejects unknown names in semantics; a
                    // derived value may still name a field of other leaves.
                    None => quote! { 0i64 },
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> TokenStream {
        match &e.kind {
            ExprKind::Int(v) => {
                let v = Literal::i64_suffixed(*v);
                quote! { #v }
            }
            ExprKind::Gen => quote! { (generation as i64) },
            ExprKind::Name(n) => self.name(n),
            ExprKind::Named(n, _, args) => {
                let Some(def) = self.isa.exprs.iter().find(|x| x.name == *n) else {
                    return quote! { 0i64 };
                };
                let vals: Vec<TokenStream> = args.iter().map(|a| self.expr(a)).collect();
                let locals: Vec<_> = (0..vals.len())
                    .map(|i| format_ident!("a{}_{}", self.depth, i))
                    .collect();
                let n0 = self.bound.len();
                for (p, l) in def.params.iter().zip(&locals) {
                    self.bound.push((p.to_string(), quote! { #l }));
                }
                self.depth += 1;
                let body = self.expr(&def.expr);
                self.depth -= 1;
                self.bound.truncate(n0);
                quote! { { #(let #locals: i64 = #vals;)* #body } }
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a);
                let op = format_ident!("{}", format!("{op:?}"));
                quote! { ::lathe_isa::expr::UnOp::#op.apply(#a) }
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let op = format_ident!("{}", format!("{op:?}"));
                quote! { ::lathe_isa::expr::BinOp::#op.apply(#a, #b) }
            }
            ExprKind::Cond(c, a, b) => {
                let (c, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                quote! { (if #c != 0 { #a } else { #b }) }
            }
        }
    }

    /// A call of the operand decoder of sub-encoding field `name`.
    fn operand_call(&mut self, name: &str) -> TokenStream {
        let Some(item) = self.item(name) else {
            return quote! { None };
        };
        let (ItemRef::Field(f), FieldType::Sub(root, binds)) = (item, item.ty()) else {
            return quote! { None };
        };
        let x = extract(f);
        let params: Vec<TokenStream> = self.isa.encodings[*root]
            .params
            .iter()
            .map(|p| {
                let caller = binds
                    .iter()
                    .find(|(q, _)| q == p)
                    .map(|(_, c)| c.clone())
                    .unwrap_or_else(|| p.clone());
                self.name(&caller)
            })
            .collect();
        let func = format_ident!("decode_{}", ident_part(&self.isa.encodings[*root].name));
        quote! { #func(#x, generation, &[#(#params),*]) }
    }
}

fn ident_part(name: &str) -> String {
    name.replace(['.', '-'], "_").to_lowercase()
}

fn extract(f: &crate::model::Field) -> TokenStream {
    let mut parts = Vec::new();
    let mut shift = 0u32;
    for r in &f.ranges {
        let low = Literal::u32_unsuffixed(r.low);
        let m = Literal::u64_unsuffixed(if r.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << r.width()) - 1
        });
        let s = Literal::u32_unsuffixed(shift);
        parts.push(quote! { (((w >> #low) & #m) << #s) });
        shift += r.width();
    }
    quote! { (#(#parts)|*) }
}

fn ty_tokens(t: Ty) -> TokenStream {
    match t {
        Ty::F32 => quote! { f32 },
        Ty::F16 => quote! { ::lathe_isa::sim::F16 },
        Ty::U32 => quote! { u32 },
        Ty::U16 => quote! { u16 },
        Ty::S32 => quote! { i32 },
        Ty::S16 => quote! { i16 },
        Ty::Bool => quote! { bool },
        Ty::U8 => quote! { u8 },
        Ty::S8 => quote! { i8 },
        Ty::U64 => quote! { u64 },
        Ty::S64 => quote! { i64 },
        Ty::V2F16 => quote! { ::lathe_isa::sim::V2<::lathe_isa::sim::F16> },
        Ty::V2U16 => quote! { ::lathe_isa::sim::V2<u16> },
        Ty::V2S16 => quote! { ::lathe_isa::sim::V2<i16> },
        Ty::V4U8 => quote! { ::lathe_isa::sim::V4<u8> },
        Ty::V4S8 => quote! { ::lathe_isa::sim::V4<i8> },
    }
}

/// File index and half view of a register file name.
fn file_ref(isa: &Isa, name: &str) -> (Literal, bool) {
    let (i, half) = isa.semantics.file(name).unwrap_or((0, false));
    (Literal::u8_unsuffixed(i as u8), half)
}

/// The operand decoder of one sub-encoding tree.
fn operand_fn(isa: &Isa, root: EncId) -> TokenStream {
    let func = format_ident!("decode_{}", ident_part(&isa.encodings[root].name));
    let arms: Vec<TokenStream> = isa
        .leaves(root)
        .map(|leaf| {
            let id = Literal::usize_unsuffixed(leaf);
            let mut scope = Scope::new(isa, leaf);
            let mut body = TokenStream::new();
            for b in isa.semantics.chain(isa, leaf) {
                body.extend(operand_stmts(&mut scope, &b.body));
            }
            quote! {
                #id => {
                    let mut op: Option<::lathe_isa::sim::Operand> = None;
                    let mut mods = [false; 7];
                    let mut swz = 0i64;
                    let mut wmask = 0i64;
                    #body
                    let mut o = op?;
                    o.half |= mods[0];
                    o.abs |= mods[1];
                    o.neg |= mods[2];
                    o.repeat |= mods[3];
                    o.sat |= mods[4];
                    o.clamp_pos |= mods[5];
                    o.clamp_snorm |= mods[6];
                    if swz != 0 {
                        o.swz = swz;
                    }
                    if wmask != 0 {
                        o.wmask = wmask as u8;
                    }
                    Some(o.fit(FILES))
                }
            }
        })
        .collect();
    let tree = match isa.decoder(root) {
        Some(t) if !t.nodes.is_empty() => tree_tokens(t, 0, &|enc| {
            let id = Literal::usize_unsuffixed(enc);
            quote! { #id }
        }),
        _ => quote! { None },
    };
    quote! {
        #[allow(unused_variables, unused_mut, clippy::all)]
        fn #func(w: u64, generation: u32, p: &[i64]) -> Option<::lathe_isa::sim::Operand> {
            let leaf: usize = (|| -> Option<usize> { let word = w; #tree })()?;
            match leaf {
                #(#arms)*
                _ => None,
            }
        }
    }
}

fn mod_index(m: Mod) -> usize {
    match m {
        Mod::Half => 0,
        Mod::Abs => 1,
        Mod::Neg => 2,
        Mod::Repeat => 3,
        Mod::Sat => 4,
        Mod::ClampPos => 5,
        Mod::ClampSnorm => 6,
        // Value modifiers: see `mod_value`.
        Mod::Swz | Mod::Wmask => usize::MAX,
    }
}

/// The local a value modifier (`swz`, `wmask`) of an operand decoder sets.
fn mod_value(m: Mod) -> Option<proc_macro2::Ident> {
    match m {
        Mod::Swz => Some(format_ident!("swz")),
        Mod::Wmask => Some(format_ident!("wmask")),
        _ => None,
    }
}

/// The location of `immt FIELD`: the bits each enum entry spells.
fn imm_text(scope: &Scope, field: &str) -> TokenStream {
    let Some(ItemRef::Field(f)) = scope.item(field) else {
        return quote! { op = None; };
    };
    let FieldType::Enum(e) = &f.ty else {
        return quote! { op = None; };
    };
    let x = extract(f);
    let arms = scope.isa.enums[*e]
        .values
        .iter()
        .filter_map(|(v, text, _)| {
            let bits = crate::semantics::enum_text_bits(text)?;
            let v = Literal::u64_unsuffixed(*v);
            Some(quote! { #v => Some(#bits), })
        });
    quote! {
        op = match #x { #(#arms)* _ => None }
            .map(|b: u32| ::lathe_isa::sim::Operand::at(::lathe_isa::sim::Loc::Bits(b)));
    }
}

fn operand_stmts(scope: &mut Scope, body: &[Stmt]) -> TokenStream {
    let mut out = TokenStream::new();
    for s in body {
        out.extend(match s {
            Stmt::If { cond, then, els } => {
                let c = scope.expr(cond);
                let (t, e) = (operand_stmts(scope, then), operand_stmts(scope, els));
                quote! { if #c != 0 { #t } else { #e } }
            }
            Stmt::Reg { file, addr, index } => {
                let (f, half) = file_ref(scope.isa, &file.node);
                let i = scope.expr(index);
                let loc = match addr {
                    None => quote! { ::lathe_isa::sim::Loc::Reg { file: #f, index: #i as u32 } },
                    Some((a, k)) => {
                        let (af, _) = file_ref(scope.isa, &a.node);
                        let k = scope.expr(k);
                        quote! { ::lathe_isa::sim::Loc::Rel { file: #f, addr_file: #af, addr_index: #k as u32, offset: #i as i32 } }
                    }
                };
                quote! { op = Some(::lathe_isa::sim::Operand { half: #half, ..::lathe_isa::sim::Operand::at(#loc) }); }
            }
            Stmt::Imm { float, value } => {
                let v = scope.expr(value);
                if *float {
                    quote! { op = Some(::lathe_isa::sim::Operand::at(::lathe_isa::sim::Loc::ImmF(#v as u32))); }
                } else {
                    quote! { op = Some(::lathe_isa::sim::Operand::at(::lathe_isa::sim::Loc::Imm(#v))); }
                }
            }
            Stmt::Use(f) => {
                let call = scope.operand_call(&f.node);
                quote! { op = #call; }
            }
            Stmt::ImmBits(value) => {
                let v = scope.expr(value);
                quote! { op = Some(::lathe_isa::sim::Operand::at(::lathe_isa::sim::Loc::Bits(#v as u32))); }
            }
            Stmt::ImmText(f) => imm_text(scope, &f.node),
            Stmt::Mods { mods, .. } => {
                let sets = mods.iter().map(|(m, e)| {
                    let v = scope.expr(e);
                    match mod_value(*m) {
                        Some(local) => quote! { #local = #v; },
                        None => {
                            let i = mod_index(*m);
                            quote! { mods[#i] |= #v != 0; }
                        }
                    }
                });
                quote! { #(#sets)* }
            }
            _ => TokenStream::new(),
        });
    }
    out
}

/// A type alias: its name and its (condition, type) choices.
type Alias = (String, Vec<(Option<Expr>, Ty)>);

/// What the per-instruction generator collects from a leaf's chain.
/// A register group an instruction reads: operand field, count, the
/// `[…]` argument the count comes from, and the field conditions under
/// which the semantics read it.
struct GroupRead {
    field: String,
    count: GroupCount,
    upto: Option<Expr>,
    conds: Vec<(Expr, bool)>,
}

struct Leaf<'a> {
    /// Type aliases in force: name, condition, choices.
    aliases: Vec<Alias>,
    /// Operand fields used, in first-use order.
    operands: Vec<String>,
    /// Operand fields read (for hazard checks).
    reads: Vec<String>,
    writes: Vec<String>,
    /// Register reads by file/index expression (hazard checks).
    reg_reads: Vec<(String, Expr)>,
    mods: Vec<(String, Mod, Expr)>,
    /// Register groups of I/O effects: operand, count, the `[…]` argument
    /// the count comes from.
    group_reads: Vec<GroupRead>,
    /// The field conditions (`if` statements and values, with the branch
    /// taken) around the statement being scanned.
    conds: Vec<(Expr, bool)>,
    group_writes: Vec<(String, GroupCount, Option<Expr>)>,
    waits: Vec<(String, Expr)>,
    /// `signal(KIND, [E])`: the writes stay pending on KIND where E holds.
    signals: Vec<(String, Expr)>,
    /// Reads other threads' registers (`shuffle`, `ballot`).
    cross_lane: bool,
    repeat: Option<Expr>,
    stall: Option<Expr>,
    body: Vec<&'a Stmt>,
}

impl<'a> Leaf<'a> {
    fn collect(&mut self, stmts: &'a [Stmt], top: bool) {
        for s in stmts {
            match s {
                Stmt::Type { name, choices } => {
                    let choices = choices
                        .iter()
                        .filter_map(|(c, t)| Ty::from_name(&t.node).map(|t| (c.clone(), t)))
                        .collect();
                    self.aliases.push((name.node.clone(), choices));
                }
                Stmt::Mods { field, mods } => {
                    self.operand(&field.node);
                    for (m, e) in mods {
                        self.mods.push((field.node.clone(), *m, e.clone()));
                    }
                }
                Stmt::Effect { name, args, .. }
                    if top
                        && matches!(name.node.as_str(), "wait" | "signal" | "repeat" | "stall") =>
                {
                    let stat = args.iter().find_map(|a| match a {
                        SArg::Static(e) => Some(e.clone()),
                        SArg::Value(_) => None,
                    });
                    let Some(e) = stat else { continue };
                    match name.node.as_str() {
                        "wait" | "signal" => {
                            if let Some(SArg::Value(SExpr {
                                kind: SExprKind::Local(k),
                                ..
                            })) = args.first()
                            {
                                let list = if name.node == "wait" {
                                    &mut self.waits
                                } else {
                                    &mut self.signals
                                };
                                list.push((k.node.clone(), e));
                            }
                        }
                        "repeat" => self.repeat = Some(e),
                        _ => self.stall = Some(e),
                    }
                }
                Stmt::If { cond, then, els } => {
                    self.conds.push((cond.clone(), true));
                    self.scan(then);
                    self.conds.last_mut().expect("pushed").1 = false;
                    self.scan(els);
                    self.conds.pop();
                    if top {
                        self.body.push(s);
                    }
                }
                Stmt::Let { value, .. } => {
                    self.scan_value(value);
                    if top {
                        self.body.push(s);
                    }
                }
                Stmt::Write { dst, index, value } => {
                    self.operand(&dst.node);
                    match index {
                        // Members 0..=K of a group are stamped as written.
                        Some(k) => self.group_writes.push((
                            dst.node.clone(),
                            GroupCount::Next,
                            Some(upto(k)),
                        )),
                        None if !self.writes.contains(&dst.node) => {
                            self.writes.push(dst.node.clone())
                        }
                        None => {}
                    }
                    self.scan_value(value);
                    if top {
                        self.body.push(s);
                    }
                }
                Stmt::Effect { name, args, .. } => {
                    let sig = io_effect(&name.node).unwrap_or(&[]);
                    for (i, a) in args.iter().enumerate() {
                        match (sig.get(i), a) {
                            (Some(IoArg::Keyword(_)), _) => {}
                            (Some(IoArg::In(c) | IoArg::Out(c)), SArg::Value(v)) => {
                                let SExprKind::Local(n) = &v.kind else {
                                    continue;
                                };
                                if n.node == "none" {
                                    continue;
                                }
                                self.operand(&n.node);
                                let count = match args.get(i + 1) {
                                    Some(SArg::Static(e)) => Some(e.clone()),
                                    _ => None,
                                };
                                let group = (n.node.clone(), *c, count);
                                if matches!(sig[i], IoArg::Out(_)) {
                                    self.group_writes.push(group);
                                } else {
                                    let (field, count, upto) = group;
                                    let conds = self.conds.clone();
                                    self.group_reads.push(GroupRead {
                                        field,
                                        count,
                                        upto,
                                        conds,
                                    });
                                }
                            }
                            (_, SArg::Value(v)) => self.scan_value(v),
                            _ => {}
                        }
                    }
                    if top {
                        self.body.push(s);
                    }
                }
                _ => {}
            }
        }
    }

    fn scan(&mut self, stmts: &'a [Stmt]) {
        self.collect(stmts, false);
    }

    fn operand(&mut self, name: &str) {
        if !self.operands.iter().any(|o| o == name) {
            self.operands.push(name.to_string());
        }
    }

    fn scan_value(&mut self, v: &SExpr) {
        match &v.kind {
            SExprKind::Read { field, .. } => {
                self.operand(&field.node);
                if !self.reads.contains(&field.node) {
                    self.reads.push(field.node.clone());
                }
            }
            SExprKind::RegRead { file, index, .. } => {
                self.reg_reads.push((file.node.clone(), index.clone()))
            }
            SExprKind::Member { field, index, .. } => {
                self.operand(&field.node);
                self.group_reads.push(GroupRead {
                    field: field.node.clone(),
                    count: GroupCount::Next,
                    upto: Some(upto(index)),
                    conds: self.conds.clone(),
                });
            }
            SExprKind::Call(name, args) => {
                self.cross_lane |= matches!(name.node.as_str(), "shuffle" | "ballot");
                for a in args {
                    if let SArg::Value(x) = a {
                        self.scan_value(x);
                    }
                }
            }
            SExprKind::Select(a, b, c) => {
                self.scan_value(a);
                self.scan_value(b);
                self.scan_value(c);
            }
            SExprKind::Static(cond, a, b) => {
                self.conds.push((cond.clone(), true));
                self.scan_value(a);
                self.conds.last_mut().expect("pushed").1 = false;
                self.scan_value(b);
                self.conds.pop();
            }
            _ => {}
        }
    }
}

/// `K + 1`: the members 0..=K of a group.
fn upto(k: &Expr) -> Expr {
    let one = Expr {
        kind: crate::expr::ExprKind::Int(1),
        span: k.span,
    };
    Expr {
        kind: crate::expr::ExprKind::Binary(
            crate::expr::BinOp::Add,
            Box::new(k.clone()),
            Box::new(one),
        ),
        span: k.span,
    }
}

fn op_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("op_{}", name.to_lowercase())
}

/// The local holding an operand's [`crate::sim::Place`] at repetition 0
/// (decoded with the program).
fn first_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("first_{}", name.to_lowercase())
}

/// The local holding an operand's [`crate::sim::Place`] at this repetition.
fn at_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("at_{}", name.to_lowercase())
}

/// Code of a value expression with alias choices fixed; its type.
fn value(
    scope: &mut Scope,
    types: &[(String, Ty)],
    locals: &[(String, Ty)],
    v: &SExpr,
) -> (TokenStream, Ty) {
    let ty = |n: &str| {
        Ty::from_name(n)
            .or_else(|| types.iter().rev().find(|(a, _)| a == n).map(|(_, t)| *t))
            .unwrap_or(Ty::U32)
    };
    match &v.kind {
        SExprKind::Read { field, ty: t } => {
            let t = ty(&t.node);
            let tt = ty_tokens(t);
            let (op, at) = (op_ident(&field.node), at_ident(&field.node));
            (quote! { m.read_at::<#tt>(#at, &#op, rep, lane, pc)? }, t)
        }
        SExprKind::RegRead { file, index, ty: t } => {
            let t = ty(&t.node);
            let tt = ty_tokens(t);
            let (f, half) = file_ref(scope.isa, &file.node);
            let i = scope.expr(index);
            (
                quote! { m.read_reg::<#tt>(#f as usize, #half, #i, lane, pc)? },
                t,
            )
        }
        SExprKind::Member {
            field,
            index,
            ty: t,
        } => {
            let t = ty(&t.node);
            let tt = ty_tokens(t);
            let op = op_ident(&field.node);
            let k = scope.expr(index);
            (
                quote! { m.read::<#tt>(&m.group_member(&#op, (#k) as u32, pc)?, rep, lane, pc)? },
                t,
            )
        }
        SExprKind::Lit { text, ty: t } => {
            let t = ty(&t.node);
            let tt = ty_tokens(t);
            let code = match parse_literal(text) {
                Some(Lit::Float(f)) => quote! { <#tt as ::lathe_isa::sim::Value>::from_f64(#f) },
                Some(Lit::Int(i)) => quote! { <#tt as ::lathe_isa::sim::Value>::from_int(#i) },
                Some(Lit::Bits(b)) => quote! { <#tt as ::lathe_isa::sim::Value>::from_bits(#b) },
                None => quote! { <#tt as ::lathe_isa::sim::Value>::from_int(0) },
            };
            (code, t)
        }
        SExprKind::Local(n) => {
            let t = locals
                .iter()
                .rev()
                .find(|(a, _)| *a == n.node)
                .map(|(_, t)| *t)
                .unwrap_or(Ty::U32);
            let id = format_ident!("v_{}", n.node);
            (quote! { #id }, t)
        }
        SExprKind::Select(c, a, b) => {
            let (c, _) = value(scope, types, locals, c);
            let (a, t) = value(scope, types, locals, a);
            let (b, _) = value(scope, types, locals, b);
            (quote! { (if #c { #a } else { #b }) }, t)
        }
        SExprKind::Static(e, a, b) => {
            let c = scope.expr(e);
            let (a, t) = value(scope, types, locals, a);
            let (b, _) = value(scope, types, locals, b);
            (quote! { (if #c != 0 { #a } else { #b }) }, t)
        }
        SExprKind::Call(name, args) => call(scope, types, locals, &name.node, args, &ty),
    }
}

/// Code of a primitive call and its type. Vector arguments apply the
/// primitive lane by lane (`V2::map2(a, b, |x, y| fadd(x, y))`).
fn call(
    scope: &mut Scope,
    types: &[(String, Ty)],
    locals: &[(String, Ty)],
    name: &str,
    args: &[SArg],
    ty: &dyn Fn(&str) -> Ty,
) -> (TokenStream, Ty) {
    let f = format_ident!("{}", name);
    let type_arg = |a: Option<&SArg>| match a {
        Some(SArg::Value(SExpr {
            kind: SExprKind::Local(n),
            ..
        })) => ty(&n.node),
        _ => Ty::U32,
    };
    let mut vals = Vec::new();
    let mut statics = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            // The type argument of cvt/bitcast/cvtr.
            SArg::Value(_) if i == 1 && matches!(name, "cvt" | "bitcast" | "cvtr" | "num") => {}
            SArg::Value(x) => vals.push(value(scope, types, locals, x)),
            SArg::Static(e) => statics.push(scope.expr(e)),
        }
    }
    let first = vals.first().map(|(_, t)| *t).unwrap_or(Ty::U32);
    let map = |n: usize| format_ident!("map{}", n);
    match name {
        "cvt" | "bitcast" | "cvtr" => {
            let to = type_arg(args.get(1));
            let x = &vals[0].0;
            let lanewise = name != "bitcast" && first.lanes() > 1;
            let (a, b) = if lanewise {
                (ty_tokens(first.scalar()), ty_tokens(to.scalar()))
            } else {
                (ty_tokens(first), ty_tokens(to))
            };
            let body = quote! { ::lathe_isa::sim::#f::<#a, #b>(e #(, #statics)*) };
            let code = if lanewise {
                quote! { #x.map1(|e| #body) }
            } else {
                quote! { { let e = #x; #body } }
            };
            (code, to)
        }
        "lane" => {
            let x = &vals[0].0;
            (
                quote! { ::lathe_isa::sim::lane(#x #(, #statics)*) },
                first.elem().unwrap_or(first),
            )
        }
        "vec2" | "vec4" => {
            let codes = vals.iter().map(|(c, _)| c);
            let n = if name == "vec2" { 2 } else { 4 };
            (
                quote! { ::lathe_isa::sim::#f(#(#codes),*) },
                first.vector(n).unwrap_or(first),
            )
        }
        "num" => {
            let to = type_arg(args.get(1));
            let t = ty_tokens(to);
            (quote! { ::lathe_isa::sim::num::<#t>(#(#statics)*) }, to)
        }
        "frexpe" => {
            let x = &vals[0].0;
            (quote! { ::lathe_isa::sim::frexpe(#x) }, Ty::S32)
        }
        // Other threads' values come from the state before this
        // instruction (`pre`), so a thread's write cannot leak into the
        // read of a thread after it.
        "shuffle" => {
            let Some(SArg::Value(SExpr {
                kind: SExprKind::Read { field, .. },
                ..
            })) = args.first()
            else {
                return (TokenStream::new(), first);
            };
            let op = op_ident(&field.node);
            let tt = ty_tokens(first);
            let (l, x) = (&vals[1].0, &vals[2].0);
            (
                quote! {{
                    let l = (#l) as usize;
                    let fallback: #tt = #x;
                    if l < pre.lanes && pre.active[l] { pre.read::<#tt>(&#op, rep, l, pc)? } else { fallback }
                }},
                first,
            )
        }
        "thread" => (quote! { (lane as u32) }, Ty::U32),
        "first_cluster_but_last" => (
            quote! { ::lathe_isa::sim::first_cluster_but_last(&m.active, lane, (#(#statics)*) as usize) },
            Ty::Bool,
        ),
        "ballot" => {
            let c = &vals[0].0;
            (
                quote! {{
                    let m = &pre;
                    let mut mask = 0u32;
                    for lane in 0..m.lanes.min(32) {
                        if m.active[lane] && #c {
                            mask |= 1 << lane;
                        }
                    }
                    mask
                }},
                Ty::U32,
            )
        }
        _ => {
            let t = if name == "compare" { Ty::Bool } else { first };
            let codes: Vec<&TokenStream> = vals.iter().map(|(c, _)| c).collect();
            if first.lanes() > 1 && name != "compare" {
                let m = map(codes.len());
                let params: Vec<_> = (0..codes.len()).map(|i| format_ident!("l{}", i)).collect();
                let (head, rest) = codes.split_first().expect("a vector argument");
                (
                    quote! { #head.#m(#(#rest,)* |#(#params),*| ::lathe_isa::sim::#f(#(#params),* #(, #statics)*)) },
                    t,
                )
            } else {
                (
                    quote! { ::lathe_isa::sim::#f(#(#codes),* #(, #statics)*) },
                    t,
                )
            }
        }
    }
}

/// Lane-level statements with alias choices fixed.
fn lane_stmts(
    scope: &mut Scope,
    types: &[(String, Ty)],
    locals: &mut Vec<(String, Ty)>,
    body: &[&Stmt],
) -> TokenStream {
    let mut out = TokenStream::new();
    for s in body {
        out.extend(match s {
            Stmt::If { cond, then, els } => {
                let c = scope.expr(cond);
                let n = locals.len();
                let t = lane_stmts(scope, types, locals, &then.iter().collect::<Vec<_>>());
                locals.truncate(n);
                let e = lane_stmts(scope, types, locals, &els.iter().collect::<Vec<_>>());
                locals.truncate(n);
                quote! { if #c != 0 { #t } else { #e } }
            }
            Stmt::Let { name, value: v } => {
                let (code, t) = value(scope, types, locals, v);
                locals.push((name.node.clone(), t));
                let id = format_ident!("v_{}", name.node);
                let tt = ty_tokens(t);
                quote! { let #id: #tt = #code; }
            }
            Stmt::Write {
                dst,
                index,
                value: v,
            } => {
                let (code, t) = value(scope, types, locals, v);
                let tt = ty_tokens(t);
                let (op, at) = (op_ident(&dst.node), at_ident(&dst.node));
                match index {
                    Some(k) => {
                        let k = scope.expr(k);
                        quote! {{
                            let v: #tt = #code;
                            let o = m.group_member(&#op, (#k) as u32, pc)?;
                            m.write::<#tt>(&o, rep, lane, pc, v)?;
                        }}
                    }
                    None => quote! { m.write_at::<#tt>(#at, &#op, rep, lane, pc, #code)?; },
                }
            }
            Stmt::Effect { name, args, .. } => {
                let vals: Vec<TokenStream> = args
                    .iter()
                    .map(|a| match a {
                        SArg::Value(x) => value(scope, types, locals, x).0,
                        SArg::Static(e) => scope.expr(e),
                    })
                    .collect();
                match (name.node.as_str(), vals.as_slice()) {
                    ("jump", [off]) => quote! { m.redirect(lane, Some(target(pc, #off)?)); },
                    ("branch", [c, off]) => {
                        quote! { if #c { m.redirect(lane, Some(target(pc, #off)?)); } }
                    }
                    ("end", []) => quote! { m.redirect(lane, None); },
                    ("goto", [c, i]) => {
                        quote! { if #c { m.redirect(lane, Some((#i) as usize)); } }
                    }
                    ("call", [off]) => {
                        quote! { m.call(lane, pc, target(pc, #off)?)?; }
                    }
                    ("ret", []) => quote! { m.ret(lane, pc)?; },
                    ("kill", [c]) => {
                        quote! { if #c { m.redirect(lane, None); m.killed[lane] = true; } }
                    }
                    ("predicate", [c]) => quote! { m.pred_off[lane] = !#c; },
                    ("predicate_end", []) => quote! { m.pred_off[lane] = false; },
                    ("unmodelled", []) => quote! {
                        return Err(::lathe_isa::sim::SimError::Operand { pc, message: "unsupported: the simulator does not model this form".into() });
                    },
                    (io, _) if io_effect(io).is_some() => io_call(io, args, &vals),
                    ("undocumented", []) => quote! {
                        return Err(::lathe_isa::sim::SimError::Operand { pc, message: "undocumented: no public source says what this instruction computes".into() });
                    },
                    ("undefined", []) => quote! {
                        return Err(::lathe_isa::sim::SimError::Operand { pc, message: "undefined: a reserved modifier value".into() });
                    },
                    _ => TokenStream::new(),
                }
            }
            _ => TokenStream::new(),
        });
    }
    out
}

/// The operand local of a register-group argument (None for `none`).
fn group_arg(a: &SArg) -> Option<proc_macro2::Ident> {
    match a {
        SArg::Value(SExpr {
            kind: SExprKind::Local(n),
            ..
        }) if n.node != "none" => Some(op_ident(&n.node)),
        _ => None,
    }
}

/// The index of an I/O keyword argument in its run-time enum's `ALL`.
fn keyword_arg(a: &SArg, kind: IoArg) -> Literal {
    let i = match (a, kind) {
        (
            SArg::Value(SExpr {
                kind: SExprKind::Local(n),
                ..
            }),
            IoArg::Keyword(k),
        ) => k.index(&n.node).unwrap_or(0),
        _ => 0,
    };
    Literal::usize_unsuffixed(i)
}

/// The call of the `Machine::io_*` method of an I/O effect (`vals`: the
/// code of each argument; group and keyword arguments are read from
/// `args`).
fn io_call(name: &str, args: &[SArg], vals: &[TokenStream]) -> TokenStream {
    let sig = io_effect(name).unwrap_or(&[]);
    let sim = quote! { ::lathe_isa::sim };
    let value = |i: usize| {
        let v = &vals[i];
        quote! { ::lathe_isa::sim::Value::to_raw(#v) }
    };
    let stat = |i: usize| {
        let v = &vals[i];
        quote! { ((#v) as u32) }
    };
    let group = |i: usize| group_arg(&args[i]);
    let kw = |i: usize| keyword_arg(&args[i], sig[i]);
    let required = |i: usize| {
        let g = group(i);
        quote! { &#g }
    };
    let optional = |i: usize, n: TokenStream| match group(i) {
        Some(g) => quote! { Some((&#g, #n)) },
        None => quote! { None },
    };
    match name {
        "load" | "store" => {
            let f = format_ident!("io_{}", name);
            let (space, g, n, b, a, bytes) =
                (kw(0), required(1), stat(2), value(3), value(4), stat(5));
            quote! { m.#f(#sim::Space::ALL[#space], #g, #n, #b, #a, #bytes, rep, lane, pc)?; }
        }
        "atomic" => {
            let (space, op, g) = (kw(0), kw(1), required(2));
            let (b, a, d, c) = (value(3), value(4), value(5), value(6));
            quote! { m.io_atomic(#sim::Space::ALL[#space], #sim::AtomicOp::ALL[#op], #g, #b, #a, #d, #c, rep, lane, pc)?; }
        }
        "varying" => {
            let mode = kw(0);
            let (g, n, slot) = (required(1), stat(2), value(3));
            let ij = match group(4) {
                Some(o) => quote! { Some(&#o) },
                None => quote! { None },
            };
            quote! { m.io_varying(#sim::INTERP_MODES[#mode] == "barycentric", #g, #n, #slot, #ij, rep, lane, pc)?; }
        }
        "texture" => {
            let (op, g, mask) = (kw(0), required(1), stat(2));
            let coords = optional(3, stat(4));
            let extra = optional(5, stat(6));
            let (t, s) = (value(7), value(8));
            quote! { m.io_texture(#sim::TexOp::ALL[#op], #g, #mask, #coords, #extra, #t, #s, rep, lane, pc)?; }
        }
        "texture_values" => {
            let (op, g, mask, n) = (kw(0), required(1), stat(2), stat(3));
            let coords: Vec<TokenStream> = (4..9).map(value).collect();
            let (m_extra, e, t, s) = (stat(9), value(10), value(11), value(12));
            quote! {
                m.io_texture_values(#sim::TexOp::ALL[#op], #g, #mask,
                    &[#(#coords),*][..(#n as usize).min(5)], &[#e][..(#m_extra as usize).min(1)],
                    #t, #s, rep, lane, pc)?;
            }
        }
        "message" => {
            let kind = kw(0);
            let (dst, src) = (optional(1, stat(2)), optional(3, stat(4)));
            let (a, b, c) = (value(5), value(6), value(7));
            quote! { m.io_message(#sim::MsgKind::ALL[#kind], #dst, #src, #a, #b, #c, rep, lane, pc)?; }
        }
        "barrier" => quote! { m.io_barrier(lane, pc)?; },
        "emit" => quote! { m.io_emit(lane, pc)?; },
        "cut" => quote! { m.io_cut(lane, pc)?; },
        "output" => {
            let (g, n, t) = (required(0), stat(1), value(2));
            quote! { m.io_output(#g, #n, #t, rep, lane, pc)?; }
        }
        _ => TokenStream::new(),
    }
}

/// Whether a body has one of the effects `names`.
fn body_has_effect(body: &[&Stmt], names: &[&str]) -> bool {
    fn stmt(s: &Stmt, names: &[&str]) -> bool {
        match s {
            Stmt::If { then, els, .. } => then.iter().chain(els).any(|x| stmt(x, names)),
            Stmt::Effect { name, .. } => names.contains(&name.node.as_str()),
            _ => false,
        }
    }
    body.iter().any(|s| stmt(s, names))
}

/// Alias names a body uses (reads, literals, lets and conversions).
fn used_aliases(body: &[&Stmt], aliases: &[Alias]) -> Vec<usize> {
    let mut text = String::new();
    fn names_s(s: &Stmt, out: &mut String) {
        match s {
            Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|x| names_s(x, out)),
            Stmt::Let { value, .. } | Stmt::Write { value, .. } => names_v(value, out),
            Stmt::Effect { args, .. } => args.iter().for_each(|a| {
                if let SArg::Value(v) = a {
                    names_v(v, out)
                }
            }),
            _ => {}
        }
    }
    fn names_v(v: &SExpr, out: &mut String) {
        match &v.kind {
            SExprKind::Read { ty, .. }
            | SExprKind::RegRead { ty, .. }
            | SExprKind::Member { ty, .. }
            | SExprKind::Lit { ty, .. } => {
                out.push(' ');
                out.push_str(&ty.node);
            }
            SExprKind::Local(n) => {
                out.push(' ');
                out.push_str(&n.node);
            }
            SExprKind::Call(_, args) => args.iter().for_each(|a| {
                if let SArg::Value(v) = a {
                    names_v(v, out)
                }
            }),
            SExprKind::Select(a, b, c) => [a, b, c].iter().for_each(|x| names_v(x, out)),
            SExprKind::Static(_, a, b) => [a, b].iter().for_each(|x| names_v(x, out)),
        }
    }
    for s in body {
        names_s(s, &mut text);
    }
    let words: Vec<&str> = text.split(' ').collect();
    let mut used = Vec::new();
    for (i, (n, _)) in aliases.iter().enumerate() {
        // The nearest definition of a name wins.
        if words.contains(&n.as_str()) && aliases[i + 1..].iter().all(|(m, _)| m != n) {
            used.push(i);
        }
    }
    used
}

/// One copy of the lane body per combination of alias choices.
fn expand_aliases(
    scope: &mut Scope,
    leaf: &Leaf,
    used: &[usize],
    types: &mut Vec<(String, Ty)>,
) -> TokenStream {
    let Some((&first, rest)) = used.split_first() else {
        let mut locals = Vec::new();
        return lane_stmts(scope, types, &mut locals, &leaf.body);
    };
    let (name, choices) = &leaf.aliases[first];
    // The first choice whose condition holds; a choice without one ends
    // the chain.
    let mut code = quote! { return Err(::lathe_isa::sim::SimError::Operand { pc, message: "no type choice applies".into() }) };
    for (cond, t) in choices.iter().rev() {
        types.push((name.clone(), *t));
        let arm = expand_aliases(scope, leaf, rest, types);
        types.pop();
        code = match cond {
            Some(c) => {
                let c = scope.expr(c);
                quote! { if #c != 0 { #arm } else { #code } }
            }
            None => quote! { { #arm } },
        };
    }
    code
}

/// The `exec` function of one instruction.
/// The `prep` function (operands decoded once per program, with their
/// modifiers) and the `exec` function of one instruction.
fn exec_fn(isa: &Isa, leaf_id: EncId, class: Option<usize>, sync: u8) -> TokenStream {
    let blocks = isa.semantics.chain(isa, leaf_id);
    let mut leaf = Leaf {
        aliases: Vec::new(),
        operands: Vec::new(),
        reads: Vec::new(),
        writes: Vec::new(),
        reg_reads: Vec::new(),
        mods: Vec::new(),
        group_reads: Vec::new(),
        conds: Vec::new(),
        group_writes: Vec::new(),
        waits: Vec::new(),
        signals: Vec::new(),
        cross_lane: false,
        repeat: None,
        stall: None,
        body: Vec::new(),
    };
    for b in &blocks {
        leaf.collect(&b.body, true);
    }
    let mut scope = Scope::new(isa, leaf_id);
    let func = format_ident!("exec_{}", ident_part(&isa.encodings[leaf_id].name));
    let prep = format_ident!("prep_{}", ident_part(&isa.encodings[leaf_id].name));
    let decls = leaf.operands.iter().map(|o| {
        let id = op_ident(o);
        let call = scope.operand_call(o);
        quote! {
            let mut #id = #call.ok_or_else(|| ::lathe_isa::sim::SimError::Operand { pc, message: format!("operand {} does not decode", #o) })?;
        }
    }).collect::<Vec<_>>();
    let mods = leaf
        .mods
        .iter()
        .map(|(o, m, e)| {
            let id = op_ident(o);
            let v = scope.expr(e);
            match m {
                Mod::Swz => quote! { #id.swz = #v; },
                Mod::Wmask => quote! { #id.wmask = #v as u8; },
                _ => {
                    let f = format_ident!("{}", m.name());
                    quote! { #id.#f |= #v != 0; }
                }
            }
        })
        .collect::<Vec<_>>();
    // A half modifier on a file without a half view (a0, p0) reads the
    // whole (narrower) unit.
    let refits = leaf.operands.iter().map(|o| {
        let id = op_ident(o);
        quote! { #id = #id.fit(FILES).simplified(); }
    });
    let waits = leaf
        .waits
        .iter()
        .filter_map(|(k, e)| {
            // A kind nothing signals has nothing to wait for.
            let kind = sync_index(isa, k);
            let v = scope.expr(e);
            (kind != 0).then(|| match 1u64.checked_shl(kind as u32 - 1) {
                Some(bit) => quote! { if #v != 0 { waits |= #bit; } },
                None => quote! { compile_error!("the simulator handles at most 64 sync kinds"); },
            })
        })
        .collect::<Vec<_>>();
    let signals = leaf
        .signals
        .iter()
        .map(|(k, e)| {
            let kind = sync_index(isa, k);
            let v = scope.expr(e);
            quote! { if #v != 0 { sync = #kind; } }
        })
        .collect::<Vec<_>>();
    let pre = if leaf.cross_lane {
        quote! { let pre = m.snapshot(); }
    } else {
        TokenStream::new()
    };
    let repeat = leaf
        .repeat
        .as_ref()
        .map(|e| scope.expr(e))
        .unwrap_or_else(|| quote! { 0i64 });
    let stall = leaf
        .stall
        .as_ref()
        .map(|e| scope.expr(e))
        .unwrap_or_else(|| quote! { 0i64 });
    let class_lit = class.map(|c| Literal::u16_unsuffixed(c as u16));
    // The latency from a producer of class `p` to this reader of operand
    // `name`, from the program's table.
    let keys = latency_operands(isa);
    let key = |name: Option<&str>| {
        name.and_then(|n| keys.iter().position(|k| k == n))
            .unwrap_or(keys.len())
    };
    let needed = |name: Option<&str>| {
        let key = key(name);
        match &class_lit {
            Some(c) => quote! { |p, switched| prog.latencies.get(#c, #key, p, switched) },
            None => quote! { |_, _| None },
        }
    };
    // The bound of `needed`.
    let longest = |name: Option<&str>| {
        let key = key(name);
        match &class_lit {
            Some(c) => quote! { prog.latencies.longest(#c, #key) },
            None => quote! { 0 },
        }
    };
    let checks = leaf
        .reads
        .iter()
        .map(|r| {
            let (id, at) = (op_ident(r), at_ident(r));
            let needed = needed(Some(r));
            let longest = longest(Some(r));
            let first = first_ident(r);
            quote! {
                let #at = m.place_from(#first, &#id, rep);
                m.check_at(#at, &#id, rep, pc, #longest, #needed)?;
            }
        })
        .collect::<Vec<_>>();
    let places = leaf
        .writes
        .iter()
        .filter(|w| !leaf.reads.contains(w))
        .map(|o| {
            let (id, at, first) = (op_ident(o), at_ident(o), first_ident(o));
            quote! { let #at = m.place_from(#first, &#id, rep); }
        });
    let reg_needed = needed(None);
    let reg_checks = leaf.reg_reads.iter().map(|(f, e)| {
        let (fi, half) = file_ref(isa, f);
        let v = scope.expr(e);
        quote! {
            let op = ::lathe_isa::sim::Operand { half: #half, ..::lathe_isa::sim::Operand::at(::lathe_isa::sim::Loc::Reg { file: #fi, index: #v as u32 }) };
            m.check_read(&op, rep, pc, #reg_needed)?;
        }
    }).collect::<Vec<_>>();
    let stamp_class = class_lit
        .as_ref()
        .map(|c| quote! { #c })
        .unwrap_or_else(|| quote! { u16::MAX });
    let stamps = leaf
        .writes
        .iter()
        .map(|w| {
            let (id, at) = (op_ident(w), at_ident(w));
            quote! { m.stamp_at(#at, &#id, rep, pc, #stamp_class, sync)?; }
        })
        .collect::<Vec<_>>();
    let mut count = |c: GroupCount, e: &Option<Expr>| match (c, e) {
        (GroupCount::Fixed(n), _) => quote! { #n },
        (GroupCount::Next, Some(e)) => {
            let v = scope.expr(e);
            quote! { ((#v) as u32) }
        }
        (GroupCount::NextBits, Some(e)) => {
            let v = scope.expr(e);
            quote! { (((#v) as u32) & 0xf).count_ones() }
        }
        _ => quote! { 0u32 },
    };
    let group_checks = leaf
        .group_reads
        .iter()
        .map(|g| {
            let id = op_ident(&g.field);
            let n = count(g.count, &g.upto);
            let needed = needed(Some(&g.field));
            quote! { m.check_group(&#id, #n, rep, pc, #needed)?; }
        })
        .collect::<Vec<_>>();
    let group_stamps = leaf
        .group_writes
        .iter()
        .map(|(w, c, e)| {
            let id = op_ident(w);
            let n = count(*c, e);
            quote! { m.stamp_group(&#id, #n, rep, pc, #stamp_class, sync)?; }
        })
        .collect::<Vec<_>>();
    // A group is checked only where the word takes the branch that
    // reads it.
    let group_checks: Vec<_> = leaf
        .group_reads
        .iter()
        .zip(group_checks)
        .map(|(g, check)| {
            let conds: Vec<_> = g
                .conds
                .iter()
                .map(|(c, taken)| {
                    let v = scope.expr(c);
                    quote! { (((#v) != 0) == #taken) }
                })
                .collect();
            quote! { if true #(&& #conds)* { #check } }
        })
        .collect();
    // Predication effects run in every thread; the rest skip threads a
    // predicated region switched off.
    let skip = if body_has_effect(&leaf.body, &["predicate", "predicate_end"]) {
        quote! { !m.active[lane] }
    } else {
        quote! { !m.active[lane] || m.pred_off[lane] }
    };
    let used = used_aliases(&leaf.body, &leaf.aliases);
    let lane_body = expand_aliases(&mut scope, &leaf, &used, &mut Vec::new());
    let ids: Vec<_> = leaf.operands.iter().map(|o| op_ident(o)).collect();
    let firsts: Vec<_> = leaf.operands.iter().map(|o| first_ident(o)).collect();
    let count = Literal::usize_unsuffixed(ids.len());
    let slots: Vec<_> = (0..ids.len()).map(Literal::usize_unsuffixed).collect();
    quote! {
        #[allow(unused_variables, unused_mut, unused_parens, clippy::all)]
        fn #prep(w: u64, generation: u32, pc: usize, ops: &mut Vec<::lathe_isa::sim::Operand>) -> Result<::lathe_isa::sim::Decoded, ::lathe_isa::sim::SimError> {
            let p: [i64; 0] = [];
            #(#decls)*
            #(#mods)*
            #(#refits)*
            #(ops.push(#ids);)*
            let mut waits = 0u64;
            #(#waits)*
            let mut sync: u8 = #sync;
            #(#signals)*
            Ok(::lathe_isa::sim::Decoded {
                exec: #func,
                waits,
                sync,
                reps: (#repeat).clamp(0, 64) as u32,
                stall: (#stall).clamp(0, 1 << 16) as u64,
            })
        }

        #[allow(unused_variables, unused_mut, unused_parens, clippy::all)]
        fn #func(m: &mut ::lathe_isa::sim::Machine, prog: &::lathe_isa::sim::Program, s: &::lathe_isa::sim::Step, pc: usize) -> Result<(), ::lathe_isa::sim::SimError> {
            let (w, generation) = (s.word, prog.generation);
            let p: [i64; 0] = [];
            let (ops, places) = prog.operands::<#count>(s);
            #(let (#ids, #firsts) = (ops[#slots], places[#slots]);)*
            if s.waits != 0 {
                m.wait_for(s.waits);
            }
            let (sync, reps) = (s.sync, s.reps);
            for rep in 0..=reps {
                #pre
                #(#checks)*
                #(#reg_checks)*
                #(#group_checks)*
                #(#places)*
                for lane in 0..m.lanes {
                    if #skip {
                        continue;
                    }
                    #lane_body
                }
                #(#stamps)*
                #(#group_stamps)*
            }
            m.cycle += reps as u64 + 1 + s.stall;
            Ok(())
        }
    }
}

/// The operand names the latency rules distinguish, in rule order (the
/// keys of `lathe_isa::sim::Latencies`; any other operand is the key
/// after them).
fn latency_operands(isa: &Isa) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in &isa.latency.rules {
        if let Some(f) = &r.field {
            if !keys.iter().any(|k| k == f) {
                keys.push(f.to_string());
            }
        }
    }
    keys
}

/// The 1-based index of sync kind `k` among the values of the sync key
/// (0: none).
fn sync_kinds(isa: &Isa) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    if let Some(key) = &isa.semantics.sync_key {
        for leaf in isa.instructions() {
            if let Some(MetaValue::Ident(v)) = isa.meta(leaf, key) {
                if v != "none" && !kinds.iter().any(|k| k == v) {
                    kinds.push(v.to_string());
                }
            }
        }
    }
    // Kinds an instruction signals by a field (Valhall's dependency
    // slots), in the order the spec names them.
    fn signalled(stmts: &[Stmt], kinds: &mut Vec<String>) {
        for s in stmts {
            match s {
                Stmt::Effect { name, args, .. } if name.node == "signal" => {
                    if let Some(SArg::Value(SExpr {
                        kind: SExprKind::Local(k),
                        ..
                    })) = args.first()
                    {
                        if !kinds.contains(&k.node) {
                            kinds.push(k.node.clone());
                        }
                    }
                }
                Stmt::If { then, els, .. } => {
                    signalled(then, kinds);
                    signalled(els, kinds);
                }
                _ => {}
            }
        }
    }
    for b in &isa.semantics.blocks {
        signalled(&b.body, &mut kinds);
    }
    kinds
}

fn sync_index(isa: &Isa, k: &str) -> u8 {
    sync_kinds(isa)
        .iter()
        .position(|x| x == k)
        .map_or(0, |i| i as u8 + 1)
}

/// The `sim` module.
pub fn sim_module(isa: &Isa) -> TokenStream {
    let sem = &isa.semantics;
    let names = |n: &crate::ast::RegNames| {
        let (prefix, comps, first) = (&n.prefix, &n.comps, n.first);
        quote! { ::lathe_isa::sim::Names { prefix: #prefix, comps: #comps, first: #first } }
    };
    let files = sem.files.iter().map(|f| {
        let (len, bits, uniform) = (f.len, f.bits, f.uniform);
        let own = names(&f.names);
        let half = match &f.half {
            Some(h) => {
                let (n, l) = (names(&h.names), h.len);
                quote! { Some((#n, #l)) }
            }
            None => quote! { None },
        };
        let latency = match f.latency {
            Some(c) => {
                let c = c as u16;
                quote! { Some(#c) }
            }
            None => quote! { None },
        };
        quote! {
            ::lathe_isa::sim::FileInfo { names: #own, len: #len, bits: #bits, half: #half, uniform: #uniform, latency: #latency }
        }
    });
    // Operand trees that some instruction semantics use.
    let mut roots: Vec<EncId> = Vec::new();
    for b in &sem.blocks {
        let root = isa.encodings[b.enc].root;
        if root != isa.root && !roots.contains(&root) {
            roots.push(root);
        }
    }
    let operand_fns: Vec<TokenStream> = roots.iter().map(|&r| operand_fn(isa, r)).collect();
    let class_key = isa
        .meta_keys
        .iter()
        .find(|k| k.ty == crate::ast::MetaType::Class)
        .map(|k| k.name.clone());
    let kinds = sync_kinds(isa);
    let mut execs = Vec::new();
    let mut arms = Vec::new();
    let mut covered = Vec::new();
    for leaf in isa.instructions() {
        let opcode = format_ident!("{}", rust_name(&isa.encodings[leaf].name));
        if !sem.covers(isa, leaf) {
            continue;
        }
        let class = class_key.as_ref().and_then(|k| match isa.meta(leaf, k) {
            Some(MetaValue::Ident(c)) => isa.latency.class(c),
            _ => None,
        });
        let sync = sem
            .sync_key
            .as_ref()
            .and_then(|k| match isa.meta(leaf, k) {
                Some(MetaValue::Ident(v)) => kinds.iter().position(|x| x == v).map(|i| i as u8 + 1),
                _ => None,
            })
            .unwrap_or(0);
        execs.push(exec_fn(isa, leaf, class, sync));
        let prep = format_ident!("prep_{}", ident_part(&isa.encodings[leaf].name));
        arms.push(quote! { Opcode::#opcode => #prep(word, generation, pc, ops), });
        covered.push(quote! { Opcode::#opcode });
    }
    let classes: Vec<_> = isa
        .latency
        .classes
        .iter()
        .map(|c| format_ident!("{}", rust_name(c)))
        .collect();
    // `precision` rules as (producer classes, consumer classes, generation
    // range, extra cycles); `*` lists every class.
    let all: Vec<usize> = (0..isa.latency.classes.len()).collect();
    let precision = isa.latency.precision.iter().map(|r| {
        let list = |v: &Option<Vec<usize>>| {
            let v = v.as_ref().unwrap_or(&all).iter().map(|&c| c as u16);
            quote! { &[#(#v),*] }
        };
        let (ps, cs) = (list(&r.producers), list(&r.consumers));
        let (lo, hi, n) = (r.generation.min, r.generation.max, r.cycles);
        quote! { (#ps, #cs, #lo, #hi, #n) }
    });
    let needed = if classes.is_empty() {
        quote! { None }
    } else {
        quote! {
            const CLASSES: &[LatencyClass] = &[#(LatencyClass::#classes),*];
            const PRECISION: &[(&[u16], &[u16], u32, u32, u32)] = &[#(#precision),*];
            let consumer = consumer?;
            let p = *CLASSES.get(producer as usize)?;
            let c = *CLASSES.get(consumer as usize)?;
            let extra = if switched {
                PRECISION
                    .iter()
                    .find(|(ps, cs, lo, hi, _)| ps.contains(&producer) && cs.contains(&consumer) && (*lo..=*hi).contains(&generation))
                    .map_or(0, |r| r.4)
            } else {
                0
            };
            Some(latency(p, c, operand, generation)? + extra)
        }
    };
    let kind_names = kinds.iter().map(|k| k.as_str());
    let operand_keys = latency_operands(isa);
    let class_count = isa.latency.classes.len();
    let covers = if covered.is_empty() {
        quote! { { let _ = opcode; false } }
    } else {
        quote! { matches!(opcode, #(#covered)|*) }
    };
    quote! {
        /// Simulator generated from the spec's `machine` and `semantics`:
        /// register files, operand decoders and one function per
        /// instruction (see `lathe_isa::sim` for the run-time side).
        pub mod sim {
            #![allow(clippy::all, unused_imports, unreachable_code)]
            use super::*;

            /// The register files the spec's `regfile` items declare with `names`.
            pub static FILES: &[::lathe_isa::sim::FileInfo] = &[#(#files),*];

            /// Sync kinds (index + 1 is the kind number in hazards).
            pub static SYNC_KINDS: &[&str] = &[#(#kind_names),*];

            /// A machine of `lanes` threads in lockstep over [`FILES`].
            pub fn machine(lanes: usize) -> ::lathe_isa::sim::Machine {
                ::lathe_isa::sim::Machine::new(FILES, lanes)
            }

            fn needed(producer: u16, consumer: Option<u16>, operand: Option<&str>, switched: bool, generation: u32) -> Option<u32> {
                #needed
            }

            fn target(pc: usize, offset: i64) -> Result<usize, ::lathe_isa::sim::SimError> {
                usize::try_from(pc as i64 + offset).map_err(|_| ::lathe_isa::sim::SimError::Flow(format!("instruction {pc} jumps before the program start")))
            }

            #(#operand_fns)*
            #(#execs)*

            /// Whether the spec gives `opcode` semantics.
            pub fn covers(opcode: Opcode) -> bool {
                #covers
            }

            /// Operand names the latency rules distinguish (index: key).
            static LATENCY_OPERANDS: &[&str] = &[#(#operand_keys),*];

            /// Decodes the instruction `word` at index `pc`: appends its
            /// operands to `ops` and returns its exec function and timing.
            fn prep(word: u64, generation: u32, pc: usize, ops: &mut Vec<::lathe_isa::sim::Operand>) -> Result<::lathe_isa::sim::Decoded, ::lathe_isa::sim::SimError> {
                let Some(opcode) = Opcode::decode(word, generation) else {
                    return Err(::lathe_isa::sim::SimError::Decode { pc, word });
                };
                match opcode {
                    #(#arms)*
                    other => Err(::lathe_isa::sim::SimError::Unsupported { pc, name: other.info().name }),
                }
            }

            /// Decodes `program` once for [`::lathe_isa::sim::Program::run`]
            /// (a word that does not decode, or has no semantics, is an
            /// error when it executes).
            pub fn prepare(program: &[u64], generation: u32) -> ::lathe_isa::sim::Program {
                static TABLES: ::std::sync::Mutex<Vec<(u32, ::lathe_isa::sim::Latencies)>> = ::std::sync::Mutex::new(Vec::new());
                let latencies = ::lathe_isa::sim::Latencies::cached(&TABLES, generation, || {
                    ::lathe_isa::sim::Latencies::new(#class_count, LATENCY_OPERANDS.len() + 1, |c, key, p, switched| {
                        needed(p, Some(c), LATENCY_OPERANDS.get(key).copied(), switched, generation)
                    })
                });
                ::lathe_isa::sim::Program::new(program, generation, FILES, latencies, prep)
            }

            /// Runs `program` from index 0 until every lane stops (`end`, a
            /// kill, or running off the end), at most `max_steps` issues.
            pub fn run(m: &mut ::lathe_isa::sim::Machine, program: &[u64], generation: u32, max_steps: u64) -> Result<(), ::lathe_isa::sim::SimError> {
                prepare(program, generation).run(m, max_steps)
            }
        }
    }
}
