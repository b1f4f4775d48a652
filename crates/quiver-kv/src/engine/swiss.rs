//! The `hashbrown` crate's SwissTable (with its default hasher, foldhash) as an engine: the
//! general-purpose hash map that Rust's standard library is built on.

use super::{Engine, Value};

/// `hashbrown::HashMap<u64, V>`.
#[derive(Debug, Clone, Default)]
pub struct Hashbrown<V> {
    map: hashbrown::HashMap<u64, V>,
}

impl<V: Value> Hashbrown<V> {
    pub fn new(capacity: usize) -> Self {
        Hashbrown {
            map: hashbrown::HashMap::with_capacity(capacity),
        }
    }
}

impl<V: Value> Engine<V> for Hashbrown<V> {
    fn name(&self) -> &'static str {
        "hashbrown"
    }

    fn insert(&mut self, key: u64, value: V) {
        self.map.insert(key, value);
    }

    fn delete(&mut self, key: u64) -> bool {
        self.map.remove(&key).is_some()
    }

    #[inline]
    fn fetch(&mut self, key: u64) -> Option<u64> {
        self.map.get(&key).map(Value::digest)
    }

    fn get(&mut self, key: u64) -> Option<V> {
        self.map.get(&key).cloned()
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}
