//! What a round trip between two threads, and between two processes over loopback TCP and
//! over a Unix socket, costs on this machine: the floor under a cluster query that crosses
//! processes (timely's TCP path wakes a send thread and a receive thread on each way,
//! besides the workers; the light hops' own connections are TCP between machines and Unix
//! sockets between processes of one machine).
//!
//! Build and run: `rustc -O bench/wake-latency.rs -o /tmp/wake-latency && /tmp/wake-latency`
//! (it starts its own echo processes).
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Command;
use std::sync::mpsc;
use std::time::Instant;

const ROUNDS: u32 = 20_000;

/// Sends back every `size` bytes it reads.
fn echo(mut stream: impl Read + Write, size: usize) {
    let mut buffer = vec![0u8; size];
    while stream.read_exact(&mut buffer).is_ok() {
        stream.write_all(&buffer).expect("write");
    }
}

/// Microseconds per round trip of `size` bytes each way.
fn round_trips(stream: &mut (impl Read + Write), size: usize) -> f64 {
    let mut buffer = vec![1u8; size];
    let started = Instant::now();
    for _ in 0..ROUNDS {
        stream.write_all(&buffer).expect("write");
        stream.read_exact(&mut buffer).expect("read");
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(ROUNDS)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = |at: usize| args[at].parse::<usize>().expect("size");
    match args.get(1).map(String::as_str) {
        Some("tcp-echo") => {
            let stream = TcpStream::connect(&args[2]).expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            return echo(stream, size(3));
        }
        Some("unix-echo") => {
            return echo(UnixStream::connect(&args[2]).expect("connect"), size(3));
        }
        _ => {}
    }
    // Two threads, each parked until the other's message arrives.
    let (to_echo, echo_in) = mpsc::channel::<u32>();
    let (echo_out, back) = mpsc::channel::<u32>();
    std::thread::spawn(move || {
        while let Ok(value) = echo_in.recv() {
            echo_out.send(value).expect("send");
        }
    });
    let started = Instant::now();
    for round in 0..ROUNDS {
        to_echo.send(round).expect("send");
        back.recv().expect("recv");
    }
    let threads = started.elapsed().as_secs_f64() * 1e6 / f64::from(ROUNDS);
    println!("round trip between two threads (std mpsc, parked): {threads:.1} µs");
    let exe = std::env::current_exe().expect("exe");
    // Two processes, each blocked in its read: 64 bytes, and 1 KiB (a light hop's request).
    for size in [64, 1024] {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let mut child = Command::new(&exe)
            .args(["tcp-echo", &address, &size.to_string()])
            .spawn()
            .expect("spawn");
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("nodelay");
        let tcp = round_trips(&mut stream, size);
        drop(stream);
        let _ = child.wait();
        let path = std::env::temp_dir().join(format!("wake-latency-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("bind");
        let mut child = Command::new(&exe)
            .args(["unix-echo", path.to_str().expect("path"), &size.to_string()])
            .spawn()
            .expect("spawn");
        let (mut stream, _) = listener.accept().expect("accept");
        let unix = round_trips(&mut stream, size);
        drop(stream);
        let _ = child.wait();
        let _ = std::fs::remove_file(&path);
        println!(
            "round trip of {size} B between two processes: {tcp:.1} µs over loopback TCP, \
             {unix:.1} µs over a Unix socket"
        );
    }
}
