//! Fuzz target `load_nquads`: see `quiver_fuzz_checks`, which holds the check (shared with the
//! corpus replay test).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quiver_fuzz_checks::target("load_nquads").expect("a known target")(data);
});
