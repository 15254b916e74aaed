//! Development tasks.
//!
//! `cargo xtask gen` regenerates every checked-in artifact derived from the
//! specs: `docs/isa/<isa>.md` for every root spec under `isa/specs/` (a
//! `*.isa` file with a top-level `isa NAME {` declaration).
//! `cargo xtask gen --check` regenerates in memory and fails if any
//! checked-in file differs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Root spec files: `*.isa` files whose text declares `isa NAME {` at the
/// start of a line.
fn find_roots(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            find_roots(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "isa") {
            let text = std::fs::read_to_string(&p)?;
            if text.lines().any(|l| l.starts_with("isa ")) {
                out.push(p);
            }
        }
    }
    Ok(())
}

fn regenerate(check: bool) -> Result<bool, String> {
    let root = workspace_root();
    let mut roots = Vec::new();
    find_roots(&root.join("isa/specs"), &mut roots).map_err(|e| format!("isa/specs: {e}"))?;
    let mut fresh = true;
    for spec in roots {
        let rel = spec
            .strip_prefix(&root)
            .unwrap_or(&spec)
            .display()
            .to_string();
        let isa = lathe_isa::load(&spec).map_err(|d| format!("{d}"))?;
        let text = lathe_isa::docgen::markdown(&isa, &rel);
        let out = root.join("docs/isa").join(format!("{}.md", isa.name));
        let current = std::fs::read_to_string(&out).unwrap_or_default();
        if current == text {
            continue;
        }
        let shown = out
            .strip_prefix(&root)
            .unwrap_or(&out)
            .display()
            .to_string();
        if check {
            eprintln!("stale: {shown} (run `cargo xtask gen`)");
            fresh = false;
        } else {
            if let Some(d) = out.parent() {
                std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            }
            std::fs::write(&out, text).map_err(|e| format!("{shown}: {e}"))?;
            println!("wrote {shown}");
        }
    }
    Ok(fresh)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let check = args.iter().any(|a| a == "--check");
            match regenerate(check) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("xtask gen: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("usage: cargo xtask gen [--check]");
            ExitCode::from(2)
        }
    }
}
