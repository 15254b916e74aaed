//! A bounded least-recently-used map: the storage of the L3 cache.
//!
//! Entries live in a slab (`Vec`) threaded onto a doubly linked recency
//! list by index, and a hash map finds a key's slot. Every operation is
//! O(1); the slab never grows past the capacity because a full map reuses
//! the evicted entry's slot for the new one.

use std::collections::HashMap;
use std::hash::Hash;
use std::num::NonZeroUsize;

use crate::hash::FxBuildHasher;

/// Slot index meaning "no neighbour".
const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Node<K, V> {
    key: K,
    value: V,
    /// Next more recently used entry.
    newer: usize,
    /// Next less recently used entry.
    older: usize,
}

/// A map holding at most `capacity` entries, evicting the least recently
/// used one to make room.
///
/// ```
/// use std::num::NonZeroUsize;
/// use lathe_variants::LruMap;
///
/// let mut map = LruMap::new(NonZeroUsize::new(2).unwrap());
/// map.insert("a", 1);
/// map.insert("b", 2);
/// map.get(&"a"); // "a" is now the most recently used
/// assert_eq!(map.insert("c", 3), Some(("b", 2))); // so "b" goes
/// assert_eq!(map.len(), 2);
/// ```
#[derive(Debug)]
pub struct LruMap<K, V> {
    index: HashMap<K, usize, FxBuildHasher>,
    nodes: Vec<Node<K, V>>,
    /// Most recently used slot.
    newest: usize,
    /// Least recently used slot: the next to evict.
    oldest: usize,
    capacity: NonZeroUsize,
}

impl<K: Hash + Eq + Clone, V> LruMap<K, V> {
    /// An empty map that will hold at most `capacity` entries.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            index: HashMap::default(),
            nodes: Vec::new(),
            newest: NIL,
            oldest: NIL,
            capacity,
        }
    }

    /// The most entries the map will hold.
    pub fn capacity(&self) -> usize {
        self.capacity.get()
    }

    /// How many entries the map holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the map holds no entry.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `key` is present, without changing its recency.
    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// The value for `key`, without changing its recency.
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.index.get(key).map(|&slot| &self.nodes[slot].value)
    }

    /// The value for `key`, marking it most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let slot = *self.index.get(key)?;
        self.make_newest(slot);
        Some(&self.nodes[slot].value)
    }

    /// Inserts `key` as the most recently used entry. Replaces the value of
    /// an existing key; otherwise, when the map is full, evicts the least
    /// recently used entry and returns it.
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        if let Some(&slot) = self.index.get(&key) {
            self.nodes[slot].value = value;
            self.make_newest(slot);
            return None;
        }
        if self.nodes.len() < self.capacity.get() {
            let slot = self.nodes.len();
            self.nodes.push(Node {
                key: key.clone(),
                value,
                newer: NIL,
                older: NIL,
            });
            self.index.insert(key, slot);
            self.push_newest(slot);
            return None;
        }
        // Full: recycle the oldest slot for the new entry.
        let slot = self.oldest;
        self.unlink(slot);
        let node = &mut self.nodes[slot];
        let old_key = std::mem::replace(&mut node.key, key.clone());
        let old_value = std::mem::replace(&mut node.value, value);
        self.index.remove(&old_key);
        self.index.insert(key, slot);
        self.push_newest(slot);
        Some((old_key, old_value))
    }

    /// Entries from most to least recently used.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        let mut slot = self.newest;
        std::iter::from_fn(move || {
            let node = self.nodes.get(slot)?;
            slot = node.older;
            Some((&node.key, &node.value))
        })
    }

    fn make_newest(&mut self, slot: usize) {
        if slot != self.newest {
            self.unlink(slot);
            self.push_newest(slot);
        }
    }

    /// Detaches `slot` from the recency list, leaving it dangling.
    fn unlink(&mut self, slot: usize) {
        let Node { newer, older, .. } = self.nodes[slot];
        match newer {
            NIL => self.newest = older,
            n => self.nodes[n].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            o => self.nodes[o].newer = newer,
        }
    }

    /// Links a detached `slot` in as the most recently used entry.
    fn push_newest(&mut self, slot: usize) {
        let previous = self.newest;
        self.nodes[slot].newer = NIL;
        self.nodes[slot].older = previous;
        match previous {
            NIL => self.oldest = slot,
            p => self.nodes[p].newer = slot,
        }
        self.newest = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn cap(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).expect("test capacities are non-zero")
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut map = LruMap::new(cap(3));
        assert_eq!(map.insert(1, 'a'), None);
        assert_eq!(map.insert(2, 'b'), None);
        assert_eq!(map.insert(3, 'c'), None);
        assert_eq!(map.get(&1), Some(&'a'));
        assert_eq!(map.insert(4, 'd'), Some((2, 'b')));
        assert_eq!(map.insert(5, 'e'), Some((3, 'c')));
        assert_eq!(
            map.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            vec![5, 4, 1]
        );
    }

    #[test]
    fn peek_does_not_refresh() {
        let mut map = LruMap::new(cap(2));
        map.insert(1, ());
        map.insert(2, ());
        assert_eq!(map.peek(&1), Some(&()));
        assert_eq!(map.insert(3, ()), Some((1, ())));
    }

    #[test]
    fn replacing_a_value_refreshes_without_evicting() {
        let mut map = LruMap::new(cap(2));
        map.insert(1, 10);
        map.insert(2, 20);
        assert_eq!(map.insert(1, 11), None);
        assert_eq!(map.len(), 2);
        assert_eq!(map.insert(3, 30), Some((2, 20)));
        assert_eq!(map.peek(&1), Some(&11));
    }

    #[test]
    fn capacity_one_keeps_the_newest() {
        let mut map = LruMap::new(cap(1));
        map.insert('x', 1);
        assert_eq!(map.insert('y', 2), Some(('x', 1)));
        assert!(map.contains(&'y'));
        assert!(!map.contains(&'x'));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Get(u8),
        Insert(u8, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12).prop_map(Op::Get),
            (0u8..12, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        ]
    }

    proptest! {
        /// The map agrees with a naive model (a recency-ordered deque) on
        /// every result, every eviction and the final order.
        #[test]
        fn matches_naive_model(capacity in 1usize..6, ops in proptest::collection::vec(op(), 0..200)) {
            let mut map = LruMap::new(cap(capacity));
            // Front = most recently used.
            let mut model: VecDeque<(u8, u32)> = VecDeque::new();
            for op in ops {
                match op {
                    Op::Get(k) => {
                        let expected = model.iter().position(|e| e.0 == k).map(|i| {
                            let e = model.remove(i).expect("position is in range");
                            model.push_front(e);
                            e.1
                        });
                        prop_assert_eq!(map.get(&k).copied(), expected);
                    }
                    Op::Insert(k, v) => {
                        let evicted = if let Some(i) = model.iter().position(|e| e.0 == k) {
                            model.remove(i);
                            None
                        } else if model.len() == capacity {
                            model.pop_back()
                        } else {
                            None
                        };
                        model.push_front((k, v));
                        prop_assert_eq!(map.insert(k, v), evicted);
                    }
                }
                prop_assert!(map.len() <= capacity);
                prop_assert_eq!(map.len(), model.len());
            }
            let order: Vec<(u8, u32)> = map.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(order, model.into_iter().collect::<Vec<_>>());
        }
    }
}
