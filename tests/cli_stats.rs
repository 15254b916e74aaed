//! `lathe stats`: one row per entry point of every shader under the
//! paths, in path order whatever the thread count, with a summary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn lathe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(args)
        .output()
        .expect("lathe runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "lathe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A directory of three shaders: the bundled example, a module with a
/// vertex and a fragment entry point, and one that does not parse.
fn shaders() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lathe-cli-stats-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let example: PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", "attenuation.wgsl"]
        .iter()
        .collect();
    std::fs::copy(example, dir.join("a.wgsl")).unwrap();
    std::fs::write(
        sub.join("b.wgsl"),
        "@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {\n\
             return vec4<f32>(f32(i), 0.0, 0.0, 1.0); }\n\
         @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(0.5); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("c.wgsl"), "fn (").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a shader").unwrap();
    dir
}

#[test]
fn rows_follow_the_paths_and_the_summary_counts_them() {
    let dir = shaders();
    let path = dir.to_str().unwrap();
    let one = stdout(&lathe(&[
        "stats", "--gpu", "a630", "--format", "json", "-j", "1", "--verify", path,
    ]));
    let two = stdout(&lathe(&[
        "stats", "--gpu", "a630", "--format", "json", "-j", "2", "--verify", path,
    ]));
    assert_eq!(one, two, "the output does not depend on the thread count");
    let json: serde_json::Value = serde_json::from_str(&one).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            let file = r["file"].as_str().unwrap();
            let file = file.rsplit_once(&*format!("{path}/")).unwrap().1;
            format!("{file}:{}", r["entry"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        names,
        ["a.wgsl:main", "c.wgsl:", "sub/b.wgsl:vs", "sub/b.wgsl:fs"]
    );

    // The compiled rows carry the statistics line's fields.
    let line = stdout(&lathe(&[
        "compile",
        "--gpu",
        "a630",
        "--emit",
        "stats",
        &format!("{path}/a.wgsl"),
    ]));
    let stats = rows[0]["stats"].as_object().unwrap();
    assert_eq!(
        stats["inst"].as_u64().unwrap().to_string(),
        line.split("shader: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
    );
    assert!(
        stats.contains_key("(ss)") && stats.contains_key("waves"),
        "{stats:?}"
    );
    assert_eq!(rows[0]["verify"], "ok");
    assert!(
        rows[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("WGSL: error")
    );

    let summary = &json["summary"];
    assert_eq!(summary["entry_points"], 4);
    let compiled = summary["compiled"].as_u64().unwrap();
    let failed: u64 = summary["failed"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(compiled + failed, 4);
    assert!(compiled >= 2, "{summary}");
    assert_eq!(summary["verified"]["passed"].as_u64(), Some(compiled));
    // Every row compiled has inst >= 1, so the geometric mean does too.
    assert!(
        summary["geomeans"]["inst"].as_f64().unwrap() >= 1.0,
        "{summary}"
    );

    // The table ends with the summary; CSV has the stats line's fields as
    // columns and sends the summary to standard error.
    let table = stdout(&lathe(&["stats", "--gpu", "a740", path]));
    assert!(
        table.contains(&format!("compiled {compiled} of 4 entry points")),
        "{table}"
    );
    let csv = lathe(&["stats", "--gpu", "a630", "--format", "csv", path]);
    let text = stdout(&csv);
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("file,entry,stage,inst,nops,non-nops,mov,cov,"),
        "{header}"
    );
    assert!(header.ends_with(",error"), "{header}");
    assert_eq!(text.lines().count(), 5);
    assert!(String::from_utf8_lossy(&csv.stderr).starts_with("compiled "));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_missing_path_is_one_clear_error() {
    let out = lathe(&["stats", "--gpu", "a630", "/nonexistent/lathe-shaders"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "lathe: /nonexistent/lathe-shaders: no such file or directory\n"
    );
}
