//! `lathe sim` end to end: registers set and dumped, hazards (exit 3),
//! bad input (exit 1).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn lathe(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lathe runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    // A run that fails before reading its input closes the pipe early.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().expect("lathe finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn runs_the_bundled_example_and_dumps_registers() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ir3-sim.asm");
    let out = lathe(
        &[
            "sim",
            "--gpu",
            "a630",
            "--set",
            "r1.x=1.5",
            "--set",
            "r1.y=2.25",
            "--dump",
            "r0.x,r0.y",
            "--dump",
            "hr4.x",
            path,
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // 1.5 - 2.25 = -0.75 (0xbf400000), 1.5 * 1.5 = 2.25 (0x40100000),
    // -0.75 as f16 is 0xba00.
    assert_eq!(
        text(&out.stdout),
        "r0.x = 0xbf400000\nr0.y = 0x40100000\nhr4.x = 0x0000ba00\n"
    );
}

#[test]
fn values_are_floats_integers_or_bits_on_a7xx() {
    let out = lathe(
        &[
            "sim",
            "--gpu",
            "a730",
            "--set",
            "r1.x=42",
            "--set",
            "r1.y=-3",
            "--set",
            "c0.x=0x10",
            "--dump",
            "r0.x,r0.y",
            "-",
        ],
        "add.s r0.x, r1.x, r1.y\n(nop3) add.u r0.y, r1.x, c0.x\nend\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "r0.x = 0x00000027\nr0.y = 0x0000003a\n");
}

#[test]
fn a_hazard_names_both_instructions_and_exits_3() {
    let out = lathe(
        &["sim", "--gpu", "a630", "--dump", "r2.x", "-"],
        "; comment line\nrcp r0.x, r1.x\n\nadd.f r2.x, r0.x, r1.x\n",
    );
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("hazard: line 4: `add.f r2.x, r0.x, r1.x` (instruction 1) reads r0.x"),
        "{err}"
    );
    assert!(
        err.contains("`rcp r0.x, r1.x` (line 2, instruction 0)"),
        "{err}"
    );
    assert!(text(&out.stdout).is_empty());
}

#[test]
fn errors_exit_1_with_one_message() {
    let bad_reg = lathe(&["sim", "--gpu", "a630", "--dump", "q9", "-"], "end\n");
    assert_eq!(bad_reg.status.code(), Some(1));
    assert!(
        text(&bad_reg.stderr).contains("unknown register `q9`"),
        "{}",
        text(&bad_reg.stderr)
    );

    let bad_asm = lathe(&["sim", "--gpu", "a630", "-"], "frob r0.x\n");
    assert_eq!(bad_asm.status.code(), Some(1));
    assert!(
        text(&bad_asm.stderr).starts_with("lathe: <stdin>:1:1:"),
        "{}",
        text(&bad_asm.stderr)
    );

    // getlod (the LOD a sample would use) has no semantics yet.
    let unsupported = lathe(
        &["sim", "--gpu", "a630", "-"],
        "getlod (s32)(x)r0.x, r0.x, s#0, t#0\n",
    );
    assert_eq!(
        unsupported.status.code(),
        Some(1),
        "{}",
        text(&unsupported.stderr)
    );
    assert!(
        text(&unsupported.stderr).contains("unsupported:"),
        "{}",
        text(&unsupported.stderr)
    );

    // Instructions no public source describes stop the run as such.
    for (gpu, line) in [("a630", "bkt #1\n"), ("g610", "FPCLASS.f32 r0, r1\n")] {
        let out = lathe(&["sim", "--gpu", gpu, "-"], line);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("undocumented:"),
            "{line}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn runs_valhall_programs_with_uniforms_and_table_constants() {
    let program = "# r0 = r1 + u4; r2 = r0 * 2.0 (table constant 0x40000000)\n\
                   FADD.f32 r0, r1, u4\n\
                   FMA.f32 r2, r0, 0x40000000, 0x0\n\
                   IADD.v2u16 r3, r5, r5.h11\n\
                   NOP.end\n";
    for gpu in ["g610", "g57", "g710"] {
        let out = lathe(
            &[
                "sim",
                "--gpu",
                gpu,
                "--set",
                "r1=1.5",
                "--set",
                "u4=2.25",
                "--set",
                "r5=0x00020001",
                "--dump",
                "r0,r2,r3",
                "-",
            ],
            program,
        );
        assert!(out.status.success(), "{gpu}: {}", text(&out.stderr));
        // 1.5 + 2.25 = 3.75 (0x40700000), 7.5 (0x40f00000); lanes 1+2, 2+2.
        assert_eq!(
            text(&out.stdout),
            "r0 = 0x40700000\nr2 = 0x40f00000\nr3 = 0x00040003\n"
        );
    }
}

#[test]
fn a_valhall_message_result_read_without_its_slot_wait_is_a_hazard() {
    // The load signals slot 0; the add must wait on it (`.wait0`).
    let waited = "LOAD.i32.slot0 @r0, r2, offset:0\n\
                  IADD_IMM.i32.wait0 r1, r0, #0x1\n\
                  NOP.end\n";
    let out = lathe(&["sim", "--gpu", "g610", "--dump", "r1", "-"], waited);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Memory nobody wrote reads as zero.
    assert_eq!(text(&out.stdout), "r1 = 0x00000001\n");

    for (consumer, why) in [
        ("IADD_IMM.i32 r1, r0, #0x1", "no wait"),
        ("IADD_IMM.i32.wait1 r1, r0, #0x1", "the wrong slot"),
    ] {
        let program = format!("LOAD.i32.slot0 @r0, r2, offset:0\n{consumer}\nNOP.end\n");
        let out = lathe(&["sim", "--gpu", "g610", "-"], &program);
        assert_eq!(out.status.code(), Some(3), "{why}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.starts_with("hazard: line 2: `")
                && err.contains("reads r0")
                && err.contains("LOAD.i32.slot0 @r0, r2, offset:0` (line 1"),
            "{why}: {err}"
        );
    }
}
