//! Constant-time slots of a sparse vertex list: which record of a sparse adjacency belongs
//! to a vertex, without a binary search.
//!
//! A partition of a store holds the records of the vertices it owns, a hashed 1/N of the
//! id space, in a sorted list; every lookup binary-searched it, one cache miss per level
//! over millions of vertices. A rank index over blocks of 64 ids (a bit per id: does the
//! list hold it; and how many the list holds before the block) gives a vertex's slot with
//! one read of 16 bytes and a population count. It costs 16 bytes per block, so it is
//! built only where the list has at least one vertex per block on average (no more than
//! four times the list's own bytes); sparser lists, such as small named graphs over a
//! large id space, keep the binary search.

use quiver_model::prefetch::prefetch_read;
use quiver_model::Id;

/// One block of 64 ids.
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    /// Bit `i`: the list holds id `64 × block + i`.
    members: u64,
    /// How many ids of the list come before the block.
    before: u64,
}

/// The rank index of one sorted, distinct vertex list.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankIndex {
    blocks: Vec<Block>,
}

impl RankIndex {
    /// The index of `list` (sorted, distinct), or `None` where it would be larger than
    /// the module says.
    pub(crate) fn build(list: &[Id]) -> Option<Self> {
        let &last = list.last()?;
        let count = last as usize / 64 + 1;
        if count > list.len() {
            return None;
        }
        let mut blocks = vec![Block::default(); count];
        for &vertex in list {
            blocks[vertex as usize / 64].members |= 1 << (vertex % 64);
        }
        let mut before = 0u64;
        for block in &mut blocks {
            block.before = before;
            before += u64::from(block.members.count_ones());
        }
        Some(Self { blocks })
    }

    /// The position of `vertex` in the list, if the list holds it.
    #[inline(always)]
    pub(crate) fn slot(&self, vertex: Id) -> Option<usize> {
        let block = self.blocks.get(vertex as usize / 64)?;
        let bit = 1u64 << (vertex % 64);
        if block.members & bit == 0 {
            return None;
        }
        Some(block.before as usize + (block.members & (bit - 1)).count_ones() as usize)
    }

    /// Hints the CPU to fetch the block [`RankIndex::slot`] reads for `vertex`.
    #[inline(always)]
    pub(crate) fn prefetch(&self, vertex: Id) {
        prefetch_read(self.blocks.as_ptr().wrapping_add(vertex as usize / 64));
    }

    /// Bytes held.
    pub(crate) fn data_bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_the_positions_in_the_list() {
        let list: Vec<Id> = (0..5000).filter(|v| v % 3 != 0 || v % 7 == 0).collect();
        let rank = RankIndex::build(&list).expect("dense enough");
        for vertex in 0..5100 {
            assert_eq!(
                rank.slot(vertex),
                list.binary_search(&vertex).ok(),
                "{vertex}"
            );
        }
    }

    #[test]
    fn a_sparse_list_gets_no_index() {
        assert!(RankIndex::build(&[]).is_none());
        assert!(RankIndex::build(&[3, 1_000_000]).is_none());
        assert!(RankIndex::build(&[63]).is_some());
    }
}
