//! The crc32 of a section, computed on every core: large sections in parts whose crc32s are
//! combined. Saving and opening a store each read every byte once for it, and on one
//! thread it was the largest part of opening one.

/// Bytes whose crc32 one thread computes at a time: large enough that combining the parts
/// costs nothing beside them.
const CRC_PART: usize = 4 << 20;

/// The crc32 of `bytes`, its parts computed on the rayon pool's threads and combined.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    use rayon::prelude::*;
    if bytes.len() <= CRC_PART {
        return crc32fast::hash(bytes);
    }
    let parts: Vec<crc32fast::Hasher> = bytes
        .par_chunks(CRC_PART)
        .map(|part| {
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(part);
            hasher
        })
        .collect();
    let mut whole = crc32fast::Hasher::new();
    for part in &parts {
        whole.combine(part);
    }
    whole.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crc_computed_in_parts_is_the_crc_of_the_whole() {
        // Odd lengths around the parts' size, and one part exactly.
        for len in [
            0,
            1,
            CRC_PART - 1,
            CRC_PART,
            CRC_PART + 1,
            3 * CRC_PART + 12_345,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            assert_eq!(crc32(&bytes), crc32fast::hash(&bytes), "{len} bytes");
        }
    }
}
