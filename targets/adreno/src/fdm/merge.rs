//! Bin merging (a7xx): neighbouring bins rendered as one.
//!
//! A group of bins may be rendered as a single bin when
//! 1. every view has the same fragment area in all of them,
//! 2. the group's size in rendering space, in every view, is no larger than
//!    one unscaled bin (so it still fits the GMEM a bin was given), and
//! 3. all of them belong to the same visibility-stream pipe (the hardware
//!    can only OR together visibility streams of one pipe).
//!
//! Groups are rectangles of cells, chosen greedily: walking the grid row by
//! row, each bin not yet taken starts a group that first grows to the right
//! and then downwards, one whole row at a time, while all three rules hold.

use super::grid::{CellIndex, PipeIndex};
use super::scene::TileSize;
use super::space::{FragArea, Framebuffer, Rect, ceil_div};

/// What merging needs to know about one bin.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeCell {
    pub pipe: PipeIndex,
    /// Fragment area per view.
    pub areas: Vec<FragArea>,
    /// Framebuffer rectangle per view.
    pub rects: Vec<Rect<Framebuffer>>,
}

/// A rectangle of cells rendered as one bin; `anchor` is its top-left cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeGroup {
    pub anchor: CellIndex,
    pub cols: u32,
    pub rows: u32,
}

impl MergeGroup {
    /// The group's cells, row by row, anchor first.
    pub fn cells(&self) -> impl Iterator<Item = CellIndex> + use<> {
        let MergeGroup { anchor, cols, rows } = *self;
        (0..rows).flat_map(move |r| {
            (0..cols).map(move |c| CellIndex::new(anchor.col + c, anchor.row + r))
        })
    }
}

/// The bins of a grid, row-major, `None` for cells that cover nothing.
pub struct MergeGrid<'a> {
    pub cols: u32,
    pub rows: u32,
    pub cells: &'a [Option<MergeCell>],
    pub tile: TileSize,
}

impl MergeGrid<'_> {
    /// The cell at `index`, `None` when empty or outside the grid.
    pub fn cell(&self, index: CellIndex) -> Option<&MergeCell> {
        if index.col >= self.cols || index.row >= self.rows {
            return None;
        }
        self.cells
            .get(index.row as usize * self.cols as usize + index.col as usize)?
            .as_ref()
    }

    /// The framebuffer rectangle a group covers in `view`: from the anchor's
    /// start to the farthest end of any cell (cells are contiguous).
    pub fn group_rect(&self, group: &MergeGroup, view: usize) -> Option<Rect<Framebuffer>> {
        let anchor = self.cell(group.anchor)?.rects.get(view).copied()?;
        let mut end = anchor.end();
        for index in group.cells() {
            let rect = *self.cell(index)?.rects.get(view)?;
            if !rect.is_empty() {
                end.x = end.x.max(rect.end().x);
                end.y = end.y.max(rect.end().y);
            }
        }
        Some(Rect::from_corners(
            anchor.origin.x,
            anchor.origin.y,
            end.x,
            end.y,
        ))
    }

    /// Rule 2 for a candidate group: its rendering-space size in every view
    /// fits one unscaled bin.
    fn fits(&self, group: &MergeGroup, areas: &[FragArea]) -> bool {
        areas.iter().enumerate().all(|(view, area)| {
            self.group_rect(group, view).is_some_and(|r| {
                ceil_div(r.extent.width, i64::from(area.x)) <= i64::from(self.tile.width)
                    && ceil_div(r.extent.height, i64::from(area.y)) <= i64::from(self.tile.height)
            })
        })
    }

    /// Splits the grid into merge groups. With `enabled` false every
    /// non-empty cell is its own group.
    pub fn merge(&self, enabled: bool) -> Vec<MergeGroup> {
        let mut taken = vec![false; self.cells.len()];
        let slot = |i: CellIndex| i.row as usize * self.cols as usize + i.col as usize;
        let mut groups = Vec::new();
        for row in 0..self.rows {
            for col in 0..self.cols {
                let anchor = CellIndex::new(col, row);
                let Some(first) = self.cell(anchor) else {
                    continue;
                };
                if taken[slot(anchor)] {
                    continue;
                }
                // Rules 1 and 3 for one more cell.
                let joins = |i: CellIndex, taken: &[bool]| {
                    self.cell(i).is_some_and(|c| {
                        !taken[slot(i)] && c.pipe == first.pipe && c.areas == first.areas
                    })
                };
                let mut group = MergeGroup {
                    anchor,
                    cols: 1,
                    rows: 1,
                };
                if enabled {
                    loop {
                        let wider = MergeGroup {
                            cols: group.cols + 1,
                            ..group
                        };
                        let next = CellIndex::new(col + group.cols, row);
                        if !joins(next, &taken) || !self.fits(&wider, &first.areas) {
                            break;
                        }
                        group = wider;
                    }
                    loop {
                        let taller = MergeGroup {
                            rows: group.rows + 1,
                            ..group
                        };
                        let next_row = row + group.rows;
                        let row_joins = (col..col + group.cols)
                            .all(|c| joins(CellIndex::new(c, next_row), &taken));
                        if !row_joins || !self.fits(&taller, &first.areas) {
                            break;
                        }
                        group = taller;
                    }
                }
                for index in group.cells() {
                    taken[slot(index)] = true;
                }
                groups.push(group);
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(pipe_x: u32, area: u32, x0: i64, x1: i64) -> Option<MergeCell> {
        Some(MergeCell {
            pipe: PipeIndex { x: pipe_x, y: 0 },
            areas: vec![FragArea::new(area, area)],
            rects: vec![Rect::from_corners(x0, 0, x1, 32)],
        })
    }

    #[test]
    fn merges_scaled_neighbours_up_to_one_bin() {
        let tile = TileSize {
            width: 32,
            height: 32,
        };
        // Four 32-wide bins at area 2: two of them make 32 rendering pixels.
        let cells = [
            cell(0, 2, 0, 32),
            cell(0, 2, 32, 64),
            cell(0, 2, 64, 96),
            cell(0, 2, 96, 128),
        ];
        let grid = MergeGrid {
            cols: 4,
            rows: 1,
            cells: &cells,
            tile,
        };
        let groups = grid.merge(true);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            (groups[0].anchor, groups[0].cols),
            (CellIndex::new(0, 0), 2)
        );
        assert_eq!(
            (groups[1].anchor, groups[1].cols),
            (CellIndex::new(2, 0), 2)
        );
        assert_eq!(grid.merge(false).len(), 4);
    }

    #[test]
    fn pipe_and_scale_boundaries_stop_merging() {
        let tile = TileSize {
            width: 32,
            height: 32,
        };
        let cells = [cell(0, 4, 0, 32), cell(1, 4, 32, 64), cell(1, 2, 64, 96)];
        let grid = MergeGrid {
            cols: 3,
            rows: 1,
            cells: &cells,
            tile,
        };
        assert!(grid.merge(true).iter().all(|g| g.cols == 1 && g.rows == 1));
    }
}
