//! Connection threads: each HTTP connection is served, for its whole life, by one of a fixed
//! set of threads, each running a single-threaded tokio runtime (thread per core, as
//! actix-web and Seastar serve). The acceptor hands connections to the threads in turn.
//!
//! Why not `axum::serve` on tokio's multi-threaded runtime, as before: a light query runs on
//! its request's task in a few microseconds, and the work-stealing scheduler's hand-offs
//! around it (a worker woken to look for the task another one just made ready, a connection
//! moved between workers) cost more than the query. On 2 cores, under the LUBM mix from two
//! keep-alive clients, the server spent 37–40 µs of user CPU a query on two workers and
//! 29 µs on one. Here a connection's readiness, its request, its query and its response all
//! happen on the thread that owns it, with no wake-up of another thread.
//!
//! What it costs: connections are balanced by count, not by load, and none moves to an idle
//! thread, so a thread running a heavy request on its task delays the other connections it
//! owns. Only light queries run on the task (the rest go to blocking threads, see
//! [`crate::execute`]), so the delay is bounded by a light query's cost.
//!
//! Shutdown follows `axum::serve`'s: the acceptor stops, each connection finishes its
//! request in flight and closes ([`ConnectionThreads::begin_shutdown`]), and
//! [`ConnectionThreads::closed`] resolves once every connection has; [`ConnectionThreads::stop`]
//! then ends the threads, dropping any connection still open.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::response::Response;
use axum::routing::future::RouteFuture;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};

use crate::spin_read::{Ending, LaneConnections, ResponseEnded, SpinRead, SPIN};

/// A connection accepted and handed to a thread: its socket and its peer's address.
type Accepted = (std::net::TcpStream, SocketAddr);

/// How long a thread's runtime waits, once stopped, for the blocking tasks its requests
/// started (a cancelled query notices within a few thousand rows).
const STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// The threads serving the server's connections.
pub struct ConnectionThreads {
    lanes: Vec<Lane>,
    next: usize,
    /// `true` asks every connection to finish its request in flight and close.
    shutdown: watch::Sender<bool>,
    /// Closed once every connection and every lane's receiving loop has ended.
    open: watch::Sender<()>,
}

/// One thread: where connections are handed to it, and how it is stopped.
struct Lane {
    connections: Option<mpsc::UnboundedSender<Accepted>>,
    /// Dropped to stop the thread.
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ConnectionThreads {
    /// Starts `threads` threads (at least one) serving `router`'s routes; each thread's
    /// runtime may run up to `blocking` blocking tasks at once.
    pub fn start(threads: usize, blocking: usize, router: Router) -> io::Result<Self> {
        let (shutdown, _) = watch::channel(false);
        let (open, open_receiver) = watch::channel(());
        let mut lanes = Vec::new();
        for index in 0..threads.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .max_blocking_threads(blocking.max(1))
                .thread_name("quiver-http-blocking")
                .build()?;
            let (connections, receiver) = mpsc::unbounded_channel();
            let (stop, stopped) = oneshot::channel();
            let context = LaneContext {
                router: router.clone(),
                shutdown: shutdown.subscribe(),
                open: open_receiver.clone(),
                connections: LaneConnections::default(),
            };
            let thread = std::thread::Builder::new()
                .name(format!("quiver-http-{index}"))
                .spawn(move || {
                    runtime.block_on(context.run(receiver, stopped));
                    runtime.shutdown_timeout(STOP_TIMEOUT);
                })?;
            lanes.push(Lane {
                connections: Some(connections),
                stop: Some(stop),
                thread: Some(thread),
            });
        }
        Ok(Self {
            lanes,
            next: 0,
            shutdown,
            open,
        })
    }

    /// Accepts connections on `listener` and hands them to the threads in turn, until the
    /// future is dropped. A refused or reset connection is skipped; any other accept error
    /// (out of file descriptors) is logged and accepting pauses for a second, as
    /// `axum::serve` does.
    pub async fn accept(&mut self, listener: &TcpListener) {
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => self.hand(stream, peer),
                Err(error) if is_connection_error(&error) => {}
                Err(error) => {
                    tracing::error!("accept error: {error}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    fn hand(&mut self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        // Responses go out as a head and body chunks: without TCP_NODELAY, Nagle's algorithm
        // holds the small writes back for the client's delayed ACK (~40 ms per request).
        let _ = stream.set_nodelay(true);
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::debug!("connection from {peer} dropped: {error}");
                return;
            }
        };
        let lane = &self.lanes[self.next];
        self.next = (self.next + 1) % self.lanes.len();
        if let Some(connections) = &lane.connections {
            if connections.send((stream, peer)).is_err() {
                tracing::error!(
                    "an HTTP connection thread has stopped; connection from {peer} dropped"
                );
            }
        }
    }

    /// Stops handing out connections and asks every open connection to finish the request
    /// it is serving, if any, and close.
    pub fn begin_shutdown(&mut self) {
        for lane in &mut self.lanes {
            lane.connections = None;
        }
        let _ = self.shutdown.send(true);
    }

    /// Resolves once every connection has closed, after [`Self::begin_shutdown`].
    pub async fn closed(&self) {
        self.open.closed().await;
    }

    /// Ends the threads, dropping the connections still open, and waits for them.
    pub async fn stop(mut self) {
        let threads: Vec<_> = self
            .lanes
            .iter_mut()
            .filter_map(|lane| {
                lane.stop = None;
                lane.thread.take()
            })
            .collect();
        let _ = tokio::task::spawn_blocking(move || {
            for thread in threads {
                let _ = thread.join();
            }
        })
        .await;
    }
}

/// What a thread serves its connections with.
struct LaneContext {
    router: Router,
    shutdown: watch::Receiver<bool>,
    /// Cloned into each connection; the thread's own copy is dropped when it is handed no
    /// more connections.
    open: watch::Receiver<()>,
    /// The connections the thread serves now.
    connections: LaneConnections,
}

impl LaneContext {
    /// Serves each connection handed over on a task of its own, until the sender is
    /// dropped; then waits for `stop` while the connections finish.
    async fn run(
        self,
        mut receiver: mpsc::UnboundedReceiver<Accepted>,
        stop: oneshot::Receiver<()>,
    ) {
        let LaneContext {
            router,
            shutdown,
            open,
            connections,
        } = self;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                biased;
                _ = &mut stop => return,
                accepted = receiver.recv() => match accepted {
                    Some((stream, peer)) => {
                        tokio::spawn(serve_connection(
                            stream,
                            peer,
                            router.clone(),
                            (shutdown.clone(), open.clone()),
                            connections.clone(),
                        ));
                    }
                    None => break,
                },
            }
        }
        drop(open);
        let _ = stop.await;
    }
}

/// Serves HTTP/1.1 on one connection until the client closes it or, after shutdown is
/// asked, its request in flight is answered. `_open` is held while it runs, and the
/// connection counts among its thread's `connections`.
async fn serve_connection(
    stream: std::net::TcpStream,
    peer: SocketAddr,
    router: Router,
    (mut shutdown, _open): (watch::Receiver<bool>, watch::Receiver<()>),
    connections: LaneConnections,
) {
    let _counted = connections.open();
    let stream = match tokio::net::TcpStream::from_std(stream) {
        Ok(stream) => stream,
        Err(error) => {
            tracing::debug!("connection from {peer} dropped: {error}");
            return;
        }
    };
    let ended = ResponseEnded::default();
    let service = PeerService {
        router,
        peer,
        ended: ended.clone(),
    };
    let stream = SpinRead::new(stream, SPIN, ended, connections);
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::trace!("connection from {peer}: {error}");
            }
            return;
        }
        _ = shutdown.wait_for(|asked| *asked) => {}
    }
    connection.as_mut().graceful_shutdown();
    if let Err(error) = connection.await {
        tracing::trace!("connection from {peer}: {error}");
    }
}

/// The router, for one connection's requests: each request carries its peer's address
/// (the [`ConnectInfo`] extractor's, as `into_make_service_with_connect_info` sets it),
/// and each response's body tells the connection's socket when it ended
/// ([`crate::spin_read`]).
#[derive(Clone)]
struct PeerService {
    router: Router,
    peer: SocketAddr,
    ended: ResponseEnded,
}

impl hyper::service::Service<Request<Incoming>> for PeerService {
    type Response = Response<Ending>;
    type Error = Infallible;
    type Future = Responding;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.ended.begin();
        Responding {
            // The router is an `Arc` inside; `Service::call` wants it mutable.
            route: tower_service::Service::call(&mut self.router.clone(), request),
            ended: Some(self.ended.clone()),
        }
    }
}

/// A request's route, whose response's body marks the response ended once it is done.
struct Responding {
    route: RouteFuture<Infallible>,
    ended: Option<ResponseEnded>,
}

impl std::future::Future for Responding {
    type Output = Result<Response<Ending>, Infallible>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let Ok(response) = std::task::ready!(std::pin::Pin::new(&mut self.route).poll(cx));
        let ended = self.ended.take().unwrap_or_default();
        std::task::Poll::Ready(Ok(response.map(|body| Ending::new(body, ended))))
    }
}

/// A connection refused or reset before it was accepted: nothing to log.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use std::io::{Read, Write};
    use std::sync::Arc;

    /// Asks `path` on `stream` (HTTP/1.1, kept alive) and returns the response's body.
    fn ask(stream: &mut std::net::TcpStream, path: &str) -> String {
        write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
        let mut response = Vec::new();
        let mut buffer = [0u8; 1024];
        loop {
            let read = stream.read(&mut buffer).unwrap();
            assert!(read > 0, "the connection closed before the response");
            response.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&response);
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length: "))
                    .expect("a content length")
                    .parse()
                    .unwrap();
                if response.len() >= end + 4 + length {
                    return text[end + 4..end + 4 + length].to_string();
                }
            }
        }
    }

    /// Starts connection threads over `router` on a listener of a runtime of the test's;
    /// returns the runtime, the address, and the trigger that shuts the server down.
    fn start(
        threads: usize,
        router: Router,
    ) -> (
        tokio::runtime::Runtime,
        SocketAddr,
        oneshot::Sender<()>,
        oneshot::Receiver<std::time::Instant>,
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let address = listener.local_addr().unwrap();
        let (shut, shutdown) = oneshot::channel::<()>();
        let (closed_tx, closed) = oneshot::channel();
        runtime.spawn(async move {
            let mut connections = ConnectionThreads::start(threads, 2, router).unwrap();
            {
                let accepting = connections.accept(&listener);
                tokio::select! {
                    () = accepting => {}
                    _ = shutdown => {}
                }
            }
            drop(listener);
            connections.begin_shutdown();
            connections.closed().await;
            let _ = closed_tx.send(std::time::Instant::now());
            connections.stop().await;
        });
        (runtime, address, shut, closed)
    }

    /// Each connection stays on the thread it was handed to, the threads take connections
    /// in turn, and each request knows its peer.
    #[test]
    fn connections_stay_on_their_thread_in_turn_and_know_their_peer() {
        let router = Router::new().route(
            "/",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                format!("{peer} {}", std::thread::current().name().unwrap_or(""))
            }),
        );
        let (_runtime, address, _shut, _closed) = start(2, router);
        let mut clients: Vec<_> = (0..4)
            .map(|_| std::net::TcpStream::connect(address).unwrap())
            .collect();
        for round in 0..3 {
            for (index, client) in clients.iter_mut().enumerate() {
                let answer = ask(client, "/");
                let expected =
                    format!("{} quiver-http-{}", client.local_addr().unwrap(), index % 2);
                assert_eq!(answer, expected, "round {round}, connection {index}");
            }
        }
    }

    /// At shutdown a request in flight is answered before its connection closes, an idle
    /// connection is closed, and `closed` resolves only after both.
    #[test]
    fn shutdown_answers_the_request_in_flight_and_closes_idle_connections() {
        let answered = Arc::new(std::sync::Mutex::new(None));
        let seen = answered.clone();
        let router = Router::new()
            .route(
                "/slow",
                get(move || {
                    let seen = seen.clone();
                    async move {
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        *seen.lock().unwrap() = Some(std::time::Instant::now());
                        "done"
                    }
                }),
            )
            .route("/", get(|| async { "idle" }));
        let (_runtime, address, shut, closed) = start(2, router);
        let mut idle = std::net::TcpStream::connect(address).unwrap();
        assert_eq!(ask(&mut idle, "/"), "idle");
        let slow = std::thread::spawn(move || {
            let mut client = std::net::TcpStream::connect(address).unwrap();
            ask(&mut client, "/slow")
        });
        std::thread::sleep(Duration::from_millis(100));
        shut.send(()).unwrap();
        assert_eq!(slow.join().unwrap(), "done");
        let closed_at = closed.blocking_recv().unwrap();
        let answered_at = answered.lock().unwrap().expect("the slow request ran");
        assert!(closed_at >= answered_at);
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buffer = [0u8; 16];
        assert_eq!(
            idle.read(&mut buffer).unwrap(),
            0,
            "the idle connection closed"
        );
    }
}
