//! What EXPLAIN shows of a pattern's steps as they ran: rows, time, and where a run of
//! steps went to a device, its transfers. Filled by the exploration (`explore.rs`), by the
//! hand-off to a device (`device.rs`) and from a cluster's trace (`trace.rs`).

use crate::step::Step;

/// Measured rows and time of one step (for EXPLAIN).
#[derive(Debug, Clone)]
pub struct StepProfile {
    pub step: Step,
    pub rows: usize,
    /// Time spent in the step, summed over threads when it ran in parallel.
    pub micros: f64,
    pub parallel: bool,
    /// The step split its few rows over the query's threads (its time is wall time). On a
    /// parallel step, whether a morsel's step split its rows again (never, by design: a
    /// morsel already runs on a thread of its own).
    pub split: bool,
    /// On the first step of a run of steps that went to a device: the device and the
    /// transfers of the run.
    pub transfer: Option<TransferProfile>,
}

/// A run of steps on a device (for EXPLAIN).
#[derive(Debug, Clone)]
pub struct TransferProfile {
    pub device: String,
    /// Steps in the run.
    pub steps: usize,
    pub upload_bytes: usize,
    pub upload_micros: f64,
    pub download_bytes: usize,
    pub download_micros: f64,
    /// Parts of the index copied to the device for the run (predicate segments).
    pub index_bytes: usize,
    pub index_micros: f64,
    /// The whole run: transfers, kernels and the host's orchestration.
    pub total_micros: f64,
}
