//! The store: dictionary, predicate and class id spaces, graph indexes and statistics.

use oxrdf::TermRef;
use quiver_model::phases::time;
use quiver_model::term::{decode_term, encode_iri, encode_term};
use quiver_model::{ClassId, Column, DecodedTerm, Dictionary, Id, PredId};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::build::{build_graph, build_named_graph, build_presorted_graph, Presorted};
use crate::class_predicate::ClassPredicate;
use crate::entailment::{Entailment, Layer, View};
use crate::graph::{Direction, GraphIndex};
use crate::scratch;
use crate::stats::{ClassStats, PredicateStats};

/// Instances sampled per class for the characteristic statistics.
pub const CLASS_SAMPLE: usize = 4096;

pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// How a store came to be: recorded at load time and kept in the snapshot.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadInfo {
    /// Statements read from the input (duplicates included).
    pub statements: u64,
    /// Statements skipped as malformed (`--lenient`).
    pub skipped: u64,
    /// Wall-clock seconds of the last load.
    pub seconds: f64,
    /// Inputs of the last load (file names, or `lubm:N`).
    pub sources: Vec<String>,
    /// The last write-ahead log sequence number this version contains (`quiver-db`): a
    /// snapshot saved by a checkpoint records it, so recovery replays only later records.
    #[serde(default)]
    pub log_sequence: u64,
    /// Set on a partition of a partitioned store (`partition.rs`): which one, of which
    /// layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<crate::partition_info::PartitionInfo>,
}

/// An in-memory RDF store: one immutable version of it. Cloning is cheap (its arrays are
/// shared), and [`Store::apply`] makes the next version.
#[derive(Debug, Default, Clone)]
pub struct Store {
    pub(crate) dictionary: Dictionary,
    /// Predicate id → term id, ascending.
    pub(crate) predicates: Column<Id>,
    /// Predicates added by updates since the store was built: predicate id
    /// `predicates.len() + i` is term `appended_predicates[i]` (not in term order).
    pub(crate) appended_predicates: Vec<Id>,
    /// Class id → term id, ascending (the objects of `rdf:type` in the default graph).
    pub(crate) classes: Column<Id>,
    pub(crate) class_instances: Column<u64>,
    /// Characteristic statistics: for class `c`, predicate `p` and side `d` (0: subjects,
    /// 1: objects), how many instances of `c` are among the subjects/objects of `p`, at
    /// `(c * predicates + p) * 2 + d` (estimated from a sample of each class).
    pub(crate) class_predicate: ClassPredicate,
    /// The classes (term ids, ascending) and the number of predicates `class_predicate`
    /// was computed for: updates may add classes and predicates, which the planner then
    /// estimates without it until the next checkpoint.
    pub(crate) stat_classes: Column<Id>,
    pub(crate) stat_predicates: usize,
    /// Set by [`Store::use_statistics`]: a partition's statistics are the whole store's.
    pub(crate) merged_statistics: bool,
    pub(crate) predicate_stats: Vec<PredicateStats>,
    pub(crate) default_graph: GraphIndex,
    /// Named graphs, sorted by the graph name's term id.
    pub(crate) named_graphs: Vec<(Id, GraphIndex)>,
    pub(crate) info: LoadInfo,
    /// Distinguishes versions: unique among the stores of a process.
    pub(crate) version: u64,
    /// The default graph closed under a reasoning profile, if loaded with one
    /// (`entailment.rs`); shared by the version's views.
    pub(crate) entailment: Option<std::sync::Arc<Entailment>>,
    /// Which default graph this value reads.
    pub(crate) view: View,
    /// The full-text index over the literals, if the store has one (`text.rs`); versions
    /// made from this one by updates share it.
    pub(crate) text: Option<std::sync::Arc<dyn crate::text::TextSearch>>,
    /// The term id of `rdf:type`, once looked up and found: the planner asks for it many
    /// times per query, and a term's id never changes within a dictionary's versions.
    pub(crate) rdf_type_term: std::sync::OnceLock<Id>,
}

/// A fresh [`Store::version`].
pub(crate) fn next_version() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Encoded input of [`Store::build`]: triples as term ids `[subject, predicate, object]`.
#[derive(Debug, Default)]
pub struct EncodedGraphs {
    pub default_graph: Vec<[Id; 3]>,
    /// (graph name term id, triples), in any order; one graph may appear several times.
    pub named_graphs: Vec<(Id, Vec<[Id; 3]>)>,
}

impl Store {
    /// Builds a store from a dictionary and triples of its term ids.
    pub fn build(dictionary: Dictionary, input: EncodedGraphs, info: LoadInfo) -> Self {
        Self::build_with(dictionary, input, info, None, None)
    }

    /// Builds a store as [`Store::build`], `presorted` naming the default graph's triples
    /// that come in order already, with the predicates' term ids (a load on top of a store:
    /// see [`Presorted`]).
    pub fn build_presorted(
        dictionary: Dictionary,
        input: EncodedGraphs,
        presorted: Presorted<'_>,
        info: LoadInfo,
    ) -> Self {
        Self::build_with(dictionary, input, info, None, Some(presorted))
    }

    /// Builds a store as [`Store::build`], with an entailed layer when `entailment` gives
    /// a profile and the triples it derived from the default graph (term ids, none of
    /// them asserted): see `entailment.rs`.
    pub fn build_entailed(
        dictionary: Dictionary,
        input: EncodedGraphs,
        info: LoadInfo,
        entailment: Option<(quiver_reason::Profile, Vec<[Id; 3]>)>,
    ) -> Self {
        Self::build_with(dictionary, input, info, entailment, None)
    }

    fn build_with(
        dictionary: Dictionary,
        mut input: EncodedGraphs,
        info: LoadInfo,
        entailment: Option<(quiver_reason::Profile, Vec<[Id; 3]>)>,
        presorted: Option<Presorted<'_>>,
    ) -> Self {
        let (profile, mut derived) = match entailment {
            Some((profile, derived)) => (Some(profile), derived),
            None => (None, Vec::new()),
        };
        let mut predicates = time("predicate ids", || distinct_predicates(&input, &derived));
        predicates.sort_unstable();
        let to_pred = |triples: &mut [[Id; 3]]| {
            triples.par_iter_mut().for_each(|t| {
                t[1] = predicates.binary_search(&t[1]).expect("collected above") as Id;
            });
        };
        time("predicate ids", || {
            to_pred(&mut input.default_graph);
            // Graphs side by side, from the pool's threads: one call into the pool per graph
            // from this thread made a load of 100,000 small named graphs wait on waking
            // threads.
            input
                .named_graphs
                .par_iter_mut()
                .for_each(|(_, ts)| to_pred(ts));
            to_pred(&mut derived);
        });

        let vertices = dictionary.len();
        // The entailed graph first, while the asserted triples are still at hand.
        let entailed = profile.map(|profile| {
            let count = derived.len() as u64;
            let mut triples = std::mem::take(&mut derived);
            triples.extend_from_slice(&input.default_graph);
            let graph = build_graph(triples, Some(vertices), predicates.len());
            (profile, count, graph)
        });
        let default_input = std::mem::take(&mut input.default_graph);
        let (default_graph, predicate_stats) = match presorted {
            Some(Presorted { start, refill }) => {
                // The refilled triples hold predicates' term ids, as the input did.
                let to_pred = &to_pred;
                let refill = Box::new(move |place: &mut [[Id; 3]]| {
                    refill(place);
                    to_pred(place);
                });
                let presorted = Presorted { start, refill };
                build_presorted_graph(default_input, presorted, Some(vertices), predicates.len())
            }
            None => build_graph(default_input, Some(vertices), predicates.len()),
        };

        input.named_graphs.sort_by_key(|(graph, _)| *graph);
        let mut merged: Vec<(Id, Vec<[Id; 3]>)> = Vec::new();
        for (graph, triples) in input.named_graphs {
            match merged.last_mut() {
                Some((last, existing)) if *last == graph => existing.extend(triples),
                _ => merged.push((graph, triples)),
            }
        }
        // Side by side: a dataset may hold many small named graphs.
        let named_graphs = time("named graphs", || {
            merged
                .into_par_iter()
                .map(|(graph, triples)| (graph, build_named_graph(triples)))
                .collect()
        });

        let predicates: Column<Id> = predicates.into();
        let mut store = time("classes and statistics", || {
            Store::assemble(
                dictionary,
                (predicates, Vec::new()),
                (default_graph, predicate_stats),
                named_graphs,
                info,
            )
        });
        if let Some((profile, derived, graph)) = entailed {
            let view = Store::assemble(
                store.dictionary.clone(),
                (store.predicates.clone(), Vec::new()),
                graph,
                Vec::new(),
                LoadInfo::default(),
            );
            store.set_entailment(profile, derived, Some(Layer::of(&view)));
        }
        store
    }

    /// A new version of built graph indexes: its class catalog and characteristic
    /// statistics computed from the default graph (`predicates`: the predicate id space
    /// and the predicates appended after it).
    pub(crate) fn assemble(
        dictionary: Dictionary,
        predicates: (Column<Id>, Vec<Id>),
        (default_graph, predicate_stats): (GraphIndex, Vec<PredicateStats>),
        named_graphs: Vec<(Id, GraphIndex)>,
        info: LoadInfo,
    ) -> Self {
        let mut store = Store {
            dictionary,
            predicates: predicates.0,
            appended_predicates: predicates.1,
            classes: Column::default(),
            class_instances: Column::default(),
            class_predicate: ClassPredicate::default(),
            stat_classes: Column::default(),
            stat_predicates: 0,
            merged_statistics: false,
            predicate_stats,
            default_graph,
            named_graphs,
            info,
            version: next_version(),
            entailment: None,
            view: View::Asserted,
            text: None,
            rdf_type_term: std::sync::OnceLock::new(),
        };
        store.compute_classes();
        store
    }

    pub(crate) fn compute_classes(&mut self) {
        self.refresh_classes();
        if let Some(rdf_type) = self.rdf_type() {
            self.class_predicate = self.class_predicate_counts(&self.classes, rdf_type).into();
        } else {
            self.class_predicate = ClassPredicate::default();
        }
        self.stat_classes = self.classes.clone();
        self.stat_predicates = self.predicate_count();
    }

    /// The class catalog (classes and instance counts) from the default graph, without
    /// the characteristic statistics: what an update refreshes.
    pub(crate) fn refresh_classes(&mut self) {
        let Some(rdf_type) = self.rdf_type() else {
            self.classes = Column::default();
            self.class_instances = Column::default();
            return;
        };
        let classes = self.default_graph.predicate_objects(rdf_type).to_vec();
        let instances = classes
            .iter()
            .map(|&class| self.default_graph.degree(class, rdf_type, Direction::In) as u64)
            .collect::<Vec<_>>();
        self.classes = classes.into();
        self.class_instances = instances.into();
    }

    /// Estimates, for every class and predicate, how many instances of the class are
    /// subjects and objects of the predicate: a sample of up to [`CLASS_SAMPLE`] instances
    /// per class is probed in the predicate index, and the hit rate scaled up. This lets
    /// the planner know that, say, most objects of `ub:advisor` are professors.
    fn class_predicate_counts(&self, classes: &[Id], rdf_type: PredId) -> Vec<u64> {
        let predicates = self.predicate_count();
        let graph = &self.default_graph;
        classes
            .par_iter()
            .flat_map_iter(|&class| {
                let instances = graph.get(class, rdf_type, Direction::In);
                let step = instances.len().div_ceil(CLASS_SAMPLE).max(1);
                let sample: Vec<Id> = instances.iter().step_by(step).copied().collect();
                let scale = instances.len() as f64 / sample.len().max(1) as f64;
                (0..predicates).flat_map(move |p| {
                    let subjects = graph.predicate_subjects(p as PredId);
                    let objects = graph.predicate_objects(p as PredId);
                    let hits = |list: &[Id]| {
                        sample
                            .iter()
                            .filter(|x| list.binary_search(x).is_ok())
                            .count()
                    };
                    [
                        (hits(subjects) as f64 * scale).round() as u64,
                        (hits(objects) as f64 * scale).round() as u64,
                    ]
                })
            })
            .collect()
    }

    /// Estimated instances of class `class` that are subjects (`Direction::Out`: they have
    /// the predicate) or objects (`Direction::In`) of `predicate`.
    pub fn class_predicate_count(
        &self,
        class: ClassId,
        predicate: PredId,
        side: Direction,
    ) -> Option<u64> {
        let term = *self.classes.get(class as usize)?;
        let row = self.stat_classes.binary_search(&term).ok()?;
        if predicate as usize >= self.stat_predicates {
            return None;
        }
        let index = (row * self.stat_predicates + predicate as usize) * 2
            + usize::from(side == Direction::In);
        self.class_predicate.get(index)
    }

    /// The average number of classes (`rdf:type` objects) of a vertex that is a subject
    /// (`Direction::Out`) or an object (`Direction::In`) of `predicate`, from the
    /// characteristic statistics; `None` where they do not cover the predicate.
    pub fn types_per_vertex(&self, predicate: PredId, side: Direction) -> Option<f64> {
        let typed =
            self.class_predicate
                .typed_on_side(predicate as usize, side, self.stat_predicates)?;
        let stats = self.predicate_stats(predicate);
        let distinct = match side {
            Direction::Out => stats.subjects,
            Direction::In => stats.objects,
        };
        Some(typed as f64 / distinct.max(1) as f64)
    }

    /// Instances of class `class` (their number).
    pub fn class_size(&self, class: ClassId) -> u64 {
        self.class_instances
            .get(class as usize)
            .copied()
            .unwrap_or(0)
    }

    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// Drops the resident pages of every large array mapped from the snapshot the store was
    /// opened from (the dictionary's, every graph index's); reading them again maps them
    /// anew from the files. A load on top of a saved store reads it once and calls this, so
    /// that the old store is not held resident beside the new one. Arrays in memory are
    /// left as they are.
    pub fn release_mapped_pages(&self) {
        let (data, buckets, _) = self.dictionary.parts();
        data.release_mapped_pages();
        buckets.release_mapped_pages();
        self.default_graph.release_mapped_pages();
        for (_, graph) in &self.named_graphs {
            graph.release_mapped_pages();
        }
        if let Some(entailment) = &self.entailment {
            entailment.entailed.default_graph.release_mapped_pages();
            entailment.asserted.default_graph.release_mapped_pages();
        }
    }

    /// The default graph's index.
    pub fn graph(&self) -> &GraphIndex {
        &self.default_graph
    }

    /// A named graph's index, by the term id of its name.
    pub fn named_graph(&self, name: Id) -> Option<&GraphIndex> {
        self.named_graphs
            .binary_search_by_key(&name, |(graph, _)| *graph)
            .ok()
            .map(|i| &self.named_graphs[i].1)
    }

    /// The name of the named graph whose index is `graph` itself (not one equal to it), found
    /// from where it lies: the planner asks it at every planning, and a query of
    /// `GRAPH ?g` plans once per graph, so a scan of the names made such a query quadratic
    /// in the number of graphs (15,000 graphs: 1.9 s).
    pub fn named_graph_name(&self, graph: &GraphIndex) -> Option<Id> {
        let entry = std::mem::size_of::<(Id, GraphIndex)>();
        let base = self.named_graphs.as_ptr() as usize;
        let at = (graph as *const GraphIndex as usize).checked_sub(base)? / entry;
        self.named_graphs
            .get(at)
            .filter(|(_, index)| std::ptr::eq(index, graph))
            .map(|(name, _)| *name)
    }

    /// The RDF merge of some graphs (`None` = the default graph, `Some(name)` a named
    /// graph; names the store lacks contribute nothing), as one index: the default graph of
    /// a query whose dataset names several graphs (`FROM <a> FROM <b>`). Built per query,
    /// in time linear in the triples of the graphs merged.
    pub fn merged_graph(&self, graphs: &[Option<Id>]) -> GraphIndex {
        let mut triples: Vec<[Id; 3]> = Vec::new();
        for graph in graphs {
            let index = match graph {
                None => Some(&self.default_graph),
                Some(name) => self.named_graph(*name),
            };
            if let Some(index) = index {
                index.for_each_triple(|s, p, o| triples.push([s, p as Id, o]));
            }
        }
        crate::build::build_graph(triples, None, self.predicate_count()).0
    }

    /// Names (term ids) of the named graphs, ascending.
    pub fn graph_names(&self) -> impl Iterator<Item = Id> + '_ {
        self.named_graphs.iter().map(|(name, _)| *name)
    }

    /// Distinct triples in all graphs.
    pub fn triples(&self) -> u64 {
        self.default_graph.triples()
            + self
                .named_graphs
                .iter()
                .map(|(_, g)| g.triples())
                .sum::<u64>()
    }

    pub fn terms(&self) -> u64 {
        self.dictionary.len()
    }

    pub fn predicate_count(&self) -> usize {
        self.predicates.len() + self.appended_predicates.len()
    }

    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// An id of this version of the store, unique in the process: what a cache of
    /// prepared queries keys on, since a query's constants resolve differently after an
    /// update.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The full-text index over this version's literals, if the store has one.
    pub fn text_index(&self) -> Option<&std::sync::Arc<dyn crate::text::TextSearch>> {
        self.text.as_ref()
    }

    /// This version with `index` as its full-text index (`None`: without one), as a new
    /// version (prepared queries are planned again: they may read the index).
    pub fn with_text_index(
        &self,
        index: Option<std::sync::Arc<dyn crate::text::TextSearch>>,
    ) -> Store {
        Store {
            text: index,
            version: next_version(),
            ..self.clone()
        }
    }

    /// Whether the store has a graph named `name` (possibly empty).
    pub fn has_named_graph(&self, name: Id) -> bool {
        self.named_graph(name).is_some()
    }

    /// Every quad, graph by graph (the default graph first, then named graphs by name),
    /// with the predicate as a term id.
    pub fn for_each_quad(&self, mut f: impl FnMut(crate::Quad)) {
        let mut visit = |graph: Option<Id>, index: &GraphIndex| {
            index.for_each_triple(|subject, predicate, object| {
                f(crate::Quad {
                    subject,
                    predicate: self.predicate_term(predicate),
                    object,
                    graph,
                })
            });
        };
        visit(None, &self.default_graph);
        for (name, index) in &self.named_graphs {
            visit(Some(*name), index);
        }
    }

    pub fn info(&self) -> &LoadInfo {
        &self.info
    }

    pub fn set_info(&mut self, info: LoadInfo) {
        self.info = info;
    }

    /// The term id of an RDF term, if the store has it.
    pub fn term_id(&self, term: TermRef<'_>) -> Option<Id> {
        scratch::with_bytes(|bytes| {
            encode_term(term, bytes);
            self.dictionary.lookup(bytes)
        })
    }

    /// [`Store::term_id`] for a query's constants, looked up again each time a query is
    /// prepared: answered from the dictionary's recently found terms when it can.
    pub fn constant_id(&self, term: TermRef<'_>) -> Option<Id> {
        scratch::with_bytes(|bytes| {
            encode_term(term, bytes);
            self.dictionary.lookup_remembered(bytes)
        })
    }

    /// [`Store::predicate_id`] for a query's constants, like [`Store::constant_id`].
    pub fn constant_predicate_id(&self, iri: &str) -> Option<PredId> {
        let id = scratch::with_bytes(|bytes| {
            encode_iri(iri, bytes);
            self.dictionary.lookup_remembered(bytes)
        });
        self.predicate_of_term(id?)
    }

    /// The term id of an IRI, if the store has it.
    pub fn iri_id(&self, iri: &str) -> Option<Id> {
        scratch::with_bytes(|bytes| {
            encode_iri(iri, bytes);
            self.dictionary.lookup(bytes)
        })
    }

    /// Decodes term `id` (the closure sees the term borrowed from a scratch buffer).
    pub fn with_term<R>(&self, id: Id, f: impl FnOnce(Option<DecodedTerm<'_>>) -> R) -> R {
        scratch::with_bytes(|bytes| {
            if !self.dictionary.term_into(id, bytes) {
                return f(None);
            }
            f(decode_term(bytes).ok())
        })
    }

    /// The owned RDF term of `id`.
    pub fn term(&self, id: Id) -> Option<oxrdf::Term> {
        self.with_term(id, |t| t.map(|t| t.to_term()))
    }

    /// The predicate id of the predicate whose term id is `term`.
    pub fn predicate_of_term(&self, term: Id) -> Option<PredId> {
        match self.predicates.binary_search(&term) {
            Ok(p) => Some(p as PredId),
            Err(_) => self
                .appended_predicates
                .iter()
                .position(|&appended| appended == term)
                .map(|i| (self.predicates.len() + i) as PredId),
        }
    }

    /// The predicate id of an IRI.
    pub fn predicate_id(&self, iri: &str) -> Option<PredId> {
        self.predicate_of_term(self.iri_id(iri)?)
    }

    /// The term id of predicate `predicate`.
    pub fn predicate_term(&self, predicate: PredId) -> Id {
        let p = predicate as usize;
        match self.predicates.get(p) {
            Some(&term) => term,
            None => self.appended_predicates[p - self.predicates.len()],
        }
    }

    /// The predicate id of `rdf:type`, if any triple uses it.
    pub fn rdf_type(&self) -> Option<PredId> {
        // Asked for many times while a query is planned: the term id is looked up once
        // (a store without the term looks again, as an update may add it).
        let term = match self.rdf_type_term.get() {
            Some(&term) => term,
            None => {
                let mut bytes = Vec::with_capacity(RDF_TYPE.len() + 1);
                encode_iri(RDF_TYPE, &mut bytes);
                let term = self.dictionary.lookup_remembered(&bytes)?;
                *self.rdf_type_term.get_or_init(|| term)
            }
        };
        self.predicate_of_term(term)
    }

    /// Statistics of `predicate`.
    pub fn predicate_stats(&self, predicate: PredId) -> PredicateStats {
        self.predicate_stats
            .get(predicate as usize)
            .copied()
            .unwrap_or_default()
    }

    /// The class id of the class whose term id is `term`.
    pub fn class_of_term(&self, term: Id) -> Option<ClassId> {
        self.classes.binary_search(&term).ok().map(|c| c as ClassId)
    }

    /// Every class with its number of instances, by class id.
    pub fn class_stats(&self) -> impl Iterator<Item = ClassStats> + '_ {
        self.classes
            .iter()
            .zip(self.class_instances.iter())
            .map(|(&class, &instances)| ClassStats { class, instances })
    }

    /// Instances of class `class` (term ids, sorted): the type index.
    pub fn instances(&self, class: ClassId) -> &[Id] {
        match (self.rdf_type(), self.classes.get(class as usize)) {
            (Some(rdf_type), Some(&term)) => self.default_graph.get(term, rdf_type, Direction::In),
            _ => &[],
        }
    }

    /// Bytes of all store structures, heap or mapped.
    pub fn data_bytes(&self) -> usize {
        self.dictionary.data_bytes()
            + self.predicates.data_bytes()
            + self.classes.data_bytes()
            + self.class_instances.data_bytes()
            + self.class_predicate.data_bytes()
            + self.default_graph.data_bytes()
            + self
                .named_graphs
                .iter()
                .map(|(_, g)| g.data_bytes())
                .sum::<usize>()
            + self
                .entailment()
                .map_or(0, |layer| layer.other_layer_bytes(self.view))
    }
}

impl Store {
    /// The entailed layer, if the store was loaded or reasoned with a profile.
    pub fn entailment(&self) -> Option<&Entailment> {
        self.entailment.as_deref()
    }

    /// Sets (or drops) the entailed layer of an asserted view; the asserted layer is
    /// taken from the store.
    pub(crate) fn set_entailment(
        &mut self,
        profile: quiver_reason::Profile,
        derived: u64,
        entailed: Option<Layer>,
    ) {
        debug_assert_eq!(self.view, View::Asserted);
        self.entailment = entailed.map(|entailed| {
            std::sync::Arc::new(Entailment {
                profile,
                derived,
                entailed,
                asserted: Layer::of(self),
                ontology: std::sync::OnceLock::new(),
            })
        });
    }
}

// A layer is the entailment's (`entailment.rs`); it is read from and put into a store's
// own fields, hence here.
impl Layer {
    /// The default graph and catalog `store` reads.
    pub(crate) fn of(store: &Store) -> Self {
        Self {
            default_graph: store.default_graph.clone(),
            predicate_stats: store.predicate_stats.clone(),
            classes: store.classes.clone(),
            class_instances: store.class_instances.clone(),
            class_predicate: store.class_predicate.clone(),
            stat_classes: store.stat_classes.clone(),
            stat_predicates: store.stat_predicates,
        }
    }

    /// `store` reading this layer's default graph and catalog.
    pub(crate) fn install(&self, store: &mut Store) {
        store.default_graph = self.default_graph.clone();
        store.predicate_stats = self.predicate_stats.clone();
        store.classes = self.classes.clone();
        store.class_instances = self.class_instances.clone();
        store.class_predicate = self.class_predicate.clone();
        store.stat_classes = self.stat_classes.clone();
        store.stat_predicates = self.stat_predicates;
    }
}

/// The predicate id space: the distinct predicate terms of `input` and `derived`, in no
/// order. Each worker collects the predicates of its part into a small set (collecting into
/// one set directly would insert every triple's predicate on one thread).
fn distinct_predicates(input: &EncodedGraphs, derived: &[[Id; 3]]) -> Vec<Id> {
    input
        .default_graph
        .par_iter()
        .map(|t| t[1])
        .chain(
            input
                .named_graphs
                .par_iter()
                .flat_map_iter(|(_, ts)| ts.iter().map(|t| t[1])),
        )
        .chain(derived.par_iter().map(|t| t[1]))
        .fold(rustc_hash::FxHashSet::default, |mut set, p| {
            set.insert(p);
            set
        })
        .reduce(rustc_hash::FxHashSet::default, |mut a, b| {
            a.extend(b);
            a
        })
        .into_iter()
        .collect()
}
