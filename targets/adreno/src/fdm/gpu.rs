//! GPU models and the FDM features each one has.
//!
//! | model | generation | bin merging | LRZ offset registers |
//! |---|---|---|---|
//! | a610 a612 a615 a616 a618 a619 a620 a630 a635 a640 a642 a643 a644 a650 a660 a663 a680 a690 | a6xx | no | no |
//! | a725 a730 | a7xx | yes | no |
//! | a740 a750 | a7xx | yes | yes |
//!
//! Bin merging needs the visibility-stream merge bitmask that every a7xx
//! has; the LRZ offset/scale registers arrived with a740, so a730 (the first
//! a7xx) still disables LRZ in scaled bins like a6xx does.

use super::error::FdmError;
use std::fmt;

/// Adreno GPU generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    A6xx,
    A7xx,
}

impl Generation {
    pub const fn name(self) -> &'static str {
        match self {
            Generation::A6xx => "a6xx",
            Generation::A7xx => "a7xx",
        }
    }
}

/// Declares [`GpuModel`] from one line per model: its name, generation and
/// whether it has the a740-class LRZ offset registers.
macro_rules! gpu_models {
    ($($model:ident => ($name:literal, $generation:ident, $lrz_offset:literal),)*) => {
        /// A GPU model Lathe knows the FDM behaviour of.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum GpuModel {
            $($model,)*
        }

        impl GpuModel {
            /// Every known model, in the order error messages list them.
            pub const ALL: &[GpuModel] = &[$(GpuModel::$model,)*];

            pub const fn name(self) -> &'static str {
                match self {
                    $(GpuModel::$model => $name,)*
                }
            }

            pub const fn generation(self) -> Generation {
                match self {
                    $(GpuModel::$model => Generation::$generation,)*
                }
            }

            const fn has_lrz_offset_registers(self) -> bool {
                match self {
                    $(GpuModel::$model => $lrz_offset,)*
                }
            }
        }
    };
}

gpu_models! {
    A610 => ("a610", A6xx, false),
    A612 => ("a612", A6xx, false),
    A615 => ("a615", A6xx, false),
    A616 => ("a616", A6xx, false),
    A618 => ("a618", A6xx, false),
    A619 => ("a619", A6xx, false),
    A620 => ("a620", A6xx, false),
    A630 => ("a630", A6xx, false),
    A640 => ("a640", A6xx, false),
    A642 => ("a642", A6xx, false),
    A643 => ("a643", A6xx, false),
    A644 => ("a644", A6xx, false),
    A650 => ("a650", A6xx, false),
    A660 => ("a660", A6xx, false),
    A663 => ("a663", A6xx, false),
    A680 => ("a680", A6xx, false),
    A690 => ("a690", A6xx, false),
    A725 => ("a725", A7xx, false),
    A730 => ("a730", A7xx, false),
    A740 => ("a740", A7xx, true),
    A750 => ("a750", A7xx, true),
}

/// What the FDM code may use on a given GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdmFeatures {
    /// Adjacent bins with equal scales may share one visibility stream.
    pub bin_merging: bool,
    /// Per-layer LRZ offset `o'` and scale registers ("a740-class").
    pub lrz_offset_registers: bool,
}

/// Most views one render pass may have: Adreno multiview and the per-view
/// viewport path both top out at 16 (one hardware viewport per view, and
/// `maxMultiviewViewCount` is 16 on a6xx and a7xx).
pub const MAX_VIEWS: u32 = 16;

/// Alignment the hardware needs for the LRZ offset register `o'`, in pixels.
pub const LRZ_OFFSET_ALIGN: i64 = 8;

/// Bin (tile) widths must be multiples of this many pixels.
pub const TILE_ALIGN_WIDTH: u32 = 32;
/// Bin (tile) heights must be multiples of this many pixels.
pub const TILE_ALIGN_HEIGHT: u32 = 16;

/// Largest framebuffer side Lathe accepts (the Vulkan framebuffer limit
/// Adreno drivers report).
pub const MAX_FRAMEBUFFER_SIZE: u32 = 16384;

impl GpuModel {
    /// Looks a model up by name (`"a740"`, case-insensitive).
    pub fn from_name(name: &str) -> Result<GpuModel, FdmError> {
        GpuModel::ALL
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| FdmError::UnknownGpu {
                name: name.to_string(),
                valid: GpuModel::ALL
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub const fn features(self) -> FdmFeatures {
        FdmFeatures {
            bin_merging: matches!(self.generation(), Generation::A7xx),
            lrz_offset_registers: self.has_lrz_offset_registers(),
        }
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &model in GpuModel::ALL {
            assert_eq!(GpuModel::from_name(model.name()).unwrap(), model);
        }
        assert_eq!(GpuModel::from_name("A740").unwrap(), GpuModel::A740);
    }

    #[test]
    fn unknown_model_lists_valid_ones() {
        let err = GpuModel::from_name("a999").unwrap_err().to_string();
        assert!(err.contains("a999"), "{err}");
        assert!(err.contains("a618") && err.contains("a750"), "{err}");
    }

    #[test]
    fn feature_mapping() {
        assert!(!GpuModel::A690.features().bin_merging);
        assert_eq!(GpuModel::A725.generation(), Generation::A7xx);
        assert!(!GpuModel::A725.features().lrz_offset_registers);
        assert_eq!(GpuModel::A619.generation(), Generation::A6xx);
        assert!(GpuModel::A730.features().bin_merging);
        assert!(!GpuModel::A730.features().lrz_offset_registers);
        assert!(GpuModel::A740.features().lrz_offset_registers);
        assert!(GpuModel::A750.features().lrz_offset_registers);
    }
}
