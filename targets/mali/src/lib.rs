//! Arm Mali (Valhall) target.
