//! Test files: `file://` IRIs to paths and back, and RDF files read with `oxrdfio`, the
//! syntax chosen by extension and relative IRIs resolved against the file's own IRI.

use std::path::{Path, PathBuf};

use oxrdf::{BlankNode, GraphName, NamedOrBlankNode, Quad, Term, Triple};
use oxrdfio::{RdfFormat, RdfParser};

use crate::SuiteError;

/// The `file://` IRI of `path` (made absolute).
pub fn file_iri(path: &Path) -> Result<String, SuiteError> {
    let absolute = std::fs::canonicalize(path).map_err(|error| SuiteError::Io {
        path: path.to_owned(),
        error,
    })?;
    let text = absolute.to_str().ok_or_else(|| SuiteError::Manifest {
        path: absolute.clone(),
        message: "path is not valid UTF-8".into(),
    })?;
    let mut iri = String::from("file://");
    for c in text.chars() {
        match c {
            ' ' => iri.push_str("%20"),
            '%' => iri.push_str("%25"),
            '#' => iri.push_str("%23"),
            '\\' => iri.push('/'),
            c => iri.push(c),
        }
    }
    Ok(iri)
}

/// The path a `file://` IRI names.
pub fn iri_to_path(iri: &str) -> Result<PathBuf, SuiteError> {
    let rest = iri
        .strip_prefix("file://")
        .ok_or_else(|| SuiteError::NotAFile(iri.to_owned()))?;
    let rest = rest.split('#').next().unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                decoded.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded)
        .map(PathBuf::from)
        .map_err(|_| SuiteError::NotAFile(iri.to_owned()))
}

/// Reads a file named by IRI as text.
pub fn read_text(iri: &str) -> Result<String, String> {
    let path = iri_to_path(iri).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not valid UTF-8", path.display()))
}

/// The RDF syntax of a file, from its extension.
fn format_of(iri: &str) -> Result<RdfFormat, String> {
    let extension = iri.rsplit('.').next().unwrap_or("");
    RdfFormat::from_extension(extension).ok_or_else(|| format!("{iri}: unknown RDF syntax"))
}

/// Reads an RDF file into quads in `graph` (its triples; quads keep their own graph).
/// Blank node labels get `blank_prefix`, which scopes them to this load.
pub fn read_quads(iri: &str, graph: &GraphName, blank_prefix: &str) -> Result<Vec<Quad>, String> {
    let path = iri_to_path(iri).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parser = RdfParser::from_format(format_of(iri)?)
        .with_base_iri(iri)
        .map_err(|e| e.to_string())?
        .with_default_graph(graph.clone());
    let mut quads = Vec::new();
    for quad in parser.for_slice(&bytes) {
        let quad = quad.map_err(|e| format!("{}: {e}", path.display()))?;
        let graph_name = match quad.graph_name {
            GraphName::BlankNode(b) => scope(b, blank_prefix).into(),
            other => other,
        };
        let triple = scope_triple(
            Triple::new(quad.subject, quad.predicate, quad.object),
            blank_prefix,
        );
        quads.push(triple.in_graph(graph_name));
    }
    Ok(quads)
}

fn scope(node: BlankNode, prefix: &str) -> BlankNode {
    BlankNode::new_unchecked(format!("{prefix}{}", node.as_str()))
}

/// `triple` with `prefix` before every blank node label, inside triple terms too.
fn scope_triple(triple: Triple, prefix: &str) -> Triple {
    let subject = match triple.subject {
        NamedOrBlankNode::BlankNode(b) => scope(b, prefix).into(),
        other => other,
    };
    let object = match triple.object {
        Term::BlankNode(b) => scope(b, prefix).into(),
        Term::Triple(inner) => scope_triple(*inner, prefix).into(),
        other => other,
    };
    Triple::new(subject, triple.predicate, object)
}

/// Reads an RDF file as a graph (a list of distinct triples).
pub fn read_triples(iri: &str) -> Result<Vec<Triple>, String> {
    let mut triples: Vec<Triple> = read_quads(iri, &GraphName::DefaultGraph, "")?
        .into_iter()
        .map(Triple::from)
        .collect();
    dedup(&mut triples);
    Ok(triples)
}

/// Removes repeated triples, keeping the first of each.
pub fn dedup(triples: &mut Vec<Triple>) {
    let mut seen = std::collections::HashSet::new();
    triples.retain(|t| seen.insert(t.clone()));
}
