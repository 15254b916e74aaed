//! Field-level work on single words: reading and writing a named field of
//! a decoded instruction (with its active overrides), building a valid
//! word for a leaf field by field, and Mesa-style decode warnings.
//!
//! The generated typed API of `isa!` (`Instr::get`, `Instr::set`, the
//! per-field methods and `Arbitrary`) is a thin layer over these.

use std::fmt;

use crate::display::{MAX_DEPTH, Scope};
use crate::format::{f32_to_half, sign_extend};
use crate::model::{EncId, FieldType, Isa, ItemRef};

/// One field (or derived value) of a decoded instruction.
#[derive(Clone, Copy, Debug)]
pub struct FieldRead<'a> {
    /// Raw bits of a field; the value (as `u64`) of a derived one.
    pub raw: u64,
    pub width: u32,
    pub ty: &'a FieldType,
    pub derived: bool,
    /// For a sub-encoding field: the leaf its bits decode to, if any.
    pub sub_leaf: Option<EncId>,
}

/// A value to store into a field, before conversion to its bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldInput {
    /// Raw bits (unsigned numbers, enum values, bools, sub-encodings).
    Bits(u64),
    /// A signed number, stored in two's complement in the field's width.
    Signed(i64),
    /// A number for a `float` (16 or 32 bits) or `fixed(R)` field.
    Float(f64),
}

/// Why a field could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("no instruction matches 0x{word:x} at generation {generation}")]
    NoMatch { word: u64, generation: u32 },
    #[error("`{leaf}` has no field `{field}` (with its active overrides)")]
    NoField { leaf: String, field: String },
    #[error("`{field}` of `{leaf}` is derived from other fields and cannot be set")]
    Derived { leaf: String, field: String },
    #[error("{value} does not fit in the {width} bits of `{field}`")]
    OutOfRange {
        field: String,
        value: String,
        width: u32,
    },
    #[error("setting `{field}` would make the word decode as another instruction (or none)")]
    ChangesInstruction { field: String },
    #[error("`{field}` is a {ty} field; it cannot hold {value}")]
    WrongKind {
        field: String,
        ty: String,
        value: String,
    },
}

/// A suspicious but decodable word, as Mesa reports with `show_errors`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeWarning {
    /// Don't-care pattern bits that are set.
    DontCare { leaf: String, bits: u64 },
    /// `assert` bits of the active variant that differ from the spec.
    Assert {
        leaf: String,
        mask: u64,
        expected: u64,
        found: u64,
    },
}

impl fmt::Display for DecodeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeWarning::DontCare { leaf, bits } => {
                write!(f, "dontcare bits in {leaf}: {bits:x}")
            }
            DecodeWarning::Assert {
                leaf,
                mask,
                expected,
                found,
            } => write!(
                f,
                "assert bits in {leaf}: {found:x}, expected {expected:x} (mask {mask:x})"
            ),
        }
    }
}

fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// How a [`FieldInput`] becomes a field's bits: what its type makes of
/// numbers (shared by the engine and the generated typed setters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// `float`: 16- or 32-bit IEEE.
    Float,
    /// `fixed(R)`: signed, R fraction bits.
    Fixed(u32),
    /// `int`, `offset`, `branch`: two's complement.
    Signed,
    /// Everything else: raw bits.
    Unsigned,
}

impl Conv {
    /// The conversion of a field of type `ty`.
    pub fn of(ty: &FieldType) -> Conv {
        match ty {
            FieldType::Float => Conv::Float,
            FieldType::Fixed(r) => Conv::Fixed(*r),
            FieldType::Int | FieldType::Offset | FieldType::Branch => Conv::Signed,
            _ => Conv::Unsigned,
        }
    }
}

/// The bits `value` gives a field `name` of `width` bits converting by
/// `conv`, range-checked; `ty` describes the field's type for errors.
pub fn input_bits(
    name: &str,
    width: u32,
    conv: Conv,
    ty: &dyn Fn() -> String,
    value: FieldInput,
) -> Result<u64, FieldError> {
    let m = width_mask(width);
    let range = |v: String| FieldError::OutOfRange {
        field: name.to_string(),
        value: v,
        width,
    };
    Ok(match (value, conv) {
        (FieldInput::Float(x), Conv::Float) => match width {
            16 => u64::from(f32_to_half(x as f32)),
            32 => u64::from((x as f32).to_bits()),
            _ => return Err(range(x.to_string())),
        },
        (FieldInput::Float(x), Conv::Fixed(r)) => {
            let scaled = (x * (1u64 << r) as f64).round() as i64;
            let v = (scaled as u64) & m;
            if sign_extend(v, width) != scaled {
                return Err(range(x.to_string()));
            }
            v
        }
        (FieldInput::Float(x), _) => {
            return Err(FieldError::WrongKind {
                field: name.to_string(),
                ty: ty(),
                value: x.to_string(),
            });
        }
        (FieldInput::Signed(s), _) => {
            let v = (s as u64) & m;
            let fits = if matches!(conv, Conv::Signed | Conv::Fixed(_)) {
                sign_extend(v, width) == s
            } else {
                s >= 0 && v == s as u64
            };
            if !fits {
                return Err(range(s.to_string()));
            }
            v
        }
        (FieldInput::Bits(b), _) => {
            if b & !m != 0 {
                return Err(range(format!("0x{b:x}")));
            }
            b
        }
    })
}

/// Discards text: validation renders without keeping the output.
struct Discard;

impl fmt::Write for Discard {
    fn write_str(&mut self, _: &str) -> fmt::Result {
        Ok(())
    }
}

/// Most attempts `build_word` makes before giving up.
const BUILD_ATTEMPTS: usize = 8;
/// Rounds of re-filling the fields of newly active `when`s.
const SETTLE_ROUNDS: usize = 4;

impl Isa {
    fn leaf_at(&self, word: u64, generation: u32) -> Result<EncId, FieldError> {
        self.decode(word & width_mask(self.width), generation)
            .ok_or(FieldError::NoMatch { word, generation })
    }

    /// Field or derived value `name` of the instruction `word` decodes to,
    /// resolved with its active `when` overrides.
    pub fn read_field(
        &self,
        word: u64,
        generation: u32,
        name: &str,
    ) -> Result<FieldRead<'_>, FieldError> {
        let word = word & width_mask(self.width);
        let leaf = self.leaf_at(word, generation)?;
        let scope = Scope::new(self, leaf, word, generation, None);
        let no_field = || FieldError::NoField {
            leaf: self.encodings[leaf].name.to_string(),
            field: name.to_string(),
        };
        let found = scope.find(name).ok_or_else(no_field)?;
        let raw = found.scope.item_value(found.item).ok_or_else(no_field)? as u64;
        let (derived, width) = match found.item {
            ItemRef::Field(f) => (false, f.width),
            ItemRef::Derived(d) => (true, d.width),
        };
        let ty = found.item.ty();
        let sub_leaf = match ty {
            FieldType::Sub(tree, _) => {
                let bits = raw & width_mask(self.encodings[*tree].width);
                self.decode_in(*tree, bits, generation)
            }
            _ => None,
        };
        Ok(FieldRead {
            raw,
            width,
            ty,
            derived,
            sub_leaf,
        })
    }

    /// `word` with field `name` set to `value` (converted by the field's
    /// type and range-checked). The caller decides whether the result is
    /// still the same instruction.
    pub fn write_field(
        &self,
        word: u64,
        generation: u32,
        name: &str,
        value: FieldInput,
    ) -> Result<u64, FieldError> {
        let word = word & width_mask(self.width);
        let leaf = self.leaf_at(word, generation)?;
        let scope = Scope::new(self, leaf, word, generation, None);
        let leaf_name = || self.encodings[leaf].name.to_string();
        let found = scope.find(name).ok_or_else(|| FieldError::NoField {
            leaf: leaf_name(),
            field: name.to_string(),
        })?;
        let f = match found.item {
            ItemRef::Field(f) => f,
            ItemRef::Derived(_) => {
                return Err(FieldError::Derived {
                    leaf: leaf_name(),
                    field: name.to_string(),
                });
            }
        };
        let bits = input_bits(
            name,
            f.width,
            Conv::of(&f.ty),
            &|| f.ty.describe(self),
            value,
        )?;
        Ok(f.insert(word, bits))
    }

    /// A random valid word for instruction (or sub-encoding) leaf `leaf` at
    /// `generation`, built field by field: enum fields take listed values
    /// (only listed ones for `strict` enums), sub-encoding fields a leaf of
    /// their tree, bools 0 or 1, other fields any bits; fields of the
    /// `when`s that become active are filled by their own types; `assert`
    /// bits are written and don't-care bits are 0. `pick(max)` must return
    /// a number in `0..=max`. The word is verified (decodes to `leaf`,
    /// displays, passes every `check`); `None` if no attempt was valid.
    pub fn build_word(
        &self,
        leaf: EncId,
        generation: u32,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Option<u64> {
        let e = self.encodings.get(leaf)?;
        if !e.is_leaf() || !e.generation.contains(generation) {
            return None;
        }
        let top = e.root == self.root;
        for _ in 0..BUILD_ATTEMPTS {
            let w = self.fill_leaf(leaf, generation, pick, 0)?;
            if !top {
                // A sub-encoding alone: it must at least select `leaf`.
                if self.tree_lookup(e.root, w, generation)? == Some(leaf) {
                    return Some(w);
                }
                continue;
            }
            let w = self.settle_whens(leaf, w, generation, pick);
            if self.decode(w, generation) == Some(leaf)
                && self.render(w, generation, &mut Discard, true).is_ok()
            {
                return Some(w);
            }
        }
        None
    }

    /// Pattern bits, then every plain field by its type, then plain asserts.
    fn fill_leaf(
        &self,
        leaf: EncId,
        generation: u32,
        pick: &mut dyn FnMut(u64) -> u64,
        depth: usize,
    ) -> Option<u64> {
        let e = &self.encodings[leaf];
        let mut w = e.match_bits;
        let mut seen: Vec<&str> = Vec::new();
        for enc in self.chain(leaf).take(MAX_DEPTH) {
            let level = &self.encodings[enc].plain;
            for f in &level.fields {
                if seen.contains(&f.name.as_str()) {
                    continue;
                }
                seen.push(&f.name);
                let v = self.random_value(&f.ty, f.width, generation, pick, depth)?;
                w = f.insert(w, v);
            }
        }
        for enc in self.chain(leaf).take(MAX_DEPTH) {
            for a in &self.encodings[enc].plain.asserts {
                w = (w & !a.mask) | a.value;
            }
        }
        Some(w)
    }

    fn random_value(
        &self,
        ty: &FieldType,
        width: u32,
        generation: u32,
        pick: &mut dyn FnMut(u64) -> u64,
        depth: usize,
    ) -> Option<u64> {
        let m = width_mask(width);
        Some(match ty {
            FieldType::Enum(id) => {
                let def = &self.enums[*id];
                let listed: Vec<u64> = def
                    .values
                    .iter()
                    .map(|(v, _, _)| *v)
                    .filter(|v| v & !m == 0)
                    .collect();
                // Non-strict enums also show unlisted values, now and then.
                if listed.is_empty() || (!def.strict && pick(7) == 0) {
                    if def.strict {
                        return None;
                    }
                    pick(m)
                } else {
                    listed[(pick(listed.len() as u64 - 1) as usize).min(listed.len() - 1)]
                }
            }
            FieldType::Bool(_) | FieldType::BoolInv(_) => pick(1) & m,
            FieldType::Sub(tree, _) => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let leaves: Vec<EncId> = self
                    .leaves(*tree)
                    .filter(|&l| self.encodings[l].generation.contains(generation))
                    .collect();
                if leaves.is_empty() {
                    return None;
                }
                let i = (pick(leaves.len() as u64 - 1) as usize).min(leaves.len() - 1);
                self.fill_leaf(leaves[i], generation, pick, depth + 1)? & m
            }
            _ => pick(m) & m,
        })
    }

    /// Fills the fields of the `when`s that are active in `w` by their own
    /// types and writes their asserts, until the active set settles.
    fn settle_whens(
        &self,
        leaf: EncId,
        mut w: u64,
        generation: u32,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> u64 {
        let mut filled: Vec<(usize, usize)> = Vec::new();
        for _ in 0..SETTLE_ROUNDS {
            let scope = Scope::new(self, leaf, w, generation, None);
            let active: Vec<(usize, usize)> = self
                .chain(leaf)
                .take(MAX_DEPTH)
                .enumerate()
                .filter_map(|(k, enc)| scope.active_when(k, enc).map(|j| (k, j)))
                .collect();
            let fresh: Vec<(usize, usize)> = active
                .iter()
                .copied()
                .filter(|a| !filled.contains(a))
                .collect();
            if fresh.is_empty() {
                break;
            }
            let chain: Vec<EncId> = self.chain(leaf).take(MAX_DEPTH).collect();
            for &(k, j) in &fresh {
                let level = &self.encodings[chain[k]].whens[j].level;
                for f in &level.fields {
                    if let Some(v) = self.random_value(&f.ty, f.width, generation, pick, 0) {
                        w = f.insert(w, v);
                    }
                }
                for a in &level.asserts {
                    w = (w & !a.mask) | a.value;
                }
                filled.push((k, j));
            }
        }
        w
    }

    /// Decodes `word` and applies every validity rule (`check`s, strict
    /// enums, sub-encodings that must match) without keeping the text.
    pub fn validate(&self, word: u64, generation: u32) -> Result<EncId, crate::DisasmError> {
        self.render(word, generation, &mut Discard, true)
    }

    /// Warnings for a decodable word: set don't-care bits and `assert`
    /// mismatches of the active variants, for the instruction and every
    /// sub-encoding its visible fields decode to. Empty for a clean word
    /// or one that does not decode. Never part of the display text.
    pub fn decode_warnings(&self, word: u64, generation: u32) -> Vec<DecodeWarning> {
        let word = word & width_mask(self.width);
        let mut out = Vec::new();
        if let Some(leaf) = self.decode(word, generation) {
            let scope = Scope::new(self, leaf, word, generation, None);
            self.scope_warnings(&scope, 0, &mut out);
        }
        out
    }

    fn scope_warnings(&self, scope: &Scope<'_>, depth: usize, out: &mut Vec<DecodeWarning>) {
        let e = &self.encodings[scope.leaf];
        let name = || e.name.to_string();
        let dc = scope.value & e.dontcare;
        if dc != 0 {
            out.push(DecodeWarning::DontCare {
                leaf: name(),
                bits: dc,
            });
        }
        let mut seen: Vec<&str> = Vec::new();
        for (k, enc) in self.chain(scope.leaf).take(MAX_DEPTH).enumerate() {
            let level_enc = &self.encodings[enc];
            let active = scope.active_when(k, enc).map(|j| &level_enc.whens[j].level);
            let asserts = match active {
                Some(l) => &l.asserts,
                None => &level_enc.plain.asserts,
            };
            for a in asserts {
                let found = scope.value & a.mask;
                if found != a.value {
                    out.push(DecodeWarning::Assert {
                        leaf: name(),
                        mask: a.mask,
                        expected: a.value,
                        found,
                    });
                }
            }
            if depth >= MAX_DEPTH {
                continue;
            }
            // Sub-encodings of the fields this variant shows.
            for level in active.into_iter().chain(std::iter::once(&*level_enc.plain)) {
                for f in &level.fields {
                    if seen.contains(&f.name.as_str()) {
                        continue;
                    }
                    seen.push(&f.name);
                    let FieldType::Sub(tree, binds) = &f.ty else {
                        continue;
                    };
                    let Some(found) = scope.find(&f.name) else {
                        continue;
                    };
                    let bits = f.extract(scope.value) & width_mask(self.encodings[*tree].width);
                    let Some(sub_leaf) = self.decode_in(*tree, bits, scope.generation) else {
                        continue;
                    };
                    let sub = Scope::new(
                        self,
                        sub_leaf,
                        bits,
                        scope.generation,
                        Some((found.scope, binds)),
                    );
                    self.scope_warnings(&sub, depth + 1, out);
                }
            }
        }
    }
}
