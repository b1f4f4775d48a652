//! The shape of a dataset: how many of everything, who owns what, and the units of work.
//!
//! A few decisions are sequential by nature: how many products each producer has, how many
//! offers each vendor has, how many reviews each rating site and each reviewer has. The
//! plan makes them once, up front, from their own keyed streams (a few draws per hundred
//! products), and cuts the dataset into independent units: the schema (product types and
//! features), one unit per producer (with its products), one per vendor (with its offers)
//! and one per block of reviewers of a rating site (with their reviews). Units are then
//! generated in any order, on any thread, and written in plan order.

use crate::rng::{Rng, Stream};
use crate::{BsbmConfig, BsbmError};

/// Offers per product (the specification: 20 × products offers in all).
pub const OFFERS_PER_PRODUCT: u32 = 20;
/// Reviews per product (10 × products reviews in all).
pub const REVIEWS_PER_PRODUCT: u32 = 10;
/// Mean products per producer (normally distributed).
pub const PRODUCTS_PER_PRODUCER: u32 = 50;
/// Mean offers per vendor: 100 products per vendor, 20 offers each.
pub const OFFERS_PER_VENDOR: u32 = 100 * OFFERS_PER_PRODUCT;
/// Mean reviews per rating site.
pub const REVIEWS_PER_RATING_SITE: u32 = 10_000;
/// Mean reviews per reviewer.
pub const REVIEWS_PER_PERSON: u32 = 20;
/// The most products a run may have: 20 offers each must stay numbered in 32 bits.
pub const MAX_PRODUCTS: u32 = u32::MAX / OFFERS_PER_PRODUCT;
/// Reviewers per unit of work (a rating site has about 500).
const PERSONS_PER_BLOCK: u32 = 64;

/// A node of the product type tree. Type 1 is the root; numbers follow breadth-first order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProductType {
    /// The parent's number; 0 for the root.
    pub parent: u32,
    /// 0 for the root, `depth()` for the leaves.
    pub depth: u32,
    /// The first of this type's own features, and how many (none for the root).
    pub first_feature: u32,
    pub features: u32,
}

/// A block of consecutive reviewers of one rating site, with their reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewerBlock {
    pub site: u32,
    pub first_person: u32,
    pub persons: u32,
    pub first_review: u32,
    /// One past the site's last review: a reviewer's count is cut there.
    pub site_end: u32,
}

/// One unit of work, in output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The product type hierarchy and the product features.
    Schema,
    /// Producer `n` and its products.
    Producer(u32),
    /// Vendor `n` and its offers.
    Vendor(u32),
    /// A block of reviewers and their reviews.
    Reviewers(ReviewerBlock),
}

/// A planned dataset.
#[derive(Debug, Clone)]
pub struct Plan {
    pub config: BsbmConfig,
    /// Children per node at each depth: `branching[0]` for the root.
    pub branching: Vec<u32>,
    /// Product types by number − 1.
    pub types: Vec<ProductType>,
    /// Numbers of the leaf types, ascending.
    pub leaves: Vec<u32>,
    pub features: u32,
    /// The last product of each producer (producer `n` at index `n - 1`).
    pub producer_ends: Vec<u32>,
    /// The last offer of each vendor.
    pub vendor_ends: Vec<u32>,
    pub rating_sites: u32,
    pub persons: u32,
    pub blocks: Vec<ReviewerBlock>,
}

/// Java's `Math.round(float)`: half up.
fn round(x: f32) -> u32 {
    (x + 0.5).floor() as u32
}

/// The specification's product type hierarchy for `products` products: depth
/// `round(log10(n) / 2) + 1`, `2 · round(log10(n))` children of the root, 8 children per
/// inner level below, and 2, 4 or 8 (by `round(1.5 · log10(n) + 1) mod 3`) at the last.
/// Below 10 products the hierarchy of 10 is used.
pub fn branching_factors(products: u32) -> Vec<u32> {
    let log = (products.max(10) as f32).log10();
    let depth = round(log / 2.0) + 1;
    (0..depth)
        .map(|level| match level {
            0 => 2 * round(log),
            l if l + 1 < depth => 8,
            _ => [2, 4, 8][(round(log * 3.0 / 2.0 + 1.0) % 3) as usize],
        })
        .collect()
}

/// The (from, to) range of features of a type at each depth, with `depth` the depth of the
/// leaves: 5 at depth 1, else `35 · i / s ..= 75 · i / s` at depth `i`, `s = d(d+1)/2 − 1`.
/// As in the reference generator, an inner type at depth `d` takes the range of entry `d`
/// (that of depth `d + 1`) and a leaf the last entry.
pub fn feature_ranges(depth: u32) -> Vec<(u32, u32)> {
    let sum = depth * (depth + 1) / 2 - 1;
    (1..=depth)
        .map(|i| {
            if i == 1 {
                (5, 5)
            } else {
                (35 * i / sum, 75 * i / sum)
            }
        })
        .collect()
}

impl Plan {
    pub fn new(config: BsbmConfig) -> Result<Self, BsbmError> {
        if config.products == 0 {
            return Err(BsbmError::NoProducts);
        }
        if config.products > MAX_PRODUCTS {
            return Err(BsbmError::TooManyProducts {
                requested: config.products,
                max: MAX_PRODUCTS,
            });
        }
        let seed = config.seed;
        let branching = branching_factors(config.products);
        let (types, leaves, features) = type_tree(seed, &branching);

        let sizes = |kind, total: u32, avg| {
            let mut rng = Rng::stream(seed, kind, 0);
            let mut ends = Vec::new();
            let mut next = 1u32;
            while next <= total {
                let size = rng.normal_count(avg, true).min(total - next + 1);
                next += size;
                ends.push(next - 1);
            }
            ends
        };
        let producer_ends = sizes(
            Stream::ProducerSizes,
            config.products,
            PRODUCTS_PER_PRODUCER,
        );
        let offers = config.products * OFFERS_PER_PRODUCT;
        let vendor_ends = sizes(Stream::VendorSizes, offers, OFFERS_PER_VENDOR);

        let reviews = u64::from(config.products) * u64::from(REVIEWS_PER_PRODUCT);
        let reviews = u32::try_from(reviews).expect("bounded by MAX_PRODUCTS");
        let site_ends = sizes(Stream::SiteSizes, reviews, REVIEWS_PER_RATING_SITE);
        let mut blocks = Vec::new();
        let (mut person, mut review) = (1u32, 1u32);
        for (index, &last) in site_ends.iter().enumerate() {
            let site_end = last + 1;
            let mut block = ReviewerBlock {
                site: index as u32 + 1,
                first_person: person,
                persons: 0,
                first_review: review,
                site_end,
            };
            while review < site_end {
                if block.persons == PERSONS_PER_BLOCK {
                    blocks.push(block);
                    block.first_person = person;
                    block.first_review = review;
                    block.persons = 0;
                }
                review += person_reviews(seed, person, site_end - review);
                person += 1;
                block.persons += 1;
            }
            blocks.push(block);
        }
        Ok(Self {
            config,
            branching,
            types,
            leaves,
            features,
            producer_ends,
            vendor_ends,
            rating_sites: site_ends.len() as u32,
            persons: person - 1,
            blocks,
        })
    }

    pub fn products(&self) -> u32 {
        self.config.products
    }

    pub fn producers(&self) -> u32 {
        self.producer_ends.len() as u32
    }

    pub fn vendors(&self) -> u32 {
        self.vendor_ends.len() as u32
    }

    pub fn offers(&self) -> u32 {
        self.products() * OFFERS_PER_PRODUCT
    }

    pub fn reviews(&self) -> u32 {
        self.products() * REVIEWS_PER_PRODUCT
    }

    /// The producer of product `product`.
    pub fn producer_of(&self, product: u32) -> u32 {
        self.producer_ends.partition_point(|&end| end < product) as u32 + 1
    }

    /// The products of producer `producer`: first and last.
    pub fn products_of(&self, producer: u32) -> (u32, u32) {
        let index = producer as usize - 1;
        let first = if index == 0 {
            1
        } else {
            self.producer_ends[index - 1] + 1
        };
        (first, self.producer_ends[index])
    }

    /// The offers of vendor `vendor`: first and last.
    pub fn offers_of(&self, vendor: u32) -> (u32, u32) {
        let index = vendor as usize - 1;
        let first = if index == 0 {
            1
        } else {
            self.vendor_ends[index - 1] + 1
        };
        (first, self.vendor_ends[index])
    }

    /// The vendor of offer `offer`.
    pub fn vendor_of(&self, offer: u32) -> u32 {
        self.vendor_ends.partition_point(|&end| end < offer) as u32 + 1
    }

    /// The rating site of review `review`.
    pub fn rating_site_of(&self, review: u32) -> u32 {
        let block = self
            .blocks
            .partition_point(|block| block.first_review <= review)
            .max(1);
        self.blocks[block - 1].site
    }

    /// The depth of the product type tree: the leaves' depth.
    pub fn depth(&self) -> u32 {
        self.branching.len() as u32
    }

    /// How many units the dataset is cut into.
    pub fn units(&self) -> usize {
        1 + self.producer_ends.len() + self.vendor_ends.len() + self.blocks.len()
    }

    /// Unit `index` (< `units()`), in output order.
    pub fn unit(&self, index: usize) -> Unit {
        let producers = self.producer_ends.len();
        let vendors = self.vendor_ends.len();
        match index {
            0 => Unit::Schema,
            i if i <= producers => Unit::Producer(i as u32),
            i if i <= producers + vendors => Unit::Vendor((i - producers) as u32),
            i => Unit::Reviewers(self.blocks[i - 1 - producers - vendors]),
        }
    }
}

/// How many reviews reviewer `person` writes, at most `left` (what remains of its site):
/// `NormalDistGenerator(3, 1, 20)` without the `+ 1`, so a reviewer may have none.
pub fn person_reviews(seed: u64, person: u32, left: u32) -> u32 {
    Rng::stream(seed, Stream::PersonReviews, u64::from(person))
        .normal_count(REVIEWS_PER_PERSON, false)
        .min(left)
}

/// The product type tree, breadth first, with each type's features numbered as the
/// reference does: inner types first (breadth first, root excluded), then the leaves.
fn type_tree(seed: u64, branching: &[u32]) -> (Vec<ProductType>, Vec<u32>, u32) {
    let depth = branching.len() as u32;
    let mut types = vec![ProductType {
        parent: 0,
        depth: 0,
        first_feature: 0,
        features: 0,
    }];
    let mut leaves = Vec::new();
    let mut index = 0;
    while index < types.len() {
        let node = types[index];
        if node.depth < depth {
            for _ in 0..branching[node.depth as usize] {
                types.push(ProductType {
                    parent: index as u32 + 1,
                    depth: node.depth + 1,
                    first_feature: 0,
                    features: 0,
                });
                if node.depth + 1 == depth {
                    leaves.push(types.len() as u32);
                }
            }
        }
        index += 1;
    }
    let ranges = feature_ranges(depth);
    let mut next = 1;
    let (leaf, inner): (Vec<usize>, Vec<usize>) =
        (1..types.len()).partition(|&i| types[i].depth == depth);
    for i in inner.into_iter().chain(leaf) {
        let node = &mut types[i];
        let (from, to) = if node.depth == depth {
            ranges[depth as usize - 1]
        } else {
            ranges[node.depth as usize]
        };
        let count = Rng::stream(seed, Stream::FeatureCount, i as u64 + 1).int(from, to);
        node.first_feature = next;
        node.features = count;
        next += count;
    }
    (types, leaves, next - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hierarchy_matches_the_specification_table() {
        // The specification's table: 666 products, 55 types; 2,785 products, 151 types.
        let count = |n| {
            let b = branching_factors(n);
            let mut level = 1;
            let mut total = 1;
            for f in b {
                level *= f;
                total += level;
            }
            total
        };
        assert_eq!(count(666), 55);
        assert_eq!(count(2_785), 151);
        assert_eq!(branching_factors(100), vec![4, 4]);
        assert_eq!(branching_factors(1_000), vec![6, 8, 2]);
        assert_eq!(branching_factors(1), branching_factors(10));
    }

    #[test]
    fn plan_partitions_everything() {
        let plan = Plan::new(BsbmConfig::new(1_234, 5)).unwrap();
        assert_eq!(*plan.producer_ends.last().unwrap(), 1_234);
        assert_eq!(*plan.vendor_ends.last().unwrap(), 1_234 * 20);
        assert_eq!(plan.types.len(), 1 + 6 + 48 + 96);
        let blocks = &plan.blocks;
        assert_eq!(blocks[0].first_review, 1);
        assert_eq!(blocks.last().unwrap().site_end, 12_341);
        assert_eq!(plan.producer_of(1), 1);
        assert_eq!(plan.producer_of(1_234), plan.producers());
        let (first, last) = plan.products_of(2);
        assert_eq!(plan.producer_of(first), 2);
        assert_eq!(plan.producer_of(last), 2);
        assert!(matches!(plan.unit(plan.units() - 1), Unit::Reviewers(_)));
        assert_eq!(plan.vendor_of(1), 1);
        assert_eq!(plan.vendor_of(plan.offers()), plan.vendors());
        let (first, last) = plan.offers_of(3);
        assert_eq!((plan.vendor_of(first), plan.vendor_of(last)), (3, 3));
        assert_eq!(plan.rating_site_of(1), 1);
        assert_eq!(plan.rating_site_of(plan.reviews()), plan.rating_sites);
        for block in blocks {
            assert_eq!(plan.rating_site_of(block.first_review), block.site);
            assert_eq!(plan.rating_site_of(block.site_end - 1), block.site);
        }
        assert!(Plan::new(BsbmConfig::new(0, 0)).is_err());
    }
}
