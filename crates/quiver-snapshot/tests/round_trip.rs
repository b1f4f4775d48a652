//! Writing a store and reading it back gives exactly what was written, zero-copy.

use crate::common;

use common::{list, open, TempDir};
use quiver_model::Column;
use quiver_snapshot::{SnapshotReader, SnapshotWriter};
use serde_json::json;

fn assert_mapped<T: bytemuck::Pod>(column: &Column<T>) {
    assert!(column.is_mapped(), "expected a mapped column");
    // A mapping starts on a page boundary, so this is the section's offset in the file.
    assert_eq!(column.as_ptr() as usize % 8, 0, "section not 8-aligned");
}

#[test]
fn round_trip_files_sections_and_metadata() {
    let tmp = TempDir::new("round-trip");
    let dir = tmp.path().join("store"); // created by the writer
    let odd: Vec<u8> = (0..13u8).collect();
    let offsets: Vec<u32> = (0..1000u32).map(|i| i * 3).collect();
    let neighbours: Vec<u64> = (0..777u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let metadata = json!({
        "triples": 12345678901234u64,
        "ratio": 0.1 + 0.2,
        "name": "LUBM \"1\" — ünïcode",
        "nested": {"list": [1, -2, 3.5, null, true], "empty": {}},
    });

    let mut writer = SnapshotWriter::create(&dir).unwrap();
    assert_eq!(writer.generation(), 1);
    writer.section("dict", "bytes", &odd).unwrap();
    writer.section("dict", "empty", &[]).unwrap();
    writer.section("dict", "one", &[0xAB]).unwrap();
    writer.column("index", "out.offsets", &offsets).unwrap();
    writer
        .column("index", "out.neighbours", &neighbours)
        .unwrap();
    writer.column::<u32>("index", "in.offsets", &[]).unwrap();
    writer.section("mixed", "a", &[1, 2, 3]).unwrap();
    writer.column("mixed", "b", &[u64::MAX, 0, 42]).unwrap();
    writer.section("mixed", "c", &odd[..5]).unwrap();
    writer.column("mixed", "d", &[7u32]).unwrap();
    let written = writer.commit(metadata.clone()).unwrap();

    assert!(SnapshotReader::exists(&dir));
    let reader = open(&dir).unwrap();
    assert_eq!(reader.generation(), 1);
    assert_eq!(reader.metadata(), &metadata);
    let on_disk: u64 = list(&dir)
        .iter()
        .map(|name| std::fs::metadata(dir.join(name)).unwrap().len())
        .sum();
    assert_eq!(written, on_disk);
    assert_eq!(reader.bytes_on_disk(), on_disk);

    let bytes = reader.column::<u8>("dict", "bytes").unwrap();
    assert_mapped(&bytes);
    assert_eq!(&*bytes, &odd[..]);
    let empty = reader.column::<u8>("dict", "empty").unwrap();
    assert_mapped(&empty);
    assert!(empty.is_empty());
    assert_eq!(&*reader.column::<u8>("dict", "one").unwrap(), &[0xAB]);

    let got = reader.column::<u32>("index", "out.offsets").unwrap();
    assert_mapped(&got);
    assert_eq!(&*got, &offsets[..]);
    let got = reader.column::<u64>("index", "out.neighbours").unwrap();
    assert_mapped(&got);
    assert_eq!(&*got, &neighbours[..]);
    assert!(reader
        .column::<u32>("index", "in.offsets")
        .unwrap()
        .is_empty());

    assert_eq!(&*reader.column::<u8>("mixed", "a").unwrap(), &[1, 2, 3]);
    assert_eq!(
        &*reader.column::<u64>("mixed", "b").unwrap(),
        &[u64::MAX, 0, 42]
    );
    assert_eq!(&*reader.column::<u8>("mixed", "c").unwrap(), &odd[..5]);
    let d = reader.column::<u32>("mixed", "d").unwrap();
    assert_mapped(&d);
    assert_eq!(&*d, &[7]);

    assert!(reader.has_section("index", "out.offsets"));
    assert!(!reader.has_section("index", "nope"));
    assert!(!reader.has_section("nope", "out.offsets"));
    // Columns outlive the reader: they share the mapping.
    drop(reader);
    assert_eq!(&*got, &neighbours[..]);
}

#[test]
fn column_errors_name_the_file() {
    let tmp = TempDir::new("column-errors");
    let mut writer = SnapshotWriter::create(tmp.path()).unwrap();
    writer.section("dict", "odd", &[1, 2, 3]).unwrap();
    writer.column("index", "pairs", &[1u32, 2, 3]).unwrap();
    writer.commit(json!(null)).unwrap();
    let reader = open(tmp.path()).unwrap();

    let err = reader
        .column::<u8>("dict", "missing")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("dict-1.qvs") && err.contains("missing"),
        "{err}"
    );
    let err = reader.column::<u8>("absent", "x").unwrap_err().to_string();
    assert!(err.contains("absent-1.qvs"), "{err}");
    let err = reader.column::<u32>("dict", "odd").unwrap_err().to_string();
    assert!(err.contains("dict-1.qvs") && err.contains("u32"), "{err}");
    let err = reader
        .column::<u64>("index", "pairs")
        .unwrap_err()
        .to_string();
    assert!(err.contains("index-1.qvs") && err.contains("u64"), "{err}");
    let err = reader
        .column::<()>("index", "pairs")
        .unwrap_err()
        .to_string();
    assert!(err.contains("index-1.qvs"), "{err}");
    assert_eq!(
        &*reader.column::<u8>("index", "pairs").unwrap(),
        bytemuck::cast_slice::<u32, u8>(&[1, 2, 3])
    );
}

#[test]
fn empty_generation_and_exists() {
    let tmp = TempDir::new("empty-gen");
    assert!(!SnapshotReader::exists(tmp.path()));
    let written = SnapshotWriter::create(tmp.path())
        .unwrap()
        .commit(json!({"empty": true}))
        .unwrap();
    assert!(SnapshotReader::exists(tmp.path()));
    let reader = open(tmp.path()).unwrap();
    assert_eq!(reader.metadata(), &json!({"empty": true}));
    assert_eq!(reader.bytes_on_disk(), written);
    assert_eq!(list(tmp.path()), ["manifest.json"]);
}

#[test]
fn writer_rejects_bad_names_and_duplicates() {
    let tmp = TempDir::new("bad-names");
    let mut writer = SnapshotWriter::create(tmp.path()).unwrap();
    for bad in ["", "../escape", "a/b", ".hidden", "sp ace"] {
        assert!(
            writer.section(bad, "s", &[1]).is_err(),
            "file name {bad:?} accepted"
        );
    }
    writer.section("f", "s", &[1]).unwrap();
    assert!(writer.section("f", "s", &[2]).is_err());
    assert!(writer.section("f", "", &[2]).is_err());
    // Usage errors do not spoil the generation.
    writer.section("f", "t", &[2]).unwrap();
    writer.commit(json!(1)).unwrap();
    let reader = open(tmp.path()).unwrap();
    assert_eq!(&*reader.column::<u8>("f", "s").unwrap(), &[1]);
    assert_eq!(&*reader.column::<u8>("f", "t").unwrap(), &[2]);
    assert_eq!(list(tmp.path()), ["f-1.qvs", "manifest.json"]);
}

#[test]
fn files_written_on_threads_of_their_own_read_back() {
    let tmp = TempDir::new("threads");
    let mut writer = SnapshotWriter::create(tmp.path()).unwrap();
    writer.section("first", "before", &[9]).unwrap();
    assert!(writer.files(["a", "a"]).is_err(), "a file named twice");
    assert!(writer.files(["a", "../b"]).is_err(), "a bad name");
    let columns: Vec<Vec<u64>> = (0..3u64)
        .map(|f| (0..200_000).map(|i| i * 3 + f).collect())
        .collect();
    let [mut first, mut second, mut third] = writer.files(["first", "second", "third"]).unwrap();
    std::thread::scope(|scope| {
        let files = [&mut first, &mut second, &mut third];
        for (file, values) in files.into_iter().zip(&columns) {
            scope.spawn(move || {
                file.column("values", values).unwrap();
                file.section("tail", &[1, 2, 3]).unwrap();
                assert!(file.section("tail", &[4]).is_err(), "a section named twice");
            });
        }
    });
    writer.section("third", "after", &[7]).unwrap();
    writer.commit(json!({})).unwrap();
    let reader = open(tmp.path()).unwrap();
    for (name, values) in ["first", "second", "third"].into_iter().zip(&columns) {
        let column = reader.column::<u64>(name, "values").unwrap();
        assert_mapped(&column);
        assert_eq!(&*column, values.as_slice());
        assert_eq!(&*reader.column::<u8>(name, "tail").unwrap(), &[1, 2, 3]);
    }
    assert_eq!(&*reader.column::<u8>("first", "before").unwrap(), &[9]);
    assert_eq!(&*reader.column::<u8>("third", "after").unwrap(), &[7]);
    assert_eq!(
        list(tmp.path()),
        [
            "first-1.qvs",
            "manifest.json",
            "second-1.qvs",
            "third-1.qvs"
        ]
    );
}

#[test]
fn files_closed_early_commit_with_the_rest_and_free_their_descriptors() {
    let tmp = TempDir::new("closed");
    let mut writer = SnapshotWriter::create(tmp.path()).unwrap();
    const FILES: usize = 3_000;
    for i in 0..FILES {
        let name = format!("f{i}");
        writer.column(&name, "values", &[i as u64, 7]).unwrap();
        writer.close_file(&name).unwrap();
    }
    // The closed files hold no descriptor: far fewer are open than the files written.
    #[cfg(target_os = "linux")]
    {
        let open = std::fs::read_dir("/proc/self/fd").unwrap().count();
        assert!(
            open < 500,
            "{open} descriptors open after {FILES} closed files"
        );
    }
    assert!(writer.section("f0", "more", &[1]).is_err(), "a closed file");
    assert!(
        writer.close_file("nothing").is_err(),
        "a file never written"
    );
    // A section of parts, one of them larger than a checksum's part, read back whole.
    let parts: Vec<Vec<u8>> = [0usize, 3, 5 << 20, 0, 11]
        .iter()
        .enumerate()
        .map(|(p, &len)| (0..len).map(|i| (i * 31 + p) as u8).collect())
        .collect();
    let [mut open_file] = writer.files(["parts"]).unwrap();
    open_file
        .section_of_parts("joined", parts.iter().map(Vec::as_slice))
        .unwrap();
    writer.commit(json!({})).unwrap();
    let reader = open(tmp.path()).unwrap();
    for i in [0, 1, FILES / 2, FILES - 1] {
        let values = reader.column::<u64>(&format!("f{i}"), "values").unwrap();
        assert_eq!(&*values, &[i as u64, 7]);
    }
    assert_eq!(list(tmp.path()).len(), FILES + 2);
    let joined = reader.column::<u8>("parts", "joined").unwrap();
    assert_eq!(&*joined, parts.concat().as_slice());
    // Part of a section: the second of f1's two values; a range past its end is refused.
    let part = reader
        .column_part::<u64>("f1", "values", Some(1..2))
        .unwrap();
    assert_eq!(&*part, &[7]);
    assert!(reader
        .column_part::<u64>("f1", "values", Some(1..3))
        .is_err());
}
