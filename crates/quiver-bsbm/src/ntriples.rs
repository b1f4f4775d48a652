//! N-Triples output, written straight into a byte buffer.
//!
//! Every IRI of the dataset is a namespace and a few numbers ([`Node`]); literals are
//! words, numbers and dates. The writer appends them to one `Vec<u8>` without `format!`
//! or per-term allocations. Literal texts come from the word lists, whose words are plain
//! ASCII letters, so nothing needs escaping.

use crate::vocab::{BSBM_INST, COUNTRIES, XSD_DATE, XSD_DATE_TIME, XSD_INTEGER};

/// An IRI of the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// A fixed IRI: a class, a country.
    Iri(&'static str),
    /// `bsbm-inst:ProductType{n}`
    ProductType(u32),
    /// `bsbm-inst:ProductFeature{n}`
    ProductFeature(u32),
    /// `bsbm-inst:StandardizationInstitution{n}`
    Institution(u32),
    /// `bsbm-inst:dataFromProducer{n}/Producer{n}`
    Producer(u32),
    /// `bsbm-inst:dataFromProducer{producer}/Product{product}`
    Product { producer: u32, product: u32 },
    /// `bsbm-inst:dataFromVendor{n}/Vendor{n}`
    Vendor(u32),
    /// `bsbm-inst:dataFromVendor{vendor}/Offer{offer}`
    Offer { vendor: u32, offer: u32 },
    /// `bsbm-inst:dataFromVendor{vendor}/Offer{offer}/`, the offer's web page.
    OfferPage { vendor: u32, offer: u32 },
    /// `bsbm-inst:dataFromRatingSite{n}/RatingSite{n}`
    RatingSite(u32),
    /// `bsbm-inst:dataFromRatingSite{site}/Reviewer{person}`
    Reviewer { site: u32, person: u32 },
    /// `bsbm-inst:dataFromRatingSite{site}/Review{review}`
    Review { site: u32, review: u32 },
    /// `http://www.Producer{n}.com/`
    ProducerHomepage(u32),
    /// `http://www.vendor{n}.com/`
    VendorHomepage(u32),
    /// `http://downlode.org/rdf/iso-3166/countries#{code}`
    Country(&'static str),
}

/// A buffer of N-Triples lines and the number of triples in it.
#[derive(Debug, Default)]
pub struct NTriplesBuffer {
    pub bytes: Vec<u8>,
    pub triples: u64,
}

fn number(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn publisher_ns(out: &mut Vec<u8>, kind: &str, n: u32) {
    out.extend_from_slice(BSBM_INST.as_bytes());
    out.extend_from_slice(b"dataFrom");
    out.extend_from_slice(kind.as_bytes());
    number(out, n);
    out.push(b'/');
}

/// `node`'s IRI between angle brackets, as a query or an N-Triples line writes it.
pub fn bracketed_iri(node: Node) -> String {
    let mut out = vec![b'<'];
    write_iri(&mut out, node);
    out.push(b'>');
    String::from_utf8(out).expect("the dataset's IRIs are ASCII")
}

/// Append `node`'s IRI, without angle brackets.
pub fn write_iri(out: &mut Vec<u8>, node: Node) {
    let local = |out: &mut Vec<u8>, name: &str, n: u32| {
        out.extend_from_slice(name.as_bytes());
        number(out, n);
    };
    match node {
        Node::Iri(iri) => out.extend_from_slice(iri.as_bytes()),
        Node::ProductType(n) => {
            out.extend_from_slice(BSBM_INST.as_bytes());
            local(out, "ProductType", n);
        }
        Node::ProductFeature(n) => {
            out.extend_from_slice(BSBM_INST.as_bytes());
            local(out, "ProductFeature", n);
        }
        Node::Institution(n) => {
            out.extend_from_slice(BSBM_INST.as_bytes());
            local(out, "StandardizationInstitution", n);
        }
        Node::Producer(n) => {
            publisher_ns(out, "Producer", n);
            local(out, "Producer", n);
        }
        Node::Product { producer, product } => {
            publisher_ns(out, "Producer", producer);
            local(out, "Product", product);
        }
        Node::Vendor(n) => {
            publisher_ns(out, "Vendor", n);
            local(out, "Vendor", n);
        }
        Node::Offer { vendor, offer } => {
            publisher_ns(out, "Vendor", vendor);
            local(out, "Offer", offer);
        }
        Node::OfferPage { vendor, offer } => {
            publisher_ns(out, "Vendor", vendor);
            local(out, "Offer", offer);
            out.push(b'/');
        }
        Node::RatingSite(n) => {
            publisher_ns(out, "RatingSite", n);
            local(out, "RatingSite", n);
        }
        Node::Reviewer { site, person } => {
            publisher_ns(out, "RatingSite", site);
            local(out, "Reviewer", person);
        }
        Node::Review { site, review } => {
            publisher_ns(out, "RatingSite", site);
            local(out, "Review", review);
        }
        Node::ProducerHomepage(n) => {
            local(out, "http://www.Producer", n);
            out.extend_from_slice(b".com/");
        }
        Node::VendorHomepage(n) => {
            local(out, "http://www.vendor", n);
            out.extend_from_slice(b".com/");
        }
        Node::Country(code) => {
            out.extend_from_slice(COUNTRIES.as_bytes());
            out.extend_from_slice(code.as_bytes());
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub const fn days_from_civil(year: i32, month: u32, day: u32) -> i32 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = month as i32;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i32 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a day number.
pub fn civil_from_days(days: i32) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i32::from(month <= 2);
    (year, month, day)
}

/// Append `YYYY-MM-DD`.
pub fn write_date(out: &mut Vec<u8>, days: i32) {
    let (year, month, day) = civil_from_days(days);
    number(out, year as u32);
    for part in [month, day] {
        out.push(b'-');
        if part < 10 {
            out.push(b'0');
        }
        number(out, part);
    }
}

impl NTriplesBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    fn start(&mut self, subject: Node, predicate: &str) {
        self.bytes.push(b'<');
        write_iri(&mut self.bytes, subject);
        self.bytes.extend_from_slice(b"> <");
        self.bytes.extend_from_slice(predicate.as_bytes());
        self.bytes.extend_from_slice(b"> ");
    }

    fn end(&mut self) {
        self.bytes.extend_from_slice(b" .\n");
        self.triples += 1;
    }

    fn datatype(&mut self, datatype: &str) {
        self.bytes.extend_from_slice(b"\"^^<");
        self.bytes.extend_from_slice(datatype.as_bytes());
        self.bytes.push(b'>');
    }

    /// `<s> <p> <o> .`
    pub fn iri(&mut self, subject: Node, predicate: &str, object: Node) {
        self.start(subject, predicate);
        self.bytes.push(b'<');
        write_iri(&mut self.bytes, object);
        self.bytes.push(b'>');
        self.end();
    }

    /// `<s> <p> "text" .`, the text written by `text` (it must need no escaping).
    pub fn plain(&mut self, subject: Node, predicate: &str, text: impl FnOnce(&mut Vec<u8>)) {
        self.start(subject, predicate);
        self.bytes.push(b'"');
        text(&mut self.bytes);
        self.bytes.push(b'"');
        self.end();
    }

    /// `<s> <p> "text"^^<datatype> .`
    pub fn typed(
        &mut self,
        subject: Node,
        predicate: &str,
        datatype: &str,
        text: impl FnOnce(&mut Vec<u8>),
    ) {
        self.start(subject, predicate);
        self.bytes.push(b'"');
        text(&mut self.bytes);
        self.datatype(datatype);
        self.end();
    }

    /// `<s> <p> "text"@language .`
    pub fn tagged(
        &mut self,
        subject: Node,
        predicate: &str,
        language: &str,
        text: impl FnOnce(&mut Vec<u8>),
    ) {
        self.start(subject, predicate);
        self.bytes.push(b'"');
        text(&mut self.bytes);
        self.bytes.extend_from_slice(b"\"@");
        self.bytes.extend_from_slice(language.as_bytes());
        self.end();
    }

    /// An `xsd:integer`.
    pub fn integer(&mut self, subject: Node, predicate: &str, value: u32) {
        self.typed(subject, predicate, XSD_INTEGER, |out| number(out, value));
    }

    /// An `xsd:date`.
    pub fn date(&mut self, subject: Node, predicate: &str, days: i32) {
        self.typed(subject, predicate, XSD_DATE, |out| write_date(out, days));
    }

    /// An `xsd:dateTime` at midnight, as the reference writes them.
    pub fn date_time(&mut self, subject: Node, predicate: &str, days: i32) {
        self.typed(subject, predicate, XSD_DATE_TIME, |out| {
            write_date(out, days);
            out.extend_from_slice(b"T00:00:00");
        });
    }

    /// A price in cents as `dollars.cc` with the given datatype.
    pub fn price(&mut self, subject: Node, predicate: &str, datatype: &str, cents: u32) {
        self.typed(subject, predicate, datatype, |out| {
            number(out, cents / 100);
            out.push(b'.');
            if cents % 100 < 10 {
                out.push(b'0');
            }
            number(out, cents % 100);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_format() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2008, 6, 20), 14_050);
        for days in [-1, 0, 59, 60, 11_016, 14_050, 20_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        let mut out = Vec::new();
        write_date(&mut out, days_from_civil(2000, 2, 29));
        assert_eq!(out, b"2000-02-29");
    }

    #[test]
    fn lines_are_n_triples() {
        let mut buffer = NTriplesBuffer::new();
        let offer = Node::Offer {
            vendor: 2,
            offer: 7,
        };
        buffer.price(offer, "http://p", "http://d", 1_205);
        buffer.iri(
            offer,
            "http://q",
            Node::OfferPage {
                vendor: 2,
                offer: 7,
            },
        );
        assert_eq!(buffer.triples, 2);
        let text = String::from_utf8(buffer.bytes).unwrap();
        let inst = BSBM_INST;
        assert_eq!(
            text,
            format!(
                "<{inst}dataFromVendor2/Offer7> <http://p> \"12.05\"^^<http://d> .\n\
                 <{inst}dataFromVendor2/Offer7> <http://q> <{inst}dataFromVendor2/Offer7/> .\n"
            )
        );
    }
}
