//! Identifiers of terms and predicates.
//!
//! Every RDF term (IRI, blank node, literal) gets a dense vertex id in `0..terms`, assigned
//! in the byte order of its encoding (so ids sort like terms of one kind). Ids are `u32` by
//! default, which keeps LUBM-scale stores compact (4 bytes per neighbour); the `wide-ids`
//! cargo feature makes them `u64` for datasets beyond 2^32 distinct terms. Snapshots record
//! the width, so a store is never read with the wrong one.
//!
//! Predicates (and the classes of `rdf:type`) also live in small dense id spaces of their
//! own, as in Wukong: index keys then carry a small predicate number, not a vertex id.

/// A vertex (term) id.
#[cfg(not(feature = "wide-ids"))]
pub type Id = u32;
/// A vertex (term) id.
#[cfg(feature = "wide-ids")]
pub type Id = u64;

/// Bytes in an [`Id`]; recorded in snapshots.
pub const ID_BYTES: usize = std::mem::size_of::<Id>();

/// A predicate id, dense in `0..predicates`.
pub type PredId = u32;

/// A class id (an object of `rdf:type`), dense in `0..classes`.
pub type ClassId = u32;

/// The number of ids a dictionary can assign: `0..MAX_TERMS`. The largest [`Id`] is never
/// assigned, since it stands for "no term" (a query's unbound value, the loader's default
/// graph): a term given it would read as that.
pub const MAX_TERMS: u64 = Id::MAX as u64;

/// No id is left for a new term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "term ids exhausted: a store holds at most {MAX_TERMS} terms (the wide-ids build holds more)"
)]
pub struct IdsExhausted;

/// The id of the term at `position` (a count or position among terms), failing when it
/// would reach the reserved largest id.
pub fn term_id(position: u64) -> Result<Id, IdsExhausted> {
    if position < MAX_TERMS {
        Id::try_from(position).map_err(|_| IdsExhausted)
    } else {
        Err(IdsExhausted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_id_is_never_assigned() {
        assert_eq!(term_id(0), Ok(0));
        assert_eq!(term_id(MAX_TERMS - 1), Ok(Id::MAX - 1));
        assert_eq!(term_id(MAX_TERMS), Err(IdsExhausted));
        assert_eq!(term_id(u64::MAX), Err(IdsExhausted));
    }
}
