//! `lathe disasm` and `lathe asm`: instruction words to text and back.
//!
//! `--gpu` names a GPU model; the model picks the instruction set and its
//! generation: Adreno models use the ir3 ISA, Mali models the Valhall
//! ISA. Each family is a [`Target`] variant with its own words-to-text and
//! text-to-words functions.

use std::error::Error;
use std::fmt::Write as _;
use std::io::{Read, Write as _};

use super::CliResult;
use clap::Args;
use lathe_adreno::ir3;
use lathe_mali::valhall;

#[derive(Args)]
pub struct DisasmArgs {
    /// GPU model, e.g. a630 (an unknown name lists the known ones).
    #[arg(long)]
    gpu: String,
    /// Instruction words as 64-bit hex (`0x` optional, `_` ignored); `-`
    /// reads whitespace-separated words from stdin.
    words: Vec<String>,
    /// Read words from this file (`-` for stdin).
    #[arg(long, conflicts_with = "words")]
    file: Option<String>,
    /// The input (file or stdin) is raw little-endian bytes, 8 per word.
    #[arg(long)]
    binary: bool,
}

#[derive(Args)]
pub struct AsmArgs {
    /// GPU model, e.g. a630 (an unknown name lists the known ones).
    #[arg(long)]
    gpu: String,
    /// Assembly source, one instruction per line (`-` or nothing: stdin).
    /// `;` starts a comment, as in Mesa's assembler; so does a `#` at the
    /// start of a line.
    input: Option<String>,
    /// Write raw little-endian bytes to this file instead of printing
    /// one `0x…` word per line.
    #[arg(short = 'o', long = "output")]
    output: Option<String>,
}

/// The instruction set behind a `--gpu` name.
enum Target {
    Adreno(ir3::GpuModel),
    Mali(valhall::MaliModel),
}

impl Target {
    fn from_name(name: &str) -> Result<Target, Box<dyn Error>> {
        if let Ok(model) = name.parse::<valhall::MaliModel>() {
            return Ok(Target::Mali(model));
        }
        match name.parse::<ir3::GpuModel>() {
            Ok(model) => Ok(Target::Adreno(model)),
            Err(e) => Err(format!(
                "{e}; Mali (Valhall) models: g57 g68 g77 g78 g310 g510 g610 g710"
            )
            .into()),
        }
    }

    /// Appends one line of text for `word` (its disassembly or a raw form).
    fn disassemble_line(&self, word: u64, out: &mut String) -> Result<(), Box<dyn Error>> {
        match self {
            Target::Adreno(model) => Ok(ir3::write_line(word, model.generation(), out)?),
            // An undecodable word prints as `raw 0x… ; reason`, which assembles back.
            Target::Mali(model) => {
                valhall::write_line(word, model.arch(), out);
                Ok(())
            }
        }
    }

    /// Assembles a whole source or reports its first bad line.
    fn assemble(&self, source: &str, file: &str) -> Result<Vec<u64>, Box<dyn Error>> {
        match self {
            Target::Adreno(model) => {
                ir3::assemble_source(source, model.generation()).map_err(|e| {
                    format!(
                        "{file}:{}:{}: {}\n{}",
                        e.line, e.column, e.message, e.excerpt
                    )
                    .into()
                })
            }
            Target::Mali(model) => valhall::assemble_source(source, model.arch()).map_err(|e| {
                format!(
                    "{file}:{}:{}: {}\n{}",
                    e.line, e.column, e.message, e.excerpt
                )
                .into()
            }),
        }
    }
}

fn read_input(path: &str) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    }
    Ok(bytes)
}

/// One hex word: `0x` optional, `_` separators ignored.
fn parse_word(token: &str) -> Result<u64, String> {
    let digits: String = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
        .unwrap_or(token)
        .chars()
        .filter(|c| *c != '_')
        .collect();
    if digits.is_empty() || digits.len() > 16 {
        return Err(format!("`{token}` is not a 64-bit hex word"));
    }
    u64::from_str_radix(&digits, 16).map_err(|_| format!("`{token}` is not a 64-bit hex word"))
}

fn parse_words(text: &str, origin: &str) -> Result<Vec<u64>, Box<dyn Error>> {
    let mut words = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for token in line.split_whitespace() {
            words.push(parse_word(token).map_err(|e| format!("{origin}:{}: {e}", n + 1))?);
        }
    }
    Ok(words)
}

pub fn disasm(args: DisasmArgs) -> CliResult {
    let target = Target::from_name(&args.gpu)?;
    let source = match (&args.file, args.words.as_slice()) {
        (Some(path), _) => Some(path.clone()),
        (None, [only]) if only == "-" => Some("-".to_string()),
        (None, []) => Some("-".to_string()),
        (None, _) => None,
    };
    let words = match source {
        Some(path) => {
            let bytes = read_input(&path)?;
            let origin = if path == "-" {
                "<stdin>"
            } else {
                path.as_str()
            };
            if args.binary {
                lathe_isa::source::words_from_le_bytes(&bytes)
                    .map_err(|e| format!("{origin}: {e}"))?
            } else {
                let text = String::from_utf8(bytes).map_err(|_| {
                    format!("{origin}: not UTF-8 text (use --binary for raw bytes)")
                })?;
                parse_words(&text, origin)?
            }
        }
        None => {
            if args.binary {
                return Err(
                    "--binary applies to --file or stdin input, not to words on the command line"
                        .into(),
                );
            }
            args.words
                .iter()
                .map(|t| parse_word(t))
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let mut out = String::with_capacity(words.len() * 48);
    for word in words {
        target.disassemble_line(word, &mut out)?;
        out.push('\n');
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

pub fn asm(args: AsmArgs) -> CliResult {
    let target = Target::from_name(&args.gpu)?;
    let path = args.input.as_deref().unwrap_or("-");
    let bytes = read_input(path)?;
    let origin = if path == "-" { "<stdin>" } else { path };
    let source = String::from_utf8(bytes).map_err(|_| format!("{origin}: not UTF-8 text"))?;
    // Assemble everything before writing anything: a bad line leaves no
    // partial output behind.
    let words = target.assemble(&source, origin)?;
    match &args.output {
        Some(out_path) => {
            std::fs::write(out_path, lathe_isa::source::words_to_le_bytes(&words))
                .map_err(|e| format!("cannot write `{out_path}`: {e}"))?;
        }
        None => {
            let mut out = String::with_capacity(words.len() * 19);
            for w in words {
                let _ = writeln!(out, "0x{w:016x}");
            }
            std::io::stdout().write_all(out.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_parse_with_or_without_prefix() {
        assert_eq!(parse_word("0x00000000_00000001"), Ok(1));
        assert_eq!(parse_word("ffffffffffffffff"), Ok(u64::MAX));
        assert!(parse_word("0x").is_err());
        assert!(parse_word("1_0000_0000_0000_0000").is_err());
        assert!(parse_word("xyz").is_err());
    }

    #[test]
    fn unknown_gpu_lists_models() {
        let Err(err) = Target::from_name("a123") else {
            panic!("a123 is not a model");
        };
        assert!(err.to_string().contains("a630"));
    }
}
