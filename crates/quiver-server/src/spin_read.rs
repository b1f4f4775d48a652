//! A connection's socket that, once a response is on the wire, polls briefly for the
//! client's next request before its thread goes to sleep.
//!
//! A keep-alive client sends its next request a few microseconds after reading a
//! response. When the connection's thread has gone to sleep in `epoll_wait` by then, the
//! request pays for waking it (and, on an idle core, for the core leaving its idle state):
//! measured on 2 cores, one client asking the LUBM mix over HTTP got 13.2 K queries/s at a
//! p50 of 72 µs, with 18 µs of the server's 38 µs of CPU a query in the kernel, while each
//! of two clients, which keep the threads awake, got about 29 K at 31 µs; polling, the one
//! client got 20.6 K at 46 µs (`bench/results/2core/http-spin-read.md`). So the first
//! read after a response tries again for up to [`SPIN`], yielding the core between tries
//! (the client may need it), before it waits as usual. Polling instead of sleeping is what
//! latency-bound servers do (Seastar's reactor, the kernel's `SO_BUSY_POLL`); the
//! connection threads' runtimes have no such option.
//!
//! It polls only where it pays:
//! - once a response is whole on the wire: its body ended ([`Ending`]) and a flush since
//!   the last write completed. Hyper also reads while it writes a response (to see a
//!   client that went away), and a poll there would hold up the response's next chunk;
//! - for a client whose requests come soon after the responses: one whose last request
//!   came more than [`close_behind`] after the response before it (a client that thinks
//!   between requests, or is across a network) is not polled for until one comes sooner.
//!   An idle keep-alive connection so costs one poll at most;
//! - on a thread that serves no other connection: a poll holds the thread, and another
//!   connection's request would wait behind it (measured: 4 clients on 2 threads, the
//!   p99 went from 159 µs to 1.9 ms). With more connections than threads, a thread
//!   seldom sleeps anyway.

use std::io::{self, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// How long the first read after a response polls for the next request.
pub(crate) const SPIN: Duration = Duration::from_micros(50);

/// A request that comes this soon after the response before it marks a client worth
/// polling for: twice the spin, as a request that found the thread asleep came late by
/// the wake-up.
fn close_behind(spin: Duration) -> Duration {
    spin * 2
}

/// Whether the response in flight on a connection has ended its body: shared by the
/// connection's socket and the bodies of its responses.
#[derive(Clone, Default)]
pub(crate) struct ResponseEnded(Arc<AtomicBool>);

impl ResponseEnded {
    /// A request came: its response has not ended yet.
    pub(crate) fn begin(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    fn end(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A response's body that marks the response ended once hyper is done with it (it drops
/// the body after taking its last frame, or on an error).
pub(crate) struct Ending {
    body: axum::body::Body,
    ended: ResponseEnded,
}

impl Ending {
    pub(crate) fn new(body: axum::body::Body, ended: ResponseEnded) -> Self {
        Self { body, ended }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.ended.end();
    }
}

impl HttpBody for Ending {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connections a connection thread serves now: a connection's socket polls only
/// while it is the only one.
#[derive(Clone, Default)]
pub(crate) struct LaneConnections(Arc<AtomicUsize>);

impl LaneConnections {
    /// Counts a connection in until the guard is dropped.
    pub(crate) fn open(&self) -> OpenConnection {
        self.0.fetch_add(1, Ordering::Relaxed);
        OpenConnection(self.clone())
    }

    fn alone(&self) -> bool {
        self.0.load(Ordering::Relaxed) == 1
    }
}

/// A connection counted among its thread's ([`LaneConnections::open`]).
pub(crate) struct OpenConnection(LaneConnections);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        (self.0).0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Where a connection stands for polling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Reading a request, or writing a response not yet whole on the wire.
    Busy,
    /// A response's last bytes were written, at this instant; a flush is still due.
    Written(Instant),
    /// The response is on the wire since this instant: the next read may poll.
    OnTheWire(Instant),
    /// Polled for the response on the wire since this instant, in vain: the request, when
    /// it comes, tells how soon it came.
    Polled(Instant),
}

/// A connection's socket whose first read after a response polls for up to `spin`, while
/// its client's requests come that soon.
pub(crate) struct SpinRead {
    stream: TcpStream,
    spin: Duration,
    ended: ResponseEnded,
    lane: LaneConnections,
    stage: Stage,
    /// Whether the client's last request came within [`close_behind`] of the response
    /// before it.
    close_behind: bool,
}

impl SpinRead {
    pub(crate) fn new(
        stream: TcpStream,
        spin: Duration,
        ended: ResponseEnded,
        lane: LaneConnections,
    ) -> Self {
        Self {
            stream,
            spin,
            ended,
            lane,
            stage: Stage::Busy,
            close_behind: true,
        }
    }

    /// Notes that a read brought data `now`: how soon after the last response it came.
    fn came(&mut self, now: Instant) {
        if let Stage::OnTheWire(since) | Stage::Polled(since) = self.stage {
            self.close_behind = now.duration_since(since) <= close_behind(self.spin);
        }
        self.stage = Stage::Busy;
    }

    /// Notes a write: a response's last bytes once its body ended.
    fn wrote(&mut self) {
        self.stage = if self.ended.get() {
            Stage::Written(Instant::now())
        } else {
            Stage::Busy
        };
    }

    /// Reads what the socket holds now, without waiting (its descriptor is non-blocking,
    /// as tokio keeps it), bypassing the runtime's readiness, which only a turn of the
    /// reactor would update.
    fn read_now(&self, buf: &mut ReadBuf<'_>) -> io::Result<usize> {
        let socket = socket2::SockRef::from(&self.stream);
        let read = (&*socket).read(buf.initialize_unfilled())?;
        buf.advance(read);
        Ok(read)
    }
}

impl AsyncRead for SpinRead {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // As usual first: this registers the task to be woken when the socket turns
        // readable, so that a poll that ends with nothing still waits as usual.
        let filled = buf.filled().len();
        let first = Pin::new(&mut this.stream).poll_read(cx, buf);
        if first.is_ready() {
            if buf.filled().len() > filled {
                this.came(Instant::now());
            }
            return first;
        }
        let Stage::OnTheWire(since) = this.stage else {
            return first;
        };
        if !this.close_behind || buf.remaining() == 0 || !this.lane.alone() {
            return first;
        }
        let until = Instant::now() + this.spin;
        loop {
            let now = Instant::now();
            if now >= until {
                this.stage = Stage::Polled(since);
                return Poll::Pending;
            }
            match this.read_now(buf) {
                Ok(_) => {
                    this.came(now);
                    return Poll::Ready(Ok(()));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }
}

impl AsyncWrite for SpinRead {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.wrote();
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.wrote();
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.stream).poll_flush(cx);
        if let (Poll::Ready(Ok(())), Stage::Written(at)) = (&flushed, this.stage) {
            this.stage = Stage::OnTheWire(at);
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::io::Write;

    impl SpinRead {
        /// Whether the next read that finds nothing polls.
        fn polls(&self) -> bool {
            matches!(self.stage, Stage::OnTheWire(_)) && self.close_behind && self.lane.alone()
        }
    }

    async fn write(socket: &mut SpinRead, bytes: &[u8]) {
        let written = poll_fn(|cx| Pin::new(&mut *socket).poll_write(cx, bytes)).await;
        assert_eq!(written.unwrap(), bytes.len());
        poll_fn(|cx| Pin::new(&mut *socket).poll_flush(cx))
            .await
            .unwrap();
    }

    async fn read(socket: &mut SpinRead) -> Vec<u8> {
        let mut bytes = [0u8; 64];
        let mut buf = ReadBuf::new(&mut bytes);
        poll_fn(|cx| Pin::new(&mut *socket).poll_read(cx, &mut buf))
            .await
            .unwrap();
        buf.filled().to_vec()
    }

    /// A socket polls only once a response whose body ended is flushed, only while its
    /// connection is alone on its thread and its client's requests come soon; and a poll
    /// that finds nothing still has the request read when it comes.
    #[test]
    fn a_connection_polls_only_after_a_whole_response_and_misses_no_request() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            server.set_nonblocking(true).unwrap();
            let lane = LaneConnections::default();
            let _open = lane.open();
            let ended = ResponseEnded::default();
            let spin = Duration::from_millis(20);
            let stream = TcpStream::from_std(server).unwrap();
            let mut socket = SpinRead::new(stream, spin, ended.clone(), lane.clone());
            assert!(!socket.polls(), "nothing written yet");
            // A response's chunk, its body still going: no poll.
            ended.begin();
            write(&mut socket, b"chunk").await;
            assert!(!socket.polls(), "mid-response");
            // Its body ended, the last bytes written and flushed: the next read polls.
            ended.end();
            write(&mut socket, b"last").await;
            assert!(socket.polls());
            // Another connection on the thread: no poll while it is open.
            let other = lane.open();
            assert!(!socket.polls());
            drop(other);
            assert!(socket.polls());
            // The client asks again only after the poll gave up: the read still gets it.
            let late = std::thread::spawn(move || {
                std::thread::sleep(spin * 10);
                client.write_all(b"next").unwrap();
                client
            });
            assert_eq!(read(&mut socket).await, b"next");
            let mut client = late.join().unwrap();
            // That request came long after the response: the next response is not
            // polled for...
            ended.begin();
            ended.end();
            write(&mut socket, b"answer").await;
            assert!(!socket.polls(), "a client that came late is not polled for");
            // ...until a request comes soon after one.
            client.write_all(b"soon").unwrap();
            assert_eq!(read(&mut socket).await, b"soon");
            ended.begin();
            ended.end();
            write(&mut socket, b"answer").await;
            assert!(socket.polls());
        });
    }
}
