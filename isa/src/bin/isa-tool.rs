//! `isa-tool`: run a spec without generated code.
//!
//! ```text
//! isa-tool disasm SPEC GEN WORD…      # words in hex, 0x optional
//! isa-tool asm SPEC GEN TEXT…         # prints 16 hex digits per text
//! isa-tool tsv SPEC FILE              # columns isa_gpu_id, hex, expected_disasm
//! ```

use std::process::ExitCode;

use lathe_isa::Isa;

fn parse_gen(isa: &Isa, s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .or_else(|| isa.generation(s))
        .ok_or_else(|| format!("`{s}` is not a generation number or name"))
}

fn parse_word(s: &str) -> Result<u64, String> {
    let h: String = s
        .trim_start_matches("0x")
        .chars()
        .filter(|c| *c != '_')
        .collect();
    u64::from_str_radix(&h, 16).map_err(|_| format!("`{s}` is not a hex word"))
}

fn run(args: &[String]) -> Result<bool, String> {
    let usage = "usage: isa-tool disasm SPEC GEN WORD… | asm SPEC GEN TEXT… | tsv SPEC FILE";
    let (cmd, spec) = match args {
        [c, s, ..] => (c.as_str(), s),
        _ => return Err(usage.into()),
    };
    let isa = lathe_isa::load(spec).map_err(|d| d.to_string())?;
    let mut ok = true;
    match cmd {
        "disasm" | "asm" => {
            let generation = parse_gen(&isa, args.get(2).ok_or(usage)?)?;
            for a in &args[3..] {
                if cmd == "disasm" {
                    let w = parse_word(a)?;
                    match isa.disassemble(w, generation) {
                        Ok(t) => println!("{t}"),
                        Err(e) => {
                            println!("raw 0x{w:016x}\t; {e}");
                            ok = false;
                        }
                    }
                } else {
                    match isa.assemble(a, generation) {
                        Ok(w) => println!("{w:016x}"),
                        Err(e) => {
                            eprintln!("{e}");
                            if let Some(col) = e.column() {
                                let lead: String = a.chars().take(col - 1).map(|_| ' ').collect();
                                eprintln!("  {a}\n  {lead}^");
                            }
                            ok = false;
                        }
                    }
                }
            }
        }
        "tsv" => {
            let file = args.get(2).ok_or(usage)?;
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
            let col = |n: &str| {
                header
                    .iter()
                    .position(|h| *h == n)
                    .ok_or(format!("{file}: no `{n}` column"))
            };
            let (gc, hc, tc) = (col("isa_gpu_id")?, col("hex")?, col("expected_disasm")?);
            let (mut pass, mut fail) = (0, 0);
            for (i, line) in lines.enumerate() {
                let cols: Vec<&str> = line.split('\t').collect();
                let (Some(g), Some(h), Some(t)) = (cols.get(gc), cols.get(hc), cols.get(tc)) else {
                    continue;
                };
                let generation = parse_gen(&isa, g)?;
                let w = parse_word(h)?;
                let d = isa.disassemble(w, generation);
                let a = isa.assemble(t, generation);
                let dis_ok =
                    d.as_deref().ok() == Some(*t) || (d.is_err() && *t == format!("raw 0x{w:X}"));
                let asm_ok = a.as_ref().ok() == Some(&w);
                if dis_ok && asm_ok {
                    pass += 1;
                } else {
                    fail += 1;
                    println!("row {}: {h} @{g}: expected `{t}`", i + 2);
                    if !dis_ok {
                        println!("  disasm: {d:?}");
                    }
                    if !asm_ok {
                        match &a {
                            Ok(x) => println!("  asm:    {x:016x}"),
                            Err(e) => println!("  asm:    {e}"),
                        }
                    }
                }
            }
            println!("{pass} passed, {fail} failed");
            ok = fail == 0;
        }
        _ => return Err(usage.into()),
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("isa-tool: {e}");
            ExitCode::FAILURE
        }
    }
}
