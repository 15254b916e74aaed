//! Bump-arena SSA IR.
