//! A user's text query as a tantivy query.
//!
//! The grammar is tantivy's (`tantivy::query_grammar`): words, `"phrases"`, `AND`, `OR`,
//! `NOT`, `+`/`-`, parentheses and `^boost`. Words written side by side must all occur
//! (`red car` is `red AND car`, as a filter in SPARQL is read), and a word ending in `*` is
//! a prefix (`univ*`), alone or ending a phrase. tantivy's own query parser joins words by
//! OR and refuses a prefix of one word, so the tree is turned into a query here. Each word
//! or phrase is looked for in the `words` field and in the stemmed field of every language
//! present, and a literal scores the best of them (a disjunction max).

use std::ops::Bound;

use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, DisjunctionMaxQuery, EmptyQuery, InvertedIndexRangeQuery,
    Occur, PhrasePrefixQuery, PhraseQuery, Query, TermQuery,
};
use tantivy::query_grammar::{Delimiter, UserInputAst, UserInputLeaf, UserInputLiteral};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TokenizerManager;
use tantivy::Term;

use crate::error::TextError;

/// Builds the query for `text`, looking for words in `fields` (analysed by their own
/// analyzers from `tokenizers`).
pub fn build(
    text: &str,
    fields: &[(Field, String)],
    tokenizers: &TokenizerManager,
) -> Result<Box<dyn Query>, TextError> {
    let ast = tantivy::query_grammar::parse_query(text)
        .map_err(|_| TextError::Query(format!("`{text}` is not a text query")))?;
    if all_negative(&ast) {
        return Err(TextError::Query(format!(
            "`{text}` only excludes words: say what to look for as well"
        )));
    }
    let builder = Builder { fields, tokenizers };
    builder.ast(&ast, text)
}

struct Builder<'a> {
    fields: &'a [(Field, String)],
    tokenizers: &'a TokenizerManager,
}

impl Builder<'_> {
    fn ast(&self, ast: &UserInputAst, text: &str) -> Result<Box<dyn Query>, TextError> {
        Ok(match ast {
            UserInputAst::Clause(clauses) => {
                if clauses.is_empty() {
                    return Err(TextError::Query(format!("`{text}` has no words")));
                }
                let mut parts = clauses
                    .iter()
                    .map(|(occur, ast)| Ok((occur.unwrap_or(Occur::Must), self.ast(ast, text)?)))
                    .collect::<Result<Vec<_>, TextError>>()?;
                // `NOT x` inside a clause (`a AND NOT x` is `+a +(-x)`): everything but x.
                if parts.iter().all(|(occur, _)| *occur == Occur::MustNot) {
                    parts.push((Occur::Must, Box::new(AllQuery)));
                }
                Box::new(BooleanQuery::new(parts))
            }
            UserInputAst::Boost(inner, boost) => {
                Box::new(BoostQuery::new(self.ast(inner, text)?, boost.0 as f32))
            }
            UserInputAst::Leaf(leaf) => match &**leaf {
                UserInputLeaf::Literal(literal) => self.literal(literal)?,
                UserInputLeaf::All => Box::new(AllQuery),
                other => {
                    return Err(TextError::Query(format!(
                        "`{other:?}` in `{text}`: text queries take words, prefixes and phrases"
                    )))
                }
            },
        })
    }

    fn literal(&self, literal: &UserInputLiteral) -> Result<Box<dyn Query>, TextError> {
        if let Some(field) = &literal.field_name {
            return Err(TextError::Query(format!(
                "`{field}:` names a field; text queries have none (quote text with a colon)"
            )));
        }
        // The grammar keeps the `*` of an unquoted word in the word (`univers*`).
        let (phrase, prefix) = match literal.phrase.strip_suffix('*') {
            Some(stem) if literal.delimiter == Delimiter::None => (stem, true),
            _ => (literal.phrase.as_str(), literal.prefix),
        };
        let mut per_field: Vec<Box<dyn Query>> = Vec::new();
        for (field, analyzer) in self.fields {
            let Some(mut analyzer) = self.tokenizers.get(analyzer) else {
                continue;
            };
            let mut terms: Vec<(usize, Term)> = Vec::new();
            let mut stream = analyzer.token_stream(phrase);
            stream.process(&mut |token| {
                terms.push((token.position, Term::from_field_text(*field, &token.text)))
            });
            let query: Box<dyn Query> = match (terms.len(), prefix) {
                (0, _) => continue,
                (1, true) => {
                    // The words from `word` up to `word` followed by the last character: a
                    // range of the term dictionary (no automaton to compile).
                    let word = terms[0].1.value().as_str().unwrap_or_default().to_owned();
                    let end = format!("{word}{}", char::MAX);
                    Box::new(InvertedIndexRangeQuery::new(
                        Bound::Included(terms.pop().expect("one term").1),
                        Bound::Excluded(Term::from_field_text(*field, &end)),
                    ))
                }
                (1, false) => Box::new(TermQuery::new(
                    terms.pop().expect("one term").1,
                    IndexRecordOption::WithFreqs,
                )),
                (_, true) => Box::new(PhrasePrefixQuery::new_with_offset(terms)),
                (_, false) => Box::new(PhraseQuery::new_with_offset_and_slop(terms, literal.slop)),
            };
            per_field.push(query);
        }
        Ok(match per_field.len() {
            0 => Box::new(EmptyQuery),
            1 => per_field.pop().expect("one query"),
            _ => Box::new(DisjunctionMaxQuery::new(per_field)),
        })
    }
}

/// Whether a query only excludes (it would match nothing).
fn all_negative(ast: &UserInputAst) -> bool {
    match ast {
        UserInputAst::Clause(clauses) => {
            !clauses.is_empty()
                && clauses
                    .iter()
                    .all(|(occur, ast)| *occur == Some(Occur::MustNot) || all_negative(ast))
        }
        UserInputAst::Boost(inner, _) => all_negative(inner),
        UserInputAst::Leaf(_) => false,
    }
}
