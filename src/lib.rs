//! Lathe: a data-driven shader compiler framework for mobile GPUs.
//!
//! This facade re-exports the workspace crates so that a driver can depend on
//! one crate. See the README for the crate map.

pub mod compile;

pub use lathe_adreno as adreno;
pub use lathe_frontend as frontend;
pub use lathe_ir as ir;
pub use lathe_isa as isa;
pub use lathe_mali as mali;
pub use lathe_passes as passes;
pub use lathe_variants as variants;
