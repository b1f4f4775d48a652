//! Triple terms (RDF 1.2) inside the quad templates of `DELETE { … }` and `INSERT { … }`.
//!
//! A triple term written whole (`<<( :a :b :c )>>`) is a constant like any other term. One
//! with variables or blank nodes inside (`<<( ?s :b _:x )>>`) is built anew for each
//! solution: its parts are read from the solution (a blank node is the solution's fresh
//! node of that label, the one the rest of the template gets), and a part left unbound or
//! bound to a term that cannot stand there (a literal subject, a predicate that is not an
//! IRI) skips the quad, as an unbound variable does.

use oxrdf::{BlankNode, NamedOrBlankNode, Term, Triple};
use spargebra::term::{GroundTermPattern, NamedNodePattern, TermPattern, TriplePattern};

use crate::engine::Solutions;

use super::columns::Columns;

/// One part of a triple term template.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Const(Term),
    /// Column of the solutions.
    Var(usize),
    /// Blank node label (fresh per solution).
    Blank(String),
    Triple(Box<TripleTemplate>),
}

/// A triple term with variables or blank nodes inside.
#[derive(Debug, Clone)]
pub(crate) struct TripleTemplate {
    subject: Part,
    predicate: Part,
    object: Part,
}

/// How one solution names its fresh blank nodes.
pub(crate) type FreshBlank<'f> = &'f dyn Fn(&str) -> BlankNode;

impl TripleTemplate {
    /// The template of an insert's triple term: `Err` with the term itself when it has
    /// neither variables nor blank nodes.
    pub(crate) fn insert(triple: &TriplePattern, columns: &mut Columns) -> Result<Self, Term> {
        let template = TripleTemplate {
            subject: insert_part(&triple.subject, columns),
            predicate: predicate_part(&triple.predicate, columns),
            object: insert_part(&triple.object, columns),
        };
        template.constant().map_or(Ok(template), Err)
    }

    /// The template of a delete's triple term (no blank nodes there).
    pub(crate) fn delete(
        triple: &spargebra::term::GroundTriplePattern,
        columns: &mut Columns,
    ) -> Result<Self, Term> {
        let template = TripleTemplate {
            subject: delete_part(&triple.subject, columns),
            predicate: predicate_part(&triple.predicate, columns),
            object: delete_part(&triple.object, columns),
        };
        template.constant().map_or(Ok(template), Err)
    }

    /// The term, when no part varies.
    fn constant(&self) -> Option<Term> {
        let fixed = |part: &Part| match part {
            Part::Const(term) => Some(term.clone()),
            Part::Triple(triple) => triple.constant(),
            Part::Var(_) | Part::Blank(_) => None,
        };
        build(
            fixed(&self.subject)?,
            fixed(&self.predicate)?,
            fixed(&self.object)?,
        )
    }

    /// The triple term in solution `row`, if every part is bound to a term that fits.
    pub(crate) fn instantiate(
        &self,
        solutions: &Solutions<'_>,
        row: usize,
        fresh: FreshBlank<'_>,
    ) -> Option<Term> {
        let part = |part: &Part| match part {
            Part::Const(term) => Some(term.clone()),
            Part::Var(column) => solutions.term(solutions.id(row, *column)),
            Part::Blank(label) => Some(fresh(label).into()),
            Part::Triple(triple) => triple.instantiate(solutions, row, fresh),
        };
        build(
            part(&self.subject)?,
            part(&self.predicate)?,
            part(&self.object)?,
        )
    }
}

/// The triple term of three terms, if they fit their places.
fn build(subject: Term, predicate: Term, object: Term) -> Option<Term> {
    let subject = match subject {
        Term::NamedNode(node) => NamedOrBlankNode::from(node),
        Term::BlankNode(node) => NamedOrBlankNode::from(node),
        _ => return None,
    };
    let Term::NamedNode(predicate) = predicate else {
        return None;
    };
    Some(Triple::new(subject, predicate, object).into())
}

fn insert_part(term: &TermPattern, columns: &mut Columns) -> Part {
    match term {
        TermPattern::Variable(v) => Part::Var(columns.column(v)),
        TermPattern::BlankNode(b) => Part::Blank(b.as_str().to_owned()),
        TermPattern::NamedNode(n) => Part::Const(n.clone().into()),
        TermPattern::Literal(l) => Part::Const(l.clone().into()),
        TermPattern::Triple(triple) => match TripleTemplate::insert(triple, columns) {
            Ok(template) => Part::Triple(Box::new(template)),
            Err(term) => Part::Const(term),
        },
    }
}

fn delete_part(term: &GroundTermPattern, columns: &mut Columns) -> Part {
    match term {
        GroundTermPattern::Variable(v) => Part::Var(columns.column(v)),
        GroundTermPattern::NamedNode(n) => Part::Const(n.clone().into()),
        GroundTermPattern::Literal(l) => Part::Const(l.clone().into()),
        GroundTermPattern::Triple(triple) => match TripleTemplate::delete(triple, columns) {
            Ok(template) => Part::Triple(Box::new(template)),
            Err(term) => Part::Const(term),
        },
    }
}

fn predicate_part(predicate: &NamedNodePattern, columns: &mut Columns) -> Part {
    match predicate {
        NamedNodePattern::Variable(v) => Part::Var(columns.column(v)),
        NamedNodePattern::NamedNode(n) => Part::Const(n.clone().into()),
    }
}
