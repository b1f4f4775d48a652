//! Replicas kept on disk for the next start: a cluster of processes whose partitions have
//! not changed reads its replicated data ([`crate::replicas`]) back instead of exchanging
//! it again.
//!
//! The exchange is most of a cluster's start (LUBM-1000 on 4 processes of this 2-core
//! machine: 2.1 s of 3.6 s), and its result depends only on the partitions and on what is
//! replicated. So once a process has exchanged its replicas, its first worker writes them
//! before it publishes them (the process's start waits for that, so the queries it
//! coordinates never run beside the write, and a process stopped as it starts leaves its
//! old copy or none) into `replicas-F` beside the layout (`F`: its first partition), a
//! snapshot ([`quiver_snapshot`]: checksummed, written atomically) recording what they were
//! built from: every partition's fingerprint (a digest of its manifest, which changes with
//! any change of the partition: [`quiver_snapshot::manifest_digest`]), the replication and
//! the id width.
//!
//! A copy that does not match the partitions as they are now would answer type checks
//! wrongly, and a process that reads its copy while another waits for the exchange would
//! leave that one with part of the data. So the processes agree first, in one round of a
//! small dataflow ([`agree`]): every worker tells every other its partition's fingerprint
//! and the fingerprints its process's copy was built from (none when it has no readable
//! copy of this replication). Each worker then decides alike, from the same words: the
//! copies are read only when every process has one built from exactly these partitions;
//! otherwise every worker sends its share as before, and the processes whose copy did not
//! match write a new one.
//!
//! A copy is read whole and checked (sorted, its counts) before the agreement, so that a
//! process never promises what it cannot read. A failed write (a full disk) leaves the
//! previous copy, or none, and the next start exchanges again.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use quiver_model::{Id, PredId, ID_BYTES};
use quiver_snapshot::{SnapshotError, SnapshotReader, SnapshotWriter};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use crate::replicas::{Edges, Replicas, Replication, SharedReplicas};
use crate::types::PairTable;

/// Version of the kept copy's meaning.
const FORMAT: u32 = 1;

/// The data file of a kept copy.
const FILE: &str = "replicas";

/// Pairs in one section: a table is written and read in sections of this many pairs, so
/// that no copy of a whole table is made to write it.
const CHUNK: usize = 1 << 22;

/// The directory where the process whose first partition is `first` keeps its replicas.
pub fn kept_dir(dir: &Path, first: u32) -> PathBuf {
    dir.join(format!("replicas-{first}"))
}

/// Removes the copies in `dir` that no process reads of a cluster of `workers` workers per
/// process over `partitions` partitions (`replicas-G` where no process's first partition
/// is `G`): those a cluster of another shape kept on these partitions, each as large as
/// the replicas, which would otherwise stay on disk for good. Returns those removed; a
/// copy that cannot be removed is left (it only takes room).
pub fn remove_strays(dir: &Path, workers: u32, partitions: u32) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let stray = |first: u32| workers == 0 || !first.is_multiple_of(workers) || first >= partitions;
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let first = name
            .to_str()
            .and_then(|n| n.strip_prefix("replicas-"))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok());
        if first.is_some_and(stray)
            && entry.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed.push(entry.path());
        }
    }
    removed.sort();
    removed
}

/// The fingerprint of partition `index` of the partitioned store in `dir`.
pub(crate) fn fingerprint(dir: &Path, index: u32) -> Option<u64> {
    quiver_snapshot::manifest_digest(&quiver_store::partition::partition_dir(dir, index)).ok()
}

/// What a process brings to the agreement on kept copies, shared by its workers, and what
/// comes of it.
#[derive(Debug)]
pub(crate) struct Keeping {
    /// Where the process keeps its copy.
    pub dir: PathBuf,
    /// The fingerprints of its partitions, in order.
    pub fingerprints: Vec<Option<u64>>,
    /// The partitions its copy was built from (empty: no copy).
    pub kept_for: Vec<u64>,
    /// Its copy, read before the workers started; taken by its first worker when every
    /// process keeps one.
    pub kept: std::sync::Mutex<Option<Replicas>>,
    /// What the workers agreed, set by its first worker.
    pub agreement: std::sync::OnceLock<Agreement>,
    /// How the writing of a new copy ended, when one was written.
    pub written: std::sync::OnceLock<Result<(), String>>,
    /// The copies of a cluster of another shape removed as this one started
    /// ([`remove_strays`], by the first process).
    pub removed: Vec<PathBuf>,
}

impl Keeping {
    /// What the process whose partitions are `first..first + count` of the `total` of the
    /// store in `dir` brings: its fingerprints, and its copy of what `replication` names,
    /// if readable. The first process removes the copies no process of this cluster reads
    /// ([`remove_strays`]; the others read only their own).
    pub(crate) fn of_process(
        dir: &Path,
        (first, count, total): (u32, u32, u32),
        replication: &Replication,
        rdf_type: Option<PredId>,
    ) -> Self {
        let removed = if first == 0 {
            remove_strays(dir, count, total)
        } else {
            Vec::new()
        };
        let kept_in = kept_dir(dir, first);
        let kept = replication
            .any()
            .then(|| read(&kept_in, replication, rdf_type))
            .flatten();
        let (kept_for, kept) = match kept {
            Some(Kept {
                partitions,
                replicas,
            }) => (partitions, Some(replicas)),
            None => (Vec::new(), None),
        };
        Keeping {
            dir: kept_in,
            fingerprints: (first..first + count)
                .map(|i| fingerprint(dir, i))
                .collect(),
            kept_for,
            kept: std::sync::Mutex::new(kept),
            agreement: std::sync::OnceLock::new(),
            written: std::sync::OnceLock::new(),
            removed,
        }
    }

    /// A worker's part in the agreement ([`agree`]; `place`: its place among its
    /// process's workers, and whether it is the first): whether every process reads its
    /// copy. The process's first worker records the agreement and publishes its copy in
    /// `replicas`, or drops it.
    pub(crate) fn agree_on(
        &self,
        worker: &mut timely::worker::Worker,
        (place, first): (usize, bool),
        replicas: &SharedReplicas,
    ) -> bool {
        let fingerprint = self.fingerprints.get(place).copied().flatten();
        let agreement = agree(worker, fingerprint, &self.kept_for);
        let everywhere = agreement.kept_everywhere;
        if first {
            let _ = self.agreement.set(agreement);
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take();
            // Published before the exchange's gathering operator runs, which then finds
            // them there; a copy not read gives its memory back now.
            if let (true, Some(kept)) = (everywhere, kept) {
                let _ = replicas.set(kept);
            }
        }
        everywhere
    }

    /// Writes `replicas`, exchanged as `replication` names, as this process's new copy,
    /// when its copy was not built from these partitions (in its first worker, before
    /// they are published: the process's start waits for them, and the queries after it
    /// never for the write).
    pub(crate) fn keep(
        &self,
        replicas: &Replicas,
        replication: &Replication,
        rdf_type: Option<PredId>,
    ) {
        let Some(agreement) = self.agreement.get() else {
            return;
        };
        let Some(partitions) = agreement.partitions.as_deref() else {
            return;
        };
        if agreement.kept_everywhere || partitions == self.kept_for.as_slice() {
            return;
        }
        let written = write(&self.dir, partitions, replication, rdf_type, replicas);
        let _ = self.written.set(written);
    }
}

/// What a kept copy was built from, and how its tables are laid out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Metadata {
    format: u32,
    id_bytes: usize,
    /// The fingerprint of every partition of the cluster, by index.
    partitions: Vec<u64>,
    rdf_type: Option<PredId>,
    types: bool,
    predicates: Vec<PredId>,
    /// The pairs of each table, in [`tables`]' order.
    pairs: Vec<u64>,
}

/// The names of the tables of a replication, in order: the memberships if replicated,
/// then each predicate's edges out and in.
fn tables(replication: &Replication) -> Vec<String> {
    let types = replication.types.then(|| "types".to_owned());
    let edges =
        (0..replication.predicates.len()).flat_map(|k| [format!("out-{k}"), format!("in-{k}")]);
    types.into_iter().chain(edges).collect()
}

/// The pairs of `replicas`' tables, in [`tables`]' order.
fn pair_tables(replicas: &Replicas) -> Vec<&PairTable> {
    let edges = replicas.edges.iter().flat_map(|e| [&e.out, &e.inward]);
    replicas.types.iter().chain(edges).collect()
}

/// A copy read back: the partitions it was built from, and the replicas.
#[derive(Debug)]
pub(crate) struct Kept {
    pub partitions: Vec<u64>,
    pub replicas: Replicas,
}

/// The copy kept in `dir` of what `replication` names, read whole; `None` when there is
/// none, or it is of another replication, build or id width, or unreadable.
pub(crate) fn read(
    dir: &Path,
    replication: &Replication,
    rdf_type: Option<PredId>,
) -> Option<Kept> {
    if !SnapshotReader::exists(dir) {
        return None;
    }
    let reader = SnapshotReader::open(dir).ok()?;
    let metadata: Metadata = serde_json::from_value(reader.metadata().clone()).ok()?;
    let names = tables(replication);
    let fits = metadata.format == FORMAT
        && metadata.id_bytes == ID_BYTES
        && metadata.rdf_type == rdf_type
        && metadata.types == replication.types
        && metadata.predicates == replication.predicates
        && metadata.pairs.len() == names.len();
    if !fits {
        return None;
    }
    let mut read = Vec::with_capacity(names.len());
    for (name, &count) in names.iter().zip(&metadata.pairs) {
        // Grown from the sections read, not from the count the metadata claims.
        let mut pairs = Vec::new();
        for chunk in 0.. {
            let section = format!("{name}.{chunk}");
            if !reader.has_section(FILE, &section) {
                break;
            }
            let ids = reader.column::<Id>(FILE, &section).ok()?;
            pairs.extend(ids.chunks_exact(2).map(|pair| (pair[0], pair[1])));
        }
        if pairs.len() as u64 != count {
            return None;
        }
        read.push(PairTable::of_sorted(pairs)?);
    }
    let mut read = read.into_iter();
    let types = match replication.types {
        true => Some(read.next()?),
        false => None,
    };
    let mut edges = Vec::with_capacity(replication.predicates.len());
    for &predicate in &replication.predicates {
        edges.push(Edges {
            predicate,
            out: read.next()?,
            inward: read.next()?,
        });
    }
    Some(Kept {
        partitions: metadata.partitions,
        replicas: Replicas { types, edges },
    })
}

/// Writes `replicas`, built from the partitions of fingerprints `partitions` as
/// `replication` names, as the copy kept in `dir` (replacing any).
pub(crate) fn write(
    dir: &Path,
    partitions: &[u64],
    replication: &Replication,
    rdf_type: Option<PredId>,
    replicas: &Replicas,
) -> Result<(), String> {
    let names = tables(replication);
    let tables = pair_tables(replicas);
    if names.len() != tables.len() {
        return Err(format!(
            "{}: the replicas are not those of the replication",
            dir.display()
        ));
    }
    let failed = |e: SnapshotError| e.to_string();
    let mut writer = SnapshotWriter::create(dir).map_err(failed)?;
    let mut ids: Vec<Id> = Vec::with_capacity(
        2 * CHUNK.min(tables.iter().map(|t| t.pairs().len()).max().unwrap_or(0)),
    );
    for (name, table) in names.iter().zip(&tables) {
        for (chunk, pairs) in table.pairs().chunks(CHUNK).enumerate() {
            ids.clear();
            ids.extend(pairs.iter().flat_map(|&(a, b)| [a, b]));
            writer
                .column(FILE, &format!("{name}.{chunk}"), &ids)
                .map_err(failed)?;
        }
    }
    let metadata = Metadata {
        format: FORMAT,
        id_bytes: ID_BYTES,
        partitions: partitions.to_vec(),
        rdf_type,
        types: replication.types,
        predicates: replication.predicates.clone(),
        pairs: tables.iter().map(|t| t.pairs().len() as u64).collect(),
    };
    let metadata = serde_json::to_value(metadata).map_err(|e| format!("{}: {e}", dir.display()))?;
    writer.commit(metadata).map_err(failed)?;
    Ok(())
}

/// One worker's word: the worker it is for, the worker it is from, the fingerprint of the
/// sender's partition (`None`: unknown), and the partitions its process's copy was built
/// from (empty: no copy).
type Vote = (u32, u32, Option<u64>, Vec<u64>);

/// What the workers agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Agreement {
    /// Every partition's fingerprint, by index, when all are known.
    pub partitions: Option<Vec<u64>>,
    /// Whether every process keeps a copy built from exactly these partitions.
    pub kept_everywhere: bool,
}

/// The round in which the workers agree whether every process keeps a copy of the
/// replicas built from the partitions as they are (see the module's doc): this worker's
/// partition has `fingerprint`, its process's copy was built from `kept_for`. Every worker
/// of the cluster must call it, at the same place among the dataflows it builds.
pub(crate) fn agree(
    worker: &mut timely::worker::Worker,
    fingerprint: Option<u64>,
    kept_for: &[u64],
) -> Agreement {
    let mut input: InputHandleVec<u64, Vote> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    let votes: Rc<RefCell<Vec<Vote>>> = Rc::default();
    let heard = Rc::clone(&votes);
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary_frontier::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|vote: &Vote| u64::from(vote.0)),
                "KeptReplicas",
                move |_, _| {
                    move |(input, _frontier), _output| {
                        input.for_each(|_, words| heard.borrow_mut().extend(words.drain(..)));
                    }
                },
            )
            .probe_with(&probe);
    });
    let (index, peers) = (worker.index() as u32, worker.peers() as u32);
    for to in 0..peers {
        input.send((to, index, fingerprint, kept_for.to_vec()));
    }
    drop(input);
    worker.step_or_park_while(Some(Duration::from_millis(1)), || !probe.done());
    let votes = votes.take();
    decide(&votes, peers)
}

/// The agreement `votes` (one from each of `peers` workers) make.
fn decide(votes: &[Vote], peers: u32) -> Agreement {
    let mut partitions = vec![None; peers as usize];
    for &(_, from, fingerprint, _) in votes {
        if let Some(slot) = partitions.get_mut(from as usize) {
            *slot = fingerprint;
        }
    }
    let partitions: Option<Vec<u64>> = partitions.into_iter().collect();
    let kept_everywhere = votes.len() == peers as usize
        && partitions
            .as_ref()
            .is_some_and(|all| votes.iter().all(|vote| &vote.3 == all));
    Agreement {
        partitions,
        kept_everywhere,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_copies_of_another_shape_are_removed() {
        let dir = std::env::temp_dir().join(format!("quiver-strays-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for name in [
            "replicas-0",
            "replicas-2",
            "replicas-4",
            "replicas-12",
            "replicas-16",
        ] {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            std::fs::write(dir.join(name).join("replicas"), b"x").unwrap();
        }
        // Not copies: a file of that name, and other names.
        std::fs::write(dir.join("replicas-8"), b"a file").unwrap();
        for name in ["replicas-", "replicas-x1", "partition-3"] {
            std::fs::create_dir_all(dir.join(name)).unwrap();
        }
        // 4 processes × 4 workers over 16 partitions: processes start at 0, 4, 8 and 12.
        let removed = remove_strays(&dir, 4, 16);
        assert_eq!(removed, [dir.join("replicas-16"), dir.join("replicas-2")]);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "partition-3",
                "replicas-",
                "replicas-0",
                "replicas-12",
                "replicas-4",
                "replicas-8",
                "replicas-x1"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn replicas() -> Replicas {
        let pairs = |n: u32, k: u32| -> Vec<(Id, Id)> {
            (0..n)
                .map(|i| (Id::from(i * 3 % n), Id::from(i % k)))
                .collect()
        };
        Replicas {
            types: Some(PairTable::new(pairs(1000, 7))),
            edges: vec![
                Edges {
                    predicate: 3,
                    out: PairTable::new(pairs(50, 5)),
                    inward: PairTable::new(pairs(50, 5).into_iter().map(|(a, b)| (b, a)).collect()),
                },
                Edges {
                    predicate: 9,
                    out: PairTable::new(Vec::new()),
                    inward: PairTable::new(Vec::new()),
                },
            ],
        }
    }

    fn same(a: &Replicas, b: &Replicas) -> bool {
        pair_tables(a)
            .iter()
            .zip(pair_tables(b))
            .all(|(x, y)| x.pairs() == y.pairs())
            && pair_tables(a).len() == pair_tables(b).len()
            && a.edges
                .iter()
                .map(|e| e.predicate)
                .eq(b.edges.iter().map(|e| e.predicate))
    }

    /// A copy reads back as it was written, and only for the replication it holds.
    #[test]
    fn a_kept_copy_reads_back_for_its_replication_only() {
        let dir = std::env::temp_dir().join(format!("quiver-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let replication = Replication {
            types: true,
            predicates: vec![3, 9],
        };
        let written = replicas();
        assert!(read(&dir, &replication, Some(2)).is_none());
        write(&dir, &[11, 12], &replication, Some(2), &written).unwrap();
        let kept = read(&dir, &replication, Some(2)).unwrap();
        assert_eq!(kept.partitions, vec![11, 12]);
        assert!(same(&kept.replicas, &written));
        assert_eq!(
            kept.replicas.types.unwrap().seconds(3).count(),
            written.types.as_ref().unwrap().seconds(3).count()
        );
        // Another replication, or another `rdf:type`: not this copy.
        let other = Replication {
            types: true,
            predicates: vec![3],
        };
        assert!(read(&dir, &other, Some(2)).is_none());
        assert!(read(&dir, &replication, Some(1)).is_none());
        // A written copy replaces the one before.
        write(&dir, &[13, 14], &replication, Some(2), &written).unwrap();
        assert_eq!(
            read(&dir, &replication, Some(2)).unwrap().partitions,
            vec![13, 14]
        );
        // A damaged copy is none.
        let data: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "qvs"))
            .collect();
        assert_eq!(data.len(), 1, "{data:?}");
        let mut bytes = std::fs::read(&data[0]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&data[0], bytes).unwrap();
        assert!(read(&dir, &replication, Some(2)).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The copies are read only when every worker's process keeps one built from exactly
    /// the partitions every worker tells.
    #[test]
    fn copies_are_read_only_when_every_process_keeps_these_partitions() {
        let all = vec![5, 6, 7];
        let votes = |kept: [&[u64]; 3], fingerprints: [Option<u64>; 3]| -> Vec<Vote> {
            (0..3u32)
                .map(|w| (0, w, fingerprints[w as usize], kept[w as usize].to_vec()))
                .collect()
        };
        let known = [Some(5), Some(6), Some(7)];
        let agreed = decide(&votes([&all, &all, &all], known), 3);
        assert_eq!(agreed.partitions.as_deref(), Some(&all[..]));
        assert!(agreed.kept_everywhere);
        // One process without a copy, or with one of other partitions: none is read.
        assert!(!decide(&votes([&all, &[], &all], known), 3).kept_everywhere);
        assert!(!decide(&votes([&all, &all, &[5, 6, 8]], known), 3).kept_everywhere);
        // A partition changed since the copies were made.
        let changed = decide(&votes([&all, &all, &all], [Some(5), Some(9), Some(7)]), 3);
        assert_eq!(changed.partitions, Some(vec![5, 9, 7]));
        assert!(!changed.kept_everywhere);
        // A fingerprint unknown, or a word missing.
        assert!(!decide(&votes([&all, &all, &all], [Some(5), None, Some(7)]), 3).kept_everywhere);
        assert!(!decide(&votes([&all, &all, &all], known)[..2], 3).kept_everywhere);
    }
}
