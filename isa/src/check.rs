//! Structural checks on a resolved spec: coverage and overlap of bits,
//! encodings that could match the same word, names that do not resolve,
//! templates that cannot be read back, metadata types, generated names.

use std::collections::HashSet;

use crate::ast::{MetaType, MetaValue};
use crate::diag::{Diagnostic, Span};
use crate::display::MAX_DEPTH;
use crate::expr::{Expr, ExprKind};
use crate::model::{EncId, FieldType, Isa, Level, Piece};

/// Most `when` combinations checked per leaf.
const MAX_VARIANTS_CHECKED: usize = 256;

/// Every problem found in `isa`.
pub fn check(isa: &Isa) -> Vec<Diagnostic> {
    let mut c = Checker {
        isa,
        out: Vec::new(),
        seen: HashSet::new(),
        seen_spans: HashSet::new(),
    };
    c.depths();
    for leaf in 0..isa.encodings.len() {
        if isa.encodings[leaf].is_leaf() && isa.encodings[leaf].depth < MAX_DEPTH {
            c.coverage(leaf);
            c.names(leaf);
            c.meta(leaf);
        }
    }
    c.conflicts();
    c.rust_names();
    c.idioms();
    c.out
}

struct Checker<'a> {
    isa: &'a Isa,
    out: Vec<Diagnostic>,
    seen: HashSet<(Span, String)>,
    /// Unknown names are reported once per place, not once per leaf.
    seen_spans: HashSet<Span>,
}

fn bits_text(mask: u64) -> String {
    let mut parts = Vec::new();
    let mut m = mask;
    while m != 0 {
        let lo = m.trailing_zeros();
        let run = (m >> lo).trailing_ones();
        let hi = lo + run - 1;
        parts.push(if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}..={hi}")
        });
        m &= !((((1u128 << run) - 1) as u64) << lo);
    }
    parts.join(", ")
}

/// Whether a value of this type may end (or start) with a digit.
fn is_numeric(ty: &FieldType) -> bool {
    matches!(
        ty,
        FieldType::Uint
            | FieldType::Int
            | FieldType::Hex
            | FieldType::HexUpper
            | FieldType::Float
            | FieldType::Fixed(_)
            | FieldType::Branch
            | FieldType::AbsBranch
            | FieldType::Bool(None)
    )
}

impl<'a> Checker<'a> {
    fn err(&mut self, span: Span, msg: String) {
        if self.seen.insert((span, msg.clone())) {
            let d = self.isa.sources.diagnostic(span, msg);
            self.out.push(d);
        }
    }

    fn depths(&mut self) {
        for e in &self.isa.encodings {
            if e.depth >= MAX_DEPTH {
                self.err(
                    e.span,
                    format!(
                        "`{}` is nested {} levels deep; at most {MAX_DEPTH} are supported",
                        e.name,
                        e.depth + 1
                    ),
                );
            }
            if e.whens.len() >= 127 {
                self.err(
                    e.span,
                    format!("`{}` has more than 126 `when` blocks", e.name),
                );
            }
        }
    }

    /// Rule 1: every bit covered exactly once by the plain items.
    fn coverage(&mut self, leaf: EncId) {
        let isa = self.isa;
        let e = &isa.encodings[leaf];
        let width_mask = if e.width >= 64 {
            u64::MAX
        } else {
            (1u64 << e.width) - 1
        };
        let patterns = e.mask | e.dontcare;
        let mut covered = patterns;
        let mut names: Vec<&str> = Vec::new();
        let mut owners: Vec<(u64, String, Span)> = vec![];
        for enc in isa.chain(leaf) {
            let lvl = &isa.encodings[enc].plain;
            for a in &lvl.asserts {
                covered |= a.mask;
            }
            for f in &lvl.fields {
                if names.contains(&f.name.as_str()) {
                    continue;
                }
                names.push(&f.name);
                let m = f.mask();
                if m & !width_mask != 0 {
                    self.err(
                        f.span,
                        format!(
                            "field `{}` uses bits {} beyond the {}-bit width",
                            f.name,
                            bits_text(m & !width_mask),
                            e.width
                        ),
                    );
                }
                if m & patterns != 0 {
                    self.err(
                        f.span,
                        format!(
                            "field `{}` overlaps pattern bits {} in `{}`",
                            f.name,
                            bits_text(m & patterns),
                            e.name
                        ),
                    );
                }
                for (om, on, _) in &owners {
                    if m & om != 0 {
                        self.err(
                            f.span,
                            format!(
                                "field `{}` overlaps field `{on}` (bits {}) in `{}`",
                                f.name,
                                bits_text(m & om),
                                e.name
                            ),
                        );
                    }
                }
                covered |= m;
                owners.push((m, f.name.to_string(), f.span));
            }
            for d in &lvl.deriveds {
                if !names.contains(&d.name.as_str()) {
                    names.push(&d.name);
                }
            }
        }
        let missing = width_mask & !covered;
        if missing != 0 {
            self.err(
                e.span,
                format!(
                    "bits {} of `{}` are not covered by any field, pattern or assert",
                    bits_text(missing),
                    e.name
                ),
            );
        }
        if e.generation.is_empty() {
            self.err(
                e.span,
                format!(
                    "`{}` exists in no generation (its `gen` ranges do not intersect)",
                    e.name
                ),
            );
        }
    }

    /// Every `overlaps` entry that accepts leaves `a` and `b` matching the
    /// same word: (declaring encoding, index in its list).
    fn declared_overlaps(&self, a: EncId, b: EncId) -> Vec<(EncId, usize)> {
        let isa = self.isa;
        let mut out = Vec::new();
        for (x, y) in [(a, b), (b, a)] {
            for d in isa.chain(x) {
                for (i, (o, _)) in isa.encodings[d].overlaps.iter().enumerate() {
                    if isa.chain(y).any(|e| e == *o) {
                        out.push((d, i));
                    }
                }
            }
        }
        out
    }

    /// Rule 2: no two leaves of a tree can match one word in one
    /// generation, unless an `overlaps` item accepts the pair; every
    /// `overlaps` entry must be needed.
    fn conflicts(&mut self) {
        let isa = self.isa;
        let mut used: HashSet<(EncId, usize)> = HashSet::new();
        for (root, _) in &isa.decoders {
            let leaves: Vec<EncId> = isa.leaves(*root).collect();
            for (i, &a) in leaves.iter().enumerate() {
                for &b in &leaves[i + 1..] {
                    let (ea, eb) = (&isa.encodings[a], &isa.encodings[b]);
                    let g = ea.generation.intersect(eb.generation);
                    if g.is_empty() {
                        continue;
                    }
                    if (ea.match_bits ^ eb.match_bits) & ea.mask & eb.mask != 0 {
                        continue;
                    }
                    let declared = self.declared_overlaps(a, b);
                    if !declared.is_empty() {
                        used.extend(declared);
                        continue;
                    }
                    let (l, _) = isa.sources.line_col(ea.span.file, ea.span.start);
                    let path = isa.sources.files[ea.span.file].path.display().to_string();
                    self.err(
                        eb.span,
                        format!(
                            "`{}` and `{}` ({path}:{l}) can match the same word at generations {g} (declare `overlaps {}` if this is intended)",
                            eb.name, ea.name, ea.name
                        ),
                    );
                }
            }
        }
        for (d, e) in isa.encodings.iter().enumerate() {
            for (i, (o, span)) in e.overlaps.iter().enumerate() {
                let other = &isa.encodings[*o];
                if other.root != e.root {
                    self.err(
                        *span,
                        format!(
                            "`{}` is not in the same encoding tree as `{}`",
                            other.name, e.name
                        ),
                    );
                } else if !used.contains(&(d, i)) {
                    self.err(
                        *span,
                        format!(
                            "`overlaps {}` is not needed: no leaf of `{}` can match the same word as a leaf of `{}` in a common generation",
                            other.name, e.name, other.name
                        ),
                    );
                }
            }
        }
    }

    fn variants(&self, leaf: EncId) -> Vec<[Option<usize>; MAX_DEPTH]> {
        let mut out = vec![[None; MAX_DEPTH]];
        for (k, enc) in self.isa.chain(leaf).take(MAX_DEPTH).enumerate() {
            let n = self.isa.encodings[enc].whens.len();
            if n == 0 {
                continue;
            }
            let mut next = Vec::new();
            for v in &out {
                for j in 0..n {
                    let mut w = *v;
                    w[k] = Some(j);
                    next.push(w);
                }
                next.push(*v);
            }
            next.truncate(MAX_VARIANTS_CHECKED);
            out = next;
        }
        out
    }

    fn levels(&self, leaf: EncId, var: &[Option<usize>; MAX_DEPTH]) -> Vec<&'a Level> {
        let isa: &'a Isa = self.isa;
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

    /// The type a name has in a leaf variant; `Ok(None)` for a param.
    fn lookup(&self, leaf: EncId, levels: &[&Level], name: &str) -> Option<Option<FieldType>> {
        for l in levels {
            if let Some(it) = l.item(name) {
                return Some(Some(it.ty().clone()));
            }
        }
        let root = &self.isa.encodings[self.isa.encodings[leaf].root];
        root.params.iter().any(|p| p == name).then_some(None)
    }

    fn expr_names(&self, e: &Expr, out: &mut Vec<(String, Span)>, depth: usize) {
        if depth > 32 {
            return;
        }
        match &e.kind {
            ExprKind::Named(_, idx, args) => {
                if let Some(n) = idx.and_then(|i| self.isa.exprs.get(i)) {
                    // The body's own parameters are not names of the scope.
                    let mut body = Vec::new();
                    self.expr_names(&n.expr, &mut body, depth + 1);
                    out.extend(
                        body.into_iter()
                            .filter(|(b, _)| !n.params.iter().any(|p| p == b)),
                    );
                }
                for a in args {
                    self.expr_names(a, out, depth);
                }
            }
            ExprKind::Unary(_, a) => self.expr_names(a, out, depth),
            ExprKind::Binary(_, a, b) => {
                self.expr_names(a, out, depth);
                self.expr_names(b, out, depth);
            }
            ExprKind::Cond(c, a, b) => {
                self.expr_names(c, out, depth);
                self.expr_names(a, out, depth);
                self.expr_names(b, out, depth);
            }
            ExprKind::Name(n) => out.push((n.to_string(), e.span)),
            _ => {}
        }
    }

    /// Rules 3 and 4: names resolve, templates read back, params bound.
    fn names(&mut self, leaf: EncId) {
        let isa = self.isa;
        let leaf_name = isa.encodings[leaf].name.clone();
        for var in self.variants(leaf) {
            let levels = self.levels(leaf, &var);
            let Some(t) = levels.iter().find_map(|l| l.display.as_ref()) else {
                self.err(
                    isa.encodings[leaf].span,
                    format!("`{leaf_name}` has no `display` template"),
                );
                return;
            };
            let mut prev_numeric: Option<String> = None;
            for p in &t.pieces {
                match p {
                    Piece::Field(n, span) => match self.lookup(leaf, &levels, n) {
                        None => prev_numeric = None,
                        Some(ty) => {
                            let numeric = ty.as_ref().is_some_and(is_numeric);
                            if numeric {
                                if let Some(prev) = &prev_numeric {
                                    self.err(
                                        *span,
                                        format!("`{{{prev}}}` and `{{{n}}}` are adjacent numbers: the text cannot be split back unambiguously"),
                                    );
                                }
                            }
                            prev_numeric = numeric.then(|| n.to_string());
                        }
                    },
                    Piece::Lit(_) | Piece::Mnemonic => prev_numeric = None,
                }
            }
            // Names that decoding this variant can evaluate: the template's,
            // every `when` condition's, and (transitively) the expressions
            // of derived values reached from them.
            let mut names: Vec<(String, Span)> = Vec::new();
            for p in &t.pieces {
                if let Piece::Field(n, span) = p {
                    names.push((n.to_string(), *span));
                }
            }
            for enc in isa.chain(leaf).take(MAX_DEPTH) {
                for w in &isa.encodings[enc].whens {
                    self.expr_names(&w.cond, &mut names, 0);
                }
            }
            for l in &levels {
                for c in &l.checks {
                    self.expr_names(&c.expr, &mut names, 0);
                }
            }
            let mut done: Vec<String> = Vec::new();
            while let Some((n, span)) = names.pop() {
                if done.contains(&n) {
                    continue;
                }
                done.push(n.clone());
                let item = levels.iter().find_map(|l| l.item(&n));
                match item {
                    Some(crate::model::ItemRef::Derived(d)) => {
                        self.expr_names(&d.expr, &mut names, 0)
                    }
                    Some(crate::model::ItemRef::Field(f)) => {
                        if let FieldType::Sub(_, binds) = &f.ty {
                            for (_, caller) in binds {
                                names.push((caller.to_string(), f.span));
                            }
                        }
                    }
                    None => {
                        // A `when` condition may name a field its own block defines.
                        let in_some_when = isa.chain(leaf).any(|e| {
                            isa.encodings[e]
                                .whens
                                .iter()
                                .any(|w| w.level.item(&n).is_some())
                        });
                        if self.lookup(leaf, &levels, &n).is_none()
                            && !in_some_when
                            && self.seen_spans.insert(span)
                        {
                            self.err(span, format!("unknown field `{n}` (in `{leaf_name}`)"));
                        }
                    }
                }
            }
        }
    }

    /// Rule 6: metadata keys and value types.
    fn meta(&mut self, leaf: EncId) {
        let isa = self.isa;
        for enc in isa.chain(leaf) {
            let e = &isa.encodings[enc];
            let variants = e.whens.iter().flat_map(|w| w.meta.iter());
            for (k, v, span) in e.meta.iter().chain(variants) {
                let Some(key) = isa.meta_keys.iter().find(|m| m.name == *k) else {
                    self.err(
                        *span,
                        format!("metadata key `{k}` is not declared in the `isa` block"),
                    );
                    continue;
                };
                let ok = match (key.ty, v) {
                    (MetaType::Int | MetaType::Bool, MetaValue::Int(_)) => true,
                    (MetaType::Bool, MetaValue::Ident(s)) => s == "true" || s == "false",
                    (MetaType::String, MetaValue::Str(_)) => true,
                    (MetaType::Ident, MetaValue::Ident(_)) => true,
                    (MetaType::Idents, MetaValue::List(_)) => true,
                    (MetaType::Regfile, MetaValue::Ident(r)) => {
                        if isa.regfile(r).is_none() {
                            self.err(*span, format!("unknown register file `{r}`"));
                        }
                        true
                    }
                    (MetaType::Regfile, MetaValue::List(rs)) => {
                        for r in rs {
                            if isa.regfile(r).is_none() {
                                self.err(*span, format!("unknown register file `{r}`"));
                            }
                        }
                        true
                    }
                    (MetaType::Class, MetaValue::Ident(c)) => {
                        if isa.latency.class(c).is_none() {
                            self.err(*span, format!("unknown latency class `{c}`"));
                        }
                        true
                    }
                    (MetaType::Fields, MetaValue::List(fs)) => {
                        for f in fs {
                            let found = isa.chain(leaf).any(|e| {
                                let e = &isa.encodings[e];
                                e.plain.item(f).is_some()
                                    || e.whens.iter().any(|w| w.level.item(f).is_some())
                            });
                            if !found {
                                self.err(
                                    *span,
                                    format!(
                                        "`{f}` is not a field of `{}`",
                                        isa.encodings[leaf].name
                                    ),
                                );
                            }
                        }
                        true
                    }
                    _ => false,
                };
                if !ok {
                    self.err(
                        *span,
                        format!("metadata `{k}` must be of type {:?}", key.ty).to_lowercase(),
                    );
                }
            }
        }
    }

    /// Rule 7: generated Rust names are unique.
    fn rust_names(&mut self) {
        let isa = self.isa;
        let mut seen: Vec<(String, EncId)> = Vec::new();
        for leaf in isa.instructions() {
            let r = rust_name(&isa.encodings[leaf].name);
            if let Some((_, other)) = seen.iter().find(|(n, _)| *n == r) {
                let other = isa.encodings[*other].name.clone();
                self.err(
                    isa.encodings[leaf].span,
                    format!(
                        "`{}` and `{other}` both become the Rust name `{r}`",
                        isa.encodings[leaf].name
                    ),
                );
            } else {
                seen.push((r, leaf));
            }
        }
    }

    /// Every `idiom` assembles at each declared generation its range
    /// holds (and its range holds one).
    fn idioms(&mut self) {
        let isa = self.isa;
        for idiom in &isa.idioms {
            let mut gens: Vec<(String, u32)> = isa
                .generations
                .iter()
                .filter(|(_, g)| idiom.generation.contains(*g))
                .map(|(n, g)| (n.to_string(), *g))
                .collect();
            if isa.generations.is_empty() {
                gens.push((idiom.generation.min.to_string(), idiom.generation.min));
            }
            if gens.is_empty() {
                self.err(
                    idiom.span,
                    format!("idiom `{}` covers no declared generation", idiom.name),
                );
            }
            for (name, g) in gens {
                if let Err(e) = isa.assemble(&idiom.text, g) {
                    // The caret goes where the assembler stopped, inside
                    // the quotes (escapes aside, the text is verbatim).
                    let span = match e.column() {
                        Some(col) => {
                            let start = (idiom.span.start + col).min(idiom.span.end);
                            crate::diag::Span {
                                start,
                                end: start + 1,
                                ..idiom.span
                            }
                        }
                        None => idiom.span,
                    };
                    self.err(
                        span,
                        format!("idiom `{}` does not assemble at {name}: {e}", idiom.name),
                    );
                    break;
                }
            }
        }
    }
}

/// The CamelCase Rust name of an encoding: each `.`/`-`/`_` segment
/// capitalised, the rest lower-cased: `add.f` → `AddF`, `mov-immed` →
/// `MovImmed`, `LD_VAR_BUF_IMM.f32` → `LdVarBufImmF32`.
pub fn rust_name(name: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if c == '.' || c == '-' || c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'N');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rust_name;

    #[test]
    fn rust_names_are_camel_case_per_segment() {
        assert_eq!(rust_name("add.f"), "AddF");
        assert_eq!(rust_name("mov-immed"), "MovImmed");
        assert_eq!(rust_name("LD_VAR_BUF_IMM.f32"), "LdVarBufImmF32");
        assert_eq!(rust_name("FADD.v2f16"), "FaddV2f16");
        assert_eq!(rust_name("1d"), "N1d");
    }
}
