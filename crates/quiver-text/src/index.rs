//! The text index of a store: built from its dictionary, kept in step with its updates.
//!
//! Documents are the store's string literals, keyed by term id. Ids are assigned once and
//! never reused, so the index only ever grows: after an update, the literals the update
//! appended to the dictionary (ids from the index's watermark up to the dictionary's
//! length) are added ([`TextIndex::catch_up`]), and a reader of an older version keeps the
//! hits below its own length.
//!
//! A store saved in a directory keeps its index in `DIR/text/` in two parts:
//! - the **saved part**, tantivy segment files holding the literals of the last snapshot
//!   (its watermark and the dictionary's fingerprint in the commit's payload);
//! - a **tail** in memory for the literals appended since, which a checkpoint folds into
//!   the saved part once the snapshot that holds them is on disk ([`TextIndex::fold`]).
//!
//! So an update pays no file sync for the index, and the saved part never holds a literal
//! that a crash could give back to the log: on reopening, the literals the log replays
//! are indexed into the tail again. A store whose dictionary changed under the index (a
//! reload into the same directory) is indexed again from scratch, found by the
//! fingerprint. A store in memory has one part, in memory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use quiver_model::term::{
    decode_term, DecodedTerm, TAG_DIRECTIONAL, TAG_LANG, TAG_SIMPLE, TAG_TRIPLE, TAG_TYPED,
};
use quiver_model::{Dictionary, Id};
use quiver_store::Store;
use serde::{Deserialize, Serialize};
use tantivy::collector::Count;
use tantivy::query::{BooleanQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{
    doc, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term,
};

use crate::collect::AllHits;
use crate::error::TextError;
use crate::schema::{fold, needle_grams, register_analyzers, schema, Fields, STEMMED};

/// The directory of a store's text index.
pub const TEXT_DIR: &str = "text";

/// The payload's format: an index of another format is built again.
const FORMAT: u32 = 1;

/// Bytes of indexing memory per writer thread.
const WRITER_BYTES_PER_THREAD: usize = 64 << 20;
/// The tail's writer: one thread, tantivy's smallest arena.
const TAIL_WRITER_BYTES: usize = 15_000_000;

/// What the saved part's commit records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Payload {
    format: u32,
    /// Literals with ids below this are in the part.
    terms: u64,
    fingerprint: u32,
}

/// One tantivy index and its reader.
struct Part {
    index: Index,
    reader: IndexReader,
}

impl Part {
    fn new(index: Index) -> Result<Self, TextError> {
        register_analyzers(index.tokenizers());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(TextError::index("reader"))?;
        Ok(Self { index, reader })
    }

    fn in_memory() -> Result<Self, TextError> {
        Self::new(Index::create_in_ram(schema().0))
    }

    fn writer(&self, threads: usize, bytes: usize) -> Result<IndexWriter, TextError> {
        self.index
            .writer_with_num_threads(threads, bytes)
            .map_err(TextError::index("writer"))
    }
}

/// The writers and watermarks; one change at a time.
struct State {
    /// The saved part's writer, made when first needed (a read-only opener never writes).
    saved_writer: Option<IndexWriter>,
    tail_writer: Option<IndexWriter>,
    /// Literals below this id are in the saved part.
    saved_terms: u64,
    /// Literals below this id are in the index (saved part or tail).
    terms: u64,
    fingerprint: u32,
}

/// What a search reads: both parts as of one moment.
struct Searchers {
    saved: Searcher,
    tail: Option<Searcher>,
    /// The fields a word is looked for in: the words, and the stemmed fields that hold
    /// any (a literal tagged with their language).
    searched: Vec<(Field, String)>,
}

impl Searchers {
    fn new(saved: Searcher, tail: Option<Searcher>, fields: &[(Field, String)]) -> Self {
        let holds_terms = |field: Field| {
            std::iter::once(&saved).chain(&tail).any(|searcher| {
                searcher.segment_readers().iter().any(|segment| {
                    segment
                        .inverted_index(field)
                        .is_ok_and(|index| index.terms().num_terms() > 0)
                })
            })
        };
        let searched = fields
            .iter()
            .enumerate()
            .filter(|(i, (field, _))| *i == 0 || holds_terms(*field))
            .map(|(_, field)| field.clone())
            .collect();
        Self {
            saved,
            tail,
            searched,
        }
    }

    fn each(&self) -> impl Iterator<Item = &Searcher> {
        std::iter::once(&self.saved).chain(self.tail.as_ref())
    }
}

/// What building an index did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildReport {
    /// Literals indexed.
    pub literals: u64,
    pub seconds: f64,
    /// Bytes of the index files (0 in memory).
    pub bytes: u64,
}

/// A store's full-text index. See the module documentation.
pub struct TextIndex {
    fields: Fields,
    /// The stemmed fields, by analyzer name, with the words field first.
    searched: Vec<(Field, String)>,
    saved: Part,
    /// `None` for a store in memory (everything goes to the one part).
    tail: Option<Part>,
    dir: Option<PathBuf>,
    threads: usize,
    state: Mutex<State>,
    searchers: RwLock<Arc<Searchers>>,
    /// Why the index fell behind the store (a failed catch-up or fold): searches fail
    /// with it rather than miss the literals it lacks.
    failed: Mutex<Option<String>>,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextIndex")
            .field("dir", &self.dir)
            .field("terms", &self.state().terms)
            .finish_non_exhaustive()
    }
}

impl TextIndex {
    /// Builds the index of `store`'s literals: in `store_dir/text/` (replacing any index
    /// there), or in memory. `threads` analyse in parallel.
    pub fn build(
        store_dir: Option<&Path>,
        store: &Store,
        threads: usize,
    ) -> Result<(Self, BuildReport), TextError> {
        let started = Instant::now();
        let threads = threads.clamp(1, 16);
        let (saved, tail, dir) = match store_dir {
            Some(store_dir) => {
                let dir = store_dir.join(TEXT_DIR);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir).map_err(TextError::io(dir.display()))?;
                }
                std::fs::create_dir_all(&dir).map_err(TextError::io(dir.display()))?;
                let index = Index::create_in_dir(&dir, schema().0)
                    .map_err(TextError::index(dir.display()))?;
                (Part::new(index)?, Some(Part::in_memory()?), Some(dir))
            }
            None => (Part::in_memory()?, None, None),
        };
        let index = Self::assemble(saved, tail, dir, threads, 0, fingerprint(store))?;
        let literals = {
            let mut state = index.state();
            let mut writer = index
                .saved
                .writer(threads, threads * WRITER_BYTES_PER_THREAD)?;
            let literals = index.add_range(&writer, store.dictionary(), 0, store.terms())?;
            state.terms = store.terms();
            state.saved_terms = store.terms();
            index.commit_saved(&mut writer, &state)?;
            state.saved_writer = Some(writer);
            literals
        };
        index.refresh()?;
        let report = BuildReport {
            literals,
            seconds: started.elapsed().as_secs_f64(),
            bytes: index.bytes(),
        };
        Ok((index, report))
    }

    /// Opens the index saved in `store_dir/text/` and brings it up to `store` (the literals
    /// the log replayed go to the tail; a store whose dictionary is not the one indexed is
    /// indexed again). `None` when the store has no text index.
    /// Opened `read_only`, nothing on disk changes: an index that must be built again is
    /// built in memory.
    pub fn open(
        store_dir: &Path,
        store: &Store,
        threads: usize,
        read_only: bool,
    ) -> Result<Option<Self>, TextError> {
        let dir = store_dir.join(TEXT_DIR);
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let threads = threads.clamp(1, 16);
        match Self::open_saved(&dir, store, threads) {
            Ok(Some(index)) => Ok(Some(index)),
            // Of another store or format, or unreadable (files lost or cut short): the
            // index is built again (in memory when nothing on disk may change).
            Ok(None) | Err(_) => {
                let dir = (!read_only).then_some(store_dir);
                Self::build(dir, store, threads).map(|(index, _)| Some(index))
            }
        }
    }

    /// The saved part in `dir` brought up to `store`, if it is `store`'s.
    fn open_saved(dir: &Path, store: &Store, threads: usize) -> Result<Option<Self>, TextError> {
        let index = Index::open_in_dir(dir).map_err(TextError::index(dir.display()))?;
        let payload = index
            .load_metas()
            .map_err(TextError::index(dir.display()))?
            .payload
            .and_then(|text| serde_json::from_str::<Payload>(&text).ok());
        let current = fingerprint(store);
        let usable = payload.filter(|p| {
            p.format == FORMAT
                && p.fingerprint == current
                && p.terms <= store.terms()
                && index.schema() == schema().0
        });
        let Some(payload) = usable else {
            return Ok(None);
        };
        let index = Self::assemble(
            Part::new(index)?,
            Some(Part::in_memory()?),
            Some(dir.to_path_buf()),
            threads,
            payload.terms,
            current,
        )?;
        index.catch_up(store)?;
        Ok(Some(index))
    }

    fn assemble(
        saved: Part,
        tail: Option<Part>,
        dir: Option<PathBuf>,
        threads: usize,
        terms: u64,
        fingerprint: u32,
    ) -> Result<Self, TextError> {
        let (fields, searched) = {
            let (_, fields) = schema();
            let mut searched = vec![(fields.words, "words".to_owned())];
            for (i, (code, _)) in STEMMED.iter().enumerate() {
                searched.push((fields.stems[i], format!("stem_{code}")));
            }
            (fields, searched)
        };
        let searchers = Searchers::new(
            saved.reader.searcher(),
            tail.as_ref().map(|t| t.reader.searcher()),
            &searched,
        );
        Ok(Self {
            fields,
            searched,
            saved,
            tail,
            dir,
            threads,
            state: Mutex::new(State {
                saved_writer: None,
                tail_writer: None,
                saved_terms: terms,
                terms,
                fingerprint,
            }),
            searchers: RwLock::new(Arc::new(searchers)),
            failed: Mutex::new(None),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Literals below this id are indexed.
    pub fn terms(&self) -> u64 {
        self.state().terms
    }

    /// Bytes of the saved part's files.
    pub fn bytes(&self) -> u64 {
        let Some(dir) = &self.dir else { return 0 };
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Copies the saved part into `store_dir/text/` (a backup of the store: opened with
    /// it, the copy indexes the literals committed since into its tail); returns the bytes
    /// copied. Nothing is committed meanwhile. An index in memory copies nothing.
    pub fn copy_saved(&self, store_dir: &Path) -> Result<u64, TextError> {
        let Some(dir) = &self.dir else {
            return Ok(0);
        };
        let _state = self.state();
        let target = store_dir.join(TEXT_DIR);
        std::fs::create_dir_all(&target).map_err(TextError::io(target.display()))?;
        let mut bytes = 0;
        for entry in std::fs::read_dir(dir).map_err(TextError::io(dir.display()))? {
            let entry = entry.map_err(TextError::io(dir.display()))?;
            let name = entry.file_name();
            // tantivy's lock files belong to this index's writer, not to the copy.
            if name.to_string_lossy().starts_with(".tantivy-") || !entry.path().is_file() {
                continue;
            }
            let copy = target.join(&name);
            bytes += std::fs::copy(entry.path(), &copy)
                .and_then(|bytes| std::fs::File::open(&copy)?.sync_all().map(|()| bytes))
                .map_err(TextError::io(copy.display()))?;
        }
        Ok(bytes)
    }

    /// Indexes the literals `store` appended since the last call (or everything again, if
    /// `store`'s dictionary is not the indexed one).
    pub fn catch_up(&self, store: &Store) -> Result<(), TextError> {
        self.recording(self.catch_up_inner(store))
    }

    fn catch_up_inner(&self, store: &Store) -> Result<(), TextError> {
        let mut state = self.state();
        if fingerprint(store) != state.fingerprint {
            drop(state);
            return self.rebuild(store);
        }
        if store.terms() <= state.terms {
            return Ok(());
        }
        let (from, to) = (state.terms, store.terms());
        match &self.tail {
            Some(tail) => {
                if state.tail_writer.is_none() {
                    state.tail_writer = Some(tail.writer(1, TAIL_WRITER_BYTES)?);
                }
                let writer = state.tail_writer.as_mut().expect("made above");
                self.add_range(writer, store.dictionary(), from, to)?;
                writer.commit().map_err(TextError::index("tail commit"))?;
                state.terms = to;
            }
            None => {
                let mut writer = self.saved_writer(&mut state)?;
                self.add_range(&writer, store.dictionary(), from, to)?;
                state.terms = to;
                state.saved_terms = to;
                let committed = self.commit_saved(&mut writer, &state);
                state.saved_writer = Some(writer);
                committed?;
            }
        }
        drop(state);
        self.refresh()
    }

    /// Moves the tail's literals below `checkpointed.terms()` into the saved part, once
    /// `checkpointed` is saved as the snapshot (those below it can no longer be lost);
    /// the tail keeps the later ones, read from `latest`.
    pub fn fold(&self, checkpointed: &Store, latest: &Store) -> Result<(), TextError> {
        self.recording(self.fold_inner(checkpointed, latest))
    }

    /// `result`, remembered when it is an error: the index is then behind its store.
    fn recording(&self, result: Result<(), TextError>) -> Result<(), TextError> {
        if let Err(error) = &result {
            *self.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(error.to_string());
        }
        result
    }

    /// Fails when the index fell behind its store.
    fn usable(&self) -> Result<(), TextError> {
        match &*self.failed.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(error) => Err(TextError::Behind(error.clone())),
        }
    }

    fn fold_inner(&self, checkpointed: &Store, latest: &Store) -> Result<(), TextError> {
        let Some(tail) = &self.tail else {
            return Ok(());
        };
        let mut state = self.state();
        if fingerprint(checkpointed) != state.fingerprint {
            drop(state);
            return self.rebuild(latest);
        }
        let upto = checkpointed.terms().min(state.terms);
        if upto <= state.saved_terms {
            return Ok(());
        }
        let mut writer = self.saved_writer(&mut state)?;
        let added = self.add_range(&writer, checkpointed.dictionary(), state.saved_terms, upto);
        let previous = state.saved_terms;
        state.saved_terms = upto;
        let committed = added.and_then(|_| self.commit_saved(&mut writer, &state));
        state.saved_writer = Some(writer);
        if let Err(error) = committed {
            state.saved_terms = previous;
            return Err(error);
        }
        // The tail again, holding only what is not saved.
        let mut tail_writer = match state.tail_writer.take() {
            Some(writer) => writer,
            None => tail.writer(1, TAIL_WRITER_BYTES)?,
        };
        tail_writer
            .delete_all_documents()
            .map_err(TextError::index("tail"))?;
        self.add_range(&tail_writer, latest.dictionary(), upto, state.terms)?;
        tail_writer
            .commit()
            .map_err(TextError::index("tail commit"))?;
        state.tail_writer = Some(tail_writer);
        drop(state);
        self.refresh()
    }

    /// Indexes `store` again from scratch, in place (searches go on with the old index
    /// until the new one is committed).
    fn rebuild(&self, store: &Store) -> Result<(), TextError> {
        let mut state = self.state();
        let mut writer = self.saved_writer(&mut state)?;
        let result = (|| {
            writer
                .delete_all_documents()
                .map_err(TextError::index("rebuild"))?;
            self.add_range(&writer, store.dictionary(), 0, store.terms())?;
            state.terms = store.terms();
            state.saved_terms = store.terms();
            state.fingerprint = fingerprint(store);
            self.commit_saved(&mut writer, &state)?;
            if let Some(tail_writer) = &mut state.tail_writer {
                tail_writer
                    .delete_all_documents()
                    .map_err(TextError::index("tail"))?;
                tail_writer.commit().map_err(TextError::index("tail"))?;
            }
            Ok(())
        })();
        state.saved_writer = Some(writer);
        drop(state);
        result?;
        self.refresh()
    }

    fn saved_writer(&self, state: &mut State) -> Result<IndexWriter, TextError> {
        match state.saved_writer.take() {
            Some(writer) => Ok(writer),
            None => self
                .saved
                .writer(self.threads, self.threads * WRITER_BYTES_PER_THREAD),
        }
    }

    fn commit_saved(&self, writer: &mut IndexWriter, state: &State) -> Result<(), TextError> {
        let payload = Payload {
            format: FORMAT,
            terms: state.saved_terms,
            fingerprint: state.fingerprint,
        };
        let mut prepared = writer
            .prepare_commit()
            .map_err(TextError::index("commit"))?;
        prepared.set_payload(&serde_json::to_string(&payload).expect("plain struct"));
        prepared.commit().map_err(TextError::index("commit"))?;
        Ok(())
    }

    /// Adds the string literals with ids in `from..to` of `dictionary`; returns how many.
    fn add_range(
        &self,
        writer: &IndexWriter,
        dictionary: &Dictionary,
        from: u64,
        to: u64,
    ) -> Result<u64, TextError> {
        let base = dictionary.base_len();
        // The sorted part holds its string literals in two runs of ids: simple and
        // language-tagged (tags 3 and 4), then directional ones (tag 6).
        let sorted =
            from.max(dictionary.rank(&[TAG_SIMPLE]))..to.min(dictionary.rank(&[TAG_TYPED]));
        let directional =
            from.max(dictionary.rank(&[TAG_DIRECTIONAL]))..to.min(dictionary.rank(&[TAG_TRIPLE]));
        let appended = from.max(base)..to;
        let mut cursor = dictionary.cursor();
        let mut added = 0;
        for id in sorted.chain(directional).chain(appended) {
            let Some(id) = Id::try_from(id).ok() else {
                break;
            };
            let Some(bytes) = cursor.term(id) else {
                continue;
            };
            if !matches!(
                bytes.first(),
                Some(&TAG_SIMPLE | &TAG_LANG | &TAG_DIRECTIONAL)
            ) {
                continue;
            }
            let Ok(DecodedTerm::Literal {
                value, language, ..
            }) = decode_term(bytes)
            else {
                continue;
            };
            let mut document: TantivyDocument = doc!(
                self.fields.id => u64::from(id),
                self.fields.words => value,
                self.fields.grams => fold(value),
            );
            if let Some(field) = language.and_then(|l| self.fields.stem_field(l)) {
                document.add_text(field, value);
            }
            writer
                .add_document(document)
                .map_err(TextError::index("add"))?;
            added += 1;
        }
        Ok(added)
    }

    /// Reloads the readers and publishes both parts' searchers together.
    fn refresh(&self) -> Result<(), TextError> {
        self.saved
            .reader
            .reload()
            .map_err(TextError::index("reload"))?;
        if let Some(tail) = &self.tail {
            tail.reader.reload().map_err(TextError::index("reload"))?;
        }
        let searchers = Searchers::new(
            self.saved.reader.searcher(),
            self.tail.as_ref().map(|t| t.reader.searcher()),
            &self.searched,
        );
        *self.searchers.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(searchers);
        Ok(())
    }

    fn searchers(&self) -> Arc<Searchers> {
        Arc::clone(&self.searchers.read().unwrap_or_else(|e| e.into_inner()))
    }

    fn query(&self, text: &str, searchers: &Searchers) -> Result<Box<dyn Query>, TextError> {
        crate::query::build(text, &searchers.searched, self.saved.index.tokenizers())
    }

    /// The literals below id `terms` matching `text`, with their scores (the best of the
    /// two parts for a literal in both while a fold runs).
    pub fn search(&self, text: &str, terms: u64) -> Result<Vec<(Id, f32)>, TextError> {
        self.usable()?;
        let searchers = self.searchers();
        let query = self.query(text, &searchers)?;
        let mut hits: Vec<(u64, f32)> = Vec::new();
        for searcher in searchers.each() {
            let found = searcher
                .search(
                    &*query,
                    &AllHits {
                        terms,
                        scored: true,
                    },
                )
                .map_err(TextError::index("search"))?;
            hits.extend(found);
        }
        Ok(dedup(hits))
    }

    /// How many literals match `text` (counted, without scores).
    pub fn count(&self, text: &str) -> Result<u64, TextError> {
        self.usable()?;
        let searchers = self.searchers();
        let query = self.query(text, &searchers)?;
        let mut count = 0;
        for searcher in searchers.each() {
            count += searcher
                .search(&*query, &Count)
                .map_err(TextError::index("count"))? as u64;
        }
        Ok(count)
    }

    fn grams_query(&self, grams: &[String]) -> Box<dyn Query> {
        Box::new(BooleanQuery::new(
            grams
                .iter()
                .map(|gram| {
                    let term = Term::from_field_text(self.fields.grams, gram);
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                    (tantivy::query::Occur::Must, query)
                })
                .collect(),
        ))
    }

    /// The literals below `terms` holding every trigram of `needle` (see
    /// [`quiver_store::TextSearch::candidates`]).
    pub fn candidates(&self, needle: &str, terms: u64) -> Result<Option<Vec<Id>>, TextError> {
        self.usable()?;
        let Some(grams) = needle_grams(needle) else {
            return Ok(None);
        };
        let query = self.grams_query(&grams);
        let mut hits = Vec::new();
        for searcher in self.searchers().each() {
            let found = searcher
                .search(
                    &*query,
                    &AllHits {
                        terms,
                        scored: false,
                    },
                )
                .map_err(TextError::index("search"))?;
            hits.extend(found);
        }
        Ok(Some(dedup(hits).into_iter().map(|(id, _)| id).collect()))
    }

    /// The fewest literals holding one of `needle`'s trigrams (an upper bound of
    /// [`TextIndex::candidates`]).
    pub fn estimate_candidates(&self, needle: &str) -> Option<u64> {
        let grams = needle_grams(needle)?;
        let searchers = self.searchers();
        grams
            .iter()
            .map(|gram| {
                let term = Term::from_field_text(self.fields.grams, gram);
                searchers
                    .each()
                    .map(|s| s.doc_freq(&term).unwrap_or(0))
                    .sum::<u64>()
            })
            .min()
    }
}

/// Hits sorted by id, one per id (the best score).
fn dedup(mut hits: Vec<(u64, f32)>) -> Vec<(Id, f32)> {
    hits.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    hits.dedup_by_key(|hit| hit.0);
    hits.into_iter()
        .filter_map(|(id, score)| Some((Id::try_from(id).ok()?, score)))
        .collect()
}

/// Identifies a dictionary's sorted part (which updates never change): its length and a
/// checksum of its first, middle and last terms.
fn fingerprint(store: &Store) -> u32 {
    let dictionary = store.dictionary();
    let base = dictionary.base_len();
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&base.to_le_bytes());
    for position in [0, base / 2, base.saturating_sub(1)] {
        if position < base {
            if let Some(term) = Id::try_from(position)
                .ok()
                .and_then(|id| dictionary.term(id))
            {
                hasher.update(&term);
            }
        }
    }
    hasher.finalize()
}

impl quiver_store::TextSearch for TextIndex {
    fn search(&self, query: &str, terms: u64) -> Result<Vec<(Id, f32)>, String> {
        TextIndex::search(self, query, terms).map_err(|e| e.to_string())
    }

    fn estimate(&self, query: &str) -> Result<u64, String> {
        self.count(query).map_err(|e| e.to_string())
    }

    fn candidates(&self, needle: &str, terms: u64) -> Result<Option<Vec<Id>>, String> {
        TextIndex::candidates(self, needle, terms).map_err(|e| e.to_string())
    }

    fn estimate_candidates(&self, needle: &str) -> Option<u64> {
        TextIndex::estimate_candidates(self, needle)
    }
}
