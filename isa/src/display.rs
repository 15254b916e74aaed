//! Decoding scopes and disassembly: evaluating fields, derived values,
//! params and overrides for one decoded (sub-)encoding, and printing its
//! template. Nothing here allocates per instruction.

use std::cell::Cell;
use std::fmt::{self, Write};

use crate::expr::{Expr, ExprEnv, MAX_EVAL_DEPTH};
use crate::format::write_scalar;
use crate::model::{EncId, FieldType, Isa, ItemRef, Piece, Template};

/// Deepest inheritance chain the engine supports (checked by `check`).
pub const MAX_DEPTH: usize = 16;

const UNKNOWN: u8 = 255;
const NONE: u8 = 254;
const TESTING: u8 = 128;

/// Why a word could not be shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DisasmError {
    #[error("no encoding matches 0x{word:x} at generation {generation}")]
    NoMatch { word: u64, generation: u32 },
    #[error("no sub-encoding of `{tree}` matches 0x{value:x} at generation {generation}")]
    NoSubMatch {
        tree: String,
        value: u64,
        generation: u32,
    },
    #[error("`{leaf}` has no display template")]
    NoTemplate { leaf: String },
    #[error("`{name}` cannot be evaluated in `{leaf}`")]
    Unresolved { name: String, leaf: String },
    /// A `check` rule of the spec does not hold.
    #[error("{message} (`{leaf}`)")]
    Check { leaf: String, message: String },
    /// A field of a `strict` enum type holds a value the enum does not list.
    #[error("reserved value {value} of `{field}` (enum `{enum_name}`) in `{leaf}`")]
    Reserved {
        leaf: String,
        field: String,
        enum_name: String,
        value: u64,
    },
    #[error("formatting failed")]
    Fmt,
}

impl From<fmt::Error> for DisasmError {
    fn from(_: fmt::Error) -> Self {
        DisasmError::Fmt
    }
}

/// One decoded (sub-)encoding: which leaf, its bits, and how its params
/// reach the caller.
pub struct Scope<'a> {
    pub isa: &'a Isa,
    pub leaf: EncId,
    pub value: u64,
    pub generation: u32,
    pub caller: Option<(
        &'a Scope<'a>,
        &'a [(crate::compact::Str, crate::compact::Str)],
    )>,
    active: [Cell<u8>; MAX_DEPTH],
    depth: Cell<usize>,
    /// Whether `write` enforces `check` rules and strict enums (the
    /// assembler's search turns this off until its final verification).
    validate: bool,
}

/// Where a name was found: the item and the scope that owns it.
pub struct Found<'s, 'a> {
    pub item: ItemRef<'a>,
    pub scope: &'s Scope<'a>,
}

impl<'a> Scope<'a> {
    pub fn new(
        isa: &'a Isa,
        leaf: EncId,
        value: u64,
        generation: u32,
        caller: Option<(
            &'a Scope<'a>,
            &'a [(crate::compact::Str, crate::compact::Str)],
        )>,
    ) -> Self {
        Scope {
            isa,
            leaf,
            value,
            generation,
            caller,
            active: std::array::from_fn(|_| Cell::new(UNKNOWN)),
            depth: Cell::new(0),
            validate: true,
        }
    }

    /// The same scope without `check` rules and strict-enum errors.
    pub fn unvalidated(mut self) -> Self {
        self.validate = false;
        self
    }

    fn leaf_name(&self) -> String {
        self.isa.encodings[self.leaf].name.to_string()
    }

    /// Enforces this scope's validity rules: every `check` of the plain
    /// levels and of the active `when`s, and every visible field of a
    /// `strict` enum type.
    pub fn check_rules(&self) -> Result<(), DisasmError> {
        for (k, enc) in self.levels() {
            let e = &self.isa.encodings[enc];
            let active = self.active_when(k, enc).map(|j| &e.whens[j].level);
            for level in active.into_iter().chain(std::iter::once(&*e.plain)) {
                for c in &level.checks {
                    match self.eval(&c.expr) {
                        Some(0) => {
                            return Err(DisasmError::Check {
                                leaf: self.leaf_name(),
                                message: c.message.to_string(),
                            });
                        }
                        Some(_) => {}
                        None => {
                            return Err(DisasmError::Unresolved {
                                name: c.expr.to_string(),
                                leaf: self.leaf_name(),
                            });
                        }
                    }
                }
                for f in &level.fields {
                    let FieldType::Enum(en) = f.ty else { continue };
                    let def = &self.isa.enums[en];
                    if !def.strict {
                        continue;
                    }
                    // Only the definition the name resolves to counts.
                    let visible = self
                        .find(&f.name)
                        .is_some_and(|x| matches!(x.item, ItemRef::Field(g) if std::ptr::eq(g, f)));
                    let v = f.extract(self.value);
                    if visible && def.display(v).is_none() {
                        return Err(DisasmError::Reserved {
                            leaf: self.leaf_name(),
                            field: f.name.to_string(),
                            enum_name: def.name.to_string(),
                            value: v,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The chain from the leaf to the tree root, at most `MAX_DEPTH` long.
    fn levels(&self) -> impl Iterator<Item = (usize, EncId)> + 'a {
        self.isa.chain(self.leaf).take(MAX_DEPTH).enumerate()
    }

    /// Index of the active `when` at chain level `k`, if any.
    pub fn active_when(&self, k: usize, enc: EncId) -> Option<usize> {
        let whens = &self.isa.encodings[enc].whens;
        if whens.is_empty() || k >= MAX_DEPTH {
            return None;
        }
        let s = self.active[k].get();
        if s == UNKNOWN {
            let mut chosen = NONE;
            for (j, w) in whens.iter().enumerate().take(usize::from(TESTING) - 1) {
                self.active[k].set(TESTING + j as u8);
                if self.eval(&w.cond).is_some_and(|v| v != 0) {
                    chosen = j as u8;
                    break;
                }
            }
            self.active[k].set(chosen);
            return (chosen != NONE).then_some(usize::from(chosen));
        }
        match s {
            NONE => None,
            s if s >= TESTING => Some(usize::from(s - TESTING)),
            s => Some(usize::from(s)),
        }
    }

    /// Forces the active `when` of each level (used by the assembler to
    /// test a chosen variant); `None` leaves the level undecided.
    pub fn reset_active(&self) {
        for a in &self.active {
            a.set(UNKNOWN);
        }
    }

    /// Finds `name` in this scope, following params to the caller.
    pub fn find<'s>(&'s self, name: &str) -> Option<Found<'s, 'a>> {
        for (k, enc) in self.levels() {
            let e = &self.isa.encodings[enc];
            if let Some(j) = self.active_when(k, enc) {
                if let Some(item) = e.whens[j].level.item(name) {
                    return Some(Found { item, scope: self });
                }
            }
            if let Some(item) = e.plain.item(name) {
                return Some(Found { item, scope: self });
            }
        }
        let (caller, binds) = self.caller?;
        let (_, bound) = binds.iter().find(|(p, _)| p == name)?;
        caller.find(bound)
    }

    /// The value of a found item.
    pub fn item_value(&self, item: ItemRef<'_>) -> Option<i64> {
        match item {
            ItemRef::Field(f) => Some(f.extract(self.value) as i64),
            ItemRef::Derived(d) => self.eval(&d.expr),
        }
    }

    pub fn value_of(&self, name: &str) -> Option<i64> {
        let f = self.find(name)?;
        f.scope.item_value(f.item)
    }

    /// Evaluates an expression in this scope; `None` if a name is missing
    /// or evaluation nests too deeply.
    pub fn eval(&self, e: &Expr) -> Option<i64> {
        let d = self.depth.get();
        if d > MAX_EVAL_DEPTH {
            return None;
        }
        self.depth.set(d + 1);
        let r = e.eval(self, 0).ok();
        self.depth.set(d);
        r
    }

    /// The template that prints this leaf with the current overrides.
    pub fn template(&self) -> Option<&'a Template> {
        for (k, enc) in self.levels() {
            let e = &self.isa.encodings[enc];
            if let Some(j) = self.active_when(k, enc) {
                if let Some(t) = &e.whens[j].level.display {
                    return Some(t);
                }
            }
            if let Some(t) = &e.plain.display {
                return Some(t);
            }
        }
        None
    }

    /// What `{NAME}` prints with the current overrides.
    pub fn mnemonic(&self) -> &'a str {
        for (k, enc) in self.levels() {
            let e = &self.isa.encodings[enc];
            if let Some(j) = self.active_when(k, enc) {
                if let Some(m) = &e.whens[j].level.mnemonic {
                    return m;
                }
            }
            if let Some(m) = &e.plain.mnemonic {
                return m;
            }
        }
        &self.isa.encodings[self.leaf].name
    }

    /// Writes this leaf's text.
    pub fn write(&self, out: &mut dyn Write) -> Result<(), DisasmError> {
        if self.validate {
            self.check_rules()?;
        }
        let t = self.template().ok_or_else(|| DisasmError::NoTemplate {
            leaf: self.isa.encodings[self.leaf].name.to_string(),
        })?;
        for p in &t.pieces {
            match p {
                Piece::Lit(s) => out.write_str(s)?,
                Piece::Mnemonic => out.write_str(self.mnemonic())?,
                Piece::Field(name, _) => self.write_field(name, out)?,
            }
        }
        Ok(())
    }

    /// The text field `name` shows in this scope; `None` when the scope
    /// cannot show it (it is not visible in the active variants).
    pub fn field_text(&self, name: &str) -> Option<String> {
        let mut s = String::new();
        self.write_field(name, &mut s).ok()?;
        Some(s)
    }

    /// The `when` variants active in the form operand field `name` decodes
    /// to (each as its encoding and index in that encoding's `whens`),
    /// evaluated with the form's params bound to this scope, so a variant an
    /// instruction field picks through a param (ir3 cat6's `SRC_IM`) is
    /// found. Empty when the field is no operand form or shows nothing.
    pub fn field_variants(&self, name: &str) -> Vec<(EncId, usize)> {
        let Some(found) = self.find(name) else {
            return Vec::new();
        };
        let (Some(v), FieldType::Sub(tree, binds)) =
            (found.scope.item_value(found.item), found.item.ty())
        else {
            return Vec::new();
        };
        let width = self.isa.encodings[*tree].width;
        let v = if width >= 64 {
            v as u64
        } else {
            v as u64 & ((1 << width) - 1)
        };
        let Some(leaf) = self
            .isa
            .tree_lookup(*tree, v, self.generation)
            .unwrap_or(Some(*tree))
        else {
            return Vec::new();
        };
        let sub = Scope::new(
            self.isa,
            leaf,
            v,
            self.generation,
            Some((found.scope, binds)),
        )
        .unvalidated();
        sub.levels()
            .filter_map(|(k, enc)| sub.active_when(k, enc).map(|j| (enc, j)))
            .collect()
    }

    fn write_field(&self, name: &str, out: &mut dyn Write) -> Result<(), DisasmError> {
        let unresolved = || DisasmError::Unresolved {
            name: name.to_string(),
            leaf: self.isa.encodings[self.leaf].name.to_string(),
        };
        let found = self.find(name).ok_or_else(unresolved)?;
        let v = found.scope.item_value(found.item).ok_or_else(unresolved)? as u64;
        match found.item.ty() {
            FieldType::Sub(tree, binds) => {
                let width = self.isa.encodings[*tree].width;
                let v = if width >= 64 {
                    v
                } else {
                    v & ((1 << width) - 1)
                };
                let leaf = self
                    .isa
                    .decode_in(*tree, v, self.generation)
                    .ok_or_else(|| DisasmError::NoSubMatch {
                        tree: self.isa.encodings[*tree].name.to_string(),
                        value: v,
                        generation: self.generation,
                    })?;
                let mut sub = Scope::new(
                    self.isa,
                    leaf,
                    v,
                    self.generation,
                    Some((found.scope, binds)),
                );
                sub.validate = self.validate;
                sub.write(out)
            }
            FieldType::Enum(e)
                if self.validate
                    && self.isa.enums[*e].strict
                    && self.isa.enums[*e].display(v).is_none() =>
            {
                Err(DisasmError::Reserved {
                    leaf: self.leaf_name(),
                    field: name.to_string(),
                    enum_name: self.isa.enums[*e].name.to_string(),
                    value: v,
                })
            }
            ty => Ok(write_scalar(out, self.isa, ty, v, found.item.width())?),
        }
    }
}

impl ExprEnv for Scope<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        self.value_of(name)
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

impl Isa {
    /// The instruction leaf `word` decodes to at generation `gen`.
    #[inline]
    pub fn decode(&self, word: u64, generation: u32) -> Option<EncId> {
        self.decode_in(self.root, word, generation)
    }

    /// Writes the text of `word` into `out` and returns its leaf. A word
    /// that breaks a `check` rule or holds a reserved strict-enum value is
    /// an error (some text may already have been written).
    pub fn disassemble_into(
        &self,
        word: u64,
        generation: u32,
        out: &mut dyn Write,
    ) -> Result<EncId, DisasmError> {
        self.render(word, generation, out, true)
    }

    /// Like [`Isa::disassemble_into`], with or without validity rules.
    pub(crate) fn render(
        &self,
        word: u64,
        generation: u32,
        out: &mut dyn Write,
        validate: bool,
    ) -> Result<EncId, DisasmError> {
        let word = if self.width >= 64 {
            word
        } else {
            word & ((1 << self.width) - 1)
        };
        let leaf = self
            .decode(word, generation)
            .ok_or(DisasmError::NoMatch { word, generation })?;
        let scope = Scope::new(self, leaf, word, generation, None);
        if validate {
            scope.write(out)?;
        } else {
            scope.unvalidated().write(out)?;
        }
        Ok(leaf)
    }

    /// Like [`Isa::disassemble_into`], followed by a `\t; ` note naming the
    /// don't-care bits the word sets (Mesa's decoder with errors shown).
    pub fn disassemble_with_note(
        &self,
        word: u64,
        generation: u32,
        out: &mut dyn Write,
    ) -> Result<EncId, DisasmError> {
        let leaf = self.disassemble_into(word, generation, out)?;
        let dont_care: Vec<_> = self
            .decode_warnings(word, generation)
            .into_iter()
            .filter(|w| matches!(w, crate::DecodeWarning::DontCare { .. }))
            .collect();
        crate::gen_rt::write_note(out, &dont_care)?;
        Ok(leaf)
    }

    /// The text of `word` as a new string.
    pub fn disassemble(&self, word: u64, generation: u32) -> Result<String, DisasmError> {
        let mut s = String::new();
        self.disassemble_into(word, generation, &mut s)?;
        Ok(s)
    }
}
