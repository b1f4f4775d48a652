//! Each process's heartbeat to the others: a byte every [`BEAT`] on a connection of its
//! own per pair of processes, made beside timely's ([`crate::connect`]), so that a process
//! that stopped answering (stopped by a signal, hung, or cut off with its connections
//! left open) is known within [`SILENT_AFTER`], where a query would wait for its deadline.
//!
//! Why not timely, which carries everything else: timely has no failure detector, and a
//! beat sent by a worker would wait behind whatever step that worker runs (a heavy query's
//! step takes seconds at scale), so a busy process would look dead. The beats come from a
//! thread of their own that does nothing else; they carry no data and no protocol beyond
//! "still here", and a closed connection counts as silence at once. The operating
//! system's keepalive (`connect::keep_alive`) cannot tell: the kernel of a stopped process
//! still answers its probes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a process beats to each other process.
pub const BEAT: Duration = Duration::from_millis(200);

/// How long another process may stay silent before it counts as gone: several beats, so
/// that a thread scheduled late on a loaded machine is not taken for a dead process.
pub const SILENT_AFTER: Duration = Duration::from_millis(1500);

/// How often the heartbeat's thread wakes to beat and to read the others' beats.
const POLL: Duration = Duration::from_millis(50);

/// Stands for "never heard" and "closed" in [`Liveness::heard`].
const CLOSED: u64 = u64::MAX;

/// When this process last heard each other process, shared with whoever asks.
#[derive(Debug)]
pub struct Liveness {
    epoch: Instant,
    /// Milliseconds after `epoch` of the last beat from each process ([`CLOSED`]: its
    /// connection closed); this process's own entry is never read.
    heard: Vec<AtomicU64>,
    me: usize,
}

impl Liveness {
    fn new(processes: usize, me: usize) -> Self {
        Self {
            epoch: Instant::now(),
            heard: (0..processes).map(|_| AtomicU64::new(0)).collect(),
            me,
        }
    }

    fn millis(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    fn hear(&self, process: usize, at: Instant) {
        let millis = self.millis(at);
        // Never revive a closed connection.
        let _ = self.heard[process].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |was| {
            (was != CLOSED).then_some(millis)
        });
    }

    fn close(&self, process: usize) {
        self.heard[process].store(CLOSED, Ordering::Relaxed);
    }

    /// Why another process counts as gone, if one does (silent for longer than
    /// [`SILENT_AFTER`], or its heartbeat's connection closed), with what to do.
    pub fn silent(&self) -> Option<String> {
        self.gone(SILENT_AFTER).map(|gone| match gone.silent_for {
            None => format!("{gone}; restart the cluster"),
            Some(_) => {
                format!("{gone}; queries fail until it answers again, or restart the cluster")
            }
        })
    }

    /// The first other process silent for longer than `limit`, or whose heartbeat's
    /// connection closed.
    pub fn gone(&self, limit: Duration) -> Option<Gone> {
        self.find_gone(limit, true)
    }

    /// The first other process silent for longer than `limit`; one whose connection
    /// closed is not counted (for work whose processes end one after the other, such as
    /// a load: one that dies also breaks timely's connections, which tell).
    pub fn unheard(&self, limit: Duration) -> Option<Gone> {
        self.find_gone(limit, false)
    }

    fn find_gone(&self, limit: Duration, closed: bool) -> Option<Gone> {
        let now = self.millis(Instant::now());
        let limit = limit.as_millis() as u64;
        self.heard
            .iter()
            .enumerate()
            .filter(|(process, _)| *process != self.me)
            .find_map(|(process, heard)| match heard.load(Ordering::Relaxed) {
                CLOSED if !closed => None,
                CLOSED => Some(Gone {
                    process,
                    silent_for: None,
                }),
                at if now.saturating_sub(at) > limit => Some(Gone {
                    process,
                    silent_for: Some(Duration::from_millis(now - at)),
                }),
                _ => None,
            })
    }
}

/// Another process that counts as gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone {
    pub process: usize,
    /// How long it has not been heard from; `None`: its connection closed.
    pub silent_for: Option<Duration>,
}

impl std::fmt::Display for Gone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let process = self.process;
        match self.silent_for {
            None => write!(f, "process {process} of the cluster closed its connection"),
            Some(silent) => write!(
                f,
                "process {process} of the cluster has not been heard from for {:.1} s \
                 (stopped, hung or cut off)",
                silent.as_secs_f64()
            ),
        }
    }
}

/// The heartbeat's thread: beats until dropped.
#[derive(Debug)]
pub struct Heartbeat {
    liveness: Arc<Liveness>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Beats on `peers` (one connection per other process, in process order; `None` for
    /// this process) from a thread of its own.
    pub fn start(me: usize, peers: Vec<Option<TcpStream>>) -> std::io::Result<Self> {
        let liveness = Arc::new(Liveness::new(peers.len(), me));
        for peer in peers.iter().flatten() {
            peer.set_nonblocking(true)?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("quiver-heartbeat".into())
            .spawn({
                let (liveness, stop) = (Arc::clone(&liveness), Arc::clone(&stop));
                move || beat(peers, &liveness, &stop)
            })?;
        Ok(Self {
            liveness,
            stop,
            thread: Some(thread),
        })
    }

    /// What this process knows of the others.
    pub fn liveness(&self) -> Arc<Liveness> {
        Arc::clone(&self.liveness)
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The heartbeat's loop: a byte to every open connection every [`BEAT`], and whatever the
/// others sent read as their beats.
fn beat(mut peers: Vec<Option<TcpStream>>, liveness: &Liveness, stop: &AtomicBool) {
    let mut next_beat = Instant::now();
    let mut buffer = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let beating = now >= next_beat;
        if beating {
            next_beat = now + BEAT;
        }
        for (process, slot) in peers.iter_mut().enumerate() {
            let Some(peer) = slot else { continue };
            let mut open = !beating || written(peer.write(&[1])).is_some();
            loop {
                match peer.read(&mut buffer) {
                    Ok(0) => open = false,
                    Ok(_) => {
                        liveness.hear(process, now);
                        continue;
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => open = false,
                }
                break;
            }
            if !open {
                liveness.close(process);
                *slot = None;
            }
        }
        std::thread::sleep(POLL);
    }
}

/// Whether a beat's write left the connection open (a full buffer does: the other side
/// is slow to read, which its own silence will tell).
fn written(result: std::io::Result<usize>) -> Option<()> {
    match result {
        Ok(_) => Some(()),
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ) =>
        {
            Some(())
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (b, _) = listener.accept().unwrap();
        (a, b)
    }

    /// Two heartbeats hear each other; once one stops beating (dropped, its connection
    /// left open by a clone: a stopped process), the other finds it silent after
    /// `SILENT_AFTER`, not before; a closed connection is known at once.
    #[test]
    fn silence_and_closed_connections_are_told() {
        let (a, b) = pair();
        let kept_open = b.try_clone().unwrap();
        let first = Heartbeat::start(0, vec![None, Some(a)]).unwrap();
        let second = Heartbeat::start(1, vec![Some(b), None]).unwrap();
        std::thread::sleep(BEAT * 3);
        assert_eq!(first.liveness().silent(), None);
        assert_eq!(second.liveness().silent(), None);
        drop(second);
        let stopped = Instant::now();
        let liveness = first.liveness();
        while liveness.silent().is_none() {
            assert!(stopped.elapsed() < SILENT_AFTER * 2, "never found silent");
            std::thread::sleep(POLL);
        }
        assert!(
            stopped.elapsed() >= SILENT_AFTER - BEAT,
            "{:?}",
            stopped.elapsed()
        );
        let reason = liveness.silent().unwrap();
        assert!(
            reason.contains("process 1") && reason.contains("not been heard"),
            "{reason}"
        );
        drop(kept_open);
        let closed = Instant::now();
        while !liveness.silent().unwrap().contains("closed") {
            assert!(
                closed.elapsed() < Duration::from_secs(2),
                "never found closed"
            );
            std::thread::sleep(POLL);
        }
    }
}
