//! Vectors of fixed-size numbers (ids, edges, offsets) on the wire as one block of
//! little-endian bytes.
//!
//! Serde writes a `Vec<u32>` as a sequence, and bincode (what timely's exchange and the
//! cluster's own connections speak) writes, sizes and reads each element on its own call:
//! in the load of LUBM-100 by two processes, serialising and reading the exchanged ids,
//! edges and terms element by element took 8 % of the processes' CPU. Marked
//! `#[serde(with = "quiver_model::wire::block")]`, a vector is written as bytes: its length,
//! then its elements as they lie in memory (one copy) where the machine is little-endian,
//! and read back with one copy. `wire::blocks` does the same for a vector of such vectors
//! (a table's columns). The bytes are the same on every machine: little-endian.
//!
//! A format without bytes of its own (JSON) gets them as a sequence of numbers, and reads
//! them back from one.

use std::fmt;
use std::marker::PhantomData;

use bytemuck::Pod;
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number, or an array of numbers, that travels as its little-endian bytes.
pub trait Fixed: Pod {
    /// `self` with its numbers' bytes in little-endian order, or the value whose
    /// little-endian form `self` is (one swap both ways; on a little-endian machine,
    /// itself).
    fn swap_le(self) -> Self;
}

macro_rules! fixed_number {
    ($($t:ty),*) => {$(
        impl Fixed for $t {
            #[inline]
            fn swap_le(self) -> Self {
                <$t>::to_le(self)
            }
        }
    )*};
}
fixed_number!(u8, u16, u32, u64);

impl<T: Fixed, const N: usize> Fixed for [T; N]
where
    [T; N]: Pod,
{
    #[inline]
    fn swap_le(self) -> Self {
        self.map(T::swap_le)
    }
}

/// `values` as the bytes they travel as.
fn write<T: Fixed, S: Serializer>(values: &[T], serializer: S) -> Result<S::Ok, S::Error> {
    if cfg!(target_endian = "little") {
        serializer.serialize_bytes(bytemuck::cast_slice(values))
    } else {
        let le: Vec<T> = values.iter().map(|&v| v.swap_le()).collect();
        serializer.serialize_bytes(bytemuck::cast_slice(&le))
    }
}

/// The values whose little-endian bytes are `bytes`.
fn read<T: Fixed, E: serde::de::Error>(bytes: &[u8]) -> Result<Vec<T>, E> {
    let size = std::mem::size_of::<T>();
    if !bytes.len().is_multiple_of(size) {
        return Err(E::custom(format_args!(
            "a block of {} bytes is no whole number of {size}-byte values",
            bytes.len()
        )));
    }
    let mut values = vec![T::zeroed(); bytes.len() / size];
    bytemuck::cast_slice_mut::<T, u8>(&mut values).copy_from_slice(bytes);
    if cfg!(target_endian = "big") {
        values.iter_mut().for_each(|v| *v = v.swap_le());
    }
    Ok(values)
}

/// Reads one block, from bytes or from a sequence of byte values.
struct BlockVisitor<T>(PhantomData<T>);

impl<'de, T: Fixed> Visitor<'de> for BlockVisitor<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a block of {}-byte values", std::mem::size_of::<T>())
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        read(bytes)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        read(&bytes)
    }
}

/// `#[serde(with = "quiver_model::wire::block")]` for a `Vec<T>` of [`Fixed`] values.
pub mod block {
    use super::*;

    pub fn serialize<T: Fixed, S: Serializer>(
        values: &[T],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        write(values, serializer)
    }

    pub fn deserialize<'de, T: Fixed, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_bytes(BlockVisitor(PhantomData))
    }
}

/// One block, by reference when written, owned when read.
struct Block<'a, T>(&'a [T]);

impl<T: Fixed> Serialize for Block<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write(self.0, serializer)
    }
}

struct OwnedBlock<T>(Vec<T>);

impl<'de, T: Fixed> Deserialize<'de> for OwnedBlock<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        block::deserialize(deserializer).map(OwnedBlock)
    }
}

/// `#[serde(with = "quiver_model::wire::blocks")]` for a `Vec<Vec<T>>` of [`Fixed`]
/// values: a sequence of blocks.
pub mod blocks {
    use super::*;

    pub fn serialize<T: Fixed, S: Serializer>(
        vectors: &[Vec<T>],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(vectors.len()))?;
        for vector in vectors {
            seq.serialize_element(&Block(vector))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, T: Fixed, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Vec<T>>, D::Error> {
        let blocks = Vec::<OwnedBlock<T>>::deserialize(deserializer)?;
        Ok(blocks.into_iter().map(|b| b.0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        head: u32,
        #[serde(with = "block")]
        ids: Vec<u32>,
        #[serde(with = "block")]
        refs: Vec<u64>,
        #[serde(with = "block")]
        edges: Vec<[u64; 4]>,
        #[serde(with = "block")]
        bytes: Vec<u8>,
        #[serde(with = "blocks")]
        columns: Vec<Vec<u32>>,
        tail: String,
    }

    fn sample() -> Sample {
        Sample {
            head: 7,
            ids: vec![0, 1, u32::MAX, 0x0102_0304],
            refs: vec![u64::MAX, 3 << 32 | 9],
            edges: vec![[1, 2, 3, 4], [u64::MAX, 0, 5, 6]],
            bytes: b"terms".to_vec(),
            columns: vec![vec![], vec![5, 6, 7], vec![8]],
            tail: "end".into(),
        }
    }

    /// Bincode carries each vector as its length and its little-endian bytes, and reads
    /// back what was written.
    #[test]
    fn bincode_carries_blocks_of_little_endian_bytes() {
        let bytes = bincode::serialize(&sample()).unwrap();
        // head, then the ids' length and their bytes.
        assert_eq!(&bytes[..4], &7u32.to_le_bytes());
        assert_eq!(&bytes[4..12], &16u64.to_le_bytes());
        assert_eq!(&bytes[12..16], &0u32.to_le_bytes());
        assert_eq!(&bytes[24..28], &0x0102_0304u32.to_le_bytes());
        let back: Sample = bincode::deserialize(&bytes).unwrap();
        assert_eq!(back, sample());
        // As many bytes as element by element: the same length prefix, then the values.
        let ids: Vec<u32> = (0..1000).collect();
        let plain = bincode::serialized_size(&ids).unwrap();
        let wrapped = bincode::serialized_size(&Block(&ids)).unwrap();
        assert_eq!(plain, wrapped);
    }

    /// JSON, which has no bytes, carries them as numbers and reads them back.
    #[test]
    fn json_reads_back_what_it_wrote() {
        let text = serde_json::to_string(&sample()).unwrap();
        let back: Sample = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample());
    }

    /// Bytes that are no whole number of values are refused, not cut.
    #[test]
    fn a_block_of_a_partial_value_is_refused() {
        let read_u32s = |bytes: usize| read::<u32, serde::de::value::Error>(&vec![0; bytes]);
        assert_eq!(read_u32s(8).unwrap(), vec![0, 0]);
        let error = read_u32s(7).unwrap_err().to_string();
        assert!(error.contains("7 bytes"), "{error}");
        let mut bytes = bincode::serialize(&sample()).unwrap();
        // The ids' length, one byte short of their last value.
        bytes[4] = 15;
        assert!(bincode::deserialize::<Sample>(&bytes).is_err());
    }
}
