//! Every entry point of the shared corpus (`../shared/corpus/MANIFEST.tsv`,
//! rows whose `spirv_ok` is yes) lowered to IR: at least 98% must pass the
//! IR validator, and every failure must be an `unsupported:` error. GLSL
//! goes through the glslang `.spv` beside each source, WGSL through naga.
//!
//! `cargo test -p lathe-frontend --test corpus -- --nocapture` prints the
//! pass rate and every failure with its reason.

use lathe_frontend::{Error, Options, lower_spirv, lower_wgsl, spirv_words};
use lathe_ir::Stage;
use std::path::{Path, PathBuf};

/// The corpus lives in `shared/corpus` beside the checkout (`<checkout>/../shared`);
/// the nearest such directory above the crate is used, or `LATHE_CORPUS` if set.
fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LATHE_CORPUS") {
        return PathBuf::from(dir);
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .map(|a| a.join("shared/corpus"))
        .find(|d| d.join("MANIFEST.tsv").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the shader corpus is missing: no shared/corpus/MANIFEST.tsv beside any directory above {} \
                 (CI expects ../shared next to the checkout; or set LATHE_CORPUS)",
                crate_dir.display()
            )
        })
}

/// One entry point to lower.
pub struct Case {
    pub path: String,
    pub entry: String,
    pub stage: Stage,
    pub wgsl: bool,
    pub overrides: Vec<(String, String)>,
}

fn stage(s: &str) -> Option<Stage> {
    match s {
        "vert" => Some(Stage::Vertex),
        "frag" => Some(Stage::Fragment),
        "comp" => Some(Stage::Compute),
        _ => None,
    }
}

fn cases(dir: &Path) -> Vec<Case> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("read MANIFEST.tsv");
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (path_c, lang_c, spv_c, ep_c, notes_c) = (
        col("path"),
        col("language"),
        col("spirv_ok"),
        col("entry_points"),
        col("notes"),
    );
    let mut out = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        if !f[spv_c].starts_with("yes") {
            continue;
        }
        // "spv uses --override A=1 B=2; tint: ok"
        let overrides: Vec<(String, String)> = f
            .get(notes_c)
            .and_then(|n| {
                n.split(';')
                    .find_map(|part| part.trim().strip_prefix("spv uses --override "))
            })
            .map(|list| {
                list.split_whitespace()
                    .filter_map(|kv| {
                        kv.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for ep in f[ep_c].split(',') {
            let (name, st) = ep.split_once(':').expect("entry:stage");
            out.push(Case {
                path: f[path_c].to_string(),
                entry: name.to_string(),
                stage: stage(st).expect("stage"),
                wgsl: f[lang_c] == "wgsl",
                overrides: overrides.clone(),
            });
        }
    }
    out
}

fn lower_case(dir: &Path, case: &Case) -> Result<usize, Error> {
    let arena = lathe_ir::Bump::new();
    let opts = Options {
        entry: Some(case.entry.clone()),
        stage: Some(case.stage),
        spec: case.overrides.clone(),
        passes: true,
    };
    let lowered = if case.wgsl {
        let src = std::fs::read_to_string(dir.join(&case.path)).expect("read source");
        lower_wgsl(&arena, &src, &opts)?
    } else {
        let bytes = std::fs::read(dir.join(format!("{}.spv", case.path))).expect("read .spv");
        lower_spirv(&arena, &spirv_words(&bytes)?, &opts)?
    };
    lathe_ir::validate(&lowered.shader).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(lowered.shader.len())
}

#[test]
fn corpus_entry_points_lower_to_valid_ir() {
    let dir = corpus_dir();
    let cases = cases(&dir);
    assert!(
        cases.len() > 400,
        "only {} corpus entry points found",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut not_unsupported = Vec::new();
    for case in &cases {
        if let Err(e) = lower_case(&dir, case) {
            let msg = e.to_string();
            if !msg.starts_with("unsupported: ") {
                not_unsupported.push(format!("{}:{}: {msg}", case.path, case.entry));
            }
            failures.push(format!(
                "{}:{} ({:?}): {msg}",
                case.path, case.entry, case.stage
            ));
        }
    }
    let passed = cases.len() - failures.len();
    println!(
        "corpus: {passed}/{} entry points lower to valid IR ({:.1}%)",
        cases.len(),
        100.0 * passed as f64 / cases.len() as f64
    );
    for f in &failures {
        println!("  FAIL {f}");
    }
    assert!(
        not_unsupported.is_empty(),
        "failures that are not `unsupported:` errors:\n{}",
        not_unsupported.join("\n")
    );
    assert!(
        passed * 100 >= cases.len() * 98,
        "{passed}/{} is below 98%",
        cases.len()
    );
}
