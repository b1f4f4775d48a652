//! Per-query evaluation state.
//!
//! Some SPARQL functions are not pure functions of their arguments: `NOW()` must return the same
//! instant during a whole query, `IRI()` resolves against the query's base IRI, `RAND()`, `UUID()`
//! and `BNODE()` need randomness, and `BNODE(str)` must be stable within a solution. All of that
//! lives in [`EvalContext`], which the engine creates once per query. It is `Send + Sync` so that
//! solutions may be evaluated in parallel; its mutable parts are an atomic counter and the
//! query's cache of compiled regular expressions (`regexes.rs`).
//!
//! A context is made for every query, and most queries call neither `NOW()` nor a random
//! function: the instant is read from the clock when the context is made (cheap), but turned
//! into an `xsd:dateTime` (calendar arithmetic, which a profile of the LUBM emulator found
//! to be 7.5% of all the CPU time of light queries) only when `NOW()` first asks; the random
//! seed likewise.

use crate::regexes::Regexes;
use oxiri::{Iri, IriParseError};
use oxsdatatypes::DateTime;
use regex::Regex;
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hash, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What an expression can see besides variables: one per query.
#[derive(Debug)]
pub struct EvalContext {
    /// When the query started, since the Unix epoch: what `NOW()` says.
    started: Duration,
    /// The value of `NOW()`, constant within one query: made from `started` when first
    /// asked, or set ([`Self::with_now`]).
    now: OnceLock<DateTime>,
    /// The base IRI used by `IRI()`/`URI()` to resolve relative IRIs.
    pub base_iri: Option<Iri<String>>,
    /// Seed of the random numbers (RAND, UUID, STRUUID, BNODE), drawn when first needed.
    seed: OnceLock<u64>,
    /// Number of random values and scopes drawn so far.
    counter: AtomicU64,
    /// Compiled regular expressions.
    regexes: Regexes,
}

impl Default for EvalContext {
    fn default() -> Self {
        Self::new()
    }
}

impl EvalContext {
    /// A context whose `NOW()` is the current time, with no base IRI and a random seed.
    pub fn new() -> Self {
        Self {
            started: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
            now: OnceLock::new(),
            base_iri: None,
            seed: OnceLock::new(),
            counter: AtomicU64::new(0),
            regexes: Regexes::default(),
        }
    }

    /// The value of `NOW()`: the instant the context was made, the same for every call.
    pub fn now(&self) -> DateTime {
        *self.now.get_or_init(|| {
            let epoch = DateTime::from_str("1970-01-01T00:00:00Z").ok();
            oxsdatatypes::Duration::try_from(self.started)
                .ok()
                .zip(epoch)
                .and_then(|(since, epoch)| epoch.checked_add_duration(since))
                // A clock past what a dateTime holds: the time as the library reads it.
                .unwrap_or_else(DateTime::now)
        })
    }

    /// The seed of the random numbers, drawn once per context.
    fn seed(&self) -> u64 {
        *self.seed.get_or_init(|| {
            // RandomState is seeded by the OS; mixing in the clock guards against a
            // constant one.
            RandomState::new().hash_one(self.started.as_nanos())
        })
    }

    /// Sets the base IRI of `IRI()`/`URI()`.
    #[must_use]
    pub fn with_base_iri(mut self, base_iri: Iri<String>) -> Self {
        self.base_iri = Some(base_iri);
        self
    }

    /// Sets the base IRI of `IRI()`/`URI()` from a string, which must be an absolute IRI.
    pub fn with_base_iri_str(self, base_iri: &str) -> Result<Self, IriParseError> {
        Ok(self.with_base_iri(Iri::parse(base_iri.to_owned())?))
    }

    /// Sets the value of `NOW()`.
    #[must_use]
    pub fn with_now(mut self, now: DateTime) -> Self {
        self.now = OnceLock::from(now);
        self
    }

    /// Makes `RAND()`, `UUID()`, `STRUUID()` and blank node labels reproducible (tests).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = OnceLock::from(seed);
        self.counter = AtomicU64::new(0);
        self
    }

    /// A new pseudo-random 64-bit value (SplitMix64 over a counter).
    pub(crate) fn next_random(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        mix64(
            self.seed()
                .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .wrapping_add(0x9E37_79B9_7F4A_7C15),
        )
    }

    /// A scope id for `BNODE(str)` that no other call got (random: a caller may number
    /// solutions from it, `scope + row`, see [`crate::evaluate_in_scope`]).
    pub fn fresh_scope(&self) -> u64 {
        self.next_random()
    }

    /// A 128-bit label for `BNODE(str)`: a keyed hash of the scope and the string.
    pub(crate) fn bnode_label(&self, scope: u64, name: &str) -> u128 {
        let half = |tag: u8| {
            let mut hasher = DefaultHasher::new();
            (self.seed(), tag, scope, name).hash(&mut hasher);
            mix64(hasher.finish())
        };
        (u128::from(half(0)) << 64) | u128::from(half(1))
    }

    /// Runs `f` with the compiled form of `pattern` and `flags`, compiling it at most once
    /// per query; `None` where they are invalid.
    pub(crate) fn with_regex<T>(
        &self,
        pattern: &str,
        flags: &str,
        f: impl FnOnce(&Regex) -> Option<T>,
    ) -> Option<T> {
        self.regexes.with(pattern, flags, f)
    }
}

/// The SplitMix64 finalizer: a bijective mix of 64 bits.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
