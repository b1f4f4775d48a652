//! Datasets compared up to blank node renaming: the quads a store holds, decoded id by id,
//! against the quads of expected files. Update evaluation tests (`update.rs`) compare the
//! dataset after the request; RDF evaluation tests (`rdf_syntax.rs`) the dataset a document
//! loads into. Blank nodes match through one consistent renaming, those inside triple
//! terms included.

use std::collections::BTreeSet;

use oxrdf::{GraphName, NamedOrBlankNode, Quad, Term};
use quiver_store::Store;

use crate::answer::Row;
use crate::compare::isomorphic_bags;

/// Every quad of a store, each of its terms decoded from the dictionary. A stored id that
/// does not decode, or that decodes to a term its position cannot hold (a literal subject,
/// a predicate that is no IRI), is an error: nothing is silently left out.
pub fn store_quads(store: &Store) -> Result<Vec<Quad>, String> {
    let mut ids = Vec::new();
    store.for_each_quad(|quad| ids.push(quad));
    let decode = |id| {
        store
            .term(id)
            .ok_or_else(|| format!("the store cannot decode the term of id {id:?}"))
    };
    ids.into_iter()
        .map(|quad| {
            let subject: NamedOrBlankNode = match decode(quad.subject)? {
                Term::NamedNode(n) => n.into(),
                Term::BlankNode(b) => b.into(),
                other => return Err(format!("the store holds a quad with subject {other}")),
            };
            let predicate = match decode(quad.predicate)? {
                Term::NamedNode(n) => n,
                other => return Err(format!("the store holds a quad with predicate {other}")),
            };
            let graph = match quad.graph {
                None => GraphName::DefaultGraph,
                Some(id) => match decode(id)? {
                    Term::NamedNode(n) => n.into(),
                    Term::BlankNode(b) => b.into(),
                    other => return Err(format!("the store holds a quad in graph {other}")),
                },
            };
            Ok(Quad::new(subject, predicate, decode(quad.object)?, graph))
        })
        .collect()
}

/// `Ok` when the two datasets are equal up to blank node renaming (repeated quads count
/// once); else what differs, `what` naming the actual dataset ("the dataset after the
/// update").
pub fn compare_datasets(expected: &[Quad], actual: &[Quad], what: &str) -> Result<(), String> {
    let rows = |quads: &[Quad]| -> Vec<Row> {
        let mut seen = BTreeSet::new();
        quads
            .iter()
            .filter(|q| seen.insert(q.to_string()))
            .map(|q| {
                let graph = match &q.graph_name {
                    GraphName::DefaultGraph => None,
                    GraphName::NamedNode(n) => Some(Term::from(n.clone())),
                    GraphName::BlankNode(b) => Some(Term::from(b.clone())),
                };
                vec![
                    Some(Term::from(q.subject.clone())),
                    Some(Term::from(q.predicate.clone())),
                    Some(q.object.clone()),
                    graph,
                ]
            })
            .collect()
    };
    let (expected_rows, actual_rows) = (rows(expected), rows(actual));
    if isomorphic_bags(&expected_rows, &actual_rows)? {
        return Ok(());
    }
    let lines = |quads: &[Quad]| -> BTreeSet<String> {
        quads
            .iter()
            .filter(|q| !q.to_string().contains("_:"))
            .map(ToString::to_string)
            .collect()
    };
    let (e, a) = (lines(expected), lines(actual));
    let missing: Vec<&String> = e.difference(&a).take(5).collect();
    let extra: Vec<&String> = a.difference(&e).take(5).collect();
    let blank_note = if missing.is_empty() && extra.is_empty() {
        " (the quads without blank nodes agree: the difference is in those with blank nodes)"
    } else {
        ""
    };
    Err(format!(
        "{what} differs: {} quads expected, {} found; missing {missing:?}; unexpected \
         {extra:?}{blank_note}",
        expected_rows.len(),
        actual_rows.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quads(nquads: &str) -> Vec<Quad> {
        oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::NQuads)
            .for_slice(nquads.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn compare(expected: &[Quad], actual: &[Quad]) -> Result<(), String> {
        compare_datasets(expected, actual, "the dataset")
    }

    #[test]
    fn datasets_compare_up_to_blank_node_renaming_only() {
        let expected =
            quads("_:a <http://p> <http://o> <http://g> .\n<http://s> <http://p> _:a .\n");
        let renamed =
            quads("_:z <http://p> <http://o> <http://g> .\n<http://s> <http://p> _:z .\n");
        assert_eq!(compare(&expected, &renamed), Ok(()));
        // The same blank node must be the same on both sides.
        let split = quads("_:y <http://p> <http://o> <http://g> .\n<http://s> <http://p> _:z .\n");
        assert!(compare(&expected, &split).is_err());
        // Another graph, a missing quad, an extra quad.
        let moved = quads("_:a <http://p> <http://o> .\n<http://s> <http://p> _:a .\n");
        assert!(compare(&expected, &moved).is_err());
        let fewer = quads("<http://s> <http://p> _:a .\n");
        assert!(compare(&expected, &fewer).is_err());
        let ground = quads("<http://s> <http://p> <http://o> .\n");
        let more =
            quads("<http://s> <http://p> <http://o> .\n<http://s> <http://p> <http://x> .\n");
        let error = compare(&ground, &more).unwrap_err();
        assert!(
            error.contains("unexpected [\"<http://s> <http://p> <http://x>\"]"),
            "{error}"
        );
    }

    #[test]
    fn blank_nodes_inside_triple_terms_are_renamed_with_the_others() {
        let expected = quads(
            "_:r <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( _:a <http://p> _:b )>> .\n\
             _:a <http://q> <http://o> .\n",
        );
        let renamed = quads(
            "_:x <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( _:y <http://p> _:z )>> .\n\
             _:y <http://q> <http://o> .\n",
        );
        assert_eq!(compare(&expected, &renamed), Ok(()));
        // The blank node in the triple term is not the one the other quad describes.
        let inconsistent = quads(
            "_:x <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( _:y <http://p> _:z )>> .\n\
             _:z <http://q> <http://o> .\n",
        );
        let error = compare(&expected, &inconsistent).unwrap_err();
        assert!(error.contains("blank nodes"), "{error}");
        // A triple term with an IRI where a blank node is expected.
        let ground = quads(
            "_:x <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( <http://a> <http://p> _:z )>> .\n\
             <http://a> <http://q> <http://o> .\n",
        );
        assert!(compare(&expected, &ground).is_err());
    }
}
