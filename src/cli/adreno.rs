//! `lathe adreno …`: Adreno driver helpers.

use super::CliResult;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum AdrenoCommand {}

pub fn run(command: AdrenoCommand) -> CliResult {
    match command {}
}
