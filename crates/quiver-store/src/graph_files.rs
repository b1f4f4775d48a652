//! Where a graph's arrays lie in a snapshot: files of its own, or a pack shared with other
//! small named graphs.
//!
//! A graph's index is up to nine arrays (see [`ARRAYS`]; a dense vertex map has no vertex
//! list, a predicate index over all predicates no `predicates.ids`). The default graph, the
//! entailed graph and every named graph of [`PACKED_GRAPH_BYTES`] or more keep files of
//! their own ([`save_graph`]): `out.*` and the predicate index in `graph-<name>`, and
//! `in.*` beside it in `graph-<name>.in` when it holds 1 MiB or more, the two written at
//! once on threads of their own.
//!
//! Smaller named graphs share packs, `graph-pack-<k>` ([`save_pack`]): each array of the
//! pack is the concatenation of its graphs' arrays, in graph order, and the section
//! `graphs` lists, per graph, its number and how many values it has in each array. A
//! graph's arrays are then views of the pack's mapping, exactly as its own file's would be
//! (offsets inside a graph's records count from its own first word, so nothing is
//! rewritten). A store of 100,000 small named graphs used to write as many files, held open
//! at once until the commit (more than the usual limit of 1,024 open files) and each
//! fsynced and mapped on its own: its files are now a pack per 64 MiB.

use quiver_model::{Column, Id, PredId};
use quiver_snapshot::{FileSections, SnapshotError, SnapshotReader, SnapshotWriter};
use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::graph::GraphIndex;
use crate::validate;

/// The sections of a graph's arrays, in the order a pack's `graphs` entries count them.
pub(crate) const ARRAYS: [&str; 9] = [
    "out.vertices",
    "out.offsets",
    "out.words",
    "in.vertices",
    "in.offsets",
    "in.words",
    "predicates.offsets",
    "predicates.members",
    "predicates.ids",
];

/// A named graph of fewer bytes than this goes to a pack: a file of its own costs a file
/// descriptor while the store is saved, an fsync and a mapping, for little data.
pub(crate) const PACKED_GRAPH_BYTES: usize = 1 << 20;

/// A pack takes graphs until it holds this many bytes.
pub(crate) const PACK_BYTES: usize = 64 << 20;

/// Words of one graph's entry in a pack's `graphs` section: its number, then its count of
/// values in each of the [`ARRAYS`].
const ENTRY_WORDS: usize = 1 + ARRAYS.len();

/// The count recorded for an array the graph has not: the vertex list of a dense adjacency,
/// the predicate ids of a predicate index over all predicates.
const ABSENT: u64 = u64::MAX;

/// The file of the `k`-th pack of named graphs.
pub(crate) fn pack_file(k: u64) -> String {
    format!("graph-pack-{k}")
}

/// The file of a graph's IN direction, beside `file`, the file of its OUT direction and
/// predicate index.
fn in_file(file: &str) -> String {
    format!("{file}.in")
}

/// A graph whose IN direction holds at least this many bytes has it written to a file of its
/// own on a thread of its own; a smaller one keeps it in the graph's file.
const IN_FILE_BYTES: usize = 1 << 20;

/// A graph's arrays as raw bytes, in the order of [`ARRAYS`]; `None` for those it has not.
fn array_bytes(graph: &GraphIndex) -> [Option<&[u8]>; 9] {
    fn vertices(a: &Adjacency) -> Option<&[u8]> {
        a.vertices.as_ref().map(|v| v.as_bytes())
    }
    [
        vertices(&graph.out),
        Some(graph.out.offsets.as_bytes()),
        Some(graph.out.words.as_bytes()),
        vertices(&graph.inn),
        Some(graph.inn.offsets.as_bytes()),
        Some(graph.inn.words.as_bytes()),
        Some(graph.predicate_offsets.as_bytes()),
        Some(graph.predicate_members.as_bytes()),
        graph.predicate_ids.as_ref().map(|ids| ids.as_bytes()),
    ]
}

/// Bytes per value of each of the [`ARRAYS`].
const VALUE_BYTES: [usize; 9] = {
    let (id, offset) = (std::mem::size_of::<Id>(), std::mem::size_of::<u64>());
    [
        id,
        offset,
        id,
        id,
        offset,
        id,
        offset,
        id,
        std::mem::size_of::<PredId>(),
    ]
};

/// Writes a graph's OUT direction and predicate index to `file`, and its IN direction to
/// [`in_file`] at the same time on a thread of its own, or, for a small graph, to `file`
/// after them; then closes the files.
pub(crate) fn save_graph(
    writer: &mut SnapshotWriter,
    file: &str,
    graph: &GraphIndex,
) -> Result<(), SnapshotError> {
    let write_out = |out: &mut FileSections<'_>| {
        save_adjacency(out, "out", &graph.out)?;
        out.column("predicates.offsets", &graph.predicate_offsets)?;
        out.column("predicates.members", &graph.predicate_members)?;
        match &graph.predicate_ids {
            Some(ids) => out.column("predicates.ids", ids),
            None => Ok(()),
        }
    };
    if graph.inn.data_bytes() < IN_FILE_BYTES {
        let [mut only] = writer.files([file])?;
        write_out(&mut only).and_then(|()| save_adjacency(&mut only, "in", &graph.inn))?;
        return writer.close_file(file);
    }
    let in_name = in_file(file);
    let [mut out, mut inn] = writer.files([file, &in_name])?;
    std::thread::scope(|scope| {
        let in_written = scope.spawn(|| save_adjacency(&mut inn, "in", &graph.inn));
        let out_written = write_out(&mut out);
        let in_written = in_written
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        out_written.and(in_written)
    })?;
    writer.close_file(file)?;
    writer.close_file(&in_name)
}

/// One direction's arrays, as sections named after `prefix`.
fn save_adjacency(
    file: &mut FileSections<'_>,
    prefix: &str,
    adjacency: &Adjacency,
) -> Result<(), SnapshotError> {
    if let Some(vertices) = &adjacency.vertices {
        file.column(&format!("{prefix}.vertices"), vertices)?;
    }
    file.column(&format!("{prefix}.offsets"), &adjacency.offsets)?;
    file.column(&format!("{prefix}.words"), &adjacency.words)
}

/// Saves the named graphs, `graph-<i>` for the i-th: the large ones in files of their own,
/// the others in packs of about `pack_bytes` ([`PACK_BYTES`]); returns the number of packs.
pub(crate) fn save_named_graphs(
    writer: &mut SnapshotWriter,
    graphs: &[(Id, GraphIndex)],
    pack_bytes: usize,
) -> Result<u64, SnapshotError> {
    let mut packs = 0;
    let mut pack: Vec<(usize, &GraphIndex)> = Vec::new();
    let mut packed = 0;
    for (i, (_, graph)) in graphs.iter().enumerate() {
        let bytes = graph.data_bytes();
        if bytes >= PACKED_GRAPH_BYTES {
            save_graph(writer, &format!("graph-{i}"), graph)?;
            continue;
        }
        pack.push((i, graph));
        packed += bytes;
        if packed >= pack_bytes {
            save_pack(writer, &pack_file(packs), &pack)?;
            packs += 1;
            pack.clear();
            packed = 0;
        }
    }
    if !pack.is_empty() {
        save_pack(writer, &pack_file(packs), &pack)?;
        packs += 1;
    }
    Ok(packs)
}

/// Writes `graphs`, (number, index) ascending, as the pack `file`, and closes it.
fn save_pack(
    writer: &mut SnapshotWriter,
    file: &str,
    graphs: &[(usize, &GraphIndex)],
) -> Result<(), SnapshotError> {
    let arrays: Vec<[Option<&[u8]>; 9]> = graphs.iter().map(|(_, g)| array_bytes(g)).collect();
    let mut entries = Vec::with_capacity(graphs.len() * ENTRY_WORDS);
    for ((number, _), arrays) in graphs.iter().zip(&arrays) {
        entries.push(*number as u64);
        for (bytes, size) in arrays.iter().zip(VALUE_BYTES) {
            entries.push(bytes.map_or(ABSENT, |b| (b.len() / size) as u64));
        }
    }
    let [mut pack] = writer.files([file])?;
    pack.column("graphs", &entries)?;
    for (a, name) in ARRAYS.iter().enumerate() {
        pack.section_of_parts(name, arrays.iter().filter_map(move |arrays| arrays[a]))?;
    }
    writer.close_file(file)
}

/// Opens the graph saved in `file` (and its IN direction's file, if any), recorded with
/// `triples` triples.
pub(crate) fn open_graph(
    reader: &SnapshotReader,
    file: &str,
    triples: u64,
    limits: validate::Limits,
) -> Result<GraphIndex, String> {
    let column_error = |e: SnapshotError| e.to_string();
    // A store of format 2 holds the IN direction in the graph's own file.
    let in_name = in_file(file);
    let in_source = if reader.has_section(&in_name, "in.offsets") {
        in_name.as_str()
    } else {
        file
    };
    let adjacency = |file: &str, prefix: &str| -> Result<Adjacency, String> {
        let vertices_section = format!("{prefix}.vertices");
        let vertices = if reader.has_section(file, &vertices_section) {
            Some(
                reader
                    .column(file, &vertices_section)
                    .map_err(column_error)?,
            )
        } else {
            None
        };
        Ok(adjacency_of(
            vertices,
            reader
                .column(file, &format!("{prefix}.offsets"))
                .map_err(column_error)?,
            reader
                .column(file, &format!("{prefix}.words"))
                .map_err(column_error)?,
        ))
    };
    let graph = GraphIndex {
        out: adjacency(file, "out")?,
        inn: adjacency(in_source, "in")?,
        predicate_offsets: reader
            .column(file, "predicates.offsets")
            .map_err(column_error)?,
        predicate_members: reader
            .column(file, "predicates.members")
            .map_err(column_error)?,
        predicate_ids: if reader.has_section(file, "predicates.ids") {
            Some(
                reader
                    .column(file, "predicates.ids")
                    .map_err(column_error)?,
            )
        } else {
            None
        },
        triples,
        predicate_patch: None,
    };
    validate::graph(&graph, limits, triples).map_err(|e| format!("{file}: {e}"))?;
    Ok(graph)
}

fn adjacency_of(
    vertices: Option<Column<Id>>,
    offsets: Column<u64>,
    words: Column<Id>,
) -> Adjacency {
    Adjacency {
        vertices,
        offsets,
        words,
        patch: None,
        rank: Default::default(),
    }
}

/// Opens the named graphs: those of the `packs` packs, then the others from files of their
/// own. `triples[i]` is the i-th graph's recorded triple count.
pub(crate) fn open_named_graphs(
    reader: &SnapshotReader,
    packs: u64,
    triples: &[u64],
    limits: validate::Limits,
) -> Result<Vec<GraphIndex>, String> {
    let mut graphs: Vec<Option<GraphIndex>> = (0..triples.len()).map(|_| None).collect();
    let mut next = 0;
    for k in 0..packs {
        next = open_pack(reader, &pack_file(k), next, triples, limits, &mut graphs)?;
    }
    graphs
        .into_iter()
        .enumerate()
        .map(|(i, graph)| match graph {
            Some(graph) => Ok(graph),
            None => open_graph(reader, &format!("graph-{i}"), triples[i], limits),
        })
        .collect()
}

/// One graph's arrays in a pack, read as views of the pack's sections.
struct Pack<'a> {
    reader: &'a SnapshotReader,
    file: &'a str,
    number: usize,
}

impl Pack<'_> {
    /// The values `values` of array `a`.
    fn column<T: bytemuck::Pod>(
        &self,
        a: usize,
        values: std::ops::Range<usize>,
    ) -> Result<Column<T>, String> {
        self.reader
            .column_part(self.file, ARRAYS[a], Some(values))
            .map_err(|e| format!("named graph {}: {e}", self.number))
    }

    /// The values `values` of array `a`, if the graph has that array.
    fn optional<T: bytemuck::Pod>(
        &self,
        a: usize,
        values: Option<std::ops::Range<usize>>,
    ) -> Result<Option<Column<T>>, String> {
        values.map(|values| self.column(a, values)).transpose()
    }
}

/// Opens the graphs of the pack `file` into `graphs`, checking that their numbers ascend
/// from `first` and that none also has a file of its own; returns the number after the last.
fn open_pack(
    reader: &SnapshotReader,
    file: &str,
    first: usize,
    triples: &[u64],
    limits: validate::Limits,
    graphs: &mut [Option<GraphIndex>],
) -> Result<usize, String> {
    let column_error = |e: SnapshotError| e.to_string();
    let entries: Column<u64> = reader.column(file, "graphs").map_err(column_error)?;
    if entries.is_empty() || !entries.len().is_multiple_of(ENTRY_WORDS) {
        return Err(format!(
            "{file}.graphs: {} words, not a whole number of {ENTRY_WORDS}-word entries, or none",
            entries.len()
        ));
    }
    // Each array's values taken by the graphs so far.
    let mut taken = [0usize; ARRAYS.len()];
    let mut next = first;
    let mut opened = Vec::with_capacity(entries.len() / ENTRY_WORDS);
    for entry in entries.chunks_exact(ENTRY_WORDS) {
        let number = usize::try_from(entry[0])
            .ok()
            .filter(|&n| n >= next && n < graphs.len())
            .ok_or_else(|| {
                format!(
                    "{file}.graphs: graph {} is not a named graph after {next}",
                    entry[0]
                )
            })?;
        next = number + 1;
        let own = format!("graph-{number}");
        if reader.has_section(&own, "out.offsets") {
            return Err(format!(
                "{file}: named graph {number} also has a file of its own"
            ));
        }
        // Takes the graph's values of array `a` from those after the previous graph's.
        let mut take = |a: usize| -> Result<Option<std::ops::Range<usize>>, String> {
            let count = entry[1 + a];
            if count == ABSENT {
                return Ok(None);
            }
            let start = taken[a];
            let end = usize::try_from(count)
                .ok()
                .and_then(|count| start.checked_add(count))
                .ok_or_else(|| format!("{file}.graphs: graph {number}: {count} values"))?;
            taken[a] = end;
            Ok(Some(start..end))
        };
        let ranges: Vec<Option<std::ops::Range<usize>>> =
            (0..ARRAYS.len()).map(&mut take).collect::<Result<_, _>>()?;
        // The graph's values of array `a`, which it must have, or may lack.
        let part = |a: usize| {
            let missing = || format!("{file}.graphs: graph {number} has no {}", ARRAYS[a]);
            ranges[a].clone().ok_or_else(missing)
        };
        let optional = |a: usize| ranges[a].clone();
        let view = Pack {
            reader,
            file,
            number,
        };
        let graph = GraphIndex {
            out: adjacency_of(
                view.optional(0, optional(0))?,
                view.column(1, part(1)?)?,
                view.column(2, part(2)?)?,
            ),
            inn: adjacency_of(
                view.optional(3, optional(3))?,
                view.column(4, part(4)?)?,
                view.column(5, part(5)?)?,
            ),
            predicate_offsets: view.column(6, part(6)?)?,
            predicate_members: view.column(7, part(7)?)?,
            predicate_ids: view.optional(8, optional(8))?,
            triples: triples[number],
            predicate_patch: None,
        };
        opened.push((number, graph));
    }
    // Checked side by side: a pack may hold many thousands of small graphs.
    let checks: Vec<Result<(), String>> = opened
        .par_iter()
        .map(|(number, graph)| {
            validate::graph(graph, limits, triples[*number])
                .map_err(|e| format!("{file}, named graph {number}: {e}"))
        })
        .collect();
    checks.into_iter().collect::<Result<(), String>>()?;
    for (number, graph) in opened {
        graphs[number] = Some(graph);
    }
    // Every value of every array belongs to some graph.
    for (a, name) in ARRAYS.iter().enumerate() {
        let bytes = reader.column::<u8>(file, name).map_err(column_error)?.len();
        if bytes != taken[a] * VALUE_BYTES[a] {
            return Err(format!(
                "{file}.{name}: {bytes} bytes, its graphs take {}",
                taken[a] * VALUE_BYTES[a]
            ));
        }
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EncodedGraphs, LoadInfo, Store};
    use quiver_model::Dictionary;

    /// Named graphs of 1 to 40 triples, and two of over 1 MiB among them.
    fn store() -> Store {
        const VERTICES: usize = 50_000;
        // Zero-padded, the IRIs sort as their numbers.
        let terms: Vec<Vec<u8>> = (0..VERTICES + 300)
            .map(|i| {
                let iri = oxrdf::NamedNode::new(format!("http://example.org/t{i:07}")).unwrap();
                let mut bytes = Vec::new();
                quiver_model::term::encode_term(iri.as_ref().into(), &mut bytes);
                bytes
            })
            .collect();
        let dictionary = Dictionary::from_sorted(terms.iter());
        let predicate = |i: usize| (VERTICES + i % 3) as Id;
        let named_graphs = (0..200)
            .map(|g| {
                let count = if g == 50 || g == 51 {
                    90_000
                } else {
                    1 + g % 40
                };
                let triples = (0..count)
                    .map(|i| {
                        [
                            (i % VERTICES) as Id,
                            predicate(g + i),
                            ((i * 7 + g) % VERTICES) as Id,
                        ]
                    })
                    .collect();
                ((VERTICES + 10 + g) as Id, triples)
            })
            .collect();
        let input = EncodedGraphs {
            default_graph: vec![[0, predicate(0), 1]],
            named_graphs,
        };
        Store::build(dictionary, input, LoadInfo::default())
    }

    /// Every triple and predicate-index entry, ids widened to `u64` whatever `Id` is.
    fn contents(graph: &GraphIndex, predicates: usize) -> Vec<(u8, u64, u64, u64)> {
        let mut seen = Vec::new();
        graph.for_each_triple(|s, p, o| seen.push((0, s as u64, p.into(), o as u64)));
        for p in 0..predicates as PredId {
            let at = u64::from(p);
            seen.extend(
                graph
                    .predicate_subjects(p)
                    .iter()
                    .map(|&s| (1, at, s as u64, 0)),
            );
            seen.extend(
                graph
                    .predicate_objects(p)
                    .iter()
                    .map(|&o| (2, at, o as u64, 0)),
            );
        }
        seen
    }

    #[test]
    fn graphs_spread_over_many_packs_and_files_open_as_saved() {
        let store = store();
        let dir = std::env::temp_dir().join(format!("quiver-graph-packs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut writer = SnapshotWriter::create(&dir).unwrap();
        let packs = save_named_graphs(&mut writer, &store.named_graphs, 4 << 10).unwrap();
        writer.commit(serde_json::json!({})).unwrap();
        assert!(packs >= 10, "{packs} packs");
        let reader = SnapshotReader::open(&dir).unwrap();
        for large in [50, 51] {
            assert!(reader.has_section(&format!("graph-{large}"), "out.offsets"));
        }
        assert!(!reader.has_section("graph-49", "out.offsets"));
        let triples: Vec<u64> = store
            .named_graphs
            .iter()
            .map(|(_, g)| g.triples())
            .collect();
        let limits = validate::Limits {
            vertices: store.terms(),
            predicates: store.predicate_count() as u64,
            dense_covers_all: false,
            partition: false,
        };
        let graphs = open_named_graphs(&reader, packs, &triples, limits).unwrap();
        assert_eq!(graphs.len(), store.named_graphs.len());
        let predicates = store.predicate_count();
        for (i, ((_, saved), opened)) in store.named_graphs.iter().zip(&graphs).enumerate() {
            assert_eq!(
                contents(opened, predicates),
                contents(saved, predicates),
                "graph {i}"
            );
        }
        // A pack the count leaves out leaves its graphs to files they do not have.
        let last: Column<u64> = reader.column(&pack_file(packs - 1), "graphs").unwrap();
        let error = open_named_graphs(&reader, packs - 1, &triples, limits).unwrap_err();
        assert!(error.contains(&format!("'graph-{}'", last[0])), "{error}");
        drop(reader);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
