//! DISTINCT: the first of each set of equal rows, with the seen rows charged as they grow.

use rustc_hash::FxHashSet;

use crate::context::{ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::table::Table;

/// DISTINCT: the first row of each set of equal rows, in order.
pub(crate) fn distinct(ctx: &ExecContext<'_>, table: &Table) -> Result<Table, QueryError> {
    let per_row = table.columns.len() * ID_BYTES + 3 * std::mem::size_of::<usize>() + 8;
    let mut reservation = ctx.reservation();
    let mut seen = FxHashSet::default();
    let mut keep: Vec<u32> = Vec::new();
    for row in 0..table.rows {
        if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
            ctx.check()?;
            reservation.try_resize(seen.len() * per_row + keep.len() * 4)?;
        }
        if seen.insert(table.row(row)) {
            keep.push(row as u32);
        }
    }
    reservation.try_resize(seen.len() * per_row + keep.len() * 4)?;
    Ok(table.gather(&keep))
}
