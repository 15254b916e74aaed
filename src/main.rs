//! The `lathe` command-line tool.
//!
//! Each subcommand lives in its own module under `cli/`; this file only
//! parses the command line, dispatches, and turns errors into one message and
//! a non-zero exit status.

mod cli;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lathe",
    version,
    about = "Shader compiler toolkit for Adreno and Mali GPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Disassemble instruction words into Mesa-compatible text.
    Disasm(cli::isa::DisasmArgs),
    /// Assemble instruction text into words.
    Asm(cli::isa::AsmArgs),
    /// Run IR passes over a shader in IR text form and print the result.
    Opt(cli::opt::OptArgs),
    /// Run machine code on the simulator generated from the spec's
    /// semantics (hazards exit with status 3).
    Sim(cli::sim::SimArgs),
    /// Lower a SPIR-V or WGSL shader to IR (or print its interface).
    Compile(cli::compile::CompileArgs),
    /// Compile every shader under the given paths and report statistics
    /// per entry point, with a summary.
    Stats(cli::stats::StatsArgs),
    /// Link a vertex shader with a fragment shader (varying optimisation).
    Link(cli::link::LinkArgs),
    /// Mali driver helpers.
    Mali {
        #[command(subcommand)]
        command: cli::mali::MaliCommand,
    },
    /// Adreno driver helpers.
    Adreno {
        #[command(subcommand)]
        command: cli::adreno::AdrenoCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Disasm(args) => cli::isa::disasm(args),
        Command::Asm(args) => cli::isa::asm(args),
        Command::Opt(args) => cli::opt::run(args),
        Command::Sim(args) => cli::sim::run(args),
        Command::Compile(args) => cli::compile::run(args),
        Command::Stats(args) => cli::stats::run(args),
        Command::Link(args) => cli::link::run(args),
        Command::Mali { command } => cli::mali::run(command),
        Command::Adreno { command } => cli::adreno::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("lathe: {err}");
            ExitCode::FAILURE
        }
    }
}
