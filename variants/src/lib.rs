//! Shader variants and the three-level routine cache.
