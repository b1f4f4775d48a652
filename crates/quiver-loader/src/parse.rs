//! Parsing sources into encoded chunks on all cores.
//!
//! The calling thread reads: line-based files (N-Triples, N-Quads, plain or gzip) are cut
//! into blocks of about [`BLOCK_BYTES`] at newlines, so one large file is parsed by every
//! worker; other syntaxes are one unit per file (their statements span lines). Workers parse
//! blocks with the fast line parser (`fast_lines`), which falls back to Oxigraph's parsers
//! (`oxrdfio`) for a block it cannot take, and other units with Oxigraph's parsers; each unit
//! is encoded into a [`Chunk`]. At most
//! two units per worker wait in the queue, which bounds the memory of text in flight.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use flate2::read::MultiGzDecoder;
use oxrdfio::{RdfParseError, RdfParser};

use quiver_model::nesting::{check_nesting, GuardedReader, NestedTooDeeply};

use crate::chunk::Chunk;
use crate::fast_lines;
use crate::source::Format;
use crate::source::Source;
use crate::turtle_split;
use crate::{LoadError, Progress};

/// Target size of one parallel parsing unit of a line-based file.
pub const BLOCK_BYTES: usize = 8 << 20;

/// What one unit of work produced.
pub(crate) struct UnitResult {
    pub source: usize,
    pub sequence: usize,
    pub chunk: Chunk,
    /// More chunks: the pieces of a Turtle file parsed in parallel.
    pub pieces: Vec<Chunk>,
    /// Newlines in the unit (to turn unit-relative lines into file lines).
    pub newlines: u64,
    pub statements: u64,
    pub issues: Vec<Issue>,
    /// Number of malformed statements (issues beyond the first few are only counted).
    pub malformed: u64,
    /// An I/O failure while reading a whole-file unit.
    pub io_error: Option<std::io::Error>,
}

/// A malformed statement, located relative to the start of its unit (0-based).
pub(crate) struct Issue {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

enum UnitData {
    Block(Vec<u8>),
    WholeFile,
}

struct Unit {
    source: usize,
    sequence: usize,
    data: UnitData,
}

/// How many issues each unit keeps in full.
const KEPT_ISSUES: usize = 5;

pub(crate) fn parse_sources(
    sources: &[Source],
    blank_prefixes: &[Option<String>],
    lenient: bool,
    threads: usize,
    progress: &dyn Progress,
) -> Result<Vec<UnitResult>, LoadError> {
    let stop = AtomicBool::new(false);
    let (unit_sender, unit_receiver) = mpsc::sync_channel::<Unit>(threads * 2);
    let unit_receiver = Mutex::new(unit_receiver);
    let (result_sender, result_receiver) = mpsc::channel::<UnitResult>();
    let pool = BlockPool::new(threads.max(1) * 3 + 1);

    let read_result = std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let result_sender = result_sender.clone();
            let (unit_receiver, stop, pool) = (&unit_receiver, &stop, &pool);
            scope.spawn(move || loop {
                let unit = match unit_receiver.lock().unwrap().recv() {
                    Ok(unit) => unit,
                    Err(_) => return,
                };
                let source = &sources[unit.source];
                let prefix = blank_prefixes[unit.source].as_deref();
                let (result, block) = parse_unit(unit, source, prefix, (lenient, threads), stop);
                pool.put(block);
                progress.statements(result.statements);
                if !lenient && (!result.issues.is_empty() || result.io_error.is_some()) {
                    stop.store(true, Ordering::Relaxed);
                }
                if result_sender.send(result).is_err() {
                    return;
                }
            });
        }
        drop(result_sender);
        let mut sequence = 0;
        let outcome = (|| {
            for (index, source) in sources.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if source.format.is_line_based() {
                    let sender = (&unit_sender, &pool);
                    read_blocks(index, source, &mut sequence, sender, &stop, progress)?;
                } else {
                    progress.bytes(source.bytes);
                    let unit = Unit {
                        source: index,
                        sequence,
                        data: UnitData::WholeFile,
                    };
                    sequence += 1;
                    if unit_sender.send(unit).is_err() {
                        break;
                    }
                }
            }
            Ok(())
        })();
        drop(unit_sender);
        outcome
    });
    read_result?;
    let mut results: Vec<UnitResult> = result_receiver.into_iter().collect();
    results.sort_by_key(|r| r.sequence);
    Ok(results)
}

/// Reads a line-based source in blocks that end at a newline and queues them.
fn read_blocks(
    index: usize,
    source: &Source,
    sequence: &mut usize,
    (sender, pool): (&mpsc::SyncSender<Unit>, &BlockPool),
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> Result<(), LoadError> {
    let mut file = File::open(&source.path).map_err(|e| LoadError::io(&source.path, e))?;
    let length = match source.range {
        Some(range) => {
            let (start, end) =
                line_bounds(&mut file, range).map_err(|e| LoadError::io(&source.path, e))?;
            file.seek(SeekFrom::Start(start))
                .map_err(|e| LoadError::io(&source.path, e))?;
            end - start
        }
        None => u64::MAX,
    };
    let counting = CountingReader {
        inner: file.take(length),
        progress,
    };
    let mut reader: Box<dyn Read> = if source.gzip {
        Box::new(MultiGzDecoder::new(BufReader::with_capacity(
            1 << 20,
            counting,
        )))
    } else {
        Box::new(counting)
    };
    let mut carry = Vec::new();
    loop {
        let mut block = pool.take();
        block.extend_from_slice(&carry);
        carry.clear();
        // Read into the buffer's spare capacity: a recycled buffer is neither zeroed nor
        // faulted in again.
        let read = (&mut reader)
            .take(BLOCK_BYTES as u64)
            .read_to_end(&mut block)
            .map_err(|e| LoadError::io(&source.path, e))?;
        let at_end = read < BLOCK_BYTES;
        if !at_end {
            // Keep the last partial line for the next block (a block of one huge line grows).
            match memchr::memrchr(b'\n', &block) {
                Some(newline) => {
                    carry.extend_from_slice(&block[newline + 1..]);
                    block.truncate(newline + 1);
                }
                None => {
                    carry = block;
                    continue;
                }
            }
        }
        if !block.is_empty() {
            let unit = Unit {
                source: index,
                sequence: *sequence,
                data: UnitData::Block(block),
            };
            *sequence += 1;
            if sender.send(unit).is_err() {
                return Ok(());
            }
        }
        if at_end || stop.load(Ordering::Relaxed) {
            return Ok(());
        }
    }
}

fn parse_unit(
    unit: Unit,
    source: &Source,
    blank_prefix: Option<&str>,
    (lenient, threads): (bool, usize),
    stop: &AtomicBool,
) -> (UnitResult, Option<Vec<u8>>) {
    let mut block = None;
    let mut result = UnitResult {
        source: unit.source,
        sequence: unit.sequence,
        chunk: Chunk::new(),
        pieces: Vec::new(),
        newlines: 0,
        statements: 0,
        issues: Vec::new(),
        malformed: 0,
        io_error: None,
    };
    let parser = RdfParser::from_format(source.format.rdf_format());
    match unit.data {
        UnitData::Block(bytes) if check_nesting(&bytes).is_err() => {
            // Triple terms nested too deeply: no parser sees the block whole; line by
            // line, the good lines are kept (lenient) and the bad one is named.
            result.newlines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
            reparse_lines(&bytes, source, &mut result, blank_prefix);
            block = Some(bytes);
        }
        UnitData::Block(bytes) => {
            let fast = if stop.load(Ordering::Relaxed) {
                None
            } else {
                fast_lines::parse_block(&bytes, source.format, blank_prefix, &mut result.chunk)
            };
            if let Some(parsed) = &fast {
                result.statements = parsed.statements;
                result.newlines = parsed.newlines;
            } else {
                // A block not parsed (the load stopped) still counts its lines for the
                // positions of later errors.
                result.newlines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                result.chunk = Chunk::new();
            }
            if fast.is_none() && !stop.load(Ordering::Relaxed) {
                // The fast path met a line oxttl rejects (or text that is not UTF-8):
                // oxttl parses the block, giving its errors and recovery.
                let quads = parser
                    .for_slice(&bytes)
                    .map(|q| q.map_err(RdfParseError::from));
                consume(quads, &mut result, blank_prefix, lenient);
                if lenient && result.malformed > 0 {
                    reparse_lines(&bytes, source, &mut result, blank_prefix);
                }
            }
            block = Some(bytes);
        }
        UnitData::WholeFile
            if source.format == Format::Turtle
                && turtle_split::in_pieces(source.bytes, source.gzip) =>
        {
            match read_whole(source) {
                Ok(bytes) => match check_nesting(&bytes) {
                    Err(e) => too_deep(&mut result, e),
                    Ok(()) => match turtle_split::parse(&bytes, threads, blank_prefix) {
                        Some(pieces) => {
                            for (chunk, statements) in pieces {
                                result.statements += statements;
                                result.pieces.push(chunk);
                            }
                        }
                        // Errors and late declarations: the sequential parser decides.
                        None => consume(
                            parser
                                .for_slice(&bytes)
                                .map(|q| q.map_err(RdfParseError::from)),
                            &mut result,
                            blank_prefix,
                            lenient,
                        ),
                    },
                },
                Err(e) => result.io_error = Some(e),
            }
        }
        UnitData::WholeFile => match File::open(&source.path) {
            Ok(file) => {
                let reader: Box<dyn Read> = if source.gzip {
                    Box::new(MultiGzDecoder::new(BufReader::new(file)))
                } else {
                    Box::new(BufReader::with_capacity(1 << 20, file))
                };
                let reader: Box<dyn Read> = if source.format.is_line_based() {
                    Box::new(GuardedReader::for_lines(reader))
                } else if source.format.nests_triple_terms() {
                    Box::new(GuardedReader::new(reader))
                } else {
                    reader
                };
                consume(
                    parser.for_reader(reader),
                    &mut result,
                    blank_prefix,
                    lenient,
                );
            }
            Err(e) => result.io_error = Some(e),
        },
    }
    result.chunk.seal();
    (result, block)
}

/// The whole content of a file (decompressed).
fn read_whole(source: &Source) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(&source.path)?;
    let mut bytes = Vec::new();
    if source.gzip {
        MultiGzDecoder::new(BufReader::new(file)).read_to_end(&mut bytes)?;
    } else {
        file.read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Buffers of blocks parsed, handed back to the reader.
struct BlockPool {
    buffers: Mutex<Vec<Vec<u8>>>,
    capacity: usize,
}

impl BlockPool {
    fn new(capacity: usize) -> Self {
        Self {
            buffers: Mutex::new(Vec::new()),
            capacity,
        }
    }

    /// An empty buffer (recycled if one is free).
    fn take(&self) -> Vec<u8> {
        let mut buffer = self.buffers.lock().unwrap().pop().unwrap_or_default();
        buffer.clear();
        buffer
    }

    fn put(&self, buffer: Option<Vec<u8>>) {
        let mut buffers = self.buffers.lock().unwrap();
        if let Some(buffer) = buffer.filter(|_| buffers.len() < self.capacity) {
            buffers.push(buffer);
        }
    }
}

/// Parses a block of a line-based file again, one line at a time. After a syntax error the
/// parser resynchronises on the next token, which can lie lines away (an unterminated
/// literal runs to the next quote), so good statements would be lost with the bad one;
/// alone on its line, a bad statement can only take itself down.
fn reparse_lines(
    bytes: &[u8],
    source: &Source,
    result: &mut UnitResult,
    blank_prefix: Option<&str>,
) {
    result.chunk = Chunk::new();
    result.statements = 0;
    result.issues.clear();
    result.malformed = 0;
    for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if let Err(e) = check_nesting(line) {
            let kept = result.issues.len();
            too_deep(result, e);
            for issue in &mut result.issues[kept..] {
                issue.line += number as u64;
            }
            continue;
        }
        let kept = result.issues.len();
        let malformed = result.malformed;
        let quads = RdfParser::from_format(source.format.rdf_format())
            .for_slice(line)
            .map(|q| q.map_err(RdfParseError::from));
        consume(quads, result, blank_prefix, true);
        // One malformed line is one skipped statement, however many errors it raised.
        result.issues.truncate(kept + 1);
        for issue in &mut result.issues[kept..] {
            issue.line += number as u64;
        }
        result.malformed = malformed + u64::from(result.malformed > malformed);
    }
}

/// Records text whose triple terms nest too deeply as one malformed statement (0-based
/// position, as the parser's issues).
fn too_deep(result: &mut UnitResult, error: NestedTooDeeply) {
    result.malformed += 1;
    if result.issues.len() < KEPT_ISSUES {
        result.issues.push(Issue {
            line: error.line - 1,
            column: error.column - 1,
            message: crate::chunk::TooDeep.to_string(),
        });
    }
}

fn consume(
    quads: impl Iterator<Item = Result<oxrdf::Quad, RdfParseError>>,
    result: &mut UnitResult,
    blank_prefix: Option<&str>,
    lenient: bool,
) {
    for quad in quads {
        match quad {
            Ok(quad) => match result.chunk.add_quad(quad, blank_prefix) {
                Ok(()) => result.statements += 1,
                Err(too_deep) => {
                    // Refused like a syntax error (the line is found when the block's
                    // lines are parsed one by one).
                    result.malformed += 1;
                    if result.issues.len() < KEPT_ISSUES {
                        result.issues.push(Issue {
                            line: 0,
                            column: 0,
                            message: too_deep.to_string(),
                        });
                    }
                    if !lenient {
                        return;
                    }
                }
            },
            Err(RdfParseError::Io(e)) => {
                result.io_error = Some(e);
                return;
            }
            Err(RdfParseError::Syntax(error)) => {
                result.malformed += 1;
                if result.issues.len() < KEPT_ISSUES {
                    let location = error.location();
                    let (line, column) = location
                        .as_ref()
                        .map_or((0, 0), |l| (l.start.line, l.start.column));
                    let text = error.to_string();
                    // The parser's text repeats the (unit-relative) location; keep the message.
                    let message = match (location, text.split_once(": ")) {
                        (Some(_), Some((head, message))) if head.starts_with("Parser error") => {
                            message.to_owned()
                        }
                        _ => text,
                    };
                    result.issues.push(Issue {
                        line,
                        column,
                        message,
                    });
                }
                if !lenient {
                    return;
                }
            }
        }
    }
}

/// Reports bytes read from the underlying file (compressed bytes for gzip).
struct CountingReader<'p> {
    inner: std::io::Take<File>,
    progress: &'p dyn Progress,
}

/// The bytes `[start, end)` of the lines that start in `range` (see `Source::range`): from
/// the first line start at or after `range.0` to the end of the line holding byte
/// `range.1 - 1` (or the file's end).
pub(crate) fn line_bounds(
    file: &mut File,
    (start, end): (u64, u64),
) -> std::io::Result<(u64, u64)> {
    let length = file.metadata()?.len();
    let next_line = |file: &mut File, at: u64| -> std::io::Result<u64> {
        // The first line start after byte `at - 1`: `at` itself if a line ends just
        // before it.
        if at == 0 {
            return Ok(0);
        }
        file.seek(SeekFrom::Start(at - 1))?;
        let mut position = at - 1;
        let mut buffer = [0u8; 8192];
        loop {
            let read = file.read(&mut buffer)?;
            if read == 0 {
                return Ok(length);
            }
            if let Some(newline) = memchr::memchr(b'\n', &buffer[..read]) {
                return Ok(position + newline as u64 + 1);
            }
            position += read as u64;
        }
    };
    let first = next_line(file, start.min(length))?;
    let last = next_line(file, end.min(length))?;
    Ok((first, last.max(first)))
}

/// Lines before byte `offset` of the file at `path` (to number a ranged source's lines).
pub(crate) fn lines_before(path: &std::path::Path, offset: u64) -> std::io::Result<u64> {
    let mut reader = File::open(path)?.take(offset);
    let mut buffer = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            return Ok(lines);
        }
        lines += memchr::memchr_iter(b'\n', &buffer[..read]).count() as u64;
    }
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buffer)?;
        self.progress.bytes(n as u64);
        Ok(n)
    }
}
