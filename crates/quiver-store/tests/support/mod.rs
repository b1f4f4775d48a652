//! What several test files need: a store's sections rewritten into an older layout.

use quiver_model::Id;
use quiver_snapshot::rewrite::Section;

/// A graph's arrays in the order a pack's `graphs` entries count them, and their value sizes.
const ARRAYS: [(&str, usize); 8] = [
    ("out.vertices", std::mem::size_of::<Id>()),
    ("out.offsets", 8),
    ("out.words", std::mem::size_of::<Id>()),
    ("in.vertices", std::mem::size_of::<Id>()),
    ("in.offsets", 8),
    ("in.words", std::mem::size_of::<Id>()),
    ("predicates.offsets", 8),
    ("predicates.members", std::mem::size_of::<Id>()),
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
        let mut taken = [0usize; 8];
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
    let mut metadata = metadata.clone();
    metadata.as_object_mut().unwrap().remove("graph_packs");
    metadata["store_format"] = 3.into();
    (out, metadata)
}
