//! The generator against UBA 1.7's own output (`shared/lubm/`).

use std::io::Read;
use std::path::PathBuf;

use quiver_lubm::generate_university;
use quiver_lubm::ntriples::NTriplesBuffer;
use sha2::{Digest, Sha256};

fn shared_lubm() -> PathBuf {
    let dir = std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    dir.join("lubm")
}

/// Generate universities `0..n` and return the N-Triples lines sorted and deduplicated
/// bytewise, as `LC_ALL=C sort -u` does.
fn sorted_unique(n: u32) -> Vec<u8> {
    let mut buffer = NTriplesBuffer::new();
    for university in 0..n {
        generate_university(0, university, &mut buffer);
    }
    let mut lines: Vec<&[u8]> = buffer.bytes.split_inclusive(|&b| b == b'\n').collect();
    lines.sort_unstable();
    lines.dedup();
    lines.concat()
}

#[test]
fn lubm1_equals_the_reference_byte_for_byte() {
    let path = shared_lubm().join("lubm1-uba-sorted.nt.gz");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("reference data {} missing: {e}", path.display()));
    let mut expected = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut expected)
        .unwrap();
    let generated = sorted_unique(1);
    assert_eq!(generated.iter().filter(|&&b| b == b'\n').count(), 100_543);
    if generated != expected {
        let first_difference = generated
            .split(|&b| b == b'\n')
            .zip(expected.split(|&b| b == b'\n'))
            .find(|(a, b)| a != b)
            .map(|(a, b)| {
                format!(
                    "generated {:?}\nexpected  {:?}",
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                )
            });
        panic!("LUBM-1 differs from the reference: {first_difference:?}");
    }
}

#[test]
fn lubm10_matches_the_reference_hash() {
    let path = shared_lubm().join("lubm10-uba-sorted.sha256");
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reference hash {} missing: {e}", path.display()));
    let expected = expected.split_whitespace().next().unwrap();
    let generated = sorted_unique(10);
    assert_eq!(generated.iter().filter(|&&b| b == b'\n').count(), 1_272_575);
    let digest = Sha256::digest(&generated);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, expected);
}

#[test]
fn no_triple_is_emitted_twice_within_a_university() {
    let mut buffer = NTriplesBuffer::new();
    generate_university(0, 3, &mut buffer);
    let mut lines: Vec<&[u8]> = buffer.bytes.split(|&b| b == b'\n').collect();
    let total = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), total);
}
