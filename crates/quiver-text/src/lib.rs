//! Quiver's full-text index: the string literals of a store, searchable by words.
//!
//! Built on tantivy (an inverted index with BM25 scoring, Snowball stemmers and a query
//! grammar: what Jena's Lucene-based `jena-text` offers, in Rust), over the store's
//! dictionary rather than its triples: a literal is one document, keyed by its term id, so
//! a query's text pattern binds literal ids that graph exploration continues from. See
//! [`index`] for how the index stays in step with updates and is saved beside the
//! snapshot, [`schema`] for the fields and analyzers, [`query`] for the query language.
//! The query engine reaches it through [`quiver_store::TextSearch`].

mod collect;
pub mod error;
pub mod index;
pub mod query;
pub mod schema;

pub use error::TextError;
pub use index::{BuildReport, TextIndex, TEXT_DIR};
