//! The edges of many vertices at once, from one graph index or from the partitions of a
//! partitioned store: what property paths and DESCRIBE read outside basic graph patterns.
//!
//! Over partitions a vertex's record lives at its owner, so a caller asks for the edges of
//! a whole frontier in one request (a one-pattern basic graph pattern seeded with the
//! frontier, which the partitions' executor routes to the owners), never vertex by vertex.

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Store};

use crate::bgp::{Bgp, Node, Pattern, Pred};
use crate::context::QueryState;
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::partitions::{BgpPartitions, PartitionedBgp};
use crate::step::{Step, StepKind};
use crate::table::{Table, VarId};

/// Edges found from a list of start vertices, one entry per edge, in any order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Edges {
    /// The position of the edge's start in the list asked for.
    pub start: Vec<u32>,
    /// The edge's predicate.
    pub predicate: Vec<PredId>,
    /// The vertex at the other end.
    pub end: Vec<Id>,
}

impl Edges {
    pub fn len(&self) -> usize {
        self.end.len()
    }

    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    fn push(&mut self, start: u32, predicate: PredId, end: Id) {
        self.start.push(start);
        self.predicate.push(predicate);
        self.end.push(end);
    }
}

/// A graph read a frontier at a time.
pub trait EdgeSource {
    /// Every edge of each of `starts` (distinct) in `direction` (Out: the vertex is the
    /// subject), over `predicate` or, with `None`, over every predicate.
    fn edges(
        &self,
        starts: &[Id],
        predicate: Option<PredId>,
        direction: Direction,
    ) -> Result<Edges, QueryError>;

    /// The distinct subjects (`Direction::Out`) or objects (`In`) of `predicate`, sorted.
    fn predicate_ends(
        &self,
        predicate: PredId,
        direction: Direction,
    ) -> Result<Vec<Id>, QueryError>;

    /// The number of predicates ids run over.
    fn predicates(&self) -> usize;

    /// Which of `vertices` (distinct) are a subject or object of some triple of the graph.
    fn in_graph(&self, vertices: &[Id]) -> Result<Vec<bool>, QueryError> {
        let mut found = vec![false; vertices.len()];
        for direction in [Direction::Out, Direction::In] {
            for start in self.edges(vertices, None, direction)?.start {
                found[start as usize] = true;
            }
        }
        Ok(found)
    }

    /// Every vertex of the graph (a subject or object of some triple), sorted.
    fn vertices(&self) -> Result<Vec<Id>, QueryError> {
        let mut all = Vec::new();
        for p in 0..self.predicates() as PredId {
            all.extend(self.predicate_ends(p, Direction::Out)?);
            all.extend(self.predicate_ends(p, Direction::In)?);
        }
        all.sort_unstable();
        all.dedup();
        Ok(all)
    }
}

/// The edges of one graph index in memory.
pub struct GraphEdges<'a>(pub &'a GraphIndex);

impl EdgeSource for GraphEdges<'_> {
    fn edges(
        &self,
        starts: &[Id],
        predicate: Option<PredId>,
        direction: Direction,
    ) -> Result<Edges, QueryError> {
        let mut edges = Edges::default();
        for (i, &start) in starts.iter().enumerate() {
            match predicate {
                Some(p) => {
                    for &end in self.0.get(start, p, direction) {
                        edges.push(i as u32, p, end);
                    }
                }
                None => {
                    for (p, ends) in self.0.edges(start, direction).iter() {
                        for &end in ends {
                            edges.push(i as u32, p, end);
                        }
                    }
                }
            }
        }
        Ok(edges)
    }

    fn predicate_ends(
        &self,
        predicate: PredId,
        direction: Direction,
    ) -> Result<Vec<Id>, QueryError> {
        Ok(match direction {
            Direction::Out => self.0.predicate_subjects(predicate).to_vec(),
            Direction::In => self.0.predicate_objects(predicate).to_vec(),
        })
    }

    fn predicates(&self) -> usize {
        self.0.predicates()
    }
}

/// The edges of one graph of a partitioned store, each frontier sent to the partitions as
/// a one-pattern basic graph pattern seeded with it.
pub struct PartitionedEdges<'a> {
    pub partitions: &'a dyn BgpPartitions,
    pub store: &'a Store,
    pub graph: GraphRef,
    /// The `FROM` graphs merged, when `graph` is their merge.
    pub merged: &'a [Id],
    pub state: &'a QueryState,
}

/// The variables of the one-pattern requests: the frontier vertex, the far end, the
/// predicate and the frontier position (carried through as a plain column).
const FROM: VarId = 0;
const TO: VarId = 1;
const PREDICATE: VarId = 2;
const POSITION: VarId = 3;

impl PartitionedEdges<'_> {
    fn run(&self, pattern: Pattern, step: Step, input: Table) -> Result<Table, QueryError> {
        let bgp = Bgp {
            patterns: vec![pattern],
            equalities: Vec::new(),
        };
        self.partitions
            .explore(PartitionedBgp {
                bgp: &bgp,
                steps: &[step],
                graph: self.graph,
                merged: self.merged,
                input,
                state: self.state,
                keep: None,
                count_by: None,
                distinct_only: false,
                answers: None,
                top: None,
                extremes: None,
                limit: None,
                passes: Vec::new(),
                checks: Vec::new(),
                trace: false,
            })
            .map(|explored| explored.rows)
    }
}

fn column(table: &Table, var: VarId) -> Result<&[Id], QueryError> {
    table
        .column(var)
        .ok_or_else(|| QueryError::Plan(format!("the partitions returned no column {var}")))
}

impl EdgeSource for PartitionedEdges<'_> {
    fn edges(
        &self,
        starts: &[Id],
        predicate: Option<PredId>,
        direction: Direction,
    ) -> Result<Edges, QueryError> {
        let (subject, object) = match direction {
            Direction::Out => (FROM, TO),
            Direction::In => (TO, FROM),
        };
        let pattern = Pattern {
            subject: Node::Var(subject),
            predicate: predicate.map_or(Pred::Var(PREDICATE), Pred::Const),
            object: Node::Var(object),
            text: "edges of a frontier".into(),
        };
        let input = Table {
            vars: vec![FROM, POSITION],
            rows: starts.len(),
            columns: vec![starts.to_vec(), (0..starts.len() as Id).collect()],
        };
        let step = Step::new(0, StepKind::Walk(direction), starts.len() as f64);
        let table = self.run(pattern, step, input)?;
        // Positions in `starts`: a conversion only where `Id` is `u64` (`wide-ids`).
        #[allow(clippy::useless_conversion)]
        let start = column(&table, POSITION)?
            .iter()
            .map(|&at| {
                u32::try_from(at)
                    .map_err(|_| QueryError::Plan(format!("the partitions returned position {at}")))
            })
            .collect::<Result<_, _>>()?;
        let mut edges = Edges {
            start,
            predicate: Vec::new(),
            end: column(&table, TO)?.to_vec(),
        };
        edges.predicate = match predicate {
            Some(p) => vec![p; edges.len()],
            None => column(&table, PREDICATE)?
                .iter()
                .map(|&term| {
                    self.store.predicate_of_term(term).ok_or_else(|| {
                        QueryError::Plan(format!("the partitions returned no predicate: {term}"))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(edges)
    }

    fn predicate_ends(
        &self,
        predicate: PredId,
        direction: Direction,
    ) -> Result<Vec<Id>, QueryError> {
        let pattern = Pattern {
            subject: Node::Var(FROM),
            predicate: Pred::Const(predicate),
            object: Node::Var(TO),
            text: "ends of a predicate".into(),
        };
        // The index step names the side it lists by the direction a walk would leave it.
        let (kind, var) = match direction {
            Direction::Out => (StepKind::Index(Direction::In), FROM),
            Direction::In => (StepKind::Index(Direction::Out), TO),
        };
        let table = self.run(pattern, Step::new(0, kind, 0.0), Table::unit())?;
        let mut ends = column(&table, var)?.to_vec();
        ends.sort_unstable();
        ends.dedup();
        Ok(ends)
    }

    fn predicates(&self) -> usize {
        self.store.predicate_count()
    }
}
