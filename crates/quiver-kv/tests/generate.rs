//! Zipf sampling against the formula, popularity shifts, and generated operations.

use std::collections::{HashMap, HashSet};

use quiver_kv::generate::{generate, OpKind, Popularity};
use quiver_kv::rng::Rng;
use quiver_kv::workload::{builtin, KeyOrder};
use quiver_kv::zipf::{Harmonic, Zipf};

/// The top ranks' empirical frequencies are within four standard deviations of
/// `k^-s / H(n, s)`, and so is the mass of the top 100.
#[test]
fn zipf_frequencies_match_the_formula() {
    let (n, samples) = (1000u64, 1_000_000u64);
    for s in [0.0, 0.5, 1.0, 1.5] {
        let zipf = Zipf::new(n, s).unwrap();
        let mut rng = Rng::new(42);
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..samples {
            let k = zipf.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[k as usize] += 1;
        }
        let total: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
        let check = |observed: u64, p: f64, what: &str| {
            let expected = p * samples as f64;
            let sd = (expected * (1.0 - p)).sqrt();
            assert!(
                (observed as f64 - expected).abs() <= 4.0 * sd + 1.0,
                "s {s}, {what}: {observed} observed, {expected:.0} expected"
            );
        };
        for k in 1..=10u64 {
            check(
                counts[k as usize],
                (k as f64).powf(-s) / total,
                &format!("rank {k}"),
            );
        }
        let top: u64 = counts[1..=100].iter().sum();
        let top_p: f64 = (1..=100).map(|k| (k as f64).powf(-s)).sum::<f64>() / total;
        check(top, top_p, "top 100");
    }
}

#[test]
fn zipf_is_reproducible_from_the_seed() {
    let zipf = Zipf::new(1 << 20, 1.0).unwrap();
    let draw = |seed| {
        let mut rng = Rng::new(seed);
        (0..100).map(|_| zipf.sample(&mut rng)).collect::<Vec<_>>()
    };
    assert_eq!(draw(1), draw(1));
    assert_ne!(draw(1), draw(2));
}

/// The probability mass that moved to other keys at a shift: the total variation distance
/// between the key distributions before and after.
fn shifted_mass(n: u32, s: f64, percent: f64, seed: u64) -> f64 {
    let mut popularity = Popularity::new(n, s, KeyOrder::Random, Rng::new(seed)).unwrap();
    let mut before = vec![0.0; n as usize];
    for (rank, &slot) in popularity.ranks().iter().enumerate() {
        before[slot as usize] = popularity.probability(rank as u64);
    }
    popularity.shift(percent);
    let mut lost = 0.0;
    for (rank, &slot) in popularity.ranks().iter().enumerate() {
        lost += (before[slot as usize] - popularity.probability(rank as u64)).max(0.0);
    }
    lost
}

#[test]
fn a_shift_of_p_percent_moves_about_p_percent_of_the_mass() {
    let n = 100_000u32;
    for s in [0.5, 1.0, 1.5] {
        let harmonic = Harmonic::new(s);
        for percent in [10.0, 20.0, 50.0] {
            let moved = shifted_mass(n, s, percent, 7);
            let target = percent / 100.0;
            // Whole ranks move: up to and including the rank that crosses the target share
            // (at s = 1.5 the top rank alone holds 38%); the keys moving up take a little.
            let crossing = harmonic.ranks_below_share(u64::from(n), target) + 1;
            let bound = harmonic.value(crossing) / harmonic.value(u64::from(n));
            assert!(
                moved <= bound,
                "s {s}, shift {percent}%: {moved:.3} of the mass moved (at most {bound:.3})"
            );
            // When the hot set is a small part of the keys (not so for half the mass at
            // s = 0.5: a quarter of the keys, swapped with ranks as popular as themselves).
            if crossing <= u64::from(n) / 20 {
                assert!(moved > target - 0.05, "s {s}, shift {percent}%: {moved:.3}");
            }
            if s <= 1.0 {
                assert!(moved < target + 0.06, "s {s}, shift {percent}%: {moved:.3}");
            }
        }
    }
    assert_eq!(shifted_mass(1000, 1.0, 0.0, 1), 0.0);
}

/// Fetch frequencies before and after a generated shift: the keys that were hot lose about
/// the shifted share of the accesses.
#[test]
fn generated_shift_changes_the_hot_set() {
    let mut workload = builtin("churn-high").unwrap();
    workload.initial_size = 10_000;
    workload.operation_count = 400_000;
    workload.dist_shift_freq = Some(200_000);
    workload.dist_shift_prct = 40.0;
    let generated = generate(&workload, 10_000, 3, u64::MAX, &|s| s).unwrap();
    assert_eq!(generated.shifts, vec![200_000, 400_000]);
    let (before, after) = generated.ops.split_at(200_000);
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for op in before {
        *counts.entry(op.key).or_default() += 1;
    }
    let mut ranked: Vec<(u64, u64)> = counts.into_iter().collect();
    ranked.sort_by_key(|&(key, count)| (std::cmp::Reverse(count), key));
    // The hot set: the keys taking half of the accesses before the shift.
    let mut hot = HashSet::new();
    let mut taken = 0;
    for (key, count) in ranked {
        if taken * 2 >= before.len() as u64 {
            break;
        }
        hot.insert(key);
        taken += count;
    }
    let share = |ops: &[quiver_kv::Op]| {
        ops.iter().filter(|op| hot.contains(&op.key)).count() as f64 / ops.len() as f64
    };
    let (was, is) = (share(before), share(after));
    assert!((0.48..0.56).contains(&was), "{was}");
    // 40% of the mass left, all of it from the hot set.
    assert!(
        (was - is - 0.40).abs() < 0.05,
        "hot share {was:.3} -> {is:.3}"
    );
}

#[test]
fn operations_follow_the_proportions_and_the_key_set() {
    let mut workload = builtin("steady-state").unwrap();
    workload.initial_size = 5_000;
    workload.operation_count = 200_000;
    workload.fetch = 0.7;
    workload.insert = 0.1;
    workload.delete = 0.1;
    workload.update = 0.1;
    let generated = generate(&workload, 5_000, 11, u64::MAX, &|s| s * 3 + 1).unwrap();
    let mut present: HashSet<u64> = (0..5_000u64).map(|s| s * 3 + 1).collect();
    let mut kinds: HashMap<OpKind, u64> = HashMap::new();
    for op in &generated.ops {
        *kinds.entry(op.kind).or_default() += 1;
        assert_eq!(op.key, u64::from(op.slot) * 3 + 1);
        match op.kind {
            OpKind::Fetch | OpKind::Update => assert!(present.contains(&op.key)),
            OpKind::Insert => assert!(present.insert(op.key), "inserts are new keys"),
            OpKind::Delete => assert!(present.remove(&op.key), "deletes hit present keys"),
        }
    }
    assert_eq!(present.len() as u64, generated.final_len);
    for (kind, share) in [
        (OpKind::Fetch, 0.7),
        (OpKind::Insert, 0.1),
        (OpKind::Delete, 0.1),
        (OpKind::Update, 0.1),
    ] {
        let got = kinds[&kind] as f64 / 200_000.0;
        assert!((got - share).abs() < 0.01, "{kind:?}: {got}");
    }
    let again = generate(&workload, 5_000, 11, u64::MAX, &|s| s * 3 + 1).unwrap();
    assert_eq!(again.ops, generated.ops, "reproducible from the seed");
}

#[test]
fn sorted_key_order_makes_the_latest_key_the_hottest() {
    let popularity = Popularity::new(100, 1.0, KeyOrder::Sorted, Rng::new(1)).unwrap();
    assert_eq!(popularity.ranks()[0], 99);
    assert!((popularity.probability(0) - 1.0 / Harmonic::new(1.0).value(100)).abs() < 1e-12);
}

#[test]
fn too_few_keys_is_an_error() {
    let mut workload = builtin("read-mostly").unwrap();
    workload.operation_count = 10_000;
    let error = generate(&workload, 100, 1, 120, &|s| s).unwrap_err();
    assert!(
        error.to_string().contains("only 120 are available"),
        "{error}"
    );
}
