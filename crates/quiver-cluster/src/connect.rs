//! How the processes of a cluster meet: a [`ClusterConfig`] made into timely's allocators.
//!
//! Each process binds its address (or is handed a socket already bound), connects to the
//! processes before it as timely's own start-up does (timely's `start_connections`, which
//! sends this process's number first), accepts the ones after it, and gives the
//! connections to timely's `initialize_networking_from_sockets`; the wire protocol stays
//! timely's. A cluster started on one machine (`quiver cluster`, `quiver load --processes`,
//! the tests) cannot know a free port for each process without a race: a port found free,
//! released, and bound again by the process may be taken in between by any other program.
//! There the launcher binds every process's listening socket itself, on port 0, and hands
//! each process its own ([`ClusterConfig::listener`]).
//!
//! Every connection is made here, so each is tuned ([`keep_alive`]): the operating
//! system's keepalive probes give up a machine that vanished without closing its
//! connections (powered off, cut off) within [`SILENCE`], as a closed connection is at
//! once. Beside timely's, each pair of processes gets one more connection for the
//! heartbeat ([`crate::heartbeat`]), which also finds a process that stopped answering
//! while its kernel still does: a process connects to each one before it a second time,
//! sending its number with [`HEARTBEAT`] set. Each also gets [`crate::direct::LINES`]
//! connections per direction for light queries' hops ([`crate::direct`]): a process
//! connects to each one before it that many times with [`ASKS`] set (it asks on them) and
//! as many with [`SERVES`] set (it answers on them). Once all are made, the processes
//! compare their builds on the heartbeat's connections ([`crate::build_check`]) and refuse
//! to go on with a process of another build.

use std::any::Any;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use timely_communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely_communication::allocator::ProcessBuilder;
use timely_communication::networking::start_connections;
use timely_communication::AllocatorBuilder;

use crate::heartbeat::Heartbeat;
use crate::line::{same_machine, Line};
use crate::ClusterConfig;

/// Timely's allocators for the workers of this process, what must live as long as they
/// do (the network threads' guard), and, between processes, the heartbeat and the light
/// queries' connections.
pub(crate) type Communication = (
    Vec<AllocatorBuilder>,
    Box<dyn Any + Send>,
    Option<(Heartbeat, DirectLines)>,
);

/// The connections of light queries' hops ([`crate::direct`]): those this process asks
/// on, by process (none to itself), and those it answers on.
pub(crate) struct DirectLines {
    pub asks: Vec<Vec<Line>>,
    pub serves: Vec<Line>,
}

/// Set in the number a process sends first on its heartbeat's connections (timely's
/// connections carry the number alone).
const HEARTBEAT: u64 = 1 << 63;
/// Set in the number a process sends first on a connection it asks light queries' hops on.
const ASKS: u64 = 1 << 62;
/// Set in the number a process sends first on a connection it answers them on.
const SERVES: u64 = 1 << 61;

/// The workers of one process exchanging in memory.
pub(crate) fn in_process(workers: usize) -> Result<Communication, String> {
    let (builders, guard) = timely::CommunicationConfig::Process(workers).try_build()?;
    Ok((builders, guard, None))
}

/// The allocators of process `config.process` of a cluster.
pub(crate) fn cluster(config: ClusterConfig) -> Result<Communication, String> {
    let listener = match config.listener.clone() {
        Some(listener) => listener,
        None => {
            let address = config
                .addresses
                .get(config.process)
                .ok_or_else(|| format!("no address for process {}", config.process))?;
            let listener = TcpListener::bind(address)
                .map_err(|e| format!("cannot listen at {address}: {e}"))?;
            Arc::new(listener)
        }
    };
    let (sockets, beats, lines) = connect(&config, &listener)
        .map_err(|e| format!("cannot connect to the other processes: {e}"))?;
    // Before any data moves: a process of another build would misread it.
    crate::build_check::compare(&beats, &config.addresses, crate::build_check::Build::this())?;
    let heartbeat = Heartbeat::start(config.process, beats)
        .map_err(|e| format!("cannot start the heartbeat: {e}"))?;
    let hooks = crate::buffers::hooks();
    let allocators =
        ProcessBuilder::new_typed_vector(config.workers, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) = initialize_networking_from_sockets(
        allocators,
        sockets,
        config.process,
        config.workers,
        hooks,
    )
    .map_err(|e| format!("failed to initialize networking: {e}"))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
        Some((heartbeat, lines)),
    ))
}

/// Timely's connections and the heartbeat's, each one per other process in process order
/// (`None` for this one), and the light queries' connections.
type Connections = (Vec<Option<TcpStream>>, Vec<Option<TcpStream>>, DirectLines);

/// The connections per other process (timely's, the heartbeat's, the light queries'): to
/// the processes before it, from the ones after it. The processes before it listen already
/// (timely's connections to them are made), so the other connections to them never wait.
fn connect(config: &ClusterConfig, listener: &TcpListener) -> std::io::Result<Connections> {
    use crate::direct::LINES;
    let me = config.process;
    let processes = config.addresses.len();
    // The processes of this machine whose hops go over a Unix socket (`crate::line`).
    let local: Vec<bool> = (0..processes)
        .map(|p| p != me && same_machine(&config.addresses[me], &config.addresses[p]))
        .collect();
    // Listening before timely's connections are made: a later process connects once they
    // are.
    #[cfg(target_os = "linux")]
    let unix = match local[me + 1..].iter().any(|&local| local) {
        true => Some(crate::line::listen(&config.addresses[me])?),
        false => None,
    };
    let addresses = Arc::new(config.addresses.clone());
    let mut sockets = start_connections(addresses, me, false)?;
    sockets.push(None);
    let to = |address: &String, flag: u64| -> std::io::Result<TcpStream> {
        let mut stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        stream.write_all(&(me as u64 | flag).to_be_bytes())?;
        Ok(stream)
    };
    let line_to = |process: usize, flag: u64| -> std::io::Result<Line> {
        let address = &config.addresses[process];
        #[cfg(target_os = "linux")]
        if local[process] {
            // It listens before it connects to any process, and it has connected to this
            // one: it listens already, or is about to.
            let mut line = crate::line::connect(address, Duration::from_secs(60))?;
            line.write_all(&(me as u64 | flag).to_be_bytes())?;
            return Ok(line);
        }
        to(address, flag).map(Line::Tcp)
    };
    let mut beats = Vec::with_capacity(processes);
    let mut lines = DirectLines {
        asks: (0..processes).map(|_| Vec::new()).collect(),
        serves: Vec::new(),
    };
    for (process, address) in config.addresses[..me].iter().enumerate() {
        beats.push(Some(to(address, HEARTBEAT)?));
        for _ in 0..LINES {
            lines.asks[process].push(line_to(process, ASKS)?);
            lines.serves.push(line_to(process, SERVES)?);
        }
    }
    beats.push(None);
    let mut later: Vec<Option<TcpStream>> = (me + 1..processes).map(|_| None).collect();
    let mut later_beats: Vec<Option<TcpStream>> = (me + 1..processes).map(|_| None).collect();
    let mut asked_by = vec![0; processes];
    // Whether every light hops' connection of the later processes that go over TCP (or,
    // with `unix`, over a Unix socket) came.
    let lines_in = |lines: &DirectLines, asked_by: &[usize], unix: bool| {
        (me + 1..processes)
            .filter(|&p| local[p] == unix)
            .all(|p| asked_by[p] == LINES && lines.asks[p].len() == LINES)
    };
    listener.set_nonblocking(false)?;
    while later.iter().chain(&later_beats).any(Option::is_none)
        || !lines_in(&lines, &asked_by, false)
    {
        let (mut stream, _) = listener.accept()?;
        stream.set_nodelay(true)?;
        let (process, flags) = introduced(&mut stream, config)?;
        match flags {
            0 | HEARTBEAT => {
                let slots = if flags == 0 {
                    &mut later
                } else {
                    &mut later_beats
                };
                let slot = slots
                    .get_mut(process - me - 1)
                    .filter(|slot| slot.is_none())
                    .ok_or_else(|| unexpected(process, config))?;
                *slot = Some(stream);
            }
            _ if local[process] => return Err(unexpected(process, config)),
            _ => take_line(
                Line::Tcp(stream),
                (process, flags),
                &mut lines,
                &mut asked_by,
            )
            .ok_or_else(|| unexpected(process, config))?,
        }
    }
    #[cfg(target_os = "linux")]
    if let Some(unix) = unix {
        while !lines_in(&lines, &asked_by, true) {
            let (stream, _) = unix.accept()?;
            let mut line = Line::Unix(stream);
            let (process, flags) = introduced(&mut line, config)?;
            if !local[process] {
                return Err(unexpected(process, config));
            }
            take_line(line, (process, flags), &mut lines, &mut asked_by)
                .ok_or_else(|| unexpected(process, config))?;
        }
    }
    sockets.extend(later);
    beats.extend(later_beats);
    for socket in sockets.iter().chain(&beats).flatten() {
        keep_alive(socket)?;
    }
    for line in lines.asks.iter().flatten().chain(&lines.serves) {
        if let Line::Tcp(socket) = line {
            keep_alive(socket)?;
        }
    }
    Ok((sockets, beats, lines))
}

/// The number a later process sent first on a connection it made, and its flags.
fn introduced(stream: &mut impl Read, config: &ClusterConfig) -> std::io::Result<(usize, u64)> {
    let mut number = [0u8; 8];
    stream.read_exact(&mut number)?;
    // Timely sends the number big-endian.
    let number = u64::from_be_bytes(number);
    let flags = number & (HEARTBEAT | ASKS | SERVES);
    let process = (number & !(HEARTBEAT | ASKS | SERVES)) as usize;
    if process <= config.process || process >= config.addresses.len() {
        return Err(unexpected(process, config));
    }
    Ok((process, flags))
}

/// Takes a light hops' connection that `process` made with `flags`, if it was expected.
fn take_line(
    line: Line,
    (process, flags): (usize, u64),
    lines: &mut DirectLines,
    asked_by: &mut [usize],
) -> Option<()> {
    use crate::direct::LINES;
    match flags {
        ASKS if asked_by[process] < LINES => {
            asked_by[process] += 1;
            lines.serves.push(line);
        }
        SERVES if lines.asks[process].len() < LINES => lines.asks[process].push(line),
        _ => return None,
    }
    Some(())
}

fn unexpected(process: usize, config: &ClusterConfig) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "a connection said it is process {process}, not one after {} of {}",
            config.process,
            config.addresses.len()
        ),
    )
}

/// How long a connection to another process may go unanswered (keepalive probes, or data
/// sent and not acknowledged) before it is given up, as a closed one is: timely's threads
/// then fail, and the cluster says it cannot answer. An idle connection is probed after a
/// second of silence, then every second. A process that hangs while its machine still
/// answers (a stopped process) is not found this way: its kernel answers the probes.
pub const SILENCE: Duration = Duration::from_secs(4);

/// Turns on the operating system's heartbeat on a connection between processes: keepalive
/// probes after 1 s of silence, every 1 s, and (on Linux) the connection given up after
/// [`SILENCE`] without an answer.
pub fn keep_alive(stream: &TcpStream) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(stream);
    let probes = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(1))
        .with_interval(Duration::from_secs(1));
    #[cfg(target_os = "linux")]
    let probes = probes.with_retries(3);
    socket.set_tcp_keepalive(&probes)?;
    #[cfg(target_os = "linux")]
    socket.set_tcp_user_timeout(Some(SILENCE))?;
    Ok(())
}

/// Listening sockets for the processes of a cluster started on this machine, bound on
/// free loopback ports when made and held until the processes have them: process 0 takes
/// its own ([`LoopbackPorts::take`]), the others inherit theirs
/// ([`LoopbackPorts::hand_over`]).
#[derive(Debug)]
pub struct LoopbackPorts {
    listeners: Vec<Option<TcpListener>>,
    addresses: Vec<String>,
}

impl LoopbackPorts {
    /// One socket per process, each bound on a port the system picks.
    pub fn bind(processes: usize) -> std::io::Result<Self> {
        let listeners = (0..processes)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<Vec<_>>>()?;
        let addresses = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.to_string()))
            .collect::<std::io::Result<_>>()?;
        Ok(Self {
            listeners: listeners.into_iter().map(Some).collect(),
            addresses,
        })
    }

    /// `host:port` of every process, in process order.
    pub fn addresses(&self) -> &[String] {
        &self.addresses
    }

    /// Process `process`'s socket, for this process's [`ClusterConfig::listener`].
    pub fn take(&mut self, process: usize) -> Option<Arc<TcpListener>> {
        self.listeners.get_mut(process)?.take().map(Arc::new)
    }

    /// Lets the child that `command` starts inherit process `process`'s socket, and
    /// returns its descriptor number there (the same as here), which the child gives to
    /// [`inherited_listener`]. Only that child inherits it: the descriptor stays
    /// close-on-exec everywhere else. The socket is held here until `self` is dropped, so
    /// drop it after the children have started.
    #[cfg(unix)]
    pub fn hand_over(&self, process: usize, command: &mut std::process::Command) -> Option<i32> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = self.listeners.get(process)?.as_ref()?.as_raw_fd();
        // SAFETY: the closure runs in the child between `fork` and `exec`; it calls only
        // `fcntl`, which is async-signal-safe, on a descriptor that is open (held by
        // `self`, which the caller keeps until the child has started), and touches no
        // other state.
        unsafe {
            command.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Some(fd)
    }
}

/// The listening socket inherited as descriptor `fd` ([`LoopbackPorts::hand_over`]),
/// checked to be a listening TCP socket.
///
/// # Safety
/// `fd` was inherited from the process that started this one, which named it (on the
/// command line), and nothing else in this process owns or closes it; call it once.
#[cfg(unix)]
pub unsafe fn inherited_listener(fd: i32) -> std::io::Result<Arc<TcpListener>> {
    use std::os::fd::FromRawFd;
    let mut listening: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `getsockopt` writes at most `size` bytes into `listening`; on a descriptor
    // that is no socket it fails, touching nothing.
    let status = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ACCEPTCONN,
            (&mut listening as *mut libc::c_int).cast(),
            &mut size,
        )
    };
    if status != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if listening == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is a socket that does not listen"),
        ));
    }
    // SAFETY: a listening socket, which the caller owns (the function's contract).
    let listener = unsafe { TcpListener::from_raw_fd(fd) };
    // Not inherited further by this process's own children.
    // SAFETY: `fcntl` on a descriptor this process owns.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Arc::new(listener))
}

/// Reports, in one line given to `report`, the first failure of timely's communication in
/// this process (a connection to another process of the cluster closed), instead of the
/// panics with backtraces that timely's network and worker threads print as they fail one
/// after the other; later ones are silent (on the main thread too, which fails with them
/// when it joins timely's threads). Every other panic, and one of timely's on the main
/// thread before any, goes to the hook installed before. For binaries: the hook is the
/// process's, installed once.
pub fn report_lost_connections(report: impl Fn(&str) + Send + Sync + 'static) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        let reported = std::sync::atomic::AtomicBool::new(false);
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("");
            let timely = info
                .location()
                .is_some_and(|at| at.file().contains("timely_communication"));
            let before = reported.load(std::sync::atomic::Ordering::Relaxed);
            if !timely || (name == "main" && !before) {
                return previous(info);
            }
            if reported.swap(true, std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            let payload = info.payload();
            let detail = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("a network thread failed");
            report(&format!(
                "this process lost its connection to another process of the cluster ({detail}, \
                 on {name}): queries on the cluster fail until it is restarted"
            ));
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn connections_between_processes_carry_the_heartbeat() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let socket = socket2::SockRef::from(&stream);
        assert!(!socket.keepalive().unwrap(), "off by default");
        keep_alive(&stream).unwrap();
        assert!(socket.keepalive().unwrap());
        assert_eq!(socket.tcp_keepalive_time().unwrap(), Duration::from_secs(1));
        assert_eq!(
            socket.tcp_keepalive_interval().unwrap(),
            Duration::from_secs(1)
        );
        assert_eq!(socket.tcp_keepalive_retries().unwrap(), 3);
        assert_eq!(socket.tcp_user_timeout().unwrap(), Some(SILENCE));
    }
}
