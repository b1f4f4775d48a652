//! The load's dataflow: four operators, each acting once its input is complete.
//!
//! 1. **Owners** take the terms of every origin's chunks, sort and number their own
//!    (`p × count + owner`), answer each origin with its terms' ids and tell every worker
//!    how many terms they hold (the cluster's id bound is `count × the most`).
//! 2. **Origins** turn their statements into ids and send each OUT edge to its subject's
//!    owner, each IN edge to its object's (its subject's for `rdf:type`), with the
//!    predicates and graph names they use to every worker.
//! 3. **Builders** build their partition from its edges, its share of the dictionary and
//!    the predicates of all, save it, and send its summary to every worker.
//! 4. **Layout**: every worker, with every summary, makes the layout (and, growing a
//!    cluster, puts its new partition in place of the old); the first of each process
//!    returns it, and its process writes it once all its workers have ended.
//!
//! A worker whose share could not be read tells every worker; they all skip the work
//! after it and no layout is written.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::rc::Rc;

use quiver_loader::{Chunk, Progress, DEFAULT_GRAPH};
use quiver_model::dictionary::term_owner;
use quiver_model::{decode_term, DecodedTerm, Dictionary, DictionaryBuilder, Id, ID_BYTES};
use quiver_store::partition::{
    graph_classes, new_layout, owner, partition_dir, GraphClasses, PartitionInfo, SplitEdges,
    PARTITION_HASH,
};
use quiver_store::partition_stats::StatisticsMerger;
use quiver_store::store::RDF_TYPE;
use quiver_store::{Direction, LoadInfo, Store};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Input;
use timely::dataflow::InputHandleVec;

use super::{peak_rss, ClusterLoadError, LoadedCluster, PartitionSummary, Shares};

/// Items per message: terms, ids or edges.
const BATCH: usize = 1 << 16;

/// The graph of an edge in the default graph (ids stay below the cluster's bound, which
/// is checked to leave this free).
const DEFAULT: Id = Id::MAX;

/// Edges for one owner, OUT then IN, `[key vertex, predicate term, neighbour, graph]`.
type QuadEdges = (Vec<[Id; 4]>, Vec<[Id; 4]>);

/// What workers send one another while loading; `to` is the worker it goes to.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum LoadMessage {
    /// Terms for their owner: `refs[i]` (chunk << 32 | local id) at the origin `from`,
    /// encoded as `bytes[ends[i - 1]..ends[i]]`.
    Terms {
        to: u32,
        from: u32,
        refs: Vec<u64>,
        ends: Vec<u32>,
        bytes: Vec<u8>,
    },
    /// A worker's share could not be read: every worker skips the rest.
    Failed { to: u32, message: String },
    /// The ids of an origin's terms.
    Ids {
        to: u32,
        refs: Vec<u64>,
        ids: Vec<Id>,
    },
    /// How many terms owner `from` holds (to every worker).
    Count {
        to: u32,
        from: u32,
        terms: u64,
        /// A number for this load (worker 0's is the load's).
        load: u64,
    },
    /// Edges for their owner, `[key vertex, predicate term, neighbour, graph]`.
    Edges {
        to: u32,
        out: Vec<[Id; 4]>,
        inn: Vec<[Id; 4]>,
    },
    /// The predicates (term id, IRI) and graph names an origin's statements use (to every
    /// worker), and (to itself) the cluster's id bound.
    Vocabulary {
        to: u32,
        predicates: Vec<(Id, String)>,
        graphs: Vec<Id>,
        id_bound: Option<u64>,
    },
    /// A partition saved (to every worker): its summary, or why it was not.
    Saved {
        to: u32,
        summary: Box<Result<PartitionSummary, String>>,
    },
}

impl LoadMessage {
    fn to(&self) -> u64 {
        u64::from(match self {
            LoadMessage::Terms { to, .. }
            | LoadMessage::Failed { to, .. }
            | LoadMessage::Ids { to, .. }
            | LoadMessage::Count { to, .. }
            | LoadMessage::Edges { to, .. }
            | LoadMessage::Vocabulary { to, .. }
            | LoadMessage::Saved { to, .. } => *to,
        })
    }
}

/// What a worker keeps between its operators (they all run on its thread).
#[derive(Default)]
struct WorkerState {
    /// Its share: chunks of terms and statements, and their terms' ids once known.
    chunks: Vec<Chunk>,
    ids: Vec<Vec<Id>>,
    /// The IRIs of its chunks' predicates, by ref.
    predicates: HashMap<u64, String>,
    statements: u64,
    sources: Vec<String>,
    /// Its share of the dictionary, once numbered.
    dictionary: Option<Dictionary>,
    failure: Option<String>,
    /// Bytes sent to other workers.
    sent: u64,
    /// The rdf:type predicate id, once the predicates are known.
    rdf_type: Option<u32>,
    /// The partition this load adds to (a cluster grown), opened before parsing.
    existing: Option<Store>,
    /// The load's number (worker 0's).
    load: u64,
}

type Shared = Rc<RefCell<WorkerState>>;

/// One worker's part of the load; the first worker of each process returns the cluster.
pub(super) fn run(
    worker: &mut timely::worker::Worker,
    dir: &Path,
    shares: &Shares,
    first: usize,
    local: usize,
    grow: bool,
    progress: &(dyn Progress + Send + Sync),
) -> Result<Option<LoadedCluster>, ClusterLoadError> {
    let index = worker.index() as u32;
    let workers = worker.peers() as u32;
    // Leftovers of a grown load that did not finish.
    let _ = std::fs::remove_dir_all(next_dir(dir, index));
    let state: Shared = Rc::default();
    let result: Rc<RefCell<Option<LoadedCluster>>> = Rc::default();
    let writes_layout = (index as usize - first).is_multiple_of(local.max(1));
    let mut input: InputHandleVec<u64, LoadMessage> = InputHandleVec::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let (owners, origins, builders) = (Rc::clone(&state), Rc::clone(&state), Rc::clone(&state));
        let layout = Rc::clone(&state);
        let done = Rc::clone(&result);
        let (dir, layout_dir) = (dir.to_owned(), dir.to_owned());
        let activators = scope;
        let activator = move |address| activators.activator_for(address);
        scope
            .input_from(&mut input)
            .unary_frontier(
                Exchange::new(LoadMessage::to),
                "Owners",
                move |capability, _| {
                    let mut capability = Some(capability);
                    let mut owned = Owned::default();
                    move |(input, frontier), output| {
                        input.for_each(|_, batch| {
                            for message in batch.drain(..) {
                                owned.take(message, &owners);
                            }
                        });
                        if frontier.frontier().is_empty() {
                            if let Some(capability) = capability.take() {
                                let mut session = output.session(&capability);
                                let owned = std::mem::take(&mut owned);
                                for message in owned.number(index, workers, &owners) {
                                    count_sent(&owners, index, &message);
                                    session.give(message);
                                }
                            }
                        }
                    }
                },
            )
            .unary_frontier(
                Exchange::new(LoadMessage::to),
                "Origins",
                move |capability, info| {
                    let mut capability = Some(capability);
                    let mut counts = vec![0u64; workers as usize];
                    let mut sender = EdgeSender::default();
                    let activator = activator(info.address);
                    move |(input, frontier), output| {
                        input.for_each(|_, batch| {
                            for message in batch.drain(..) {
                                take_ids(message, &origins, &mut counts);
                            }
                        });
                        if !frontier.frontier().is_empty() {
                            return;
                        }
                        let Some(held) = capability.as_ref() else {
                            return;
                        };
                        let (messages, last) = sender.step(index, workers, &counts, &origins);
                        let mut session = output.session(held);
                        for message in messages {
                            count_sent(&origins, index, &message);
                            session.give(message);
                        }
                        drop(session);
                        if last {
                            capability = None;
                        } else {
                            activator.activate();
                        }
                    }
                },
            )
            .unary_frontier(
                Exchange::new(LoadMessage::to),
                "Builders",
                move |capability, _| {
                    let mut capability = Some(capability);
                    let mut edges = Edges::default();
                    move |(input, frontier), output| {
                        input.for_each(|_, batch| {
                            for message in batch.drain(..) {
                                edges.take(message);
                            }
                        });
                        if frontier.frontier().is_empty() {
                            if let Some(capability) = capability.take() {
                                let edges = std::mem::take(&mut edges);
                                let summary = build(index, workers, &dir, edges, &builders);
                                let mut session = output.session(&capability);
                                for to in 0..workers {
                                    session.give(LoadMessage::Saved {
                                        to,
                                        summary: Box::new(summary.clone()),
                                    });
                                }
                            }
                        }
                    }
                },
            )
            .sink(Exchange::new(LoadMessage::to), "Layout", {
                let dir = layout_dir;
                let mut saved: BTreeMap<u32, Result<PartitionSummary, String>> = BTreeMap::new();
                let mut finished = false;
                move |(input, frontier)| {
                    input.for_each(|_, batch| {
                        for message in batch.drain(..) {
                            if let LoadMessage::Saved { summary, .. } = message {
                                let summary = *summary;
                                let from = summary.as_ref().map_or(u32::MAX, |s| s.index);
                                saved.insert(from, summary);
                            }
                        }
                    });
                    if frontier.frontier().is_empty() && !finished {
                        finished = true;
                        let outcome = finish_layout(workers, std::mem::take(&mut saved)).and_then(
                            |cluster| {
                                if grow {
                                    replace_partition(&dir, index)?;
                                }
                                Ok(writes_layout.then_some(cluster))
                            },
                        );
                        match outcome {
                            Ok(cluster) => *done.borrow_mut() = cluster,
                            Err(message) => layout.borrow_mut().failure = Some(message),
                        }
                    }
                }
            });
    });
    // The partition this load adds to, then this worker's share, parsed while the dataflow
    // waits; its terms to their owners.
    let existing = match grow {
        true => quiver_store::partition::open_partition(dir, index, workers)
            .map(|(store, _)| Some(store))
            .map_err(|e| e.to_string()),
        false => Ok(None),
    };
    let parsed = existing.and_then(|existing| {
        state.borrow_mut().existing = existing;
        parse_share(shares, index as usize, workers as usize, progress)
    });
    match parsed {
        Ok((mut chunks, statements, sources)) => {
            {
                let mut own = state.borrow_mut();
                own.statements = statements;
                own.sources = sources;
                own.ids = chunks
                    .iter()
                    .map(|c| vec![Id::MAX; c.spans.len()])
                    .collect();
                for (number, chunk) in chunks.iter().enumerate() {
                    for &[_, predicate, _, _] in &chunk.quads {
                        let reference = (number as u64) << 32 | u64::from(predicate);
                        own.predicates.entry(reference).or_insert_with(|| {
                            match decode_term(chunk.term(predicate)) {
                                Ok(DecodedTerm::Iri(iri)) => iri.to_owned(),
                                _ => String::new(),
                            }
                        });
                    }
                }
            }
            for (number, chunk) in chunks.iter_mut().enumerate() {
                let mut sent = 0;
                for message in term_messages(index, workers, number as u32, chunk) {
                    if message.to() != u64::from(index) {
                        sent += message_bytes(&message);
                    }
                    input.send(message);
                }
                state.borrow_mut().sent += sent;
                // The chunk's terms go to their owners: only its statements stay here.
                chunk.arena = Vec::new();
                chunk.spans = Vec::new();
                // Sent on now (a time per chunk), and taken in by the owners before the
                // next chunk's terms pile up beside them.
                input.advance_to(number as u64 + 1);
                worker.step();
            }
            state.borrow_mut().chunks = chunks;
        }
        Err(message) => {
            for to in 0..workers {
                input.send(LoadMessage::Failed {
                    to,
                    message: message.clone(),
                });
            }
        }
    }
    drop(input);
    while worker.step_or_park(None) {}
    if let Some(failure) = state.borrow_mut().failure.take() {
        return Err(ClusterLoadError::Input(failure));
    }
    let loaded = result.borrow_mut().take();
    Ok(loaded)
}

/// Parses worker `index`'s share: its chunks, statements and source names.
fn parse_share(
    shares: &Shares,
    index: usize,
    workers: usize,
    progress: &(dyn Progress + Send + Sync),
) -> Result<(Vec<Chunk>, u64, Vec<String>), String> {
    match shares {
        Shares::Files {
            sources,
            files,
            owners,
            options,
            scoped,
            nonce,
        } => {
            let mine: Vec<quiver_loader::Source> =
                owners[index].iter().map(|&i| sources[i].clone()).collect();
            let prefixes: Vec<Option<String>> = owners[index]
                .iter()
                .map(|&i| scoped.then(|| format!("l{nonce:x}f{}_", files[i])))
                .collect();
            let names = mine.iter().map(|s| s.path.display().to_string()).collect();
            let (chunks, report) = quiver_loader::parse_chunks(&mine, &prefixes, options, progress)
                .map_err(|e| e.to_string())?;
            Ok((chunks, report.statements, names))
        }
        Shares::Lubm { config, threads } => {
            let share = super::lubm_share(*config, index, workers);
            let chunks = quiver_loader::lubm_chunks(share, *threads, progress);
            let statements = chunks.iter().map(|c| c.quads.len() as u64).sum();
            let name = format!(
                "lubm:{} (seed {}, start {})",
                share.universities, share.seed, share.start_index
            );
            Ok((chunks, statements, vec![name]))
        }
    }
}

/// The terms of chunk `number`, batched by owner.
fn term_messages(index: u32, workers: u32, number: u32, chunk: &Chunk) -> Vec<LoadMessage> {
    let mut batches: Vec<(Vec<u64>, Vec<u32>, Vec<u8>)> =
        (0..workers).map(|_| Default::default()).collect();
    let mut messages = Vec::new();
    for local in 0..chunk.spans.len() as u32 {
        let term = chunk.term(local);
        let to = term_owner(term, workers);
        let (refs, ends, bytes) = &mut batches[to as usize];
        refs.push(u64::from(number) << 32 | u64::from(local));
        bytes.extend_from_slice(term);
        ends.push(bytes.len() as u32);
        if refs.len() >= BATCH || bytes.len() >= 64 << 20 {
            let (refs, ends, bytes) = std::mem::take(&mut batches[to as usize]);
            messages.push(LoadMessage::Terms {
                to,
                from: index,
                refs,
                ends,
                bytes,
            });
        }
    }
    for (to, (refs, ends, bytes)) in batches.into_iter().enumerate() {
        if !refs.is_empty() {
            messages.push(LoadMessage::Terms {
                to: to as u32,
                from: index,
                refs,
                ends,
                bytes,
            });
        }
    }
    messages
}

/// Bytes a message carries (what the network moves, bar framing).
fn message_bytes(message: &LoadMessage) -> u64 {
    let id = ID_BYTES as u64;
    match message {
        LoadMessage::Terms {
            refs, ends, bytes, ..
        } => refs.len() as u64 * 8 + ends.len() as u64 * 4 + bytes.len() as u64,
        LoadMessage::Ids { refs, ids, .. } => refs.len() as u64 * 8 + ids.len() as u64 * id,
        LoadMessage::Edges { out, inn, .. } => (out.len() + inn.len()) as u64 * 4 * id,
        LoadMessage::Vocabulary {
            predicates, graphs, ..
        } => {
            predicates
                .iter()
                .map(|(_, iri)| id + iri.len() as u64)
                .sum::<u64>()
                + graphs.len() as u64 * id
        }
        _ => 16,
    }
}

fn count_sent(state: &Shared, index: u32, message: &LoadMessage) {
    if message.to() != u64::from(index) {
        state.borrow_mut().sent += message_bytes(message);
    }
}

/// The terms an owner receives: `(start, length, origin, ref)` into one arena.
#[derive(Default)]
struct Owned {
    arena: Vec<u8>,
    entries: Vec<(u64, u32, u32, u64)>,
}

impl Owned {
    fn take(&mut self, message: LoadMessage, state: &Shared) {
        match message {
            LoadMessage::Terms {
                from,
                refs,
                ends,
                bytes,
                ..
            } => {
                let base = self.arena.len() as u64;
                self.arena.extend_from_slice(&bytes);
                let mut start = 0u32;
                for (reference, end) in refs.into_iter().zip(ends) {
                    self.entries
                        .push((base + u64::from(start), end - start, from, reference));
                    start = end;
                }
            }
            LoadMessage::Failed { message, .. } => {
                state.borrow_mut().failure.get_or_insert(message);
            }
            _ => {}
        }
    }

    /// Sorts and numbers the terms, keeps the dictionary, and answers the origins.
    fn number(self, index: u32, workers: u32, state: &Shared) -> Vec<LoadMessage> {
        let failed = state.borrow().failure.clone();
        if let Some(message) = failed {
            // Passed on to this worker's later operators.
            return vec![LoadMessage::Failed { to: index, message }];
        }
        let Owned { arena, mut entries } = self;
        let term = |&(start, length, _, _): &(u64, u32, u32, u64)| {
            &arena[start as usize..start as usize + length as usize]
        };
        entries.par_sort_unstable_by(|a, b| term(a).cmp(term(b)));
        let existing = state
            .borrow()
            .existing
            .as_ref()
            .map(|store| store.dictionary().clone());
        // Each distinct term's id: the next position of a new dictionary, or (a cluster
        // grown) its id in the existing share, else the next position after its terms.
        let numbered = match existing {
            None => {
                let mut builder = DictionaryBuilder::new();
                answer_origins(&entries, term, workers, |bytes| {
                    cluster_id(builder.push(bytes), index, workers)
                })
                .map(|answers| (answers, builder.finish()))
            }
            Some(mut dictionary) => {
                let base = dictionary.local_len();
                let mut new_terms: Vec<std::sync::Arc<[u8]>> = Vec::new();
                answer_origins(&entries, term, workers, |bytes| {
                    dictionary.lookup(bytes).or_else(|| {
                        new_terms.push(bytes.into());
                        cluster_id(base + new_terms.len() as u64 - 1, index, workers)
                    })
                })
                .map(|answers| {
                    if !new_terms.is_empty() {
                        dictionary.append_absent_batch(&new_terms);
                    }
                    (answers, dictionary)
                })
            }
        };
        match numbered {
            Some(((answers, messages), dictionary)) => {
                finish_numbering(answers, messages, dictionary, index, workers, state)
            }
            None => too_many(index),
        }
    }
}

/// The refs of an origin's terms and their ids, not yet sent.
type Answer = (Vec<u64>, Vec<Id>);

/// Each origin's ids for its terms, `entries` sorted by term, `id_of` giving each distinct
/// term's id (`None`: the ids cannot number it): the answers left to send and the full
/// batches sent already.
fn answer_origins<'a>(
    entries: &[(u64, u32, u32, u64)],
    term: impl Fn(&(u64, u32, u32, u64)) -> &'a [u8],
    workers: u32,
    mut id_of: impl FnMut(&'a [u8]) -> Option<Id>,
) -> Option<(Vec<Answer>, Vec<LoadMessage>)> {
    let mut answers: Vec<Answer> = (0..workers).map(|_| Default::default()).collect();
    let mut messages = Vec::new();
    let mut previous: Option<&[u8]> = None;
    let mut id: Id = 0;
    for entry in entries {
        let bytes = term(entry);
        if previous != Some(bytes) {
            id = id_of(bytes)?;
            previous = Some(bytes);
        }
        let (refs, ids) = &mut answers[entry.2 as usize];
        refs.push(entry.3);
        ids.push(id);
        if refs.len() >= BATCH {
            let (refs, ids) = std::mem::take(&mut answers[entry.2 as usize]);
            messages.push(LoadMessage::Ids {
                to: entry.2,
                refs,
                ids,
            });
        }
    }
    Some((answers, messages))
}

/// The id of an owner's term at `position`, if the ids can number it.
fn cluster_id(position: u64, index: u32, workers: u32) -> Option<Id> {
    position
        .checked_mul(u64::from(workers))
        .and_then(|p| p.checked_add(u64::from(index)))
        .and_then(|p| Id::try_from(p).ok())
        .filter(|&id| id < DEFAULT)
}

fn too_many(index: u32) -> Vec<LoadMessage> {
    vec![LoadMessage::Failed {
        to: index,
        message: "more distinct terms than the cluster's ids can number; \
                  use a build with the wide-ids feature"
            .into(),
    }]
}

/// The answers left to send, the owner's dictionary kept, its count to every worker.
fn finish_numbering(
    answers: Vec<Answer>,
    mut messages: Vec<LoadMessage>,
    dictionary: Dictionary,
    index: u32,
    workers: u32,
    state: &Shared,
) -> Vec<LoadMessage> {
    for (to, (refs, ids)) in answers.into_iter().enumerate() {
        if !refs.is_empty() {
            messages.push(LoadMessage::Ids {
                to: to as u32,
                refs,
                ids,
            });
        }
    }
    let terms = dictionary.local_len();
    state.borrow_mut().dictionary = Some(dictionary);
    let load = {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(index);
        hasher.finish()
    };
    for to in 0..workers {
        messages.push(LoadMessage::Count {
            to,
            from: index,
            terms,
            load,
        });
    }
    messages
}

/// Where a grown load saves partition `index` before it replaces the old one.
fn next_dir(dir: &Path, index: u32) -> std::path::PathBuf {
    dir.join(format!("partition-{index}.next"))
}

/// Puts a grown partition in place of the old one (kept as `.old` until the layout is
/// written).
fn replace_partition(dir: &Path, index: u32) -> Result<(), String> {
    let current = partition_dir(dir, index);
    let old = dir.join(format!("partition-{index}.old"));
    let _ = std::fs::remove_dir_all(&old);
    std::fs::rename(&current, &old)
        .and_then(|()| std::fs::rename(next_dir(dir, index), &current))
        .map_err(|e| format!("{}: {e}", current.display()))
}

/// An origin takes its terms' ids and the owners' counts.
fn take_ids(message: LoadMessage, state: &Shared, counts: &mut [u64]) {
    let mut state = state.borrow_mut();
    match message {
        LoadMessage::Ids { refs, ids, .. } => {
            for (reference, id) in refs.into_iter().zip(ids) {
                let (chunk, local) = ((reference >> 32) as usize, reference as u32 as usize);
                if let Some(slot) = state.ids.get_mut(chunk).and_then(|c| c.get_mut(local)) {
                    *slot = id;
                }
            }
        }
        LoadMessage::Count {
            from, terms, load, ..
        } => {
            if let Some(count) = counts.get_mut(from as usize) {
                *count = terms;
            }
            if from == 0 {
                state.load = load;
            }
        }
        LoadMessage::Failed { message, .. } => {
            state.failure.get_or_insert(message);
        }
        _ => {}
    }
}

/// An origin's statements as edges for their owners, one chunk per activation (so the
/// builders take in each chunk's edges before the next is made), then its vocabulary to
/// every worker.
#[derive(Default)]
struct EdgeSender {
    started: bool,
    next: usize,
    chunks: Vec<Chunk>,
    ids: Vec<Vec<Id>>,
    vocabulary: BTreeMap<Id, String>,
    rdf_type: Option<Id>,
    graphs: BTreeSet<Id>,
    id_bound: u64,
}

impl EdgeSender {
    /// The next messages, and whether they are the last.
    fn step(
        &mut self,
        index: u32,
        workers: u32,
        counts: &[u64],
        state: &Shared,
    ) -> (Vec<LoadMessage>, bool) {
        if !self.started {
            self.started = true;
            let mut state = state.borrow_mut();
            if let Some(message) = state.failure.clone() {
                return (vec![LoadMessage::Failed { to: index, message }], true);
            }
            let most = counts.iter().copied().max().unwrap_or(0);
            self.id_bound = most * u64::from(workers);
            self.chunks = std::mem::take(&mut state.chunks);
            self.ids = std::mem::take(&mut state.ids);
            for (&reference, iri) in &std::mem::take(&mut state.predicates) {
                let (chunk, local) = ((reference >> 32) as usize, reference as u32 as usize);
                self.vocabulary.insert(self.ids[chunk][local], iri.clone());
            }
            self.rdf_type = self
                .vocabulary
                .iter()
                .find(|(_, iri)| iri.as_str() == RDF_TYPE)
                .map(|(&id, _)| id);
        }
        if let Some(chunk) = self.chunks.get_mut(self.next) {
            let quads = std::mem::take(&mut chunk.quads);
            let ids = std::mem::take(&mut self.ids[self.next]);
            self.next += 1;
            return (self.edges(&quads, &ids, workers), false);
        }
        let predicates: Vec<(Id, String)> =
            std::mem::take(&mut self.vocabulary).into_iter().collect();
        let graphs: Vec<Id> = std::mem::take(&mut self.graphs).into_iter().collect();
        let messages = (0..workers)
            .map(|to| LoadMessage::Vocabulary {
                to,
                predicates: predicates.clone(),
                graphs: graphs.clone(),
                id_bound: (to == index).then_some(self.id_bound),
            })
            .collect();
        (messages, true)
    }

    /// One chunk's statements as OUT and IN edges, batched by owner.
    fn edges(&mut self, quads: &[[u32; 4]], ids: &[Id], workers: u32) -> Vec<LoadMessage> {
        let mut batches: Vec<QuadEdges> = (0..workers).map(|_| Default::default()).collect();
        let mut messages = Vec::new();
        let flush = |to: u32, batches: &mut [QuadEdges], messages: &mut Vec<LoadMessage>, all| {
            let (out, inn) = &batches[to as usize];
            let size = out.len() + inn.len();
            if (all && size > 0) || size >= BATCH {
                let (out, inn) = std::mem::take(&mut batches[to as usize]);
                messages.push(LoadMessage::Edges { to, out, inn });
            }
        };
        for &[s, p, o, g] in quads {
            let (s, p, o) = (ids[s as usize], ids[p as usize], ids[o as usize]);
            let g = if g == DEFAULT_GRAPH {
                DEFAULT
            } else {
                let g = ids[g as usize];
                self.graphs.insert(g);
                g
            };
            let at = owner(s, workers);
            batches[at as usize].0.push([s, p, o, g]);
            flush(at, &mut batches, &mut messages, false);
            let keeper = if Some(p) == self.rdf_type { s } else { o };
            let at = owner(keeper, workers);
            batches[at as usize].1.push([o, p, s, g]);
            flush(at, &mut batches, &mut messages, false);
        }
        for to in 0..workers {
            flush(to, &mut batches, &mut messages, true);
        }
        messages
    }
}

/// A builder's edges by graph (`DEFAULT` for the default graph; predicate term ids until
/// the vocabulary is complete), vocabulary and id bound.
#[derive(Default)]
struct Edges {
    graphs_edges: BTreeMap<Id, SplitEdges>,
    predicates: BTreeMap<Id, String>,
    graphs: BTreeSet<Id>,
    id_bound: Option<u64>,
    failure: Option<String>,
}

impl Edges {
    /// Adds an existing partition's edges, predicates and graph names (a cluster grown),
    /// with predicates as term ids like the new edges.
    fn add_partition(&mut self, store: &Store) -> Result<(), String> {
        let iris = store
            .partition_info()
            .map(|info| info.predicates.clone())
            .unwrap_or_default();
        let count = store.predicate_count();
        if iris.len() != count {
            return Err("the partition does not name its predicates".into());
        }
        let terms: Vec<Id> = (0..count).map(|p| store.predicate_term(p as u32)).collect();
        self.predicates.extend(terms.iter().copied().zip(iris));
        let graphs = std::iter::once((DEFAULT, store.graph())).chain(
            store
                .graph_names()
                .filter_map(|name| Some((name, store.named_graph(name)?))),
        );
        for (name, index) in graphs {
            if name != DEFAULT {
                self.graphs.insert(name);
            }
            let (out, inn) = self.graphs_edges.entry(name).or_default();
            for (direction, list) in [(Direction::Out, out), (Direction::In, inn)] {
                index.for_each_vertex(direction, |vertex, record| {
                    for i in 0..record.len() {
                        let (predicate, neighbours) = record.entry(i);
                        let term = terms[predicate as usize];
                        list.extend(neighbours.iter().map(|&n| [vertex, term, n]));
                    }
                });
            }
        }
        Ok(())
    }

    fn take(&mut self, message: LoadMessage) {
        match message {
            LoadMessage::Edges { out, inn, .. } => {
                for (side, edges) in [(0, out), (1, inn)] {
                    for [key, p, other, g] in edges {
                        let graph = self.graphs_edges.entry(g).or_default();
                        let list = if side == 0 {
                            &mut graph.0
                        } else {
                            &mut graph.1
                        };
                        list.push([key, p, other]);
                    }
                }
            }
            LoadMessage::Vocabulary {
                predicates,
                graphs,
                id_bound,
                ..
            } => {
                self.predicates.extend(predicates);
                self.graphs.extend(graphs);
                self.id_bound = self.id_bound.or(id_bound);
            }
            LoadMessage::Failed { message, .. } => {
                self.failure.get_or_insert(message);
            }
            _ => {}
        }
    }
}

/// Builds and saves partition `index`; its summary.
fn build(
    index: u32,
    workers: u32,
    dir: &Path,
    mut edges: Edges,
    state: &Shared,
) -> Result<PartitionSummary, String> {
    if let Some(failure) = edges
        .failure
        .take()
        .or_else(|| state.borrow().failure.clone())
    {
        return Err(failure);
    }
    let existing = state.borrow_mut().existing.take();
    if let Some(existing) = &existing {
        edges.add_partition(existing)?;
    }
    let dictionary = state
        .borrow_mut()
        .dictionary
        .take()
        .ok_or("the partition's dictionary was not numbered")?;
    let id_bound = edges
        .id_bound
        .ok_or("the cluster's id bound did not arrive")?;
    let (ids, iris): (Vec<Id>, Vec<String>) = edges.predicates.into_iter().unzip();
    let mut graphs = edges.graphs_edges;
    // Predicate term ids to predicate ids, in place.
    let missing = std::sync::atomic::AtomicBool::new(false);
    for (out, inn) in graphs.values_mut() {
        out.par_iter_mut()
            .chain(inn.par_iter_mut())
            .for_each(|edge| match ids.binary_search(&edge[1]) {
                Ok(p) => edge[1] = p as Id,
                Err(_) => missing.store(true, std::sync::atomic::Ordering::Relaxed),
            });
    }
    if missing.into_inner() {
        return Err("an edge's predicate is not in the vocabulary".into());
    }
    let default_graph = graphs.remove(&DEFAULT).unwrap_or_default();
    for name in &edges.graphs {
        graphs.entry(*name).or_default();
    }
    if graphs.keys().any(|name| !edges.graphs.contains(name)) {
        return Err("an edge's graph is not in the vocabulary".into());
    }
    let (statements, mut sources) = {
        let state = state.borrow();
        (state.statements, state.sources.clone())
    };
    // The partition's load information counts every load; its summary, this one.
    let mut all_statements = statements;
    if let Some(existing) = &existing {
        all_statements += existing.info().statements;
        sources.splice(0..0, existing.info().sources.iter().cloned());
    }
    let info = LoadInfo {
        statements: all_statements,
        skipped: 0,
        seconds: 0.0,
        sources,
        log_sequence: 0,
        partition: Some(PartitionInfo {
            index,
            count: workers,
            hash: PARTITION_HASH.to_owned(),
            id_bound: Some(id_bound),
            predicates: iris,
            load: Some(format!("{:016x}", state.borrow().load)),
        }),
    };
    let named = graphs.into_iter().collect();
    let store = Store::loaded_partition(dictionary, ids, default_graph, named, info)?;
    // A grown partition is saved beside the old one, which it replaces once every
    // partition is saved.
    let target = match existing {
        Some(_) => next_dir(dir, index),
        None => partition_dir(dir, index),
    };
    let bytes = store.save(&target).map_err(|e| e.to_string())?;
    let sent = state.borrow().sent;
    state.borrow_mut().rdf_type = store.rdf_type();
    Ok(PartitionSummary {
        index,
        statements,
        triples: store.triples(),
        terms: store.dictionary().local_len(),
        bytes,
        sent,
        peak_rss: peak_rss(),
        classes: graph_classes(&store),
        statistics: store.planner_statistics(),
        rdf_type: store.rdf_type(),
        load: store.partition_info().and_then(|i| i.load.clone()),
    })
}

/// With every partition's summary: the cluster and its layout, to write.
fn finish_layout(
    workers: u32,
    saved: BTreeMap<u32, Result<PartitionSummary, String>>,
) -> Result<LoadedCluster, String> {
    let mut partitions = Vec::new();
    for (_, summary) in saved {
        partitions.push(summary?);
    }
    if partitions.len() != workers as usize {
        return Err(format!(
            "{} of {workers} partitions were saved",
            partitions.len()
        ));
    }
    let mut layout = new_layout(workers);
    let mut statistics = StatisticsMerger::default();
    let mut classes: BTreeMap<Option<Id>, BTreeSet<Id>> = BTreeMap::new();
    for partition in &partitions {
        layout.triples += partition.triples;
        layout.terms += partition.terms;
        layout.partition_terms.push(partition.terms);
        statistics.add_statistics(&partition.statistics);
        for graph in &partition.classes {
            classes
                .entry(graph.graph)
                .or_default()
                .extend(graph.classes.iter().copied());
        }
    }
    let rdf_type = partitions.first().and_then(|p| p.rdf_type);
    layout.load = partitions.first().and_then(|p| p.load.clone());
    if partitions.iter().any(|p| p.load != layout.load) {
        return Err("the partitions disagree on which load they are".into());
    }
    layout.statistics = Some(statistics.finish(rdf_type));
    layout.classes = classes
        .into_iter()
        .map(|(graph, classes)| GraphClasses {
            graph,
            classes: classes.into_iter().collect(),
        })
        .collect();
    Ok(LoadedCluster {
        partitions,
        layout,
        seconds: 0.0,
    })
}
