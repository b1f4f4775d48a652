//! The payload of a log record: the change sets of one commit, in a compact binary form.
//!
//! Little-endian throughout; ids take `quiver_model::ID_BYTES` bytes each (the log file's
//! header records the width, so a log is never read with ids of another width):
//!
//! ```text
//! u32 change sets, then per change set:
//!   u64 base_terms
//!   u32 new terms,      each: u32 length, bytes (the term encoding of quiver-model)
//!   u32 dropped graphs, each: id
//!   u32 deletes,        each: quad
//!   u32 inserts,        each: quad
//!   u32 created graphs, each: id
//! quad: u8 0 (default graph) or 1 (named), id subject, id predicate, id object[, id graph]
//! ```
//!
//! Decoding checks every length against the bytes left, so a damaged payload (which the
//! record's checksum should already have caught) is an error, never a panic or a huge
//! allocation.

use quiver_model::{Id, ID_BYTES};
use quiver_store::{ChangeSet, Quad};

/// Encodes `sets` onto `out`; refuses (writing nothing) a list with more than `u32::MAX`
/// items of one kind.
pub fn encode(sets: &[ChangeSet], out: &mut Vec<u8>) -> Result<(), String> {
    let too_many = |what: &str, n: usize| {
        (n > u32::MAX as usize).then(|| format!("{n} {what} in one record (at most {})", u32::MAX))
    };
    for set in sets {
        let counts = [
            ("new terms", set.new_terms.len()),
            ("dropped graphs", set.dropped_graphs.len()),
            ("deletes", set.deletes.len()),
            ("inserts", set.inserts.len()),
            ("created graphs", set.created_graphs.len()),
        ];
        if let Some(error) = counts.iter().find_map(|&(what, n)| too_many(what, n)) {
            return Err(error);
        }
        if let Some(term) = set.new_terms.iter().find(|t| t.len() > u32::MAX as usize) {
            return Err(format!("a term of {} bytes", term.len()));
        }
    }
    if let Some(error) = too_many("change sets", sets.len()) {
        return Err(error);
    }
    // The record's size, so that it is written without growing the buffer over and over
    // (a 10,000-triple commit is about a megabyte); quads over-estimated at their widest.
    let size: usize = sets
        .iter()
        .map(|set| {
            let terms: usize = set.new_terms.iter().map(|term| 4 + term.len()).sum();
            let quads = set.deletes.len() + set.inserts.len();
            let graphs = set.dropped_graphs.len() + set.created_graphs.len();
            32 + terms + quads * (4 * ID_BYTES + 1) + graphs * ID_BYTES
        })
        .sum();
    out.reserve(4 + size);
    put_u32(out, sets.len());
    for set in sets {
        out.extend_from_slice(&set.base_terms.to_le_bytes());
        put_u32(out, set.new_terms.len());
        for term in &set.new_terms {
            put_u32(out, term.len());
            out.extend_from_slice(term);
        }
        put_ids(out, &set.dropped_graphs);
        put_quads(out, &set.deletes);
        put_quads(out, &set.inserts);
        put_ids(out, &set.created_graphs);
    }
    Ok(())
}

/// Decodes what [`encode`] wrote (interning maps rebuilt, ready for `Store::apply`).
pub fn decode(bytes: &[u8]) -> Result<Vec<ChangeSet>, String> {
    let mut reader = Reader { bytes, at: 0 };
    let count = reader.count(8 + 5 * 4)?;
    let mut sets = Vec::with_capacity(count);
    for _ in 0..count {
        let mut set = ChangeSet::default();
        set.base_terms = reader.u64()?;
        let terms = reader.count(4)?;
        set.new_terms.reserve(terms);
        for _ in 0..terms {
            let length = reader.count(1)?;
            set.new_terms.push(reader.take(length)?.into());
        }
        set.dropped_graphs = reader.ids()?;
        set.deletes = reader.quads()?;
        set.inserts = reader.quads()?;
        set.created_graphs = reader.ids()?;
        set.reindex();
        sets.push(set);
    }
    if reader.at != bytes.len() {
        return Err(format!(
            "{} bytes after the last change set",
            bytes.len() - reader.at
        ));
    }
    Ok(sets)
}

/// Writes a count or length `encode` has checked.
fn put_u32(out: &mut Vec<u8>, value: usize) {
    out.extend_from_slice(&(value as u32).to_le_bytes());
}

fn put_id(out: &mut Vec<u8>, id: Id) {
    out.extend_from_slice(&id.to_le_bytes());
}

fn put_ids(out: &mut Vec<u8>, ids: &[Id]) {
    put_u32(out, ids.len());
    for &id in ids {
        put_id(out, id);
    }
}

fn put_quads(out: &mut Vec<u8>, quads: &[Quad]) {
    put_u32(out, quads.len());
    for quad in quads {
        out.push(u8::from(quad.graph.is_some()));
        put_id(out, quad.subject);
        put_id(out, quad.predicate);
        put_id(out, quad.object);
        if let Some(graph) = quad.graph {
            put_id(out, graph);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, length: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(length)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    /// A count of items of at least `item_bytes` bytes each, checked against the bytes
    /// left.
    fn count(&mut self, item_bytes: usize) -> Result<usize, String> {
        let at = self.at;
        let count = self.u32()? as usize;
        if count.saturating_mul(item_bytes) > self.bytes.len() - self.at {
            return Err(format!("count {count} at byte {at} exceeds the record"));
        }
        Ok(count)
    }

    fn id(&mut self) -> Result<Id, String> {
        let bytes = self.take(ID_BYTES)?;
        Ok(Id::from_le_bytes(bytes.try_into().unwrap()))
    }

    fn ids(&mut self) -> Result<Vec<Id>, String> {
        let count = self.count(ID_BYTES)?;
        (0..count).map(|_| self.id()).collect()
    }

    fn quads(&mut self) -> Result<Vec<Quad>, String> {
        let count = self.count(1 + 3 * ID_BYTES)?;
        let mut quads = Vec::with_capacity(count);
        for _ in 0..count {
            let at = self.at;
            let named = match self.take(1)?[0] {
                0 => false,
                1 => true,
                tag => return Err(format!("bad graph tag {tag} at byte {at}")),
            };
            let (subject, predicate, object) = (self.id()?, self.id()?, self.id()?);
            let graph = if named { Some(self.id()?) } else { None };
            quads.push(Quad {
                subject,
                predicate,
                object,
                graph,
            });
        }
        Ok(quads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<ChangeSet> {
        let quad = |s, p, o, g| Quad {
            subject: s,
            predicate: p,
            object: o,
            graph: g,
        };
        let mut first = ChangeSet::default();
        first.base_terms = 7;
        first.new_terms = vec![b"\x01http://a".as_slice().into(), Vec::new().into()];
        first.dropped_graphs = vec![3];
        first.deletes = vec![quad(1, 2, 3, None), quad(4, 5, 6, Some(2))];
        first.inserts = vec![quad(7, 8, 9, Some(1))];
        first.created_graphs = vec![5, 6];
        first.reindex();
        vec![first, ChangeSet::default()]
    }

    #[test]
    fn round_trip() {
        let sets = sample();
        let mut bytes = Vec::new();
        encode(&sets, &mut bytes).unwrap();
        assert_eq!(decode(&bytes).unwrap(), sets);
    }

    #[test]
    fn every_truncation_and_extension_is_an_error() {
        let mut bytes = Vec::new();
        encode(&sample(), &mut bytes).unwrap();
        for length in 0..bytes.len() {
            assert!(decode(&bytes[..length]).is_err(), "length {length}");
        }
        bytes.push(0);
        assert!(decode(&bytes).is_err());
    }

    #[test]
    fn huge_counts_are_refused_without_allocating() {
        let bytes = [0xff, 0xff, 0xff, 0xff];
        assert!(decode(&bytes).unwrap_err().contains("exceeds"));
    }
}
