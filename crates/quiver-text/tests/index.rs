//! The text index against what its literals say: words, prefixes, phrases, boolean
//! operators, stems, trigram candidates, updates, saving, reopening and rebuilding.

use oxrdf::{Literal, NamedNode, Quad};
use proptest::prelude::*;
use quiver_model::term::{decode_term, DecodedTerm};
use quiver_model::Id;
use quiver_store::{ChangeSet, Store};
use quiver_text::TextIndex;

/// `text@lang` is language-tagged, `text@lang--rtl` (or `--ltr`) directional (RDF 1.2).
fn literal(text: &str) -> Literal {
    match text.rsplit_once('@') {
        Some((value, tag)) => match tag.split_once("--") {
            Some((language, direction)) => {
                let direction = match direction {
                    "rtl" => oxrdf::BaseDirection::Rtl,
                    _ => oxrdf::BaseDirection::Ltr,
                };
                Literal::new_directional_language_tagged_literal(value, language, direction)
                    .unwrap()
            }
            None => Literal::new_language_tagged_literal(value, tag).unwrap(),
        },
        None => Literal::new_simple_literal(text),
    }
}

fn quad(i: usize, text: &str) -> Quad {
    Quad::new(
        NamedNode::new(format!("http://example.org/s{i}")).unwrap(),
        NamedNode::new("http://example.org/label").unwrap(),
        literal(text),
        oxrdf::GraphName::DefaultGraph,
    )
}

fn store_of(texts: &[&str]) -> Store {
    let quads: Vec<Quad> = texts.iter().enumerate().map(|(i, t)| quad(i, t)).collect();
    quiver_loader::load_quads(quads, None).unwrap().0
}

/// `store` with `texts` added as labels of new subjects (the update path: terms appended).
fn with_labels(store: &Store, first: usize, texts: &[&str]) -> Store {
    let mut changes = ChangeSet::new(store);
    let predicate = changes
        .intern(
            store,
            NamedNode::new("http://example.org/label")
                .unwrap()
                .as_ref()
                .into(),
        )
        .unwrap();
    for (i, text) in texts.iter().enumerate() {
        let subject = NamedNode::new(format!("http://example.org/s{}", first + i)).unwrap();
        let subject = changes.intern(store, subject.as_ref().into()).unwrap();
        let object = changes
            .intern(store, literal(text).as_ref().into())
            .unwrap();
        changes.inserts.push(quiver_store::Quad {
            subject,
            predicate,
            object,
            graph: None,
        });
    }
    store.apply(&changes).unwrap()
}

/// The texts of the literals `query` finds.
fn found(index: &TextIndex, store: &Store, query: &str) -> Vec<String> {
    let mut texts: Vec<String> = index
        .search(query, store.terms())
        .unwrap()
        .into_iter()
        .map(|(id, _)| text_of(store, id))
        .collect();
    texts.sort();
    texts
}

fn text_of(store: &Store, id: Id) -> String {
    let bytes = store.dictionary().term(id).unwrap();
    match decode_term(&bytes).unwrap() {
        DecodedTerm::Literal { value, .. } => value.to_owned(),
        other => panic!("not a literal: {other:?}"),
    }
}

const TEXTS: [&str; 7] = [
    "The quick brown fox",
    "A quick red car",
    "Brown bears in Québec",
    "running shoes@en",
    "les voitures rouges@fr",
    "universidad de Madrid",
    "University of Oxford",
];

#[test]
fn words_prefixes_phrases_and_operators() {
    let store = store_of(&TEXTS);
    let (index, report) = TextIndex::build(None, &store, 2).unwrap();
    assert_eq!(report.literals, TEXTS.len() as u64);
    assert_eq!(
        found(&index, &store, "quick"),
        ["A quick red car", "The quick brown fox"]
    );
    // Side by side: all words; OR: either.
    assert_eq!(
        found(&index, &store, "quick brown"),
        ["The quick brown fox"]
    );
    assert_eq!(
        found(&index, &store, "fox OR car"),
        ["A quick red car", "The quick brown fox"]
    );
    assert_eq!(found(&index, &store, "quick -fox"), ["A quick red car"]);
    assert_eq!(
        found(&index, &store, "quick AND NOT fox"),
        ["A quick red car"]
    );
    // Case and accents are folded.
    assert_eq!(found(&index, &store, "QUEBEC"), ["Brown bears in Québec"]);
    // Prefixes, alone and ending a phrase.
    assert_eq!(
        found(&index, &store, "univers*"),
        ["University of Oxford", "universidad de Madrid"]
    );
    assert_eq!(
        found(&index, &store, "\"brown f\"*"),
        ["The quick brown fox"]
    );
    // Phrases keep word order.
    assert_eq!(
        found(&index, &store, "\"brown fox\""),
        ["The quick brown fox"]
    );
    assert!(found(&index, &store, "\"fox brown\"").is_empty());
    // Stems for tagged literals: English and French.
    assert_eq!(found(&index, &store, "runs"), ["running shoes"]);
    assert_eq!(found(&index, &store, "voiture"), ["les voitures rouges"]);
    // An untagged literal is not stemmed.
    assert!(found(&index, &store, "bear").is_empty());
    assert_eq!(index.count("quick").unwrap(), 2);
    // Errors name the query.
    let error = index.search("-fox", store.terms()).unwrap_err().to_string();
    assert!(error.contains("only excludes"), "{error}");
    let error = index
        .search("label:fox", store.terms())
        .unwrap_err()
        .to_string();
    assert!(error.contains("label:"), "{error}");
}

/// Directional literals (RDF 1.2) are indexed like language-tagged ones, stems included,
/// whether loaded or added by an update.
#[test]
fn directional_literals_are_found() {
    let store = store_of(&["שלום world@he--rtl", "running shoes@en--ltr", "plain words"]);
    let (index, report) = TextIndex::build(None, &store, 1).unwrap();
    assert_eq!(report.literals, 3);
    assert_eq!(found(&index, &store, "world"), ["שלום world"]);
    assert_eq!(found(&index, &store, "runs"), ["running shoes"]);
    let store = with_labels(&store, 10, &["مرحبا world@ar--rtl"]);
    index.catch_up(&store).unwrap();
    assert_eq!(
        found(&index, &store, "world"),
        ["שלום world", "مرحبا world"]
    );
}

#[test]
fn scores_rank_the_closer_match_higher() {
    let store = store_of(&["fox", "fox fox and other animals of the forest", "a dog"]);
    let (index, _) = TextIndex::build(None, &store, 1).unwrap();
    let hits = index.search("fox", store.terms()).unwrap();
    assert_eq!(hits.len(), 2);
    let score = |text: &str| {
        hits.iter()
            .find(|(id, _)| text_of(&store, *id) == text)
            .unwrap()
            .1
    };
    assert!(score("fox") > score("fox fox and other animals of the forest"));
}

#[test]
fn updates_are_found_and_older_versions_keep_their_own() {
    let store = store_of(&TEXTS);
    let (index, _) = TextIndex::build(None, &store, 1).unwrap();
    let next = with_labels(&store, 100, &["A brand new fox", "Grüße aus Köln@de"]);
    index.catch_up(&next).unwrap();
    assert_eq!(
        found(&index, &next, "fox"),
        ["A brand new fox", "The quick brown fox"]
    );
    assert_eq!(found(&index, &next, "kolner OR koln"), ["Grüße aus Köln"]);
    // The version before the update does not see the new literal.
    assert_eq!(found(&index, &store, "fox"), ["The quick brown fox"]);
}

#[test]
fn saved_beside_the_store_folded_and_reopened() {
    let dir = std::env::temp_dir().join(format!("quiver-text-saved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = store_of(&TEXTS);
    let (index, report) = TextIndex::build(Some(&dir), &store, 2).unwrap();
    assert!(report.bytes > 0);
    let next = with_labels(&store, 100, &["A brand new fox"]);
    index.catch_up(&next).unwrap();
    assert_eq!(found(&index, &next, "brand"), ["A brand new fox"]);
    drop(index);
    // Reopened over the newer version: the tail was in memory only, so the new literal
    // is indexed again on opening.
    let index = TextIndex::open(&dir, &next, 1, false).unwrap().unwrap();
    assert_eq!(index.terms(), next.terms());
    assert_eq!(found(&index, &next, "brand"), ["A brand new fox"]);
    // A checkpoint of `next` folds it into the saved part; a later literal stays in the
    // tail.
    let later = with_labels(&next, 200, &["Another fox"]);
    index.catch_up(&later).unwrap();
    index.fold(&next, &later).unwrap();
    assert_eq!(
        found(&index, &later, "fox"),
        ["A brand new fox", "Another fox", "The quick brown fox"]
    );
    drop(index);
    // Reopened over `next` (the checkpoint, the later commit lost): nothing of `later`.
    let index = TextIndex::open(&dir, &next, 1, false).unwrap().unwrap();
    assert_eq!(
        found(&index, &next, "fox"),
        ["A brand new fox", "The quick brown fox"]
    );
    drop(index);
    // Another store in the same directory: its dictionary is not the one indexed, so the
    // index is built again.
    let other = store_of(&["Nothing about animals", "A fox again"]);
    let index = TextIndex::open(&dir, &other, 1, false).unwrap().unwrap();
    assert_eq!(found(&index, &other, "fox"), ["A fox again"]);
    assert!(found(&index, &other, "quick").is_empty());
    // Files cut short or lost: the index is built again rather than refusing the store.
    drop(index);
    std::fs::write(dir.join("text").join("meta.json"), b"{ not json").unwrap();
    let index = TextIndex::open(&dir, &other, 1, false).unwrap().unwrap();
    assert_eq!(found(&index, &other, "fox"), ["A fox again"]);
    drop(index);
    // Read only, nothing on disk changes: the index is built in memory.
    std::fs::write(dir.join("text").join("meta.json"), b"{ not json").unwrap();
    let index = TextIndex::open(&dir, &other, 1, true).unwrap().unwrap();
    assert_eq!(found(&index, &other, "fox"), ["A fox again"]);
    assert_eq!(
        std::fs::read(dir.join("text").join("meta.json")).unwrap(),
        b"{ not json"
    );
    // No index: nothing opens.
    let empty = dir.join("elsewhere");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(TextIndex::open(&empty, &other, 1, false).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn words() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "Fox",
        "fox",
        "FOXES",
        "car",
        "Cart",
        "scar",
        "ab",
        "abc",
        "xabcx",
        "K\u{212A}x",
        "\u{17F}un",
        "sun",
        "Sun",
        "café",
        "cafe",
        "naïve",
        "ΣΑΣ",
        "日本",
    ])
    .prop_map(str::to_owned)
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        (
            prop::collection::vec(words(), 1..4),
            prop::sample::select(vec![" ", "-", ", ", ""]),
        )
            .prop_map(|(words, separator)| words.join(separator)),
        1..24,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A word query finds exactly the untagged literals having that word (folded), and the
    /// trigram candidates of a needle hold every literal containing it, exactly or
    /// ignoring case.
    #[test]
    fn searches_equal_a_scan(texts in texts(), needle in words(), extra in texts()) {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let store = store_of(&refs);
        let (index, _) = TextIndex::build(None, &store, 1).unwrap();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let store = with_labels(&store, 1000, &extra);
        index.catch_up(&store).unwrap();
        let all: Vec<String> = texts.iter().chain(extra.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>().iter()).cloned().collect();
        let fold_word = |w: &str| {
            w.chars().flat_map(char::to_lowercase).map(|c| match c {
                'é' => 'e',
                'ï' => 'i',
                'ſ' => 's',
                c => c,
            }).collect::<String>()
        };
        if needle.chars().all(char::is_alphanumeric) && needle.is_ascii() {
            let mut expected: Vec<String> = all
                .iter()
                .filter(|t| t.split(|c: char| !c.is_alphanumeric()).any(|w| fold_word(w) == fold_word(&needle)))
                .cloned()
                .collect();
            expected.sort();
            expected.dedup();
            prop_assert_eq!(found(&index, &store, &needle), expected);
        }
        if let Some(candidates) = index.candidates(&needle, store.terms()).unwrap() {
            let candidates: Vec<String> = candidates.iter().map(|id| text_of(&store, *id)).collect();
            let pattern = regex::RegexBuilder::new(&regex::escape(&needle)).case_insensitive(true).build().unwrap();
            for text in &all {
                if text.contains(needle.as_str()) || pattern.is_match(text) {
                    prop_assert!(candidates.contains(text), "{text:?} contains {needle:?} but is no candidate");
                }
            }
            prop_assert!(index.estimate_candidates(&needle).unwrap() >= candidates.len() as u64);
        }
    }
}

/// The words of `text` as the index reads them for a query: lower-cased, folded, and for a
/// literal tagged with a stemmed language, also stemmed (by the same Snowball stemmer).
fn stems(text: &str, language: Option<tantivy::tokenizer::Language>) -> Vec<String> {
    use tantivy::tokenizer::{
        AsciiFoldingFilter, LowerCaser, SimpleTokenizer, Stemmer, TextAnalyzer,
    };
    let mut analyzer = match language {
        Some(language) => TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Stemmer::new(language))
            .build(),
        None => TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
            .build(),
    };
    let mut words = Vec::new();
    let mut stream = analyzer.token_stream(text);
    stream.process(&mut |token| words.push(token.text.clone()));
    words
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Literals in several languages: a word finds a literal when one of its words is the
    /// query's word, or, for a literal tagged English, French or German, when one of its
    /// stems is the query's stem in that language.
    #[test]
    fn tagged_literals_are_found_by_their_stems(
        texts in prop::collection::vec(
            (
                prop::collection::vec(prop::sample::select(vec![
                    "running", "runs", "run", "voitures", "voiture", "Häuser", "Haus",
                    "cats", "cat", "chantaient", "chanter", "ran",
                ]), 1..4),
                prop::sample::select(vec!["", "@en", "@fr", "@de", "@ja"]),
            ).prop_map(|(words, tag)| format!("{}{tag}", words.join(" "))),
            1..16,
        ),
        query in prop::sample::select(vec!["run", "runs", "voiture", "haus", "hauser", "cat", "chanter", "ran"]),
    ) {
        use tantivy::tokenizer::Language;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let store = store_of(&refs);
        let (index, _) = TextIndex::build(None, &store, 1).unwrap();
        let mut expected: Vec<String> = texts
            .iter()
            .filter(|text| {
                let (value, language) = match text.rsplit_once('@') {
                    Some((value, "en")) => (value, Some(Language::English)),
                    Some((value, "fr")) => (value, Some(Language::French)),
                    Some((value, "de")) => (value, Some(Language::German)),
                    Some((value, _)) => (value, None),
                    None => (text.as_str(), None),
                };
                let word = stems(query, None)[0].clone();
                stems(value, None).contains(&word)
                    || language.is_some_and(|l| stems(value, Some(l)).contains(&stems(query, Some(l))[0]))
            })
            .map(|text| text.rsplit_once('@').map_or(text.as_str(), |(v, _)| v).to_owned())
            .collect();
        expected.sort();
        expected.dedup();
        let mut got = found(&index, &store, query);
        got.dedup();
        prop_assert_eq!(got, expected);
    }
}
