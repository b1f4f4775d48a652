//! What a literal becomes in the index: its fields and how each is tokenised.
//!
//! One document per string literal (simple or language-tagged), with
//! - `id`: the literal's term id (a fast field, read for every hit);
//! - `words`: its words, split at non-alphanumeric characters, lower-cased and folded to
//!   ASCII (`é` → `e`), with positions for phrases: every literal has them;
//! - `stem_xx`: the same words stemmed with the Snowball stemmer of the literal's language,
//!   for a literal tagged with a language that has one (`"running"@en` is found by `runs`);
//! - `grams`: the trigrams of its text folded by [`fold`], which narrow a `CONTAINS` or a
//!   case-insensitive `REGEX` to the literals holding all the needle's trigrams.

use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, NgramTokenizer, RemoveLongFilter, SimpleTokenizer,
    Stemmer, TextAnalyzer, TokenizerManager,
};

/// Languages with a stemmer: the primary subtag of a language tag, and tantivy's stemmer.
pub const STEMMED: [(&str, Language); 18] = [
    ("ar", Language::Arabic),
    ("da", Language::Danish),
    ("nl", Language::Dutch),
    ("en", Language::English),
    ("fi", Language::Finnish),
    ("fr", Language::French),
    ("de", Language::German),
    ("el", Language::Greek),
    ("hu", Language::Hungarian),
    ("it", Language::Italian),
    ("no", Language::Norwegian),
    ("pt", Language::Portuguese),
    ("ro", Language::Romanian),
    ("ru", Language::Russian),
    ("es", Language::Spanish),
    ("sv", Language::Swedish),
    ("ta", Language::Tamil),
    ("tr", Language::Turkish),
];

/// Words longer than this many bytes are not indexed (tantivy's own limit is 65 530).
const LONGEST_WORD: usize = 255;

/// The fields of the schema.
#[derive(Debug, Clone)]
pub struct Fields {
    pub id: Field,
    pub words: Field,
    /// `stems[i]` is the field of `STEMMED[i]`.
    pub stems: Vec<Field>,
    pub grams: Field,
}

impl Fields {
    /// The fields a word of a query is looked for in: the words and every stemmed field.
    pub fn searched(&self) -> impl Iterator<Item = Field> + '_ {
        std::iter::once(self.words).chain(self.stems.iter().copied())
    }

    /// The stemmed field of a literal tagged `language`, if its language has a stemmer.
    pub fn stem_field(&self, language: &str) -> Option<Field> {
        let primary = language.split('-').next()?.to_ascii_lowercase();
        STEMMED
            .iter()
            .position(|(code, _)| *code == primary)
            .map(|i| self.stems[i])
    }
}

/// The schema and its fields.
pub fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let id = builder.add_u64_field("id", NumericOptions::default().set_fast());
    let text = |analyzer: &str, record: IndexRecordOption| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(analyzer)
                .set_index_option(record),
        )
    };
    let words = builder.add_text_field(
        "words",
        text("words", IndexRecordOption::WithFreqsAndPositions),
    );
    let stems = STEMMED
        .iter()
        .map(|(code, _)| {
            let name = format!("stem_{code}");
            builder.add_text_field(&name, text(&name, IndexRecordOption::WithFreqsAndPositions))
        })
        .collect();
    let grams = builder.add_text_field("grams", text("grams", IndexRecordOption::Basic));
    let fields = Fields {
        id,
        words,
        stems,
        grams,
    };
    (builder.build(), fields)
}

/// Registers the analyzers the schema names.
pub fn register_analyzers(tokenizers: &TokenizerManager) {
    let words = || {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(LONGEST_WORD))
            .filter(LowerCaser)
    };
    tokenizers.register("words", words().filter(AsciiFoldingFilter).build());
    for (code, language) in STEMMED {
        tokenizers.register(
            &format!("stem_{code}"),
            words().filter(Stemmer::new(language)).build(),
        );
    }
    tokenizers.register(
        "grams",
        TextAnalyzer::from(NgramTokenizer::all_ngrams(3, 3).expect("3..=3 is a valid range")),
    );
}

/// The text the trigrams are taken from: ASCII letters lower-cased, and the two other
/// characters that match an ASCII letter ignoring case (KELVIN SIGN `K` and LONG S `ſ`)
/// mapped to it; every other character is kept. Mapping character by character keeps
/// every substring of a literal a substring of its folded text, so the trigrams of an
/// ASCII needle, folded the same way, are among those of every literal that contains it,
/// exactly or ignoring case.
pub fn fold(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{212A}' => 'k',
            '\u{17F}' => 's',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The distinct trigrams of a folded needle (`None` when it has fewer than three
/// characters, or one that is not ASCII: those the index does not narrow).
pub fn needle_grams(needle: &str) -> Option<Vec<String>> {
    if !needle.is_ascii() || needle.len() < 3 {
        return None;
    }
    let folded = fold(needle);
    let mut grams: Vec<String> = folded
        .as_bytes()
        .windows(3)
        .map(|w| String::from_utf8(w.to_vec()).expect("ASCII"))
        .collect();
    grams.sort_unstable();
    grams.dedup();
    Some(grams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_keeps_substrings() {
        assert_eq!(fold("ABC ſK é"), "abc sk é");
        assert_eq!(needle_grams("AbCd").unwrap(), vec!["abc", "bcd"]);
        assert_eq!(needle_grams("ab"), None);
        assert_eq!(needle_grams("héllo"), None);
    }

    #[test]
    fn languages_have_their_stemmed_field() {
        let (_, fields) = schema();
        assert_eq!(fields.stem_field("en-GB"), Some(fields.stems[3]));
        assert_eq!(fields.stem_field("EN"), Some(fields.stems[3]));
        assert_eq!(fields.stem_field("ja"), None);
    }
}
