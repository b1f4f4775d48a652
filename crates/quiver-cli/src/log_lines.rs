//! The log's lines gathered into few writes: a server's access log writes a line per
//! request, and writing each to stderr cost a system call on the request's thread (3.5–5 %
//! of a server's processor time under the LUBM mix over HTTP).
//!
//! Lines wait in one buffer and go out together, in one write of at most [`PIPE_BUF`]
//! bytes: when the next line would not fit, and every [`FLUSH_EVERY`] from a thread of
//! their own, so that no line waits longer than that. A write to a pipe of at most
//! `PIPE_BUF` bytes is whole, so the processes of a cluster sharing one pipe never cut into
//! each other's lines. Written here because `tracing-appender`'s non-blocking writer wakes
//! its thread for every line, which measured slower than writing each line at once (39 K →
//! 32 K queries/s over HTTP on 2 cores).

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Bytes one write carries at most (POSIX's least `PIPE_BUF`).
const PIPE_BUF: usize = 4096;

/// The longest a line waits to be written.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Where the lines go (stderr, or a test's vector).
type Sink = Box<dyn Write + Send>;

struct Shared {
    /// The lines waiting and where they go, under one lock: lines that come while others
    /// are written wait, so they go out in the order they came.
    lines: Mutex<Lines>,
    stopped: Mutex<bool>,
    stop: Condvar,
}

struct Lines {
    pending: Vec<u8>,
    sink: Sink,
}

impl Lines {
    /// Writes `bytes` out in one write (a failed write of a log line is dropped: there is
    /// nowhere left to report it).
    fn write_out(sink: &mut Sink, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let _ = sink.write_all(bytes);
        let _ = sink.flush();
    }

    /// Writes out the lines waiting.
    fn flush(&mut self) {
        Self::write_out(&mut self.sink, &self.pending);
        self.pending.clear();
    }
}

impl Shared {
    fn lock_lines(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn flush(&self) {
        self.lock_lines().flush();
    }
}

/// The writer the log's subscriber takes ([`tracing_subscriber::fmt::MakeWriter`]).
#[derive(Clone)]
pub struct LogLines(Arc<Shared>);

/// Holds the thread that writes waiting lines out; dropped, it writes out the last ones.
#[must_use = "the log's last lines are written when the guard is dropped"]
pub struct LogGuard {
    shared: Arc<Shared>,
    flusher: Option<JoinHandle<()>>,
}

impl LogLines {
    /// Lines to stderr.
    pub fn to_stderr() -> (Self, LogGuard) {
        Self::to(Box::new(std::io::stderr()))
    }

    fn to(sink: Sink) -> (Self, LogGuard) {
        let shared = Arc::new(Shared {
            lines: Mutex::new(Lines {
                pending: Vec::with_capacity(PIPE_BUF),
                sink,
            }),
            stopped: Mutex::new(false),
            stop: Condvar::new(),
        });
        let flusher = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("quiver-log".into())
                .spawn(move || loop {
                    let stopped = shared.stopped.lock().unwrap_or_else(|e| e.into_inner());
                    let (stopped, _) = shared
                        .stop
                        .wait_timeout_while(stopped, FLUSH_EVERY, |stopped| !*stopped)
                        .unwrap_or_else(|e| e.into_inner());
                    let done = *stopped;
                    drop(stopped);
                    shared.flush();
                    if done {
                        return;
                    }
                })
                .ok()
        };
        let guard = LogGuard {
            shared: Arc::clone(&shared),
            flusher,
        };
        (Self(shared), guard)
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        *self
            .shared
            .stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.stop.notify_all();
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
        self.shared.flush();
    }
}

/// One event's writer: the subscriber writes each event's whole line in one call.
pub struct Line<'a>(&'a Shared);

impl Write for Line<'_> {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let mut lines = self.0.lock_lines();
        if lines.pending.len() + line.len() > PIPE_BUF {
            lines.flush();
        }
        if line.len() >= PIPE_BUF {
            Lines::write_out(&mut lines.sink, line);
        } else {
            lines.pending.extend_from_slice(line);
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogLines {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Line(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records each write apart.
    #[derive(Clone, Default)]
    struct Writes(Arc<Mutex<Vec<Vec<u8>>>>);

    impl Write for Writes {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn line(lines: &LogLines, text: &str) {
        use tracing_subscriber::fmt::MakeWriter;
        lines.make_writer().write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn lines_go_out_whole_in_order_in_writes_of_at_most_pipe_buf() {
        let writes = Writes::default();
        let (lines, guard) = LogLines::to(Box::new(writes.clone()));
        let sent: Vec<String> = (0..500)
            .map(|i| format!("line {i} {}\n", "x".repeat(i % 97)))
            .collect();
        for text in &sent {
            line(&lines, text);
        }
        let long = format!("{}\n", "y".repeat(2 * PIPE_BUF));
        line(&lines, &long);
        line(&lines, "last\n");
        drop(guard);
        let writes = writes.0.lock().unwrap().clone();
        let mut expected = sent.concat();
        expected.push_str(&long);
        expected.push_str("last\n");
        assert_eq!(String::from_utf8(writes.concat()).unwrap(), expected);
        // Each write holds whole lines, at most PIPE_BUF bytes but for the long line alone.
        for write in &writes {
            assert!(write.ends_with(b"\n"));
            assert!(write.len() <= PIPE_BUF || write.as_slice() == long.as_bytes());
        }
        assert!(writes.len() < sent.len() / 4, "{} writes", writes.len());
    }

    #[test]
    fn a_waiting_line_goes_out_with_no_more_lines_after_it() {
        let writes = Writes::default();
        let (lines, _guard) = LogLines::to(Box::new(writes.clone()));
        line(&lines, "one\n");
        let started = std::time::Instant::now();
        while writes.0.lock().unwrap().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(5), "never written");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(writes.0.lock().unwrap().concat(), b"one\n");
    }
}
