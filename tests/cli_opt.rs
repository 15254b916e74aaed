//! `lathe opt` end to end: the built binary on example files, standard
//! input, bad IR text and bad pass names.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "ir", "examples", name]
        .iter()
        .collect();
    path.display().to_string()
}

fn lathe(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lathe runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    if let Some(text) = stdin {
        input
            .write_all(text.as_bytes())
            .expect("stdin accepts the text");
    }
    drop(input);
    child.wait_with_output().expect("lathe finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const FLATTENED_DIAMOND: &str = "\
shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.5
  %2:bool = flt %0, %1
  %3:f32 = const 2.0
  %4:f32 = fmul %0, %3
  %5:f32 = const 1.0
  %6:f32 = fsub %5, %0
  %7:f32 = sel %2, %4, %6
  store_output slot=0 comp=0 %7
  ret
";

#[test]
fn optimises_an_example_file() {
    let out = lathe(
        &[
            "opt",
            "--passes",
            "dce,copy-prop,flatten",
            &example("diamond.lir"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // dce runs first, while the unused fadd still hangs off a phi; the
    // flatten at the end leaves it as dead straight-line code.
    let stdout = text(&out.stdout);
    assert!(stdout.contains("sel %"), "{stdout}");
    assert!(
        !stdout.contains("phi") && !stdout.contains("mov"),
        "{stdout}"
    );

    let out = lathe(
        &[
            "opt",
            "--passes",
            "flatten,copy-prop,dce",
            &example("diamond.lir"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), FLATTENED_DIAMOND);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn reads_standard_input_and_reports_passes_on_stderr() {
    let source = std::fs::read_to_string(example("diamond.lir")).expect("example");
    let out = lathe(
        &[
            "opt",
            "--passes",
            "flatten,copy-prop,dce",
            "--print-after-all",
            "--time-passes",
            "-",
        ],
        Some(&source),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), FLATTENED_DIAMOND);
    let stderr = text(&out.stderr);
    for pass in ["flatten", "copy-prop", "dce"] {
        assert!(stderr.contains(&format!("; after {pass}\n")), "{stderr}");
    }
    // The dump after the last pass is the final program.
    assert!(
        stderr.contains(&format!("; after dce\n{FLATTENED_DIAMOND}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("time (us)") && stderr.contains("total"),
        "{stderr}"
    );
}

#[test]
fn an_empty_pipeline_prints_the_canonical_form() {
    let source = "shader compute\nb5:   ; entry\n  %7:u32 = const 3\n  output index=0 %7\n  ret\n";
    let out = lathe(&["opt", "--passes", "", "-"], Some(source));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "shader compute\nb0:\n  %0:u32 = const 3\n  output index=0 %0\n  ret\n"
    );
}

#[test]
fn bad_ir_text_fails_with_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("lathe-cli-opt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bad.lir");
    std::fs::write(
        &file,
        "shader fragment\nb0:\n  %0:f32 = const 1.0\n  %1:f32 = fadd %0 %0\n  ret\n",
    )
    .expect("write");
    let name = file.display().to_string();
    let out = lathe(&["opt", &name], None);
    std::fs::remove_dir_all(&dir).ok();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{name}:4:20: expected `,` between operands")),
        "{stderr}"
    );
    // The caret excerpt follows.
    assert!(
        stderr.contains("fadd %0 %0\n") && stderr.trim_end().ends_with('^'),
        "{stderr}"
    );

    // Text that parses but breaks a validator rule points at its line too.
    let out = lathe(
        &["opt", "-"],
        Some("shader fragment\nb0:\n  %0:f32 = const 1.0\n  %1:i32 = fadd %0, %0\n  ret\n"),
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("<stdin>:4:12: needs a float type, not i32"),
        "{stderr}"
    );
}

#[test]
fn unknown_pass_lists_the_valid_ones() {
    let out = lathe(
        &["opt", "--passes", "dce,frobnicate", &example("diamond.lir")],
        None,
    );
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("unknown pass `frobnicate` (valid passes: dce, copy-prop, merge-blocks, flatten, fold, simplify, gvn, load-cse, unroll, promote-arrays, ubo-vectors, optimise)"),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_is_one_clear_error() {
    let out = lathe(&["opt", "/nonexistent/lathe/shader.lir"], None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("lathe: cannot read /nonexistent/lathe/shader.lir"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn backend_passes_run_on_ir3_machine_ir_with_a_target() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "adreno",
        "examples",
        "ir3-machine.lir",
    ]
    .iter()
    .collect();
    let out = lathe(
        &[
            "opt",
            "--passes",
            "group,depth,sched",
            "--target",
            "a630",
            &path.display().to_string(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Preloaded inputs stay at the head. The length chain (squares, add,
    // then rsq: 6 cycles from an ALU result to the SFU) is the critical
    // path, so it starts first and the independent dot product fills the
    // slots before the add and the rsq.
    assert_eq!(
        text(&out.stdout),
        "shader fragment
b0:
  %0:f32 = input index=0
  %1:f32 = input index=1
  %2:f32 = input index=2
  %3:f32 = input index=3
  %4:f32 = mul.f full %0, %0
  %5:f32 = mul.f full %1, %1
  %6:f32 = mul.f full %0, %2
  %7:f32 = mul.f full %1, %3
  %8:f32 = add.f full %4, %5
  %9:f32 = add.f full %6, %7
  %10:f32 = rsq full %8
  %11:f32 = mul.f full %9, %10
  output index=0 %11
  ret
"
    );
    // Without a target the backend passes are refused with one message.
    let out = lathe(
        &["opt", "--passes", "sched", &path.display().to_string()],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("pass `sched` needs a target"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn backend_passes_and_register_allocation_run_on_valhall_machine_ir() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "mali",
        "examples",
        "valhall-machine.lir",
    ]
    .iter()
    .collect();
    let out = lathe(
        &[
            "opt",
            "--passes",
            "group,depth,sched,ra",
            "--target",
            "g610",
            &path.display().to_string(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    // Every value got a general register (r0..r63) and the program kept
    // its instructions.
    for line in printed.lines().filter(|l| l.contains(" = ")) {
        assert!(line.contains("@r"), "unallocated: {line}\n{printed}");
    }
    assert_eq!(printed.matches("FMA.f32").count(), 5, "{printed}");
    assert_eq!(printed.matches("FRSQ.f32").count(), 1, "{printed}");
}

#[test]
fn a_pass_failure_exits_non_zero_with_one_message() {
    // The high half of a multiply has no ir3 selection rule yet.
    let ir = "shader fragment
b0:
  %0:u32 = load_uniform index=0
  %1:u32 = load_uniform index=1
  %2:u32 = umul_high %0, %1
  store_output slot=0 comp=0 %2
  ret
";
    let out = lathe(
        &["opt", "--passes", "select,ra", "--target", "a630", "-"],
        Some(ir),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "lathe: unsupported: umul_high giving u32 (ir3 selection)",
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn register_allocation_spills_valhall_values_to_thread_local_storage() {
    // 72 values live at once against 64 registers (program order, no
    // `sched` to shorten their lives).
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "mali",
        "examples",
        "valhall-spill.lir",
    ]
    .iter()
    .collect();
    let out = lathe(
        &[
            "opt",
            "--passes",
            "ra",
            "--target",
            "g610",
            &path.display().to_string(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    // `offset=N` of a spill or fill line (absent: 0).
    let offset = |line: &str| -> u32 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("offset="))
            .map_or(0, |n| n.parse().unwrap())
    };
    let stores: Vec<u32> = printed
        .lines()
        .filter(|l| l.contains("STORE.i32"))
        .map(offset)
        .collect();
    let loads: Vec<u32> = printed
        .lines()
        .filter(|l| l.contains("LOAD.i32"))
        .map(offset)
        .collect();
    assert!(!stores.is_empty(), "no spill:\n{printed}");
    // Each spilled value has its own 4-byte slot, and every fill reads a
    // slot a spill wrote.
    let mut distinct = stores.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), stores.len(), "{printed}");
    assert!(stores.iter().all(|o| o % 4 == 0), "{printed}");
    assert!(loads.iter().all(|o| stores.contains(o)), "{printed}");
}

#[test]
fn backend_pipeline_spills_ir3_values_from_one_spill_base() {
    // 200 results of a recurrence, read back in reverse, are all live at
    // once against a630's 192 full registers, in any schedule.
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "adreno",
        "examples",
        "ir3-spill.lir",
    ]
    .iter()
    .collect();
    let input = std::fs::read_to_string(&path).expect("the example exists");
    let out = lathe(
        &[
            "opt",
            "--passes",
            "group,depth,sched,ra",
            "--target",
            "a630",
            &path.display().to_string(),
        ],
        None,
    );
    // Debug builds run the allocation checker inside `ra`, which panics
    // (a non-zero exit) when a use does not read its definition's value.
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let lines: Vec<&str> = printed.lines().collect();
    // Every value got a register, and every instruction of the input is
    // still there.
    for line in lines.iter().filter(|l| l.contains(" = ")) {
        assert!(line.contains('@'), "unallocated: {line}\n{printed}");
    }
    for op in ["mul.f", "add.f"] {
        assert_eq!(
            printed.matches(op).count(),
            input.matches(op).count(),
            "{op}\n{printed}"
        );
    }
    // Operands of a line: the values after the opcode (for a definition,
    // after the `=`), with their registers cut off.
    let operands = |line: &str| -> Vec<String> {
        let rhs = line.split_once(" = ").map_or(line, |(_, r)| r);
        rhs.split([' ', ','])
            .filter(|w| w.starts_with('%'))
            .map(|w| w.split('@').next().unwrap_or(w).to_string())
            .collect()
    };
    let opcode = |line: &str| -> String {
        let rhs = line.split_once(" = ").map_or(line, |(_, r)| r);
        rhs.split_whitespace().next().unwrap_or("").to_string()
    };
    let accesses: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| ["stp", "ldp"].contains(&opcode(l).as_str()))
        .collect();
    let stores = accesses.iter().filter(|l| opcode(l) == "stp").count();
    assert!(stores > 0, "no spill:\n{printed}");
    assert!(accesses.len() > stores, "no fill:\n{printed}");
    // The spill base: every stp and ldp addresses from one value, defined
    // once, at the entry before any of them, in a register no other value
    // uses.
    let base = operands(accesses[0])[0].clone();
    assert!(accesses.iter().all(|l| operands(l)[0] == base), "{printed}");
    let defines = |l: &&str, v: &str| l.trim_start().starts_with(&format!("{v}:"));
    let base_defs: Vec<usize> = (0..lines.len())
        .filter(|&k| defines(&lines[k], &base))
        .collect();
    assert_eq!(base_defs.len(), 1, "{printed}");
    let first_access = lines
        .iter()
        .position(|l| ["stp", "ldp"].contains(&opcode(l).as_str()))
        .expect("spills exist");
    assert!(base_defs[0] < first_access, "{printed}");
    let register = |line: &str| -> String {
        let def = line.split_whitespace().next().unwrap_or("");
        def.split_once('@').map_or("", |(_, r)| r).to_string()
    };
    let base_reg = register(lines[base_defs[0]]);
    let sharing: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(" = ") && register(l) == base_reg)
        .collect();
    assert_eq!(sharing.len(), 1, "{base_reg} shared: {sharing:?}");
    // a630's general file is 48 vec4 registers, 192 full (32-bit) ones,
    // counted in 16-bit units by the merged file: every register, the
    // base included, lies inside it.
    for line in lines.iter().filter(|l| l.contains(" = ")) {
        let unit: u32 = register(line)
            .strip_prefix("gpr")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("not a general register: {line}"));
        assert!(unit + 2 <= 384, "outside the file: {line}");
    }
}

/// `--emit` prints the emitted ir3 program: its disassembly and Mesa's
/// statistics line, the words (which `lathe sim` runs without a hazard),
/// or the line alone.
#[test]
fn the_backend_pipeline_emits_an_ir3_program() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "targets",
        "adreno",
        "examples",
        "ir3-machine.lir",
    ]
    .iter()
    .collect();
    let file = path.display().to_string();
    let emit = |form: &str| {
        let out = lathe(
            &[
                "opt",
                "--passes",
                "group,depth,sched,ra,legalise",
                "--target",
                "a630",
                "--emit",
                form,
                &file,
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let asm = emit("asm");
    let lines: Vec<&str> = asm.lines().collect();
    let (stats, program) = lines.split_last().unwrap();
    assert!(
        stats.starts_with("; MESA_SHADER_FRAGMENT shader: "),
        "{asm}"
    );
    assert_eq!(program.last(), Some(&"end"));
    assert!(asm.contains("(ss)"), "{asm}");
    assert_eq!(emit("stats").trim_end(), &stats[2..]);
    // The words are the disassembly's, and run without a hazard.
    let words = emit("bin");
    assert_eq!(words.lines().count(), program.len());
    let source = program.join("\n") + "\n";
    let out = lathe(&["asm", "--gpu", "a630", "-"], Some(&source));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), words);
    let out = lathe(&["sim", "--gpu", "a630", "-"], Some(&source));
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = lathe(&["opt", "--passes", "", "--emit", "asm", &file], None);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--emit needs an ir3 --target"));
}

#[test]
fn generic_ir_spills_on_a630_after_instruction_selection() {
    // A 200-step recurrence read back in reverse: after `select`, more
    // values are live at once than a630's 192 full registers hold.
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", "select-spill.lir"]
        .iter()
        .collect();
    let input = std::fs::read_to_string(&path).expect("the example exists");
    let out = lathe(
        &[
            "opt",
            "--passes",
            "select,group,depth,sched,ra",
            "--target",
            "a630",
            &path.display().to_string(),
        ],
        None,
    );
    // Debug builds run the allocation checker inside `ra`, which panics
    // (a non-zero exit) when a use does not read its definition's value.
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    for line in printed.lines().filter(|l| l.contains(" = ")) {
        assert!(line.contains('@'), "unallocated: {line}\n{printed}");
    }
    // Every multiply and add of the input was selected and kept.
    assert_eq!(
        printed.matches("= mul.f ").count(),
        input.matches("= fmul ").count(),
        "{printed}"
    );
    assert_eq!(
        printed.matches("= add.f ").count(),
        input.matches("= fadd ").count(),
        "{printed}"
    );
    // Values went to private memory and came back.
    assert!(printed.contains(" = ldp "), "no fill:\n{printed}");
    assert!(printed.contains("  stp "), "no spill:\n{printed}");
}
