//! Plans remembered per pattern shape, and replayed for the next query of that shape.
//!
//! Light queries mostly come from templates (a page per resource, a form, the LUBM
//! emulator's mix) whose basic graph patterns differ only in a constant. Planning each
//! anew tries every start and grows each greedily; for two to five patterns that is most
//! of what such a query costs besides its parse. Yet the planner reads of a constant only
//! its number of neighbours in each pattern it appears in: two queries whose patterns have
//! the same variables and predicates, and whose constants have about as many neighbours,
//! get the same order.
//!
//! So each thread remembers the order of steps it chose per [`Key`]: the patterns with
//! their variables, predicates and the classes of `rdf:type` patterns as they are, and each
//! other constant replaced by the power of two below its number of neighbours there (0
//! for none), with the store's version, view and graph, the variables bound beforehand and
//! the power of two below the seed rows. A later planning with the same key replays that
//! order ([`Estimator::replay`]): each step's rows are estimated as a planning would for
//! this query's constants, so only the choice of order is shared, never an estimate. A
//! constant with no neighbours keys apart from all others, so a template whose constant
//! matches nothing does not reuse the order made for one that does.
//!
//! On a cluster's coordinator the cost also counts the rows moved between partitions,
//! which depends on which positions hold the same constant (its rows are at one owner) and
//! on whether a constant is a class (its instances are on every partition): the key says
//! both, and how the store is spread. The sizes of records another process owns are those
//! the planning would read: known, or the guess of a recording planning, which records
//! them as lacked (so the prepare asks them, and plans again with them known).

use std::cell::{Cell, RefCell};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use quiver_store::{Direction, Store};
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;

use super::{Estimator, State, StepKind};
use crate::bgp::{Bgp, Node, Pred};
use crate::dataset::GraphRef;
use crate::table::VarId;

/// Keys a thread remembers at most; past them it starts again.
const REMEMBERED: usize = 256;

/// What decides a plan, with each constant's identity reduced to the size class of its
/// neighbours, written as words ([`Words`]): the store's version, view and graph, how it is
/// spread, the variables bound beforehand, the seed rows' size class, each pattern's
/// [`Slot`]s and the equalities.
///
/// Why words and not the fields themselves: a thread's map of keys is looked up at every
/// planning, between executions that walk the index and so evict it from the caches. With
/// the patterns, bound variables and equalities in vectors of their own, comparing a key
/// read up to four blocks of the heap besides the map's entry, and building one allocated
/// them (4.3 % of the LUBM mix's processor time went to comparing keys, stalled on
/// memory). The words of a template's key fit in the entry (up to [`WORDS`], else on the
/// heap), are compared as one run, and hashed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    hash: u64,
    words: Words,
}

/// Words a key holds in place: a template of five patterns takes about 30.
const WORDS: usize = 32;
type Words = SmallVec<[u64; WORDS]>;

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// One position of a pattern in a [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Var(VarId),
    Predicate(quiver_model::PredId),
    /// The object of an `rdf:type` pattern: the class itself decides its size.
    Class(quiver_model::Id),
    /// Another constant: the size class of its neighbours in the pattern, the first
    /// position (pattern × 3 + place) that holds the same constant, and whether it is a
    /// class.
    Sized(u8, usize, bool),
    Absent,
}

/// A slot's word: its kind in bits 0–3, a class flag in bit 4 (`Sized`), the mark of a
/// value in the next word in bit 5, its size class in bits 8–15, its value in bits 16–63
/// when the value fits them.
const WIDE: u64 = 1 << 5;

impl Slot {
    /// Appends the slot to `words`, one word or, for a value of more than 48 bits, two.
    /// Each slot's first word tells its kind and whether a second follows, so that two
    /// keys' words are equal exactly when their slots are.
    fn write(self, words: &mut Words) {
        let (head, value) = match self {
            Slot::Var(v) => (1, v as u64),
            Slot::Predicate(p) => (2, u64::from(p)),
            Slot::Class(c) => (3, u64::from(c)),
            Slot::Sized(size, first, class) => (
                4 | u64::from(class) << 4 | u64::from(size) << 8,
                first as u64,
            ),
            Slot::Absent => (5, 0),
        };
        if value >> 48 == 0 {
            words.push(head | value << 16);
        } else {
            words.push(head | WIDE);
            words.push(value);
        }
    }
}

/// The power of two below `size`, plus one (0 for nothing).
fn size_class(size: f64) -> u8 {
    if size < 1.0 {
        0
    } else {
        1 + size.log2().min(250.0) as u8
    }
}

/// A plan's order of steps: each step's pattern and how it runs.
type Order = Rc<[(usize, StepKind)]>;

thread_local! {
    static PLANS: RefCell<FxHashMap<Key, Order>> = RefCell::new(FxHashMap::default());
    static DISABLED: Cell<bool> = const { Cell::new(false) };
}

impl Key {
    /// The key of planning `bgp` with `bound` variables bound by `seed_rows` rows, where
    /// plans may be remembered: on one of the store's own graphs (not a merge built for
    /// one query).
    pub(crate) fn new(
        estimator: &Estimator,
        bgp: &Bgp,
        bound: &[VarId],
        seed_rows: f64,
    ) -> Option<Self> {
        let store: &Store = estimator.store;
        if DISABLED.with(Cell::get) {
            return None;
        }
        let graph = crate::degree::graph_ref(store, estimator.graph)?;
        let (graph_kind, graph_id) = match graph {
            GraphRef::Default => (0, 0),
            GraphRef::Named(id) => (1, u64::from(id)),
            GraphRef::Missing => (2, 0),
            GraphRef::Merged => (3, 0),
        };
        let view = match store.view() {
            quiver_store::View::Asserted => 0,
            quiver_store::View::Entailed => 1,
        };
        let spread = &estimator.spread;
        let mut words = Words::new();
        words.push(store.version());
        words.push(
            view | graph_kind << 8
                | u64::from(spread.types_everywhere) << 16
                | u64::from(size_class(seed_rows)) << 24
                | u64::from(spread.partitions) << 32,
        );
        words.push(graph_id);
        words.push(spread.replicated.len() as u64);
        words.extend(spread.replicated.iter().map(|&p| u64::from(p)));
        words.push(bound.len() as u64);
        words.extend(bound.iter().map(|&v| v as u64));
        words.push(bgp.equalities.len() as u64);
        for &(a, b) in &bgp.equalities {
            words.extend([a as u64, b as u64]);
        }
        words.push(bgp.patterns.len() as u64);
        for_each_slot(estimator, bgp, |slot| slot.write(&mut words));
        let mut hasher = FxHasher::default();
        words.hash(&mut hasher);
        Some(Self {
            hash: hasher.finish(),
            words,
        })
    }
}

/// Each pattern's three slots, in order (subject, predicate, object), given to `f`.
fn for_each_slot(estimator: &Estimator, bgp: &Bgp, mut f: impl FnMut(Slot)) {
    let store: &Store = estimator.store;
    let rdf_type = store.rdf_type();
    // Each constant's first position, so that repeats key as repeats.
    let mut seen: SmallVec<[(quiver_model::Id, usize); 8]> = SmallVec::new();
    let mut node = |node: Node, predicate: Pred, direction: Direction, at: usize| match node {
        Node::Var(v) => Slot::Var(v),
        Node::Absent => Slot::Absent,
        Node::Const(c) => match predicate {
            Pred::Const(p) if direction == Direction::In && Some(p) == rdf_type => Slot::Class(c),
            _ => {
                let first = match seen.iter().find(|(d, _)| *d == c) {
                    Some(&(_, first)) => first,
                    None => {
                        seen.push((c, at));
                        at
                    }
                };
                let size = size_class(estimator.const_fanout(c, predicate, direction));
                Slot::Sized(size, first, store.class_of_term(c).is_some())
            }
        },
    };
    for (i, pattern) in bgp.patterns.iter().enumerate() {
        f(node(
            pattern.subject,
            pattern.predicate,
            Direction::Out,
            3 * i,
        ));
        f(match pattern.predicate {
            Pred::Var(v) => Slot::Var(v),
            Pred::Const(p) => Slot::Predicate(p),
            Pred::Absent => Slot::Absent,
        });
        f(node(
            pattern.object,
            pattern.predicate,
            Direction::In,
            3 * i + 2,
        ));
    }
}

/// The order of steps remembered for `key`, if any.
pub(crate) fn recall(key: &Key) -> Option<Order> {
    PLANS.with(|plans| plans.borrow().get(key).cloned())
}

/// Remembers `state`'s order of steps for `key`.
pub(crate) fn remember(key: Key, state: &State) {
    let order: Order = state.steps.iter().map(|s| (s.pattern, s.kind)).collect();
    PLANS.with(|plans| {
        let mut plans = plans.borrow_mut();
        if plans.len() >= REMEMBERED {
            plans.clear();
        }
        plans.insert(key, order);
    });
}

/// Runs `f` with no plan remembered or replayed on this thread (every planning fresh).
#[cfg(test)]
pub(crate) fn without_reuse<R>(f: impl FnOnce() -> R) -> R {
    let before = DISABLED.with(|d| d.replace(true));
    let result = f();
    DISABLED.with(|d| d.set(before));
    result
}

impl Estimator<'_> {
    /// `initial` after `order`'s steps, each estimated as planning would for `bgp`'s
    /// constants: a step is a start (a walk from a constant, an index or a scan) where
    /// planning started one, first (unless seeds reach the patterns: `from_starts`) and
    /// wherever no pattern can be walked from what is bound; else the walk or check
    /// planning grows by. `None` where the order does not fit `bgp` (never for a key's
    /// own order).
    pub(crate) fn replay(
        &self,
        bgp: &Bgp,
        initial: &State,
        order: &[(usize, StepKind)],
        from_starts: bool,
    ) -> Option<State> {
        let mut state = initial.clone();
        for (k, &(i, kind)) in order.iter().enumerate() {
            let pattern = bgp.patterns.get(i)?;
            let next = self.next_steps(bgp, &state);
            if (k == 0 && from_starts) || next.is_empty() {
                let (_, rows) = self
                    .start_options(pattern)
                    .into_iter()
                    .find(|(option, _)| *option == kind)?;
                state = self.start(&state, i, pattern, kind, rows);
            } else {
                let step = next.iter().find(|n| n.pattern == i && n.kind == kind)?;
                self.take(bgp, &mut state, step);
            }
        }
        state.done.iter().all(|d| *d).then_some(state)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use quiver_loader::{load_lubm, NoProgress};
    use quiver_lubm::LubmConfig;
    use quiver_store::Store;
    use spargebra::algebra::GraphPattern;
    use spargebra::term::TriplePattern;

    use super::*;
    use crate::bgp::{resolve, Vars};
    use crate::planner::{plan_costed, Spread, Step};

    fn lubm() -> Store {
        load_lubm(LubmConfig::standard(1), 2, None, &NoProgress)
            .unwrap()
            .0
    }

    /// The triple patterns of a query's one basic graph pattern.
    fn patterns(text: &str) -> Vec<TriplePattern> {
        fn find(pattern: &GraphPattern) -> Option<Vec<TriplePattern>> {
            match pattern {
                GraphPattern::Bgp { patterns } => Some(patterns.clone()),
                GraphPattern::Project { inner, .. }
                | GraphPattern::Distinct { inner }
                | GraphPattern::Reduced { inner } => find(inner),
                _ => None,
            }
        }
        let query = spargebra::SparqlParser::new().parse_query(text).unwrap();
        let spargebra::Query::Select { pattern, .. } = query else {
            panic!("not a SELECT: {text}");
        };
        find(&pattern).unwrap_or_else(|| panic!("not one basic graph pattern: {text}"))
    }

    fn plan(store: &Store, text: &str) -> (Vec<Step>, f64) {
        let bgp = resolve(&patterns(text), store, &mut Vars::default());
        plan_costed(&bgp, store, store.graph(), &[], 1.0)
    }

    /// How a cluster of two partitions spreads the store: its plans count rows moved.
    fn two() -> Spread {
        Spread {
            partitions: 2,
            types_everywhere: false,
            replicated: Vec::new(),
        }
    }

    fn plan_spread(store: &Store, text: &str, spread: &Spread) -> (Vec<Step>, f64) {
        let bgp = resolve(&patterns(text), store, &mut Vars::default());
        super::super::planned(&bgp, (store, spread), store.graph(), &[], 1.0)
    }

    fn key(store: &Store, text: &str) -> Option<Key> {
        key_spread(store, text, &Spread::ONE)
    }

    fn key_spread(store: &Store, text: &str, spread: &Spread) -> Option<Key> {
        let bgp = resolve(&patterns(text), store, &mut Vars::default());
        let estimator = Estimator::new(store, store.graph(), spread);
        Key::new(&estimator, &bgp, &[], 1.0)
    }

    fn lubm_query(name: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../queries/{name}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";

    /// The emulator's fourth template (five patterns) with `department` filled in.
    fn department_professors(department: &str) -> String {
        format!(
            "PREFIX ub: <{UB}> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
             SELECT ?X ?Y1 ?Y2 ?Y3 WHERE {{
               ?X ub:worksFor <{department}> . ?X rdf:type ub:FullProfessor .
               ?X ub:name ?Y1 . ?X ub:emailAddress ?Y2 . ?X ub:telephone ?Y3 . }}"
        )
    }

    #[test]
    fn a_replayed_plan_is_the_plan_made_afresh() {
        let store = lubm();
        let mut texts: Vec<String> = (1..=12)
            .map(|n| lubm_query(&format!("lubm-basic/q{n}.rq")))
            .collect();
        texts.push(
            "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
             SELECT ?s ?o WHERE { ?s ub:headOf ?d . ?d ub:subOrganizationOf ?u . ?s ?p ?o }"
                .to_owned(),
        );
        for text in &texts {
            let fresh = without_reuse(|| plan(&store, text));
            assert!(recall(&key(&store, text).unwrap()).is_none(), "{text}");
            let first = plan(&store, text);
            assert!(recall(&key(&store, text).unwrap()).is_some(), "{text}");
            let replayed = plan(&store, text);
            assert_eq!(fresh, first, "{text}");
            assert_eq!(fresh, replayed, "{text}");
        }
    }

    #[test]
    fn over_partitions_a_replayed_plan_is_the_plan_made_afresh() {
        let store = lubm();
        let spread = two();
        for n in 1..=12 {
            let text = lubm_query(&format!("lubm-basic/q{n}.rq"));
            let fresh = without_reuse(|| plan_spread(&store, &text, &spread));
            let first = plan_spread(&store, &text, &spread);
            assert!(recall(&key_spread(&store, &text, &spread).unwrap()).is_some());
            let replayed = plan_spread(&store, &text, &spread);
            assert_eq!(fresh, first, "{text}");
            assert_eq!(fresh, replayed, "{text}");
            // The whole store's key is another.
            assert_ne!(key(&store, &text), key_spread(&store, &text, &spread));
        }
    }

    #[test]
    fn a_constant_repeated_keys_apart_from_two_of_its_size() {
        let store = lubm();
        let text = |a: &str, b: &str| {
            format!(
                "PREFIX ub: <{UB}> SELECT ?x ?y WHERE {{
                   ?x ub:memberOf <http://www.Department{a}.University0.edu> .
                   ?y ub:worksFor <http://www.Department{b}.University0.edu> }}"
            )
        };
        // The slots of the second pattern's object, and the key.
        let object = |text: &str| {
            let bgp = resolve(&patterns(text), &store, &mut Vars::default());
            let spread = two();
            let estimator = Estimator::new(&store, store.graph(), &spread);
            let mut slots = Vec::new();
            for_each_slot(&estimator, &bgp, |slot| slots.push(slot));
            (slots[5], key_spread(&store, text, &spread).unwrap())
        };
        let (same, same_key) = object(&text("0", "0"));
        let other = (1..15)
            .map(|d| object(&text("0", &d.to_string())))
            .find(|(slot, _)| *slot != same);
        let (_, other_key) = other.expect("every department repeats the first");
        assert_ne!(same_key, other_key);
        let Slot::Sized(_, first, class) = same else {
            panic!("a sized constant: {same:?}");
        };
        assert_eq!(first, 2, "the department of pattern 0's object");
        assert!(!class);
    }

    #[test]
    fn constants_of_the_same_size_share_an_order_with_their_own_estimates() {
        let store = lubm();
        let department =
            |d: usize| department_professors(&format!("http://www.Department{d}.University0.edu"));
        let first = plan(&store, &department(0));
        let mut shared = 0;
        for d in 1..15 {
            let text = department(d);
            let reused = key(&store, &text) == key(&store, &department(0));
            let replayed = plan(&store, &text);
            let fresh = without_reuse(|| plan(&store, &text));
            let order = |plan: &(Vec<Step>, f64)| -> Vec<(usize, StepKind)> {
                plan.0.iter().map(|s| (s.pattern, s.kind)).collect()
            };
            if reused {
                shared += 1;
                assert_eq!(order(&replayed), order(&first), "{text}");
            }
            // The order shared, the estimates are this constant's own.
            if order(&replayed) == order(&fresh) {
                assert_eq!(replayed, fresh, "{text}");
            }
        }
        assert!(shared > 0, "no department of the first's size");
    }

    #[test]
    fn slots_write_equal_words_exactly_when_they_are_equal() {
        let wide = 1usize << 50;
        let slots = [
            Slot::Var(0),
            Slot::Var(1),
            Slot::Var(wide),
            Slot::Var(wide + 1),
            Slot::Predicate(1),
            Slot::Predicate(u32::MAX),
            Slot::Class(1),
            Slot::Sized(0, 1, false),
            Slot::Sized(1, 1, false),
            Slot::Sized(1, 1, true),
            Slot::Sized(255, wide, true),
            Slot::Absent,
        ];
        let words = |run: &[Slot]| {
            let mut words = Words::new();
            run.iter().for_each(|slot| slot.write(&mut words));
            words
        };
        // Every run of one or two slots against every other: a value spilling into a
        // second word must not read as the next slot.
        let mut runs: Vec<Vec<Slot>> = slots.iter().map(|&s| vec![s]).collect();
        for &a in &slots {
            for &b in &slots {
                runs.push(vec![a, b]);
            }
        }
        for a in &runs {
            for b in &runs {
                assert_eq!(a == b, words(a) == words(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_constant_without_neighbours_keys_apart() {
        let store = lubm();
        let member = |department: &str| {
            format!(
                "PREFIX ub: <{UB}> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
                 SELECT ?X WHERE {{ ?X ub:memberOf <{department}> . ?X rdf:type ub:GraduateStudent }}"
            )
        };
        let department = member("http://www.Department0.University0.edu");
        // A university: a term of the store that nobody is a member of.
        let university = member("http://www.University0.edu");
        assert_ne!(key(&store, &department), key(&store, &university));
        plan(&store, &department);
        let (steps, _) = plan(&store, &university);
        let fresh = without_reuse(|| plan(&store, &university));
        assert_eq!(steps, fresh.0);
        assert_eq!(steps[0].estimate, 0.0);
    }
}
