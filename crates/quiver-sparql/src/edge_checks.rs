//! `FILTER EXISTS { ?x <p> ?y }` and `FILTER NOT EXISTS { ?x <p> ?y }` right above a basic
//! graph pattern that runs on partitions, where `?x` is one of the pattern's variables and
//! `?y` the EXISTS pattern's own ("has a `<p>`", "has no `<p>`"; also the other way,
//! `?y <p> ?x`, except into a class over `rdf:type`), and `MINUS { ?x <p> ?y }` after such a
//! pattern, which drops the rows NOT EXISTS drops: whether a row passes is whether one list
//! of `?x`'s record is empty, read where that record is.
//!
//! As written, the FILTER brings every row of the pattern to the coordinator and sends it
//! back out to be seeded into the EXISTS pattern: LUBM-100's undergraduates without an
//! advisor (`OPTIONAL { ?x ub:advisor ?a } FILTER(!BOUND(?a))`, read as NOT EXISTS) moved
//! 875,428 rows on 2 processes. Handed to the partitions as an [`EdgeCheck`]
//! ([`crate::partitions::PartitionedBgp::checks`]), each row goes, after the pattern's last
//! step, to the owner of its `?x` (where it mostly is already), which keeps it or drops it;
//! the FILTER does not run again, and a GROUP BY above may count the rows where they are.
//! On one store `exec/filter.rs` reads the same lengths (`matched_by_degree`).

use std::ops::Range;

use quiver_model::PredId;
use quiver_store::{Direction, GraphIndex};
use serde::{Deserialize, Serialize};

use crate::table::{Table, VarId, UNBOUND};

/// One FILTER (NOT) EXISTS of one edge, decided by the length of a list (see the module
/// doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeCheck {
    /// The pattern's variable whose record is read (bound in every row).
    pub var: VarId,
    pub predicate: PredId,
    /// `Out`: `?x <p> ?y`; `In`: `?y <p> ?x`.
    pub direction: Direction,
    /// Keep the rows that have such an edge (EXISTS), or those that have none (NOT EXISTS).
    pub exists: bool,
}

impl EdgeCheck {
    /// The rows of `rows` that pass, `graph` holding the record of each row's vertex (the
    /// rows were sent to its owner).
    pub fn keep(&self, graph: &GraphIndex, rows: Table) -> Table {
        let keep = self.passing(graph, &rows, 0..rows.rows);
        if keep.len() == rows.rows {
            rows
        } else {
            rows.gather(&keep)
        }
    }

    /// The numbers of the rows among `range` of `rows` that pass. A row leaving the
    /// variable unbound has no record to read: it passes NOT EXISTS (as it does MINUS,
    /// sharing nothing) and fails EXISTS.
    pub fn passing(&self, graph: &GraphIndex, rows: &Table, range: Range<usize>) -> Vec<u32> {
        let Some(column) = rows.column(self.var) else {
            return range.map(|row| row as u32).collect();
        };
        range
            .filter(|&row| {
                let id = column[row];
                let has = id != UNBOUND && graph.degree(id, self.predicate, self.direction) > 0;
                has == self.exists
            })
            .map(|row| row as u32)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNodeRef;
    use quiver_loader::{load_files, LoadOptions, NoProgress};
    use quiver_model::Id;
    use quiver_store::Store;

    /// `a p b`, `b q c`.
    fn store() -> Store {
        let path =
            std::env::temp_dir().join(format!("quiver-edge-checks-{}.nt", std::process::id()));
        let text = "<http://ex/a> <http://ex/p> <http://ex/b> .\n\
                    <http://ex/b> <http://ex/q> <http://ex/c> .\n";
        std::fs::write(&path, text).unwrap();
        let options = LoadOptions {
            format: None,
            lenient: false,
            threads: 1,
        };
        let (store, _) =
            load_files(std::slice::from_ref(&path), &options, None, &NoProgress).unwrap();
        let _ = std::fs::remove_file(&path);
        store
    }

    #[test]
    fn a_check_keeps_the_rows_with_an_edge_or_those_without() {
        let store = store();
        let id = |name: &str| -> Id {
            let iri = format!("http://ex/{name}");
            store
                .term_id(NamedNodeRef::new(&iri).unwrap().into())
                .unwrap()
        };
        let (a, b, c) = (id("a"), id("b"), id("c"));
        let all = Table {
            vars: vec![3],
            rows: 3,
            columns: vec![vec![a, b, c]],
        };
        let p = store.constant_predicate_id("http://ex/p").unwrap();
        let kept = |direction, exists| {
            let check = EdgeCheck {
                var: 3,
                predicate: p,
                direction,
                exists,
            };
            check.keep(store.graph(), all.clone()).columns[0].clone()
        };
        assert_eq!(kept(Direction::Out, true), vec![a]);
        assert_eq!(kept(Direction::Out, false), vec![b, c]);
        assert_eq!(kept(Direction::In, true), vec![b]);
        assert_eq!(kept(Direction::In, false), vec![a, c]);
    }
}
