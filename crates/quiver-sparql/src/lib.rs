//! Quiver's SPARQL engine.
//!
//! A query flows `parse (spargebra) → compile and plan (algebra.rs, planner.rs) →
//! execute (eval.rs, explore.rs) → results (engine.rs, results.rs)`. Basic graph patterns
//! run as graph exploration over the store's (vertex, predicate, direction) index, in the
//! order a cost-based planner chooses (or a user plan, `plan_file.rs`); the other
//! operators work on the same columnar id tables ([`table`]). Every operator of a running
//! query shares one execution context ([`context`]: deadline, cancellation, recorded
//! errors) and one memory budget ([`memory`]), which its loops check and charge as rows
//! grow.

pub mod aggregate;
pub mod algebra;
pub mod bgp;
pub mod context;
pub mod dataset;
pub mod describe;
pub mod engine;
pub mod error;
pub mod eval;
pub mod explain;
pub mod explore;
mod fuse;
pub mod group;
mod intersect;
mod join;
pub mod memory;
pub mod nesting;
pub mod path;
pub mod plan_file;
pub mod planner;
pub mod results;
pub mod scope;
pub mod step;
mod step_io;
pub mod table;
mod top_k;
pub mod update;

pub use engine::{
    prepare, ExecOptions, ExecutionProfile, PrepareOptions, PreparedQuery, QueryResults, Solutions,
};
pub use error::QueryError;
pub use results::{write_results, ResultsFormat};
pub use update::parse_update;
