//! Quad templates of `DELETE { … }` and `INSERT { … }`, instantiated once per solution of
//! the `WHERE` pattern.
//!
//! A template is compiled once per operation into slots: a constant (its id: looked up for
//! a delete, whose constant the store lacks makes the template match nothing; interned for
//! an insert), a variable (a column of the solutions) or, in inserts, a blank node (fresh
//! for each solution). A solution that leaves a slot unbound, or binds it to a term that
//! cannot stand there (a literal subject or graph name, a predicate that is not an IRI),
//! skips that quad only, as SPARQL Update has it. A triple term with variables or blank
//! nodes inside is built per solution (`triple_template.rs`).

use oxrdf::{Term, TermRef};
use quiver_model::term::{TAG_BLANK, TAG_IRI};
use quiver_model::Id;
use quiver_store::Quad;
use rustc_hash::FxHashMap;
use spargebra::term::{
    GraphNamePattern, GroundQuadPattern, GroundTermPattern, NamedNodePattern, QuadPattern,
    TermPattern,
};

use crate::engine::Solutions;
use crate::error::QueryError;
use crate::table::UNBOUND;

use super::builder::Builder;
use super::columns::Columns;
use super::triple_template::TripleTemplate;
use super::Request;

/// Where a term of a template comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Const(Id),
    /// Column of the solutions.
    Var(usize),
    /// Blank node label number (fresh per solution).
    Blank(usize),
    /// The default graph (graph slot only).
    DefaultGraph,
    /// A triple term built per solution, by number (object slot only).
    Triple(usize),
}

/// What may stand in a position of a quad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Subjects and graph names: IRIs and blank nodes.
    Resource,
    Predicate,
    Object,
}

impl Position {
    fn allows_tag(self, tag: u8) -> bool {
        match self {
            Position::Resource => tag == TAG_IRI || tag == TAG_BLANK,
            Position::Predicate => tag == TAG_IRI,
            Position::Object => true,
        }
    }

    fn allows(self, term: &Term) -> bool {
        match term {
            Term::NamedNode(_) => true,
            Term::BlankNode(_) => self != Position::Predicate,
            Term::Literal(_) | Term::Triple(_) => self == Position::Object,
        }
    }
}

/// One compiled quad template.
#[derive(Debug, Clone, Copy)]
struct QuadSlots {
    subject: Slot,
    predicate: Slot,
    object: Slot,
    graph: Slot,
}

/// An operation's delete and insert templates, compiled.
pub(crate) struct Templates {
    deletes: Vec<QuadSlots>,
    inserts: Vec<QuadSlots>,
    /// Labels of the insert templates' blank nodes.
    blanks: Vec<String>,
    /// The triple terms built per solution.
    triples: Vec<TripleTemplate>,
    /// Store terms' kind tags, by id (for variables in restricted positions).
    tags: FxHashMap<Id, u8>,
    /// Ids of terms the `WHERE` evaluation computed, by their id in the solutions: in
    /// the store, if there (for deletes), and in the change set (for inserts).
    existing: FxHashMap<Id, Option<Id>>,
    interned: FxHashMap<Id, Id>,
    /// The operation's number in the request (scopes fresh blank nodes).
    operation: usize,
    scratch: Vec<u8>,
}

impl Templates {
    /// Compiles the templates; their variables are added to `columns`.
    pub(crate) fn compile(
        builder: &mut Builder<'_>,
        delete: &[GroundQuadPattern],
        insert: &[QuadPattern],
        columns: &mut Columns,
        operation: usize,
    ) -> Result<Self, QueryError> {
        let mut templates = Templates {
            deletes: Vec::new(),
            inserts: Vec::new(),
            blanks: Vec::new(),
            triples: Vec::new(),
            tags: FxHashMap::default(),
            existing: FxHashMap::default(),
            interned: FxHashMap::default(),
            operation,
            scratch: Vec::new(),
        };
        for quad in delete {
            let subject =
                templates.ground_slot(builder, &quad.subject, Position::Resource, columns)?;
            let predicate = predicate_slot(builder, &quad.predicate, false, columns)?;
            let object = templates.ground_slot(builder, &quad.object, Position::Object, columns)?;
            let graph = graph_slot(builder, &quad.graph_name, false, columns)?;
            if let (Some(subject), Some(predicate), Some(object), Some(graph)) =
                (subject, predicate, object, graph)
            {
                templates.deletes.push(QuadSlots {
                    subject,
                    predicate,
                    object,
                    graph,
                });
            }
        }
        for quad in insert {
            let subject =
                templates.term_slot(builder, &quad.subject, Position::Resource, columns)?;
            let predicate = predicate_slot(builder, &quad.predicate, true, columns)?;
            let object = templates.term_slot(builder, &quad.object, Position::Object, columns)?;
            let graph = graph_slot(builder, &quad.graph_name, true, columns)?;
            if let (Some(subject), Some(predicate), Some(object), Some(graph)) =
                (subject, predicate, object, graph)
            {
                templates.inserts.push(QuadSlots {
                    subject,
                    predicate,
                    object,
                    graph,
                });
            }
        }
        Ok(templates)
    }

    /// Whether no template can produce a quad (the `WHERE` evaluation can be skipped).
    pub(crate) fn is_empty(&self) -> bool {
        self.deletes.is_empty() && self.inserts.is_empty()
    }

    /// A slot of an insert template (blank nodes allowed).
    fn term_slot(
        &mut self,
        builder: &mut Builder<'_>,
        term: &TermPattern,
        position: Position,
        columns: &mut Columns,
    ) -> Result<Option<Slot>, QueryError> {
        Ok(match term {
            TermPattern::Variable(v) => Some(Slot::Var(columns.column(v))),
            TermPattern::BlankNode(b) => {
                let label = b.as_str();
                let index = match self.blanks.iter().position(|l| l == label) {
                    Some(index) => index,
                    None => {
                        self.blanks.push(label.to_owned());
                        self.blanks.len() - 1
                    }
                };
                Some(Slot::Blank(index))
            }
            TermPattern::NamedNode(n) => Some(Slot::Const(builder.intern(n.as_ref().into())?)),
            TermPattern::Literal(l) if position == Position::Object => {
                Some(Slot::Const(builder.intern(l.as_ref().into())?))
            }
            TermPattern::Literal(_) => None,
            TermPattern::Triple(triple) if position == Position::Object => {
                match TripleTemplate::insert(triple, columns) {
                    Ok(template) => {
                        self.triples.push(template);
                        Some(Slot::Triple(self.triples.len() - 1))
                    }
                    Err(term) => Some(Slot::Const(builder.intern(term.as_ref())?)),
                }
            }
            TermPattern::Triple(_) => None,
        })
    }

    /// A slot of a delete template (no blank nodes): a constant the store lacks gives
    /// `None`.
    fn ground_slot(
        &mut self,
        builder: &mut Builder<'_>,
        term: &GroundTermPattern,
        position: Position,
        columns: &mut Columns,
    ) -> Result<Option<Slot>, QueryError> {
        Ok(match term {
            GroundTermPattern::Variable(v) => Some(Slot::Var(columns.column(v))),
            GroundTermPattern::NamedNode(n) => builder.existing(n.as_ref().into()).map(Slot::Const),
            GroundTermPattern::Literal(l) if position == Position::Object => {
                builder.existing(l.as_ref().into()).map(Slot::Const)
            }
            GroundTermPattern::Literal(_) => None,
            GroundTermPattern::Triple(triple) if position == Position::Object => {
                match TripleTemplate::delete(triple, columns) {
                    Ok(template) => {
                        self.triples.push(template);
                        Some(Slot::Triple(self.triples.len() - 1))
                    }
                    Err(term) => builder.existing(term.as_ref()).map(Slot::Const),
                }
            }
            GroundTermPattern::Triple(_) => None,
        })
    }

    /// Adds the quads of solution `row` to the builder: deletes, then inserts (blank
    /// nodes of the inserts are fresh for the solution).
    pub(crate) fn instantiate(
        &mut self,
        request: &Request<'_>,
        builder: &mut Builder<'_>,
        solutions: &Solutions<'_>,
        row: usize,
    ) -> Result<(), QueryError> {
        let mut row = Row {
            request,
            solutions,
            row,
            fresh: Vec::new(),
        };
        for i in 0..self.deletes.len() {
            let slots = self.deletes[i];
            if let Some(quad) = self.quad(builder, &mut row, slots, false)? {
                builder.delete(quad)?;
            }
        }
        for i in 0..self.inserts.len() {
            let slots = self.inserts[i];
            if let Some(quad) = self.quad(builder, &mut row, slots, true)? {
                builder.insert(quad)?;
            }
        }
        Ok(())
    }

    /// The quad of `slots` in the solution, if every slot is bound to a term that fits.
    fn quad(
        &mut self,
        builder: &mut Builder<'_>,
        row: &mut Row<'_, '_>,
        slots: QuadSlots,
        insert: bool,
    ) -> Result<Option<Quad>, QueryError> {
        let Some(subject) =
            self.resolve(builder, row, slots.subject, Position::Resource, insert)?
        else {
            return Ok(None);
        };
        let Some(predicate) =
            self.resolve(builder, row, slots.predicate, Position::Predicate, insert)?
        else {
            return Ok(None);
        };
        let Some(object) = self.resolve(builder, row, slots.object, Position::Object, insert)?
        else {
            return Ok(None);
        };
        let graph = match slots.graph {
            Slot::DefaultGraph => None,
            slot => match self.resolve(builder, row, slot, Position::Resource, insert)? {
                Some(graph) => Some(graph),
                None => return Ok(None),
            },
        };
        Ok(Some(Quad {
            subject,
            predicate,
            object,
            graph,
        }))
    }

    /// The id of a slot in the solution, if it is bound to a term that fits `position`.
    fn resolve(
        &mut self,
        builder: &mut Builder<'_>,
        row: &mut Row<'_, '_>,
        slot: Slot,
        position: Position,
        insert: bool,
    ) -> Result<Option<Id>, QueryError> {
        match slot {
            Slot::Const(id) => Ok(Some(id)),
            Slot::DefaultGraph => Ok(None),
            Slot::Blank(index) => {
                if row.fresh.len() <= index {
                    row.fresh.resize(self.blanks.len().max(index + 1), None);
                }
                if let Some(id) = row.fresh[index] {
                    return Ok(Some(id));
                }
                let scope = format!("o{}r{}", self.operation, row.row);
                let node = row.request.fresh_blank(&scope, &self.blanks[index]);
                let id = builder.intern(node.as_ref().into())?;
                row.fresh[index] = Some(id);
                Ok(Some(id))
            }
            Slot::Var(column) => {
                let id = row.solutions.id(row.row, column);
                self.variable(builder, row.solutions, id, position, insert)
            }
            Slot::Triple(index) => {
                let scope = format!("o{}r{}", self.operation, row.row);
                let fresh = |label: &str| row.request.fresh_blank(&scope, label);
                let Some(term) = self.triples[index].instantiate(row.solutions, row.row, &fresh)
                else {
                    return Ok(None);
                };
                builder.charge(term.to_string().len())?;
                if insert {
                    builder.intern(term.as_ref()).map(Some)
                } else {
                    Ok(builder.existing(term.as_ref()))
                }
            }
        }
    }

    /// The id a variable's value `id` has in the change set, if it fits `position`.
    fn variable(
        &mut self,
        builder: &mut Builder<'_>,
        solutions: &Solutions<'_>,
        id: Id,
        position: Position,
        insert: bool,
    ) -> Result<Option<Id>, QueryError> {
        if id == UNBOUND {
            return Ok(None);
        }
        let store = builder.store();
        if (id as u64) < store.terms() {
            if position == Position::Object {
                return Ok(Some(id));
            }
            let tag = match self.tags.get(&id) {
                Some(&tag) => tag,
                None => {
                    self.scratch.clear();
                    store.dictionary().term_into(id, &mut self.scratch);
                    let tag = self.scratch.first().copied().unwrap_or(0);
                    builder.charge(16)?;
                    self.tags.insert(id, tag);
                    tag
                }
            };
            return Ok(position.allows_tag(tag).then_some(id));
        }
        let Some(term) = solutions.computed_term(id) else {
            return Ok(None);
        };
        if !position.allows(term) {
            return Ok(None);
        }
        if insert {
            if let Some(&known) = self.interned.get(&id) {
                return Ok(Some(known));
            }
            let interned = builder.intern(term.as_ref())?;
            builder.charge(16)?;
            self.interned.insert(id, interned);
            Ok(Some(interned))
        } else {
            if let Some(&known) = self.existing.get(&id) {
                return Ok(known);
            }
            let existing = builder.existing(term.as_ref());
            builder.charge(16)?;
            self.existing.insert(id, existing);
            Ok(existing)
        }
    }
}

/// The solution being instantiated and its fresh blank nodes.
struct Row<'r, 's> {
    request: &'r Request<'r>,
    solutions: &'r Solutions<'s>,
    row: usize,
    /// Ids of the solution's blank nodes, by label number, once made.
    fresh: Vec<Option<Id>>,
}

/// A predicate slot: interned for inserts, looked up for deletes.
fn predicate_slot(
    builder: &mut Builder<'_>,
    predicate: &NamedNodePattern,
    insert: bool,
    columns: &mut Columns,
) -> Result<Option<Slot>, QueryError> {
    Ok(match predicate {
        NamedNodePattern::Variable(v) => Some(Slot::Var(columns.column(v))),
        NamedNodePattern::NamedNode(n) => constant(builder, n.as_ref().into(), insert)?,
    })
}

/// A graph slot: interned for inserts, looked up for deletes.
fn graph_slot(
    builder: &mut Builder<'_>,
    graph: &GraphNamePattern,
    insert: bool,
    columns: &mut Columns,
) -> Result<Option<Slot>, QueryError> {
    Ok(match graph {
        GraphNamePattern::DefaultGraph => Some(Slot::DefaultGraph),
        GraphNamePattern::Variable(v) => Some(Slot::Var(columns.column(v))),
        GraphNamePattern::NamedNode(n) => constant(builder, n.as_ref().into(), insert)?,
    })
}

fn constant(
    builder: &mut Builder<'_>,
    term: TermRef<'_>,
    insert: bool,
) -> Result<Option<Slot>, QueryError> {
    Ok(if insert {
        Some(Slot::Const(builder.intern(term)?))
    } else {
        builder.existing(term).map(Slot::Const)
    })
}
