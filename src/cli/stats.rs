//! `lathe stats`: compile every shader under the given paths (`.spv`,
//! `.wgsl`; one row per entry point) for one GPU and report the fields
//! of the statistics line per row, then a summary: how many compiled,
//! the failures grouped by reason, and the geometric mean of each
//! numeric field over the compiled rows (of value + 1, minus 1, so that
//! zero counts). Shaders compile on every core (rayon's work-stealing
//! pool, `-j N` to limit); rows come out in path order whatever the
//! scheduling. A progress bar goes to standard error when it is a
//! terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::{Args, ValueEnum};
use rayon::prelude::*;

use super::CliResult;
use lathe::compile::{Source, compile_lowered_ir3, compile_lowered_valhall, lower};
use lathe_adreno::ir3::compile::CompileOptions;
use lathe_frontend::Options;
use lathe_ir::Stage;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for reading.
    Table,
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON document: rows and summary.
    Json,
}

#[derive(Args)]
pub struct StatsArgs {
    /// The GPU to compile for (an Adreno model: a306, a530, a630, a740, ...;
    /// a Mali Valhall model: g57, g68, g77, g78, g310, g510, g610, g710).
    #[arg(long, value_name = "MODEL")]
    pub gpu: String,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Compile on at most N threads (default: every core).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Also run each compiled shader against the IR interpreter
    /// (`lathe compile --verify`, seed 1): a `verify` column.
    #[arg(long)]
    pub verify: bool,
    /// Adreno a6xx on: no preamble (`lathe compile --no-preamble`).
    #[arg(long)]
    pub no_preamble: bool,
    /// Files or directories (searched recursively for `.spv` and `.wgsl`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// One entry point's result.
#[derive(Debug)]
struct Row {
    file: String,
    entry: String,
    stage: String,
    /// The statistics line's `(name, value)` fields, or why it failed.
    result: Result<Vec<(String, String)>, String>,
    /// `--verify`: `ok`, or what went wrong.
    verify: Option<String>,
}

/// The GPU a run compiles for.
#[derive(Clone, Copy, Debug)]
enum Gpu {
    Adreno(lathe_adreno::ir3::GpuModel),
    Mali(lathe_mali::valhall::MaliModel),
}

pub fn run(args: StatsArgs) -> CliResult {
    let gpu = match args.gpu.parse::<lathe_adreno::ir3::GpuModel>() {
        Ok(g) => Gpu::Adreno(g),
        Err(e) => match args.gpu.parse::<lathe_mali::valhall::MaliModel>() {
            Ok(m) => Gpu::Mali(m),
            Err(_) => return Err(e.into()),
        },
    };
    let files = shader_files(&args.paths)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()?;
    let progress = Progress::new(files.len());
    let rows: Vec<Row> = pool.install(|| {
        files
            .par_iter()
            .flat_map_iter(|f| {
                let rows = file_rows(f, gpu, args.verify, args.no_preamble);
                progress.step();
                rows
            })
            .collect()
    });
    progress.finish();
    let summary = Summary::of(&rows);
    let text = match args.format {
        Format::Table => table(&rows, &summary),
        Format::Csv => csv(&rows),
        Format::Json => serde_json::to_string_pretty(&json(&rows, &summary))? + "\n",
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if args.format == Format::Csv {
        // The summary is not CSV: it goes where a person reads it.
        eprint!("{}", summary.text());
    }
    Ok(())
}

/// `.spv` and `.wgsl` files under `paths`, each path's files sorted.
fn shader_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if is_shader(&p) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut files)?;
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(files)
}

fn is_shader(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("spv" | "wgsl"))
}

/// The rows of every entry point of `path` (one failed row when the
/// file itself does not read or parse).
fn file_rows(path: &Path, gpu: Gpu, verify: bool, no_preamble: bool) -> Vec<Row> {
    let file = path.display().to_string();
    let failed = |message: String| {
        vec![Row {
            file: file.clone(),
            entry: String::new(),
            stage: String::new(),
            result: Err(message),
            verify: None,
        }]
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return failed(format!("cannot read: {e}")),
    };
    let wgsl = path.extension().is_some_and(|e| e == "wgsl");
    let (words, text);
    let (source, entries) = if wgsl {
        text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => return failed("the WGSL is not UTF-8".into()),
        };
        (
            Source::Wgsl(&text),
            lathe_frontend::wgsl::entry_points(&text),
        )
    } else {
        words = match lathe_frontend::spirv_words(&bytes) {
            Ok(w) => w,
            Err(e) => return failed(e.to_string()),
        };
        (
            Source::Spirv(&words),
            lathe_frontend::spirv_entry_points(&words),
        )
    };
    let entries = match entries {
        Ok(e) => e,
        Err(e) => return failed(e.to_string()),
    };
    entries
        .into_iter()
        .map(|(entry, stage)| {
            let options = Options {
                entry: Some(entry.clone()),
                stage,
                ..Options::default()
            };
            let (result, verify) = compile_one(source, &options, gpu, verify, no_preamble);
            Row {
                file: file.clone(),
                entry,
                stage: stage.map_or("other", Stage::name).to_string(),
                result,
                verify,
            }
        })
        .collect()
}

type Fields = Vec<(String, String)>;

/// Compiles one entry point: its statistics fields, and with `verify`
/// the verification's outcome.
fn compile_one(
    source: Source<'_>,
    options: &Options,
    gpu: Gpu,
    verify: bool,
    no_preamble: bool,
) -> (Result<Fields, String>, Option<String>) {
    let arena = lathe_ir::Bump::new();
    let lowered = match lower(&arena, source, options) {
        Ok(l) => l,
        Err(e) => return (Err(e.to_string()), None),
    };
    let check = |program: &dyn lathe_ir::verify::Executor| match lathe_ir::verify::verify(
        &lowered.shader,
        program,
        &lathe_ir::verify::Options {
            workgroup_size: lowered.interface.workgroup_size,
            ..Default::default()
        },
    ) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string(),
    };
    match gpu {
        Gpu::Adreno(gpu) => {
            let backend = CompileOptions {
                no_preamble,
                ..CompileOptions::default()
            };
            let out = match compile_lowered_ir3(&lowered, gpu, &backend) {
                Ok(o) => o,
                Err(e) => return (Err(e.to_string()), None),
            };
            let verified = verify.then(|| {
                check(&lathe_adreno::ir3::verify::Ir3Program::new(
                    &out.compiled,
                    &out.ports,
                    gpu,
                ))
            });
            (Ok(fields(&out.compiled.stats.to_string())), verified)
        }
        Gpu::Mali(gpu) => {
            let out = match compile_lowered_valhall(&lowered, gpu, &Default::default()) {
                Ok(o) => o,
                Err(e) => return (Err(e.to_string()), None),
            };
            let verified =
                verify.then(|| check(&lathe_mali::valhall::verify::ValhallProgram::new(&out)));
            // An IDVS pair counts as one vertex shader (both variants).
            (Ok(fields(&out.stats().to_string())), verified)
        }
    }
}

/// The `VALUE NAME` fields of a statistics line
/// (`STAGE shader: 12 inst, 4 nops, ...`).
fn fields(line: &str) -> Fields {
    let list = line.split_once(": ").map_or(line, |(_, rest)| rest);
    list.split(", ")
        .filter_map(|f| f.trim().split_once(' '))
        .map(|(value, name)| (name.to_string(), value.to_string()))
        .collect()
}

/// The summary of a run.
#[derive(Debug, Default)]
struct Summary {
    rows: usize,
    compiled: usize,
    /// Failure reason → rows.
    failed: BTreeMap<String, usize>,
    /// Field → geometric mean over the compiled rows.
    geomeans: Vec<(String, f64)>,
    /// `--verify`: passed, and failures by reason.
    verified: Option<(usize, BTreeMap<String, usize>)>,
}

impl Summary {
    fn of(rows: &[Row]) -> Summary {
        let mut s = Summary {
            rows: rows.len(),
            ..Summary::default()
        };
        let mut sums: Vec<(String, f64, usize)> = Vec::new();
        for r in rows {
            match &r.result {
                Ok(fields) => {
                    s.compiled += 1;
                    for (name, value) in fields {
                        let Ok(v) = value.parse::<f64>() else {
                            continue;
                        };
                        match sums.iter_mut().find(|(n, _, _)| n == name) {
                            Some((_, sum, count)) => {
                                *sum += (v + 1.0).ln();
                                *count += 1;
                            }
                            None => sums.push((name.clone(), (v + 1.0).ln(), 1)),
                        }
                    }
                }
                Err(e) => *s.failed.entry(reason(e)).or_default() += 1,
            }
            if let Some(v) = &r.verify {
                let (passed, failed) = s.verified.get_or_insert_default();
                if v == "ok" {
                    *passed += 1;
                } else {
                    *failed.entry(reason(v)).or_default() += 1;
                }
            }
        }
        s.geomeans = sums
            .into_iter()
            .map(|(n, sum, count)| (n, (sum / count as f64).exp() - 1.0))
            .collect();
        s
    }

    fn text(&self) -> String {
        let mut t = format!("compiled {} of {} entry points\n", self.compiled, self.rows);
        let mut failed: Vec<_> = self.failed.iter().collect();
        failed.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (reason, n) in failed {
            t += &format!("  {n:>4} failed: {reason}\n");
        }
        if let Some((passed, failures)) = &self.verified {
            t += &format!("verified {passed} of {} compiled\n", self.compiled);
            for (reason, n) in failures {
                t += &format!("  {n:>4} verify: {reason}\n");
            }
        }
        if !self.geomeans.is_empty() {
            t += "geometric means:";
            for (name, g) in &self.geomeans {
                t += &format!(" {g:.2} {name},");
            }
            t.pop();
            t.push('\n');
        }
        t
    }
}

/// A failure's reason for grouping: its first line, without the word
/// offsets and instruction positions that differ from shader to shader.
fn reason(message: &str) -> String {
    // A heading ending in `:` says little alone; its first detail joins it.
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let head = lines.next().unwrap_or("");
    let line = match lines.next() {
        Some(detail) if head.ends_with(':') => format!("{head} {detail}"),
        _ => head.to_string(),
    };
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() && out.ends_with([' ', '%']) {
            while chars.peek().is_some_and(|d| d.is_ascii_alphanumeric()) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

fn columns(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .find_map(|r| r.result.as_ref().ok())
        .map(|f| f.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default()
}

fn table(rows: &[Row], summary: &Summary) -> String {
    let names = columns(rows);
    let verify = summary.verified.is_some();
    let mut grid: Vec<Vec<String>> = Vec::with_capacity(rows.len() + 1);
    let mut header = vec!["file".to_string(), "entry".into(), "stage".into()];
    header.extend(names.iter().cloned());
    if verify {
        header.push("verify".into());
    }
    grid.push(header);
    for r in rows {
        let mut line = vec![r.file.clone(), r.entry.clone(), r.stage.clone()];
        match &r.result {
            Ok(fields) => line.extend(fields.iter().map(|(_, v)| v.clone())),
            Err(e) => line.push(format!("error: {}", e.lines().next().unwrap_or(""))),
        }
        if let Some(v) = &r.verify {
            line.resize(names.len() + 3, String::new());
            line.push(v.lines().next().unwrap_or("").to_string());
        }
        grid.push(line);
    }
    let mut widths = vec![0; names.len() + 3];
    for line in &grid {
        for (k, cell) in line.iter().enumerate().take(names.len() + 3) {
            // An error message spans the columns after it.
            if k >= 3 && cell.starts_with("error: ") {
                break;
            }
            widths[k] = widths[k].max(cell.len());
        }
    }
    let mut t = String::new();
    for line in &grid {
        for (k, cell) in line.iter().enumerate() {
            let w = widths.get(k).copied().unwrap_or(0);
            if k < 3 {
                t += &format!("{cell:<w$}  ");
            } else {
                t += &format!("{cell:>w$}  ");
            }
        }
        t.truncate(t.trim_end().len());
        t.push('\n');
    }
    t.push('\n');
    t + &summary.text()
}

fn csv(rows: &[Row]) -> String {
    fn cell(s: &str) -> String {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    }
    let names = columns(rows);
    let verify = rows.iter().any(|r| r.verify.is_some());
    let mut header = vec!["file", "entry", "stage"];
    header.extend(names.iter().map(String::as_str));
    header.push("error");
    if verify {
        header.push("verify");
    }
    let mut t = header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(",") + "\n";
    for r in rows {
        let mut line = vec![cell(&r.file), cell(&r.entry), cell(&r.stage)];
        match &r.result {
            Ok(fields) => {
                line.extend(fields.iter().map(|(_, v)| cell(v)));
                line.push(String::new());
            }
            Err(e) => {
                line.extend(names.iter().map(|_| String::new()));
                line.push(cell(e.lines().next().unwrap_or("")));
            }
        }
        if verify {
            line.push(cell(r.verify.as_deref().unwrap_or("")));
        }
        t += &line.join(",");
        t.push('\n');
    }
    t
}

fn json(rows: &[Row], summary: &Summary) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("file".into(), json!(r.file));
            o.insert("entry".into(), json!(r.entry));
            o.insert("stage".into(), json!(r.stage));
            match &r.result {
                Ok(fields) => {
                    let stats: Map<String, Value> = fields
                        .iter()
                        .map(|(n, v)| {
                            let value = v.parse::<u64>().map_or_else(|_| json!(v), |n| json!(n));
                            (n.clone(), value)
                        })
                        .collect();
                    o.insert("stats".into(), Value::Object(stats));
                }
                Err(e) => {
                    o.insert("error".into(), json!(e));
                }
            }
            if let Some(v) = &r.verify {
                o.insert("verify".into(), json!(v));
            }
            Value::Object(o)
        })
        .collect();
    let geomeans: Map<String, Value> = summary
        .geomeans
        .iter()
        .map(|(n, g)| (n.clone(), json!(g)))
        .collect();
    let mut s = json!({
        "entry_points": summary.rows,
        "compiled": summary.compiled,
        "failed": summary.failed,
        "geomeans": geomeans,
    });
    if let Some((passed, failed)) = &summary.verified {
        s["verified"] = json!({"passed": passed, "failed": failed});
    }
    json!({ "rows": rows, "summary": s })
}

/// A progress bar on standard error, drawn only when it is a terminal.
struct Progress {
    total: usize,
    done: AtomicUsize,
    draw: bool,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            done: AtomicUsize::new(0),
            draw: std::io::stderr().is_terminal(),
        }
    }

    fn step(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.draw {
            const WIDTH: usize = 40;
            let filled = WIDTH * done / self.total.max(1);
            eprint!(
                "\r[{}{}] {done}/{}",
                "#".repeat(filled),
                " ".repeat(WIDTH - filled),
                self.total
            );
        }
    }

    fn finish(&self) {
        if self.draw {
            eprint!("\r{}\r", " ".repeat(60));
        }
    }
}
