//! Pass manager and target-neutral passes.
