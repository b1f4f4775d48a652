//! [`GpuDevice`]: the accelerator the query engine sends heavy exploration steps to
//! (`--device gpu`), holding one store's default graph in device memory: the whole index
//! when it fits (`resident.rs`), else predicate segments copied as queries need them
//! (`segments.rs`, Wukong+G's predicate-based cache).
//!
//! Queries on the device run one at a time (a lock around each run), as Wukong+G runs its
//! heavy queries; light steps and everything but BGP steps stay on the CPU threads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use quiver_model::PredId;
use quiver_sparql::device::{BgpDevice, DeviceQuery, DeviceRun, DeviceStep};
use quiver_sparql::table::Table;
use quiver_sparql::QueryError;
use quiver_store::{Direction, GraphIndex, Store, View};

use crate::backend::Backend;
use crate::host::HostBackend;
use crate::resident::{device_bytes, DeviceGraph};
use crate::segments::SegmentCache;
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
    /// The most device memory the index may take (default: 90% of what is free). A whole
    /// index above it goes by predicate segments within it.
    pub max_index_bytes: Option<usize>,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        Self {
            min_work: DEFAULT_MIN_WORK,
            max_index_bytes: None,
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

/// What the device holds of a store.
#[derive(Debug, Clone)]
pub struct Residency {
    /// Whether the device serves the store's default graph (whole or by segments).
    pub resident: bool,
    /// Whether the whole index is on the device (else segments, on demand).
    pub whole: bool,
    /// Bytes of the whole index on the device, or the budget of the segments.
    pub bytes: usize,
    pub upload_micros: f64,
    /// Why the index is not whole on the device, or not served at all.
    pub reason: Option<String>,
}

impl Residency {
    /// In words, for the commands' messages.
    pub fn describe(&self) -> String {
        let mib = |bytes: usize| bytes as f64 / (1 << 20) as f64;
        match (self.resident, self.whole) {
            (true, true) => format!(
                "graph index resident ({:.1} MiB copied in {:.2} s)",
                mib(self.bytes),
                self.upload_micros / 1e6
            ),
            (true, false) => format!(
                "predicate segments copied as queries need them, within {:.1} MiB ({})",
                mib(self.bytes),
                self.reason.as_deref().unwrap_or("")
            ),
            (false, _) => format!(
                "graph not on the device ({})",
                self.reason.as_deref().unwrap_or("")
            ),
        }
    }
}

/// What the device holds.
enum Resident {
    Nothing,
    Whole(Arc<DeviceGraph>),
    /// Segments of the default graph of one store version, as that view reads it (an
    /// entailed view shares its version with the asserted one).
    Segments(SegmentCache, View),
}

/// Which graph the device serves, readable while a run holds [`Resident`].
#[derive(Clone)]
enum Serving {
    Nothing,
    Whole(Arc<DeviceGraph>),
    /// Segments of the default graph of this store version and view.
    Segments(u64, View),
}

impl Serving {
    fn serves(&self, store: &Store, graph: &GraphIndex) -> bool {
        match self {
            Serving::Nothing => false,
            Serving::Whole(copy) => copy.holds(graph),
            Serving::Segments(version, view) => {
                *version == store.version()
                    && *view == store.view()
                    && std::ptr::eq(graph, store.graph())
            }
        }
    }
}

/// A GPU (or the host backend) serving exploration steps and key/value lookups.
pub struct GpuDevice {
    backend: AnyBackend,
    options: DeviceOptions,
    /// Locked for each run: one query on the device at a time.
    resident: Mutex<Resident>,
    /// What `serves` answers from, without waiting for a run.
    serving: Mutex<Serving>,
    /// `options.min_work`, changeable while queries run (`bench lubm`'s sweep).
    min_work: AtomicUsize,
    /// Runs carried out.
    runs: AtomicU64,
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
            resident: Mutex::new(Resident::Nothing),
            serving: Mutex::new(Serving::Nothing),
            runs: AtomicU64::new(0),
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Resident> {
        self.resident.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn serving_lock(&self) -> std::sync::MutexGuard<'_, Serving> {
        self.serving.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves the default graph of `store` from now on (replacing what the device held):
    /// copies the whole index when it can be copied and fits, else prepares predicate
    /// segments within the memory allowed.
    pub fn load(&self, store: &Store) -> Result<Residency, GpuError> {
        let mut resident = self.lock();
        *resident = Resident::Nothing;
        *self.serving_lock() = Serving::Nothing;
        let (free, _) = self.backend().memory()?;
        let limit = self
            .options
            .max_index_bytes
            .unwrap_or(usize::MAX)
            .min(free / 10 * 9);
        let graph = store.graph();
        let segments = |reason: String| {
            Ok(Residency {
                resident: true,
                whole: false,
                bytes: limit,
                upload_micros: 0.0,
                reason: Some(reason),
            })
        };
        let mut by_segments = || {
            *resident = Resident::Segments(SegmentCache::new(store.version(), limit), store.view());
            *self.serving_lock() = Serving::Segments(store.version(), store.view());
        };
        let Some(bytes) = device_bytes(graph) else {
            by_segments();
            return segments("the index was changed by updates since its last checkpoint".into());
        };
        if bytes > limit {
            by_segments();
            return segments(format!("the whole index takes {bytes} bytes"));
        }
        let copy = DeviceGraph::upload(self.backend(), graph)?
            .expect("device_bytes() said it can be copied");
        let residency = Residency {
            resident: true,
            whole: true,
            bytes: copy.bytes(),
            upload_micros: copy.upload_micros(),
            reason: None,
        };
        let copy = Arc::new(copy);
        *resident = Resident::Whole(copy.clone());
        *self.serving_lock() = Serving::Whole(copy);
        Ok(residency)
    }

    /// Changes the work from which steps go to the device.
    pub fn set_min_work(&self, work: usize) {
        self.min_work.store(work, Ordering::Relaxed);
    }

    /// The whole index on the device, if it is there (batched key/value lookups need it).
    pub fn graph(&self) -> Option<Arc<DeviceGraph>> {
        match &*self.serving_lock() {
            Serving::Whole(copy) => Some(copy.clone()),
            _ => None,
        }
    }

    /// What the segments hold, when the index goes by segments: (bytes, segments,
    /// uploads, evictions) so far.
    pub fn segment_report(&self) -> Option<(usize, usize, usize, usize)> {
        match &*self.lock() {
            Resident::Segments(cache, _) => {
                let (bytes, count) = cache.resident();
                Some((bytes, count, cache.uploads, cache.evictions))
            }
            _ => None,
        }
    }
}

/// The (predicate, direction) lists `steps` read.
fn walked(steps: &[DeviceStep]) -> Vec<(PredId, Direction)> {
    let mut needed = Vec::new();
    for step in steps {
        needed.push((step.predicate, step.direction));
        if let Some((_, predicate, direction)) = step.partner {
            needed.push((predicate, direction));
        }
    }
    needed
}

impl BgpDevice for GpuDevice {
    fn name(&self) -> String {
        self.backend().describe()
    }

    fn min_work(&self) -> usize {
        self.min_work.load(Ordering::Relaxed)
    }

    fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    fn serves(&self, store: &Store, graph: &GraphIndex) -> bool {
        let serving = self.serving_lock().clone();
        serving.serves(store, graph)
    }

    fn run(
        &self,
        store: &Store,
        graph: &GraphIndex,
        table: &Table,
        steps: &[DeviceStep],
        query: DeviceQuery<'_, '_>,
    ) -> Result<Option<DeviceRun>, QueryError> {
        let mut resident = self.lock();
        match &mut *resident {
            Resident::Whole(copy) if copy.holds(graph) => {
                let run =
                    crate::steps::run_steps(self.backend(), copy.as_ref(), table, steps, query)?;
                self.runs.fetch_add(1, Ordering::Relaxed);
                Ok(Some(run))
            }
            Resident::Segments(cache, view)
                if cache.version() == store.version()
                    && *view == store.view()
                    && std::ptr::eq(graph, store.graph()) =>
            {
                let Some(acquired) = cache.acquire(self.backend(), store, &walked(steps))? else {
                    return Ok(None);
                };
                let mut run =
                    crate::steps::run_steps(self.backend(), &acquired.set, table, steps, query)?;
                run.index_bytes = acquired.copied_bytes;
                run.index_micros = acquired.copied_micros;
                self.runs.fetch_add(1, Ordering::Relaxed);
                Ok(Some(run))
            }
            _ => Err(QueryError::Device(
                "the graph is no longer on the device".into(),
            )),
        }
    }
}
