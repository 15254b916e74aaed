//! The generator behind `isa!`, run directly: a broken spec expands to a
//! `compile_error!` carrying the positioned diagnostic (what a compile-fail
//! test would see), a good one to the generated items.

use std::path::PathBuf;

fn spec(parts: &[&str]) -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    p.push("tests");
    p.push("specs");
    for x in parts {
        p.push(x);
    }
    p
}

#[test]
fn broken_spec_expands_to_compile_error_with_position() {
    let path = spec(&["bad", "unknown_type.isa"]);
    let tokens = lathe_isa::codegen::expand(&path).to_string();
    assert!(tokens.contains("compile_error !"), "{tokens}");
    let file = path.display().to_string();
    assert!(
        tokens.contains(&format!("{file}:7:21: error: unknown type `word`")),
        "{tokens}"
    );
    // The caret excerpt travels with the message.
    assert!(tokens.contains("^^^^"), "{tokens}");
    // The broken file is still a build input, so fixing it rebuilds.
    assert!(
        tokens.contains(&format!("include_str ! (\"{file}\")")),
        "{tokens}"
    );
    assert!(!tokens.contains("enum Opcode"), "{tokens}");
}

#[test]
fn syntax_error_expands_to_compile_error() {
    let path = spec(&["bad", "syntax.isa"]);
    let tokens = lathe_isa::codegen::expand(&path).to_string();
    let file = path.display().to_string();
    assert!(
        tokens.contains(&format!("{file}:6:19: error: expected `:`, found `uint`")),
        "{tokens}"
    );
}

#[test]
fn missing_spec_expands_to_compile_error() {
    let path = spec(&["no_such_spec.isa"]);
    let tokens = lathe_isa::codegen::expand(&path).to_string();
    assert!(tokens.contains("compile_error !"), "{tokens}");
    assert!(tokens.contains("cannot read spec"), "{tokens}");
    assert!(!tokens.contains("include_str"), "{tokens}");
}

#[test]
fn good_spec_expands_to_items() {
    let tokens = lathe_isa::codegen::expand(&spec(&["features.isa"])).to_string();
    assert!(!tokens.contains("compile_error"), "{tokens}");
    for item in [
        "pub enum Opcode",
        "pub struct Instr",
        "pub enum Field",
        "pub enum Value",
        "pub mod enums",
        "pub enum Size",
    ] {
        assert!(tokens.contains(item), "{item}");
    }
}
