//! A basic graph pattern after a UNION whose branches bind different variables: a variable
//! only some branches bind is not one of the seeds of the pattern's seeded plan, so the
//! pattern must not run seeded with the union's rows (it would bind that variable again
//! without comparing it with their values). Found by the differential test.

use crate::support;

use support::{oxigraph_rows, select};

const DATA: &str = r#"<http://example.org/a> <http://example.org/p> <http://example.org/b> .
<http://example.org/a> <http://example.org/q> <http://example.org/a> .
<http://example.org/a> <http://example.org/q> <http://example.org/b> .
<http://example.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/C1> .
<http://example.org/b> <http://example.org/p> <http://example.org/a> .
<http://example.org/b> <http://example.org/q> "x" .
<http://example.org/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/C1> .
<http://example.org/c> <http://example.org/p> <http://example.org/a> .
<http://example.org/c> <http://example.org/q> <http://example.org/a> .
"#;

#[test]
fn a_variable_some_union_branches_bind_is_compared_after_it() {
    let store = support::load(DATA);
    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_slice(oxigraph::io::RdfFormat::NTriples, DATA.as_bytes())
        .unwrap();
    for query in [
        // The branch that binds ?a gives ?a = b, ?c = a; `?a q ?c` then needs `b q a`,
        // which the data lacks.
        r#"SELECT * WHERE {
          <http://example.org/a> <http://example.org/p> ?b .
          { <http://example.org/a> a ?c . FILTER (?a < "x") }
          UNION { ?c <http://example.org/p> ?a . <http://example.org/a> <http://example.org/p> ?a . }
          ?a a <http://example.org/C1> .
          ?a <http://example.org/q> ?c .
        }"#,
        // The same shape with rows that do match.
        r#"SELECT * WHERE {
          { ?c <http://example.org/p> ?a } UNION { ?c <http://example.org/q> <http://example.org/b> }
          ?a <http://example.org/q> ?c .
        }"#,
    ] {
        let (vars, mut rows) = select(&store, query).unwrap();
        let mut expected = oxigraph_rows(&oxigraph, query, &vars);
        rows.sort();
        expected.sort();
        assert_eq!(rows, expected, "{query}");
    }
}
