//! UNION: the rows of one side then the other's, over the variables of both.

use quiver_model::Id;

use crate::context::{table_bytes, ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::table::{Table, UNBOUND};

/// The rows of `a` then those of `b`, over the variables of both; copied a stride of rows
/// at a time between checks.
pub(crate) fn union(ctx: &ExecContext<'_>, a: Table, b: Table) -> Result<Table, QueryError> {
    let mut vars = a.vars.clone();
    vars.extend(b.vars.iter().filter(|v| !a.vars.contains(v)));
    let rows = a.rows + b.rows;
    let mut reservation = ctx.reservation();
    reservation.try_grow(table_bytes(rows, vars.len()))?;
    let mut columns: Vec<Vec<Id>> = vars.iter().map(|_| Vec::with_capacity(rows)).collect();
    for part in [&a, &b] {
        for start in (0..part.rows).step_by(CHECK_STRIDE) {
            ctx.check()?;
            let end = (start + CHECK_STRIDE).min(part.rows);
            for (column, &var) in columns.iter_mut().zip(&vars) {
                match part.column(var) {
                    Some(values) => column.extend_from_slice(&values[start..end]),
                    None => column.extend(std::iter::repeat_n(UNBOUND, end - start)),
                }
            }
        }
    }
    Ok(Table {
        vars,
        columns,
        rows,
    })
}
