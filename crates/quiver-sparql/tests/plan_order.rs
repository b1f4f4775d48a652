//! The planner's search for an order of steps cheaper than greedy growth: on a graph shaped
//! like BSBM's (products of several types each, many reviews each, reviewers of a few
//! countries), a query that reaches the reviewers and the types from the same products
//! walks the reviews and checks their reviewers' country before it multiplies the rows by
//! the types, and gives Oxigraph's rows; the estimate of the types step counts the
//! products' five types.

use crate::support;

use quiver_sparql::{prepare, ExecOptions, PrepareOptions};
use support::{both_stores, oxigraph_rows, select};

const PRODUCTS: usize = 2000;
const TYPES_PER_PRODUCT: usize = 5;
const REVIEWS_PER_PRODUCT: usize = 10;
const PERSONS: usize = 500;
const COUNTRIES: usize = 10;
const PRODUCERS: usize = 40;

fn iri(name: &str) -> String {
    format!("<http://example.org/{name}>")
}

const TYPE: &str = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";

/// Products with five types each (a leaf and its ancestors, as BSBM's forward-chained
/// hierarchy), a producer of one of a few countries, and ten reviews by persons of ten
/// countries.
fn graph() -> String {
    let mut nt = String::new();
    let mut line = |s: String, p: &str, o: String| nt.push_str(&format!("{s} {p} {o} .\n"));
    for t in 0..4 * TYPES_PER_PRODUCT {
        line(iri(&format!("type{t}")), TYPE, iri("ProductType"));
    }
    for producer in 0..PRODUCERS {
        let country = iri(&format!("country{}", producer % 4));
        line(
            iri(&format!("producer{producer}")),
            &iri("country"),
            country,
        );
    }
    for person in 0..PERSONS {
        let country = iri(&format!("country{}", person % COUNTRIES));
        line(iri(&format!("person{person}")), &iri("country"), country);
        line(iri(&format!("person{person}")), TYPE, iri("Person"));
    }
    for product in 0..PRODUCTS {
        let subject = iri(&format!("product{product}"));
        line(subject.clone(), TYPE, iri("Product"));
        for level in 0..TYPES_PER_PRODUCT {
            let t = level * 4 + product % 4;
            line(subject.clone(), TYPE, iri(&format!("type{t}")));
        }
        let producer = iri(&format!("producer{}", product % PRODUCERS));
        line(subject.clone(), &iri("producer"), producer);
        for r in 0..REVIEWS_PER_PRODUCT {
            let review = iri(&format!("review{product}-{r}"));
            line(review.clone(), &iri("reviewFor"), subject.clone());
            let person = (product * 7 + r * 13) % PERSONS;
            line(
                review.clone(),
                &iri("reviewer"),
                iri(&format!("person{person}")),
            );
            line(review, TYPE, iri("Review"));
        }
    }
    nt
}

const QUERY: &str = "SELECT ?productType (COUNT(?review) AS ?reviews) WHERE {
  ?productType a <http://example.org/ProductType> .
  ?product a ?productType .
  ?product <http://example.org/producer> ?producer .
  ?producer <http://example.org/country> <http://example.org/country1> .
  ?review <http://example.org/reviewFor> ?product .
  ?review <http://example.org/reviewer> ?reviewer .
  ?reviewer <http://example.org/country> <http://example.org/country3> .
} GROUP BY ?productType";

#[test]
fn reviews_are_filtered_before_types_multiply_them() {
    let (store, oxigraph) = both_stores(&graph());
    let (vars, mut ours) = select(&store, QUERY).unwrap();
    let mut theirs = oxigraph_rows(&oxigraph, QUERY, &vars);
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    assert_eq!(
        ours.len(),
        TYPES_PER_PRODUCT,
        "one row per type of the products"
    );

    let prepared = prepare(&store, QUERY, &PrepareOptions::default()).unwrap();
    let (_, profile) = prepared
        .execute_profiled(&store, &ExecOptions::default())
        .unwrap();
    let bgp = &profile.bgps[0];
    let position = |needle: &str| {
        bgp.steps
            .iter()
            .position(|s| {
                let partner = s.step.partner.map(|(p, _)| bgp.patterns[p].as_str());
                [Some(bgp.patterns[s.step.pattern].as_str()), partner]
                    .into_iter()
                    .flatten()
                    .any(|pattern| pattern.contains(needle))
            })
            .unwrap_or_else(|| panic!("no step on {needle}: {:?}", bgp.patterns))
    };
    let types = position("?product <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>");
    let reviewer = position("reviewer>");
    assert!(
        reviewer < types,
        "the reviewers' country (step {reviewer}) should be checked before the types \
         multiply the rows (step {types}): {:#?}",
        bgp.steps
    );
    // The planner knows that a product has five types: counted for the subjects of
    // `producer`, not averaged over every typed vertex (mostly reviews, of one type).
    let (before, typed) = (&bgp.steps[types - 1], &bgp.steps[types]);
    let estimated = typed.step.estimate / before.step.estimate;
    let ran = typed.rows as f64 / before.rows as f64;
    assert!(
        estimated >= ran / 2.0,
        "types step estimated to multiply the rows by {estimated}, did by {ran}"
    );
    // The types step then expands the rows that survive the country check, not all the
    // reviews of the products.
    let reviews_walked: usize = bgp.steps.iter().map(|s| s.rows).max().unwrap_or(0);
    let reviews = PRODUCTS / 4 * REVIEWS_PER_PRODUCT;
    assert!(
        reviews_walked <= reviews,
        "no step should build more rows than the products' reviews ({reviews}): {reviews_walked}"
    );
}
