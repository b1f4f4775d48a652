//! Constant partner lists as bit sets: a list that many rows check their lists against (a
//! class's instances) answers each check with one bit, once enough lookups have paid for
//! building it. An intersection builds one for itself (`intersect.rs`); a parallel run
//! builds those of all its steps once, for all its morsels ([`PartnerSets`]).

use quiver_model::{Id, PredId};
use quiver_store::Direction;

use crate::bgp::{Bgp, Node, Pred};
use crate::context::ExecContext;
use crate::memory::Reservation;
use crate::step::Step;

/// The bit sets of the constant partner lists of the steps of a parallel run, built once
/// before its morsels start: each morsel would otherwise look up enough elements to build
/// one of its own, and a set's cost is its largest id's, not the morsel's rows (LUBM-100's
/// graduate courses against 252 K students' courses, split in 32 morsels: 24 ms on one
/// thread, 65 ms summed in parallel).
pub(crate) struct PartnerSets {
    sets: Vec<((Id, PredId, Direction), BitSet)>,
}

impl PartnerSets {
    /// The sets of `steps`' intersections with a constant partner whose list is worth a set
    /// ([`BitSet::worth_building`]) for `rows` lookups (the run's input rows, a lower
    /// bound when each finds a list), as far as `memory` grants them.
    pub(crate) fn of(
        bgp: &Bgp,
        steps: &[Step],
        rows: usize,
        ctx: &ExecContext<'_>,
        memory: &mut Reservation<'_>,
    ) -> Self {
        let mut sets: Vec<((Id, PredId, Direction), BitSet)> = Vec::new();
        for step in steps {
            let Some((other, direction)) = step
                .partner
                .map(|(p, direction)| (&bgp.patterns[p], direction))
            else {
                continue;
            };
            let source = match direction {
                Direction::Out => other.subject,
                Direction::In => other.object,
            };
            let (Node::Const(b), Pred::Const(q)) = (source, other.predicate) else {
                continue;
            };
            let key = (b, q, direction);
            if sets.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let list = ctx.graph.get(b, q, direction);
            if let Some(words) = BitSet::worth_building(list, rows) {
                if memory.try_grow_optional(words * 8) {
                    sets.push((key, BitSet::of(list, words)));
                }
            }
        }
        Self { sets }
    }

    pub(super) fn get(&self, b: Id, q: PredId, direction: Direction) -> Option<&BitSet> {
        let key = (b, q, direction);
        self.sets
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, set)| set)
    }
}

/// A set of ids as one bit per id up to the largest.
pub(super) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// Lists shorter than this stay lists.
    pub(super) const MIN_LIST: usize = 4096;

    /// Lookups (elements of the rows' lists) after which a set may pay, at least.
    pub(super) const MIN_SPENT: usize = 16_384;

    /// The words of a set of `list` when it is long, dense enough (at most two words per
    /// element: the set is then at most four times the list's size) and the rows have
    /// looked up (`spent`) at least a sixteenth as many elements as it holds, and
    /// [`Self::MIN_SPENT`]. Lookups that cluster cost little, so a set is only built for
    /// many of them: on LUBM-100, names shared across all universities against the
    /// undergraduates (a08) build one, a department's professors (q6) or a student's
    /// courses (opt1) do not.
    pub(super) fn worth_building(list: &[Id], spent: usize) -> Option<usize> {
        let words = *list.last()? as usize / 64 + 1;
        let enough = spent >= (list.len() / 16).max(Self::MIN_SPENT);
        (list.len() >= Self::MIN_LIST && enough && words <= 2 * list.len()).then_some(words)
    }

    /// The set of `list`'s ids, in `words` words (enough for its largest).
    pub(super) fn of(list: &[Id], words: usize) -> Self {
        let mut set = Self {
            words: vec![0; words],
        };
        for &x in list {
            set.words[x as usize / 64] |= 1 << (x % 64);
        }
        set
    }

    /// The ids of `left` in the set, into `out`.
    #[inline]
    pub(super) fn keep(&self, left: &[Id], out: &mut Vec<Id>) {
        out.clear();
        out.extend(left.iter().copied().filter(|&x| self.contains(x)));
    }

    #[inline]
    pub(super) fn contains(&self, x: Id) -> bool {
        self.words
            .get(x as usize / 64)
            .is_some_and(|word| word & (1 << (x % 64)) != 0)
    }
}
