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
//! 4. **Layout**: every worker, with every summary, makes the layout; the first of each
//!    process returns it, and its process writes it once all its workers have ended
//!    (growing a cluster, it first commits its new partitions and puts them in place of
//!    the old: `quiver_store::partition_commit`).
//!
//! A worker whose share could not be read tells every worker; they all skip the work
//! after it and no layout is written.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use quiver_loader::{Chunk, Progress};
use quiver_model::{decode_term, DecodedTerm, Id};
use timely::dataflow::channels::pact::ExchangeCore;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use crate::buffers::OneEach;
use crate::heartbeat::Liveness;

use super::{ClusterLoadError, LoadedCluster, PartitionSummary, Shares};

use super::build::*;
use super::message::*;
use super::origin::*;
use super::owner::*;

/// How many chunks an origin sends ahead of the slowest builder.
const WINDOW: u64 = 4;

/// How long an origin waits before it looks at the builders' progress again.
const WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// One worker's part of the load (its process's workers: `(first, how many)`); the first
/// worker of each process returns the cluster. It gives up once another process is not
/// heard from for [`super::SILENT_AFTER`] (`liveness`: none in one process).
pub(super) fn run(
    worker: &mut timely::worker::Worker,
    dir: &Path,
    shares: &Shares,
    (first, local): (usize, usize),
    grow: bool,
    liveness: Option<&Liveness>,
    progress: &(dyn Progress + Send + Sync),
) -> Result<Option<LoadedCluster>, ClusterLoadError> {
    let index = worker.index() as u32;
    let workers = worker.peers() as u32;
    // Leftovers of a grown load that did not finish.
    let _ = std::fs::remove_dir_all(quiver_store::partition_commit::next_partition_dir(
        dir, index,
    ));
    let state: Shared = Rc::default();
    state.borrow_mut().started = Some(std::time::Instant::now());
    let result: Rc<RefCell<Option<LoadedCluster>>> = Rc::default();
    let writes_layout = (index as usize - first).is_multiple_of(local.max(1));
    let mut input: InputHandleVec<u64, LoadMessage> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    let origins_probe = probe.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        let (owners, origins, builders) = (Rc::clone(&state), Rc::clone(&state), Rc::clone(&state));
        let layout = Rc::clone(&state);
        let done = Rc::clone(&result);
        let dir = dir.to_owned();
        let activators = scope;
        let activator = move |address| activators.activator_for(address);
        scope
            .input_from(&mut input)
            .unary_frontier(
                ExchangeCore::<OneEach<LoadMessage>, _>::new_core(LoadMessage::to),
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
                                let answers = owned.number(index, workers, &owners);
                                owners.borrow_mut().mark("terms numbered");
                                // The terms the owner merged are freed: their pages go
                                // back before the answers are sent.
                                quiver_model::memory::trim_heap();
                                for message in answers {
                                    count_sent(&owners, index, &message);
                                    session.give(message);
                                }
                            }
                        }
                    }
                },
            )
            .unary_frontier(
                ExchangeCore::<OneEach<LoadMessage>, _>::new_core(LoadMessage::to),
                "Origins",
                move |capability, info| {
                    let mut capability = Some(capability);
                    let mut counts = vec![0u64; workers as usize];
                    let mut sender = EdgeSender::default();
                    let activator = activator(info.address);
                    let probe = origins_probe;
                    move |(input, frontier), output| {
                        input.for_each(|_, batch| {
                            for message in batch.drain(..) {
                                take_ids(message, &origins, &mut counts);
                            }
                        });
                        if !frontier.frontier().is_empty() {
                            return;
                        }
                        let Some(held) = capability.as_mut() else {
                            return;
                        };
                        // Flow control: chunk k is sent at time k once every builder has
                        // taken in the edges of the chunks before k − WINDOW, so that what
                        // is in flight (serialised in timely's buffers, which keep their
                        // largest size) stays a few chunks per origin.
                        let time = sender.next_chunk() as u64;
                        if probe.less_than(&time.saturating_sub(WINDOW)) {
                            activator.activate_after(WAIT);
                            return;
                        }
                        held.downgrade(&time);
                        let (messages, last) = sender.step(index, workers, &counts, &origins);
                        let mut session = output.session(held);
                        for message in messages {
                            count_sent(&origins, index, &message);
                            session.give(message);
                        }
                        drop(session);
                        if last {
                            origins.borrow_mut().mark("edges sent");
                            capability = None;
                        } else {
                            activator.activate();
                        }
                    }
                },
            )
            .unary_frontier(
                ExchangeCore::<OneEach<LoadMessage>, _>::new_core(LoadMessage::to),
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
                        // Held at what may still arrive, so that the probe tells the
                        // origins which chunks every builder has taken in.
                        if let (Some(held), Some(&time)) =
                            (capability.as_mut(), frontier.frontier().first())
                        {
                            held.downgrade(&time);
                        }
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
            .probe_with(&probe)
            .sink(
                ExchangeCore::<OneEach<LoadMessage>, _>::new_core(LoadMessage::to),
                "Layout",
                {
                    let mut saved: BTreeMap<u32, Result<PartitionSummary, String>> =
                        BTreeMap::new();
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
                            let outcome = finish_layout(workers, std::mem::take(&mut saved))
                                .map(|cluster| writes_layout.then_some(cluster));
                            match outcome {
                                Ok(cluster) => *done.borrow_mut() = cluster,
                                Err(message) => layout.borrow_mut().failure = Some(message),
                            }
                        }
                    }
                },
            );
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
            state.borrow_mut().mark("parsed");
            // The parse's blocks and tables are freed: give them back before the exchange.
            quiver_model::memory::trim_heap();
            {
                let mut own = state.borrow_mut();
                own.statements = statements;
                own.sources = sources;
                own.ids = chunks
                    .iter()
                    .map(|c| vec![Id::MAX; c.term_count()])
                    .collect();
                for (number, chunk) in chunks.iter().enumerate() {
                    for &[_, predicate, _, _] in &chunk.quads {
                        let reference = (number as u64) << 32 | u64::from(predicate);
                        own.predicates.entry(reference).or_insert_with(|| {
                            match decode_term(&chunk.term(predicate)) {
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
                chunk.release_terms();
                // Sent on now (a time per chunk), and taken in by the owners before the
                // next chunk's terms pile up beside them.
                input.advance_to(number as u64 + 1);
                worker.step();
            }
            let mut own = state.borrow_mut();
            own.chunks = chunks;
            own.mark("terms sent");
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
    // Woken at least every beat, to hear whether the other processes are still there.
    while worker.step_or_park(Some(crate::heartbeat::BEAT)) {
        if let Some(gone) = liveness.and_then(|l| l.unheard(super::SILENT_AFTER)) {
            // Timely steps a worker's dataflows to their end once it returns: this one
            // would wait for the silent process.
            for dataflow in worker.installed_dataflows() {
                worker.drop_dataflow(dataflow);
            }
            return Err(ClusterLoadError::Gone(gone));
        }
    }
    if let Some(failure) = state.borrow_mut().failure.take() {
        return Err(ClusterLoadError::Input(failure));
    }
    quiver_model::memory::trim_heap();
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
