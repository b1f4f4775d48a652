//! Query templates whose plan a foreign record's size cannot change, remembered so that
//! the check is made once per template rather than once per query.
//!
//! A coordinator of a cluster that lacks one record's size checks, with two more
//! plannings, whether the fewest and the most neighbours the statistics allow would give
//! the plan it made with the average ([`crate::degree`]); where they do, it neither asks
//! the size nor plans again. Light queries mostly come from templates (a form, an API,
//! the LUBM emulator) that differ only in one constant: once the check held for one
//! constant of a template, it holds for the next one in the same place, since everything
//! else the planner reads is the same. The memo keeps that answer, keyed by the query's
//! text with the constant's IRI masked, the record asked (its graph, predicate and
//! direction), the plans the first planning made (a constant whose records held here sized
//! differently plans differently, and so misses) and the store's version. Three plannings
//! become one for a template's queries whose constant another process owns. The memo
//! only chooses between plans the planner would have chosen anyway: never an answer.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use quiver_model::term::{decode_term, DecodedTerm};
use quiver_store::Store;
use spargebra::Query;

use crate::degree::{DegreeAsk, PlanShape};

/// Templates remembered at most; past them the memo starts again (a server's templates
/// are far fewer).
const TEMPLATES: usize = 4096;

/// What identifies a template's check: the store version, the text with the constant
/// masked, the record asked without its vertex, and the first planning's plans.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TemplateKey {
    version: u64,
    masked: String,
    /// The record asked, its vertex zeroed.
    ask: DegreeAsk,
    plans: Vec<PlanShape>,
}

impl TemplateKey {
    /// The key of `query`'s check of `ask`'s size, planned as `plans` on `store`; `None`
    /// where the lacked constant is not an IRI written in the query's text.
    pub fn new(store: &Store, query: &Query, ask: &DegreeAsk, plans: &[PlanShape]) -> Option<Self> {
        let encoded = store.dictionary().term(ask.vertex)?;
        let DecodedTerm::Iri(iri) = decode_term(&encoded).ok()? else {
            return None;
        };
        let text = query.to_string();
        let written = format!("<{iri}>");
        text.contains(&written).then(|| Self {
            version: store.version(),
            masked: text.replace(&written, "<>"),
            ask: DegreeAsk { vertex: 0, ..*ask },
            plans: plans.to_vec(),
        })
    }
}

/// The templates whose check held: the size of the record asked cannot change their plan.
#[derive(Debug, Default)]
pub struct SizeFreePlans {
    held: Mutex<HashSet<TemplateKey>>,
    /// Checks answered from the memo so far.
    hits: AtomicU64,
}

impl SizeFreePlans {
    /// Whether the check held for `key`'s template.
    pub fn holds(&self, key: &TemplateKey) -> bool {
        let held = self
            .held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(key);
        if held {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        held
    }

    /// The templates remembered.
    pub fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no template is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The checks answered from the memo so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Remembers that the check held for `key`'s template.
    pub fn remember(&self, key: TemplateKey) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.len() >= TEMPLATES {
            held.clear();
        }
        held.insert(key);
    }
}
