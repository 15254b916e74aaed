//! `lathe opt`: run IR passes over a shader in IR text form.

use super::CliResult;
use clap::Args;

#[derive(Args)]
pub struct OptArgs {}

pub fn run(_args: OptArgs) -> CliResult {
    Err("`lathe opt` is not built yet (the IR issue)".into())
}
