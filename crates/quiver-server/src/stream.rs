//! Streaming a response body from a blocking serializer through a bounded channel.
//!
//! [`ChannelWriter`] is the `io::Write` the serializer writes to: it cuts the output into
//! chunks and sends each into a channel of a few chunks. When the client reads slowly the
//! channel fills and the send blocks the serializer (backpressure: the server holds at most
//! `capacity` chunks per response, whatever the result size); when a send waits longer than
//! the send timeout, or the query's cancel flag is set (client gone, shutdown), the write
//! fails and serialization stops. [`ChannelBody`] is the receiving end as an HTTP body; an
//! error item aborts the response (the connection closes without the final chunk, so the
//! client sees a truncated transfer rather than a well-formed, incomplete document).
//!
//! A response's chunk buffers come back once the socket has taken them ([`Recycled`]),
//! to a spare list the process's responses share, so a body of any size, and the next
//! response, fill the same few buffers: buffers allocated anew for each chunk were fresh
//! pages the kernel gives and zeroes, about a sixth of a served 68 MB result's processor
//! time (`bench/results/2core/serve-chunks.md`). A large result's own chunks are sent as
//! they are ([`ChannelWriter::send_owned`]).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::limits::CancelOnDrop;

/// Bytes per chunk sent to the client. Each chunk sent wakes the socket's task and, when
/// the channel is full, waits for it: on 2 cores, a 68 MB TSV result switched threads
/// 1,150 times in chunks of 64 KiB and 470 times in chunks of 256 KiB.
pub const CHUNK_BYTES: usize = 256 * 1024;
/// Chunks buffered per response between serializer and socket.
pub const CHANNEL_CHUNKS: usize = 4;
/// How often a send blocked on a stalled client checks the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// The sending end of a response body; cloned to abort the response after a failure.
#[derive(Clone)]
pub struct BodySender {
    sender: mpsc::Sender<Bytes>,
    failed: Arc<AtomicBool>,
}

impl BodySender {
    /// Marks the response as failed: once every sender is gone the body ends with an error
    /// instead of a clean end, and the client sees the transfer cut short.
    pub fn fail(&self) {
        self.failed.store(true, Ordering::Release);
    }
}

/// A bounded channel for one response body; dropping the body sets `cancel`.
pub fn channel(cancel: CancelOnDrop) -> (BodySender, ChannelBody) {
    let (sender, receiver) = mpsc::channel(CHANNEL_CHUNKS);
    let failed = Arc::new(AtomicBool::new(false));
    (
        BodySender {
            sender,
            failed: failed.clone(),
        },
        ChannelBody {
            receiver,
            failed,
            _cancel: cancel,
        },
    )
}

/// Chunk buffers the socket has sent, back for a writer to fill again.
type Spare = Arc<Mutex<Vec<Vec<u8>>>>;

/// Spare chunk buffers kept at most: 16 MiB, the buffers of about ten responses streaming
/// at once (a response has at most [`CHANNEL_CHUNKS`] in its channel, one being written
/// to the socket and one being filled).
const SPARE_CHUNKS: usize = 64;

/// The spare list of the process's responses.
fn shared_spare() -> Spare {
    static SHARED: std::sync::OnceLock<Spare> = std::sync::OnceLock::new();
    SHARED.get_or_init(Spare::default).clone()
}

/// A chunk on its way to the socket; dropped once sent, it gives its buffer back to the
/// spare list.
struct Recycled {
    bytes: Vec<u8>,
    spare: Spare,
}

impl AsRef<[u8]> for Recycled {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        // A poisoned lock only loses the buffer (the next chunk allocates one).
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() < SPARE_CHUNKS {
                spare.push(bytes);
            }
        }
    }
}

/// The serializer's side: buffers writes into chunks and sends them, blocking.
pub struct ChannelWriter {
    buffer: Vec<u8>,
    spare: Spare,
    /// Chunk buffers allocated so far (the others were recycled).
    allocated: usize,
    sender: BodySender,
    runtime: Handle,
    send_timeout: Duration,
    cancel: Arc<AtomicBool>,
    /// The query's deadline (its `--timeout`, counted from its start), which covers
    /// sending the results too.
    query_deadline: Option<(std::time::Instant, Duration)>,
    /// Bytes sent so far.
    pub sent: u64,
}

impl ChannelWriter {
    /// Must be used from a blocking thread (it blocks on `runtime`). `runtime`'s timers
    /// must be driven by some thread: a multi-threaded runtime's workers, or the thread
    /// inside a current-thread runtime's `block_on` (a connection thread's,
    /// [`crate::connections`]).
    pub fn new(
        sender: BodySender,
        runtime: Handle,
        send_timeout: Duration,
        cancel: Arc<AtomicBool>,
    ) -> Self {
        Self::with_spare(sender, runtime, send_timeout, cancel, shared_spare())
    }

    /// A writer whose chunk buffers come from and go back to `spare`.
    fn with_spare(
        sender: BodySender,
        runtime: Handle,
        send_timeout: Duration,
        cancel: Arc<AtomicBool>,
        spare: Spare,
    ) -> Self {
        Self {
            buffer: Vec::new(),
            spare,
            allocated: 0,
            sender,
            runtime,
            send_timeout,
            cancel,
            query_deadline: None,
            sent: 0,
        }
    }

    /// Stops sending once `timeout` has passed since `started` (the query's own start).
    pub fn with_query_deadline(mut self, started: std::time::Instant, timeout: Duration) -> Self {
        self.query_deadline = Some((started + timeout, timeout));
        self
    }

    fn past_query_deadline(&self) -> io::Result<()> {
        match self.query_deadline {
            Some((deadline, timeout)) if std::time::Instant::now() >= deadline => {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "query timed out after {:.1} s while sending its results",
                        timeout.as_secs_f64()
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Sends `chunk` whole, after the bytes written so far: a buffer the serializer filled
    /// and hands over rather than copies (see `execute.rs`). Dropped once sent.
    pub fn send_owned(&mut self, chunk: Bytes) -> io::Result<()> {
        self.send_buffer()?;
        self.send(chunk)
    }

    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let next = self.next_buffer();
        let chunk = Bytes::from_owner(Recycled {
            bytes: std::mem::replace(&mut self.buffer, next),
            spare: self.spare.clone(),
        });
        self.send(chunk)
    }

    /// An empty buffer of a chunk's room: a spare one, or a new one.
    fn next_buffer(&mut self) -> Vec<u8> {
        let spare = self.spare.lock().ok().and_then(|mut spare| spare.pop());
        spare.unwrap_or_else(|| {
            self.allocated += 1;
            Vec::with_capacity(CHUNK_BYTES)
        })
    }

    /// Sends `chunk`, waiting for room in the channel.
    fn send(&mut self, chunk: Bytes) -> io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.cancel.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "query cancelled",
            ));
        }
        self.past_query_deadline()?;
        let length = chunk.len() as u64;
        // Wait for room in slices, so that a cancel (shutdown) is seen while the client stalls.
        let deadline = tokio::time::Instant::now() + self.send_timeout;
        let sender = &self.sender.sender;
        let cancel = &self.cancel;
        let sent = self.runtime.block_on(async {
            loop {
                let slice = deadline
                    .saturating_duration_since(tokio::time::Instant::now())
                    .min(CANCEL_POLL);
                match tokio::time::timeout(slice, sender.reserve()).await {
                    Ok(Ok(permit)) => {
                        permit.send(chunk);
                        return Ok(());
                    }
                    Ok(Err(_)) => {
                        return Err(io::Error::new(
                            io::ErrorKind::BrokenPipe,
                            "the client went away",
                        ))
                    }
                    Err(_) if cancel.load(Ordering::Acquire) => {
                        return Err(io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            "query cancelled",
                        ))
                    }
                    Err(_) if self.past_query_deadline().is_err() => {
                        return self.past_query_deadline();
                    }
                    Err(_) if tokio::time::Instant::now() >= deadline => {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "the client read nothing for {:.1} s",
                                self.send_timeout.as_secs_f64()
                            ),
                        ))
                    }
                    Err(_) => {}
                }
            }
        });
        sent.map(|()| self.sent += length)
    }

    /// The body's bytes so far: sent and buffered.
    pub fn written(&self) -> u64 {
        self.sent + self.buffer.len() as u64
    }

    /// Sends what is buffered; the response ends when the writer is dropped.
    pub fn finish(mut self) -> io::Result<u64> {
        self.send_buffer()?;
        Ok(self.sent)
    }

    /// Aborts the response: the client sees the transfer cut short.
    pub fn abort(self) {
        self.sender.fail();
    }
}

impl io::Write for ChannelWriter {
    /// Cuts `data` into chunks of [`CHUNK_BYTES`]: a large write (a result's chunk of
    /// megabytes, written at once by the parallel writer) is sent in pieces the size of
    /// the others, through the same recycled buffers, rather than as a fresh buffer of
    /// its size.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buffer.capacity() < CHUNK_BYTES {
            // The first write: a whole chunk's room at once, not grown by doubling.
            let mut buffer = self.next_buffer();
            buffer.extend_from_slice(&self.buffer);
            self.buffer = buffer;
        }
        let mut rest = data;
        while !rest.is_empty() {
            let room = CHUNK_BYTES.saturating_sub(self.buffer.len()).max(1);
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buffer.extend_from_slice(now);
            rest = later;
            if self.buffer.len() >= CHUNK_BYTES {
                self.send_buffer()?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Serializers flush at the end; chunks go out when full or on `finish`.
        Ok(())
    }
}

/// The HTTP side: the body of a streamed response.
pub struct ChannelBody {
    receiver: mpsc::Receiver<Bytes>,
    failed: Arc<AtomicBool>,
    _cancel: CancelOnDrop,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.receiver.poll_recv(cx) {
            Poll::Ready(Some(chunk)) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            Poll::Ready(None) if self.failed.swap(false, Ordering::AcqRel) => {
                Poll::Ready(Some(Err(io::Error::other("the response was aborted"))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// Multi-threaded: `Handle::block_on` cannot drive the timers of a current-thread
    /// runtime, and no thread here sits in its `block_on` as a connection thread does.
    pub(crate) fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap()
    }

    /// Reads `body` to its end on `runtime`, dropping each chunk once read, as hyper does
    /// once written: the bytes and the largest chunk.
    pub(crate) fn read_body(
        runtime: &tokio::runtime::Runtime,
        mut body: ChannelBody,
    ) -> tokio::task::JoinHandle<(Vec<u8>, usize)> {
        runtime.spawn(async move {
            let mut bytes = Vec::new();
            let mut largest = 0;
            while let Some(frame) =
                std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
            {
                let data = frame.unwrap().into_data().unwrap();
                largest = largest.max(data.len());
                bytes.extend_from_slice(&data);
            }
            (bytes, largest)
        })
    }

    /// Streams `data` (in two writes) through a writer drawing on `spare`, its body read
    /// by [`read_body`]: the body, its largest chunk and the buffers the writer allocated.
    fn stream(data: &[u8], spare: &Spare) -> (Vec<u8>, usize, usize) {
        let runtime = runtime();
        let cancel = Arc::new(AtomicBool::new(false));
        let (sender, body) = channel(CancelOnDrop(cancel.clone()));
        let received = read_body(&runtime, body);
        let mut writer = ChannelWriter::with_spare(
            sender,
            runtime.handle().clone(),
            Duration::from_secs(10),
            cancel,
            spare.clone(),
        );
        writer.write_all(&data[..7]).unwrap();
        writer.write_all(&data[7..]).unwrap();
        let allocated = writer.allocated;
        assert_eq!(writer.finish().unwrap(), data.len() as u64);
        let (bytes, largest) = runtime.block_on(received).unwrap();
        (bytes, largest, allocated)
    }

    /// One write of many chunks' bytes reaches the body whole and in order, in chunks of
    /// at most [`CHUNK_BYTES`], filled in a few buffers that come back once sent rather
    /// than one new buffer per chunk; the next response draws on them and allocates none.
    #[test]
    fn a_large_write_goes_in_chunks_through_recycled_buffers() {
        // A spare list of its own: other tests' responses share the process's.
        let spare = Spare::default();
        let data: Vec<u8> = (0..40 * CHUNK_BYTES + 123)
            .map(|i| (i % 251) as u8)
            .collect();
        let (bytes, largest, allocated) = stream(&data, &spare);
        assert!(bytes == data, "the body differs from what was written");
        assert!(largest <= CHUNK_BYTES, "a chunk of {largest} bytes");
        assert!(
            allocated <= CHANNEL_CHUNKS + 3,
            "{allocated} buffers allocated for 41 chunks"
        );
        let (bytes, _, allocated) = stream(&data[..3 * CHUNK_BYTES], &spare);
        assert!(bytes == data[..3 * CHUNK_BYTES], "the second body differs");
        assert_eq!(allocated, 0, "the second response allocated buffers");
    }

    #[test]
    fn full_channel_times_out_and_closed_channel_fails() {
        let runtime = runtime();
        let cancel = Arc::new(AtomicBool::new(false));
        let (sender, body) = channel(CancelOnDrop(cancel.clone()));
        let mut writer = ChannelWriter::new(
            sender,
            runtime.handle().clone(),
            Duration::from_millis(50),
            cancel.clone(),
        );
        let chunk = vec![b'x'; CHUNK_BYTES];
        for _ in 0..CHANNEL_CHUNKS {
            writer.write_all(&chunk).unwrap();
        }
        // Nobody reads: the next chunk cannot be sent within the send timeout.
        let error = writer.write_all(&chunk).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        // The body going away (client disconnected) cancels the query and fails writes.
        drop(body);
        assert!(cancel.load(Ordering::Acquire));
        assert!(writer.write_all(&chunk).is_err());
    }
}
