//! The SERVICE flags of `serve`, `query`, `update` and `console`: which remote endpoints a
//! query may call, how long a call may take and how large its answer may be.
//!
//! A server calls no endpoint unless started with `--allow-service` (any) or
//! `--allow-service=HOST,HOST:PORT` (those): a query must not be able to make it reach
//! whatever its network can. The commands a user runs for themself call any endpoint
//! unless told otherwise (`--allow-service=off`, or a list).

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use quiver_federation::{Allow, FederationConfig, HttpServiceClient};
use quiver_sparql::ServiceClient;

use crate::limits;

/// Which endpoints `--allow-service` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowService {
    Any,
    Off,
    Hosts(String),
}

/// `*`, `any` or `true`: any endpoint; `off`, `none` or `false`: none; else a
/// comma-separated list of hosts (`host` or `host:port`).
pub fn parse_allow_service(text: &str) -> Result<AllowService, String> {
    let trimmed = text.trim();
    match trimmed.to_ascii_lowercase().as_str() {
        "*" | "any" | "true" => return Ok(AllowService::Any),
        "off" | "none" | "false" => return Ok(AllowService::Off),
        _ => {}
    }
    for host in trimmed.split(',').map(str::trim) {
        let valid = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:[]_".contains(c));
        if !valid {
            return Err(format!(
                "'{host}' is not a host or host:port (give --allow-service=HOST,HOST:PORT, or \
                 --allow-service alone for any host)"
            ));
        }
    }
    Ok(AllowService::Hosts(trimmed.to_owned()))
}

#[derive(Args, Debug, Clone, Default)]
pub struct ServiceArgs {
    /// Let SERVICE call remote SPARQL endpoints: alone for any host, or
    /// `=HOST,HOST:PORT` for those; `=off` for none [default: none for serve, any
    /// otherwise]
    #[arg(long, value_name = "HOSTS", num_args = 0..=1, require_equals = true,
          default_missing_value = "*", value_parser = parse_allow_service)]
    pub allow_service: Option<AllowService>,
    /// How long one SERVICE call may take, connection to last byte [default: 30]
    #[arg(long, value_name = "SECONDS", value_parser = limits::parse_seconds, allow_hyphen_values = true)]
    pub service_timeout: Option<Duration>,
    /// The largest answer one SERVICE call may send (`16M`, `1G`) [default: 64M]
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_size, allow_hyphen_values = true)]
    pub service_max_bytes: Option<usize>,
    /// Bindings per SERVICE call: a bind join sends the values found so far in VALUES
    /// blocks of this many rows, one call each [default: 100]
    #[arg(long, value_name = "ROWS", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub service_batch: Option<u32>,
}

impl ServiceArgs {
    /// The client SERVICE calls through; `serving`: calls nothing unless allowed.
    pub fn client(&self, serving: bool) -> Arc<dyn ServiceClient> {
        let off = || Allow::Nothing {
            hint: if serving {
                "start the server with --allow-service, or --allow-service=HOST,… for some hosts"
                    .into()
            } else {
                "--allow-service=off was given".into()
            },
        };
        let allow = match &self.allow_service {
            Some(AllowService::Any) => Allow::Any,
            Some(AllowService::Hosts(hosts)) => Allow::hosts(hosts),
            Some(AllowService::Off) => off(),
            None if serving => off(),
            None => Allow::Any,
        };
        let defaults = FederationConfig::default();
        Arc::new(HttpServiceClient::new(FederationConfig {
            allow,
            timeout: self.service_timeout.unwrap_or(defaults.timeout),
            max_response_bytes: self
                .service_max_bytes
                .unwrap_or(defaults.max_response_bytes),
            batch: self.service_batch.map_or(defaults.batch, |b| b as usize),
            ..defaults
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_parse() {
        assert_eq!(parse_allow_service("*"), Ok(AllowService::Any));
        assert_eq!(parse_allow_service("true"), Ok(AllowService::Any));
        assert_eq!(parse_allow_service("off"), Ok(AllowService::Off));
        assert_eq!(
            parse_allow_service("example.org,localhost:7878"),
            Ok(AllowService::Hosts("example.org,localhost:7878".into()))
        );
        assert!(parse_allow_service("http://example.org/").is_err());
        assert!(parse_allow_service("a,,b").is_err());
    }
}
