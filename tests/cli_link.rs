//! `lathe link` end to end: the built binary on a bundled pair, with the
//! linked IR, and on bad inputs.

use std::path::PathBuf;
use std::process::{Command, Output};

fn pair(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "passes",
        "tests",
        "link-pairs",
        name,
    ]
    .iter()
    .collect();
    path.display().to_string()
}

fn lathe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(args)
        .output()
        .expect("lathe runs")
}

#[test]
fn link_prints_varyings_before_and_after() {
    let out = lathe(&["link", &pair("lit.vs.lir"), &pair("lit.fs.lir")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("before:\n  vertex outputs\n    VAR0       x f32, y f32\n"),
        "{text}"
    );
    assert!(text.contains("    VAR5       w f32 (unread)\n"), "{text}");
    assert!(
        text.contains("    VAR0       x f32 smooth, y f32 smooth\n"),
        "{text}"
    );
    assert!(
        text.contains("after:\n  vertex outputs\n    VAR0       x f32\n    VAR1       x f32\n"),
        "{text}"
    );
    assert!(
        text.ends_with("vec4 slots: 6 -> 2, components: 7 -> 2\n"),
        "{text}"
    );
    assert!(!text.contains("shader vertex"), "{text}");
}

#[test]
fn emit_ir_prints_both_linked_shaders_which_parse() {
    let out = lathe(&[
        "link",
        &pair("lit.vs.lir"),
        &pair("lit.fs.lir"),
        "--emit",
        "ir",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let (_, shaders) = text.split_once("; linked vertex shader\n").unwrap();
    let (vs, fs) = shaders.split_once("; linked fragment shader\n").unwrap();
    let arena = lathe_ir::Bump::new();
    for t in [vs, fs] {
        let s: lathe_ir::Shader<lathe_ir::GenericOp> = lathe_ir::parse(&arena, t).unwrap();
        lathe_ir::validate(&s).unwrap();
    }
    assert!(
        fs.contains("load_input slot=0 comp=0 interp=smooth"),
        "{fs}"
    );
}

#[test]
fn bad_inputs_fail_with_one_message() {
    let out = lathe(&["link", &pair("lit.fs.lir"), &pair("lit.vs.lir")]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "lathe: unsupported: linking a fragment shader to a vertex shader (only vertex to fragment)\n"
    );
    let out = lathe(&[
        "link",
        &pair("lit.vs.lir"),
        &pair("lit.fs.lir"),
        "--xfb",
        "3.7",
    ]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "lathe: --xfb: `3.7` is not SLOT.COMP\n"
    );
    let out = lathe(&["link", &pair("missing.lir"), &pair("lit.fs.lir")]);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("lathe: cannot read ")
    );
}
