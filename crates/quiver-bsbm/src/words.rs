//! The word lists texts are drawn from.
//!
//! The reference generator reads two word files (`titlewords.txt`, about 89 K words, for
//! labels, comments, titles and review texts; `givennames.txt` for reviewers' names) and
//! picks words uniformly. Those lists are not reproduced here: this module builds two
//! fixed lists of pronounceable pseudo-words from syllables instead, the same for every
//! run and seed, and texts pick from them uniformly as the reference does. Words are
//! lowercase ASCII letters (names capitalised), so literals never need escaping.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::rng::Rng;

/// Distinct words in the list for labels, comments and review texts.
pub const WORD_COUNT: usize = 20_000;
/// Distinct given names.
pub const NAME_COUNT: usize = 5_000;

const ONSETS: [&str; 24] = [
    "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "ch", "cl", "st", "tr", "sh", "gr",
];
const NUCLEI: [&str; 8] = ["a", "e", "i", "o", "u", "ea", "io", "ou"];
const CODAS: [&str; 8] = ["", "", "", "n", "r", "s", "l", "t"];

/// Build `count` distinct pseudo-words of `min..=max` syllables from a fixed stream.
fn build(count: usize, min: u32, max: u32, key: u64, capitalise: bool) -> Vec<Box<str>> {
    // The key is a constant: the lists are data, not part of a run's random choices.
    let mut rng = Rng::stream(0x5753_4254_4f52_4453, crate::rng::Stream::ProductType, key);
    let mut seen = HashSet::with_capacity(count);
    let mut words = Vec::with_capacity(count);
    while words.len() < count {
        let mut word = String::new();
        for _ in 0..rng.int(min, max) {
            word.push_str(ONSETS[rng.below(ONSETS.len())]);
            word.push_str(NUCLEI[rng.below(NUCLEI.len())]);
            word.push_str(CODAS[rng.below(CODAS.len())]);
        }
        if capitalise {
            word[..1].make_ascii_uppercase();
        }
        if seen.insert(word.clone()) {
            words.push(word.into_boxed_str());
        }
    }
    words
}

/// The list for labels, comments, titles and texts.
pub fn words() -> &'static [Box<str>] {
    static WORDS: OnceLock<Vec<Box<str>>> = OnceLock::new();
    WORDS.get_or_init(|| build(WORD_COUNT, 1, 3, 1, false))
}

/// The list of given names.
pub fn names() -> &'static [Box<str>] {
    static NAMES: OnceLock<Vec<Box<str>>> = OnceLock::new();
    NAMES.get_or_init(|| build(NAME_COUNT, 2, 3, 2, true))
}

/// Append `count` words drawn uniformly from `list`, separated by single spaces.
pub fn sentence(out: &mut Vec<u8>, rng: &mut Rng, list: &[Box<str>], count: u32) {
    for i in 0..count {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(list[rng.below(list.len())].as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_distinct_plain_and_fixed() {
        assert_eq!(words().len(), WORD_COUNT);
        assert_eq!(names().len(), NAME_COUNT);
        assert!(words()
            .iter()
            .all(|w| w.bytes().all(|b| b.is_ascii_lowercase())));
        assert!(names().iter().all(|n| n.as_bytes()[0].is_ascii_uppercase()));
        assert_eq!(build(50, 1, 3, 1, false), words()[..50].to_vec());
        let mut out = Vec::new();
        sentence(
            &mut out,
            &mut Rng::stream(1, crate::rng::Stream::Review, 1),
            words(),
            4,
        );
        assert_eq!(out.iter().filter(|&&b| b == b' ').count(), 3);
    }
}
