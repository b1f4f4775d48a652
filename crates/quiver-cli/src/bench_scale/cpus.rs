//! What the machine offers for scaling: logical CPUs this process may use, the physical
//! cores behind them, and so whether SMT (hyper-threading) siblings are among them.
//!
//! Linux only (`/proc/self/status`, `/sys/devices/system/cpu`, `/proc/cpuinfo`); elsewhere
//! only the logical count is known. The figures tell which thread counts of a scaling run
//! can still get a core of their own. A virtual machine's topology may hide which CPUs
//! share a core: the cores measured by `ceiling.rs`'s probe, when given, count first.

use std::collections::BTreeSet;

/// Logical CPUs and physical cores available to this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus {
    /// Threads that can run at once (`std::thread::available_parallelism`).
    pub logical: usize,
    /// Distinct physical cores among the CPUs this process may run on, when known.
    pub physical: Option<usize>,
    /// The CPUs grouped by the core they were measured to share, when probed.
    pub measured: Option<Vec<Vec<usize>>>,
}

impl Cpus {
    /// Probes the machine.
    pub fn probe() -> Self {
        let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
        let allowed = allowed();
        let physical = physical_from_sysfs(allowed.as_deref()).or_else(|| {
            std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| physical_from_cpuinfo(&text, allowed.as_deref()))
        });
        Self {
            logical,
            physical,
            measured: None,
        }
    }

    /// The cores this process can use: the fewer of those the topology names and those
    /// measured, when either is known.
    pub fn cores(&self) -> Option<usize> {
        let measured = self.measured.as_ref().map(Vec::len);
        match (self.physical, measured) {
            (Some(p), Some(m)) => Some(p.min(m)),
            (p, m) => p.or(m),
        }
    }

    /// Whether SMT siblings are among the usable CPUs (`None` when unknown).
    pub fn smt(&self) -> Option<bool> {
        self.cores().map(|p| self.logical > p)
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        let mut text = match self.physical {
            Some(p) => format!(
                "{} logical CPU(s) on {p} physical core(s) by the topology",
                self.logical
            ),
            None => format!("{} logical CPU(s), topology unknown", self.logical),
        };
        if let Some(groups) = &self.measured {
            let shared: Vec<String> = groups
                .iter()
                .filter(|g| g.len() > 1)
                .map(|g| g.iter().map(usize::to_string).collect::<Vec<_>>().join("+"))
                .collect();
            text += &format!(", {} core(s) measured", groups.len());
            if !shared.is_empty() {
                text += &format!(" (CPUs sharing one: {})", shared.join(", "));
            }
        }
        if let Some(smt) = self.smt() {
            text += if smt { ", SMT present" } else { ", SMT absent" };
        }
        text
    }

    /// A note for a thread count beyond the cores (or beyond all CPUs).
    pub fn mark(&self, threads: usize) -> &'static str {
        if threads > self.logical {
            "oversubscribed"
        } else if self.cores().is_some_and(|p| threads > p) {
            "SMT"
        } else {
            ""
        }
    }
}

/// The CPUs this process may run on (`Cpus_allowed_list`), when known.
pub fn allowed() -> Option<Vec<usize>> {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(parse_cpu_list)
        })
        .filter(|cpus| !cpus.is_empty())
}

/// Parses a CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(lo), Ok(hi)) = (lo.trim().parse::<usize>(), hi.trim().parse::<usize>()) {
            if hi >= lo && hi - lo < 1 << 16 {
                cpus.extend(lo..=hi);
            }
        }
    }
    cpus
}

fn physical_from_sysfs(allowed: Option<&[usize]>) -> Option<usize> {
    let allowed = allowed?;
    let mut cores = BTreeSet::new();
    for cpu in allowed {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{name}"))
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
        };
        cores.insert((read("physical_package_id")?, read("core_id")?));
    }
    (!cores.is_empty()).then_some(cores.len())
}

/// Distinct (physical id, core id) pairs of `/proc/cpuinfo`, among `allowed` processors.
pub fn physical_from_cpuinfo(text: &str, allowed: Option<&[usize]>) -> Option<usize> {
    let mut cores = BTreeSet::new();
    for block in text.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name)
                    .then(|| value.trim().parse::<usize>().ok())
                    .flatten()
            })
        };
        let Some(processor) = field("processor") else {
            continue;
        };
        if allowed.is_some_and(|a| !a.contains(&processor)) {
            continue;
        }
        // Without topology fields (some virtual machines), every processor is a core.
        let core = field("core id").unwrap_or(processor);
        cores.insert((field("physical id").unwrap_or(0), core));
    }
    (!cores.is_empty()).then_some(cores.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("3-1,x"), Vec::<usize>::new());
    }

    #[test]
    fn cpuinfo_counts_cores_not_siblings() {
        let block = |p: usize, core: usize| {
            format!("processor\t: {p}\nphysical id\t: 0\ncore id\t\t: {core}\nsiblings\t: 4\n")
        };
        // Four logical CPUs, two per core.
        let text = [block(0, 0), block(1, 1), block(2, 0), block(3, 1)].join("\n");
        assert_eq!(physical_from_cpuinfo(&text, None), Some(2));
        assert_eq!(physical_from_cpuinfo(&text, Some(&[0, 2])), Some(1));
        let cpus = Cpus {
            logical: 4,
            physical: Some(2),
            measured: None,
        };
        assert_eq!(cpus.smt(), Some(true));
        assert_eq!(
            [1, 2, 3, 4, 5].map(|t| cpus.mark(t)),
            ["", "", "SMT", "SMT", "oversubscribed"]
        );
    }

    #[test]
    fn measured_cores_count_where_the_topology_hides_siblings() {
        // A virtual machine saying 4 cores, measured as 2 of two CPUs each.
        let cpus = Cpus {
            logical: 4,
            physical: Some(4),
            measured: Some(vec![vec![0, 1], vec![2, 3]]),
        };
        assert_eq!((cpus.cores(), cpus.smt()), (Some(2), Some(true)));
        assert_eq!([2, 3].map(|t| cpus.mark(t)), ["", "SMT"]);
        assert_eq!(
            cpus.describe(),
            "4 logical CPU(s) on 4 physical core(s) by the topology, 2 core(s) measured \
             (CPUs sharing one: 0+1, 2+3), SMT present"
        );
    }
}
