//! Running engine work without the GIL, interruptibly.
//!
//! Python runs signal handlers on its main thread only. There the work runs on another
//! thread (one long-lived worker, so a light query pays a wake-up, not a thread's start)
//! while the calling thread, without the GIL, waits for it in short slices; between slices
//! it takes the GIL back to run Python's signal handlers (`PyErr_CheckSignals`).
//! When a handler raises (Ctrl-C's `KeyboardInterrupt`), the cancel flag is set, the work
//! stops at its next check, and the exception propagates; work that cannot be cancelled
//! (a load) is abandoned to finish in the background. On any other thread no handler can
//! run, so the work runs right there, the GIL released, without a hand-off.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;

/// How long the caller waits between two looks at pending signals.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` with the GIL released; on the main thread, a pending signal whose handler
/// raises sets `cancel` and returns that exception once `work` has stopped.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    if !on_main_thread(py)? {
        return Ok(py.allow_threads(work));
    }
    let (sender, receiver) = mpsc::sync_channel(1);
    // The work owns what it reads ('static): the worker thread may outlive this call.
    let job: Job = Box::new(move || {
        let _ = sender.send(panic::catch_unwind(AssertUnwindSafe(work)));
    });
    // A job no worker takes comes back from `submit` and runs in place.
    if let Err(job) = submit(job) {
        job.0();
    }
    let answer = match wait(py, receiver) {
        Waited::Done(answer) => answer,
        Waited::Interrupted(error, receiver) => {
            cancel.store(true, Ordering::Relaxed);
            // The work sees the flag at its next check; its result is dropped.
            let _ = py.allow_threads(move || receiver.recv());
            return Err(error);
        }
        Waited::Lost => return Err(lost()),
    };
    match answer {
        Ok(value) => Ok(value),
        Err(payload) => panic::resume_unwind(payload),
    }
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Hands `job` to the long-lived worker thread, started on first use and again in a child
/// process after `fork` (which copies no threads); gives it back when no worker can take
/// it (a thread could not start), to be run in place.
fn submit(job: Job) -> Result<(), ReturnedJob> {
    static WORKER: Mutex<Option<(u32, mpsc::Sender<Job>)>> = Mutex::new(None);
    let mut worker = WORKER.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if !matches!(&*worker, Some((owner, _)) if *owner == pid) {
        let (sender, receiver) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("quiver-query".into())
            .spawn(move || {
                for job in receiver {
                    job();
                }
            });
        *worker = started.ok().map(|_| (pid, sender));
    }
    match &*worker {
        Some((_, sender)) => sender.send(job).map_err(|error| ReturnedJob(error.0)),
        None => Err(ReturnedJob(job)),
    }
}

struct ReturnedJob(Job);

/// Runs `work`, which cannot be cancelled, with the GIL released; on the main thread, a
/// pending signal whose handler raises returns that exception at once, and `work` runs on
/// to its end in the background, its result dropped.
pub fn abandonable<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    if !on_main_thread(py)? {
        return Ok(py.allow_threads(work));
    }
    let (sender, receiver) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match wait(py, receiver) {
        Waited::Done(value) => Ok(value),
        Waited::Interrupted(error, _) => Err(error),
        Waited::Lost => Err(lost()),
    }
}

enum Waited<T> {
    Done(T),
    Interrupted(PyErr, mpsc::Receiver<T>),
    Lost,
}

/// Waits for the work's answer without the GIL, running signal handlers between slices.
fn wait<T: Send>(py: Python<'_>, mut receiver: mpsc::Receiver<T>) -> Waited<T> {
    loop {
        let (received, back) = py.allow_threads(move || {
            let received = receiver.recv_timeout(SIGNAL_POLL);
            (received, receiver)
        });
        receiver = back;
        match received {
            Ok(value) => return Waited::Done(value),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(error) = py.check_signals() {
                    return Waited::Interrupted(error, receiver);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Waited::Lost,
        }
    }
}

fn lost() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the worker thread stopped without an answer")
}

fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    Ok(threading.call_method0("current_thread")?.is(&main))
}
