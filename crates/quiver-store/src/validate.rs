//! Validating a reopened store before any lookup touches it.
//!
//! A snapshot's checksums prove that its files are the ones written, not that they were
//! written by Quiver: a crafted store with valid checksums must still be refused at open
//! rather than panic or answer wrongly later. These checks cover every invariant a lookup,
//! a query or a compaction relies on: ids inside their id spaces, offsets forming a
//! partition of the records, record headers consistent with their lengths, predicates
//! ascending, neighbour lists sorted and distinct, the two directions holding the same
//! triples, the predicate index listing exactly the subjects and objects of each predicate,
//! the class index matching `rdf:type`, and the dictionary's buckets decoding into sorted,
//! valid terms.
//!
//! Everything is linear and runs on all cores. Comparing two sets (OUT against IN, records
//! against the predicate index) would need random lookups; instead both sides are summed
//! as counts plus a commutative sum of a 64-bit mix of each element, which detects any
//! difference except with probability about 2^-64.

use std::ops::Range;

use quiver_model::{Dictionary, Id, PredId};
use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::graph::{Direction, GraphIndex};

/// Vertex slots (or buckets) checked by one task.
const CHUNK: usize = 1 << 14;

/// The id spaces a graph's records must stay inside.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Vertex ids are below this (the number of terms).
    pub vertices: u64,
    /// Predicate ids are below this.
    pub predicates: u64,
    /// Whether the default graph's dense vertex map must cover exactly `vertices`.
    pub dense_covers_all: bool,
    /// A partition's graph (`partition.rs`): its OUT and IN records hold different triples
    /// (those whose subject, resp. object, it owns), so only the OUT side is counted.
    pub partition: bool,
}

/// What one direction's records hold, summed so that two sides can be compared.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Summary {
    /// Edges (neighbour entries).
    edges: u64,
    /// Sum of `mix` over the edges as (subject, predicate, object).
    edge_hash: u64,
    /// (vertex, predicate) keys.
    keys: u64,
    /// Sum of `mix` over the keys.
    key_hash: u64,
}

impl Summary {
    fn merge(self, other: Summary) -> Summary {
        Summary {
            edges: self.edges + other.edges,
            edge_hash: self.edge_hash.wrapping_add(other.edge_hash),
            keys: self.keys + other.keys,
            key_hash: self.key_hash.wrapping_add(other.key_hash),
        }
    }
}

/// A 64-bit mix of three values (splitmix64's finaliser over a combination).
fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut x = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(c.wrapping_mul(0x1656_67B1_9E37_79F9))
        .wrapping_add(c.rotate_left(32));
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl GraphIndex {
    /// Structural checks of the whole index (see [`graph`]), with vertex ids bounded only
    /// by the id width; a reopened store is checked against its own id spaces instead.
    pub fn validate(&self) -> Result<(), String> {
        let limits = Limits {
            vertices: (Id::MAX as u64).saturating_add(1),
            predicates: self.predicates() as u64,
            dense_covers_all: false,
            partition: false,
        };
        graph(self, limits, self.triples)
    }
}

/// Checks one graph's index against `limits` and `triples`, its recorded triple count.
pub(crate) fn graph(graph: &GraphIndex, limits: Limits, triples: u64) -> Result<(), String> {
    let out = adjacency(&graph.out, "out", limits, Direction::Out)?;
    let inn = adjacency(&graph.inn, "in", limits, Direction::In)?;
    if limits.partition {
        if out.edges != triples {
            return Err(format!(
                "{triples} triples recorded, but the out records hold {}",
                out.edges
            ));
        }
    } else if out.edges != triples || inn.edges != triples {
        return Err(format!(
            "{triples} triples recorded, but the records hold {} (out) and {} (in)",
            out.edges, inn.edges
        ));
    }
    if !limits.partition && out.edge_hash != inn.edge_hash {
        return Err("the out and in records do not hold the same triples".into());
    }
    let index = predicate_index(graph, limits)?;
    if index != (out.keys, out.key_hash, inn.keys, inn.key_hash) {
        return Err(
            "predicates.members: the predicate index does not list the subjects and objects of the records"
                .into(),
        );
    }
    Ok(())
}

/// Checks one direction: vertex map, offsets and every record.
fn adjacency(
    adjacency: &Adjacency,
    prefix: &str,
    limits: Limits,
    direction: Direction,
) -> Result<Summary, String> {
    let offsets = &adjacency.offsets[..];
    let words = &adjacency.words[..];
    let slots = offsets.len().saturating_sub(1);
    match &adjacency.vertices {
        None if limits.dense_covers_all && offsets.len() as u64 != limits.vertices + 1 => {
            return Err(format!(
                "{prefix}.offsets: {} entries for {} vertices, expected {}",
                offsets.len(),
                limits.vertices,
                limits.vertices + 1
            ));
        }
        None if slots as u64 > limits.vertices => {
            return Err(format!(
                "{prefix}.offsets: {slots} vertex slots, more than the {} vertices",
                limits.vertices
            ));
        }
        Some(list) => {
            if offsets.len() != list.len() + 1 {
                return Err(format!(
                    "{prefix}.vertices: {} vertices but {} offsets",
                    list.len(),
                    offsets.len()
                ));
            }
            if let Some(i) = list.windows(2).position(|w| w[0] >= w[1]) {
                return Err(format!(
                    "{prefix}.vertices: entries {i} and {} are not increasing",
                    i + 1
                ));
            }
            if let Some(&last) = list.last() {
                if last as u64 >= limits.vertices {
                    return Err(format!("{prefix}.vertices: vertex {last} out of range"));
                }
            }
        }
        None => {}
    }
    if offsets.is_empty() {
        return if words.is_empty() {
            Ok(Summary::default())
        } else {
            Err(format!("{prefix}.offsets: empty, but the records are not"))
        };
    }
    if offsets[0] != 0 || offsets[slots] != words.len() as u64 {
        return Err(format!(
            "{prefix}.offsets: do not span the {} words of the records",
            words.len()
        ));
    }
    let chunks: Vec<Range<usize>> = (0..slots)
        .step_by(CHUNK)
        .map(|start| start..(start + CHUNK).min(slots))
        .collect();
    chunks
        .into_par_iter()
        .map(|range| {
            let mut summary = Summary::default();
            for slot in range.clone() {
                let (start, end) = (offsets[slot], offsets[slot + 1]);
                if start > end || end > words.len() as u64 {
                    return Err(format!(
                        "{prefix}.offsets: entry {slot} ({start}..{end}) is not a range of the records"
                    ));
                }
            }
            for slot in range {
                let (start, end) = (offsets[slot], offsets[slot + 1]);
                let vertex = match &adjacency.vertices {
                    None => slot as u64,
                    Some(list) => list[slot] as u64,
                };
                let record = &words[start as usize..end as usize];
                if record.is_empty() && adjacency.vertices.is_some() {
                    return Err(format!(
                        "{prefix}.words: vertex {vertex} is listed but has no record"
                    ));
                }
                let checked = check_record(record, vertex, limits, direction, &mut summary);
                checked.map_err(|e| format!("{prefix}.words: record of vertex {vertex}: {e}"))?;
            }
            Ok(summary)
        })
        .try_reduce(Summary::default, |a, b| Ok(a.merge(b)))
}

/// Checks the record `[k, p_1, end_1, …, p_k, end_k, neighbours…]` of `vertex`.
fn check_record(
    record: &[Id],
    vertex: u64,
    limits: Limits,
    direction: Direction,
    summary: &mut Summary,
) -> Result<(), String> {
    let Some(&k) = record.first() else {
        return Ok(());
    };
    let k = k as u64;
    if k == 0 {
        return Err("a record without predicates".into());
    }
    let base = k
        .checked_mul(2)
        .and_then(|w| w.checked_add(1))
        .filter(|&base| base <= record.len() as u64)
        .ok_or_else(|| format!("header of {k} predicates longer than the record"))?
        as usize;
    let neighbours = &record[base..];
    if record[base - 1] as u64 != neighbours.len() as u64 {
        return Err(format!(
            "header ends at neighbour {}, the record holds {}",
            record[base - 1],
            neighbours.len()
        ));
    }
    let mut start = 0usize;
    let mut previous: Option<u64> = None;
    for i in 0..k as usize {
        let predicate = record[1 + 2 * i] as u64;
        let end = record[2 + 2 * i] as usize;
        if predicate >= limits.predicates {
            return Err(format!(
                "predicate {predicate} out of range ({} predicates)",
                limits.predicates
            ));
        }
        if previous.is_some_and(|p| p >= predicate) {
            return Err(format!("predicate {predicate} is not in ascending order"));
        }
        previous = Some(predicate);
        if end <= start || end > neighbours.len() {
            return Err(format!(
                "predicate {predicate}: neighbour range {start}..{end} is empty or out of the record"
            ));
        }
        let list = &neighbours[start..end];
        if list.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "predicate {predicate}: neighbours are not sorted and distinct"
            ));
        }
        let last = list[list.len() - 1] as u64;
        if last >= limits.vertices {
            return Err(format!(
                "predicate {predicate}: neighbour {last} out of range ({} vertices)",
                limits.vertices
            ));
        }
        summary.keys += 1;
        summary.key_hash = summary.key_hash.wrapping_add(mix(vertex, predicate, 0));
        // A partition's two directions hold different triples, so their edge hashes are
        // never compared (see [`graph`]): not computed, a cluster's processes open their
        // partitions without a mix per edge.
        if !limits.partition {
            for &neighbour in list {
                let (subject, object) = match direction {
                    Direction::Out => (vertex, neighbour as u64),
                    Direction::In => (neighbour as u64, vertex),
                };
                summary.edge_hash = summary
                    .edge_hash
                    .wrapping_add(mix(subject, predicate, object));
            }
        }
        summary.edges += list.len() as u64;
        start = end;
    }
    Ok(())
}

/// Checks the predicate index's layout and lists; returns the count and hash of its
/// (subject, predicate) and (object, predicate) keys, to compare with the records.
fn predicate_index(graph: &GraphIndex, limits: Limits) -> Result<(u64, u64, u64, u64), String> {
    let offsets = &graph.predicate_offsets[..];
    let members = &graph.predicate_members[..];
    // The predicates of the pairs of slots: all in order, or those listed.
    let ids = graph.predicate_ids.as_deref();
    if let Some(ids) = ids {
        ascending_ids(ids, limits.predicates, "predicates.ids")
            .map_err(|e| e.replace("terms", "predicates"))?;
    }
    let slots = ids.map_or(limits.predicates, |ids| ids.len() as u64);
    let expected = 2 * slots + 1;
    if offsets.len() as u64 != expected {
        return Err(format!(
            "predicates.offsets: {} entries, expected {expected} for {slots} predicates",
            offsets.len(),
        ));
    }
    if offsets[0] != 0 || offsets[offsets.len() - 1] != members.len() as u64 {
        return Err("predicates.offsets: do not span predicates.members".into());
    }
    (0..2 * slots as usize)
        .into_par_iter()
        .map(|slot| {
            let (start, end) = (offsets[slot], offsets[slot + 1]);
            let predicate = ids.map_or((slot / 2) as u64, |ids| ids[slot / 2] as u64);
            let side = if slot % 2 == 0 { "subjects" } else { "objects" };
            if start > end || end > members.len() as u64 {
                return Err(format!(
                    "predicates.offsets: the {side} of predicate {predicate} ({start}..{end}) are out of range"
                ));
            }
            let list = &members[start as usize..end as usize];
            if list.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "predicates.members: the {side} of predicate {predicate} are not sorted and distinct"
                ));
            }
            if let Some(&last) = list.last() {
                if last as u64 >= limits.vertices {
                    return Err(format!(
                        "predicates.members: {side} of predicate {predicate}: vertex {last} out of range"
                    ));
                }
            }
            let hash = list.iter().fold(0u64, |sum, &v| {
                sum.wrapping_add(mix(v as u64, predicate, 0))
            });
            let count = list.len() as u64;
            Ok(if slot % 2 == 0 {
                (count, hash, 0, 0)
            } else {
                (0, 0, count, hash)
            })
        })
        .try_reduce(
            || (0, 0, 0, 0),
            |a, b| {
                Ok((
                    a.0 + b.0,
                    a.1.wrapping_add(b.1),
                    a.2 + b.2,
                    a.3.wrapping_add(b.3),
                ))
            },
        )
}

/// Checks every bucket of the dictionary, in parallel.
pub(crate) fn dictionary(dictionary: &Dictionary) -> Result<(), String> {
    let buckets = dictionary.bucket_count();
    let chunks: Vec<Range<usize>> = (0..buckets)
        .step_by(CHUNK)
        .map(|start| start..(start + CHUNK).min(buckets))
        .collect();
    chunks
        .into_par_iter()
        .try_for_each(|range| dictionary.validate_buckets(range))
        .map_err(|e| format!("dictionary: {e}"))
}

/// Checks that `list` (a section of ids) is strictly increasing and below `limit`.
/// Term ids ([`Id`]) and predicate ids ([`PredId`]) alike, whichever width `Id` has.
pub(crate) fn ascending_ids<T>(list: &[T], limit: u64, what: &str) -> Result<(), String>
where
    T: Copy + Ord + Into<u64> + std::fmt::Display,
{
    if let Some(i) = list.windows(2).position(|w| w[0] >= w[1]) {
        return Err(format!(
            "{what}: entries {i} and {} are not increasing",
            i + 1
        ));
    }
    match list.last() {
        Some(&last) if last.into() >= limit => {
            Err(format!("{what}: id {last} out of range ({limit} terms)"))
        }
        _ => Ok(()),
    }
}

/// The predicate id space must fit [`PredId`].
pub(crate) fn predicate_count(count: usize) -> Result<u64, String> {
    PredId::try_from(count)
        .map(u64::from)
        .map_err(|_| format!("catalog.predicates: {count} predicates exceed the id space"))
}
