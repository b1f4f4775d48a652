//! A random graph's quads and the query shapes run over it, shared by the tests that
//! compare a partitioned store's answers with the whole store's.

#![allow(dead_code)]

use oxrdf::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use proptest::prelude::*;

/// (subject, predicate, object, graph) by small numbers: 20–23 blank nodes, predicate 0
/// `rdf:type` (then objects 30–33 are classes), objects ≥ 40 literals, graph
/// 0 the default graph.
pub type Spec = (u32, u32, u32, u32);

pub fn spec() -> impl Strategy<Value = Spec> {
    (
        prop_oneof![4 => 0..20u32, 1 => 20..24u32],
        0..5u32,
        prop_oneof![3 => 0..20u32, 1 => 20..24u32, 2 => 30..34u32, 1 => 40..46u32],
        prop_oneof![3 => Just(0u32), 1 => 1..3u32],
    )
}

pub const EX: &str = "http://ex/";
pub const TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

pub fn quad(&(s, p, o, g): &Spec) -> Quad {
    let subject: NamedOrBlankNode = if s >= 20 {
        BlankNode::new(format!("b{s}")).unwrap().into()
    } else {
        NamedNode::new(format!("{EX}e{s}")).unwrap().into()
    };
    let (predicate, object): (NamedNode, Term) = match (p, o) {
        (0, o) => (
            NamedNode::new(TYPE).unwrap(),
            NamedNode::new(format!("{EX}C{}", o % 4)).unwrap().into(),
        ),
        (p, 20..24) => (
            NamedNode::new(format!("{EX}p{p}")).unwrap(),
            BlankNode::new(format!("b{o}")).unwrap().into(),
        ),
        (p, 40..) => (
            NamedNode::new(format!("{EX}p{p}")).unwrap(),
            Literal::new_simple_literal(format!("v{}", o % 3)).into(),
        ),
        (p, o) => (
            NamedNode::new(format!("{EX}p{p}")).unwrap(),
            NamedNode::new(format!("{EX}e{}", o % 20)).unwrap().into(),
        ),
    };
    let graph = match g {
        0 => GraphName::DefaultGraph,
        g => NamedNode::new(format!("{EX}g{g}")).unwrap().into(),
    };
    Quad::new(subject, predicate, object, graph)
}

/// Query shapes over the random graphs (`ex:`, `rdf:type` as `a`).
pub const QUERIES: &[&str] = &[
    "SELECT * WHERE { ?x ex:p1 ?y . ?y ex:p2 ?z }",
    "SELECT * WHERE { ?x a ex:C1 . ?x ex:p1 ?y }",
    "SELECT * WHERE { ?x a ?c . ?x ex:p2 ?y . ?y a ?d }",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y ex:p1 ?z . ?z ex:p1 ?x }",
    "SELECT * WHERE { ?x ex:p1 ?y . ?x ex:p2 ?y }",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y a ex:C2 . ?x a ex:C1 }",
    "SELECT * WHERE { ex:e3 ?p ?o }",
    "SELECT * WHERE { ?s ?p ex:e4 }",
    "SELECT * WHERE { ?s ?p ex:C0 }",
    "SELECT * WHERE { ?y a ?c . ?s ?p ?c }",
    "SELECT * WHERE { GRAPH ex:g1 { ?s ?p ex:C1 } }",
    "SELECT * WHERE { ?s ?p ?o }",
    "SELECT ?c WHERE { ?x a ?c }",
    "SELECT DISTINCT ?c WHERE { ?x a ?c }",
    "SELECT * WHERE { ?c ?p ?o . ?x a ?c }",
    "SELECT * WHERE { ?x ex:p3 \"v1\" . ?x ?p ?y }",
    "SELECT * WHERE { ?x ?p ?y . ?y ?q ?z }",
    "SELECT * WHERE { ?x ?p ?x }",
    "SELECT * WHERE { ex:e1 ex:p1 ?y . ?y ex:p1 ex:e2 }",
    "SELECT * WHERE { GRAPH ?g { ?x ex:p1 ?y } }",
    "SELECT * WHERE { GRAPH ex:g1 { ?x a ?c . ?x ?p ?o } }",
    "SELECT * WHERE { ?x a ex:C0 OPTIONAL { ?x ex:p1 ?y . ?y ex:p2 ?z } }",
    "SELECT * WHERE { ?x ex:p2 ?y FILTER EXISTS { ?y a ex:C3 } }",
    "SELECT * WHERE { ?x ex:p2 ?y FILTER NOT EXISTS { ?y ex:p1 ?z } }",
    "SELECT * WHERE { { ?x ex:p1 ?y } UNION { ?x ex:p4 ?y } ?y ex:p3 ?z }",
    "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ?p ?o } GROUP BY ?x",
    "SELECT * WHERE { ?x ex:p1 ?y } ORDER BY ?y ?x LIMIT 5",
    "SELECT ?o ?s ?p WHERE { ?s ?p ?o } ORDER BY DESC(?o) ?s ?p LIMIT 4",
    "SELECT * WHERE { ?s ?p ?o } LIMIT 7",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y ex:p2 ?z } LIMIT 3",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y a ex:C2 . ?x a ex:C1 } LIMIT 2",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y ex:p1 ?z . ?z ex:p1 ?x } LIMIT 2",
    "SELECT * WHERE { ?x ex:p1 ?y . ?x ex:p2 ?y . ?y ex:p3 ?z } LIMIT 1",
    "ASK { ?x ex:p4 ?y . ?y a ex:C1 }",
    "CONSTRUCT { ?y ex:back ?x } WHERE { ?x ex:p2 ?y }",
    "SELECT * WHERE { ?x ex:p1+ ?y }",
    "SELECT * WHERE { ?x ex:p1* ?y }",
    "SELECT * WHERE { ex:e1 (ex:p1|ex:p2)+ ?y }",
    "SELECT * WHERE { ?x (ex:p1|ex:p2)* ex:e2 }",
    "SELECT * WHERE { ?x ^ex:p2/ex:p1 ?y }",
    "SELECT * WHERE { ?x !(ex:p1|a) ?y }",
    "SELECT * WHERE { ?x !^ex:p2 ex:e3 }",
    "SELECT * WHERE { ?x ex:p1? ex:e2 }",
    "SELECT * WHERE { ?x a ex:C1 . ?x ex:p1* ?y }",
    "SELECT * WHERE { ?y a ex:C2 . ?x (ex:p1/ex:p2)+ ?y }",
    "SELECT * WHERE { ?x ex:p1/ex:p1 ?x }",
    "SELECT * WHERE { ?x (ex:p1/ex:p2)* ?x }",
    "SELECT * WHERE { ?x a/^a ?y }",
    "SELECT * WHERE { ?c ^a/ex:p1 ?y }",
    "ASK { ex:e9 ex:p1* ex:e9 }",
    "ASK { ex:e1 ex:p1+ ex:e1 }",
    "SELECT * WHERE { ex:nowhere ex:p1* ?y }",
    "SELECT * WHERE { GRAPH ?g { ?x ex:p1+ ?y } }",
    "DESCRIBE ?x WHERE { ?x a ex:C1 }",
    "DESCRIBE ex:e3 ex:e7",
    "SELECT * FROM ex:g1 FROM ex:g2 WHERE { ?x ex:p1 ?y }",
    "SELECT * FROM ex:g1 FROM ex:g2 WHERE { ?x a ?c . ?x ?p ?o }",
    "SELECT ?c FROM ex:g1 FROM ex:g2 WHERE { ?x a ?c }",
    "SELECT * FROM ex:g1 FROM ex:g2 WHERE { ?x ex:p1+ ?y }",
    "SELECT * FROM ex:g1 FROM ex:g2 FROM NAMED ex:g2 WHERE { ?x ex:p1 ?y GRAPH ?g { ?y ?q ?z } }",
    "SELECT (COUNT(*) AS ?n) FROM ex:g1 FROM ex:g2 WHERE { ?s ?p ?o }",
    "SELECT (COUNT(DISTINCT ?y) AS ?n) WHERE { ?x ex:p1 ?y }",
    "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x ex:p2 ?y }",
    "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?c }",
    "SELECT (COUNT(DISTINCT ?c) AS ?n) WHERE { ?x a ?c }",
    "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x ex:p1 ex:e2 }",
    "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ex:C1 }",
    "SELECT ?y (COUNT(*) AS ?n) WHERE { ?x ex:p1 ?y } GROUP BY ?y",
    "SELECT ?p (COUNT(*) AS ?n) WHERE { ?x ?p ?y } GROUP BY ?p",
    "SELECT DISTINCT ?p WHERE { ?x ?p ?y }",
    "SELECT ?p (MIN(?o) AS ?lo) (MAX(?o) AS ?hi) (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
    "SELECT ?c (MIN(?x) AS ?first) (MAX(?y) AS ?last) WHERE { ?x a ?c . ?x ex:p1 ?y FILTER(?c != ex:C0) } GROUP BY ?c",
    "SELECT * WHERE { ?x ?p ?y . ?y ?q ?z FILTER STRSTARTS(?z, \"v1\") }",
    "SELECT * WHERE { ?x ?p ?o FILTER (REGEX(?o, \"^v\") && ?p != ex:p4) }",
    "SELECT * WHERE { ?x ex:p1 ?y . ?y ?q ?z FILTER (?z = ex:e3 || ?z = \"v0\") }",
    "SELECT * WHERE { ?x a ?c . ?x ?p ?y FILTER (sameTerm(?c, ex:C2) && !sameTerm(?y, ex:e1)) }",
    "SELECT ?z (COUNT(*) AS ?n) WHERE { ?x ?p ?z FILTER STRSTARTS(?z, \"v\") } GROUP BY ?z",
    "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ex:p1 ex:e2 } GROUP BY ?x",
    "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ?p ex:e4 } GROUP BY ?x",
    "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x a ex:C1 } GROUP BY ?x",
    "SELECT ?y (COUNT(*) AS ?n) WHERE { ex:e3 ?p ?y } GROUP BY ?y",
    "SELECT ?y (COUNT(*) AS ?n) WHERE { ?x ex:p1 ?y } GROUP BY ?y ORDER BY DESC(?n) ?y LIMIT 2",
    "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ?p ?o } GROUP BY ?x ORDER BY ?n ?x LIMIT 3",
    "SELECT ?c (COUNT(*) AS ?n) WHERE { ?x a ?c } GROUP BY ?c ORDER BY DESC(?n) ?c LIMIT 1",
    "SELECT ?p (COUNT(*) AS ?n) WHERE { ?x ?p ?y } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT 2",
    "SELECT * WHERE { ?x a ex:C1 FILTER NOT EXISTS { ?x ex:p1 ?y } }",
    "SELECT ?x WHERE { ?x ex:p2 ?z FILTER EXISTS { ?w ex:p1 ?x } }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?x a ?c OPTIONAL { ?x ex:p3 ?v } FILTER(!BOUND(?v)) }",
    "SELECT ?c (COUNT(*) AS ?n) WHERE { ?x a ?c FILTER (NOT EXISTS { ?x ex:p1 ?y } && ?c != ex:C0) } GROUP BY ?c",
    "SELECT * WHERE { ?x ex:p1 ?y FILTER (NOT EXISTS { ?z a ?y } && EXISTS { ?y ex:p2 [] }) }",
    "SELECT * WHERE { GRAPH ex:g1 { ?x ex:p1 ?y FILTER NOT EXISTS { ?y ex:p2 ?z } } }",
    "SELECT ?x WHERE { ?x ex:p1 ?y FILTER NOT EXISTS { ?y ex:p2 ?z } } LIMIT 3",
    "SELECT * WHERE { ?x a ex:C1 MINUS { ?x ex:p1 ?y } }",
    "SELECT * WHERE { ?x ex:p2 ?z MINUS { ?w ex:p1 ?x } }",
    "SELECT * WHERE { ?x ex:p2 ?z MINUS { ?z a ?c } }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?x a ?c MINUS { ?x ex:p3 ?v } }",
];

/// A fixed random graph of `count` quads (a linear congruential sequence from `seed`).
pub fn fixed_graph(seed: u64, count: usize) -> Vec<Quad> {
    let mut state = seed;
    let mut next = move |bound: u32| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % u64::from(bound)) as u32
    };
    (0..count)
        .map(|_| {
            let subject = if next(5) == 0 { 20 + next(4) } else { next(20) };
            let object = match next(7) {
                0..=2 => next(20),
                3 => 20 + next(4),
                4 | 5 => 30 + next(4),
                _ => 40 + next(6),
            };
            let graph = if next(4) == 0 { 1 + next(2) } else { 0 };
            quad(&(subject, next(5), object, graph))
        })
        .collect()
}

/// A LUBM-1 store, generated.
pub fn lubm1() -> quiver_store::Store {
    quiver_loader::load_lubm(
        quiver_lubm::LubmConfig::standard(1),
        2,
        None,
        &quiver_loader::NoProgress,
    )
    .unwrap()
    .0
}

/// Every query of `queries/` over LUBM (Wukong's q1–q12, the SPARQL 1.1 and the analytics
/// sets).
pub fn lubm_queries() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries");
    let mut queries = Vec::new();
    for set in ["lubm-basic", "lubm-sparql11", "lubm-analytics"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(set))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rq"))
            .collect();
        files.sort();
        for file in files {
            queries.push(std::fs::read_to_string(&file).unwrap());
        }
    }
    assert!(queries.len() >= 30, "only {} queries", queries.len());
    queries
}

/// Loopback sockets for the processes of a cluster, bound now: process 0 takes its own,
/// the children inherit theirs (`hand_over`), so no port is raced for.
pub fn loopback_ports(count: usize) -> quiver_cluster::LoopbackPorts {
    quiver_cluster::LoopbackPorts::bind(count).unwrap()
}

/// The listening socket a child process inherited, from the descriptor number its
/// parent put in its spec.
pub fn inherited(fd: &str) -> Option<std::sync::Arc<std::net::TcpListener>> {
    // `-`: none, the process binds its address itself.
    if fd == "-" {
        return None;
    }
    let fd: i32 = fd.parse().unwrap();
    // SAFETY: the parent handed this descriptor to this process (`LoopbackPorts::
    // hand_over`) and named it in the spec; nothing else here owns it; read once.
    Some(unsafe { quiver_cluster::connect::inherited_listener(fd) }.unwrap())
}

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";

/// A graph of LUBM's shape where q1's intersection matters (LUBM-1 has almost no alumni of
/// its own university): 4 universities of 8 departments of 200 students (graduates for
/// q1, undergraduates for q3), 200
/// more universities without departments, and everyone, with 10,000 more people, holding
/// a degree from one of the 204 (about 80 alumni each). For each department, the walk of
/// its university's alumni reads 80 rows; the alumni lists are 4 × 80 entries in all.
pub fn campus() -> quiver_store::Store {
    let iri = |s: String| NamedNode::new(s).unwrap();
    let ub = |name: &str| iri(format!("{UB}{name}"));
    let university = |u: u32| iri(format!("http://www.University{u}.edu"));
    let person = |p: u32| iri(format!("http://example.org/person{p}"));
    let rdf_type = iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type".into());
    let mut quads = Vec::new();
    let mut add = |s: &NamedNode, p: &NamedNode, o: &NamedNode| {
        quads.push(Quad::new(
            s.clone(),
            p.clone(),
            o.clone(),
            GraphName::DefaultGraph,
        ))
    };
    let (with_departments, universities) = (4, 204);
    for u in 0..universities {
        add(&university(u), &rdf_type, &ub("University"));
    }
    let mut people = 0;
    for u in 0..with_departments {
        for d in 0..8 {
            let department = iri(format!("http://www.Department{d}.University{u}.edu"));
            add(&department, &rdf_type, &ub("Department"));
            add(&department, &ub("subOrganizationOf"), &university(u));
            for _ in 0..200 {
                let class = ["GraduateStudent", "UndergraduateStudent"][people as usize % 2];
                add(&person(people), &rdf_type, &ub(class));
                add(&person(people), &ub("memberOf"), &department);
                people += 1;
            }
        }
    }
    for p in 0..people + 10_000 {
        let from = university((p * 7919) % universities);
        add(&person(p), &ub("undergraduateDegreeFrom"), &from);
    }
    quiver_loader::load_quads(quads, None).unwrap().0
}

/// The steps of every basic graph pattern of `query` prepared on `store` (alone and
/// seeded), in order, without the planner's estimates: averages come from merged
/// statistics, so only the order and kind of steps must agree.
pub fn plan_shapes(
    store: &quiver_store::Store,
    query: &str,
    partitions: Option<std::sync::Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
) -> Vec<String> {
    let options = quiver_sparql::PrepareOptions {
        partitions,
        ..quiver_sparql::PrepareOptions::default()
    };
    let prepared = quiver_sparql::prepare(store, query, &options).unwrap();
    let text = format!("{:?}", prepared.operator());
    let mut steps = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Step { pattern: ") {
        rest = &rest[at..];
        let end = rest.find('}').unwrap() + 1;
        let step = &rest[..end];
        let estimate = step.find("estimate: ").unwrap();
        let after = estimate + step[estimate..].find(',').unwrap();
        steps.push(format!("{}{}", &step[..estimate], &step[after + 2..]));
        rest = &rest[end..];
    }
    steps
}

/// Each solution of `query` on `store` (a SELECT), its basic graph patterns run by
/// `partitions`, handed to `each`.
pub fn for_each_solution(
    store: &quiver_store::Store,
    query: &str,
    partitions: Option<std::sync::Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
    mut each: impl FnMut(String),
) {
    use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
    let prepare_options = PrepareOptions {
        partitions: partitions.clone(),
        ..PrepareOptions::default()
    };
    let prepared = prepare(store, query, &prepare_options).unwrap();
    let options = ExecOptions {
        partitions,
        ..ExecOptions::default()
    };
    match prepared.execute(store, &options).unwrap() {
        QueryResults::Solutions(solutions) => {
            solutions.for_each_row(|row| each(format!("{row:?}")))
        }
        _ => panic!("{query}: not a SELECT"),
    }
}

/// The solutions of `query` on `store` (its patterns run by `partitions`), as sorted text.
pub fn sorted_answers(
    store: &quiver_store::Store,
    query: &str,
    partitions: Option<std::sync::Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
) -> Vec<String> {
    let mut rows = Vec::new();
    for_each_solution(store, query, partitions, |row| rows.push(row));
    rows.sort();
    rows
}

/// The test harness's name of the test `name` declared in the module `module` (its
/// `module_path!()`): the path past the crate's name, as `--exact` wants it when the test
/// binary runs itself as a child process for one test.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}
