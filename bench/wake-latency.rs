//! What a round trip between two threads, and between two processes over loopback TCP,
//! costs on this machine: the floor under a cluster query that crosses processes (timely's
//! TCP path wakes a send thread and a receive thread on each way, besides the workers).
//!
//! Build and run: `rustc -O bench/wake-latency.rs -o /tmp/wake-latency && /tmp/wake-latency`
//! (it starts its own echo process).
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::mpsc;
use std::time::Instant;

const ROUNDS: u32 = 20_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("echo") {
        let mut stream = TcpStream::connect(&args[2]).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let mut buffer = [0u8; 64];
        while stream.read_exact(&mut buffer).is_ok() {
            stream.write_all(&buffer).expect("write");
        }
        return;
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
    // Two processes over loopback TCP (no delay), each blocked in its read.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .args(["echo", &address])
        .spawn()
        .expect("spawn");
    let (mut stream, _) = listener.accept().expect("accept");
    stream.set_nodelay(true).expect("nodelay");
    let mut buffer = [1u8; 64];
    let started = Instant::now();
    for _ in 0..ROUNDS {
        stream.write_all(&buffer).expect("write");
        stream.read_exact(&mut buffer).expect("read");
    }
    let processes = started.elapsed().as_secs_f64() * 1e6 / f64::from(ROUNDS);
    drop(stream);
    let _ = child.wait();
    println!("round trip between two threads (std mpsc, parked): {threads:.1} µs");
    println!("round trip between two processes (loopback TCP): {processes:.1} µs");
}
