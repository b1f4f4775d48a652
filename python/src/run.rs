//! Running engine work without the GIL, interruptibly.
//!
//! The work runs on a thread of its own while the calling thread, without the GIL, waits
//! for it in short slices; between slices it takes the GIL back to run Python's signal
//! handlers (`PyErr_CheckSignals`). When a handler raises (Ctrl-C's `KeyboardInterrupt`),
//! the cancel flag is set, the work stops at its next check, and the exception propagates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;

/// How long the caller waits between two looks at pending signals.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` on another thread, the GIL released; a pending signal whose handler raises
/// sets `cancel` and returns that exception once `work` has stopped.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel(1);
        scope.spawn(move || {
            let _ = sender.send(work());
        });
        let mut receiver = receiver;
        loop {
            let (received, back) = py.allow_threads(move || {
                let received = receiver.recv_timeout(SIGNAL_POLL);
                (received, receiver)
            });
            receiver = back;
            match received {
                Ok(value) => return Ok(value),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(error) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        // The work sees the flag at its next check; its result is dropped.
                        let _ = py.allow_threads(move || receiver.recv());
                        return Err(error);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "the query's thread stopped without an answer",
                    ))
                }
            }
        }
    })
}
