//! The integration tests of `quiver-sparql`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-sparql --release --test all FILE::`.

mod naive;
mod support;

mod aggregates;
mod aggregates_differential;
mod analytics_differential;
mod bsbm;
mod cache;
mod csv;
mod dataset;
mod differential;
mod estimated_work;
mod exists;
mod exists_alone;
mod exists_filter;
mod extremes;
mod filter_memo;
mod filter_per_id;
mod graph_candidates;
mod group_limit;
mod group_pairs;
mod index_aggregate;
mod join_unbound_keys;
mod limits;
mod lubm;
mod minus_by_length;
mod modules;
mod nesting;
mod paths;
mod paths_differential;
mod plan_order;
mod query_shapes;
mod reasoning;
mod results_stream;
mod select_expressions;
mod select_star;
mod service;
mod syntax_errors;
mod triple_terms;
mod union_seeding;
mod update;
mod update_model;
mod variable_equality;
