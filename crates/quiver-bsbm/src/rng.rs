//! Keyed random streams and the distributions of the BSBM generator.
//!
//! Every generated entity (a product, an offer, a review, a person…) draws from its own
//! stream, keyed by the run's seed, the kind of draw and the entity's number. Nothing is
//! shared between entities, so any split of the work into units, on any number of threads,
//! yields the same values. The generator is SplitMix64: tiny state, cheap to create per
//! entity, and good enough for benchmark data (it passes BigCrush when used as a stream).
//!
//! The distributions are those of the reference generator (bsbmtools): a normal variate
//! N(μ, σ) truncated by rejection, scaled to a count or to a range `1..=max`.

/// What a stream is for; part of its key, so that two purposes never share draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    ProducerSizes = 1,
    VendorSizes,
    SiteSizes,
    PersonReviews,
    FeatureCount,
    ProductType,
    ProductFeature,
    Producer,
    Product,
    Vendor,
    Offer,
    Person,
    Review,
    /// The test driver's parameters (`mix`), keyed by client and run.
    Driver,
}

/// SplitMix64's output function: a bijective 64-bit mixer.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// The stream of `kind` for entity `index` in a run with `seed`.
    pub fn stream(seed: u64, kind: Stream, index: u64) -> Self {
        let key = mix(seed.wrapping_add(GOLDEN)) ^ mix((kind as u64) << 56 ^ index);
        Self { state: mix(key) }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[from, to]` (inclusive), as the reference's `randomInt`.
    pub fn int(&mut self, from: u32, to: u32) -> u32 {
        debug_assert!(from <= to);
        let span = u64::from(to - from) + 1;
        from + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u32
    }

    /// Uniform integer in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// `true` with probability `percent / 100`.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.unit() * 100.0 < f64::from(percent)
    }

    /// A standard-normal-based variate N(`mu`, `sigma`) (Box–Muller, one value per call).
    pub fn normal(&mut self, mu: f64, sigma: f64) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]
        let u2 = self.unit();
        mu + sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// The reference's `NormalDistGenerator(3, 1, avg)`: x ~ N(3, 1) redrawn while negative,
    /// then `floor(x / 3 * avg) + plus_one`; the mean is about `avg - 0.5 + plus_one`.
    pub fn normal_count(&mut self, avg: u32, plus_one: bool) -> u32 {
        let x = loop {
            let x = self.normal(3.0, 1.0);
            if x >= 0.0 {
                break x;
            }
        };
        (x / 3.0 * f64::from(avg)) as u32 + u32::from(plus_one)
    }

    /// The reference's `NormalDistRangeGenerator(mu, sigma, max, limit)`: x ~ N(mu, sigma)
    /// redrawn until it lies in `[0, limit]`, then `floor(x / limit * max) + 1`, in
    /// `1..=max`.
    pub fn normal_range(&mut self, mu: f64, sigma: f64, max: u32, limit: f64) -> u32 {
        let x = loop {
            let x = self.normal(mu, sigma);
            if (0.0..=limit).contains(&x) {
                break x;
            }
        };
        ((x / limit * f64::from(max)) as u32 + 1).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_keyed_and_reproducible() {
        let draw = |seed, kind, index| Rng::stream(seed, kind, index).next_u64();
        assert_eq!(draw(1, Stream::Offer, 7), draw(1, Stream::Offer, 7));
        assert_ne!(draw(1, Stream::Offer, 7), draw(1, Stream::Offer, 8));
        assert_ne!(draw(1, Stream::Offer, 7), draw(1, Stream::Review, 7));
        assert_ne!(draw(1, Stream::Offer, 7), draw(2, Stream::Offer, 7));
    }

    #[test]
    fn ints_cover_their_inclusive_range_uniformly() {
        let mut rng = Rng::stream(0, Stream::Product, 0);
        let mut seen = [0u32; 10];
        for _ in 0..100_000 {
            seen[rng.int(1, 10) as usize - 1] += 1;
        }
        assert!(
            seen.iter().all(|&n| (9_000..11_000).contains(&n)),
            "{seen:?}"
        );
    }

    #[test]
    fn normal_has_its_mean_and_deviation() {
        let mut rng = Rng::stream(3, Stream::Person, 1);
        let xs: Vec<f64> = (0..200_000).map(|_| rng.normal(2.0, 1.5)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((mean - 2.0).abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 1.5).abs() < 0.02, "{var}");
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut rng = Rng::stream(9, Stream::Offer, 2);
        for _ in 0..50_000 {
            assert!((1..=21).contains(&rng.normal_range(2.0, 1.0, 21, 14.2)));
            assert!((1..=5).contains(&rng.normal_range(0.0, 1.0, 5, 2.0)));
        }
        let counts: Vec<u32> = (0..100_000).map(|_| rng.normal_count(50, true)).collect();
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / counts.len() as f64;
        assert!((mean - 50.5).abs() < 0.5, "{mean}");
    }
}
