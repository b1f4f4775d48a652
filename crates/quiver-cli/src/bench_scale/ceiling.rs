//! The machine's own ceiling for a scaling run, measured rather than read from its
//! topology: how much two kernels that only compute or only read memory gain from the same
//! thread counts as the queries, and which logical CPUs share a core.
//!
//! A virtual machine may show the two threads of one core as two cores: its sysfs topology
//! then says 16 cores where the host gives it 8 cores of two threads each. A query that
//! gains 1.3–1.5× from 1 to 2 threads and 8–10× from 1 to 16 then looks short of linear
//! where the machine itself is. Two kernels bound what a query can gain:
//!
//! - **ALU**: eight independent multiply chains, bound by the throughput of one core's
//!   multipliers, which a sibling thread shares;
//! - **random reads**: dependent loads over a table far larger than the caches, 16 chains
//!   in flight per thread, as the store's prefetched lookups of neighbour lists;
//! - **fresh pages**: the first write to each page of fresh memory, advised as a bulk
//!   load's buffers are (`quiver_model::fresh_pages`): the kernel's work of giving and
//!   zeroing pages, most of a load's index layout on a machine where it is slow, and
//!   shared between threads where the kernel or the host serialises it.
//!
//! The sibling probe pins two threads to CPUs `i` and `j` and runs the ALU kernel on both
//! at once: the two share a core when each then runs well under its rate alone. The
//! kernels are written here because what they measure is the machine under Quiver's own
//! thread counts, not a library's.

use std::sync::Barrier;
use std::time::Instant;

/// A thread's fixed work in the ALU kernel (about 15 ms on one core).
const ALU_ROUNDS: u64 = 1 << 23;
/// Bytes of the random-read kernel's table (512 MiB: far past any cache).
const TABLE_BYTES: usize = 512 << 20;
/// Chains a random-reading thread follows at once.
const READ_CHAINS: usize = 16;
/// Steps of each chain per thread.
const READ_STEPS: usize = 1 << 18;
/// Bytes of fresh memory each thread writes in the fresh-pages kernel (a byte a page).
const FRESH_BYTES: usize = 16 << 20;
/// Repeats of each measurement: the kernels keep the median, the probe the least (the
/// least disturbed).
const REPEATS: usize = 5;
/// Two CPUs share a core when a pair's slower thread runs at least this many times slower
/// than one thread alone (siblings sharing the multipliers: near 2×; separate cores: 1.0–1.1×).
const SHARED_SLOWDOWN: f64 = 1.4;
/// The probe's work per thread: an eighth of the ALU kernel's (it runs for many pairs).
const PROBE_ROUNDS: u64 = ALU_ROUNDS / 8;
/// CPUs beyond which the probe is not run: its time grows with their square (16 CPUs
/// without siblings ask 120 pairs, about a second; 64 ask 2,016).
const MAX_PROBED_CPUS: usize = 64;

/// One kernel's speedup at each thread count.
#[derive(Debug, Clone)]
pub struct Curve {
    /// `alu`, `random reads` or `fresh pages`.
    pub name: &'static str,
    /// (threads, wall µs of the fixed work, speedup in throughput over the first count).
    pub points: Vec<(usize, f64, f64)>,
}

/// The kernels at `threads` (sorted, the first the baseline).
pub fn curves(threads: &[usize]) -> Vec<Curve> {
    let table = RandomTable::new(TABLE_BYTES / 8);
    vec![
        curve("alu", threads, |_| {
            std::hint::black_box(alu(ALU_ROUNDS));
        }),
        curve("random reads", threads, |seed| {
            std::hint::black_box(table.follow(seed));
        }),
        curve("fresh pages", threads, |_| {
            std::hint::black_box(quiver_model::fresh_pages::touch_fresh(FRESH_BYTES));
        }),
    ]
}

/// `work` on `count` threads at once, at each count: throughput relative to the first.
fn curve(name: &'static str, threads: &[usize], work: impl Fn(u64) + Sync) -> Curve {
    let mut points: Vec<(usize, f64, f64)> = Vec::new();
    for &count in threads {
        let mut walls: Vec<f64> = (0..REPEATS)
            .map(|_| {
                let started = Instant::now();
                std::thread::scope(|scope| {
                    for t in 0..count {
                        let work = &work;
                        scope.spawn(move || work(t as u64 + 1));
                    }
                });
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        walls.sort_by(f64::total_cmp);
        let wall = walls[REPEATS / 2];
        // Each thread does the same work, so throughput is count ÷ wall.
        let speedup = match points.first() {
            Some(&(first_count, first_wall, _)) => {
                (count as f64 / wall) / (first_count as f64 / first_wall)
            }
            None => 1.0,
        };
        points.push((count, wall, speedup));
    }
    Curve { name, points }
}

/// Eight independent multiply chains of `rounds` steps.
fn alu(rounds: u64) -> u64 {
    let mut lanes = [1u64, 2, 3, 4, 5, 6, 7, 8];
    for _ in 0..rounds {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = lane
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(i as u64 + 1);
        }
        lanes = std::hint::black_box(lanes);
    }
    lanes.iter().fold(0, |a, b| a ^ b)
}

/// A table of random indexes into itself: following `i = table[i]` reads memory at
/// random, each read waiting for the one before it in its chain.
struct RandomTable(Vec<u64>);

impl RandomTable {
    fn new(len: usize) -> Self {
        let mut table = vec![0u64; len];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = len.div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for (n, part) in table.chunks_mut(chunk).enumerate() {
                scope.spawn(move || {
                    let mut state = 0x2545_F491_4F6C_DD1D ^ (n as u64 + 1);
                    for slot in part {
                        state = splitmix(state);
                        *slot = state % len as u64;
                    }
                });
            }
        });
        Self(table)
    }

    /// [`READ_CHAINS`] chains of [`READ_STEPS`] reads from places chosen by `seed`.
    fn follow(&self, seed: u64) -> u64 {
        let len = self.0.len() as u64;
        let mut at = [0u64; READ_CHAINS];
        let mut state = seed;
        for place in &mut at {
            state = splitmix(state);
            *place = state % len;
        }
        for _ in 0..READ_STEPS {
            for place in &mut at {
                *place = self.0[*place as usize];
            }
        }
        at.iter().fold(0, |a, b| a ^ b)
    }
}

fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The CPUs of `cpus` grouped by the core they share, measured by pairs; `None` when
/// threads cannot be pinned here or there are too many CPUs to probe.
pub fn shared_cores(cpus: &[usize]) -> Option<Vec<Vec<usize>>> {
    if cpus.len() > MAX_PROBED_CPUS || !cpus.iter().all(|&cpu| pinnable(cpu)) {
        return None;
    }
    let mut alone = std::collections::HashMap::new();
    let mut failed = false;
    let groups = group_by_core(cpus, |i, j| {
        let base = *alone.entry(i).or_insert_with(|| alone_micros(i));
        match (base, pair_micros(i, j)) {
            (Some(base), Some(pair)) => pair / base,
            _ => {
                failed = true;
                1.0
            }
        }
    });
    (!failed).then_some(groups)
}

/// Groups `cpus` by the core they share: each CPU not yet grouped leads a group, joined by
/// every later CPU not yet grouped whose `slowdown` beside it reaches [`SHARED_SLOWDOWN`].
pub fn group_by_core(
    cpus: &[usize],
    mut slowdown: impl FnMut(usize, usize) -> f64,
) -> Vec<Vec<usize>> {
    let mut left: Vec<usize> = cpus.to_vec();
    let mut groups = Vec::new();
    while !left.is_empty() {
        let leader = left.remove(0);
        let mut group = vec![leader];
        left.retain(|&cpu| {
            let shared = slowdown(leader, cpu) >= SHARED_SLOWDOWN;
            if shared {
                group.push(cpu);
            }
            !shared
        });
        groups.push(group);
    }
    groups
}

/// The least µs, over the repeats, of the probe's work on one thread pinned to `cpu`
/// (the least disturbed, as [`pair_micros`] takes its pairs').
fn alone_micros(cpu: usize) -> Option<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..REPEATS {
        let time = std::thread::scope(|scope| scope.spawn(|| pinned_work(cpu, None)).join());
        best = best.min(time.ok()??);
    }
    Some(best)
}

/// The least, over the repeats, of the slower thread's µs when two threads pinned to `a`
/// and `b` run the probe's work at once.
fn pair_micros(a: usize, b: usize) -> Option<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..REPEATS {
        let start = Barrier::new(2);
        let (ta, tb) = std::thread::scope(|scope| {
            let first = scope.spawn(|| pinned_work(a, Some(&start)));
            let second = scope.spawn(|| pinned_work(b, Some(&start)));
            (first.join(), second.join())
        });
        best = best.min(ta.ok()??.max(tb.ok()??));
    }
    Some(best)
}

/// Pins this thread to `cpu`, waits at `start`, and times the probe's work in µs.
fn pinned_work(cpu: usize, start: Option<&Barrier>) -> Option<f64> {
    let pinned = pin_this_thread(cpu);
    if let Some(start) = start {
        start.wait();
    }
    if !pinned {
        return None;
    }
    let started = Instant::now();
    std::hint::black_box(alu(PROBE_ROUNDS));
    Some(started.elapsed().as_secs_f64() * 1e6)
}

/// Whether `cpu` can be named in an affinity mask.
fn pinnable(cpu: usize) -> bool {
    cfg!(target_os = "linux") && cpu < 1024
}

/// Binds the calling thread to one CPU; whether it could.
#[cfg(target_os = "linux")]
fn pin_this_thread(cpu: usize) -> bool {
    if !pinnable(cpu) {
        return false;
    }
    // SAFETY: `cpu_set_t` is a plain bit array whose zeroed value is the empty set;
    // `CPU_SET` writes the bit of `cpu`, which is below CPU_SETSIZE (1,024, checked
    // above); `sched_setaffinity` reads exactly `size_of::<cpu_set_t>()` bytes of the set
    // and pid 0 names the calling thread, which only this thread's scheduling changes.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_this_thread(_cpu: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_group_by_the_pairs_that_slow_each_other() {
        // Eight CPUs, siblings 2k and 2k+1 (as a virtual machine showing 8 cores may have).
        let siblings = |i: usize, j: usize| if i / 2 == j / 2 { 1.9 } else { 1.05 };
        let cpus: Vec<usize> = (0..8).collect();
        assert_eq!(
            group_by_core(&cpus, siblings),
            [[0, 1], [2, 3], [4, 5], [6, 7]]
        );
        // Siblings far apart (CPU k beside k + 4, as Linux numbers a host's threads).
        let apart = |i: usize, j: usize| if i % 4 == j % 4 { 1.8 } else { 1.0 };
        assert_eq!(
            group_by_core(&cpus, apart),
            [[0, 4], [1, 5], [2, 6], [3, 7]]
        );
        // No sharing: one CPU a core, every pair asked once.
        let mut asked = 0;
        let groups = group_by_core(&cpus, |_, _| {
            asked += 1;
            1.0
        });
        assert_eq!((groups.len(), asked), (8, 28));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_probe_groups_every_cpu_of_this_machine_once() {
        let mut cpus = super::super::cpus::allowed().expect("Linux names the allowed CPUs");
        cpus.truncate(4);
        let groups = shared_cores(&cpus).expect("threads can be pinned on Linux");
        let mut seen: Vec<usize> = groups.concat();
        seen.sort_unstable();
        assert_eq!(seen, cpus);
        // A pinned thread runs on its CPU, or the pairs measure nothing.
        for &cpu in &cpus {
            let ran_on = std::thread::scope(|s| {
                s.spawn(|| {
                    assert!(pin_this_thread(cpu));
                    // SAFETY: `sched_getcpu` only reads the calling thread's CPU.
                    unsafe { libc::sched_getcpu() }
                })
                .join()
                .unwrap()
            });
            assert_eq!(ran_on, cpu as i32);
        }
    }

    #[test]
    fn the_kernels_do_their_work() {
        assert_ne!(alu(1000), alu(1001));
        let table = RandomTable::new(1 << 12);
        assert!(table.0.iter().all(|&i| i < 1 << 12));
        assert_ne!(table.follow(1), table.follow(2));
        assert_eq!(
            quiver_model::fresh_pages::touch_fresh(1 << 20),
            (1 << 20) / 4096
        );
        let points = curve("test", &[1, 2], |seed| {
            std::hint::black_box(alu(1000 + seed));
        })
        .points;
        assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 2]);
        assert!(points
            .iter()
            .all(|p| p.1 > 0.0 && p.2.is_finite() && p.2 > 0.0));
        assert_eq!(points[0].2, 1.0);
    }
}
