//! A result's rows decoded to borrowed terms: what
//! [`crate::engine::Solutions::for_each_row_in`] hands its caller (the Python package's
//! columns, a console's table, benchmarks decoding whole results).
//!
//! Decoding cell after cell in row order pays, for each cell, a seek in the dictionary and a
//! UTF-8 check of the term's text, even where the same term came a few rows before (a
//! university down LUBM q2's column, a course down q12's). So a column is decoded a block
//! of rows at a time: each distinct id once (a small table of the ids decoded in the block
//! finds repeats), its text copied into one buffer of the block, checked once; the block's
//! rows then borrow their terms from it. A column whose ids hardly repeat in a block (q7's
//! students, courses and professors) gains nothing from the copy, so it is decoded cell by
//! cell for the next blocks, its cursor holding the current cell's term, and tried again
//! later; so are the columns of a light query's few rows. The streaming writers
//! (`crate::results::stream`) write bytes, not terms, and keep their own column caches.

use std::ops::Range;

use oxrdf::{BaseDirection, Term, TermRef};
use quiver_model::dictionary::Cursor;
use quiver_model::{decode_term, DecodedTerm, Dictionary, Id};

use crate::table::UNBOUND;

/// Rows decoded at once: enough that a column's repeats within them are decoded once, few
/// enough that the block's text stays in the processor's cache while its rows are visited.
const BLOCK_ROWS: usize = 1024;

/// Fewer rows are decoded cell by cell: a light query's few rows repeat few terms, and the
/// blocks' tables and copies cost more than they save (the LUBM mix of `bench emulate`
/// answered 7 % fewer queries per second with its rows decoded by blocks).
const BLOCK_FROM_ROWS: usize = 64;

/// The blocks a column whose ids hardly repeated in one is decoded cell by cell before it
/// is tried by blocks again.
const RETRY_BLOCKS: usize = 8;

/// The entries of a column's table of ids decoded in a block at most (a power of two).
const SEEN: usize = 1024;

/// A cell without a term: unbound, or an id the store does not hold.
const NO_TERM: u32 = u32::MAX;

/// The ids and terms a result's rows are decoded with.
pub(crate) struct Decoding<'a> {
    /// The store's dictionary.
    pub dictionary: &'a Dictionary,
    /// The store's term count: ids at or above it are terms the query computed.
    pub terms: u64,
    /// The terms the query computed, id `UNBOUND - 1 - k` being `locals[k]`.
    pub locals: &'a [Term],
    /// The result's rows (a result without columns has rows too).
    pub rows: usize,
    /// The result's columns of ids, each cut to the result's rows.
    pub columns: Vec<&'a [Id]>,
}

impl Decoding<'_> {
    /// Calls `f` with each row of `rows` (cut to the result's rows) as terms, in order.
    pub(crate) fn for_each_row_in(
        &self,
        rows: Range<usize>,
        mut f: impl FnMut(&[Option<TermRef<'_>>]),
    ) {
        let end = rows.end.min(self.rows);
        let mut at = rows.start.min(end);
        let few = end - at < BLOCK_FROM_ROWS;
        let mut cells: smallvec::SmallVec<[ByCells<'_>; 4]> = self
            .columns
            .iter()
            .map(|_| ByCells {
                cursor: self.dictionary.cursor(),
                last: None,
                triple: None,
                blocks: if few { usize::MAX } else { 0 },
                now: false,
            })
            .collect();
        let mut block = Block::default();
        let mut block_cursor = self.dictionary.cursor();
        // One allocation for all rows: the vector is recycled between rows (its borrows end
        // with each row, so it is emptied and re-typed to a fresh lifetime each time).
        let mut spare: Vec<Option<TermRef<'static>>> = Vec::with_capacity(self.columns.len());
        while at < end {
            let stop = end.min(at + BLOCK_ROWS);
            block.clear();
            for (column, by_cells) in self.columns.iter().zip(&mut cells) {
                let ids = &column[at..stop];
                by_cells.now = by_cells.blocks > 0;
                if by_cells.now {
                    by_cells.blocks = by_cells.blocks.saturating_sub(1);
                } else if block.distinct(ids) * 8 > ids.len() * 7 {
                    by_cells.now = true;
                    by_cells.blocks = RETRY_BLOCKS;
                }
                if by_cells.now {
                    block.skip();
                } else {
                    block.fill(self, &mut block_cursor, ids);
                }
            }
            for row in at..stop {
                for (column, by_cells) in self.columns.iter().zip(&mut cells) {
                    if by_cells.now {
                        self.dictionary.prefetch_ahead(column, row);
                        by_cells.seek(self, column[row]);
                    }
                }
                let mut row_terms: Vec<Option<TermRef<'_>>> =
                    spare.into_iter().map(|_| None).collect();
                row_terms.clear();
                for (c, (column, by_cells)) in self.columns.iter().zip(&cells).enumerate() {
                    row_terms.push(if by_cells.now {
                        by_cells.term(self, column[row])
                    } else {
                        block.term(c, row - at, self.locals)
                    });
                }
                f(&row_terms);
                row_terms.clear();
                spare = row_terms.into_iter().map(|_| None).collect();
            }
            at = stop;
        }
    }
}

/// A column decoded cell by cell: its cursor holds the term of the current row.
struct ByCells<'a> {
    cursor: Cursor<'a>,
    /// The id the cursor moved to last.
    last: Option<Id>,
    /// The current term when it is a triple term (no form borrowed from its bytes).
    triple: Option<Term>,
    /// The blocks still to decode cell by cell after this one.
    blocks: usize,
    /// Whether this block is.
    now: bool,
}

impl ByCells<'_> {
    /// Moves to `id`, unless the row above held it.
    fn seek(&mut self, decoding: &Decoding<'_>, id: Id) {
        if self.last != Some(id) && id != UNBOUND && (id as u64) < decoding.terms {
            self.cursor.seek(id);
            let bytes = self.cursor.last();
            self.triple = (bytes.first() == Some(&quiver_model::term::TAG_TRIPLE))
                .then(|| decode_term(bytes).ok())
                .flatten()
                .map(|triple| triple.to_term());
        }
        self.last = Some(id);
    }

    /// The term of `id`, the id [`ByCells::seek`] moved to last.
    fn term<'s>(&'s self, decoding: &'s Decoding<'_>, id: Id) -> Option<TermRef<'s>> {
        if id == UNBOUND {
            None
        } else if (id as u64) < decoding.terms {
            match &self.triple {
                Some(triple) => Some(triple.as_ref()),
                None => decode_term(self.cursor.last())
                    .ok()
                    .and_then(|t| t.as_term_ref()),
            }
        } else {
            decoding
                .locals
                .get((UNBOUND - 1 - id) as usize)
                .map(Term::as_ref)
        }
    }
}

/// A term of a block, by ranges of its column's text (checked once, when decoded).
enum Shape {
    Blank(Range<usize>),
    Iri(Range<usize>),
    Literal {
        value: Range<usize>,
        language: Option<Range<usize>>,
        datatype: Option<Range<usize>>,
        direction: Option<BaseDirection>,
    },
    /// A triple term, built once: it has no form borrowed from bytes.
    Triple(Term),
    /// A term the query computed: `locals[k]`.
    Local(usize),
}

/// A block of rows: each column's distinct terms and which one each row holds (for the
/// columns decoded by blocks). Its buffers serve every column and block of one visit.
#[derive(Default)]
struct Block {
    /// The text of the distinct terms.
    text: String,
    /// The distinct terms, column after column.
    shapes: Vec<Shape>,
    /// Each cell's term, column after column: an index into `shapes`, or [`NO_TERM`].
    slots: Vec<u32>,
    /// Where each column's cells start in `slots` (none for a column decoded by cells; in
    /// place for eight columns: a light query's few rows, decoded by cells, allocate none
    /// here).
    starts: smallvec::SmallVec<[usize; 8]>,
    /// The column's ids decoded in this block and their slots, by a hash of the id.
    seen: Vec<(Id, u32)>,
}

impl Block {
    /// Empties the block.
    fn clear(&mut self) {
        self.text.clear();
        self.shapes.clear();
        self.slots.clear();
        self.starts.clear();
    }

    /// Passes over the next column: it is decoded cell by cell.
    fn skip(&mut self) {
        self.starts.push(usize::MAX);
    }

    /// How many distinct ids `ids` holds, about (two ids may share a place in the table):
    /// a pass over the ids alone, far cheaper than decoding them.
    fn distinct(&mut self, ids: &[Id]) -> usize {
        let bits = self.empty_table(ids.len());
        let mut distinct = 0;
        for &id in ids {
            let entry = &mut self.seen[place(id, bits)];
            if entry.0 != id {
                *entry = (id, NO_TERM);
                distinct += 1;
            }
        }
        distinct
    }

    /// Empties the table of ids seen for a column of `rows` rows; its size's bits.
    fn empty_table(&mut self, rows: usize) -> u32 {
        // About as many entries as rows (at most SEEN).
        let bits = rows.next_power_of_two().clamp(2, SEEN).trailing_zeros();
        self.seen.clear();
        self.seen.resize(1 << bits, (UNBOUND, NO_TERM));
        bits
    }

    /// Decodes the next column's ids `ids` (one per row of the block), each distinct one
    /// once: an id the row above held, or one a small direct-mapped table of the column's
    /// ids decoded in this block holds, takes its slot.
    fn fill(&mut self, decoding: &Decoding<'_>, cursor: &mut Cursor<'_>, ids: &[Id]) {
        self.starts.push(self.slots.len());
        let bits = self.empty_table(ids.len());
        let mut previous = (UNBOUND, NO_TERM);
        for (at, &id) in ids.iter().enumerate() {
            decoding.dictionary.prefetch_ahead(ids, at);
            let slot = if id == previous.0 {
                previous.1
            } else {
                match self.seen[place(id, bits)] {
                    (seen, slot) if seen == id => slot,
                    _ => {
                        let slot = self.decode(decoding, cursor, id);
                        self.seen[place(id, bits)] = (id, slot);
                        slot
                    }
                }
            };
            previous = (id, slot);
            self.slots.push(slot);
        }
    }

    /// Adds the term of `id` to the block; its slot, or [`NO_TERM`].
    fn decode(&mut self, decoding: &Decoding<'_>, cursor: &mut Cursor<'_>, id: Id) -> u32 {
        let shape = if id == UNBOUND {
            return NO_TERM;
        } else if id as u64 >= decoding.terms {
            let local = (UNBOUND - 1 - id) as usize;
            if local >= decoding.locals.len() {
                return NO_TERM;
            }
            Shape::Local(local)
        } else if !cursor.seek(id) {
            return NO_TERM;
        } else {
            match decode_term(cursor.last()) {
                Ok(triple @ DecodedTerm::Triple { .. }) => Shape::Triple(triple.to_term()),
                Ok(DecodedTerm::Blank(label)) => Shape::Blank(push(&mut self.text, label)),
                Ok(DecodedTerm::Iri(iri)) => Shape::Iri(push(&mut self.text, iri)),
                Ok(DecodedTerm::Literal {
                    value,
                    language,
                    datatype,
                    direction,
                }) => Shape::Literal {
                    value: push(&mut self.text, value),
                    language: language.map(|language| push(&mut self.text, language)),
                    datatype: datatype.map(|datatype| push(&mut self.text, datatype)),
                    direction,
                },
                Err(_) => return NO_TERM,
            }
        };
        self.shapes.push(shape);
        (self.shapes.len() - 1) as u32
    }

    /// The term of column `column` in row `row` of the block.
    fn term<'s>(&'s self, column: usize, row: usize, locals: &'s [Term]) -> Option<TermRef<'s>> {
        let text = |range: &Range<usize>| &self.text[range.clone()];
        match self
            .shapes
            .get(self.slots[self.starts[column] + row] as usize)?
        {
            Shape::Blank(label) => DecodedTerm::Blank(text(label)).as_term_ref(),
            Shape::Iri(iri) => DecodedTerm::Iri(text(iri)).as_term_ref(),
            Shape::Literal {
                value,
                language,
                datatype,
                direction,
            } => DecodedTerm::Literal {
                value: text(value),
                language: language.as_ref().map(text),
                datatype: datatype.as_ref().map(text),
                direction: *direction,
            }
            .as_term_ref(),
            Shape::Triple(triple) => Some(triple.as_ref()),
            Shape::Local(local) => locals.get(*local).map(Term::as_ref),
        }
    }
}

/// The place of `id` in a table of `1 << bits` entries (Fibonacci hashing).
fn place(id: Id, bits: u32) -> usize {
    ((id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Appends `part` to `text`; where it stands there.
fn push(text: &mut String, part: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(part);
    start..text.len()
}
