//! `quiver cluster`: a whole cluster on this machine, for tests and demos. Each process is
//! a real OS process on loopback TCP (timely-dataflow's connections): this one is process
//! 0, which serves HTTP like `quiver serve`, and it starts `quiver serve --cluster HOSTFILE
//! --process I` for the others, with a host file of free loopback ports.
//!
//! The processes end together: when process 0 stops (SIGINT/SIGTERM), the dataflow ends
//! and the others return; should one of them die, queries fail within their timeout.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::serve::ServeArgs;

#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// Processes of the cluster (the store must be cut into processes × --workers
    /// partitions)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub processes: u32,
    #[command(flatten)]
    pub serve: ServeArgs,
}

pub fn run(mut args: ClusterArgs) -> Result<()> {
    if args.serve.cluster.is_some() {
        bail!("quiver cluster writes its own host file: give --processes, not --cluster");
    }
    let processes = args.processes as usize;
    // Free loopback ports: each bound once, then released for a process to take.
    let listeners = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .context("cannot find free loopback ports")?;
    let addresses: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<std::io::Result<_>>()?;
    drop(listeners);
    let hosts = std::env::temp_dir().join(format!("quiver-cluster-{}.hosts", std::process::id()));
    std::fs::write(&hosts, addresses.join("\n") + "\n")
        .with_context(|| format!("cannot write {}", hosts.display()))?;
    let program = std::env::current_exe().context("cannot find the quiver binary")?;
    let mut children: Vec<Child> = Vec::new();
    for process in 1..processes {
        let mut command = Command::new(&program);
        command
            .arg("serve")
            .arg("--location")
            .arg(&args.serve.location)
            .arg("--cluster")
            .arg(&hosts)
            .args(["--process", &process.to_string()])
            .args(["--workers", &args.serve.workers.to_string()]);
        if let Some(threads) = args.serve.threads {
            command.args(["--threads", &threads.to_string()]);
        }
        match command.spawn() {
            Ok(child) => children.push(child),
            Err(error) => {
                stop(&mut children);
                return Err(error).context("cannot start a cluster process");
            }
        }
    }
    args.serve.cluster = Some(hosts.clone());
    args.serve.process = 0;
    let served = crate::serve::run(args.serve);
    // The others return once process 0's dataflow has ended; if serving failed early they
    // may wait for it forever, so they are stopped.
    let deadline = Instant::now() + Duration::from_secs(if served.is_ok() { 10 } else { 0 });
    for child in &mut children {
        while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    stop(&mut children);
    let _ = std::fs::remove_file(&hosts);
    served
}

/// Kills the processes still running.
fn stop(children: &mut [Child]) {
    for child in children {
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}
