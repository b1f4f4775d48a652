//! Running engine work without the GIL, interruptibly.
//!
//! Python runs signal handlers on its main thread only. There the work runs on a thread of
//! its own while the calling thread, without the GIL, waits for it in short slices; between
//! slices it takes the GIL back to run Python's signal handlers (`PyErr_CheckSignals`).
//! When a handler raises (Ctrl-C's `KeyboardInterrupt`), the cancel flag is set, the work
//! stops at its next check, and the exception propagates; work that cannot be cancelled
//! (a load) is abandoned to finish in the background. On any other thread no handler can
//! run, so the work runs right there, the GIL released, without a hand-off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;

/// How long the caller waits between two looks at pending signals.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` with the GIL released; on the main thread, a pending signal whose handler
/// raises sets `cancel` and returns that exception once `work` has stopped.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    if !on_main_thread(py)? {
        return Ok(py.allow_threads(work));
    }
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel(1);
        scope.spawn(move || {
            let _ = sender.send(work());
        });
        match wait(py, receiver) {
            Waited::Done(value) => Ok(value),
            Waited::Interrupted(error, receiver) => {
                cancel.store(true, Ordering::Relaxed);
                // The work sees the flag at its next check; its result is dropped.
                let _ = py.allow_threads(move || receiver.recv());
                Err(error)
            }
            Waited::Lost => Err(lost()),
        }
    })
}

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
