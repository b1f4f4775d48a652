//! What a prepared query's plan expects to build in all (`PreparedQuery::estimated_work`),
//! which a server weighs before running an uncached query on a thread that serves other
//! requests: a lookup from a constant is small, a scan of every triple is the store's
//! size, and what no statistics bound (a property path, EXISTS, DESCRIBE) is unknown.

use crate::support;

use quiver_sparql::operator::estimate::UNKNOWN_ROWS;
use quiver_sparql::{prepare, PrepareOptions};

fn work(store: &quiver_store::Store, query: &str) -> f64 {
    prepare(store, query, &PrepareOptions::default())
        .unwrap()
        .estimated_work()
}

#[test]
fn light_lookups_are_small_and_what_statistics_cannot_bound_is_unknown() {
    let mut data = String::new();
    for s in 0..200 {
        data.push_str(&format!(
            "<http://e/s{s}> <http://e/p> <http://e/o{}> .\n<http://e/s{s}> <http://e/q> \"v{s}\" .\n",
            s % 50
        ));
    }
    let store = support::load(&data);
    let lookup = work(&store, "SELECT ?s WHERE { ?s <http://e/p> <http://e/o3> }");
    assert!((1.0..=20.0).contains(&lookup), "{lookup}");
    let two_steps = work(
        &store,
        "SELECT ?s ?v WHERE { ?s <http://e/p> <http://e/o3> . ?s <http://e/q> ?v }",
    );
    assert!(two_steps >= lookup && two_steps <= 50.0, "{two_steps}");
    let scan = work(&store, "SELECT * WHERE { ?s ?p ?o }");
    assert!(scan >= 400.0, "{scan}");
    let absent = work(
        &store,
        "SELECT ?s WHERE { ?s <http://e/p> <http://e/nothing> }",
    );
    assert_eq!(absent, 0.0);
    for unknown in [
        "SELECT ?s WHERE { <http://e/s1> <http://e/p>* ?s }",
        "SELECT ?s WHERE { ?s <http://e/p> <http://e/o3> FILTER EXISTS { ?s <http://e/q> ?v } }",
        "DESCRIBE <http://e/s1>",
    ] {
        assert!(work(&store, unknown) >= UNKNOWN_ROWS, "{unknown}");
    }
}
