//! LRZ (low-resolution Z) per bin.
//!
//! The LRZ buffer is written in the binning pass, where coordinates are
//! framebuffer space shifted by the view's bin shift `b_o`. A bin can keep
//! LRZ only if the space it rasterizes in lines up with that buffer.
//!
//! * GPUs without the LRZ offset registers (a6xx, a730) apply LRZ directly
//!   to rendering-space fragments, so LRZ is disabled in scaled bins (a
//!   fragment area other than 1×1 in any view). An unscaled bin keeps LRZ
//!   when its rendering space is the binning space, i.e. `o' = b_cs − (b_s
//!   + b_o)` is zero: always true without FDM offset, and true inside a
//!   shifted grid (`o = b_o`), but not in its first row/column, which start
//!   at 0 instead of `−b_o` while the LRZ buffer was written shifted.
//! * a740-class GPUs rasterize in "LRZ space" and add a per-layer offset
//!   `o' = b_cs − (b_s + b_o)·s` afterwards. LRZ stays on when `o'` is, for
//!   every view, an integer, not negative and a multiple of 8 pixels; the
//!   viewport and scissor are then patched into LRZ space (offset `o − o'`).

use super::gpu::{FdmFeatures, LRZ_OFFSET_ALIGN};
use super::space::{FragArea, Framebuffer, Point, Rendering, Vec2};
use std::fmt;

/// The per-view facts of one bin that decide LRZ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LrzView {
    pub area: FragArea,
    /// `b_s`: the bin's start in framebuffer space.
    pub bin_start: Point<Framebuffer>,
    /// `b_cs`: the common bin start in rendering space.
    pub common_start: Point<Rendering>,
    /// `b_o`: this view's bin shift (zero without FDM offset).
    pub bin_offset: Vec2,
}

/// Why LRZ is off for a bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LrzDisabled {
    /// The scene did not ask for LRZ.
    NotRequested,
    /// A view is scaled and the GPU has no LRZ offset registers.
    ScaledWithoutOffsetRegisters { view: usize },
    /// A view is unscaled but its rendering space is shifted against the
    /// binning pass (`o' ≠ 0`: first row/column of a shifted grid) and the
    /// GPU has no LRZ offset registers to undo that.
    ShiftedWithoutOffsetRegisters { view: usize, offset: Vec2 },
    /// `o'` would not be an integer (cannot happen for bins built by the
    /// planner, kept so the check is total).
    OffsetNotInteger { view: usize },
    /// `o'` is negative (first row/column with a bin shift).
    NegativeOffset { view: usize, offset: Vec2 },
    /// `o'` is not a multiple of the register's 8-pixel alignment.
    UnalignedOffset { view: usize, offset: Vec2 },
}

impl fmt::Display for LrzDisabled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LrzDisabled::NotRequested => write!(f, "LRZ not requested"),
            LrzDisabled::ScaledWithoutOffsetRegisters { view } => {
                write!(
                    f,
                    "view {view} is scaled and this GPU has no LRZ offset registers"
                )
            }
            LrzDisabled::ShiftedWithoutOffsetRegisters { view, offset } => write!(
                f,
                "view {view}: rendering space is {}, {} pixels off the binning pass and this GPU has no LRZ offset registers",
                offset.x, offset.y
            ),
            LrzDisabled::OffsetNotInteger { view } => {
                write!(f, "view {view}: LRZ offset is not a whole number of pixels")
            }
            LrzDisabled::NegativeOffset { view, offset } => {
                write!(
                    f,
                    "view {view}: LRZ offset [{}, {}] is negative",
                    offset.x, offset.y
                )
            }
            LrzDisabled::UnalignedOffset { view, offset } => write!(
                f,
                "view {view}: LRZ offset [{}, {}] is not a multiple of {LRZ_OFFSET_ALIGN}",
                offset.x, offset.y
            ),
        }
    }
}

/// LRZ state of one bin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LrzDecision {
    Disabled(LrzDisabled),
    /// LRZ on. `offsets` holds `o'` per view on GPUs with the offset
    /// registers, and is `None` where LRZ space is rendering space (there
    /// `o'` is zero in every view).
    Enabled {
        offsets: Option<Vec<Vec2>>,
    },
}

/// `o' = b_cs − (b_s + b_o)·s`, exactly; `None` when not an integer.
pub fn lrz_offset(view: &LrzView) -> Option<Vec2> {
    let (ax, ay) = (i64::from(view.area.x), i64::from(view.area.y));
    let sx = view.bin_start.x + view.bin_offset.x;
    let sy = view.bin_start.y + view.bin_offset.y;
    (sx % ax == 0 && sy % ay == 0)
        .then(|| Vec2::new(view.common_start.x - sx / ax, view.common_start.y - sy / ay))
}

/// Decides LRZ for one bin from all of its views.
pub fn decide_lrz(features: FdmFeatures, requested: bool, views: &[LrzView]) -> LrzDecision {
    if !requested {
        return LrzDecision::Disabled(LrzDisabled::NotRequested);
    }
    if !features.lrz_offset_registers {
        for (i, v) in views.iter().enumerate() {
            if v.area.is_scaled() {
                return LrzDecision::Disabled(LrzDisabled::ScaledWithoutOffsetRegisters {
                    view: i,
                });
            }
            // Unscaled, so `b_s + b_o` is always a whole number of fragments.
            let o = lrz_offset(v).unwrap_or(Vec2::ZERO);
            if o != Vec2::ZERO {
                return LrzDecision::Disabled(LrzDisabled::ShiftedWithoutOffsetRegisters {
                    view: i,
                    offset: o,
                });
            }
        }
        return LrzDecision::Enabled { offsets: None };
    }
    let mut offsets = Vec::with_capacity(views.len());
    for (i, v) in views.iter().enumerate() {
        let Some(o) = lrz_offset(v) else {
            return LrzDecision::Disabled(LrzDisabled::OffsetNotInteger { view: i });
        };
        if o.x < 0 || o.y < 0 {
            return LrzDecision::Disabled(LrzDisabled::NegativeOffset { view: i, offset: o });
        }
        if o.x % LRZ_OFFSET_ALIGN != 0 || o.y % LRZ_OFFSET_ALIGN != 0 {
            return LrzDecision::Disabled(LrzDisabled::UnalignedOffset { view: i, offset: o });
        }
        offsets.push(o);
    }
    LrzDecision::Enabled {
        offsets: Some(offsets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A740: FdmFeatures = FdmFeatures {
        bin_merging: true,
        lrz_offset_registers: true,
    };
    const A650: FdmFeatures = FdmFeatures {
        bin_merging: false,
        lrz_offset_registers: false,
    };

    fn view(area: u32, start: (i64, i64), common: (i64, i64), shift: (i64, i64)) -> LrzView {
        LrzView {
            area: FragArea::new(area, area),
            bin_start: Point::new(start.0, start.1),
            common_start: Point::new(common.0, common.1),
            bin_offset: Vec2::new(shift.0, shift.1),
        }
    }

    #[test]
    fn a740_interior_bin_without_shift() {
        // b_cs = b_s = (64, 32), area 2: o' = (64 − 32, 32 − 16) = (32, 16).
        let d = decide_lrz(A740, true, &[view(2, (64, 32), (64, 32), (0, 0))]);
        assert_eq!(
            d,
            LrzDecision::Enabled {
                offsets: Some(vec![Vec2::new(32, 16)])
            }
        );
    }

    #[test]
    fn a740_first_column_with_shift_is_negative() {
        // b_s = b_cs = 0 on x, b_o = 8: o'.x = 0 − 8/2 = −4.
        let d = decide_lrz(A740, true, &[view(2, (0, 32), (0, 32), (8, 0))]);
        assert_eq!(
            d,
            LrzDecision::Disabled(LrzDisabled::NegativeOffset {
                view: 0,
                offset: Vec2::new(-4, 16)
            })
        );
    }

    #[test]
    fn a740_unaligned_offset() {
        // Row 1 of 16-high tiles at area 4: o'.y = 16 − 16/4 = 12, not a multiple of 8.
        let d = decide_lrz(A740, true, &[view(4, (0, 16), (0, 16), (0, 0))]);
        assert_eq!(
            d,
            LrzDecision::Disabled(LrzDisabled::UnalignedOffset {
                view: 0,
                offset: Vec2::new(0, 12)
            })
        );
    }

    #[test]
    fn older_gpus_only_keep_identity_bins() {
        assert_eq!(
            decide_lrz(A650, true, &[view(1, (64, 0), (64, 0), (0, 0))]),
            LrzDecision::Enabled { offsets: None }
        );
        assert_eq!(
            decide_lrz(
                A650,
                true,
                &[
                    view(1, (64, 0), (64, 0), (0, 0)),
                    view(2, (64, 0), (64, 0), (0, 0))
                ]
            ),
            LrzDecision::Disabled(LrzDisabled::ScaledWithoutOffsetRegisters { view: 1 })
        );
        assert_eq!(
            decide_lrz(A650, false, &[view(1, (0, 0), (0, 0), (0, 0))]),
            LrzDecision::Disabled(LrzDisabled::NotRequested)
        );
    }

    #[test]
    fn older_gpus_with_shifted_grid() {
        // Interior bin of a grid shifted by b_o = (16, 0): b_s = 64 − 16 = 48,
        // o = 64 − 48 = b_o, o' = 64 − (48 + 16) = 0 → LRZ stays on.
        assert_eq!(
            decide_lrz(A650, true, &[view(1, (48, 32), (64, 32), (16, 0))]),
            LrzDecision::Enabled { offsets: None }
        );
        // First column: b_s = b_cs = 0, o' = 0 − (0 + 16) = −16 → off.
        assert_eq!(
            decide_lrz(A650, true, &[view(1, (0, 32), (0, 32), (16, 0))]),
            LrzDecision::Disabled(LrzDisabled::ShiftedWithoutOffsetRegisters {
                view: 0,
                offset: Vec2::new(-16, 0)
            })
        );
    }
}
