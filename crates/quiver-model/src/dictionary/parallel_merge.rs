//! Merging sorted runs into one dictionary on every core.
//!
//! A bulk load seals each chunk's distinct terms into a [`SortedRun`]; one k-way merge of the
//! runs (`merge_runs`) gives every distinct term its id in sorted order. On one thread that
//! merge was the last serial step of a load's compute: a tenth of LUBM-100's load on two
//! cores, and at sixteen cores it would have set the pace of the whole load.
//!
//! Here the term space is cut into ranges by splitter terms sampled from the runs, and each
//! range is merged on its own thread: every run is cut at every splitter (a binary search
//! of its bucket heads, then one bucket's scan), so a term found in several runs falls in
//! one range, and each range reads its disjoint stretch of each run's bytes, giving their
//! pages back as it goes, as the serial merge did. A range front-codes its
//! distinct terms as if it started the dictionary. Once every range's count is known, a
//! range whose first id is not at a bucket boundary is re-encoded with the right phase (a
//! linear pass, no comparisons), and the ranges' bytes are copied side by side into the
//! dictionary's one array. The result is byte for byte the dictionary the serial merge
//! builds (tested).

use rayon::prelude::*;

use super::run::{merge_sources, RunReader, TermSource};
use super::{BucketReader, Dictionary, DictionaryBuilder, SortedRun, BUCKET};
use crate::column::ColumnBuffer;
use crate::id::{term_id, Id, IdsExhausted};

/// Ranges per thread, so that a thread finishing early takes another.
const RANGES_PER_THREAD: usize = 4;

/// The fewest run terms worth a range of their own.
const MIN_RANGE_TERMS: u64 = 1 << 16;

/// Terms sampled per range, to place the splitters.
const SAMPLES_PER_RANGE: u64 = 32;

/// Bytes read or copied between two releases of their pages. A range's stretch of a run is
/// a fraction of the run, so this is finer than the serial merge's step; a stretch read to
/// its end is released whole.
const RELEASE_BYTES: usize = 256 << 10;

/// Merges `runs` into one dictionary of their distinct terms, on the rayon pool's threads.
/// Returns it with, per run, the id of each of its terms by rank. Each run is drained (see
/// [`SortedRun::drain`]). Fails when the distinct terms are more than ids can number.
pub fn merge_into_dictionary(
    runs: &mut [&mut SortedRun],
) -> Result<(Dictionary, Vec<Vec<Id>>), IdsExhausted> {
    let terms: u64 = runs.iter().map(|run| run.len).sum();
    let ranges = (rayon::current_num_threads() * RANGES_PER_THREAD)
        .min(usize::try_from(terms / MIN_RANGE_TERMS).unwrap_or(usize::MAX))
        .max(1);
    merge_in_ranges(runs, ranges)
}

/// [`merge_into_dictionary`] over at most `ranges` ranges.
fn merge_in_ranges(
    runs: &mut [&mut SortedRun],
    ranges: usize,
) -> Result<(Dictionary, Vec<Vec<Id>>), IdsExhausted> {
    let splitters = splitters(runs, ranges);
    let cuts: Vec<Vec<Cut>> = runs
        .par_iter()
        .map(|run| splitters.iter().map(|s| Cut::at(run, s)).collect())
        .collect();
    let mut maps: Vec<Vec<Id>> = runs.iter().map(|run| vec![0; run.len as usize]).collect();

    // Each range's stretch of every run and of that run's map.
    let mut inputs: Vec<RangeInput> = (0..=splitters.len())
        .map(|_| RangeInput {
            parts: Vec::with_capacity(runs.len()),
            maps: Vec::with_capacity(runs.len()),
        })
        .collect();
    for ((run, cuts), map) in runs.iter_mut().zip(cuts).zip(&mut maps) {
        let len = run.len;
        let mut data = &mut run.data[..];
        let mut map = &mut map[..];
        let mut start = Cut::default();
        let mut ends = cuts.into_iter().chain([Cut {
            rank: len,
            position: data.len(),
            previous: Vec::new(),
        }]);
        for input in &mut inputs {
            let end = ends
                .next()
                .expect("one cut per splitter, then the run's end");
            let (bytes, rest) =
                std::mem::take(&mut data).split_at_mut(end.position - start.position);
            data = rest;
            let (ids, rest) =
                std::mem::take(&mut map).split_at_mut((end.rank - start.rank) as usize);
            map = rest;
            input.parts.push(PartReader::new(
                bytes,
                start.rank,
                end.rank,
                std::mem::take(&mut start.previous),
            ));
            input.maps.push(ids);
            start = end;
        }
    }

    let merged: Vec<(DictionaryBuilder, Vec<&mut [Id]>)> = inputs
        .into_par_iter()
        .map(RangeInput::merge)
        .collect::<Result<_, _>>()?;
    let total: u64 = merged.iter().map(|(piece, _)| piece.len).sum();
    if total > 0 {
        term_id(total - 1)?;
    }

    // Each range's first id, and the term before it: its ids and its pieces' bucket phase
    // follow from them.
    let mut starts = Vec::with_capacity(merged.len());
    let (mut base, mut last) = (0u64, &[][..]);
    for (piece, _) in &merged {
        starts.push((base, last.to_vec()));
        base += piece.len;
        if piece.len > 0 {
            last = &piece.previous;
        }
    }
    let pieces: Vec<DictionaryBuilder> = merged
        .into_par_iter()
        .zip(starts)
        .map(|((piece, maps), (base, before))| {
            // Lossless where there are ids to shift: `base` is then below `total`, whose
            // ids were checked above (a piece starting at `total` is empty).
            #[allow(clippy::unnecessary_cast)]
            let shift = base as Id;
            for ids in maps {
                ids.iter_mut().for_each(|id| *id += shift);
            }
            if base.is_multiple_of(BUCKET as u64) {
                piece
            } else {
                reencode(piece, base, before)
            }
        })
        .collect();
    for run in runs.iter_mut() {
        // Read to the end by the ranges, their pages given back as they went; only the
        // length is kept, as `drain` promises.
        run.data = Vec::new();
        run.buckets = Vec::new();
    }
    Ok((concatenate(pieces, total), maps))
}

/// Where a splitter falls in one run: the rank of its first term not below the splitter,
/// where that term's bytes start, and the term before it (which it may share a prefix with).
#[derive(Default)]
struct Cut {
    rank: u64,
    position: usize,
    previous: Vec<u8>,
}

impl Cut {
    fn at(run: &SortedRun, splitter: &[u8]) -> Cut {
        // The buckets whose head is below the splitter; it falls in the last of them. Each
        // head is decoded into the same buffer.
        let mut head = Vec::new();
        let below = partition_point(run.buckets.len(), |b| {
            head.clear();
            BucketReader::new(&run.data, run.buckets[b]).next_into(&mut head);
            &head[..] < splitter
        });
        let Some(bucket) = below.checked_sub(1) else {
            return Cut::default();
        };
        let first = (bucket * BUCKET) as u64;
        let count = (run.len - first).min(BUCKET as u64);
        let mut reader = BucketReader::new(&run.data, run.buckets[bucket]);
        let (mut term, mut previous) = (Vec::new(), Vec::new());
        for i in 0..count {
            let position = reader.position;
            // `term` holds the bucket's previous term, as front coding wants; the run was
            // written by this process, so it decodes.
            if !reader.next_into(&mut term) || &term[..] >= splitter {
                return Cut {
                    rank: first + i,
                    position,
                    previous,
                };
            }
            previous.clone_from(&term);
        }
        Cut {
            rank: first + count,
            position: reader.position,
            previous,
        }
    }
}

/// The first of `0..len` for which `below` is false (`below` holds on a prefix).
fn partition_point(len: usize, mut below: impl FnMut(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let middle = low + (high - low) / 2;
        if below(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

/// At most `ranges - 1` distinct terms, ascending, cutting the runs' terms into about equal
/// ranges: quantiles of terms sampled from every run in proportion to its length.
/// Runs often look alike (a load's chunks of one generator, one university each, spread over
/// the same stretches of the term space), so each run's samples are shifted by its own
/// fraction of their spacing: the same positions in every run would pile the samples up
/// at a few terms.
fn splitters(runs: &[&mut SortedRun], ranges: usize) -> Vec<Vec<u8>> {
    let terms: u64 = runs.iter().map(|run| run.len).sum();
    if ranges <= 1 || terms == 0 {
        return Vec::new();
    }
    let wanted = SAMPLES_PER_RANGE * ranges as u64;
    let mut samples = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let take = (wanted * run.len).div_ceil(terms);
        // The golden ratio's fractional part, in 1/1024ths of the spacing.
        let shift = (i as u64 * 633) % 1024;
        samples.extend((0..take).filter_map(|k| {
            let rank = (k * 1024 + shift) as u128 * run.len as u128 / (take as u128 * 1024);
            run.term(rank as u64)
        }));
    }
    samples.sort_unstable();
    let mut splitters: Vec<Vec<u8>> = (1..ranges)
        .map(|k| samples[k * samples.len() / ranges].clone())
        .collect();
    splitters.dedup();
    splitters
}

/// One range's stretch of every run, and of each run's map from rank to id.
struct RangeInput<'a> {
    parts: Vec<PartReader<'a>>,
    maps: Vec<&'a mut [Id]>,
}

impl<'a> RangeInput<'a> {
    /// Merges the range's stretches into a dictionary piece of its own (ids from 0), and
    /// writes each term's id in the piece to its map. Gives the maps back.
    fn merge(mut self) -> Result<(DictionaryBuilder, Vec<&'a mut [Id]>), IdsExhausted> {
        let mut piece = DictionaryBuilder::new();
        let maps = &mut self.maps;
        merge_sources(&mut self.parts, |term, part, rank| {
            if let Some(term) = term {
                piece.push(term);
            }
            maps[part][rank as usize] = term_id(piece.len - 1)?;
            Ok(())
        })?;
        Ok((piece, self.maps))
    }
}

/// A reading, in order, of the terms of ranks `reader.next..end` of one run from their
/// bytes, giving back the pages read as it goes.
struct PartReader<'a> {
    data: &'a mut [u8],
    released: usize,
    /// Its rank in the run is the next term's (a multiple of [`BUCKET`] starts a bucket);
    /// its term, the one before.
    reader: RunReader,
    end: u64,
}

impl<'a> PartReader<'a> {
    /// The terms of ranks `start..end`, whose bytes `data` holds; `previous` is the term of
    /// rank `start - 1`, which the first may share a prefix with.
    fn new(data: &'a mut [u8], start: u64, end: u64, previous: Vec<u8>) -> Self {
        PartReader {
            data,
            released: 0,
            reader: RunReader {
                next: start,
                position: 0,
                current: previous,
            },
            end,
        }
    }
}

impl TermSource for PartReader<'_> {
    fn next_term(&mut self) -> Option<&[u8]> {
        let position = self.reader.position;
        if self.reader.next >= self.end {
            if self.released < self.data.len() {
                crate::memory::release_pages(&mut self.data[self.released..]);
                self.released = self.data.len();
            }
        } else if position - self.released >= RELEASE_BYTES {
            crate::memory::release_pages(&mut self.data[self.released..position]);
            self.released = position;
        }
        self.reader.next_in(self.data, self.end)
    }
}

/// `piece` front-coded again as the dictionary's terms from id `base` on, after `before`:
/// its buckets start where the whole dictionary's do. Its bucket offsets stay relative to
/// its own bytes, and its length is still its own count.
fn reencode(mut piece: DictionaryBuilder, base: u64, before: Vec<u8>) -> DictionaryBuilder {
    let count = piece.len;
    let mut out = DictionaryBuilder {
        data: Vec::with_capacity(piece.data.len() + piece.data.len() / 8),
        buckets: Vec::with_capacity(piece.buckets.len() + 1),
        previous: before,
        len: base,
    };
    let mut reader = PartReader::new(&mut piece.data, 0, count, Vec::new());
    while let Some(term) = reader.next_term() {
        out.push(term);
    }
    out.len = count;
    out
}

/// The dictionary of `pieces` in order, `total` terms, their bytes copied side by side.
fn concatenate(pieces: Vec<DictionaryBuilder>, total: u64) -> Dictionary {
    let bytes = pieces.iter().map(|piece| piece.data.len()).sum();
    let mut data = ColumnBuffer::<u8>::zeroed(bytes);
    let mut buckets = Vec::with_capacity(total.div_ceil(BUCKET as u64) as usize);
    let mut targets = Vec::with_capacity(pieces.len());
    let mut rest = data.values_mut();
    let mut offset = 0u64;
    for piece in &pieces {
        buckets.extend(piece.buckets.iter().map(|bucket| bucket + offset));
        let (target, tail) = std::mem::take(&mut rest).split_at_mut(piece.data.len());
        targets.push(target);
        rest = tail;
        offset += piece.data.len() as u64;
    }
    // Each piece's pages go back as they are copied, so the pieces and the dictionary are
    // never resident together (with long literals the dictionary is most of a store).
    pieces
        .into_par_iter()
        .zip(targets)
        .for_each(|(mut piece, target)| {
            for (from, to) in piece
                .data
                .chunks_mut(RELEASE_BYTES)
                .zip(target.chunks_mut(RELEASE_BYTES))
            {
                to.copy_from_slice(from);
                crate::memory::release_pages(from);
            }
        });
    debug_assert_eq!(buckets.len() as u64, total.div_ceil(BUCKET as u64));
    Dictionary::assembled(data.finish(), buckets.into(), total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictionary::merge_runs;

    /// Runs of terms sharing long prefixes, overlapping each other, of uneven lengths (one
    /// empty, one of a single term).
    fn runs(seed: u64) -> Vec<SortedRun> {
        let mut state = seed;
        let mut next = move |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        [0, 1, 700, 5_000, 20_000, 3]
            .into_iter()
            .map(|count| {
                let mut terms: Vec<Vec<u8>> = (0..count)
                    .map(|_| {
                        let mut term = format!(
                            "http://www.Department{}.University{}.edu/",
                            next(20),
                            next(9)
                        );
                        (0..next(4)).for_each(|_| term.push((b'a' + next(3) as u8) as char));
                        term.push_str(&next(40_000).to_string());
                        term.into_bytes()
                    })
                    .collect();
                terms.sort();
                terms.dedup();
                let mut builder = DictionaryBuilder::new();
                terms.iter().for_each(|term| {
                    builder.push(term);
                });
                builder.finish_run()
            })
            .collect()
    }

    /// The serial merge's dictionary and maps, the reference.
    fn merged_serially(runs: &mut [SortedRun]) -> (Dictionary, Vec<Vec<Id>>) {
        let mut maps: Vec<Vec<Id>> = runs.iter().map(|_| Vec::new()).collect();
        let mut builder = DictionaryBuilder::new();
        let mut id = 0;
        let mut refs: Vec<&mut SortedRun> = runs.iter_mut().collect();
        merge_runs::<()>(&mut refs, |term, run, _| {
            if let Some(term) = term {
                id = term_id(builder.push(term)).unwrap();
            }
            maps[run].push(id);
            Ok(())
        })
        .unwrap();
        (builder.finish(), maps)
    }

    #[test]
    fn ranges_merge_into_the_dictionary_the_serial_merge_builds() {
        for seed in 1..4 {
            let (expected, expected_maps) = merged_serially(&mut runs(seed));
            let (data, buckets, len) = expected.parts();
            for ranges in [1, 2, 3, 7, 64, 5_000] {
                let mut runs = runs(seed);
                let mut refs: Vec<&mut SortedRun> = runs.iter_mut().collect();
                let (dictionary, maps) = merge_in_ranges(&mut refs, ranges).unwrap();
                let parts = dictionary.parts();
                assert_eq!(parts.2, len, "terms, {ranges} ranges");
                assert!(parts.1[..] == buckets[..], "buckets, {ranges} ranges");
                assert!(parts.0[..] == data[..], "bytes, {ranges} ranges");
                assert_eq!(maps, expected_maps, "ids by rank, {ranges} ranges");
                assert!(runs.iter().all(|run| run.data_bytes() == 0), "drained");
            }
        }
    }

    #[test]
    fn runs_alike_are_cut_into_ranges_of_about_equal_size() {
        // 100 runs, each spread over the whole term space in the same way (as a generator's
        // chunks are), three buckets each.
        let mut runs: Vec<SortedRun> = (0..100)
            .map(|u| {
                let mut builder = DictionaryBuilder::new();
                (0..40).for_each(|k| {
                    builder.push(
                        format!("http://www.Department{k:02}.University{u:03}.edu/").as_bytes(),
                    );
                });
                builder.finish_run()
            })
            .collect();
        let refs: Vec<&mut SortedRun> = runs.iter_mut().collect();
        let splitters = splitters(&refs, 8);
        assert_eq!(splitters.len(), 7);
        let mut previous = vec![0u64; refs.len()];
        for splitter in splitters.iter().map(Some).chain([None]) {
            let below: u64 = refs
                .iter()
                .zip(&mut previous)
                .map(|(run, previous)| {
                    let rank = splitter.map_or(run.len(), |s| Cut::at(run, s).rank);
                    rank - std::mem::replace(previous, rank)
                })
                .sum();
            assert!(
                (250..=750).contains(&below),
                "a range of {below} terms of 4,000"
            );
        }
    }

    #[test]
    fn splitters_cut_runs_into_ranges_of_about_equal_size() {
        let mut runs = runs(9);
        let refs: Vec<&mut SortedRun> = runs.iter_mut().collect();
        let splitters = splitters(&refs, 8);
        assert!(splitters.len() >= 6, "{} splitters", splitters.len());
        assert!(splitters.windows(2).all(|w| w[0] < w[1]));
        let largest = &refs[4];
        let ranks: Vec<u64> = splitters.iter().map(|s| Cut::at(largest, s).rank).collect();
        for (k, rank) in ranks.iter().enumerate() {
            let even = (k as u64 + 1) * largest.len() / 8;
            assert!(
                rank.abs_diff(even) < largest.len() / 16,
                "cut {k} at {rank}, not near {even}"
            );
            // The rank is the count of terms below the splitter.
            assert!(largest.term(*rank).is_none_or(|t| t >= splitters[k]));
            assert!(largest.term(rank - 1).unwrap() < splitters[k]);
        }
    }
}
