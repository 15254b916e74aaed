//! Machine instructions as an IR opcode vocabulary: any checked spec's
//! instructions implement [`lathe_ir::Opcode`], so machine-level IR prints,
//! parses and validates with the same tools as generic IR.
//!
//! A [`MachineOp`] is an instruction (a leaf of the spec's root tree) and
//! the bits of its word that are not register numbers: modifiers, and the
//! operands that are constants or immediates. Register operands are IR
//! values, in the order [`Isa::operands`] gives (the order the assembly
//! text shows them); the destination is the instruction's result. Nothing
//! here knows an instruction set: names, fields, operands and effects come
//! from the spec.
//!
//! # Text form
//!
//! `[%r:T =] NAME ATTRS OPERANDS` where `NAME` is the instruction's
//! encoding name (`add.f`, `FADD.f32`; a name the IR reserves for its own
//! structure, like ir3's `jump` and `ret`, gets `.op` appended) and the
//! attributes are, in field order:
//!
//! - a modifier field whose value differs from its default: the field's
//!   name in lower case, bare for a set one-bit field (`sat`, `ss`), else
//!   `name=N` (`rpt=2`, `round=1`; the raw field value);
//! - an operand given as constant or immediate rather than a value:
//!   `name=0x…`, the raw bits of the operand field (`src2=0x3000`);
//! - non-register bits of a register operand (ir3's `(neg)`, `(abs)`
//!   source modifiers live in the operand field): `name.bits=0x…`.
//!
//! ```
//! use lathe_isa::machine::{MachineOp, MachineSpec};
//! # struct Ir3;
//! # impl MachineSpec for Ir3 {
//! #     fn isa() -> &'static lathe_isa::Isa {
//! #         static I: std::sync::OnceLock<lathe_isa::Isa> = std::sync::OnceLock::new();
//! #         I.get_or_init(|| lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/adreno/ir3.isa")).unwrap())
//! #     }
//! #     fn table() -> &'static lathe_isa::machine::MachineTable {
//! #         static T: std::sync::OnceLock<lathe_isa::machine::MachineTable> = std::sync::OnceLock::new();
//! #         T.get_or_init(|| lathe_isa::machine::MachineTable::new(Self::isa()))
//! #     }
//! # }
//! let text = "shader fragment\nb0:\n  %0:f32 = input index=0\n  %1:f32 = input index=1\n  %2:f32 = add.f sat %0, %1\n  %3:f32 = mul.f src2=0x3000 %2\n  output index=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let shader = lathe_ir::parse::<MachineOp<Ir3>>(&arena, text).unwrap();
//! lathe_ir::validate(&shader).unwrap();
//! assert_eq!(lathe_ir::print(&shader), text);
//! ```

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use lathe_ir::{Attr, AttrError, BarrierClass, Effects, Opcode, Signature, Type};

use crate::ast::MetaValue;
use crate::model::{EncId, Field, FieldType, Isa, ItemRef};
use crate::operands::{OperandClass, Role};

/// A spec whose instructions form an opcode vocabulary. `isa!` implements
/// it for the generated module's `Spec` type.
pub trait MachineSpec: 'static {
    /// The checked spec.
    fn isa() -> &'static Isa;
    /// Its instruction table, built once ([`MachineTable::new`]).
    fn table() -> &'static MachineTable;
}

/// One operand field of an instruction.
#[derive(Clone, Debug)]
pub struct OperandInfo {
    pub field: Field,
    /// Lower-case attribute key.
    pub key: crate::compact::Str,
    pub role: Role,
    /// Register files of its register (non-relative) forms.
    pub files: crate::compact::Seq<usize>,
    pub accepts_relative: bool,
    pub accepts_immediate: bool,
    /// The semantics read it as a 64-bit value: a register operand is
    /// then a pair of consecutive registers ([`Isa::wide_reads`]).
    pub wide: bool,
    /// The forms of its tree in which it is a register whatever the rest
    /// of the word holds ([`register_forms`]): for them
    /// [`MachineOp::from_word`] needs no display scope.
    pub register_forms: crate::compact::Seq<EncId>,
}

/// What the vocabulary knows of one instruction.
#[derive(Clone, Debug)]
pub struct LeafInfo {
    pub enc: EncId,
    /// The name in IR text.
    pub name: crate::compact::Str,
    /// 0/1 pattern bits and field defaults: the word before attributes.
    pub base: u64,
    /// Operand fields, in text order.
    pub operands: crate::compact::Seq<OperandInfo>,
    /// Plain fields that are not operands.
    pub modifiers: crate::compact::Seq<(crate::compact::Str, Field)>,
    pub effects: Effects,
    /// First generation the instruction exists in.
    pub first_generation: u32,
    /// Some `when` of its chain asserts bits ([`asserted_bits`]).
    pub asserting: bool,
}

/// Every instruction of a spec, indexed for the vocabulary. Only names
/// are read up front; an instruction's operands, modifiers and effects are
/// static data `isa!` derived ([`TableIndex::leaves`]), or, for a table
/// built at run time, derived from the spec the first time it is asked
/// for, so a compile that uses a few dozen instructions does not pay for
/// the other hundreds.
#[derive(Clone, Debug)]
pub struct MachineTable {
    index: Cow<'static, TableIndex>,
    leaves: Vec<OnceLock<LeafInfo>>,
}

/// The name and encoding indexes of a [`MachineTable`]: built once when
/// `isa!` generates code ([`TableIndex::of`]), so a program reads them as
/// static data instead of hashing every name at start-up.
#[derive(Clone, Debug)]
pub struct TableIndex {
    /// Encoding of each instruction.
    pub encs: Cow<'static, [EncId]>,
    /// (IR name, instruction), sorted by name.
    pub by_name: Cow<'static, [(Cow<'static, str>, u16)]>,
    /// Instruction of each encoding, indexed by encoding.
    pub by_enc: Cow<'static, [Option<u16>]>,
    /// Each instruction's [`LeafInfo`]: derived when `isa!` generated
    /// the code and emitted as static data ([`crate::statics`]), so a
    /// program neither derives nor decodes an instruction's facts. Empty
    /// when built at run time ([`TableIndex::of`]): then they are derived
    /// on first use.
    pub leaves: &'static [LeafInfo],
}

impl TableIndex {
    /// The indexes of `isa`'s instructions.
    pub fn of(isa: &Isa) -> TableIndex {
        let encs: Vec<EncId> = isa.instructions().collect();
        let mut by_name: Vec<(Cow<'static, str>, u16)> = Vec::with_capacity(encs.len());
        let mut by_enc = vec![None; isa.encodings.len()];
        for (index, &enc) in encs.iter().enumerate() {
            by_name.push((Cow::Owned(ir_name(isa, enc)), index as u16));
            by_enc[enc] = Some(index as u16);
        }
        by_name.sort();
        TableIndex {
            encs: Cow::Owned(encs),
            by_name: Cow::Owned(by_name),
            by_enc: Cow::Owned(by_enc),
            leaves: &[],
        }
    }

    /// Every instruction's [`LeafInfo`] of `isa`, in instruction order
    /// ([`TableIndex::leaves`]).
    pub fn leaf_infos(&self, isa: &Isa) -> Vec<LeafInfo> {
        self.encs.iter().map(|&enc| leaf_info(isa, enc)).collect()
    }
}

/// Suffix for a spec name that the IR reserves.
const RESERVED_SUFFIX: &str = ".op";

impl MachineTable {
    pub fn new(isa: &Isa) -> MachineTable {
        MachineTable::with_index(Cow::Owned(TableIndex::of(isa)))
    }

    /// The table over indexes generated from the spec ([`TableIndex::of`]).
    pub fn with_index(index: Cow<'static, TableIndex>) -> MachineTable {
        MachineTable {
            // Derived on first use only where `isa!` stored none.
            leaves: match index.leaves.is_empty() {
                true => (0..index.encs.len()).map(|_| OnceLock::new()).collect(),
                false => Vec::new(),
            },
            index,
        }
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.index.encs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.encs.is_empty()
    }

    /// Instruction `index`: stored by `isa!`, else derived from `isa`
    /// (the spec this table was built from) on first use.
    pub fn leaf(&self, isa: &Isa, index: u16) -> &LeafInfo {
        let i = index as usize;
        match self.index.leaves.get(i) {
            Some(stored) => stored,
            None => self.leaves[i].get_or_init(|| leaf_info(isa, self.index.encs[i])),
        }
    }

    pub fn by_name(&self, name: &str) -> Option<u16> {
        let names = &self.index.by_name;
        let at = names.binary_search_by(|(n, _)| (**n).cmp(name)).ok()?;
        Some(names[at].1)
    }

    /// The index of instruction `enc`, if it is one.
    pub fn by_enc(&self, enc: EncId) -> Option<u16> {
        self.index.by_enc.get(enc).copied().flatten()
    }
}

/// Instruction `enc`'s name in IR text.
fn ir_name(isa: &Isa, enc: EncId) -> String {
    let mut name = isa.encodings[enc].name.to_string();
    if lathe_ir::opcode::STRUCTURAL_NAMES.contains(&name.as_str()) {
        name.push_str(RESERVED_SUFFIX);
    }
    name
}

/// What the vocabulary knows of instruction `enc`.
fn leaf_info(isa: &Isa, enc: EncId) -> LeafInfo {
    let e = &isa.encodings[enc];
    let wide = isa
        .wide_reads
        .iter()
        .find(|(leaf, _)| *leaf == enc)
        .map_or(&[][..], |(_, fields)| fields.as_slice());
    let operands: Vec<OperandInfo> = isa
        .operands(enc)
        .into_iter()
        .filter_map(|o| {
            let field = plain_field(isa, enc, &o.field)?.clone();
            Some(OperandInfo {
                key: o.field.to_lowercase().into(),
                role: o.role,
                files: o.register_files().into(),
                accepts_relative: o.forms.iter().any(|(_, c)| {
                    c.iter()
                        .any(|c| matches!(c, OperandClass::Register { relative: true, .. }))
                }),
                accepts_immediate: o.accepts_immediate(),
                wide: wide.iter().any(|w| *w == o.field),
                register_forms: register_forms(isa, enc, &field).into(),
                field,
            })
        })
        .collect();
    let mut modifiers = Vec::new();
    // Pattern bits and the values the plain levels assert.
    let mut base = e.match_bits;
    for level in isa.chain(enc) {
        for a in &isa.encodings[level].plain.asserts {
            base = (base & !a.mask) | (a.value & a.mask);
        }
    }
    for f in instruction_fields(isa, enc) {
        if let Some(d) = f.default {
            base = f.insert(base, d);
        }
        if !operands.iter().any(|o| o.field.name == f.name) {
            modifiers.push((f.name.to_lowercase().into(), f.clone()));
        }
    }
    // Declaration order from the root down reads naturally.
    modifiers.sort_by_key(|(_, f)| (f.span.file, f.span.start));
    LeafInfo {
        enc,
        name: ir_name(isa, enc).into(),
        base,
        operands: operands.into(),
        modifiers: modifiers.into(),
        effects: effects(isa, enc),
        first_generation: e.generation.min,
        asserting: asserting(isa, enc),
    }
}

/// The forms of operand `field` of instruction `leaf` in which
/// [`is_literal_value`] is false for every word: forms of a general
/// register file that no `when` marks immediate and whose text is never
/// empty, whichever variants are active. That holds when every
/// definition of the field's name that `leaf`'s scope may find is this
/// field's bits and operand tree (a `when` may bind its params
/// differently: ir3's `(nop)` cat2 forms), and each template the form may
/// show renders without failing and holds literal text or an operand that
/// always does (ir3's `multisrc-gpr` shows only fields; its `reg-gpr`
/// shows `a0.`/`p0.` in its `when`s, `r` otherwise) — read from the spec
/// by [`Shows`], which accepts only what it can prove.
fn register_forms(isa: &Isa, leaf: EncId, field: &Field) -> Vec<EncId> {
    let FieldType::Sub(tree, _) = &field.ty else {
        return Vec::new();
    };
    if field.width > isa.encodings[*tree].width {
        return Vec::new();
    }
    let generations: Vec<u32> = isa
        .generations
        .iter()
        .map(|(_, g)| *g)
        .filter(|&g| isa.encodings[leaf].generation.contains(g))
        .collect();
    let shows = Shows {
        isa,
        generations: &generations,
    };
    let top = Frame {
        enc: leaf,
        binds: &[],
        caller: None,
    };
    // Every definition the leaf's scope may find, each with its binds.
    let Some((items, _)) = shows.resolve(&top, &field.name) else {
        return Vec::new();
    };
    let mut binds = Vec::new();
    for item in items {
        match item {
            ItemRef::Field(f) if f.ranges == field.ranges => match &f.ty {
                FieldType::Sub(t, b) if t == tree => binds.push(b.as_slice()),
                _ => return Vec::new(),
            },
            _ => return Vec::new(),
        }
    }
    let forms: Vec<EncId> = if isa.encodings[*tree].is_leaf() {
        vec![*tree]
    } else {
        isa.leaves(*tree).collect()
    };
    forms
        .into_iter()
        .filter(|&form| {
            let gpr = isa.form_classes(form).into_iter().any(|c| {
                matches!(c, OperandClass::Register { file, relative: false }
                    if isa.regfiles[file].kind == crate::model::RegfileKind::Gpr)
            });
            let immediate = isa
                .chain(form)
                .take(crate::display::MAX_DEPTH)
                .flat_map(|c| isa.encodings[c].whens.iter())
                .any(|w| w.meta.iter().any(|(k, _, _)| k == "immediate"));
            gpr && !immediate
                && binds
                    .iter()
                    .all(|b| shows.form(&top, form, b, 0) == Some(true))
        })
        .collect()
}

/// Deepest nesting [`Shows`] follows (operand forms, derived values,
/// expression nodes together); the display engine allows more.
const MAX_SHOWN_DEPTH: usize = 24;

/// A display scope as [`Shows`] sees it: the encoding it decodes, the
/// params of its operand field and the scope that binds them.
struct Frame<'f> {
    enc: EncId,
    binds: &'f [(crate::compact::Str, crate::compact::Str)],
    caller: Option<&'f Frame<'f>>,
}

/// What the display engine ([`crate::display::Scope`]) does with every
/// word, read from the spec: whether a name always resolves and renders,
/// and whether its text is never empty. Each answer is `None` unless it
/// holds whichever `when` variants are active.
struct Shows<'i> {
    isa: &'i Isa,
    /// The generations the instruction exists in.
    generations: &'i [u32],
}

impl<'i> Shows<'i> {
    /// The items `name` may resolve to in `frame` (as `Scope::find`
    /// finds it: each level's variants, then the level, then the caller
    /// through a param) and the frame that owns them; `None` when it may
    /// not resolve.
    fn resolve<'f>(
        &self,
        frame: &'f Frame<'f>,
        name: &str,
    ) -> Option<(Vec<ItemRef<'i>>, &'f Frame<'f>)> {
        let isa = self.isa;
        let mut items = Vec::new();
        for enc in isa.chain(frame.enc).take(crate::display::MAX_DEPTH) {
            let e = &isa.encodings[enc];
            items.extend(e.whens.iter().filter_map(|w| w.level.item(name)));
            if let Some(item) = e.plain.item(name) {
                items.push(item);
                return Some((items, frame));
            }
        }
        if !items.is_empty() {
            // Only a variant defines it: it may not resolve here.
            return None;
        }
        let (_, bound) = frame.binds.iter().find(|(p, _)| p == name)?;
        self.resolve(frame.caller?, bound)
    }

    /// Does `name` always have a value in `frame`?
    fn has_value(&self, frame: &Frame<'_>, name: &str, depth: usize) -> bool {
        let Some((items, owner)) = self.resolve(frame, name) else {
            return false;
        };
        items.iter().all(|item| match item {
            ItemRef::Field(_) => true,
            ItemRef::Derived(d) => self.evaluates(owner, &d.expr, &mut Vec::new(), depth + 1),
        })
    }

    /// Does `e` always evaluate in `frame`, inside the expression
    /// functions `bound` lists (their params and how many were given)?
    fn evaluates(
        &self,
        frame: &Frame<'_>,
        e: &'i crate::expr::Expr,
        bound: &mut Vec<(&'i [crate::compact::Str], usize)>,
        depth: usize,
    ) -> bool {
        use crate::expr::ExprKind;
        if depth > MAX_SHOWN_DEPTH {
            return false;
        }
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Gen => true,
            ExprKind::Name(n) => {
                for (params, given) in bound.iter().rev() {
                    if let Some(k) = params.iter().position(|p| p == n) {
                        return k < *given;
                    }
                }
                self.has_value(frame, n, depth)
            }
            ExprKind::Named(_, Some(i), args) => {
                let Some(named) = self.isa.exprs.get(*i) else {
                    return false;
                };
                if !args
                    .iter()
                    .all(|a| self.evaluates(frame, a, bound, depth + 1))
                {
                    return false;
                }
                let body: &'i crate::expr::Expr = &named.expr;
                if args.is_empty() {
                    return self.evaluates(frame, body, bound, depth + 1);
                }
                let given = args.len().min(crate::expr::MAX_PARAMS);
                let mut inner = bound.clone();
                inner.push((named.params.as_slice(), given));
                self.evaluates(frame, body, &mut inner, depth + 1)
            }
            ExprKind::Named(_, None, _) => false,
            ExprKind::Unary(_, a) => self.evaluates(frame, a, bound, depth + 1),
            ExprKind::Binary(_, a, b) => {
                self.evaluates(frame, a, bound, depth + 1)
                    && self.evaluates(frame, b, bound, depth + 1)
            }
            ExprKind::Cond(c, a, b) => [c, a, b]
                .into_iter()
                .all(|x| self.evaluates(frame, x, bound, depth + 1)),
        }
    }

    /// Does `{name}` always render in `frame`: `Some(true)` when its text
    /// is never empty, `Some(false)` when it may be.
    fn name(&self, frame: &Frame<'_>, name: &str, depth: usize) -> Option<bool> {
        if depth > MAX_SHOWN_DEPTH {
            return None;
        }
        let (items, owner) = self.resolve(frame, name)?;
        let mut never_empty = true;
        for item in items {
            match (item, item.ty()) {
                (ItemRef::Field(f), FieldType::Sub(tree, binds)) => {
                    never_empty &= self.operand(owner, f, *tree, binds, depth + 1)?;
                }
                (_, FieldType::Sub(..)) => return None,
                (ItemRef::Field(_), _) => never_empty = false,
                (ItemRef::Derived(d), _) => {
                    if !self.evaluates(owner, &d.expr, &mut Vec::new(), depth + 1) {
                        return None;
                    }
                    never_empty = false;
                }
            }
        }
        Some(never_empty)
    }

    /// Does operand field `f` of tree `tree` always render: every value
    /// of its bits decodes to a form at each generation, and each such
    /// form renders ([`Shows::form`])?
    fn operand(
        &self,
        owner: &Frame<'_>,
        f: &Field,
        tree: EncId,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        depth: usize,
    ) -> Option<bool> {
        let width = self.isa.encodings[tree].width.min(f.width);
        if width > 12 {
            return None;
        }
        let mut forms = Vec::new();
        for &g in self.generations {
            for v in 0..1u64 << width {
                let form = self.isa.decode_in(tree, v, g)?;
                if !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
        let mut never_empty = true;
        for form in forms {
            never_empty &= self.form(owner, form, binds, depth + 1)?;
        }
        Some(never_empty)
    }

    /// Does operand form `form`, its params bound by `binds` to `caller`,
    /// always render: every template it may show (each level's variants,
    /// down to the first plain one) renders; `Some(true)` when each holds
    /// literal text or a piece whose text is never empty.
    fn form(
        &self,
        caller: &Frame<'_>,
        form: EncId,
        binds: &[(crate::compact::Str, crate::compact::Str)],
        depth: usize,
    ) -> Option<bool> {
        if depth > MAX_SHOWN_DEPTH {
            return None;
        }
        let isa = self.isa;
        let frame = Frame {
            enc: form,
            binds,
            caller: Some(caller),
        };
        let mut templates = Vec::new();
        let mut plain = false;
        for enc in isa.chain(form).take(crate::display::MAX_DEPTH) {
            let e = &isa.encodings[enc];
            templates.extend(e.whens.iter().filter_map(|w| w.level.display.as_ref()));
            if let Some(t) = &e.plain.display {
                templates.push(t);
                plain = true;
                break;
            }
        }
        if !plain {
            return None;
        }
        let mut never_empty = true;
        for t in templates {
            let mut shows_text = false;
            for p in &t.pieces {
                match p {
                    crate::model::Piece::Lit(s) => shows_text |= !s.is_empty(),
                    crate::model::Piece::Mnemonic => {}
                    crate::model::Piece::Field(name, _) => {
                        shows_text |= self.name(&frame, name, depth + 1)?;
                    }
                }
            }
            never_empty &= shows_text;
        }
        Some(never_empty)
    }
}

/// Does some `when` of `leaf`'s chain assert bits?
fn asserting(isa: &Isa, leaf: EncId) -> bool {
    isa.chain(leaf).take(crate::display::MAX_DEPTH).any(|enc| {
        isa.encodings[enc]
            .whens
            .iter()
            .any(|w| !w.level.asserts.is_empty())
    })
}

/// The field `name` of instruction `enc`: the nearest plain definition,
/// else the first `when` that defines it.
fn plain_field<'i>(isa: &'i Isa, enc: EncId, name: &str) -> Option<&'i Field> {
    instruction_fields(isa, enc)
        .into_iter()
        .find(|f| f.name == name)
}

/// Every field of instruction `enc`, each name once: plain definitions
/// (nearest first), then fields only a `when` defines (their bits are
/// don't-care in the plain layout, so the word must keep them too).
fn instruction_fields(isa: &Isa, enc: EncId) -> Vec<&Field> {
    let mut out: Vec<&Field> = Vec::new();
    for c in isa.chain(enc) {
        for f in &isa.encodings[c].plain.fields {
            if !out.iter().any(|g| g.name == f.name) {
                out.push(f);
            }
        }
    }
    for c in isa.chain(enc) {
        for w in &isa.encodings[c].whens {
            for f in &w.level.fields {
                if !out.iter().any(|g| g.name == f.name) {
                    out.push(f);
                }
            }
        }
    }
    out
}

/// `meta effects = [...]`: `side_effects`, `may_trap` and the barrier
/// classes `array_r`, `array_w`, `buffer_r`, `buffer_w`, `output_w`.
fn effects(isa: &Isa, enc: EncId) -> Effects {
    let mut fx = Effects::PURE;
    if let Some(MetaValue::List(items)) = isa.meta(enc, "effects") {
        for item in items {
            match item.as_str() {
                "side_effects" => fx.side_effects = true,
                "may_trap" => fx.may_trap = true,
                "array_r" => fx.barrier = fx.barrier.union(BarrierClass::ARRAY_R),
                "array_w" => fx.barrier = fx.barrier.union(BarrierClass::ARRAY_W),
                "buffer_r" => fx.barrier = fx.barrier.union(BarrierClass::BUFFER_R),
                "buffer_w" => fx.barrier = fx.barrier.union(BarrierClass::BUFFER_W),
                "output_w" => fx.barrier = fx.barrier.union(BarrierClass::OUTPUT_W),
                _ => {}
            }
        }
    }
    fx
}

/// An instruction of spec `S` with its non-register bits.
pub struct MachineOp<S> {
    leaf: u16,
    /// Bit `i`: operand `i` is a constant or immediate in the word, not an
    /// IR value.
    literal: u32,
    word: u64,
    spec: PhantomData<fn() -> S>,
}

impl<S> Clone for MachineOp<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for MachineOp<S> {}
impl<S> PartialEq for MachineOp<S> {
    fn eq(&self, o: &Self) -> bool {
        (self.leaf, self.literal, self.word) == (o.leaf, o.literal, o.word)
    }
}
impl<S> Eq for MachineOp<S> {}
impl<S> std::hash::Hash for MachineOp<S> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.leaf, self.literal, self.word).hash(h)
    }
}

impl<S: MachineSpec> fmt::Debug for MachineOp<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.info().name)?;
        self.write_attrs(None, f)
    }
}

impl<S: MachineSpec> MachineOp<S> {
    /// The instruction called `name` (its encoding name) with no modifiers
    /// and every operand a register.
    pub fn named(name: &str) -> Option<Self> {
        let t = S::table();
        let leaf = t.by_name(name)?;
        Some(Self::new(leaf, t.leaf(S::isa(), leaf).base, 0))
    }

    fn new(leaf: u16, word: u64, literal: u32) -> Self {
        MachineOp {
            leaf,
            literal,
            word,
            spec: PhantomData,
        }
    }

    /// The instruction of a decoded `word`: every register operand becomes
    /// an IR operand (its number cleared), every other one stays literal.
    /// `None` when the word is no instruction at `generation`.
    pub fn from_word(word: u64, generation: u32) -> Option<Self> {
        let isa = S::isa();
        let enc = isa.decode(word, generation)?;
        let t = S::table();
        let leaf = t.by_enc(enc)?;
        let (literal, cleared) = read_operands(isa, t.leaf(isa, leaf), word, generation);
        Some(Self::new(leaf, cleared, literal))
    }

    /// [`MachineOp::from_word`] of a word whose operands were read
    /// beforehand ([`read_word`]: the rules generator stores them for each
    /// rule template): only the instruction is looked up. `None` when the
    /// word is no instruction at `generation`.
    pub fn from_read_word(
        word: u64,
        generation: u32,
        (literal, cleared): (u32, u64),
    ) -> Option<Self> {
        let t = S::table();
        let leaf = t.by_enc(S::isa().decode(word, generation)?)?;
        Some(Self::new(leaf, cleared, literal))
    }

    pub fn info(&self) -> &'static LeafInfo {
        S::table().leaf(S::isa(), self.leaf)
    }

    /// The instruction's encoding in the spec.
    pub fn encoding(&self) -> EncId {
        self.info().enc
    }

    /// The word with every register operand's number left zero.
    pub fn word(&self) -> u64 {
        self.word
    }

    /// Is operand field `i` (of [`LeafInfo::operands`]) literal?
    pub fn is_literal(&self, i: usize) -> bool {
        self.literal & (1 << i) != 0
    }

    /// The operand fields that are IR operands, in IR operand order.
    pub fn value_operands(&self, role: Role) -> impl Iterator<Item = &'static OperandInfo> + '_ {
        self.info()
            .operands
            .iter()
            .enumerate()
            .filter(move |(i, o)| o.role == role && !self.is_literal(*i))
            .map(|(_, o)| o)
    }

    /// The field behind IR operand `n` (sources only).
    pub fn source(&self, n: usize) -> Option<&'static OperandInfo> {
        self.value_operands(Role::Src).nth(n)
    }

    /// The field behind the result.
    pub fn destination(&self) -> Option<&'static OperandInfo> {
        self.value_operands(Role::Dst).next()
    }

    /// The IR source read from the result's register: a field the spec
    /// marks `tied` is both the destination and this source.
    pub fn tied_source(&self) -> Option<usize> {
        let dst = self.destination()?;
        self.value_operands(Role::Src)
            .position(|o| o.field.name == dst.field.name)
    }

    /// The raw value of modifier field `key` (lower-case, as in IR text:
    /// `ss`, `rpt`), if the instruction has it.
    pub fn modifier(&self, key: &str) -> Option<u64> {
        let (_, f) = self.info().modifiers.iter().find(|(k, _)| k == key)?;
        Some(f.extract(self.word))
    }

    /// The instruction with modifier field `key` set to `value`; `None`
    /// when it has no such field or the value does not fit.
    pub fn with_modifier(&self, key: &str, value: u64) -> Option<Self> {
        let (_, f) = self.info().modifiers.iter().find(|(k, _)| k == key)?;
        if value & !width_mask(f.width) != 0 {
            return None;
        }
        let mut op = *self;
        op.word = f.insert(op.word, value);
        Some(op)
    }

    /// [`MachineOp::with_modifier`] of a signed `value` (a branch offset):
    /// a negative one is stored as its two's complement in the field's
    /// width; `None` when it does not fit as a signed or unsigned number.
    pub fn with_signed_modifier(&self, key: &str, value: i64) -> Option<Self> {
        let (_, f) = self.info().modifiers.iter().find(|(k, _)| k == key)?;
        let fits = value >= 0 || (f.width < 64 && value >= -(1i64 << (f.width - 1)));
        if !fits {
            return None;
        }
        self.with_modifier(key, value as u64 & width_mask(f.width))
    }

    /// A metadata value of the instruction.
    pub fn meta(&self, key: &str) -> Option<&'static MetaValue> {
        S::isa().meta(self.encoding(), key)
    }

    /// A metadata value of the instruction as its word reads at
    /// `generation`: at each level from the leaf up, the active `when`
    /// variant's `meta` before the encoding's own (mova, a variant of
    /// `mov`, says its result is in the address register).
    pub fn variant_meta(&self, key: &str, generation: u32) -> Option<&'static MetaValue> {
        let isa = S::isa();
        let leaf = self.encoding();
        let active = active_variants(isa, leaf, self.word, generation);
        for enc in isa.chain(leaf) {
            let e = &isa.encodings[enc];
            let variant = active
                .iter()
                .find(|(a, _)| *a == enc)
                .map(|&(_, j)| &e.whens[j]);
            let found = variant
                .into_iter()
                .flat_map(|w| w.meta.iter())
                .chain(e.meta.iter())
                .find(|(k, _, _)| k == key);
            if let Some((_, v, _)) = found {
                return Some(v);
            }
        }
        None
    }

    /// The instruction word with register numbers filled in, the inverse
    /// of [`MachineOp::from_word`]'s clearing: `sources[k]` for IR operand
    /// `k`, `destinations[k]` for the `k`-th destination field. A number
    /// is what the operand's register form holds (its `role = reg`
    /// field, else every bit of the form that is no pattern bit): ir3's
    /// `r1.y` is 5, Valhall's `r5` is 5.
    pub fn encode(&self, sources: &[u32], destinations: &[u32], generation: u32) -> u64 {
        let isa = S::isa();
        let mut word = self.word;
        let info = self.info();
        let fixed = match info.asserting {
            true => asserted_bits(isa, info.enc, word, generation),
            false => 0,
        };
        let fields = self
            .value_operands(Role::Src)
            .zip(sources)
            .chain(self.value_operands(Role::Dst).zip(destinations))
            .filter(|(o, _)| o.field.mask() & !fixed != 0);
        for (o, &number) in fields {
            let value = o.field.extract(word);
            let set = set_in_form(isa, &o.field.ty, value, u64::from(number), generation, 0);
            word = o.field.insert(word, set);
        }
        word
    }

    /// The register that literal operand field `i` (of
    /// [`LeafInfo::operands`]) names, if it names one directly: its spec
    /// register file (an index into `Isa::regfiles`) and its number as
    /// [`MachineOp::encode`] counts it (ir3's `c1.y` is 5). Immediates and
    /// address-relative forms give `None`.
    pub fn literal_register(&self, i: usize, generation: u32) -> Option<(usize, u64)> {
        let o = self.info().operands.get(i)?;
        if !self.is_literal(i) {
            return None;
        }
        register_in_form(
            S::isa(),
            &o.field.ty,
            o.field.extract(self.word),
            generation,
            0,
        )
    }

    /// The instruction with IR source `n` replaced by register `number`
    /// of the spec register file `file` (an ir3 const register), written
    /// in the form of the operand's encoding that names that file; the
    /// modifier fields that form shares with the operand's present one
    /// (ir3's `(neg)`/`(abs)`) keep their values. `None` when no form of
    /// the operand names the file directly at `generation`, or the word
    /// does not read back as this instruction with that register there.
    pub fn with_source_register(
        &self,
        n: usize,
        file: usize,
        number: u64,
        generation: u32,
    ) -> Option<Self> {
        let isa = S::isa();
        let info = self.info();
        let i = (0..info.operands.len())
            .filter(|&i| info.operands[i].role == Role::Src && !self.is_literal(i))
            .nth(n)?;
        let field = &info.operands[i].field;
        let FieldType::Sub(tree, _) = &field.ty else {
            return None;
        };
        let old = field.extract(self.word);
        let old_form = form_at(isa, *tree, old, generation);
        let wanted = OperandClass::Register {
            file,
            relative: false,
        };
        let forms: Vec<EncId> = if isa.encodings[*tree].is_leaf() {
            vec![*tree]
        } else {
            isa.leaves(*tree).collect()
        };
        for form in forms {
            let e = &isa.encodings[form];
            if !e.generation.contains(generation) || !isa.form_classes(form).contains(&wanted) {
                continue;
            }
            let mut value = e.match_bits & e.mask;
            if let Some(old_form) = old_form {
                for f in plain_level_fields(isa, form) {
                    let shared = plain_level_fields(isa, old_form).find(|g| {
                        g.name == f.name
                            && g.mask() == f.mask()
                            && !matches!(g.ty, FieldType::Sub(..))
                    });
                    if let Some(g) = shared {
                        value = f.insert(value, g.extract(old));
                    }
                }
            }
            let value = set_in_form(isa, &field.ty, value, number, generation, 0);
            let word = field.insert(self.word, value);
            let reads_back = isa.decode(word, generation) == Some(info.enc)
                && form_at(isa, *tree, value, generation) == Some(form)
                && register_in_form(isa, &field.ty, value, generation, 0) == Some((file, number))
                && is_literal_value(isa, info.enc, field, word, generation);
            if reads_back {
                return Some(Self::new(self.leaf, word, self.literal | 1 << i));
            }
        }
        None
    }

    /// The instruction with IR source `n` replaced by what literal
    /// operand field `i` of `from` reads (Valhall's `MOV.i32 r0, u5` gives
    /// `u5`), its bits copied: both fields must be the same operand
    /// encoding. The instruction fields the operand's parameters name
    /// (Valhall's FAU page) take `from`'s values, so the operand shows the
    /// same text in both words, as long as every other literal operand
    /// still shows its own. `None` when that fails, the word does not read
    /// back as this instruction, or it breaks one of the spec's `check`
    /// rules (Valhall's FAU limits).
    pub fn with_source_literal(
        &self,
        n: usize,
        from: &Self,
        i: usize,
        generation: u32,
    ) -> Option<Self> {
        let isa = S::isa();
        let info = self.info();
        let k = (0..info.operands.len())
            .filter(|&k| info.operands[k].role == Role::Src && !self.is_literal(k))
            .nth(n)?;
        let field = &info.operands[k].field;
        let theirs = &from.info().operands.get(i)?.field;
        let (FieldType::Sub(tree, params), FieldType::Sub(their_tree, their_params)) =
            (&field.ty, &theirs.ty)
        else {
            return None;
        };
        if !from.is_literal(i) || tree != their_tree || params.len() != their_params.len() {
            return None;
        }
        let text = |leaf: EncId, word: u64, name: &str| {
            crate::display::Scope::new(isa, leaf, word, generation, None)
                .unvalidated()
                .field_text(name)
        };
        let wanted = text(from.encoding(), from.word, &theirs.name)?;
        let mut word = field.insert(self.word, theirs.extract(from.word));
        for ((param, caller), (their_param, their_caller)) in params.iter().zip(their_params) {
            let mine = plain_field(isa, info.enc, caller)?;
            let source = plain_field(isa, from.encoding(), their_caller)?;
            if param != their_param || mine.width != source.width {
                return None;
            }
            word = mine.insert(word, source.extract(from.word));
        }
        if isa.decode(word, generation) != Some(info.enc)
            || !is_literal_value(isa, info.enc, field, word, generation)
            || text(info.enc, word, &field.name)? != wanted
        {
            return None;
        }
        let others_kept = (0..info.operands.len())
            .filter(|&j| j != k && self.is_literal(j))
            .all(|j| {
                let name = &info.operands[j].field.name;
                text(info.enc, word, name) == text(info.enc, self.word, name)
            });
        let valid = crate::display::Scope::new(isa, info.enc, word, generation, None)
            .check_rules()
            .is_ok();
        (others_kept && valid).then(|| Self::new(self.leaf, word, self.literal | 1 << k))
    }
}

/// The form of operand tree `tree` that `value` decodes to.
fn form_at(isa: &Isa, tree: EncId, value: u64, generation: u32) -> Option<EncId> {
    if isa.encodings[tree].is_leaf() {
        Some(tree)
    } else {
        isa.decode_in(tree, value, generation)
    }
}

/// The plain fields of `enc` and its ancestors.
fn plain_level_fields(isa: &Isa, enc: EncId) -> impl Iterator<Item = &Field> {
    isa.chain(enc)
        .flat_map(move |c| isa.encodings[c].plain.fields.iter())
}

fn is_register_number(f: &Field) -> bool {
    f.meta
        .iter()
        .any(|(k, m)| k == "role" && matches!(m, MetaValue::Ident(r) if r == "reg"))
}

/// The register an operand value of type `ty` names directly, read as
/// [`set_in_form`] writes it: `(spec register file, number)`.
fn register_in_form(
    isa: &Isa,
    ty: &FieldType,
    value: u64,
    generation: u32,
    depth: usize,
) -> Option<(usize, u64)> {
    let FieldType::Sub(tree, _) = ty else {
        return None;
    };
    let form = form_at(isa, *tree, value, generation)?;
    if matches!(isa.meta(form, "relative"), Some(MetaValue::Int(n)) if *n != 0)
        || matches!(isa.meta(form, "relative"), Some(MetaValue::Ident(s)) if s == "true")
    {
        return None;
    }
    let file = match isa.meta(form, "regfile") {
        Some(MetaValue::Ident(name)) => isa.regfile(name),
        _ => None,
    };
    if let Some(f) = plain_level_fields(isa, form).find(|f| is_register_number(f)) {
        return file.map(|file| (file, f.extract(value)));
    }
    if let Some(file) = file {
        // Gather the non-pattern bits, low first (set_in_form's deposit).
        let e = &isa.encodings[form];
        let mut free = !e.mask & width_mask(e.width);
        let (mut number, mut k) = (0u64, 0);
        while free != 0 {
            let bit = free & free.wrapping_neg();
            if value & bit != 0 {
                number |= 1 << k;
            }
            k += 1;
            free &= free - 1;
        }
        return Some((file, number));
    }
    if depth < 8 {
        for c in isa.chain(form) {
            for f in level_fields(isa, c) {
                if matches!(f.ty, FieldType::Sub(..)) {
                    let inner = f.extract(value);
                    if let Some(r) = register_in_form(isa, &f.ty, inner, generation, depth + 1) {
                        return Some(r);
                    }
                }
            }
        }
    }
    None
}

/// `value` of an operand of type `ty` with its register number set to
/// `number` (see [`MachineOp::encode`]); `value` unchanged when no
/// register form is found.
pub(crate) fn set_in_form(
    isa: &Isa,
    ty: &FieldType,
    value: u64,
    number: u64,
    generation: u32,
    depth: usize,
) -> u64 {
    let FieldType::Sub(tree, _) = ty else {
        return number;
    };
    let form = if isa.encodings[*tree].is_leaf() {
        Some(*tree)
    } else {
        isa.decode_in(*tree, value, generation)
    };
    let Some(form) = form else { return value };
    for c in isa.chain(form) {
        for f in &isa.encodings[c].plain.fields {
            let is_reg = f
                .meta
                .iter()
                .any(|(k, m)| k == "role" && matches!(m, MetaValue::Ident(r) if r == "reg"));
            if is_reg {
                return f.insert(value, number);
            }
        }
    }
    if isa.meta(form, "regfile").is_some() {
        // Deposit the number's bits, low first, into the non-pattern bits.
        let e = &isa.encodings[form];
        let mut free = !e.mask & width_mask(e.width);
        let mut out = value & e.mask;
        let mut n = number;
        while free != 0 {
            let bit = free & free.wrapping_neg();
            if n & 1 != 0 {
                out |= bit;
            }
            n >>= 1;
            free &= free - 1;
        }
        return out;
    }
    if depth < 8 {
        for c in isa.chain(form) {
            for f in level_fields(isa, c) {
                if matches!(f.ty, FieldType::Sub(..)) {
                    let inner = f.extract(value);
                    let set = set_in_form(isa, &f.ty, inner, number, generation, depth + 1);
                    if set != inner || number == 0 {
                        return f.insert(value, set);
                    }
                }
            }
        }
    }
    value
}

/// What [`MachineOp::from_word`] reads from `word` at `generation`: the
/// mask of its literal operands (bit `i`: operand `i` of the
/// instruction's [`LeafInfo::operands`]) and the word with the register
/// numbers of the others cleared. `None` when the word is no instruction.
pub fn read_word(isa: &Isa, word: u64, generation: u32) -> Option<(u32, u64)> {
    let enc = isa.decode(word, generation)?;
    Some(read_operands(isa, &leaf_info(isa, enc), word, generation))
}

/// [`read_word`] of a word of instruction `info`.
fn read_operands(isa: &Isa, info: &LeafInfo, word: u64, generation: u32) -> (u32, u64) {
    let fixed = match info.asserting {
        true => asserted_bits(isa, info.enc, word, generation),
        false => 0,
    };
    let (mut literal, mut cleared) = (0, word);
    for (i, o) in info.operands.iter().enumerate() {
        if o.files.is_empty() || is_literal_operand(isa, info.enc, o, word, generation) {
            literal |= 1 << i;
        } else if o.field.mask() & !fixed != 0 {
            cleared = clear_register(isa, &o.field, cleared, generation);
        }
    }
    (literal, cleared)
}

/// The active `when` of each level of `leaf`'s chain for `word`, leaf
/// first: `(encoding, when index)`.
fn active_variants(isa: &Isa, leaf: EncId, word: u64, generation: u32) -> Vec<(EncId, usize)> {
    let scope = crate::display::Scope::new(isa, leaf, word, generation, None);
    isa.chain(leaf)
        .take(crate::display::MAX_DEPTH)
        .enumerate()
        .filter_map(|(k, enc)| scope.active_when(k, enc).map(|j| (enc, j)))
        .collect()
}

/// The bits of `word` that the active `when` variants of `leaf` assert:
/// an operand inside them is part of the instruction (mova's `a0.x`),
/// not a register number the allocator chooses.
pub(crate) fn asserted_bits(isa: &Isa, leaf: EncId, word: u64, generation: u32) -> u64 {
    // Most instructions have no `when` that asserts anything: no need to
    // find which are active (a display scope's worth of evaluation).
    if !asserting(isa, leaf) {
        return 0;
    }
    active_variants(isa, leaf, word, generation)
        .into_iter()
        .flat_map(|(enc, j)| isa.encodings[enc].whens[j].level.asserts.iter())
        .fold(0, |m, a| m | a.mask)
}

/// [`is_literal_value`] of operand `o` of instruction `leaf`, answered
/// from its [`OperandInfo::register_forms`] when the word holds one.
fn is_literal_operand(isa: &Isa, leaf: EncId, o: &OperandInfo, word: u64, generation: u32) -> bool {
    if let FieldType::Sub(tree, _) = &o.field.ty {
        if !o.register_forms.is_empty() {
            let form = isa.decode_in(*tree, o.field.extract(word), generation);
            if form.is_some_and(|f| o.register_forms.contains(&f)) {
                return false;
            }
        }
    }
    is_literal_value(isa, leaf, &o.field, word, generation)
}

/// Does the operand field's value in `word` name something other than a
/// register (a const, immediate or relative form), or nothing at all (an
/// operand the instruction `leaf` does not show in this form, as a cat5
/// sample without a second source)?
pub(crate) fn is_literal_value(
    isa: &Isa,
    leaf: EncId,
    field: &Field,
    word: u64,
    generation: u32,
) -> bool {
    let FieldType::Sub(tree, _) = &field.ty else {
        return false;
    };
    // The form's classes first: they are a table look-up, the text below
    // renders the operand, and a form without a register answers alone.
    let value = field.extract(word);
    let form = isa
        .tree_lookup(*tree, value, generation)
        .unwrap_or(Some(*tree));
    let Some(form) = form else { return true };
    let registers = isa.form_classes(form).into_iter().any(|c| {
        matches!(c, OperandClass::Register { file, relative: false }
            if isa.regfiles[file].kind == crate::model::RegfileKind::Gpr)
    });
    if !registers {
        return true;
    }
    let scope = crate::display::Scope::new(isa, leaf, word, generation, None).unvalidated();
    // A form that is a register or an immediate by another field of the
    // instruction marks its immediate variant.
    let immediate = scope
        .field_variants(&field.name)
        .into_iter()
        .any(|(enc, j)| {
            isa.encodings[enc].whens[j].meta.iter().any(|(k, v, _)| {
                k == "immediate"
                    && (matches!(v, MetaValue::Ident(s) if s == "true")
                        || matches!(v, MetaValue::Int(n) if *n != 0))
            })
        });
    immediate || scope.field_text(&field.name).is_none_or(|t| t.is_empty())
}

/// The word with the register number inside operand `field` zeroed. The
/// number is what the form's fields marked `role = reg` hold; a register
/// form without such fields is all number except its pattern bits; a form
/// wrapping a register operand encoding is cleared inside that field.
pub(crate) fn clear_register(isa: &Isa, field: &Field, word: u64, generation: u32) -> u64 {
    let value = field.extract(word);
    field.insert(word, clear_in_form(isa, &field.ty, value, generation, 0))
}

fn clear_in_form(isa: &Isa, ty: &FieldType, value: u64, generation: u32, depth: usize) -> u64 {
    let FieldType::Sub(tree, _) = ty else {
        return 0;
    };
    let form = if isa.encodings[*tree].is_leaf() {
        Some(*tree)
    } else {
        isa.decode_in(*tree, value, generation)
    };
    let Some(form) = form else { return value };
    let mut numbered = false;
    let mut v = value;
    for c in isa.chain(form) {
        for f in &isa.encodings[c].plain.fields {
            let is_reg = f
                .meta
                .iter()
                .any(|(k, m)| k == "role" && matches!(m, MetaValue::Ident(r) if r == "reg"));
            if is_reg {
                v = f.insert(v, 0);
                numbered = true;
            }
        }
    }
    if numbered {
        return v;
    }
    if isa.meta(form, "regfile").is_some() {
        return value & isa.encodings[form].mask;
    }
    if depth < 8 {
        for c in isa.chain(form) {
            for f in level_fields(isa, c) {
                if matches!(f.ty, FieldType::Sub(..)) {
                    let inner = clear_in_form(isa, &f.ty, f.extract(value), generation, depth + 1);
                    if inner != f.extract(value) {
                        return f.insert(value, inner);
                    }
                }
            }
        }
    }
    value
}

/// The fields of encoding `enc`: its plain ones, then those of its
/// `when`s (a wrapper that shows its register only in some forms, as
/// cat5's first source, holds it inside a `when`).
fn level_fields(isa: &Isa, enc: EncId) -> impl Iterator<Item = &Field> {
    let e = &isa.encodings[enc];
    e.plain
        .fields
        .iter()
        .chain(e.whens.iter().flat_map(|w| w.level.fields.iter()))
}

fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

impl<S: MachineSpec> Opcode for MachineOp<S> {
    fn name(&self) -> &'static str {
        &self.info().name
    }

    fn write_attrs(&self, _result: Option<Type>, out: &mut dyn fmt::Write) -> fmt::Result {
        let info = self.info();
        for (key, f) in &info.modifiers {
            let v = f.extract(self.word);
            if v == f.default.unwrap_or(0) {
                continue;
            }
            if f.width == 1 && v == 1 {
                write!(out, " {key}")?;
            } else {
                write!(out, " {key}={v}")?;
            }
        }
        for (i, o) in info.operands.iter().enumerate() {
            let v = o.field.extract(self.word);
            if self.is_literal(i) {
                write!(out, " {}={v:#x}", o.key)?;
            } else if v != o.field.extract(info.base) {
                write!(out, " {}.bits={v:#x}", o.key)?;
            }
        }
        Ok(())
    }

    fn parse(name: &str, attrs: &[Attr<'_>], _result: Option<Type>) -> Result<Self, AttrError> {
        let t = S::table();
        let leaf = t
            .by_name(name)
            .ok_or_else(|| AttrError::on_name(format!("unknown instruction `{name}`")))?;
        let info = t.leaf(S::isa(), leaf);
        let mut op = Self::new(leaf, info.base, 0);
        for (n, a) in attrs.iter().enumerate() {
            let (key, value) = match a.key {
                Some(k) => (k, parse_number(a.value)),
                None => (a.value, Some(1)),
            };
            let value = value.ok_or_else(|| AttrError::on(n, format!("`{key}` needs a number")))?;
            let (field, literal) = if let Some(op_key) = key.strip_suffix(".bits") {
                let i = info.operands.iter().position(|o| o.key == op_key);
                let i = i.ok_or_else(|| {
                    AttrError::on(n, format!("`{name}` has no operand `{op_key}`"))
                })?;
                (&info.operands[i].field, None)
            } else if let Some(i) = info.operands.iter().position(|o| o.key == key) {
                if a.key.is_none() {
                    return Err(AttrError::on(n, format!("operand `{key}` needs a value")));
                }
                (&info.operands[i].field, Some(i))
            } else if let Some((_, f)) = info.modifiers.iter().find(|(k, _)| k == key) {
                if a.key.is_none() && f.width != 1 {
                    return Err(AttrError::on(
                        n,
                        format!("`{key}` is a {}-bit field: write `{key}=N`", f.width),
                    ));
                }
                (f, None)
            } else {
                return Err(AttrError::on(
                    n,
                    format!("`{name}` has no field or operand `{key}`"),
                ));
            };
            if value & !width_mask(field.width) != 0 {
                return Err(AttrError::on(
                    n,
                    format!("{value} does not fit in `{key}` ({} bits)", field.width),
                ));
            }
            op.word = field.insert(op.word, value);
            if let Some(i) = literal {
                op.literal |= 1 << i;
            }
        }
        Ok(op)
    }

    fn check(&self, sig: &Signature<'_>) -> Result<(), String> {
        let info = self.info();
        let sources = self.value_operands(Role::Src).count();
        if sig.operands.len() != sources {
            return Err(format!(
                "`{}` takes {sources} register operand(s) here, not {}",
                info.name,
                sig.operands.len()
            ));
        }
        let results = self.value_operands(Role::Dst).count();
        match (results, sig.result) {
            (0, Some(_)) => return Err(format!("`{}` has no register result", info.name)),
            (n, None) if n > 0 => return Err(format!("`{}` needs a result", info.name)),
            (n, Some(ty)) if n > 1 && usize::from(ty.lanes) != n => {
                return Err(format!(
                    "`{}` writes {n} registers: its result must have {n} lanes",
                    info.name
                ));
            }
            _ => {}
        }
        if sig.has_address && !info.operands.iter().any(|o| o.accepts_relative) {
            return Err(format!(
                "`{}` has no operand that is addressed relative to the address register",
                info.name
            ));
        }
        Ok(())
    }

    fn effects(&self) -> Effects {
        self.info().effects
    }

    /// Machine copies are not recognised yet: copy propagation runs on
    /// generic IR before instruction selection.
    fn is_plain_copy(&self) -> bool {
        false
    }

    fn select() -> Option<Self> {
        None
    }

    /// Registers hold bits: the operand checks above read widths and lanes,
    /// never a scalar's kind.
    fn joins_by_width() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word built from the spec whose operand holds one of the
    /// operand's [`OperandInfo::register_forms`] has the operand a
    /// register by the display scope too; returns how many such operands
    /// were checked.
    fn register_forms_agree(path: &str, generations: &[u32]) -> usize {
        let isa = crate::load(path).unwrap_or_else(|e| panic!("{e}"));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut checked = 0;
        for leaf in isa.instructions() {
            let info = leaf_info(&isa, leaf);
            for &g in generations {
                if !isa.encodings[leaf].generation.contains(g) {
                    continue;
                }
                for _ in 0..16 {
                    let mut pick = |max: u64| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if max == u64::MAX {
                            seed
                        } else {
                            seed % (max + 1)
                        }
                    };
                    let Some(word) = isa.build_word(leaf, g, &mut pick) else {
                        continue;
                    };
                    for o in &info.operands {
                        let FieldType::Sub(tree, _) = &o.field.ty else {
                            continue;
                        };
                        let form = isa.decode_in(*tree, o.field.extract(word), g);
                        if form.is_some_and(|f| o.register_forms.contains(&f)) {
                            assert!(
                                !is_literal_value(&isa, leaf, &o.field, word, g),
                                "{} {:#x} at {g}: {} is literal",
                                isa.encodings[leaf].name,
                                word,
                                o.field.name
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        checked
    }

    #[test]
    fn register_forms_are_registers_by_the_display_scope_too() {
        let specs = concat!(env!("CARGO_MANIFEST_DIR"), "/specs");
        let ir3 = register_forms_agree(
            &format!("{specs}/adreno/ir3.isa"),
            &[300, 400, 500, 600, 700],
        );
        let valhall = register_forms_agree(&format!("{specs}/mali/valhall.isa"), &[9, 10]);
        println!("register forms checked: ir3 {ir3}, valhall {valhall}");
        // ir3's general-register forms have `when`s (`a0.x`, `p0.x`)
        // and its cat2 operands are redefined by a `when`: both
        // qualify, as Valhall's plain forms and staging tuples do.
        assert!(ir3 > 0 && valhall > 0, "ir3 {ir3}, valhall {valhall}");
    }
}
