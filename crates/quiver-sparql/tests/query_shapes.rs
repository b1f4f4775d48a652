//! Shapes of queries people write that benchmarks never do, each checked twice: its rows
//! against Oxigraph's (all of them, or for a LIMIT without ORDER BY a sub-bag of the right
//! size), and the rows the plan built (`ExecutionProfile::rows_built`) against a bound far
//! below what the unconstrained or materialised plan builds, so that such a plan coming
//! back fails the test.
//!
//! The graph: 3,000 students taking 3 of 200 courses each, 60 full professors of whom 20
//! head a department, departments in a chain of `subOrganizationOf` up to a university,
//! names for everyone. A cross product of students' courses and professors is 540,000
//! rows; every bound below is under 5,000.

use crate::support;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

const EX: &str = "http://ex/";

fn graph() -> String {
    let mut nt = String::new();
    let iri = |s: &str| format!("<{EX}{s}>");
    for s in 0..3000 {
        for k in 0..3 {
            let course = (s * 7 + k * 31) % 200;
            let _ = writeln!(
                nt,
                "{} {} {} .",
                iri(&format!("student{s}")),
                iri("takesCourse"),
                iri(&format!("course{course}"))
            );
        }
        let _ = writeln!(
            nt,
            "{} {} \"student {s}\" .",
            iri(&format!("student{s}")),
            iri("name")
        );
        let _ = writeln!(
            nt,
            "{} {} {} .",
            iri(&format!("student{s}")),
            iri("advisor"),
            iri(&format!("professor{}", s % 60))
        );
    }
    for p in 0..60 {
        let _ = writeln!(
            nt,
            "{} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> {} .",
            iri(&format!("professor{p}")),
            iri("FullProfessor")
        );
        if p < 20 {
            let _ = writeln!(
                nt,
                "{} {} {} .",
                iri(&format!("professor{p}")),
                iri("headOf"),
                iri(&format!("department{p}"))
            );
        }
    }
    for d in 0..20 {
        let parent = if d == 0 {
            iri("university")
        } else {
            iri(&format!("department{}", d - 1))
        };
        let _ = writeln!(
            nt,
            "{} {} {parent} .",
            iri(&format!("department{d}")),
            iri("subOrganizationOf")
        );
        let _ = writeln!(
            nt,
            "{} {} \"department {d}\" .",
            iri(&format!("department{d}")),
            iri("name")
        );
    }
    nt
}

struct Fixture {
    quiver: Store,
    oxigraph: oxigraph::store::Store,
}

fn fixture() -> Fixture {
    let nt = graph();
    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_reader(oxigraph::io::RdfFormat::NTriples, nt.as_bytes())
        .unwrap();
    Fixture {
        quiver: support::load(&nt),
        oxigraph,
    }
}

use support::Row;

/// Our rows (as text, in the query's variable order) and the rows the plan built, with
/// the EXPLAIN of the run.
fn ours(store: &Store, query: &str) -> (Vec<String>, Vec<Row>, (usize, String)) {
    let prepared = prepare(store, query, &PrepareOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let options = ExecOptions {
        // What the issue reported: a memory error instead of rows.
        max_memory: Some(64 << 20),
        ..ExecOptions::default()
    };
    let (results, profile) = prepared
        .execute_profiled(store, &options)
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    let (vars, rows) = support::solution_rows(&solutions);
    let explained = quiver_sparql::explain::render(&profile);
    (vars, rows, (profile.rows_built, explained))
}

fn bag(rows: &[Row]) -> BTreeMap<&Row, usize> {
    let mut bag = BTreeMap::new();
    for row in rows {
        *bag.entry(row).or_insert(0) += 1;
    }
    bag
}

/// Runs `query` (and, for the reference, `unsliced`: the same without its LIMIT) and
/// checks the rows and that at most `bound` rows were built; returns our row count.
fn check(fixture: &Fixture, query: &str, unsliced: Option<&str>, bound: usize) -> usize {
    let (vars, rows, (built, explained)) = ours(&fixture.quiver, query);
    assert!(
        built <= bound,
        "{query}\nbuilt {built} rows, more than {bound}: the plan materialised what a pattern would have cut\n{explained}"
    );
    match unsliced {
        None => {
            let expected = support::oxigraph_rows(&fixture.oxigraph, query, &vars);
            assert_eq!(bag(&rows), bag(&expected), "{query}");
        }
        Some(unsliced) => {
            let all = support::oxigraph_rows(&fixture.oxigraph, unsliced, &vars);
            let limit: usize = query
                .rsplit("LIMIT")
                .next()
                .and_then(|n| n.trim().parse().ok())
                .expect("a LIMIT");
            assert_eq!(rows.len(), limit.min(all.len()), "{query}");
            let (ours, all) = (bag(&rows), bag(&all));
            for (row, n) in ours {
                assert!(
                    all.get(row).is_some_and(|m| *m >= n),
                    "{query}: {row:?} is not a row of the query"
                );
            }
        }
    }
    rows.len()
}

const PREFIX: &str = "PREFIX : <http://ex/> ";

#[test]
fn values_after_the_pattern_seed_it() {
    let fixture = fixture();
    let body = "?x ?p ?y . ?z ?p ?y . VALUES (?p) { (:advisor) } VALUES (?x) { (:student7) }";
    let query = format!("{PREFIX}SELECT ?x ?p ?y ?z WHERE {{ {body} }} LIMIT 5");
    let unsliced = format!("{PREFIX}SELECT ?x ?p ?y ?z WHERE {{ {body} }}");
    assert_eq!(check(&fixture, &query, Some(&unsliced), 400), 5);
    // Written first or last, the same.
    let query = format!(
        "{PREFIX}SELECT * WHERE {{ ?x ?p ?y . ?z ?p ?y . VALUES ?x {{ :student7 :student8 }} }}"
    );
    assert!(check(&fixture, &query, None, 1000) > 0);
    // A BIND of a constant between the patterns seeds them as a VALUES does: the 50
    // students sharing student 7's advisor, without listing all 3,000 advisors first.
    let query = format!(
        "{PREFIX}SELECT ?s WHERE {{ ?s :advisor ?a . BIND(:student7 AS ?x) ?x :advisor ?a }}"
    );
    assert_eq!(check(&fixture, &query, None, 300), 50);
}

#[test]
fn filters_on_one_variable_seed_the_patterns_around_them() {
    let fixture = fixture();
    // The filter sits after an OPTIONAL and a second pattern that shares no variable
    // with the first: both move before the patterns they constrain.
    let query = format!(
        "{PREFIX}SELECT * WHERE {{ ?x :takesCourse ?c . OPTIONAL {{ ?x :name ?n }} \
         ?c2 :name ?m . FILTER (?x = :student5 && sameTerm(?c2, :department3)) }}"
    );
    assert_eq!(check(&fixture, &query, None, 100), 3);
}

#[test]
fn a_filter_on_one_operand_cuts_it_before_the_cross_product() {
    let fixture = fixture();
    // Students named "student 7…" (111 of them, 333 courses) beside every professor:
    // 20,000 rows, where filtering after the cross product builds 540,000 first.
    let query = format!(
        "{PREFIX}SELECT * WHERE {{ ?x :name ?n . ?x :takesCourse ?c . {{ ?y a :FullProfessor }} \
         FILTER (STRSTARTS(?n, \"student 7\")) }}"
    );
    let rows = check(&fixture, &query, None, usize::MAX);
    assert!(rows > 0);
    let (_, _, (built, explained)) = ours(&fixture.quiver, &query);
    assert!(
        built <= 3 * rows + 2000,
        "built {built} rows for {rows}\n{explained}"
    );
}

#[test]
fn an_optional_under_limit_reads_only_the_rows_it_returns() {
    let fixture = fixture();
    let body = "?x :takesCourse ?c . ?y a :FullProfessor . OPTIONAL { ?y :headOf ?d }";
    let query = format!("{PREFIX}SELECT * WHERE {{ {body} }} LIMIT 1000");
    let unsliced = format!("{PREFIX}SELECT * WHERE {{ ?x :takesCourse ?c }}");
    // Oxigraph's reference: every row's (?x, ?c) is a row of the first pattern; the
    // count is the limit (the whole result is 540,000 rows).
    let (vars, rows, (built, explained)) = ours(&fixture.quiver, &query);
    assert_eq!(rows.len(), 1000);
    assert!(built <= 10_000, "built {built} rows\n{explained}");
    let courses = support::oxigraph_rows(&fixture.oxigraph, &unsliced, &vars[..2]);
    let courses = bag(&courses);
    for row in &rows {
        assert!(courses.contains_key(&row[..2].to_vec()), "{row:?}");
    }
}

#[test]
fn an_empty_pattern_stops_the_join_wherever_it_is_written() {
    let fixture = fixture();
    for query in [
        // A constant the store lacks, after a path and a large pattern.
        format!(
            "{PREFIX}SELECT * WHERE {{ ?x :takesCourse ?c . ?d :subOrganizationOf+ :university . \
             ?d :name \"noSuchName\" }}"
        ),
        // A name the store has, but on nobody who is advised.
        format!(
            "{PREFIX}SELECT * WHERE {{ {{ ?a :takesCourse ?c }} UNION {{ ?a :advisor ?c }} \
             ?x :name \"department 4\" . ?x :advisor ?a }}"
        ),
        // Unconnected groups, the empty one last.
        format!(
            "{PREFIX}SELECT * WHERE {{ {{ ?x :takesCourse ?c }} {{ ?y a :FullProfessor }} \
             {{ ?y :headOf :department55 }} }}"
        ),
    ] {
        assert_eq!(check(&fixture, &query, None, 100), 0);
    }
}

#[test]
fn a_cross_product_under_limit_stops_at_the_limit() {
    let fixture = fixture();
    for (body, limit) in [
        ("{ ?x :takesCourse ?c } { ?y a :FullProfessor }", 10),
        ("?x :takesCourse ?c . ?y a :FullProfessor", 10),
        (
            "{ ?x :takesCourse ?c } UNION { ?x :advisor ?c } { ?y a :FullProfessor }",
            700,
        ),
        (
            "{ ?x :takesCourse ?c } { ?y a :FullProfessor FILTER (?y != :professor3) }",
            10,
        ),
    ] {
        let query = format!("{PREFIX}SELECT * WHERE {{ {body} }} LIMIT {limit}");
        let unsliced = format!("{PREFIX}SELECT * WHERE {{ {body} }}");
        assert_eq!(check(&fixture, &query, Some(&unsliced), 4000), limit);
    }
}

#[test]
fn a_pattern_after_an_optional_cuts_its_required_side() {
    let fixture = fixture();
    // Written after the OPTIONAL, the advisor pattern still cuts the 9,000 rows of the
    // first pattern to 150 before the OPTIONAL extends them.
    let body = "?x :takesCourse ?c . OPTIONAL { ?x :name ?n } ?x :advisor :professor59";
    let query = format!("{PREFIX}SELECT ?x ?c ?n WHERE {{ {body} }}");
    assert_eq!(check(&fixture, &query, None, 1000), 150);
    let query = format!("{PREFIX}SELECT ?x ?c WHERE {{ {body} }} LIMIT 20");
    let unsliced = format!("{PREFIX}SELECT ?x ?c WHERE {{ {body} }}");
    assert_eq!(check(&fixture, &query, Some(&unsliced), 1000), 20);
    // But not when the OPTIONAL binds a variable the pattern after it reads: there the
    // pattern joins the OPTIONAL's rows (and Oxigraph agrees on them).
    let body = "?x :advisor ?p . OPTIONAL { ?x :name ?n . ?x :takesCourse ?c } ?c :name ?m";
    let query = format!("{PREFIX}SELECT * WHERE {{ {body} }}");
    check(&fixture, &query, None, usize::MAX);
}

#[test]
fn filters_and_joins_under_limit_ask_their_input_for_rounds_of_rows() {
    let fixture = fixture();
    // One name in ten ends with 7: the input is asked for more than the limit, in
    // rounds, but never whole (9,000 courses taken, 9,000 rows joined with names).
    let body = "?x :takesCourse ?c . ?x :name ?n FILTER (STRENDS(?n, \"7\"))";
    let query = format!("{PREFIX}SELECT ?x ?c WHERE {{ {body} }} LIMIT 20");
    let unsliced = format!("{PREFIX}SELECT ?x ?c WHERE {{ {body} }}");
    assert_eq!(check(&fixture, &query, Some(&unsliced), 3000), 20);
    // A filter above a join, and DISTINCT, under a limit.
    let body = "?x :takesCourse ?c . ?x :advisor ?p FILTER (?c != :course0)";
    let query = format!("{PREFIX}SELECT DISTINCT ?c WHERE {{ {body} }} LIMIT 7");
    let unsliced = format!("{PREFIX}SELECT DISTINCT ?c WHERE {{ {body} }}");
    assert_eq!(check(&fixture, &query, Some(&unsliced), 4000), 7);
}

/// One fixture for every case of the property below.
fn shared_fixture() -> &'static Fixture {
    static FIXTURE: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(fixture)
}

/// A selective constraint of the random groups below.
#[derive(Debug, Clone)]
enum Constraint {
    /// `VALUES ?x { :studentK }`
    Values(usize),
    /// `FILTER (?x = :studentK)`
    Equals(usize),
    /// `?x :advisor :professorJ`: 50 students
    Advised(usize),
    /// `?y :headOf :department55`: a term the store lacks
    Absent,
    /// `FILTER (sameTerm(?y, :professorJ))`
    SameProfessor(usize),
}

impl Constraint {
    fn text(&self) -> String {
        match self {
            Constraint::Values(k) => format!("VALUES ?x {{ :student{k} }}"),
            Constraint::Equals(k) => format!("FILTER (?x = :student{k})"),
            Constraint::Advised(j) => format!("?x :advisor :professor{j} ."),
            Constraint::Absent => "?y :headOf :department55 .".to_owned(),
            Constraint::SameProfessor(j) => format!("FILTER (sameTerm(?y, :professor{j}))"),
        }
    }
}

fn constraint_strategy() -> impl Strategy<Value = Constraint> {
    prop_oneof![
        (0..3000usize).prop_map(Constraint::Values),
        (0..3000usize).prop_map(Constraint::Equals),
        (0..60usize).prop_map(Constraint::Advised),
        Just(Constraint::Absent),
        (0..60usize).prop_map(Constraint::SameProfessor),
    ]
}

/// Rows the selective side of any constraint above holds at most (a student's 3 courses,
/// 50 students' 150).
const SELECTIVE_ROWS: usize = 150;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    /// Two large patterns that share no variable (a 540,000-row cross product) and a
    /// selective constraint, in any order, each maybe in a group of its own, maybe with
    /// an OPTIONAL after the first, maybe under a LIMIT: the rows are Oxigraph's, and the
    /// rows built stay within a multiple of the result and the selective side, so that a
    /// plan building the cross product first fails.
    #[test]
    fn a_constraint_anywhere_bounds_the_work(
        constraint in constraint_strategy(),
        order in Just(vec![0usize, 1, 2]).prop_shuffle(),
        grouped in prop::collection::vec(any::<bool>(), 3),
        optional in prop::option::of(0..3usize),
        limit in prop::option::weighted(0.4, 1..50usize),
    ) {
        let fixture = shared_fixture();
        let elements = [
            "?x :takesCourse ?c .".to_owned(),
            "?y a :FullProfessor .".to_owned(),
            constraint.text(),
        ];
        let mut body = String::new();
        let mut seen_courses = false;
        for (position, &element) in order.iter().enumerate() {
            let text = &elements[element];
            // FILTER and VALUES apply to their group: keep them in the outer one.
            if grouped[position] && element != 2 {
                body += &format!("{{ {text} }} ");
            } else {
                body += &format!("{text} ");
            }
            seen_courses |= element == 0;
            // The OPTIONAL reads ?x, which the pattern before it always binds.
            if optional == Some(position) && seen_courses {
                body += "OPTIONAL { ?x :name ?n } ";
            }
        }
        let unsliced = format!("{PREFIX}SELECT * WHERE {{ {body}}}");
        let query = match limit {
            Some(limit) => format!("{unsliced} LIMIT {limit}"),
            None => unsliced.clone(),
        };
        let (vars, rows, (built, explained)) = ours(&fixture.quiver, &query);
        let bound = 20 * (rows.len() + SELECTIVE_ROWS) + 2000;
        prop_assert!(
            built <= bound,
            "{}\nbuilt {} rows, more than {}\n{}", query, built, bound, explained
        );
        let all = support::oxigraph_rows(&fixture.oxigraph, &unsliced, &vars);
        match limit {
            None => prop_assert_eq!(bag(&rows), bag(&all), "{}", query),
            Some(limit) => {
                prop_assert_eq!(rows.len(), limit.min(all.len()), "{}", query);
                let all = bag(&all);
                for (row, n) in bag(&rows) {
                    prop_assert!(all.get(row).is_some_and(|m| *m >= n), "{}: {:?}", query, row);
                }
            }
        }
    }
}
