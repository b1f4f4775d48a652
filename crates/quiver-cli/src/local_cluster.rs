//! A cluster of processes on this machine: a host file of free loopback ports and
//! `quiver serve --cluster HOSTFILE --process I` started for processes 1…N−1, this process
//! being process 0. `quiver cluster` serves HTTP from it; the benchmarks join it as process
//! 0 and run their queries over it in-process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use quiver_cluster::{ClusterConfig, TimelyPartitions};
use quiver_store::partition::{partition_dir, read_layout, save_partitioned};
use quiver_store::Store;

/// The addresses of a host file: `host:port` per line, process 0 first (blank lines and
/// `#` comments skipped).
pub fn read_hosts(hosts: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(hosts)
        .with_context(|| format!("cannot read the host file {}", hosts.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The host file in `dir` of the local cluster that process `pid` starts.
fn hosts_file(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("quiver-cluster-{pid}.hosts"))
}

/// Removes the host files in `dir` of local clusters whose starting process is gone. A
/// cluster removes its own when it ends ([`Peers`]' drop), but not when its first process
/// was killed outright (SIGKILL), which would leave one behind each time. Only where
/// `/proc` tells which processes run; a file this user may not remove is left.
fn remove_stale_hosts(dir: &Path) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix("quiver-cluster-"))
            .and_then(|name| name.strip_suffix(".hosts"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !proc.join(pid.to_string()).exists() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The listening socket a process of a local cluster was started with (`--listen-fd`),
/// for its [`ClusterConfig`].
pub fn inherited(fd: Option<i32>) -> Result<Option<Arc<std::net::TcpListener>>> {
    let Some(fd) = fd else {
        return Ok(None);
    };
    // SAFETY: `--listen-fd` names the descriptor this process inherited from the one that
    // started it (`Peers::spawn`), which nothing else here owns; it is read once, at
    // start-up.
    let listener = unsafe { quiver_cluster::connect::inherited_listener(fd) }
        .with_context(|| format!("--listen-fd {fd}: not the listening socket of a cluster"))?;
    Ok(Some(listener))
}

/// Processes 1…N−1 of a cluster, started by this one; dropped, they are given a few
/// seconds to return (they do once process 0's dataflow has ended), then stopped.
pub struct Peers {
    children: Vec<Child>,
    hosts: PathBuf,
    pub addresses: Vec<String>,
    /// Process 0's listening socket, bound before the others started.
    pub listener: Option<Arc<std::net::TcpListener>>,
    grace: Duration,
}

impl Peers {
    /// Starts processes 1…`processes`−1 over the partitioned store at `location`, each with
    /// `workers` workers (and `threads`, if given).
    pub fn start(
        location: &Path,
        processes: usize,
        workers: u32,
        threads: Option<u32>,
    ) -> Result<Self> {
        Self::start_with(location, processes, workers, threads, |_| Vec::new())
    }

    /// [`Peers::start`], each process `I` also given the arguments `extra(I)` (its logs',
    /// its HTTP address).
    pub fn start_with(
        location: &Path,
        processes: usize,
        workers: u32,
        threads: Option<u32>,
        extra: impl Fn(usize) -> Vec<String>,
    ) -> Result<Self> {
        Self::spawn(processes, |command, hosts, process| {
            command
                .arg("serve")
                .arg("--location")
                .arg(location)
                .arg("--cluster")
                .arg(hosts)
                .args(["--process", &process.to_string()])
                .args(["--workers", &workers.to_string()]);
            if let Some(threads) = threads {
                command.args(["--threads", &threads.to_string()]);
            }
            command.args(extra(process));
        })
    }

    /// Starts processes 1…`processes`−1 of this binary, each with the arguments `args`
    /// gives it (the host file of loopback ports written, the process number) and
    /// `--listen-fd`: every process's socket is bound here, on a port the system picks,
    /// and handed to its process, so no other program can take a port in between.
    pub fn spawn(processes: usize, args: impl Fn(&mut Command, &Path, usize)) -> Result<Self> {
        let mut ports =
            quiver_cluster::LoopbackPorts::bind(processes).context("cannot bind loopback ports")?;
        let addresses = ports.addresses().to_vec();
        let dir = std::env::temp_dir();
        remove_stale_hosts(&dir);
        let hosts = hosts_file(&dir, std::process::id());
        std::fs::write(&hosts, addresses.join("\n") + "\n")
            .with_context(|| format!("cannot write {}", hosts.display()))?;
        let program = std::env::current_exe().context("cannot find the quiver binary")?;
        let mut peers = Peers {
            children: Vec::new(),
            hosts,
            addresses,
            listener: ports.take(0),
            grace: Duration::ZERO,
        };
        for process in 1..processes {
            let mut command = Command::new(&program);
            args(&mut command, &peers.hosts, process);
            if let Some(fd) = ports.hand_over(process, &mut command) {
                command.args(["--listen-fd", &fd.to_string()]);
            }
            // Out of this process's group: a terminal's Ctrl-C goes to its foreground
            // group, and the processes started here end with process 0's cluster, once it
            // has stopped. In the group, they died at once, and process 0, still
            // shutting down, reported a process lost.
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            let child = command.spawn().context("cannot start a cluster process")?;
            peers.children.push(child);
        }
        // The processes hold their sockets now.
        drop(ports);
        Ok(peers)
    }

    /// Waits for every process to end, at most `limit`; whether each ended successfully
    /// (`None`: still running when the time was up).
    pub fn wait_all(&mut self, limit: Duration) -> Vec<Option<bool>> {
        let deadline = Instant::now() + limit;
        self.children
            .iter_mut()
            .map(|child| loop {
                match child.try_wait() {
                    Ok(Some(status)) => break Some(status.success()),
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    _ => break None,
                }
            })
            .collect()
    }

    /// The host file, for process 0's `serve --cluster`.
    pub fn hosts(&self) -> &Path {
        &self.hosts
    }

    /// How long the processes are waited for when dropped (none by default: a cluster
    /// that failed to start may never end).
    pub fn wait_on_drop(&mut self, grace: Duration) {
        self.grace = grace;
    }
}

impl Drop for Peers {
    fn drop(&mut self) {
        let deadline = Instant::now() + self.grace;
        for child in &mut self.children {
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for child in &mut self.children {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.hosts);
    }
}

/// A cluster this process coordinates: the partitions' executor, the coordinator's store
/// (partition 0, planning with the whole store's statistics) and the other processes. The
/// fields drop in that order: the executor's end ends the dataflow, and the processes.
pub struct LocalCluster {
    pub partitions: Arc<TimelyPartitions>,
    pub coordinator: Store,
    /// The whole store's triples.
    pub triples: u64,
    _peers: Peers,
}

impl LocalCluster {
    /// Starts a cluster of `processes` × `workers` over the partitioned store at `location`.
    pub fn start(location: &Path, processes: usize, workers: usize) -> Result<Self> {
        let mut peers = Peers::start(location, processes, workers as u32, Some(1))?;
        let config = ClusterConfig {
            process: 0,
            addresses: peers.addresses.clone(),
            workers,
            listener: peers.listener.clone(),
        };
        let partitions = TimelyPartitions::cluster(location, config).map_err(|e| anyhow!(e))?;
        let total = (processes * workers) as u32;
        let (mut coordinator, layout) = coordinator(&partitions, location, total)?;
        if let Some(statistics) = &layout.statistics {
            coordinator.use_statistics(statistics);
        }
        peers.wait_on_drop(Duration::from_secs(10));
        Ok(Self {
            partitions: Arc::new(partitions),
            coordinator,
            triples: layout.triples,
            _peers: peers,
        })
    }
}

/// Where the benchmarks keep the store at `location` cut into `count` partitions.
pub fn cache_dir(location: &Path, count: u32) -> PathBuf {
    let name = location
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    std::env::temp_dir()
        .join("quiver-bench-cache")
        .join(format!("{name}-partitions-{count}"))
}

/// The partitioned store of `store` cut into `count` in `dir`, cut now unless a store of
/// that layout is already there.
pub fn partitioned(store: &Store, dir: &Path, count: u32) -> Result<PathBuf> {
    if let Ok(Some(layout)) = read_layout(dir) {
        if layout.partitions == count
            && layout.triples == store.triples()
            && layout.statistics.is_some()
            && partition_dir(dir, 0).exists()
        {
            return Ok(dir.to_owned());
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    eprintln!(
        "cutting the store into {count} partitions in {} …",
        dir.display()
    );
    save_partitioned(store, dir, count, |_, _| {})
        .with_context(|| format!("cannot write the partitioned store in {}", dir.display()))?;
    Ok(dir.to_owned())
}

/// The store where this process plans its queries, and the layout: the first partition
/// its worker serves (a partitioned dictionary learns the other owners' terms there).
pub fn coordinator(
    partitions: &TimelyPartitions,
    location: &Path,
    total: u32,
) -> Result<(
    quiver_store::Store,
    quiver_store::partition::PartitionLayout,
)> {
    let cannot = || format!("cannot open the store at {}", location.display());
    let layout = quiver_store::partition::read_layout(location)
        .with_context(cannot)?
        .ok_or_else(|| anyhow!("{}: not a partitioned store", location.display()))?;
    match partitions.coordinator_store() {
        Some(store) => Ok((store, layout)),
        None => {
            Ok(quiver_store::partition::open_partition(location, 0, total).with_context(cannot)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_files_of_ended_clusters_are_removed_and_running_ones_kept() {
        let dir = std::env::temp_dir().join(format!("quiver-stale-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A process that has ended: its number is free until the system reuses it.
        let mut ended = Command::new("true").spawn().unwrap();
        ended.wait().unwrap();
        let stale = hosts_file(&dir, ended.id());
        let running = hosts_file(&dir, std::process::id());
        let other = dir.join("quiver-cluster-notes.hosts");
        for file in [&stale, &running, &other] {
            std::fs::write(file, "127.0.0.1:1\n").unwrap();
        }
        remove_stale_hosts(&dir);
        let left = [&stale, &running, &other].map(|file| file.exists());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(left, [false, true, true], "stale, running, not a cluster's");
    }
}
