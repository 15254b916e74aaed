//! Arm Mali (Valhall) target.

pub mod instancing;
