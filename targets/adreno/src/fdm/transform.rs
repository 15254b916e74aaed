//! Per-bin transforms between coordinate spaces.
//!
//! Everything here is one affine map per axis, `x' = x / a + o`, where `a`
//! is the fragment area (so `1/a` is the scale `s`) and `o` an integer
//! offset. Bin starts map exactly (they are multiples of `a`); viewports
//! map in floating point; scissors round outwards.

use super::error::FdmError;
use super::space::{
    Extent, FragArea, Framebuffer, Gmem, Point, Rect, Rendering, Vec2, Viewport, ceil_div,
};
use std::marker::PhantomData;

/// The per-bin offset `o = b_cs − s·b_s`, computed exactly: `b_s` must be
/// a multiple of the fragment area on each axis.
pub fn per_bin_offset(
    area: FragArea,
    bin_start: Point<Framebuffer>,
    common_start: Point<Rendering>,
) -> Result<Vec2, FdmError> {
    let (ax, ay) = (i64::from(area.x), i64::from(area.y));
    if bin_start.x % ax != 0 || bin_start.y % ay != 0 {
        return Err(FdmError::UnalignedBinStart {
            start_x: bin_start.x,
            start_y: bin_start.y,
            area_x: area.x,
            area_y: area.y,
        });
    }
    Ok(Vec2::new(
        common_start.x - bin_start.x / ax,
        common_start.y - bin_start.y / ay,
    ))
}

/// `x' = x / area + offset` from space `From` to space `To`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinTransform<From, To> {
    pub area: FragArea,
    pub offset: Vec2,
    spaces: PhantomData<(From, To)>,
}

impl<From, To> BinTransform<From, To> {
    pub const fn new(area: FragArea, offset: Vec2) -> Self {
        BinTransform {
            area,
            offset,
            spaces: PhantomData,
        }
    }

    /// The same scale with the result moved by `-delta`, landing in a new
    /// space. Used to go from rendering space to LRZ space (`delta = o'`).
    pub fn rebased<To2>(self, delta: Vec2) -> BinTransform<From, To2> {
        BinTransform::new(self.area, self.offset - delta)
    }

    fn axes(&self) -> (i64, i64) {
        (i64::from(self.area.x), i64::from(self.area.y))
    }

    /// Maps a point that lies on a fragment boundary; `None` otherwise.
    pub fn map_point_exact(&self, p: Point<From>) -> Option<Point<To>> {
        let (ax, ay) = self.axes();
        (p.x % ax == 0 && p.y % ay == 0)
            .then(|| Point::new(p.x / ax + self.offset.x, p.y / ay + self.offset.y))
    }

    /// The number of fragments an extent covers, partial ones included.
    pub fn map_extent(&self, e: Extent<From>) -> Extent<To> {
        let (ax, ay) = self.axes();
        Extent::new(ceil_div(e.width, ax), ceil_div(e.height, ay))
    }

    /// Scales and shifts a viewport; depth passes through.
    pub fn map_viewport(&self, v: &Viewport<From>) -> Viewport<To> {
        let (ax, ay) = (f64::from(self.area.x), f64::from(self.area.y));
        Viewport::new(
            v.x / ax + self.offset.x as f64,
            v.y / ay + self.offset.y as f64,
            v.width / ax,
            v.height / ay,
            v.min_depth,
            v.max_depth,
        )
    }

    /// Maps a scissor rounding outwards: the start rounds down and the end
    /// up on each axis, so every fragment touching the scissor survives.
    /// An empty scissor stays empty.
    pub fn map_scissor(&self, r: Rect<From>) -> Rect<To> {
        let (ax, ay) = self.axes();
        let x0 = r.origin.x.div_euclid(ax) + self.offset.x;
        let y0 = r.origin.y.div_euclid(ay) + self.offset.y;
        if r.is_empty() {
            return Rect::from_corners(x0, y0, x0, y0);
        }
        let x1 = ceil_div(r.end().x, ax) + self.offset.x;
        let y1 = ceil_div(r.end().y, ay) + self.offset.y;
        Rect::from_corners(x0, y0, x1, y1)
    }
}

impl<To> BinTransform<Framebuffer, To> {
    /// Maps a bin rectangle. Its start must lie on a fragment boundary (bins
    /// are built that way); a partial last fragment still counts in the
    /// extent. `None` if the start is off the fragment grid.
    pub fn map_bin(&self, bin: Rect<Framebuffer>) -> Option<Rect<To>> {
        let start = self.map_point_exact(bin.origin)?;
        Some(Rect::new(start, self.map_extent(bin.extent)))
    }
}

/// Rendering space to GMEM space: the origin moves to the common bin start.
pub fn rendering_to_gmem(p: Point<Rendering>, common_start: Point<Rendering>) -> Point<Gmem> {
    Point::new(p.x - common_start.x, p.y - common_start.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_maps_bin_start_to_common_start() {
        // No shift: b_s = b_cs = (96, 64), area 2×4 → o = (96 − 48, 64 − 16).
        let o =
            per_bin_offset(FragArea::new(2, 4), Point::new(96, 64), Point::new(96, 64)).unwrap();
        assert_eq!(o, Vec2::new(48, 48));
        let t: BinTransform<Framebuffer, Rendering> = BinTransform::new(FragArea::new(2, 4), o);
        assert_eq!(
            t.map_point_exact(Point::new(96, 64)),
            Some(Point::new(96, 64))
        );
    }

    #[test]
    fn unaligned_start_is_an_error() {
        let err = per_bin_offset(FragArea::new(4, 1), Point::new(6, 0), Point::new(8, 0));
        assert!(matches!(err, Err(FdmError::UnalignedBinStart { .. })));
    }

    #[test]
    fn scissor_rounds_outwards() {
        let t: BinTransform<Framebuffer, Rendering> =
            BinTransform::new(FragArea::new(4, 2), Vec2::new(10, 0));
        // x: [5, 11) → [floor(5/4), ceil(11/4)) = [1, 3) + 10 = [11, 13)
        // y: [3, 4) → [1, 2)
        let s = t.map_scissor(Rect::from_corners(5, 3, 11, 4));
        assert_eq!(s, Rect::from_corners(11, 1, 13, 2));
        let empty = t.map_scissor(Rect::from_corners(5, 3, 5, 4));
        assert!(empty.is_empty());
    }

    #[test]
    fn viewport_scales_and_shifts() {
        let t: BinTransform<Framebuffer, Rendering> =
            BinTransform::new(FragArea::new(2, 2), Vec2::new(32, 0));
        let v = t.map_viewport(&Viewport::new(64.0, 10.0, 100.0, -50.0, 0.25, 1.0));
        assert_eq!(v, Viewport::new(64.0, 5.0, 50.0, -25.0, 0.25, 1.0));
    }
}
