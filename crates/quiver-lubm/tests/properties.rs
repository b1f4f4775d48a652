//! Properties of the generator that hold for any seed and start index.

use std::collections::BTreeSet;

use proptest::prelude::*;
use quiver_lubm::ntriples::NTriplesBuffer;
use quiver_lubm::{generate_university, LubmConfig};
use quiver_ordered::for_each_ordered;

/// The set of N-Triples lines of a run, generated on `threads` threads.
fn triples(config: LubmConfig, threads: usize) -> BTreeSet<Vec<u8>> {
    let mut set = BTreeSet::new();
    for_each_ordered(
        config.range(),
        threads,
        |university| {
            let mut buffer = NTriplesBuffer::new();
            generate_university(config.seed, university, &mut buffer);
            buffer.bytes
        },
        |_, bytes| {
            set.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
            Ok::<_, ()>(())
        },
    )
    .unwrap();
    set
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn thread_count_does_not_change_the_output(
        seed in any::<i64>(), start in 0u32..5000, universities in 1u32..4, threads in 2usize..5,
    ) {
        let config = LubmConfig { universities, start_index: start, seed };
        prop_assert_eq!(triples(config, 1), triples(config, threads));
    }

    #[test]
    fn a_university_is_the_same_alone_or_within_a_run(
        seed in any::<i64>(), universities in 2u32..4,
    ) {
        let last = universities - 1;
        let mut alone = NTriplesBuffer::new();
        generate_university(seed, last, &mut alone);
        let alone: BTreeSet<Vec<u8>> =
            alone.bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();

        let mut within = None;
        for_each_ordered(0..universities, 2, |university| {
            let mut buffer = NTriplesBuffer::new();
            generate_university(seed, university, &mut buffer);
            buffer.bytes
        }, |university, bytes| {
            if university == last {
                within = Some(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect::<BTreeSet<_>>());
            }
            Ok::<_, ()>(())
        }).unwrap();
        prop_assert_eq!(Some(alone), within);
    }
}
