//! Affinity sets: values the allocator would like in related registers, so
//! that the copies between them cost nothing (a phi and its operands, a
//! copy and its source, a register group and its lanes, a split lane and
//! its vector). Each set is a union-find tree whose members carry their
//! offset in units from the set's root; the first member placed fixes
//! where the set sits, and later members prefer their offset from there.
//!
//! This is the merge-set idea of SSA-based coalescing (Hack's coalescing,
//! Boissinot et al.'s congruence classes, ir3's merge sets) used as a bias
//! rather than a constraint: a member whose preferred register is taken
//! when it is defined (the values interfere after all) goes where the
//! allocator would have put it anyway, so a wrong merge costs a copy,
//! never a spill or a wrong program.

use super::Val;
use super::liveness::Liveness;
use lathe_ir::{Inst, Op, Opcode, Shader, Value};

/// No base yet.
const UNSET: i64 = i64::MIN;

/// Union-find over values with unit offsets.
pub(super) struct Affinity {
    /// Per value: its parent (itself at a root) and its offset in units
    /// from the parent.
    parent: Vec<u32>,
    offset: Vec<i32>,
    /// Per root: members, the lowest offset and one past the highest unit
    /// of any member, and the strictest alignment a member asks.
    size: Vec<u32>,
    low: Vec<i32>,
    high: Vec<i32>,
    align: Vec<u8>,
    /// Per root: the global unit at offset 0, once a member is placed.
    base: Vec<i64>,
}

impl Affinity {
    /// Singleton sets for `units` and `align` per value.
    pub fn new(units: impl ExactSizeIterator<Item = (u32, u8)>) -> Affinity {
        let n = units.len();
        let mut a = Affinity {
            parent: (0..n as u32).collect(),
            offset: vec![0; n],
            size: vec![1; n],
            low: vec![0; n],
            high: Vec::with_capacity(n),
            align: Vec::with_capacity(n),
            base: vec![UNSET; n],
        };
        for (u, al) in units {
            a.high.push(u as i32);
            a.align.push(al);
        }
        a
    }

    /// `v`'s root and its offset from it.
    fn find(&mut self, v: Value) -> (u32, i32) {
        let mut x = v.0;
        let mut off = 0;
        while self.parent[x as usize] != x {
            off += self.offset[x as usize];
            x = self.parent[x as usize];
        }
        let root = x;
        // Point the path at the root (offsets summed from each node).
        let (mut y, mut rest) = (v.0, off);
        while self.parent[y as usize] != root && y != root {
            let next = self.parent[y as usize];
            let step = self.offset[y as usize];
            self.parent[y as usize] = root;
            self.offset[y as usize] = rest;
            rest -= step;
            y = next;
        }
        (root, off)
    }

    /// Put `b` at `d` units after `a`; false (and nothing changes) when
    /// they are in one set already at another distance.
    pub fn join(&mut self, a: Value, b: Value, d: i32) -> bool {
        let ((ra, oa), (rb, ob)) = (self.find(a), self.find(b));
        if ra == rb {
            return ob - oa == d;
        }
        // `rb` sits at `shift` units from `ra`.
        let shift = oa + d - ob;
        let (ra_, rb_) = (ra as usize, rb as usize);
        self.parent[rb_] = ra;
        self.offset[rb_] = shift;
        self.size[ra_] += self.size[rb_];
        self.low[ra_] = self.low[ra_].min(self.low[rb_] + shift);
        self.high[ra_] = self.high[ra_].max(self.high[rb_] + shift);
        self.align[ra_] = self.align[ra_].max(self.align[rb_]);
        true
    }

    /// Where `v` would like to start, when its set has a place: a global
    /// unit, possibly outside the file (the caller checks).
    pub fn preferred(&mut self, v: Value) -> Option<i64> {
        let (root, off) = self.find(v);
        let base = self.base[root as usize];
        (self.size[root as usize] > 1 && base != UNSET).then(|| base + off as i64)
    }

    /// For `v` in a set with no place yet: the set's span in units, its
    /// alignment, and `v`'s offset from the span's start.
    pub fn unplaced_span(&mut self, v: Value) -> Option<(u32, u8, u32)> {
        let (root, off) = self.find(v);
        let r = root as usize;
        (self.size[r] > 1 && self.base[r] == UNSET).then(|| {
            (
                (self.high[r] - self.low[r]) as u32,
                self.align[r],
                (off - self.low[r]) as u32,
            )
        })
    }

    /// `v` was placed at global unit `unit`: its set sits there if it had
    /// no place yet.
    pub fn placed(&mut self, v: Value, unit: u32) {
        let (root, off) = self.find(v);
        let r = root as usize;
        if self.size[r] > 1 && self.base[r] == UNSET {
            self.base[r] = unit as i64 - off as i64;
        }
    }
}

/// The affinity sets of a shader about to be allocated: each phi with its
/// operands (except one still live after the phi: it interferes), each
/// collect with its operands at their offsets in the group, each split
/// with its vector at its lane's offset, each copy in `related` with its
/// source. Values in different files are never joined.
pub(super) fn build<O: Opcode>(
    s: &Shader<'_, O>,
    vals: &[Val],
    live: &Liveness,
    phis: &[Inst],
    related: &[Inst],
) -> Affinity {
    let mut a = Affinity::new(vals.iter().map(|v| (v.units as u32, v.class.align)));
    let file = |v: Value| vals[v.index()].class.file;
    let units = |v: Value| vals[v.index()].units as i32;
    for &i in phis {
        let d = s.inst(i);
        let (Some(r), Some(b)) = (d.result, d.block) else {
            continue;
        };
        for &v in d.args.iter() {
            if file(v) == file(r)
                && units(v) == units(r)
                && live.live_in(b).binary_search(&v).is_err()
            {
                a.join(r, v, 0);
            }
        }
    }
    for &i in related {
        let d = s.inst(i);
        let Some(r) = d.result else { continue };
        match d.op {
            Op::Collect => {
                let mut at = 0;
                for &v in d.args.iter() {
                    if file(v) == file(r) {
                        a.join(r, v, at);
                    }
                    at += units(v);
                }
            }
            Op::Split { lane } => {
                if let Some(&v) = d.args.first()
                    && file(v) == file(r)
                {
                    a.join(v, r, i32::from(lane) * units(r));
                }
            }
            _ => {
                if let Some(&v) = d.args.first()
                    && file(v) == file(r)
                    && units(v) == units(r)
                {
                    a.join(v, r, 0);
                }
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_compose_through_joins() {
        let mut a = Affinity::new([(1, 1); 4].into_iter());
        // %1 two units after %0, %3 one unit after %2, %2 one after %1.
        assert!(a.join(Value(0), Value(1), 2));
        assert!(a.join(Value(2), Value(3), 1));
        assert!(a.join(Value(1), Value(2), 1));
        // Another distance between members of one set is refused.
        assert!(!a.join(Value(0), Value(3), 1));
        assert!(a.join(Value(0), Value(3), 4));
        assert_eq!(a.unplaced_span(Value(3)), Some((5, 1, 4)));
        a.placed(Value(2), 10);
        assert_eq!(a.preferred(Value(0)), Some(7));
        assert_eq!(a.preferred(Value(3)), Some(11));
        // A later placement elsewhere does not move the set.
        a.placed(Value(1), 20);
        assert_eq!(a.preferred(Value(1)), Some(9));
    }
}
