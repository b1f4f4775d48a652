//! The test driver's queries: the templates of the explore and business-intelligence use
//! cases, their standard query mixes, and parameters drawn as BSBM's test driver draws them.
//!
//! The templates (`queries/explore/q*.rq`, `queries/bi/q*.rq`) are those of BSBM V3.1 with
//! the driver's `%Name%` placeholders. The driver reads its parameters from files the
//! reference generator writes beside the data; here they come from the [`Plan`] of the
//! same products and seed, which knows every number the files hold (product types by
//! level, features per type, producers of products, vendors of offers, rating sites of
//! reviews), so no file travels with the data. The rules are the driver's
//! (`LocalSPARQLParameterPool`):
//!
//! - a product type: a uniform leaf; product features: distinct ones drawn uniformly from
//!   the features of that type and its ancestors;
//! - a numeric property value: uniform in 1–500;
//! - a product, offer, review or producer: uniform over all of them, named in its
//!   publisher's namespace;
//! - the current date: the generator's "today", 2008-06-20 at midnight;
//! - a country: with the generator's country weights;
//! - consecutive months (BI Q3): a day uniform in the 309 days from 2007-06-20, then that
//!   day plus 0, 28 and 56 days;
//! - a product type from a range of levels (BI Q4, Q5, Q7, Q8, "lvleq"): a level uniform
//!   in the range, then a type uniform in that level.
//!
//! Each query mix draws from its own keyed stream ([`Rng::stream`]), so mix number `k` has
//! the same texts whichever client runs it, however many clients there are and however
//! fast the engine is: two engines given the same seed get the same queries, and their
//! answers can be compared query by query.

use crate::ntriples::{bracketed_iri as iri, days_from_civil, write_date, Node};
use crate::plan::Plan;
use crate::rng::{Rng, Stream};
use crate::vocab::{country_for, XSD_DATE_TIME};

/// A use case of BSBM: a set of templates and its standard query mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UseCase {
    Explore,
    BusinessIntelligence,
}

/// The form of a query's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Select,
    Describe,
    Construct,
}

/// What a placeholder stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    /// A leaf product type; features drawn later belong to it.
    LeafType,
    /// A feature of the last product type drawn, distinct from the others drawn.
    Feature,
    Numeric,
    Product,
    Offer,
    Review,
    Producer,
    Country,
    CurrentDate,
    /// A word of the label dictionary.
    Word,
    /// The month `n` after a random day (BI Q3), as `YYYY-MM-DD`.
    Month(i32),
    /// A product type of a level from `min_level` to the leaves' level, every level
    /// equally likely.
    TypeFromLevel(u32),
}

/// A query template of a use case.
#[derive(Debug, PartialEq, Eq)]
pub struct Template {
    pub use_case: UseCase,
    /// Its number in the specification.
    pub number: u8,
    pub form: Form,
    /// The text with `%Name%` placeholders.
    pub text: &'static str,
    params: &'static [(&'static str, Param)],
}

impl Template {
    /// `explore-q3`, `bi-q7`.
    pub fn name(&self) -> String {
        format!("{}-q{}", self.use_case.short_name(), self.number)
    }
}

macro_rules! template {
    ($use_case:ident, $dir:literal, $number:literal, $form:ident, [$(($name:literal, $param:expr)),* $(,)?]) => {
        Template {
            use_case: UseCase::$use_case,
            number: $number,
            form: Form::$form,
            text: include_str!(concat!("../queries/", $dir, "/q", $number, ".rq")),
            params: &[$(($name, $param)),*],
        }
    };
}

use Param::*;

static EXPLORE: [Template; 12] = [
    template!(
        Explore,
        "explore",
        1,
        Select,
        [
            ("ProductType", LeafType),
            ("ProductFeature1", Feature),
            ("ProductFeature2", Feature),
            ("x", Numeric)
        ]
    ),
    template!(Explore, "explore", 2, Select, [("ProductXYZ", Product)]),
    template!(
        Explore,
        "explore",
        3,
        Select,
        [
            ("ProductType", LeafType),
            ("ProductFeature1", Feature),
            ("ProductFeature2", Feature),
            ("x", Numeric),
            ("y", Numeric)
        ]
    ),
    template!(
        Explore,
        "explore",
        4,
        Select,
        [
            ("ProductType", LeafType),
            ("ProductFeature1", Feature),
            ("ProductFeature2", Feature),
            ("ProductFeature3", Feature),
            ("x", Numeric),
            ("y", Numeric)
        ]
    ),
    template!(Explore, "explore", 5, Select, [("ProductXYZ", Product)]),
    template!(Explore, "explore", 6, Select, [("word1", Word)]),
    template!(
        Explore,
        "explore",
        7,
        Select,
        [("ProductXYZ", Product), ("currentDate", CurrentDate)]
    ),
    template!(Explore, "explore", 8, Select, [("ProductXYZ", Product)]),
    template!(Explore, "explore", 9, Describe, [("ReviewXYZ", Review)]),
    template!(
        Explore,
        "explore",
        10,
        Select,
        [("ProductXYZ", Product), ("currentDate", CurrentDate)]
    ),
    template!(Explore, "explore", 11, Select, [("OfferXYZ", Offer)]),
    template!(Explore, "explore", 12, Construct, [("OfferXYZ", Offer)]),
];

static BUSINESS_INTELLIGENCE: [Template; 8] = [
    template!(
        BusinessIntelligence,
        "bi",
        1,
        Select,
        [("Country1", Country), ("Country2", Country)]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        2,
        Select,
        [("Product", Product)]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        3,
        Select,
        [
            ("ConsecutiveMonth_0", Month(0)),
            ("ConsecutiveMonth_1", Month(1)),
            ("ConsecutiveMonth_2", Month(2))
        ]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        4,
        Select,
        [("ProductType", TypeFromLevel(1))]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        5,
        Select,
        [("ProductType", TypeFromLevel(1))]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        6,
        Select,
        [("Producer", Producer)]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        7,
        Select,
        [("ProductType", TypeFromLevel(0)), ("Country", Country)]
    ),
    template!(
        BusinessIntelligence,
        "bi",
        8,
        Select,
        [("ProductType", TypeFromLevel(0))]
    ),
];

impl UseCase {
    pub const ALL: [UseCase; 2] = [UseCase::Explore, UseCase::BusinessIntelligence];

    /// `explore` or `bi`.
    pub fn short_name(self) -> &'static str {
        match self {
            UseCase::Explore => "explore",
            UseCase::BusinessIntelligence => "bi",
        }
    }

    pub fn templates(self) -> &'static [Template] {
        match self {
            UseCase::Explore => &EXPLORE,
            UseCase::BusinessIntelligence => &BUSINESS_INTELLIGENCE,
        }
    }

    /// Template `number`, if the use case has it.
    pub fn template(self, number: u8) -> Option<&'static Template> {
        self.templates().iter().find(|t| t.number == number)
    }

    /// The standard query mix: template numbers in order (25 explore queries, Q6 left
    /// out since BSBM 3.0; 15 business-intelligence queries).
    pub fn mix(self) -> &'static [u8] {
        match self {
            UseCase::Explore => &[
                1, 2, 2, 3, 2, 2, 4, 2, 2, 5, 7, 7, 5, 7, 7, 8, 9, 9, 8, 9, 9, 10, 10, 11, 12,
            ],
            UseCase::BusinessIntelligence => &[1, 3, 2, 2, 4, 5, 5, 6, 5, 6, 6, 7, 8, 7, 6],
        }
    }
}

/// One query of a mix: its template and its text with the parameters filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub template: &'static Template,
    pub text: String,
}

/// Draws parameters for the dataset of a plan.
#[derive(Debug)]
pub struct Driver<'a> {
    plan: &'a Plan,
    seed: u64,
}

/// The first day of BI Q3's span: 2007-06-20.
const MONTHS_FROM: i32 = days_from_civil(2007, 6, 20);
/// The generator's "today", as the current date of Q7 and Q10.
const TODAY: &str = "2008-06-20T00:00:00";

impl<'a> Driver<'a> {
    /// A driver for `plan`'s dataset whose draws depend on `seed` (the reference driver's
    /// default seed is 808080).
    pub fn new(plan: &'a Plan, seed: u64) -> Self {
        Self { plan, seed }
    }

    /// The queries of `use_case`'s query mix number `run`.
    pub fn mix(&self, use_case: UseCase, run: u64) -> Vec<Query> {
        let key = (run << 1) ^ (use_case as u64);
        let mut rng = Rng::stream(self.seed, Stream::Driver, key);
        use_case
            .mix()
            .iter()
            .map(|&number| {
                let template = use_case.template(number).expect("mixes name templates");
                Query {
                    template,
                    text: self.instantiate(template, &mut rng),
                }
            })
            .collect()
    }

    /// `template` with its placeholders drawn from `rng`.
    pub fn instantiate(&self, template: &Template, rng: &mut Rng) -> String {
        let mut text = template.text.to_owned();
        let mut features: Vec<u32> = Vec::new();
        let mut day = None;
        for &(name, param) in template.params {
            let value = match param {
                LeafType => {
                    let leaf = self.plan.leaves[rng.below(self.plan.leaves.len())];
                    features = self.features_of(leaf);
                    iri(Node::ProductType(leaf))
                }
                Feature => {
                    assert!(!features.is_empty(), "{name}: no product type drawn before");
                    let feature = features.swap_remove(rng.below(features.len()));
                    iri(Node::ProductFeature(feature))
                }
                Numeric => rng.int(1, 500).to_string(),
                Product => {
                    let product = rng.int(1, self.plan.products());
                    iri(Node::Product {
                        producer: self.plan.producer_of(product),
                        product,
                    })
                }
                Offer => {
                    let offer = rng.int(1, self.plan.offers());
                    iri(Node::Offer {
                        vendor: self.plan.vendor_of(offer),
                        offer,
                    })
                }
                Review => {
                    let review = rng.int(1, self.plan.reviews());
                    iri(Node::Review {
                        site: self.plan.rating_site_of(review),
                        review,
                    })
                }
                Producer => iri(Node::Producer(rng.int(1, self.plan.producers()))),
                Country => iri(Node::Country(country_for(rng.unit()).code)),
                CurrentDate => format!("\"{TODAY}\"^^<{XSD_DATE_TIME}>"),
                Word => {
                    let words = crate::words::words();
                    words[rng.below(words.len())].to_string()
                }
                Month(n) => {
                    let first = *day.get_or_insert_with(|| MONTHS_FROM + rng.int(0, 309) as i32);
                    let mut out = Vec::new();
                    write_date(&mut out, first + 28 * n);
                    String::from_utf8(out).expect("dates are ASCII")
                }
                TypeFromLevel(min_level) => {
                    iri(Node::ProductType(self.type_from_level(min_level, rng)))
                }
            };
            let placeholder = format!("%{name}%");
            debug_assert!(text.contains(&placeholder), "{placeholder}");
            text = text.replace(&placeholder, &value);
        }
        text
    }

    /// The features of product type `ty` and of its ancestors.
    fn features_of(&self, mut ty: u32) -> Vec<u32> {
        let mut features = Vec::new();
        while ty != 0 {
            let node = self.plan.types[ty as usize - 1];
            features.extend(node.first_feature..node.first_feature + node.features);
            ty = node.parent;
        }
        features
    }

    /// A type of a level in `min_level..=depth` drawn level first.
    fn type_from_level(&self, min_level: u32, rng: &mut Rng) -> u32 {
        let level = rng.int(min_level, self.plan.depth());
        // Types are numbered breadth first: level l holds the numbers after level l − 1's.
        let (mut first, mut width) = (1u32, 1u32);
        for l in 0..level {
            first += width;
            width *= self.plan.branching[l as usize];
        }
        rng.int(first, first + width - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BsbmConfig;

    fn plan() -> Plan {
        Plan::new(BsbmConfig::new(1_000, 0)).unwrap()
    }

    #[test]
    fn every_placeholder_is_filled() {
        let plan = plan();
        let driver = Driver::new(&plan, 808_080);
        for use_case in UseCase::ALL {
            for template in use_case.templates() {
                let mut rng = Rng::stream(1, Stream::Driver, 0);
                let text = driver.instantiate(template, &mut rng);
                assert!(!text.contains('%'), "{}: {text}", template.name());
            }
            assert_eq!(
                driver.mix(use_case, 0).len(),
                use_case.mix().len(),
                "{use_case:?}"
            );
        }
        assert_eq!(UseCase::Explore.mix().len(), 25);
        assert_eq!(UseCase::BusinessIntelligence.mix().len(), 15);
    }

    #[test]
    fn mixes_depend_on_seed_and_run_only() {
        let plan = plan();
        let driver = Driver::new(&plan, 1);
        let texts = |run| -> Vec<String> {
            driver
                .mix(UseCase::Explore, run)
                .into_iter()
                .map(|q| q.text)
                .collect()
        };
        assert_eq!(texts(3), texts(3));
        assert_ne!(texts(3), texts(4));
        let other = Driver::new(&plan, 2).mix(UseCase::Explore, 3);
        assert_ne!(other[0].text, texts(3)[0]);
        let bi = driver.mix(UseCase::BusinessIntelligence, 3);
        assert_eq!(bi[0].template.name(), "bi-q1");
    }

    #[test]
    fn features_belong_to_the_type_or_its_ancestors_and_are_distinct() {
        let plan = plan();
        let driver = Driver::new(&plan, 5);
        let template = UseCase::Explore.template(4).unwrap();
        for i in 0..200 {
            let mut rng = Rng::stream(9, Stream::Driver, i);
            let text = driver.instantiate(template, &mut rng);
            let ty: u32 = number_after(&text, "ProductType");
            assert!(plan.leaves.contains(&ty));
            let allowed = driver.features_of(ty);
            let mut seen: Vec<u32> = text
                .match_indices("instances/ProductFeature")
                .map(|(at, _)| number_after(&text[at..], "ProductFeature"))
                .collect();
            // ProductFeature1 appears in both branches of the UNION.
            assert_eq!(seen.len(), 4);
            assert!(seen.iter().all(|f| allowed.contains(f)), "{seen:?}");
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 3, "features repeat in {text}");
        }
    }

    #[test]
    fn typed_levels_are_drawn_evenly_and_months_are_four_weeks_apart() {
        let plan = plan(); // levels: 1 root, 6, 48, 96 leaves
        let driver = Driver::new(&plan, 5);
        let mut per_level = [0u32; 4];
        let mut rng = Rng::stream(3, Stream::Driver, 0);
        for _ in 0..8_000 {
            let ty = driver.type_from_level(0, &mut rng);
            per_level[plan.types[ty as usize - 1].depth as usize] += 1;
        }
        assert!(
            per_level.iter().all(|&n| (1_800..2_200).contains(&n)),
            "{per_level:?}"
        );
        for _ in 0..100 {
            assert!(driver.type_from_level(1, &mut rng) > 1);
        }
        let template = UseCase::BusinessIntelligence.template(3).unwrap();
        let text = driver.instantiate(template, &mut rng);
        let dates: Vec<&str> = text
            .match_indices("\"20")
            .map(|(at, _)| &text[at + 1..at + 11])
            .collect();
        assert_eq!(dates.len(), 4, "{text}");
        let day = |d: &str| {
            days_from_civil(
                d[..4].parse().unwrap(),
                d[5..7].parse().unwrap(),
                d[8..].parse().unwrap(),
            )
        };
        // In the text: month 1, month 2, month 0, month 1.
        assert_eq!(day(dates[1]) - day(dates[0]), 28);
        assert_eq!(day(dates[0]) - day(dates[2]), 28);
        assert!((MONTHS_FROM..=MONTHS_FROM + 309).contains(&day(dates[2])));
    }

    fn number_after(text: &str, word: &str) -> u32 {
        let at = text.find(word).unwrap() + word.len();
        text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    }
}
