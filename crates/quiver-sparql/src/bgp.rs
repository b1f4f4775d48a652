//! Basic graph patterns resolved against a store: constants become ids.
//!
//! A constant the store does not know can match nothing, so it resolves to `Absent` and
//! the whole pattern group is known empty before any work. Blank nodes of a pattern act as
//! variables that are never projected. A variable repeated inside one pattern (`?x p ?x`)
//! is split into a fresh variable plus an equality the executor checks.

use std::fmt;

use oxrdf::{Term, Variable};
use quiver_model::{Id, PredId};
use quiver_store::Store;
use rustc_hash::FxHashMap;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

use crate::table::VarId;

/// Subject or object of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Node {
    Var(VarId),
    Const(Id),
    /// A constant absent from the store: the pattern has no match.
    Absent,
}

/// Predicate of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Pred {
    Var(VarId),
    Const(PredId),
    Absent,
}

/// One resolved triple pattern.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pattern {
    pub subject: Node,
    pub predicate: Pred,
    pub object: Node,
    /// The pattern as written, for plans and errors.
    pub text: String,
}

/// A resolved basic graph pattern.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Bgp {
    pub patterns: Vec<Pattern>,
    /// Pairs of variables that must be equal (from repeated variables).
    pub equalities: Vec<(VarId, VarId)>,
}

impl Bgp {
    /// True when some constant is absent from the store: no solution at all.
    pub fn is_unsatisfiable(&self) -> bool {
        self.patterns.iter().any(|p| {
            p.subject == Node::Absent || p.object == Node::Absent || p.predicate == Pred::Absent
        })
    }

    /// Every variable the patterns bind.
    pub fn vars(&self) -> Vec<VarId> {
        let mut vars = Vec::new();
        for p in &self.patterns {
            add_vars(&mut vars, p.vars());
        }
        vars
    }
}

impl Pattern {
    /// The variables of the pattern: subject, predicate, object.
    pub fn vars(&self) -> impl Iterator<Item = VarId> {
        [
            node_var(self.subject),
            pred_var(self.predicate),
            node_var(self.object),
        ]
        .into_iter()
        .flatten()
    }
}

/// Adds each of `vars` to `set` unless it is there already.
pub fn add_vars(set: &mut Vec<VarId>, vars: impl IntoIterator<Item = VarId>) {
    for var in vars {
        if !set.contains(&var) {
            set.push(var);
        }
    }
}

pub fn node_var(node: Node) -> Option<VarId> {
    match node {
        Node::Var(v) => Some(v),
        _ => None,
    }
}

pub fn pred_var(pred: Pred) -> Option<VarId> {
    match pred {
        Pred::Var(v) => Some(v),
        _ => None,
    }
}

/// The variables of a query: user variables first, then hidden ones (blank nodes, splits).
///
/// A query has a handful of variables, found by a scan of their names; an index is built
/// only past [`SCANNED`] of them. Every light query builds its variables anew, and a map
/// beside the names was a second copy of each name and a table to allocate and free.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    names: Vec<String>,
    hidden: Vec<bool>,
    /// Every name's id once there are more than [`SCANNED`] names; empty before.
    index: FxHashMap<String, VarId>,
}

/// Names found by a scan, at most.
const SCANNED: usize = 32;

impl Vars {
    /// The id of a user variable, created on first use.
    pub fn var(&mut self, variable: &Variable) -> VarId {
        match self.find(variable.as_str()) {
            Some(id) => id,
            None => self.add(variable.as_str().to_owned(), false),
        }
    }

    fn find(&self, name: &str) -> Option<VarId> {
        match self.names.len() <= SCANNED {
            true => self.names.iter().position(|known| known == name),
            false => self.index.get(name).copied(),
        }
    }

    /// Adds `name`, which is not known yet.
    fn add(&mut self, name: String, hidden: bool) -> VarId {
        let id = self.names.len();
        self.names.push(name);
        self.hidden.push(hidden);
        match self.names.len().cmp(&(SCANNED + 1)) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => {
                self.index = self.names.iter().cloned().zip(0..).collect();
            }
            std::cmp::Ordering::Greater => {
                self.index.insert(self.names[id].clone(), id);
            }
        }
        id
    }

    /// A fresh hidden variable (its name, with a space, is no user variable's).
    pub fn fresh(&mut self) -> VarId {
        let name = format!(" hidden{}", self.names.len());
        self.add(name, true)
    }

    /// The id of a blank node of a pattern (one hidden variable per label).
    pub fn blank(&mut self, label: &str) -> VarId {
        let name = format!(" blank {label}");
        match self.find(&name) {
            Some(id) => id,
            None => self.add(name, true),
        }
    }

    pub fn get(&self, variable: &Variable) -> Option<VarId> {
        self.find(variable.as_str())
    }

    pub fn name(&self, var: VarId) -> &str {
        &self.names[var]
    }

    pub fn is_hidden(&self, var: VarId) -> bool {
        self.hidden[var]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Resolves spargebra triple patterns against `store`.
pub fn resolve(patterns: &[TriplePattern], store: &Store, vars: &mut Vars) -> Bgp {
    let mut bgp = Bgp {
        patterns: Vec::with_capacity(patterns.len()),
        equalities: Vec::new(),
    };
    for pattern in patterns {
        // A pattern's variables so far: three places at most, so no allocation.
        let mut seen: ([VarId; 3], usize) = ([0; 3], 0);
        let mut dedup = |var: VarId, vars: &mut Vars, eq: &mut Vec<(VarId, VarId)>| {
            if seen.0[..seen.1].contains(&var) {
                let fresh = vars.fresh();
                eq.push((var, fresh));
                fresh
            } else {
                seen.0[seen.1] = var;
                seen.1 += 1;
                var
            }
        };
        let subject = match term_node(&pattern.subject, store, vars) {
            Node::Var(v) => Node::Var(dedup(v, vars, &mut bgp.equalities)),
            other => other,
        };
        let predicate = match &pattern.predicate {
            NamedNodePattern::NamedNode(node) => store
                .constant_predicate_id(node.as_str())
                .map_or(Pred::Absent, Pred::Const),
            NamedNodePattern::Variable(variable) => {
                let v = vars.var(variable);
                Pred::Var(dedup(v, vars, &mut bgp.equalities))
            }
        };
        let object = match term_node(&pattern.object, store, vars) {
            Node::Var(v) => Node::Var(dedup(v, vars, &mut bgp.equalities)),
            other => other,
        };
        bgp.patterns.push(Pattern {
            subject,
            predicate,
            object,
            text: pattern_text(pattern),
        });
    }
    bgp
}

/// `pattern` as spargebra writes it, IRIs and variables written directly: every query's
/// patterns are written while they are resolved, and the formatting machinery cost as
/// much as looking their constants up.
fn pattern_text(pattern: &TriplePattern) -> String {
    use std::fmt::Write;
    fn term(text: &mut String, term: &TermPattern) {
        match term {
            TermPattern::NamedNode(node) => iri(text, node.as_str()),
            TermPattern::Variable(variable) => variable_text(text, variable),
            other => {
                let _ = write!(text, "{other}");
            }
        }
    }
    fn iri(text: &mut String, iri: &str) {
        text.push('<');
        text.push_str(iri);
        text.push('>');
    }
    fn variable_text(text: &mut String, variable: &Variable) {
        text.push('?');
        text.push_str(variable.as_str());
    }
    let mut text = String::with_capacity(128);
    term(&mut text, &pattern.subject);
    text.push(' ');
    match &pattern.predicate {
        NamedNodePattern::NamedNode(node) => iri(&mut text, node.as_str()),
        NamedNodePattern::Variable(variable) => variable_text(&mut text, variable),
    }
    text.push(' ');
    term(&mut text, &pattern.object);
    text
}

fn term_node(term: &TermPattern, store: &Store, vars: &mut Vars) -> Node {
    match term {
        TermPattern::Variable(variable) => Node::Var(vars.var(variable)),
        TermPattern::BlankNode(node) => Node::Var(vars.blank(node.as_str())),
        TermPattern::NamedNode(node) => store
            .constant_id(node.as_ref().into())
            .map_or(Node::Absent, Node::Const),
        TermPattern::Literal(literal) => store
            .constant_id(literal.as_ref().into())
            .map_or(Node::Absent, Node::Const),
        // A triple term with variables inside was unpacked before compiling
        // (`compile::triple_terms`): what is left is one term.
        TermPattern::Triple(triple) => closed_term(triple)
            .and_then(|term| store.constant_id(term.as_ref()))
            .map_or(Node::Absent, Node::Const),
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether a triple term pattern has a variable or a blank node inside, at any depth.
pub(crate) fn is_open(triple: &TriplePattern) -> bool {
    let open = |term: &TermPattern| match term {
        TermPattern::Variable(_) | TermPattern::BlankNode(_) => true,
        TermPattern::Triple(inner) => is_open(inner),
        TermPattern::NamedNode(_) | TermPattern::Literal(_) => false,
    };
    open(&triple.subject)
        || matches!(triple.predicate, NamedNodePattern::Variable(_))
        || open(&triple.object)
}

/// The term of a triple term pattern that is not open.
pub(crate) fn closed_term(triple: &TriplePattern) -> Option<Term> {
    Term::try_from(TermPattern::Triple(Box::new(triple.clone()))).ok()
}

#[cfg(test)]
mod tests {
    use spargebra::algebra::GraphPattern;

    /// Names keep their ids, and are found again, below and past the count from which an
    /// index finds them: user variables, blank nodes and fresh variables interleaved.
    #[test]
    fn variables_keep_their_ids_past_the_scanned_count() {
        let mut vars = super::Vars::default();
        let mut expected = Vec::new();
        for i in 0..3 * super::SCANNED {
            let variable = spargebra::term::Variable::new_unchecked(format!("v{i}"));
            let id = vars.var(&variable);
            let blank = vars.blank(&format!("b{}", i % 7));
            let fresh = vars.fresh();
            assert!(vars.is_hidden(blank) && vars.is_hidden(fresh) && !vars.is_hidden(id));
            expected.push((variable, id, blank, format!("b{}", i % 7)));
            for (variable, id, blank, label) in &expected {
                assert_eq!(vars.var(variable), *id, "{variable}");
                assert_eq!(vars.get(variable), Some(*id), "{variable}");
                assert_eq!(vars.blank(label), *blank, "{label}");
                assert_eq!(vars.name(*id), variable.as_str());
            }
            assert_ne!(fresh, blank);
        }
        let absent = spargebra::term::Variable::new_unchecked("absent");
        assert_eq!(vars.get(&absent), None);
        assert!(vars.len() > super::SCANNED);
    }

    #[test]
    fn patterns_are_written_as_spargebra_writes_them() {
        let text = r#"PREFIX e: <http://e/>
            SELECT * WHERE {
              ?s e:p <http://e/o> . <http://e/s> ?p ?o . _:b e:q "x"@en .
              ?s e:r "1"^^<http://www.w3.org/2001/XMLSchema#integer> . ?s e:t [] .
              ?s e:u "a \"quoted\"\n line" . ?s e:v <<( <http://e/a> e:b "c" )>> .
            }"#;
        let query = spargebra::SparqlParser::new().parse_query(text).unwrap();
        let spargebra::Query::Select { pattern, .. } = query else {
            panic!("a SELECT");
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            panic!("a projection");
        };
        let GraphPattern::Bgp { patterns } = *inner else {
            panic!("one basic graph pattern");
        };
        assert_eq!(patterns.len(), 7);
        for pattern in &patterns {
            assert_eq!(super::pattern_text(pattern), pattern.to_string());
        }
    }
}
