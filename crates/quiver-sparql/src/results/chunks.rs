//! A result written by chunks of rows on the worker pool, handed in order to a sink: a
//! large one, or a smaller one whose ids are scattered over the dictionary (`stream.rs`
//! decides), of which the calling thread writes a chunk too.
//!
//! The pool fills one batch of chunk buffers while the sink takes the batch before it, so
//! taking overlaps decoding. What taking costs depends on the sink:
//!
//! - a writer ([`Handed`]) is handed the buffers one after the other on the calling
//!   thread, as it must take them. One that can keep a whole buffer (the server's body
//!   channel) does, instead of copying its bytes: the calling thread's copy was serial
//!   work on a result's every byte, while the pool's threads fill the chunks together.
//!   Another ([`Copied`]: a socket, a file) writes each buffer's bytes and gives it back
//!   at once, for the next batch;
//! - memory ([`Memory`]: the whole result as one `Vec<u8>`) takes them on the pool, each
//!   buffer copied into its own place at once (under 1 MiB, by the calling thread). Copied
//!   one after the other, the bytes and the first touch of the output's fresh pages were
//!   one thread's work whatever the cores: on 16 threads, LUBM-2560's q2 (2.8 M rows, 170
//!   MB of TSV) took 48 ms to run and 180 ms from its text to TSV in memory.
//!
//! The output is the same as one thread's in every case: chunks are cut on row bounds and
//! taken in order.

use std::io::{self, Write};
use std::ops::Range;

use rayon::prelude::*;

use super::kept_buffers;
use super::row_writer::RowWriter;
use super::term_syntax::Syntax;
use crate::engine::Solutions;

/// Results of at least this many rows are written by several threads. Below it, waking the
/// pool and warming each chunk's caches cost more than the threads save: on 2 cores,
/// LUBM-1000's q12 (3,101 rows) took 75 ns a row split into chunks against 31 on one
/// thread, while q7 (44,190 rows of scattered ids) gains from the split. Smaller results
/// are split too when their cells are scattered (`stream.rs`).
pub(super) const PARALLEL_ROWS: usize = 32_768;

/// Where the chunks of a large result go, batch by batch, in order.
pub(super) trait ChunkSink {
    /// Takes one batch of filled chunks in order; `expected` guesses the bytes of the
    /// whole output, from what was written so far. A sink may take a buffer away (leaving
    /// an empty one, which a new or kept buffer replaces).
    fn take(&mut self, chunks: &mut [Vec<u8>], expected: usize) -> io::Result<()>;

    /// Runs `fill` (the pool filling the next batch) and [`ChunkSink::take`] of `chunks`
    /// at once; their two outcomes. By default the calling thread takes the chunks while
    /// the pool fills (not in a task of the pool: a writer may block on a slow client).
    fn take_beside(
        &mut self,
        fill: impl FnOnce() -> io::Result<()> + Send,
        chunks: &mut [Vec<u8>],
        expected: usize,
    ) -> (io::Result<()>, io::Result<()>) {
        let mut filled = Ok(());
        let taken = rayon::in_place_scope(|scope| {
            scope.spawn(|_| filled = fill());
            self.take(chunks, expected)
        });
        (filled, taken)
    }
}

/// A writer that can keep a whole buffer of a result's text rather than copy it.
pub trait ChunkWriter: Write {
    /// Takes `chunk`, the result's next bytes after all written before. Giving the buffer
    /// back with [`give_back_chunk`] once done with it lets the next large result fill it
    /// again rather than a fresh one.
    fn take_chunk(&mut self, chunk: Vec<u8>) -> io::Result<()>;
}

impl<W: ChunkWriter + ?Sized> ChunkWriter for &mut W {
    fn take_chunk(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        (**self).take_chunk(chunk)
    }
}

/// Gives back a buffer that a [`ChunkWriter`] was handed, for the next large result.
pub fn give_back_chunk(chunk: Vec<u8>) {
    kept_buffers::give_back([chunk]);
}

/// A [`ChunkWriter`] handed the buffers, one after the other on the calling thread while the
/// pool fills the next batch.
pub(super) struct Handed<'w, W>(pub &'w mut W);

/// A writer that copies each chunk it is handed and gives the buffer back at once.
pub(super) struct Copied<W>(pub W);

impl<W: Write> Write for Copied<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.write(data)
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.write_all(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> ChunkWriter for Copied<W> {
    fn take_chunk(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        let written = self.0.write_all(&chunk);
        give_back_chunk(chunk);
        written
    }
}

impl<W: ChunkWriter> ChunkSink for Handed<'_, W> {
    fn take(&mut self, chunks: &mut [Vec<u8>], _expected: usize) -> io::Result<()> {
        chunks
            .iter_mut()
            .filter(|chunk| !chunk.is_empty())
            .try_for_each(|chunk| self.0.take_chunk(std::mem::take(chunk)))
    }
}

/// Extra room over the expected size, so that a result a little larger than its first
/// batches suggest is not copied again (1/16).
const MARGIN_SHIFT: u32 = 4;

/// The whole output in memory. Its buffer is zeroed memory taken from the allocator
/// (`vec![0; n]`: for a large size, fresh mapped pages, resident only once written), so
/// that each chunk's copy touches its own pages on its own thread; `len` bytes are
/// written.
pub(super) struct Memory {
    bytes: Vec<u8>,
    len: usize,
}

impl Memory {
    /// Memory starting with `opening` (the result's header).
    pub(super) fn new(opening: &[u8]) -> Self {
        Self {
            bytes: opening.to_vec(),
            len: opening.len(),
        }
    }

    /// The written bytes, then `closing`.
    pub(super) fn finish(mut self, closing: &[u8]) -> Vec<u8> {
        self.bytes.truncate(self.len);
        self.bytes.extend_from_slice(closing);
        self.bytes
    }

    /// Room for `more` bytes after the written ones: a larger zeroed buffer, sized for
    /// `expected` bytes in all when the guess is larger, the written bytes copied over by
    /// the pool.
    fn make_room(&mut self, more: usize, expected: usize) {
        let needed = self.len + more;
        if needed <= self.bytes.len() {
            return;
        }
        let size = needed
            .max(expected + (expected >> MARGIN_SHIFT))
            .max(self.bytes.len() * 2);
        let mut grown = vec![0u8; size];
        copy_in_parallel(&mut grown[..self.len], &self.bytes[..self.len]);
        self.bytes = grown;
    }
}

impl ChunkSink for Memory {
    /// Both on the pool, as two halves of a `join`: the copies' tasks and the filling's
    /// share the threads. (Copies asked from outside the pool while it fills would wait
    /// in its queue behind the filling's tasks, and the two would run one after the other.)
    fn take_beside(
        &mut self,
        fill: impl FnOnce() -> io::Result<()> + Send,
        chunks: &mut [Vec<u8>],
        expected: usize,
    ) -> (io::Result<()>, io::Result<()>) {
        rayon::join(fill, || self.take(chunks, expected))
    }

    fn take(&mut self, chunks: &mut [Vec<u8>], expected: usize) -> io::Result<()> {
        let chunks = &*chunks;
        let total: usize = chunks.iter().map(Vec::len).sum();
        self.make_room(total, expected);
        let mut rest = &mut self.bytes[self.len..self.len + total];
        let mut places = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let (place, after) = rest.split_at_mut(chunk.len());
            places.push(place);
            rest = after;
        }
        if total < COPY_STEP {
            // Less than one step: copied here, not handed to the pool and waited for.
            for (place, chunk) in places.into_iter().zip(chunks) {
                place.copy_from_slice(chunk);
            }
        } else {
            places
                .into_par_iter()
                .zip(chunks)
                .for_each(|(place, chunk)| place.copy_from_slice(chunk));
        }
        self.len += total;
        Ok(())
    }
}

/// Bytes each thread copies at once when one buffer is copied by the pool.
const COPY_STEP: usize = 1 << 20;

fn copy_in_parallel(to: &mut [u8], from: &[u8]) {
    if from.len() <= COPY_STEP {
        to.copy_from_slice(from);
        return;
    }
    to.par_chunks_mut(COPY_STEP)
        .zip(from.par_chunks(COPY_STEP))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// Writes all the rows of a large result through the worker pool, in batches of chunks of
/// `chunk_rows` rows, one buffer per chunk. Two sets of buffers take turns: while `sink`
/// takes one batch's buffers, the pool fills the next batch's. The buffers are kept from
/// batch to batch rather than allocated and grown again for every chunk, and from one
/// result to the next (`kept_buffers.rs`); at most `4 × threads` of them are held at
/// once, each about one chunk's bytes. `written` is what the sink holds before the rows
/// (the header), for its guess of the whole output's size.
pub(super) fn write_in_parallel(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    openings: &[Vec<u8>],
    threads: usize,
    chunk_rows: usize,
    written: usize,
    sink: &mut impl ChunkSink,
) -> io::Result<()> {
    let rows = solutions.len();
    let chunks = chunk_ranges(rows, chunk_rows);
    let mut batches = chunks.chunks(threads * 2);
    // One row writer per place in a batch, kept from batch to batch with its caches: the
    // place's chunk of every batch is written by whichever thread takes it, one at a time.
    let mut writers: Vec<RowWriter<'_>> = (0..threads * 2)
        .map(|_| RowWriter::new(solutions, openings.len(), true, chunk_rows))
        .collect();
    let mut fill = |buffers: &mut Vec<Vec<u8>>, batch: &[Range<usize>]| {
        buffers.resize_with(batch.len(), Vec::new);
        // Buffers a sink took away are replaced by kept ones, or new ones.
        for buffer in buffers.iter_mut().filter(|buffer| buffer.capacity() == 0) {
            *buffer = kept_buffers::take();
        }
        let jobs =
            buffers
                .iter_mut()
                .zip(&mut writers)
                .zip(batch)
                .map(|((buffer, writer), range)| {
                    move || fill_chunk(writer, solutions, syntax, openings, range, buffer)
                });
        run_chunk_jobs(rows, jobs)
            .into_iter()
            .collect::<io::Result<()>>()
    };
    // The bytes and rows filled so far, for the guess of the whole output's size.
    let mut filled_bytes = 0usize;
    let mut filled_rows = 0usize;
    let mut count = |buffers: &[Vec<u8>], batch: &[Range<usize>]| {
        filled_bytes += buffers.iter().map(Vec::len).sum::<usize>();
        filled_rows += batch.iter().map(|range| range.len()).sum::<usize>();
        let per_row = filled_bytes as f64 / filled_rows.max(1) as f64;
        written + (per_row * rows as f64) as usize
    };
    let mut filled = Vec::new();
    let mut spare = Vec::new();
    let mut expected = written;
    if let Some(first) = batches.next() {
        fill(&mut filled, first)?;
        expected = count(&filled, first);
    }
    for batch in batches {
        std::mem::swap(&mut filled, &mut spare);
        let filling = || fill(&mut filled, batch);
        let (filling, taken) = sink.take_beside(filling, &mut spare, expected);
        taken?;
        filling?;
        expected = count(&filled, batch);
    }
    sink.take(&mut filled, expected)?;
    kept_buffers::give_back(filled.into_iter().chain(spare));
    Ok(())
}

/// The ranges of rows of a result of `rows` rows cut into chunks of `chunk_rows` rows.
pub(super) fn chunk_ranges(rows: usize, chunk_rows: usize) -> Vec<Range<usize>> {
    (0..rows)
        .step_by(chunk_rows.max(1))
        .map(|from| from..(from + chunk_rows).min(rows))
        .collect()
}

/// The outcomes of `jobs`, the chunks of a result of `rows` rows, in order. The calling
/// thread runs the first chunk of a small result (one batch) beside the pool
/// ([`with_the_caller`]): a thread outside the pool (a connection's, the command's) would
/// otherwise wait idle for it, and for a few hundred microseconds of work its hand-off and
/// wake-up cost about as much as a chunk (LUBM-1000's q1 as JSON on 2 cores, medians: 209
/// ns a row on one thread, 238 on the pool alone, 135 in a chunk per thread of which the
/// caller writes one). A large result's chunks keep to the pool: a third thread on two
/// cores made LUBM-1000's q7 slower.
pub(super) fn run_chunk_jobs<T: Send>(
    rows: usize,
    jobs: impl IntoIterator<Item = impl FnOnce() -> T + Send>,
) -> Vec<T> {
    if rows < PARALLEL_ROWS {
        return with_the_caller(jobs);
    }
    let jobs: Vec<_> = jobs.into_iter().collect();
    jobs.into_par_iter().map(|job| job()).collect()
}

/// The outcomes of `jobs`, in order: the first run by the calling thread, the others
/// spawned on the pool at once.
fn with_the_caller<T: Send>(jobs: impl IntoIterator<Item = impl FnOnce() -> T + Send>) -> Vec<T> {
    let jobs: Vec<_> = jobs.into_iter().collect();
    let mut outcomes: Vec<Option<T>> = jobs.iter().map(|_| None).collect();
    let mut places = jobs.into_iter().zip(&mut outcomes);
    let first = places.next();
    rayon::in_place_scope(|scope| {
        for (job, outcome) in places {
            scope.spawn(move |_| *outcome = Some(job()));
        }
        if let Some((job, outcome)) = first {
            *outcome = Some(job());
        }
    });
    outcomes.into_iter().flatten().collect()
}

/// Writes the rows `range` into `buffer` (emptied first) through `writer`.
fn fill_chunk(
    writer: &mut RowWriter<'_>,
    solutions: &Solutions<'_>,
    syntax: Syntax,
    openings: &[Vec<u8>],
    range: &Range<usize>,
    buffer: &mut Vec<u8>,
) -> io::Result<()> {
    // Written through a vector of the task's own: the places' vectors lie side by side, and
    // every push updating a length in a line that another thread's pushes update too would
    // bounce it between their caches.
    let mut own = std::mem::take(buffer);
    own.clear();
    let written = writer.write(
        solutions,
        syntax,
        openings,
        range.clone(),
        &mut own,
        &mut |_| Ok(()),
    );
    *buffer = own;
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(byte: u8, len: usize) -> Vec<u8> {
        vec![byte; len]
    }

    /// Jobs run with the caller come back in order, the first run by the calling thread
    /// (outside the pool here), the others by the pool's.
    #[test]
    fn jobs_run_with_the_caller_come_back_in_order_the_first_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let jobs = (0..10).map(|k| move || (k, std::thread::current().id()));
        let outcomes = with_the_caller(jobs);
        let order: Vec<usize> = outcomes.iter().map(|&(k, _)| k).collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
        assert_eq!(outcomes[0].1, caller);
        assert!(outcomes[1..].iter().all(|&(_, thread)| thread != caller));
    }

    /// Batches taken into memory come out in order after the opening, whether the guess of
    /// the whole size was right, too small (the buffer grows, the written bytes copied
    /// over) or too large (the unused room is cut off).
    #[test]
    fn memory_holds_the_batches_in_order_whatever_its_guess() {
        let batches = [
            vec![chunk(1, 3), chunk(2, 5_000)],
            vec![chunk(3, 70_000), chunk(4, 1), chunk(5, 0)],
            vec![chunk(6, 2_500_000)],
        ];
        let mut expected = b"head".to_vec();
        for batch in &batches {
            for chunk in batch {
                expected.extend_from_slice(chunk);
            }
        }
        expected.extend_from_slice(b"tail");
        for guess in [0, 10, expected.len(), 50_000_000] {
            let mut memory = Memory::new(b"head");
            for batch in &batches {
                memory.take(&mut batch.clone(), guess).unwrap();
            }
            let bytes = memory.finish(b"tail");
            assert_eq!(bytes.len(), expected.len(), "guess {guess}");
            assert!(bytes == expected, "guess {guess}: the bytes differ");
        }
    }
}
