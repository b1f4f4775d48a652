//! [`GpuDevice`]: the accelerator the query engine sends heavy exploration steps to
//! (`--device gpu`), holding one store's default graph in device memory.
//!
//! Queries on the device run one at a time (a lock around each run), as Wukong+G runs its
//! heavy queries; light steps and everything but BGP steps stay on the CPU threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use quiver_sparql::device::{BgpDevice, DeviceQuery, DeviceRun, DeviceStep};
use quiver_sparql::table::Table;
use quiver_sparql::QueryError;
use quiver_store::{GraphIndex, Store};

use crate::backend::Backend;
use crate::host::HostBackend;
use crate::resident::{device_bytes, DeviceGraph};
use crate::GpuError;

/// The work of a step (list entries it reads) from which it goes to the GPU unless told
/// otherwise: below it the CPU's exploration, which never leaves a core's caches for short
/// tables, wins over launches and copies (measured on LUBM-2560; see ARCHITECTURE.md).
pub const DEFAULT_MIN_WORK: usize = 16_384;

/// How a device is set up.
#[derive(Debug, Clone)]
pub struct DeviceOptions {
    /// The work of a step from which it and the steps after it go to the device.
    pub min_work: usize,
    /// The most device memory the graph may take (default: 90% of what is free).
    pub max_graph_bytes: Option<usize>,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        Self {
            min_work: DEFAULT_MIN_WORK,
            max_graph_bytes: None,
        }
    }
}

/// The backends a device runs on.
enum AnyBackend {
    Host(HostBackend),
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::CudaBackend),
}

impl AnyBackend {
    fn get(&self) -> &dyn Backend {
        match self {
            AnyBackend::Host(backend) => backend,
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(backend) => backend,
        }
    }
}

/// What the device holds.
#[derive(Debug, Clone)]
pub struct Residency {
    /// Whether the store's default graph is in device memory.
    pub resident: bool,
    /// Bytes of the graph on the device (or that it would take).
    pub bytes: usize,
    pub upload_micros: f64,
    /// Why it is not resident.
    pub reason: Option<String>,
}

/// A GPU (or the host backend) serving exploration steps and key/value lookups.
pub struct GpuDevice {
    backend: AnyBackend,
    options: DeviceOptions,
    graph: Mutex<Option<Arc<DeviceGraph>>>,
    /// `options.min_work`, changeable while queries run (`bench lubm`'s sweep).
    min_work: AtomicUsize,
    /// One query on the device at a time.
    running: Mutex<()>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuDevice({})", self.backend.get().describe())
    }
}

impl GpuDevice {
    /// The first GPU, through CUDA.
    #[cfg(feature = "cuda")]
    pub fn cuda(options: DeviceOptions) -> Result<Self, GpuError> {
        Ok(Self::with(
            AnyBackend::Cuda(crate::cuda::CudaBackend::new(0)?),
            options,
        ))
    }

    /// The first GPU: always unavailable in a build without the `cuda` feature.
    #[cfg(not(feature = "cuda"))]
    pub fn cuda(options: DeviceOptions) -> Result<Self, GpuError> {
        let _ = options;
        Err(GpuError::Unavailable(
            "this build of Quiver has no GPU support (build it with `--features cuda`)".into(),
        ))
    }

    /// The host backend: the kernels compiled for the CPU (tests, and checks of the device
    /// path on machines without a GPU).
    pub fn host(options: DeviceOptions) -> Result<Self, GpuError> {
        Ok(Self::with(AnyBackend::Host(HostBackend::new()?), options))
    }

    fn with(backend: AnyBackend, options: DeviceOptions) -> Self {
        Self {
            backend,
            min_work: AtomicUsize::new(options.min_work),
            options,
            graph: Mutex::new(None),
            running: Mutex::new(()),
        }
    }

    pub fn backend(&self) -> &dyn Backend {
        self.backend.get()
    }

    /// The CUDA backend, when this device is a GPU.
    #[cfg(feature = "cuda")]
    pub fn cuda_backend(&self) -> Option<&crate::cuda::CudaBackend> {
        match &self.backend {
            AnyBackend::Cuda(backend) => Some(backend),
            AnyBackend::Host(_) => None,
        }
    }

    /// Copies the default graph of `store` to the device (replacing any graph held), when
    /// it can be copied and fits.
    pub fn load(&self, store: &Store) -> Result<Residency, GpuError> {
        let graph = store.graph();
        *self.graph.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let Some(bytes) = device_bytes(graph) else {
            return Ok(Residency {
                resident: false,
                bytes: 0,
                upload_micros: 0.0,
                reason: Some(
                    "the default graph was changed by updates since its last checkpoint (run `quiver checkpoint`)"
                        .into(),
                ),
            });
        };
        let (free, _) = self.backend().memory()?;
        let limit = self
            .options
            .max_graph_bytes
            .unwrap_or(free / 10 * 9)
            .min(free / 10 * 9);
        if bytes > limit {
            return Ok(Residency {
                resident: false,
                bytes,
                upload_micros: 0.0,
                reason: Some(format!(
                    "the graph takes {bytes} bytes; the device has room for {limit}"
                )),
            });
        }
        let Some(copy) = DeviceGraph::upload(self.backend(), graph)? else {
            return Ok(Residency {
                resident: false,
                bytes,
                upload_micros: 0.0,
                reason: Some("the graph cannot be copied".into()),
            });
        };
        let residency = Residency {
            resident: true,
            bytes: copy.bytes(),
            upload_micros: copy.upload_micros(),
            reason: None,
        };
        *self.graph.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(copy));
        Ok(residency)
    }

    /// Changes the work from which steps go to the device.
    pub fn set_min_work(&self, work: usize) {
        self.min_work.store(work, Ordering::Relaxed);
    }

    /// The graph on the device, if any.
    pub fn graph(&self) -> Option<Arc<DeviceGraph>> {
        self.graph.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The graph on the device if it is a copy of `graph`.
    fn holding(&self, graph: &GraphIndex) -> Option<Arc<DeviceGraph>> {
        self.graph().filter(|copy| copy.holds(graph))
    }
}

impl BgpDevice for GpuDevice {
    fn name(&self) -> String {
        self.backend().describe()
    }

    fn min_work(&self) -> usize {
        self.min_work.load(Ordering::Relaxed)
    }

    fn serves(&self, _store: &Store, graph: &GraphIndex) -> bool {
        self.holding(graph).is_some()
    }

    fn run(
        &self,
        _store: &Store,
        graph: &GraphIndex,
        table: &Table,
        steps: &[DeviceStep],
        query: DeviceQuery<'_, '_>,
    ) -> Result<DeviceRun, QueryError> {
        let copy = self
            .holding(graph)
            .ok_or_else(|| QueryError::Device("the graph is no longer on the device".into()))?;
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        crate::steps::run_steps(self.backend(), &copy, table, steps, query)
    }
}
