//! A result's rows handed out in the chunks its writers would cut (`stream.rs` decides), so
//! that a caller decoding them into a form of its own (the Python package's Arrow columns,
//! `bench lubm`'s decoding) uses every thread where the writers would, and one where they
//! would not.

use std::ops::Range;

use super::chunks::{chunk_ranges, run_chunk_jobs};
use super::stream::parallel_chunk_rows;
use crate::engine::Solutions;

/// `visit` of each chunk of the rows of `solutions`, in row order: one range of all rows
/// when one thread would write them; otherwise the writers' chunks, visited on the pool,
/// and for a small result by the calling thread too, which takes the first, as the
/// writers' (`chunks.rs`).
pub fn map_row_chunks<T: Send>(
    solutions: &Solutions<'_>,
    visit: impl Fn(Range<usize>) -> T + Sync,
) -> Vec<T> {
    let rows = solutions.len();
    let Some(chunk) = parallel_chunk_rows(solutions, rayon::current_num_threads()) else {
        return vec![visit(0..rows)];
    };
    let visit = &visit;
    run_chunk_jobs(
        rows,
        chunk_ranges(rows, chunk)
            .into_iter()
            .map(|range| move || visit(range)),
    )
}
