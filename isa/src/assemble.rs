//! The assembler: display templates read backwards.
//!
//! For every leaf valid at the generation and every combination of its
//! `when` variants, the template is matched against the text with
//! backtracking (each `{FIELD}` offers every reading its type allows; a
//! sub-encoding field tries each of its tree's leaves). A match fixes some
//! bits; the rest take field defaults (0 otherwise). If that word does not
//! print back as the text, small undetermined fields are searched, nearest
//! to their defaults first. Every answer is verified: the word must
//! disassemble to exactly the input text.

use crate::display::MAX_DEPTH;
use crate::format::parse_scalar;
use crate::model::{EncId, Field, FieldType, Isa, ItemRef, Level, Piece, Template};

/// Why a text could not be assembled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("`{text}` does not match any instruction template at generation {generation}")]
    NoMatch { text: String, generation: u32 },
    #[error(
        "`{text}` matches the template of `{leaf}` but no encoding prints back exactly (closest: `{closest}`)"
    )]
    NotExact {
        text: String,
        leaf: String,
        closest: String,
    },
    #[error("`{0}` is not a valid raw word")]
    BadRaw(String),
}

/// Undetermined bits that may be searched: (mask, default value), in
/// word coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Unit {
    mask: u64,
    default: u64,
}

/// What one way of matching a template determined.
#[derive(Clone, Debug, Default)]
struct Partial {
    value: u64,
    known: u64,
    units: Vec<Unit>,
    /// Values shown for names that live in the caller (params).
    outer: Vec<(String, u64)>,
}

impl Partial {
    /// Sets bits; `false` if they contradict bits already known.
    fn set(&mut self, mask: u64, value: u64) -> bool {
        let overlap = self.known & mask;
        if (self.value ^ value) & overlap != 0 {
            return false;
        }
        self.value = (self.value & !mask) | (value & mask);
        self.known |= mask;
        true
    }
}

/// One combination of active `when`s along a leaf's chain.
type Variant = [Option<u8>; MAX_DEPTH];

/// A name as seen from a leaf variant.
enum Resolved<'a> {
    Item(ItemRef<'a>),
    Param(&'a str),
}

/// Most hidden-field combinations tried per matched template.
const SEARCH_BUDGET: usize = 4096;
/// Widest undetermined field the search varies.
const MAX_UNIT_BITS: u32 = 8;
/// Most template readings kept per sub-match (guards pathological specs).
const MAX_READINGS: usize = 256;

struct Asm<'a> {
    isa: &'a Isa,
    generation: u32,
}

impl<'a> Asm<'a> {
    fn chain(&self, leaf: EncId) -> Vec<EncId> {
        self.isa.chain(leaf).take(MAX_DEPTH).collect()
    }

    fn variants(&self, leaf: EncId) -> Vec<Variant> {
        let mut out = vec![[None; MAX_DEPTH]];
        for (k, enc) in self.chain(leaf).into_iter().enumerate() {
            let n = self.isa.encodings[enc].whens.len();
            if n == 0 {
                continue;
            }
            let mut next = Vec::with_capacity(out.len() * (n + 1));
            for v in &out {
                for j in 0..n.min(127) {
                    let mut w = *v;
                    w[k] = Some(j as u8);
                    next.push(w);
                }
                next.push(*v);
            }
            out = next;
        }
        out
    }

    fn levels(&self, leaf: EncId, var: &Variant) -> Vec<&'a Level> {
        let mut v = Vec::new();
        for (k, enc) in self.isa.chain(leaf).take(MAX_DEPTH).enumerate() {
            let e = &self.isa.encodings[enc];
            if let Some(j) = var[k] {
                v.push(&e.whens[usize::from(j)].level);
            }
            v.push(&e.plain);
        }
        v
    }

    fn resolve(&self, leaf: EncId, var: &Variant, name: &str) -> Option<Resolved<'a>> {
        for l in self.levels(leaf, var) {
            if let Some(it) = l.item(name) {
                return Some(Resolved::Item(it));
            }
        }
        let root = &self.isa.encodings[self.isa.encodings[leaf].root];
        root.params
            .iter()
            .find(|p| *p == name)
            .map(|p| Resolved::Param(p.as_str()))
    }

    fn template(&self, leaf: EncId, var: &Variant) -> Option<&'a Template> {
        self.levels(leaf, var)
            .into_iter()
            .find_map(|l| l.display.as_ref())
    }

    fn mnemonic(&self, leaf: EncId, var: &Variant) -> &'a str {
        self.levels(leaf, var)
            .into_iter()
            .find_map(|l| l.mnemonic.as_deref())
            .unwrap_or(&self.isa.encodings[leaf].name)
    }

    /// Every way `leaf` in variant `var` can read `text[pos..]`:
    /// (end position, what it determined), pattern and assert bits included.
    fn match_leaf(
        &self,
        leaf: EncId,
        var: &Variant,
        text: &str,
        pos: usize,
        params: &[ParamType],
    ) -> Vec<(usize, Partial)> {
        let Some(t) = self.template(leaf, var) else {
            return Vec::new();
        };
        let e = &self.isa.encodings[leaf];
        let mut start = Partial::default();
        start.set(e.mask, e.match_bits);
        start.set(e.dontcare, 0);
        // A level's plain asserts apply only when none of its `when`s is active.
        for (k, enc) in self.isa.chain(leaf).take(MAX_DEPTH).enumerate() {
            let enc = &self.isa.encodings[enc];
            let level = match var[k] {
                Some(j) => &enc.whens[usize::from(j)].level,
                None => &enc.plain,
            };
            for a in &level.asserts {
                if !start.set(a.mask, a.value) {
                    return Vec::new();
                }
            }
        }
        let mut out = Vec::new();
        self.match_pieces(leaf, var, &t.pieces, text, pos, start, params, &mut out);
        for (_, p) in &mut out {
            self.add_units(leaf, var, p);
        }
        out
    }

    /// Undetermined bits of each visible scalar field become search units.
    fn add_units(&self, leaf: EncId, var: &Variant, p: &mut Partial) {
        let mut seen: Vec<&str> = Vec::new();
        for l in self.levels(leaf, var) {
            for f in &l.fields {
                if seen.contains(&f.name.as_str()) {
                    continue;
                }
                seen.push(&f.name);
                if matches!(f.ty, FieldType::Sub(..)) {
                    continue;
                }
                let m = f.mask() & !p.known;
                if m == 0 {
                    continue;
                }
                let default = f.insert(0, f.default.unwrap_or(0)) & m;
                p.value = (p.value & !m) | default;
                p.units.push(Unit { mask: m, default });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn match_pieces(
        &self,
        leaf: EncId,
        var: &Variant,
        pieces: &[Piece],
        text: &str,
        pos: usize,
        acc: Partial,
        params: &[ParamType],
        out: &mut Vec<(usize, Partial)>,
    ) {
        if out.len() >= MAX_READINGS {
            return;
        }
        let Some((first, rest)) = pieces.split_first() else {
            out.push((pos, acc));
            return;
        };
        let here = &text[pos..];
        match first {
            Piece::Lit(s) => {
                if here.starts_with(s.as_str()) {
                    self.match_pieces(leaf, var, rest, text, pos + s.len(), acc, params, out);
                }
            }
            Piece::Mnemonic => {
                let m = self.mnemonic(leaf, var);
                if here.starts_with(m) {
                    self.match_pieces(leaf, var, rest, text, pos + m.len(), acc, params, out);
                }
            }
            Piece::Field(name, _) => {
                let Some(r) = self.resolve(leaf, var, name) else {
                    return;
                };
                match r {
                    Resolved::Param(p) => {
                        self.match_param(leaf, var, p, rest, text, pos, acc, params, out);
                    }
                    Resolved::Item(item) => {
                        self.match_item(leaf, var, item, rest, text, pos, acc, params, out);
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn match_item(
        &self,
        leaf: EncId,
        var: &Variant,
        item: ItemRef<'a>,
        rest: &[Piece],
        text: &str,
        pos: usize,
        acc: Partial,
        params: &[ParamType],
        out: &mut Vec<(usize, Partial)>,
    ) {
        let here = &text[pos..];
        match (item, item.ty()) {
            (ItemRef::Field(f), FieldType::Sub(tree, binds)) => {
                let sub_params = self.param_types(leaf, var, binds, params);
                for (end, sub) in self.match_tree(*tree, text, pos, &sub_params) {
                    let mut p = acc.clone();
                    if !self.merge_sub(leaf, var, f, binds, &sub, &mut p) {
                        continue;
                    }
                    self.match_pieces(leaf, var, rest, text, end, p, params, out);
                }
            }
            (ItemRef::Derived(_), FieldType::Sub(..)) => {}
            (ItemRef::Field(f), ty) => {
                for (v, n) in parse_scalar(self.isa, ty, here, f.width) {
                    let mut p = acc.clone();
                    if p.set(f.mask(), f.insert(0, v)) {
                        self.match_pieces(leaf, var, rest, text, pos + n, p, params, out);
                    }
                }
            }
            (ItemRef::Derived(d), ty) => {
                // The shown value is checked when the word is verified.
                let mut seen = Vec::new();
                for (_, n) in parse_scalar(self.isa, ty, here, d.width) {
                    if !seen.contains(&n) {
                        seen.push(n);
                        self.match_pieces(leaf, var, rest, text, pos + n, acc.clone(), params, out);
                    }
                }
            }
        }
    }

    /// A param shown in a sub-encoding reads like the caller's item it is
    /// bound to; the value is handed back for the caller to store.
    #[allow(clippy::too_many_arguments)]
    fn match_param(
        &self,
        leaf: EncId,
        var: &Variant,
        param: &str,
        rest: &[Piece],
        text: &str,
        pos: usize,
        acc: Partial,
        params: &[ParamType],
        out: &mut Vec<(usize, Partial)>,
    ) {
        let Some((_, Some(ty), width)) = params.iter().find(|(p, _, _)| p == param) else {
            return;
        };
        if let FieldType::Sub(..) = ty {
            return;
        }
        for (v, n) in parse_scalar(self.isa, ty, &text[pos..], *width) {
            let mut p = acc.clone();
            p.outer.push((param.to_string(), v));
            self.match_pieces(leaf, var, rest, text, pos + n, p, params, out);
        }
    }

    /// All readings of a sub-encoding tree at `pos`.
    fn match_tree(
        &self,
        tree: EncId,
        text: &str,
        pos: usize,
        params: &[ParamType],
    ) -> Vec<(usize, Partial)> {
        let mut out = Vec::new();
        for leaf in self.isa.leaves(tree) {
            if !self.isa.encodings[leaf]
                .generation
                .contains(self.generation)
            {
                continue;
            }
            for var in self.variants(leaf) {
                out.extend(self.match_leaf(leaf, &var, text, pos, params));
                if out.len() >= MAX_READINGS {
                    return out;
                }
            }
        }
        out
    }

    /// Puts a sub-encoding reading into field `f` of the caller.
    fn merge_sub(
        &self,
        leaf: EncId,
        var: &Variant,
        f: &Field,
        binds: &[(String, String)],
        sub: &Partial,
        p: &mut Partial,
    ) -> bool {
        if !p.set(f.insert(0, sub.known), f.insert(0, sub.value)) {
            return false;
        }
        for u in &sub.units {
            p.units.push(Unit {
                mask: f.insert(0, u.mask),
                default: f.insert(0, u.default),
            });
        }
        for (param, v) in &sub.outer {
            let Some((_, caller_name)) = binds.iter().find(|(x, _)| x == param) else {
                return false;
            };
            match self.resolve(leaf, var, caller_name) {
                Some(Resolved::Item(ItemRef::Field(cf))) => {
                    if !p.set(cf.mask(), cf.insert(0, *v)) {
                        return false;
                    }
                }
                Some(Resolved::Item(ItemRef::Derived(_))) => {}
                Some(Resolved::Param(pp)) => p.outer.push((pp.to_string(), *v)),
                None => return false,
            }
        }
        true
    }

    /// How each param of a sub-encoding reads: the type of the caller's
    /// item it is bound to (followed through the caller's own params).
    fn param_types(
        &self,
        leaf: EncId,
        var: &Variant,
        binds: &[(String, String)],
        params: &[ParamType],
    ) -> Vec<ParamType> {
        binds
            .iter()
            .map(|(param, caller)| match self.resolve(leaf, var, caller) {
                Some(Resolved::Item(it)) => (param.clone(), Some(it.ty().clone()), it.width()),
                Some(Resolved::Param(pp)) => match params.iter().find(|(x, _, _)| x == pp) {
                    Some((_, t, w)) => (param.clone(), t.clone(), *w),
                    None => (param.clone(), None, 0),
                },
                None => (param.clone(), None, 0),
            })
            .collect()
    }
}

/// A sub-encoding param: its name, the type it reads as, and that type's width.
type ParamType = (String, Option<FieldType>, u32);

impl Isa {
    /// Assembles one instruction's text at generation `generation`.
    pub fn assemble(&self, text: &str, generation: u32) -> Result<u64, AsmError> {
        if let Some(raw) = text.strip_prefix("raw ") {
            let r = raw.trim();
            let v = match r.strip_prefix("0x").or_else(|| r.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16),
                None => r.parse::<u64>(),
            };
            return v.map_err(|_| AsmError::BadRaw(text.to_string()));
        }
        let asm = Asm {
            isa: self,
            generation,
        };
        let mut closest: Option<(String, String)> = None;
        let mut buf = String::new();
        for leaf in self.instructions() {
            if !self.encodings[leaf].generation.contains(generation) {
                continue;
            }
            for var in asm.variants(leaf) {
                let readings = asm.match_leaf(leaf, &var, text, 0, &[]);
                for (end, p) in readings {
                    if end != text.len() {
                        continue;
                    }
                    if let Some(w) = self.solve(&p, text, generation, &mut buf) {
                        return Ok(w);
                    }
                    if closest.is_none() {
                        buf.clear();
                        let shown = match self.disassemble_into(p.value, generation, &mut buf) {
                            Ok(_) => buf.clone(),
                            Err(e) => e.to_string(),
                        };
                        closest = Some((self.encodings[leaf].name.clone(), shown));
                    }
                }
            }
        }
        Err(match closest {
            Some((leaf, closest)) => AsmError::NotExact {
                text: text.to_string(),
                leaf,
                closest,
            },
            None => AsmError::NoMatch {
                text: text.to_string(),
                generation,
            },
        })
    }

    /// Searches the undetermined units for a word that prints as `text`.
    fn solve(&self, p: &Partial, text: &str, generation: u32, buf: &mut String) -> Option<u64> {
        let prints = |w: u64, buf: &mut String| {
            buf.clear();
            self.disassemble_into(w, generation, buf).is_ok() && buf == text
        };
        if prints(p.value, buf) {
            return Some(p.value);
        }
        let mut units: Vec<Unit> = Vec::new();
        for u in &p.units {
            if u.mask.count_ones() <= MAX_UNIT_BITS && !units.contains(u) {
                units.push(*u);
            }
        }
        let mut tries = 0;
        // Vary 1, then 2, then 3 units away from their defaults.
        for k in 1..=units.len().min(3) {
            let mut chosen = Vec::new();
            if let Some(w) = self.search(
                &units,
                k,
                0,
                &mut chosen,
                p.value,
                text,
                generation,
                buf,
                &mut tries,
            ) {
                return Some(w);
            }
            if tries >= SEARCH_BUDGET {
                break;
            }
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        units: &[Unit],
        k: usize,
        from: usize,
        chosen: &mut Vec<usize>,
        base: u64,
        text: &str,
        generation: u32,
        buf: &mut String,
        tries: &mut usize,
    ) -> Option<u64> {
        if chosen.len() == k {
            return self.try_values(units, chosen, 0, base, text, generation, buf, tries);
        }
        for i in from..units.len() {
            chosen.push(i);
            let r = self.search(units, k, i + 1, chosen, base, text, generation, buf, tries);
            chosen.pop();
            if r.is_some() || *tries >= SEARCH_BUDGET {
                return r;
            }
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn try_values(
        &self,
        units: &[Unit],
        chosen: &[usize],
        idx: usize,
        word: u64,
        text: &str,
        generation: u32,
        buf: &mut String,
        tries: &mut usize,
    ) -> Option<u64> {
        if idx == chosen.len() {
            *tries += 1;
            buf.clear();
            let ok = self.disassemble_into(word, generation, buf).is_ok() && buf == text;
            return ok.then_some(word);
        }
        let u = units[chosen[idx]];
        // Enumerate every non-default value of the unit's bits.
        let mut sub = u.mask;
        loop {
            let v = sub;
            if v != u.default {
                let w = (word & !u.mask) | v;
                if let Some(r) =
                    self.try_values(units, chosen, idx + 1, w, text, generation, buf, tries)
                {
                    return Some(r);
                }
                if *tries >= SEARCH_BUDGET {
                    return None;
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & u.mask;
        }
        None
    }
}
