//! The frontend's error type.

use thiserror::Error;

/// Why a shader could not be lowered.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The module uses something the lowering does not handle (yet). Always
    /// names the SPIR-V instruction or capability and its word offset.
    #[error("unsupported: {feature} (SPIR-V {what} at word offset {offset})")]
    Unsupported {
        feature: String,
        /// `op NAME` or `capability NAME`.
        what: String,
        offset: u32,
    },
    /// A WGSL construct the naga route cannot carry to SPIR-V.
    #[error("unsupported: {0} (WGSL, before SPIR-V)")]
    UnsupportedWgsl(String),
    /// The binary is not a SPIR-V module rspirv can read.
    #[error("invalid SPIR-V: {0}")]
    Parse(String),
    /// The module is well-formed SPIR-V but breaks a rule the lowering
    /// relies on (a missing id, a wrong operand kind).
    #[error("invalid SPIR-V: {message} (at word offset {offset})")]
    Invalid { message: String, offset: u32 },
    /// No entry point (or more than one) matches the request.
    #[error("{0}")]
    EntryPoint(String),
    /// A specialization override names no constant or has a bad value.
    #[error("specialization constant: {0}")]
    Spec(String),
    /// The WGSL source does not parse or validate, or naga cannot turn it into SPIR-V.
    #[error("WGSL: {0}")]
    Wgsl(String),
    /// The lowered IR failed the validator: a lowering bug, never the input's fault.
    #[error("internal error: lowered IR does not validate: {0}")]
    Internal(String),
}
