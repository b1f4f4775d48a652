//! `quiver dump`: write every quad of a store's latest version as RDF.
//!
//! The store is opened through its database, so commits still in the log are included.
//! Quads are decoded and serialized one at a time (oxrdfio's streaming serializers behind
//! a 64 KiB buffer), never gathered into one string; a file is written under a temporary
//! name and renamed into place when complete (see `output.rs`). N-Quads and TriG hold
//! every graph; N-Triples and Turtle hold one, so for a store with named graphs `--graph`
//! must pick it (`default` or an IRI). Empty named graphs have no quads and do not appear.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use oxrdf::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfSerializer};
use quiver_model::term::TAG_TRIPLE;
use quiver_model::Id;
use quiver_store::Store;

use crate::location::open_snapshot;
use crate::output::Output;

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Syntax: nquads, trig (every graph), ntriples, turtle (one graph: see --graph)
    #[arg(long, default_value = "nquads", value_parser = parse_format)]
    pub format: RdfFormat,
    /// Only this graph: `default`, or a named graph's IRI
    #[arg(long, value_name = "default|IRI")]
    pub graph: Option<String>,
    /// Output file (written atomically); standard output by default
    #[arg(long)]
    pub output: Option<PathBuf>,
}

fn parse_format(name: &str) -> Result<RdfFormat, String> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "nquads" | "nq" | "n-quads" => RdfFormat::NQuads,
        "trig" => RdfFormat::TriG,
        "ntriples" | "nt" | "n-triples" => RdfFormat::NTriples,
        "turtle" | "ttl" => RdfFormat::Turtle,
        "jsonld" | "json-ld" => RdfFormat::JsonLd {
            profile: oxrdfio::JsonLdProfileSet::empty(),
        },
        _ => {
            return Err(format!(
                "unknown format '{name}' (nquads, trig, ntriples, turtle, jsonld)"
            ))
        }
    })
}

/// Which quads go out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Selection {
    All,
    Default,
    Named(Id),
}

impl Selection {
    fn takes(self, graph: Option<Id>) -> bool {
        match self {
            Selection::All => true,
            Selection::Default => graph.is_none(),
            Selection::Named(name) => graph == Some(name),
        }
    }
}

/// The selection `--graph` asks for, checked against the store and the format.
fn selection(store: &Store, graph: Option<&str>, format: RdfFormat) -> Result<Selection> {
    let selection = match graph {
        None => Selection::All,
        Some("default") => Selection::Default,
        Some(iri) => {
            let iri = iri
                .strip_prefix('<')
                .and_then(|i| i.strip_suffix('>'))
                .unwrap_or(iri);
            let node = NamedNode::new(iri)
                .map_err(|e| anyhow!("--graph: '{iri}' is not `default` or an IRI: {e}"))?;
            match store
                .iri_id(node.as_str())
                .filter(|&id| store.has_named_graph(id))
            {
                Some(id) => Selection::Named(id),
                None => bail!("--graph: the store has no graph {node}"),
            }
        }
    };
    if selection == Selection::All && !format.supports_datasets() {
        let named = store
            .graph_names()
            .filter(|&name| store.named_graph(name).is_some_and(|g| g.triples() > 0))
            .count();
        if named > 0 {
            bail!(
                "the store has {named} named graph(s), which {} cannot hold: dump as nquads or \
                 trig, or pick one graph with --graph default|IRI",
                format.name()
            );
        }
    }
    Ok(selection)
}

pub fn run(args: DumpArgs) -> Result<()> {
    let store = open_snapshot(&args.location)?;
    let selection = selection(&store, args.graph.as_deref(), args.format)?;
    if matches!(args.format, RdfFormat::JsonLd { .. }) && holds_triple_terms(&store, selection) {
        // Refused before the output is opened (the serializer would stop midway).
        bail!(
            "the store holds triple terms (RDF 1.2), which JSON-LD cannot write: dump it as \
             nquads, trig, ntriples or turtle"
        );
    }
    let output = Output::open(args.output.as_deref())?;
    let destination = output.describe();
    let writer = BufWriter::with_capacity(1 << 16, output);
    let (writer, quads) = write_quads(&store, selection, args.format, writer)
        .with_context(|| format!("writing to {destination}"))?;
    let output = writer
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing to {destination}"))?;
    output.finish()?;
    if args.output.is_some() {
        eprintln!("dumped {quads} quads to {destination}");
    }
    Ok(())
}

/// Whether a selected quad has a triple term as its object. The dictionary is asked first
/// (its sorted part holds triple terms in one run of ids, tag 7), so a store without any
/// is not read quad by quad.
fn holds_triple_terms(store: &Store, selection: Selection) -> bool {
    let dictionary = store.dictionary();
    let base = dictionary.base_len();
    let sorted = dictionary.rank(&[TAG_TRIPLE])..base;
    let mut cursor = dictionary.cursor();
    let appended = (base..store.terms()).filter(|&id| {
        Id::try_from(id)
            .ok()
            .and_then(|id| cursor.term(id))
            .is_some_and(|bytes| bytes.first() == Some(&TAG_TRIPLE))
    });
    let appended: std::collections::HashSet<u64> = appended.collect();
    if sorted.is_empty() && appended.is_empty() {
        return false;
    }
    let mut found = false;
    store.for_each_quad(|quad| {
        let object = quad.object as u64;
        found |=
            selection.takes(quad.graph) && (sorted.contains(&object) || appended.contains(&object));
    });
    found
}

/// Serializes the selected quads of `store` to `writer`; gives the writer back and the
/// number of quads written.
fn write_quads<W: Write>(
    store: &Store,
    selection: Selection,
    format: RdfFormat,
    writer: W,
) -> std::io::Result<(W, u64)> {
    let mut serializer = RdfSerializer::from_format(format).for_writer(writer);
    let triples_only = !format.supports_datasets();
    let mut cache: HashMap<Id, Term> = HashMap::new();
    let mut error = None;
    let mut written = 0u64;
    store.for_each_quad(|quad| {
        if error.is_some() || !selection.takes(quad.graph) {
            return;
        }
        let result = decode(store, &mut cache, quad, triples_only)
            .and_then(|quad| serializer.serialize_quad(&quad));
        match result {
            Ok(()) => written += 1,
            Err(e) => error = Some(e),
        }
    });
    if let Some(error) = error {
        return Err(error);
    }
    Ok((serializer.finish()?, written))
}

/// The RDF quad of `quad`; predicates and graph names (few, repeated) are cached.
fn decode(
    store: &Store,
    cache: &mut HashMap<Id, Term>,
    quad: quiver_store::Quad,
    triples_only: bool,
) -> std::io::Result<Quad> {
    let corrupt = |what: &str, id: Id| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the store's {what} {id} is not a valid term there"),
        )
    };
    let term = |id: Id| store.term(id).ok_or_else(|| corrupt("term", id));
    let mut cached = |id: Id| -> std::io::Result<Term> {
        if let Some(term) = cache.get(&id) {
            return Ok(term.clone());
        }
        let decoded = store.term(id).ok_or_else(|| corrupt("term", id))?;
        cache.insert(id, decoded.clone());
        Ok(decoded)
    };
    let subject = match term(quad.subject)? {
        Term::NamedNode(node) => NamedOrBlankNode::from(node),
        Term::BlankNode(node) => NamedOrBlankNode::from(node),
        _ => return Err(corrupt("subject", quad.subject)),
    };
    let Term::NamedNode(predicate) = cached(quad.predicate)? else {
        return Err(corrupt("predicate", quad.predicate));
    };
    let object = term(quad.object)?;
    let graph_name = match (quad.graph, triples_only) {
        (None, _) | (Some(_), true) => GraphName::DefaultGraph,
        (Some(graph), false) => match cached(graph)? {
            Term::NamedNode(node) => GraphName::NamedNode(node),
            Term::BlankNode(node) => GraphName::BlankNode(node),
            _ => return Err(corrupt("graph name", graph)),
        },
    };
    Ok(Quad::new(subject, predicate, object, graph_name))
}
