//! Fuzz target `query`: see `quiver_fuzz_checks`, which holds the check (shared with the
//! corpus replay test).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quiver_fuzz_checks::target("query").expect("a known target")(data);
});
