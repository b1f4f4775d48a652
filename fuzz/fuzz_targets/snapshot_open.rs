//! Fuzz target `snapshot_open`: see `quiver_fuzz_checks`, which holds the check (shared with the
//! corpus replay test).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quiver_fuzz_checks::target("snapshot_open").expect("a known target")(data);
});
