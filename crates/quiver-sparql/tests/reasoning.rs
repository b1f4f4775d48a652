//! Reasoning checked against independent references: the 14 original LUBM queries over
//! LUBM-1 give the answer counts the LUBM authors published for LUBM(1,0); over a slice
//! of LUBM-1 and over random ontologies, the entailment equals the closure computed by
//! RDFLib's `owlrl` (`tests/reasoning/owlrl_closure.py`, run by the test environment's
//! Python), and the LUBM queries give the rows Oxigraph gives over owlrl's closure.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use oxrdf::Term;
use quiver_loader::{load_files, LoadOptions, NoProgress};
use quiver_store::{Profile, Store, View};
use support::{oxigraph_rows, select, Row};

fn shared() -> PathBuf {
    std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-reasoning-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(paths: &[PathBuf]) -> Store {
    let options = LoadOptions {
        format: None,
        lenient: false,
        threads: 2,
    };
    load_files(paths, &options, None, &NoProgress)
        .unwrap_or_else(|e| panic!("loading {paths:?}: {e}"))
        .0
}

/// The entailed view of `store` reasoned under `profile`.
fn entailed(store: &Store, profile: Profile) -> Store {
    let (reasoned, report) = store.reasoned(profile, &mut |_| {});
    assert_eq!(
        reasoned.entailment().unwrap().derived(),
        report.derived,
        "the layer counts what was derived"
    );
    reasoned.with_view(View::Entailed).unwrap()
}

fn original_query(n: usize) -> String {
    let path = shared().join(format!("queries/lubm-original/q{n}.rq"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ontology as N-Triples (it ships as RDF/XML).
fn ontology_ntriples() -> String {
    let path = shared().join("lubm/univ-bench.owl");
    let file = std::fs::File::open(&path).unwrap();
    let parser = oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::RdfXml)
        .with_base_iri("http://swat.cse.lehigh.edu/onto/univ-bench.owl")
        .unwrap();
    let mut out = String::new();
    for quad in parser.for_reader(file) {
        let quad = quad.unwrap();
        out.push_str(&format!(
            "{} {} {} .\n",
            quad.subject, quad.predicate, quad.object
        ));
    }
    out
}

/// Closes each file of `inputs` with owlrl; the closures' paths.
fn owlrl(profile: Profile, inputs: &[PathBuf]) -> Vec<PathBuf> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reasoning/owlrl_closure.py");
    let outputs: Vec<PathBuf> = inputs
        .iter()
        .map(|p| p.with_extension("owlrl.nt"))
        .collect();
    let mut command = std::process::Command::new(&python);
    command.arg(&script).arg(profile.name());
    for (input, output) in inputs.iter().zip(&outputs) {
        command.arg(input).arg(output);
    }
    let result = command.output().unwrap_or_else(|e| {
        panic!("cannot run {python} (scripts/test installs owlrl into its environment): {e}")
    });
    assert!(
        result.status.success(),
        "owlrl failed (install it with `{python} -m pip install owlrl`, as scripts/test does):\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    outputs
}

/// The triples of the default graph of `store` as N-Triples lines.
fn triples(store: &Store) -> BTreeSet<String> {
    let mut lines = BTreeSet::new();
    let term = |id| store.term(id).expect("a stored id").to_string();
    store.for_each_quad(|quad| {
        if quad.graph.is_none() {
            lines.insert(format!(
                "{} {} {} .",
                term(quad.subject),
                term(quad.predicate),
                term(quad.object)
            ));
        }
    });
    lines
}

/// The N-Triples lines of `path`, normalised through Oxigraph's parser.
fn file_triples(path: &Path) -> BTreeSet<String> {
    let file = std::fs::File::open(path).unwrap();
    oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::NTriples)
        .for_reader(file)
        .map(|quad| {
            let quad = quad.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            format!("{} {} {} .", quad.subject, quad.predicate, quad.object)
        })
        .collect()
}

const RDF_TYPE: &str = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";

/// The triples both reasoners are meant to agree on: about the data's individuals
/// (the subjects `individual` accepts), typing them with the ontology's named classes
/// (starting with `classes`) or relating them by any property, `owl:sameAs` between two
/// different terms included (owlrl writes the reflexive `x owl:sameAs x` for every
/// resource; Quiver does not). Left out: RDFS's axiomatic and resource-typing triples and
/// the schema's own closure, which Quiver does not store.
fn comparable(
    lines: &BTreeSet<String>,
    individual: impl Fn(&str) -> bool,
    classes: &str,
) -> BTreeSet<String> {
    lines
        .iter()
        .filter(|line| {
            let mut parts = line.splitn(3, ' ');
            let (s, p, o) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            individual(s)
                && (p != "<http://www.w3.org/2002/07/owl#sameAs>" || s != o.trim_end_matches(" ."))
                && (p != RDF_TYPE || o.starts_with(classes))
        })
        .cloned()
        .collect()
}

fn assert_same_closure(ours: &BTreeSet<String>, theirs: &BTreeSet<String>, what: &str) {
    let missing: Vec<_> = theirs.difference(ours).take(10).collect();
    let extra: Vec<_> = ours.difference(theirs).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: {} triples of the reference closure missing, {} not in it; first missing {missing:#?}, first extra {extra:#?}",
        theirs.difference(ours).count(),
        ours.difference(theirs).count()
    );
}

/// UBA's individuals: `http://www.UniversityN.edu` and what is under it.
fn lubm_individual(subject: &str) -> bool {
    subject.starts_with("<http://www.") && subject.contains(".University")
}

fn random_individual(subject: &str) -> bool {
    subject.starts_with("<http://example.org/i")
}

fn sorted_rows(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort();
    rows
}

/// The complete answers of the 14 queries on LUBM(1,0), as published with the benchmark
/// (Guo, Pan and Heflin, "LUBM: A benchmark for OWL knowledge base systems", 2005), for
/// UBA's data of one university with seed 0 (`shared/lubm/lubm1-uba-sorted.nt.gz`).
const PUBLISHED_LUBM1: [usize; 14] = [4, 0, 6, 34, 719, 7790, 67, 7790, 208, 4, 224, 15, 1, 5916];

#[test]
fn original_lubm_queries_give_the_published_complete_answers() {
    let store = load(&[
        shared().join("lubm/lubm1-uba-sorted.nt.gz"),
        shared().join("lubm/univ-bench.owl"),
    ]);
    let view = entailed(&store, Profile::OwlRl);
    let mut incomplete = 0;
    for (i, &expected) in PUBLISHED_LUBM1.iter().enumerate() {
        let text = original_query(i + 1);
        let (_, rows) = select(&view, &text).unwrap();
        assert_eq!(rows.len(), expected, "q{} over the entailment", i + 1);
        let (_, asserted) = select(&store, &text).unwrap();
        assert!(
            asserted.len() <= expected,
            "q{}: asserted rows are a subset",
            i + 1
        );
        incomplete += usize::from(asserted.len() < expected);
    }
    // Without inference most answers are incomplete (q1, q3 and q14 are not).
    assert!(incomplete >= 9, "only {incomplete} queries need inference");
}

#[test]
fn a_slice_of_lubm_matches_owlrl_closure_and_oxigraph_answers() {
    let dir = scratch("lubm-slice");
    let data = flate2::read::GzDecoder::new(
        std::fs::File::open(shared().join("lubm/lubm1-uba-sorted.nt.gz")).unwrap(),
    );
    let data = std::io::read_to_string(data).unwrap();
    // One department's triples and whatever names it: about 8,300 of LUBM-1's 100,543,
    // which owlrl closes in seconds.
    let mut text: String = data
        .lines()
        .filter(|line| line.contains("Department0.University0.edu"))
        .flat_map(|line| [line, "\n"])
        .collect();
    text.push_str(&ontology_ntriples());
    let input = dir.join("slice.nt");
    std::fs::write(&input, &text).unwrap();
    let store = load(std::slice::from_ref(&input));
    let view = entailed(&store, Profile::OwlRl);
    let closure = owlrl(Profile::OwlRl, std::slice::from_ref(&input)).remove(0);

    let ub = "<http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    assert_same_closure(
        &comparable(&triples(&view), lubm_individual, ub),
        &comparable(&file_triples(&closure), lubm_individual, ub),
        "LUBM slice",
    );

    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_reader(
            oxigraph::io::RdfFormat::NTriples,
            std::fs::File::open(&closure).unwrap(),
        )
        .unwrap();
    let mut answered = 0;
    for n in 1..=14 {
        let text = original_query(n);
        let (vars, rows) = select(&view, &text).unwrap();
        let expected = oxigraph_rows(&oxigraph, &text, &vars);
        assert_eq!(sorted_rows(rows.clone()), sorted_rows(expected), "q{n}");
        answered += usize::from(!rows.is_empty());
    }
    assert!(
        answered >= 10,
        "only {answered} queries have rows on the slice"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A random ontology over classes `C0..`, object properties `P0..` and restrictions
/// `R0..` (IRIs, so that both reasoners name them alike), with random data over
/// individuals `i0..`: N-Triples text.
fn random_case(seed: u64) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let ex = |name: String| format!("<http://example.org/{name}>");
    let rdf = |name: &str| format!("<http://www.w3.org/1999/02/22-rdf-syntax-ns#{name}>");
    let rdfs = |name: &str| format!("<http://www.w3.org/2000/01/rdf-schema#{name}>");
    let owl = |name: &str| format!("<http://www.w3.org/2002/07/owl#{name}>");
    let (classes, properties, individuals) = (8, 6, 12);
    let mut lines = Vec::new();
    let mut triple = |s: String, p: String, o: String| lines.push(format!("{s} {p} {o} ."));
    let class = |i: u64| ex(format!("C{i}"));
    let property = |i: u64| ex(format!("P{i}"));
    for _ in 0..6 {
        triple(
            class(next(classes)),
            rdfs("subClassOf"),
            class(next(classes)),
        );
    }
    for _ in 0..3 {
        triple(
            property(next(properties)),
            rdfs("subPropertyOf"),
            property(next(properties)),
        );
    }
    for _ in 0..2 {
        triple(
            property(next(properties)),
            rdfs("domain"),
            class(next(classes)),
        );
        triple(
            property(next(properties)),
            rdfs("range"),
            class(next(classes)),
        );
    }
    let mut extra = Vec::new();
    if next(2) == 0 {
        extra.push((
            property(next(properties)),
            owl("inverseOf"),
            property(next(properties)),
        ));
    }
    if next(2) == 0 {
        extra.push((
            property(next(properties)),
            rdf("type"),
            owl("TransitiveProperty"),
        ));
    }
    if next(3) == 0 {
        extra.push((
            property(next(properties)),
            rdf("type"),
            owl("SymmetricProperty"),
        ));
    }
    if next(3) == 0 {
        extra.push((
            class(next(classes)),
            owl("equivalentClass"),
            class(next(classes)),
        ));
    }
    if next(3) == 0 {
        extra.push((
            property(next(properties)),
            owl("equivalentProperty"),
            property(next(properties)),
        ));
    }
    // Equality: functional and inverse-functional properties derive `owl:sameAs`.
    if next(2) == 0 {
        extra.push((
            property(next(properties)),
            rdf("type"),
            owl("FunctionalProperty"),
        ));
    }
    if next(3) == 0 {
        extra.push((
            property(next(properties)),
            rdf("type"),
            owl("InverseFunctionalProperty"),
        ));
    }
    for r in 0..3 {
        let restriction = ex(format!("R{r}"));
        extra.push((restriction.clone(), rdf("type"), owl("Restriction")));
        extra.push((
            restriction.clone(),
            owl("onProperty"),
            property(next(properties)),
        ));
        match next(4) {
            0 => extra.push((
                restriction.clone(),
                owl("someValuesFrom"),
                class(next(classes)),
            )),
            1 => extra.push((restriction.clone(), owl("someValuesFrom"), owl("Thing"))),
            2 => extra.push((
                restriction.clone(),
                owl("allValuesFrom"),
                class(next(classes)),
            )),
            _ => extra.push((
                restriction.clone(),
                owl("hasValue"),
                ex(format!("i{}", next(individuals))),
            )),
        }
        // The restriction is a subclass (someValuesFrom, hasValue) or a superclass
        // (allValuesFrom, hasValue) of a named class, where OWL 2 RL allows it.
        let named = class(next(classes));
        if next(2) == 0 {
            extra.push((restriction.clone(), rdfs("subClassOf"), named));
        } else {
            extra.push((named, rdfs("subClassOf"), restriction.clone()));
        }
    }
    // An intersection class over a list of IRIs.
    let members = [next(classes), next(classes)];
    extra.push((class(classes), owl("intersectionOf"), ex("L0".into())));
    extra.push((ex("L0".into()), rdf("first"), class(members[0])));
    extra.push((ex("L0".into()), rdf("rest"), ex("L1".into())));
    extra.push((ex("L1".into()), rdf("first"), class(members[1])));
    extra.push((ex("L1".into()), rdf("rest"), rdf("nil")));
    for (s, p, o) in extra {
        triple(s, p, o);
    }
    // Classes are declared, as OWL wants: owlrl reads `C ⊑ owl:Thing` (which `scm-svf1`
    // needs for a restriction on `owl:Thing`) only of a declared class.
    for c in 0..=classes {
        triple(class(c), rdf("type"), owl("Class"));
    }
    for _ in 0..14 {
        triple(
            ex(format!("i{}", next(individuals))),
            rdf("type"),
            class(next(classes)),
        );
    }
    for _ in 0..24 {
        triple(
            ex(format!("i{}", next(individuals))),
            property(next(properties)),
            ex(format!("i{}", next(individuals))),
        );
    }
    for _ in 0..next(3) {
        triple(
            ex(format!("i{}", next(individuals))),
            owl("sameAs"),
            ex(format!("i{}", next(individuals))),
        );
    }
    lines.join("\n") + "\n"
}

#[test]
fn random_ontologies_close_as_owlrl_does() {
    let dir = scratch("random");
    for profile in [Profile::Rdfs, Profile::OwlRl] {
        let inputs: Vec<PathBuf> = (0..12)
            .map(|seed| {
                let path = dir.join(format!("{}-{seed}.nt", profile.name()));
                std::fs::write(&path, random_case(seed)).unwrap();
                path
            })
            .collect();
        let closures = owlrl(profile, &inputs);
        let mut derived = 0;
        let mut equalities = 0;
        for (input, closure) in inputs.iter().zip(&closures) {
            let store = load(std::slice::from_ref(input));
            let view = entailed(&store, profile);
            derived += view.entailment().unwrap().derived();
            let asserted = file_triples(input);
            equalities += triples(&view)
                .iter()
                .filter(|t| t.contains("#sameAs> <http://example.org/i") && !asserted.contains(*t))
                .count();
            assert_same_closure(
                &comparable(&triples(&view), random_individual, "<http://example.org/"),
                &comparable(
                    &file_triples(closure),
                    random_individual,
                    "<http://example.org/",
                ),
                &format!(
                    "{profile} on {}:\n{}",
                    input.display(),
                    std::fs::read_to_string(input).unwrap()
                ),
            );
        }
        assert!(
            derived > 100,
            "{profile}: only {derived} triples derived in all"
        );
        // The cases make terms equal (asserted `owl:sameAs`, functional and
        // inverse-functional properties) under OWL 2 RL, never under RDFS.
        assert_eq!(
            equalities > 20,
            profile == Profile::OwlRl,
            "{profile}: {equalities} equalities derived in all"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn queries_prepared_on_one_view_are_refused_on_the_other() {
    let store = support::load(
        "<http://e/a> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://e/b> .\n\
         <http://e/x> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/a> .\n",
    );
    let (reasoned, _) = store.reasoned(Profile::Rdfs, &mut |_| {});
    let view = reasoned.entailed().unwrap();
    let query = "SELECT ?x { ?x a <http://e/b> }";
    assert_eq!(select(&reasoned, query).unwrap().1.len(), 0);
    assert_eq!(
        select(&view, query).unwrap().1,
        vec![vec![Some("<http://e/x>".to_owned())]]
    );
    let prepared =
        quiver_sparql::prepare(&view, query, &quiver_sparql::PrepareOptions::default()).unwrap();
    let error = prepared
        .execute(&reasoned, &quiver_sparql::ExecOptions::default())
        .err()
        .expect("another view");
    assert!(error.to_string().contains("entailed"), "{error}");
    // Either view gives the other back. The entailment adds `x a b` and the hierarchy's
    // reflexive `a ⊑ a`, `b ⊑ b`.
    assert_eq!(view.asserted().graph().triples(), 2);
    assert_eq!(
        reasoned
            .with_view(View::Entailed)
            .unwrap()
            .graph()
            .triples(),
        5
    );
    let term = |t: &Term| t.to_string();
    assert_eq!(
        term(
            &reasoned
                .term(reasoned.iri_id("http://e/b").unwrap())
                .unwrap()
        ),
        "<http://e/b>"
    );
}

/// Runs the SPARQL Update `text` on `store`.
fn update(store: &Store, text: &str) -> Store {
    let parsed = quiver_sparql::parse_update(text, None).unwrap();
    quiver_sparql::update::execute_update(
        store,
        &parsed,
        &quiver_sparql::ExecOptions::default(),
        &quiver_sparql::update::NoLoad,
    )
    .unwrap_or_else(|e| panic!("{text}: {e}"))
    .store
}

#[test]
fn updates_keep_the_entailment_equal_to_a_closure_from_scratch() {
    for seed in 0..16u64 {
        let text = random_case(seed);
        let store = support::load(&text);
        let (mut store, _) = store.reasoned(Profile::OwlRl, &mut |_| {});
        // The data triples of the case, deleted and inserted again at random, with new ones.
        let data: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("<http://example.org/i"))
            .collect();
        let mut state = seed + 1;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as usize % n
        };
        for step in 0..12 {
            let line = data[next(data.len())];
            let request = match step % 4 {
                // A change of the ontology.
                3 => format!(
                    "INSERT DATA {{ <http://example.org/C{}> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://example.org/C{}> }}",
                    next(8),
                    next(8)
                ),
                0 => format!("DELETE DATA {{ {line} }}"),
                1 => format!(
                    "INSERT DATA {{ <http://example.org/i{}> <http://example.org/P{}> <http://example.org/i{}> }}",
                    next(12),
                    next(6),
                    next(12)
                ),
                _ => format!(
                    "DELETE {{ ?s ?p ?o }} INSERT {{ {line} }} WHERE {{ ?s ?p ?o FILTER(?s = <http://example.org/i{}>) }}",
                    next(12)
                ),
            };
            store = update(&store, &request);
            let layer = store.entailment().expect("an update keeps the entailment");
            assert_eq!(layer.profile(), Profile::OwlRl);
            // From scratch: the asserted triples loaded anew and reasoned.
            let asserted: String = triples(&store).into_iter().map(|t| t + "\n").collect();
            let fresh = entailed(&support::load(&asserted), Profile::OwlRl);
            assert_same_closure(
                &triples(&store.entailed().unwrap()),
                &triples(&fresh),
                &format!("seed {seed}, after {request}, case:\n{text}"),
            );
        }
    }
}

#[test]
fn updates_that_bring_new_vocabulary_or_equalities_are_followed() {
    let ex = "http://example.org/";
    let owl = "http://www.w3.org/2002/07/owl#";
    let store = support::load(&format!(
        "<{ex}a> <{ex}p> <{ex}b> .\n<{ex}c> <{ex}q> <{ex}d> .\n\
         <{ex}p> <http://www.w3.org/2000/01/rdf-schema#domain> <{ex}A> .\n"
    ));
    let (mut store, _) = store.reasoned(Profile::OwlRl, &mut |_| {});
    // Each request brings a term of the vocabulary the store did not hold before.
    for request in [
        format!("INSERT DATA {{ <{ex}p> <{owl}inverseOf> <{ex}r> }}"),
        format!("INSERT DATA {{ <{ex}b> <{owl}sameAs> <{ex}c> }}"),
        format!("INSERT DATA {{ <{ex}q> a <{owl}FunctionalProperty> . <{ex}c> <{ex}q> <{ex}e> }}"),
        format!("DELETE DATA {{ <{ex}b> <{owl}sameAs> <{ex}c> }}"),
        format!("INSERT DATA {{ <{ex}f> <{ex}p> <{ex}e> }}"),
    ] {
        store = update(&store, &request);
        let asserted: String = triples(&store).into_iter().map(|t| t + "\n").collect();
        let fresh = entailed(&support::load(&asserted), Profile::OwlRl);
        assert_same_closure(
            &triples(&store.entailed().unwrap()),
            &triples(&fresh),
            &format!("after {request}"),
        );
    }
    // After the last: d and e are equal (q is functional), and so f's `p` reaches d.
    let view = store.entailed().unwrap();
    let lines = triples(&view);
    for line in [
        format!("<{ex}d> <{owl}sameAs> <{ex}e> ."),
        format!("<{ex}f> <{ex}p> <{ex}d> ."),
        format!("<{ex}d> <{ex}r> <{ex}f> ."),
    ] {
        assert!(lines.contains(&line), "{line} missing");
    }
}
