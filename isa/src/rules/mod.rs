//! The instruction-selection rules language: one declarative file per
//! target maps generic IR patterns to instruction templates written in the
//! ISA's own assembly syntax (see `docs/rules-language.md`).
//!
//! [`parse`] reads a rules file into its syntax tree with `file:line:col`
//! diagnostics; [`check::check`] instantiates every rule and assembles
//! each template with the spec's assembler, decoding the word back to
//! learn the instruction and which operands are registers; [`generate`] turns
//! the checked rules into the static tables the runtime selector
//! ([`crate::select`]) interprets. `lathe_codegen_macros::rules!` runs all
//! three at build time.
//!
//! ```
//! let dir = env!("CARGO_MANIFEST_DIR");
//! let isa = lathe_isa::load(format!("{dir}/specs/adreno/ir3.isa")).unwrap();
//! let text = "rules ir3 gen a6xx..;\n\
//!             type f32 = gpr \"f32\" 32;\n\
//!             rule fadd: fadd(a: f32, b: f32): f32 => { add.f $dst, $a, $b; }\n";
//! let file = lathe_isa::rules::parse_str("x.rules", text).unwrap();
//! let checked = lathe_isa::rules::check::check(&isa, &file).unwrap();
//! assert_eq!(checked.rules[0].insts[0].mnemonic, "add.f");
//!
//! // A template that does not assemble names its line and column.
//! let bad = text.replace("add.f", "add.q");
//! let file = lathe_isa::rules::parse_str("x.rules", &bad).unwrap();
//! let err = lathe_isa::rules::check::check(&isa, &file).unwrap_err();
//! assert!(err.to_string().starts_with("x.rules:3:43: error: `add.q r1.x, r1.y, r1.z` does not assemble"), "{err}");
//! ```

pub mod check;
pub mod generate;

use std::path::{Path, PathBuf};

use pest::Parser;
use pest::iterators::Pair;

use crate::diag::{Diagnostic, Diagnostics, FileId, SourceMap, Span};

#[derive(pest_derive::Parser)]
#[grammar = "rules/grammar.pest"]
struct RulesParser;

type P<'a> = Pair<'a, Rule>;

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// A parsed rules file.
#[derive(Clone, Debug)]
pub struct RulesFile {
    pub map: SourceMap,
    pub file: FileId,
    /// The ISA the rules target (`rules ir3 …`).
    pub isa: Name,
    /// Generation bounds: `(lo, hi, hi inclusive)`.
    pub gen_lo: Option<Name>,
    pub gen_hi: Option<(Name, bool)>,
    pub types: Vec<TypeDecl>,
    pub rules: Vec<RuleDef>,
}

/// `type f32 = gpr "f32" 32;`
#[derive(Clone, Debug)]
pub struct TypeDecl {
    pub name: Name,
    pub regfile: Name,
    pub spelling: String,
    pub bits: u32,
}

/// One `rule`.
#[derive(Clone, Debug)]
pub struct RuleDef {
    pub doc: String,
    pub name: Name,
    /// Type variables of the `for` clause.
    pub vars: Vec<Name>,
    /// One tuple of concrete types per instance.
    pub tuples: Vec<Vec<Name>>,
    pub pattern: Pattern,
    pub stmts: Vec<Stmt>,
}

/// A generic instruction pattern: opcode, attributes, operands, type.
#[derive(Clone, Debug)]
pub struct Pattern {
    pub op: Name,
    pub attrs: Vec<AttrPat>,
    /// `None`: the operands are not constrained (and not bound).
    pub args: Option<Vec<Arg>>,
    /// The result type; `None` for an instruction without a result.
    pub ty: Option<Name>,
    pub span: Span,
}

/// One attribute constraint of a pattern.
#[derive(Clone, Debug)]
pub enum AttrPat {
    /// A bare word that must be present (`neg`).
    Word(Name),
    /// `key=value`, which must be present with that value.
    Eq(Name, Name),
    /// The attribute `key` (or the bare value when `None`) is bound to a
    /// literal placeholder, written as a register of `file` when given.
    Bind {
        key: Option<Name>,
        placeholder: Name,
        file: Option<Name>,
    },
}

/// One operand of a pattern.
#[derive(Clone, Debug)]
pub enum Arg {
    /// `a: T`: any value of the type, bound to `$a`.
    Value { name: Name, ty: Name },
    /// A nested pattern the operand's defining instruction must match.
    Nested(Pattern),
}

/// One statement of a rule's body.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let t: T;`, or `let g: T = collect($a, …);` (`parts` the
    /// placeholders, without `$`, each whole or one lane: `$c[2]`).
    Let {
        name: Name,
        ty: Name,
        parts: Vec<(Name, Option<u8>)>,
    },
    /// One instruction in the ISA's assembly syntax.
    Template { text: String, span: Span },
}

/// Why a rules file could not be read or parsed.
pub type RulesError = Diagnostics;

/// Reads and parses the rules file at `path`.
pub fn parse_file(path: &Path) -> Result<RulesFile, RulesError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostics(vec![Diagnostic::unpositioned(
            path,
            format!("cannot read: {e}"),
        )])
    })?;
    parse_named(path.to_path_buf(), text)
}

/// Parses rules `text`, shown in diagnostics as `path`.
pub fn parse_str(path: &str, text: &str) -> Result<RulesFile, RulesError> {
    parse_named(PathBuf::from(path), text.to_string())
}

fn parse_named(path: PathBuf, text: String) -> Result<RulesFile, RulesError> {
    let mut map = SourceMap::default();
    let file = map.add(path, text);
    let cx = Cx { map: &map, file };
    let parsed = cx.file().map_err(|d| Diagnostics(vec![d]))?;
    let (isa, gen_lo, gen_hi, types, rules) = parsed;
    Ok(RulesFile {
        map,
        file,
        isa,
        gen_lo,
        gen_hi,
        types,
        rules,
    })
}

type Parsed = (
    Name,
    Option<Name>,
    Option<(Name, bool)>,
    Vec<TypeDecl>,
    Vec<RuleDef>,
);

struct Cx<'m> {
    map: &'m SourceMap,
    file: FileId,
}

fn rule_name(r: &Rule) -> &'static str {
    match r {
        Rule::EOI => "end of file",
        Rule::header => "the header `rules NAME gen RANGE;`",
        Rule::item => "a `type` or `rule` declaration",
        Rule::ident => "a name",
        Rule::int => "an integer",
        Rule::string => "a string",
        Rule::gen_range | Rule::gen_lo | Rule::gen_hi => "a generation range like `a6xx..`",
        Rule::pattern | Rule::effect => "a pattern `op(a: T, …): T` or `op(a: T, …)`",
        Rule::attrs | Rule::attr => "an attribute",
        Rule::args | Rule::arg | Rule::value | Rule::nested => "an operand `name: TYPE`",
        Rule::stmt | Rule::template | Rule::template_text => "a template ending in `;`",
        Rule::let_stmt => "`let NAME: TYPE;`",
        Rule::for_clause | Rule::tuple | Rule::vars => "a `for` clause",
        Rule::placeholder => "a placeholder `$name`",
        _ => "something else",
    }
}

impl Cx<'_> {
    fn span(&self, p: &P) -> Span {
        let s = p.as_span();
        Span::new(self.file, s.start(), s.end())
    }

    fn name(&self, p: P) -> Name {
        Name {
            span: self.span(&p),
            text: p.as_str().trim_start_matches('$').to_string(),
        }
    }

    fn pest_error(&self, e: pest::error::Error<Rule>) -> Diagnostic {
        let pos = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        let text = &self.map.files[self.file].text;
        let found = text[pos.min(text.len())..]
            .split_whitespace()
            .next()
            .map_or("end of file".to_string(), |w| {
                format!("`{}`", w.chars().take(20).collect::<String>())
            });
        let message = match &e.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => {
                let mut names: Vec<&str> = positives.iter().map(rule_name).collect();
                names.dedup();
                if names.is_empty() {
                    format!("syntax error at {found}")
                } else {
                    format!("expected {}, found {found}", names.join(" or "))
                }
            }
            pest::error::ErrorVariant::CustomError { message } => message.clone(),
        };
        self.map
            .diagnostic(Span::new(self.file, pos, pos + 1), message)
    }

    fn file(&self) -> Result<Parsed, Diagnostic> {
        let text = &self.map.files[self.file].text;
        let root = RulesParser::parse(Rule::file, text)
            .map_err(|e| self.pest_error(e))?
            .next()
            .ok_or_else(|| {
                self.map
                    .diagnostic(Span::new(self.file, 0, 0), "empty file")
            })?;
        let mut header = None;
        let mut types = Vec::new();
        let mut rules = Vec::new();
        for p in root.into_inner() {
            match p.as_rule() {
                Rule::header => header = Some(self.header(p)),
                Rule::item => {
                    let mut doc = String::new();
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::doc => {
                                doc.push_str(q.as_str().trim_start_matches("///").trim());
                                doc.push('\n');
                            }
                            Rule::type_decl => types.push(self.type_decl(q)),
                            Rule::rule => rules.push(self.rule(q, std::mem::take(&mut doc))),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let (isa, lo, hi) =
            header.ok_or_else(|| self.map.diagnostic(Span::new(self.file, 0, 0), "no header"))?;
        Ok((isa, lo, hi, types, rules))
    }

    fn header(&self, p: P) -> (Name, Option<Name>, Option<(Name, bool)>) {
        let mut it = p.into_inner();
        let isa = it.next().map(|q| self.name(q));
        let mut lo = None;
        let mut hi = None;
        let mut inclusive = false;
        for q in it.flat_map(|r| r.into_inner()) {
            match q.as_rule() {
                Rule::gen_lo => lo = q.into_inner().next().map(|n| self.name(n)),
                Rule::gen_hi => hi = q.into_inner().next().map(|n| self.name(n)),
                Rule::range_incl => inclusive = true,
                _ => {}
            }
        }
        let isa = isa.unwrap_or(Name {
            text: String::new(),
            span: Span::new(self.file, 0, 0),
        });
        (isa, lo, hi.map(|h| (h, inclusive)))
    }

    fn type_decl(&self, p: P) -> TypeDecl {
        let mut it = p.into_inner();
        let name = self.name(it.next().expect("grammar: type name"));
        let regfile = self.name(it.next().expect("grammar: type file"));
        let spelling = it
            .next()
            .map_or(String::new(), |s| s.as_str().trim_matches('"').to_string());
        let bits = it.next().and_then(|b| b.as_str().parse().ok()).unwrap_or(0);
        TypeDecl {
            name,
            regfile,
            spelling,
            bits,
        }
    }

    fn rule(&self, p: P, doc: String) -> RuleDef {
        let mut it = p.into_inner().peekable();
        let name = self.name(it.next().expect("grammar: rule name"));
        let mut vars = Vec::new();
        let mut tuples = Vec::new();
        let mut pattern = None;
        let mut stmts = Vec::new();
        for q in it {
            match q.as_rule() {
                Rule::for_clause => {
                    for r in q.into_inner() {
                        let names: Vec<Name> =
                            r.clone().into_inner().map(|n| self.name(n)).collect();
                        match r.as_rule() {
                            Rule::vars => vars = names,
                            Rule::tuple => tuples.push(names),
                            _ => {}
                        }
                    }
                }
                Rule::pattern | Rule::effect => pattern = Some(self.pattern(q)),
                Rule::stmt => {
                    if let Some(s) = q.into_inner().next() {
                        stmts.push(self.stmt(s));
                    }
                }
                _ => {}
            }
        }
        RuleDef {
            doc,
            pattern: pattern.expect("grammar: rule pattern"),
            name,
            vars,
            tuples,
            stmts,
        }
    }

    fn stmt(&self, p: P) -> Stmt {
        match p.as_rule() {
            Rule::let_stmt => {
                let mut it = p.into_inner();
                let name = self.name(it.next().expect("grammar: let name"));
                let ty = self.name(it.next().expect("grammar: let type"));
                let parts = it
                    .map(|q| {
                        let mut inner = q.into_inner();
                        let mut n = self.name(inner.next().expect("grammar: part placeholder"));
                        n.text = n.text.trim_start_matches('$').to_string();
                        // An out-of-range lane becomes 255, which no vector has.
                        let lane = inner.next().map(|l| l.as_str().parse().unwrap_or(u8::MAX));
                        (n, lane)
                    })
                    .collect();
                Stmt::Let { name, ty, parts }
            }
            _ => {
                let text = p.into_inner().next().expect("grammar: template text");
                Stmt::Template {
                    span: self.span(&text),
                    text: text.as_str().trim_end().to_string(),
                }
            }
        }
    }

    fn pattern(&self, p: P) -> Pattern {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let op = self.name(it.next().expect("grammar: pattern op"));
        let mut attrs = Vec::new();
        let mut args = None;
        let mut ty = None;
        for q in it {
            match q.as_rule() {
                Rule::attrs => attrs = q.into_inner().filter_map(|a| self.attr(a)).collect(),
                Rule::args => {
                    args = Some(
                        q.into_inner()
                            .filter_map(|a| a.into_inner().next())
                            .map(|a| match a.as_rule() {
                                Rule::nested => Arg::Nested(self.pattern(a)),
                                _ => {
                                    let mut v = a.into_inner();
                                    let name = self.name(v.next().expect("grammar: operand"));
                                    let ty = self.name(v.next().expect("grammar: operand type"));
                                    Arg::Value { name, ty }
                                }
                            })
                            .collect(),
                    )
                }
                _ => ty = Some(self.name(q)),
            }
        }
        Pattern {
            ty,
            op,
            attrs,
            args,
            span,
        }
    }

    fn attr(&self, p: P) -> Option<AttrPat> {
        let a = p.into_inner().next()?;
        let kind = a.as_rule();
        let parts: Vec<Name> = match kind {
            Rule::attr_word => vec![self.name(a)],
            _ => a.into_inner().map(|n| self.name(n)).collect(),
        };
        let mut parts = parts.into_iter();
        Some(match kind {
            Rule::attr_word => AttrPat::Word(parts.next()?),
            Rule::attr_eq => AttrPat::Eq(parts.next()?, parts.next()?),
            Rule::attr_bind => AttrPat::Bind {
                key: parts.next(),
                placeholder: parts.next()?,
                file: parts.next(),
            },
            _ => AttrPat::Bind {
                key: None,
                placeholder: parts.next()?,
                file: parts.next(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_point_at_the_problem() {
        let err = parse_str(
            "t.rules",
            "rules ir3 gen a6xx..;\nrule x: fadd(a: f32 b: f32): f32 => {}\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("t.rules:2:15: error: expected"), "{text}");
        assert!(text.contains("^"), "{text}");
    }

    #[test]
    fn parses_every_construct() {
        let text = "/// doc\nrules ir3 gen a6xx..=a7xx;\ntype f32 = gpr \"f32\" 32;\n\
                    /// A rule.\nrule r for (S, D) in [(f32, f16), (f16, f32)]: \
                    fadd(mov[neg](a: S): S, const[$k]: S, load_uniform[index=$u: const]: S): D => {\n\
                    let t: D;\n  add.f $t, (neg)$a, $k;\n  mov.f32f32 $dst, $t;\n}\n";
        let f = parse_str("t.rules", text).unwrap();
        assert_eq!(f.isa.text, "ir3");
        assert_eq!(
            f.gen_hi.as_ref().map(|(n, i)| (n.text.as_str(), *i)),
            Some(("a7xx", true))
        );
        let r = &f.rules[0];
        assert_eq!(r.doc, "A rule.\n");
        assert_eq!(r.vars.len(), 2);
        assert_eq!(r.tuples.len(), 2);
        let args = r.pattern.args.as_ref().unwrap();
        assert!(matches!(&args[0], Arg::Nested(p) if p.op.text == "mov"));
        assert!(matches!(&args[2], Arg::Nested(p) if matches!(&p.attrs[0],
            AttrPat::Bind { key: Some(k), file: Some(f), .. } if k.text == "index" && f.text == "const")));
        assert_eq!(r.stmts.len(), 3);
        assert!(
            matches!(&r.stmts[1], Stmt::Template { text, .. } if text == "add.f $t, (neg)$a, $k")
        );
    }
}
