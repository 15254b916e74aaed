//! The checked, name-resolved form of a spec that the engine interprets.

use crate::ast::{BitRange, MetaType, MetaValue};
pub use crate::compact::{Seq, Str};
use crate::diag::{SourceMap, Span};
use crate::expr::{BinOp, Expr, ExprKind, MAX_EVAL_DEPTH};

/// Index into [`Isa::encodings`].
pub type EncId = usize;
/// Index into [`Isa::enums`].
pub type EnumId = usize;

/// Inclusive range of generations.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenRange {
    pub min: u32,
    pub max: u32,
}

impl GenRange {
    pub const ALL: GenRange = GenRange {
        min: 0,
        max: u32::MAX,
    };
    pub fn contains(self, g: u32) -> bool {
        self.min <= g && g <= self.max
    }
    pub fn intersect(self, o: GenRange) -> GenRange {
        GenRange {
            min: self.min.max(o.min),
            max: self.max.min(o.max),
        }
    }
    pub fn is_empty(self) -> bool {
        self.min > self.max
    }
}

impl std::fmt::Display for GenRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.min, self.max) {
            (0, u32::MAX) => write!(f, "all"),
            (a, u32::MAX) => write!(f, "{a}.."),
            (0, b) => write!(f, "..={b}"),
            (a, b) => write!(f, "{a}..={b}"),
        }
    }
}

/// How a field's value is shown and read back.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub enum FieldType {
    Uint,
    Int,
    Hex,
    /// `HEX`: upper-case hex digits, otherwise like `hex`.
    HexUpper,
    Offset,
    Uoffset,
    Float,
    Fixed(u32),
    Branch,
    AbsBranch,
    /// `bool`, optionally with the text shown when set.
    Bool(Option<Str>),
    /// `bool_inv "text"`: the text is shown when clear.
    BoolInv(Str),
    Enum(EnumId),
    /// A sub-encoding tree root and the params bound: (param, caller name).
    Sub(EncId, Seq<(Str, Str)>),
}

impl FieldType {
    pub fn describe(&self, isa: &Isa) -> String {
        match self {
            FieldType::Uint => "uint".into(),
            FieldType::Int => "int".into(),
            FieldType::Hex => "hex".into(),
            FieldType::HexUpper => "HEX".into(),
            FieldType::Offset => "offset".into(),
            FieldType::Uoffset => "uoffset".into(),
            FieldType::Float => "float".into(),
            FieldType::Fixed(r) => format!("fixed({r})"),
            FieldType::Branch => "branch".into(),
            FieldType::AbsBranch => "absbranch".into(),
            FieldType::Bool(None) => "bool".into(),
            FieldType::Bool(Some(s)) => format!("bool {s:?}"),
            FieldType::BoolInv(s) => format!("bool_inv {s:?}"),
            FieldType::Enum(e) => isa.enums[*e].name.to_string(),
            FieldType::Sub(e, binds) => {
                let mut s = isa.encodings[*e].name.to_string();
                if !binds.is_empty() {
                    let b: Vec<String> = binds
                        .iter()
                        .map(|(p, v)| {
                            if p == v {
                                p.to_string()
                            } else {
                                format!("{p} = {v}")
                            }
                        })
                        .collect();
                    s.push_str(&format!("({})", b.join(", ")));
                }
                s
            }
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Field {
    pub name: Str,
    pub doc: Str,
    pub span: Span,
    /// Least significant part first.
    pub ranges: Seq<BitRange>,
    pub width: u32,
    pub ty: FieldType,
    pub default: Option<u64>,
    pub meta: Seq<(Str, MetaValue)>,
}

impl Field {
    /// Gathers the field's value out of `word`.
    #[inline]
    pub fn extract(&self, word: u64) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        for r in &self.ranges {
            v |= ((word & r.mask()) >> r.low) << shift;
            shift += r.width();
        }
        v
    }

    /// Scatters `value` into the field's bits of `word`.
    pub fn insert(&self, word: u64, value: u64) -> u64 {
        let mut w = word;
        let mut shift = 0;
        for r in &self.ranges {
            let part = value.checked_shr(shift).unwrap_or(0);
            w = (w & !r.mask()) | ((part << r.low) & r.mask());
            shift += r.width();
        }
        w
    }

    pub fn mask(&self) -> u64 {
        self.ranges.iter().fold(0, |m, r| m | r.mask())
    }

    /// The word bits of this field holding `n` (expressions read a field
    /// as its raw bits), if `n` fits; `None` for sub-encodings.
    pub fn holding(&self, n: i64) -> Option<u64> {
        let fits = n >= 0 && (self.width >= 64 || (n as u64) >> self.width == 0);
        (fits && !matches!(self.ty, FieldType::Sub(..))).then(|| self.insert(0, n as u64))
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Derived {
    pub name: Str,
    pub doc: Str,
    pub span: Span,
    pub width: u32,
    pub ty: FieldType,
    pub expr: Expr,
}

/// Bits that must have a value when a variant is chosen.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Assert {
    pub mask: u64,
    pub value: u64,
    pub span: Span,
}

/// A validity rule: decoding fails with `message` where `expr` is 0.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Check {
    pub expr: Expr,
    pub message: Str,
    pub span: Span,
}

/// One piece of a display template.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub enum Piece {
    Lit(Str),
    /// `{NAME}` of a field/derived/param, with the span of the reference.
    Field(Str, Span),
    /// `{NAME}`: the leaf's mnemonic.
    Mnemonic,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Template {
    pub text: Str,
    pub pieces: Vec<Piece>,
    pub span: Span,
}

/// The items of one level (plain body or one `when` block).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default)]
pub struct Level {
    pub fields: Vec<Field>,
    pub deriveds: Vec<Derived>,
    pub display: Option<Template>,
    pub asserts: Vec<Assert>,
    pub checks: Vec<Check>,
    pub mnemonic: Option<Str>,
}

/// A name defined in a level.
#[derive(Clone, Copy, Debug)]
pub enum ItemRef<'a> {
    Field(&'a Field),
    Derived(&'a Derived),
}

impl<'a> ItemRef<'a> {
    pub fn ty(&self) -> &'a FieldType {
        match self {
            ItemRef::Field(f) => &f.ty,
            ItemRef::Derived(d) => &d.ty,
        }
    }
    pub fn width(&self) -> u32 {
        match self {
            ItemRef::Field(f) => f.width,
            ItemRef::Derived(d) => d.width,
        }
    }
}

impl Level {
    pub fn item(&self, name: &str) -> Option<ItemRef<'_>> {
        if let Some(f) = self.fields.iter().find(|f| f.name == name) {
            return Some(ItemRef::Field(f));
        }
        self.deriveds
            .iter()
            .find(|d| d.name == name)
            .map(ItemRef::Derived)
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct When {
    pub doc: Str,
    pub cond: Expr,
    pub level: Level,
    /// `meta KEY = VALUE;` of the variant: while it is active they
    /// shadow the encoding's own (`Isa::variant_meta`).
    pub meta: Vec<(Str, crate::ast::MetaValue, Span)>,
    pub span: Span,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Encoding {
    pub name: Str,
    pub doc: Str,
    pub span: Span,
    pub parent: Option<EncId>,
    pub root: EncId,
    pub width: u32,
    /// The body outside any `when`, and the `when`s: decoded on first
    /// use (most programs touch few encodings).
    pub plain: crate::compact::Lazy<Level>,
    pub whens: crate::compact::Lazy<Vec<When>>,
    /// This encoding's own `gen`, and the intersection with its ancestors'.
    pub own_gen: GenRange,
    pub generation: GenRange,
    /// Declared params (tree roots only).
    pub params: Vec<Str>,
    pub meta: Vec<(Str, MetaValue, Span)>,
    /// Encodings named by `overlaps` (same tree), with the name's span.
    pub overlaps: Vec<(EncId, Span)>,
    pub children: Vec<EncId>,
    /// For every encoding: 0/1 pattern bits of itself and its ancestors.
    pub mask: u64,
    pub match_bits: u64,
    /// Don't-care pattern bits of itself and its ancestors.
    pub dontcare: u64,
    /// Nesting depth: 0 for a tree root.
    pub depth: usize,
}

impl Encoding {
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct EnumDef {
    pub name: Str,
    pub doc: Str,
    pub span: Span,
    /// Values not listed are reserved (a decode error) rather than shown
    /// as decimal.
    pub strict: bool,
    /// (value, text, doc), decoded on first use.
    pub values: crate::compact::Lazy<Vec<(u64, Str, Str)>>,
}

impl EnumDef {
    pub fn display(&self, v: u64) -> Option<&str> {
        self.values
            .iter()
            .find(|(x, _, _)| *x == v)
            .map(|(_, s, _)| s.as_str())
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct NamedExpr {
    pub name: Str,
    pub doc: Str,
    /// Parameter names (empty for a plain named expression).
    pub params: Vec<Str>,
    /// Decoded on first use.
    pub expr: crate::compact::Lazy<Expr>,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct MetaKey {
    pub name: Str,
    pub doc: Str,
    pub ty: MetaType,
    pub default: Option<MetaValue>,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct LatencyRule {
    /// Class indices; `None` is `*`.
    pub producers: Option<Vec<usize>>,
    pub consumers: Option<Vec<usize>>,
    pub field: Option<Str>,
    pub cycles: u32,
    pub generation: GenRange,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default)]
pub struct Latency {
    pub classes: Vec<Str>,
    pub rules: Vec<LatencyRule>,
    /// `precision` rules: extra cycles when a register is read in the
    /// other precision (half/full) than it was written.
    pub precision: Vec<LatencyRule>,
}

impl Latency {
    pub fn class(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c == name)
    }

    /// Cycles between a producer of class `p` and a consumer of class `c`
    /// reading operand `field`, at generation `gen`: first matching rule.
    pub fn lookup(&self, p: usize, c: usize, field: Option<&str>, generation: u32) -> Option<u32> {
        self.rules
            .iter()
            .find(|r| {
                r.producers.as_ref().is_none_or(|v| v.contains(&p))
                    && r.consumers.as_ref().is_none_or(|v| v.contains(&c))
                    && r.field.as_deref().is_none_or(|f| Some(f) == field)
                    && r.generation.contains(generation)
            })
            .map(|r| r.cycles)
    }

    /// Extra cycles when a consumer of class `c` reads, in the other
    /// precision, a register a producer of class `p` wrote: first matching
    /// `precision` rule, 0 without one.
    pub fn precision_extra(&self, p: usize, c: usize, generation: u32) -> u32 {
        self.precision
            .iter()
            .find(|r| {
                r.producers.as_ref().is_none_or(|v| v.contains(&p))
                    && r.consumers.as_ref().is_none_or(|v| v.contains(&c))
                    && r.generation.contains(generation)
            })
            .map_or(0, |r| r.cycles)
    }
}

/// What a register file holds, for the passes that allocate it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegfileKind {
    /// General-purpose registers, allocated by register allocation.
    Gpr,
    /// Predicate (condition) registers.
    Predicate,
    /// Address registers used for relative addressing.
    Address,
    /// Uniform registers, shared by all threads, written by the driver.
    Uniform,
    /// Constant registers, written by the driver, read-only in the shader.
    Const,
}

impl RegfileKind {
    pub const ALL: [(&'static str, RegfileKind); 5] = [
        ("gpr", RegfileKind::Gpr),
        ("predicate", RegfileKind::Predicate),
        ("address", RegfileKind::Address),
        ("uniform", RegfileKind::Uniform),
        ("const", RegfileKind::Const),
    ];

    pub fn from_name(name: &str) -> Option<RegfileKind> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("gpr", |(n, _)| n)
    }
}

/// The name an `occupancy` expression uses for the units in use.
pub const OCCUPANCY_INPUT: &str = "REGS";

/// A register file (`regfile NAME { … }`).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Regfile {
    pub name: Str,
    pub doc: Str,
    pub span: Span,
    pub kind: RegfileKind,
    /// Bits in one allocation unit.
    pub unit: u32,
    /// Units available, by generation: first matching range wins.
    pub counts: Vec<(u32, GenRange)>,
    /// At these generations this file's units are the low and high parts
    /// of the named file's units (ir3's merged half/full registers).
    pub inside: Vec<(usize, GenRange)>,
    /// Threads in flight with `REGS` units in use (`None`: not limiting).
    pub occupancy: Option<Expr>,
    /// How the disassembly names the units (`None`: the file has no
    /// register names; simulators do not model it).
    pub names: Option<crate::ast::RegNames>,
    /// Latency class of a write to this file (index into the latency
    /// classes), when it differs from the writing instruction's.
    pub latency: Option<usize>,
}

impl Regfile {
    /// Units available at `generation`; `None` when the file does not
    /// exist there.
    pub fn count(&self, generation: u32) -> Option<u32> {
        self.counts
            .iter()
            .find(|(_, g)| g.contains(generation))
            .map(|(n, _)| *n)
    }

    /// The file (index into [`Isa::regfiles`]) whose units hold this one's
    /// at `generation`.
    pub fn inside(&self, generation: u32) -> Option<usize> {
        self.inside
            .iter()
            .find(|(_, g)| g.contains(generation))
            .map(|(f, _)| *f)
    }
}

/// A whole checked spec.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Isa {
    pub name: Str,
    pub doc: Str,
    pub width: u32,
    pub root: EncId,
    pub generations: Vec<(Str, u32)>,
    /// Each decoded on first use: a compile touches the encodings of the
    /// instructions it emits and their ancestors, not the hundreds of
    /// others.
    pub encodings: Vec<crate::compact::Lazy<Encoding>>,
    /// Per tree root (in encoding order): its leaves, in source order.
    /// Kept apart from the encodings so listing a tree's leaves decodes
    /// none of them.
    pub tree_leaves: Vec<(EncId, Vec<EncId>)>,
    pub enums: Vec<EnumDef>,
    pub exprs: Vec<NamedExpr>,
    pub latency: Latency,
    /// Register files, in source order.
    pub regfiles: Vec<Regfile>,
    /// `idiom`s, in source order (the first whose range holds a
    /// generation answers for it).
    pub idioms: Vec<Idiom>,
    pub meta_keys: Vec<MetaKey>,
    pub field_meta_keys: Vec<MetaKey>,
    /// The `\t; ` note names `assert` bits that differ too (`notes
    /// asserts;`); otherwise only set don't-care bits, as Mesa's isaspec
    /// decoder does.
    pub notes_asserts: bool,
    pub sources: SourceMap,
    /// Per tree root: its decision tree over its leaves.
    /// Decoded on first use (a program decodes words of one or two trees).
    pub decoders: Vec<(EncId, crate::compact::Lazy<crate::decode::DecisionTree>)>,
    /// Machine state and instruction semantics (`machine`, `semantics`).
    pub semantics: crate::semantics::LazySemantics,
    /// Per instruction whose semantics read some operand as a 64-bit
    /// value: those operand fields ([`crate::semantics::Semantics::wide_reads`]),
    /// derived once here so a compiler asking which register operands
    /// are register pairs does not decode the semantics.
    pub wide_reads: Vec<(EncId, Vec<Str>)>,
    /// What the `isa!` expansion derived from this model as code and
    /// static data, so a program neither decodes the decision trees nor
    /// every encoding to find one by name; `None` for a model loaded
    /// from text.
    #[serde(skip)]
    pub generated: Option<Generated>,
}

/// The parts of a model `isa!` generates as code and static data.
#[derive(Clone, Copy, Debug)]
pub struct Generated {
    /// The decision trees as code: `display::decode_tree`, generated from
    /// `decoders` ([`Isa::tree_lookup`]).
    pub trees: TreeLookup,
    /// Every encoding's `(name, id)`, sorted by name ([`Isa::encoding`]).
    pub encoding_names: &'static [(&'static str, EncId)],
}

/// A tree decoder: the leaf of the tree rooted at `root` that `word`
/// decodes to at `generation`, `None` outside when `root` has no tree.
pub type TreeLookup = fn(root: EncId, word: u64, generation: u32) -> Option<Option<EncId>>;

/// `idiom NAME "TEXT" [gen RANGE];`: the instruction a compiler builds
/// for the purpose `NAME` (an exchange of two registers, a bitwise xor),
/// as assembly text whose register operands the compiler replaces.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Idiom {
    pub name: Str,
    pub doc: Str,
    pub text: Str,
    pub generation: GenRange,
    /// Where the text is, for diagnostics.
    pub span: Span,
}

impl Isa {
    /// The idiom `name` at `generation`: the first declared one whose
    /// range holds it.
    pub fn idiom(&self, name: &str, generation: u32) -> Option<&Idiom> {
        self.idioms
            .iter()
            .find(|i| i.name == name && i.generation.contains(generation))
    }

    /// The `NAME == N` conjuncts of a `when` condition (through `&&` and
    /// named expressions without parameters): what must hold for the
    /// `when` to be active. Both assemblers fix those bits for a variant
    /// with that `when` active (`r<a0.x>` is OFFSET 0), where the text
    /// may not show them.
    pub fn when_equalities<'e>(&'e self, cond: &'e Expr) -> Vec<(&'e str, i64)> {
        fn walk<'e>(isa: &'e Isa, e: &'e Expr, depth: usize, out: &mut Vec<(&'e str, i64)>) {
            if depth > MAX_EVAL_DEPTH {
                return;
            }
            match &e.kind {
                ExprKind::Binary(BinOp::And, a, b) => {
                    walk(isa, a, depth + 1, out);
                    walk(isa, b, depth + 1, out);
                }
                ExprKind::Binary(BinOp::Eq, a, b) => match (&a.kind, &b.kind) {
                    (ExprKind::Name(n), ExprKind::Int(k))
                    | (ExprKind::Int(k), ExprKind::Name(n)) => {
                        out.push((n, *k));
                    }
                    _ => {}
                },
                ExprKind::Named(_, Some(i), args) if args.is_empty() => {
                    if let Some(named) = isa.exprs.get(*i).filter(|n| n.params.is_empty()) {
                        walk(isa, &named.expr, depth + 1, out);
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, cond, 0, &mut out);
        out
    }

    /// The encoding called `name`: through the generated name index when
    /// there is one, so no other encoding is decoded.
    pub fn encoding(&self, name: &str) -> Option<EncId> {
        match self.generated {
            Some(g) => {
                let names = g.encoding_names;
                let at = names.partition_point(|(n, _)| *n < name);
                names.get(at).filter(|(n, _)| *n == name).map(|(_, e)| *e)
            }
            None => self.encodings.iter().position(|e| e.name == name),
        }
    }

    /// Leaves of the tree rooted at `root`, in source order.
    pub fn leaves(&self, root: EncId) -> impl Iterator<Item = EncId> + '_ {
        self.tree_leaves
            .iter()
            .find(|(r, _)| *r == root)
            .map_or(&[][..], |(_, leaves)| leaves.as_slice())
            .iter()
            .copied()
    }

    /// The instructions: leaves of the `root` tree.
    pub fn instructions(&self) -> impl Iterator<Item = EncId> + '_ {
        self.leaves(self.root)
    }

    /// The chain from `enc` up to its tree root.
    pub fn chain(&self, enc: EncId) -> impl Iterator<Item = EncId> + '_ {
        std::iter::successors(Some(enc), move |e| self.encodings[*e].parent)
    }

    /// Text `{NAME}` prints for a leaf.
    pub fn mnemonic(&self, enc: EncId) -> &str {
        for e in self.chain(enc) {
            if let Some(m) = &self.encodings[e].plain.mnemonic {
                return m;
            }
        }
        &self.encodings[enc].name
    }

    /// Metadata value of `key` for `enc` (nearest definition, else default).
    pub fn meta(&self, enc: EncId, key: &str) -> Option<&MetaValue> {
        for e in self.chain(enc) {
            if let Some((_, v, _)) = self.encodings[e].meta.iter().find(|(k, _, _)| k == key) {
                return Some(v);
            }
        }
        self.meta_keys
            .iter()
            .find(|k| k.name == key)
            .and_then(|k| k.default.as_ref())
    }

    /// The generation number for a name declared in `generations`.
    pub fn generation(&self, name: &str) -> Option<u32> {
        self.generations
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// Whether an `overlaps` item (on `a` or `b` or an ancestor of either)
    /// accepts the two encodings matching the same word.
    pub fn overlap_declared(&self, a: EncId, b: EncId) -> bool {
        let names = |x: EncId, y: EncId| {
            self.chain(x).any(|d| {
                self.encodings[d]
                    .overlaps
                    .iter()
                    .any(|(o, _)| self.chain(y).any(|e| e == *o))
            })
        };
        names(a, b) || names(b, a)
    }

    /// The register file called `name`, as an index into `regfiles`.
    pub fn regfile(&self, name: &str) -> Option<usize> {
        self.regfiles.iter().position(|r| r.name == name)
    }

    /// Threads in flight when `regs` units of register file `file` are in
    /// use at `generation`, from the file's `occupancy` expression.
    pub fn occupancy(&self, file: usize, regs: u32, generation: u32) -> Option<u32> {
        let expr = self.regfiles.get(file)?.occupancy.as_ref()?;
        let env = OccupancyEnv {
            isa: self,
            regs,
            generation,
        };
        let v = expr.eval(&env, 0).ok()?;
        u32::try_from(v.max(0)).ok()
    }

    /// The value of the named expression `name` (a function of the spec,
    /// such as Valhall's `flow_waits(F)`) with its parameters bound to
    /// `args` at `generation`; `None` when there is no such expression,
    /// the argument count differs, or it names anything but its
    /// parameters, `gen` and other named expressions.
    pub fn call(&self, name: &str, args: &[i64], generation: u32) -> Option<i64> {
        let e = self.exprs.iter().find(|e| e.name == name)?;
        if e.params.len() != args.len() {
            return None;
        }
        let env = CallEnv {
            isa: self,
            params: &e.params,
            args,
            generation,
        };
        e.expr.eval(&env, 0).ok()
    }

    /// The leaf of the tree rooted at `root` that `word` decodes to at
    /// `generation` (inner `None`: no leaf matches), through the generated
    /// trees when there are; outer `None` when `root` has no tree.
    #[inline]
    pub fn tree_lookup(&self, root: EncId, word: u64, generation: u32) -> Option<Option<EncId>> {
        match self.generated {
            Some(g) => (g.trees)(root, word, generation),
            None => self.decoder(root).map(|d| d.lookup(word, generation)),
        }
    }

    /// [`Isa::tree_lookup`] with no tree read as no match.
    #[inline]
    pub fn decode_in(&self, root: EncId, word: u64, generation: u32) -> Option<EncId> {
        self.tree_lookup(root, word, generation).flatten()
    }

    /// The decision tree of the tree rooted at `root`.
    pub fn decoder(&self, root: EncId) -> Option<&crate::decode::DecisionTree> {
        self.decoders
            .iter()
            .find(|(r, _)| *r == root)
            .map(|(_, t)| &**t)
    }
}

/// What an `occupancy` expression sees: `REGS`, `gen` and named functions.
struct OccupancyEnv<'i> {
    isa: &'i Isa,
    regs: u32,
    generation: u32,
}

impl crate::expr::ExprEnv for OccupancyEnv<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        (name == OCCUPANCY_INPUT).then_some(i64::from(self.regs))
    }
    fn generation(&self) -> u32 {
        self.generation
    }
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)> {
        self.isa
            .exprs
            .get(index)
            .map(|e| (e.params.as_slice(), &*e.expr))
    }
}

/// The scope of [`Isa::call`]: the parameters and nothing else.
struct CallEnv<'i> {
    isa: &'i Isa,
    params: &'i [Str],
    args: &'i [i64],
    generation: u32,
}

impl crate::expr::ExprEnv for CallEnv<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        let k = self.params.iter().position(|p| p == name)?;
        self.args.get(k).copied()
    }
    fn generation(&self) -> u32 {
        self.generation
    }
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)> {
        self.isa
            .exprs
            .get(index)
            .map(|e| (e.params.as_slice(), &*e.expr))
    }
}
