//! Hash functions (§17.4.6): MD5, SHA1, SHA256, SHA384 and SHA512.
//!
//! Each hashes the UTF-8 bytes of a simple literal (or `xsd:string`; language-tagged strings are
//! an error) and returns the lowercase hexadecimal digest as a simple literal.

use crate::string::simple_literal;
use crate::value;
use oxrdf::Term;
use sha2::Digest;
use std::fmt::Write;

/// The hash algorithms of SPARQL.
#[derive(Clone, Copy)]
pub(crate) enum Algorithm {
    Md5,
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

/// Hashes `arg` with `algorithm`.
pub(crate) fn hash(algorithm: Algorithm, arg: &Term) -> Option<Term> {
    let input = simple_literal(arg)?.as_bytes();
    Some(value::string(match algorithm {
        Algorithm::Md5 => hex(&md5::Md5::digest(input)),
        Algorithm::Sha1 => hex(&sha1::Sha1::digest(input)),
        Algorithm::Sha256 => hex(&sha2::Sha256::digest(input)),
        Algorithm::Sha384 => hex(&sha2::Sha384::digest(input)),
        Algorithm::Sha512 => hex(&sha2::Sha512::digest(input)),
    }))
}

/// Lowercase hexadecimal encoding.
fn hex(bytes: &[u8]) -> String {
    let mut result = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        let _ = write!(result, "{byte:02x}"); // writing to a String cannot fail
    }
    result
}
