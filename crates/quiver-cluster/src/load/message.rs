//! What the load's workers send one another, and what each keeps between its operators.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use quiver_loader::Chunk;
use quiver_model::dictionary::term_owner;
use quiver_model::{Dictionary, Id, ID_BYTES};
use quiver_store::Store;
use serde::{Deserialize, Serialize};

use super::PartitionSummary;

/// The most bytes a message carries (terms, ids or edges), well under timely's first
/// network buffer (1 MiB): a slab whose messages outgrow it doubles its buffers for good,
/// and the load of LUBM-100 on four processes, in messages of up to 5 MiB, left 48 MiB of
/// buffers in each process.
pub(super) const MESSAGE_BYTES: usize = 256 << 10;

/// Ids per message.
pub(super) const IDS: usize = MESSAGE_BYTES / (8 + ID_BYTES);

/// Edges per message (OUT and IN together).
pub(super) const EDGES: usize = MESSAGE_BYTES / (4 * ID_BYTES);

/// The graph of an edge in the default graph (ids stay below the cluster's bound, which
/// is checked to leave this free).
pub(super) const DEFAULT: Id = Id::MAX;

/// Edges for one owner, OUT then IN, `[key vertex, predicate term, neighbour, graph]`.
pub(super) type QuadEdges = (Vec<[Id; 4]>, Vec<[Id; 4]>);

/// What workers send one another while loading; `to` is the worker it goes to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum LoadMessage {
    /// Terms for their owner: `refs[i]` (chunk << 32 | local id) at the origin `from`,
    /// encoded as `bytes[ends[i - 1]..ends[i]]`.
    Terms {
        to: u32,
        from: u32,
        #[serde(with = "quiver_model::wire::block")]
        refs: Vec<u64>,
        #[serde(with = "quiver_model::wire::block")]
        ends: Vec<u32>,
        #[serde(with = "quiver_model::wire::block")]
        bytes: Vec<u8>,
    },
    /// A worker's share could not be read: every worker skips the rest.
    Failed { to: u32, message: String },
    /// The ids of an origin's terms.
    Ids {
        to: u32,
        #[serde(with = "quiver_model::wire::block")]
        refs: Vec<u64>,
        #[serde(with = "quiver_model::wire::block")]
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
        #[serde(with = "quiver_model::wire::block")]
        out: Vec<[Id; 4]>,
        #[serde(with = "quiver_model::wire::block")]
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
    pub(super) fn to(&self) -> u64 {
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
pub(super) struct WorkerState {
    /// Its share: chunks of terms and statements, and their terms' ids once known.
    pub(super) chunks: Vec<Chunk>,
    pub(super) ids: Vec<Vec<Id>>,
    /// The IRIs of its chunks' predicates, by ref.
    pub(super) predicates: HashMap<u64, String>,
    pub(super) statements: u64,
    pub(super) sources: Vec<String>,
    /// Its share of the dictionary, once numbered.
    pub(super) dictionary: Option<Dictionary>,
    pub(super) failure: Option<String>,
    /// Bytes sent to other workers.
    pub(super) sent: u64,
    /// The rdf:type predicate id, once the predicates are known.
    pub(super) rdf_type: Option<u32>,
    /// The partition this load adds to (a cluster grown), opened before parsing.
    pub(super) existing: Option<Store>,
    /// The load's number (worker 0's).
    pub(super) load: u64,
    /// When the worker started, and the moments it reached each step since (seconds).
    pub(super) started: Option<std::time::Instant>,
    pub(super) milestones: Vec<(String, f64)>,
}

impl WorkerState {
    /// Records that the worker reached `step` now.
    pub(super) fn mark(&mut self, step: &str) {
        let at = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        self.milestones.push((step.to_owned(), at));
    }
}

pub(super) type Shared = Rc<RefCell<WorkerState>>;

/// The terms of chunk `number`, batched by owner.
pub(super) fn term_messages(
    index: u32,
    workers: u32,
    number: u32,
    chunk: &Chunk,
) -> Vec<LoadMessage> {
    let mut batches: Vec<(Vec<u64>, Vec<u32>, Vec<u8>)> =
        (0..workers).map(|_| Default::default()).collect();
    let mut messages = Vec::new();
    chunk.for_each_term(|local, term| {
        let to = term_owner(term, workers);
        let (refs, ends, bytes) = &mut batches[to as usize];
        refs.push(u64::from(number) << 32 | u64::from(local));
        bytes.extend_from_slice(term);
        ends.push(bytes.len() as u32);
        if refs.len() * 12 + bytes.len() >= MESSAGE_BYTES {
            let (refs, ends, bytes) = std::mem::take(&mut batches[to as usize]);
            messages.push(LoadMessage::Terms {
                to,
                from: index,
                refs,
                ends,
                bytes,
            });
        }
    });
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
pub(super) fn message_bytes(message: &LoadMessage) -> u64 {
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

pub(super) fn count_sent(state: &Shared, index: u32, message: &LoadMessage) {
    if message.to() != u64::from(index) {
        state.borrow_mut().sent += message_bytes(message);
    }
}
