//! The blocks of one file that have arrived, as disjoint half-open ranges of
//! block indices. Memory and time grow with the ranges present, never with
//! the size a peer announced: a file announced at a petabyte costs nothing
//! until its blocks arrive (README.md, "Limits").

use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub(super) struct DoneRanges {
    /// start -> end, disjoint and never touching (touching ones are merged).
    ranges: BTreeMap<u64, u64>,
    count: u64,
}

impl DoneRanges {
    /// Marks block `i`; true if it was not marked before.
    pub fn mark(&mut self, i: u64) -> bool {
        if self.contains(i) {
            return false;
        }
        let end = i + 1;
        let before = self
            .ranges
            .range(..i)
            .next_back()
            .map(|(&s, &e)| (s, e))
            .filter(|&(_, e)| e == i);
        let after = self.ranges.get(&end).copied();
        match (before, after) {
            (Some((s, _)), Some(e2)) => {
                self.ranges.remove(&end);
                self.ranges.insert(s, e2);
            }
            (Some((s, _)), None) => {
                self.ranges.insert(s, end);
            }
            (None, Some(e2)) => {
                self.ranges.remove(&end);
                self.ranges.insert(i, e2);
            }
            (None, None) => {
                self.ranges.insert(i, end);
            }
        }
        self.count += 1;
        true
    }

    /// Marks every block below `blocks`.
    pub fn mark_all(&mut self, blocks: u64) {
        self.ranges.clear();
        if blocks > 0 {
            self.ranges.insert(0, blocks);
        }
        self.count = blocks;
    }

    pub fn contains(&self, i: u64) -> bool {
        self.ranges
            .range(..=i)
            .next_back()
            .is_some_and(|(_, &e)| i < e)
    }

    /// Blocks marked.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Ranges held (what the bookkeeping costs).
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The ranges of `0..blocks` not marked.
    pub fn missing(&self, blocks: u64) -> Vec<[u64; 2]> {
        let mut out = Vec::new();
        let mut at = 0u64;
        for (&s, &e) in &self.ranges {
            if s >= blocks {
                break;
            }
            if s > at {
                out.push([at, s]);
            }
            at = e;
        }
        if at < blocks {
            out.push([at, blocks]);
        }
        out
    }

    /// The marked ranges.
    #[cfg(test)]
    pub fn present(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&s, &e)| (s, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_neighbours_and_lists_the_gaps() {
        let mut d = DoneRanges::default();
        for i in [5, 3, 4, 9, 0] {
            assert!(d.mark(i));
        }
        assert!(!d.mark(4));
        assert_eq!(d.count(), 5);
        assert_eq!(d.len(), 3);
        assert_eq!(d.missing(12), vec![[1, 3], [6, 9], [10, 12]]);
        assert!(d.contains(3) && d.contains(9) && !d.contains(6) && !d.contains(1 << 40));
    }

    #[test]
    fn a_huge_file_costs_nothing_until_blocks_arrive() {
        let d = DoneRanges::default();
        assert_eq!(d.missing(1 << 40), vec![[0, 1 << 40]]);
        let mut d = DoneRanges::default();
        d.mark_all(1 << 40);
        assert!(d.missing(1 << 40).is_empty());
        assert_eq!(d.count(), 1 << 40);
    }

    proptest! {
        #[test]
        fn agrees_with_a_plain_set(marks in proptest::collection::vec(0u64..200, 0..300)) {
            let mut d = DoneRanges::default();
            let mut set = std::collections::BTreeSet::new();
            for m in marks {
                prop_assert_eq!(d.mark(m), set.insert(m));
            }
            prop_assert_eq!(d.count(), set.len() as u64);
            let missing: Vec<u64> = d.missing(200).iter().flat_map(|&[a, b]| a..b).collect();
            let expect: Vec<u64> = (0..200).filter(|i| !set.contains(i)).collect();
            prop_assert_eq!(missing, expect);
            // Never two ranges that touch.
            let v: Vec<(u64, u64)> = d.present().collect();
            prop_assert!(v.windows(2).all(|w| w[0].1 < w[1].0));
        }
    }
}
