//! The SPARQL 1.1 Graph Store HTTP Protocol at `/store`, with indirect graph
//! identification (`?default` for the default graph, `?graph=IRI` for a named graph) and
//! direct identification below it (`/store/people` is the graph named by that URL,
//! `http://HOST/store/people`).
//!
//! | method | what | statuses |
//! |---|---|---|
//! | GET, HEAD | the graph, in Turtle (default), N-Triples, N-Quads or RDF/XML by `Accept`; `/store` without parameters: every graph, in N-Quads (default) or TriG | 200, 404 (no such named graph), 406 |
//! | PUT | replaces the graph's content with the body | 201 (the graph is new), 204 |
//! | POST | adds the body's triples to the graph; to `/store` itself, makes a new graph named by the server (`Location` gives its IRI) | 201 (the graph is new), 204 |
//! | DELETE | drops the graph (the default graph is emptied) | 204, 404 |
//!
//! Bodies are Turtle, N-Triples, N-Quads, TriG or RDF/XML, or `multipart/form-data` with
//! one such document per part (415 otherwise); a syntax error is
//! a 400 with its line and column. Relative IRIs in a body resolve against the graph's IRI
//! (the request's URL for the default graph). A body addresses one graph, so an N-Quads or
//! TriG body with a quad in a named graph is refused with 400 instead of being silently
//! moved into the target graph. Blank nodes of a body are fresh nodes, never merged with
//! nodes already stored.
//!
//! Every write is one transaction ([`Database::commit_changes`], one change set built
//! against the latest version under the writer lock): PUT is drop and insert together, so a
//! reader sees the old graph or the new one, never an empty one between. Writes pass the
//! write policy first ([`crate::auth`]: 403 read-only, 401 without the token) and then the
//! same admission control as queries.

use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use oxrdf::{NamedNode, NamedOrBlankNode, QuadRef, Term, TripleRef};
use oxrdfio::{RdfFormat, RdfSerializer};
use quiver_db::{Database, DbError, UpdateReport};
use quiver_model::term::{decode_term, encode_term};
use quiver_model::Id;
use quiver_sparql::QueryError;
use quiver_store::{ChangeSet, Quad, Store};

use crate::error::ApiError;
use crate::limits::CancelOnDrop;
use crate::rdf_io::{self, DATASET_OFFERS, GRAPH_OFFERS};
use crate::state::AppState;
use crate::stream::{self, ChannelWriter};

/// Which graph a request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `?default`.
    Default,
    /// `?graph=IRI`.
    Named(NamedNode),
    /// No parameter: the whole store (GET only).
    All,
}

impl Target {
    /// The graph of a write (the whole store cannot be written).
    fn graph(&self) -> Result<Option<&NamedNode>, ApiError> {
        match self {
            Target::Default => Ok(None),
            Target::Named(name) => Ok(Some(name)),
            Target::All => Err(ApiError::bad_request(
                "a Graph Store write names its graph: /store?default or /store?graph=IRI",
            )),
        }
    }
}

/// The target of a request: below `/store/`, the graph its URL names (direct
/// identification, without a query); at `/store`, what its query names. `uri` is the path
/// within the dataset's routes, `original` the URL's (with the dataset's `/NAME` prefix).
fn request_target(headers: &HeaderMap, uri: &Uri, original: &Uri) -> Result<Target, ApiError> {
    if uri.path().len() <= "/store/".len() {
        return target(uri.query());
    }
    if uri.query().is_some() {
        return Err(ApiError::bad_request(
            "a graph named by its URL (below /store/) takes no ?default or ?graph=",
        ));
    }
    let url = crate::state::request_url(headers, original);
    NamedNode::new(url.as_str())
        .map(Target::Named)
        .map_err(|e| ApiError::bad_request(format!("{url} is not an IRI: {e}")))
}

/// The target of a request's URL query (`default`, or one `graph=` with an absolute IRI).
pub fn target(url_query: Option<&str>) -> Result<Target, ApiError> {
    let mut default = false;
    let mut graphs = Vec::new();
    for (name, value) in form_urlencoded::parse(url_query.unwrap_or("").as_bytes()) {
        match name.as_ref() {
            "default" => default = true,
            "graph" => graphs.push(value.into_owned()),
            _ => {}
        }
    }
    match (default, graphs.len()) {
        (false, 0) => Ok(Target::All),
        (true, 0) => Ok(Target::Default),
        (false, 1) => {
            let iri = graphs.pop().unwrap_or_default();
            NamedNode::new(iri.as_str())
                .map(Target::Named)
                .map_err(|e| ApiError::bad_request(format!("graph {iri:?} is not an IRI: {e}")))
        }
        _ => Err(ApiError::bad_request(
            "name one graph: either ?default or a single ?graph=IRI",
        )),
    }
}

/// A fresh graph name under the store's URL (`http://HOST/store/graph-`, or
/// `http://HOST/NAME/store/graph-` for dataset NAME, and 32 random hex digits), for a POST
/// to the store itself (`original`): 128 random bits never name an existing graph.
fn new_graph_name(headers: &HeaderMap, original: &Uri) -> NamedNode {
    use std::hash::{BuildHasher, Hasher};
    let random = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        hasher.finish()
    };
    let id = format!("graph-{:016x}{:016x}", random(), random());
    let store = original
        .path()
        .parse::<Uri>()
        .unwrap_or(Uri::from_static("/store"));
    let base = crate::state::request_url(headers, &store);
    let base = base.trim_end_matches('/');
    NamedNode::new(format!("{base}/{id}"))
        .unwrap_or_else(|_| NamedNode::new_unchecked(format!("urn:quiver:{id}")))
}

/// The term id of a named graph the store has.
pub fn graph_id(store: &Store, name: &NamedNode) -> Option<Id> {
    let mut bytes = Vec::new();
    encode_term(name.as_ref().into(), &mut bytes);
    store
        .dictionary()
        .lookup(&bytes)
        .filter(|&id| store.has_named_graph(id))
}

/// `GET` and `HEAD /store`.
pub async fn get(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
    OriginalUri(original): OriginalUri,
) -> Response {
    let target = match request_target(&headers, &uri, &original) {
        Ok(target) => target,
        Err(error) => return state.refuse(error),
    };
    let offers = if target == Target::All {
        DATASET_OFFERS
    } else {
        GRAPH_OFFERS
    };
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = match rdf_io::negotiate(accept, offers) {
        Ok(format) => format,
        Err(error) => return state.refuse(error),
    };
    let store = state.snapshot();
    if let Target::Named(name) = &target {
        if graph_id(&store, name).is_none() {
            return state.refuse(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no graph named {name}"),
            ));
        }
    }
    if method == Method::HEAD {
        // The head alone: nothing to serialize.
        state.limits.served.fetch_add(1, Ordering::Relaxed);
        return graph_response(Body::empty(), format);
    }
    let (ticket, permit) = match state.admit().await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    let cancel = ticket.cancel_flag();
    let (sender, body) = stream::channel(CancelOnDrop(cancel.clone()));
    let runtime = tokio::runtime::Handle::current();
    let send_timeout = state.config.send_timeout;
    tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        let writer = ChannelWriter::new(sender.clone(), runtime, send_timeout, cancel);
        match serialize(&store, &target, format, writer).and_then(ChannelWriter::finish) {
            Ok(bytes) => tracing::info!(bytes, "graph sent"),
            Err(error) => {
                sender.fail();
                tracing::warn!(%error, "graph response aborted");
            }
        }
    });
    state.limits.served.fetch_add(1, Ordering::Relaxed);
    graph_response(Body::new(body), format)
}

/// A response of `body` in `format` (its content type, `Vary: Accept`).
pub(crate) fn graph_response(body: Body, format: RdfFormat) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(rdf_io::content_type(format)),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

/// Writes `target` of `store` in `format` to `writer`.
pub fn serialize<W: Write>(
    store: &Store,
    target: &Target,
    format: RdfFormat,
    writer: W,
) -> io::Result<W> {
    let mut serializer = RdfSerializer::from_format(format).for_writer(writer);
    let mut failure: Option<io::Error> = None;
    let mut emit = |quad: Quad, graph: Option<Result<&NamedNode, &String>>| {
        if failure.is_some() {
            return;
        }
        let result = decode_quad(store, quad).and_then(|(s, p, o)| match graph {
            Some(Ok(name)) => serializer.serialize_quad(QuadRef::new(&s, &p, &o, name)),
            Some(Err(error)) => Err(io::Error::other(error.clone())),
            None => serializer.serialize_triple(TripleRef::new(&s, &p, &o)),
        });
        failure = result.err();
    };
    match target {
        Target::All => {
            let mut names = std::collections::HashMap::new();
            store.for_each_quad(|quad| {
                let name = quad.graph.map(|id| {
                    names
                        .entry(id)
                        .or_insert_with(|| decode_named(store, id).map_err(|e| e.to_string()))
                        .clone()
                });
                emit(quad, name.as_ref().map(Result::as_ref));
            });
        }
        Target::Default => {
            store.graph().for_each_triple(|subject, predicate, object| {
                let predicate = store.predicate_term(predicate);
                emit(
                    Quad {
                        subject,
                        predicate,
                        object,
                        graph: None,
                    },
                    None,
                )
            });
        }
        Target::Named(name) => {
            let index = graph_id(store, name).and_then(|id| store.named_graph(id));
            if let Some(index) = index {
                // N-Quads keeps the graph's name; the graph formats write triples.
                let graph = (format == RdfFormat::NQuads).then_some(Ok(name));
                index.for_each_triple(|subject, predicate, object| {
                    let predicate = store.predicate_term(predicate);
                    emit(
                        Quad {
                            subject,
                            predicate,
                            object,
                            graph: None,
                        },
                        graph,
                    )
                });
            }
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    serializer.finish()
}

fn decode(store: &Store, id: Id) -> io::Result<Term> {
    let bytes = store
        .dictionary()
        .term(id)
        .ok_or_else(|| io::Error::other(format!("term id {id} is not in the dictionary")))?;
    let term = decode_term(&bytes).map_err(io::Error::other)?;
    Ok(term.to_term())
}

fn decode_named(store: &Store, id: Id) -> io::Result<NamedNode> {
    match decode(store, id)? {
        Term::NamedNode(node) => Ok(node),
        other => Err(io::Error::other(format!("{other} names a graph"))),
    }
}

fn decode_quad(store: &Store, quad: Quad) -> io::Result<(NamedOrBlankNode, NamedNode, Term)> {
    let subject = match decode(store, quad.subject)? {
        Term::NamedNode(node) => NamedOrBlankNode::NamedNode(node),
        Term::BlankNode(node) => NamedOrBlankNode::BlankNode(node),
        other => return Err(io::Error::other(format!("literal subject {other}"))),
    };
    let predicate = decode_named(store, quad.predicate)?;
    Ok((subject, predicate, decode(store, quad.object)?))
}

/// What a write does to its graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// PUT: replace the content.
    Replace,
    /// POST: add to it.
    Merge,
    /// DELETE: drop the graph (empty the default graph).
    Drop,
}

/// What a committed write found and did.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// Whether the graph existed before (the default graph always does).
    pub existed: bool,
    pub report: UpdateReport,
}

/// Runs one Graph Store write as one transaction; call on a blocking thread. A `Drop` of a
/// graph that does not exist commits nothing and reports `existed: false`.
pub fn write(
    db: &Database,
    graph: Option<&NamedNode>,
    kind: WriteKind,
    triples: &[oxrdf::Triple],
) -> Result<Written, DbError> {
    let mut existed = true;
    let report = db.commit_changes(|store| {
        let mut set = ChangeSet::new(store);
        let graph_id = match graph {
            None => None,
            Some(name) => {
                existed = graph_id(store, name).is_some();
                if kind == WriteKind::Drop && !existed {
                    return Ok(Vec::new());
                }
                Some(
                    set.intern(store, name.as_ref().into())
                        .map_err(QueryError::from)?,
                )
            }
        };
        if kind != WriteKind::Merge && existed {
            match graph_id {
                Some(id) => set.dropped_graphs.push(id),
                None => store.graph().for_each_triple(|subject, predicate, object| {
                    set.deletes.push(Quad {
                        subject,
                        predicate: store.predicate_term(predicate),
                        object,
                        graph: None,
                    })
                }),
            }
        }
        if kind != WriteKind::Drop {
            for triple in triples {
                let mut intern = |term| set.intern(store, term).map_err(QueryError::from);
                let subject = intern(triple.subject.as_ref().into())?;
                let predicate = intern(triple.predicate.as_ref().into())?;
                let object = intern(triple.object.as_ref())?;
                set.inserts.push(Quad {
                    subject,
                    predicate,
                    object,
                    graph: graph_id,
                });
            }
            set.created_graphs.extend(graph_id);
        }
        Ok(vec![set])
    })?;
    Ok(Written { existed, report })
}

/// `PUT /store`.
pub async fn put(
    state: State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
    OriginalUri(original): OriginalUri,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write_request(state, headers, (uri, original), body, WriteKind::Replace).await
}

/// `POST /store`.
pub async fn post(
    state: State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
    OriginalUri(original): OriginalUri,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write_request(state, headers, (uri, original), body, WriteKind::Merge).await
}

/// `DELETE /store`.
pub async fn delete(
    state: State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
    OriginalUri(original): OriginalUri,
) -> Response {
    let uris = (uri, original);
    write_request(state, headers, uris, Ok(Bytes::new()), WriteKind::Drop).await
}

async fn write_request(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    (uri, original): (Uri, Uri),
    body: Result<Bytes, BytesRejection>,
    kind: WriteKind,
) -> Response {
    if let Err(error) = state.access.check(&headers) {
        return state.refuse(error);
    }
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return state.refuse(state.body_rejection(rejection)),
    };
    let target = match request_target(&headers, &uri, &original) {
        Ok(target) => target,
        Err(error) => return state.refuse(error),
    };
    // POST to the store itself creates a graph with a name of the server's choosing.
    let minted = kind == WriteKind::Merge && target == Target::All;
    let graph = if minted {
        Some(new_graph_name(&headers, &original))
    } else {
        match target.graph() {
            Ok(graph) => graph.cloned(),
            Err(error) => return state.refuse(error),
        }
    };
    let triples = if kind == WriteKind::Drop {
        Vec::new()
    } else {
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let base = match &graph {
            Some(name) => name.as_str().to_owned(),
            None => crate::state::request_url(&headers, &original),
        };
        let parsed = rdf_io::parse_body(content_type, &body, &base).and_then(rdf_io::triples_only);
        match parsed {
            Ok(triples) => triples,
            Err(error) => return state.refuse(error),
        }
    };
    let (ticket, permit) = match state.admit().await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    let db = state.db.clone();
    let name = graph.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        write(&db, name.as_ref(), kind, &triples)
    })
    .await;
    let written = match outcome {
        Ok(Ok(written)) => written,
        Ok(Err(error)) => return state.refuse(ApiError::from_db(&error)),
        Err(_) => {
            return state.refuse(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the write failed unexpectedly",
            ))
        }
    };
    let what = graph
        .as_ref()
        .map_or_else(|| "the default graph".to_owned(), |g| format!("graph {g}"));
    if !written.existed && kind == WriteKind::Drop {
        return state.refuse(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no {what} to delete"),
        ));
    }
    state.limits.served.fetch_add(1, Ordering::Relaxed);
    state.limits.committed.fetch_add(1, Ordering::Relaxed);
    tracing::info!(
        inserted = written.report.inserted,
        deleted = written.report.deleted,
        "graph store write committed"
    );
    if minted {
        let name = graph.as_ref().map_or("", |g| g.as_str());
        (
            StatusCode::CREATED,
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::LOCATION, name),
            ],
            format!("created {what}: {} triples\n", written.report.inserted),
        )
            .into_response()
    } else if written.existed {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (
            StatusCode::CREATED,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("created {what}: {} triples\n", written.report.inserted),
        )
            .into_response()
    }
}
