//! Shared by the `quiver serve` tests: LUBM-1 stores, the real server as a child process
//! (`quiver serve --bind 127.0.0.1:0`, address read from its stderr), and a minimal HTTP/1.1
//! client over `std::net::TcpStream` (no dependency; it can also stall, or hang up).

#![allow(dead_code)] // Each test binary uses part of it.

pub mod writes;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

pub fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

/// Runs `quiver ARGS… --location LOCATION`; no run may panic.
pub fn run_at(args: &[&str], location: &Path) -> Output {
    let output = quiver()
        .args(args)
        .arg("--location")
        .arg(location)
        .output()
        .expect("quiver runs");
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    output
}

/// [`run_at`], which must succeed.
pub fn ok_at(args: &[&str], location: &Path) -> Output {
    let output = run_at(args, location);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The rows of `quiver query --results-format tsv --query QUERY FLAGS…` on `location`,
/// as TSV lines without the header line.
pub fn tsv_rows(location: &Path, query: &str, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["query", "--results-format", "tsv", "--query", query];
    args.extend_from_slice(flags);
    let output = ok_at(&args, location);
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().is_some(), "no header line in {text:?}");
    lines.map(str::to_owned).collect()
}

/// The LUBM-1 store of `tag`, built once per tag under cargo's scratch directory. Each test
/// file passes tags of its own: the files are modules of one test binary whose tests run
/// side by side, and some serve their store writable and write to it.
pub fn store(tag: &str) -> &'static Path {
    type Slots = BTreeMap<String, &'static OnceLock<PathBuf>>;
    static STORES: Mutex<Slots> = Mutex::new(BTreeMap::new());
    let slot: &'static OnceLock<PathBuf> = STORES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(tag.to_owned())
        .or_insert_with(|| Box::leak(Box::new(OnceLock::new())));
    slot.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-{tag}-lubm1"));
        let _ = std::fs::remove_dir_all(&dir);
        let output = quiver()
            .args(["load", "--lubm", "1", "--location"])
            .arg(&dir)
            .output()
            .expect("quiver load runs");
        assert!(output.status.success(), "load failed: {output:?}");
        dir
    })
}

/// The workspace's `queries/` directory.
pub fn queries_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries")
}

pub fn lubm_query(name: &str) -> String {
    let path = queries_dir().join("lubm-basic").join(format!("{name}.rq"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `quiver query` on `store` in `format`, which must succeed: the reference output.
pub fn cli_query(store: &Path, query: &str, format: &str) -> Vec<u8> {
    let output: Output = quiver()
        .arg("query")
        .arg("--location")
        .arg(store)
        .args(["--query", query, "--results-format", format])
        .output()
        .expect("quiver query runs");
    assert!(output.status.success(), "quiver query: {output:?}");
    output.stdout
}

/// A running `quiver serve`, killed when dropped.
pub struct Server {
    child: Child,
    pub address: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `quiver serve --location STORE --bind 127.0.0.1:0 ARGS` and waits for its
    /// `listening on http://…` line.
    pub fn start(store: &Path, args: &[&str]) -> Server {
        Self::spawn(quiver(), store, args)
    }

    /// `quiver cluster --processes PROCESSES` on the partitioned store `store`, like
    /// [`Server::start`] (its process 0 prints the same `listening on` line).
    pub fn start_cluster(store: &Path, processes: u32, args: &[&str]) -> Server {
        let mut command = quiver();
        command.args(["cluster", "--processes", &processes.to_string()]);
        Self::launch(command, store, args)
    }

    /// [`Server::start_cluster`] in a process group of its own, as a shell runs a command
    /// in the foreground: [`Server::interrupt_group`] then sends SIGINT to the group, as a
    /// terminal's Ctrl-C does.
    pub fn start_cluster_in_group(store: &Path, processes: u32, args: &[&str]) -> Server {
        let mut command = quiver();
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command.args(["cluster", "--processes", &processes.to_string()]);
        Self::launch(command, store, args)
    }

    /// Like [`Server::start`], with environment variables set for the server.
    pub fn start_with_env(store: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = quiver();
        command.envs(env.iter().copied());
        Self::spawn(command, store, args)
    }

    /// Like [`Server::start`], with the process's address space capped at `bytes`
    /// (`ulimit -v`): a server whose memory runs away dies instead of the machine.
    pub fn start_capped(store: &Path, args: &[&str], bytes: u64) -> Server {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", bytes / 1024))
            .arg(env!("CARGO_BIN_EXE_quiver"));
        Self::spawn(command, store, args)
    }

    fn spawn(mut command: Command, store: &Path, args: &[&str]) -> Server {
        command.arg("serve");
        Self::launch(command, store, args)
    }

    fn launch(mut command: Command, store: &Path, args: &[&str]) -> Server {
        command.arg("--location").arg(store);
        Self::launch_with(command, args)
    }

    /// `quiver serve ARGS --bind 127.0.0.1:0`, its store(s) named by ARGS (or a config file).
    pub fn start_without_location(args: &[&str]) -> Server {
        let mut command = quiver();
        command.arg("serve");
        Self::launch_with(command, args)
    }

    fn launch_with(mut command: Command, args: &[&str]) -> Server {
        let mut child = command
            .args(["--bind", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("quiver serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (address_tx, address_rx) = mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(address) = listening_address(&line) {
                    let _ = address_tx.send(address);
                }
                lines.lock().unwrap().push(line);
            }
        });
        let address = match address_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(address) => address,
            Err(_) => {
                let _ = child.kill();
                panic!("no listening line; stderr: {:?}", log.lock().unwrap());
            }
        };
        Server {
            child,
            address,
            log,
        }
    }

    /// The server's peak resident set size in bytes (`VmHWM` of `/proc/PID/status`).
    pub fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line["VmHWM:".len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The processes the server started (a cluster's other processes), from
    /// `/proc/PID/task/PID/children`.
    pub fn children(&self) -> Vec<u32> {
        let pid = self.child.id();
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|child| child.parse().ok())
            .collect()
    }

    /// Everything the server wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Whether the log shows `needle` within a few seconds: a line reaches this process
    /// through a pipe and a reader thread, so a client can hold its reply before the
    /// server's line about it has arrived here.
    pub fn logged(&self, needle: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.log().contains(needle) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        request(&self.address, "GET", path, headers, b"")
    }

    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        request(&self.address, "POST", path, headers, body)
    }

    /// GET /query?query=… with an `Accept` header (none when empty).
    pub fn query(&self, query: &str, accept: &str) -> Reply {
        let path = format!("/query?query={}", encode(query));
        let headers: &[(&str, &str)] = if accept.is_empty() {
            &[]
        } else {
            &[("Accept", accept)]
        };
        self.get(&path, headers)
    }

    /// The `/status` document.
    pub fn status(&self) -> serde_json::Value {
        let reply = self.get("/status", &[]);
        assert_eq!(reply.status, 200, "{}", reply.text());
        serde_json::from_slice(&reply.body).expect("status is JSON")
    }

    /// Polls `/status` until `field` equals `value`, for at most `limit`.
    pub fn wait_for(&self, field: &str, value: u64, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.status()[field].as_u64() == Some(value) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Sends SIGTERM and waits (at most `limit`) for the process to exit.
    pub fn terminate(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.signal(&["-TERM", &self.child.id().to_string()], limit)
    }

    /// Sends SIGINT to the server's process group (started by
    /// [`Server::start_cluster_in_group`]), as a terminal's Ctrl-C does, and waits for the
    /// server to exit, at most `limit`.
    pub fn interrupt_group(&mut self, limit: Duration) -> Option<ExitStatus> {
        let group = format!("-{}", self.child.id());
        self.signal(&["-INT", "--", &group], limit)
    }

    /// Runs `kill ARGS` and waits for the server to exit, at most `limit`.
    fn signal(&mut self, args: &[&str], limit: Duration) -> Option<ExitStatus> {
        let status = Command::new("kill").args(args).status().expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// False when a chunked body ended without its final chunk (an aborted response).
    pub complete: bool,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// Percent-encodes a query-string or form value.
pub fn encode(value: &str) -> String {
    let mut out = String::new();
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Opens a connection and sends one request (`Connection: close`); the response is read
/// by [`read_reply`].
pub fn send(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TcpStream {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let has_length = headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
    });
    if !has_length && (!body.is_empty() || method == "POST") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    // A server may answer (413) and close before reading everything: ignore write errors.
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    stream
}

/// Reads a whole response (until the server closes).
pub fn read_reply(mut stream: TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 1 << 16];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A reset after the response (aborted or lingering close): keep what came.
            Err(_) if !raw.is_empty() => break,
            Err(e) => panic!("reading the response: {e}"),
        }
    }
    parse_reply(&raw)
}

pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    read_reply(send(address, method, path, headers, body))
}

pub fn parse_reply(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let (body, complete) = if chunked {
        dechunk(rest)
    } else {
        (rest.to_vec(), true)
    };
    Reply {
        status,
        headers,
        body,
        complete,
    }
}

/// Decodes a chunked body; `false` when it stops before the final zero-length chunk.
fn dechunk(mut data: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let size_text = String::from_utf8_lossy(&data[..end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
        else {
            return (body, false);
        };
        data = &data[end + 2..];
        if size == 0 {
            return (body, true);
        }
        if data.len() < size + 2 {
            body.extend_from_slice(&data[..size.min(data.len())]);
            return (body, false);
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// The address of a `listening on http://ADDRESS` line, as text or as a JSON log line
/// (`--log-format json`).
pub fn listening_address(line: &str) -> Option<String> {
    if let Some(address) = line.strip_prefix("listening on http://") {
        return Some(address.trim().to_owned());
    }
    let event: serde_json::Value = serde_json::from_str(line).ok()?;
    let message = event["message"].as_str()?;
    Some(
        message
            .strip_prefix("listening on http://")?
            .trim()
            .to_owned(),
    )
}

/// A fresh store of the N-Triples `data` under cargo's scratch directory, for a server
/// that writes (each test its own).
pub fn small_store(tag: &str, data: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-{tag}"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch directory");
    let file = base.join("data.nt");
    std::fs::write(&file, data).expect("data file");
    let dir = base.join("store");
    let output = quiver()
        .args(["load", "--location"])
        .arg(&dir)
        .arg(&file)
        .output()
        .expect("quiver load runs");
    assert!(output.status.success(), "load failed: {output:?}");
    dir
}
