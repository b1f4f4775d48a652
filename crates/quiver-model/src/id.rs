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

/// Converts a `u64` count or position to an [`Id`], failing when it does not fit.
pub fn id_from_u64(value: u64) -> Option<Id> {
    Id::try_from(value).ok()
}
