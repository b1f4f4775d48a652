//! The owners' part of a load: their terms sorted and numbered (`p × count + owner`), or
//! found in the share they grow, and each origin answered with its terms' ids.

use quiver_model::dictionary::{merge_runs, SortedRun};
use quiver_model::{Dictionary, DictionaryBuilder, Id};

use super::message::*;

/// The terms an owner receives: one sorted run per message (front-coded as it arrives, so
/// the raw text of every term an owner numbers is never held at once), with the origin and
/// the reference of each term by rank.
#[derive(Default)]
pub(super) struct Owned {
    runs: Vec<SortedRun>,
    origins: Vec<(u32, Vec<u64>)>,
}

impl Owned {
    pub(super) fn take(&mut self, message: LoadMessage, state: &Shared) {
        match message {
            LoadMessage::Terms {
                from,
                refs,
                ends,
                bytes,
                ..
            } => match sorted_run(&refs, &ends, &bytes) {
                Ok((run, refs)) => {
                    self.runs.push(run);
                    self.origins.push((from, refs));
                }
                Err(message) => {
                    state.borrow_mut().failure.get_or_insert(message);
                }
            },
            LoadMessage::Failed { message, .. } => {
                state.borrow_mut().failure.get_or_insert(message);
            }
            _ => {}
        }
    }

    /// Merges and numbers the terms, keeps the dictionary, and answers the origins.
    pub(super) fn number(self, index: u32, workers: u32, state: &Shared) -> Vec<LoadMessage> {
        let failed = state.borrow().failure.clone();
        if let Some(message) = failed {
            // Passed on to this worker's later operators.
            return vec![LoadMessage::Failed { to: index, message }];
        }
        let Owned { mut runs, origins } = self;
        let existing = state
            .borrow()
            .existing
            .as_ref()
            .map(|store| store.dictionary().clone());
        let mut runs: Vec<&mut SortedRun> = runs.iter_mut().collect();
        // Each distinct term's id: the next position of a new dictionary, or (a cluster
        // grown) its id in the existing share, else the next position after its terms.
        let numbered = match existing {
            None => {
                let mut builder = DictionaryBuilder::new();
                answer_origins(&mut runs, &origins, workers, |term| {
                    cluster_id(builder.push(term), index, workers)
                })
                .map(|answers| (answers, builder.finish()))
            }
            Some(mut dictionary) => {
                let base = dictionary.local_len();
                let mut new_terms: Vec<std::sync::Arc<[u8]>> = Vec::new();
                answer_origins(&mut runs, &origins, workers, |term| {
                    dictionary.lookup(term).or_else(|| {
                        new_terms.push(term.into());
                        cluster_id(base + new_terms.len() as u64 - 1, index, workers)
                    })
                })
                .and_then(|answers| {
                    if !new_terms.is_empty() {
                        dictionary.append_absent_batch(&new_terms).ok()?;
                    }
                    Some((answers, dictionary))
                })
            }
        };
        match numbered {
            Some((answers, dictionary)) => {
                let (answers, messages) = answers.finish();
                finish_numbering(answers, messages, dictionary, index, workers, state)
            }
            None => too_many(index),
        }
    }
}

/// A message's terms as a sorted run, with their references by rank. An origin sends a
/// sealed chunk's terms, distinct and ascending; any others are sorted here, and a term
/// sent twice in one message is refused.
fn sorted_run(refs: &[u64], ends: &[u32], bytes: &[u8]) -> Result<(SortedRun, Vec<u64>), String> {
    let malformed = || "a message of terms does not hold its terms".to_owned();
    if refs.len() != ends.len() || ends.windows(2).any(|w| w[0] > w[1]) {
        return Err(malformed());
    }
    if ends.last().is_some_and(|&end| end as usize > bytes.len()) {
        return Err(malformed());
    }
    let term = |i: usize| {
        let start = if i == 0 { 0 } else { ends[i - 1] as usize };
        &bytes[start..ends[i] as usize]
    };
    let mut order: Vec<usize> = (0..refs.len()).collect();
    if (1..refs.len()).any(|i| term(i - 1) >= term(i)) {
        order.sort_unstable_by(|&a, &b| term(a).cmp(term(b)));
        if order.windows(2).any(|w| term(w[0]) == term(w[1])) {
            return Err("a message of terms holds one term twice".into());
        }
    }
    let mut builder = DictionaryBuilder::new();
    let refs = order
        .iter()
        .map(|&i| {
            builder.push(term(i));
            refs[i]
        })
        .collect();
    Ok((builder.finish_run(), refs))
}

/// Each origin's ids for the terms of `runs` (`origins[i]`: run `i`'s origin and its terms'
/// refs by rank), `id_of` giving each distinct term's id (`None`: the ids cannot number it).
fn answer_origins(
    runs: &mut [&mut SortedRun],
    origins: &[(u32, Vec<u64>)],
    workers: u32,
    mut id_of: impl FnMut(&[u8]) -> Option<Id>,
) -> Option<Answers> {
    let mut answers = Answers::new(workers);
    let mut id: Id = 0;
    merge_runs::<()>(runs, |term, run, rank| {
        if let Some(term) = term {
            id = id_of(term).ok_or(())?;
        }
        let (from, refs) = &origins[run];
        answers.add(*from, refs[rank as usize], id);
        Ok(())
    })
    .ok()?;
    Some(answers)
}

/// The refs of an origin's terms and their ids, not yet sent.
pub(super) type Answer = (Vec<u64>, Vec<Id>);

/// Each origin's ids for its terms, sent in batches of [`IDS`] as they fill.
struct Answers {
    pending: Vec<Answer>,
    sent: Vec<LoadMessage>,
}

impl Answers {
    fn new(workers: u32) -> Self {
        Answers {
            pending: (0..workers).map(|_| Default::default()).collect(),
            sent: Vec::new(),
        }
    }

    fn add(&mut self, to: u32, reference: u64, id: Id) {
        let (refs, ids) = &mut self.pending[to as usize];
        refs.push(reference);
        ids.push(id);
        if refs.len() >= IDS {
            let (refs, ids) = std::mem::take(&mut self.pending[to as usize]);
            self.sent.push(LoadMessage::Ids { to, refs, ids });
        }
    }

    /// The answers left to send and the batches made already.
    fn finish(self) -> (Vec<Answer>, Vec<LoadMessage>) {
        (self.pending, self.sent)
    }
}

/// The id of an owner's term at `position`, if the ids can number it.
pub(super) fn cluster_id(position: u64, index: u32, workers: u32) -> Option<Id> {
    position
        .checked_mul(u64::from(workers))
        .and_then(|p| p.checked_add(u64::from(index)))
        .and_then(|p| Id::try_from(p).ok())
        .filter(|&id| id < DEFAULT)
}

pub(super) fn too_many(index: u32) -> Vec<LoadMessage> {
    vec![LoadMessage::Failed {
        to: index,
        message: "more distinct terms than the cluster's ids can number; \
                  use a build with the wide-ids feature"
            .into(),
    }]
}

/// The answers left to send, the owner's dictionary kept, its count to every worker.
pub(super) fn finish_numbering(
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
