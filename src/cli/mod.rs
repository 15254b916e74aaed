//! Subcommand implementations, one module per area.

pub mod adreno;
pub mod mali;

/// The error every subcommand returns: printed once as `lathe: <message>`.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;
