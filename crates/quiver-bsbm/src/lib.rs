//! The Berlin SPARQL Benchmark (BSBM V3.1) data generator.
//!
//! BSBM models e-commerce: products of a product type hierarchy, with features, made by
//! producers, offered by vendors and reviewed by people on rating sites. This crate
//! generates that dataset for `N` products as N-Triples, deterministically for a seed and in
//! parallel: [`plan::Plan`] fixes the dataset's shape and cuts it into units, each unit is
//! generated from random streams keyed by entity ([`rng`]), and units are written in order
//! whatever the number of threads (`quiver_ordered::for_each_ordered`), so the bytes depend
//! on the seed alone. [`mix`] holds the test driver's side: the explore and
//! business-intelligence query templates, their standard mixes and parameters drawn from
//! the same plan.
//!
//! ```
//! use quiver_bsbm::{write_ntriples, BsbmConfig};
//! let mut out = Vec::new();
//! let triples = write_ntriples(&BsbmConfig::new(10, 0), 2, &mut out).unwrap();
//! assert!(triples > 3_000);
//! ```
//!
//! # What follows the specification, and where this generator differs
//!
//! Following the BSBM V3.1 dataset specification and its reference generator (bsbmtools'
//! `Generator` and its N-Triples serializer):
//!
//! - scale rules: 20 × N offers and 10 × N reviews exactly; products per producer
//!   (mean 50), offers per vendor (mean 2,000), reviews per rating site (mean 10,000) and per
//!   reviewer (mean 20, possibly 0) drawn from a normal distribution N(3, 1) scaled as the
//!   reference does; the product type tree's depth and branching from `log10(N)` (55 types
//!   for 666 products, 151 for 2,785, as in the specification's table) and the features per
//!   type by depth;
//! - every class's properties, their optionality and distributions: products' type chosen
//!   half-normally among the leaves, `productPropertyNumeric1–3` and `Textual1–3` always,
//!   4–6 by the reference's three property kinds (40/20/40 %), numeric values in 1–2,000
//!   (half-normal), 25 % of the features of the leaf type and its ancestors; offers' product
//!   normal around the middle of the product range, price uniform in 5–10,000 USD,
//!   publication date in the 97 days before 2008-06-20, `validFrom` 0–90 days before it,
//!   `validTo` 7–90 days after, `deliveryDays` in 1–21 (normal); reviews' date in the year
//!   before 2008-06-20, each of `rating1–4` present with 70 % and uniform in 1–10, the text's
//!   language tag from the reviewer's country; countries with the reference's weights;
//!   word counts of labels (1–3), comments (20–50, products 50–150), textual properties
//!   (3–15), titles (4–15) and texts (50–200);
//! - IRIs and vocabulary: `bsbm:`, `bsbm-inst:` with the per-publisher namespaces
//!   (`dataFromProducer1/Product1`, `dataFromVendor1/Offer1`,
//!   `dataFromRatingSite1/Review1`), `rev:`, `dc:`, `foaf:`, the reference's country IRIs,
//!   homepages and offer web pages, literal datatypes (`bsbm:USD`, `xsd:integer`,
//!   `xsd:string` for textual properties, `xsd:date`, `xsd:dateTime` at midnight);
//! - triple order within each entity, and entity order in the file (types, features,
//!   producers with their products, vendors with their offers, reviewers with their
//!   reviews).
//!
//! Differences from bsbmtools:
//!
//! - the random generator and how draws are sequenced differ (keyed SplitMix64 streams, not
//!   `java.util.Random` with shared generators), so the values, and which product each
//!   offer or review points to, differ from the reference's for any seed; the counts of
//!   producers, vendors, reviewers and features therefore differ too, within their
//!   distributions;
//! - texts are drawn from built-in lists of pseudo-words ([`words`]: 20,000 words, 5,000
//!   given names), not from the reference's `titlewords.txt` and `givennames.txt`, so label
//!   and text searches select differently;
//! - `foaf:mbox_sha1sum` is 40 random hexadecimal digits, not the SHA-1 of random bytes
//!   (which the reference prints without leading zeros);
//! - dates are drawn as whole days (the reference draws milliseconds and formats them in
//!   the machine's time zone);
//! - only the triple representation is produced (no named graphs, SQL or update dataset),
//!   and none of the test driver's files; `forward_chaining` writes every ancestor type of
//!   a product as the reference's `-fc` does;
//! - as in the reference, rating sites and standardization institutions are only named as
//!   `dc:publisher`, with no triples of their own.

pub mod generator;
pub mod mix;
pub mod ntriples;
pub mod plan;
pub mod rng;
pub mod vocab;
pub mod words;

use std::io::Write;

pub use generator::generate_unit;
pub use ntriples::NTriplesBuffer;
pub use plan::{Plan, Unit};

/// A run of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BsbmConfig {
    /// The scale: number of products.
    pub products: u32,
    pub seed: u64,
    /// Also type every product with all ancestors of its product type (bsbmtools' `-fc`).
    pub forward_chaining: bool,
}

impl BsbmConfig {
    pub fn new(products: u32, seed: u64) -> Self {
        Self {
            products,
            seed,
            forward_chaining: false,
        }
    }
}

/// Why a dataset cannot be generated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BsbmError {
    #[error("the number of products must be at least 1")]
    NoProducts,
    #[error("at most {max} products can be generated, not {requested}")]
    TooManyProducts { requested: u32, max: u32 },
}

/// Generate the dataset of `config` on `threads` threads into `out`; returns the number of
/// triples written.
pub fn write_ntriples(
    config: &BsbmConfig,
    threads: usize,
    out: &mut impl Write,
) -> std::io::Result<u64> {
    let plan = Plan::new(*config).map_err(std::io::Error::other)?;
    let mut triples = 0;
    quiver_ordered::for_each_ordered(
        0..plan.units(),
        threads,
        |unit| {
            let mut buffer = NTriplesBuffer::new();
            generate_unit(&plan, plan.unit(unit), &mut buffer);
            buffer
        },
        |_, buffer| {
            triples += buffer.triples;
            out.write_all(&buffer.bytes)
        },
    )?;
    Ok(triples)
}
