//! Property tests: arbitrary stores round-trip exactly, and any single flipped byte in
//! any file is refused with an error naming that file.

use crate::common;

use common::{list, open, TempDir};
use proptest::prelude::*;
use quiver_snapshot::SnapshotWriter;

/// (file index, section bytes) pairs; sections are named by their position.
fn sections() -> impl Strategy<Value = Vec<(usize, Vec<u8>)>> {
    prop::collection::vec((0..3usize, prop::collection::vec(any::<u8>(), 0..40)), 0..8)
}

fn write(dir: &std::path::Path, sections: &[(usize, Vec<u8>)], meta: &serde_json::Value) {
    let mut writer = SnapshotWriter::create(dir).unwrap();
    for (i, (file, bytes)) in sections.iter().enumerate() {
        writer
            .section(&format!("file{file}"), &format!("s{i}"), bytes)
            .unwrap();
    }
    writer.commit(meta.clone()).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn arbitrary_stores_round_trip(sections in sections(), meta in any::<Option<(i64, String)>>()) {
        let tmp = TempDir::new("prop-round-trip");
        let meta = serde_json::json!(meta);
        write(tmp.path(), &sections, &meta);
        let reader = open(tmp.path()).unwrap();
        prop_assert_eq!(reader.metadata(), &meta);
        for (i, (file, bytes)) in sections.iter().enumerate() {
            let column = reader.column::<u8>(&format!("file{file}"), &format!("s{i}")).unwrap();
            prop_assert_eq!(&*column, &bytes[..]);
        }
    }

    #[test]
    fn any_flipped_byte_is_refused(
        sections in sections(),
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        mask in 1..=255u8,
    ) {
        let tmp = TempDir::new("prop-flip");
        write(tmp.path(), &sections, &serde_json::json!({"k": "v"}));
        let names = list(tmp.path());
        let name = pick.get(&names);
        let path = tmp.path().join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        let position = at.index(bytes.len());
        bytes[position] ^= mask;
        std::fs::write(&path, &bytes).unwrap();
        let err = common::open_err(tmp.path());
        prop_assert!(err.contains(name.as_str()), "{}", err);
    }
}
