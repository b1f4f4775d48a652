//! The order of ORDER BY as one integer per term id ([`SortKey`]), so that ORDER BY,
//! top-k, MIN and MAX compare integers instead of decoded terms (`exec/sort_key.rs` keys
//! a query's columns with them; a cluster's worker keys a top-k's rows with them,
//! `top_rows.rs`).
//!
//! The dictionary's sorted part numbers terms in the byte order of their encoding (tag,
//! then text; `quiver_model::term`). For blank nodes, IRIs and simple literals
//! (`xsd:string`) that is exactly the order of ORDER BY, and those three kinds hold the
//! base ids below the first language-tagged literal's ([`ordered_below`]): such an id `x`
//! is key `(x + 1) << 64`, computed without decoding. Every other id is decoded once
//! ([`keys_of_terms`]).

use oxrdf::vocab::xsd;
use oxrdf::Term;
use quiver_model::term::{encode_term, TAG_LANG};
use quiver_model::Id;
use rustc_hash::FxHashMap;

use crate::error::QueryError;

/// An ORDER BY key of one term.
pub(crate) type SortKey = u128;

/// The keys of `ids` (none below the dictionary's `ordered_below`, none UNBOUND), each
/// decoded once: in ascending order from `store`'s dictionary with a cursor (one bucket
/// read for all the ids it holds, not one per id), and with `computed` where the store
/// does not hold the id. Terms of the kinds that sort by encoding are placed among the
/// dictionary's sorted terms, other literals ranked among themselves after them, and an id
/// no one knows sorts as UNBOUND does (key 0). `tick(i)` runs before the `i`th id (the
/// query's checks).
pub(crate) fn keys_of_terms(
    store: &quiver_store::Store,
    ids: impl IntoIterator<Item = Id>,
    computed: impl Fn(Id) -> Option<Term>,
    mut tick: impl FnMut(usize) -> Result<(), QueryError>,
) -> Result<FxHashMap<Id, SortKey>, QueryError> {
    let dictionary = store.dictionary();
    let mut ids: Vec<Id> = ids.into_iter().collect();
    ids.sort_unstable();
    let held = store.terms();
    let mut cursor = dictionary.cursor();
    // Terms of the kinds that sort by encoding, placed among the sorted terms, and the
    // other literals, ranked among themselves.
    let mut placed: Vec<(u64, Vec<u8>, Id)> = Vec::new();
    let mut ranked: Vec<(Option<Term>, Id)> = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        tick(i)?;
        let term = match u64::from(id) < held {
            true => cursor
                .term(id)
                .and_then(|bytes| quiver_model::decode_term(bytes).ok())
                .map(|term| term.to_term()),
            false => computed(id),
        };
        match &term {
            Some(term) if sorts_by_encoding(term) => {
                let mut bytes = Vec::new();
                encode_term(term.as_ref(), &mut bytes);
                placed.push((dictionary.rank(&bytes), bytes, id));
            }
            _ => ranked.push((term, id)),
        }
    }
    let mut others =
        FxHashMap::with_capacity_and_hasher(placed.len() + ranked.len(), Default::default());
    placed.sort_unstable();
    let mut previous: Option<u64> = None;
    let mut next = 0u128;
    for (rank, _, id) in placed {
        if previous != Some(rank) {
            previous = Some(rank);
            next = u128::from(rank) << 64;
        }
        next += 1;
        others.insert(id, next);
    }
    // Each literal's value parsed once, not at each comparison.
    let mut order: Vec<(Option<quiver_expr::OrderedTerm<'_>>, Id)> = ranked
        .iter()
        .map(|(term, id)| (term.as_ref().map(quiver_expr::OrderedTerm::new), *id))
        .collect();
    order.sort_unstable();
    // After every key placed among the sorted terms, whose ranks are at most the first
    // language-tagged literal's (which is above `ordered_below` in a cluster's share
    // of a dictionary, whose ids do not sort: there `ordered_below` is 0).
    let start = (u128::from(dictionary.rank(&[TAG_LANG])) + 1) << 64;
    let mut rank = 0u128;
    for (i, &(term, id)) in order.iter().enumerate() {
        if term.is_none() {
            // Not a term: sorts as UNBOUND does.
            others.insert(id, 0);
            continue;
        }
        // Only identical terms compare equal.
        if i > 0 && order[i - 1].0.map(|t| t.term()) != term.map(|t| t.term()) {
            rank += 1;
        }
        others.insert(id, start + rank);
    }
    Ok(others)
}

/// The ids below which ids sort as their terms do in `store`'s dictionary: its sorted
/// part, up to the first language-tagged literal (0 for a cluster's share of a
/// dictionary, whose ids do not sort).
pub(crate) fn ordered_below(store: &quiver_store::Store) -> Id {
    let dictionary = store.dictionary();
    Id::try_from(dictionary.rank(&[TAG_LANG]).min(dictionary.ordered_below())).unwrap_or(Id::MAX)
}

/// Whether a term is of a kind whose encoding sorts like ORDER BY: blank node, IRI or
/// simple literal.
fn sorts_by_encoding(term: &Term) -> bool {
    match term {
        Term::BlankNode(_) | Term::NamedNode(_) => true,
        Term::Literal(literal) => literal.language().is_none() && literal.datatype() == xsd::STRING,
        Term::Triple(_) => false,
    }
}

/// The keys a worker that holds a copy of the whole store's dictionary (each partition of a
/// store cut into partitions) gives the ids of some columns: an id below `ordered_below` by
/// id, every other one decoded once from its dictionary and ranked by its term. An id it
/// cannot rank (UNBOUND, one the dictionary does not hold, one that is no term) has none.
pub(crate) struct HeldKeys {
    ordered_below: Id,
    others: FxHashMap<Id, SortKey>,
}

impl HeldKeys {
    pub(crate) fn of<'c>(
        store: &quiver_store::Store,
        ordered_below: Id,
        columns: impl IntoIterator<Item = &'c [Id]>,
    ) -> Self {
        let held = store.terms();
        let mut decoded: rustc_hash::FxHashSet<Id> = Default::default();
        for column in columns {
            decoded.extend(column.iter().copied().filter(|&id| {
                id != crate::table::UNBOUND && id >= ordered_below && u64::from(id) < held
            }));
        }
        // No check can stop it: the ticks always pass.
        let others = keys_of_terms(store, decoded, |_| None, |_| Ok(())).unwrap_or_default();
        Self {
            ordered_below,
            others,
        }
    }

    /// The key of `id`, if it can be ranked.
    pub(crate) fn key(&self, id: Id) -> Option<SortKey> {
        if id < self.ordered_below {
            Some((u128::from(id) + 1) << 64)
        } else {
            // Key 0: not a term, which sorts as unbound.
            self.others.get(&id).copied().filter(|&key| key != 0)
        }
    }
}
