//! Coordinate spaces as types.
//!
//! Every point, extent and rectangle carries a zero-sized marker naming the
//! space it lives in, so a framebuffer-space bin can never be handed to code
//! that expects a rendering-space one. Crossing spaces happens only through
//! the transforms in [`super::transform`].

use std::fmt;
use std::marker::PhantomData;

/// The space of the final image; everything the application specifies
/// (viewports, scissors, the density map) lives here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framebuffer {}

/// The space the rasterizer works in after the driver's per-bin patching:
/// framebuffer space shrunk by the scale `s` and shifted by the offset `o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rendering {}

/// Rendering space with its origin moved to the common bin start `b_cs`,
/// the space GMEM is addressed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gmem {}

/// On GPUs with LRZ offset registers: the space viewport, scissor and LRZ
/// work in; rendering space is LRZ space plus the per-layer offset `o'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lrz {}

/// A marker type naming a coordinate space.
pub trait Space: Copy + fmt::Debug + 'static {
    /// Lower-case name used in messages and JSON.
    const NAME: &'static str;
}

impl Space for Framebuffer {
    const NAME: &'static str = "framebuffer";
}
impl Space for Rendering {
    const NAME: &'static str = "rendering";
}
impl Space for Gmem {
    const NAME: &'static str = "gmem";
}
impl Space for Lrz {
    const NAME: &'static str = "lrz";
}

/// A space-less integer pair: an offset or a per-axis quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Vec2 {
    pub x: i64,
    pub y: i64,
}

impl Vec2 {
    pub const ZERO: Vec2 = Vec2 { x: 0, y: 0 };

    pub const fn new(x: i64, y: i64) -> Self {
        Vec2 { x, y }
    }
}

impl std::ops::Sub for Vec2 {
    type Output = Vec2;
    fn sub(self, rhs: Vec2) -> Vec2 {
        Vec2::new(self.x - rhs.x, self.y - rhs.y)
    }
}

impl std::ops::Add for Vec2 {
    type Output = Vec2;
    fn add(self, rhs: Vec2) -> Vec2 {
        Vec2::new(self.x + rhs.x, self.y + rhs.y)
    }
}

/// An integer point in space `S`.
#[derive(PartialEq, Eq, Hash)]
pub struct Point<S> {
    pub x: i64,
    pub y: i64,
    space: PhantomData<S>,
}

impl<S> Point<S> {
    pub const fn new(x: i64, y: i64) -> Self {
        Point {
            x,
            y,
            space: PhantomData,
        }
    }

    /// The point moved by `delta`, staying in the same space.
    pub const fn shifted(self, delta: Vec2) -> Self {
        Point::new(self.x + delta.x, self.y + delta.y)
    }

    /// The coordinates as a space-less pair (for output and arithmetic
    /// that deliberately leaves the type system, such as offsets).
    pub const fn to_vec(self) -> Vec2 {
        Vec2::new(self.x, self.y)
    }
}

impl<S: Space> fmt::Debug for Point<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}, {})", S::NAME, self.x, self.y)
    }
}

/// A width and height in space `S` (never negative).
#[derive(PartialEq, Eq, Hash)]
pub struct Extent<S> {
    pub width: i64,
    pub height: i64,
    space: PhantomData<S>,
}

impl<S> Extent<S> {
    /// Builds an extent, clamping negative components to zero.
    pub const fn new(width: i64, height: i64) -> Self {
        Extent {
            width: if width < 0 { 0 } else { width },
            height: if height < 0 { 0 } else { height },
            space: PhantomData,
        }
    }

    pub const fn is_empty(self) -> bool {
        self.width == 0 || self.height == 0
    }
}

impl<S: Space> fmt::Debug for Extent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}x{}]", S::NAME, self.width, self.height)
    }
}

/// A half-open integer rectangle `[origin, origin + extent)` in space `S`.
#[derive(PartialEq, Eq, Hash)]
pub struct Rect<S> {
    pub origin: Point<S>,
    pub extent: Extent<S>,
}

impl<S> Rect<S> {
    pub const fn new(origin: Point<S>, extent: Extent<S>) -> Self {
        Rect { origin, extent }
    }

    /// The rectangle spanning `[x0, x1) × [y0, y1)`; an inverted range
    /// gives an empty extent anchored at the start.
    pub const fn from_corners(x0: i64, y0: i64, x1: i64, y1: i64) -> Self {
        Rect::new(Point::new(x0, y0), Extent::new(x1 - x0, y1 - y0))
    }

    /// One past the last column/row.
    pub const fn end(self) -> Point<S> {
        Point::new(
            self.origin.x + self.extent.width,
            self.origin.y + self.extent.height,
        )
    }

    pub const fn is_empty(self) -> bool {
        self.extent.is_empty()
    }

    /// The overlap of two rectangles; empty (zero extent) when they do not
    /// overlap.
    pub fn intersect(self, other: Rect<S>) -> Rect<S> {
        let x0 = self.origin.x.max(other.origin.x);
        let y0 = self.origin.y.max(other.origin.y);
        let x1 = self.end().x.min(other.end().x);
        let y1 = self.end().y.min(other.end().y);
        Rect::from_corners(x0, y0, x1.max(x0), y1.max(y0))
    }

    /// The part of `self` inside `bounds`. Unlike [`Rect::intersect`] the
    /// result always lies within `bounds`, even when empty: a rectangle
    /// that misses `bounds` becomes a 0×0 one at the nearest point of it,
    /// so every coordinate a driver programs stays inside the bin.
    pub fn clipped_to(self, bounds: Rect<S>) -> Rect<S> {
        let (bx0, by0) = (bounds.origin.x, bounds.origin.y);
        let (bx1, by1) = (bounds.end().x.max(bx0), bounds.end().y.max(by0));
        let x0 = self.origin.x.clamp(bx0, bx1);
        let y0 = self.origin.y.clamp(by0, by1);
        let x1 = self.end().x.clamp(x0, bx1);
        let y1 = self.end().y.clamp(y0, by1);
        if self.is_empty() || x1 == x0 || y1 == y0 {
            return Rect::from_corners(x0, y0, x0, y0);
        }
        Rect::from_corners(x0, y0, x1, y1)
    }

    /// Whether `inner` lies within `self` (an empty `inner` always does).
    pub fn contains(self, inner: Rect<S>) -> bool {
        inner.is_empty()
            || (inner.origin.x >= self.origin.x
                && inner.origin.y >= self.origin.y
                && inner.end().x <= self.end().x
                && inner.end().y <= self.end().y)
    }
}

impl<S: Space> fmt::Debug for Rect<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[({}, {}) {}x{}]",
            S::NAME,
            self.origin.x,
            self.origin.y,
            self.extent.width,
            self.extent.height
        )
    }
}

/// A Vulkan viewport in space `S`: position and size are floats, depth
/// range is carried through unchanged by every transform.
#[derive(PartialEq)]
pub struct Viewport<S> {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub min_depth: f64,
    pub max_depth: f64,
    space: PhantomData<S>,
}

impl<S> Viewport<S> {
    pub const fn new(
        x: f64,
        y: f64,
        width: f64,
        height: f64,
        min_depth: f64,
        max_depth: f64,
    ) -> Self {
        Viewport {
            x,
            y,
            width,
            height,
            min_depth,
            max_depth,
            space: PhantomData,
        }
    }
}

impl<S: Space> fmt::Debug for Viewport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}viewport[({}, {}) {}x{} depth {}..{}]",
            S::NAME,
            self.x,
            self.y,
            self.width,
            self.height,
            self.min_depth,
            self.max_depth
        )
    }
}

/// A fragment area: how many framebuffer pixels one rendered fragment
/// covers on each axis. The scale `s` of the design notes is its inverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FragArea {
    pub x: u32,
    pub y: u32,
}

impl FragArea {
    /// Full resolution: one pixel per fragment.
    pub const ONE: FragArea = FragArea { x: 1, y: 1 };

    pub const fn new(x: u32, y: u32) -> Self {
        FragArea { x, y }
    }

    /// The per-axis minimum, i.e. the higher resolution on each axis.
    pub fn min(self, other: FragArea) -> FragArea {
        FragArea::new(self.x.min(other.x), self.y.min(other.y))
    }

    pub const fn is_scaled(self) -> bool {
        self.x != 1 || self.y != 1
    }
}

// Manual impls: derives would demand `S: Copy`, which generic code over
// spaces cannot always prove although every marker is zero-sized.
macro_rules! copy_without_bounds {
    ($($ty:ident),*) => {$(
        impl<S> Clone for $ty<S> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<S> Copy for $ty<S> {}
    )*};
}
copy_without_bounds!(Point, Extent, Rect, Viewport);

/// `⌈n / d⌉` for a positive divisor (stable Rust has no signed `div_ceil`).
pub const fn ceil_div(n: i64, d: i64) -> i64 {
    -((-n).div_euclid(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_overlapping_and_disjoint() {
        let a: Rect<Rendering> = Rect::from_corners(0, 0, 10, 10);
        let b = Rect::from_corners(5, 2, 20, 8);
        assert_eq!(a.intersect(b), Rect::from_corners(5, 2, 10, 8));
        let c = Rect::from_corners(30, 30, 40, 40);
        let empty = a.intersect(c);
        assert!(empty.is_empty());
        assert!(a.contains(empty));
    }

    #[test]
    fn clipping_stays_inside_even_when_empty() {
        let bin: Rect<Rendering> = Rect::from_corners(64, 0, 96, 16);
        assert_eq!(
            Rect::from_corners(37, 0, 87, 16).clipped_to(bin),
            Rect::from_corners(64, 0, 87, 16)
        );
        // Entirely right of the bin: 0×0 at the bin's right edge.
        assert_eq!(
            Rect::from_corners(120, 4, 130, 8).clipped_to(bin),
            Rect::from_corners(96, 4, 96, 4)
        );
        // Entirely left and below: 0×0 at the nearest corner.
        assert_eq!(
            Rect::from_corners(0, 20, 10, 30).clipped_to(bin),
            Rect::from_corners(64, 16, 64, 16)
        );
        // Overlapping on x only: empty, and both extents are zero.
        let e = Rect::from_corners(70, 30, 80, 40).clipped_to(bin);
        assert_eq!(e, Rect::from_corners(70, 16, 70, 16));
        assert!(bin.contains(e) && e.end().x <= bin.end().x && e.end().y <= bin.end().y);
    }

    #[test]
    fn negative_extent_clamps_to_zero() {
        let e: Extent<Framebuffer> = Extent::new(-3, 4);
        assert_eq!(e.width, 0);
        assert!(e.is_empty());
    }
}
