//! `quiver info`: what a store holds and what it costs.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde_json::json;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Directory of the store
    #[arg(long, required_unless_present = "devices")]
    pub location: Option<PathBuf>,
    /// Print a JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// List the GPUs this build of Quiver sees (with --location, then describe the store)
    #[arg(long)]
    pub devices: bool,
}

pub fn run(args: InfoArgs) -> Result<()> {
    if args.devices {
        for line in crate::device::describe_devices() {
            println!("{line}");
        }
    }
    let Some(location) = &args.location else {
        return Ok(());
    };
    let location = location.as_path();
    let store = crate::location::open_snapshot(location)?;
    let bytes_on_disk = crate::location::bytes_on_disk(location);
    let triples = store.triples();
    let bytes_in_memory = store.data_bytes() as u64;
    let per_triple = |bytes: u64| bytes as f64 / triples.max(1) as f64;
    let predicates: Vec<_> = (0..store.predicate_count() as u32)
        .map(|p| {
            let stats = store.predicate_stats(p);
            json!({
                "predicate": store.term(store.predicate_term(p)).map(|t| t.to_string()),
                "triples": stats.triples,
                "subjects": stats.subjects,
                "objects": stats.objects,
                "max_out_degree": stats.max_out_degree,
                "max_in_degree": stats.max_in_degree,
            })
        })
        .collect();
    let classes: Vec<_> = store
        .class_stats()
        .map(|c| json!({"class": store.term(c.class).map(|t| t.to_string()), "instances": c.instances}))
        .collect();
    let info = store.info();
    // The text index's files (`text/`), when the store has one.
    let text_index_bytes = store
        .text_index()
        .map(|_| crate::location::bytes_on_disk(&location.join(quiver_text::TEXT_DIR)));
    let report = json!({
        "location": location.display().to_string(),
        "triples": triples,
        "terms": store.terms(),
        "predicates": store.predicate_count(),
        "classes": store.class_count(),
        "named_graphs": store.graph_names().count(),
        "reasoning": store.entailment().map(|layer| json!({
            "profile": layer.profile().name(),
            "derived_triples": layer.derived(),
            "entailed_triples": layer.triples(),
        })),
        "text_index_bytes": text_index_bytes,
        "bytes_in_memory": bytes_in_memory,
        "bytes_on_disk": bytes_on_disk,
        "bytes_per_triple": per_triple(bytes_in_memory),
        "dictionary_bytes": store.dictionary().data_bytes(),
        "index_bytes": store.graph().data_bytes(),
        "load": {
            "statements": info.statements,
            "skipped": info.skipped,
            "seconds": info.seconds,
            "sources": info.sources,
        },
        "predicate_statistics": predicates,
        "class_statistics": classes,
    });
    let mut text = String::new();
    if args.json {
        return crate::output::print_stdout(&(serde_json::to_string_pretty(&report)? + "\n"));
    }
    let _ = writeln!(text, "store        {}", location.display());
    let _ = writeln!(text, "triples      {triples}");
    let _ = writeln!(text, "terms        {}", store.terms());
    let _ = writeln!(text, "predicates   {}", store.predicate_count());
    let _ = writeln!(text, "classes      {}", store.class_count());
    let _ = writeln!(text, "named graphs {}", store.graph_names().count());
    if let Some(layer) = store.entailment() {
        let _ = writeln!(
            text,
            "reasoning    {}: {} triples entailed in the default graph, {} of them derived (query with --reasoning)",
            layer.profile(),
            layer.triples(),
            layer.derived()
        );
    }
    if let Some(bytes) = text_index_bytes {
        let _ = writeln!(
            text,
            "text index   {bytes} bytes on disk (query with ?literal quiver:matches \"words\")"
        );
    }
    let _ = writeln!(
        text,
        "memory       {} bytes ({:.1} bytes/triple: dictionary {}, index {})",
        bytes_in_memory,
        per_triple(bytes_in_memory),
        store.dictionary().data_bytes(),
        store.graph().data_bytes()
    );
    let _ = writeln!(
        text,
        "disk         {} bytes ({:.1} bytes/triple)",
        bytes_on_disk,
        per_triple(bytes_on_disk)
    );
    let _ = writeln!(
        text,
        "last load    {} statements in {:.2} s from {}",
        info.statements,
        info.seconds,
        info.sources.join(", ")
    );
    if info.skipped > 0 {
        let _ = writeln!(text, "skipped      {} malformed statements", info.skipped);
    }
    text.push('\n');
    text.push_str(&statistics_tables(&predicates, &classes));
    crate::output::print_stdout(&text)
}

/// The predicate and class tables of the text report, their IRIs shortened with the
/// prefixes the store uses most (a `PREFIX` legend first), columns aligned whatever the
/// IRIs' lengths.
fn statistics_tables(predicates: &[serde_json::Value], classes: &[serde_json::Value]) -> String {
    use crate::table::{Align, TableWriter};
    // `predicate` and `class` hold N-Triples terms: `<iri>`.
    let iri = |value: &serde_json::Value| {
        let term = value.as_str().unwrap_or("?");
        term.strip_prefix('<')
            .and_then(|t| t.strip_suffix('>'))
            .map(str::to_owned)
            .ok_or_else(|| term.to_owned())
    };
    let predicate_iris: Vec<_> = predicates.iter().map(|p| iri(&p["predicate"])).collect();
    let class_iris: Vec<_> = classes.iter().map(|c| iri(&c["class"])).collect();
    let prefixes = quiver_model::prefixes::Prefixes::choose(
        predicate_iris
            .iter()
            .chain(&class_iris)
            .filter_map(|i| i.as_deref().ok()),
    );
    let short = |i: &Result<String, String>| match i {
        Ok(iri) => prefixes.abbreviate(iri),
        Err(term) => term.clone(),
    };
    let number = |v: &serde_json::Value| v.as_u64().unwrap_or(0).to_string();
    let mut out = Vec::new();
    for line in prefixes.legend() {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    if !prefixes.legend().is_empty() {
        out.push(b'\n');
    }
    let header = ["predicate", "triples", "subjects", "objects"].map(String::from);
    let mut table = TableWriter::new(out, header.to_vec()).with_align(vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    for (p, iri) in predicates.iter().zip(&predicate_iris) {
        let cells = vec![
            short(iri),
            number(&p["triples"]),
            number(&p["subjects"]),
            number(&p["objects"]),
        ];
        let _ = table.row(cells);
    }
    let mut out = table.finish().unwrap_or_default();
    if !classes.is_empty() {
        out.push(b'\n');
        let header = vec!["class".to_owned(), "instances".to_owned()];
        let mut table = TableWriter::new(out, header).with_align(vec![Align::Left, Align::Right]);
        for (c, iri) in classes.iter().zip(&class_iris) {
            let _ = table.row(vec![short(iri), number(&c["instances"])]);
        }
        out = table.finish().unwrap_or_default();
    }
    String::from_utf8_lossy(&out).into_owned()
}
