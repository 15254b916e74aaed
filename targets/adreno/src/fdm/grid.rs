//! The bin grid: which framebuffer rectangle each bin covers in each view,
//! its common start `b_cs`, and its visibility-stream pipe.
//!
//! Without an FDM offset the grid is the plain tiling: bin `(c, r)` covers
//! `[c·w, (c+1)·w) × [r·h, (r+1)·h)` clipped to the framebuffer, and
//! `b_s = b_cs = (c·w, r·h)`.
//!
//! With per-view shifting the grid gains one extra column and row, and view
//! `v`'s bins move up and left by its bin shift `b_o`: `b_s = b_cs − b_o`,
//! except that the first column (row) keeps starting at 0 and only loses
//! `b_o` of its width (height).

use super::scene::{PipeSize, TileSize};
use super::space::{Extent, Framebuffer, Point, Rect, Rendering, Vec2, ceil_div};

/// Column and row of a bin in the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellIndex {
    pub col: u32,
    pub row: u32,
}

impl CellIndex {
    pub const fn new(col: u32, row: u32) -> Self {
        CellIndex { col, row }
    }
}

/// Column and row of a visibility-stream pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PipeIndex {
    pub x: u32,
    pub y: u32,
}

/// The bin shift `b_o` for one view: the user's FDM offset with the
/// opposite sign, wrapped into `[0, tile)` on each axis. Wrapping by a whole
/// bin is free because the density is then simply read one bin over.
pub fn bin_offset(fdm_offset: Vec2, tile: TileSize) -> Vec2 {
    Vec2::new(
        (-fdm_offset.x).rem_euclid(i64::from(tile.width)),
        (-fdm_offset.y).rem_euclid(i64::from(tile.height)),
    )
}

/// The grid of bins for one render pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinGrid {
    framebuffer: Extent<Framebuffer>,
    tile: TileSize,
    cols: u32,
    rows: u32,
    shifted: bool,
}

impl BinGrid {
    /// A grid covering `framebuffer` with `tile`-sized bins; `shifted` adds
    /// the extra column and row that per-view bin shifts need.
    pub fn new(framebuffer: Extent<Framebuffer>, tile: TileSize, shifted: bool) -> Self {
        let extra = i64::from(shifted);
        let cols = ceil_div(framebuffer.width, i64::from(tile.width)) + extra;
        let rows = ceil_div(framebuffer.height, i64::from(tile.height)) + extra;
        BinGrid {
            framebuffer,
            tile,
            // The framebuffer is at most 16384 wide, so these fit easily.
            cols: u32::try_from(cols).unwrap_or(u32::MAX),
            rows: u32::try_from(rows).unwrap_or(u32::MAX),
            shifted,
        }
    }

    pub fn cols(&self) -> u32 {
        self.cols
    }

    pub fn rows(&self) -> u32 {
        self.rows
    }

    pub fn is_shifted(&self) -> bool {
        self.shifted
    }

    pub fn tile(&self) -> TileSize {
        self.tile
    }

    /// All cells, row by row.
    pub fn cells(&self) -> impl Iterator<Item = CellIndex> + use<> {
        let (cols, rows) = (self.cols, self.rows);
        (0..rows).flat_map(move |row| (0..cols).map(move |col| CellIndex::new(col, row)))
    }

    /// `b_cs`: where the bin starts in rendering space, the same for every
    /// view and unchanged by FDM (it is the `*_WINDOW_OFFSET` value).
    pub fn common_start(&self, cell: CellIndex) -> Point<Rendering> {
        Point::new(
            i64::from(cell.col) * i64::from(self.tile.width),
            i64::from(cell.row) * i64::from(self.tile.height),
        )
    }

    /// The framebuffer rectangle `cell` covers in a view whose bins are
    /// shifted by `bin_offset` (`b_o`, zero when not shifting), its end
    /// clipped to the framebuffer. Cells past the edge come out empty.
    pub fn view_rect(&self, cell: CellIndex, bin_offset: Vec2) -> Rect<Framebuffer> {
        let (x0, x1) = axis_span(
            cell.col,
            self.tile.width,
            bin_offset.x,
            self.framebuffer.width,
        );
        let (y0, y1) = axis_span(
            cell.row,
            self.tile.height,
            bin_offset.y,
            self.framebuffer.height,
        );
        Rect::from_corners(x0, y0, x1, y1)
    }

    /// The visibility-stream pipe `cell` belongs to.
    pub fn pipe_of(&self, cell: CellIndex, pipe: PipeSize) -> PipeIndex {
        PipeIndex {
            x: cell.col / pipe.width,
            y: cell.row / pipe.height,
        }
    }

    /// How many pipes the grid needs with pipes of `pipe` bins.
    pub fn pipe_count(&self, pipe: PipeSize) -> u64 {
        u64::from(self.cols.div_ceil(pipe.width)) * u64::from(self.rows.div_ceil(pipe.height))
    }
}

/// Start and end of bin `index` on one axis: `[i·t − b_o, (i+1)·t − b_o)`,
/// the first bin starting at 0, the end clipped to `limit`. The start is
/// never clipped, so it stays on the fragment grid even for a bin that lies
/// wholly past the edge (and is then empty).
fn axis_span(index: u32, tile: u32, shift: i64, limit: i64) -> (i64, i64) {
    let tile = i64::from(tile);
    let index = i64::from(index);
    let start = if index == 0 { 0 } else { index * tile - shift };
    let end = ((index + 1) * tile - shift).min(limit);
    (start, end.max(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TILE: TileSize = TileSize {
        width: 64,
        height: 32,
    };

    #[test]
    fn bin_offset_wraps_and_flips_sign() {
        assert_eq!(bin_offset(Vec2::new(0, 0), TILE), Vec2::new(0, 0));
        // Map moved right by 8: bins move right by 8, i.e. up-left by 56.
        assert_eq!(bin_offset(Vec2::new(8, 8), TILE), Vec2::new(56, 24));
        // Map moved left by 8: bins move up-left by 8.
        assert_eq!(bin_offset(Vec2::new(-8, -8), TILE), Vec2::new(8, 8));
        // A whole tile wraps to no shift.
        assert_eq!(bin_offset(Vec2::new(64, -32), TILE), Vec2::new(0, 0));
    }

    #[test]
    fn unshifted_grid_clips_last_bins() {
        let grid = BinGrid::new(Extent::new(100, 40), TILE, false);
        assert_eq!((grid.cols(), grid.rows()), (2, 2));
        assert_eq!(
            grid.view_rect(CellIndex::new(1, 1), Vec2::ZERO),
            Rect::from_corners(64, 32, 100, 40)
        );
        assert_eq!(grid.common_start(CellIndex::new(1, 1)), Point::new(64, 32));
    }

    #[test]
    fn shifted_grid_shrinks_first_and_adds_last() {
        let grid = BinGrid::new(Extent::new(128, 64), TILE, true);
        assert_eq!((grid.cols(), grid.rows()), (3, 3));
        let b_o = Vec2::new(8, 4);
        // First column: starts at 0, 64 − 8 = 56 wide; first row 32 − 4 = 28 high.
        assert_eq!(
            grid.view_rect(CellIndex::new(0, 0), b_o),
            Rect::from_corners(0, 0, 56, 28)
        );
        // Middle: b_s = b_cs − b_o = (56, 28).
        assert_eq!(
            grid.view_rect(CellIndex::new(1, 1), b_o),
            Rect::from_corners(56, 28, 120, 60)
        );
        // Extra column/row: the 8 and 4 leftover pixels.
        assert_eq!(
            grid.view_rect(CellIndex::new(2, 2), b_o),
            Rect::from_corners(120, 60, 128, 64)
        );
        // Without a shift the extra cells are empty.
        assert!(grid.view_rect(CellIndex::new(2, 0), Vec2::ZERO).is_empty());
    }

    #[test]
    fn pipes_group_bins() {
        let grid = BinGrid::new(Extent::new(640, 320), TILE, false);
        let pipe = PipeSize {
            width: 4,
            height: 4,
        };
        assert_eq!(
            grid.pipe_of(CellIndex::new(5, 3), pipe),
            PipeIndex { x: 1, y: 0 }
        );
        assert_eq!(grid.pipe_count(pipe), 3 * 3);
    }
}
