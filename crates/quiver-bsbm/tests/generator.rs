//! The generated dataset checked against the BSBM V3.1 specification: instance counts per
//! class from its scale formulas, value ranges and distributions, determinism, N-Triples
//! syntax and referential integrity. Expected figures are computed here from the
//! specification's rules, not taken from the generator.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use oxrdf::{Literal, Term, Triple};
use quiver_bsbm::{write_ntriples, BsbmConfig};

const BSBM: &str = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/";
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const FOAF: &str = "http://xmlns.com/foaf/0.1/";
const REV: &str = "http://purl.org/stuff/rev#";
const DC: &str = "http://purl.org/dc/elements/1.1/";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";

fn bytes(products: u32, seed: u64, threads: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let triples = write_ntriples(&BsbmConfig::new(products, seed), threads, &mut out).unwrap();
    assert_eq!(
        triples as usize,
        out.iter().filter(|&&b| b == b'\n').count()
    );
    out
}

/// A parsed dataset: every triple, and per subject its predicate-object pairs.
struct Data {
    triples: Vec<Triple>,
    by_subject: HashMap<String, Vec<(String, Term)>>,
}

impl Data {
    fn parse(bytes: &[u8]) -> Self {
        let triples: Vec<Triple> = oxttl::NTriplesParser::new()
            .for_slice(bytes)
            .collect::<Result<_, _>>()
            .expect("the output is N-Triples");
        let mut by_subject: HashMap<String, Vec<(String, Term)>> = HashMap::new();
        for t in &triples {
            let oxrdf::NamedOrBlankNode::NamedNode(s) = &t.subject else {
                panic!("blank subject {t}");
            };
            by_subject
                .entry(s.as_str().to_owned())
                .or_default()
                .push((t.predicate.as_str().to_owned(), t.object.clone()));
        }
        Self {
            triples,
            by_subject,
        }
    }

    /// Subjects typed with `class`.
    fn instances(&self, class: &str) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .by_subject
            .iter()
            .filter(|(_, pos)| {
                pos.iter().any(|(p, o)| {
                    p == RDF_TYPE && matches!(o, Term::NamedNode(n) if n.as_str() == class)
                })
            })
            .map(|(s, _)| s.as_str())
            .collect();
        out.sort_unstable();
        out
    }

    fn values(&self, subject: &str, predicate: &str) -> Vec<&Term> {
        self.by_subject[subject]
            .iter()
            .filter(|(p, _)| p == predicate)
            .map(|(_, o)| o)
            .collect()
    }

    fn one(&self, subject: &str, predicate: &str) -> &Term {
        let all = self.values(subject, predicate);
        assert_eq!(all.len(), 1, "{subject} {predicate}: {all:?}");
        all[0]
    }

    fn literal(&self, subject: &str, predicate: &str) -> &Literal {
        match self.one(subject, predicate) {
            Term::Literal(l) => l,
            other => panic!("{subject} {predicate}: {other} is not a literal"),
        }
    }

    fn iri(&self, subject: &str, predicate: &str) -> &str {
        match self.one(subject, predicate) {
            Term::NamedNode(n) => n.as_str(),
            other => panic!("{subject} {predicate}: {other} is not an IRI"),
        }
    }

    fn int(&self, subject: &str, predicate: &str) -> i64 {
        self.literal(subject, predicate).value().parse().unwrap()
    }

    /// Days since 1970-01-01 of an `xsd:date` or midnight `xsd:dateTime` literal.
    fn day(&self, subject: &str, predicate: &str) -> i64 {
        day(self.literal(subject, predicate).value())
    }
}

fn day(text: &str) -> i64 {
    let (date, time) = text.split_once('T').unwrap_or((text, "00:00:00"));
    assert_eq!(time, "00:00:00", "{text}");
    let parts: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let (y, m, d) = (parts[0], parts[1], parts[2]);
    // Days from civil (Howard Hinnant), independent of the generator's version.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

fn dataset(products: u32) -> &'static Data {
    static SMALL: OnceLock<Data> = OnceLock::new();
    static LARGE: OnceLock<Data> = OnceLock::new();
    let cell = match products {
        100 => &SMALL,
        1_000 => &LARGE,
        _ => unreachable!(),
    };
    cell.get_or_init(|| Data::parse(&bytes(products, 42, 2)))
}

/// The specification's product type hierarchy: depth `round(log10 n / 2) + 1`, the root's
/// `2 round(log10 n)` children, 8 per inner level, 2/4/8 at the last level by
/// `round(1.5 log10 n + 1) mod 3`; returned as the number of types at each depth.
fn levels(products: u32) -> Vec<u64> {
    let round = |x: f32| (x + 0.5).floor() as u64;
    let log = (products.max(10) as f32).log10();
    let depth = round(log / 2.0) + 1;
    let mut levels = vec![1];
    for level in 0..depth {
        let factor = if level == 0 {
            2 * round(log)
        } else if level + 1 < depth {
            8
        } else {
            [2, 4, 8][(round(log * 1.5 + 1.0) % 3) as usize]
        };
        levels.push(levels.last().unwrap() * factor);
    }
    levels
}

/// The mean number of features of all types, by the specification's per-depth ranges
/// (as the reference applies them: inner types at depth d take the range of depth d + 1).
fn expected_features(products: u32) -> f64 {
    let levels = levels(products);
    let depth = levels.len() as u64 - 1;
    let sum = depth * (depth + 1) / 2 - 1;
    let mean = |i: u64| (35 * i / sum + 75 * i / sum) as f64 / 2.0;
    let inner: f64 = (1..depth)
        .map(|d| levels[d as usize] as f64 * mean(d + 1))
        .sum();
    inner + levels[depth as usize] as f64 * mean(depth)
}

fn within(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual} not within {tolerance} of {expected}"
    );
}

fn class(local: &str) -> String {
    format!("{BSBM}{local}")
}

#[test]
fn instance_counts_follow_the_scale_rules() {
    for products in [100u32, 1_000] {
        let data = dataset(products);
        let n = f64::from(products);
        let count = |c: &str| data.instances(c).len() as f64;
        // Exact: products, 20 offers and 10 reviews per product, the type hierarchy.
        assert_eq!(count(&class("Product")), n);
        assert_eq!(count(&class("Offer")), 20.0 * n);
        assert_eq!(count(&format!("{REV}Review")), 10.0 * n);
        let types: u64 = levels(products).iter().sum();
        assert_eq!(count(&class("ProductType")) as u64, types);
        // Drawn: features within 15 % of the mean of the ranges (3 σ for 20 types).
        let features = expected_features(products);
        within(
            count(&class("ProductFeature")),
            features,
            0.15 * features,
            "features",
        );
        // Producers: about one per 50.5 products (N(3,1)-scaled sizes, mean 50 + 1/2).
        let producers = (n / 50.5).ceil();
        within(
            count(&class("Producer")),
            producers,
            2.0f64.max(0.2 * producers),
            "producers",
        );
        // Vendors: about one per 2,000.5 offers.
        let vendors = (20.0 * n / 2_000.5).ceil();
        within(
            count(&class("Vendor")),
            vendors,
            2.0f64.max(0.2 * vendors),
            "vendors",
        );
        // Reviewers: 19.5 reviews each on average (N(3,1)-scaled, without the + 1).
        let persons = 10.0 * n / 19.5;
        within(
            count(&format!("{FOAF}Person")),
            persons,
            0.12 * persons,
            "persons",
        );
    }
}

#[test]
fn triples_per_product_match_the_specification() {
    // The specification names its datasets by size: 666 products make the 250 K triple
    // dataset. Expected per-product counts for 1,000 products: product ≈ 15.5 + 22 features,
    // offers 200, reviews 108, reviewers ≈ 3, features ≈ 24.4, the rest < 1: ≈ 374.
    let triples = bytes(666, 7, 2).iter().filter(|&&b| b == b'\n').count() as f64;
    within(
        triples,
        250_000.0,
        0.03 * 250_000.0,
        "triples for 666 products",
    );
    let data = dataset(1_000);
    within(
        data.triples.len() as f64 / 1_000.0,
        374.0,
        0.03 * 374.0,
        "triples per product",
    );
}

#[test]
fn values_follow_the_specification() {
    let data = dataset(1_000);
    let today = day("2008-06-20");

    let products = data.instances(&class("Product"));
    let mut present = HashMap::<String, usize>::new();
    let mut features = 0;
    for &p in &products {
        let label_words = data
            .literal(p, &format!("{RDFS}label"))
            .value()
            .split(' ')
            .count();
        assert!((1..=3).contains(&label_words));
        for (predicate, object) in &data.by_subject[p] {
            *present.entry(predicate.clone()).or_default() += 1;
            if let Some(i) = predicate.strip_prefix(&class("productPropertyNumeric")) {
                let Term::Literal(l) = object else { panic!() };
                let v: i64 = l.value().parse().unwrap();
                assert!((1..=2_000).contains(&v), "numeric{i} = {v}");
            }
            if predicate == &class("productFeature") {
                features += 1;
            }
        }
    }
    let share = |p: &str| present.get(&class(p)).copied().unwrap_or(0) as f64 / 1_000.0;
    // Properties 1–3 always; 4: 40 % + 20 % × 50 %; 5: 40 % + 60 % × 25 %; 6: 40 % × 50 %.
    for (i, expected) in [(1, 1.0), (2, 1.0), (3, 1.0), (4, 0.5), (5, 0.55), (6, 0.2)] {
        within(
            share(&format!("productPropertyNumeric{i}")),
            expected,
            0.07,
            "numeric",
        );
        within(
            share(&format!("productPropertyTextual{i}")),
            expected,
            0.07,
            "textual",
        );
    }
    // 25 % of the features of the leaf type and its ancestors: for 1,000 products
    // (depths 6/48/96, ranges 14–30, 21–45, 21–45) 0.25 × (22 + 33 + 33) = 22 a product.
    within(features as f64 / 1_000.0, 22.0, 3.0, "features per product");

    let offers = data.instances(&class("Offer"));
    for &o in &offers {
        let price: f64 = data.literal(o, &class("price")).value().parse().unwrap();
        assert!((5.0..=10_000.0).contains(&price), "{price}");
        assert_eq!(
            data.literal(o, &class("price")).datatype().as_str(),
            class("USD")
        );
        let published = data.day(o, &format!("{DC}date"));
        assert!((today - 97..=today).contains(&published));
        let from = data.day(o, &class("validFrom"));
        let to = data.day(o, &class("validTo"));
        assert!((0..=90).contains(&(published - from)));
        assert!((7..=90).contains(&(to - published)));
        assert!((1..=21).contains(&data.int(o, &class("deliveryDays"))));
    }
    // Offers pick products normally around the middle of the range: the middle fifth
    // gets about 3.4 times the offers of the first fifth.
    let mut per_product = HashMap::<&str, usize>::new();
    for &o in &offers {
        *per_product
            .entry(data.iri(o, &class("product")))
            .or_default() += 1;
    }
    let number = |iri: &str| {
        iri.rsplit("Product")
            .next()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let in_fifth = |k: u32| -> usize {
        per_product
            .iter()
            .filter(|(p, _)| (number(p) - 1) / 200 == k)
            .map(|(_, n)| n)
            .sum()
    };
    assert!(
        in_fifth(2) > 2 * in_fifth(0),
        "{} {}",
        in_fifth(2),
        in_fifth(0)
    );

    let reviews = data.instances(&format!("{REV}Review"));
    let mut ratings = [0usize; 4];
    let languages: HashMap<&str, &str> = [
        ("US", "en"),
        ("GB", "en"),
        ("JP", "ja"),
        ("CN", "zh"),
        ("DE", "de"),
        ("FR", "fr"),
        ("ES", "es"),
        ("RU", "ru"),
        ("KR", "ko"),
        ("AT", "de"),
    ]
    .into_iter()
    .collect();
    for &r in &reviews {
        let date = data.day(r, &class("reviewDate"));
        assert!((today - 365..=today).contains(&date));
        assert!((date..=today).contains(&data.day(r, &format!("{DC}date"))));
        for (i, count) in ratings.iter_mut().enumerate() {
            if !data
                .values(r, &class(&format!("rating{}", i + 1)))
                .is_empty()
            {
                *count += 1;
                assert!((1..=10).contains(&data.int(r, &class(&format!("rating{}", i + 1)))));
            }
        }
        let title = data
            .literal(r, &format!("{DC}title"))
            .value()
            .split(' ')
            .count();
        assert!((4..=15).contains(&title));
        let text = data.literal(r, &format!("{REV}text"));
        assert!((50..=200).contains(&text.value().split(' ').count()));
        let reviewer = data.iri(r, &format!("{REV}reviewer"));
        let country = data.iri(reviewer, &class("country"));
        let code = country.rsplit('#').next().unwrap();
        assert_eq!(text.language(), Some(languages[code]), "{r}");
    }
    for count in ratings {
        within(
            count as f64 / reviews.len() as f64,
            0.7,
            0.03,
            "rating present",
        );
    }
    let persons = data.instances(&format!("{FOAF}Person"));
    let us = persons
        .iter()
        .filter(|p| data.iri(p, &class("country")).ends_with("#US"))
        .count();
    within(
        us as f64 / persons.len() as f64,
        0.4,
        0.07,
        "reviewers from the US",
    );
}

#[test]
fn the_same_seed_gives_the_same_bytes_on_any_number_of_threads() {
    let one = bytes(200, 3, 1);
    assert_eq!(one, bytes(200, 3, 2));
    assert_eq!(one, bytes(200, 3, 5));
    assert_ne!(one, bytes(200, 4, 2));
    // Forward chaining adds every ancestor type (root included) and nothing else.
    let mut chained = Vec::new();
    let config = BsbmConfig {
        forward_chaining: true,
        ..BsbmConfig::new(200, 3)
    };
    write_ntriples(&config, 2, &mut chained).unwrap();
    let extra = chained.iter().filter(|&&b| b == b'\n').count()
        - one.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(
        extra,
        200 * (levels(200).len() - 1),
        "depth − 1 ancestors a product"
    );
}

#[test]
fn output_is_n_triples_with_absolute_iris() {
    let data = dataset(100);
    let absolute = |iri: &str| {
        let (scheme, rest) = iri.split_once(':').expect("a scheme");
        assert!(!scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!(rest.starts_with("//"), "{iri}");
    };
    for t in &data.triples {
        if let oxrdf::NamedOrBlankNode::NamedNode(s) = &t.subject {
            absolute(s.as_str());
        }
        absolute(t.predicate.as_str());
        match &t.object {
            Term::NamedNode(o) => absolute(o.as_str()),
            Term::Literal(l) => absolute(l.datatype().as_str()),
            other => panic!("unexpected object {other}"),
        }
    }
}

#[test]
fn references_point_to_typed_subjects() {
    for products in [100, 1_000] {
        let data = dataset(products);
        let typed = |c: &str| -> HashSet<&str> { data.instances(c).into_iter().collect() };
        let products = typed(&class("Product"));
        let vendors = typed(&class("Vendor"));
        let producers = typed(&class("Producer"));
        let persons = typed(&format!("{FOAF}Person"));
        let features = typed(&class("ProductFeature"));
        let types = typed(&class("ProductType"));
        for o in data.instances(&class("Offer")) {
            assert!(products.contains(data.iri(o, &class("product"))), "{o}");
            assert!(vendors.contains(data.iri(o, &class("vendor"))), "{o}");
        }
        for r in data.instances(&format!("{REV}Review")) {
            assert!(products.contains(data.iri(r, &class("reviewFor"))), "{r}");
            assert!(
                persons.contains(data.iri(r, &format!("{REV}reviewer"))),
                "{r}"
            );
        }
        for &p in &products {
            assert!(producers.contains(data.iri(p, &class("producer"))));
            for f in data.values(p, &class("productFeature")) {
                let Term::NamedNode(f) = f else { panic!() };
                assert!(features.contains(f.as_str()));
            }
            let own: Vec<_> = data
                .values(p, RDF_TYPE)
                .into_iter()
                .filter(|t| !matches!(t, Term::NamedNode(n) if n.as_str() == class("Product")))
                .collect();
            assert_eq!(own.len(), 1);
            let Term::NamedNode(own) = own[0] else {
                panic!()
            };
            assert!(types.contains(own.as_str()));
        }
        for &t in &types {
            for parent in data.values(t, &format!("{RDFS}subClassOf")) {
                let Term::NamedNode(parent) = parent else {
                    panic!()
                };
                assert!(types.contains(parent.as_str()));
            }
        }
    }
}
