//! The BSBM vocabulary and the IRIs of its instances, as the specification names them.

/// The BSBM vocabulary (`bsbm:`).
pub const BSBM: &str = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/";
/// Instances that belong to no single publisher (`bsbm-inst:`): product types, features.
pub const BSBM_INST: &str = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/";
pub const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
pub const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
pub const DC: &str = "http://purl.org/dc/elements/1.1/";
pub const FOAF: &str = "http://xmlns.com/foaf/0.1/";
pub const REV: &str = "http://purl.org/stuff/rev#";
/// Countries, as the reference generator names them.
pub const COUNTRIES: &str = "http://downlode.org/rdf/iso-3166/countries#";

macro_rules! iris {
    ($($name:ident = $ns:literal $local:literal;)*) => {
        $(pub const $name: &str = concat!($ns, $local);)*
    };
}

iris! {
    RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#" "type";
    RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#" "label";
    RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#" "comment";
    RDFS_SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#" "subClassOf";
    XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#" "integer";
    XSD_STRING = "http://www.w3.org/2001/XMLSchema#" "string";
    XSD_DATE = "http://www.w3.org/2001/XMLSchema#" "date";
    XSD_DATE_TIME = "http://www.w3.org/2001/XMLSchema#" "dateTime";
    DC_PUBLISHER = "http://purl.org/dc/elements/1.1/" "publisher";
    DC_DATE = "http://purl.org/dc/elements/1.1/" "date";
    DC_TITLE = "http://purl.org/dc/elements/1.1/" "title";
    FOAF_PERSON = "http://xmlns.com/foaf/0.1/" "Person";
    FOAF_NAME = "http://xmlns.com/foaf/0.1/" "name";
    FOAF_HOMEPAGE = "http://xmlns.com/foaf/0.1/" "homepage";
    FOAF_MBOX_SHA1SUM = "http://xmlns.com/foaf/0.1/" "mbox_sha1sum";
    REV_REVIEW = "http://purl.org/stuff/rev#" "Review";
    REV_REVIEWER = "http://purl.org/stuff/rev#" "reviewer";
    REV_TEXT = "http://purl.org/stuff/rev#" "text";
    BSBM_PRODUCT_TYPE = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "ProductType";
    BSBM_PRODUCT_FEATURE = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "ProductFeature";
    BSBM_PRODUCER = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "Producer";
    BSBM_PRODUCT = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "Product";
    BSBM_VENDOR = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "Vendor";
    BSBM_OFFER = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "Offer";
    BSBM_USD = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "USD";
    BSBM_PRODUCER_P = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "producer";
    BSBM_PRODUCT_FEATURE_P = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "productFeature";
    BSBM_COUNTRY = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "country";
    BSBM_PRODUCT_P = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "product";
    BSBM_VENDOR_P = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "vendor";
    BSBM_PRICE = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "price";
    BSBM_VALID_FROM = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "validFrom";
    BSBM_VALID_TO = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "validTo";
    BSBM_DELIVERY_DAYS = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "deliveryDays";
    BSBM_OFFER_WEBPAGE = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "offerWebpage";
    BSBM_REVIEW_FOR = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "reviewFor";
    BSBM_REVIEW_DATE = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/" "reviewDate";
}

/// `bsbm:productPropertyNumeric1` … `6`.
pub const PRODUCT_PROPERTY_NUMERIC: [&str; 6] = [
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric1"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric2"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric3"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric4"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric5"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyNumeric6"
    ),
];

/// `bsbm:productPropertyTextual1` … `6`.
pub const PRODUCT_PROPERTY_TEXTUAL: [&str; 6] = [
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual1"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual2"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual3"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual4"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual5"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "productPropertyTextual6"
    ),
];

/// `bsbm:rating1` … `4`.
pub const RATING: [&str; 4] = [
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "rating1"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "rating2"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "rating3"
    ),
    concat!(
        "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/",
        "rating4"
    ),
];

/// A country of a producer, vendor or reviewer, with the language its reviews are written
/// in; drawn with the reference generator's weights (US 40 %, GB, JP, CN 10 % each, the
/// other six 5 % each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Country {
    pub code: &'static str,
    pub language: &'static str,
    /// Weight in percent.
    pub weight: u32,
}

pub const COUNTRY_TABLE: [Country; 10] = [
    country("US", "en", 40),
    country("GB", "en", 10),
    country("JP", "ja", 10),
    country("CN", "zh", 10),
    country("DE", "de", 5),
    country("FR", "fr", 5),
    country("ES", "es", 5),
    country("RU", "ru", 5),
    country("KR", "ko", 5),
    country("AT", "de", 5),
];

const fn country(code: &'static str, language: &'static str, weight: u32) -> Country {
    Country {
        code,
        language,
        weight,
    }
}

/// The country for a uniform draw `u` in `[0, 1)`.
pub fn country_for(u: f64) -> Country {
    let mut cumulative = 0.0;
    for country in COUNTRY_TABLE {
        cumulative += f64::from(country.weight) / 100.0;
        if u < cumulative {
            return country;
        }
    }
    COUNTRY_TABLE[COUNTRY_TABLE.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_a_hundred_and_pick_by_cumulative_share() {
        assert_eq!(COUNTRY_TABLE.iter().map(|c| c.weight).sum::<u32>(), 100);
        assert_eq!(country_for(0.0).code, "US");
        assert_eq!(country_for(0.399).code, "US");
        assert_eq!(country_for(0.45).code, "GB");
        assert_eq!(country_for(0.999).code, "AT");
        assert!(PRODUCT_PROPERTY_NUMERIC[5].ends_with("productPropertyNumeric6"));
        assert!(RATING[0].starts_with(BSBM));
    }
}
