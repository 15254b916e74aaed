//! Leaf selection: a decision tree over the pattern bits of a tree's
//! leaves. The same tree drives the runtime decoder and the generated
//! nested `match` of `isa!`.

use crate::model::{EncId, GenRange, Isa};

/// A node of a [`DecisionTree`].
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum Node {
    /// Branch on `bits` bits starting at `low`; `children[value]`.
    Switch {
        low: u32,
        bits: u32,
        children: Vec<usize>,
    },
    /// Few enough candidates to test one by one (mask, match, generations).
    Leaves(Vec<usize>),
}

/// One candidate leaf: its fixed bits and generations.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Candidate {
    pub enc: EncId,
    pub mask: u64,
    pub match_bits: u64,
    pub generation: GenRange,
    /// Candidates (indices) that a declared `overlaps` lets match some of
    /// the same words; a word matching this one and a partner decodes to
    /// nothing (Mesa's "bitset conflict").
    pub partners: Vec<usize>,
}

impl Candidate {
    /// Whether this candidate matches `word` at `generation`.
    #[inline]
    pub fn matches(&self, word: u64, generation: u32) -> bool {
        (word & self.mask) == self.match_bits && self.generation.contains(generation)
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct DecisionTree {
    pub nodes: Vec<Node>,
    pub candidates: Vec<Candidate>,
}

/// Widest switch a node may have (2^8 children).
const MAX_SWITCH_BITS: u32 = 8;

impl DecisionTree {
    pub fn build(candidates: Vec<Candidate>) -> DecisionTree {
        let mut t = DecisionTree {
            nodes: Vec::new(),
            candidates,
        };
        let all: Vec<usize> = (0..t.candidates.len()).collect();
        t.build_node(all, 0);
        t
    }

    fn build_node(&mut self, cands: Vec<usize>, used: u64) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::Leaves(Vec::new()));
        if cands.len() <= 1 {
            self.nodes[id] = Node::Leaves(cands);
            return id;
        }
        let common = cands
            .iter()
            .fold(u64::MAX, |m, &c| m & self.candidates[c].mask)
            & !used;
        let distinguishing = {
            let first = self.candidates[cands[0]].match_bits;
            cands
                .iter()
                .fold(0, |d, &c| d | (self.candidates[c].match_bits ^ first))
        };
        if common & distinguishing != 0 {
            // Branch on the lowest run of bits fixed in every candidate that
            // tells some of them apart.
            let useful = common & distinguishing;
            let low = useful.trailing_zeros();
            let run = (common >> low).trailing_ones().min(MAX_SWITCH_BITS);
            let field_mask = (((1u128 << run) - 1) as u64) << low;
            let mut parts: Vec<Vec<usize>> = vec![Vec::new(); 1 << run];
            for &c in &cands {
                let v = (self.candidates[c].match_bits & field_mask) >> low;
                parts[v as usize].push(c);
            }
            let mut children = Vec::with_capacity(parts.len());
            for p in parts {
                children.push(self.build_node(p, used | field_mask));
            }
            self.nodes[id] = Node::Switch {
                low,
                bits: run,
                children,
            };
            return id;
        }
        // No bit is fixed in all candidates: split on the bit fixed in most,
        // sending don't-care candidates both ways.
        let mut best = None;
        for bit in 0..64 {
            let m = 1u64 << bit;
            if used & m != 0 {
                continue;
            }
            let n = cands
                .iter()
                .filter(|&&c| self.candidates[c].mask & m != 0)
                .count();
            let differs = cands
                .iter()
                .any(|&c| self.candidates[c].match_bits & m != 0)
                && cands.iter().any(|&c| {
                    self.candidates[c].mask & m != 0 && self.candidates[c].match_bits & m == 0
                });
            if n > 0 && differs && best.is_none_or(|(_, bn)| n > bn) {
                best = Some((bit, n));
            }
        }
        let Some((bit, _)) = best else {
            self.nodes[id] = Node::Leaves(cands);
            return id;
        };
        let m = 1u64 << bit;
        let mut zero = Vec::new();
        let mut one = Vec::new();
        for &c in &cands {
            let cand = &self.candidates[c];
            if cand.mask & m == 0 || cand.match_bits & m == 0 {
                zero.push(c);
            }
            if cand.mask & m == 0 || cand.match_bits & m != 0 {
                one.push(c);
            }
        }
        if zero.len() == cands.len() && one.len() == cands.len() {
            self.nodes[id] = Node::Leaves(cands);
            return id;
        }
        let z = self.build_node(zero, used | m);
        let o = self.build_node(one, used | m);
        self.nodes[id] = Node::Switch {
            low: bit,
            bits: 1,
            children: vec![z, o],
        };
        id
    }

    /// The leaf matching `word` at generation `gen`, if any.
    #[inline]
    pub fn lookup(&self, word: u64, generation: u32) -> Option<EncId> {
        let mut n = 0;
        loop {
            match &self.nodes[n] {
                Node::Switch {
                    low,
                    bits,
                    children,
                } => {
                    let v = (word >> low) & ((1u64 << bits) - 1);
                    n = children[v as usize];
                }
                Node::Leaves(list) => {
                    let c = list
                        .iter()
                        .map(|&c| &self.candidates[c])
                        .find(|c| c.matches(word, generation))?;
                    // Only declared overlaps can match too (the checker
                    // rejects any other); such a word is ambiguous.
                    let ambiguous = c
                        .partners
                        .iter()
                        .any(|&p| self.candidates[p].matches(word, generation));
                    return (!ambiguous).then_some(c.enc);
                }
            }
        }
    }
}

/// Builds the decision tree for every tree root of `isa`.
pub fn build_decoders(isa: &Isa) -> Vec<(EncId, DecisionTree)> {
    let roots: Vec<EncId> = (0..isa.encodings.len())
        .filter(|&e| isa.encodings[e].parent.is_none())
        .collect();
    roots
        .into_iter()
        .map(|r| {
            let leaves: Vec<EncId> = isa.leaves(r).collect();
            let cands = leaves
                .iter()
                .map(|&l| {
                    let e = &isa.encodings[l];
                    let partners = leaves
                        .iter()
                        .enumerate()
                        .filter(|&(_, &o)| {
                            let f = &isa.encodings[o];
                            o != l
                                && (e.match_bits ^ f.match_bits) & e.mask & f.mask == 0
                                && !e.generation.intersect(f.generation).is_empty()
                                && isa.overlap_declared(l, o)
                        })
                        .map(|(i, _)| i)
                        .collect();
                    Candidate {
                        enc: l,
                        mask: e.mask,
                        match_bits: e.match_bits,
                        generation: e.generation,
                        partners,
                    }
                })
                .collect();
            (r, DecisionTree::build(cands))
        })
        .collect()
}
