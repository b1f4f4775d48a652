//! Timely's network buffers, in memory given back to the system once dropped.
//!
//! Timely serialises what workers send to other processes, and reads what they receive,
//! into byte slabs (`BytesSlab`): one per direction and peer, 1 MiB at first and doubled
//! whenever a message does not fit. A slab keeps every buffer it made for reuse, and by
//! default allocates them on the heap. Both made a cluster's processes hold the largest
//! burst of messages they ever had in flight until they exited: a load of LUBM-100 on
//! four processes left 24–48 MiB per process in slabs, a quarter of its loading peak,
//! and glibc kept the buffers' pages resident after they were freed.
//!
//! [`hooks`] gives timely a refill that maps each buffer apart (anonymous memory: its
//! pages are resident only once written, and return to the system when it is dropped) and
//! keeps at most [`SPARE`] unused buffers per slab. [`network_buffer_bytes`] tells how
//! much the slabs of this process hold. [`OneEach`] keeps exchanges of large records (a
//! load's messages, the `rdf:type` memberships a cluster exchanges as it starts) from
//! gathering them into messages of megabytes; [`Bounded`] does so for the queries'
//! exchange, whose records range from bytes to hundreds of KiB.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use timely::container::{ContainerBuilder, LengthPreservingContainerBuilder, PushInto};
use timely_communication::allocator::zero_copy::bytes_slab::BytesRefill;
use timely_communication::Hooks;

/// Unused buffers a slab keeps for its next messages.
const SPARE: usize = 2;

/// Bytes held by this process's network buffers.
static HELD: AtomicU64 = AtomicU64::new(0);

/// The most bytes they held at once.
static PEAK: AtomicU64 = AtomicU64::new(0);

/// Bytes this process's network buffers hold now (mapped, whether written or not).
pub fn network_buffer_bytes() -> u64 {
    HELD.load(Ordering::Relaxed)
}

/// The most bytes this process's network buffers held at once since it started: what
/// the largest burst of messages in flight took.
pub fn network_buffer_peak_bytes() -> u64 {
    PEAK.load(Ordering::Relaxed)
}

/// Timely's hooks with mapped buffers and a bounded spare stash.
pub(crate) fn hooks() -> Hooks {
    Hooks {
        refill: BytesRefill {
            logic: Arc::new(|size| Box::new(Mapped::new(size))),
            limit: Some(SPARE),
        },
        ..Hooks::default()
    }
}

/// One buffer: an anonymous map, or a heap vector where a map cannot be made.
enum Mapped {
    Map(memmap2::MmapMut),
    Heap(Vec<u8>),
}

impl Mapped {
    fn new(size: usize) -> Self {
        let held = HELD.fetch_add(size as u64, Ordering::Relaxed) + size as u64;
        PEAK.fetch_max(held, Ordering::Relaxed);
        match memmap2::MmapMut::map_anon(size) {
            Ok(map) => Mapped::Map(map),
            Err(_) => Mapped::Heap(vec![0; size]),
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        HELD.fetch_sub(self.len() as u64, Ordering::Relaxed);
    }
}

impl Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Mapped::Map(map) => map,
            Mapped::Heap(vec) => vec,
        }
    }
}

impl DerefMut for Mapped {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Mapped::Map(map) => map,
            Mapped::Heap(vec) => vec,
        }
    }
}

/// A container builder that ships each record as a container of its own, for an exchange
/// whose records are batches already (hundreds of KiB each). Timely's default builder
/// gathers ~8 KiB of record headers (about a hundred such batches) into one container,
/// which goes over the network as one message of megabytes, and a slab that must hold it
/// doubles its buffers for good.
pub struct OneEach<T> {
    pending: VecDeque<Vec<T>>,
    current: Option<Vec<T>>,
}

impl<T> Default for OneEach<T> {
    fn default() -> Self {
        Self {
            pending: VecDeque::new(),
            current: None,
        }
    }
}

impl<T> PushInto<T> for OneEach<T> {
    fn push_into(&mut self, item: T) {
        self.pending.push_back(vec![item]);
    }
}

impl<T> ContainerBuilder for OneEach<T> {
    type Container = Vec<T>;

    fn extract(&mut self) -> Option<&mut Vec<T>> {
        self.current = self.pending.pop_front();
        self.current.as_mut()
    }

    fn finish(&mut self) -> Option<&mut Vec<T>> {
        self.extract()
    }
}

impl<T> LengthPreservingContainerBuilder for OneEach<T> {}

/// The most bytes of records [`Bounded`] gathers into one container (one record larger
/// than this goes alone): with a record's header and a container's, under a slab's first
/// buffer of 1 MiB.
pub const CONTAINER_BYTES: usize = 512 << 10;

/// A record that tells about how many bytes it takes serialized.
pub trait Weighed {
    fn wire_bytes(&self) -> usize;
}

/// A container builder that gathers records into containers of at most
/// [`CONTAINER_BYTES`] (or of timely's default length, for small records), for an exchange
/// whose records range from a few bytes to hundreds of KiB: light queries' messages still
/// travel together, heavy ones' pieces never make a container of megabytes.
pub struct Bounded<T> {
    current: Vec<T>,
    bytes: usize,
    pending: VecDeque<Vec<T>>,
    shipped: Option<Vec<T>>,
}

impl<T> Default for Bounded<T> {
    fn default() -> Self {
        Self {
            current: Vec::new(),
            bytes: 0,
            pending: VecDeque::new(),
            shipped: None,
        }
    }
}

impl<T> Bounded<T> {
    fn seal(&mut self) {
        if !self.current.is_empty() {
            self.pending.push_back(std::mem::take(&mut self.current));
            self.bytes = 0;
        }
    }
}

impl<T: Weighed> PushInto<T> for Bounded<T> {
    fn push_into(&mut self, item: T) {
        let bytes = item.wire_bytes();
        if self.bytes + bytes > CONTAINER_BYTES {
            self.seal();
        }
        if self.current.capacity() == 0 {
            // The container shipped last, emptied by timely, takes the records again.
            self.current = self.shipped.take().unwrap_or_default();
            self.current.clear();
        }
        self.current.push(item);
        self.bytes += bytes;
        if self.current.len() >= timely::container::buffer::default_capacity::<T>() {
            self.seal();
        }
    }
}

impl<T> ContainerBuilder for Bounded<T> {
    type Container = Vec<T>;

    fn extract(&mut self) -> Option<&mut Vec<T>> {
        self.shipped = Some(self.pending.pop_front()?);
        self.shipped.as_mut()
    }

    fn finish(&mut self) -> Option<&mut Vec<T>> {
        self.seal();
        self.extract()
    }
}

impl<T> LengthPreservingContainerBuilder for Bounded<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_counted_while_they_live_and_writable() {
        let hooks = hooks();
        assert_eq!(hooks.refill.limit, Some(SPARE));
        let before = network_buffer_bytes();
        let mut buffer = (hooks.refill.logic)(1 << 20);
        assert_eq!(buffer.len(), 1 << 20);
        assert!(network_buffer_bytes() >= before + (1 << 20));
        buffer[0] = 7;
        buffer[(1 << 20) - 1] = 9;
        assert_eq!((buffer[0], buffer[(1 << 20) - 1]), (7, 9));
        drop(buffer);
        // No other test of this binary makes network buffers.
        assert_eq!(network_buffer_bytes(), before);
    }

    #[test]
    fn one_each_ships_every_record_alone_and_in_order() {
        let mut builder = OneEach::default();
        for record in 0..3 {
            builder.push_into(record);
        }
        let mut shipped = Vec::new();
        while let Some(container) = builder.extract() {
            shipped.push(std::mem::take(container));
        }
        assert_eq!(shipped, vec![vec![0], vec![1], vec![2]]);
        assert!(builder.finish().is_none());
    }

    struct Sized(usize);

    impl Weighed for Sized {
        fn wire_bytes(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn bounded_gathers_small_records_and_never_a_container_past_its_bound() {
        let mut builder = Bounded::default();
        // Small records, then large ones, then one past the bound alone.
        let sizes = [
            10,
            20,
            30,
            200 << 10,
            200 << 10,
            200 << 10,
            100,
            CONTAINER_BYTES + 1,
            5,
        ];
        let mut shipped: Vec<Vec<usize>> = Vec::new();
        for size in sizes {
            builder.push_into(Sized(size));
            while let Some(container) = builder.extract() {
                shipped.push(container.drain(..).map(|s| s.0).collect());
            }
        }
        while let Some(container) = builder.finish() {
            shipped.push(container.drain(..).map(|s| s.0).collect());
        }
        assert_eq!(shipped.concat(), sizes, "every record once, in order");
        for container in &shipped {
            let bytes: usize = container.iter().sum();
            assert!(
                bytes <= CONTAINER_BYTES || container.len() == 1,
                "{container:?}"
            );
        }
        // The small ones and the first two large travel together.
        assert_eq!(shipped[0], vec![10, 20, 30, 200 << 10, 200 << 10]);
        assert!(builder.finish().is_none());
    }
}
