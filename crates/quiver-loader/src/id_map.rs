//! Where each id of a store a load adds to goes in the merged dictionary.
//!
//! The store's dictionary has a sorted part (a term's id is its rank) and the terms updates
//! appended after it. The merge gives each of them its merged id: [`IdMap`] holds one per
//! id, as the rewrite of the store's triples by subjects reads it at random. The rewrite by
//! objects runs while the new store is built, at the load's peak, so it reads
//! [`CompactIdMap`] instead, a quarter of the size: the sorted ids keep their order in the
//! merged dictionary, each moving up by the number of new terms below it, a shift that only
//! grows; it is kept per block of ids, with each id's excess over its block's shift in a
//! byte (the few ids after a long run of new terms in their block listed apart).

use quiver_model::Id;

/// The merged id of every id of an existing store.
pub(crate) struct IdMap {
    sorted: Vec<Id>,
    appended: Vec<Id>,
    base: u64,
    appended_ranks: Vec<u64>,
}

impl IdMap {
    /// `sorted[i]`: the merged id of sorted id `i`; `appended[r]`: that of the appended term
    /// of rank `r` among the appended terms, appended id `base + i` having rank
    /// `appended_ranks[i]`.
    pub(crate) fn new(
        sorted: Vec<Id>,
        appended: Vec<Id>,
        base: u64,
        appended_ranks: Vec<u64>,
    ) -> Self {
        IdMap {
            sorted,
            appended,
            base,
            appended_ranks,
        }
    }

    #[inline]
    pub(crate) fn get(&self, id: Id) -> Id {
        let id = id as u64;
        match id.checked_sub(self.base) {
            None => self.sorted[id as usize],
            Some(i) => self.appended[self.appended_ranks[i as usize] as usize],
        }
    }

    /// The same map, compacted where the sorted ids' shifts allow it.
    pub(crate) fn compact(self) -> CompactIdMap {
        let appended = self
            .appended_ranks
            .iter()
            .map(|&rank| self.appended[rank as usize])
            .collect();
        let sorted = match Shifts::of(&self.sorted) {
            Some(shifts) => Sorted::Shifts(shifts),
            None => Sorted::Ids(self.sorted),
        };
        CompactIdMap {
            sorted,
            appended,
            base: self.base,
        }
    }
}

/// Ids per block of [`Shifts`].
const BLOCK: usize = 64;

/// An excess that marks an id found in [`Shifts::exceptions`].
const EXCEPTION: u8 = u8::MAX;

/// The merged ids of the sorted ids as shifts: id `i` maps to `i + block[i / BLOCK] +
/// excess[i]`, or, where the excess is [`EXCEPTION`] (many new terms between two old ones
/// in one block), to its merged id in `exceptions`, sorted by id.
struct Shifts {
    block: Vec<Id>,
    excess: Vec<u8>,
    exceptions: Vec<(Id, Id)>,
}

impl Shifts {
    /// `None` where the merged ids are not ascending.
    fn of(merged: &[Id]) -> Option<Shifts> {
        let mut block = Vec::with_capacity(merged.len().div_ceil(BLOCK));
        let mut excess = Vec::with_capacity(merged.len());
        let mut exceptions = Vec::new();
        for (b, ids) in merged.chunks(BLOCK).enumerate() {
            let first = (b * BLOCK) as Id;
            let shift = ids[0].checked_sub(first)?;
            block.push(shift);
            for (id, &to) in (first..).zip(ids) {
                let over = to.checked_sub(id)?.checked_sub(shift)?;
                match u8::try_from(over) {
                    Ok(over) if over != EXCEPTION => excess.push(over),
                    _ => {
                        excess.push(EXCEPTION);
                        exceptions.push((id, to));
                    }
                }
            }
        }
        Some(Shifts {
            block,
            excess,
            exceptions,
        })
    }

    #[inline]
    fn get(&self, id: Id) -> Id {
        let i = id as usize;
        match self.excess[i] {
            EXCEPTION => {
                let at = self.exceptions.partition_point(|&(from, _)| from < id);
                self.exceptions[at].1
            }
            over => id + self.block[i / BLOCK] + Id::from(over),
        }
    }
}

enum Sorted {
    Shifts(Shifts),
    Ids(Vec<Id>),
}

/// [`IdMap`] in less memory (see the module's doc).
pub(crate) struct CompactIdMap {
    sorted: Sorted,
    /// The merged id of appended id `base + i`.
    appended: Vec<Id>,
    base: u64,
}

impl CompactIdMap {
    #[inline]
    pub(crate) fn get(&self, id: Id) -> Id {
        match (id as u64).checked_sub(self.base) {
            None => match &self.sorted {
                Sorted::Shifts(shifts) => shifts.get(id),
                Sorted::Ids(ids) => ids[id as usize],
            },
            Some(i) => self.appended[i as usize],
        }
    }

    /// Whether the sorted ids are held as shifts, and how many as exceptions.
    #[cfg(test)]
    fn exceptions(&self) -> Option<usize> {
        match &self.sorted {
            Sorted::Shifts(shifts) => Some(shifts.exceptions.len()),
            Sorted::Ids(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any ascending merged ids (new terms between the old ones, few or many) and any
        /// appended terms: the compact map gives every id the full map's merged id, and
        /// holds the sorted ids as shifts, those whose excess passes a byte as exceptions.
        #[test]
        fn the_compact_map_gives_the_full_maps_ids(
            gaps in proptest::collection::vec(0..300 as Id, 0..400),
            many in any::<bool>(),
            appended in 0..20usize,
        ) {
            let mut sorted = Vec::with_capacity(gaps.len());
            let mut next = 0;
            for gap in &gaps {
                // Few new terms between old ones (a byte holds every excess), or many.
                next += if many { *gap } else { gap.saturating_sub(296) };
                sorted.push(next);
                next += 1;
            }
            let base = sorted.len() as u64;
            let merged_appended: Vec<Id> = (0..appended as Id).map(|i| next + 3 * i).collect();
            let ranks: Vec<u64> = (0..appended as u64).rev().collect();
            let full = IdMap::new(sorted.clone(), merged_appended, base, ranks);
            let ids: Vec<Id> = (0..base as Id + appended as Id).collect();
            let expected: Vec<Id> = ids.iter().map(|&id| full.get(id)).collect();
            let over: usize = sorted.chunks(BLOCK).enumerate().map(|(b, block)| {
                let shift = block[0] - (b * BLOCK) as Id;
                (0..).zip(block).filter(|&(k, &to)| to - (b * BLOCK) as Id - k - shift >= 255).count()
            }).sum();
            let compact = full.compact();
            prop_assert_eq!(compact.exceptions(), Some(over));
            let got: Vec<Id> = ids.iter().map(|&id| compact.get(id)).collect();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn merged_ids_out_of_order_are_kept_whole() {
        let full = IdMap::new(vec![3, 1, 2], Vec::new(), 3, Vec::new());
        let compact = full.compact();
        assert_eq!(compact.exceptions(), None);
        assert_eq!([0, 1, 2].map(|id| compact.get(id)), [3, 1, 2]);
    }
}
