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

/// How long a question may wait for its owners once the cluster has started: they answer
/// from memory, so a longer wait means a process that is stuck (one that stopped is told
/// by the heartbeat within seconds).
const PATIENCE: Duration = Duration::from_secs(30);

/// How long the questions a cluster asks as it starts may wait: meanwhile every process
/// sends every other its replicas (LUBM-1000's `rdf:type` memberships are 258 MiB), and
/// the owners answer between the pieces of that exchange. Measured: 16 processes of one
/// worker on 2 cores took 50–60 s to start on LUBM-1000, and 30 s of patience failed
/// them all.
const STARTING_PATIENCE: Duration = Duration::from_secs(600);

impl ClusterResolver {
    /// How long a question waits for its owners: longer while the cluster starts.
    fn patience(&self) -> Duration {
        if self.coordinator.started() {
            PATIENCE
        } else {
            STARTING_PATIENCE
        }
    }

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
        let patience = self.patience();
        loop {
            match answer.recv_timeout(Duration::from_millis(50)) {
                Ok(found) => return Ok(found),
                Err(mpsc::RecvTimeoutError::Timeout) if asked.elapsed() < patience => {
                    if let Some(silent) = self.liveness.as_ref().and_then(|l| l.silent()) {
                        return Err(silent);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "the owners did not answer within {} s{}",
                        patience.as_secs(),
                        if patience == PATIENCE {
                            ""
                        } else {
                            " as the cluster started"
                        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A question waits long while the cluster starts, and the usual patience after.
    #[test]
    fn questions_are_patient_while_the_cluster_starts() {
        let requests = Arc::new(Mutex::new(None));
        let resolver = ClusterResolver {
            requests: Arc::downgrade(&requests),
            coordinator: Arc::default(),
            liveness: None,
        };
        assert_eq!(resolver.patience(), STARTING_PATIENCE);
        resolver.coordinator.set_started();
        assert_eq!(resolver.patience(), PATIENCE);
        // With no cluster to ask, a question fails at once.
        assert_eq!(
            resolver.ask(Ask::Loads).unwrap_err(),
            "the cluster has stopped"
        );
    }
}
