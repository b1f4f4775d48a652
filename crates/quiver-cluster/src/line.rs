//! A connection of the light queries' hops ([`crate::direct`]): TCP between machines, a
//! Unix socket between two processes of one machine.
//!
//! Why a Unix socket where it can be: a hop's request and answer are each one write that
//! wakes the reader, and over loopback TCP that write also runs the whole TCP/IP receive
//! path for the reader. Measured on this project's 2-core machine, a round trip of 1 KiB
//! between two processes costs 31–36 µs over loopback TCP and 21–23 µs over a Unix socket
//! (each side blocked in its read; `bench/wake-latency.rs`), and a light query that crosses
//! processes takes one. Two processes are taken to share a machine when both listen on a
//! loopback address (`127.0.0.1:PORT`, as a cluster started on one machine does); each then
//! listens on a Unix socket of Linux's abstract namespace named after its TCP address,
//! which nothing else can hold (the TCP port is the process's) and which vanishes with the
//! process. Elsewhere, and for addresses given by name, the hops go over TCP as timely's
//! do.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One connection of the light hops.
#[derive(Debug)]
pub(crate) enum Line {
    Tcp(TcpStream),
    #[cfg(target_os = "linux")]
    Unix(std::os::unix::net::UnixStream),
}

impl Line {
    /// How long a read waits before it fails with `WouldBlock` (`None`: for ever).
    pub(crate) fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        match self {
            Line::Tcp(stream) => stream.set_read_timeout(timeout),
            #[cfg(target_os = "linux")]
            Line::Unix(stream) => stream.set_read_timeout(timeout),
        }
    }

    /// Whether it is a Unix socket (a process of the same machine at its other end).
    pub(crate) fn is_local(&self) -> bool {
        !matches!(self, Line::Tcp(_))
    }
}

impl Read for Line {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Line::Tcp(stream) => stream.read(buffer),
            #[cfg(target_os = "linux")]
            Line::Unix(stream) => stream.read(buffer),
        }
    }
}

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Line::Tcp(stream) => stream.write(bytes),
            #[cfg(target_os = "linux")]
            Line::Unix(stream) => stream.write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Line::Tcp(stream) => stream.flush(),
            #[cfg(target_os = "linux")]
            Line::Unix(stream) => stream.flush(),
        }
    }
}

/// Whether the processes listening at `mine` and `theirs` share a machine, so that their
/// hops go over a Unix socket: both loopback addresses, on Linux.
pub(crate) fn same_machine(mine: &str, theirs: &str) -> bool {
    let loopback = |address: &str| {
        address
            .parse::<SocketAddr>()
            .is_ok_and(|address| address.ip().is_loopback())
    };
    cfg!(target_os = "linux") && loopback(mine) && loopback(theirs)
}

/// The abstract Unix socket name of the process listening at TCP `address`.
#[cfg(target_os = "linux")]
fn name(address: &str) -> std::io::Result<std::os::unix::net::SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    std::os::unix::net::SocketAddr::from_abstract_name(format!("quiver-direct/{address}"))
}

/// Listens for the hops of the processes of this machine, this process listening at TCP
/// `address`.
#[cfg(target_os = "linux")]
pub(crate) fn listen(address: &str) -> std::io::Result<std::os::unix::net::UnixListener> {
    std::os::unix::net::UnixListener::bind_addr(&name(address)?)
}

/// Connects to the process of this machine listening at TCP `address`, waiting up to
/// `patience` for it to listen (it may still be starting).
#[cfg(target_os = "linux")]
pub(crate) fn connect(address: &str, patience: Duration) -> std::io::Result<Line> {
    let started = std::time::Instant::now();
    loop {
        match std::os::unix::net::UnixStream::connect_addr(&name(address)?) {
            Ok(stream) => return Ok(Line::Unix(stream)),
            Err(e) if started.elapsed() >= patience => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_share_a_machine() {
        let linux = cfg!(target_os = "linux");
        assert_eq!(same_machine("127.0.0.1:4000", "127.0.0.1:4001"), linux);
        assert_eq!(same_machine("[::1]:4000", "127.0.0.1:4001"), linux);
        assert!(!same_machine("127.0.0.1:4000", "10.0.0.2:4001"));
        assert!(!same_machine("10.0.0.1:4000", "10.0.0.1:4001"));
        assert!(!same_machine("localhost:4000", "localhost:4001"));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_unix_line_carries_bytes_both_ways() {
        let address = format!("test-{}", std::process::id());
        let address = address.as_str();
        let listener = listen(address).unwrap();
        let mut asking = connect(address, Duration::from_secs(1)).unwrap();
        assert!(asking.is_local());
        let (answering, _) = listener.accept().unwrap();
        let mut answering = Line::Unix(answering);
        asking.write_all(b"ask").unwrap();
        let mut got = [0u8; 3];
        answering.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ask");
        answering.write_all(b"yes").unwrap();
        asking.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"yes");
        // A process gone: no one listens under its name.
        drop(listener);
        assert!(connect(address, Duration::ZERO).is_err());
    }
}
