//! The resolver a coordinator's partitioned dictionary asks: its questions to the owners
//! of terms go into the running cluster's requests (`dictionary.rs` cuts them into pieces
//! and gathers the answers), and it waits for the answer while it hears of the others.

use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::Duration;

use quiver_model::dictionary::Resolver;
use quiver_model::Id;

use super::{Coordinator, Request};
use crate::dictionary::Ask;

/// The coordinator's share asks the owners through the running cluster. It holds the
/// request channel weakly: the cluster's end closes it, and a question then fails.
#[derive(Debug)]
pub(crate) struct ClusterResolver {
    pub requests: Weak<Mutex<Option<mpsc::Sender<Request>>>>,
    pub coordinator: Arc<Coordinator>,
    /// What this process hears of the others: a question to a silent owner fails.
    pub liveness: Option<Arc<crate::heartbeat::Liveness>>,
}

/// What a question answers once this process's workers have ended without the cluster
/// being stopped (their threads fail when a connection to another process closes).
pub(crate) const WORKERS_STOPPED: &str = "this process's workers have stopped";

/// How long a question may wait for its owners: they answer from memory, so a longer
/// wait means a process that stopped.
const PATIENCE: Duration = Duration::from_secs(30);

impl ClusterResolver {
    pub(crate) fn ask(&self, ask: Ask) -> Result<Vec<(Id, Vec<u8>)>, String> {
        let requests = self
            .requests
            .upgrade()
            .and_then(|r| r.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .ok_or("the cluster has stopped")?;
        let (reply, answer) = mpsc::channel();
        requests
            .send(Request::Dictionary { ask, reply })
            .map_err(|_| WORKERS_STOPPED)?;
        self.coordinator.wake();
        let asked = std::time::Instant::now();
        loop {
            match answer.recv_timeout(Duration::from_millis(50)) {
                Ok(found) => return Ok(found),
                Err(mpsc::RecvTimeoutError::Timeout) if asked.elapsed() < PATIENCE => {
                    if let Some(silent) = self.liveness.as_ref().and_then(|l| l.silent()) {
                        return Err(silent);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "the owners did not answer within {} s",
                        PATIENCE.as_secs()
                    ))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(WORKERS_STOPPED.into()),
            }
        }
    }
}

impl Resolver for ClusterResolver {
    fn ids(&self, terms: Vec<Vec<u8>>) -> Result<Vec<(Id, Vec<u8>)>, String> {
        self.ask(Ask::Ids(terms))
    }

    fn terms(&self, ids: Vec<Id>) -> Result<Vec<(Id, Vec<u8>)>, String> {
        self.ask(Ask::Terms(ids))
    }
}
