//! A store partitioned over the processes of a cluster, as Wukong lays it out.
//!
//! Every vertex belongs to one partition, `owner(v)`: its id modulo the number of
//! partitions. Partition `i` holds:
//! - the OUT record of every vertex it owns (the triples whose subject it owns);
//! - the IN record of every vertex it owns (the triples whose object it owns), except for
//!   `rdf:type`, whose IN side is the class index (a class's instances): it is split by
//!   instance, so partition `i` lists the instances it owns under each class, and a query
//!   starting from a class starts on every partition from its own share;
//! - hence a predicate index (subjects and objects of each predicate) and a class catalog
//!   that list only its own vertices;
//! - the whole dictionary (a store cut from a whole one), or its own share of it (a
//!   cluster loaded by its processes, `quiver-cluster`'s loader: the terms whose owner by
//!   hash is `i`, numbered `p × count + i`, so that each vertex's term lives with its
//!   records; [`PartitionInfo::id_bound`]); and the whole predicate id space, so that an id
//!   means the same term and a predicate id the same predicate on every process;
//! - every named graph (partitioned by the same rule), even where it owns none of its
//!   triples, so that each partition knows the same graph names.
//!
//! The union of the partitions' OUT records is the store's triples, each once; so is the
//! union of their IN records. A partition's vertex records are sparse (a sorted list of
//! the vertices it holds), not dense over the whole id space, whose offsets would cost
//! every partition as much as the whole store's.
//!
//! On disk, a partitioned store is a directory with a layout file ([`LAYOUT_FILE`]: the
//! number of partitions and the hash) and one ordinary snapshot per partition
//! (`partition-<i>/`), each of which records which partition it is. The layout file also
//! carries the planner's statistics of the whole store, merged from the partitions'
//! (`partition_stats`). It is written last, so a directory whose partitioning was
//! interrupted is not a store.

use std::path::{Path, PathBuf};

use quiver_model::Id;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::build::{build_split_graph, build_split_named_graph};
use crate::graph::GraphIndex;
pub use crate::partition_info::PartitionInfo;
use crate::partition_stats::{PlannerStatistics, StatisticsMerger};
use crate::persist::StoreError;
use crate::store::{LoadInfo, Store};
use crate::Direction;

/// The placement of [`owner`], as the layout file and each partition name it.
pub const PARTITION_HASH: &str = "modulo";

/// The file that describes a partitioned store's layout.
pub const LAYOUT_FILE: &str = "partitions.json";

/// Version of the layout file's meaning.
const LAYOUT_FORMAT: u32 = 1;

/// The most partitions a store may be cut into.
pub const MAX_PARTITIONS: u32 = 4096;

/// The partition that owns `vertex` among `count`: its id modulo `count`. A whole store's
/// ids are dense in term order, so consecutive terms (a department's people, its
/// courses) go round the partitions; a cluster loaded by its processes numbers each
/// owner's terms `p × count + owner`, so a vertex's records and its term live together.
#[inline]
pub fn owner(vertex: Id, count: u32) -> u32 {
    (u64::from(vertex) % u64::from(count.max(1))) as u32
}

/// A partition's edges of one graph: OUT edges `[subject, predicate id, object]` and IN
/// edges `[object, predicate id, subject]`.
pub type SplitEdges = (Vec<[Id; 3]>, Vec<[Id; 3]>);

/// The layout file of a partitioned store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionLayout {
    pub format: u32,
    pub partitions: u32,
    pub hash: String,
    /// The whole store's triples and terms, for a cluster to check its partitions.
    pub triples: u64,
    pub terms: u64,
    /// Each partition's own terms, when each holds its share of the dictionary (a
    /// cluster loaded by its processes); empty when every partition holds all `terms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_terms: Vec<u64>,
    /// The load that wrote the partitions (see [`PartitionInfo::load`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// The classes (objects of `rdf:type`) of each graph, which each partition lists only
    /// where it owns instances: what a step over every class of a graph takes.
    #[serde(default)]
    pub classes: Vec<GraphClasses>,
    /// The planner's statistics of the whole store, merged from the partitions'; absent
    /// from layouts written before they were.
    #[serde(default)]
    pub statistics: Option<PlannerStatistics>,
    /// The most bytes each process of the cluster gives to the `rdf:type` memberships it
    /// holds for the whole cluster (`quiver-cluster`'s replication; 0: none); absent: the
    /// cluster's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_budget: Option<u64>,
}

/// The classes of one graph (`graph`: the name's term id, `None` for the default graph).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphClasses {
    pub graph: Option<Id>,
    pub classes: Vec<Id>,
}

impl Store {
    /// Partition `index` of this store cut into `count` (see the module's documentation).
    pub fn partition(&self, index: u32, count: u32) -> Store {
        assert!(index < count, "partition {index} of {count}");
        if !self.is_compact() {
            return self.compacted().partition(index, count);
        }
        let rdf_type = self.rdf_type();
        let predicates = self.predicate_count();
        let edges = |graph: &GraphIndex| {
            let (mut out, mut inn) = (Vec::new(), Vec::new());
            graph.for_each_triple(|subject, predicate, object| {
                if owner(subject, count) == index {
                    out.push([subject, predicate as Id, object]);
                }
                let keeper = if Some(predicate) == rdf_type {
                    subject
                } else {
                    object
                };
                if owner(keeper, count) == index {
                    inn.push([object, predicate as Id, subject]);
                }
            });
            (out, inn)
        };
        let (out, inn) = edges(&self.default_graph);
        let default_graph = build_split_graph(out, inn, None, predicates);
        // Graphs side by side, from the pool's threads (a dataset may hold many).
        let named_graphs = self
            .named_graphs
            .par_iter()
            .map(|(name, graph)| {
                let (out, inn) = edges(graph);
                (*name, build_split_named_graph(out, inn))
            })
            .collect();
        let mut info = self.info.clone();
        info.partition = Some(PartitionInfo {
            index,
            count,
            hash: PARTITION_HASH.to_owned(),
            id_bound: None,
            predicates: Vec::new(),
            load: None,
        });
        Store::assemble(
            self.dictionary.clone(),
            (self.predicates.clone(), self.appended_predicates.clone()),
            default_graph,
            named_graphs,
            info,
        )
    }

    /// The merge of `graphs` (`None`: the default graph) as this store holds it: the
    /// records it holds of each, merged. For a partition that is its share of the merge,
    /// each OUT record at its subject's owner and each IN record where the graphs keep it,
    /// which merging triples and building both directions again would not keep.
    pub fn merged_share(&self, graphs: &[Option<Id>]) -> GraphIndex {
        let (mut out, mut inn) = (Vec::new(), Vec::new());
        for graph in graphs {
            let index = match graph {
                None => Some(&self.default_graph),
                Some(name) => self.named_graph(*name),
            };
            let Some(index) = index else { continue };
            for (direction, edges) in [(Direction::Out, &mut out), (Direction::In, &mut inn)] {
                index.for_each_vertex(direction, |vertex, record| {
                    for i in 0..record.len() {
                        let (predicate, neighbours) = record.entry(i);
                        edges.extend(neighbours.iter().map(|&n| [vertex, predicate as Id, n]));
                    }
                });
            }
        }
        build_split_graph(out, inn, None, self.predicate_count()).0
    }

    /// Partition `info.partition` of a cluster loaded by its processes, from its share of
    /// the dictionary (ids `p × count + index`), the cluster's predicates (term ids,
    /// ascending, their IRIs in `info`) and, per graph, its OUT edges `[subject,
    /// predicate id, object]` and IN edges `[object, predicate id, subject]` as `owner`
    /// places them. Every named graph of the cluster is listed, even where it is empty.
    pub fn loaded_partition(
        dictionary: quiver_model::Dictionary,
        predicates: Vec<Id>,
        default_graph: SplitEdges,
        named_graphs: Vec<(Id, SplitEdges)>,
        info: LoadInfo,
    ) -> Result<Store, String> {
        let partition = info
            .partition
            .as_ref()
            .ok_or("a loaded partition needs its partition information")?;
        let dictionary = partition.share_dictionary(dictionary, &predicates)?;
        let count = predicates.len();
        let default_graph = build_split_graph(default_graph.0, default_graph.1, None, count);
        let mut named: Vec<(Id, GraphIndex)> = named_graphs
            .into_par_iter()
            .map(|(name, (out, inn))| (name, build_split_named_graph(out, inn)))
            .collect();
        named.sort_by_key(|(name, _)| *name);
        Ok(Store::assemble(
            dictionary,
            (predicates.into(), Vec::new()),
            default_graph,
            named,
            info,
        ))
    }

    /// Which partition this store is, if it is one.
    pub fn partition_info(&self) -> Option<&PartitionInfo> {
        self.info.partition.as_ref()
    }
}

/// The directory of partition `index` of the partitioned store in `dir`.
pub fn partition_dir(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("partition-{index}"))
}

/// Saves `store` cut into `count` partitions in `dir` (which must not hold a store yet),
/// one partition at a time (`progress` is told each one saved, with its bytes on disk);
/// returns the layout and the bytes written.
pub fn save_partitioned(
    store: &Store,
    dir: &Path,
    count: u32,
    mut progress: impl FnMut(&Store, u64),
) -> Result<(PartitionLayout, u64), StoreError> {
    let invalid = |message: String| StoreError::Invalid {
        dir: dir.display().to_string(),
        message,
    };
    if !(1..=MAX_PARTITIONS).contains(&count) {
        return Err(invalid(format!(
            "{count} partitions: give 1 to {MAX_PARTITIONS}"
        )));
    }
    if dir.join(LAYOUT_FILE).exists() || dir.join("manifest.json").exists() {
        return Err(invalid("already holds a store".into()));
    }
    let store = if store.is_compact() {
        store.clone()
    } else {
        store.compacted()
    };
    let mut bytes = 0;
    let mut statistics = StatisticsMerger::default();
    for index in 0..count {
        let partition = store.partition(index, count);
        statistics.add(&partition);
        let written = partition.save(&partition_dir(dir, index))?;
        progress(&partition, written);
        bytes += written;
    }
    let layout = PartitionLayout {
        format: LAYOUT_FORMAT,
        partitions: count,
        hash: PARTITION_HASH.to_owned(),
        triples: store.triples(),
        terms: store.terms(),
        partition_terms: Vec::new(),
        load: None,
        classes: graph_classes(&store),
        statistics: Some(statistics.finish(store.rdf_type())),
        replication_budget: None,
    };
    let written = write_layout(dir, &layout)?;
    Ok((layout, bytes + written))
}

/// A new layout for a store of `count` partitions whose partitions are each cut or loaded
/// already: `format` and `hash` set, the rest to fill in.
pub fn new_layout(count: u32) -> PartitionLayout {
    PartitionLayout {
        format: LAYOUT_FORMAT,
        partitions: count,
        hash: PARTITION_HASH.to_owned(),
        triples: 0,
        terms: 0,
        partition_terms: Vec::new(),
        load: None,
        classes: Vec::new(),
        statistics: None,
        replication_budget: None,
    }
}

/// Writes the layout file of the partitioned store in `dir`, last of all its files (the
/// partitions must all be saved already): through a temporary file, synced and renamed,
/// so that a store is either complete or not a store. Returns the bytes written.
pub fn write_layout(dir: &Path, layout: &PartitionLayout) -> Result<u64, StoreError> {
    let invalid = |message: String| StoreError::Invalid {
        dir: dir.display().to_string(),
        message,
    };
    let text = serde_json::to_vec_pretty(&layout).expect("the layout serializes");
    // Named by process: the processes of a cluster on one machine may share `dir`.
    let temporary = dir.join(format!("{LAYOUT_FILE}.{}.tmp", std::process::id()));
    let io = |e: std::io::Error| invalid(format!("writing {LAYOUT_FILE}: {e}"));
    std::fs::write(&temporary, &text).map_err(io)?;
    std::fs::File::open(&temporary)
        .and_then(|file| file.sync_all())
        .map_err(io)?;
    std::fs::rename(&temporary, dir.join(LAYOUT_FILE)).map_err(io)?;
    if let Ok(directory) = std::fs::File::open(dir) {
        let _ = directory.sync_all();
    }
    Ok(text.len() as u64)
}

/// The classes of every graph of `store` (a partition's: those it lists instances of).
pub fn graph_classes(store: &Store) -> Vec<GraphClasses> {
    let Some(rdf_type) = store.rdf_type() else {
        return Vec::new();
    };
    std::iter::once((None, store.graph()))
        .chain(
            store
                .named_graphs
                .iter()
                .map(|(name, graph)| (Some(*name), graph)),
        )
        .map(|(graph, index)| GraphClasses {
            graph,
            classes: index.predicate_objects(rdf_type).to_vec(),
        })
        .collect()
}

/// Records `budget` as the replication budget in the layout of the partitioned store in
/// `dir` (written again whole, atomically).
pub fn set_replication_budget(dir: &Path, budget: Option<u64>) -> Result<(), StoreError> {
    let Some(mut layout) = read_layout(dir)? else {
        return Err(StoreError::Invalid {
            dir: dir.display().to_string(),
            message: "not a partitioned store".into(),
        });
    };
    layout.replication_budget = budget;
    write_layout(dir, &layout).map(|_| ())
}

/// The layout of the partitioned store in `dir`, or `None` when `dir` holds none.
pub fn read_layout(dir: &Path) -> Result<Option<PartitionLayout>, StoreError> {
    let invalid = |message: String| StoreError::Invalid {
        dir: dir.display().to_string(),
        message,
    };
    let text = match std::fs::read(dir.join(LAYOUT_FILE)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(invalid(format!("reading {LAYOUT_FILE}: {e}"))),
    };
    let layout: PartitionLayout = serde_json::from_slice(&text)
        .map_err(|e| invalid(format!("unreadable {LAYOUT_FILE}: {e}")))?;
    if layout.format != LAYOUT_FORMAT || layout.hash != PARTITION_HASH {
        return Err(invalid(format!(
            "partition layout format {} with hash {:?}: this build reads format {LAYOUT_FORMAT} with {PARTITION_HASH:?}",
            layout.format, layout.hash
        )));
    }
    if !(1..=MAX_PARTITIONS).contains(&layout.partitions) {
        return Err(invalid(format!("{} partitions", layout.partitions)));
    }
    Ok(Some(layout))
}

/// Opens partition `index` of the store in `dir`, which must be cut into `count`
/// partitions: a cluster of another size, a partition of another layout or a store that
/// is not partitioned is an error.
pub fn open_partition(
    dir: &Path,
    index: u32,
    count: u32,
) -> Result<(Store, PartitionLayout), StoreError> {
    let invalid = |message: String| StoreError::Invalid {
        dir: dir.display().to_string(),
        message,
    };
    let layout = read_layout(dir)?.ok_or_else(|| {
        invalid(format!(
            "not a partitioned store (no {LAYOUT_FILE}; cut one with `quiver partition`)"
        ))
    })?;
    if layout.partitions != count {
        return Err(invalid(format!(
            "the store is cut into {} partitions, the cluster has {count} processes",
            layout.partitions
        )));
    }
    if index >= count {
        return Err(invalid(format!("no partition {index} of {count}")));
    }
    let (store, _) = Store::open(&partition_dir(dir, index))?;
    let share = !layout.partition_terms.is_empty();
    let info = store.partition_info();
    if info.is_some_and(|info| share != info.id_bound.is_some()) {
        return Err(invalid(format!(
            "partition-{index} and the layout disagree on whether the dictionary is partitioned"
        )));
    }
    if info.is_none_or(|info| {
        (info.index, info.count, info.hash.as_str()) != (index, count, layout.hash.as_str())
    }) {
        return Err(invalid(format!(
            "partition-{index} is {}, not partition {index} of {count}",
            match store.partition_info() {
                Some(info) => format!("partition {} of {} ({})", info.index, info.count, info.hash),
                None => "a whole store".to_owned(),
            }
        )));
    }
    if layout.load.is_some()
        && store.partition_info().and_then(|i| i.load.as_ref()) != layout.load.as_ref()
    {
        return Err(invalid(format!(
            "partition-{index} was written by another load than the layout"
        )));
    }
    let (own, expected_terms) = match share {
        true => (
            store.dictionary().local_len(),
            layout.partition_terms.get(index as usize).copied(),
        ),
        false => (store.terms(), Some(layout.terms)),
    };
    if Some(own) != expected_terms {
        return Err(invalid(format!(
            "partition-{index} has {own} terms, the layout {}",
            expected_terms.map_or("none".to_owned(), |t| t.to_string())
        )));
    }
    Ok((store, layout))
}
