//! Instruction semantics: the `machine { … }` register files and the
//! `semantics ENC { … }` blocks of a spec, resolved and type-checked.
//!
//! A semantics block belongs to an encoding and is inherited by every leaf
//! below it: a family block declares type aliases (`type F = FULL ? f32 :
//! f16;`) and operand modifiers (`mods DST half(DST_HALF) sat(SAT);`), a
//! leaf block says what is computed and written. On an operand
//! sub-encoding the block says where the operand lives (`reg r[GPR * 4 +
//! SWIZ];`, `imm …;`, `immf …;`, `use SRC;`) and which modifiers apply.
//! The language is described in `docs/isa-language.md` ("Semantics");
//! [`crate::gen_sim`] turns it into a simulator and [`crate::sim`] holds
//! the primitives it calls.

use crate::ast::Name;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::expr::{Expr, ExprKind};
use crate::model::{EncId, FieldType, Isa};

/// A register file as the simulator sees it: a `regfile` with `names`,
/// with the file declared `inside` it as its half view.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct RegFile {
    /// The `regfile` name (`gpr`), as semantics blocks name it.
    pub name: String,
    /// Disassembly naming (`r.xyzw`).
    pub names: crate::ast::RegNames,
    /// Units (components) in the file: the largest `count`.
    pub len: u32,
    /// Bits per unit (1..=32).
    pub bits: u32,
    /// The file whose units are the low (even) and high (odd) halves of
    /// this one's (ir3's merged half registers).
    pub half: Option<HalfView>,
    /// One copy shared by all threads (`kind const` / `kind uniform`): an
    /// instruction that writes it (ir3's `stc`) writes it for all.
    pub uniform: bool,
    /// Latency class of writes to the file, when the file declares one.
    pub latency: Option<usize>,
}

/// The half-precision view of a [`RegFile`].
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct HalfView {
    pub name: String,
    pub names: crate::ast::RegNames,
    /// Half units in the view.
    pub len: u32,
}

impl RegFile {
    /// Components in the file.
    pub fn len(&self) -> u32 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A `machine { … }` item as parsed.
#[derive(Clone, Debug, Default)]
pub struct MachineDecl {
    /// `sync meta KEY;`: the per-instruction metadata key (an ident) that
    /// names the sync kind a consumer must wait for (`none`: no wait).
    pub sync_key: Option<Name>,
}

/// Operand modifiers (`mods FIELD half(E) abs(E) …;` and operand blocks).
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mod {
    /// The operand is in the half-precision view of its file.
    Half,
    /// Absolute value on read (float: clear sign; signed int: |x|).
    Abs,
    /// Negate on read (float: flip sign; signed: 0 - x; unsigned: !x).
    Neg,
    /// Under `(rptN)` the operand advances one component per repetition.
    Repeat,
    /// Clamp float results to [0, 1] on write (NaN gives 0).
    Sat,
    /// Lane selection on read: the value of `E` describes which piece of
    /// the register feeds each lane (see `lathe_isa::sim::swizzle`).
    Swz,
    /// 16-bit halves of the destination written (bit i: half i; 0: all).
    Wmask,
    /// Clamp float results to [0, +inf) on write (NaN gives 0).
    ClampPos,
    /// Clamp float results to [-1, 1] on write (NaN gives -1).
    ClampSnorm,
}

impl Mod {
    pub fn name(self) -> &'static str {
        match self {
            Mod::Half => "half",
            Mod::Abs => "abs",
            Mod::Neg => "neg",
            Mod::Repeat => "repeat",
            Mod::Sat => "sat",
            Mod::Swz => "swz",
            Mod::Wmask => "wmask",
            Mod::ClampPos => "clamp_pos",
            Mod::ClampSnorm => "clamp_snorm",
        }
    }
    pub fn from_name(s: &str) -> Option<Mod> {
        Some(match s {
            "half" => Mod::Half,
            "abs" => Mod::Abs,
            "neg" => Mod::Neg,
            "repeat" => Mod::Repeat,
            "sat" => Mod::Sat,
            "swz" => Mod::Swz,
            "wmask" => Mod::Wmask,
            "clamp_pos" => Mod::ClampPos,
            "clamp_snorm" => Mod::ClampSnorm,
            _ => return None,
        })
    }
}

/// One statement of a semantics block.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum Stmt {
    /// `if (EXPR) { … } else { … }` on field values (decided per
    /// instruction word, not per thread).
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// `type NAME = C1 ? A : C2 ? B : D;` (or just `type NAME = A;`):
    /// the first choice whose condition holds.
    Type {
        name: Name,
        choices: Vec<(Option<Expr>, Name)>,
    },
    /// `mods FIELD half(E) …;` — modifiers of an operand field.
    Mods { field: Name, mods: Vec<(Mod, Expr)> },
    /// Operand location: `reg FILE[ADDR[K] + INDEX];`
    Reg {
        file: Name,
        addr: Option<(Name, Expr)>,
        index: Expr,
    },
    /// Operand location: an integer (`imm`) or float-bits (`immf`) immediate.
    Imm { float: bool, value: Expr },
    /// Operand location: that of the sub-encoding field named.
    Use(Name),
    /// Operand location: raw register bits in the instruction (`immr
    /// EXPR;`), read as a register holding them would be.
    ImmBits(Expr),
    /// Operand location: raw register bits spelled by the display text of
    /// an enum field (`immt FIELD;`: the entry `"0x3F800000"` is those
    /// bits), so a table of constants is written once, in its enum.
    ImmText(Name),
    /// `let NAME = VALUE;`
    Let { name: Name, value: SExpr },
    /// `do NAME(ARGS);` — control flow effects.
    Effect {
        name: Name,
        args: Vec<SArg>,
        span: Span,
    },
    /// `FIELD = VALUE;` — write an operand; `FIELD[K] = VALUE;` writes
    /// register `K` (a field expression) of the group starting at it.
    Write {
        dst: Name,
        index: Option<Expr>,
        value: SExpr,
    },
}

/// A typed value expression (per thread).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct SExpr {
    pub kind: SExprKind,
    pub span: Span,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum SExprKind {
    /// `FIELD as T`: read an operand after its modifiers.
    Read {
        field: Name,
        ty: Name,
    },
    /// `FILE[INDEX] as T`: read a register named by a field expression.
    RegRead {
        file: Name,
        index: Expr,
        ty: Name,
    },
    /// `FIELD[K] as T`: read register `K` (a field expression) of the
    /// group starting at an operand, after its modifiers (written like a
    /// register read; [`resolve`] tells them apart by the name).
    Member {
        field: Name,
        index: Expr,
        ty: Name,
    },
    /// `1.5 as T`, `3 as T`, `0x3f800000 as T` (raw bits).
    Lit {
        text: String,
        ty: Name,
    },
    /// A `let` value (or a type name, as the last argument of `cvt`).
    Local(Name),
    Call(Name, Vec<SArg>),
    /// `c ? a : b` per thread.
    Select(Box<SExpr>, Box<SExpr>, Box<SExpr>),
    /// `if (EXPR) a else b` on field values.
    Static(Expr, Box<SExpr>, Box<SExpr>),
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum SArg {
    Value(SExpr),
    /// `[EXPR]`: a field expression (constant per instruction word).
    Static(Expr),
}

/// A `semantics ENC { … }` item as parsed.
#[derive(Clone, Debug)]
pub struct SemDecl {
    pub doc: String,
    pub enc: Name,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// A resolved semantics block.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct SemBlock {
    pub enc: EncId,
    pub doc: String,
    pub body: crate::compact::Lazy<Vec<Stmt>>,
    pub span: Span,
}

/// The machine and semantics of a spec.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default)]
pub struct Semantics {
    pub files: Vec<RegFile>,
    /// See [`MachineDecl::sync_key`].
    pub sync_key: Option<String>,
    pub blocks: Vec<SemBlock>,
}

/// A spec's [`Semantics`], kept in their compact form until first used:
/// only the simulators and the checks that read effects need them, so a
/// plain compile that reads the spec model back does not decode them.
pub type LazySemantics = crate::compact::Lazy<Semantics>;

/// Value types of the semantics language.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    F32,
    F16,
    U32,
    U16,
    S32,
    S16,
    Bool,
    U8,
    S8,
    U64,
    S64,
    V2F16,
    V2U16,
    V2S16,
    V4U8,
    V4S8,
}

impl Ty {
    pub const ALL: [Ty; 16] = [
        Ty::F32,
        Ty::F16,
        Ty::U32,
        Ty::U16,
        Ty::S32,
        Ty::S16,
        Ty::Bool,
        Ty::U8,
        Ty::S8,
        Ty::U64,
        Ty::S64,
        Ty::V2F16,
        Ty::V2U16,
        Ty::V2S16,
        Ty::V4U8,
        Ty::V4S8,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::F16 => "f16",
            Ty::U32 => "u32",
            Ty::U16 => "u16",
            Ty::S32 => "s32",
            Ty::S16 => "s16",
            Ty::Bool => "bool",
            Ty::U8 => "u8",
            Ty::S8 => "s8",
            Ty::U64 => "u64",
            Ty::S64 => "s64",
            Ty::V2F16 => "v2f16",
            Ty::V2U16 => "v2u16",
            Ty::V2S16 => "v2s16",
            Ty::V4U8 => "v4u8",
            Ty::V4S8 => "v4s8",
        }
    }
    pub fn from_name(s: &str) -> Option<Ty> {
        Ty::ALL.into_iter().find(|t| t.name() == s)
    }
    /// Floats, and vectors of float lanes.
    pub fn is_float(self) -> bool {
        matches!(self.scalar(), Ty::F32 | Ty::F16)
    }
    /// Integers, and vectors of integer lanes.
    pub fn is_int(self) -> bool {
        matches!(
            self.scalar(),
            Ty::U32 | Ty::U16 | Ty::S32 | Ty::S16 | Ty::U8 | Ty::S8 | Ty::U64 | Ty::S64
        )
    }
    pub fn is_signed(self) -> bool {
        matches!(self.scalar(), Ty::S32 | Ty::S16 | Ty::S8 | Ty::S64)
    }
    /// The lane type of a vector (`v2f16` → `f16`); None for scalars.
    pub fn elem(self) -> Option<Ty> {
        Some(match self {
            Ty::V2F16 => Ty::F16,
            Ty::V2U16 => Ty::U16,
            Ty::V2S16 => Ty::S16,
            Ty::V4U8 => Ty::U8,
            Ty::V4S8 => Ty::S8,
            _ => return None,
        })
    }
    /// The type itself, or a vector's lane type.
    pub fn scalar(self) -> Ty {
        self.elem().unwrap_or(self)
    }
    /// Lanes of a vector (1 for scalars).
    pub fn lanes(self) -> usize {
        match self {
            Ty::V2F16 | Ty::V2U16 | Ty::V2S16 => 2,
            Ty::V4U8 | Ty::V4S8 => 4,
            _ => 1,
        }
    }
    /// The vector of `n` lanes of `self`.
    pub fn vector(self, n: usize) -> Option<Ty> {
        Ty::ALL
            .into_iter()
            .find(|v| v.elem() == Some(self) && v.lanes() == n)
    }
}

/// A type as the checker sees it: concrete, or an alias whose concrete
/// choice depends on the instruction word (kept distinct: `F` and `f32`
/// do not mix even where `F` may be `f32`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TyRef {
    Concrete(Ty),
    Alias(String, Vec<Ty>),
}

impl TyRef {
    fn choices(&self) -> Vec<Ty> {
        match self {
            TyRef::Concrete(t) => vec![*t],
            TyRef::Alias(_, v) => v.clone(),
        }
    }
    pub fn text(&self) -> String {
        match self {
            TyRef::Concrete(t) => t.name().into(),
            TyRef::Alias(n, _) => n.clone(),
        }
    }
}

/// Which types a primitive argument accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Float,
    Int,
    Signed,
    /// Integers and bool (bitwise operations).
    Bits,
}

impl Class {
    fn accepts(self, t: Ty) -> bool {
        match self {
            Class::Float => t.is_float(),
            Class::Int => t.is_int(),
            Class::Signed => t.is_signed(),
            Class::Bits => t.is_int() || t == Ty::Bool,
        }
    }
    fn text(self) -> &'static str {
        match self {
            Class::Float => "a float",
            Class::Int => "an integer",
            Class::Signed => "a signed integer",
            Class::Bits => "an integer or bool",
        }
    }
}

/// The shape of a primitive.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `n` values of one type of the class; the result has that type.
    Same(usize, Class),
    /// A transcendental approximation: one float and the `[ULP]` bound.
    Approx,
    /// Two values of one numeric type and four static flags; bool result.
    Compare,
    /// A value and a type name: value conversion / bit reinterpretation.
    Convert,
    /// `n` values of one type of the class, then one static argument
    /// (a rounding mode, a flag); the result has that type.
    SameStatic(usize, Class, usize),
    /// `cvtr(x, T, [MODE])`.
    ConvertRounded,
    /// `lane(v, [K])`: a vector's lane.
    Lane,
    /// `vec2(a, b)` / `vec4(a, b, c, d)`: a vector from lanes.
    MakeVector(usize),
    /// `ldexp(x, n)`: a float and an integer; the float's type.
    Ldexp,
    /// `frexpe(x)`: a float; s32.
    FloatToS32,
    /// `num([E], T)`: a field expression's value as a number of type T.
    Num,
    /// `first_cluster_but_last([N])`: bool, one static argument.
    Cluster,
    /// `shuffle(A as T, lane, fallback)`: an operand read in another thread.
    Shuffle,
    /// `ballot(c)`: a bool of every active thread as a u32 mask.
    Ballot,
    /// `thread()`: the thread's index in the group (u32).
    Thread,
}

/// Every primitive of the language: name, shape, and what it computes
/// (the text appears in the generated docs).
pub const PRIMITIVES: &[(&str, &str)] = &[
    ("fadd", "IEEE-754 addition, round to nearest even"),
    ("fsub", "IEEE-754 subtraction, round to nearest even"),
    ("fmul", "IEEE-754 multiplication, round to nearest even"),
    ("ffma", "fused multiply-add (one rounding)"),
    (
        "fmin",
        "minimum; a NaN operand gives the other one (IEEE minNum)",
    ),
    (
        "fmax",
        "maximum; a NaN operand gives the other one (IEEE maxNum)",
    ),
    ("fneg", "sign flip"),
    ("fabs", "sign clear"),
    ("ffloor", "round toward -inf"),
    ("fceil", "round toward +inf"),
    ("ftrunc", "round toward zero"),
    ("frndne", "round to nearest, ties to even"),
    ("frndaz", "round to nearest, ties away from zero"),
    ("fsign", "-1, 0 or 1 (signed zero kept, NaN gives 0)"),
    ("fsat", "clamp to [0, 1], NaN gives 0"),
    ("rcp", "1/x, declared ULP bound"),
    ("rsq", "1/sqrt(x), declared ULP bound"),
    ("sqrt", "sqrt(x), declared ULP bound"),
    ("log2", "log2(x), declared ULP bound"),
    ("exp2", "2^x, declared ULP bound"),
    ("sin", "sin(x), declared ULP bound"),
    ("cos", "cos(x), declared ULP bound"),
    ("iadd", "wrapping addition"),
    ("isub", "wrapping subtraction"),
    ("imul", "wrapping multiplication (low bits)"),
    (
        "imul24",
        "product of the low 24 bits (sign-extended for signed types)",
    ),
    ("imin", "minimum (signedness of the type)"),
    ("imax", "maximum (signedness of the type)"),
    ("ineg", "two's complement negation"),
    ("iabs", "absolute value (wrapping)"),
    ("iand", "bitwise and"),
    ("ior", "bitwise or"),
    ("ixor", "bitwise xor"),
    ("inot", "bitwise not"),
    ("ishl", "shift left; the count is taken modulo the width"),
    (
        "ishr",
        "shift right, arithmetic for signed types; count modulo the width",
    ),
    ("clz", "leading zero bits"),
    ("cls", "leading bits equal to the sign bit"),
    ("popcount", "set bits"),
    ("bitrev", "bit reversal"),
    (
        "compare",
        "compare(a, b, [LT], [EQ], [GT], [UNORDERED]): true when the relation of a to b is one of the flagged ones",
    ),
    (
        "cvt",
        "cvt(x, T): value conversion (float rounding to nearest even; float to integer rounds toward zero and saturates, NaN gives 0; bool is 1/0)",
    ),
    (
        "bitcast",
        "bitcast(x, T): the same bits (zero-extended or truncated)",
    ),
    (
        "faddr",
        "faddr(a, b, [MODE]): addition rounded with MODE (0 nearest even, 1 toward +inf, 2 toward -inf, 3 toward zero)",
    ),
    (
        "fsubr",
        "fsubr(a, b, [MODE]): subtraction rounded with MODE",
    ),
    (
        "fmulr",
        "fmulr(a, b, [MODE]): multiplication rounded with MODE",
    ),
    (
        "ffmar",
        "ffmar(a, b, c, [MODE]): fused multiply-add, one rounding with MODE",
    ),
    (
        "cvtr",
        "cvtr(x, T, [MODE]): value conversion rounded with MODE (to an integer: then saturated, NaN gives 0)",
    ),
    (
        "iaddsat",
        "addition clamped to the type's range (its signedness)",
    ),
    (
        "isubsat",
        "subtraction clamped to the type's range (its signedness)",
    ),
    (
        "ihadd",
        "ihadd(a, b, [UP]): (a + b + UP) >> 1 without overflow",
    ),
    ("ldexp", "ldexp(x, n): x * 2^n (n an integer), rounded once"),
    (
        "frexpm",
        "mantissa m of x = m * 2^e, 0.5 <= |m| < 1 (zero, inf, NaN unchanged)",
    ),
    (
        "frexpe",
        "exponent e of x = m * 2^e as s32 (0 for zero, inf, NaN)",
    ),
    (
        "fflush",
        "fflush(x, [FTZ], [INF], [NAN]): subnormals to signed zero (FTZ), infinities to the largest finite value (INF), NaN to +0 (NAN = 1) or a quiet NaN (NAN = 2)",
    ),
    ("lane", "lane(v, [K]): lane K of a vector"),
    (
        "num",
        "num([E], T): the integer value of a field expression as T",
    ),
    (
        "imulsat",
        "multiplication clamped to the type's range (its signedness)",
    ),
    ("vec2", "vec2(a, b): a two-lane vector (lane 0 first)"),
    (
        "shuffle",
        "shuffle(A as T, l, x): operand A as thread l of the group read it before this instruction; x when thread l is outside the group or not active",
    ),
    (
        "thread",
        "thread(): this thread's index in the group of threads in lockstep (u32, 0 first)",
    ),
    (
        "ballot",
        "ballot(c): u32 mask, bit i set when thread i of the group is active and c holds for it",
    ),
    (
        "vec4",
        "vec4(a, b, c, d): a four-lane vector (lane 0 first)",
    ),
    (
        "first_cluster_but_last",
        "first_cluster_but_last([N]): true in the active threads of the first N-thread cluster that has one, except its last active thread",
    ),
];

fn shape(name: &str) -> Option<Shape> {
    Some(match name {
        "fadd" | "fsub" | "fmul" | "fmin" | "fmax" => Shape::Same(2, Class::Float),
        "ffma" => Shape::Same(3, Class::Float),
        "fneg" | "fabs" | "ffloor" | "fceil" | "ftrunc" | "frndne" | "frndaz" | "fsign"
        | "fsat" => Shape::Same(1, Class::Float),
        "rcp" | "rsq" | "sqrt" | "log2" | "exp2" | "sin" | "cos" => Shape::Approx,
        "iadd" | "isub" | "imul" | "imul24" | "imin" | "imax" | "ishl" | "ishr" => {
            Shape::Same(2, Class::Int)
        }
        "ineg" | "clz" | "cls" | "popcount" | "bitrev" => Shape::Same(1, Class::Int),
        "iabs" => Shape::Same(1, Class::Signed),
        "iand" | "ior" | "ixor" => Shape::Same(2, Class::Bits),
        "inot" => Shape::Same(1, Class::Bits),
        "compare" => Shape::Compare,
        "cvt" | "bitcast" => Shape::Convert,
        "faddr" | "fsubr" | "fmulr" => Shape::SameStatic(2, Class::Float, 1),
        "ffmar" => Shape::SameStatic(3, Class::Float, 1),
        "fflush" => Shape::SameStatic(1, Class::Float, 3),
        "frexpm" => Shape::Same(1, Class::Float),
        "iaddsat" | "isubsat" | "imulsat" => Shape::Same(2, Class::Int),
        "num" => Shape::Num,
        "ihadd" => Shape::SameStatic(2, Class::Int, 1),
        "cvtr" => Shape::ConvertRounded,
        "lane" => Shape::Lane,
        "vec2" => Shape::MakeVector(2),
        "vec4" => Shape::MakeVector(4),
        "ldexp" => Shape::Ldexp,
        "frexpe" => Shape::FloatToS32,
        "shuffle" => Shape::Shuffle,
        "ballot" => Shape::Ballot,
        "thread" => Shape::Thread,
        "first_cluster_but_last" => Shape::Cluster,
        _ => return None,
    })
}

/// Control-flow effects (`do NAME(…);`): name, (value args, static args).
pub const EFFECTS: &[(&str, usize, usize, &str)] = &[
    (
        "wait",
        1,
        1,
        "wait(KIND, [E]): when E holds, results pending on sync KIND are ready before this instruction reads",
    ),
    (
        "repeat",
        0,
        1,
        "repeat([N]): the instruction runs N + 1 times, one cycle each; `repeat` operands advance",
    ),
    (
        "stall",
        0,
        1,
        "stall([N]): N idle cycles after the instruction",
    ),
    (
        "jump",
        0,
        1,
        "jump([OFFSET]): continue at this instruction + OFFSET",
    ),
    (
        "branch",
        1,
        1,
        "branch(c, [OFFSET]): threads where c holds continue at this instruction + OFFSET",
    ),
    (
        "call",
        0,
        1,
        "call([OFFSET]): push the next instruction as the return address, continue at this instruction + OFFSET",
    ),
    (
        "ret",
        0,
        0,
        "ret(): continue at the return address the last call pushed",
    ),
    ("end", 0, 0, "end(): the thread stops"),
    (
        "goto",
        2,
        0,
        "goto(c, i): threads where c holds continue at instruction index i (a scalar integer value: an indirect branch)",
    ),
    (
        "signal",
        1,
        1,
        "signal(KIND, [E]): when E holds, the registers this instruction writes stay pending on sync KIND until a `wait` for it",
    ),
    (
        "nop",
        0,
        0,
        "nop(): nothing (the instruction only takes its cycles)",
    ),
    (
        "kill",
        1,
        0,
        "kill(c): threads where c holds are discarded (they stop)",
    ),
    (
        "predicate",
        1,
        0,
        "predicate(c): until `predicate_end`, threads where c does not hold execute instructions without effect",
    ),
    (
        "predicate_end",
        0,
        0,
        "predicate_end(): every thread takes effect again",
    ),
    (
        "unmodelled",
        0,
        0,
        "unmodelled(): a form the simulator does not model yet; it stops with `unsupported:` (the instruction does not count as covered)",
    ),
    (
        "undefined",
        0,
        0,
        "undefined(): the word asks for what the documentation leaves undefined (a reserved modifier value); the simulator stops with an error",
    ),
    (
        "undocumented",
        0,
        0,
        "undocumented(): no public source says what the instruction (or, under an `if`, that form of it) computes; the simulator stops with `undocumented:`; the block's doc comment says what is known",
    ),
];

/// Keyword sets of the I/O effects (the run-time enums of
/// [`crate::sim_io`] name them, so spec and simulator agree).
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keywords {
    Space,
    Atomic,
    Texture,
    Interp,
    Message,
}

impl Keywords {
    pub fn names(self) -> Vec<&'static str> {
        use crate::sim_io::{AtomicOp, INTERP_MODES, MsgKind, Space, TexOp};
        match self {
            Keywords::Space => Space::ALL.iter().map(|s| s.name()).collect(),
            Keywords::Atomic => AtomicOp::ALL.iter().map(|s| s.name()).collect(),
            Keywords::Texture => TexOp::ALL.iter().map(|s| s.name()).collect(),
            Keywords::Interp => INTERP_MODES.to_vec(),
            Keywords::Message => MsgKind::ALL.iter().map(|s| s.name()).collect(),
        }
    }
    /// The index of `name` in the run-time enum's `ALL`.
    pub fn index(self, name: &str) -> Option<usize> {
        self.names().iter().position(|n| *n == name)
    }
}

/// How many components a register-group argument of an I/O effect covers.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupCount {
    /// The value of the `[…]` argument after it.
    Next,
    /// The set bits of the `[…]` argument after it (a write mask).
    NextBits,
    Fixed(u32),
}

/// Argument kinds of the I/O effects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoArg {
    Keyword(Keywords),
    /// A register group the effect writes: an operand field.
    Out(GroupCount),
    /// A register group the effect reads: an operand field, or `none`.
    In(GroupCount),
    /// A per-thread integer value.
    Value,
    /// A field expression in `[…]`.
    Static,
}

/// Effects that talk to the rest of the GPU through `lathe_isa::sim::GpuIo`
/// (see `docs/isa-language.md`, "I/O effects"): name, arguments, meaning.
pub const IO_EFFECTS: &[(&str, &[IoArg], &str)] = {
    use GroupCount::*;
    use IoArg::*;
    &[
        (
            "load",
            &[
                Keyword(Keywords::Space),
                Out(Next),
                Static,
                Value,
                Value,
                Static,
            ],
            "load(SPACE, DST, [COUNT], BINDING, ADDR, [BYTES]): COUNT elements of BYTES bytes from ADDR, ADDR + BYTES, … of buffer BINDING in SPACE into the register group at DST (zero-extended)",
        ),
        (
            "store",
            &[
                Keyword(Keywords::Space),
                In(Next),
                Static,
                Value,
                Value,
                Static,
            ],
            "store(SPACE, SRC, [COUNT], BINDING, ADDR, [BYTES]): the low BYTES bytes of COUNT registers from SRC to ADDR, ADDR + BYTES, …",
        ),
        (
            "atomic",
            &[
                Keyword(Keywords::Space),
                Keyword(Keywords::Atomic),
                Out(Fixed(1)),
                Value,
                Value,
                Value,
                Value,
            ],
            "atomic(SPACE, OP, DST, BINDING, ADDR, DATA, COMPARE): 32-bit read-modify-write at ADDR; DST gets the old value",
        ),
        (
            "varying",
            &[
                Keyword(Keywords::Interp),
                Out(Next),
                Static,
                Value,
                In(Fixed(2)),
            ],
            "varying(MODE, DST, [COUNT], SLOT, IJ): varying components SLOT, SLOT + 1, … (flat, or barycentric at the two f32 registers from IJ; IJ is `none` for flat)",
        ),
        (
            "texture",
            &[
                Keyword(Keywords::Texture),
                Out(NextBits),
                Static,
                In(Next),
                Static,
                In(Next),
                Static,
                Value,
                Value,
            ],
            "texture(OP, DST, [WRMASK], COORDS, [N], EXTRA, [M], TEXTURE, SAMPLER): the components WRMASK selects, in consecutive registers from DST",
        ),
        (
            "texture_values",
            &[
                Keyword(Keywords::Texture),
                Out(NextBits),
                Static,
                Static,
                Value,
                Value,
                Value,
                Value,
                Value,
                Static,
                Value,
                Value,
                Value,
            ],
            "texture_values(OP, DST, [WRMASK], [N], C0, C1, C2, C3, C4, [M], E, TEXTURE, SAMPLER): as `texture`, with the coordinates the first N of the values C0…C4 and the extra value E when M is 1 (raw bits), for an ISA whose registers hold them in another form",
        ),
        ("barrier", &[], "barrier(): the thread arrives at a barrier"),
        (
            "emit",
            &[],
            "emit(): the thread emits a vertex (geometry shaders)",
        ),
        (
            "cut",
            &[],
            "cut(): the thread ends the primitive (geometry shaders)",
        ),
        (
            "message",
            &[
                Keyword(Keywords::Message),
                Out(Next),
                Static,
                In(Next),
                Static,
                Value,
                Value,
                Value,
            ],
            "message(KIND, DST, [N], SRC, [M], A, B, C): a message to a fixed-function unit: M registers from SRC go out, N registers from DST come back (either group may be `none`); KIND is attribute (A index, B vertex, C instance), atest (A coverage, B alpha as f32 bits, C the ATEST datum), blend (A render target, B coverage; SRC the colour), frag_coord (the fragment's x, y, z, 1/w from component A), point_coord (the point-sprite x, y), texel_address (three words: the 64-bit address and the conversion word of the texel at 16-bit coordinates A (x, y) and B (z or sample, layer) of image descriptor C) convert_store (SRC stored at the 64-bit address A as conversion word B says), buffer_address (two words: the 64-bit address of structure A of the buffer descriptor B names) or texel_load (the texel at A, B of image descriptor C as texel_address addresses it)",
        ),
        (
            "output",
            &[In(Next), Static, Value],
            "output(SRC, [COUNT], TARGET): COUNT registers from SRC as components 0, 1, … of output TARGET",
        ),
    ]
};

/// The I/O effect named `name`: its arguments.
pub fn io_effect(name: &str) -> Option<&'static [IoArg]> {
    IO_EFFECTS.iter().find(|e| e.0 == name).map(|e| e.1)
}

impl Semantics {
    /// The register file named `name`, or the full file whose half view
    /// it is: (file index, half).
    pub fn file(&self, name: &str) -> Option<(usize, bool)> {
        self.files.iter().enumerate().find_map(|(i, f)| {
            if f.name == name {
                Some((i, false))
            } else if f.half.as_ref().is_some_and(|h| h.name == name) {
                Some((i, true))
            } else {
                None
            }
        })
    }

    /// Blocks on `enc` and its ancestors, root-most first.
    pub fn chain<'a>(&'a self, isa: &'a Isa, enc: EncId) -> Vec<&'a SemBlock> {
        let mut chain: Vec<EncId> = isa.chain(enc).collect();
        chain.reverse();
        chain
            .into_iter()
            .flat_map(|e| self.blocks.iter().filter(move |b| b.enc == e))
            .collect()
    }

    /// Whether the instruction `enc` has semantics: some block of its
    /// chain writes an operand or has an effect.
    pub fn covers(&self, isa: &Isa, enc: EncId) -> bool {
        // The root encoding's block states what every instruction shares
        // (flow bits): it gives no instruction semantics of its own.
        self.chain(isa, enc)
            .iter()
            .any(|b| b.enc != isa.root && body_acts(&b.body))
    }
}

impl Semantics {
    /// Whether the instruction `enc` is declared `undocumented` in every
    /// form (a block of its chain says so outside any `if`): its
    /// simulation stops; the block's doc comment says why.
    pub fn undocumented(&self, isa: &Isa, enc: EncId) -> bool {
        self.chain(isa, enc)
            .iter()
            .any(|b| top_level_has(&b.body, "undocumented"))
    }

    /// Whether some forms of the instruction `enc` (field values chosen
    /// by an `if`) are declared `undocumented` while the others compute.
    pub fn partly_undocumented(&self, isa: &Isa, enc: EncId) -> bool {
        !self.undocumented(isa, enc)
            && self
                .chain(isa, enc)
                .iter()
                .any(|b| body_has(&b.body, "undocumented"))
    }
}

impl Semantics {
    /// The operand fields of the instruction `enc` that its semantics read
    /// as a 64-bit value somewhere (`A as u64`, or a type alias one of
    /// whose choices is 64-bit): a register operand of these is a pair of
    /// consecutive registers, the first one even (Mesa's
    /// `va_validate_register_pair`). Sorted, without repeats.
    pub fn wide_reads(&self, isa: &Isa, enc: EncId) -> Vec<String> {
        let mut aliases: Vec<(&str, bool)> = Vec::new();
        let mut fields: Vec<String> = Vec::new();
        for b in self.chain(isa, enc) {
            wide_stmts(&b.body, &mut aliases, &mut fields);
        }
        fields.sort();
        fields.dedup();
        fields
    }
}

fn is_wide(name: &str, aliases: &[(&str, bool)]) -> bool {
    match Ty::from_name(name) {
        Some(t) => matches!(t, Ty::U64 | Ty::S64),
        None => aliases.iter().any(|&(a, wide)| a == name && wide),
    }
}

fn wide_stmts<'s>(body: &'s [Stmt], aliases: &mut Vec<(&'s str, bool)>, out: &mut Vec<String>) {
    for s in body {
        match s {
            Stmt::If { then, els, .. } => {
                wide_stmts(then, aliases, out);
                wide_stmts(els, aliases, out);
            }
            Stmt::Type { name, choices } => {
                let wide = choices.iter().any(|(_, t)| is_wide(&t.node, aliases));
                aliases.push((name.node.as_str(), wide));
            }
            Stmt::Let { value, .. } | Stmt::Write { value, .. } => wide_expr(value, aliases, out),
            Stmt::Effect { args, .. } => wide_args(args, aliases, out),
            _ => {}
        }
    }
}

fn wide_args(args: &[SArg], aliases: &[(&str, bool)], out: &mut Vec<String>) {
    for a in args {
        if let SArg::Value(e) = a {
            wide_expr(e, aliases, out);
        }
    }
}

fn wide_expr(e: &SExpr, aliases: &[(&str, bool)], out: &mut Vec<String>) {
    match &e.kind {
        SExprKind::Read { field, ty } | SExprKind::Member { field, ty, .. } => {
            if is_wide(&ty.node, aliases) {
                out.push(field.node.clone());
            }
        }
        SExprKind::Call(_, args) => wide_args(args, aliases, out),
        SExprKind::Select(c, a, b) => {
            for x in [c, a, b] {
                wide_expr(x, aliases, out);
            }
        }
        SExprKind::Static(_, a, b) => {
            wide_expr(a, aliases, out);
            wide_expr(b, aliases, out);
        }
        SExprKind::RegRead { .. } | SExprKind::Lit { .. } | SExprKind::Local(_) => {}
    }
}

/// Whether `body` has the effect `name` outside any `if`.
fn top_level_has(body: &[Stmt], name: &str) -> bool {
    body.iter()
        .any(|s| matches!(s, Stmt::Effect { name: n, .. } if n.node == name))
}

/// Whether `body` computes something besides declaring itself undocumented:
/// a write, or an effect other than the issue and stop effects.
fn body_computes(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Write { .. } => true,
        Stmt::Effect { name, .. } => {
            !ISSUE_EFFECTS.contains(&name.node.as_str())
                && !matches!(
                    name.node.as_str(),
                    "undefined" | "unmodelled" | "undocumented"
                )
        }
        Stmt::If { then, els, .. } => body_computes(then) || body_computes(els),
        _ => false,
    })
}

/// Effects that shape the issue (timing), not what the instruction does.
pub const ISSUE_EFFECTS: &[&str] = &["wait", "repeat", "stall", "signal"];

fn body_acts(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Write { .. } => true,
        Stmt::Effect { name, .. } => {
            !ISSUE_EFFECTS.contains(&name.node.as_str())
                && !matches!(name.node.as_str(), "undefined" | "unmodelled")
        }
        Stmt::If { then, els, .. } => body_acts(then) || body_acts(els),
        _ => false,
    })
}

fn body_locates(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Reg { .. }
        | Stmt::Imm { .. }
        | Stmt::Use(_)
        | Stmt::ImmBits(_)
        | Stmt::ImmText(_) => true,
        Stmt::If { then, els, .. } => body_locates(then) || body_locates(els),
        _ => false,
    })
}

/// The register files a simulator models: every `regfile` with `names`
/// that is not inside another file; a file inside one (at any
/// generation) is its half view.
fn sim_files(isa: &Isa, errors: &mut Vec<Diagnostic>) -> Vec<RegFile> {
    let len = |r: &crate::model::Regfile| r.counts.iter().map(|(n, _)| *n).max().unwrap_or(0);
    let mut files = Vec::new();
    for r in &isa.regfiles {
        let Some(names) = &r.names else { continue };
        if !r.inside.is_empty() {
            continue;
        }
        if !(1..=32).contains(&r.unit) {
            errors.push(isa.sources.diagnostic(
                r.span,
                format!(
                    "register file `{}`: a simulator models units of 1..=32 bits",
                    r.name
                ),
            ));
            continue;
        }
        let me = isa.regfile(&r.name);
        let half = isa
            .regfiles
            .iter()
            .find(|h| me.is_some_and(|me| h.inside.iter().any(|(o, _)| *o == me)))
            .and_then(|h| {
                Some(HalfView {
                    name: h.name.to_string(),
                    names: h.names.clone()?,
                    len: len(h),
                })
            });
        files.push(RegFile {
            name: r.name.to_string(),
            names: names.clone(),
            len: len(r),
            bits: r.unit,
            half,
            uniform: matches!(
                r.kind,
                crate::model::RegfileKind::Const | crate::model::RegfileKind::Uniform
            ),
            latency: r.latency,
        });
    }
    files
}

/// Resolves and checks `machine` and `semantics` items against `isa`.
pub fn resolve(
    isa: &Isa,
    machines: Vec<MachineDecl>,
    decls: Vec<SemDecl>,
) -> Result<Semantics, Diagnostics> {
    let mut errors = Vec::new();
    let err = |errors: &mut Vec<Diagnostic>, span: Span, msg: String| {
        errors.push(isa.sources.diagnostic(span, msg));
    };
    let mut sync_key = None;
    for m in machines {
        if let Some(k) = m.sync_key {
            match isa.meta_keys.iter().find(|d| d.name == k.node) {
                Some(d) if d.ty == crate::ast::MetaType::Ident => sync_key = Some(k.node),
                Some(_) => err(
                    &mut errors,
                    k.span,
                    format!("`sync meta {}`: the key must have type ident", k.node),
                ),
                None => err(
                    &mut errors,
                    k.span,
                    format!("unknown metadata key `{}`", k.node),
                ),
            }
        }
    }
    let files = sim_files(isa, &mut errors);
    let mut sem = Semantics {
        files,
        sync_key,
        blocks: Vec::new(),
    };
    for mut d in decls {
        members(&sem, &mut d.body);
        match isa.encoding(&d.enc.node) {
            Some(enc) => sem.blocks.push(SemBlock {
                enc,
                doc: d.doc,
                body: crate::compact::Lazy::new(d.body),
                span: d.span,
            }),
            None => err(
                &mut errors,
                d.enc.span,
                format!("unknown encoding `{}`", d.enc.node),
            ),
        }
    }
    if errors.is_empty() {
        // Every leaf below a block is checked with its whole chain.
        let mut leaves: Vec<EncId> = Vec::new();
        for b in &sem.blocks {
            for (i, e) in isa.encodings.iter().enumerate() {
                if e.is_leaf() && isa.chain(i).any(|x| x == b.enc) && !leaves.contains(&i) {
                    leaves.push(i);
                }
            }
        }
        leaves.sort_unstable();
        for leaf in leaves {
            Checker::new(isa, &sem, leaf, &mut errors).check();
        }
        for b in &sem.blocks {
            let enc = &isa.encodings[b.enc];
            if b.doc.trim().is_empty() && body_has(&b.body, "undocumented") {
                err(
                    &mut errors,
                    b.span,
                    format!(
                        "`{}` is declared undocumented: say in a `///` comment what is known and why the behaviour is not",
                        enc.name
                    ),
                );
            }
            if top_level_has(&b.body, "undocumented") && body_computes(&b.body) {
                err(
                    &mut errors,
                    b.span,
                    format!(
                        "`{}` is declared undocumented in every form, yet its block computes: put `do undocumented();` under the `if` of the forms no source describes",
                        enc.name
                    ),
                );
            }
            let instruction = enc.root == isa.root;
            if instruction && enc.is_leaf() && !body_acts(&b.body) {
                err(
                    &mut errors,
                    b.span,
                    format!(
                        "the semantics of `{}` write nothing (no operand write and no `do` effect)",
                        enc.name
                    ),
                );
            }
        }
    }
    // One diagnostic per position.
    errors.dedup_by(|a, b| a.line == b.line && a.col == b.col && a.path == b.path);
    if errors.is_empty() {
        Ok(sem)
    } else {
        Err(Diagnostics(errors))
    }
}

/// Turns `NAME[K] as T` where `NAME` is no register file into a read of
/// member `K` of the operand group `NAME` (the parser cannot tell them
/// apart).
fn members(sem: &Semantics, body: &mut [Stmt]) {
    fn value(sem: &Semantics, v: &mut SExpr) {
        match &mut v.kind {
            SExprKind::RegRead { file, index, ty } if sem.file(&file.node).is_none() => {
                v.kind = SExprKind::Member {
                    field: file.clone(),
                    index: index.clone(),
                    ty: ty.clone(),
                };
            }
            SExprKind::Call(_, args) => args.iter_mut().for_each(|a| {
                if let SArg::Value(x) = a {
                    value(sem, x)
                }
            }),
            SExprKind::Select(a, b, c) => [a, b, c].into_iter().for_each(|x| value(sem, x)),
            SExprKind::Static(_, a, b) => [a, b].into_iter().for_each(|x| value(sem, x)),
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::If { then, els, .. } => {
                members(sem, then);
                members(sem, els);
            }
            Stmt::Let { value: v, .. } | Stmt::Write { value: v, .. } => value(sem, v),
            Stmt::Effect { args, .. } => args.iter_mut().for_each(|a| {
                if let SArg::Value(x) = a {
                    value(sem, x)
                }
            }),
            _ => {}
        }
    }
}

/// Whether a body (or a branch of it) has the effect `name`.
pub fn body_has(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Effect { name: n, .. } => n.node == name,
        Stmt::If { then, els, .. } => body_has(then, name) || body_has(els, name),
        _ => false,
    })
}

/// Type checker for one leaf (its chain's blocks, in order).
struct Checker<'a> {
    isa: &'a Isa,
    sem: &'a Semantics,
    leaf: EncId,
    errors: &'a mut Vec<Diagnostic>,
    aliases: Vec<(String, Vec<Ty>)>,
    locals: Vec<(String, TyRef)>,
}

impl<'a> Checker<'a> {
    fn new(isa: &'a Isa, sem: &'a Semantics, leaf: EncId, errors: &'a mut Vec<Diagnostic>) -> Self {
        Checker {
            isa,
            sem,
            leaf,
            errors,
            aliases: Vec::new(),
            locals: Vec::new(),
        }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        let d = self.isa.sources.diagnostic(span, msg);
        self.errors.push(d);
    }

    fn check(&mut self) {
        let blocks = self.sem.chain(self.isa, self.leaf);
        let instruction = self.isa.encodings[self.leaf].root == self.isa.root;
        let mut locates = false;
        for b in &blocks {
            locates |= body_locates(&b.body);
            self.stmts(&b.body, instruction);
        }
        if !instruction && !locates {
            if let Some(b) = blocks.last() {
                let name = self.isa.encodings[self.leaf].name.clone();
                self.err(b.span, format!("operand `{name}` has semantics but no location (`reg`, `imm`, `immf` or `use`)"));
            }
        }
    }

    /// The field or derived value `name` of the leaf's chain, or a param.
    fn item_type(&self, name: &str) -> Option<Option<&'a FieldType>> {
        for e in self.isa.chain(self.leaf) {
            let enc = &self.isa.encodings[e];
            if let Some(i) = enc.plain.item(name) {
                return Some(Some(i.ty()));
            }
            for w in &enc.whens {
                if let Some(i) = w.level.item(name) {
                    return Some(Some(i.ty()));
                }
            }
        }
        let root = self.isa.encodings[self.leaf].root;
        self.isa.encodings[root]
            .params
            .iter()
            .any(|p| p == name)
            .then_some(None)
    }

    fn expr(&mut self, e: &Expr) {
        let mut bad = Vec::new();
        walk_names(e, &mut |n, span| bad.push((n.to_string(), span)));
        for (n, span) in bad {
            if let Some(stripped) = n.strip_prefix('@') {
                if !self.isa.exprs.iter().any(|x| x.name == stripped) {
                    self.err(span, format!("unknown named expression `@{stripped}`"));
                }
            } else if self.item_type(&n).is_none() {
                let leaf = self.isa.encodings[self.leaf].name.clone();
                self.err(
                    span,
                    format!("unknown name `{n}` (no field, derived value or param of `{leaf}`)"),
                );
            }
        }
    }

    fn operand(&mut self, name: &Name) -> bool {
        match self.item_type(&name.node) {
            Some(Some(FieldType::Sub(root, _))) => {
                let root = *root;
                let located = self.isa.leaves(root).any(|l| {
                    self.sem
                        .chain(self.isa, l)
                        .iter()
                        .any(|b| body_locates(&b.body))
                });
                if !located {
                    let r = self.isa.encodings[root].name.clone();
                    self.err(
                        name.span,
                        format!(
                            "`{}` is no operand: its encoding `{r}` has no location semantics",
                            name.node
                        ),
                    );
                }
                located
            }
            Some(_) => {
                self.err(
                    name.span,
                    format!("`{}` is no operand (not a sub-encoding field)", name.node),
                );
                false
            }
            None => {
                let leaf = self.isa.encodings[self.leaf].name.clone();
                self.err(
                    name.span,
                    format!(
                        "unknown operand `{}` (no such field in `{leaf}`)",
                        name.node
                    ),
                );
                false
            }
        }
    }

    fn ty(&mut self, name: &Name) -> Option<TyRef> {
        if let Some(t) = Ty::from_name(&name.node) {
            return Some(TyRef::Concrete(t));
        }
        if let Some((n, v)) = self.aliases.iter().rev().find(|(n, _)| *n == name.node) {
            return Some(TyRef::Alias(n.clone(), v.clone()));
        }
        self.err(
            name.span,
            format!(
                "unknown type `{}` (f32, f16, u32, u16, s32, s16, bool or a `type` alias)",
                name.node
            ),
        );
        None
    }

    fn stmts(&mut self, body: &[Stmt], instruction: bool) {
        for s in body {
            match s {
                Stmt::If { cond, then, els } => {
                    self.expr(cond);
                    let saved = self.locals.len();
                    self.stmts(then, instruction);
                    self.locals.truncate(saved);
                    self.stmts(els, instruction);
                    self.locals.truncate(saved);
                }
                Stmt::Type { name, choices } => {
                    let mut v = Vec::new();
                    for (c, t) in choices {
                        if let Some(c) = c {
                            self.expr(c);
                        }
                        match Ty::from_name(&t.node) {
                            Some(t) => v.push(t),
                            None => self.err(t.span, format!("unknown type `{}`", t.node)),
                        }
                    }
                    self.aliases.push((name.node.clone(), v));
                }
                Stmt::Mods { field, mods } => {
                    if instruction {
                        self.operand(field);
                    } else if field.node != "self" {
                        self.err(
                            field.span,
                            "an operand encoding's modifiers are `mods self …;`",
                        );
                    }
                    for (_, e) in mods {
                        self.expr(e);
                    }
                }
                Stmt::Reg { file, addr, index } => {
                    if instruction {
                        self.err(
                            file.span,
                            "`reg` belongs in an operand encoding's semantics",
                        );
                    }
                    if self.sem.file(&file.node).is_none() {
                        self.err(file.span, format!("unknown register file `{}`", file.node));
                    }
                    if let Some((a, e)) = addr {
                        if self.sem.file(&a.node).is_none() {
                            self.err(a.span, format!("unknown register file `{}`", a.node));
                        }
                        self.expr(e);
                    }
                    self.expr(index);
                }
                Stmt::Imm { value, .. } | Stmt::ImmBits(value) => self.expr(value),
                Stmt::ImmText(f) => match self.item_type(&f.node) {
                    Some(Some(FieldType::Enum(e))) => {
                        let def = &self.isa.enums[*e];
                        if let Some((_, text, _)) = def
                            .values
                            .iter()
                            .find(|(_, t, _)| enum_text_bits(t).is_none())
                        {
                            let (n, t) = (def.name.clone(), text.clone());
                            self.err(
                                f.span,
                                format!(
                                    "`immt {}`: entry `{t}` of enum `{n}` is no number",
                                    f.node
                                ),
                            );
                        }
                    }
                    _ => self.err(
                        f.span,
                        format!("`immt {}`: not a field of enum type", f.node),
                    ),
                },
                Stmt::Use(f) => match self.item_type(&f.node) {
                    Some(Some(FieldType::Sub(..))) => {}
                    _ => self.err(
                        f.span,
                        format!("`use {}`: not a sub-encoding field", f.node),
                    ),
                },
                Stmt::Let { name, value } => {
                    if let Some(t) = self.value(value) {
                        self.locals.push((name.node.clone(), t));
                    }
                }
                Stmt::Effect { name, args, span } if io_effect(&name.node).is_some() => {
                    self.io_args(&name.node, args, *span, instruction);
                }
                Stmt::Effect { name, args, span } => {
                    let Some(&(_, nv, ns, _)) = EFFECTS.iter().find(|e| e.0 == name.node) else {
                        self.err(
                            name.span,
                            format!(
                                "unknown effect `{}` ({})",
                                name.node,
                                EFFECTS.iter().map(|e| e.0).collect::<Vec<_>>().join(", ")
                            ),
                        );
                        continue;
                    };
                    if name.node == "wait" || name.node == "signal" {
                        if let Some(SArg::Value(SExpr {
                            kind: SExprKind::Local(_),
                            ..
                        })) = args.first()
                        {
                            if let (Some(SArg::Static(e)), 2) = (args.get(1), args.len()) {
                                self.expr(e);
                                continue;
                            }
                        }
                        self.err(
                            *span,
                            format!(
                                "`{}` takes a sync kind and a field expression: `do {}(ss, [SS]);`",
                                name.node, name.node
                            ),
                        );
                        continue;
                    }
                    if name.node == "goto" {
                        self.goto(args, *span);
                        continue;
                    }
                    self.args(args, nv, ns, *span, &name.node, Some(Ty::Bool));
                }
                Stmt::Write { dst, index, value } => {
                    self.operand(dst);
                    if let Some(i) = index {
                        self.expr(i);
                    }
                    if let Some(t) = self.value(value) {
                        if t == TyRef::Concrete(Ty::Bool) {
                            self.err(
                                value.span,
                                format!(
                                    "writing a bool to `{}`: convert it with cvt(…, T) first",
                                    dst.node
                                ),
                            );
                        }
                    }
                }
            }
        }
    }

    /// Checks the arguments of an I/O effect against its signature.
    fn io_args(&mut self, name: &str, args: &[SArg], span: Span, instruction: bool) {
        let sig = io_effect(name).expect("an I/O effect");
        if !instruction {
            self.err(
                span,
                format!("`{name}` belongs in an instruction's semantics"),
            );
            return;
        }
        if args.len() != sig.len() {
            self.err(
                span,
                format!(
                    "`{name}` takes {} arguments, {} given",
                    sig.len(),
                    args.len()
                ),
            );
            return;
        }
        for (i, (a, kind)) in args.iter().zip(sig).enumerate() {
            let word = match a {
                SArg::Value(SExpr {
                    kind: SExprKind::Local(n),
                    ..
                }) => Some(n),
                _ => None,
            };
            match (kind, a, word) {
                (IoArg::Keyword(k), _, Some(n)) => {
                    if k.index(&n.node).is_none() {
                        self.err(
                            n.span,
                            format!(
                                "argument {} of `{name}`: `{}` is none of {}",
                                i + 1,
                                n.node,
                                k.names().join(", ")
                            ),
                        );
                    }
                }
                (IoArg::In(_), _, Some(n)) if n.node == "none" => {}
                (IoArg::Out(_), _, Some(n)) if n.node == "none" && name == "message" => {}
                (IoArg::Out(_) | IoArg::In(_), _, Some(n)) => {
                    self.operand(n);
                }
                (IoArg::Value, SArg::Value(v), _) => {
                    if let Some(t) = self.value(v) {
                        if t.choices().iter().any(|c| !c.is_int() || c.lanes() > 1) {
                            self.err(
                                v.span,
                                format!(
                                    "argument {} of `{name}` is a scalar integer, this is {}",
                                    i + 1,
                                    t.text()
                                ),
                            );
                        }
                    }
                }
                (IoArg::Static, SArg::Static(e), _) => self.expr(e),
                _ => {
                    let want = match kind {
                        IoArg::Keyword(k) => format!("one of {}", k.names().join(", ")),
                        IoArg::Out(_) => "an operand field (the register group written)".into(),
                        IoArg::In(_) => {
                            "an operand field (the register group read) or `none`".into()
                        }
                        IoArg::Value => "a value".into(),
                        IoArg::Static => "a field expression in `[…]`".into(),
                    };
                    let at = match a {
                        SArg::Value(v) => v.span,
                        SArg::Static(e) => e.span,
                    };
                    self.err(at, format!("argument {} of `{name}` is {want}", i + 1));
                }
            }
        }
    }

    /// Checks `nv` value args (each `want` if given) then `ns` static args.
    fn args(
        &mut self,
        args: &[SArg],
        nv: usize,
        ns: usize,
        span: Span,
        name: &str,
        want: Option<Ty>,
    ) {
        if args.len() != nv + ns {
            self.err(
                span,
                format!("`{name}` takes {} arguments, {} given", nv + ns, args.len()),
            );
            return;
        }
        for (i, a) in args.iter().enumerate() {
            match (a, i < nv) {
                (SArg::Value(v), true) => {
                    if let (Some(t), Some(w)) = (self.value(v), want) {
                        if t != TyRef::Concrete(w) {
                            self.err(
                                v.span,
                                format!("`{name}` wants a {} here, this is {}", w.name(), t.text()),
                            );
                        }
                    }
                }
                (SArg::Static(e), false) => self.expr(e),
                (SArg::Value(v), false) => self.err(
                    v.span,
                    format!(
                        "argument {} of `{name}` is a field expression in `[…]`",
                        i + 1
                    ),
                ),
                (SArg::Static(e), true) => self.err(
                    e.span,
                    format!("argument {} of `{name}` is a value, not `[…]`", i + 1),
                ),
            }
        }
    }

    fn value(&mut self, v: &SExpr) -> Option<TyRef> {
        match &v.kind {
            SExprKind::Read { field, ty } => {
                let t = self.ty(ty);
                self.operand(field);
                t
            }
            SExprKind::RegRead { file, index, ty } => {
                if self.sem.file(&file.node).is_none() {
                    self.err(file.span, format!("unknown register file `{}`", file.node));
                }
                self.expr(index);
                self.ty(ty)
            }
            SExprKind::Member { field, index, ty } => {
                let t = self.ty(ty);
                if self.item_type(&field.node).is_none() {
                    let leaf = self.isa.encodings[self.leaf].name.clone();
                    self.err(
                        field.span,
                        format!(
                            "`{}[…]`: no register file and no operand of `{leaf}` has that name",
                            field.node
                        ),
                    );
                    return t;
                }
                self.operand(field);
                self.expr(index);
                t
            }
            SExprKind::Lit { text, ty } => {
                let t = self.ty(ty)?;
                if parse_literal(text).is_none() {
                    self.err(v.span, format!("bad number `{text}`"));
                }
                Some(t)
            }
            SExprKind::Local(n) => {
                if let Some((_, t)) = self.locals.iter().rev().find(|(x, _)| *x == n.node) {
                    return Some(t.clone());
                }
                if self.item_type(&n.node).is_some() {
                    self.err(n.span, format!("`{}` is a field: read an operand with `{} as T`, or use `[{}]` for a field value", n.node, n.node, n.node));
                } else {
                    self.err(
                        n.span,
                        format!("unknown value `{}` (no `let` of that name)", n.node),
                    );
                }
                None
            }
            SExprKind::Select(c, a, b) => {
                let ct = self.value(c);
                if let Some(ct) = ct {
                    if ct != TyRef::Concrete(Ty::Bool) {
                        self.err(
                            c.span,
                            format!("a `?` condition is a bool, this is {}", ct.text()),
                        );
                    }
                }
                let (ta, tb) = (self.value(a), self.value(b));
                self.same(v.span, ta, tb)
            }
            SExprKind::Static(e, a, b) => {
                self.expr(e);
                let (ta, tb) = (self.value(a), self.value(b));
                self.same(v.span, ta, tb)
            }
            SExprKind::Call(name, args) => self.call(name, args, v.span),
        }
    }

    fn same(&mut self, span: Span, a: Option<TyRef>, b: Option<TyRef>) -> Option<TyRef> {
        match (a, b) {
            (Some(a), Some(b)) if a != b => {
                self.err(span, format!("mixed types: {} and {}", a.text(), b.text()));
                None
            }
            (Some(a), Some(_)) => Some(a),
            _ => None,
        }
    }

    fn call(&mut self, name: &Name, args: &[SArg], span: Span) -> Option<TyRef> {
        let Some(shape) = shape(&name.node) else {
            self.err(name.span, format!("unknown primitive `{}`", name.node));
            return None;
        };
        let n = &name.node;
        match shape {
            Shape::Same(k, class) => self.same_values(n, args, k, class, span),
            Shape::Approx => {
                if args.len() != 2 {
                    self.err(
                        span,
                        format!("`{n}` takes a value and its declared error bound `[ULP]`"),
                    );
                    return None;
                }
                let SArg::Static(ulp) = &args[1] else {
                    self.err(
                        span,
                        format!("the second argument of `{n}` is its ULP bound in `[…]`"),
                    );
                    return None;
                };
                self.expr(ulp);
                let SArg::Value(v) = &args[0] else {
                    self.err(span, format!("`{n}` approximates a float value"));
                    return None;
                };
                let t = self.value(v)?;
                if t.choices().iter().any(|c| !c.is_float()) {
                    self.err(v.span, format!("`{n}` wants a float, this is {}", t.text()));
                    return None;
                }
                Some(t)
            }
            Shape::Compare => {
                if args.len() != 6 {
                    self.err(
                        span,
                        "`compare` takes (a, b, [LT], [EQ], [GT], [UNORDERED])",
                    );
                    return None;
                }
                let mut ts = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    match (a, i < 2) {
                        (SArg::Value(v), true) => ts.push(self.value(v)),
                        (SArg::Static(e), false) => self.expr(e),
                        _ => {
                            self.err(
                                span,
                                "`compare` takes (a, b, [LT], [EQ], [GT], [UNORDERED])",
                            );
                            return None;
                        }
                    }
                }
                let t = self.same(span, ts[0].clone(), ts[1].clone())?;
                if t.choices().contains(&Ty::Bool) {
                    self.err(span, "`compare` compares numbers, not bools");
                }
                if t.choices().iter().any(|c| c.lanes() > 1) {
                    self.err(
                        span,
                        "`compare` compares scalars: compare vector lanes with `lane(v, [K])`",
                    );
                }
                Some(TyRef::Concrete(Ty::Bool))
            }
            Shape::Convert => {
                let (
                    Some(SArg::Value(x)),
                    Some(SArg::Value(SExpr {
                        kind: SExprKind::Local(tn),
                        ..
                    })),
                    2,
                ) = (args.first(), args.get(1), args.len())
                else {
                    self.err(span, format!("`{n}` takes a value and a type: `{n}(x, T)`"));
                    return None;
                };
                let from = self.value(x);
                let to = self.ty(tn)?;
                if n == "bitcast" {
                    if let Some(from) = &from {
                        if from.choices().contains(&Ty::Bool) || to.choices().contains(&Ty::Bool) {
                            self.err(span, "`bitcast` does not take or give a bool; use cvt");
                        }
                    }
                }
                if n == "cvt" {
                    self.lanes_match(span, n, from.as_ref(), &to);
                }
                Some(to)
            }
            Shape::SameStatic(k, class, statics) => {
                let (values, rest) = args.split_at(args.len().min(k));
                if args.len() != k + statics || rest.iter().any(|a| matches!(a, SArg::Value(_))) {
                    self.err(
                        span,
                        format!("`{n}` takes {k} values and {statics} field expressions in `[…]`"),
                    );
                    return None;
                }
                for a in rest {
                    if let SArg::Static(e) = a {
                        self.expr(e);
                    }
                }
                self.same_values(n, values, k, class, span)
            }
            Shape::ConvertRounded => {
                let (
                    Some(SArg::Value(x)),
                    Some(SArg::Value(SExpr {
                        kind: SExprKind::Local(tn),
                        ..
                    })),
                    Some(SArg::Static(mode)),
                    3,
                ) = (args.first(), args.get(1), args.get(2), args.len())
                else {
                    self.err(
                        span,
                        "`cvtr` takes a value, a type and a rounding mode: `cvtr(x, T, [MODE])`",
                    );
                    return None;
                };
                self.expr(mode);
                let from = self.value(x);
                let to = self.ty(tn)?;
                if to.choices().iter().any(|c| !c.is_float() && !c.is_int())
                    || from
                        .as_ref()
                        .is_some_and(|f| f.choices().iter().any(|c| !c.is_float() && !c.is_int()))
                {
                    self.err(span, "`cvtr` converts between numbers");
                }
                self.lanes_match(span, n, from.as_ref(), &to);
                Some(to)
            }
            Shape::Lane => {
                let (Some(SArg::Value(v)), Some(SArg::Static(k)), 2) =
                    (args.first(), args.get(1), args.len())
                else {
                    self.err(
                        span,
                        "`lane` takes a vector and a lane index: `lane(v, [K])`",
                    );
                    return None;
                };
                self.expr(k);
                let t = self.value(v)?;
                let elems: Option<Vec<Ty>> = t.choices().iter().map(|c| c.elem()).collect();
                match elems {
                    Some(e) if e.windows(2).all(|w| w[0] == w[1]) && !e.is_empty() => {
                        Some(TyRef::Concrete(e[0]))
                    }
                    Some(_) => {
                        self.err(
                            v.span,
                            format!("`lane`: the lanes of {} differ by instruction", t.text()),
                        );
                        None
                    }
                    None => {
                        self.err(
                            v.span,
                            format!("`lane` wants a vector, this is {}", t.text()),
                        );
                        None
                    }
                }
            }
            Shape::MakeVector(k) => {
                if args.len() != k || args.iter().any(|a| matches!(a, SArg::Static(_))) {
                    self.err(span, format!("`{n}` takes {k} values"));
                    return None;
                }
                let mut t: Option<TyRef> = None;
                for a in args {
                    let SArg::Value(v) = a else { continue };
                    let at = self.value(v)?;
                    t = match t {
                        None => Some(at),
                        Some(prev) => self.same(v.span, Some(prev), Some(at)),
                    };
                }
                let TyRef::Concrete(e) = t? else {
                    self.err(
                        span,
                        format!("`{n}`: give lanes of a concrete type (f16, u16, s16, u8, s8)"),
                    );
                    return None;
                };
                match e.vector(k) {
                    Some(v) => Some(TyRef::Concrete(v)),
                    None => {
                        self.err(span, format!("no vector of {k} {} lanes", e.name()));
                        None
                    }
                }
            }
            Shape::Ldexp => {
                let (Some(SArg::Value(x)), Some(SArg::Value(e)), 2) =
                    (args.first(), args.get(1), args.len())
                else {
                    self.err(span, "`ldexp` takes a float and an integer");
                    return None;
                };
                let (tx, te) = (self.value(x), self.value(e));
                if let Some(te) = te {
                    if te.choices().iter().any(|c| !c.is_int() || c.lanes() > 1) {
                        self.err(
                            e.span,
                            format!(
                                "`ldexp` wants a scalar integer exponent, this is {}",
                                te.text()
                            ),
                        );
                    }
                }
                let tx = tx?;
                if tx.choices().iter().any(|c| !c.is_float() || c.lanes() > 1) {
                    self.err(
                        x.span,
                        format!("`ldexp` wants a scalar float, this is {}", tx.text()),
                    );
                    return None;
                }
                Some(tx)
            }
            Shape::Num => {
                let (
                    Some(SArg::Static(e)),
                    Some(SArg::Value(SExpr {
                        kind: SExprKind::Local(tn),
                        ..
                    })),
                    2,
                ) = (args.first(), args.get(1), args.len())
                else {
                    self.err(
                        span,
                        "`num` takes a field expression and a type: `num([E], T)`",
                    );
                    return None;
                };
                self.expr(e);
                let t = self.ty(tn)?;
                if t.choices().contains(&Ty::Bool) {
                    self.err(span, "`num` gives a number, not a bool");
                }
                Some(t)
            }
            Shape::Shuffle => {
                let (Some(SArg::Value(a)), Some(SArg::Value(l)), Some(SArg::Value(x)), 3) =
                    (args.first(), args.get(1), args.get(2), args.len())
                else {
                    self.err(span, "`shuffle` takes (A as T, lane, fallback)");
                    return None;
                };
                if !matches!(a.kind, SExprKind::Read { .. }) {
                    self.err(a.span, "`shuffle` reads an operand: `A as T`");
                }
                self.scalar_int(l, n);
                let (ta, tx) = (self.value(a), self.value(x));
                self.same(span, ta, tx)
            }
            Shape::Ballot => {
                let (Some(SArg::Value(c)), 1) = (args.first(), args.len()) else {
                    self.err(span, "`ballot` takes one bool");
                    return None;
                };
                if let Some(t) = self.value(c) {
                    if t != TyRef::Concrete(Ty::Bool) {
                        self.err(
                            c.span,
                            format!("`ballot` wants a bool, this is {}", t.text()),
                        );
                    }
                }
                Some(TyRef::Concrete(Ty::U32))
            }
            Shape::Thread => {
                if !args.is_empty() {
                    self.err(span, "`thread` takes no arguments: `thread()`");
                }
                Some(TyRef::Concrete(Ty::U32))
            }
            Shape::Cluster => {
                let (Some(SArg::Static(e)), 1) = (args.first(), args.len()) else {
                    self.err(span, format!("`{n}` takes a cluster size in `[…]`"));
                    return None;
                };
                self.expr(e);
                Some(TyRef::Concrete(Ty::Bool))
            }
            Shape::FloatToS32 => {
                let (Some(SArg::Value(x)), 1) = (args.first(), args.len()) else {
                    self.err(span, format!("`{n}` takes one float"));
                    return None;
                };
                let tx = self.value(x)?;
                if tx.choices().iter().any(|c| !c.is_float() || c.lanes() > 1) {
                    self.err(
                        x.span,
                        format!("`{n}` wants a scalar float, this is {}", tx.text()),
                    );
                    return None;
                }
                Some(TyRef::Concrete(Ty::S32))
            }
        }
    }

    /// A scalar integer value (a thread or instruction index).
    fn scalar_int(&mut self, v: &SExpr, name: &str) {
        if let Some(t) = self.value(v) {
            if t.choices().iter().any(|c| !c.is_int() || c.lanes() > 1) {
                self.err(
                    v.span,
                    format!("`{name}` wants a scalar integer here, this is {}", t.text()),
                );
            }
        }
    }

    /// `goto(c, i)`: a bool and a scalar integer.
    fn goto(&mut self, args: &[SArg], span: Span) {
        let (Some(SArg::Value(c)), Some(SArg::Value(i)), 2) =
            (args.first(), args.get(1), args.len())
        else {
            self.err(
                span,
                "`goto` takes a bool and an instruction index: `do goto(c, i);`",
            );
            return;
        };
        if let Some(t) = self.value(c) {
            if t != TyRef::Concrete(Ty::Bool) {
                self.err(
                    c.span,
                    format!("`goto` wants a bool here, this is {}", t.text()),
                );
            }
        }
        self.scalar_int(i, "goto");
    }

    /// `k` values of one type of `class`; that type.
    fn same_values(
        &mut self,
        n: &str,
        args: &[SArg],
        k: usize,
        class: Class,
        span: Span,
    ) -> Option<TyRef> {
        if args.len() != k {
            self.err(
                span,
                format!("`{n}` takes {k} arguments, {} given", args.len()),
            );
            return None;
        }
        let mut t: Option<TyRef> = None;
        let mut ok = true;
        for a in args {
            let SArg::Value(v) = a else {
                self.err(span, format!("`{n}` takes values, not `[…]`"));
                return None;
            };
            let Some(at) = self.value(v) else {
                ok = false;
                continue;
            };
            if let Some(bad) = at.choices().into_iter().find(|c| !class.accepts(*c)) {
                self.err(
                    v.span,
                    format!(
                        "`{n}` wants {}, this is {} ({})",
                        class.text(),
                        at.text(),
                        bad.name()
                    ),
                );
                ok = false;
            }
            match &t {
                Some(prev) if *prev != at => {
                    self.err(
                        v.span,
                        format!("mixed types in `{n}`: {} and {}", prev.text(), at.text()),
                    );
                    ok = false;
                }
                _ => t = Some(at),
            }
        }
        if ok { t } else { None }
    }

    /// A lane-wise conversion keeps the number of lanes.
    fn lanes_match(&mut self, span: Span, n: &str, from: Option<&TyRef>, to: &TyRef) {
        let Some(from) = from else { return };
        let lanes = |t: &TyRef| t.choices().iter().map(|c| c.lanes()).max().unwrap_or(1);
        if lanes(from) != lanes(to) {
            self.err(
                span,
                format!(
                    "`{n}` converts lane by lane: {} and {} have different lanes (use `bitcast` for the bits)",
                    from.text(),
                    to.text()
                ),
            );
        }
    }
}

/// Calls `f` with every name an expression uses (named expressions as
/// `@name`).
fn walk_names(e: &Expr, f: &mut dyn FnMut(&str, Span)) {
    match &e.kind {
        ExprKind::Name(n) => f(n, e.span),
        ExprKind::Named(n, _, args) => {
            f(&format!("@{n}"), e.span);
            for a in args {
                walk_names(a, f);
            }
        }
        ExprKind::Unary(_, a) => walk_names(a, f),
        ExprKind::Binary(_, a, b) => {
            walk_names(a, f);
            walk_names(b, f);
        }
        ExprKind::Cond(c, a, b) => {
            walk_names(c, f);
            walk_names(a, f);
            walk_names(b, f);
        }
        _ => {}
    }
}

/// The raw bits an enum entry's display text spells (`"0x3F800000"`,
/// `"42"`), for `immt`.
pub fn enum_text_bits(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => text.parse::<u32>().ok(),
    }
}

/// A literal of the semantics language: `Float(v)` (has `.` or an
/// exponent), `Int(v)` (decimal integer, converted to the type) or
/// `Bits(b)` (`0x…`: raw bits of the type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Float(f64),
    Int(i64),
    Bits(u32),
}

pub fn parse_literal(text: &str) -> Option<Literal> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    if let Some(h) = body.strip_prefix("0x") {
        let v = u32::from_str_radix(h, 16).ok()?;
        return (!neg).then_some(Literal::Bits(v));
    }
    if body.contains(['.', 'e', 'E']) {
        return text.parse::<f64>().ok().map(Literal::Float);
    }
    text.parse::<i64>().ok().map(Literal::Int)
}

/// The source text of a block (for the generated docs).
pub fn source_text(isa: &Isa, span: Span) -> &str {
    &isa.sources.files[span.file].text[span.start..span.end]
}

/// The generated docs' "Machine state" section (nothing without a
/// `machine` block).
pub fn write_machine_doc(isa: &Isa, o: &mut String) {
    use std::fmt::Write as _;
    let sem = &isa.semantics;
    if sem.blocks.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## Machine state\n\nThe register files with `names`, as the simulator models them.\n\n| file | first register | units | bits | half view | shared |\n|---|---|---|---|---|---|"
    );
    let first = |n: &crate::ast::RegNames| {
        let mut t = format!("`{}{}", n.prefix, n.first);
        if let Some(c) = n.comps.chars().next() {
            t.push('.');
            t.push(c);
        }
        t + "`"
    };
    for f in &sem.files {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} | {} | {} |",
            f.name,
            first(&f.names),
            f.len,
            f.bits,
            f.half.as_ref().map_or("—".to_string(), |h| format!(
                "`{}` ({}, {} units)",
                h.name,
                first(&h.names),
                h.len
            )),
            if f.uniform { "yes" } else { "no" }
        );
    }
    let covered = isa.instructions().filter(|&l| sem.covers(isa, l)).count();
    let _ = writeln!(
        o,
        "\n{covered} of {} instructions have semantics.\n",
        isa.instructions().count()
    );
}

/// An instruction's semantics in the generated docs: the blocks of its
/// chain, root-most first, as written in the spec.
pub fn write_doc(isa: &Isa, leaf: EncId, o: &mut String) {
    use std::fmt::Write as _;
    let blocks = isa.semantics.chain(isa, leaf);
    if blocks.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "Semantics{}:\n\n```text",
        if isa.semantics.covers(isa, leaf) {
            ""
        } else {
            " (none of its own; inherited context only)"
        }
    );
    for b in blocks {
        // The block's doc comment says where its facts come from.
        for line in b.doc.lines() {
            let _ = writeln!(o, "/// {line}");
        }
        let _ = writeln!(o, "{}", source_text(isa, b.span));
    }
    let _ = writeln!(o, "```\n");
}
