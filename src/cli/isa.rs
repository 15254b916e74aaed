//! `lathe disasm` and `lathe asm`: instruction words to text and back.

use super::CliResult;
use clap::Args;

#[derive(Args)]
pub struct DisasmArgs {}

#[derive(Args)]
pub struct AsmArgs {}

pub fn disasm(_args: DisasmArgs) -> CliResult {
    Err("`lathe disasm` is not built yet (the .isa language issue)".into())
}

pub fn asm(_args: AsmArgs) -> CliResult {
    Err("`lathe asm` is not built yet (the .isa language issue)".into())
}
