//! The checks shared by the host-backend tests (run in CI) and the GPU tests (`--features
//! cuda -- --ignored`, on a machine with a GPU).

use std::path::PathBuf;
use std::sync::Arc;

use quiver_gpu::kv::{cpu_lookup, lookup_batch};
use quiver_gpu::GpuDevice;
use quiver_sparql::device::BgpDevice;
use quiver_store::Store;

/// The repository's root (`QUIVER_ROOT` when the test binary runs from another copy).
pub fn root() -> PathBuf {
    std::env::var_os("QUIVER_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// LUBM-1, generated and loaded in memory.
pub fn lubm1() -> Store {
    let config = quiver_lubm::LubmConfig::standard(1);
    quiver_loader::load_lubm(config, 2, None, &quiver_loader::NoProgress)
        .expect("LUBM-1 loads")
        .0
}

/// Rows of a SELECT, decoded, in order; and whether a step ran on the device.
pub fn rows(
    store: &Store,
    text: &str,
    device: Option<Arc<dyn BgpDevice>>,
    threads: usize,
) -> (Vec<Vec<String>>, bool) {
    quiver_gpu::check::select_rows(store, text, device, threads)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Every LUBM query of the repository (q1–q12 and the SPARQL 1.1 set) on LUBM-1 gives the
/// CPU's rows, in the CPU's order, with the device taking every step it can.
pub fn lubm_queries_match(device: Arc<GpuDevice>) {
    lubm_queries_match_with(device, true)
}

/// As [`lubm_queries_match`], with the device taking only tables above its threshold
/// (not every query reaches it).
pub fn lubm_queries_match_threshold(device: Arc<GpuDevice>) {
    lubm_queries_match_with(device, false)
}

/// As [`lubm_queries_match`], with the index going to the device by predicate segments
/// (the device's memory allowed for it is a fraction of the whole index).
pub fn lubm_queries_match_by_segments(device: Arc<GpuDevice>) {
    let store = lubm1();
    let residency = device.load(&store).unwrap();
    assert!(residency.resident && !residency.whole, "{residency:?}");
    drop(store);
    lubm_queries_match_with(device.clone(), false);
    let (bytes, segments, uploads, evictions) = device.segment_report().unwrap();
    assert!(
        segments > 0 && uploads >= segments,
        "{segments} segments, {uploads} copies"
    );
    assert!(
        bytes <= residency.bytes + residency.bytes / 4,
        "{bytes} bytes resident"
    );
    assert!(evictions > 0, "the budget never made room");
}

fn lubm_queries_match_with(device: Arc<GpuDevice>, most_on_device: bool) {
    let store = lubm1();
    assert!(device.load(&store).unwrap().resident);
    let dyn_device: Arc<dyn BgpDevice> = device;
    let mut on_device = 0;
    let mut checked = 0;
    for set in ["lubm-basic", "lubm-sparql11"] {
        let dir = root().join("queries").join(set);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "rq"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for threads in [1, 2] {
                let (cpu, _) = rows(&store, &text, None, threads);
                let (gpu, used) = rows(&store, &text, Some(dyn_device.clone()), threads);
                assert_eq!(
                    cpu.len(),
                    gpu.len(),
                    "{} ({threads} threads)",
                    file.display()
                );
                assert!(
                    cpu == gpu,
                    "{}: rows differ ({threads} threads)",
                    file.display()
                );
                on_device += usize::from(used);
                checked += 1;
            }
        }
    }
    assert!(checked >= 24, "{checked} queries checked");
    let least = if most_on_device { checked / 2 } else { 2 };
    assert!(
        on_device >= least,
        "only {on_device} of {checked} queries used the device"
    );
}

/// Random BGPs on random graphs: the device's rows are the CPU's, in order.
pub fn random_bgps_match(device: Arc<GpuDevice>, graphs: usize, queries: usize) {
    random_bgps_match_with(device, graphs, queries, 2)
}

/// As [`random_bgps_match`], with at least `1 / share` of the queries on the device.
pub fn random_bgps_match_with(device: Arc<GpuDevice>, graphs: usize, queries: usize, share: usize) {
    for threads in [1, 2] {
        let report = quiver_gpu::check::check_random_bgps(
            &device,
            7 + threads as u64,
            graphs,
            queries,
            300,
            threads,
        )
        .unwrap();
        assert!(report.mismatches.is_empty(), "{:#?}", report.mismatches);
        assert_eq!(report.reordered, 0, "rows came in another order");
        assert_eq!(report.queries, graphs * queries);
        assert!(report.rows > 1000, "{report:?}");
        assert!(
            report.on_device * share >= report.queries,
            "only {} of {} queries used the device",
            report.on_device,
            report.queries
        );
    }
}

/// Batched lookups of present and absent keys, batch sizes from 1 up, equal the CPU's.
pub fn kv_batches_match(device: Arc<GpuDevice>, sizes: &[usize]) {
    let store = lubm1();
    assert!(device.load(&store).unwrap().resident);
    let graph = device.graph().unwrap();
    for &size in sizes {
        let keys = quiver_gpu::kv::sample_keys(store.graph(), store.terms(), size, size as u64);
        let (digests, found) = lookup_batch(device.backend(), &graph, &keys).unwrap();
        let mut cpu_digests = vec![0; size];
        let mut cpu_found = vec![0; size];
        cpu_lookup(store.graph(), &keys, &mut cpu_digests, &mut cpu_found);
        assert_eq!(found, cpu_found, "batch of {size}");
        assert_eq!(digests, cpu_digests, "batch of {size}");
        if size >= 100 {
            let present = found.iter().filter(|&&f| f == 1).count();
            assert!(
                present > size / 4 && present < size,
                "{present} of {size} present"
            );
        }
    }
}
