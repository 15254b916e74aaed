//! Adreno (ir3) target.
