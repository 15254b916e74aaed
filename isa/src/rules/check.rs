//! The rules checker: instantiates every rule for each tuple of its `for`
//! clause and proves each template against the spec. A template is
//! assembled by the spec's assembler at every generation of the rules
//! file, with each register placeholder replaced by a distinct register of
//! its type's file and each literal by a sample value; the word must show
//! back as the same text, decode to one instruction whose register
//! operands are exactly the placeholders in text order (their numbers are
//! read back through the operand forms), with the same word at every
//! generation. Errors name the rules file's line and column.

use std::collections::HashMap;

use lathe_ir::{GenericOp, Opcode, Scalar, Signature, Type};

use crate::groups::groups;

use super::{Arg, AttrPat, Name, Pattern, RulesFile, Stmt};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::machine::{MachineTable, asserted_bits, is_literal_value, set_in_form};
use crate::model::{Isa, RegfileKind};
use crate::operands::Role;

/// A checked rules file: every rule instance, in file order.
#[derive(Clone, Debug)]
pub struct Checked {
    pub isa: String,
    /// Spec generations the templates were checked at.
    pub generations: Vec<u32>,
    pub rules: Vec<Instance>,
}

/// One rule for one tuple of concrete types.
#[derive(Clone, Debug)]
pub struct Instance {
    pub name: String,
    pub line: u32,
    /// Pattern nodes; the first is the root.
    pub nodes: Vec<Node>,
    /// Placeholders; slot 0 is `$dst`, the root's result.
    pub slots: Vec<Slot>,
    pub insts: Vec<Template>,
}

/// One pattern node.
#[derive(Clone, Debug)]
pub struct Node {
    pub op: String,
    pub attrs: Vec<AttrCheck>,
    pub args: Option<Vec<ArgCheck>>,
    /// The result type; `None` for an instruction without a result.
    pub ty: Option<Type>,
}

/// An attribute constraint or binding.
#[derive(Clone, Debug)]
pub enum AttrCheck {
    Word(String),
    Eq(String, String),
    /// The attribute's value (the bare value when `key` is `None`) is
    /// literal slot `slot`.
    Bind {
        key: Option<String>,
        slot: u8,
    },
}

/// An operand: a bound value or a nested node.
#[derive(Clone, Copy, Debug)]
pub enum ArgCheck {
    Value { slot: u8, ty: Type },
    Node(u8),
}

/// What a placeholder stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// The root's result.
    Result,
    /// An operand value of the pattern.
    Value,
    /// A `let` temporary.
    Temp,
    /// A literal from an attribute: a number, or (with names) a register
    /// of a file that is not allocated, such as a const register.
    Literal { names: Option<(String, String)> },
}

#[derive(Clone, Debug)]
pub struct Slot {
    pub name: String,
    pub kind: SlotKind,
    /// A vector type stands for a register group of that many registers.
    pub ty: Type,
}

/// A piece of a literal template's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// The literal value of a slot.
    Literal(u8),
}

/// One checked instruction template.
#[derive(Clone, Debug)]
pub struct Template {
    /// The instruction's encoding name.
    pub mnemonic: String,
    /// The assembled word (registers as checked; runtime clears them).
    pub word: u64,
    /// The text to assemble at selection time when the template holds a
    /// literal (empty otherwise: the word is final).
    pub pieces: Vec<Piece>,
    pub dst: Option<u8>,
    pub srcs: Vec<u8>,
    /// Per source of a `collect` step: the one lane it takes (`$c[2]`), or
    /// [`ALL_LANES`]; empty for an instruction.
    pub lanes: Vec<u8>,
    pub line: u32,
    /// A structural `collect` step, not an instruction (`mnemonic` empty).
    pub collect: bool,
}

/// A `collect` part taken whole.
pub const ALL_LANES: u8 = u8::MAX;

/// One past the last register the checker gives a group (`@$v`).
const GROUP_TOP: u32 = 64;

struct Cx<'a> {
    isa: &'a Isa,
    file: &'a RulesFile,
    table: MachineTable,
    types: HashMap<String, (usize, String, u32)>,
    generations: Vec<u32>,
    errors: Vec<Diagnostic>,
}

/// Checks `file` against `isa`.
pub fn check(isa: &Isa, file: &RulesFile) -> Result<Checked, Diagnostics> {
    let mut cx = Cx {
        isa,
        file,
        table: MachineTable::new(isa),
        types: HashMap::new(),
        generations: Vec::new(),
        errors: Vec::new(),
    };
    cx.header();
    for t in &file.types {
        if Scalar::from_name(&t.name.text).is_none() {
            cx.err(
                t.name.span,
                format!("`{}` is no IR scalar type", t.name.text),
            );
        }
        match isa.regfile(&t.regfile.text) {
            Some(f) if isa.regfiles[f].names.is_some() => {
                cx.types
                    .insert(t.name.text.clone(), (f, t.spelling.clone(), t.bits));
            }
            _ => cx.err(
                t.regfile.span,
                format!("`{}` is no named register file of the spec", t.regfile.text),
            ),
        }
    }
    let mut rules = Vec::new();
    for r in &file.rules {
        let tuples: Vec<Vec<&Name>> = if r.vars.is_empty() {
            vec![Vec::new()]
        } else {
            r.tuples.iter().map(|t| t.iter().collect()).collect()
        };
        for tuple in tuples {
            if tuple.len() != r.vars.len() {
                let span = tuple.first().map_or(r.name.span, |n| n.span);
                cx.err(
                    span,
                    format!("expected {} types in this tuple", r.vars.len()),
                );
                continue;
            }
            let bind: HashMap<&str, &Name> = r
                .vars
                .iter()
                .map(|v| v.text.as_str())
                .zip(tuple.iter().copied())
                .collect();
            if let Some(inst) = cx.instance(r, &bind) {
                rules.push(inst);
            }
        }
    }
    if cx.errors.is_empty() {
        Ok(Checked {
            isa: file.isa.text.clone(),
            generations: cx.generations,
            rules,
        })
    } else {
        Err(Diagnostics(cx.errors))
    }
}

/// A template's text as checked: registers and sample literals in place
/// of the placeholders.
struct Substituted {
    text: String,
    /// Register placeholders in text order, with where they are written,
    /// the number of the (first) register written for them and the file
    /// they are read through when written `$name:FILE`.
    registers: Vec<(u8, Span, u64, Option<usize>)>,
    /// For a template with literals, the text around them.
    pieces: Vec<Piece>,
}

/// One instance being built.
struct Builder<'b> {
    bind: &'b HashMap<&'b str, &'b Name>,
    nodes: Vec<Node>,
    slots: Vec<Slot>,
}

impl Cx<'_> {
    fn err(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(self.file.map.diagnostic(span, message));
    }

    fn header(&mut self) {
        let f = self.file;
        if f.isa.text != self.isa.name {
            self.err(
                f.isa.span,
                format!("the spec is `{}`, not `{}`", self.isa.name, f.isa.text),
            );
        }
        let lookup = |n: &Name| self.isa.generation(&n.text);
        let lo = match &f.gen_lo {
            Some(n) => lookup(n).ok_or(n.span),
            None => Ok(0),
        };
        let hi = match &f.gen_hi {
            Some((n, incl)) => lookup(n)
                .map(|g| if *incl { g } else { g - 1 })
                .ok_or(n.span),
            None => Ok(u32::MAX),
        };
        match (lo, hi) {
            (Ok(lo), Ok(hi)) => {
                self.generations = self
                    .isa
                    .generations
                    .iter()
                    .map(|(_, g)| *g)
                    .filter(|g| (lo..=hi).contains(g))
                    .collect();
                if self.generations.is_empty() {
                    self.err(f.isa.span, "the range holds no generation of the spec");
                }
            }
            (Err(span), _) | (_, Err(span)) => self.err(span, "no such generation in the spec"),
        }
    }

    /// The concrete type a written type names under `bind` (a scalar, or
    /// a vector `f32x4`: a register group).
    fn ty(&mut self, bind: &HashMap<&str, &Name>, n: &Name) -> Option<Type> {
        let concrete = bind.get(n.text.as_str()).copied().unwrap_or(n);
        match Type::parse(&concrete.text) {
            Some(s) => Some(s),
            None => {
                self.err(
                    n.span,
                    format!("`{}` is no type or type variable", concrete.text),
                );
                None
            }
        }
    }

    fn instance(&mut self, r: &super::RuleDef, bind: &HashMap<&str, &Name>) -> Option<Instance> {
        let before = self.errors.len();
        let mut b = Builder {
            bind,
            nodes: Vec::new(),
            slots: Vec::new(),
        };
        let result = match &r.pattern.ty {
            Some(t) => Some(self.ty(bind, t)?),
            None => None,
        };
        b.slots.push(Slot {
            name: "dst".into(),
            kind: SlotKind::Result,
            ty: result.unwrap_or(Type::U32),
        });
        self.node(&mut b, &r.pattern);
        for s in &r.stmts {
            if let Stmt::Let { name, ty, parts } = s {
                let Some(ty) = self.ty(bind, ty) else {
                    continue;
                };
                // `let dst: T = collect(…)` groups lanes into the result
                // (an instruction writing a longer group than the result).
                if name.text == "dst" && !parts.is_empty() {
                    if Some(ty) != result {
                        self.err(
                            name.span,
                            "`$dst` collected as another type than the result",
                        );
                    }
                    continue;
                }
                self.add_slot(&mut b, name, SlotKind::Temp, ty);
            }
        }
        let mut defined: Vec<bool> = b
            .slots
            .iter()
            .map(|s| s.kind != SlotKind::Result && s.kind != SlotKind::Temp)
            .collect();
        let mut insts = Vec::new();
        for s in &r.stmts {
            match s {
                Stmt::Template { text, span } => {
                    if let Some(t) = self.template(&b, text, *span, &mut defined) {
                        insts.push(t);
                    }
                }
                Stmt::Let { name, parts, .. } if !parts.is_empty() => {
                    if let Some(t) = self.collect(&b, name, parts, &mut defined) {
                        insts.push(t);
                    }
                }
                Stmt::Let { .. } => {}
            }
        }
        match result {
            Some(_) if !defined[0] && self.errors.len() == before => {
                self.err(r.name.span, "no template writes `$dst`")
            }
            None if defined[0] => self.err(
                r.name.span,
                "a template writes `$dst` but the pattern has no result",
            ),
            _ => {}
        }
        if self.errors.len() != before {
            return None;
        }
        let line = self.file.map.line_col(self.file.file, r.name.span.start).0 as u32;
        Some(Instance {
            name: r.name.text.clone(),
            line,
            nodes: b.nodes,
            slots: b.slots,
            insts,
        })
    }

    /// `let g: T = collect(parts)`: a structural step (no instruction)
    /// putting the parts' registers, in order, in group `g`. The parts
    /// must be written before and of `g`'s register file, and their
    /// lanes must add up to `g`'s.
    fn collect(
        &mut self,
        b: &Builder,
        name: &Name,
        parts: &[(Name, Option<u8>)],
        defined: &mut [bool],
    ) -> Option<Template> {
        let slot = |n: &str| b.slots.iter().position(|s| s.name == n);
        let g = slot(&name.text)?;
        let file = |c: &Self, ty: Type| c.types.get(ty.scalar.name()).map(|t| t.0);
        let mut srcs = Vec::new();
        let mut picks = Vec::new();
        let mut lanes = 0u32;
        for (p, lane) in parts {
            let Some(k) = slot(&p.text) else {
                self.err(
                    p.span,
                    format!("`${}` is not bound by the pattern or a `let`", p.text),
                );
                return None;
            };
            if !defined[k] {
                self.err(
                    p.span,
                    format!("`${}` is read before it is written", p.text),
                );
                return None;
            }
            let s = &b.slots[k];
            if !matches!(s.kind, SlotKind::Value | SlotKind::Temp | SlotKind::Result) {
                self.err(p.span, format!("`${}` is no register", p.text));
                return None;
            }
            if file(self, s.ty) != file(self, b.slots[g].ty) {
                self.err(
                    p.span,
                    format!(
                        "`${}` is in another register file than `${}`",
                        p.text, name.text
                    ),
                );
                return None;
            }
            match lane {
                Some(l) if u32::from(*l) >= u32::from(s.ty.lanes) || s.ty.lanes <= 1 => {
                    self.err(
                        p.span,
                        format!("`${}` is no vector with a lane {l}", p.text),
                    );
                    return None;
                }
                Some(l) => {
                    lanes += 1;
                    picks.push(*l);
                }
                None => {
                    lanes += u32::from(s.ty.lanes.max(1));
                    picks.push(ALL_LANES);
                }
            }
            srcs.push(k as u8);
        }
        if lanes != u32::from(b.slots[g].ty.lanes.max(1)) {
            self.err(
                name.span,
                format!(
                    "`${}` has {} lanes but its parts {lanes}",
                    name.text,
                    b.slots[g].ty.lanes.max(1)
                ),
            );
            return None;
        }
        defined[g] = true;
        let line = self.file.map.line_col(self.file.file, name.span.start).0 as u32;
        Some(Template {
            mnemonic: String::new(),
            word: 0,
            pieces: Vec::new(),
            dst: Some(g as u8),
            srcs,
            lanes: picks,
            line,
            collect: true,
        })
    }

    fn add_slot(&mut self, b: &mut Builder, name: &Name, kind: SlotKind, ty: Type) -> u8 {
        if b.slots.iter().any(|s| s.name == name.text) {
            self.err(name.span, format!("`${}` is bound twice", name.text));
        }
        b.slots.push(Slot {
            name: name.text.clone(),
            kind,
            ty,
        });
        (b.slots.len() - 1) as u8
    }

    /// Adds pattern `p` (and its nested patterns) as nodes; its index.
    fn node(&mut self, b: &mut Builder, p: &Pattern) -> u8 {
        let index = b.nodes.len();
        let result =
            p.ty.as_ref()
                .map(|t| self.ty(b.bind, t).unwrap_or(Type::BOOL));
        let ty = result.unwrap_or(Type::U32);
        b.nodes.push(Node {
            op: p.op.text.clone(),
            attrs: Vec::new(),
            args: None,
            ty: result,
        });
        let mut attrs = Vec::new();
        let mut sample: Vec<(Option<String>, String)> = Vec::new();
        for a in &p.attrs {
            match a {
                AttrPat::Word(w) => {
                    attrs.push(AttrCheck::Word(w.text.clone()));
                    sample.push((None, w.text.clone()));
                }
                AttrPat::Eq(k, v) => {
                    attrs.push(AttrCheck::Eq(k.text.clone(), v.text.clone()));
                    sample.push((Some(k.text.clone()), v.text.clone()));
                }
                AttrPat::Bind {
                    key,
                    placeholder,
                    file,
                } => {
                    let names = match file {
                        None => None,
                        Some(f) => match self
                            .isa
                            .regfile(&f.text)
                            .and_then(|i| self.isa.regfiles[i].names.as_ref())
                        {
                            Some(n) => Some((n.prefix.clone(), n.comps.clone())),
                            None => {
                                self.err(
                                    f.span,
                                    format!("`{}` is no named register file of the spec", f.text),
                                );
                                None
                            }
                        },
                    };
                    let slot = self.add_slot(b, placeholder, SlotKind::Literal { names }, ty);
                    attrs.push(AttrCheck::Bind {
                        key: key.as_ref().map(|k| k.text.clone()),
                        slot,
                    });
                    sample.push((key.as_ref().map(|k| k.text.clone()), "0".into()));
                }
            }
        }
        let mut args = None;
        let mut operand_types = Vec::new();
        if let Some(list) = &p.args {
            let mut out = Vec::new();
            for a in list {
                match a {
                    Arg::Value { name, ty } => {
                        let ty = self.ty(b.bind, ty).unwrap_or(Type::BOOL);
                        operand_types.push(ty);
                        let slot = self.add_slot(b, name, SlotKind::Value, ty);
                        out.push(ArgCheck::Value { slot, ty });
                    }
                    Arg::Nested(q) => {
                        let ty = q.ty.as_ref().and_then(|t| self.ty(b.bind, t));
                        operand_types.push(ty.unwrap_or(Type::BOOL));
                        let k = self.node(b, q);
                        out.push(ArgCheck::Node(k));
                    }
                }
            }
            args = Some(out);
        }
        self.generic_op(
            p,
            &sample,
            p.args.as_ref().map(|_| operand_types.as_slice()),
            result,
        );
        b.nodes[index].attrs = attrs;
        b.nodes[index].args = args;
        index as u8
    }

    /// The pattern names a generic opcode, and (when its attributes are
    /// all given) its operand and result types are ones it accepts.
    fn generic_op(
        &mut self,
        p: &Pattern,
        attrs: &[(Option<String>, String)],
        operands: Option<&[Type]>,
        result: Option<Type>,
    ) {
        let list: Vec<lathe_ir::Attr> = attrs
            .iter()
            .map(|(k, v)| lathe_ir::Attr {
                key: k.as_deref(),
                value: v,
            })
            .collect();
        match GenericOp::parse(&p.op.text, &list, result) {
            Ok(op) => {
                if let Some(operands) = operands {
                    let sig = Signature {
                        operands,
                        result,
                        has_address: false,
                        arrays: &[],
                    };
                    if let Err(m) = op.check(&sig) {
                        self.err(p.span, format!("`{}` here: {m}", p.op.text));
                    }
                }
            }
            Err(e) if e.attr.is_none() && e.message.starts_with("unknown opcode") => {
                self.err(p.op.span, e.message)
            }
            Err(_) => {}
        }
    }

    /// `text` with its placeholders replaced for checking.
    /// `text` with every placeholder replaced by its sample: a register of
    /// its type's file, or for a literal `1` (`0x0` when `zero`, the
    /// sample an immediate table holds; always `1` right after `0x`).
    fn substitute(
        &mut self,
        b: &Builder,
        text: &str,
        span: Span,
        zero: bool,
    ) -> Option<Substituted> {
        let mut out = String::new();
        let mut found: Vec<(u8, Span, u64, Option<usize>)> = Vec::new();
        let mut pieces = Vec::new();
        // Groups written `@$v` take 8 registers each from the top of the
        // file down, in the order the template writes them, clear of the
        // scalars' `4 + slot`.
        let mut groups_seen = 0u32;
        let mut piece = String::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut ok = true;
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'$' || c == b'{' {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len()
                    && (bytes[end].is_ascii_alphanumeric()
                        || bytes[end] == b'_'
                        || (c == b'{' && bytes[end] == b'.'))
                {
                    end += 1;
                }
                let name = &text[start..end];
                let at = Span::new(span.file, span.start + i, span.start + end);
                if c == b'{' {
                    if end >= bytes.len() || bytes[end] != b'}' {
                        self.err(at, "expected `{TYPEVAR}` or `{TYPEVAR.bits}`");
                        return None;
                    }
                    let (var, bits) = match name.strip_suffix(".bits") {
                        Some(v) => (v, true),
                        None => (name, false),
                    };
                    // A vector type variable spells as its scalar.
                    let concrete = b.bind.get(var).and_then(|n| Type::parse(&n.text));
                    match concrete.and_then(|t| self.types.get(t.scalar.name()).cloned()) {
                        Some((_, spelling, width)) => {
                            let s = if bits { width.to_string() } else { spelling };
                            out.push_str(&s);
                            piece.push_str(&s);
                        }
                        None => {
                            self.err(
                                at,
                                format!("`{var}` is no type variable with a `type` declaration"),
                            );
                            ok = false;
                        }
                    }
                    i = end + 1;
                    continue;
                }
                let Some(slot) = b.slots.iter().position(|s| s.name == name) else {
                    self.err(
                        at,
                        format!("`${name}` is not bound by the pattern or a `let`"),
                    );
                    return None;
                };
                let s = &b.slots[slot];
                // `$name:FILE`: a value read through a file the allocator
                // does not assign (ir3's predicate p0), into which
                // legalisation moves it; spelled as that file's registers
                // in order of appearance.
                let through = (!matches!(s.kind, SlotKind::Literal { .. })
                    && bytes.get(end) == Some(&b':'))
                .then(|| {
                    let from = end + 1;
                    let mut to = from;
                    while to < bytes.len() && bytes[to].is_ascii_alphanumeric() {
                        to += 1;
                    }
                    self.isa
                        .regfile(&text[from..to])
                        .filter(|&f| self.isa.regfiles[f].kind != RegfileKind::Gpr)
                        .map(|f| (f, to))
                })
                .flatten();
                if let Some((f, to)) = through {
                    let n = self.isa.regfiles[f].names.as_ref()?;
                    let number = found.iter().filter(|r| r.3 == Some(f)).count() as u32;
                    let width = n.comps.len().max(1) as u32;
                    let sample = match n.comps.chars().nth((number % width) as usize) {
                        Some(c) => format!("{}{}.{c}", n.prefix, number / width),
                        None => format!("{}{number}", n.prefix),
                    };
                    found.push((slot as u8, at, u64::from(number), Some(f)));
                    piece.push_str(&sample);
                    out.push_str(&sample);
                    i = to;
                    continue;
                }
                let sample = match &s.kind {
                    SlotKind::Literal { names: None } if zero && !out.ends_with("0x") => {
                        "0x0".to_string()
                    }
                    SlotKind::Literal { names: None } => "1".to_string(),
                    SlotKind::Literal {
                        names: Some((prefix, comps)),
                    } => match comps.chars().nth(1) {
                        Some(c) => format!("{prefix}0.{c}"),
                        None => format!("{prefix}1"),
                    },
                    _ => match self.types.get(s.ty.scalar.name()) {
                        Some((f, _, _)) if out.ends_with('@') => {
                            // A group written `@$v` (Valhall's staging
                            // registers) lists its registers, `@r8:r9`,
                            // from an even register of its own.
                            let n = self.isa.regfiles[*f].names.as_ref()?;
                            groups_seen += 1;
                            let first = GROUP_TOP - 8 * groups_seen;
                            (first..first + u32::from(s.ty.lanes.max(1)))
                                .map(|r| format!("{}{r}", n.prefix))
                                .collect::<Vec<_>>()
                                .join(":")
                        }
                        Some((f, _, _)) => {
                            let n = self.isa.regfiles[*f].names.as_ref()?;
                            let number = 4 + slot as u32;
                            match n.comps.chars().nth(number as usize % n.comps.len().max(1)) {
                                Some(c) => {
                                    format!("{}{}.{c}", n.prefix, number / n.comps.len() as u32)
                                }
                                None => format!("{}{number}", n.prefix),
                            }
                        }
                        None => {
                            self.err(
                                at,
                                format!("type `{}` has no `type` declaration", s.ty.scalar.name()),
                            );
                            return None;
                        }
                    },
                };
                if matches!(s.kind, SlotKind::Literal { .. }) {
                    pieces.push(Piece::Text(std::mem::take(&mut piece)));
                    pieces.push(Piece::Literal(slot as u8));
                } else {
                    let first = if out.ends_with('@') {
                        u64::from(GROUP_TOP - 8 * groups_seen)
                    } else {
                        4 + slot as u64
                    };
                    found.push((slot as u8, at, first, None));
                    piece.push_str(&sample);
                    // `$dst=$v` at a tied operand: the result written
                    // where the source `$v` is read, one register.
                    if let Some((tied, to)) = self.tied_source(b, text, span, end) {
                        let at = Span::new(span.file, span.start + end + 1, span.start + to);
                        found.push((tied as u8, at, first, None));
                        out.push_str(&sample);
                        i = to;
                        continue;
                    }
                }
                out.push_str(&sample);
                i = end;
            } else {
                out.push(c as char);
                piece.push(c as char);
                i += 1;
            }
        }
        if pieces.is_empty() {
            piece.clear();
        } else {
            pieces.push(Piece::Text(piece));
        }
        ok.then_some(Substituted {
            text: out,
            registers: found,
            pieces,
        })
    }

    /// The slot of `$v` in `=$v` at byte `at` of `text`, and the byte
    /// after it.
    fn tied_source(
        &mut self,
        b: &Builder,
        text: &str,
        span: Span,
        at: usize,
    ) -> Option<(usize, usize)> {
        let rest = text.get(at..)?.strip_prefix("=$")?;
        let len = rest
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
            .count();
        let name = &rest[..len];
        let to = at + 2 + len;
        match b.slots.iter().position(|s| s.name == name) {
            Some(k) if !matches!(b.slots[k].kind, SlotKind::Literal { .. }) => Some((k, to)),
            _ => {
                let where_ = Span::new(span.file, span.start + at + 1, span.start + to);
                self.err(
                    where_,
                    format!("`${name}` is no register bound by the pattern or a `let`"),
                );
                None
            }
        }
    }

    fn template(
        &mut self,
        b: &Builder,
        text: &str,
        span: Span,
        defined: &mut [bool],
    ) -> Option<Template> {
        let mut sub = self.substitute(b, text, span, false)?;
        // A literal that only an immediate table holds: sample zero.
        if !sub.pieces.is_empty() {
            if let Some(&g) = self.generations.first() {
                if self.isa.assemble(&sub.text, g).is_err() {
                    let zero = self.substitute(b, text, span, true)?;
                    if self.isa.assemble(&zero.text, g).is_ok() {
                        sub = zero;
                    }
                }
            }
        }
        let Substituted {
            text: asm,
            registers: placeholders,
            pieces,
        } = sub;
        // A statement loses its trailing space to the parser, and an
        // instruction without operands may display with one (Valhall's
        // `NOP ` and `BARRIER `).
        let asm = match self.generations.first() {
            Some(&g)
                if self.isa.assemble(&asm, g).is_err()
                    && self.isa.assemble(&format!("{asm} "), g).is_ok() =>
            {
                format!("{asm} ")
            }
            _ => asm,
        };
        let line = self.file.map.line_col(span.file, span.start).0 as u32;
        let mut word = None;
        let mut result = None;
        for &g in &self.generations.clone() {
            let w = match self.isa.assemble(&asm, g) {
                Ok(w) => w,
                Err(e) => {
                    let gname = self.gen_name(g);
                    self.err(span, format!("`{asm}` does not assemble on {gname}: {e}"));
                    return None;
                }
            };
            if let Some(prev) = word {
                if prev != w {
                    self.err(span, format!("`{asm}` assembles to different words across generations ({prev:#018x}, {w:#018x})"));
                    return None;
                }
                continue;
            }
            word = Some(w);
            match self.isa.disassemble(w, g) {
                Ok(shown) if normal(&shown) == normal(&asm) => {}
                Ok(shown) => {
                    self.err(span, format!("`{asm}` assembles to an instruction shown as `{shown}`: write that form"));
                    return None;
                }
                Err(e) => {
                    self.err(span, format!("`{asm}` does not decode back: {e}"));
                    return None;
                }
            }
            result = Some(self.operands(b, w, g, &asm, span, &placeholders, defined)?);
        }
        let (mnemonic, dst, srcs) = result?;
        Some(Template {
            mnemonic,
            word: word?,
            pieces,
            dst,
            srcs,
            lanes: Vec::new(),
            line,
            collect: false,
        })
    }

    fn gen_name(&self, g: u32) -> String {
        self.isa
            .generations
            .iter()
            .find(|(_, v)| *v == g)
            .map_or_else(|| g.to_string(), |(n, _)| n.to_string())
    }

    /// Maps the decoded word's register operands to the placeholders.
    #[allow(clippy::too_many_arguments)]
    fn operands(
        &mut self,
        b: &Builder,
        word: u64,
        g: u32,
        asm: &str,
        span: Span,
        placeholders: &[(u8, Span, u64, Option<usize>)],
        defined: &mut [bool],
    ) -> Option<(String, Option<u8>, Vec<u8>)> {
        let isa = self.isa;
        let enc = isa.decode(word, g)?;
        let leaf = self.table.leaf(isa, self.table.by_enc(enc)?).clone();
        let fixed = asserted_bits(isa, enc, word, g);
        let registers: Vec<_> = leaf
            .operands
            .iter()
            .filter(|o| {
                !(o.files.is_empty() || is_literal_value(isa, enc, &o.field, word, g))
                    && o.field.mask() & !fixed != 0
            })
            .collect();
        if registers.len() != placeholders.len() {
            self.err(
                span,
                format!(
                    "`{asm}` has {} register operand(s) but the template names {} placeholder(s) for them",
                    registers.len(),
                    placeholders.len()
                ),
            );
            return None;
        }
        let mut dst = None;
        let mut srcs = Vec::new();
        let sizes = groups(isa, word, g)?;
        for (o, &(slot, at, number, through)) in registers.iter().zip(placeholders) {
            let s = &b.slots[slot as usize];
            if let Some(f) = through.filter(|_| o.role == Role::Dst || s.ty.lanes > 1) {
                let name = &isa.regfiles[f].name;
                self.err(at, format!("`${}:{name}` can only be read, one register: legalisation moves a value into `{name}` before its reader", s.name));
                return None;
            }
            // A register group is as long as the spec's semantics say
            // this operand reads or writes.
            let lanes = u32::from(s.ty.lanes);
            let group = sizes.size(&o.field.name);
            if let Some(why) = sizes.unknown.as_ref().filter(|_| lanes > 1) {
                self.err(at, format!("`${}` is a group of {lanes} registers, but the registers `{asm}` reads and writes are not known: {why}", s.name));
                return None;
            }
            if sizes.unknown.is_none() && lanes != group {
                let verb = if o.role == Role::Dst {
                    "writes"
                } else {
                    "reads"
                };
                self.err(at, format!("`${}` is {lanes} register(s) ({}), but `{asm}` {verb} a group of {group} at operand `{}` (the spec's semantics)", s.name, s.ty, o.key));
                return None;
            }
            let value = o.field.extract(word);
            let cleared = crate::machine::clear_register(isa, &o.field, word, g);
            let rebuilt = set_in_form(isa, &o.field.ty, o.field.extract(cleared), number, g, 0);
            if rebuilt != value {
                self.err(at, format!("`${}` is not the operand `{}` reads here (operands are taken in text order)", s.name, o.key));
                return None;
            }
            let file = match through {
                Some(f) => f,
                None => self.types.get(s.ty.scalar.name()).cloned()?.0,
            };
            let kind = isa.regfiles[file].kind;
            if !o.files.iter().any(|&f| isa.regfiles[f].kind == kind) {
                self.err(
                    at,
                    format!(
                        "operand `{}` takes no `{}` register",
                        o.key, isa.regfiles[file].name
                    ),
                );
                return None;
            }
            match o.role {
                Role::Dst => {
                    if !matches!(s.kind, SlotKind::Result | SlotKind::Temp) || dst.is_some() {
                        self.err(at, format!("`${}` cannot be written here: a template writes one `$dst` or `let` temporary", s.name));
                        return None;
                    }
                    dst = Some(slot);
                }
                _ => {
                    if !defined[slot as usize] {
                        self.err(
                            at,
                            format!("`${}` is read before a template writes it", s.name),
                        );
                        return None;
                    }
                    srcs.push(slot);
                }
            }
        }
        if let Some(d) = dst {
            defined[d as usize] = true;
        }
        Some((leaf.name.to_string(), dst, srcs))
    }
}

/// Text with runs of spaces collapsed, for comparing shown forms.
fn normal(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
