//! One query: prepare (through the server's cache of prepared queries), execute, then
//! serialize into the response body — on a blocking thread ([`run`]), or, for a light
//! query, inline on the request's own task ([`run_inline`]): the hand-off to a blocking
//! thread, the head's oneshot channel and the body's channel cost more than such a query
//! (on a 2-core machine, a light query's median time in the server fell from about 190 µs
//! to 105 µs when it stopped waiting for one). A query is light when its fastest run was
//! cheap, or, before it has run, when its text is short and its plan expects little work
//! ([`INLINE_TEXT_BYTES`], [`INLINE_WORK`]).
//!
//! The outcome of preparing and executing (the status line) is reported through a oneshot
//! channel as a [`Head`] or an [`ApiError`] before any byte of the body is sent; the rows
//! are encoded straight from the engine's id table (no term is allocated). The head waits
//! for the body's first chunk ([`HeldHead`]): a result smaller than a chunk goes with its
//! head, whole, as one response with its length (one write to the socket, where a head
//! sent first, a chunk and the chunked encoding's end took up to three, each waking the
//! client); a larger one streams through a [`ChannelWriter`] that blocks while the client
//! is slow. Each large write sees write
//! errors (client gone, cancelled, send timeout), and the serializer stops.
//!
//! Each run tells the access log its form and rows ([`RequestLog`]) and, past the slow-query
//! threshold, writes the slow-query log: target `quiver::slow`, at WARN, with the request
//! id, the query's text, its plan summary and its time.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use quiver_sparql::results::{give_back_chunk, write_solutions_in_chunks, ChunkWriter};
use quiver_sparql::{
    write_results, CachedQuery, ExecOptions, PrepareOptions, QueryCache, QueryError, QueryResults,
    ResultsFormat,
};
use quiver_store::Store;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::access::RequestLog;
use crate::error::ApiError;
use crate::negotiate::{Negotiated, ResultKind};
use crate::stream::{BodySender, ChannelWriter, CHUNK_BYTES};

/// A query ready to run.
pub struct Job {
    pub store: Arc<Store>,
    pub query: String,
    /// The protocol's dataset, replacing the query's `FROM` / `FROM NAMED`.
    pub dataset: Option<spargebra::algebra::QueryDataset>,
    pub negotiated: Negotiated,
    pub options: ExecOptions,
    pub send_timeout: Duration,
    pub cache: Arc<QueryCache>,
    /// The request's entry in the access log.
    pub log: Arc<RequestLog>,
    /// The dataset's name, for the slow-query log.
    pub dataset_name: String,
    /// The slow-query log's threshold.
    pub slow_query: Option<Duration>,
}

/// What a cached query run inline reports to the logs.
pub struct Report<'a> {
    pub log: Arc<RequestLog>,
    pub dataset: String,
    pub slow_query: Option<Duration>,
    pub text: &'a str,
}

/// Writes the slow-query log's line for a query that took `took` when that is at least
/// `threshold`.
fn log_if_slow(
    threshold: Option<Duration>,
    took: Duration,
    id: u64,
    dataset: &str,
    text: &str,
    prepared: &quiver_sparql::PreparedQuery,
    rows: usize,
) {
    if threshold.is_some_and(|threshold| took >= threshold) {
        tracing::warn!(
            target: "quiver::slow",
            id,
            dataset,
            ms = (took.as_secs_f64() * 1e6).round() / 1e3,
            rows,
            plan = %prepared.plan_summary(),
            query = %text,
            "slow query"
        );
    }
}

/// A cached query runs inline when its last run, serialization included, took at most
/// this many µs…
pub const INLINE_MICROS: u64 = 1_000;
/// …and wrote at most this many bytes.
pub const INLINE_BYTES: u64 = 256 * 1024;

/// A query not run yet is prepared on the request's task when its text has at most this
/// many bytes (parsing and planning it costs less than handing it to another thread)…
pub const INLINE_TEXT_BYTES: usize = 4096;
/// …and runs there when its plan expects to build at most this many rows in all
/// ([`quiver_sparql::PreparedQuery::estimated_work`]): tens of microseconds.
pub const INLINE_WORK: f64 = 2_000.0;
/// A query run there on that estimate alone is stopped after this long (the default of
/// [`crate::Config::inline_guess_limit`]) and run again on a blocking thread: a connection
/// thread serves its other connections only between requests, so a wrong guess must not
/// hold it.
pub const INLINE_GUESS_LIMIT: Duration = Duration::from_millis(2);

/// What [`run_inline`] did.
pub enum Inline {
    /// The query was answered or failed.
    Done(Result<(Head, Vec<u8>), ApiError>),
    /// The query, run on a guess, reached the guess's limit: run it on a blocking thread.
    TooSlow,
}

/// What the response head needs once the query has run.
#[derive(Debug, Clone, Copy)]
pub struct Head {
    pub format: ResultsFormat,
    pub plan_micros: f64,
    pub execute_micros: f64,
}

/// What the request's task learns once the query has run: the head and, for a result
/// smaller than a chunk, the whole body (`None`: it streams through the body's channel).
pub type Outcome = Result<(Head, Option<Bytes>), ApiError>;

/// The serializer's writer that holds the response's head back until the body's first
/// chunk is ready: a body that ends first goes with the head, whole; otherwise the head
/// goes, then the chunks through `writer`.
struct HeldHead {
    head: Option<(oneshot::Sender<Outcome>, Head)>,
    buffer: Vec<u8>,
    writer: ChannelWriter,
}

impl HeldHead {
    /// Sends the head alone (the body follows through the channel).
    fn release(&mut self) -> io::Result<()> {
        if let Some((sender, head)) = self.head.take() {
            if sender.send(Ok((head, None))).is_err() {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the request went away while the query ran",
                ));
            }
            let buffered = std::mem::take(&mut self.buffer);
            self.writer.write_all(&buffered)?;
        }
        Ok(())
    }

    /// Ends the body: whole with the head if it was never released, else through the
    /// channel. The bytes of the body. `settle` runs with that length before the last
    /// bytes leave: what it records is there for the client's next request, which may
    /// come as soon as this body has been read.
    fn finish(mut self, settle: impl FnOnce(u64)) -> io::Result<u64> {
        match self.head.take() {
            Some((sender, head)) => {
                let length = self.buffer.len() as u64;
                settle(length);
                let body = Bytes::from(std::mem::take(&mut self.buffer));
                if sender.send(Ok((head, Some(body)))).is_err() {
                    return Err(io::Error::new(
                        io::ErrorKind::BrokenPipe,
                        "the request went away while the query ran",
                    ));
                }
                Ok(length)
            }
            None => {
                settle(self.writer.written());
                self.writer.finish()
            }
        }
    }

    /// Aborts the response: after its head, the client sees the transfer cut short.
    fn abort(mut self) {
        let _ = self.release();
        self.writer.abort();
    }
}

impl Write for HeldHead {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.head.is_some() && self.buffer.len() + data.len() < CHUNK_BYTES {
            self.buffer.extend_from_slice(data);
            return Ok(data.len());
        }
        // The body is at least a chunk: the head goes, then what was held and `data`
        // through the channel's chunks (not gathered here first: a large write would
        // make this buffer a fresh mapping of its size).
        self.release()?;
        self.writer.write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ChunkWriter for HeldHead {
    /// A chunk of a large result's text (a megabyte or two) goes to the channel as it is,
    /// its buffer given back to the results writers once the socket has taken it; a small
    /// one, held with the head or not, is copied as any write.
    fn take_chunk(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        if chunk.len() < CHUNK_BYTES {
            let written = self.write_all(&chunk);
            give_back_chunk(chunk);
            return written;
        }
        self.release()?;
        self.writer.send_owned(Bytes::from_owner(Handed(chunk)))
    }
}

/// A results writer's buffer on its way to the socket, given back to the writers once
/// sent.
struct Handed(Vec<u8>);

impl AsRef<[u8]> for Handed {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Handed {
    fn drop(&mut self) {
        give_back_chunk(std::mem::take(&mut self.0));
    }
}

/// Runs `job` to the end; call on a blocking thread.
pub fn run(job: Job, runtime: Handle, head: oneshot::Sender<Outcome>, sender: BodySender) {
    let started = Instant::now();
    let store = &*job.store;
    let prepare_options = PrepareOptions {
        dataset: job.dataset.clone(),
        partitions: job.options.partitions.clone(),
        ..PrepareOptions::default()
    };
    let (cached, hit) = match job.cache.prepare(store, &job.query, &prepare_options) {
        Ok(prepared) => prepared,
        Err(error) => {
            let _ = head.send(Err(ApiError::from_query(&error)));
            return;
        }
    };
    let prepared = &cached.query;
    job.log.set_form(prepared.form_name());
    let plan_micros = if hit {
        started.elapsed().as_secs_f64() * 1e6
    } else {
        prepared.plan_micros()
    };
    let results = match prepared.execute(store, &job.options) {
        Ok(results) => results,
        Err(error) => {
            tracing::info!(%error, id = job.log.id, "query not answered");
            // A query stopped by its timeout, memory or result cap is a slow query too.
            let took = started.elapsed();
            if job.slow_query.is_some_and(|threshold| took >= threshold) {
                tracing::warn!(
                    target: "quiver::slow",
                    id = job.log.id,
                    dataset = %job.dataset_name,
                    ms = (took.as_secs_f64() * 1e6).round() / 1e3,
                    %error,
                    plan = %prepared.plan_summary(),
                    query = %job.query,
                    "slow query failed"
                );
            }
            let _ = head.send(Err(ApiError::from_query(&error)));
            return;
        }
    };
    let execute_micros = started.elapsed().as_secs_f64() * 1e6 - plan_micros;
    let kind = match results {
        QueryResults::Graph(_) => ResultKind::Graph,
        _ => ResultKind::Tabular,
    };
    let format = match job.negotiated.for_kind(kind) {
        Ok(format) => format,
        Err(error) => {
            let _ = head.send(Err(error));
            return;
        }
    };
    let ready = Head {
        format,
        plan_micros,
        execute_micros: execute_micros.max(0.0),
    };
    if head.is_closed() {
        return; // The request went away while the query ran.
    }
    let cancel = job.options.cancel.clone().unwrap_or_default();
    let mut writer = ChannelWriter::new(sender.clone(), runtime, job.send_timeout, cancel);
    if let Some(timeout) = job.options.timeout {
        writer = writer.with_query_deadline(started, timeout);
    }
    let mut writer = HeldHead {
        head: Some((head, ready)),
        buffer: Vec::new(),
        writer,
    };
    let rows = match &results {
        QueryResults::Solutions(solutions) => solutions.len(),
        QueryResults::Graph(triples) => triples.len(),
        QueryResults::Boolean(_) => 1,
    };
    job.log.set_rows(rows);
    let written = match &results {
        QueryResults::Solutions(solutions) => {
            write_solutions_in_chunks(solutions, format.syntax(), &mut writer).map(|_| ())
        }
        other => write_results(other, format, &mut writer).map(|_| ()),
    };
    // The cost is recorded before the body's last bytes leave: a client that sends the
    // same text again once it has read this answer finds it known (not a guess again).
    let record = |bytes: u64| {
        let micros = started.elapsed().as_secs_f64() * 1e6 - plan_micros;
        cached.record_cost(micros, bytes as usize);
    };
    let written = match written {
        Ok(()) => writer.finish(record),
        Err(error) => {
            writer.abort();
            Err(error)
        }
    };
    let seconds = (started.elapsed().as_secs_f64() * 1e4).round() / 1e4;
    match written {
        Ok(bytes) => {
            tracing::debug!(id = job.log.id, rows, bytes, seconds, "query answered");
            log_if_slow(
                job.slow_query,
                started.elapsed(),
                job.log.id,
                &job.dataset_name,
                &job.query,
                prepared,
                rows,
            );
        }
        Err(error) => {
            sender.fail();
            tracing::warn!(%error, seconds, id = job.log.id, "response aborted");
        }
    }
}

/// Runs a cached query known to be cheap on the calling thread: executes it and writes
/// the whole body into memory.
///
/// `guess_limit`: the query has not run before and runs on the planner's estimate; it is
/// stopped after this long ([`Inline::TooSlow`]) unless the query's own timeout comes
/// first. Nothing of a stopped run is recorded: the run that follows records its cost.
pub fn run_inline(
    store: &Store,
    cached: &CachedQuery,
    negotiated: &Negotiated,
    options: &ExecOptions,
    guess_limit: Option<Duration>,
    plan_micros: f64,
    report: Report<'_>,
) -> Inline {
    let guessing = guess_limit.filter(|limit| options.timeout.is_none_or(|t| t > *limit));
    let limited;
    let options = match guessing {
        Some(limit) => {
            limited = ExecOptions {
                timeout: Some(limit),
                ..options.clone()
            };
            &limited
        }
        None => options,
    };
    let started = Instant::now();
    report.log.set_form(cached.query.form_name());
    let results = match cached.query.execute(store, options) {
        Ok(results) => results,
        Err(QueryError::Timeout(_)) if guessing.is_some() => {
            tracing::debug!(id = report.log.id, "query moved to a blocking thread");
            return Inline::TooSlow;
        }
        Err(error) => {
            tracing::info!(%error, id = report.log.id, "query not answered");
            return Inline::Done(Err(ApiError::from_query(&error)));
        }
    };
    Inline::Done(answer_inline(
        cached,
        results,
        negotiated,
        started,
        plan_micros,
        report,
    ))
}

/// [`run_inline`]'s results written, the run's cost recorded and reported.
fn answer_inline(
    cached: &CachedQuery,
    results: QueryResults,
    negotiated: &Negotiated,
    started: Instant,
    plan_micros: f64,
    report: Report<'_>,
) -> Result<(Head, Vec<u8>), ApiError> {
    let execute_micros = started.elapsed().as_secs_f64() * 1e6;
    let kind = match results {
        QueryResults::Graph(_) => ResultKind::Graph,
        _ => ResultKind::Tabular,
    };
    let format = negotiated.for_kind(kind)?;
    let rows = match &results {
        QueryResults::Solutions(solutions) => solutions.len(),
        QueryResults::Graph(triples) => triples.len(),
        QueryResults::Boolean(_) => 1,
    };
    report.log.set_rows(rows);
    let written = quiver_sparql::results_to_vec(&results, format).map_err(|error| {
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        )
    })?;
    let micros = started.elapsed().as_secs_f64() * 1e6;
    cached.record_cost(micros, written.len());
    let seconds = ((plan_micros + micros) / 1e2).round() / 1e4;
    tracing::debug!(
        id = report.log.id,
        rows,
        bytes = written.len(),
        seconds,
        "query answered"
    );
    log_if_slow(
        report.slow_query,
        Duration::from_secs_f64((plan_micros + micros) / 1e6),
        report.log.id,
        &report.dataset,
        report.text,
        &cached.query,
        rows,
    );
    Ok((
        Head {
            format,
            plan_micros,
            execute_micros,
        },
        written,
    ))
}

/// `explain=true`: prepares and runs the query, then renders its profile (the plan with
/// estimated and actual rows and time per step) and what it answered, as text.
pub fn explain(
    store: &Store,
    request: &crate::protocol::QueryRequest,
    cache: &QueryCache,
    options: &ExecOptions,
    log: &RequestLog,
) -> Result<String, ApiError> {
    let prepare_options = PrepareOptions {
        dataset: request.dataset.clone(),
        partitions: options.partitions.clone(),
        ..PrepareOptions::default()
    };
    let (cached, _) = cache
        .prepare(store, &request.query, &prepare_options)
        .map_err(|error| ApiError::from_query(&error))?;
    log.set_form("explain");
    // A cluster's workers record what they did only when asked.
    let options = ExecOptions {
        explain: true,
        ..options.clone()
    };
    let (results, profile) = cached
        .query
        .execute_profiled(store, &options)
        .map_err(|error| ApiError::from_query(&error))?;
    let answered = match &results {
        QueryResults::Solutions(solutions) => {
            log.set_rows(solutions.len());
            match solutions.len() {
                1 => "1 row".to_owned(),
                rows => format!("{rows} rows"),
            }
        }
        QueryResults::Boolean(answer) => format!("answer: {answer}"),
        QueryResults::Graph(triples) => format!("{} triples", triples.len()),
    };
    let graph = match (store.view(), store.entailment()) {
        (quiver_store::View::Entailed, Some(layer)) => {
            format!("the {} entailment of the default graph", layer.profile())
        }
        _ => "the asserted triples".to_owned(),
    };
    Ok(format!(
        "{}\nanswered {answered}, reading {graph}\n",
        quiver_sparql::explain::render(&profile)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::CancelOnDrop;
    use std::sync::atomic::AtomicBool;

    use crate::stream::tests::{read_body, runtime};

    /// A held head and its receiving end, over a runtime that outlives the test's writes.
    fn held(
        runtime: &tokio::runtime::Runtime,
    ) -> (
        HeldHead,
        oneshot::Receiver<Outcome>,
        crate::stream::ChannelBody,
    ) {
        let cancel = Arc::new(AtomicBool::new(false));
        let (sender, body) = crate::stream::channel(CancelOnDrop(cancel.clone()));
        let (head_tx, head_rx) = oneshot::channel();
        let head = Head {
            format: ResultsFormat::Tsv,
            plan_micros: 0.0,
            execute_micros: 0.0,
        };
        let writer = ChannelWriter::new(
            sender,
            runtime.handle().clone(),
            Duration::from_secs(5),
            cancel,
        );
        let held = HeldHead {
            head: Some((head_tx, head)),
            buffer: Vec::new(),
            writer,
        };
        (held, head_rx, body)
    }

    #[test]
    fn a_whole_body_is_settled_before_it_leaves() {
        let runtime = runtime();
        let (mut held, mut head_rx, _body) = held(&runtime);
        held.write_all(b"?s\n<http://e/s>\n").unwrap();
        let mut settled = None;
        let length = held
            .finish(|bytes| {
                // Nothing has reached the request's task yet.
                assert!(matches!(
                    head_rx.try_recv(),
                    Err(oneshot::error::TryRecvError::Empty)
                ));
                settled = Some(bytes);
            })
            .unwrap();
        assert_eq!(settled, Some(16));
        assert_eq!(length, 16);
        match head_rx.try_recv() {
            Ok(Ok((_, Some(body)))) => assert_eq!(&body[..], b"?s\n<http://e/s>\n"),
            _ => panic!("the whole body goes with the head"),
        }
    }

    #[test]
    fn a_streamed_body_is_settled_with_all_its_bytes() {
        let runtime = runtime();
        let (mut held, mut head_rx, _body) = held(&runtime);
        let chunk = vec![b'x'; CHUNK_BYTES + 10];
        held.write_all(&chunk).unwrap();
        // Past a chunk, the head went alone.
        assert!(matches!(head_rx.try_recv(), Ok(Ok((_, None)))));
        held.write_all(b"tail").unwrap();
        let mut settled = None;
        let length = held.finish(|bytes| settled = Some(bytes)).unwrap();
        assert_eq!(settled, Some(length));
        assert_eq!(length, chunk.len() as u64 + 4);
    }

    /// A large result's chunks handed over whole reach the body in order with the bytes
    /// written around them: the held bytes first, then the chunk, a small chunk copied,
    /// the closing last.
    #[test]
    fn handed_chunks_reach_the_body_in_order_with_the_written_bytes() {
        let runtime = runtime();
        let (mut held, mut head_rx, body) = held(&runtime);
        let received = read_body(&runtime, body);
        let large: Vec<u8> = (0..2 * CHUNK_BYTES + 5).map(|i| (i % 253) as u8).collect();
        held.write_all(b"?s\n").unwrap();
        // Small: held with the head, which has not gone yet.
        held.take_chunk(b"<a>\n".to_vec()).unwrap();
        assert!(head_rx.try_recv().is_err());
        held.take_chunk(large.clone()).unwrap();
        assert!(matches!(head_rx.try_recv(), Ok(Ok((_, None)))));
        held.take_chunk(b"<b>\n".to_vec()).unwrap();
        held.write_all(b"end").unwrap();
        let length = held.finish(|_| {}).unwrap();
        let mut expected = b"?s\n<a>\n".to_vec();
        expected.extend_from_slice(&large);
        expected.extend_from_slice(b"<b>\nend");
        assert_eq!(length, expected.len() as u64);
        let (bytes, _) = runtime.block_on(received).unwrap();
        assert!(bytes == expected, "the body differs from what was written");
    }
}
