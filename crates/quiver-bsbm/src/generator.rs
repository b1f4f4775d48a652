//! Generates one unit of a planned dataset as N-Triples.
//!
//! Each entity draws from its own stream ([`Rng::stream`] keyed by its number), with the
//! specification's rules: counts and optional properties, value ranges and distributions,
//! dates relative to the reference's "today" (2008-06-20). Triples of an entity are
//! written in the order of the reference generator's N-Triples serializer.

use crate::ntriples::{days_from_civil, NTriplesBuffer, Node};
use crate::plan::{person_reviews, Plan, ReviewerBlock, Unit};
use crate::rng::{Rng, Stream};
use crate::vocab::*;
use crate::words::{names, sentence, words};

/// The reference generator's "today": every offer and review date is relative to it.
pub const TODAY: i32 = days_from_civil(2008, 6, 20);

/// A day drawn uniformly in `[from, to)` (as the reference draws a time in that span and
/// keeps its date).
fn day(rng: &mut Rng, from: i32, to: i32) -> i32 {
    if to <= from {
        return from;
    }
    from + rng.below((to - from) as usize) as i32
}

/// `rdfs:label` of 1–3 words and `rdfs:comment` of `comment_words` words.
fn label_and_comment(out: &mut NTriplesBuffer, rng: &mut Rng, me: Node, comment: (u32, u32)) {
    let words = words();
    let count = rng.int(1, 3);
    out.plain(me, RDFS_LABEL, |b| sentence(b, rng, words, count));
    let count = rng.int(comment.0, comment.1);
    out.plain(me, RDFS_COMMENT, |b| sentence(b, rng, words, count));
}

/// Write unit `unit` of `plan` into `out`.
pub fn generate_unit(plan: &Plan, unit: Unit, out: &mut NTriplesBuffer) {
    match unit {
        Unit::Schema => schema(plan, out),
        Unit::Producer(producer) => producer_and_products(plan, producer, out),
        Unit::Vendor(vendor) => vendor_and_offers(plan, vendor, out),
        Unit::Reviewers(block) => reviewers(plan, block, out),
    }
}

fn schema(plan: &Plan, out: &mut NTriplesBuffer) {
    let seed = plan.config.seed;
    let (from, to) = (days_from_civil(2000, 6, 20), days_from_civil(2000, 7, 23));
    for (index, node) in plan.types.iter().enumerate() {
        let nr = index as u32 + 1;
        let me = Node::ProductType(nr);
        let mut rng = Rng::stream(seed, Stream::ProductType, u64::from(nr));
        out.iri(me, RDF_TYPE, Node::Iri(BSBM_PRODUCT_TYPE));
        if node.parent == 0 {
            out.plain(me, RDFS_LABEL, |b| b.extend_from_slice(b"Thing"));
            out.plain(me, RDFS_COMMENT, |b| {
                b.extend_from_slice(b"The Product Type of all Products")
            });
        } else {
            label_and_comment(out, &mut rng, me, (20, 50));
            out.iri(me, RDFS_SUBCLASS_OF, Node::ProductType(node.parent));
        }
        out.iri(me, DC_PUBLISHER, Node::Institution(1));
        out.date(me, DC_DATE, day(&mut rng, from, to));
    }
    for nr in 1..=plan.features {
        let me = Node::ProductFeature(nr);
        let mut rng = Rng::stream(seed, Stream::ProductFeature, u64::from(nr));
        out.iri(me, RDF_TYPE, Node::Iri(BSBM_PRODUCT_FEATURE));
        label_and_comment(out, &mut rng, me, (20, 50));
        out.iri(me, DC_PUBLISHER, Node::Institution(1));
        out.date(me, DC_DATE, day(&mut rng, from, to));
    }
}

/// Homepage, country and the producer's or vendor's own publisher and date triples.
fn organisation(
    out: &mut NTriplesBuffer,
    rng: &mut Rng,
    me: Node,
    homepage: Node,
    dates: (i32, i32),
) {
    label_and_comment(out, rng, me, (20, 50));
    out.iri(me, FOAF_HOMEPAGE, homepage);
    out.iri(
        me,
        BSBM_COUNTRY,
        Node::Country(country_for(rng.unit()).code),
    );
    out.iri(me, DC_PUBLISHER, me);
    out.date(me, DC_DATE, day(rng, dates.0, dates.1));
}

fn producer_and_products(plan: &Plan, producer: u32, out: &mut NTriplesBuffer) {
    let seed = plan.config.seed;
    let me = Node::Producer(producer);
    let mut rng = Rng::stream(seed, Stream::Producer, u64::from(producer));
    out.iri(me, RDF_TYPE, Node::Iri(BSBM_PRODUCER));
    let dates = (days_from_civil(2000, 8, 20), days_from_civil(2005, 7, 23));
    organisation(out, &mut rng, me, Node::ProducerHomepage(producer), dates);
    let (first, last) = plan.products_of(producer);
    for product in first..=last {
        self::product(plan, producer, product, out);
    }
}

fn product(plan: &Plan, producer: u32, product: u32, out: &mut NTriplesBuffer) {
    let words = words();
    let me = Node::Product { producer, product };
    let mut rng = Rng::stream(plan.config.seed, Stream::Product, u64::from(product));
    out.iri(me, RDF_TYPE, Node::Iri(BSBM_PRODUCT));
    let count = rng.int(1, 3);
    out.plain(me, RDFS_LABEL, |b| sentence(b, &mut rng, words, count));
    let count = rng.int(50, 150);
    out.plain(me, RDFS_COMMENT, |b| sentence(b, &mut rng, words, count));

    // The leaf type: half-normal over the leaves, so low-numbered types are frequent.
    let leaf = plan.leaves[rng.normal_range(0.0, 1.0, plan.leaves.len() as u32, 2.0) as usize - 1];
    let mut ty = leaf;
    while ty != 0 {
        let node = plan.types[ty as usize - 1];
        if ty == leaf || plan.config.forward_chaining {
            out.iri(me, RDF_TYPE, Node::ProductType(ty));
        }
        ty = node.parent;
    }
    out.iri(me, BSBM_PRODUCER_P, Node::Producer(producer));

    // Properties 1–3 always; 4–6 by the product's property kind (40 % / 20 % / 40 %).
    let kind = match rng.int(1, 100) {
        1..=40 => 1,
        41..=60 => 2,
        _ => 3,
    };
    let (mut numeric, mut textual) = ([false; 6], [false; 6]);
    numeric[..3].fill(true);
    textual[..3].fill(true);
    match kind {
        1 => {
            numeric[3..5].fill(true);
            textual[3..5].fill(true);
        }
        2 => {
            numeric[3] = rng.chance(50);
            textual[3] = rng.chance(50);
            numeric[4] = rng.chance(25);
            textual[4] = rng.chance(25);
        }
        _ => {
            numeric[4] = rng.chance(25);
            textual[4] = rng.chance(25);
            numeric[5] = rng.chance(50);
            textual[5] = rng.chance(50);
        }
    }
    for (i, _) in numeric.iter().enumerate().filter(|(_, &on)| on) {
        let value = rng.normal_range(0.0, 1.0, 2_000, 2.0);
        out.integer(me, PRODUCT_PROPERTY_NUMERIC[i], value);
    }
    for (i, _) in textual.iter().enumerate().filter(|(_, &on)| on) {
        let count = rng.int(3, 15);
        out.typed(me, PRODUCT_PROPERTY_TEXTUAL[i], XSD_STRING, |b| {
            sentence(b, &mut rng, words, count)
        });
    }

    // Each feature of the leaf type and of its ancestors (root excluded) with 25 %.
    let mut ty = leaf;
    while ty != 0 {
        let node = plan.types[ty as usize - 1];
        for feature in node.first_feature..node.first_feature + node.features {
            if rng.chance(25) {
                out.iri(me, BSBM_PRODUCT_FEATURE_P, Node::ProductFeature(feature));
            }
        }
        ty = node.parent;
    }
    out.iri(me, DC_PUBLISHER, Node::Producer(producer));
    let dates = (days_from_civil(2000, 10, 20), days_from_civil(2007, 1, 23));
    out.date(me, DC_DATE, day(&mut rng, dates.0, dates.1));
}

fn vendor_and_offers(plan: &Plan, vendor: u32, out: &mut NTriplesBuffer) {
    let seed = plan.config.seed;
    let me = Node::Vendor(vendor);
    let mut rng = Rng::stream(seed, Stream::Vendor, u64::from(vendor));
    out.iri(me, RDF_TYPE, Node::Iri(BSBM_VENDOR));
    let recent = (TODAY - 97, TODAY);
    organisation(out, &mut rng, me, Node::VendorHomepage(vendor), recent);
    let (first, last) = plan.offers_of(vendor);
    for offer in first..=last {
        let me = Node::Offer { vendor, offer };
        let mut rng = Rng::stream(seed, Stream::Offer, u64::from(offer));
        let product = rng.normal_range(2.0, 1.0, plan.products(), 4.0);
        let producer = plan.producer_of(product);
        // Uniform in [5, 10000] dollars, in cents.
        let cents = rng.int(500, 1_000_000);
        let published = day(&mut rng, recent.0, recent.1);
        let valid_from = published - rng.int(0, 90) as i32;
        let valid_to = published + rng.int(7, 90) as i32;
        let delivery = rng.normal_range(2.0, 1.0, 21, 14.2);
        out.iri(me, RDF_TYPE, Node::Iri(BSBM_OFFER));
        out.iri(me, BSBM_PRODUCT_P, Node::Product { producer, product });
        out.iri(me, BSBM_VENDOR_P, Node::Vendor(vendor));
        out.price(me, BSBM_PRICE, BSBM_USD, cents);
        out.date_time(me, BSBM_VALID_FROM, valid_from);
        out.date_time(me, BSBM_VALID_TO, valid_to);
        out.integer(me, BSBM_DELIVERY_DAYS, delivery);
        out.iri(me, BSBM_OFFER_WEBPAGE, Node::OfferPage { vendor, offer });
        out.iri(me, DC_PUBLISHER, Node::Vendor(vendor));
        out.date(me, DC_DATE, published);
    }
}

fn reviewers(plan: &Plan, block: ReviewerBlock, out: &mut NTriplesBuffer) {
    let seed = plan.config.seed;
    let site = block.site;
    let mut review = block.first_review;
    let words = words();
    for person in block.first_person..block.first_person + block.persons {
        let me = Node::Reviewer { site, person };
        let mut rng = Rng::stream(seed, Stream::Person, u64::from(person));
        let country = country_for(rng.unit());
        out.iri(me, RDF_TYPE, Node::Iri(FOAF_PERSON));
        out.plain(me, FOAF_NAME, |b| sentence(b, &mut rng, names(), 1));
        out.plain(me, FOAF_MBOX_SHA1SUM, |b| {
            for _ in 0..40 {
                b.push(b"0123456789abcdef"[rng.below(16)]);
            }
        });
        out.iri(me, BSBM_COUNTRY, Node::Country(country.code));
        out.iri(me, DC_PUBLISHER, Node::RatingSite(site));
        let dates = (days_from_civil(2008, 6, 20), days_from_civil(2008, 9, 23));
        out.date(me, DC_DATE, day(&mut rng, dates.0, dates.1));

        let count = person_reviews(seed, person, block.site_end - review);
        for _ in 0..count {
            let it = Node::Review { site, review };
            let mut rng = Rng::stream(seed, Stream::Review, u64::from(review));
            let product = rng.normal_range(2.0, 1.0, plan.products(), 4.0);
            let producer = plan.producer_of(product);
            let date = day(&mut rng, TODAY - 365, TODAY);
            out.iri(it, RDF_TYPE, Node::Iri(REV_REVIEW));
            out.iri(it, BSBM_REVIEW_FOR, Node::Product { producer, product });
            out.iri(it, REV_REVIEWER, me);
            out.date_time(it, BSBM_REVIEW_DATE, date);
            let n = rng.int(4, 15);
            out.plain(it, DC_TITLE, |b| sentence(b, &mut rng, words, n));
            let n = rng.int(50, 200);
            out.tagged(it, REV_TEXT, country.language, |b| {
                sentence(b, &mut rng, words, n)
            });
            for rating in RATING {
                if rng.chance(70) {
                    out.integer(it, rating, rng.int(1, 10));
                }
            }
            out.iri(it, DC_PUBLISHER, Node::RatingSite(site));
            out.date(it, DC_DATE, day(&mut rng, date, TODAY));
            review += 1;
        }
    }
}
