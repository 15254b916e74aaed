//! Development tasks: `cargo xtask gen [--check]`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let check = args.iter().any(|a| a == "--check");
            // No spec-derived artifacts exist yet; nothing can be stale.
            let _ = check;
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: cargo xtask gen [--check]");
            ExitCode::from(2)
        }
    }
}
