//! The `lathe` command-line tool.
//!
//! Each subcommand lives in its own module under `cli/`; this file only
//! parses the command line, dispatches, and turns errors into one message and
//! a non-zero exit status.

mod arena;
mod cli;

use clap::{Parser, Subcommand};
use cli::Deferred;
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
    Disasm(Deferred<cli::isa::DisasmArgs>),
    /// Assemble instruction text into words.
    Asm(Deferred<cli::isa::AsmArgs>),
    /// Run IR passes over a shader in IR text form and print the result.
    Opt(Deferred<cli::opt::OptArgs>),
    /// Run machine code on the simulator generated from the spec's
    /// semantics (hazards exit with status 3).
    Sim(Deferred<cli::sim::SimArgs>),
    /// Lower a SPIR-V or WGSL shader to IR (or print its interface).
    Compile(Deferred<cli::compile::CompileArgs>),
    /// Compile every shader under the given paths and report statistics
    /// per entry point, with a summary.
    Stats(Deferred<cli::stats::StatsArgs>),
    /// Link a vertex shader with a fragment shader (varying optimisation).
    Link(Deferred<cli::link::LinkArgs>),
    /// Mali driver helpers.
    Mali {
        #[command(subcommand)]
        command: Deferred<cli::mali::MaliCommand>,
    },
    /// Adreno driver helpers.
    Adreno {
        #[command(subcommand)]
        command: Deferred<cli::adreno::AdrenoCommand>,
    },
}

/// A process compiles one shader and exits: see `arena.rs`.
#[global_allocator]
static ALLOCATOR: arena::Arena = arena::Arena::new(16 << 20);

fn main() -> ExitCode {
    let cli = Cli::parse();
    ALLOCATOR.enable();
    let result = match cli.command {
        Command::Disasm(Deferred(args)) => cli::isa::disasm(args),
        Command::Asm(Deferred(args)) => cli::isa::asm(args),
        Command::Opt(Deferred(args)) => cli::opt::run(args),
        Command::Sim(Deferred(args)) => cli::sim::run(args),
        Command::Compile(Deferred(args)) => cli::compile::run(args),
        Command::Stats(Deferred(args)) => cli::stats::run(args),
        Command::Link(Deferred(args)) => cli::link::run(args),
        Command::Mali { command } => cli::mali::run(command.0),
        Command::Adreno { command } => cli::adreno::run(command.0),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("lathe: {err}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own consistency checks over the whole command tree, the
    /// deferred subcommands' arguments included.
    #[test]
    fn command_tree_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
