//! Register groups of one instruction word, read from the spec's
//! semantics: how many consecutive registers each operand field reads or
//! writes. A field that is an I/O effect's register group
//! (`do texture(sample, DST, [WRMASK], SRC1, [@cat5_coords], …)`) covers
//! the count its `[…]` argument gives (the set bits of a write mask for
//! `texture`'s destination, a fixed count where the effect says so, as
//! `varying`'s two barycentric registers); a member read or write
//! `FIELD[K]` makes the group at least `K + 1` long. An operand read as a
//! 64-bit type (`A as u64`), unless its `swz` modifier narrows it to one
//! register (`.w0`), and a destination written a 64-bit value are two
//! registers (low word first, as the simulator reads and writes them).
//! Every other operand is one register. `if` statements are decided on the word, so a form
//! the spec leaves `unmodelled` (or `undocumented`, `undefined`) is
//! reported as such rather than given invented sizes.
//!
//! Instruction selection checks its templates' vector placeholders
//! against these counts ([`crate::rules::check`]).
//!
//! ```
//! let isa = lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/adreno/ir3.isa")).unwrap();
//! let word = isa.assemble("sam (f32)(xyz)r0.x, r1.x, s#0, t#0", 600).unwrap();
//! let groups = lathe_isa::groups::groups(&isa, word, 600).unwrap();
//! assert_eq!(groups.size("DST"), 3);
//! assert_eq!(groups.size("SRC1"), 2);
//! let word = isa.assemble("sam.3d (f32)(xyzw)r0.x, r1.x, s#0, t#0", 600).unwrap();
//! assert_eq!(lathe_isa::groups::groups(&isa, word, 600).unwrap().size("SRC1"), 3);
//! ```

use crate::display::Scope;
use crate::expr::{Expr, ExprKind};
use crate::model::Isa;
use crate::semantics::{GroupCount, IoArg, Mod, SArg, SExpr, SExprKind, Stmt, Ty, io_effect};

/// The register groups of one decoded word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// `(operand field, registers)` for every field longer than one
    /// register or stated by an effect, in first-seen order.
    pub sizes: Vec<(String, u32)>,
    /// The semantics of this form are `unmodelled`, `undocumented` or
    /// `undefined`: its groups are not known.
    pub unknown: Option<String>,
}

impl Groups {
    /// Registers operand field `field` covers (1 when the semantics give
    /// it no group).
    pub fn size(&self, field: &str) -> u32 {
        self.sizes
            .iter()
            .find(|(f, _)| f.eq_ignore_ascii_case(field))
            .map_or(1, |(_, n)| *n)
    }

    fn grow(&mut self, field: &str, n: u32) {
        match self.sizes.iter_mut().find(|(f, _)| f == field) {
            Some((_, m)) => *m = (*m).max(n),
            None => self.sizes.push((field.to_string(), n)),
        }
    }
}

/// The register groups of `word` at `generation`; `None` when the word
/// does not decode.
pub fn groups(isa: &Isa, word: u64, generation: u32) -> Option<Groups> {
    let leaf = isa.decode(word, generation)?;
    let scope = Scope::new(isa, leaf, word, generation, None).unvalidated();
    let mut out = Groups::default();
    let mut wide = Wide::default();
    for block in isa.semantics.chain(isa, leaf) {
        wide.collect(&scope, &block.body);
    }
    for block in isa.semantics.chain(isa, leaf) {
        walk(&scope, &block.body, &mut out);
        wide.walk(&scope, &block.body, &mut out);
    }
    Some(out)
}

/// The 64-bit operands of a word: reads at a 64-bit type of fields no
/// `swz` modifier narrows, and writes of 64-bit values.
#[derive(Default)]
struct Wide {
    /// Fields whose `swz` modifier decides a narrowing selection.
    narrowed: Vec<String>,
    /// `let` names bound to 64-bit values.
    lets: Vec<String>,
}

impl Wide {
    fn collect(&mut self, scope: &Scope, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::If { cond, then, els } => match decide(scope, cond) {
                    Some(0) => self.collect(scope, els),
                    Some(_) => self.collect(scope, then),
                    None => {}
                },
                Stmt::Mods { field, mods } => {
                    let narrows = mods
                        .iter()
                        .any(|(m, e)| *m == Mod::Swz && decide(scope, e).is_some_and(|v| v != 0));
                    if narrows {
                        self.narrowed.push(field.node.clone());
                    }
                }
                Stmt::Let { name, value } if self.is_wide(value) => {
                    self.lets.push(name.node.clone())
                }
                _ => {}
            }
        }
    }

    /// Whether `v` is a 64-bit value, as far as its types say.
    fn is_wide(&self, v: &SExpr) -> bool {
        let wide = |ty: &str| matches!(Ty::from_name(ty), Some(Ty::U64 | Ty::S64));
        match &v.kind {
            SExprKind::Read { ty, .. }
            | SExprKind::Member { ty, .. }
            | SExprKind::RegRead { ty, .. }
            | SExprKind::Lit { ty, .. } => wide(&ty.node),
            SExprKind::Local(name) => self.lets.contains(&name.node),
            SExprKind::Call(name, args) => match (name.node.as_str(), args.last()) {
                (
                    "cvt" | "bitcast",
                    Some(SArg::Value(SExpr {
                        kind: SExprKind::Local(t),
                        ..
                    })),
                ) => wide(&t.node),
                _ => {
                    args.iter().find_map(|a| match a {
                        SArg::Value(x) => Some(self.is_wide(x)),
                        SArg::Static(_) => None,
                    }) == Some(true)
                }
            },
            SExprKind::Select(_, a, _) | SExprKind::Static(_, a, _) => self.is_wide(a),
        }
    }

    /// Grows the 64-bit operands of `body` to two registers.
    fn walk(&self, scope: &Scope, body: &[Stmt], out: &mut Groups) {
        for s in body {
            match s {
                Stmt::If { cond, then, els } => match decide(scope, cond) {
                    Some(0) => self.walk(scope, els, out),
                    Some(_) => self.walk(scope, then, out),
                    // `walk` reports the form unknown.
                    None => {}
                },
                Stmt::Let { value, .. } => self.reads(value, out),
                Stmt::Write { dst, index, value } => {
                    if index.is_none() && self.is_wide(value) {
                        out.grow(&dst.node, 2);
                    }
                    self.reads(value, out);
                }
                Stmt::Effect { args, .. } => {
                    for a in args {
                        if let SArg::Value(v) = a {
                            self.reads(v, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn reads(&self, v: &SExpr, out: &mut Groups) {
        match &v.kind {
            SExprKind::Read { field, .. }
                if self.is_wide(v) && !self.narrowed.contains(&field.node) =>
            {
                out.grow(&field.node, 2)
            }
            SExprKind::Call(_, args) => {
                for a in args {
                    if let SArg::Value(x) = a {
                        self.reads(x, out);
                    }
                }
            }
            SExprKind::Select(a, b, c) => {
                self.reads(a, out);
                self.reads(b, out);
                self.reads(c, out);
            }
            SExprKind::Static(_, a, b) => {
                self.reads(a, out);
                self.reads(b, out);
            }
            _ => {}
        }
    }
}

fn eval(scope: &Scope, e: &Expr) -> Option<u32> {
    decide(scope, e).and_then(|v| u32::try_from(v).ok())
}

/// `e`'s value on the word. Named expressions in semantics blocks are
/// kept by name; they are looked up in the spec's list here.
fn decide(scope: &Scope, e: &Expr) -> Option<i64> {
    let mut e = e.clone();
    resolve_names(scope.isa, &mut e);
    scope.eval(&e)
}

fn resolve_names(isa: &Isa, e: &mut Expr) {
    match &mut e.kind {
        ExprKind::Named(name, index, args) => {
            if index.is_none() {
                *index = isa.exprs.iter().position(|x| x.name == *name);
            }
            args.iter_mut().for_each(|a| resolve_names(isa, a));
        }
        ExprKind::Unary(_, a) => resolve_names(isa, a),
        ExprKind::Binary(_, a, b) => {
            resolve_names(isa, a);
            resolve_names(isa, b);
        }
        ExprKind::Cond(a, b, c) => {
            resolve_names(isa, a);
            resolve_names(isa, b);
            resolve_names(isa, c);
        }
        _ => {}
    }
}

fn walk(scope: &Scope, body: &[Stmt], out: &mut Groups) {
    for s in body {
        match s {
            Stmt::If { cond, then, els } => match decide(scope, cond) {
                Some(0) => walk(scope, els, out),
                Some(_) => walk(scope, then, out),
                None => out.unknown = Some(format!("the condition `{cond}` cannot be decided")),
            },
            Stmt::Let { value, .. } => value_groups(scope, value, out),
            Stmt::Write { dst, index, value } => {
                if let Some(k) = index {
                    match eval(scope, k) {
                        Some(k) => out.grow(&dst.node, k + 1),
                        None => out.unknown = Some(format!("the member `{}[{k}]`", dst.node)),
                    }
                }
                value_groups(scope, value, out);
            }
            Stmt::Effect { name, args, .. } => {
                if matches!(
                    name.node.as_str(),
                    "unmodelled" | "undocumented" | "undefined"
                ) {
                    out.unknown = Some(format!("its semantics are `{}`", name.node));
                }
                effect_groups(scope, &name.node, args, out);
            }
            _ => {}
        }
    }
}

fn effect_groups(scope: &Scope, name: &str, args: &[SArg], out: &mut Groups) {
    let sig = io_effect(name).unwrap_or(&[]);
    for (i, a) in args.iter().enumerate() {
        match (sig.get(i), a) {
            (Some(IoArg::In(c) | IoArg::Out(c)), SArg::Value(v)) => {
                let SExprKind::Local(field) = &v.kind else {
                    continue;
                };
                if field.node == "none" {
                    continue;
                }
                let count = match args.get(i + 1) {
                    Some(SArg::Static(e)) => eval(scope, e),
                    _ => None,
                };
                let n = match (c, count) {
                    (GroupCount::Fixed(n), _) => Some(*n),
                    (GroupCount::Next, Some(n)) => Some(n),
                    (GroupCount::NextBits, Some(bits)) => Some((bits & 0xf).count_ones()),
                    _ => None,
                };
                match n {
                    Some(n) => out.grow(&field.node, n),
                    None => {
                        out.unknown =
                            Some(format!("the size of group `{}` of `{name}`", field.node))
                    }
                }
            }
            (_, SArg::Value(v)) => value_groups(scope, v, out),
            _ => {}
        }
    }
}

fn value_groups(scope: &Scope, v: &SExpr, out: &mut Groups) {
    match &v.kind {
        SExprKind::Member { field, index, .. } => match eval(scope, index) {
            Some(k) => out.grow(&field.node, k + 1),
            None => out.unknown = Some(format!("the member `{}[{index}]`", field.node)),
        },
        SExprKind::Call(_, args) => {
            for a in args {
                if let SArg::Value(x) = a {
                    value_groups(scope, x, out);
                }
            }
        }
        SExprKind::Select(a, b, c) => {
            value_groups(scope, a, out);
            value_groups(scope, b, out);
            value_groups(scope, c, out);
        }
        SExprKind::Static(cond, a, b) => match decide(scope, cond) {
            Some(0) => value_groups(scope, b, out),
            Some(_) => value_groups(scope, a, out),
            None => {
                value_groups(scope, a, out);
                value_groups(scope, b, out);
            }
        },
        _ => {}
    }
}
