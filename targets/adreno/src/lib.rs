//! Adreno (ir3) target.

pub mod fdm;
pub mod ir3;
