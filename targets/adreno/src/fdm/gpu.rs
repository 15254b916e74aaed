//! GPU models and the FDM features each one has.
//!
//! | model | generation | bin merging | LRZ offset registers |
//! |---|---|---|---|
//! | a618 a630 a640 a650 a660 a690 | a6xx | no | no |
//! | a730 | a7xx | yes | no |
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

/// A GPU model Lathe knows the FDM behaviour of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuModel {
    A618,
    A630,
    A640,
    A650,
    A660,
    A690,
    A730,
    A740,
    A750,
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
/// viewport path both top out at 16 (one hardware viewport per view).
pub const MAX_VIEWS: u32 = 16;

/// Number of visibility-stream (VSC) pipes on a6xx and a7xx; every bin
/// belongs to exactly one pipe.
pub const MAX_VSC_PIPES: u32 = 32;

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
    /// Every known model, in the order error messages list them.
    pub const ALL: [GpuModel; 9] = [
        GpuModel::A618,
        GpuModel::A630,
        GpuModel::A640,
        GpuModel::A650,
        GpuModel::A660,
        GpuModel::A690,
        GpuModel::A730,
        GpuModel::A740,
        GpuModel::A750,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            GpuModel::A618 => "a618",
            GpuModel::A630 => "a630",
            GpuModel::A640 => "a640",
            GpuModel::A650 => "a650",
            GpuModel::A660 => "a660",
            GpuModel::A690 => "a690",
            GpuModel::A730 => "a730",
            GpuModel::A740 => "a740",
            GpuModel::A750 => "a750",
        }
    }

    /// Looks a model up by name (`"a740"`, case-insensitive).
    pub fn from_name(name: &str) -> Result<GpuModel, FdmError> {
        GpuModel::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| FdmError::UnknownGpu {
                name: name.to_string(),
                valid: GpuModel::ALL.map(GpuModel::name).join(", "),
            })
    }

    pub const fn generation(self) -> Generation {
        match self {
            GpuModel::A618
            | GpuModel::A630
            | GpuModel::A640
            | GpuModel::A650
            | GpuModel::A660
            | GpuModel::A690 => Generation::A6xx,
            GpuModel::A730 | GpuModel::A740 | GpuModel::A750 => Generation::A7xx,
        }
    }

    pub const fn features(self) -> FdmFeatures {
        FdmFeatures {
            bin_merging: matches!(self.generation(), Generation::A7xx),
            lrz_offset_registers: matches!(self, GpuModel::A740 | GpuModel::A750),
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
        for model in GpuModel::ALL {
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
        assert!(GpuModel::A730.features().bin_merging);
        assert!(!GpuModel::A730.features().lrz_offset_registers);
        assert!(GpuModel::A740.features().lrz_offset_registers);
        assert!(GpuModel::A750.features().lrz_offset_registers);
    }
}
