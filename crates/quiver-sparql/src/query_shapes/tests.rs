use super::*;

/// The parser's own answer.
fn parsed(text: &str) -> Result<Query, SparqlSyntaxError> {
    SparqlParser::new().parse_query(text)
}

/// `text` with `change` applied to each IRI cut out of it.
fn with_iris(text: &str, change: impl Fn(&str) -> String) -> String {
    let cut = cut(text).expect("IRIs to cut");
    let mut changed = cut.shape.clone();
    for (k, iri) in cut.iris.iter().enumerate().rev() {
        changed = changed.replace(&format!("<{SLOT}{k}>"), &format!("<{}>", change(iri)));
    }
    changed
}

/// Parses `text` through its shape as often as it takes to keep the shape, then texts of
/// the same shape with other IRIs: each must be what the parser makes of it. Returns
/// whether the shape was kept (a refused one is parsed as a whole, as rightly).
fn same_as_parser(text: &str) -> bool {
    for _ in 0..2 {
        let (got, expected) = (parse(text).unwrap(), parsed(text).unwrap());
        assert!(same_but_fresh_names(&got, &expected), "{text}");
    }
    let kept = matches!(
        shard(&cut(text).unwrap().shape)
            .read()
            .unwrap()
            .get(cut(text).unwrap().shape.as_str()),
        Some(Shape::Parsed(_))
    );
    for suffix in ["z", "/other", "%C3%A9"] {
        let other = with_iris(text, |iri| format!("{iri}{suffix}"));
        match parsed(&other) {
            Ok(expected) => assert!(same_but_fresh_names(&parse(&other).unwrap(), &expected)),
            // What was cut as an IRI was none (a refused shape): no query either way.
            Err(_) => assert!(parse(&other).is_err(), "{other}"),
        }
    }
    kept
}

#[test]
fn declarations_datatypes_strings_and_comments_keep_their_iris() {
    let text = "PREFIX ub: <http://u#> PREFIX : <http://e/>\n\
        SELECT * WHERE { ?x ub:p <http://a/1> ; :q \"<http://s>\" , '''<http://t>''' , \
        \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> . # <http://comment>\n\
        ?x ?p <http://a/2> FILTER(?x != <http://a/3>) }";
    let cut = cut(text).unwrap();
    assert_eq!(cut.iris[..], ["http://a/1", "http://a/2", "http://a/3"]);
    assert!(cut.shape.contains("<http://u#>") && cut.shape.contains("<http://e/>"));
    assert!(cut.shape.contains("\"<http://s>\"") && cut.shape.contains("# <http://comment>"));
    assert!(cut
        .shape
        .contains("^^<http://www.w3.org/2001/XMLSchema#integer>"));
    assert!(cut.shape.contains(&format!("<{SLOT}2>")));
}

#[test]
fn a_base_or_no_iri_is_parsed_as_it_is() {
    assert_eq!(cut("BASE <http://b/> SELECT * { ?s ?p <o> }"), None);
    assert_eq!(cut("base <http://b/> SELECT * { ?s ?p <http://o> }"), None);
    assert_eq!(cut("PREFIX ub: <http://u#> SELECT * { ?s ub:p ?o }"), None);
    let slot = format!("SELECT * {{ ?s ?p <{SLOT}0> . ?s ?q <http://o> }}");
    assert_eq!(cut(&slot), None);
    // A variable named base is no BASE.
    assert!(cut("SELECT ?base { ?base ?p <http://o> }").is_some());
}

#[test]
fn shapes_give_the_parsers_queries() {
    let ub = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
        PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ";
    let kept = [
        "SELECT ?x WHERE { ?x ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> . ?x rdf:type ub:GraduateStudent }",
        "SELECT ?p ?o WHERE { <http://a/x> ?p ?o }",
        "CONSTRUCT { <http://a/x> <http://a/p> ?o } FROM <http://g/1> FROM NAMED <http://g/2> WHERE { GRAPH <http://g/2> { <http://a/x> ?p ?o } }",
        "ASK { <http://a/x> (<http://a/p>/^<http://a/q>)* ?o . ?o !(<http://a/r>|^<http://a/s>) ?z }",
        "SELECT ?x (COUNT(*) AS ?n) WHERE { ?x <http://a/p> ?o FILTER(?o IN (<http://a/1>, <http://a/2>) && <http://f/fn>(?o) && !EXISTS { ?o <http://a/q> <http://a/3> }) OPTIONAL { ?x <http://a/r> ?r FILTER(?r != <http://a/4>) } } GROUP BY ?x ORDER BY DESC(?n) IF(?x = <http://a/5>, 1, 2) LIMIT 3",
        "SELECT * WHERE { VALUES (?a ?b) { (<http://a/1> UNDEF) (<http://a/2> \"x\") } ?a <http://a/p> ?b MINUS { ?a <http://a/q> <http://a/6> } BIND(<http://a/7> AS ?c) }",
        "SELECT * WHERE { SERVICE <http://remote/sparql> { ?s <http://a/p> ?o } }",
        "SELECT * WHERE { ?s <http://a/p> <<( <http://a/1> <http://a/2> <http://a/3> )>> }",
        "DESCRIBE <http://a/describe>",
        "SELECT ?x WHERE { ?x ub:worksFor <http://www.Department0.University0.edu> . ?x ub:name ?n } # <http://c>",
    ];
    for text in kept {
        let text = format!("{ub}{text}");
        assert!(same_as_parser(&text), "refused: {text}");
    }
    // Refused, and still parsed right: `<` between variables read as an IRI.
    let operators =
        "SELECT * WHERE { ?a <http://a/p> ?b . ?a <http://a/q> ?c FILTER(?b<?c&&?c>1) }";
    assert!(!same_as_parser(operators), "kept: {operators}");
    // Refused: the blank node the parser makes up for `[]` is another at each parse.
    let blank = "SELECT * WHERE { ?a <http://a/p> [ <http://a/q> ?c ] }";
    for _ in 0..3 {
        assert!(matches!(parse(blank).as_deref(), Ok(Query::Select { .. })));
    }
    let shape = cut(blank).unwrap().shape;
    let shapes = shard(&shape).read().unwrap();
    assert!(matches!(shapes.get(shape.as_str()), Some(Shape::Refused)));
}

/// Names made up by the parser match when they are renamed alike, and only then.
#[test]
fn made_up_names_are_compared_up_to_their_renaming() {
    let count = |name: &str| {
        parsed(&format!(
            "SELECT (COUNT(*) AS ?n) ?{name} WHERE {{ ?s <http://a/p> ?{name} }} GROUP BY ?{name}"
        ))
        .unwrap()
    };
    // Two parses of one text differ in the aggregate's made-up variable only.
    let (a, b) = (count("o"), count("o"));
    assert_ne!(a, b);
    assert!(same_but_fresh_names(&a, &b));
    assert!(!same_but_fresh_names(&a, &count("x")));
}

/// The queries of `queries/` with other IRIs, through their shapes.
#[test]
fn the_projects_queries_through_their_shapes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries");
    let mut kept = 0;
    for set in [
        "lubm-basic",
        "lubm-browsing",
        "lubm-analytics",
        "lubm-sparql11",
    ] {
        for entry in std::fs::read_dir(root.join(set)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rq") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if cut(&text).is_some() {
                kept += usize::from(same_as_parser(&text));
            }
        }
    }
    assert!(kept >= 10, "{kept} shapes kept");
}

/// A text over 16 KiB is parsed as it is: its shape is not kept.
#[test]
fn long_texts_keep_no_shape() {
    let long = format!(
        "SELECT * WHERE {{ ?s <http://a/long> ?o }} # {}",
        "x".repeat(LONGEST)
    );
    for _ in 0..3 {
        assert_eq!(*parse(&long).unwrap(), parsed(&long).unwrap());
    }
    let shape = cut(&long).unwrap().shape;
    assert!(shard(&shape).read().unwrap().get(shape.as_str()).is_none());
}

/// An IRI the parser refuses, in a kept shape, gets the parser's error.
#[test]
fn a_refused_iri_gets_the_parsers_error() {
    let good = "SELECT * WHERE { ?s <http://a/p> <http://a/good> }";
    assert!(same_as_parser(good));
    let bad = "SELECT * WHERE { ?s <http://a/p> <http://[bad> }";
    assert_eq!(
        parse(bad).unwrap_err().to_string(),
        parsed(bad).unwrap_err().to_string()
    );
}

/// A shape's queries on one thread refill the last one in place: IRIs longer and shorter
/// than the last one's, an IRI the parser refuses in between, and two queries of the shape
/// held at once (the second filled from the shape's parse) all give the parser's queries.
#[test]
fn a_shapes_last_query_refilled_in_place_gives_the_parsers() {
    let shape = |a: &str, b: &str| {
        format!(
            "SELECT ?x WHERE {{ ?x <http://a/p> <{a}> . ?x <http://a/q> ?y FILTER(?y != <{b}>) }}"
        )
    };
    let same = |text: &str| {
        let got = parse(text).unwrap();
        assert_eq!(*got, parsed(text).unwrap(), "{text}");
    };
    // Met, kept, then filled once: the shape is the thread's.
    for _ in 0..3 {
        same(&shape("http://x/1", "http://y/1"));
    }
    let slots = || {
        RECENT.with(|recent| {
            let key = cut(&shape("http://x/1", "http://y/1")).unwrap().shape;
            let recent = recent.borrow();
            let entry = recent.get(key.as_str()).expect("the shape is recent");
            (entry.slots.clone(), entry.spare.is_some())
        })
    };
    let (recorded, spare) = slots();
    assert!(spare, "the last query waits to be refilled");
    // The walk met every IRI cut out (the predicates' too), each once, and no other.
    let recorded = recorded.expect("a fill records its slots");
    let mut met: Vec<u32> = recorded.iter().map(|slot| slot.expect("a slot")).collect();
    met.sort_unstable();
    assert_eq!(met, [0, 1, 2, 3]);
    for (a, b) in [
        (
            "http://x/a-much-longer-iri-than-before/0123456789",
            "http://y/2",
        ),
        ("x:1", "http://y/3"),
        ("http://x/%C3%A9", "urn:isbn:0451450523"),
    ] {
        same(&shape(a, b));
    }
    // Refused by the parser: its error, and the next query is still right.
    let bad = shape("http://x/ bad", "http://y/4");
    assert_eq!(
        parse(&bad).unwrap_err().to_string(),
        parsed(&bad).unwrap_err().to_string()
    );
    same(&shape("http://x/5", "http://y/5"));
    // Two held at once: the second cannot take the first's place.
    let first_text = shape("http://x/6", "http://y/6");
    let second_text = shape("http://x/7", "http://y/7");
    let first = parse(&first_text).unwrap();
    let second = parse(&second_text).unwrap();
    assert_eq!(*first, parsed(&first_text).unwrap());
    assert_eq!(*second, parsed(&second_text).unwrap());
    drop((first, second));
    same(&shape("http://x/8", "http://y/8"));
}
