//! Aggregates over rows counted on the workers: a GROUP BY whose keys and aggregates read
//! only variables of its pattern (plain, or through an expression decided by them) has the
//! pattern's rows counted by those columns where they are found, and the coordinator
//! weighs what it receives (SUM and AVG multiply, COUNT adds the weights, GROUP_CONCAT
//! repeats; MIN, MAX, SAMPLE and DISTINCT read the set). Each answer must be the whole
//! store's, and the rows moved the counted pairs, not the pattern's rows, a FILTER between
//! the grouping (or a DISTINCT) and the pattern included when it reads only the pattern's
//! variables.

use crate::common;

use std::sync::Arc;

use oxrdf::vocab::{rdf, xsd};
use oxrdf::{GraphName, Literal, NamedNode, Quad, Term};
use quiver_cluster::TimelyPartitions;
use quiver_sparql::partitions::BgpPartitions;
use quiver_store::Store;

const EX: &str = "http://example.org/";

/// The prices items take, by `item % 7`: integers, a decimal and a double (each exact in
/// binary, so that a sum does not depend on the order it is added in).
fn price(item: u32) -> Literal {
    match item % 7 {
        0..=3 => Literal::from(i64::from(item % 7) + 1),
        4 => Literal::new_typed_literal("2.5", xsd::DECIMAL),
        5 => Literal::new_typed_literal("0.25", xsd::DOUBLE),
        _ => Literal::new_typed_literal("-7", xsd::INTEGER),
    }
}

/// 3,000 items (of class `ex:Item`) in 6 groups, each with a price ([`price`]), its group's label and a name
/// of its own; one item of group 5 has a second price that is no number.
fn shop() -> Store {
    let iri = |s: String| NamedNode::new(s).unwrap();
    let ex = |name: &str| iri(format!("{EX}{name}"));
    let mut quads = Vec::new();
    let mut add = |s: NamedNode, p: NamedNode, o: Term| {
        quads.push(Quad::new(s, p, o, GraphName::DefaultGraph));
    };
    for item in 0..3000u32 {
        let node = ex(&format!("item{item}"));
        let group = item % 6;
        add(node.clone(), rdf::TYPE.into_owned(), ex("Item").into());
        add(
            node.clone(),
            ex("group"),
            ex(&format!("group{group}")).into(),
        );
        add(node.clone(), ex("price"), price(item).into());
        add(
            node.clone(),
            ex("label"),
            Literal::new_simple_literal(format!("g{group}")).into(),
        );
        add(
            node,
            ex("name"),
            Literal::new_simple_literal(format!("item {item}")).into(),
        );
    }
    add(ex("item5"), ex("price"), Literal::from("free").into());
    quiver_loader::load_quads(quads, None).unwrap().0
}

#[test]
fn aggregates_over_counted_rows_answer_like_the_whole_store() {
    let store = shop();
    let prefix = format!("PREFIX ex: <{EX}> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ");
    // Counted by (group, price): 42 pairs and the odd price, of 3,001 rows.
    let counted = [
        "SELECT ?g (SUM(?p) AS ?s) (AVG(?p) AS ?a) (MIN(?p) AS ?lo) (MAX(?p) AS ?hi) \
         (COUNT(?p) AS ?n) (COUNT(*) AS ?all) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
        "SELECT (SUM(?p) AS ?s) (AVG(?p) AS ?a) (COUNT(DISTINCT ?p) AS ?d) \
         WHERE { ?i a ex:Item ; ex:price ?p }",
        "SELECT ?g (GROUP_CONCAT(?l) AS ?c) (SAMPLE(?l) AS ?one) (COUNT(DISTINCT ?p) AS ?d) \
         (SUM(DISTINCT ?p) AS ?sd) (AVG(DISTINCT ?p) AS ?ad) \
         WHERE { ?i a ex:Item ; ex:group ?g ; ex:label ?l ; ex:price ?p } GROUP BY ?g",
        "SELECT ?g (SUM(?p) AS ?s) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } \
         GROUP BY ?g HAVING (SUM(?p) > 100) ORDER BY ?s",
        "SELECT ?g (SUM(?p) AS ?s) (COUNT(*) AS ?n) \
         WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p . FILTER(?p > 1) } GROUP BY ?g",
        "SELECT (SUM(?p) AS ?s) (AVG(?p) AS ?a) (COUNT(DISTINCT ?p) AS ?d) \
         WHERE { ?i a ex:Item ; ex:price ?p . FILTER(isNumeric(?p)) }",
        "SELECT DISTINCT ?g WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p . FILTER(?p < 0) }",
        "SELECT ?g (AVG(xsd:float(xsd:string(?p))) AS ?a) (SUM(?p * 2) AS ?s) \
         (COUNT(xsd:integer(?p)) AS ?n) (MAX(STR(?p)) AS ?m) \
         WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
    ];
    // Not counted (keys unique per row, which the workers send uncounted, a filter with
    // EXISTS, a filter that seeds the pattern with its one passing id, a random
    // expression, every solution's DISTINCT): the whole store's answers all the same.
    let others = [
        "SELECT ?g (SUM(?p) AS ?s) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p ; \
         ex:name ?n . FILTER(STRENDS(?n, \"7\")) } GROUP BY ?g",
        "SELECT ?g (SUM(?p) AS ?s) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p . \
         FILTER EXISTS { ?i ex:label \"g1\" } } GROUP BY ?g",
        "SELECT ?g (SUM(?p) AS ?s) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p . \
         FILTER(?g = ex:group1) } GROUP BY ?g",
        "SELECT DISTINCT ?g WHERE { ?i a ex:Item ; ex:group ?g . FILTER(?g != ex:group1) }",
        "SELECT DISTINCT ?g ?l WHERE { ?i a ex:Item ; ex:group ?g ; ex:label ?l ; ex:name ?n . \
         FILTER(STRENDS(?n, \"7\")) } ORDER BY ?l",
        "SELECT ?g (COUNT(IF(RAND() < 2, ?p, ?p)) AS ?n) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
        "SELECT ?g (COUNT(DISTINCT *) AS ?n) WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
        // Names read by a FILTER as well as by MAX: not narrowed, sent uncounted.
        "SELECT ?g (MAX(?n) AS ?last) WHERE { ?i a ex:Item ; ex:group ?g ; ex:name ?n . \
         FILTER(?n != \"item 7\") } GROUP BY ?g",
        // Names read by GROUP_CONCAT as well: not narrowed.
        "SELECT ?g (MAX(?n) AS ?last) (STRLEN(GROUP_CONCAT(?n)) AS ?all) \
         WHERE { ?i a ex:Item ; ex:group ?g ; ex:name ?n } GROUP BY ?g",
    ];
    // Each worker sends each of the 43 counted pairs once at most.
    for query in &counted {
        answers_like_the_whole_store(&store, &format!("{prefix}{query}"), Some(43));
    }
    for query in &others {
        answers_like_the_whole_store(&store, &format!("{prefix}{query}"), None);
    }
}

/// A counted column that only MIN or MAX read is narrowed on each worker to each group's
/// least and greatest value before it is counted: values unique per row (items, names)
/// then leave a worker as a few rows per group, not one per row, and every answer is the
/// whole store's: over IRIs and strings, over numbers (which do not sort by id: the worker
/// ranks them by their terms), with a FILTER counted through, and with MIN and MAX of
/// different columns.
#[test]
fn values_only_min_or_max_read_are_narrowed_on_the_workers() {
    let store = shop();
    let prefix = format!("PREFIX ex: <{EX}> ");
    // (query, the most rows a worker may send beside the start)
    let queries = [
        // Counted by (group, price, item): items narrowed per (group, price), 43 pairs.
        (
            "SELECT ?g (MIN(?i) AS ?first) (MAX(?i) AS ?last) (SUM(?p) AS ?s) (COUNT(?i) AS ?n) \
             WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
            86,
        ),
        (
            "SELECT ?g (MAX(?n) AS ?last) (COUNT(*) AS ?c) \
             WHERE { ?i a ex:Item ; ex:group ?g ; ex:name ?n } GROUP BY ?g",
            6,
        ),
        (
            "SELECT ?g (MIN(?n) AS ?first) (MAX(?i) AS ?last) \
             WHERE { ?i a ex:Item ; ex:group ?g ; ex:name ?n } GROUP BY ?g",
            6,
        ),
        (
            "SELECT (MIN(?n) AS ?first) (MAX(DISTINCT ?n) AS ?last) (COUNT(*) AS ?c) \
             WHERE { ?i ex:name ?n }",
            2,
        ),
        // Narrowed per (group, label): the filter reads the label, not the name.
        (
            "SELECT ?g (MIN(?n) AS ?first) WHERE { ?i a ex:Item ; ex:group ?g ; ex:label ?l ; \
             ex:name ?n . FILTER(?l != \"g2\") } GROUP BY ?g",
            6,
        ),
        // Prices are numbers (ranked by their terms from the worker's copy of the
        // dictionary) and one string: narrowed to two per group, items to one.
        (
            "SELECT ?g (MIN(?p) AS ?lo) (MAX(?p) AS ?hi) (MIN(?i) AS ?first) \
             WHERE { ?i a ex:Item ; ex:group ?g ; ex:price ?p } GROUP BY ?g",
            12,
        ),
    ];
    for (query, per_worker) in queries {
        answers_like_the_whole_store(&store, &format!("{prefix}{query}"), Some(per_worker));
    }
}

/// Checks that `query` gives the whole store's answers on 2 and 3 workers and, with
/// `per_worker`, that each worker sent at most that many rows beside the start.
fn answers_like_the_whole_store(store: &Store, query: &str, per_worker: Option<u64>) {
    let expected = common::sorted_answers(store, query, None);
    assert!(!expected.is_empty(), "{query}");
    for workers in [2u32, 3] {
        let cluster = Arc::new(TimelyPartitions::in_process(store, workers).unwrap());
        let dynamic: Arc<dyn BgpPartitions> = cluster.clone();
        assert_eq!(
            common::sorted_answers(store, query, Some(dynamic)),
            expected,
            "{workers} workers: {query}"
        );
        if let Some(per_worker) = per_worker {
            let moved = cluster.exchanged().rows;
            let bound = u64::from(workers) * (per_worker + 1);
            assert!(
                moved <= bound,
                "{workers} workers moved {moved} rows, over {bound}: {query}"
            );
        }
    }
}
