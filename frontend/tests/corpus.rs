//! Every entry point of the shared corpus (`../shared/corpus/MANIFEST.tsv`,
//! rows whose `spirv_ok` is yes) lowered to IR: at least 98% must pass the
//! IR validator, and every failure must be an `unsupported:` error. GLSL
//! goes through the glslang `.spv` beside each source, WGSL through naga.
//!
//! `cargo test -p lathe-frontend --test corpus -- --nocapture` prints the
//! pass rate and every failure with its reason.

mod support;

use lathe_frontend::Error;
use std::path::Path;
use support::corpus::{Case, cases, corpus_dir, lower};

fn lower_case(dir: &Path, case: &Case) -> Result<usize, Error> {
    let arena = lathe_ir::Bump::new();
    let lowered = lower(&arena, dir, case)?;
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
