//! `quiver cluster`: a whole cluster on this machine, for tests and demos. Each process is
//! a real OS process on loopback TCP (timely-dataflow's connections): this one is process
//! 0, which serves HTTP like `quiver serve`, and it starts `quiver serve --cluster HOSTFILE
//! --process I` for the others, with a host file of free loopback ports.
//!
//! The processes end together: when process 0 stops (SIGINT/SIGTERM), the dataflow ends
//! and the others return; should one of them die, queries fail within their timeout. The
//! others run in process groups of their own, so a terminal's Ctrl-C reaches process 0
//! alone, and they end after it, not before.

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;

use crate::local_cluster::Peers;
use crate::serve_args::ServeArgs;

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
    let location = crate::serve_args::root_location(&args.serve)?.to_path_buf();
    // The other processes log as this one does; with --accept-queries, each serves HTTP
    // too, process I at --bind's port + I (port 0: each its own free port).
    let log = args.serve.log.as_flags();
    let (accept, bind) = (args.serve.accept_queries, args.serve.bind);
    let limits = args.serve.limits.clone();
    if accept && bind.port() != 0 && usize::from(bind.port()) + args.processes as usize > 65_536 {
        bail!(
            "--bind {bind}: no room for the ports of {} processes above it",
            args.processes
        );
    }
    let mut peers = Peers::start_with(
        &location,
        args.processes as usize,
        args.serve.workers,
        args.serve.threads,
        |process| {
            let mut flags = log.clone();
            if accept {
                flags.extend(limits.as_flags());
                let mut address = bind;
                if bind.port() != 0 {
                    address.set_port(bind.port() + process as u16);
                }
                flags.extend([
                    "--accept-queries".into(),
                    "--bind".into(),
                    address.to_string(),
                ]);
            }
            flags
        },
    )?;
    args.serve.cluster = Some(peers.hosts().to_owned());
    args.serve.process = 0;
    args.serve.listener = peers.listener.clone();
    let served = crate::serve::run(args.serve);
    // The others return once process 0's dataflow has ended; if serving failed early they
    // may wait for it forever, so they are stopped at once.
    if served.is_ok() {
        peers.wait_on_drop(Duration::from_secs(10));
    }
    drop(peers);
    served
}
