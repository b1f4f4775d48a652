//! The same dataset in Quiver and in Oxigraph, updated through both: after each update
//! request both must have failed, or both must hold the same quads (blank nodes compared
//! up to renaming) and the same named graphs.

use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::{Dataset, NamedOrBlankNode, Quad};
use quiver_sparql::update::{execute_update, LoadHandler, NoLoad, UpdateOutcome};
use quiver_sparql::{parse_update, ExecOptions};
use quiver_store::Store;

/// Quiver and Oxigraph holding the same dataset.
pub struct Pair {
    pub quiver: Store,
    pub oxigraph: oxigraph::store::Store,
}

/// What became of one update request in both engines.
#[derive(Debug)]
pub enum Both {
    Done(Box<UpdateOutcome>),
    /// Both refused it: Quiver's and Oxigraph's errors.
    Failed(String, String),
}

impl Pair {
    /// Both loaded with the N-Quads `nquads`.
    pub fn new(nquads: &str) -> Self {
        let quads: Vec<Quad> = oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::NQuads)
            .for_slice(nquads.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{nquads}: {e}"));
        let oxigraph = oxigraph::store::Store::new().unwrap();
        for quad in &quads {
            oxigraph.insert(quad).unwrap();
        }
        let (quiver, _) = quiver_loader::load_quads(quads, None).unwrap();
        let pair = Self { quiver, oxigraph };
        pair.assert_same("loading");
        pair
    }

    /// Runs `update` in both (LOAD reads nothing); panics when they disagree.
    pub fn update(&mut self, update: &str) -> Both {
        self.update_with(update, &ExecOptions::default(), &NoLoad)
    }

    /// Runs `update` in both, Quiver with `options` and `loader`.
    pub fn update_with(
        &mut self,
        update: &str,
        options: &ExecOptions,
        loader: &dyn LoadHandler,
    ) -> Both {
        let ours = parse_update(update, None)
            .and_then(|parsed| execute_update(&self.quiver, &parsed, options, loader));
        let theirs = self.oxigraph.update(update);
        match (ours, theirs) {
            (Ok(outcome), Ok(())) => {
                self.quiver = outcome.store.clone();
                self.assert_same(update);
                Both::Done(Box::new(outcome))
            }
            (Err(ours), Err(theirs)) => {
                self.assert_same(update);
                Both::Failed(ours.to_string(), theirs.to_string())
            }
            (Ok(_), Err(theirs)) => panic!("{update}\nOxigraph fails ({theirs}), Quiver does not"),
            (Err(ours), Ok(())) => panic!("{update}\nQuiver fails ({ours}), Oxigraph does not"),
        }
    }

    /// Panics unless both hold the same quads and named graphs.
    pub fn assert_same(&self, context: &str) {
        let ours = canonical(quiver_dataset(&self.quiver));
        let theirs = canonical(oxigraph_dataset(&self.oxigraph));
        assert_eq!(
            sorted(&ours),
            sorted(&theirs),
            "after {context}: Quiver's quads (left) differ from Oxigraph's (right)"
        );
        assert_eq!(
            quiver_graphs(&self.quiver),
            oxigraph_graphs(&self.oxigraph),
            "after {context}: Quiver's named graphs (left) differ from Oxigraph's (right)"
        );
    }
}

/// Every quad of a Quiver store.
pub fn quiver_dataset(store: &Store) -> Dataset {
    let mut quads = Vec::new();
    store.for_each_quad(|quad| quads.push(quad));
    let mut dataset = Dataset::new();
    for quad in quads {
        let term = |id| store.term(id).unwrap_or_else(|| panic!("no term {id}"));
        let subject = match term(quad.subject) {
            oxrdf::Term::NamedNode(n) => NamedOrBlankNode::from(n),
            oxrdf::Term::BlankNode(b) => NamedOrBlankNode::from(b),
            other => panic!("subject {other}"),
        };
        let oxrdf::Term::NamedNode(predicate) = term(quad.predicate) else {
            panic!("predicate {}", quad.predicate);
        };
        let graph = match quad.graph.map(term) {
            None => oxrdf::GraphName::DefaultGraph,
            Some(oxrdf::Term::NamedNode(n)) => n.into(),
            Some(oxrdf::Term::BlankNode(b)) => b.into(),
            Some(other) => panic!("graph {other}"),
        };
        dataset.insert(&Quad::new(subject, predicate, term(quad.object), graph));
    }
    dataset
}

/// Every quad of an Oxigraph store.
pub fn oxigraph_dataset(store: &oxigraph::store::Store) -> Dataset {
    store.iter().map(Result::unwrap).collect()
}

/// Names of the named graphs of a Quiver store (empty ones too), sorted.
pub fn quiver_graphs(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = store
        .graph_names()
        .map(|id| store.term(id).unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn oxigraph_graphs(store: &oxigraph::store::Store) -> Vec<String> {
    let mut names: Vec<String> = store
        .named_graphs()
        .map(|name| name.unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// The dataset with canonical blank node labels (equal for isomorphic datasets).
pub fn canonical(mut dataset: Dataset) -> Dataset {
    dataset.canonicalize(CanonicalizationAlgorithm::Unstable);
    dataset
}

/// The quads as sorted N-Quads lines (readable in a failed assertion).
pub fn sorted(dataset: &Dataset) -> Vec<String> {
    let mut lines: Vec<String> = dataset.iter().map(|q| q.to_string()).collect();
    lines.sort();
    lines
}
