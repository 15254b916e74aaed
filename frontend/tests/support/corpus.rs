//! The shared shader corpus (`shared/corpus/MANIFEST.tsv`): where it is and
//! which entry points it lists. Used by the corpus test and the bench.

#![allow(dead_code)]

use lathe_frontend::{Error, Lowered, Options, lower_spirv, lower_wgsl, spirv_words};
use lathe_ir::Stage;
use std::path::{Path, PathBuf};

/// The corpus lives in `shared/corpus` beside the checkout (`<checkout>/../shared`);
/// the nearest such directory above the crate is used, or `LATHE_CORPUS` if set.
pub fn corpus_dir() -> PathBuf {
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

pub fn cases(dir: &Path) -> Vec<Case> {
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

/// Lower one corpus entry point (GLSL through its `.spv`, WGSL through naga)
/// with the default passes.
pub fn lower<'a>(arena: &'a lathe_ir::Bump, dir: &Path, case: &Case) -> Result<Lowered<'a>, Error> {
    let opts = Options {
        entry: Some(case.entry.clone()),
        stage: Some(case.stage),
        spec: case.overrides.clone(),
        passes: true,
    };
    if case.wgsl {
        let src = std::fs::read_to_string(dir.join(&case.path)).expect("read source");
        lower_wgsl(arena, &src, &opts)
    } else {
        let bytes = std::fs::read(dir.join(format!("{}.spv", case.path))).expect("read .spv");
        lower_spirv(arena, &spirv_words(&bytes)?, &opts)
    }
}
