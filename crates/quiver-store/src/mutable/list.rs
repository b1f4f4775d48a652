//! [`List`]: an immutable neighbour list as the delta stores it.
//!
//! Most lists a write produces are short (a key/value pair's value, a vertex's type, its
//! advisor), and a delta entry that points to a heap list costs an allocation per write, a
//! dependent cache miss per read, and a free per entry when a compaction drops the delta.
//! So a list of up to [`INLINE`] ids is stored in the entry itself (16 bytes of ids), and
//! only a longer one is shared behind an `Arc`. Either way a clone is cheap (a copy, or a
//! reference count) and the list never changes once made, which is what lets readers
//! hold one while writers publish its successor.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use quiver_model::Id;

/// Ids a list holds without a heap allocation.
const INLINE: usize = 16 / std::mem::size_of::<Id>();

/// An immutable list of ids; derefs to `&[Id]`.
#[derive(Clone)]
pub struct List(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, ids: [Id; INLINE] },
    Shared(Arc<[Id]>),
}

impl List {
    /// The empty list (a key without neighbours).
    pub const fn empty() -> Self {
        List(Repr::Inline {
            len: 0,
            ids: [0; INLINE],
        })
    }

    /// Whether the ids live in the list itself rather than on the heap.
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

impl Default for List {
    fn default() -> Self {
        List::empty()
    }
}

impl Deref for List {
    type Target = [Id];

    #[inline]
    fn deref(&self) -> &[Id] {
        match &self.0 {
            Repr::Inline { len, ids } => &ids[..*len as usize],
            Repr::Shared(ids) => ids,
        }
    }
}

impl AsRef<[Id]> for List {
    fn as_ref(&self) -> &[Id] {
        self
    }
}

impl From<&[Id]> for List {
    #[inline]
    fn from(slice: &[Id]) -> Self {
        if slice.len() <= INLINE {
            let mut ids = [0; INLINE];
            ids[..slice.len()].copy_from_slice(slice);
            List(Repr::Inline {
                len: slice.len() as u8,
                ids,
            })
        } else {
            List(Repr::Shared(slice.into()))
        }
    }
}

impl<const N: usize> From<[Id; N]> for List {
    fn from(ids: [Id; N]) -> Self {
        List::from(&ids[..])
    }
}

impl From<Vec<Id>> for List {
    fn from(ids: Vec<Id>) -> Self {
        if ids.len() <= INLINE {
            List::from(&ids[..])
        } else {
            List(Repr::Shared(ids.into()))
        }
    }
}

impl From<Arc<[Id]>> for List {
    /// Keeps a long list's allocation; copies a short one inline.
    fn from(ids: Arc<[Id]>) -> Self {
        if ids.len() <= INLINE {
            List::from(&ids[..])
        } else {
            List(Repr::Shared(ids))
        }
    }
}

impl From<&List> for Arc<[Id]> {
    fn from(list: &List) -> Self {
        match &list.0 {
            Repr::Shared(ids) => ids.clone(),
            Repr::Inline { .. } => Arc::from(&list[..]),
        }
    }
}

impl FromIterator<Id> for List {
    fn from_iter<I: IntoIterator<Item = Id>>(iter: I) -> Self {
        iter.into_iter().collect::<Vec<Id>>().into()
    }
}

impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for List {}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_as_small_as_a_shared_slice_with_its_tag() {
        assert_eq!(std::mem::size_of::<List>(), 24);
    }

    #[test]
    fn every_length_round_trips_through_each_constructor() {
        for len in 0..=INLINE + 3 {
            let ids: Vec<Id> = (0..len as Id).map(|i| i * 7 + 1).collect();
            let shared: Arc<[Id]> = ids.clone().into();
            let lists = [
                List::from(&ids[..]),
                List::from(ids.clone()),
                List::from(shared.clone()),
                ids.iter().copied().collect(),
            ];
            for list in lists {
                assert_eq!(&list[..], &ids[..], "length {len}");
                assert_eq!(list.is_inline(), len <= INLINE, "length {len}");
                assert_eq!(&Arc::<[Id]>::from(&list)[..], &ids[..]);
                assert_eq!(list.clone(), list);
            }
        }
        assert!(List::empty().is_empty());
        assert_eq!(List::default(), List::from([]));
        assert_ne!(List::from([1, 2]), List::from([1, 2, 3]));
    }
}
