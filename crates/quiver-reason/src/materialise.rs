//! Semi-naive materialisation on all cores.
//!
//! Round 0 fires the rules on every asserted fact; each later round only on the facts
//! the round before derived (the delta), looking the other premises up in all facts
//! known. A round's delta is cut into chunks that rayon's workers fire independently
//! into their own vectors; the candidates are sorted and deduplicated in parallel, those
//! already known dropped by binary search, and the rest merged into the fact set. The
//! fixpoint is reached when a round derives nothing new. Equal terms (`owl:sameAs`) are
//! reasoned over as their representative, in waves (`equality.rs`).

use std::time::Instant;

use quiver_model::Id;
use rayon::prelude::*;

use crate::equality::{Equality, Mergeable};
use crate::facts::{FactSet, Facts};
use crate::rules::{fire, Out};
use crate::schema::Schema;
use crate::vocabulary::{Terms, Vocabulary};
use crate::{Materialised, Profile, Report, Round};

/// Facts fired per task: large enough to amortise a task, small enough to balance.
const CHUNK: usize = 4096;

/// What the facts of `delta` derive with those of `known`: sorted, without duplicates,
/// known ones included (the caller drops them).
pub(crate) fn fire_round(
    delta: &[[Id; 3]],
    schema: &Schema,
    known: &dyn Facts,
    terms: &impl Terms,
) -> Vec<[Id; 3]> {
    let mut candidates: Vec<[Id; 3]> = delta
        .par_chunks(CHUNK)
        .flat_map_iter(|chunk| {
            let mut out = Out {
                facts: Vec::new(),
                terms,
            };
            for &fact in chunk {
                fire(fact, schema, known, &mut out);
            }
            out.facts
        })
        .collect();
    candidates.par_sort_unstable();
    candidates.dedup();
    candidates
}

/// The closure of `asserted` under `profile`: what it derives that was not asserted.
pub fn materialise(
    asserted: &[[Id; 3]],
    terms: &impl Terms,
    profile: Profile,
    progress: &mut dyn FnMut(&Round),
) -> Materialised {
    let started = Instant::now();
    let vocabulary = Vocabulary::resolve(terms);
    let vocabulary_ids = vocabulary.ids();
    let is_literal = |id: Id| terms.is_literal(id);
    let mergeable = vocabulary
        .same_as
        .filter(|_| profile == Profile::OwlRl)
        .map(|same_as| Mergeable {
            same_as,
            vocabulary: &vocabulary_ids,
            is_literal: &is_literal,
        });
    let mut equality = Equality::default();
    if let Some(mergeable) = &mergeable {
        for (a, b) in mergeable.equalities(asserted) {
            equality.join(a, b);
        }
    }
    let mut rounds = Vec::new();
    // Each wave runs the rules to their fixpoint over the representatives of the
    // equalities known when it starts; one that derives a new equality starts the next
    // over everything known, rewritten.
    let mut restart: Option<Vec<[Id; 3]>> = None;
    let mut asserted_facts = None;
    let (known, derived) = 'waves: loop {
        let rewritten;
        let asserted_now: &[[Id; 3]] = if equality.is_empty() {
            asserted
        } else {
            rewritten = equality.rewrite_all(asserted);
            &rewritten
        };
        let schema = Schema::read(asserted_now, &vocabulary, profile);
        let mut known = FactSet::new(
            restart.take().unwrap_or_else(|| asserted_now.to_vec()),
            schema.looked_up_by_object.clone(),
        );
        asserted_facts.get_or_insert(known.len() as u64);
        let mut derived: Vec<[Id; 3]> = Vec::new();
        if schema.is_empty() && equality.is_empty() {
            break (known, derived);
        }
        // The delta of the last round, as a range of `derived` (round 0: every fact).
        let mut delta_start: Option<usize> = None;
        loop {
            let round_started = Instant::now();
            let delta: &[[Id; 3]] = match delta_start {
                None => known.as_slice(),
                Some(start) => &derived[start..],
            };
            let fired = delta.len() as u64;
            let mut candidates = fire_round(delta, &schema, &known, terms);
            if delta_start.is_none() {
                // The hierarchies' triples join the first round's conclusions.
                candidates.extend_from_slice(&schema.hierarchy);
                candidates.par_sort_unstable();
                candidates.dedup();
            }
            let new: Vec<[Id; 3]> = candidates
                .into_par_iter()
                .filter(|fact| !known.contains(fact))
                .collect();
            let round = Round {
                number: rounds.len() as u32,
                fired,
                derived: new.len() as u64,
                seconds: round_started.elapsed().as_secs_f64(),
            };
            progress(&round);
            rounds.push(round);
            if new.is_empty() {
                break 'waves (known, derived);
            }
            let mut joined = false;
            if let Some(mergeable) = &mergeable {
                for (a, b) in mergeable.equalities(&new) {
                    joined |= equality.join(a, b);
                }
            }
            known.extend(&new);
            if joined {
                restart = Some(equality.rewrite_all(known.as_slice()));
                continue 'waves;
            }
            delta_start = Some(derived.len());
            derived.extend(new);
        }
    };
    let mut derived = if equality.is_empty() {
        // One wave, over the asserted facts themselves: what it added is the answer.
        drop(known);
        derived
    } else {
        drop(derived);
        let mut original = asserted.to_vec();
        original.par_sort_unstable();
        original.dedup();
        asserted_facts = Some(original.len() as u64);
        let closure = equality.expand(known.as_slice(), vocabulary.same_as);
        drop(known);
        closure
            .into_par_iter()
            .filter(|fact| original.binary_search(fact).is_err())
            .collect()
    };
    derived.par_sort_unstable();
    let report = Report {
        profile,
        asserted: asserted_facts.unwrap_or(0),
        derived: derived.len() as u64,
        rounds,
        seconds: started.elapsed().as_secs_f64(),
    };
    Materialised { derived, report }
}
