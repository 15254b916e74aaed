//! Syntax tree of one `.isa` file, as parsed, with spans. Names are not yet
//! resolved; see `model` for the checked form.

use crate::diag::Span;
use crate::expr::Expr;

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

pub type Name = Spanned<String>;

#[derive(Clone, Debug, Default)]
pub struct File {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Isa(IsaDecl),
    Import(Spanned<String>),
    Enum(EnumDecl),
    Expr(ExprDecl),
    Encoding(EncodingDecl),
    Latency(LatencyDecl),
    Regfile(RegfileDecl),
    /// `idiom NAME "TEXT" [gen RANGE];`
    Idiom(IdiomDecl),
    /// `machine { … }`: register files (see `semantics`).
    Machine(crate::semantics::MachineDecl),
    /// `semantics ENC { … }`.
    Semantics(crate::semantics::SemDecl),
}

#[derive(Clone, Debug)]
pub struct IsaDecl {
    pub doc: String,
    pub name: Name,
    pub width: Option<Spanned<u64>>,
    pub root: Option<Name>,
    pub generations: Vec<(Name, u64)>,
    pub meta: Vec<MetaDecl>,
    pub field_meta: Vec<MetaDecl>,
    /// `notes asserts;`: the disassembler's `\t; ` note also names
    /// `assert` bits that differ (not only set don't-care bits).
    pub notes_asserts: bool,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaType {
    Int,
    Bool,
    String,
    Ident,
    Idents,
    Class,
    Fields,
    /// The name of a register file declared by `regfile`.
    Regfile,
}

#[derive(Clone, Debug)]
pub struct MetaDecl {
    pub doc: String,
    pub key: Name,
    pub ty: MetaType,
    pub default: Option<Spanned<MetaValue>>,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum MetaValue {
    Int(i64),
    Str(crate::compact::Str),
    Ident(crate::compact::Str),
    List(crate::compact::Seq<crate::compact::Str>),
}

/// A metadata value in static tables (what `isa!`'s `Opcode::meta`
/// returns: generated, no spec at run time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaRef<'a> {
    Int(i64),
    Str(&'a str),
    Ident(&'a str),
    List(&'a [&'a str]),
}

impl MetaRef<'_> {
    /// The value as text: numbers in decimal, lists joined by `,`.
    pub fn text(&self) -> String {
        match self {
            MetaRef::Int(i) => i.to_string(),
            MetaRef::Str(s) | MetaRef::Ident(s) => s.to_string(),
            MetaRef::List(items) => items.join(","),
        }
    }
}

#[derive(Clone, Debug)]
pub struct EnumDecl {
    pub doc: String,
    pub name: Name,
    /// `enum NAME strict { … }`: values not listed are reserved.
    pub strict: bool,
    pub values: Vec<EnumValue>,
}

#[derive(Clone, Debug)]
pub struct EnumValue {
    pub doc: String,
    pub value: Spanned<u64>,
    pub display: String,
}

#[derive(Clone, Debug)]
pub struct ExprDecl {
    pub doc: String,
    pub name: Name,
    /// Parameter names of an expression function (`expr f(A, B) = …;`).
    pub params: Vec<Name>,
    pub expr: Expr,
}

#[derive(Clone, Debug)]
pub struct EncodingDecl {
    pub doc: String,
    pub name: Name,
    pub parent: Option<Name>,
    pub width: Option<Spanned<u64>>,
    pub body: Vec<BodyItem>,
}

/// A bit range, inclusive, `low <= high`.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRange {
    pub low: u32,
    pub high: u32,
}

impl BitRange {
    pub fn width(self) -> u32 {
        self.high - self.low + 1
    }
    pub fn mask(self) -> u64 {
        let w = self.width();
        let ones = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        ones << self.low
    }
}

#[derive(Clone, Debug)]
pub struct TypeRef {
    pub name: Name,
    pub args: Vec<TypeArg>,
    pub display: Option<Spanned<String>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeArg {
    Int(Spanned<u64>),
    Bind { param: Name, value: Name },
}

#[derive(Clone, Debug)]
pub enum PatternValue {
    /// Digits most significant first: `Some(bit)` or `None` for don't care.
    Bits(Vec<Option<bool>>),
    Int(u64),
    Any,
}

#[derive(Clone, Debug)]
pub enum GenBound {
    Num(u64),
    Named(Name),
}

#[derive(Clone, Debug)]
pub struct GenRangeAst {
    pub min: Option<GenBound>,
    pub max: Option<GenBound>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum BodyItem {
    Field {
        doc: String,
        name: Name,
        bits: Spanned<Vec<BitRange>>,
        ty: TypeRef,
        default: Option<Spanned<u64>>,
        meta: Vec<(Name, Spanned<MetaValue>)>,
    },
    Derived {
        doc: String,
        name: Name,
        width: Option<Spanned<u64>>,
        ty: TypeRef,
        expr: Expr,
    },
    Pattern {
        bits: Spanned<Vec<BitRange>>,
        value: Spanned<PatternValue>,
    },
    Assert {
        bits: Spanned<Vec<BitRange>>,
        value: Spanned<PatternValue>,
    },
    Display(Spanned<String>),
    When {
        doc: String,
        cond: Expr,
        body: Vec<BodyItem>,
        span: Span,
    },
    Gen(GenRangeAst),
    Mnemonic(Spanned<String>),
    Params(Vec<Name>),
    Meta {
        key: Name,
        value: Spanned<MetaValue>,
    },
    /// `overlaps A, B;`: leaves below this encoding may match the same
    /// words as leaves below `A` and `B` (such words decode to nothing).
    Overlaps(Vec<Name>),
    /// `check EXPR, "message";`: a validity rule.
    Check {
        expr: Expr,
        message: Spanned<String>,
    },
}

#[derive(Clone, Debug)]
pub struct LatencyDecl {
    pub classes: Vec<Name>,
    pub rules: Vec<LatencyRuleAst>,
    /// `precision P -> C = N;`: extra cycles when the consumer reads a
    /// register in the other precision (half/full) than it was written.
    pub precision: Vec<LatencyRuleAst>,
}

#[derive(Clone, Debug)]
pub struct LatencyRuleAst {
    /// `None` means `*`.
    pub producers: Option<Vec<Name>>,
    pub consumers: Option<Vec<Name>>,
    pub field: Option<Name>,
    pub cycles: u64,
    pub generation: Option<GenRangeAst>,
    pub span: Span,
}

/// `regfile NAME { … }`: a register file of the machine.
#[derive(Clone, Debug)]
pub struct RegfileDecl {
    pub doc: String,
    pub name: Name,
    pub kind: Option<Name>,
    pub unit: Option<Spanned<u64>>,
    /// `count N [gen RANGE];` in source order (first match wins).
    pub counts: Vec<(Spanned<u64>, Option<GenRangeAst>)>,
    /// `inside OTHER [gen RANGE];`
    pub inside: Vec<(Name, Option<GenRangeAst>)>,
    pub occupancy: Option<Expr>,
    /// `names PREFIX[.COMPONENTS] [from N];`
    pub names: Option<RegNames>,
    /// `latency CLASS;`: the latency class of a write to this file.
    pub latency: Option<Name>,
}

/// `idiom NAME "TEXT" [gen RANGE];`: an instruction a compiler builds for
/// a named purpose, as assembly text.
#[derive(Clone, Debug)]
pub struct IdiomDecl {
    pub doc: String,
    pub name: Name,
    pub text: Spanned<String>,
    pub generation: Option<GenRangeAst>,
}

/// How the disassembly names a register file's units: `names r.xyzw;`
/// (`r0.x`, `r0.y`, … four units per register), `names u;` (`u0`, `u1`,
/// …), `names a.xyzw from 1;` (numbering starts at `a1.x`).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RegNames {
    pub prefix: String,
    /// Component letters, one unit each; empty: one unit per register.
    pub comps: String,
    /// Number of the first register.
    pub first: u32,
}
