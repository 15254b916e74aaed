//! Loading a spec: reading files and imports, then resolving names into
//! the [`Isa`] model. Structural checks live in `check`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::ast::{self, BodyItem, GenBound, GenRangeAst, Item, PatternValue, TypeArg, TypeRef};
use crate::diag::{Diagnostic, Diagnostics, FileId, SourceMap, Span};
use crate::expr::Expr;
use crate::model::*;
use crate::parse::parse_file;

/// Something that can read spec files: the file system, or in-memory text.
pub trait SourceReader {
    fn read(&self, path: &Path) -> std::io::Result<String>;
}

/// Reads from the file system.
pub struct FsReader;

impl SourceReader for FsReader {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
}

/// Reads from a fixed set of (path, text) pairs (used by generated code,
/// which embeds its spec files).
pub struct MemReader<'a>(pub &'a [(&'a str, &'a str)]);

impl SourceReader for MemReader<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let want = normalize(path);
        self.0
            .iter()
            .find(|(p, _)| normalize(Path::new(p)) == want)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not embedded"))
    }
}

/// Lexically removes `.` and `a/..` components so that import paths compare.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Loads, resolves and checks the spec whose root file is `path`.
pub fn load(path: impl AsRef<Path>) -> Result<Isa, Diagnostics> {
    load_with(path.as_ref(), &FsReader)
}

/// Like [`load`] with a custom reader.
pub fn load_with(path: &Path, reader: &dyn SourceReader) -> Result<Isa, Diagnostics> {
    let (map, files) = read_all(path, reader)?;
    let isa = Resolver::new(map).resolve(files)?;
    let errors = crate::check::check(&isa);
    if errors.is_empty() {
        Ok(isa)
    } else {
        Err(Diagnostics(errors))
    }
}

/// Loads and resolves a spec that is known to pass the checker (the
/// embedded copy in `isa!`-generated code, checked when it was generated):
/// skips the structural checks, which are most of the load time. Name
/// resolution errors are still reported.
pub fn load_prechecked(path: &Path, reader: &dyn SourceReader) -> Result<Isa, Diagnostics> {
    let (map, files) = read_all(path, reader)?;
    Resolver::new(map).resolve(files)
}

/// Spec files parsed by this process so far (every load reads through
/// [`read_all`]); lets a test prove a path never parses the spec.
static FILES_PARSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many spec files this process has parsed from text.
pub fn files_parsed() -> usize {
    FILES_PARSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Reads the root file and everything it imports, parsing each once.
pub fn read_all(
    root: &Path,
    reader: &dyn SourceReader,
) -> Result<(SourceMap, Vec<(FileId, ast::File)>), Diagnostics> {
    let mut map = SourceMap::default();
    let mut files = Vec::new();
    let mut queue: Vec<(PathBuf, Option<(FileId, Span)>)> = vec![(normalize(root), None)];
    let mut errors = Vec::new();
    while let Some((path, from)) = queue.pop() {
        if map.find(&path).is_some() {
            continue;
        }
        let text = match reader.read(&path) {
            Ok(t) => t,
            Err(e) => {
                errors.push(match from {
                    Some((_, span)) => {
                        map.diagnostic(span, format!("cannot read `{}`: {e}", path.display()))
                    }
                    None => Diagnostic::unpositioned(&path, format!("cannot read spec: {e}")),
                });
                continue;
            }
        };
        let id = map.add(path.clone(), text);
        FILES_PARSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match parse_file(&map, id) {
            Ok(f) => {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                for item in f.items.iter().rev() {
                    if let Item::Import(s) = item {
                        queue.push((normalize(&dir.join(&s.node)), Some((id, s.span))));
                    }
                }
                files.push((id, f));
            }
            Err(d) => errors.push(d),
        }
    }
    if errors.is_empty() {
        Ok((map, files))
    } else {
        Err(Diagnostics(errors))
    }
}

struct Resolver {
    map: SourceMap,
    errors: Vec<Diagnostic>,
}

const BUILTIN_TYPES: &[&str] = &[
    "uint",
    "int",
    "hex",
    "HEX",
    "offset",
    "uoffset",
    "float",
    "fixed",
    "branch",
    "absbranch",
    "bool",
    "bool_inv",
];

impl Resolver {
    fn new(map: SourceMap) -> Self {
        Resolver {
            map,
            errors: Vec::new(),
        }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        let d = self.map.diagnostic(span, msg);
        self.errors.push(d);
    }

    fn resolve(mut self, files: Vec<(FileId, ast::File)>) -> Result<Isa, Diagnostics> {
        let mut isa_decl: Option<ast::IsaDecl> = None;
        let mut enums = Vec::new();
        let mut exprs = Vec::new();
        let mut encs = Vec::new();
        let mut latency: Vec<ast::LatencyDecl> = Vec::new();
        let mut regfile_decls: Vec<ast::RegfileDecl> = Vec::new();
        let mut idiom_decls: Vec<ast::IdiomDecl> = Vec::new();
        let mut machine = Vec::new();
        let mut semantics = Vec::new();
        // Files are in load order; keep the root file's items first.
        for (_, f) in files {
            for item in f.items {
                match item {
                    Item::Isa(d) => {
                        if let Some(prev) = &isa_decl {
                            let (l, _) =
                                self.map.line_col(prev.name.span.file, prev.name.span.start);
                            let p = self.map.files[prev.name.span.file]
                                .path
                                .display()
                                .to_string();
                            self.err(
                                d.name.span,
                                format!("second `isa` declaration (the first is at {p}:{l})"),
                            );
                        } else {
                            isa_decl = Some(d);
                        }
                    }
                    Item::Import(_) => {}
                    Item::Enum(e) => enums.push(e),
                    Item::Expr(e) => exprs.push(e),
                    Item::Encoding(e) => encs.push(e),
                    Item::Latency(l) => latency.push(l),
                    Item::Regfile(r) => regfile_decls.push(r),
                    Item::Idiom(i) => idiom_decls.push(i),
                    Item::Machine(m) => machine.push(m),
                    Item::Semantics(s) => semantics.push(s),
                }
            }
        }
        let Some(decl) = isa_decl else {
            let path = self
                .map
                .files
                .first()
                .map(|f| f.path.clone())
                .unwrap_or_default();
            return Err(Diagnostics(vec![Diagnostic::unpositioned(
                &path,
                "no `isa` declaration: the root file must declare `isa NAME { width N; root ENCODING; }`",
            )]));
        };

        // Generations.
        let mut generations: Vec<(String, u32)> = Vec::new();
        for (n, v) in &decl.generations {
            if generations.iter().any(|(x, _)| *x == n.node) {
                self.err(n.span, format!("generation `{}` is declared twice", n.node));
            }
            generations.push((n.node.clone(), (*v).min(u64::from(u32::MAX)) as u32));
        }

        let width = match &decl.width {
            Some(w) if w.node >= 1 && w.node <= 64 => w.node as u32,
            Some(w) => {
                self.err(w.span, "instruction width must be between 1 and 64 bits");
                64
            }
            None => {
                self.err(decl.name.span, "the `isa` declaration needs `width N;`");
                64
            }
        };

        // Enums.
        let mut enum_defs: Vec<EnumDef> = Vec::new();
        for e in &enums {
            if enum_defs.iter().any(|x| x.name == e.name.node) {
                self.err(
                    e.name.span,
                    format!("enum `{}` is declared twice", e.name.node),
                );
            }
            let mut values: Vec<(u64, Str, Str)> = Vec::new();
            for v in &e.values {
                if values.iter().any(|(x, _, _)| *x == v.value.node) {
                    self.err(
                        v.value.span,
                        format!("enum value {} appears twice", v.value.node),
                    );
                }
                values.push((v.value.node, v.display.clone().into(), v.doc.clone().into()));
            }
            enum_defs.push(EnumDef {
                name: e.name.node.clone().into(),
                doc: e.doc.clone().into(),
                span: e.name.span,
                strict: e.strict,
                values: crate::compact::Lazy::new(values),
            });
        }

        // Named expressions.
        let mut named: Vec<NamedExpr> = Vec::new();
        for e in &exprs {
            if named.iter().any(|x| x.name == e.name.node) {
                self.err(
                    e.name.span,
                    format!("expression `@{}` is declared twice", e.name.node),
                );
            }
            let mut params: Vec<Str> = Vec::new();
            for p in &e.params {
                if params.iter().any(|x| *x == p.node) {
                    self.err(p.span, format!("parameter `{}` is declared twice", p.node));
                }
                params.push(p.node.clone().into());
            }
            if params.len() > crate::expr::MAX_PARAMS {
                self.err(
                    e.name.span,
                    format!(
                        "`@{}` has {} parameters; at most {} are supported",
                        e.name.node,
                        params.len(),
                        crate::expr::MAX_PARAMS
                    ),
                );
            }
            named.push(NamedExpr {
                name: e.name.node.clone().into(),
                doc: e.doc.clone().into(),
                params,
                expr: crate::compact::Lazy::new(e.expr.clone()),
            });
        }

        // Encodings: names first, so types and parents can refer forward.
        let mut index: HashMap<String, EncId> = HashMap::new();
        for (i, e) in encs.iter().enumerate() {
            if let Some(&prev) = index.get(&e.name.node) {
                let s = encs[prev].name.span;
                let (l, _) = self.map.line_col(s.file, s.start);
                let p = self.map.files[s.file].path.display().to_string();
                self.err(
                    e.name.span,
                    format!(
                        "encoding `{}` is declared twice (first at {p}:{l})",
                        e.name.node
                    ),
                );
                continue;
            }
            if enum_defs.iter().any(|x| x.name == e.name.node) {
                self.err(
                    e.name.span,
                    format!("`{}` is both an enum and an encoding", e.name.node),
                );
            }
            index.insert(e.name.node.clone(), i);
        }
        let mut parents: Vec<Option<EncId>> = vec![None; encs.len()];
        for (i, e) in encs.iter().enumerate() {
            if let Some(p) = &e.parent {
                match index.get(&p.node) {
                    Some(&pi) => parents[i] = Some(pi),
                    None => self.err(p.span, format!("unknown encoding `{}`", p.node)),
                }
                if let Some(w) = &e.width {
                    self.err(w.span, "only a tree root may declare `width`; this encoding inherits its parent's width");
                }
            }
        }
        // Roots and depths; detect `extends` cycles.
        let mut roots = vec![0; encs.len()];
        let mut depths = vec![0; encs.len()];
        let mut cyclic = false;
        for i in 0..encs.len() {
            let mut cur = i;
            let mut depth = 0;
            while let Some(p) = parents[cur] {
                cur = p;
                depth += 1;
                if depth > encs.len() {
                    self.err(
                        encs[i].name.span,
                        format!("encoding `{}` inherits from itself", encs[i].name.node),
                    );
                    cyclic = true;
                    break;
                }
            }
            roots[i] = cur;
            depths[i] = depth;
        }
        if cyclic {
            return Err(Diagnostics(self.errors));
        }

        let root = match &decl.root {
            Some(r) => match index.get(&r.node) {
                Some(&i) => {
                    if parents[i].is_some() {
                        self.err(r.span, format!("`{}` extends another encoding; the instruction root must be a tree root", r.node));
                    }
                    i
                }
                None => {
                    self.err(r.span, format!("unknown encoding `{}`", r.node));
                    0
                }
            },
            None => {
                self.err(
                    decl.name.span,
                    "the `isa` declaration needs `root ENCODING;`",
                );
                0
            }
        };

        let mut latency_model = Latency::default();
        for l in &latency {
            for c in &l.classes {
                if latency_model.classes.iter().any(|k| *k == c.node) {
                    self.err(
                        c.span,
                        format!("latency class `{}` is declared twice", c.node),
                    );
                }
                latency_model.classes.push(c.node.clone().into());
            }
        }

        let cx = TypeCx {
            index: &index,
            enums: &enum_defs,
            encs: &encs,
            parents: &parents,
        };
        let gens = generations.clone();
        let mut encodings = Vec::new();
        for (i, e) in encs.iter().enumerate() {
            let w = if parents[i].is_none() {
                match &e.width {
                    Some(w) if w.node >= 1 && w.node <= 64 => w.node as u32,
                    Some(w) => {
                        self.err(w.span, "encoding width must be between 1 and 64 bits");
                        64
                    }
                    None if i == root => width,
                    None => {
                        self.err(
                            e.name.span,
                            format!(
                                "encoding `{}` is a tree root and needs `width N`",
                                e.name.node
                            ),
                        );
                        64
                    }
                }
            } else {
                0
            };
            let enc = self.encoding(e, i, &cx, &gens, roots[i], depths[i], w);
            encodings.push(enc);
        }
        // Widths and children from the root down.
        for i in 0..encodings.len() {
            encodings[i].width = encodings[roots[i]].width;
            if let Some(p) = parents[i] {
                encodings[p].children.push(i);
            }
        }
        if root < encodings.len() && encodings[root].width != width {
            let span = encs[root].name.span;
            self.err(
                span,
                format!(
                    "the instruction root is {} bits wide but the isa says {width}",
                    encodings[root].width
                ),
            );
        }
        // Inherited masks and generation ranges, in depth order.
        let mut order: Vec<EncId> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| depths[i]);
        for &i in &order {
            let (pm, pmatch, pdc, pgen) = match parents[i] {
                Some(p) => {
                    let pe = &encodings[p];
                    (pe.mask, pe.match_bits, pe.dontcare, pe.generation)
                }
                None => (0, 0, 0, GenRange::ALL),
            };
            let e = &mut encodings[i];
            e.mask |= pm;
            e.match_bits |= pmatch;
            e.dontcare |= pdc;
            e.generation = e.own_gen.intersect(pgen);
        }

        let mut regfiles = self.regfiles(&regfile_decls, &gens, &latency_model.classes);
        let idioms = idiom_decls
            .iter()
            .map(|d| Idiom {
                name: d.name.node.clone().into(),
                doc: d.doc.clone().into(),
                text: d.text.node.clone().into(),
                generation: d
                    .generation
                    .as_ref()
                    .map_or(GenRange::ALL, |g| self.gen_range(g, &gens)),
                span: d.text.span,
            })
            .collect();

        // Named-expression references.
        let arity: Vec<(String, usize)> = named
            .iter()
            .map(|n| (n.name.to_string(), n.params.len()))
            .collect();
        let mut unresolved = Vec::new();
        let mut fix = |e: &mut Expr| {
            e.visit_named_mut(
                &mut |n, idx, args, span| match arity.iter().position(|(x, _)| x == n) {
                    Some(i) if arity[i].1 == args => *idx = Some(i),
                    Some(i) => unresolved.push((
                        span,
                        format!(
                            "`@{n}` takes {} argument(s) but is given {args}",
                            arity[i].1
                        ),
                    )),
                    None => unresolved.push((span, format!("unknown expression `@{n}`"))),
                },
            )
        };
        for n in &mut named {
            fix(&mut n.expr);
        }
        for r in &mut regfiles {
            if let Some(o) = &mut r.occupancy {
                fix(o);
            }
        }
        for e in &mut encodings {
            for d in &mut e.plain.deriveds {
                fix(&mut d.expr);
            }
            for c in &mut e.plain.checks {
                fix(&mut c.expr);
            }
            for w in &mut e.whens {
                fix(&mut w.cond);
                for d in &mut w.level.deriveds {
                    fix(&mut d.expr);
                }
                for c in &mut w.level.checks {
                    fix(&mut c.expr);
                }
            }
        }
        for (s, m) in unresolved {
            self.err(s, m);
        }

        // Metadata schema.
        let meta_keys = self.meta_keys(&decl.meta);
        let field_meta_keys = self.meta_keys(&decl.field_meta);

        // Latency rules.
        for l in &latency {
            for (r, precision) in l
                .rules
                .iter()
                .map(|r| (r, false))
                .chain(l.precision.iter().map(|r| (r, true)))
            {
                let producers = self.classes(&latency_model, r.producers.as_deref());
                let consumers = self.classes(&latency_model, r.consumers.as_deref());
                let generation = match &r.generation {
                    Some(g) => self.gen_range(g, &gens),
                    None => GenRange::ALL,
                };
                if precision && r.field.is_some() {
                    self.err(r.span, "a `precision` rule names no operand");
                }
                let rule = LatencyRule {
                    producers,
                    consumers,
                    field: r.field.as_ref().map(|f| f.node.clone().into()),
                    cycles: r.cycles.min(u64::from(u32::MAX)) as u32,
                    generation,
                };
                if precision {
                    latency_model.precision.push(rule);
                } else {
                    latency_model.rules.push(rule);
                }
            }
        }

        if !self.errors.is_empty() {
            return Err(Diagnostics(self.errors));
        }
        let mut isa = Isa {
            name: decl.name.node.clone().into(),
            doc: decl.doc.clone().into(),
            width,
            root,
            generations: generations
                .into_iter()
                .map(|(n, g)| (n.into(), g))
                .collect(),
            tree_leaves: tree_leaves(&encodings),
            encodings: encodings
                .into_iter()
                .map(crate::compact::Lazy::new)
                .collect(),
            enums: enum_defs,
            exprs: named,
            latency: latency_model,
            regfiles,
            idioms,
            meta_keys,
            field_meta_keys,
            notes_asserts: decl.notes_asserts,
            sources: self.map,
            decoders: Vec::new(),
            semantics: Default::default(),
            wide_reads: Vec::new(),
            generated: None,
        };
        isa.decoders = crate::decode::build_decoders(&isa)
            .into_iter()
            .map(|(root, tree)| (root, crate::compact::Lazy::new(tree)))
            .collect();
        isa.semantics = crate::semantics::LazySemantics::new(crate::semantics::resolve(
            &isa, machine, semantics,
        )?);
        isa.wide_reads = isa
            .instructions()
            .map(|leaf| {
                let fields = isa.semantics.wide_reads(&isa, leaf);
                (leaf, fields.into_iter().map(Str::from).collect::<Vec<_>>())
            })
            .filter(|(_, fields)| !fields.is_empty())
            .collect();
        Ok(isa)
    }

    /// Register files: names unique, every item present and in range,
    /// `inside` naming another file, occupancy reading only `REGS`.
    fn regfiles(
        &mut self,
        decls: &[ast::RegfileDecl],
        gens: &[(String, u32)],
        classes: &[Str],
    ) -> Vec<Regfile> {
        let mut out: Vec<Regfile> = Vec::new();
        for d in decls {
            if out.iter().any(|r| r.name == d.name.node) {
                self.err(
                    d.name.span,
                    format!("register file `{}` is declared twice", d.name.node),
                );
            }
            let kind = match &d.kind {
                Some(k) => RegfileKind::from_name(&k.node).unwrap_or_else(|| {
                    let names: Vec<&str> = RegfileKind::ALL.iter().map(|(n, _)| *n).collect();
                    self.err(
                        k.span,
                        format!(
                            "unknown register file kind `{}` (one of: {})",
                            k.node,
                            names.join(", ")
                        ),
                    );
                    RegfileKind::Gpr
                }),
                None => {
                    self.err(d.name.span, "a register file needs `kind K;`");
                    RegfileKind::Gpr
                }
            };
            let unit = match &d.unit {
                Some(u) if (1..=64).contains(&u.node) => u.node as u32,
                Some(u) => {
                    self.err(u.span, "the unit must be 1..=64 bits");
                    32
                }
                None => {
                    self.err(d.name.span, "a register file needs `unit BITS;`");
                    32
                }
            };
            if d.counts.is_empty() {
                self.err(d.name.span, "a register file needs `count N;`");
            }
            let counts = d
                .counts
                .iter()
                .map(|(n, g)| {
                    let range = g
                        .as_ref()
                        .map_or(GenRange::ALL, |g| self.gen_range(g, gens));
                    (n.node.min(u64::from(u32::MAX)) as u32, range)
                })
                .collect();
            let mut inside = Vec::new();
            for (other, g) in &d.inside {
                let range = g
                    .as_ref()
                    .map_or(GenRange::ALL, |g| self.gen_range(g, gens));
                match decls.iter().position(|x| x.name.node == other.node) {
                    Some(i) if other.node != d.name.node => inside.push((i, range)),
                    Some(_) => self.err(other.span, "a register file cannot be inside itself"),
                    None => self.err(
                        other.span,
                        format!("unknown register file `{}`", other.node),
                    ),
                }
            }
            if let Some(o) = &d.occupancy {
                let mut bad = Vec::new();
                o.visit_names(&mut |n, span| {
                    if n != OCCUPANCY_INPUT {
                        bad.push((span, n.to_string()));
                    }
                });
                for (span, n) in bad {
                    self.err(
                        span,
                        format!(
                            "an occupancy expression knows only `{OCCUPANCY_INPUT}` and `gen`, not `{n}`"
                        ),
                    );
                }
            }
            let latency = d.latency.as_ref().and_then(|c| {
                let i = classes.iter().position(|x| *x == c.node);
                if i.is_none() {
                    self.err(c.span, format!("unknown latency class `{}`", c.node));
                }
                i
            });
            if let Some(n) = &d.names {
                if !n.comps.is_empty() && n.comps.chars().any(|c| n.comps.matches(c).count() > 1) {
                    self.err(
                        d.name.span,
                        format!(
                            "`names {}.{}`: a component letter repeats",
                            n.prefix, n.comps
                        ),
                    );
                }
            }
            out.push(Regfile {
                name: d.name.node.clone().into(),
                doc: d.doc.clone().into(),
                span: d.name.span,
                kind,
                unit,
                counts,
                inside,
                occupancy: d.occupancy.clone(),
                names: d.names.clone(),
                latency,
            });
        }
        // A file inside another has half its unit (two of its units per unit).
        for i in 0..out.len() {
            for &(o, _) in &out[i].inside {
                if out[o].unit != out[i].unit * 2 {
                    let (span, a, b) = (out[i].span, out[i].unit, out[o].unit);
                    self.err(
                        span,
                        format!(
                            "`{}` ({a}-bit units) can be inside `{}` only if that file's units are {} bits, not {b}",
                            out[i].name,
                            out[o].name,
                            a * 2
                        ),
                    );
                }
            }
        }
        out
    }

    fn meta_keys(&mut self, decls: &[ast::MetaDecl]) -> Vec<MetaKey> {
        let mut out: Vec<MetaKey> = Vec::new();
        for m in decls {
            if out.iter().any(|k| k.name == m.key.node) {
                self.err(
                    m.key.span,
                    format!("metadata key `{}` is declared twice", m.key.node),
                );
            }
            out.push(MetaKey {
                name: m.key.node.clone().into(),
                doc: m.doc.clone().into(),
                ty: m.ty,
                default: m.default.as_ref().map(|d| d.node.clone()),
            });
        }
        out
    }

    fn classes(&mut self, lat: &Latency, names: Option<&[ast::Name]>) -> Option<Vec<usize>> {
        let names = names?;
        let mut v = Vec::new();
        for n in names {
            match lat.class(&n.node) {
                Some(c) => v.push(c),
                None => self.err(n.span, format!("unknown latency class `{}`", n.node)),
            }
        }
        Some(v)
    }

    fn gen_bound(&mut self, b: &GenBound, gens: &[(String, u32)]) -> u32 {
        match b {
            GenBound::Num(n) => (*n).min(u64::from(u32::MAX)) as u32,
            GenBound::Named(n) => match gens.iter().find(|(x, _)| *x == n.node) {
                Some((_, v)) => *v,
                None => {
                    self.err(n.span, format!("unknown generation `{}`", n.node));
                    0
                }
            },
        }
    }

    fn gen_range(&mut self, g: &GenRangeAst, gens: &[(String, u32)]) -> GenRange {
        let min = g.min.as_ref().map_or(0, |b| self.gen_bound(b, gens));
        let max = g.max.as_ref().map_or(u32::MAX, |b| self.gen_bound(b, gens));
        if min > max {
            self.err(g.span, "empty generation range");
        }
        GenRange { min, max }
    }

    #[allow(clippy::too_many_arguments)]
    fn encoding(
        &mut self,
        e: &ast::EncodingDecl,
        id: EncId,
        cx: &TypeCx,
        gens: &[(String, u32)],
        root: EncId,
        depth: usize,
        width: u32,
    ) -> Encoding {
        let mut enc = Encoding {
            name: e.name.node.clone().into(),
            doc: e.doc.clone().into(),
            span: e.name.span,
            parent: cx.parents[id],
            root,
            width,
            plain: Default::default(),
            whens: Default::default(),
            own_gen: GenRange::ALL,
            generation: GenRange::ALL,
            params: Vec::new(),
            meta: Vec::new(),
            overlaps: Vec::new(),
            children: Vec::new(),
            mask: 0,
            match_bits: 0,
            dontcare: 0,
            depth,
        };
        let mut gen_seen = false;
        for item in &e.body {
            match item {
                BodyItem::When {
                    doc,
                    cond,
                    body,
                    span,
                } => {
                    let mut level = Level::default();
                    let mut meta: Vec<(Str, ast::MetaValue, Span)> = Vec::new();
                    for b in body {
                        match b {
                            BodyItem::Field { .. }
                            | BodyItem::Derived { .. }
                            | BodyItem::Display(_)
                            | BodyItem::Assert { .. }
                            | BodyItem::Check { .. }
                            | BodyItem::Mnemonic(_) => self.level_item(&mut level, b, cx),
                            BodyItem::Pattern { bits, .. } => self.err(
                                bits.span,
                                "`pattern` is not allowed inside `when`: overrides never take part in matching",
                            ),
                            BodyItem::When { span, .. } => {
                                self.err(*span, "`when` blocks cannot be nested")
                            }
                            BodyItem::Gen(g) => self.err(g.span, "`gen` is not allowed inside `when`; use `gen` in the condition"),
                            BodyItem::Params(p) => {
                                if let Some(n) = p.first() {
                                    self.err(n.span, "`params` is not allowed inside `when`")
                                }
                            }
                            BodyItem::Meta { key, value } => {
                                if meta.iter().any(|(k, _, _)| *k == key.node) {
                                    self.err(
                                        key.span,
                                        format!("metadata `{}` is given twice", key.node),
                                    );
                                }
                                meta.push((key.node.clone().into(), value.node.clone(), value.span));
                            }
                            BodyItem::Overlaps(names) => {
                                if let Some(n) = names.first() {
                                    self.err(n.span, "`overlaps` is not allowed inside `when`: overrides never take part in matching")
                                }
                            }
                        }
                    }
                    enc.whens.push(When {
                        doc: doc.clone().into(),
                        cond: cond.clone(),
                        level,
                        meta,
                        span: *span,
                    });
                }
                BodyItem::Pattern { bits, value } => {
                    if let Some((m, v, dc)) = self.pattern_bits(bits, value, true) {
                        enc.mask |= m;
                        enc.match_bits |= v;
                        enc.dontcare |= dc;
                    }
                }
                BodyItem::Gen(g) => {
                    if gen_seen {
                        self.err(g.span, "`gen` is given twice");
                    }
                    gen_seen = true;
                    enc.own_gen = self.gen_range(g, gens);
                }
                BodyItem::Params(p) => {
                    if cx.parents[id].is_some() {
                        if let Some(n) = p.first() {
                            self.err(n.span, "`params` may only be declared on a tree root");
                        }
                    }
                    for n in p {
                        if enc.params.iter().any(|p| *p == n.node) {
                            self.err(n.span, format!("param `{}` is declared twice", n.node));
                        }
                        enc.params.push(n.node.clone().into());
                    }
                }
                BodyItem::Overlaps(names) => {
                    for n in names {
                        match cx.index.get(&n.node) {
                            Some(&o) if o == id => {
                                self.err(n.span, format!("`{}` cannot overlap itself", n.node))
                            }
                            Some(&o) => enc.overlaps.push((o, n.span)),
                            None => self.err(n.span, format!("unknown encoding `{}`", n.node)),
                        }
                    }
                }
                BodyItem::Meta { key, value } => {
                    if enc.meta.iter().any(|(k, _, _)| *k == key.node) {
                        self.err(key.span, format!("metadata `{}` is given twice", key.node));
                    }
                    enc.meta
                        .push((key.node.clone().into(), value.node.clone(), value.span));
                }
                _ => {
                    let mut level = std::mem::take(&mut enc.plain);
                    self.level_item(&mut level, item, cx);
                    enc.plain = level;
                }
            }
        }
        enc
    }

    fn level_item(&mut self, level: &mut Level, item: &BodyItem, cx: &TypeCx) {
        match item {
            BodyItem::Field {
                doc,
                name,
                bits,
                ty,
                default,
                meta,
            } => {
                if level.item(&name.node).is_some() {
                    self.err(
                        name.span,
                        format!("`{}` is defined twice in this encoding", name.node),
                    );
                }
                let width: u32 = bits.node.iter().map(|r| r.width()).sum();
                if width > 64 {
                    self.err(bits.span, "a field cannot be wider than 64 bits");
                }
                let fty = self.field_type(ty, cx);
                if let Some(d) = default {
                    if width < 64 && d.node >> width != 0 {
                        self.err(
                            d.span,
                            format!("default {} does not fit in {width} bits", d.node),
                        );
                    }
                }
                level.fields.push(Field {
                    name: name.node.clone().into(),
                    doc: doc.clone().into(),
                    span: name.span,
                    ranges: bits.node.clone().into(),
                    width,
                    ty: fty,
                    default: default.as_ref().map(|d| d.node),
                    meta: meta
                        .iter()
                        .map(|(k, v)| (k.node.clone().into(), v.node.clone()))
                        .collect(),
                });
            }
            BodyItem::Derived {
                doc,
                name,
                width,
                ty,
                expr,
            } => {
                if level.item(&name.node).is_some() {
                    self.err(
                        name.span,
                        format!("`{}` is defined twice in this encoding", name.node),
                    );
                }
                let fty = self.field_type(ty, cx);
                if matches!(fty, FieldType::Sub(..)) {
                    self.err(ty.name.span, "a derived value cannot have an encoding type");
                }
                let w = match width {
                    Some(w) if w.node >= 1 && w.node <= 64 => w.node as u32,
                    Some(w) => {
                        self.err(w.span, "width must be between 1 and 64");
                        64
                    }
                    None => 64,
                };
                level.deriveds.push(Derived {
                    name: name.node.clone().into(),
                    doc: doc.clone().into(),
                    span: name.span,
                    width: w,
                    ty: fty,
                    expr: expr.clone(),
                });
            }
            BodyItem::Display(t) => {
                if level.display.is_some() {
                    self.err(t.span, "`display` is given twice at this level");
                }
                level.display = Some(self.template(t));
            }
            BodyItem::Assert { bits, value } => {
                if let Some((m, v, _)) = self.pattern_bits(bits, value, false) {
                    level.asserts.push(Assert {
                        mask: m,
                        value: v,
                        span: bits.span,
                    });
                }
            }
            BodyItem::Mnemonic(m) => level.mnemonic = Some(m.node.clone().into()),
            BodyItem::Check { expr, message } => level.checks.push(Check {
                expr: expr.clone(),
                message: message.node.clone().into(),
                span: expr.span,
            }),
            _ => {}
        }
    }

    /// (mask of 0/1 bits, their values, don't-care bits).
    fn pattern_bits(
        &mut self,
        bits: &ast::Spanned<Vec<ast::BitRange>>,
        value: &ast::Spanned<PatternValue>,
        allow_x: bool,
    ) -> Option<(u64, u64, u64)> {
        let width: u32 = bits.node.iter().map(|r| r.width()).sum();
        // Per-bit values, least significant first.
        let digits: Vec<Option<bool>> = match &value.node {
            PatternValue::Any => vec![None; width as usize],
            PatternValue::Int(v) => {
                if width < 64 && v >> width != 0 {
                    self.err(
                        value.span,
                        format!("value {v} does not fit in {width} bits"),
                    );
                    return None;
                }
                (0..width).map(|i| Some(v >> i & 1 == 1)).collect()
            }
            PatternValue::Bits(b) => {
                if b.len() != width as usize {
                    self.err(
                        value.span,
                        format!(
                            "pattern has {} digits but the bit range is {width} bits wide",
                            b.len()
                        ),
                    );
                    return None;
                }
                b.iter().rev().copied().collect()
            }
        };
        if !allow_x && digits.iter().any(Option::is_none) {
            self.err(value.span, "an `assert` cannot have don't-care bits");
            return None;
        }
        let (mut m, mut v, mut dc) = (0u64, 0u64, 0u64);
        let mut i = 0;
        for r in &bits.node {
            for b in r.low..=r.high {
                match digits[i] {
                    Some(true) => {
                        m |= 1 << b;
                        v |= 1 << b;
                    }
                    Some(false) => m |= 1 << b,
                    None => dc |= 1 << b,
                }
                i += 1;
            }
        }
        Some((m, v, dc))
    }

    fn template(&mut self, t: &ast::Spanned<String>) -> Template {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let text = &t.node;
        let base = t.span.start + 1;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    lit.push('}');
                }
                '{' => {
                    let rest = &text[i + 1..];
                    let Some(end) = rest.find('}') else {
                        self.err(
                            Span::new(t.span.file, base + i, base + i + 1),
                            "unclosed `{` in template (write `{{` for a literal brace)",
                        );
                        break;
                    };
                    let name = &rest[..end];
                    let span = Span::new(t.span.file, base + i, base + i + end + 2);
                    if !lit.is_empty() {
                        pieces.push(Piece::Lit(std::mem::take(&mut lit).into()));
                    }
                    if name == "NAME" {
                        pieces.push(Piece::Mnemonic);
                    } else if name.is_empty()
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.err(span, format!("`{{{name}}}` is not a field reference"));
                    } else {
                        pieces.push(Piece::Field(name.into(), span));
                    }
                    for _ in 0..=end {
                        chars.next();
                    }
                }
                '}' => {
                    self.err(
                        Span::new(t.span.file, base + i, base + i + 1),
                        "stray `}` in template (write `}}` for a literal brace)",
                    );
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit.into()));
        }
        Template {
            text: text.clone().into(),
            pieces,
            span: t.span,
        }
    }

    fn field_type(&mut self, t: &TypeRef, cx: &TypeCx) -> FieldType {
        let name = t.name.node.as_str();
        let no_args = |s: &mut Self| {
            if !t.args.is_empty() {
                s.err(t.span, format!("type `{name}` takes no arguments"));
            }
        };
        let no_display = |s: &mut Self| {
            if let Some(d) = &t.display {
                s.err(d.span, format!("type `{name}` takes no display text"));
            }
        };
        match name {
            "bool" => {
                no_args(self);
                FieldType::Bool(t.display.as_ref().map(|d| d.node.clone().into()))
            }
            "bool_inv" => {
                no_args(self);
                match &t.display {
                    Some(d) => FieldType::BoolInv(d.node.clone().into()),
                    None => {
                        self.err(
                            t.span,
                            "`bool_inv` needs the text shown when the bit is clear",
                        );
                        FieldType::Bool(None)
                    }
                }
            }
            "fixed" => {
                no_display(self);
                match t.args.as_slice() {
                    [TypeArg::Int(r)] if r.node < 64 => FieldType::Fixed(r.node as u32),
                    _ => {
                        self.err(t.span, "`fixed` needs its radix: `fixed(N)` with N < 64");
                        FieldType::Uint
                    }
                }
            }
            _ if BUILTIN_TYPES.contains(&name) => {
                no_args(self);
                no_display(self);
                match name {
                    "uint" => FieldType::Uint,
                    "int" => FieldType::Int,
                    "hex" => FieldType::Hex,
                    "HEX" => FieldType::HexUpper,
                    "offset" => FieldType::Offset,
                    "uoffset" => FieldType::Uoffset,
                    "float" => FieldType::Float,
                    "branch" => FieldType::Branch,
                    _ => FieldType::AbsBranch,
                }
            }
            _ => {
                if let Some(e) = cx.enums.iter().position(|x| x.name == name) {
                    no_args(self);
                    no_display(self);
                    return FieldType::Enum(e);
                }
                let Some(&enc) = cx.index.get(name) else {
                    self.err(t.name.span, format!("unknown type `{name}`"));
                    return FieldType::Uint;
                };
                no_display(self);
                if cx.parents[enc].is_some() {
                    self.err(
                        t.name.span,
                        format!("`{name}` is not a tree root; a field's encoding type must be the root of its tree"),
                    );
                }
                let declared = declared_params(cx.encs, enc);
                let mut binds = Vec::new();
                for a in &t.args {
                    match a {
                        TypeArg::Int(i) => self.err(
                            i.span,
                            "sub-encoding arguments are `PARAM = FIELD` or `FIELD`",
                        ),
                        TypeArg::Bind { param, value } => {
                            if !declared.contains(&param.node) {
                                self.err(
                                    param.span,
                                    format!("`{name}` has no param `{}`", param.node),
                                );
                            }
                            if binds.iter().any(|(p, _): &(Str, Str)| *p == param.node) {
                                self.err(
                                    param.span,
                                    format!("param `{}` is bound twice", param.node),
                                );
                            }
                            binds.push((param.node.clone().into(), value.node.clone().into()));
                        }
                    }
                }
                for p in &declared {
                    if !binds.iter().any(|(b, _)| b == p) {
                        self.err(t.span, format!("param `{p}` of `{name}` is not bound"));
                    }
                }
                FieldType::Sub(enc, binds.into())
            }
        }
    }
}

struct TypeCx<'a> {
    index: &'a HashMap<String, EncId>,
    enums: &'a [EnumDef],
    encs: &'a [ast::EncodingDecl],
    parents: &'a [Option<EncId>],
}

fn declared_params(encs: &[ast::EncodingDecl], enc: EncId) -> Vec<String> {
    let mut v = Vec::new();
    for item in &encs[enc].body {
        if let BodyItem::Params(p) = item {
            v.extend(p.iter().map(|n| n.node.clone()));
        }
    }
    v
}

/// Per tree root, its leaves in source order ([`Isa::tree_leaves`]).
fn tree_leaves(encodings: &[Encoding]) -> Vec<(EncId, Vec<EncId>)> {
    let mut trees: Vec<(EncId, Vec<EncId>)> = (0..encodings.len())
        .filter(|&e| encodings[e].parent.is_none())
        .map(|root| (root, Vec::new()))
        .collect();
    for (i, e) in encodings.iter().enumerate() {
        if e.is_leaf()
            && let Some((_, leaves)) = trees.iter_mut().find(|(r, _)| *r == e.root)
        {
            leaves.push(i);
        }
    }
    trees
}
