//! Running tests in isolation: each on a thread of its own, so that a panic is caught and
//! reported as that test's failure, and a test past its time budget is cancelled and
//! reported as timed out while the run goes on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::deployment::{runs_on_a_deployment, Deployment};
use crate::evaluate::run_test;
use crate::manifest::TestCase;
use crate::Options;

/// What became of a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed(String),
    Skipped(String),
}

/// A test and its status.
#[derive(Debug, Clone)]
pub struct TestResult {
    pub test: TestCase,
    pub status: Status,
}

/// Stack of a test thread: deep query trees recurse.
const STACK_BYTES: usize = 64 << 20;

/// Time a cancelled query gets to notice before the test is given up.
const GRACE: Duration = Duration::from_secs(2);

/// Runs one test within `options.timeout`, on `options.deployment` where one is given and
/// runs it (else skipped).
pub fn run_one(test: &TestCase, options: &Options) -> TestResult {
    let deployment = options.deployment.clone();
    let status = match &test.skip {
        Some(reason) => Status::Skipped(reason.clone()),
        None => match &deployment {
            Some(deployment) if !runs_on_a_deployment(test) => Status::Skipped(format!(
                "not run on a {}: only query evaluation without entailment is",
                deployment.name()
            )),
            _ => isolated(test, options.timeout, deployment),
        },
    };
    TestResult {
        test: test.clone(),
        status,
    }
}

fn isolated(test: &TestCase, timeout: Duration, deployment: Option<Arc<dyn Deployment>>) -> Status {
    let cancel = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel();
    let (owned, flag) = (test.clone(), Arc::clone(&cancel));
    let spawned = std::thread::Builder::new()
        .name("w3c-test".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                run_test(&owned, timeout, flag, deployment.as_deref())
            }));
            let _ = sender.send(outcome.map_err(|payload| panic_message(&*payload)));
        });
    if let Err(error) = spawned {
        return Status::Failed(format!("cannot start the test thread: {error}"));
    }
    match receiver.recv_timeout(timeout + GRACE) {
        Ok(Ok(Ok(()))) => Status::Passed,
        Ok(Ok(Err(reason))) => Status::Failed(reason),
        Ok(Err(message)) => Status::Failed(format!("panicked: {message}")),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            cancel.store(true, Ordering::Relaxed);
            Status::Failed(format!("timed out after {} s", timeout.as_secs_f64()))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Status::Failed("the test thread ended without a result".into())
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic".into()
    }
}
