//! Parses one `.isa` file into the syntax tree (`ast`), turning pest's
//! errors into our own positioned diagnostics.

use pest::Parser;
use pest::iterators::Pair;

use crate::ast::*;
use crate::diag::{Diagnostic, FileId, SourceMap, Span};
use crate::expr::{BinOp, Expr, ExprKind, UnOp};

#[derive(pest_derive::Parser)]
#[grammar = "grammar.pest"]
struct IsaParser;

type P<'a> = Pair<'a, Rule>;

mod sem;

/// Punctuation is a rule only so that errors can name it; skip it.
fn keep(p: &P) -> bool {
    !matches!(
        p.as_rule(),
        Rule::colon | Rule::semi | Rule::equals | Rule::lbrace | Rule::rbrace
    )
}

/// Parses file `file` of `map`.
pub fn parse_file(map: &SourceMap, file: FileId) -> Result<File, Diagnostic> {
    let text = &map.files[file].text;
    let mut pairs = IsaParser::parse(Rule::file, text).map_err(|e| pest_error(map, file, e))?;
    let root = pairs
        .next()
        .expect("grammar: file rule always yields one pair");
    let cx = Cx { map, file };
    let mut items = Vec::new();
    for item in root.into_inner().filter(keep) {
        if item.as_rule() == Rule::item {
            items.push(cx.item(item)?);
        }
    }
    Ok(File { items })
}

fn rule_name(rule: &Rule) -> &'static str {
    match rule {
        Rule::EOI => "end of file",
        Rule::colon => "`:`",
        Rule::semi => "`;`",
        Rule::equals => "`=`",
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::item => {
            "a declaration (`isa`, `import`, `enum`, `expr`, `encoding`, `latency`, `regfile`, `idiom`)"
        }
        Rule::regfile_item => {
            "a register file item (`kind`, `unit`, `count`, `inside`, `occupancy`, `prefix`)"
        }
        Rule::isa_item => "`width`, `root`, `generations`, `meta` or `field_meta`",
        Rule::body_item => {
            "an encoding item (`field`, `derived`, `pattern`, `assert`, `display`, `when`, `gen`, `mnemonic`, `params`, `meta`, `overlaps`, `check`)"
        }
        Rule::ident => "a name",
        Rule::enc_name => "an encoding or type name",
        Rule::int => "an integer",
        Rule::string => "a string",
        Rule::bits | Rule::range => "a bit range like `3` or `0..=7`",
        Rule::field_type => "a type",
        Rule::expr | Rule::binary | Rule::unary | Rule::primary => "an expression",
        Rule::bin_op => "an operator",
        Rule::pattern_value => "a pattern value (`0b01x`, an integer or `any`)",
        Rule::meta_value => "a metadata value",
        Rule::meta_type => "a metadata type (int, bool, string, ident, idents, class, fields)",
        Rule::gen_range | Rule::gen_bound => "a generation range like `500..`",
        Rule::latency_rule | Rule::class_set => "a latency rule `A -> B = N;`",
        Rule::classes_item => "`classes`",
        Rule::default_clause => "`default`",
        Rule::field_meta_block => "`meta { … }`",
        Rule::type_args => "`(`",
        Rule::width_clause => "`width`",
        Rule::enum_value => "an enum value `N = \"text\"`",
        Rule::gen_def => "a generation `name = N`",
        Rule::doc_line | Rule::docs => "a doc comment",
        _ => "something else",
    }
}

fn pest_error(map: &SourceMap, file: FileId, e: pest::error::Error<Rule>) -> Diagnostic {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let message = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut names: Vec<&str> = positives.iter().map(rule_name).collect();
            names.dedup();
            let text = &map.files[file].text;
            let rest = &text[pos.min(text.len())..];
            let word_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let found = if word_len > 0 {
                &rest[..word_len]
            } else {
                rest.chars().next().map_or("", |c| &rest[..c.len_utf8()])
            };
            let found = if found.is_empty() {
                "end of file".to_string()
            } else {
                format!("`{}`", found.chars().take(20).collect::<String>())
            };
            match names.len() {
                0 => format!("syntax error at {found}"),
                1 => format!("expected {}, found {found}", names[0]),
                _ => {
                    let last = names.pop().unwrap_or_default();
                    format!("expected {} or {last}, found {found}", names.join(", "))
                }
            }
        }
        pest::error::ErrorVariant::CustomError { message } => message.clone(),
    };
    map.diagnostic(Span::new(file, pos, pos + 1), message)
}

struct Cx<'m> {
    map: &'m SourceMap,
    file: FileId,
}

impl Cx<'_> {
    fn span(&self, p: &P) -> Span {
        let s = p.as_span();
        Span::new(self.file, s.start(), s.end())
    }

    fn err(&self, p: &P, msg: impl Into<String>) -> Diagnostic {
        self.map.diagnostic(self.span(p), msg)
    }

    fn name(&self, p: P) -> Name {
        Spanned {
            span: self.span(&p),
            node: p.as_str().to_string(),
        }
    }

    fn int(&self, p: &P) -> Result<u64, Diagnostic> {
        let s: String = p.as_str().chars().filter(|c| *c != '_').collect();
        let r = if let Some(h) = s.strip_prefix("0x") {
            u64::from_str_radix(h, 16)
        } else if let Some(b) = s.strip_prefix("0b") {
            u64::from_str_radix(b, 2)
        } else {
            s.parse::<u64>()
        };
        r.map_err(|_| self.err(p, "integer does not fit in 64 bits"))
    }

    fn sint(&self, p: &P) -> Result<Spanned<u64>, Diagnostic> {
        Ok(Spanned {
            node: self.int(p)?,
            span: self.span(p),
        })
    }

    fn string(&self, p: P) -> Result<Spanned<String>, Diagnostic> {
        let span = self.span(&p);
        let inner = p.into_inner().find(keep).map(|i| i.as_str()).unwrap_or("");
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    other => {
                        return Err(self.map.diagnostic(
                            span,
                            format!("unknown escape `\\{}` in string", other.unwrap_or(' ')),
                        ));
                    }
                }
            } else {
                out.push(c);
            }
        }
        Ok(Spanned { node: out, span })
    }

    fn docs(&self, p: P) -> String {
        let mut lines = Vec::new();
        for l in p.into_inner().filter(keep) {
            let t = l.as_str().trim_start_matches("///");
            lines.push(t.strip_prefix(' ').unwrap_or(t).trim_end().to_string());
        }
        lines.join("\n")
    }

    fn item(&self, p: P) -> Result<Item, Diagnostic> {
        let mut it = p.into_inner().filter(keep);
        let doc = self.docs(it.next().expect("item: docs"));
        let d = it.next().expect("item: body");
        Ok(match d.as_rule() {
            Rule::isa_decl => Item::Isa(self.isa_decl(doc, d)?),
            Rule::import => Item::Import(self.string(d.into_inner().find(keep).expect("import"))?),
            Rule::enum_decl => Item::Enum(self.enum_decl(doc, d)?),
            Rule::expr_decl => {
                let mut i = d.into_inner().filter(keep).peekable();
                let name = self.name(i.next().expect("expr name"));
                let mut params = Vec::new();
                if let Some(p) = i.next_if(|p| p.as_rule() == Rule::expr_params) {
                    params = p.into_inner().filter(keep).map(|n| self.name(n)).collect();
                }
                let expr = self.expr(i.next().expect("expr"))?;
                Item::Expr(ExprDecl {
                    doc,
                    name,
                    params,
                    expr,
                })
            }
            Rule::encoding => Item::Encoding(self.encoding(doc, d)?),
            Rule::latency => Item::Latency(self.latency(d)?),
            Rule::regfile => Item::Regfile(self.regfile(doc, d)?),
            Rule::idiom => {
                let mut i = d.into_inner().filter(keep);
                let name = self.name(i.next().expect("idiom name"));
                let text = self.string(i.next().expect("idiom text"))?;
                let generation = i.next().map(|g| self.gen_range(g)).transpose()?;
                Item::Idiom(IdiomDecl {
                    doc,
                    name,
                    text,
                    generation,
                })
            }
            Rule::machine_decl => Item::Machine(self.machine_decl(d)?),
            Rule::semantics_decl => Item::Semantics(self.semantics_decl(doc, d)?),
            r => unreachable!("grammar: unexpected item {r:?}"),
        })
    }

    fn isa_decl(&self, doc: String, p: P) -> Result<IsaDecl, Diagnostic> {
        let mut it = p.into_inner().filter(keep);
        let name = self.name(it.next().expect("isa name"));
        let mut d = IsaDecl {
            doc,
            name,
            width: None,
            root: None,
            generations: Vec::new(),
            meta: Vec::new(),
            field_meta: Vec::new(),
            notes_asserts: false,
        };
        for item in it {
            let mut ii = item.into_inner().filter(keep);
            let idoc = self.docs(ii.next().expect("docs"));
            let x = ii.next().expect("isa item");
            match x.as_rule() {
                Rule::width_item => {
                    let w = x.into_inner().find(keep).expect("width");
                    d.width = Some(self.sint(&w)?);
                }
                Rule::root_item => {
                    d.root = Some(self.name(x.into_inner().find(keep).expect("root")))
                }
                Rule::generations => {
                    for g in x.into_inner().filter(keep) {
                        let mut gi = g.into_inner().filter(keep);
                        let n = self.name(gi.next().expect("gen name"));
                        let v = self.int(&gi.next().expect("gen value"))?;
                        d.generations.push((n, v));
                    }
                }
                Rule::notes_item => d.notes_asserts = true,
                Rule::meta_decl => d.meta.push(self.meta_decl(idoc, x)?),
                Rule::field_meta_decl => d.field_meta.push(self.meta_decl(idoc, x)?),
                r => unreachable!("grammar: isa item {r:?}"),
            }
        }
        Ok(d)
    }

    fn meta_decl(&self, doc: String, p: P) -> Result<MetaDecl, Diagnostic> {
        let mut it = p.into_inner().filter(keep);
        let key = self.name(it.next().expect("meta key"));
        let ty = match it.next().expect("meta type").as_str() {
            "int" => MetaType::Int,
            "bool" => MetaType::Bool,
            "string" => MetaType::String,
            "ident" => MetaType::Ident,
            "idents" => MetaType::Idents,
            "class" => MetaType::Class,
            "regfile" => MetaType::Regfile,
            _ => MetaType::Fields,
        };
        let default = it.next().map(|v| self.meta_value(v)).transpose()?;
        Ok(MetaDecl {
            doc,
            key,
            ty,
            default,
        })
    }

    fn meta_value(&self, p: P) -> Result<Spanned<MetaValue>, Diagnostic> {
        let span = self.span(&p);
        let v = p.into_inner().find(keep).expect("meta value");
        let node = match v.as_rule() {
            Rule::int => MetaValue::Int(self.int(&v)? as i64),
            Rule::string => MetaValue::Str(self.string(v)?.node.into()),
            Rule::meta_list => MetaValue::List(
                v.into_inner()
                    .filter(keep)
                    .map(|i| i.as_str().into())
                    .collect(),
            ),
            _ => MetaValue::Ident(v.as_str().into()),
        };
        Ok(Spanned { node, span })
    }

    fn enum_decl(&self, doc: String, p: P) -> Result<EnumDecl, Diagnostic> {
        let mut it = p.into_inner().filter(keep).peekable();
        let name = self.name(it.next().expect("enum name"));
        let strict = it.next_if(|x| x.as_rule() == Rule::kw_strict).is_some();
        let mut values = Vec::new();
        for v in it {
            let mut vi = v.into_inner().filter(keep);
            let vdoc = self.docs(vi.next().expect("docs"));
            let value = self.sint(&vi.next().expect("value"))?;
            let display = self.string(vi.next().expect("display"))?.node;
            values.push(EnumValue {
                doc: vdoc,
                value,
                display,
            });
        }
        Ok(EnumDecl {
            doc,
            name,
            strict,
            values,
        })
    }

    fn encoding(&self, doc: String, p: P) -> Result<EncodingDecl, Diagnostic> {
        let mut d = EncodingDecl {
            doc,
            name: Spanned {
                node: String::new(),
                span: Span::default(),
            },
            parent: None,
            width: None,
            body: Vec::new(),
        };
        let mut first = true;
        for x in p.into_inner().filter(keep) {
            match x.as_rule() {
                Rule::enc_name if first => {
                    d.name = self.name(x);
                    first = false;
                }
                Rule::enc_name => d.parent = Some(self.name(x)),
                Rule::width_clause => {
                    d.width = Some(self.sint(&x.into_inner().find(keep).expect("width"))?)
                }
                Rule::body_item => d.body.push(self.body_item(x)?),
                r => unreachable!("grammar: encoding part {r:?}"),
            }
        }
        Ok(d)
    }

    fn bits(&self, p: P) -> Result<Spanned<Vec<BitRange>>, Diagnostic> {
        let span = self.span(&p);
        let mut v = Vec::new();
        for r in p.into_inner().filter(keep) {
            let rs = self.span(&r);
            let mut ri = r.into_inner().filter(keep);
            let lo = self.int(&ri.next().expect("low"))?;
            let hi = match ri.next() {
                Some(h) => self.int(&h)?,
                None => lo,
            };
            if hi < lo {
                return Err(self.map.diagnostic(
                    rs,
                    format!("bit range {lo}..={hi} is empty: write the low bit first"),
                ));
            }
            if hi >= 64 {
                return Err(self
                    .map
                    .diagnostic(rs, format!("bit {hi} is beyond 64 bits")));
            }
            v.push(BitRange {
                low: lo as u32,
                high: hi as u32,
            });
        }
        Ok(Spanned { node: v, span })
    }

    fn field_type(&self, p: P) -> Result<TypeRef, Diagnostic> {
        let span = self.span(&p);
        let mut it = p.into_inner().filter(keep);
        let name = self.name(it.next().expect("type name"));
        let mut args = Vec::new();
        let mut display = None;
        for x in it {
            match x.as_rule() {
                Rule::type_args => {
                    for a in x.into_inner().filter(keep) {
                        let mut ai = a.into_inner().filter(keep);
                        let first = ai.next().expect("arg");
                        if first.as_rule() == Rule::int {
                            args.push(TypeArg::Int(self.sint(&first)?));
                        } else {
                            let param = self.name(first);
                            let value = match ai.next() {
                                Some(v) => self.name(v),
                                None => param.clone(),
                            };
                            args.push(TypeArg::Bind { param, value });
                        }
                    }
                }
                Rule::string => display = Some(self.string(x)?),
                r => unreachable!("grammar: type part {r:?}"),
            }
        }
        Ok(TypeRef {
            name,
            args,
            display,
            span,
        })
    }

    fn pattern_value(&self, p: P) -> Result<Spanned<PatternValue>, Diagnostic> {
        let span = self.span(&p);
        let v = p.into_inner().find(keep).expect("pattern value");
        let node = match v.as_rule() {
            Rule::kw_any => PatternValue::Any,
            Rule::bitstring => PatternValue::Bits(
                v.as_str()[2..]
                    .chars()
                    .filter(|c| *c != '_')
                    .map(|c| match c {
                        '0' => Some(false),
                        '1' => Some(true),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => PatternValue::Int(self.int(&v)?),
        };
        Ok(Spanned { node, span })
    }

    fn gen_range(&self, p: P) -> Result<GenRangeAst, Diagnostic> {
        let span = self.span(&p);
        let mut min = None;
        let mut max = None;
        let mut seen_op = false;
        let mut open = false;
        for x in p.into_inner().filter(keep) {
            match x.as_rule() {
                Rule::gen_bound => {
                    let b = x.into_inner().find(keep).expect("bound");
                    let bound = if b.as_rule() == Rule::int {
                        GenBound::Num(self.int(&b)?)
                    } else {
                        GenBound::Named(self.name(b))
                    };
                    if seen_op {
                        max = Some(bound);
                    } else {
                        min = Some(bound);
                    }
                }
                Rule::range_incl => seen_op = true,
                Rule::range_open => {
                    seen_op = true;
                    open = true;
                }
                r => unreachable!("grammar: generation range part {r:?}"),
            }
        }
        if !seen_op && !open {
            // A single generation: `gen a6xx;`.
            max = min.clone();
        }
        Ok(GenRangeAst { min, max, span })
    }

    fn body_item(&self, p: P) -> Result<BodyItem, Diagnostic> {
        let mut it = p.into_inner().filter(keep);
        let doc = self.docs(it.next().expect("docs"));
        let x = it.next().expect("body item");
        let span = self.span(&x);
        let mut xi = x.clone().into_inner().filter(keep);
        Ok(match x.as_rule() {
            Rule::field_item => {
                let name = self.name(xi.next().expect("field name"));
                let bits = self.bits(xi.next().expect("bits"))?;
                let ty = self.field_type(xi.next().expect("type"))?;
                let mut default = None;
                let mut meta = Vec::new();
                for r in xi {
                    match r.as_rule() {
                        Rule::default_clause => {
                            default = Some(self.sint(&r.into_inner().find(keep).expect("default"))?)
                        }
                        _ => {
                            for kv in r.into_inner().filter(keep) {
                                let mut kvi = kv.into_inner().filter(keep);
                                let k = self.name(kvi.next().expect("key"));
                                let v = self.meta_value(kvi.next().expect("value"))?;
                                meta.push((k, v));
                            }
                        }
                    }
                }
                BodyItem::Field {
                    doc,
                    name,
                    bits,
                    ty,
                    default,
                    meta,
                }
            }
            Rule::derived_item => {
                let name = self.name(xi.next().expect("name"));
                let mut width = None;
                let mut next = xi.next().expect("type or width");
                if next.as_rule() == Rule::width_clause {
                    width = Some(self.sint(&next.into_inner().find(keep).expect("width"))?);
                    next = xi.next().expect("type");
                }
                let ty = self.field_type(next)?;
                let expr = self.expr(xi.next().expect("expr"))?;
                BodyItem::Derived {
                    doc,
                    name,
                    width,
                    ty,
                    expr,
                }
            }
            Rule::pattern_item | Rule::assert_item => {
                let bits = self.bits(xi.next().expect("bits"))?;
                let value = self.pattern_value(xi.next().expect("value"))?;
                if x.as_rule() == Rule::pattern_item {
                    BodyItem::Pattern { bits, value }
                } else {
                    BodyItem::Assert { bits, value }
                }
            }
            Rule::display_item => BodyItem::Display(self.string(xi.next().expect("template"))?),
            Rule::when_item => {
                let cond = self.expr(xi.next().expect("cond"))?;
                let mut body = Vec::new();
                for b in xi {
                    body.push(self.body_item(b)?);
                }
                BodyItem::When {
                    doc,
                    cond,
                    body,
                    span,
                }
            }
            Rule::gen_item => BodyItem::Gen(self.gen_range(xi.next().expect("range"))?),
            Rule::mnemonic_item => BodyItem::Mnemonic(self.string(xi.next().expect("text"))?),
            Rule::params_item => BodyItem::Params(xi.map(|n| self.name(n)).collect()),
            Rule::overlaps_item => BodyItem::Overlaps(xi.map(|n| self.name(n)).collect()),
            Rule::check_item => {
                let expr = self.expr(xi.next().expect("check expression"))?;
                let message = self.string(xi.next().expect("check message"))?;
                BodyItem::Check { expr, message }
            }
            Rule::meta_item => {
                let key = self.name(xi.next().expect("key"));
                let value = self.meta_value(xi.next().expect("value"))?;
                BodyItem::Meta { key, value }
            }
            r => unreachable!("grammar: body item {r:?}"),
        })
    }

    fn regfile(&self, doc: String, p: P) -> Result<RegfileDecl, Diagnostic> {
        let mut it = p.into_inner().filter(keep);
        let name = self.name(it.next().expect("regfile name"));
        let mut d = RegfileDecl {
            doc,
            name,
            kind: None,
            unit: None,
            counts: Vec::new(),
            inside: Vec::new(),
            occupancy: None,
            names: None,
            latency: None,
        };
        for x in it {
            if x.as_rule() != Rule::regfile_item {
                continue;
            }
            let item = x.into_inner().find(keep).expect("regfile item");
            let rule = item.as_rule();
            let mut parts = item.into_inner().filter(keep);
            match rule {
                Rule::rf_kind => d.kind = Some(self.name(parts.next().expect("kind"))),
                Rule::rf_unit => {
                    let n = parts.next().expect("unit");
                    d.unit = Some(Spanned {
                        node: self.int(&n)?,
                        span: self.span(&n),
                    });
                }
                Rule::rf_count => {
                    let n = parts.next().expect("count");
                    let count = Spanned {
                        node: self.int(&n)?,
                        span: self.span(&n),
                    };
                    let generation = parts.next().map(|g| self.gen_range(g)).transpose()?;
                    d.counts.push((count, generation));
                }
                Rule::rf_inside => {
                    let other = self.name(parts.next().expect("inside"));
                    let generation = parts.next().map(|g| self.gen_range(g)).transpose()?;
                    d.inside.push((other, generation));
                }
                Rule::rf_occupancy => {
                    d.occupancy = Some(self.expr(parts.next().expect("occupancy"))?);
                }
                Rule::rf_names => {
                    let prefix = parts.next().expect("names prefix").as_str().to_string();
                    let mut names = RegNames {
                        prefix,
                        comps: String::new(),
                        first: 0,
                    };
                    for x in parts {
                        match x.as_rule() {
                            Rule::ident => names.comps = x.as_str().to_string(),
                            _ => names.first = self.int(&x)?.min(u64::from(u32::MAX)) as u32,
                        }
                    }
                    d.names = Some(names);
                }
                Rule::rf_latency => d.latency = Some(self.name(parts.next().expect("class"))),
                r => unreachable!("grammar: regfile item {r:?}"),
            }
        }
        Ok(d)
    }

    fn latency(&self, p: P) -> Result<LatencyDecl, Diagnostic> {
        let mut d = LatencyDecl {
            classes: Vec::new(),
            rules: Vec::new(),
            precision: Vec::new(),
        };
        for x in p.into_inner().filter(keep) {
            match x.as_rule() {
                Rule::docs => {}
                Rule::precision_rule => {
                    let rule = x
                        .into_inner()
                        .filter(keep)
                        .find(|r| r.as_rule() == Rule::latency_rule)
                        .expect("precision rule");
                    d.precision.push(self.latency_rule(rule)?);
                }
                Rule::classes_item => d
                    .classes
                    .extend(x.into_inner().filter(keep).map(|n| self.name(n))),
                Rule::latency_rule => d.rules.push(self.latency_rule(x)?),
                r => unreachable!("grammar: latency item {r:?}"),
            }
        }
        Ok(d)
    }

    fn latency_rule(&self, x: P) -> Result<LatencyRuleAst, Diagnostic> {
        let span = self.span(&x);
        let mut it = x.into_inner().filter(keep);
        let producers = self.class_set(it.next().expect("producers"));
        let consumers = self.class_set(it.next().expect("consumers"));
        let mut field = None;
        let mut cycles = 0;
        let mut generation = None;
        for r in it {
            match r.as_rule() {
                Rule::ident => field = Some(self.name(r)),
                Rule::int => cycles = self.int(&r)?,
                Rule::gen_range => generation = Some(self.gen_range(r)?),
                other => unreachable!("grammar: latency part {other:?}"),
            }
        }
        Ok(LatencyRuleAst {
            producers,
            consumers,
            field,
            cycles,
            generation,
            span,
        })
    }

    fn class_set(&self, p: P) -> Option<Vec<Name>> {
        let mut out = Vec::new();
        for x in p.into_inner().filter(keep) {
            if x.as_rule() == Rule::star {
                return None;
            }
            out.push(self.name(x));
        }
        Some(out)
    }

    fn expr(&self, p: P) -> Result<Expr, Diagnostic> {
        let span = self.span(&p);
        let mut it = p.into_inner().filter(keep);
        let first = self.binary(it.next().expect("binary"))?;
        match (it.next(), it.next()) {
            (Some(a), Some(b)) => Ok(Expr {
                kind: ExprKind::Cond(
                    Box::new(first),
                    Box::new(self.expr(a)?),
                    Box::new(self.expr(b)?),
                ),
                span,
            }),
            _ => Ok(first),
        }
    }

    fn binary(&self, p: P) -> Result<Expr, Diagnostic> {
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        for x in p.into_inner().filter(keep) {
            if x.as_rule() == Rule::bin_op {
                ops.push(BinOp::from_token(x.as_str()).expect("grammar: bin_op tokens"));
            } else {
                operands.push(self.unary(x)?);
            }
        }
        // Precedence climbing over the flat operand/operator list.
        let mut operands = operands.into_iter();
        let first = operands.next().expect("binary: at least one operand");
        let rest: Vec<(BinOp, Expr)> = ops.into_iter().zip(operands).collect();
        let mut pos = 0;
        Ok(climb(first, &rest, &mut pos, 0))
    }

    fn unary(&self, p: P) -> Result<Expr, Diagnostic> {
        let span = self.span(&p);
        let mut ops = Vec::new();
        let mut prim = None;
        for x in p.into_inner().filter(keep) {
            match x.as_rule() {
                Rule::un_op => ops.push(match x.as_str() {
                    "!" => UnOp::Not,
                    "~" => UnOp::BitNot,
                    _ => UnOp::Neg,
                }),
                _ => prim = Some(self.primary(x)?),
            }
        }
        let mut e = prim.expect("unary: primary");
        for op in ops.into_iter().rev() {
            e = Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                span,
            };
        }
        Ok(e)
    }

    fn primary(&self, p: P) -> Result<Expr, Diagnostic> {
        let span = self.span(&p);
        let x = p.into_inner().find(keep).expect("primary");
        let kind = match x.as_rule() {
            Rule::int => ExprKind::Int(self.int(&x)? as i64),
            Rule::expr => return self.expr(x),
            Rule::named => {
                let mut it = x.into_inner().filter(keep);
                let name = it.next().expect("named: reference").as_str()[1..].to_string();
                let mut args = Vec::new();
                if let Some(a) = it.next() {
                    for e in a.into_inner().filter(keep) {
                        args.push(self.expr(e)?);
                    }
                }
                ExprKind::Named(name.into(), None, args)
            }
            _ => match x.as_str() {
                "gen" => ExprKind::Gen,
                "true" => ExprKind::Int(1),
                "false" => ExprKind::Int(0),
                n => ExprKind::Name(n.into()),
            },
        };
        Ok(Expr { kind, span })
    }
}

fn climb(mut lhs: Expr, rest: &[(BinOp, Expr)], pos: &mut usize, min_prec: u8) -> Expr {
    while let Some((op, _)) = rest.get(*pos) {
        let op = *op;
        if op.precedence() < min_prec {
            break;
        }
        let mut rhs = rest[*pos].1.clone();
        *pos += 1;
        while let Some((next, _)) = rest.get(*pos) {
            if next.precedence() > op.precedence() {
                rhs = climb(rhs, rest, pos, next.precedence());
            } else {
                break;
            }
        }
        let span = Span::new(lhs.span.file, lhs.span.start, rhs.span.end);
        lhs = Expr {
            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            span,
        };
    }
    lhs
}
