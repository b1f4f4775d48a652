//! Operation generation, before any timing, following Wiscer's workload generator.
//!
//! Keys are numbered by insertion order ("slots"); a [`Popularity`] order maps ranks to
//! slots, and a fetch (or update) picks the slot at a Zipf-distributed rank. Inserts give a
//! new slot a random rank: it takes a random rank and the key it displaces moves to a random
//! lower rank, and so on while the rank is within the head holding 90% of the probability
//! mass; deletes remove the key at a uniformly random rank, letting lower keys move up the
//! same way. A popularity shift of P% swaps each top rank, down to those holding P% of the
//! mass, with a random lower rank: the hot keys carrying P% of the mass leave the hot set,
//! replaced by formerly cold keys. Everything is drawn from one seeded generator.

use crate::rng::Rng;
use crate::workload::{KeyOrder, Workload};
use crate::zipf::{Harmonic, Zipf};
use crate::KvError;

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OpKind {
    Fetch,
    Insert,
    Delete,
    Update,
}

/// One operation: the kind, the key, and the key's slot (insertion number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub key: u64,
    pub slot: u32,
    pub kind: OpKind,
}

/// A generated workload: slots `0..initial` are loaded before the operations run.
#[derive(Debug, Clone)]
pub struct Generated {
    pub initial: u64,
    pub ops: Vec<Op>,
    /// Operation counts after which the popularity shifted.
    pub shifts: Vec<u64>,
    /// Keys present after the last operation.
    pub final_len: u64,
}

/// The share of the probability mass whose ranks inserts and deletes reshuffle (Wiscer's).
const HEAD_SHARE: f64 = 0.9;

/// Ranks → slots, with the Zipf distribution over the current number of keys.
#[derive(Debug, Clone)]
pub struct Popularity {
    ranks: Vec<u32>,
    zipf: Zipf,
    harmonic: Harmonic,
    rng: Rng,
    /// Ranks in the 90% head, and the number of keys it was computed for.
    head: (u64, u64),
}

impl Popularity {
    /// Slots `0..initial` in the given order of popularity; `None` for a bad exponent.
    pub fn new(initial: u32, exponent: f64, order: KeyOrder, mut rng: Rng) -> Option<Self> {
        let mut ranks: Vec<u32> = (0..initial).collect();
        match order {
            KeyOrder::Random => rng.shuffle(&mut ranks),
            KeyOrder::Sorted => ranks.reverse(),
        }
        Some(Popularity {
            zipf: Zipf::new(u64::from(initial).max(1), exponent)?,
            harmonic: Harmonic::new(exponent),
            ranks,
            rng,
            head: (0, u64::MAX),
        })
    }

    pub fn len(&self) -> u64 {
        self.ranks.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// Slots by rank, most popular first.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// The probability of rank `rank` (0-based).
    pub fn probability(&self, rank: u64) -> f64 {
        let s = self.zipf.exponent();
        ((rank + 1) as f64).powf(-s) / self.harmonic.value(self.len())
    }

    /// The slot of a Zipf-distributed rank (the set must not be empty).
    #[inline]
    pub fn sample(&mut self) -> u32 {
        let rank = self.zipf.sample(&mut self.rng) - 1;
        self.ranks[rank as usize]
    }

    fn resized(&mut self) {
        self.zipf.set_n(self.len());
    }

    /// Ranks in the head; recomputed when the number of keys moved by more than 0.1%.
    fn head(&mut self) -> u64 {
        let n = self.len();
        if n.abs_diff(self.head.1) > n / 1000 {
            self.head = (self.harmonic.ranks_below_share(n, HEAD_SHARE), n);
        }
        self.head.0
    }

    /// Adds `slot` at a random rank.
    pub fn insert(&mut self, slot: u32) {
        let n = self.len();
        let head = self.head();
        let mut carried = slot;
        if n > 0 {
            let mut rank = self.rng.below(n);
            while rank < head {
                std::mem::swap(&mut self.ranks[rank as usize], &mut carried);
                if rank + 1 >= n {
                    break;
                }
                rank += 1 + self.rng.below(n - 1 - rank);
            }
        }
        self.ranks.push(carried);
        self.resized();
    }

    /// Removes the key at a uniformly random rank and returns its slot (`None` if empty).
    pub fn delete(&mut self) -> Option<u32> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let head = self.head();
        let mut rank = self.rng.below(n);
        let removed = self.ranks[rank as usize];
        while rank < head && rank + 1 < n {
            let lower = rank + 1 + self.rng.below(n - 1 - rank);
            self.ranks.swap(rank as usize, lower as usize);
            rank = lower;
        }
        self.ranks.swap_remove(rank as usize);
        self.resized();
        Some(removed)
    }

    /// Shifts popularity by `percent`: the top ranks holding that share of the mass (and
    /// the rank crossing it, as Wiscer's loop does) swap with random lower ranks.
    pub fn shift(&mut self, percent: f64) {
        let n = self.len();
        if percent <= 0.0 || n < 2 {
            return;
        }
        let count = (self.harmonic.ranks_below_share(n, percent / 100.0) + 1).min(n - 1);
        for rank in 0..count {
            let lower = rank + 1 + self.rng.below(n - 1 - rank);
            self.ranks.swap(rank as usize, lower as usize);
        }
    }
}

/// Generates `workload`'s operations over `initial` keys: `key(slot)` names the key of a
/// slot, and at most `max_slots` slots exist (for real keys, the keys of the store).
pub fn generate(
    workload: &Workload,
    initial: u64,
    seed: u64,
    max_slots: u64,
    key: &dyn Fn(u64) -> u64,
) -> Result<Generated, KvError> {
    let max_slots = max_slots.min(u64::from(u32::MAX));
    if initial > max_slots {
        return Err(KvError::TooFewKeys {
            needed: initial,
            available: max_slots,
        });
    }
    let mut rng = Rng::new(seed);
    let mut popularity = Popularity::new(
        initial as u32,
        workload.zipf,
        workload.key_order,
        Rng::new(rng.next_u64()),
    )
    .ok_or(KvError::BadExponent(workload.zipf))?;
    let w = workload;
    let (fetch, insert, delete) = (w.fetch, w.fetch + w.insert, w.fetch + w.insert + w.delete);
    let last = [
        (w.update, OpKind::Update),
        (w.delete, OpKind::Delete),
        (w.insert, OpKind::Insert),
        (w.fetch, OpKind::Fetch),
    ]
    .into_iter()
    .find(|(share, _)| *share > 0.0)
    .map_or(OpKind::Fetch, |(_, kind)| kind);

    let count = usize::try_from(w.operation_count).map_err(|_| KvError::TooManyOperations)?;
    let mut ops = Vec::new();
    ops.try_reserve_exact(count)
        .map_err(|_| KvError::TooManyOperations)?;
    let mut shifts = Vec::new();
    let mut next_slot = initial;
    for i in 0..w.operation_count {
        let r = rng.next_f64();
        let mut kind = if r < fetch && w.fetch > 0.0 {
            OpKind::Fetch
        } else if r < insert && w.insert > 0.0 {
            OpKind::Insert
        } else if r < delete && w.delete > 0.0 {
            OpKind::Delete
        } else if w.update > 0.0 {
            OpKind::Update
        } else {
            last
        };
        if popularity.is_empty() {
            kind = OpKind::Insert;
        }
        let slot = match kind {
            OpKind::Fetch | OpKind::Update => popularity.sample(),
            OpKind::Insert => {
                if next_slot >= max_slots {
                    return Err(KvError::TooFewKeys {
                        needed: next_slot + 1,
                        available: max_slots,
                    });
                }
                let slot = next_slot as u32;
                next_slot += 1;
                popularity.insert(slot);
                slot
            }
            OpKind::Delete => popularity.delete().unwrap_or(0),
        };
        ops.push(Op {
            key: key(u64::from(slot)),
            slot,
            kind,
        });
        if let Some(frequency) = w.dist_shift_freq {
            if (i + 1) % frequency == 0 && w.dist_shift_prct > 0.0 {
                popularity.shift(w.dist_shift_prct);
                shifts.push(i + 1);
            }
        }
    }
    Ok(Generated {
        initial,
        ops,
        shifts,
        final_len: popularity.len(),
    })
}
