//! `lathe compile --gpu`: the built binary compiles a bundled shader end
//! to end; its outputs agree with each other and with `lathe asm`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn example(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", name]
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

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "lathe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The words `--emit json` reports.
fn json_words(gpu: &str, shader: &str) -> Vec<u64> {
    let json: serde_json::Value = serde_json::from_str(&stdout(&lathe(&[
        "compile", "--gpu", gpu, "--emit", "json", shader,
    ])))
    .expect("--emit json prints JSON");
    json["words"]
        .as_array()
        .expect("a words array")
        .iter()
        .map(|w| {
            let hex = w.as_str().expect("words are strings");
            u64::from_str_radix(hex.trim_start_matches("0x"), 16).expect("hex words")
        })
        .collect()
}

#[test]
fn the_disassembly_assembles_back_to_the_words_on_every_generation_it_targets() {
    let shader = example("attenuation.wgsl");
    for gpu in ["a630", "a740"] {
        let words = json_words(gpu, &shader);
        assert!(words.len() > 3, "{gpu}: {words:x?}");
        let asm = stdout(&lathe(&["compile", "--gpu", gpu, &shader]));
        let (program, stats) = asm
            .rsplit_once("; ")
            .expect("a trailing statistics comment");
        assert!(
            stats.contains(" inst, ") && stats.contains("(ss)"),
            "{stats}"
        );
        let dir =
            std::env::temp_dir().join(format!("lathe-cli-compile-{}-{gpu}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("program.asm");
        std::fs::write(&source, program).unwrap();
        let listed: Vec<u64> = stdout(&lathe(&["asm", "--gpu", gpu, source.to_str().unwrap()]))
            .lines()
            .map(|l| u64::from_str_radix(l.trim().trim_start_matches("0x"), 16).expect("hex"))
            .collect();
        assert_eq!(listed, words, "{gpu}: lathe asm of the disassembly");

        // `--emit stats` is the asm output's comment; `--emit bin` the words.
        let line = stdout(&lathe(&[
            "compile", "--gpu", gpu, "--emit", "stats", &shader,
        ]));
        assert_eq!(line, stats);
        let bin = dir.join("program.bin");
        stdout(&lathe(&[
            "compile",
            "--gpu",
            gpu,
            "--emit",
            "bin",
            "-o",
            bin.to_str().unwrap(),
            &shader,
        ]));
        let bytes = std::fs::read(&bin).unwrap();
        let expected: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(bytes, expected);
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn print_after_names_the_stage_and_rejects_unknown_ones() {
    let shader = example("attenuation.wgsl");
    let out = lathe(&["compile", "--gpu", "a630", "--print-after", "ra", &shader]);
    stdout(&out);
    let dump = String::from_utf8_lossy(&out.stderr);
    assert!(dump.starts_with("; after ra\n"), "{dump}");
    assert!(!dump.contains("; after sched"), "{dump}");

    let out = lathe(&[
        "compile",
        "--gpu",
        "a630",
        "--print-after",
        "nonsense",
        &shader,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such stage") && err.contains("select"),
        "{err}"
    );
}

#[test]
fn what_the_backend_does_not_cover_fails_with_unsupported() {
    let dir = std::env::temp_dir().join(format!("lathe-cli-compile-ubo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shader = dir.join("image.wgsl");
    // A 1D image store: ir3's selection covers 2D, 2D array, 3D and cube
    // storage images only.
    std::fs::write(
        &shader,
        "@group(0) @binding(0) var img: texture_storage_1d<rgba8unorm, write>;\n\
         @compute @workgroup_size(1) fn main() { textureStore(img, 0, vec4<f32>(1.0)); }\n",
    )
    .unwrap();
    let out = lathe(&["compile", "--gpu", "a630", shader.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("lathe: unsupported:"), "{err}");
    assert!(out.stdout.is_empty());

    // A fine derivative: Valhall's reads lane_id, which its simulator does
    // not hold per thread.
    let fine = dir.join("fine.wgsl");
    std::fs::write(
        &fine,
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {\n\
         return vec4<f32>(dpdxFine(x)); }\n",
    )
    .unwrap();
    let out = lathe(&["compile", "--gpu", "g610", fine.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("lathe: unsupported:") && err.contains("valhall selection"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_runs_the_program_against_the_interpreter() {
    let shader = example("attenuation.wgsl");
    for gpu in ["a630", "a740"] {
        for seed in ["1", "2"] {
            let out = lathe(&[
                "compile",
                "--gpu",
                gpu,
                "--verify",
                "--seed",
                seed,
                "--threads",
                "8",
                "--emit",
                "stats",
                &shader,
            ]);
            assert!(stdout(&out).contains(" inst, "));
            let err = String::from_utf8_lossy(&out.stderr);
            // Four output components per thread.
            assert!(
                err.starts_with(&format!(
                    "verify: ok (32 values over 8 threads, seed {seed}"
                )),
                "{gpu}: {err}"
            );
        }
    }
    // Fragment threads come in quads.
    let out = lathe(&[
        "compile",
        "--gpu",
        "a630",
        "--verify",
        "--threads",
        "3",
        &shader,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("lathe: verify: ") && err.contains("quads of 4"),
        "{err}"
    );
}

#[test]
fn valhall_disassembly_assembles_back_and_the_outputs_agree() {
    let shader = example("attenuation.wgsl");
    for gpu in ["g57", "g610"] {
        let words = json_words(gpu, &shader);
        assert!(words.len() > 3, "{gpu}: {words:x?}");
        let asm = stdout(&lathe(&["compile", "--gpu", gpu, &shader]));
        let (program, stats) = asm
            .rsplit_once("; ")
            .expect("a trailing statistics comment");
        assert!(
            stats.starts_with("fragment shader: ")
                && stats.contains(" sfu, ")
                && stats.contains(" threads, "),
            "{stats}"
        );
        let dir =
            std::env::temp_dir().join(format!("lathe-cli-valhall-{}-{gpu}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("program.asm");
        std::fs::write(&source, program).unwrap();
        let listed: Vec<u64> = stdout(&lathe(&["asm", "--gpu", gpu, source.to_str().unwrap()]))
            .lines()
            .map(|l| u64::from_str_radix(l.trim().trim_start_matches("0x"), 16).expect("hex"))
            .collect();
        assert_eq!(listed, words, "{gpu}: lathe asm of the disassembly");
        let line = stdout(&lathe(&[
            "compile", "--gpu", gpu, "--emit", "stats", &shader,
        ]));
        assert_eq!(line, stats);
        let bin = dir.join("program.bin");
        stdout(&lathe(&[
            "compile",
            "--gpu",
            gpu,
            "--emit",
            "bin",
            "-o",
            bin.to_str().unwrap(),
            &shader,
        ]));
        let expected: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(std::fs::read(&bin).unwrap(), expected);
        std::fs::remove_dir_all(&dir).ok();
    }
    // What the Valhall backend does not cover fails plainly.
    let dir = std::env::temp_dir().join(format!("lathe-cli-valhall-fine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fine = dir.join("fine.wgsl");
    std::fs::write(
        &fine,
        "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {\n\
         return vec4<f32>(dpdyFine(x)); }\n",
    )
    .unwrap();
    let out = lathe(&["compile", "--gpu", "g610", fine.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("unsupported: fine derivatives"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn uniform_matrix_products_go_to_the_preamble_whose_const_range_the_json_names() {
    let shader = example("uniform-matrices.wgsl");
    for gpu in ["a630", "a740"] {
        let json: serde_json::Value = serde_json::from_str(&stdout(&lathe(&[
            "compile", "--gpu", gpu, "--emit", "json", "--verify", &shader,
        ])))
        .expect("--emit json prints JSON");
        let consts = &json["interface"]["consts"];
        // The 16 words of projection * view * model, on a vec4 after the
        // 48 of the pushed UBO range and the float immediate 1.0.
        assert_eq!(consts["immediates"][0]["const_word"], 48, "{gpu}: {consts}");
        assert_eq!(consts["preamble"]["const_word"], 52, "{gpu}: {consts}");
        assert_eq!(consts["preamble"]["words"], 16, "{gpu}: {consts}");
        let stats = json["stats"].as_str().unwrap();
        assert!(!stats.ends_with(" 0 preamble"), "{stats}");

        let asm = stdout(&lathe(&["compile", "--gpu", gpu, "--no-preamble", &shader]));
        assert!(
            !asm.contains("shps") && asm.trim_end().ends_with(" 0 preamble"),
            "{asm}"
        );
    }
}

#[test]
fn a_sample_at_a_varying_is_a_texture_prefetch_the_json_describes() {
    let dir = std::env::temp_dir().join(format!("lathe-cli-prefetch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shader = dir.join("prefetch.wgsl");
    std::fs::write(
        &shader,
        "@group(0) @binding(0) var t: texture_2d<f32>;\n\
         @group(0) @binding(1) var s: sampler;\n\
         @fragment fn main(@location(0) tint: vec2<f32>, @location(1) uv: vec2<f32>) -> @location(0) vec4<f32> {\n\
         return textureSample(t, s, uv) * tint.x; }\n",
    )
    .unwrap();
    let shader = shader.to_str().unwrap();
    for gpu in ["a630", "a740"] {
        let json: serde_json::Value = serde_json::from_str(&stdout(&lathe(&[
            "compile", "--gpu", gpu, "--emit", "json", "--verify", shader,
        ])))
        .expect("--emit json prints JSON");
        let consts = &json["interface"]["consts"];
        let prefetch = &consts["prefetches"][0];
        // It samples location 1's two components, into the register the
        // interface names for its input.
        let uv = consts["varyings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["slot"] == 1 && v["comp"] == 0)
            .unwrap_or_else(|| panic!("{gpu}: {consts}"));
        assert_eq!(prefetch["inloc"], uv["inloc"], "{gpu}: {consts}");
        assert_eq!(prefetch["wrmask"], 15, "{gpu}: {consts}");
        let inputs = json["interface"]["inputs"].as_array().unwrap();
        assert!(
            inputs.iter().any(|i| i["meta"] == prefetch["input"]),
            "{gpu}: {json}"
        );
        let asm = stdout(&lathe(&["compile", "--gpu", gpu, shader]));
        assert!(!asm.contains("sam"), "{gpu}: {asm}");
        let asm = stdout(&lathe(&[
            "compile",
            "--gpu",
            gpu,
            "--no-prefetch",
            "--verify",
            shader,
        ]));
        assert!(asm.contains("sam"), "{gpu}: {asm}");
    }
    // a610 has no texture prefetch.
    let json: serde_json::Value = serde_json::from_str(&stdout(&lathe(&[
        "compile", "--gpu", "a610", "--emit", "json", "--verify", shader,
    ])))
    .unwrap();
    assert_eq!(
        json["interface"]["consts"]["prefetches"],
        serde_json::json!([])
    );
    std::fs::remove_dir_all(&dir).ok();
}
