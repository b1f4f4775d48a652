//! `quiver info`: what a store holds and what it costs.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde_json::json;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Print a JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: InfoArgs) -> Result<()> {
    let store = crate::location::open_snapshot(&args.location)?;
    let bytes_on_disk = crate::location::bytes_on_disk(&args.location);
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
    let report = json!({
        "location": args.location.display().to_string(),
        "triples": triples,
        "terms": store.terms(),
        "predicates": store.predicate_count(),
        "classes": store.class_count(),
        "named_graphs": store.graph_names().count(),
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
    let _ = writeln!(text, "store        {}", args.location.display());
    let _ = writeln!(text, "triples      {triples}");
    let _ = writeln!(text, "terms        {}", store.terms());
    let _ = writeln!(text, "predicates   {}", store.predicate_count());
    let _ = writeln!(text, "classes      {}", store.class_count());
    let _ = writeln!(text, "named graphs {}", store.graph_names().count());
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
    let _ = writeln!(
        text,
        "\n{:<60} {:>12} {:>10} {:>10}",
        "predicate", "triples", "subjects", "objects"
    );
    for p in &predicates {
        let _ = writeln!(
            text,
            "{:<60} {:>12} {:>10} {:>10}",
            p["predicate"].as_str().unwrap_or("?"),
            p["triples"].as_u64().unwrap_or(0),
            p["subjects"].as_u64().unwrap_or(0),
            p["objects"].as_u64().unwrap_or(0)
        );
    }
    crate::output::print_stdout(&text)
}
