//! Markdown reference for a spec: every instruction with its encoding
//! diagram, syntax, generations, metadata and latency class.

use std::fmt::Write;

use crate::model::{EncId, GenRange, Isa, Piece};

/// The command named in generated files' headers.
pub const REGENERATE: &str = "cargo xtask gen";

fn gen_text(isa: &Isa, g: GenRange) -> String {
    let name = |v: u32| {
        isa.generations
            .iter()
            .find(|(_, x)| *x == v)
            .map_or(v.to_string(), |(n, _)| format!("{n} ({v})"))
    };
    match (g.min, g.max) {
        (0, u32::MAX) => "all".into(),
        (a, u32::MAX) => format!("{} and later", name(a)),
        (0, b) => format!("up to {}", name(b)),
        (a, b) if a == b => name(a),
        (a, b) => format!("{} to {}", name(a), name(b)),
    }
}

/// One character per bit, most significant first: `0`/`1` pattern bits,
/// `x` don't care, and a letter per field (legend below the diagram).
fn diagram(isa: &Isa, leaf: EncId) -> (String, Vec<(char, String, String, String)>) {
    let e = &isa.encodings[leaf];
    let mut cells = vec!['?'; e.width as usize];
    for (b, cell) in cells.iter_mut().enumerate() {
        let m = 1u64 << b;
        if e.mask & m != 0 {
            *cell = if e.match_bits & m != 0 { '1' } else { '0' };
        } else if e.dontcare & m != 0 {
            *cell = 'x';
        }
    }
    let mut legend = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let letters = "ABCDEFGHIJKLMNOPQRSTUVWYZabcdefghijklmnopqrstuvwyz";
    for enc in isa.chain(leaf) {
        let lvl = &isa.encodings[enc].plain;
        for a in &lvl.asserts {
            for (b, cell) in cells.iter_mut().enumerate() {
                if a.mask >> b & 1 == 1 {
                    *cell = if a.value >> b & 1 == 1 { '1' } else { '0' };
                }
            }
        }
        for f in &lvl.fields {
            if names.contains(&f.name.as_str()) {
                continue;
            }
            names.push(&f.name);
            let letter = letters.chars().nth(legend.len()).unwrap_or('*');
            for (b, cell) in cells.iter_mut().enumerate() {
                if f.mask() >> b & 1 == 1 {
                    *cell = letter;
                }
            }
            let bits: Vec<String> = f
                .ranges
                .iter()
                .map(|r| {
                    if r.low == r.high {
                        r.low.to_string()
                    } else {
                        format!("{}..={}", r.low, r.high)
                    }
                })
                .collect();
            legend.push((
                letter,
                f.name.to_string(),
                bits.join(", "),
                f.ty.describe(isa),
            ));
        }
    }
    let mut s = String::new();
    for (i, c) in cells.iter().rev().enumerate() {
        if i > 0 && i % 8 == 0 {
            s.push(' ');
        }
        s.push(*c);
    }
    (s, legend)
}

fn template_text(pieces: &[Piece]) -> String {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Lit(l) => s.push_str(&l.replace('{', "{{").replace('}', "}}")),
            Piece::Mnemonic => s.push_str("{NAME}"),
            Piece::Field(n, _) => {
                let _ = write!(s, "{{{n}}}");
            }
        }
    }
    s
}

/// The whole reference page for `isa`; `spec` is the root file's path as
/// shown in the header.
pub fn markdown(isa: &Isa, spec: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<!-- Generated from {spec} by `{REGENERATE}`. Do not edit: edit the spec and rerun. -->\n"
    );
    let _ = writeln!(o, "# `{}` instruction set reference\n", isa.name);
    if !isa.doc.is_empty() {
        let _ = writeln!(o, "{}\n", isa.doc);
    }
    let count = isa.instructions().count();
    let _ = writeln!(
        o,
        "{}-bit instruction words, {count} instructions (leaf encodings).\n",
        isa.width
    );
    if !isa.generations.is_empty() {
        let _ = writeln!(o, "## Generations\n\n| name | number |\n|---|---|");
        for (n, v) in &isa.generations {
            let _ = writeln!(o, "| {n} | {v} |");
        }
        o.push('\n');
    }
    if !isa.latency.classes.is_empty() {
        let _ = writeln!(
            o,
            "## Latency rules\n\nFirst matching rule wins.\n\n| producer | consumer | operand | cycles | generations |\n|---|---|---|---|---|"
        );
        let names = |v: &Option<Vec<usize>>| match v {
            None => "*".to_string(),
            Some(v) => v
                .iter()
                .map(|c| isa.latency.classes[*c].clone())
                .collect::<Vec<_>>()
                .join(" \\| "),
        };
        for r in &isa.latency.rules {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                names(&r.producers),
                names(&r.consumers),
                r.field.as_deref().unwrap_or("any"),
                r.cycles,
                gen_text(isa, r.generation)
            );
        }
        for r in &isa.latency.precision {
            let _ = writeln!(
                o,
                "| {} | {} | read in the other precision | +{} | {} |",
                names(&r.producers),
                names(&r.consumers),
                r.cycles,
                gen_text(isa, r.generation)
            );
        }
        o.push('\n');
    }
    if !isa.regfiles.is_empty() {
        register_files(isa, &mut o);
    }
    if !isa.idioms.is_empty() {
        let _ = writeln!(
            o,
            "## Idioms\n\nInstructions the compiler builds for a purpose (registers are placeholders).\n\n| idiom | assembly | generations | purpose |\n|---|---|---|---|"
        );
        for i in &isa.idioms {
            let _ = writeln!(
                o,
                "| `{}` | `{}` | {} | {} |",
                i.name,
                i.text,
                gen_text(isa, i.generation),
                i.doc.replace('\n', " ")
            );
        }
        o.push('\n');
    }
    crate::semantics::write_machine_doc(isa, &mut o);
    let _ = writeln!(o, "## Instructions\n");
    for leaf in isa.instructions() {
        let e = &isa.encodings[leaf];
        let _ = writeln!(o, "### `{}`\n", e.name);
        if !e.doc.is_empty() {
            let _ = writeln!(o, "{}\n", e.doc);
        }
        let _ = writeln!(o, "- generations: {}", gen_text(isa, e.generation));
        let chain: Vec<String> = isa
            .chain(leaf)
            .skip(1)
            .map(|p| format!("`{}`", isa.encodings[p].name))
            .collect();
        if !chain.is_empty() {
            let _ = writeln!(o, "- inherits: {}", chain.join(" → "));
        }
        for k in &isa.meta_keys {
            if let Some(v) = isa.meta(leaf, &k.name) {
                let _ = writeln!(o, "- {}: {}", k.name, meta_text(v));
            }
        }
        let overlaps: Vec<String> = isa
            .chain(leaf)
            .flat_map(|p| isa.encodings[p].overlaps.iter())
            .map(|(x, _)| format!("`{}`", isa.encodings[*x].name))
            .collect();
        if !overlaps.is_empty() {
            let _ = writeln!(
                o,
                "- overlaps: {} (a word matching both decodes to nothing)",
                overlaps.join(", ")
            );
        }
        for enc in isa.chain(leaf) {
            let en = &isa.encodings[enc];
            let plain = en.plain.checks.iter().map(|c| (c, None));
            let whens = en
                .whens
                .iter()
                .flat_map(|w| w.level.checks.iter().map(move |c| (c, Some(&w.cond))));
            for (c, cond) in plain.chain(whens) {
                let when = cond.map_or(String::new(), |w| format!(" when `{w}`"));
                let _ = writeln!(
                    o,
                    "- check{when}: `{}` — {}",
                    c.expr.to_string().replace('|', "\\|"),
                    c.message
                );
            }
        }
        o.push('\n');
        let mut syntaxes = Vec::new();
        for enc in isa.chain(leaf) {
            let en = &isa.encodings[enc];
            for w in &en.whens {
                if let Some(t) = &w.level.display {
                    syntaxes.push(format!("`{}` when `{}`", template_text(&t.pieces), w.cond));
                }
            }
            if let Some(t) = &en.plain.display {
                syntaxes.push(format!("`{}`", template_text(&t.pieces)));
                break;
            }
        }
        let _ = writeln!(o, "Syntax:\n");
        for s in syntaxes {
            let _ = writeln!(o, "- {s}");
        }
        let (d, legend) = diagram(isa, leaf);
        let _ = writeln!(
            o,
            "\nEncoding (bit {} on the left):\n\n```text\n{d}\n```\n",
            e.width - 1
        );
        let _ = writeln!(o, "| | field | bits | type |\n|---|---|---|---|");
        for (c, n, b, t) in legend {
            let _ = writeln!(o, "| `{c}` | {n} | {b} | {} |", t.replace('|', "\\|"));
        }
        o.push('\n');
        crate::semantics::write_doc(isa, leaf, &mut o);
    }
    let _ = writeln!(o, "## Enums\n");
    for en in &isa.enums {
        let _ = writeln!(o, "### `{}`\n", en.name);
        if !en.doc.is_empty() {
            let _ = writeln!(o, "{}\n", en.doc);
        }
        if en.strict {
            let _ = writeln!(o, "Strict: values not listed are reserved.\n");
        }
        let _ = writeln!(o, "| value | text |\n|---|---|");
        for (v, s, _) in &en.values {
            let _ = writeln!(o, "| {v} | `{}` |", s.replace('|', "\\|"));
        }
        o.push('\n');
    }
    // Keep one trailing newline.
    while o.ends_with("\n\n") {
        o.pop();
    }
    o
}

fn meta_text(v: &crate::ast::MetaValue) -> String {
    match v {
        crate::ast::MetaValue::Int(i) => i.to_string(),
        crate::ast::MetaValue::Str(s) => format!("{s:?}"),
        crate::ast::MetaValue::Ident(s) => s.to_string(),
        crate::ast::MetaValue::List(l) => format!("[{}]", l.join(", ")),
    }
}

/// The register files: one row per file and generation, with the
/// occupancy the spec's expression gives at a quarter, half and all of
/// the file in use.
fn register_files(isa: &Isa, o: &mut String) {
    let _ = writeln!(
        o,
        "## Register files\n\n| file | kind | unit bits | generation | units | inside | occupancy at 1/4, 1/2, all units |\n|---|---|---|---|---|---|---|"
    );
    let gens: Vec<(String, u32)> = if isa.generations.is_empty() {
        vec![("all".to_string(), 0)]
    } else {
        isa.generations
            .iter()
            .map(|(n, g)| (n.to_string(), *g))
            .collect()
    };
    for (i, r) in isa.regfiles.iter().enumerate() {
        for (gname, g) in &gens {
            let Some(count) = r.count(*g) else { continue };
            let inside = r
                .inside(*g)
                .map_or(String::new(), |f| format!("`{}`", isa.regfiles[f].name));
            let occupancy = match &r.occupancy {
                None => String::new(),
                Some(_) => [count / 4, count / 2, count]
                    .iter()
                    .map(|&n| {
                        isa.occupancy(i, n, *g)
                            .map_or("?".to_string(), |t| t.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {gname} | {count} | {inside} | {occupancy} |",
                r.name,
                r.kind.name(),
                r.unit
            );
        }
    }
    o.push('\n');
    for r in &isa.regfiles {
        if !r.doc.is_empty() {
            let _ = writeln!(o, "- `{}`: {}", r.name, r.doc.replace('\n', " "));
        }
    }
    o.push('\n');
}
