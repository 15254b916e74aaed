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
        text.starts_with(
            "before:\n  vertex outputs: 6 vec4 slots, 7 components\n    VAR0       x f32, y f32\n"
        ),
        "{text}"
    );
    assert!(text.contains("    VAR5       w f32 (unread)\n"), "{text}");
    assert!(
        text.contains("    VAR0       x f32 smooth, y f32 smooth\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "after:\n  vertex outputs: 2 vec4 slots, 2 components\n    VAR0       x f32\n    VAR1       x f32\n"
        ),
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

/// Both stages in one WGSL file: `pos` is a system value, `k` a constant
/// (propagated), `unused` unread (removed) and `a.x + a.y` the only use of
/// `a` (moved into the vertex shader): one component is left of four.
const BOTH_STAGES: &str = "
struct Out {
    @builtin(position) pos: vec4<f32>,
    @location(0) a: vec2<f32>,
    @location(1) k: f32,
    @location(2) @interpolate(flat) unused: u32,
}
@vertex fn vs(@location(0) p: vec4<f32>) -> Out {
    var o: Out;
    o.pos = p;
    o.a = p.xy;
    o.k = 2.0;
    o.unused = 7u;
    return o;
}
@fragment fn fs(@location(0) a: vec2<f32>, @location(1) k: f32) -> @location(0) vec4<f32> {
    return vec4<f32>(a.x + a.y, k, 0.0, 1.0);
}
";

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("lathe-cli-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[test]
fn one_wgsl_file_with_both_stages_links() {
    let wgsl = temp_file("both.wgsl", BOTH_STAGES.as_bytes());
    for args in [
        vec!["link", &wgsl],
        vec![
            "link",
            &wgsl,
            &wgsl,
            "--entry",
            "vs,fs",
            "--stage",
            "vert,frag",
        ],
    ] {
        let out = lathe(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.starts_with("before:\n  vertex outputs: 3 vec4 slots, 4 components\n"),
            "{text}"
        );
        assert!(
            text.contains("  fragment inputs: 2 vec4 slots, 3 components\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "after:\n  vertex outputs: 1 vec4 slots, 1 components\n    VAR0       x f32\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("vec4 slots: 3 -> 1, components: 4 -> 1\n"),
            "{text}"
        );
    }
}

#[test]
fn spirv_stages_link_like_their_wgsl() {
    let spv = |entry: &str, stage: lathe_ir::Stage| {
        let words =
            lathe_frontend::wgsl::to_spirv(BOTH_STAGES, Some(entry), Some(stage), &[]).unwrap();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        temp_file(&format!("{entry}.spv"), &bytes)
    };
    let (vs, fs) = (
        spv("vs", lathe_ir::Stage::Vertex),
        spv("fs", lathe_ir::Stage::Fragment),
    );
    let out = lathe(&["link", &vs, &fs, "--emit", "ir"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("vec4 slots: 3 -> 1, components: 4 -> 1\n; linked vertex shader\n"),
        "{text}"
    );
    let (_, fs_text) = text.split_once("; linked fragment shader\n").unwrap();
    assert_eq!(fs_text.matches("load_input").count(), 1, "{fs_text}");
    // The stages are checked: a fragment shader cannot produce.
    let out = lathe(&["link", &fs, &vs, "--stage", "frag,vert"]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "lathe: unsupported: linking a fragment shader to a vertex shader (only vertex to fragment)\n"
    );
}
