//! Adreno (ir3) target.

pub mod fdm;
