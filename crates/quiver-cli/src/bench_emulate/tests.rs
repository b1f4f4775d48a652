//! The emulator's random choices: placeholders filled only with instances of the named
//! class (checked against a LUBM-1 store), weights respected over many draws, mix files.

use std::sync::OnceLock;

use quiver_loader::{load_lubm, NoProgress};
use quiver_lubm::LubmConfig;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions};
use quiver_store::{Direction, Store};

use super::mix::{self, Rng, WeightedChooser, UB};

fn lubm1() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        load_lubm(LubmConfig::standard(1), 2, None, &NoProgress)
            .expect("LUBM-1 loads")
            .0
    })
}

/// The `<IRI>`s a filled-in query has where the template had placeholders.
fn substituted(template: &mix::Template, filled: &str) -> Vec<String> {
    let marker = template.text.find('%').expect("a placeholder");
    assert_eq!(&filled[..marker], &template.text[..marker]);
    let rest = &filled[marker..];
    assert!(rest.starts_with('<'), "{rest}");
    let close = rest.find('>').expect("closed IRI");
    vec![rest[1..close].to_owned()]
}

#[test]
fn placeholders_are_replaced_by_instances_of_the_named_class_only() {
    let store = lubm1();
    let rdf_type = store.rdf_type().expect("rdf:type");
    for template in mix::default_mix() {
        let class_iri = template
            .classes()
            .next()
            .expect("one placeholder")
            .to_owned();
        assert!(class_iri.starts_with(UB), "{class_iri}");
        let class_term = store.iri_id(&class_iri).expect("class in store");
        let class = store.class_of_term(class_term).expect("a class");
        let bound = template.bind(store).expect("binds");
        let mut rng = Rng::new(42);
        let mut text = String::new();
        let mut distinct = std::collections::HashSet::new();
        for _ in 0..300 {
            bound.instantiate(store, &mut rng, &mut text).unwrap();
            assert!(!text.contains('%'), "{text}");
            for iri in substituted(&template, &text) {
                let id = store.iri_id(&iri).expect("the IRI is a term of the store");
                assert!(
                    store.instances(class).binary_search(&id).is_ok(),
                    "{iri} is not an instance of {class_iri}"
                );
                assert!(
                    store
                        .graph()
                        .get(id, rdf_type, Direction::Out)
                        .contains(&class_term),
                    "{iri} has no rdf:type {class_iri}"
                );
                distinct.insert(id);
            }
        }
        let pool = store.instances(class).len();
        assert!(
            distinct.len() >= pool.min(300) / 3,
            "{}: only {} distinct of {pool} instances",
            template.name,
            distinct.len()
        );
        // The filled-in query is valid SPARQL and runs.
        let prepared = prepare(store, &text, &PrepareOptions::default()).unwrap();
        prepared.execute(store, &ExecOptions::default()).unwrap();
    }
}

#[test]
fn t6_finds_departments_of_the_chosen_university() {
    let store = lubm1();
    let template = mix::default_mix().pop().expect("t6");
    assert_eq!(template.name, "t6");
    let bound = template.bind(store).unwrap();
    // Only University0 has departments in LUBM-1; other University instances (degree
    // targets) give no rows. Over many draws some query must find rows.
    let mut rng = Rng::new(3);
    let mut text = String::new();
    let mut nonempty = 0;
    for _ in 0..20_000 {
        bound.instantiate(store, &mut rng, &mut text).unwrap();
        if text.contains("<http://www.University0.edu>") {
            let results = prepare(store, &text, &PrepareOptions::default())
                .unwrap()
                .execute(store, &ExecOptions::default())
                .unwrap();
            if let quiver_sparql::QueryResults::Solutions(s) = results {
                nonempty += usize::from(!s.is_empty());
            }
        }
    }
    assert!(nonempty > 0, "University0 was never drawn or gave no rows");
}

#[test]
fn unknown_classes_and_prefixes_are_errors() {
    let store = lubm1();
    let template = mix::parse_template(
        "x",
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nSELECT * { ?x ub:memberOf %ub:NoSuchClass }",
        1.0,
    )
    .unwrap();
    let error = template
        .bind(store)
        .err()
        .expect("no instances")
        .to_string();
    assert!(error.contains("NoSuchClass"), "{error}");
    let error = mix::parse_template("y", "SELECT * { ?x ?p %foo:Bar }", 1.0)
        .expect_err("undeclared prefix")
        .to_string();
    assert!(error.contains("foo"), "{error}");
    assert!(mix::parse_template("z", "SELECT * { ?x ?p % }", 1.0).is_err());
    // A full IRI and a declared prefix both work.
    let t = mix::parse_template(
        "w",
        "PREFIX u: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nSELECT * { ?x ?p %u:Department . ?y ?q %<http://swat.cse.lehigh.edu/onto/univ-bench.owl#University> }",
        1.0,
    )
    .unwrap();
    let classes: Vec<&str> = t.classes().collect();
    assert_eq!(
        classes,
        [format!("{UB}Department"), format!("{UB}University")]
    );
    let mut text = String::new();
    t.bind(store)
        .unwrap()
        .instantiate(store, &mut Rng::new(1), &mut text)
        .unwrap();
    assert_eq!(text.matches('<').count(), 3, "{text}");
}

#[test]
fn weights_are_respected_over_many_draws() {
    let weights = [25.0, 25.0, 3.0, 6.0, 25.0, 2.0, 0.0];
    let chooser = WeightedChooser::new(&weights).unwrap();
    let mut rng = Rng::new(7);
    let draws = 200_000;
    let mut counts = [0usize; 7];
    for _ in 0..draws {
        counts[chooser.choose(&mut rng)] += 1;
    }
    let total: f64 = weights.iter().sum();
    for (i, (&count, &weight)) in counts.iter().zip(&weights).enumerate() {
        let share = count as f64 / draws as f64;
        let expected = weight / total;
        // The standard error of a share here is at most ~0.001: allow five of them.
        assert!(
            (share - expected).abs() < 0.005,
            "template {i}: share {share:.4}, expected {expected:.4}"
        );
    }
    assert_eq!(counts[6], 0, "a zero weight is never chosen");
    assert!(WeightedChooser::new(&[0.0, 0.0]).is_err());
    assert!(WeightedChooser::new(&[1.0, -1.0]).is_err());
    assert!(WeightedChooser::new(&[]).is_err());
}

#[test]
fn the_same_seed_makes_the_same_choices() {
    let chooser = WeightedChooser::new(&[1.0, 2.0, 3.0]).unwrap();
    let draw = |seed| {
        let mut rng = Rng::new(seed);
        (0..100)
            .map(|_| chooser.choose(&mut rng))
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(5), draw(5));
    assert_ne!(draw(5), draw(6));
}

#[test]
fn mix_files_name_templates_relative_to_themselves() {
    let dir = std::env::temp_dir().join(format!("quiver-mix-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/a.rq"),
        "SELECT * { ?x ?p %<http://example.org/C> }",
    )
    .unwrap();
    std::fs::write(dir.join("sub/b.rq"), "SELECT * { ?x ?p ?o }").unwrap();
    let good = dir.join("sub/good.mix");
    std::fs::write(&good, "# a comment\n\na.rq 3\nb.rq 0.5\n").unwrap();
    let templates = mix::read_mix(&good).unwrap();
    let names: Vec<(&str, f64)> = templates
        .iter()
        .map(|t| (t.name.as_str(), t.weight))
        .collect();
    assert_eq!(names, [("a", 3.0), ("b", 0.5)]);

    for (content, needle) in [
        ("a.rq\n", "good2.mix:1"),
        ("a.rq 1\nb.rq -2\n", "good2.mix:2"),
        ("missing.rq 1\n", "missing.rq"),
        ("b.rq 0\n", "no template with a weight"),
    ] {
        let path = dir.join("sub/good2.mix");
        std::fs::write(&path, content).unwrap();
        let error = format!("{:#}", mix::read_mix(&path).expect_err("an error"));
        assert!(error.contains(needle), "{content:?}: {error}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
