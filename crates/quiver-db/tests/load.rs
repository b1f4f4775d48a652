//! `LOAD`: local files and directories through the database's handler, compared with
//! Oxigraph's Turtle parser.

use crate::common;

use std::collections::BTreeSet;
use std::io::Write;

use common::*;
use oxrdf::{NamedOrBlankNode, Quad, Term};
use quiver_db::FileLoader;
use quiver_sparql::update::LoadHandler;

const TURTLE: &str = r#"@prefix ex: <http://example.org/> .
ex:a ex:p "one", "two"@en ;
     ex:q <relative> .
_:b1 ex:p ex:a .
_:b1 ex:q _:b2 .
"#;

fn is_blank(quad: &Quad) -> bool {
    matches!(quad.subject, NamedOrBlankNode::BlankNode(_))
        || matches!(quad.object, Term::BlankNode(_))
}

fn ground(quads: &[Quad]) -> BTreeSet<String> {
    quads
        .iter()
        .filter(|q| !is_blank(q))
        .map(|q| quad_text(q.as_ref()))
        .collect()
}

#[test]
fn a_turtle_file_loads_like_oxigraph_parses_it() {
    let dir = Scratch::new("load-ttl");
    let path = dir.path().join("data.ttl");
    std::fs::write(&path, TURTLE).unwrap();
    let iri = format!("file://{}", path.display());
    let loaded = FileLoader.load(&iri).unwrap();
    let reference: Vec<Quad> = oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::Turtle)
        .with_base_iri(&iri)
        .unwrap()
        .for_reader(TURTLE.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(loaded.len(), reference.len());
    assert_eq!(ground(&loaded), ground(&reference));
    assert!(ground(&loaded)
        .iter()
        .any(|q| q.contains(&format!("<file://{}/relative>", dir.path().display()))));
    // Blank nodes: renamed, consistently within the document, fresh for each load.
    let blanks = |quads: &[Quad]| -> BTreeSet<String> {
        quads
            .iter()
            .filter_map(|q| match &q.subject {
                NamedOrBlankNode::BlankNode(b) => Some(b.as_str().to_owned()),
                _ => None,
            })
            .collect()
    };
    let first = blanks(&loaded);
    assert_eq!(first.len(), 1);
    assert!(!first.contains("b1"));
    let again = blanks(&FileLoader.load(path.to_str().unwrap()).unwrap());
    assert!(first.is_disjoint(&again));
}

#[test]
fn a_directory_loads_every_rdf_file_gzip_included() {
    let dir = Scratch::new("load-dir");
    std::fs::write(
        dir.path().join("a.nt"),
        "<http://e/s> <http://e/p> <http://e/o> .\n",
    )
    .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"<http://e/s> <http://e/p> \"x\" <http://e/g> .\n")
        .unwrap();
    std::fs::write(dir.path().join("b.nq.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not RDF").unwrap();
    let loaded: BTreeSet<String> = FileLoader
        .load(dir.path().to_str().unwrap())
        .unwrap()
        .iter()
        .map(|q| quad_text(q.as_ref()))
        .collect();
    let expected: BTreeSet<String> = [
        "<http://e/s> <http://e/p> <http://e/o> ".to_string(),
        "<http://e/s> <http://e/p> \"x\" <http://e/g>".to_string(),
    ]
    .into();
    assert_eq!(loaded, expected);
}

#[test]
fn bad_sources_are_clear_errors() {
    let dir = Scratch::new("load-bad");
    let error = FileLoader.load("https://example.org/data.ttl").unwrap_err();
    assert!(
        error.contains("LOAD of remote IRIs is not supported"),
        "{error}"
    );
    assert!(error.contains("download the file"), "{error}");
    let missing = dir.path().join("missing.ttl");
    let error = FileLoader.load(missing.to_str().unwrap()).unwrap_err();
    assert!(error.contains("missing.ttl"), "{error}");
    let broken = dir.path().join("broken.ttl");
    std::fs::write(&broken, "<http://e/s> <http://e/p> .\n").unwrap();
    let error = FileLoader
        .load(&format!("file://{}", broken.display()))
        .unwrap_err();
    assert!(error.contains("broken.ttl"), "{error}");
    let unknown = dir.path().join("data.csv");
    std::fs::write(&unknown, "a,b").unwrap();
    let error = FileLoader.load(unknown.to_str().unwrap()).unwrap_err();
    assert!(error.contains("unsupported file extension"), "{error}");
}
