//! Every engine against a `BTreeMap` model: random insert/delete/fetch/batch sequences, with
//! maintenance (rehash, compaction) in between; and every engine on the same generated
//! workload, which must give the same checksum.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use quiver_kv::dataset::{Dataset, RealKeys, Synthetic};
use quiver_kv::engine::{
    Chained, ChainedVip, Engine, EngineKind, Hashbrown, Hot, KeyMap, List, Quiver, Value,
};
use quiver_kv::runner::{run, RunOptions};
use quiver_kv::workload::{self, KeyPattern};
use quiver_kv::{generate, Generated};
use quiver_model::{Dictionary, Id};
use quiver_store::{Direction, EncodedGraphs, Key, LoadInfo, Store};

#[derive(Debug, Clone)]
enum Step {
    Insert(u16, u64),
    Delete(u16),
    Fetch(u16),
    Batch(Vec<u16>),
    Maintain,
    /// Many fetches of one key (drives VIP reordering and hot-table admission).
    Hammer(u16, u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..200u16, any::<u64>()).prop_map(|(k, v)| Step::Insert(k, v)),
        2 => (0..200u16).prop_map(Step::Delete),
        4 => (0..200u16).prop_map(Step::Fetch),
        2 => prop::collection::vec(0..200u16, 0..70).prop_map(Step::Batch),
        1 => Just(Step::Maintain),
        1 => (0..200u16, 1..400u16).prop_map(|(k, n)| Step::Hammer(k, n)),
    ]
}

/// Runs `steps` on `engine` and on a model; `value` turns a random number into a value.
fn check<V: Value + PartialEq + std::fmt::Debug, E: Engine<V>>(
    engine: &mut E,
    model: &mut BTreeMap<u64, V>,
    steps: &[Step],
    key: &dyn Fn(u16) -> u64,
    value: &dyn Fn(u64) -> V,
) -> Result<(), TestCaseError> {
    let mut out = Vec::new();
    for step in steps {
        match step {
            Step::Insert(k, v) => {
                engine.insert(key(*k), value(*v));
                model.insert(key(*k), value(*v));
            }
            Step::Delete(k) => {
                prop_assert_eq!(engine.delete(key(*k)), model.remove(&key(*k)).is_some());
            }
            Step::Fetch(k) => {
                let expected = model.get(&key(*k)).map(Value::digest);
                prop_assert_eq!(engine.fetch(key(*k)), expected, "{}", engine.name());
            }
            Step::Batch(ks) => {
                let keys: Vec<u64> = ks.iter().map(|&k| key(k)).collect();
                engine.fetch_batch(&keys, &mut out);
                let expected: Vec<Option<u64>> = keys
                    .iter()
                    .map(|k| model.get(k).map(Value::digest))
                    .collect();
                prop_assert_eq!(&out, &expected, "{}", engine.name());
            }
            Step::Maintain => engine.maintain(),
            Step::Hammer(k, n) => {
                let expected = model.get(&key(*k)).map(Value::digest);
                for _ in 0..*n {
                    prop_assert_eq!(engine.fetch(key(*k)), expected);
                }
            }
        }
        prop_assert_eq!(engine.len(), model.len(), "{}", engine.name());
    }
    for k in 0..200 {
        prop_assert_eq!(engine.get(key(k)), model.get(&key(k)).cloned());
    }
    Ok(())
}

fn synthetic_key(k: u16) -> u64 {
    Synthetic::new(KeyPattern::Random, 5).key(u64::from(k))
}

fn list_value(v: u64) -> List {
    let len = (v % 5) as usize + 1;
    (0..len).map(|i| ((v >> (i * 8)) & 0xFF) as Id).collect()
}

/// Packed graph keys over a few vertices, predicates and both directions.
fn packed_key(k: u16) -> u64 {
    let key = Key {
        vertex: Id::from(k / 4),
        predicate: u32::from(k % 2),
        direction: if k % 4 < 2 {
            Direction::Out
        } else {
            Direction::In
        },
    };
    KeyMap::pack(key).expect("small keys pack")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_engine_agrees_with_a_model(
        initial in prop::collection::btree_map(0..200u16, any::<u64>(), 0..100),
        steps in prop::collection::vec(step(), 0..120),
    ) {
        let pairs: Vec<(u64, u64)> =
            initial.iter().map(|(&k, &v)| (synthetic_key(k), v)).collect();
        let model: BTreeMap<u64, u64> = pairs.iter().copied().collect();
        let dense = Synthetic::new(KeyPattern::Random, 5);
        let map = || {
            let multiplier = dense.key(1).wrapping_sub(dense.key(0));
            KeyMap::dense(multiplier, dense.key(0)).expect("odd multiplier")
        };
        macro_rules! case {
            ($engine:expr) => {{
                let mut engine = $engine;
                if engine.is_empty() {
                    for &(k, v) in &pairs {
                        engine.insert(k, v);
                    }
                }
                check(&mut engine, &mut model.clone(), &steps, &synthetic_key, &|v| v)?;
            }};
        }
        case!(Chained::<u64>::new(16));
        case!(ChainedVip::<u64>::new(16));
        case!(Hashbrown::<u64>::new(0));
        case!(Hot::new(Chained::<u64>::new(16)));
        case!(Quiver::from_pairs(pairs.clone(), map()));
        case!(Hot::new(Quiver::from_pairs(pairs.clone(), map())));
        // Four slots: keys share slots, so admissions replace residents all the time.
        case!(Hot::with_bits(Quiver::from_pairs(pairs.clone(), map()), 2));
        case!(Hot::with_bits(Chained::<u64>::new(16), 2));
    }

    #[test]
    fn list_values_agree_with_a_model(
        initial in prop::collection::btree_map(0..200u16, any::<u64>(), 0..100),
        steps in prop::collection::vec(step(), 0..80),
    ) {
        let pairs: Vec<(u64, List)> =
            initial.iter().map(|(&k, &v)| (packed_key(k), list_value(v))).collect();
        let model: BTreeMap<u64, List> = pairs.iter().cloned().collect();
        let mut chained = ChainedVip::<List>::new(16);
        let mut quiver = Hot::with_bits(Quiver::from_pairs(pairs.clone(), KeyMap::Packed), 3);
        for (k, v) in &pairs {
            chained.insert(*k, v.clone());
        }
        check(&mut chained, &mut model.clone(), &steps, &packed_key, &list_value)?;
        check(&mut quiver, &mut model.clone(), &steps, &packed_key, &list_value)?;
    }
}

/// A popularity shift: a newly hot key takes over the slot of the formerly hot one.
#[test]
fn hot_table_follows_popularity() {
    let mut engine = Hot::new(Chained::<u64>::new(1 << 12));
    for k in 0..8192u64 {
        engine.insert(k, k * 3);
    }
    let a = 17u64;
    let b = (8192..1u64 << 24)
        .find(|&k| engine.slot_of(k) == engine.slot_of(a))
        .expect("two keys share a slot");
    engine.insert(b, b * 3);
    for _ in 0..10_000 {
        assert_eq!(engine.fetch(a), Some(a * 3));
    }
    assert!(engine.is_resident(a) && !engine.is_resident(b));
    for _ in 0..100_000 {
        assert_eq!(engine.fetch(b), Some(b * 3));
    }
    assert!(engine.is_resident(b) && !engine.is_resident(a));
    // Writes go through: the resident copy follows, a delete drops it.
    engine.insert(b, 1);
    assert_eq!(engine.fetch(b), Some(1));
    assert!(engine.delete(b));
    assert_eq!(engine.fetch(b), None);
    assert!(!engine.is_resident(b));
}

/// Fetches spread evenly over many more keys than slots make the table step aside
/// (bypass); values stay exact meanwhile, and a key that turns hot is learnt and served
/// from the table again once the bypass ends.
#[test]
fn hot_table_steps_aside_under_uniform_fetches() {
    let mut engine = Hot::with_bits(Chained::<u64>::new(1 << 16), 4);
    for k in 0..1u64 << 16 {
        engine.insert(k, k + 5);
    }
    for round in 0..3u64 {
        for k in 0..1u64 << 14 {
            assert_eq!(engine.fetch(k), Some(k + 5), "round {round}");
        }
    }
    assert!(engine.is_bypassed());
    engine.insert(99, 7);
    assert_eq!(engine.fetch(99), Some(7));
    let mut batch = Vec::new();
    engine.fetch_batch(&[99, 3, 1 << 20], &mut batch);
    assert_eq!(batch, vec![Some(7), Some(8), None]);
    for _ in 0..200_000 {
        assert_eq!(engine.fetch(99), Some(7));
    }
    assert!(engine.is_resident(99) && !engine.is_bypassed());
}

fn small_store() -> Arc<Store> {
    let terms: Vec<String> = (0..60).map(|i| format!("t{i:03}")).collect();
    let dictionary = Dictionary::from_sorted(terms.iter().map(|t| t.as_bytes()));
    let mut triples = Vec::new();
    for s in 0..40u32 {
        for k in 0..(s % 5) {
            triples.push([s as Id, 40 + k as Id, ((s * 7 + k * 3) % 60) as Id]);
        }
    }
    let input = EncodedGraphs {
        default_graph: triples,
        named_graphs: Vec::new(),
    };
    Arc::new(Store::build(dictionary, input, LoadInfo::default()))
}

fn all_engines_agree<D: Dataset>(dataset: &D, generated: &Generated) {
    let mut checksums = Vec::new();
    for kind in EngineKind::ALL {
        for batch in [0, 8] {
            let stats = run(
                kind,
                dataset,
                generated,
                RunOptions {
                    batch,
                    report_every: 1000,
                    resident_bytes: None,
                },
                &mut |_| {},
            );
            assert_eq!(stats.misses, 0, "{}", stats.label());
            assert_eq!(
                stats.final_len as u64,
                generated.final_len,
                "{}",
                stats.label()
            );
            assert_eq!(stats.ops(), generated.ops.len() as u64);
            checksums.push((stats.label(), stats.checksum));
        }
    }
    assert!(
        checksums.iter().all(|(_, c)| *c == checksums[0].1),
        "{checksums:?}"
    );
}

#[test]
fn engines_agree_on_synthetic_workloads() {
    for name in ["steady-state", "churn-high", "read-mostly"] {
        let mut workload = workload::builtin(name).expect("built in");
        workload.initial_size = 3000;
        workload.operation_count = 20_000;
        workload.dist_shift_freq = workload.dist_shift_freq.map(|_| 2000);
        for pattern in [KeyPattern::Random, KeyPattern::Sequential] {
            let dataset = Synthetic::new(pattern, 9);
            let generated = generate(&workload, 3000, 9, dataset.slots(), &|s| dataset.key(s))
                .expect("generates");
            all_engines_agree(&dataset, &generated);
        }
    }
}

#[test]
fn engines_agree_on_real_keys() {
    let dataset = RealKeys::new(small_store(), 3).expect("keys");
    assert!(dataset.len() > 50);
    let mut workload = workload::builtin("steady-state").expect("built in");
    workload.operation_count = 2000;
    workload.insert = 0.005;
    workload.delete = 0.02;
    workload.fetch = 0.975;
    let initial = dataset.len() as u64 - 40;
    let generated =
        generate(&workload, initial, 4, dataset.slots(), &|s| dataset.key(s)).expect("generates");
    all_engines_agree(&dataset, &generated);
}
