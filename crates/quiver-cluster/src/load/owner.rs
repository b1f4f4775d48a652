//! The owners' part of a load: their terms sorted and numbered (`p × count + owner`), or
//! found in the share they grow, and each origin answered with its terms' ids.

use quiver_model::{Dictionary, DictionaryBuilder, Id};
use rayon::prelude::*;

use super::message::*;

/// The terms an owner receives: `(start, length, origin, ref)` into one arena.
#[derive(Default)]
pub(super) struct Owned {
    arena: Vec<u8>,
    entries: Vec<(u64, u32, u32, u64)>,
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
    pub(super) fn number(self, index: u32, workers: u32, state: &Shared) -> Vec<LoadMessage> {
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
                .and_then(|answers| {
                    if !new_terms.is_empty() {
                        dictionary.append_absent_batch(&new_terms).ok()?;
                    }
                    Some((answers, dictionary))
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
pub(super) type Answer = (Vec<u64>, Vec<Id>);

/// Each origin's ids for its terms, `entries` sorted by term, `id_of` giving each distinct
/// term's id (`None`: the ids cannot number it): the answers left to send and the full
/// batches sent already.
pub(super) fn answer_origins<'a>(
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
