//! Errors of the FDM module.

use thiserror::Error;

/// Everything that can go wrong planning FDM bins.
#[derive(Debug, Error)]
pub enum FdmError {
    /// The scene names a GPU model Lathe does not know.
    #[error("gpu: unknown model `{name}`; valid models are {valid}")]
    UnknownGpu { name: String, valid: String },

    /// A scene field holds a value the hardware or Vulkan cannot use.
    #[error("{field}: {reason}")]
    InvalidScene { field: String, reason: String },

    /// The scene text is not valid JSON or does not match the scene schema.
    /// `path` is the field being read when it failed (`.` for the root).
    #[error("scene JSON: {path}: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },

    /// The plan could not be rendered as JSON.
    #[error("could not write the plan as JSON: {0}")]
    Output(#[source] serde_json::Error),

    /// An invariant of the planner broke; a bug in Lathe, not in the scene.
    #[error("internal error: {0}")]
    Internal(&'static str),

    /// A bin start is not a multiple of its fragment area, so the per-bin
    /// offset would not be an integer. The planner chooses fragment areas so
    /// this cannot happen; seeing it means a bug in Lathe, not in the scene.
    #[error(
        "internal error: bin start ({start_x}, {start_y}) is not a multiple of fragment area {area_x}x{area_y}"
    )]
    UnalignedBinStart {
        start_x: i64,
        start_y: i64,
        area_x: u32,
        area_y: u32,
    },
}

impl FdmError {
    /// Shorthand for [`FdmError::InvalidScene`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FdmError::InvalidScene {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
