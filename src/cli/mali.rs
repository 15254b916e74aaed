//! `lathe mali …`: Mali driver helpers.

use super::CliResult;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum MaliCommand {}

pub fn run(command: MaliCommand) -> CliResult {
    match command {}
}
