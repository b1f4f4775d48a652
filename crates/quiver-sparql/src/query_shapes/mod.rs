//! Queries that differ only in their IRIs are parsed once: the parse of a query's *shape*
//! (its text with each IRI cut out) is kept, and the next query of that shape is that
//! parse with its own IRIs put back (the statement cache of relational engines, and
//! Virtuoso's literal parameterization, at the level of SPARQL's algebra).
//!
//! Why: a light query's text costs more to parse than to plan and answer. Profiled on the
//! LUBM emulator's mix over LUBM-100 (two clients, the whole store), spargebra's parser
//! took 28 % of the processor time, planning 34 % with the constants' lookups, the
//! execution 15 %. Applications send a few shapes with other constants (a page per
//! resource, a form's fields, the emulator's templates), whose texts the plan cache
//! (`crate::cache`, keyed by the whole text) never sees twice.
//!
//! What is cut ([`cut`]): every IRI written `<…>`, except in a string, a comment, a
//! `PREFIX` declaration and a literal's datatype (`^^<…>`, which the parser folds into the
//! literal). A text with a `BASE` (its relative IRIs resolve against it), with none of
//! these IRIs, or longer than 16 KiB is parsed as it is. The shape is the text with each
//! IRI replaced by a slot, `<urn:x-quiver-slot:K>`.
//!
//! Why it answers as the parser would: a shape is parsed the second time it is met (a text
//! met once costs its cut only), and kept only if putting the query's own IRIs back into
//! that parse gives exactly what parsing the query gave, but for the names the parser
//! makes up for the variables it adds (an aggregate's). So a `<` that was an operator
//! (`?a<?b&&?c>1`), the blank nodes the parser makes up (`[]`), a slot the parser would
//! have treated otherwise, all fail the check, and the shape is refused (parsed as a whole
//! from then on). A query of a kept shape differs from the checked one only inside
//! its IRIs' brackets, which the parser takes whole as an IRI wherever the shape has one;
//! each is checked as the parser checks it (`NamedNode::new`, or first a quick check of
//! the plain form most IRIs have, a part of the same grammar: `quiver_model::plain_iri`), and one that
//! fails sends the query to the parser, for its error message.

mod cut;
mod fill;

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock, RwLock};

use rustc_hash::{FxHashMap, FxHasher};
use spargebra::{Query, SparqlParser, SparqlSyntaxError};

pub use cut::{cut, Cut};

/// The IRI of slot `K` is this followed by `K`.
pub(crate) const SLOT: &str = "urn:x-quiver-slot:";

/// Shards of the kept shapes (each behind its own lock, so that threads parsing at once
/// seldom meet), and the shapes one keeps at most before it starts afresh.
const SHARDS: usize = 16;
const SHAPES_PER_SHARD: usize = 128;

/// Texts longer than this are parsed as they are: the shapes kept then hold at most
/// 2,048 × 16 KiB of text (and their parses), however long the queries sent.
const LONGEST: usize = 16 * 1024;

/// What is known of a shape.
enum Shape {
    /// Met once: parsed the next time.
    Met,
    /// Its parse, slots in place of its IRIs.
    Parsed(Arc<Query>),
    /// Parsing its queries as a whole is the only way (see the module doc).
    Refused,
}

type Shard = RwLock<FxHashMap<Box<str>, Shape>>;

fn shards() -> &'static [Shard; SHARDS] {
    static SHAPES: OnceLock<[Shard; SHARDS]> = OnceLock::new();
    SHAPES.get_or_init(|| std::array::from_fn(|_| RwLock::default()))
}

fn shard(shape: &str) -> &'static Shard {
    let mut hasher = FxHasher::default();
    shape.hash(&mut hasher);
    &shards()[hasher.finish() as usize % SHARDS]
}

/// The parses a thread filled last, by shape: filling one of them touches nothing another
/// thread writes (no lock, no shared count), so that threads answering light queries at
/// once do not contend here.
const RECENT_PER_THREAD: usize = 32;

/// A shape a thread filled lately: its parse, the slots a fill's walk met, and the last
/// query filled from it once its user is done with it (refilled in place by the next,
/// `fill::refill`).
struct Recent {
    parsed: Arc<Query>,
    slots: Option<fill::Slots>,
    spare: Option<Query>,
}

thread_local! {
    static RECENT: std::cell::RefCell<FxHashMap<Box<str>, Recent>> =
        std::cell::RefCell::default();
}

/// A parsed query. Filled from its shape's parse, it goes back to its thread's recent
/// shapes when dropped, for the next query of its shape to be refilled in place.
#[derive(Debug)]
pub struct Parsed {
    query: Option<Query>,
    /// The shape it was filled from.
    shape: Option<String>,
}

impl Parsed {
    /// A query parsed as a whole (it goes back nowhere).
    pub(crate) fn whole(query: Query) -> Self {
        Self {
            query: Some(query),
            shape: None,
        }
    }
}

impl std::ops::Deref for Parsed {
    type Target = Query;

    fn deref(&self) -> &Query {
        self.query
            .as_ref()
            .expect("a parsed query holds its query until dropped")
    }
}

/// Shapes longer than this keep no query to refill: each thread's spares then hold at
/// most the algebras of 32 texts of 2 KiB (light queries are far shorter).
const SPARE_LONGEST: usize = 2 * 1024;

impl Drop for Parsed {
    fn drop(&mut self) {
        let (Some(shape), Some(query)) = (self.shape.take(), self.query.take()) else {
            return;
        };
        if shape.len() > SPARE_LONGEST {
            return;
        }
        // Dropped while the thread's shapes are in use (or the thread ends): dropped.
        let _ = RECENT.try_with(|recent| {
            if let Ok(mut recent) = recent.try_borrow_mut() {
                if let Some(entry) = recent.get_mut(shape.as_str()) {
                    entry.spare.get_or_insert(query);
                }
            }
        });
    }
}

/// `cut`'s query from the thread's recent shapes, if its shape is one (`None` if not):
/// the shape's last query refilled in place, or a fill of its parse (`Some(None)`: an IRI
/// the parser refuses).
fn from_recent(cut: &Cut<'_>) -> Option<Option<Query>> {
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let entry = recent.get_mut(cut.shape.as_str())?;
        if let (Some(mut query), Some(slots)) = (entry.spare.take(), entry.slots.as_deref()) {
            match fill::refill(&mut query, slots, &cut.iris) {
                fill::Refill::Filled => return Some(Some(query)),
                fill::Refill::Invalid => {
                    // Left as it was: still the next one's to refill.
                    entry.spare = Some(query);
                    return Some(None);
                }
                fill::Refill::Mismatch => {}
            }
        }
        Some(fill_recent(entry, &cut.iris))
    })
}

/// A fill of `entry`'s parse with `iris`, whose slots the entry keeps for the refills.
fn fill_recent(entry: &mut Recent, iris: &[&str]) -> Option<Query> {
    let (query, slots) = fill::fill(&entry.parsed, iris)?;
    entry.slots = Some(slots);
    Some(query)
}

/// `text` parsed (with no base IRI), through the parse of its shape where one is kept.
pub fn parse(text: &str) -> Result<Parsed, SparqlSyntaxError> {
    let Some(cut) = cut(text).filter(|_| text.len() <= LONGEST) else {
        return SparqlParser::new().parse_query(text).map(Parsed::whole);
    };
    match from_recent(&cut) {
        Some(Some(query)) => {
            return Ok(Parsed {
                query: Some(query),
                shape: Some(cut.shape),
            })
        }
        // An IRI the parser refuses: its error says where.
        Some(None) => return SparqlParser::new().parse_query(text).map(Parsed::whole),
        None => {}
    }
    let shard = shard(&cut.shape);
    let met = {
        let shapes = shard.read().unwrap_or_else(|e| e.into_inner());
        match shapes.get(cut.shape.as_str()) {
            Some(Shape::Parsed(parsed)) => {
                let mut entry = Recent {
                    parsed: Arc::clone(parsed),
                    slots: None,
                    spare: None,
                };
                let query = fill_recent(&mut entry, &cut.iris);
                RECENT.with(|recent| {
                    let mut recent = recent.borrow_mut();
                    if recent.len() >= RECENT_PER_THREAD {
                        recent.clear();
                    }
                    recent.insert(cut.shape.as_str().into(), entry);
                });
                return match query {
                    Some(query) => Ok(Parsed {
                        query: Some(query),
                        shape: Some(cut.shape),
                    }),
                    // An IRI the parser refuses: its error says where.
                    None => SparqlParser::new().parse_query(text).map(Parsed::whole),
                };
            }
            Some(Shape::Refused) => {
                return SparqlParser::new().parse_query(text).map(Parsed::whole)
            }
            Some(Shape::Met) => true,
            None => false,
        }
    };
    let query = SparqlParser::new().parse_query(text)?;
    let shape = match met {
        true => parse_shape(&cut, &query),
        false => Shape::Met,
    };
    let mut shapes = shard.write().unwrap_or_else(|e| e.into_inner());
    if shapes.len() >= SHAPES_PER_SHARD && !shapes.contains_key(cut.shape.as_str()) {
        shapes.clear();
    }
    shapes.insert(cut.shape.into_boxed_str(), shape);
    Ok(Parsed::whole(query))
}

/// The shape of `cut` parsed, kept if its IRIs put back give `query` (the text's parse).
fn parse_shape(cut: &Cut<'_>, query: &Query) -> Shape {
    let Ok(parsed) = SparqlParser::new().parse_query(&cut.shape) else {
        return Shape::Refused;
    };
    match fill::fill(&parsed, &cut.iris) {
        Some((filled, _)) if same_but_fresh_names(&filled, query) => {
            Shape::Parsed(Arc::new(parsed))
        }
        _ => Shape::Refused,
    }
}

/// Whether `a` and `b` are the same query but for the names the parser made up for the
/// variables it adds (an aggregate's, a DESCRIBE's: 128 random bits in hexadecimal), the
/// same in both up to their renaming. A query of the shape then takes the parse's names,
/// which cannot be any of its own variables: those are written in the shape.
fn same_but_fresh_names(a: &Query, b: &Query) -> bool {
    a == b || made_up_names_numbered(&format!("{a:?}")) == made_up_names_numbered(&format!("{b:?}"))
}

/// `debug` (a query's `Debug` text) with each name of 24 hexadecimal digits or more
/// replaced by its rank among those names, in the order they first appear.
fn made_up_names_numbered(debug: &str) -> String {
    const NAME: &str = "name: \"";
    let mut numbered = String::with_capacity(debug.len());
    let mut names: FxHashMap<&str, usize> = FxHashMap::default();
    let mut rest = debug;
    while let Some(at) = rest.find(NAME) {
        let (before, after) = rest.split_at(at + NAME.len());
        numbered.push_str(before);
        let end = after.find('"').unwrap_or(after.len());
        let name = &after[..end];
        if name.len() >= 24 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            let next = names.len();
            numbered.push_str(&format!("#{}", names.entry(name).or_insert(next)));
        } else {
            numbered.push_str(name);
        }
        rest = &after[end..];
    }
    numbered.push_str(rest);
    numbered
}

#[cfg(test)]
mod tests;
