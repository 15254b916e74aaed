//! `lathe opt` with the `select` pass: generic IR through ir3 instruction
//! selection and the backend passes, printed as allocated machine IR or
//! emitted; what the rules do not cover is a one-line `unsupported:`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn example() -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "adreno",
        "examples",
        "ir3-select.lir",
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
fn selects_and_allocates_generic_ir() {
    let passes = "select,group,depth,sched,ra";
    let out = lathe(&["opt", "--passes", passes, "--target", "a630", &example()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Allocated machine IR: ir3 instructions with registers.
    assert!(
        stdout.starts_with("shader fragment\nregisters gpr"),
        "{stdout}"
    );
    assert!(stdout.contains("= sin full %"), "{stdout}");
    assert!(stdout.contains("= mul.f full src2=0x1004 %"), "{stdout}");
    assert!(stdout.contains("phi ["), "{stdout}");
    // And emitted: the disassembly reads the uniform as c1.x.
    let out = lathe(&[
        "opt",
        "--passes",
        passes,
        "--target",
        "a740",
        "--emit",
        "asm",
        &example(),
    ]);
    let asm = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(asm.contains("c1.x"), "{asm}");
    assert!(asm.contains("sin r"), "{asm}");
}

#[test]
fn generic_passes_run_before_select() {
    let out = lathe(&[
        "opt",
        "--passes",
        "dce,select,group",
        "--target",
        "a630",
        "--print-after-all",
        &example(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (dce, select) = (stderr.find("; after dce"), stderr.find("; after select"));
    assert!(dce.is_some() && select > dce, "{stderr}");
}

#[test]
fn unsupported_generic_opcodes_fail_with_one_line() {
    let dir = std::env::temp_dir().join(format!("lathe-cli-select-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("umul_high.lir");
    std::fs::write(
        &file,
        "shader fragment\nb0:\n  %0:u32 = load_input slot=0 comp=0 interp=flat\n  %1:u32 = umul_high %0, %0\n  store_output slot=0 comp=0 %1\n  ret\n",
    )
    .unwrap();
    let out = lathe(&[
        "opt",
        "--passes",
        "select",
        "--target",
        "a630",
        &file.display().to_string(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        "lathe: unsupported: umul_high giving u32 (ir3 selection)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
