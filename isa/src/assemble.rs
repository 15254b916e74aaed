//! The assembler: display templates read backwards.
//!
//! For every leaf valid at the generation and every combination of its
//! `when` variants, the template is matched against the text with
//! backtracking (each `{FIELD}` offers every reading its type allows; a
//! sub-encoding field tries each of its tree's leaves). A match fixes some
//! bits; the rest take field defaults (0 otherwise). If that word does not
//! print back as the text, the undetermined fields are searched greedily:
//! each step changes one field (then two, then three) to the values that
//! make the printed text agree with the input over the longest prefix, so
//! constraints are solved one after another in text order (a shared
//! hidden field fixed by the first operand, then the next operand's own
//! bits). Every answer is verified: the word must disassemble, with the
//! spec's `check` rules, to exactly the input text.
//!
//! When nothing matches, the error names the problem and its column: an
//! unknown mnemonic, what the templates that got farthest expected there,
//! a number too large for its field, two operands that need different
//! values in one shared field, or the `check` rule every reading breaks.

use std::cell::{Cell, RefCell};

use crate::display::MAX_DEPTH;
use crate::format::{out_of_range, parse_scalar};
use crate::model::{EncId, Field, FieldType, Isa, ItemRef, Level, Piece, Str, Template};

/// Why a text could not be assembled. Errors with a position carry a
/// 1-based `column` (in characters) into the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("`{text}` does not match any instruction template at generation {generation}")]
    NoMatch { text: String, generation: u32 },
    #[error("unknown mnemonic `{mnemonic}` at generation {generation}")]
    UnknownMnemonic {
        text: String,
        mnemonic: String,
        column: usize,
        generation: u32,
    },
    #[error("column {column}: expected {}, found {found}", expected_list(expected))]
    Unexpected {
        text: String,
        column: usize,
        expected: Vec<String>,
        found: String,
    },
    #[error("column {column}: `{number}` does not fit in field `{field}` ({bits} bits, {})", if *signed { "signed" } else { "unsigned" })]
    OutOfRange {
        text: String,
        column: usize,
        field: String,
        number: String,
        bits: u32,
        signed: bool,
    },
    #[error(
        "column {column}: `{field}` must be {here} for this operand but an earlier operand needs {earlier}"
    )]
    Conflict {
        text: String,
        column: usize,
        field: String,
        earlier: u64,
        here: u64,
    },
    #[error("`{text}`: {message} (`{leaf}`)")]
    Check {
        text: String,
        leaf: String,
        message: String,
    },
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

impl AsmError {
    /// The 1-based column (in characters) the error points at, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            AsmError::UnknownMnemonic { column, .. }
            | AsmError::Unexpected { column, .. }
            | AsmError::OutOfRange { column, .. }
            | AsmError::Conflict { column, .. } => Some(*column),
            _ => None,
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn expected_list(items: &[String]) -> String {
    match items {
        [] => "something else".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Most expectations listed in one error.
const MAX_EXPECTED: usize = 8;

/// Why one reading of a template stopped, for diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Failure {
    Expected(String),
    Range {
        field: String,
        number: String,
        bits: u32,
        signed: bool,
    },
    Conflict {
        field: String,
        earlier: u64,
        here: u64,
    },
}

/// The farthest position any reading reached, and why readings stopped there.
#[derive(Debug, Default)]
struct Farthest {
    pos: usize,
    failures: Vec<Failure>,
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

/// Most words printed while searching per matched template.
const SEARCH_BUDGET: usize = 16384;
/// Most words printed while searching for one text, over all templates.
const TOTAL_BUDGET: usize = 32768;
/// Widest undetermined field the search varies on its own.
const MAX_UNIT_BITS: u32 = 12;
/// Widest combination of fields varied together (pairs and triples).
const MAX_JOINT_BITS: u32 = 14;
/// Most template readings kept per sub-match (guards pathological specs).
const MAX_READINGS: usize = 256;

struct Asm<'a> {
    isa: &'a Isa,
    generation: u32,
    /// Sub-encoding nesting of the template being matched (0: instruction).
    depth: Cell<usize>,
    /// Whether some instruction template got past its `{NAME}`.
    past_mnemonic: Cell<bool>,
    /// Farthest position where an instruction's `{NAME}` was tried.
    mnemonic_pos: Cell<Option<usize>>,
    /// Whether readings record why they stop, for the error message (a
    /// caller that only wants the word skips that work).
    diagnose: bool,
    farthest: RefCell<Farthest>,
}

/// What a value of type `ty` looks like, for "expected …" messages.
fn describe_expected(isa: &Isa, ty: &FieldType, name: &str) -> Vec<String> {
    let what = match ty {
        FieldType::Uint | FieldType::AbsBranch => "an unsigned number",
        FieldType::Int | FieldType::Branch => "a number",
        FieldType::Hex | FieldType::HexUpper => "hex digits",
        FieldType::Float | FieldType::Fixed(_) => "a decimal number",
        FieldType::Bool(None) => "`0` or `1`",
        FieldType::Enum(e) => {
            return isa.enums[*e]
                .values
                .iter()
                .filter(|(_, s, _)| !s.is_empty())
                .map(|(_, s, _)| format!("`{s}`"))
                .collect();
        }
        _ => "a value",
    };
    vec![format!("{what} (`{name}`)")]
}

impl<'a> Asm<'a> {
    fn new(isa: &'a Isa, generation: u32, diagnose: bool) -> Self {
        Asm {
            isa,
            generation,
            depth: Cell::new(0),
            past_mnemonic: Cell::new(false),
            mnemonic_pos: Cell::new(None),
            diagnose,
            farthest: RefCell::new(Farthest::default()),
        }
    }

    /// Records why a reading stopped at `pos`; only the farthest count.
    fn fail(&self, pos: usize, f: impl FnOnce() -> Failure) {
        if !self.diagnose {
            return;
        }
        let f = f();
        let mut far = self.farthest.borrow_mut();
        if pos > far.pos {
            far.pos = pos;
            far.failures.clear();
        }
        if pos == far.pos && !far.failures.contains(&f) {
            far.failures.push(f);
        }
    }

    /// A value of type `ty` for `name` could not be read at `pos`.
    fn fail_value(&self, pos: usize, name: &str, ty: &FieldType, here: &str, width: u32) {
        if !self.diagnose {
            return;
        }
        if let Some(number) = out_of_range(ty, here, width) {
            let signed = matches!(ty, FieldType::Int | FieldType::Branch | FieldType::Offset);
            self.fail(pos, || Failure::Range {
                field: name.to_string(),
                number: number.to_string(),
                bits: width,
                signed,
            });
        } else {
            for e in describe_expected(self.isa, ty, name) {
                self.fail(pos, || Failure::Expected(e));
            }
        }
    }

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
            // The active `when` holds: its `FIELD == N` conjuncts.
            if let Some(j) = var[k] {
                for (name, n) in self.isa.when_equalities(&enc.whens[usize::from(j)].cond) {
                    let Some(Resolved::Item(ItemRef::Field(f))) = self.resolve(leaf, var, name)
                    else {
                        continue;
                    };
                    if let Some(bits) = f.holding(n) {
                        if !start.set(f.mask(), bits) {
                            return Vec::new();
                        }
                    }
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
                } else {
                    self.fail(pos, || Failure::Expected(format!("`{s}`")));
                }
            }
            Piece::Mnemonic => {
                let m = self.mnemonic(leaf, var);
                let top = self.depth.get() == 0;
                if here.starts_with(m) {
                    if top {
                        self.past_mnemonic.set(true);
                    }
                    self.match_pieces(leaf, var, rest, text, pos + m.len(), acc, params, out);
                } else {
                    if top && self.mnemonic_pos.get().is_none_or(|p| p < pos) {
                        self.mnemonic_pos.set(Some(pos));
                    }
                    self.fail(pos, || Failure::Expected(format!("`{m}`")));
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
                    if !self.merge_sub(leaf, var, f, binds, &sub, &mut p, pos) {
                        continue;
                    }
                    self.match_pieces(leaf, var, rest, text, end, p, params, out);
                }
            }
            (ItemRef::Derived(_), FieldType::Sub(..)) => {}
            (ItemRef::Field(f), ty) => {
                let readings = parse_scalar(self.isa, ty, here, f.width);
                if readings.is_empty() {
                    self.fail_value(pos, &f.name, ty, here, f.width);
                }
                for (v, n) in readings {
                    let mut p = acc.clone();
                    if p.set(f.mask(), f.insert(0, v)) {
                        self.match_pieces(leaf, var, rest, text, pos + n, p, params, out);
                    } else {
                        let earlier = f.extract(acc.value);
                        self.fail(pos, || Failure::Conflict {
                            field: f.name.to_string(),
                            earlier,
                            here: v,
                        });
                    }
                }
            }
            (ItemRef::Derived(d), ty) => {
                // The shown value is checked when the word is verified.
                let readings = parse_scalar(self.isa, ty, here, d.width);
                if readings.is_empty() {
                    self.fail_value(pos, &d.name, ty, here, d.width);
                }
                let mut seen = Vec::new();
                for (_, n) in readings {
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
        let readings = parse_scalar(self.isa, ty, &text[pos..], *width);
        if readings.is_empty() {
            self.fail_value(pos, param, ty, &text[pos..], *width);
        }
        for (v, n) in readings {
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
        self.depth.set(self.depth.get() + 1);
        'leaves: for leaf in self.isa.leaves(tree) {
            if !self.isa.encodings[leaf]
                .generation
                .contains(self.generation)
            {
                continue;
            }
            for var in self.variants(leaf) {
                out.extend(self.match_leaf(leaf, &var, text, pos, params));
                if out.len() >= MAX_READINGS {
                    break 'leaves;
                }
            }
        }
        self.depth.set(self.depth.get() - 1);
        out
    }

    /// Puts a sub-encoding reading (read at `pos`) into field `f` of the caller.
    #[allow(clippy::too_many_arguments)]
    fn merge_sub(
        &self,
        leaf: EncId,
        var: &Variant,
        f: &Field,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        sub: &Partial,
        p: &mut Partial,
        pos: usize,
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
                    let earlier = cf.extract(p.value);
                    if !p.set(cf.mask(), cf.insert(0, *v)) {
                        self.fail(pos, || Failure::Conflict {
                            field: cf.name.to_string(),
                            earlier,
                            here: *v,
                        });
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
        binds: &[(crate::compact::Str, crate::compact::Str)],
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
type ParamType = (Str, Option<FieldType>, u32);

/// The next token of `text` at `pos` for "found …" messages.
fn token_at(text: &str, pos: usize) -> String {
    let rest = &text[pos.min(text.len())..];
    if rest.is_empty() {
        return "end of text".into();
    }
    let end = rest
        .find(|c: char| c.is_whitespace() || c == ',')
        .unwrap_or(rest.len());
    let tok = if end == 0 {
        rest.chars().next().map_or("", |c| &rest[..c.len_utf8()])
    } else {
        &rest[..end]
    };
    format!("`{tok}`")
}

/// 1-based column, in characters, of byte offset `pos`.
fn column(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())].chars().count() + 1
}

/// How close a printed text comes to the wanted one: the length of the
/// common prefix, plus one if it is the whole text, plus one more if the
/// word also passes the spec's `check` rules.
type Score = usize;

/// Why a matched template could not be turned into a word.
struct Unsolved {
    /// The best text the search printed.
    closest: String,
    /// A `check` message, if the text itself printed but broke a rule.
    check: Option<String>,
}

struct Search<'i, 't> {
    isa: &'i Isa,
    text: &'t str,
    generation: u32,
    buf: String,
    tries: usize,
    /// `tries` at which the current run stops.
    limit: usize,
    check: Option<String>,
}

impl Search<'_, '_> {
    fn score(&mut self, word: u64) -> Score {
        self.tries += 1;
        self.buf.clear();
        let printed = self
            .isa
            .render(word, self.generation, &mut self.buf, false)
            .is_ok();
        let prefix = self
            .buf
            .bytes()
            .zip(self.text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        if !(printed && self.buf == self.text) {
            return prefix;
        }
        self.buf.clear();
        match self.isa.render(word, self.generation, &mut self.buf, true) {
            Ok(_) => prefix + 2,
            Err(crate::DisasmError::Check { message, .. }) => {
                self.check.get_or_insert(message);
                prefix + 1
            }
            Err(e) => {
                self.check.get_or_insert(e.to_string());
                prefix + 1
            }
        }
    }

    fn solved(&self, s: Score) -> bool {
        s == self.text.len() + 2
    }

    /// The best word reachable from `word` by changing the units `chosen`
    /// (every combination of their values), if it beats `best`.
    fn best_change(
        &mut self,
        units: &[Unit],
        chosen: &[usize],
        word: u64,
        best: &mut (Score, u64),
    ) {
        if self.tries >= self.limit || self.solved(best.0) {
            return;
        }
        let Some((&first, more)) = chosen.split_first() else {
            let s = self.score(word);
            if s > best.0 {
                *best = (s, word);
            }
            return;
        };
        let u = units[first];
        let bits = u.mask.count_ones();
        let top = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        // Values from both ends inwards (0, all ones, 1, all ones - 1, …):
        // small values win ties, and small negative numbers (sign bits
        // set) come as early as small positive ones.
        let mut i = 0u64;
        loop {
            let index = if i % 2 == 0 { i / 2 } else { top - i / 2 };
            let v = deposit(index, u.mask);
            if v != word & u.mask {
                self.best_change(units, more, (word & !u.mask) | v, best);
            }
            if i == top || self.tries >= self.limit || self.solved(best.0) {
                break;
            }
            i += 1;
        }
    }

    /// Greedy search from `start`: repeatedly take the change of one (then
    /// two, then three) units that prints the longest correct prefix.
    fn run(&mut self, start: u64, units: &[Unit]) -> Result<u64, Unsolved> {
        self.limit = (self.tries + SEARCH_BUDGET).min(TOTAL_BUDGET);
        let mut cur = (self.score(start), start);
        let mut closest_word = start;
        while !self.solved(cur.0) && self.tries < self.limit {
            let mut best = cur;
            'sizes: for k in 1..=units.len().min(3) {
                let mut combo: Vec<usize> = (0..k).collect();
                loop {
                    let bits: u32 = combo.iter().map(|&i| units[i].mask.count_ones()).sum();
                    let limit = if k == 1 {
                        MAX_UNIT_BITS
                    } else {
                        MAX_JOINT_BITS
                    };
                    if bits <= limit {
                        self.best_change(units, &combo, cur.1, &mut best);
                    }
                    if best.0 > cur.0 || self.tries >= self.limit {
                        break 'sizes;
                    }
                    if !next_combination(&mut combo, units.len()) {
                        break;
                    }
                }
            }
            if best.0 <= cur.0 {
                break;
            }
            cur = best;
            closest_word = cur.1;
        }
        if self.solved(cur.0) {
            return Ok(cur.1);
        }
        self.buf.clear();
        let _ = self
            .isa
            .render(closest_word, self.generation, &mut self.buf, false);
        Err(Unsolved {
            closest: self.buf.clone(),
            check: self.check.take(),
        })
    }
}

/// Spreads the low bits of `index` over the set bits of `mask`, lowest
/// first (a split field's value into its bit positions).
fn deposit(index: u64, mask: u64) -> u64 {
    let mut out = 0;
    let mut m = mask;
    let mut i = index;
    while m != 0 && i != 0 {
        let low = m & m.wrapping_neg();
        if i & 1 == 1 {
            out |= low;
        }
        i >>= 1;
        m &= m - 1;
    }
    out
}

/// Advances `combo` (strictly increasing indices below `n`) to the next
/// combination of the same size; `false` after the last.
fn next_combination(combo: &mut [usize], n: usize) -> bool {
    let k = combo.len();
    for i in (0..k).rev() {
        if combo[i] < n - k + i {
            combo[i] += 1;
            for j in i + 1..k {
                combo[j] = combo[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// The word of a `raw N` line (decimal, or hex after `0x`).
fn parse_raw(raw: &str) -> Option<u64> {
    let r = raw.trim();
    match r.strip_prefix("0x").or_else(|| r.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => r.parse::<u64>().ok(),
    }
}

impl Isa {
    /// Assembles one instruction's text at generation `generation`.
    pub fn assemble(&self, text: &str, generation: u32) -> Result<u64, AsmError> {
        if let Some(raw) = text.strip_prefix("raw ") {
            return parse_raw(raw).ok_or_else(|| AsmError::BadRaw(text.to_string()));
        }
        // Fast pass over the leaves whose mnemonic occurs in the text; if
        // it fails, a full pass gives the diagnostics every template sees.
        match self.assemble_pass(text, generation, true, true) {
            Ok(w) => Ok(w),
            Err(None) => self
                .assemble_pass(text, generation, false, true)
                .map_err(|e| e.unwrap_or_else(|| Asm::new(self, generation, true).diagnose(text))),
            Err(Some(e)) => Err(e),
        }
    }

    /// The word [`Isa::assemble`] finds for `text`, or `None` without
    /// saying why: a caller that tries texts until one reads (instruction
    /// selection) skips the work that only serves the error message (the
    /// full pass over every leaf, the record of where readings stop). The
    /// mnemonic filter cannot lose a reading, so the word is the same.
    pub fn assemble_word(&self, text: &str, generation: u32) -> Option<u64> {
        match text.strip_prefix("raw ") {
            Some(raw) => parse_raw(raw),
            None => self.assemble_pass(text, generation, true, false).ok(),
        }
    }

    /// Whether `leaf` certainly cannot read `text`: every template it can
    /// use prints `{NAME}` and none of its possible mnemonics occurs.
    fn mnemonic_absent(&self, leaf: EncId, text: &str) -> bool {
        let mut names: Vec<&str> = vec![&self.encodings[leaf].name];
        for enc in self.chain(leaf).take(MAX_DEPTH) {
            let e = &self.encodings[enc];
            let levels = std::iter::once(&*e.plain).chain(e.whens.iter().map(|w| &w.level));
            for level in levels {
                if let Some(m) = &level.mnemonic {
                    names.push(m);
                }
                if let Some(t) = &level.display {
                    if !t.pieces.contains(&Piece::Mnemonic) {
                        return false;
                    }
                }
            }
        }
        !names.iter().any(|n| text.contains(n))
    }

    /// One pass over the instructions. `Err(None)`: nothing read the whole
    /// text and some leaves were skipped by the mnemonic filter. Without
    /// `diagnose` the readings do not record why they stop (the error
    /// then says little).
    fn assemble_pass(
        &self,
        text: &str,
        generation: u32,
        filter: bool,
        diagnose: bool,
    ) -> Result<u64, Option<AsmError>> {
        let asm = Asm::new(self, generation, diagnose);
        let mut skipped = false;
        let mut search = Search {
            isa: self,
            text,
            generation,
            buf: String::new(),
            tries: 0,
            limit: 0,
            check: None,
        };
        let mut closest: Option<(String, String)> = None;
        let mut check: Option<(String, String)> = None;
        for leaf in self.instructions() {
            if !self.encodings[leaf].generation.contains(generation) {
                continue;
            }
            if filter && self.mnemonic_absent(leaf, text) {
                skipped = true;
                continue;
            }
            for var in asm.variants(leaf) {
                let readings = asm.match_leaf(leaf, &var, text, 0, &[]);
                for (end, p) in readings {
                    if end != text.len() {
                        asm.fail(end, || Failure::Expected("end of instruction".into()));
                        continue;
                    }
                    let mut units: Vec<Unit> = Vec::new();
                    for u in &p.units {
                        if !units.contains(u) {
                            units.push(*u);
                        }
                    }
                    // Narrow fields first: cheap combinations are tried first.
                    units.sort_by_key(|u| u.mask.count_ones());
                    match search.run(p.value, &units) {
                        Ok(w) => return Ok(w),
                        Err(u) => {
                            let name = self.encodings[leaf].name.clone();
                            if let (None, Some(m)) = (&check, u.check) {
                                check = Some((name.to_string(), m));
                            }
                            closest.get_or_insert((name.to_string(), u.closest));
                        }
                    }
                }
            }
        }
        if let Some((leaf, message)) = check {
            return Err(Some(AsmError::Check {
                text: text.to_string(),
                leaf,
                message,
            }));
        }
        if let Some((leaf, closest)) = closest {
            return Err(Some(AsmError::NotExact {
                text: text.to_string(),
                leaf,
                closest,
            }));
        }
        if skipped {
            return Err(None);
        }
        Err(Some(asm.diagnose(text)))
    }
}

impl Asm<'_> {
    /// The most useful error for a text no template could read whole.
    fn diagnose(&self, text: &str) -> AsmError {
        let generation = self.generation;
        if !self.past_mnemonic.get() {
            if let Some(pos) = self.mnemonic_pos.get() {
                let tok = token_at(text, pos);
                return AsmError::UnknownMnemonic {
                    text: text.to_string(),
                    mnemonic: tok.trim_matches('`').to_string(),
                    column: column(text, pos),
                    generation,
                };
            }
        }
        let far = self.farthest.borrow();
        let col = column(text, far.pos);
        // A specific failure says more than a list of expectations.
        for f in &far.failures {
            match f {
                Failure::Range {
                    field,
                    number,
                    bits,
                    signed,
                } => {
                    return AsmError::OutOfRange {
                        text: text.to_string(),
                        column: col,
                        field: field.clone(),
                        number: number.clone(),
                        bits: *bits,
                        signed: *signed,
                    };
                }
                Failure::Conflict {
                    field,
                    earlier,
                    here,
                } => {
                    return AsmError::Conflict {
                        text: text.to_string(),
                        column: col,
                        field: field.clone(),
                        earlier: *earlier,
                        here: *here,
                    };
                }
                Failure::Expected(_) => {}
            }
        }
        let mut expected: Vec<String> = far
            .failures
            .iter()
            .filter_map(|f| match f {
                Failure::Expected(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        if expected.is_empty() {
            return AsmError::NoMatch {
                text: text.to_string(),
                generation,
            };
        }
        if expected.len() > MAX_EXPECTED {
            expected.truncate(MAX_EXPECTED);
            expected.push("…".into());
        }
        AsmError::Unexpected {
            text: text.to_string(),
            column: col,
            expected,
            found: token_at(text, far.pos),
        }
    }
}
