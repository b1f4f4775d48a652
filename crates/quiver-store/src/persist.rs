//! Saving a [`Store`] as a snapshot and reopening it by memory-mapping.
//!
//! Layout (files of one snapshot generation, see `quiver-snapshot`):
//! - `dictionary`: `data`, `buckets`, and terms appended by updates (`appended.data`,
//!   `appended.offsets`: term `i` at bytes `offsets[i]..offsets[i + 1]`);
//! - `catalog`: `predicates`, `classes`, `class_instances`, `class_predicate`,
//!   `predicate_stats`;
//! - `graph-default` and `graph-<i>` for the i-th named graph of 1 MiB or more: `out.*`
//!   (vertex records), `predicates.offsets`, `predicates.members` (and, for a named graph,
//!   `predicates.ids`: the predicates its index has slots for), and `in.*`, which a graph
//!   of 1 MiB or more of IN records has in a file of its own beside (`graph-default.in`,
//!   `graph-<i>.in`): the two directions are then written at once, each on a thread of its
//!   own (buffered writes to one file wait on each other in the kernel). Stores of format 2
//!   hold `in.*` in the graph's own file, and open as well;
//! - `graph-pack-<k>`: the smaller named graphs, many to a file (see [`crate::graph_files`]);
//!   stores of formats 2 and 3 hold every named graph in files of its own, its predicate
//!   index sized for all the store's predicates, and open as well;
//! - for a store with reasoning, `graph-entailed` (the entailed default graph) and
//!   `entailed`: `classes`, `class_instances`, `class_predicate`, `predicate_stats`.
//!
//! The metadata (JSON) records the id width, counts and the load information. Reopening
//! validates every structure before use, so a damaged store is an error, never a wrong
//! answer or a crash.

use std::path::Path;

use quiver_model::{Column, Dictionary, Id, ID_BYTES};
use quiver_reason::Profile;
use quiver_snapshot::{SnapshotError, SnapshotReader, SnapshotWriter};
use serde::{Deserialize, Serialize};

use crate::entailment::{Layer, View};
use crate::graph::{Direction, GraphIndex};
use crate::graph_files::{
    open_graph, open_named_graphs, save_graph, save_named_graphs, PACK_BYTES,
};
use crate::stats::PredicateStats;
use crate::store::{LoadInfo, Store};
use crate::validate;

/// Errors saving or opening a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error("{dir}: {message}")]
    Invalid { dir: String, message: String },
}

/// Version of the store layout inside the snapshot files (the files' own format is
/// versioned by `quiver-snapshot`). Bumped whenever sections change meaning or place.
pub const STORE_FORMAT: u32 = 4;

/// The oldest layout this build still opens: format 2 kept a graph's `in.*` sections in the
/// graph's own file, and formats 2 and 3 every named graph in files of its own.
const OLDEST_STORE_FORMAT: u32 = 2;

#[derive(Serialize, Deserialize)]
struct Metadata {
    /// Absent in stores written before it existed (format 1).
    #[serde(default = "first_format")]
    store_format: u32,
    id_bytes: usize,
    terms: u64,
    /// Terms appended after the sorted dictionary (ids from `terms`).
    #[serde(default)]
    appended_terms: u64,
    triples: u64,
    graph_triples: Vec<u64>,
    named_graphs: Vec<Id>,
    /// Packs of small named graphs, `graph-pack-<k>` (none before format 4).
    #[serde(default)]
    graph_packs: u64,
    info: LoadInfo,
    /// The entailed layer, if any (`graph-entailed`, `entailed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entailment: Option<EntailmentMetadata>,
}

#[derive(Serialize, Deserialize)]
struct EntailmentMetadata {
    profile: Profile,
    derived: u64,
    triples: u64,
}

fn first_format() -> u32 {
    1
}

impl Store {
    /// Saves the store in `dir` as a new snapshot generation; returns the bytes on disk.
    pub fn save(&self, dir: &Path) -> Result<u64, StoreError> {
        if self.view == View::Entailed {
            return Err(StoreError::Invalid {
                dir: dir.display().to_string(),
                message: "an entailed view is saved through the store it was taken from".into(),
            });
        }
        if !self.is_compact() {
            return self.compacted().save(dir);
        }
        let mut writer = SnapshotWriter::create(dir)?;
        let (data, buckets, terms) = self.dictionary.parts();
        writer.column("dictionary", "data", data)?;
        writer.column("dictionary", "buckets", buckets)?;
        let mut appended_data = Vec::new();
        let mut appended_offsets = vec![0u64];
        for term in self.dictionary.appended() {
            appended_data.extend_from_slice(term);
            appended_offsets.push(appended_data.len() as u64);
        }
        let appended_terms = appended_offsets.len() as u64 - 1;
        if appended_terms > 0 {
            writer.column("dictionary", "appended.data", &appended_data)?;
            writer.column("dictionary", "appended.offsets", &appended_offsets)?;
        }
        writer.column("catalog", "predicates", &self.predicates)?;
        save_catalog(&mut writer, "catalog", &Layer::of(self))?;
        save_graph(&mut writer, "graph-default", &self.default_graph)?;
        if let Some(layer) = self.entailment().map(|e| &e.entailed) {
            save_catalog(&mut writer, "entailed", layer)?;
            save_graph(&mut writer, "graph-entailed", &layer.default_graph)?;
        }
        let graph_packs = save_named_graphs(&mut writer, &self.named_graphs, PACK_BYTES)?;
        let metadata = Metadata {
            store_format: STORE_FORMAT,
            id_bytes: ID_BYTES,
            terms,
            appended_terms,
            triples: self.triples(),
            graph_triples: std::iter::once(&self.default_graph)
                .chain(self.named_graphs.iter().map(|(_, g)| g))
                .map(GraphIndex::triples)
                .collect(),
            named_graphs: self.named_graphs.iter().map(|(name, _)| *name).collect(),
            graph_packs,
            info: self.info.clone(),
            entailment: self.entailment().map(|layer| EntailmentMetadata {
                profile: layer.profile,
                derived: layer.derived,
                triples: layer.triples(),
            }),
        };
        let metadata = serde_json::to_value(metadata).expect("metadata serializes");
        Ok(writer.commit(metadata)?)
    }

    /// Opens the store saved in `dir`, mapping its files.
    pub fn open(dir: &Path) -> Result<(Store, u64), StoreError> {
        let reader = SnapshotReader::open(dir)?;
        let invalid = |message: String| StoreError::Invalid {
            dir: dir.display().to_string(),
            message,
        };
        let metadata: Metadata = serde_json::from_value(reader.metadata().clone())
            .map_err(|e| invalid(format!("unreadable metadata: {e}")))?;
        if !(OLDEST_STORE_FORMAT..=STORE_FORMAT).contains(&metadata.store_format) {
            return Err(invalid(format!(
                "store format {} found, this build reads formats {OLDEST_STORE_FORMAT} to {STORE_FORMAT}: load the data again into a new location",
                metadata.store_format
            )));
        }
        if metadata.id_bytes != ID_BYTES {
            return Err(invalid(format!(
                "the store uses {}-byte ids, this build {}-byte ids (build with{} the wide-ids feature)",
                metadata.id_bytes,
                ID_BYTES,
                if metadata.id_bytes > ID_BYTES { "" } else { "out" }
            )));
        }
        let share = metadata
            .info
            .partition
            .clone()
            .filter(|info| info.id_bound.is_some());
        // A share of a cluster's dictionary: its vertices are the cluster's ids.
        let terms = match share.as_ref().and_then(|info| info.id_bound) {
            Some(bound) => bound,
            None => metadata.terms.saturating_add(metadata.appended_terms),
        };
        if terms > (Id::MAX as u64).saturating_add(1) {
            return Err(invalid(format!(
                "{terms} terms do not fit {ID_BYTES}-byte ids"
            )));
        }
        let mut dictionary = Dictionary::from_parts(
            reader.column("dictionary", "data")?,
            reader.column("dictionary", "buckets")?,
            metadata.terms,
        )
        .map_err(|e| invalid(format!("dictionary: {e}")))?;
        if metadata.appended_terms > 0 {
            let data: Column<u8> = reader.column("dictionary", "appended.data")?;
            let offsets: Column<u64> = reader.column("dictionary", "appended.offsets")?;
            append_terms(&mut dictionary, &data, &offsets, metadata.appended_terms)
                .map_err(|e| invalid(format!("dictionary.appended: {e}")))?;
        }
        let predicates: Column<Id> = reader.column("catalog", "predicates")?;
        let predicate_count = validate::predicate_count(predicates.len()).map_err(invalid)?;
        validate::ascending_ids(&predicates, terms, "catalog.predicates").map_err(invalid)?;
        if let Some(info) = &share {
            dictionary = info
                .share_dictionary(dictionary, &predicates)
                .map_err(|e| invalid(format!("partition: {e}")))?;
        }
        let predicate_words = predicates.len() * PredicateStats::WORDS;
        let read_stats = |file: &str| -> Result<Vec<PredicateStats>, StoreError> {
            let stats: Column<u64> = reader.column(file, "predicate_stats")?;
            if stats.len() != predicate_words {
                return Err(invalid(format!(
                    "{file}.predicate_stats: do not match catalog.predicates"
                )));
            }
            Ok(stats
                .chunks_exact(PredicateStats::WORDS)
                .map(PredicateStats::from_words)
                .collect())
        };
        let predicate_stats = read_stats("catalog")?;
        if metadata.graph_triples.len() != metadata.named_graphs.len() + 1 {
            return Err(invalid(format!(
                "metadata: {} triple counts for {} graphs",
                metadata.graph_triples.len(),
                metadata.named_graphs.len() + 1
            )));
        }
        validate::ascending_ids(&metadata.named_graphs, terms, "metadata: named graphs")
            .map_err(invalid)?;
        let limits = |dense_covers_all| validate::Limits {
            vertices: terms,
            predicates: predicate_count,
            dense_covers_all,
            partition: metadata.info.partition.is_some(),
        };
        let (checked_dictionary, graphs) = rayon::join(
            || validate::dictionary(&dictionary),
            || {
                let default_graph = open_graph(
                    &reader,
                    "graph-default",
                    metadata.graph_triples[0],
                    limits(true),
                )?;
                let named_graphs = open_named_graphs(
                    &reader,
                    metadata.graph_packs,
                    &metadata.graph_triples[1..],
                    limits(false),
                )?;
                let named_graphs = metadata.named_graphs.iter().copied().zip(named_graphs);
                let named_graphs: Vec<(Id, GraphIndex)> = named_graphs.collect();
                let entailed = match &metadata.entailment {
                    Some(layer) => Some(open_graph(
                        &reader,
                        "graph-entailed",
                        layer.triples,
                        limits(true),
                    )?),
                    None => None,
                };
                Ok::<_, String>((default_graph, named_graphs, entailed))
            },
        );
        checked_dictionary.map_err(invalid)?;
        let (default_graph, named_graphs, entailed) = graphs.map_err(invalid)?;
        let stat_predicates = predicates.len();
        let store = Store {
            dictionary,
            predicates,
            classes: reader.column("catalog", "classes")?,
            class_instances: reader.column("catalog", "class_instances")?,
            class_predicate: reader.column::<u64>("catalog", "class_predicate")?.into(),
            stat_classes: Column::default(),
            stat_predicates,
            merged_statistics: false,
            appended_predicates: Vec::new(),
            predicate_stats,
            default_graph,
            named_graphs,
            info: metadata.info,
            version: crate::store::next_version(),
            entailment: None,
            view: View::Asserted,
            text: None,
            rdf_type_term: std::sync::OnceLock::new(),
        };
        let mut store = store;
        store.stat_classes = store.classes.clone();
        check_classes(&store).map_err(invalid)?;
        if let (Some(layer), Some(graph)) = (&metadata.entailment, entailed) {
            let classes: Column<Id> = reader.column("entailed", "classes")?;
            let entailed = Layer {
                default_graph: graph,
                predicate_stats: read_stats("entailed")?,
                stat_classes: classes.clone(),
                classes,
                class_instances: reader.column("entailed", "class_instances")?,
                class_predicate: reader.column::<u64>("entailed", "class_predicate")?.into(),
                stat_predicates,
            };
            store.set_entailment(layer.profile, layer.derived, Some(entailed));
            let view = store.entailed().expect("just set");
            check_classes(&view).map_err(|e| invalid(format!("entailed {e}")))?;
        }
        Ok((store, reader.bytes_on_disk()))
    }
}

/// Appends the stored appended terms, checking each: offsets in range and increasing, a
/// valid encoding, not already in the dictionary.
fn append_terms(
    dictionary: &mut Dictionary,
    data: &[u8],
    offsets: &[u64],
    count: u64,
) -> Result<(), String> {
    if offsets.len() as u64 != count + 1 || offsets.first() != Some(&0) {
        return Err(format!("{} offsets for {count} terms", offsets.len()));
    }
    for (i, window) in offsets.windows(2).enumerate() {
        let term = data
            .get(window[0] as usize..window[1] as usize)
            .filter(|_| window[0] <= window[1])
            .ok_or_else(|| format!("term {i}: bytes out of range"))?;
        quiver_model::term::decode_term(term).map_err(|e| format!("term {i}: {e}"))?;
        let expected = dictionary.len();
        let id = dictionary
            .append(term)
            .map_err(|e| format!("term {i}: {e}"))?;
        if id as u64 != expected {
            return Err(format!("term {i} is already in the dictionary"));
        }
    }
    Ok(())
}

/// A layer's class catalog and predicate statistics, in `file`.
fn save_catalog(
    writer: &mut SnapshotWriter,
    file: &str,
    layer: &Layer,
) -> Result<(), SnapshotError> {
    writer.column(file, "classes", &layer.classes)?;
    writer.column(file, "class_instances", &layer.class_instances)?;
    writer.column(file, "class_predicate", layer.class_predicate.counts())?;
    let stats: Vec<u64> = layer
        .predicate_stats
        .iter()
        .flat_map(|s| s.to_words())
        .collect();
    writer.column(file, "predicate_stats", &stats)
}

/// The class catalog must be the objects of `rdf:type` in the default graph, with their
/// instance counts, and its statistics sized for every class and predicate.
fn check_classes(store: &Store) -> Result<(), String> {
    let expected: &[Id] = match store.rdf_type() {
        Some(rdf_type) => store.default_graph.predicate_objects(rdf_type),
        None => &[],
    };
    if store.classes[..] != *expected {
        return Err("catalog.classes: not the objects of rdf:type".into());
    }
    if store.class_instances.len() != store.classes.len() {
        return Err("catalog.class_instances: do not match catalog.classes".into());
    }
    if let Some(rdf_type) = store.rdf_type() {
        for (c, (&class, &count)) in store
            .classes
            .iter()
            .zip(&store.class_instances[..])
            .enumerate()
        {
            let instances = store
                .default_graph
                .get(class, rdf_type, Direction::In)
                .len();
            if instances as u64 != count {
                return Err(format!(
                    "catalog.class_instances: class {c} has {instances} instances, {count} recorded"
                ));
            }
        }
    }
    if store.class_predicate.len() != store.classes.len() * store.predicates.len() * 2 {
        return Err("catalog.class_predicate: do not match classes and predicates".into());
    }
    Ok(())
}
