//! Where a long job's time went, phase by phase: the wall seconds of each phase and the
//! processor seconds the whole process spent meanwhile, so that a phase that keeps few
//! cores busy shows (its cores: processor seconds ÷ wall seconds). A bulk load on 16 cores
//! kept 8.5 of them busy on average; which of its phases did not scale is what this tells.
//! The kernel's part of the processor seconds is kept apart: a phase writing fresh memory
//! spends it in the kernel, which gives the pages and zeroes them on first touch. On a
//! virtual machine that hands freed memory back to its host, that first touch cost a third
//! of a bulk load's processor time on two cores.
//!
//! A caller wraps a job in [`collect`]; the job's code marks its phases with [`time`]
//! wherever they are (the loader, the dictionary merge, the index build), without a
//! recorder passed down through every signature: the phases are kept by the collecting
//! thread. A phase marked on another thread, inside another phase (the outer one counts
//! its time), or with no collection under way costs nothing but running it. Phases of the
//! same name add up (the index of every named graph is built by the same phases).

use std::cell::RefCell;
use std::time::Instant;

/// One phase of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub name: &'static str,
    /// Wall seconds, summed over the phase's runs.
    pub seconds: f64,
    /// Processor seconds (user and system) of the whole process during the phase, when the
    /// system tells them.
    pub cpu: Option<CpuTimes>,
}

impl Phase {
    /// The cores kept busy on average: processor seconds ÷ wall seconds.
    pub fn cores(&self) -> Option<f64> {
        self.cpu
            .filter(|_| self.seconds > 0.0)
            .map(|cpu| cpu.total() / self.seconds)
    }

    /// The kernel's share of the phase's processor seconds, from 0 to 1.
    pub fn kernel_share(&self) -> Option<f64> {
        self.cpu.and_then(CpuTimes::kernel_share)
    }

    /// Adds another run's seconds to this phase's.
    fn add(&mut self, more: &Phase) {
        self.seconds += more.seconds;
        self.cpu = self.cpu.zip(more.cpu).map(|(a, b)| a.plus(b));
    }
}

/// What the collecting thread has recorded, and whether a phase is running on it.
struct Collecting {
    phases: Vec<Phase>,
    inside: bool,
}

thread_local! {
    static COLLECTING: RefCell<Option<Collecting>> = const { RefCell::new(None) };
}

/// Runs `job`, returning what it returned and the phases it marked on this thread, in the
/// order each first ran. A collection inside another keeps its phases to itself.
pub fn collect<T>(job: impl FnOnce() -> T) -> (T, Vec<Phase>) {
    let fresh = Collecting {
        phases: Vec::new(),
        inside: false,
    };
    let outer = COLLECTING.with(|c| c.borrow_mut().replace(fresh));
    // Put back on the way out, a panic included, so that the thread's state stays whole.
    struct Restore(Option<Option<Collecting>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                COLLECTING.with(|c| *c.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let value = job();
    let outer = restore.0.take().expect("taken once");
    let mine = COLLECTING.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (value, mine.map_or_else(Vec::new, |c| c.phases))
}

/// Runs `work` as the phase `name` of the job being collected on this thread, if any.
pub fn time<T>(name: &'static str, work: impl FnOnce() -> T) -> T {
    let starts = COLLECTING.with(|c| match c.borrow_mut().as_mut() {
        Some(collecting) if !collecting.inside => {
            collecting.inside = true;
            true
        }
        _ => false,
    });
    if !starts {
        return work();
    }
    // Back outside the phase on the way out, a panic included.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            COLLECTING.with(|c| {
                if let Some(collecting) = c.borrow_mut().as_mut() {
                    collecting.inside = false;
                }
            });
        }
    }
    let _leave = Leave;
    let before = process_times();
    let started = Instant::now();
    let value = work();
    let seconds = started.elapsed().as_secs_f64();
    let phase = Phase {
        name,
        seconds,
        cpu: before.zip(process_times()).map(|(a, b)| b.since(a)),
    };
    COLLECTING.with(|c| {
        if let Some(collecting) = c.borrow_mut().as_mut() {
            match collecting.phases.iter_mut().find(|p| p.name == name) {
                Some(same) => same.add(&phase),
                None => collecting.phases.push(phase),
            }
        }
    });
    value
}

/// Adds `more`'s phases to `into`'s, by name (a job run in two parts: a load and the
/// ontology loaded on top of it).
pub fn add(into: &mut Vec<Phase>, more: Vec<Phase>) {
    for phase in more {
        match into.iter_mut().find(|p| p.name == phase.name) {
            Some(same) => same.add(&phase),
            None => into.push(phase),
        }
    }
}

/// Processor seconds a process has used, on every thread.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuTimes {
    /// In the process's own code.
    pub user: f64,
    /// In the kernel on its behalf (system calls, page faults).
    pub system: f64,
}

impl CpuTimes {
    /// What was used from `earlier` to `self` (never negative).
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user: (self.user - earlier.user).max(0.0),
            system: (self.system - earlier.system).max(0.0),
        }
    }

    /// Both together.
    fn plus(self, more: CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user + more.user,
            system: self.system + more.system,
        }
    }

    /// User and system seconds.
    pub fn total(self) -> f64 {
        self.user + self.system
    }

    /// The kernel's share of the total, from 0 to 1 (`None` when nothing was used).
    pub fn kernel_share(self) -> Option<f64> {
        let total = self.total();
        (total > 0.0).then(|| (self.system / total).clamp(0.0, 1.0))
    }
}

/// The processor seconds the process has used so far, on every thread, when the system
/// tells them.
pub fn process_times() -> Option<CpuTimes> {
    #[cfg(unix)]
    {
        // SAFETY: `rusage` is plain data whose zeroed value is valid, and `getrusage` only
        // writes the one it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF names this process.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return None;
        }
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Some(CpuTimes {
            user: seconds(usage.ru_utime),
            system: seconds(usage.ru_stime),
        })
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(millis: u64) {
        let until = Instant::now() + std::time::Duration::from_millis(millis);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn phases_are_collected_by_name_in_order_and_nested_ones_count_in_the_outer() {
        let (value, phases) = collect(|| {
            time("first", || spin(5));
            time("second", || {
                // Inside a phase: counted in "second", not apart.
                time("inner", || spin(5));
            });
            time("first", || spin(5));
            7
        });
        assert_eq!(value, 7);
        let names: Vec<&str> = phases.iter().map(|p| p.name).collect();
        assert_eq!(names, ["first", "second"]);
        assert!(phases[0].seconds >= 0.010, "{phases:?}");
        assert!(phases[1].seconds >= 0.005, "{phases:?}");
        // A spinning thread is busy: the process spent processor time meanwhile.
        assert!(phases[0].cpu.unwrap().total() > 0.0, "{phases:?}");
    }

    #[test]
    fn first_touches_of_fresh_memory_count_as_kernel_time() {
        let ((), phases) = collect(|| {
            time("spin", || spin(60));
            time("touch", || {
                // 1 GiB of fresh pages, each written once: the kernel gives and zeroes
                // them (at least 256 faults of huge pages, 262,144 of ordinary ones).
                for _ in 0..16 {
                    let mut pages = vec![0u8; 64 << 20];
                    for page in pages.chunks_mut(4096) {
                        page[0] = 1;
                    }
                    std::hint::black_box(&pages);
                }
            });
        });
        let kernel = |name: &str| {
            let phase = phases.iter().find(|p| p.name == name).expect("timed");
            let cpu = phase.cpu.expect("the system tells processor times");
            assert!(cpu.system <= cpu.total(), "{phase:?}");
            assert!(phase.kernel_share().is_some(), "{phase:?}");
            cpu.system
        };
        // The times are the whole process's, other tests' threads included: the touches'
        // own kernel time is what they cannot fall below.
        let (spin, touch) = (kernel("spin"), kernel("touch"));
        assert!(
            touch >= 0.02,
            "kernel seconds of 1 GiB of first touches: {touch:.3}"
        );
        assert!(
            touch > spin,
            "kernel seconds: spin {spin:.3}, touch {touch:.3}"
        );
    }

    #[test]
    fn without_a_collection_or_on_another_thread_nothing_is_recorded() {
        assert_eq!(time("alone", || 3), 3);
        let ((), phases) = collect(|| {
            std::thread::scope(|s| {
                s.spawn(|| time("elsewhere", || spin(1)));
            });
        });
        assert!(phases.is_empty(), "{phases:?}");
        // Nested collections keep their own phases; the outer one goes on after.
        let ((), outer) = collect(|| {
            let ((), inner) = collect(|| time("inner", || spin(1)));
            assert_eq!(inner.len(), 1);
            time("outer", || spin(1));
        });
        let names: Vec<&str> = outer.iter().map(|p| p.name).collect();
        assert_eq!(names, ["outer"]);
    }

    #[test]
    fn a_panicking_phase_leaves_the_thread_collecting_nothing() {
        let caught = std::panic::catch_unwind(|| collect(|| time("boom", || panic!("boom"))));
        assert!(caught.is_err());
        let ((), phases) = collect(|| time("after", || ()));
        assert_eq!(phases.len(), 1);
        assert!(COLLECTING.with(|c| c.borrow().is_none()));
    }
}
