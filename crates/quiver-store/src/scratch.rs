//! A byte buffer per thread for one term's encoding at a time: a query's constants are
//! encoded to be looked up, and terms decoded to be read, many thousand times a second,
//! and a fresh vector for each cost an allocation, a growth and a free (about 1.5 % of the
//! LUBM mix's light queries).

use std::cell::Cell;

/// A buffer grown past this many bytes (a long literal) is freed rather than kept.
const KEPT: usize = 64 * 1024;

thread_local! {
    static BYTES: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with this thread's buffer, empty. The buffer is taken out while `f` runs, so
/// a nested call gets a new one of its own rather than the one in use.
pub(crate) fn with_bytes<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut bytes = BYTES.take();
    bytes.clear();
    let result = f(&mut bytes);
    if bytes.capacity() <= KEPT {
        BYTES.set(bytes);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_call_gets_a_buffer_of_its_own() {
        with_bytes(|outer| {
            outer.extend_from_slice(b"outer");
            with_bytes(|inner| {
                assert!(inner.is_empty());
                inner.extend_from_slice(b"inner");
            });
            assert_eq!(outer.as_slice(), b"outer");
        });
        with_bytes(|again| assert!(again.is_empty()));
    }
}
