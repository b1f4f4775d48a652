//! The operator's routes, under `/$/` (as Fuseki has them):
//!
//! | route | method | what |
//! |---|---|---|
//! | `/$/ping` | GET, HEAD | `ok`: the server answers (for load balancers and health checks) |
//! | `/$/datasets` | GET | JSON: every dataset with its routes, writability and sizes |
//! | `/$/backup/NAME` | POST | writes a consistent copy of dataset NAME under `--backup-dir` |
//! | `/$/compact/NAME` | POST | runs a checkpoint of dataset NAME: its log folded into a new snapshot |
//!
//! Backups and compactions run beside queries and updates (see `quiver_db`'s `backup` and
//! `checkpoint` modules), one at a time per server, on a blocking thread. They need the
//! server's update token (`Authorization: Bearer …`) when it has one; without one, only a
//! client on the loopback may ask ([`check_admin`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, Path as UrlPath, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use quiver_db::DbError;

use crate::error::ApiError;
use crate::state::{AppState, ServerState};

/// `GET /$/ping`.
pub async fn ping() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        "ok\n",
    )
        .into_response()
}

/// `GET /$/datasets`.
pub async fn datasets(State(server): State<Arc<ServerState>>) -> Response {
    let datasets: Vec<_> = server
        .datasets
        .iter()
        .map(|d| describe(&server, d))
        .collect();
    json(StatusCode::OK, serde_json::json!({ "datasets": datasets }))
}

/// One dataset in `/$/datasets`.
fn describe(server: &ServerState, dataset: &AppState) -> serde_json::Value {
    let store = dataset.snapshot();
    let (triples, terms) = dataset.size();
    let log = dataset.db.log_stats();
    let is_root = server
        .root
        .as_ref()
        .is_some_and(|root| std::ptr::eq(&**root, dataset));
    serde_json::json!({
        "name": dataset.name,
        "path": if is_root { "/".to_owned() } else { format!("/{}/", dataset.name) },
        "writable": dataset.access.writable,
        "triples": triples,
        "terms": terms,
        "named_graphs": store.graph_names().count(),
        "version": dataset.db.sequence(),
        "log_bytes": log.bytes,
        "disk_bytes": dataset.db.dir().map(directory_bytes),
    })
}

/// Bytes of the files directly in `dir` (a store's snapshot files and log).
fn directory_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.metadata().ok())
        .filter(|metadata| metadata.is_file())
        .map(|metadata| metadata.len())
        .sum()
}

/// `POST /$/backup/NAME`.
pub async fn backup(
    State(server): State<Arc<ServerState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let dataset = match admitted(&server, peer, &name, &headers) {
        Ok(dataset) => dataset,
        Err(error) => return error.into_response(),
    };
    let _one_at_a_time = server.admin.lock().await;
    let directory = server.config.backup_dir.join(&dataset.name);
    let db = dataset.db.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let target = new_backup_path(&directory, &db_name(&directory));
        db.backup(&target)
    })
    .await;
    match outcome {
        Ok(Ok(report)) => {
            tracing::info!(
                dataset = %dataset.name,
                version = report.sequence,
                path = %report.path.display(),
                seconds = report.seconds,
                "backup written"
            );
            json(
                StatusCode::OK,
                serde_json::json!({
                    "dataset": dataset.name,
                    "path": report.path,
                    "version": report.sequence,
                    "triples": report.triples,
                    "bytes": report.bytes,
                    "seconds": report.seconds,
                }),
            )
        }
        Ok(Err(error)) => failed("backup", &dataset.name, &error).into_response(),
        Err(_) => unexpected("backup").into_response(),
    }
}

/// `POST /$/compact/NAME`.
pub async fn compact(
    State(server): State<Arc<ServerState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let dataset = match admitted(&server, peer, &name, &headers) {
        Ok(dataset) => dataset,
        Err(error) => return error.into_response(),
    };
    if dataset.db.dir().is_none() || !dataset.access.writable {
        return ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "dataset {} is served read-only: it has no log to fold into its snapshot",
                dataset.name
            ),
        )
        .into_response();
    }
    let _one_at_a_time = server.admin.lock().await;
    let db = dataset.db.clone();
    let started = std::time::Instant::now();
    let outcome = tokio::task::spawn_blocking(move || db.checkpoint()).await;
    match outcome {
        Ok(Ok(report)) => {
            let seconds = started.elapsed().as_secs_f64();
            tracing::info!(dataset = %dataset.name, version = report.sequence, seconds, "compacted");
            json(
                StatusCode::OK,
                serde_json::json!({
                    "dataset": dataset.name,
                    "version": report.sequence,
                    "snapshot_bytes": report.snapshot_bytes,
                    "log_bytes": report.wal_bytes,
                    "seconds": seconds,
                }),
            )
        }
        Ok(Err(error)) => failed("compaction", &dataset.name, &error).into_response(),
        Err(_) => unexpected("compaction").into_response(),
    }
}

/// The dataset `name` when the client may run an admin operation on it.
fn admitted(
    server: &ServerState,
    peer: SocketAddr,
    name: &str,
    headers: &HeaderMap,
) -> Result<Arc<AppState>, ApiError> {
    check_admin(peer, server.config.update_token.as_deref(), headers)?;
    server.dataset(name).cloned().ok_or_else(|| {
        let names: Vec<_> = server.datasets.iter().map(|d| d.name.as_str()).collect();
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no dataset named {name:?} (datasets: {})", names.join(", ")),
        )
    })
}

/// Whether a client at `peer` may run admin operations: with the update token when the
/// server has one (from anywhere), else only from the loopback.
pub fn check_admin(
    peer: SocketAddr,
    token: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    match token {
        Some(token) => crate::auth::check_bearer(headers, token),
        None if peer.ip().is_loopback() => Ok(()),
        None => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "admin routes (/$/backup, /$/compact) need the server's update token, or a \
             client on the loopback when the server has none",
        )),
    }
}

/// The name a backup of the dataset in `directory` starts with.
fn db_name(directory: &Path) -> String {
    directory.file_name().map_or_else(
        || "backup".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// `DIRECTORY/NAME-YYYYMMDDTHHMMSSZ` (UTC, then `-2`, `-3`… if taken).
fn new_backup_path(directory: &Path, name: &str) -> PathBuf {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let stamp = utc_stamp(seconds);
    let mut path = directory.join(format!("{name}-{stamp}"));
    let mut n = 2;
    while path.exists() || path.with_extension("partial").exists() {
        path = directory.join(format!("{name}-{stamp}-{n}"));
        n += 1;
    }
    path
}

/// `YYYYMMDDTHHMMSSZ` for `seconds` since the Unix epoch (the civil calendar from days,
/// as in Howard Hinnant's `civil_from_days`; no date crate for one timestamp).
fn utc_stamp(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let of_day = seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        of_day / 3_600,
        of_day / 60 % 60,
        of_day % 60
    )
}

fn failed(what: &str, dataset: &str, error: &DbError) -> ApiError {
    tracing::warn!(%error, dataset, "{what} failed");
    let status = match error {
        DbError::ReadOnly(_) => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(
        status,
        format!("{what} of dataset {dataset} failed: {error}"),
    )
}

fn unexpected(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("the {what} failed unexpectedly"),
    )
}

/// A JSON answer that no cache keeps.
pub(crate) fn json(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps_follow_the_calendar() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(utc_stamp(951_827_696), "20000229T123456Z");
        // 2026-11-27 23:59:59 UTC.
        assert_eq!(utc_stamp(1_795_823_999), "20261127T235959Z");
    }

    #[test]
    fn admin_needs_the_token_when_there_is_one_else_the_loopback() {
        let loopback: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let remote: SocketAddr = "192.0.2.1:1".parse().unwrap();
        let none = HeaderMap::new();
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(check_admin(loopback, None, &none).is_ok());
        assert_eq!(
            check_admin(remote, None, &bearer).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            check_admin(loopback, Some("s3cret"), &none)
                .unwrap_err()
                .status,
            StatusCode::UNAUTHORIZED
        );
        assert!(check_admin(remote, Some("s3cret"), &bearer).is_ok());
        assert!(check_admin(remote, Some("other"), &bearer).is_err());
    }
}
