//! The query page: YASGUI, vendored and embedded in the binary, wired to the dataset it is
//! served for.
//!
//! | route | what |
//! |---|---|
//! | `/` | the page: a small HTML shell ([`PAGE`]) |
//! | `/ui/yasgui.min.js`, `/ui/yasgui.min.css` | YASGUI's prebuilt bundle (`scripts/web` copies it from the npm package `web/package-lock.json` pins) |
//! | `/ui/quiver.js`, `/ui/quiver.css` | the glue: endpoint, completions, examples, the Explain tab, the update token |
//! | `/ui/config` | JSON: endpoint, write policy, size, reasoning, prefixes, examples |
//! | `/ui/complete?type=class\|property&q=IRI` | JSON: the store's classes or predicates whose IRI starts with `q`, most used first |
//!
//! Nothing on the page comes from another host: the page's `Content-Security-Policy`
//! allows scripts, styles and requests from this origin only (YASQE's defaults would ask
//! prefix.cc and Linked Open Vocabularies; the glue replaces those completers by the
//! store's own). Assets are sent gzip-compressed to clients that accept it (compressed once,
//! on first use), with an `ETag`, so a reload costs a 304.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use quiver_model::prefixes::Prefixes;
use quiver_sparql::{ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;
use serde_json::{json, Value};

use crate::state::AppState;

/// The page: links the assets below, relative to the dataset's path.
pub const PAGE: &str = include_str!("../assets/page.html");

/// What the page may load: this origin only. Styles may also be set inline (CodeMirror and
/// YASR position their widgets with style attributes); images may be `data:` URLs.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// Classes and predicates offered per completion request, at most.
const COMPLETIONS: usize = 50;
/// Namespaces of the store given a prefix on the page (besides `rdf:` and the well-known).
const PAGE_PREFIXES: usize = 8;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
    /// Immutable between builds: cached for a day; else revalidated each time.
    vendored: bool,
}

const ASSETS: [Asset; 4] = [
    Asset {
        name: "yasgui.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../assets/yasgui.min.js"),
        vendored: true,
    },
    Asset {
        name: "yasgui.min.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../assets/yasgui.min.css"),
        vendored: true,
    },
    Asset {
        name: "quiver.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../assets/quiver.js"),
        vendored: false,
    },
    Asset {
        name: "quiver.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../assets/quiver.css"),
        vendored: false,
    },
];

/// An asset's gzip-compressed bytes and entity tag, made on first use.
struct Encoded {
    gzip: Vec<u8>,
    etag: String,
}

fn encoded(index: usize) -> &'static Encoded {
    static ENCODED: [OnceLock<Encoded>; 4] = [const { OnceLock::new() }; 4];
    ENCODED[index].get_or_init(|| {
        let bytes = ASSETS[index].bytes;
        Encoded {
            gzip: gzip(bytes),
            etag: format!("\"{:016x}-{}\"", fnv1a(bytes), bytes.len()),
        }
    })
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder
        .write_all(bytes)
        .expect("compressing into memory cannot fail");
    encoder
        .finish()
        .expect("compressing into memory cannot fail")
}

/// FNV-1a, 64 bits: an entity tag for bytes fixed at build time (not a defence against
/// anyone, only a change detector).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The page and its assets' sizes, plain and gzip-compressed: (name, bytes, gzip bytes).
pub fn sizes() -> Vec<(&'static str, usize, usize)> {
    let mut sizes = vec![("page.html", PAGE.len(), gzip(PAGE.as_bytes()).len())];
    for (i, asset) in ASSETS.iter().enumerate() {
        sizes.push((asset.name, asset.bytes.len(), encoded(i).gzip.len()));
    }
    sizes
}

/// The routes of the page's assets and data, for one dataset.
pub fn routes(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/ui/config", get(config))
        .route("/ui/complete", get(complete))
        .route("/ui/{asset}", get(asset))
        .with_state(state)
}

/// The page itself, with the policy that keeps it to this origin.
pub async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
        .into_response()
}

async fn asset(
    axum::extract::Path(name): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(index) = ASSETS.iter().position(|a| a.name == name) else {
        return (StatusCode::NOT_FOUND, "no such asset\n").into_response();
    };
    let asset = &ASSETS[index];
    let encoded = encoded(index);
    let cache = if asset.vendored {
        "public, max-age=86400"
    } else {
        "no-cache"
    };
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == encoded.etag));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else if accepts_gzip(&headers) {
        let mut response = encoded.gzip.clone().into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        response
    } else {
        asset.bytes.into_response()
    };
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    out.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(etag) = HeaderValue::from_str(&encoded.etag) {
        out.insert(header::ETAG, etag);
    }
    response
}

/// Whether `Accept-Encoding` lists gzip with a non-zero weight.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let Some(accept) = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    accept.split(',').any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

/// The store's classes and predicates with their use, most used first.
struct Vocabulary {
    classes: Vec<(String, u64)>,
    predicates: Vec<(String, u64)>,
}

impl Vocabulary {
    fn of(store: &Store) -> Self {
        let iri = |id| match store.term(id) {
            Some(oxrdf::Term::NamedNode(node)) => Some(node.into_string()),
            _ => None,
        };
        let mut classes: Vec<(String, u64)> = store
            .class_stats()
            .filter_map(|c| Some((iri(c.class)?, c.instances)))
            .collect();
        let mut predicates: Vec<(String, u64)> = (0..store.predicate_count())
            .filter_map(|p| {
                let p = p as quiver_model::PredId;
                Some((
                    iri(store.predicate_term(p))?,
                    store.predicate_stats(p).triples,
                ))
            })
            .filter(|(_, triples)| *triples > 0)
            .collect();
        let order = |a: &(String, u64), b: &(String, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        classes.sort_by(order);
        predicates.sort_by(order);
        Vocabulary {
            classes,
            predicates,
        }
    }

    fn prefixes(&self) -> Prefixes {
        Prefixes::choose_at_most(
            self.classes
                .iter()
                .chain(&self.predicates)
                .map(|(iri, _)| iri.as_str()),
            PAGE_PREFIXES,
        )
        .with_well_known()
    }
}

/// `/ui/config`: what the page needs to know about this dataset.
async fn config(State(state): State<Arc<AppState>>) -> Response {
    let store = state.snapshot();
    let vocabulary = Vocabulary::of(&store);
    let prefixes = vocabulary.prefixes();
    let used_by = match vocabulary.classes.first() {
        Some((class, _)) => {
            let (state, store, class) = (state.clone(), store.clone(), class.clone());
            tokio::task::spawn_blocking(move || predicate_used_by(&state, &store, &class))
                .await
                .ok()
                .flatten()
        }
        None => None,
    };
    let (triples, terms) = state.size();
    let body = json!({
        "dataset": state.name,
        "endpoint": "query",
        "writable": state.access.writable,
        "token_required": state.access.writable && state.access.token.is_some(),
        "triples": triples,
        "terms": terms,
        "reasoning": store.entailment().map(|layer| json!({
            "profile": layer.profile().name(),
            "default": state.config.reasoning,
        })),
        "prefixes": prefixes.list().iter().map(|(name, ns)| (name.clone(), Value::from(ns.as_str()))).collect::<serde_json::Map<_, _>>(),
        "examples": examples(&vocabulary, &prefixes, used_by.as_deref(), state.access.writable),
    });
    crate::admin::json(StatusCode::OK, body)
}

/// Example queries made from the store's own classes and predicates.
fn examples(
    vocabulary: &Vocabulary,
    prefixes: &Prefixes,
    used_by: Option<&str>,
    writable: bool,
) -> Vec<Value> {
    let mut examples = Vec::new();
    let mut add = |name: String, used: &[&str], body: String| {
        let mut text = String::new();
        for (prefix, namespace) in prefixes.list() {
            let short = format!("{prefix}:");
            if used
                .iter()
                .any(|iri| prefixes.abbreviate(iri).starts_with(&short))
            {
                text.push_str(&format!("PREFIX {prefix}: <{namespace}>\n"));
            }
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&body);
        examples.push(json!({"name": name, "query": text}));
    };
    let short = |iri: &str| prefixes.abbreviate(iri);
    if let Some((class, _)) = vocabulary.classes.first() {
        add(
            format!("Instances of {}", short(class)),
            &[class],
            format!(
                "SELECT ?x WHERE {{\n  ?x a {} .\n}}\nLIMIT 100",
                short(class)
            ),
        );
    }
    // The top class with the predicate its instances use most.
    if let (Some((class, _)), Some(predicate)) = (vocabulary.classes.first(), used_by) {
        add(
            format!("{} of each {}", short(predicate), short(class)),
            &[class, predicate],
            format!(
                "SELECT ?x ?value WHERE {{\n  ?x a {} ;\n     {} ?value .\n}}\nLIMIT 100",
                short(class),
                short(predicate)
            ),
        );
    }
    add(
        "Classes and their instances".into(),
        &[],
        "SELECT ?class (COUNT(?x) AS ?instances) WHERE {\n  ?x a ?class .\n}\nGROUP BY ?class\nORDER BY DESC(?instances)".into(),
    );
    add(
        "Predicates and their triples".into(),
        &[],
        "SELECT ?predicate (COUNT(*) AS ?triples) WHERE {\n  ?s ?predicate ?o .\n}\nGROUP BY ?predicate\nORDER BY DESC(?triples)".into(),
    );
    if let Some((class, _)) = vocabulary.classes.get(1).or(vocabulary.classes.first()) {
        add(
            format!("Describe one {}", short(class)),
            &[class],
            format!(
                "DESCRIBE ?x WHERE {{\n  ?x a {} .\n}}\nLIMIT 1",
                short(class)
            ),
        );
    }
    if writable {
        add(
            "Insert a triple (update)".into(),
            &[],
            "INSERT DATA {\n  <urn:example:subject> <urn:example:predicate> \"a value\" .\n}"
                .into(),
        );
    }
    examples
}

/// The predicate (besides `rdf:type`) that a sample of `class`'s instances use most: a
/// query of its own, under a short deadline (an example is not worth more).
fn predicate_used_by(state: &AppState, store: &Store, class: &str) -> Option<String> {
    let text = format!(
        "SELECT ?p (COUNT(*) AS ?n) WHERE {{ {{ SELECT ?x WHERE {{ ?x a <{class}> }} LIMIT 64 }} \
         ?x ?p ?o . FILTER(?p != <{RDF_TYPE}>) }} GROUP BY ?p ORDER BY DESC(?n) LIMIT 1"
    );
    let (cached, _) = state
        .queries
        .prepare(store, &text, &PrepareOptions::default())
        .ok()?;
    let options = ExecOptions {
        threads: 1,
        timeout: Some(Duration::from_millis(500)),
        pool: Some(state.memory.clone()),
        ..ExecOptions::default()
    };
    match cached.query.execute(store, &options).ok()? {
        QueryResults::Solutions(solutions) if !solutions.is_empty() => {
            match solutions.row(0).into_iter().next()?? {
                oxrdf::Term::NamedNode(node) => Some(node.into_string()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `/ui/complete?type=class|property&q=PREFIX`: IRIs of the store starting with `q` (any
/// when empty), most used first.
async fn complete(State(state): State<Arc<AppState>>, RawQuery(query): RawQuery) -> Response {
    let mut kind = String::new();
    let mut typed = String::new();
    for (key, value) in form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()) {
        match &*key {
            "type" => kind = value.into_owned(),
            "q" => typed = value.into_owned(),
            _ => {}
        }
    }
    let store = state.snapshot();
    let vocabulary = Vocabulary::of(&store);
    let list = match kind.as_str() {
        "class" => &vocabulary.classes,
        "property" => &vocabulary.predicates,
        _ => return (StatusCode::BAD_REQUEST, "type= must be class or property\n").into_response(),
    };
    let typed = typed.trim().trim_start_matches('<').trim_end_matches('>');
    let found: Vec<&str> = list
        .iter()
        .map(|(iri, _)| iri.as_str())
        .filter(|iri| iri.starts_with(typed))
        .take(COMPLETIONS)
        .collect();
    crate::admin::json(StatusCode::OK, json!(found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_accepted_unless_refused() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            accepts_gzip(&headers)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, gzip;q=0.5"));
        assert!(with("*"));
        assert!(!with("gzip;q=0"));
        assert!(!with("br, deflate"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn assets_compress_and_round_trip() {
        use std::io::Read;
        for (i, asset) in ASSETS.iter().enumerate() {
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(&encoded(i).gzip[..])
                .read_to_end(&mut plain)
                .unwrap();
            assert_eq!(plain, asset.bytes, "{}", asset.name);
        }
        // The vendored editor is the bulk of the page; compressed it stays under 400 KB.
        let total: usize = sizes().iter().map(|(_, _, gzip)| gzip).sum();
        assert!(total < 400_000, "page weighs {total} bytes compressed");
    }

    #[test]
    fn the_page_loads_only_its_own_assets() {
        for reference in PAGE.split(['"', '\'']).filter(|s| s.starts_with("ui/")) {
            let name = reference.trim_start_matches("ui/");
            assert!(
                ASSETS.iter().any(|a| a.name == name),
                "the page links {reference}, which is not embedded"
            );
        }
        assert!(!PAGE.contains("http://") && !PAGE.contains("https://"));
    }
}
