//! Density sampling: from the application's density map to the integer
//! fragment area a bin is rendered with.
//!
//! Three steps, per view and per bin:
//! 1. [`DensityMap::requested_area`] reads the map at the centre of the
//!    bin's framebuffer-space rectangle (the rectangle the bin really
//!    covers: clipped to the framebuffer, shrunk in the first row/column of
//!    a shifted grid), moved by the view's FDM offset the way Vulkan
//!    defines it: the map is sampled at `centre − offset`. A texel is
//!    `texel.width × texel.height` framebuffer pixels, and positions off the
//!    map clamp to its edge texels. The value is the fractional area the
//!    application asked for.
//! 2. [`round_fragment_area`] turns it into whole pixels: both axes round
//!    down, except that the axis with the larger fractional part rounds up
//!    when the resulting area (width × height) still does not exceed the
//!    requested one; on equal fractional parts the y axis is the candidate.
//! 3. [`fit_fragment_area`] lowers each axis until it divides the bin size
//!    on that axis — and, when bins are shifted by an FDM offset, the bin
//!    shift `b_o` too — so every bin start is a whole number of fragments
//!    and the per-bin offset stays an integer.

use super::error::FdmError;
use super::scene::TileSize;
use super::space::{FragArea, Framebuffer, Rect, Vec2};

/// Size of one density-map texel in framebuffer pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TexelSize {
    pub width: u32,
    pub height: u32,
}

/// One view's (or layer's) density map: a grid of requested fragment areas
/// `[area_x, area_y]`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityLayer {
    cols: u32,
    rows: u32,
    areas: Vec<[f64; 2]>,
}

impl DensityLayer {
    /// Builds a layer from rows of `[area_x, area_y]`; every row must have
    /// the same length. `view` is used in error messages only.
    pub fn from_rows(view: usize, rows: &[Vec<[f64; 2]>]) -> Result<Self, FdmError> {
        let field = format!("density_map.views[{view}]");
        let first = rows
            .first()
            .ok_or_else(|| FdmError::invalid(&field, "has no rows"))?;
        if first.is_empty() {
            return Err(FdmError::invalid(format!("{field}[0]"), "has no texels"));
        }
        let mut areas = Vec::with_capacity(rows.len() * first.len());
        for (r, row) in rows.iter().enumerate() {
            if row.len() != first.len() {
                return Err(FdmError::invalid(
                    format!("{field}[{r}]"),
                    format!("has {} texels but row 0 has {}", row.len(), first.len()),
                ));
            }
            areas.extend_from_slice(row);
        }
        let too_big = || FdmError::invalid(&field, "has more than 2^32 rows or columns");
        Ok(DensityLayer {
            cols: u32::try_from(first.len()).map_err(|_| too_big())?,
            rows: u32::try_from(rows.len()).map_err(|_| too_big())?,
            areas,
        })
    }

    pub fn cols(&self) -> u32 {
        self.cols
    }

    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// The requested area at texel `(col, row)`; `None` outside the map.
    pub fn texel(&self, col: u32, row: u32) -> Option<[f64; 2]> {
        if col >= self.cols || row >= self.rows {
            return None;
        }
        self.areas
            .get(row as usize * self.cols as usize + col as usize)
            .copied()
    }

    /// The requested area at texel `(col, row)`, clamped into the map.
    fn at(&self, col: i64, row: i64) -> [f64; 2] {
        let col = col.clamp(0, i64::from(self.cols) - 1) as usize;
        let row = row.clamp(0, i64::from(self.rows) - 1) as usize;
        self.areas[row * self.cols as usize + col]
    }
}

/// The fragment density map attachment: one layer per view.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityMap {
    pub texel: TexelSize,
    pub layers: Vec<DensityLayer>,
}

impl DensityMap {
    /// Checks texel size, view count and that every area is a finite number
    /// of at least 1.
    pub fn validate(&self, views: u32) -> Result<(), FdmError> {
        if self.texel.width == 0 {
            return Err(FdmError::invalid(
                "density_map.texel.width",
                "must not be 0",
            ));
        }
        if self.texel.height == 0 {
            return Err(FdmError::invalid(
                "density_map.texel.height",
                "must not be 0",
            ));
        }
        if self.layers.len() != views as usize {
            return Err(FdmError::invalid(
                "density_map.views",
                format!("has {} entries but views is {views}", self.layers.len()),
            ));
        }
        // A map smaller than the framebuffer is allowed: sampling clamps to
        // its edge texels, as the hardware's texture fetch does.
        for (v, layer) in self.layers.iter().enumerate() {
            for (i, area) in layer.areas.iter().enumerate() {
                let (row, col) = (i / layer.cols as usize, i % layer.cols as usize);
                for (axis, value) in area.iter().enumerate() {
                    if !value.is_finite() || *value < 1.0 {
                        return Err(FdmError::invalid(
                            format!("density_map.views[{v}][{row}][{col}][{axis}]"),
                            format!("fragment area {value} must be a finite number >= 1"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The fractional fragment area view `view` requests for `bin`: the map
    /// texel under the bin's centre after moving by `-fdm_offset`.
    /// Returns `None` when the map has no layer for `view`.
    pub fn requested_area(
        &self,
        view: usize,
        bin: Rect<Framebuffer>,
        fdm_offset: Vec2,
    ) -> Option<[f64; 2]> {
        let layer = self.layers.get(view)?;
        // Work on doubled coordinates so the centre of an odd-sized bin
        // stays an integer: 2·centre = 2·origin + extent.
        let cx2 = 2 * (bin.origin.x - fdm_offset.x) + bin.extent.width;
        let cy2 = 2 * (bin.origin.y - fdm_offset.y) + bin.extent.height;
        let col = cx2.div_euclid(2 * i64::from(self.texel.width));
        let row = cy2.div_euclid(2 * i64::from(self.texel.height));
        Some(layer.at(col, row))
    }
}

/// Rounds a requested fractional area to whole pixels (step 2 above).
/// Inputs below 1 or not finite count as 1.
///
/// The candidate for rounding up is the axis with the larger fractional
/// part; on a tie it is the y axis, as in the established driver (with
/// whole numbers on both axes rounding up never fits, so nothing changes).
pub fn round_fragment_area(requested: [f64; 2]) -> FragArea {
    let clean = |v: f64| if v.is_finite() && v >= 1.0 { v } else { 1.0 };
    let (rx, ry) = (clean(requested[0]), clean(requested[1]));
    let (mut fx, mut fy) = (rx.floor(), ry.floor());
    let (frac_x, frac_y) = (rx - fx, ry - fy);
    let budget = rx * ry;
    if frac_x > frac_y {
        if (fx + 1.0) * fy <= budget {
            fx += 1.0;
        }
    } else if fx * (fy + 1.0) <= budget {
        fy += 1.0;
    }
    // `as` saturates; anything that large is cut to the bin size later.
    FragArea::new(fx as u32, fy as u32)
}

/// Lowers each axis of `area` to the largest value that divides the tile
/// size on that axis and the bin shift `bin_offset` (step 3 above).
/// `bin_offset` components must be non-negative (they are `b_o`).
pub fn fit_fragment_area(area: FragArea, tile: TileSize, bin_offset: Vec2) -> FragArea {
    FragArea::new(
        largest_divisor_at_most(
            gcd(u64::from(tile.width), bin_offset.x.unsigned_abs()),
            area.x,
        ),
        largest_divisor_at_most(
            gcd(u64::from(tile.height), bin_offset.y.unsigned_abs()),
            area.y,
        ),
    )
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Largest divisor of `n` (n ≥ 1) that is at most `limit`; 1 if `limit` is 0.
/// Equivalent to counting `limit` down until it divides `n`, in O(√n).
fn largest_divisor_at_most(n: u64, limit: u32) -> u32 {
    let limit = u64::from(limit);
    let mut best = 1;
    let mut i = 1;
    while i * i <= n {
        if n % i == 0 {
            for d in [i, n / i] {
                if d <= limit && d > best {
                    best = d;
                }
            }
        }
        i += 1;
    }
    // `best` ≤ `limit` ≤ u32::MAX.
    u32::try_from(best).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_follows_the_driver_rule() {
        // 1.5 × 2.0: x has the larger fraction, but 2 × 2 = 4 > 3.0, so no.
        assert_eq!(round_fragment_area([1.5, 2.0]), FragArea::new(1, 2));
        // 2.5 × 1.9: y has the larger fraction; 2 × 2 = 4 ≤ 4.75, so yes.
        assert_eq!(round_fragment_area([2.5, 1.9]), FragArea::new(2, 2));
        // 1.9 × 1.9: equal fractions, y is the candidate; 1 × 2 ≤ 3.61.
        assert_eq!(round_fragment_area([1.9, 1.9]), FragArea::new(1, 2));
        // 1.5 × 1.5: tie again, 1 × 2 = 2 ≤ 2.25 rounds y up.
        assert_eq!(round_fragment_area([1.5, 1.5]), FragArea::new(1, 2));
        // 1.2 × 1.2: tie, 1 × 2 = 2 > 1.44, nothing rounds up.
        assert_eq!(round_fragment_area([1.2, 1.2]), FragArea::new(1, 1));
        // Whole numbers never round up (x·(y+1) > x·y).
        assert_eq!(round_fragment_area([3.0, 2.0]), FragArea::new(3, 2));
        // 2.5 × 1.2 = 3: the candidate 3 × 1 = 3 equals the budget and fits.
        assert_eq!(round_fragment_area([2.5, 1.2]), FragArea::new(3, 1));
        // y has the larger fraction but does not fit; x must not be tried.
        // 2.3 × 1.8 = 4.14: y candidate 2 × 2 = 4 fits.
        assert_eq!(round_fragment_area([2.3, 1.8]), FragArea::new(2, 2));
        // 3.4 × 1.5 = 5.1: y candidate 3 × 2 = 6 > 5.1, and x (4 × 1 = 4,
        // would fit) is not the candidate: stays 3 × 1.
        assert_eq!(round_fragment_area([3.4, 1.5]), FragArea::new(3, 1));
        // 3.7 × 1.0: 4 × 1 = 4 > 3.7, stays 3.
        assert_eq!(round_fragment_area([3.7, 1.0]), FragArea::new(3, 1));
        // 1.0 × 1.6: 1 × 2 = 2 > 1.6, stays 1.
        assert_eq!(round_fragment_area([1.0, 1.6]), FragArea::new(1, 1));
        // 3.8 × 2.2: 4 × 2 = 8 ≤ 8.36, so x rounds up.
        assert_eq!(round_fragment_area([3.8, 2.2]), FragArea::new(4, 2));
    }

    #[test]
    fn rounded_area_never_exceeds_request() {
        for ix in 10..80 {
            for iy in 10..80 {
                let (rx, ry) = (f64::from(ix) / 10.0, f64::from(iy) / 10.0);
                let a = round_fragment_area([rx, ry]);
                assert!(f64::from(a.x * a.y) <= rx * ry + 1e-9, "{rx} {ry} -> {a:?}");
                assert!(a.x >= 1 && a.y >= 1);
            }
        }
    }

    #[test]
    fn fitting_divides_tile_and_shift() {
        let tile = TileSize {
            width: 96,
            height: 48,
        };
        // 5 does not divide 96: 4 does. 3 divides 48.
        assert_eq!(
            fit_fragment_area(FragArea::new(5, 3), tile, Vec2::ZERO),
            FragArea::new(4, 3)
        );
        // With a shift of 8: gcd(96, 8) = 8 → 4 ok; gcd(48, 6) = 6 → 3 ok.
        assert_eq!(
            fit_fragment_area(FragArea::new(4, 3), tile, Vec2::new(8, 6)),
            FragArea::new(4, 3)
        );
        // Shift 6 on x: gcd(96, 6) = 6, largest divisor ≤ 4 is 3.
        assert_eq!(
            fit_fragment_area(FragArea::new(4, 1), tile, Vec2::new(6, 0)),
            FragArea::new(3, 1)
        );
        // Larger than the tile: cut to the tile.
        assert_eq!(
            fit_fragment_area(FragArea::new(1000, 1000), tile, Vec2::ZERO),
            FragArea::new(96, 48)
        );
    }

    #[test]
    fn sampling_uses_bin_centre_minus_offset() {
        let layer =
            DensityLayer::from_rows(0, &[vec![[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]]).unwrap();
        let map = DensityMap {
            texel: TexelSize {
                width: 32,
                height: 32,
            },
            layers: vec![layer],
        };
        let bin = Rect::from_corners(32, 0, 64, 32); // centre x = 48 → texel 1
        assert_eq!(map.requested_area(0, bin, Vec2::ZERO), Some([2.0, 2.0]));
        // Offset +32 moves the map right: sample at 16 → texel 0.
        assert_eq!(
            map.requested_area(0, bin, Vec2::new(32, 0)),
            Some([1.0, 1.0])
        );
        // Far off the map clamps to the edge.
        assert_eq!(
            map.requested_area(0, bin, Vec2::new(-1000, 0)),
            Some([4.0, 4.0])
        );
        assert_eq!(map.requested_area(1, bin, Vec2::ZERO), None);
    }

    #[test]
    fn ragged_rows_are_rejected() {
        let err = DensityLayer::from_rows(1, &[vec![[1.0, 1.0]], vec![]]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "density_map.views[1][1]: has 0 texels but row 0 has 1"
        );
    }
}
