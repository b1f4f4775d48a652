//! One exploration step applied to a table: an expand appends each row's neighbours, a
//! check keeps the rows whose bound target is among them, an intersection walks the
//! neighbours shared with a partner's list, and the steps that read a predicate's index or
//! scan every edge; then the pattern's equalities. Each step builds its output as a
//! selection of parent rows and the new columns ([`Output`]).

use quiver_model::{Id, PredId};
use quiver_store::Direction;

use super::step_io::{end, Ahead, Bounded, End};
use crate::bgp::{Bgp, Pattern, Pred};
pub use crate::context::ExecContext;
use crate::context::{ensure_addressable, table_bytes, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::step::{Step, StepKind};
use crate::table::{Table, VarId};

/// Accumulates a step's output: parent rows and newly bound columns.
struct Output {
    /// The parent row of each output row, when the input has columns to gather by it.
    selection: Vec<u32>,
    /// Whether `selection` is kept: not over an input of no columns (a query's first step,
    /// from its one empty row), whose output is its new columns alone. A class's millions
    /// of instances would otherwise write as many zeros that nothing reads.
    gather: bool,
    /// Output rows so far.
    rows: usize,
    target: Option<(VarId, Vec<Id>)>,
    predicate: Option<(VarId, Vec<Id>)>,
}

impl Output {
    /// The output of a step over `table` binding `target` (when free) and the pattern's
    /// `free_predicate` variable, if any.
    fn new(table: &Table, target: &End<'_>, free_predicate: Option<VarId>) -> Self {
        Output {
            selection: Vec::new(),
            gather: !table.columns.is_empty(),
            rows: 0,
            target: match target {
                End::Free(v) => Some((*v, Vec::new())),
                _ => None,
            },
            predicate: free_predicate.map(|v| (v, Vec::new())),
        }
    }

    /// Emits the matches of one row against the neighbour list `neighbours`.
    #[inline]
    fn emit(
        &mut self,
        row: usize,
        neighbours: &[Id],
        target: &End<'_>,
        predicate_term: Option<Id>,
    ) {
        match target {
            End::Free(_) => {
                if self.gather {
                    self.selection
                        .extend(std::iter::repeat_n(row as u32, neighbours.len()));
                }
                self.rows += neighbours.len();
                if let Some((_, column)) = &mut self.target {
                    column.extend_from_slice(neighbours);
                }
                if let (Some((_, column)), Some(term)) = (&mut self.predicate, predicate_term) {
                    column.extend(std::iter::repeat_n(term, neighbours.len()));
                }
            }
            known => {
                if let Some(value) = known.value(row) {
                    if neighbours.binary_search(&value).is_ok() {
                        if self.gather {
                            self.selection.push(row as u32);
                        }
                        self.rows += 1;
                        if let (Some((_, column)), Some(term)) =
                            (&mut self.predicate, predicate_term)
                        {
                            column.push(term);
                        }
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.rows
    }

    /// The bytes the buffers hold: their capacity, which growth by doubling keeps up to
    /// twice their length.
    fn bytes(&self) -> usize {
        self.selection.capacity() * 4
            + [&self.target, &self.predicate]
                .into_iter()
                .flatten()
                .map(|(_, c)| c.capacity() * ID_BYTES)
                .sum::<usize>()
    }

    /// Keeps the first `cap` rows.
    fn truncate(&mut self, cap: usize) {
        self.selection.truncate(cap);
        self.rows = self.rows.min(cap);
        for (_, column) in [&mut self.target, &mut self.predicate]
            .into_iter()
            .flatten()
        {
            column.truncate(cap);
        }
    }

    /// The output table: the input's columns gathered by the selection, then the new
    /// ones. The gathered columns are charged before they are built, beside the buffers.
    fn finish(self, table: &Table, bounded: &mut Bounded<'_, '_>) -> Result<Table, QueryError> {
        bounded
            .memory
            .try_resize(self.bytes() + table_bytes(self.len(), table.columns.len()))?;
        if self.gather {
            return Ok(table.gather_with(&self.selection, [self.predicate, self.target]));
        }
        let (vars, columns) = [self.predicate, self.target].into_iter().flatten().unzip();
        Ok(Table {
            vars,
            columns,
            rows: self.rows,
        })
    }
}

pub(super) fn partner<'b>(bgp: &'b Bgp, step: &Step) -> Option<(&'b Pattern, Direction)> {
    step.partner
        .map(|(p, direction)| (&bgp.patterns[p], direction))
}

/// Runs one step over `table`; with a partner, the bound variable is the intersection of
/// the step's neighbour list and the partner's.
pub(super) fn apply_step(
    pattern: &Pattern,
    step: Step,
    partner: Option<(&Pattern, Direction)>,
    table: &Table,
    bounded: &mut Bounded<'_, '_>,
) -> Result<Table, QueryError> {
    ensure_addressable(table.rows)?;
    if let Some((other, direction)) = partner {
        return super::intersect::intersect_step(pattern, step, other, direction, table, bounded);
    }
    let ctx = bounded.ctx;
    let graph = ctx.graph;
    let (source_node, target_node, direction) = match step.kind {
        StepKind::Walk(Direction::Out) => (pattern.subject, pattern.object, Direction::Out),
        StepKind::Walk(Direction::In) => (pattern.object, pattern.subject, Direction::In),
        StepKind::Index(direction) => return index_step(pattern, direction, table, bounded),
        StepKind::Scan => return scan_step(pattern, table, bounded),
    };
    let source = end(source_node, table);
    let target = end(target_node, table);
    if let End::Free(_) = source {
        return Err(QueryError::Plan(format!(
            "a step walks from an unbound variable of {pattern}"
        )));
    }
    let (predicate_column, free_predicate) = match pattern.predicate {
        Pred::Var(v) => match table.column(v) {
            Some(column) => (Some(column), None),
            None => (None, Some(v)),
        },
        _ => (None, None),
    };
    let mut out = Output::new(table, &target, free_predicate);
    // Read once, so that the row loop does not reload it through `bounded`.
    let cap = bounded.cap;
    let ahead = Ahead::of(source, graph.adjacency(direction), table.rows);
    for row in 0..table.rows {
        ahead.fetch(row);
        bounded.tick(row, || out.bytes())?;
        if out.len() >= cap {
            bounded.truncated = true;
            break;
        }
        let Some(vertex) = source.value(row) else {
            continue;
        };
        // Under a cap, a walk binding its target takes no more of a list than the room
        // left: the first rows of a class's millions of instances cost their own copy,
        // not the whole list's.
        let room = |out: &Output, neighbours: &'_ [Id]| -> usize {
            match target {
                End::Free(_) => neighbours
                    .len()
                    .min(cap.saturating_sub(out.len()).saturating_add(1)),
                _ => neighbours.len(),
            }
        };
        match (pattern.predicate, predicate_column) {
            (Pred::Const(p), _) => {
                let neighbours = graph.get(vertex, p, direction);
                out.emit(row, &neighbours[..room(&out, neighbours)], &target, None);
            }
            (Pred::Var(_), Some(column)) => {
                if let Some(p) = ctx.store.predicate_of_term(column[row]) {
                    let neighbours = graph.get(vertex, p, direction);
                    out.emit(row, &neighbours[..room(&out, neighbours)], &target, None);
                }
            }
            (Pred::Var(_), None) => {
                for (p, neighbours) in graph.edges(vertex, direction).iter() {
                    let neighbours = &neighbours[..room(&out, neighbours)];
                    out.emit(row, neighbours, &target, Some(ctx.store.predicate_term(p)));
                    if out.len() > cap {
                        break;
                    }
                }
            }
            (Pred::Absent, _) => {}
        }
    }
    if out.len() > bounded.cap {
        bounded.truncated = true;
        out.truncate(bounded.cap);
    }
    out.finish(table, bounded)
}

/// Starts from the predicate index: all subjects (In) or objects (Out) of the predicate.
fn index_step(
    pattern: &Pattern,
    direction: Direction,
    table: &Table,
    bounded: &mut Bounded<'_, '_>,
) -> Result<Table, QueryError> {
    let ctx = bounded.ctx;
    let Pred::Const(p) = pattern.predicate else {
        return Err(QueryError::Plan(format!(
            "a predicate index needs a constant predicate: {pattern}"
        )));
    };
    let (list, node) = match direction {
        Direction::In => (ctx.graph.predicate_subjects(p), pattern.subject),
        Direction::Out => (ctx.graph.predicate_objects(p), pattern.object),
    };
    let target = end(node, table);
    let mut out = Output::new(table, &target, None);
    for row in 0..table.rows {
        bounded.tick(row, || out.bytes())?;
        if bounded.full(out.len()) {
            break;
        }
        // A long list is emitted a stride at a time, so that a cap stops it early and
        // the checks keep their pace.
        for chunk in list.chunks(CHECK_STRIDE) {
            out.emit(row, chunk, &target, None);
            ctx.check()?;
            bounded.memory.try_resize(out.bytes())?;
            if bounded.full(out.len()) {
                break;
            }
        }
    }
    if out.len() > bounded.cap {
        bounded.truncated = true;
        out.truncate(bounded.cap);
    }
    out.finish(table, bounded)
}

/// Enumerates every triple matching a pattern with no bound end.
fn scan_step(
    pattern: &Pattern,
    table: &Table,
    bounded: &mut Bounded<'_, '_>,
) -> Result<Table, QueryError> {
    let ctx = bounded.ctx;
    let predicates: Vec<PredId> = match pattern.predicate {
        Pred::Const(p) => vec![p],
        Pred::Var(_) => (0..ctx.store.predicate_count() as PredId).collect(),
        Pred::Absent => Vec::new(),
    };
    // A predicate variable the input already binds (the scan runs seeded, or after a step
    // that bound it): each predicate may only extend the rows bound to it.
    let bound_predicate = match pattern.predicate {
        Pred::Var(v) => table.column(v),
        _ => None,
    };
    // Bind the subject from the predicate index of each predicate, then walk Out.
    let mut result: Option<Table> = None;
    // The rows of the predicates scanned so far, charged as they grow.
    let mut held = ctx.reservation();
    let mut found = 0usize;
    for p in predicates {
        ctx.check()?;
        if bounded.full(found) {
            break;
        }
        let mut fixed = pattern.clone();
        fixed.predicate = Pred::Const(p);
        let selected;
        let input = match bound_predicate {
            Some(column) => {
                let term = ctx.store.predicate_term(p);
                let mut rows: Vec<u32> = Vec::new();
                for (row, &value) in column.iter().enumerate() {
                    ctx.tick(row)?;
                    if value == term {
                        rows.push(row as u32);
                    }
                }
                selected = table.gather(&rows);
                &selected
            }
            None => table,
        };
        let mut inner = Bounded::new(ctx, bounded.cap - found);
        let subjects = index_step(&fixed, Direction::In, input, &mut inner)?;
        // The subjects stay charged while the walk from them builds its rows.
        let mut subjects_memory = ctx.reservation();
        subjects_memory.try_resize(subjects.heap_bytes())?;
        inner.memory.free();
        let walk = Step::new(0, StepKind::Walk(Direction::Out), 0.0);
        let mut walked = apply_step(&fixed, walk, None, &subjects, &mut inner)?;
        drop(subjects);
        drop(subjects_memory);
        bounded.truncated |= inner.truncated;
        found += walked.rows;
        if let Pred::Var(v) = pattern.predicate {
            if walked.column_of(v).is_none() {
                walked.vars.push(v);
                walked
                    .columns
                    .push(vec![ctx.store.predicate_term(p); walked.rows]);
            }
        }
        match &mut result {
            None => result = Some(walked),
            Some(table) => {
                let walked = walked.reshape(&table.vars);
                table.append(walked);
            }
        }
        held.try_resize(result.as_ref().map_or(0, Table::heap_bytes))?;
    }
    Ok(result.unwrap_or_else(|| {
        let mut vars = table.vars.clone();
        crate::bgp::add_vars(&mut vars, pattern.vars());
        Table::empty(vars)
    }))
}

/// Keeps the rows where each pair of split variables agrees, then drops the copies.
pub(super) fn apply_equalities(
    ctx: &ExecContext<'_>,
    table: Table,
    equalities: &[(VarId, VarId)],
) -> Result<Table, QueryError> {
    if equalities.is_empty() {
        return Ok(table);
    }
    let mut keep: Vec<u32> = Vec::new();
    for row in 0..table.rows {
        ctx.tick(row)?;
        if equalities
            .iter()
            .all(|&(a, b)| table.value(row, a) == table.value(row, b))
        {
            keep.push(row as u32);
        }
    }
    Ok(table.gather(&keep))
}
