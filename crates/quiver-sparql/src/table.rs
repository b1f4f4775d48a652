//! Columnar solution tables: the batches every operator consumes and produces.
//!
//! A table holds one column of term ids per variable; row `i` of every column is one
//! solution. Columns of plain ids keep intermediate results compact (no per-row heap
//! objects) and are the shape a GPU or a dataflow worker can take over later.

use quiver_model::Id;

/// Marks an unbound variable in a column.
pub const UNBOUND: Id = Id::MAX;

/// Rows from which [`Table::concat`] copies the parts on the pool's threads (as the
/// operators go parallel from 32 Ki rows).
const PARALLEL_COPY_ROWS: usize = 32 * 1024;

/// A query variable's index in the query's variable list.
pub type VarId = usize;

/// A batch of solutions.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Table {
    /// The variables that have a column, in column order.
    pub vars: Vec<VarId>,
    /// On the wire (a cluster's exchange), each column is one block of bytes.
    #[serde(with = "quiver_model::wire::blocks")]
    pub columns: Vec<Vec<Id>>,
    /// Number of rows (also meaningful with no columns: the unit table has one row).
    pub rows: usize,
}

impl Table {
    /// The table with one empty solution: the identity of joins.
    pub fn unit() -> Self {
        Table {
            vars: Vec::new(),
            columns: Vec::new(),
            rows: 1,
        }
    }

    /// The table with no solutions over `vars`.
    pub fn empty(vars: Vec<VarId>) -> Self {
        let columns = vars.iter().map(|_| Vec::new()).collect();
        Table {
            vars,
            columns,
            rows: 0,
        }
    }

    /// Bytes its columns hold (their capacities), for the memory budget.
    pub fn heap_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(|column| column.capacity() * std::mem::size_of::<Id>())
            .sum()
    }

    pub fn column_of(&self, var: VarId) -> Option<usize> {
        self.vars.iter().position(|&v| v == var)
    }

    pub fn column(&self, var: VarId) -> Option<&[Id]> {
        self.column_of(var).map(|c| self.columns[c].as_slice())
    }

    /// Makes `column` the values of `var`: replaces its column, or adds one.
    pub fn set_column(&mut self, var: VarId, column: Vec<Id>) {
        match self.column_of(var) {
            Some(c) => self.columns[c] = column,
            None => {
                self.vars.push(var);
                self.columns.push(column);
            }
        }
    }

    /// The value of `var` in `row` (UNBOUND when the table has no such column).
    pub fn value(&self, row: usize, var: VarId) -> Id {
        self.column_of(var)
            .map_or(UNBOUND, |c| self.columns[c][row])
    }

    /// Keeps the rows listed in `selection` (in that order, repeats allowed).
    pub fn gather(&self, selection: &[u32]) -> Table {
        self.gather_with(selection, [])
    }

    /// [`Table::gather`], then the columns of `extra` (of `selection.len()` rows each, in
    /// its order) after the gathered ones: what a step's walk binds beside the rows it
    /// kept, the table's vectors sized for them at once (every step of every query builds
    /// one such table, and growing them was two allocations more).
    pub fn gather_with<const N: usize>(
        &self,
        selection: &[u32],
        extra: [Option<(VarId, Vec<Id>)>; N],
    ) -> Table {
        let width = self.vars.len() + N;
        let mut vars = Vec::with_capacity(width);
        vars.extend_from_slice(&self.vars);
        let mut columns = Vec::with_capacity(width);
        columns.extend(
            self.columns
                .iter()
                .map(|column| selection.iter().map(|&row| column[row as usize]).collect()),
        );
        for (var, column) in extra.into_iter().flatten() {
            debug_assert_eq!(column.len(), selection.len());
            vars.push(var);
            columns.push(column);
        }
        Table {
            vars,
            columns,
            rows: selection.len(),
        }
    }

    /// Appends the rows of `other`, which must have the same variables in the same order.
    pub fn append(&mut self, other: Table) {
        debug_assert_eq!(self.vars, other.vars);
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            mine.extend(theirs);
        }
        self.rows += other.rows;
    }

    /// The rows of `parts` one after the other (all with the same variables in the same
    /// order); the empty table for no parts. Column by column: each is allocated once and
    /// copied into from the parts (in parallel on the current rayon pool's threads when
    /// they are many rows), then the parts' copies are freed, so the parts and the result
    /// are held together one column at a time.
    pub fn concat(mut parts: Vec<Table>) -> Table {
        use rayon::prelude::*;
        if parts.len() <= 1 {
            return parts.pop().unwrap_or_default();
        }
        let rows: usize = parts.iter().map(|part| part.rows).sum();
        let vars = parts[0].vars.clone();
        let mut columns = Vec::with_capacity(vars.len());
        for c in 0..vars.len() {
            let mut column = vec![0; rows];
            let mut rest = column.as_mut_slice();
            let mut pieces = Vec::with_capacity(parts.len());
            for part in &mut parts {
                let (piece, tail) = rest.split_at_mut(part.rows);
                pieces.push((piece, std::mem::take(&mut part.columns[c])));
                rest = tail;
            }
            let copy = |(piece, source): (&mut [Id], Vec<Id>)| {
                piece.copy_from_slice(&source[..piece.len()])
            };
            // A few rows are copied here: waking the pool's threads for them costs more
            // than the copy (tens of microseconds for a light query's answer).
            match rows >= PARALLEL_COPY_ROWS {
                true => pieces.into_par_iter().for_each(copy),
                false => pieces.into_iter().for_each(copy),
            }
            columns.push(column);
        }
        Table {
            vars,
            columns,
            rows,
        }
    }

    /// The same rows with columns for exactly `vars` (missing ones UNBOUND).
    pub fn reshape(&self, vars: &[VarId]) -> Table {
        Table {
            vars: vars.to_vec(),
            columns: vars
                .iter()
                .map(|&v| match self.column(v) {
                    Some(column) => column.to_vec(),
                    None => vec![UNBOUND; self.rows],
                })
                .collect(),
            rows: self.rows,
        }
    }

    /// [`Table::reshape`] consuming the table: its columns move instead of being copied
    /// (a variable asked for twice is copied for all but its last place). Every query's
    /// result is reshaped to its projection: the same columns come back as they are, and
    /// other variables without a repeat need no bookkeeping (a light query's answer is
    /// built in a few microseconds, and this was four allocations of them).
    pub fn into_reshape(mut self, vars: &[VarId]) -> Table {
        if self.vars == vars {
            return self;
        }
        let rows = self.rows;
        let mut columns = std::mem::take(&mut self.columns);
        let repeated = vars.iter().enumerate().any(|(i, v)| vars[..i].contains(v));
        let reshaped = if repeated {
            let sources: Vec<Option<usize>> = vars.iter().map(|&v| self.column_of(v)).collect();
            let mut uses = vec![0usize; columns.len()];
            for &source in sources.iter().flatten() {
                uses[source] += 1;
            }
            sources
                .iter()
                .map(|source| match *source {
                    Some(i) => {
                        uses[i] -= 1;
                        if uses[i] == 0 {
                            std::mem::take(&mut columns[i])
                        } else {
                            columns[i].clone()
                        }
                    }
                    None => vec![UNBOUND; rows],
                })
                .collect()
        } else {
            vars.iter()
                .map(|&v| match self.column_of(v) {
                    Some(i) => std::mem::take(&mut columns[i]),
                    None => vec![UNBOUND; rows],
                })
                .collect()
        };
        self.vars.clear();
        self.vars.extend_from_slice(vars);
        Table {
            vars: self.vars,
            columns: reshaped,
            rows,
        }
    }

    /// Rows `start..end`.
    pub fn slice(&self, start: usize, end: usize) -> Table {
        let end = end.min(self.rows);
        let start = start.min(end);
        Table {
            vars: self.vars.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| c[start..end].to_vec())
                .collect(),
            rows: end - start,
        }
    }

    /// Row `row` as a vector of values in column order.
    pub fn row(&self, row: usize) -> Vec<Id> {
        self.columns.iter().map(|c| c[row]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_reshape_gives_what_reshape_gives() {
        let table = Table {
            vars: vec![3, 1, 7],
            columns: vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]],
            rows: 3,
        };
        for vars in [
            vec![],
            vec![1],
            vec![7, 3],
            vec![1, 1, 9, 3],
            vec![9],
            vec![3, 1, 7, 7],
            vec![3, 1, 7],
            vec![7, 1, 3],
            vec![2, 7, 5, 1],
        ] {
            assert_eq!(
                table.clone().into_reshape(&vars),
                table.reshape(&vars),
                "{vars:?}"
            );
        }
    }

    #[test]
    fn gather_with_puts_its_columns_after_the_gathered_ones() {
        let table = Table {
            vars: vec![3, 1],
            columns: vec![vec![1, 2, 3], vec![4, 5, 6]],
            rows: 3,
        };
        let gathered = table.gather_with(&[2, 0, 2], [None, Some((9, vec![7, 8, 9]))]);
        assert_eq!(gathered.vars, [3, 1, 9]);
        assert_eq!(
            gathered.columns,
            [vec![3, 1, 3], vec![6, 4, 6], vec![7, 8, 9]]
        );
        assert_eq!(gathered.rows, 3);
        assert_eq!(table.gather(&[1]).columns, [vec![2], vec![5]]);
    }

    #[test]
    fn concat_gives_what_appending_gives() {
        let part = |start: Id, rows: usize| Table {
            vars: vec![2, 5],
            columns: vec![
                (start..start + rows as Id).collect(),
                (start..start + rows as Id).map(|x| x * 7).collect(),
            ],
            rows,
        };
        for sizes in [vec![], vec![3], vec![0, 4, 0], vec![5, 1, 9, 2]] {
            let parts: Vec<Table> = sizes
                .iter()
                .scan(0, |start, &rows| {
                    *start += 100;
                    Some(part(*start, rows))
                })
                .collect();
            let mut appended = parts.first().cloned().unwrap_or_default();
            for part in parts.iter().skip(1) {
                appended.append(part.clone());
            }
            assert_eq!(Table::concat(parts), appended, "{sizes:?}");
        }
    }
}
