//! Exploration steps on the device: Wukong+G's "history table" kept in device memory.
//!
//! The table is a set of device columns of ids. Each step is a few kernels:
//! - *expand* (bind a new column): per row the neighbour list's start and length, a prefix
//!   sum of the lengths, then one thread per output row finds its input row by binary
//!   search in the sums (balanced however skewed the lists are) and copies one neighbour;
//! - *check*: per row a binary search of the target in the list, then a compaction;
//! - *intersect* (a walk fused with its partner): per row, both lists trimmed to the range
//!   of ids they share, the shorter of the two gives candidates, expanded as above, each
//!   kept when the longer list holds it.
//!
//! Every step ends by gathering the table's columns through the step's selection of
//! parent rows. Rows come out in the CPU executor's order: input rows in order, each
//! row's neighbours in list order (ascending ids for intersections).

use std::time::Instant;

use quiver_model::{Id, ID_BYTES};
use quiver_sparql::context::ensure_addressable;
use quiver_sparql::device::{DeviceInput, DeviceQuery, DeviceRun, DeviceStep, DeviceTarget};
use quiver_sparql::table::{Table, UNBOUND};
use quiver_sparql::QueryError;

use crate::backend::{Backend, BackendExt, Buffer, Kernel, Params};
use crate::resident::IndexView;
use crate::scan::scan_total;

/// The table on the device.
struct DeviceTable {
    columns: Vec<Buffer>,
    rows: usize,
}

impl DeviceTable {
    fn bytes(&self) -> usize {
        self.columns.len().max(1) * self.rows * ID_BYTES
    }
}

/// A step end as two kernel slots: a column pointer (0 for a constant) and a constant.
fn end_slots(table: &DeviceTable, input: DeviceInput) -> [u64; 2] {
    match input {
        DeviceInput::Const(id) => [0, id as u64],
        DeviceInput::Column(c) => [table.columns[c].ptr(), 0],
    }
}

/// Runs `steps` from `input`.
pub(crate) fn run_steps(
    backend: &dyn Backend,
    graph: &dyn IndexView,
    input: &Table,
    steps: &[DeviceStep],
    query: DeviceQuery<'_, '_>,
) -> Result<DeviceRun, QueryError> {
    let mut run = DeviceRun::default();
    let started = Instant::now();
    let mut table = DeviceTable {
        columns: input
            .columns
            .iter()
            .map(|column| backend.upload_slice::<Id>(&column[..input.rows]))
            .collect::<Result<_, _>>()?,
        rows: input.rows,
    };
    backend.synchronize()?;
    run.upload_bytes = input.columns.len() * input.rows * ID_BYTES;
    run.upload_micros = started.elapsed().as_secs_f64() * 1e6;
    query.memory.try_resize(table.bytes())?;
    for step in steps {
        (query.check)()?;
        let started = Instant::now();
        table = run_step(backend, graph, table, step, query.memory)?;
        backend.synchronize()?;
        query.memory.try_resize(table.bytes())?;
        run.steps
            .push((table.rows, started.elapsed().as_secs_f64() * 1e6));
    }
    (query.check)()?;
    let started = Instant::now();
    run.columns = table
        .columns
        .iter()
        .map(|column| backend.download_vec::<Id>(column, 0, table.rows))
        .collect::<Result<_, _>>()?;
    run.rows = table.rows;
    run.download_bytes = table.columns.len() * table.rows * ID_BYTES;
    run.download_micros = started.elapsed().as_secs_f64() * 1e6;
    Ok(run)
}

/// One step: the new table.
fn run_step(
    backend: &dyn Backend,
    graph: &dyn IndexView,
    table: DeviceTable,
    step: &DeviceStep,
    memory: &mut quiver_sparql::memory::Reservation<'_>,
) -> Result<DeviceTable, QueryError> {
    let n = table.rows as u64;
    let adjacency = graph.adjacency(step.predicate, step.direction);
    let [source, source_const] = end_slots(&table, step.source);
    let [offsets, vertices, words, keys] = adjacency.slots();
    let predicate = step.predicate as u64;
    let table_bytes = table.bytes();
    let (selection, column) = match (step.target, step.partner) {
        (DeviceTarget::Bind, None) => {
            let starts = backend.alloc_of::<u64>(n as usize)?;
            let pos = backend.alloc_of::<u64>(n as usize + 1)?;
            memory.try_resize(table_bytes + (2 * n as usize + 1) * 8)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::ExpandLookup,
                    n + 1,
                    &Params::new(&[
                        source,
                        source_const,
                        n,
                        offsets,
                        vertices,
                        words,
                        keys,
                        predicate,
                        starts.ptr(),
                        pos.ptr(),
                    ]),
                )
            }?;
            let total = scan_total(backend, &pos, n)?;
            ensure_addressable(total as usize)?;
            let outputs = output_bytes(total, table.columns.len() + 1);
            memory.try_resize(table_bytes + (2 * n as usize + 1) * 8 + outputs)?;
            let selection = backend.alloc_of::<u32>(total as usize)?;
            let column = backend.alloc_of::<Id>(total as usize)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::ExpandEmit,
                    total,
                    &Params::new(&[
                        pos.ptr(),
                        n,
                        starts.ptr(),
                        words,
                        total,
                        selection.ptr(),
                        column.ptr(),
                    ]),
                )
            }?;
            (
                Selection {
                    buffer: selection,
                    rows: total,
                },
                Some(column),
            )
        }
        (DeviceTarget::Check(target), None) => {
            let [target, target_const] = end_slots(&table, target);
            let pos = backend.alloc_of::<u64>(n as usize + 1)?;
            memory.try_resize(table_bytes + (n as usize + 1) * 8)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::Check,
                    n + 1,
                    &Params::new(&[
                        source,
                        source_const,
                        n,
                        offsets,
                        vertices,
                        words,
                        keys,
                        predicate,
                        target,
                        target_const,
                        UNBOUND as u64,
                        pos.ptr(),
                    ]),
                )
            }?;
            let total = scan_total(backend, &pos, n)?;
            memory.try_resize(
                table_bytes + (n as usize + 1) * 8 + output_bytes(total, table.columns.len()),
            )?;
            let selection = backend.alloc_of::<u32>(total as usize)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::Compact,
                    n,
                    &Params::new(&[pos.ptr(), n, selection.ptr()]),
                )
            }?;
            (
                Selection {
                    buffer: selection,
                    rows: total,
                },
                None,
            )
        }
        (DeviceTarget::Bind, Some((other, other_predicate, other_direction))) => {
            let [other_source, other_const] = end_slots(&table, other);
            let other_adjacency = graph.adjacency(other_predicate, other_direction);
            let [other_offsets, other_vertices, other_words, other_keys] = other_adjacency.slots();
            let info = backend.alloc_of::<u64>(4 * n as usize)?;
            let pos = backend.alloc_of::<u64>(n as usize + 1)?;
            let lookup_bytes = (5 * n as usize + 1) * 8;
            memory.try_resize(table_bytes + lookup_bytes)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::IntersectLookup,
                    n + 1,
                    &Params::new(&[
                        source,
                        source_const,
                        other_source,
                        other_const,
                        n,
                        offsets,
                        vertices,
                        words,
                        keys,
                        predicate,
                        other_offsets,
                        other_vertices,
                        other_words,
                        other_keys,
                        other_predicate as u64,
                        info.ptr(),
                        pos.ptr(),
                    ]),
                )
            }?;
            let candidates = scan_total(backend, &pos, n)?;
            ensure_addressable(candidates as usize)?;
            let candidate_bytes = candidates as usize * (4 + ID_BYTES + 8) + 8;
            memory.try_resize(table_bytes + lookup_bytes + candidate_bytes)?;
            let candidate_rows = backend.alloc_of::<u32>(candidates as usize)?;
            let candidate_values = backend.alloc_of::<Id>(candidates as usize)?;
            let flags = backend.alloc_of::<u64>(candidates as usize + 1)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::IntersectCandidates,
                    candidates + 1,
                    &Params::new(&[
                        pos.ptr(),
                        n,
                        info.ptr(),
                        words,
                        other_words,
                        candidates,
                        candidate_rows.ptr(),
                        candidate_values.ptr(),
                        flags.ptr(),
                    ]),
                )
            }?;
            let total = scan_total(backend, &flags, candidates)?;
            ensure_addressable(total as usize)?;
            memory.try_resize(
                table_bytes
                    + lookup_bytes
                    + candidate_bytes
                    + output_bytes(total, table.columns.len() + 1),
            )?;
            let selection = backend.alloc_of::<u32>(total as usize)?;
            let column = backend.alloc_of::<Id>(total as usize)?;
            // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
            unsafe {
                backend.launch(
                    Kernel::CompactPairs,
                    candidates,
                    &Params::new(&[
                        flags.ptr(),
                        candidates,
                        candidate_rows.ptr(),
                        candidate_values.ptr(),
                        selection.ptr(),
                        column.ptr(),
                    ]),
                )
            }?;
            (
                Selection {
                    buffer: selection,
                    rows: total,
                },
                Some(column),
            )
        }
        (DeviceTarget::Check(_), Some(_)) => {
            return Err(QueryError::Plan(
                "a device step intersects only when it binds a variable".into(),
            ))
        }
    };
    let mut columns = table
        .columns
        .iter()
        .map(|input| gather(backend, input, &selection))
        .collect::<Result<Vec<_>, _>>()?;
    columns.extend(column);
    Ok(DeviceTable {
        columns,
        rows: selection.rows as usize,
    })
}

/// Parent rows of a step's output.
struct Selection {
    buffer: Buffer,
    rows: u64,
}

/// Bytes of a step's selection and `columns` output columns of `rows` rows.
fn output_bytes(rows: u64, columns: usize) -> usize {
    rows as usize * (4 + columns * ID_BYTES)
}

/// `column` gathered through `selection`.
fn gather(
    backend: &dyn Backend,
    column: &Buffer,
    selection: &Selection,
) -> Result<Buffer, QueryError> {
    let out = backend.alloc_of::<Id>(selection.rows as usize)?;
    // SAFETY: the table's columns, the graph's arrays and the buffers allocated above are alive and hold every element the kernel indexes (`kernels.cu`): n + 1 positions, `total` outputs.
    unsafe {
        backend.launch(
            Kernel::Gather,
            selection.rows,
            &Params::new(&[
                column.ptr(),
                selection.buffer.ptr(),
                selection.rows,
                out.ptr(),
            ]),
        )
    }?;
    Ok(out)
}
