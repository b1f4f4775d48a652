//! The integration tests of `quiver-cli`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-cli --release --test all FILE::`.

mod serve_support;
mod temp_dir;

mod bench_bsbm_cli;
mod bench_cli;
mod bench_kv_cli;
mod cli_limits;
mod cluster_cli;
mod console_cli;
mod device_cli;
mod gen_cli;
mod load_cli;
mod many_graphs_cli;
mod partition_cli;
mod peers_dry_run;
mod query_cli;
mod reason_cli;
mod serve_clients;
mod serve_device;
mod serve_graph_store;
mod serve_hostile;
mod serve_http;
mod serve_ops;
mod serve_service;
mod serve_w3c;
mod serve_writable;
mod text_cli;
mod update_cli;
