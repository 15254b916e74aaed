//! `lathe sim`: assemble a Mesa-syntax program (ir3 or Valhall) and run it
//! on the simulator generated from the spec's semantics, over a 2×2 quad
//! of threads.
//!
//! `--set REG=VALUE` sets a register in every thread before the run (a
//! float `1.5`, an integer `42` / `-3`, or raw bits `0x3fc00000`; half
//! registers take the half-precision float or the low 16 bits);
//! `--dump REG,…` prints `REG = 0xBITS` (thread 0) afterwards. A timing
//! hazard prints `hazard: line N: …` on stderr and exits with status 3.

use std::error::Error;

use super::CliResult;
use clap::Args;
use lathe_adreno::ir3::{self, sim};

#[derive(Args)]
pub struct SimArgs {
    /// GPU model, e.g. a630, a730 or (Valhall) g610.
    #[arg(long)]
    gpu: String,
    /// `REG=VALUE` before the run (repeatable).
    #[arg(long = "set")]
    set: Vec<String>,
    /// Registers to print after the run, comma-separated (repeatable).
    #[arg(long = "dump", value_delimiter = ',')]
    dump: Vec<String>,
    /// Assembly source, one instruction per line (`-`: stdin).
    file: String,
}

/// Threads run in lockstep: a 2×2 quad.
const LANES: usize = 4;

/// Exit status of a run that stopped on a hazard.
pub const HAZARD_EXIT: i32 = 3;

/// Runs a program on a machine.
type Runner<'a> = &'a dyn Fn(&mut sim::Machine, &[u64]) -> Result<(), sim::SimError>;

/// One GPU family's pieces: its assembler, simulator and disassembler.
struct Gpu<'a> {
    assemble: &'a dyn Fn(&str) -> Result<Vec<u64>, lathe_isa::source::SourceError>,
    machine: sim::Machine,
    run: Runner<'a>,
    disassemble: &'a dyn Fn(u64) -> Option<String>,
}

pub fn run(args: SimArgs) -> CliResult {
    let source = if args.file == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read `{}`: {e}", args.file))?
    };
    if let Ok(model) = args.gpu.parse::<lathe_mali::valhall::MaliModel>() {
        use lathe_mali::valhall;
        let arch = model.arch();
        return simulate(
            &args,
            &source,
            Gpu {
                assemble: &|text| valhall::assemble_source(text, arch),
                machine: valhall::sim::machine(LANES),
                run: &|m, program| valhall::sim::run(m, program, arch),
                disassemble: &|word| valhall::disassemble(word, arch).ok(),
            },
        );
    }
    let generation = args.gpu.parse::<ir3::GpuModel>()?.generation();
    simulate(
        &args,
        &source,
        Gpu {
            assemble: &|text| ir3::assemble_source(text, generation),
            machine: sim::machine(LANES),
            run: &|m, program| sim::run(m, program, generation),
            disassemble: &|word| ir3::disassemble(word, generation).ok(),
        },
    )
}

/// Assembles `source`, applies `--set`, runs, reports a hazard (exit 3) or
/// prints `--dump`.
fn simulate(args: &SimArgs, source: &str, gpu: Gpu<'_>) -> CliResult {
    let origin = if args.file == "-" {
        "<stdin>"
    } else {
        &args.file
    };
    let program = (gpu.assemble)(source).map_err(|e| {
        format!(
            "{origin}:{}:{}: {}\n{}",
            e.line, e.column, e.message, e.excerpt
        )
    })?;
    // Source line of each instruction, for messages.
    let lines: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| !lathe_isa::source::strip_comment(l).trim().is_empty())
        .map(|(i, _)| i + 1)
        .collect();

    let mut m = gpu.machine;
    for s in &args.set {
        let (reg, value) = s
            .split_once('=')
            .ok_or_else(|| format!("--set `{s}`: expected REG=VALUE"))?;
        let (file, half, index) = register(&m, reg.trim())?;
        let bits = parse_value(value.trim(), half)
            .ok_or_else(|| format!("--set `{s}`: `{value}` is no float, integer or 0x bits"))?;
        for lane in 0..LANES {
            m.set(file, half, index, lane, bits);
        }
    }
    let dumps = args
        .dump
        .iter()
        .map(|r| register(&m, r.trim()))
        .collect::<Result<Vec<_>, _>>()?;

    match (gpu.run)(&mut m, &program) {
        Ok(()) => {}
        Err(sim::SimError::Hazard {
            consumer,
            producer,
            reg,
            wait,
        }) => {
            let line = |i: usize| lines.get(i).copied().unwrap_or(0);
            let text = |i: usize| {
                (gpu.disassemble)(program[i]).unwrap_or_else(|| format!("0x{:016x}", program[i]))
            };
            eprintln!(
                "hazard: line {}: `{}` (instruction {consumer}) reads {reg} {wait} `{}` (line {}, instruction {producer}) wrote it",
                line(consumer),
                text(consumer),
                text(producer),
                line(producer)
            );
            std::process::exit(HAZARD_EXIT);
        }
        Err(e) => return Err(e.into()),
    }
    let mut out = String::new();
    for (file, half, index) in dumps {
        let bits = m.get(file, half, index, 0).unwrap_or(0);
        out.push_str(&format!("{} = 0x{bits:08x}\n", m.name(file, half, index)));
    }
    print!("{out}");
    Ok(())
}

fn register(m: &sim::Machine, name: &str) -> Result<(usize, bool, u32), Box<dyn Error>> {
    m.parse_reg(name).ok_or_else(|| {
        let mut files: Vec<String> = m
            .files
            .iter()
            .flat_map(|f| std::iter::once(f.names).chain(f.half.map(|(h, _)| h)))
            .map(|n| n.prefix.to_string())
            .collect();
        files.dedup();
        format!(
            "unknown register `{name}` (register files: {})",
            files.join(", ")
        )
        .into()
    })
}

/// A `--set` value as register bits: `0x…` raw, an integer (two's
/// complement), or a float (binary16 for a half register).
fn parse_value(text: &str, half: bool) -> Option<u32> {
    if let Some(hex) = text.strip_prefix("0x") {
        return u32::from_str_radix(hex, 16).ok();
    }
    if let Ok(i) = text.parse::<i64>() {
        if i < i32::MIN as i64 || i > u32::MAX as i64 {
            return None;
        }
        return Some(if half { i as u32 & 0xffff } else { i as u32 });
    }
    let f = text.parse::<f64>().ok()?;
    Some(if half {
        lathe_isa::sim::F16::from_f64(f).0 as u32
    } else {
        (f as f32).to_bits()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_float_integer_or_bits() {
        assert_eq!(parse_value("1.5", false), Some(0x3fc0_0000));
        assert_eq!(parse_value("1.5", true), Some(0x3e00));
        assert_eq!(parse_value("42", false), Some(42));
        assert_eq!(parse_value("-3", false), Some(0xffff_fffd));
        assert_eq!(parse_value("-3", true), Some(0xfffd));
        assert_eq!(parse_value("0x3fc00000", false), Some(0x3fc0_0000));
        assert_eq!(parse_value("x", false), None);
    }
}
