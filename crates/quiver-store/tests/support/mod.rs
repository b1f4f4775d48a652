//! What several test files need: temporary directories, and a store's sections rewritten
//! into an older layout.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use quiver_model::{Id, PredId};
use quiver_snapshot::rewrite::Section;

/// A directory under the system temp dir, named after the test file and `tag`, removed on
/// drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "quiver-store-{}-{tag}-{}-{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    /// The names of the files in the directory.
    #[allow(dead_code)] // not every test file uses it
    pub fn files(&self) -> BTreeSet<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A graph's arrays in the order a pack's `graphs` entries count them, and their value sizes.
const ARRAYS: [(&str, usize); 9] = [
    ("out.vertices", std::mem::size_of::<Id>()),
    ("out.offsets", 8),
    ("out.words", std::mem::size_of::<Id>()),
    ("in.vertices", std::mem::size_of::<Id>()),
    ("in.offsets", 8),
    ("in.words", std::mem::size_of::<Id>()),
    ("predicates.offsets", 8),
    ("predicates.members", std::mem::size_of::<Id>()),
    ("predicates.ids", std::mem::size_of::<PredId>()),
];

/// The sections and metadata of a store of format 3, in which every named graph had files
/// of its own, from those of a store of format 4, whose small named graphs share packs
/// (`graph-pack-<k>`: a `graphs` section of entries [number, count of values per array],
/// then each array's concatenation). Written independently of the store's own reader.
#[allow(dead_code)] // not every test file uses it
pub fn unpacked(
    sections: &[Section],
    metadata: &serde_json::Value,
) -> (Vec<Section>, serde_json::Value) {
    let is_pack = |s: &Section| s.file.starts_with("graph-pack-");
    let mut out: Vec<Section> = sections.iter().filter(|s| !is_pack(s)).cloned().collect();
    let mut packs: Vec<&str> = sections
        .iter()
        .filter(|s| is_pack(s))
        .map(|s| s.file.as_str())
        .collect();
    packs.dedup();
    assert_eq!(
        packs.len() as u64,
        metadata["graph_packs"].as_u64().unwrap(),
        "the metadata counts the packs"
    );
    for pack in packs {
        let section = |name: &str| {
            &sections
                .iter()
                .find(|s| s.file == pack && s.name == name)
                .unwrap_or_else(|| panic!("{pack} has no {name}"))
                .bytes
        };
        let entries: Vec<u64> = bytemuck::pod_collect_to_vec(section("graphs"));
        let mut taken = [0usize; ARRAYS.len()];
        for entry in entries.chunks_exact(1 + ARRAYS.len()) {
            for (a, &(name, size)) in ARRAYS.iter().enumerate() {
                if entry[1 + a] == u64::MAX {
                    continue;
                }
                let count = entry[1 + a] as usize;
                let bytes = section(name)[taken[a] * size..(taken[a] + count) * size].to_vec();
                taken[a] += count;
                out.push(Section {
                    file: format!("graph-{}", entry[0]),
                    name: name.to_owned(),
                    bytes,
                });
            }
        }
    }
    // Format 3 sized every named graph's predicate index for all the store's predicates.
    let predicates = sections
        .iter()
        .find(|s| s.file == "catalog" && s.name == "predicates")
        .expect("catalog.predicates")
        .bytes
        .len()
        / std::mem::size_of::<Id>();
    densify_predicate_indexes(&mut out, predicates);
    let mut metadata = metadata.clone();
    metadata.as_object_mut().unwrap().remove("graph_packs");
    metadata["store_format"] = 3.into();
    (out, metadata)
}

/// Replaces each `predicates.ids` and its `predicates.offsets` (slots for the listed
/// predicates only) by offsets with a slot for each of `predicates` predicates.
fn densify_predicate_indexes(sections: &mut Vec<Section>, predicates: usize) {
    let files: Vec<String> = sections
        .iter()
        .filter(|s| s.name == "predicates.ids")
        .map(|s| s.file.clone())
        .collect();
    for file in files {
        let position = |sections: &[Section], name: &str| {
            sections
                .iter()
                .position(|s| s.file == file && s.name == name)
                .unwrap()
        };
        let ids_at = position(sections, "predicates.ids");
        let ids: Vec<PredId> = bytemuck::pod_collect_to_vec(&sections.remove(ids_at).bytes);
        let at = position(sections, "predicates.offsets");
        let sparse: Vec<u64> = bytemuck::pod_collect_to_vec(&sections[at].bytes);
        // The members stay as they are: listed predicates ascending, as the dense slots.
        let mut dense = vec![0u64];
        let mut listed = ids.iter().enumerate().peekable();
        for p in 0..predicates as PredId {
            match listed.next_if(|(_, &id)| id == p) {
                Some((i, _)) => dense.extend([sparse[2 * i + 1], sparse[2 * i + 2]]),
                None => {
                    let end = *dense.last().unwrap();
                    dense.extend([end, end]);
                }
            }
        }
        assert!(
            listed.next().is_none(),
            "{file}: a predicate past the catalog's"
        );
        sections[at].bytes = bytemuck::cast_slice(&dense).to_vec();
    }
}
