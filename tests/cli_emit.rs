//! `lathe opt --emit`: the backend pipeline through `legalise` prints the
//! emitted Valhall program, its words and Mesa's statistics line.

use std::process::{Command, Output};

fn lathe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(args)
        .output()
        .expect("lathe runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/targets/mali/examples/valhall-machine.lir"
);

#[test]
fn emits_the_valhall_example_as_assembly_words_and_statistics() {
    let run = |passes: &str, form: &str| {
        let out = lathe(&[
            "opt", "--passes", passes, "--target", "g610", "--emit", form, EXAMPLE,
        ]);
        assert!(out.status.success(), "{form}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let asm = run("ra,legalise", "asm");
    let bin = run("ra,legalise", "bin");
    let stats = run("ra,legalise", "stats");
    // Legalised by `--emit` when the pipeline stops at `ra`.
    assert_eq!(run("ra", "asm"), asm);
    let (listing, comment): (Vec<&str>, Vec<&str>) = asm.lines().partition(|l| !l.starts_with(';'));
    assert_eq!(listing.len(), bin.lines().count());
    assert!(listing.last().unwrap().contains(".end"), "{asm}");
    assert_eq!(comment, [format!("; {}", stats.trim_end())]);
    // `lathe asm` reads the listing back to the same words.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(["asm", "--gpu", "g610", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(listing.join("\n").as_bytes())
        .unwrap();
    let back = child.wait_with_output().unwrap();
    assert!(back.status.success(), "{}", text(&back.stderr));
    assert_eq!(text(&back.stdout), bin);

    assert!(
        stats.starts_with(&format!("fragment shader: {} instrs, ", listing.len())),
        "{stats}"
    );
    assert!(
        stats
            .trim_end()
            .ends_with("2 threads, 0 loops, 0:0 spills:fills"),
        "{stats}"
    );
}
