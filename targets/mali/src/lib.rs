//! Arm Mali (Valhall) target.

pub mod instancing;
pub mod valhall;
