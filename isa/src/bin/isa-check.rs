//! `isa-check SPEC…`: loads and checks each spec, printing diagnostics
//! (exit 1) or a one-line summary per spec.

use std::process::ExitCode;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: isa-check SPEC.isa…");
        return ExitCode::from(2);
    }
    let mut ok = true;
    for p in &paths {
        match lathe_isa::load(p) {
            Ok(isa) => {
                let leaves = isa.instructions().count();
                let trees = isa.decoders.len();
                println!(
                    "{p}: ok: isa `{}`, {}-bit words, {leaves} instructions, {} encodings in {trees} trees, {} enums, {} files",
                    isa.name,
                    isa.width,
                    isa.encodings.len(),
                    isa.enums.len(),
                    isa.sources.files.len()
                );
            }
            Err(d) => {
                eprintln!("{d}");
                eprintln!("{p}: {} error(s)", d.0.len());
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
