//! Quiver's SPARQL engine.
//!
//! A query flows `parse (spargebra) → compile and plan (compile/, planner/) into the
//! operator tree (operator/) → execute (exec/, one file per operator) → results
//! (engine/, results/)`. Basic graph patterns
//! run as graph exploration over the store's (vertex, predicate, direction) index, in the
//! order a cost-based planner chooses (or a user plan, `plan_file.rs`); the other
//! operators work on the same columnar id tables ([`table`]). Every operator of a running
//! query shares one execution context ([`context`]: deadline, cancellation, recorded
//! errors) and one memory budget ([`memory`]), which its loops check and charge as rows
//! grow.

pub mod bgp;
pub mod cache;
pub mod compile;
pub mod context;
pub mod dataset;
pub mod degree;
pub mod describe;
pub mod device;
pub mod edge_checks;
pub mod engine;
pub mod error;
pub mod exec;
pub mod explain;
pub mod extreme_values;
mod fuse;
pub mod memory;
pub mod nesting;
pub mod operands;
pub mod operator;
pub mod partitions;
pub mod passing_ids;
pub mod plan_file;
pub mod planner;
pub mod query_shapes;
mod reparse;
pub mod results;
mod row_terms;
pub mod select_star;
pub mod service;
pub mod size_free;
mod statistics_counts;
pub mod step;
mod syntax_error;
pub mod table;
mod term_keys;
mod text_tokens;
pub mod top_rows;
pub mod update;

/// GROUP BY's aggregates and profile, where other crates have always found them.
pub mod group {
    pub use crate::exec::group::{group, GroupProfile};
    pub use crate::operator::group::{Aggregate, Function};
}

pub use cache::{CachedQuery, QueryCache};
pub use engine::{
    parse_query, prepare, prepare_query, ExecOptions, ExecutionProfile, PrepareOptions,
    PreparedQuery, QueryResults, Solutions,
};
pub use error::QueryError;
pub use results::{results_to_vec, write_results, ResultsFormat};
pub use service::{ServiceClient, ServiceError, ServiceSolutions};
pub use update::{
    execute_insert_encoded, execute_update, parse_update, LoadHandler, NoLoad, UpdateOutcome,
};
