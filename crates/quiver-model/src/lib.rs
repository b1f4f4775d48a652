//! Quiver's data model: term and predicate ids, the byte encoding of RDF terms, the
//! front-coded dictionary, and the columns (owned or memory-mapped) that hold them.

mod appended_index;
pub mod column;
pub mod dictionary;
pub mod fresh_pages;
pub mod id;
pub mod memory;
pub mod nesting;
pub mod phases;
pub mod plain_iri;
pub mod prefetch;
pub mod prefixes;
pub mod term;
mod term_filter;
pub mod wire;

pub use column::{Column, ColumnBuffer};
pub use dictionary::{Dictionary, DictionaryBuilder};
pub use id::{term_id, ClassId, Id, IdsExhausted, PredId, ID_BYTES, MAX_TERMS};
pub use term::{decode_term, encode_term, DecodedTerm};
