//! Subcommand implementations, one module per area.

pub mod adreno;
pub mod compile;
pub mod isa;
pub mod link;
pub mod mali;
pub mod opt;
pub mod sim;
pub mod stats;

/// The error every subcommand returns: printed once as `lathe: <message>`.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;
