//! Zipf-distributed ranks by rejection-inversion sampling (Hörmann and Derflinger, "Rejection-
//! inversion to generate variates from monotone discrete distributions", 1996).
//!
//! Rank `k` in `1..=n` has probability `k^-s / H(n, s)`. The sampler inverts the integral
//! of the continuous hat function `x^-s` and accepts or rejects the rounded result, which
//! needs O(1) time and memory per sample for any exponent `s >= 0` (including `s = 1`,
//! where `x^(1-s) / (1-s)` becomes `ln x`, handled by the `helper` expansions near zero)
//! and lets `n` change in O(1), as inserts and deletes change the number of keys. `s = 0` is
//! the uniform distribution. Generalised harmonic numbers `H(n, s)` come from an exact sum
//! of the first terms plus an Euler–Maclaurin tail ([`Harmonic`]), for the workload generator's "share of
//! the probability mass held by the top ranks" (Wiscer's shifts and placements).

use crate::rng::Rng;

/// A Zipf distribution over ranks `1..=n`.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    threshold: f64,
}

/// `ln(1 + x) / x`, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    /// `None` unless `n >= 1` and `exponent` is finite and `>= 0`.
    pub fn new(n: u64, exponent: f64) -> Option<Self> {
        if n == 0 || !exponent.is_finite() || exponent < 0.0 {
            return None;
        }
        let mut zipf = Zipf {
            n,
            exponent,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            threshold: 0.0,
        };
        zipf.h_integral_x1 = zipf.h_integral(1.5) - 1.0;
        zipf.threshold = 2.0 - zipf.h_integral_inverse(zipf.h_integral(2.5) - zipf.h(2.0));
        zipf.set_n(n);
        Some(zipf)
    }

    /// Changes the number of ranks (`n >= 1`; 0 is taken as 1).
    pub fn set_n(&mut self, n: u64) {
        self.n = n.max(1);
        self.h_integral_n = self.h_integral(self.n as f64 + 0.5);
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    pub fn exponent(&self) -> f64 {
        self.exponent
    }

    /// A rank in `1..=n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.next_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.threshold || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    /// `(x^(1-s) - 1) / (1 - s)`, or `ln x` for `s = 1`.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// Ranks summed exactly by [`Harmonic`] before the Euler–Maclaurin tail takes over.
const EXACT: usize = 1024;

/// Generalised harmonic numbers `H(m, s) = sum_{k=1}^{m} k^-s` for one exponent: exact
/// prefix sums of the first [`EXACT`] terms, then the Euler–Maclaurin formula (relative
/// error below 1e-12 from there on).
#[derive(Debug, Clone)]
pub struct Harmonic {
    s: f64,
    /// `head[m] = H(m, s)` for `m <= EXACT`.
    head: Vec<f64>,
}

impl Harmonic {
    pub fn new(s: f64) -> Self {
        let mut head = Vec::with_capacity(EXACT + 1);
        let mut sum = 0.0;
        head.push(sum);
        for k in 1..=EXACT {
            sum += (k as f64).powf(-s);
            head.push(sum);
        }
        Harmonic { s, head }
    }

    /// `H(m, s)`.
    pub fn value(&self, m: u64) -> f64 {
        if let Some(&exact) = self.head.get(m as usize) {
            return exact;
        }
        // sum_{k=a+1}^{m} f(k) = ∫_a^m f + (f(m) - f(a))/2 + (f'(m) - f'(a))/12 - …
        let s = self.s;
        let (a, b) = (EXACT as f64, m as f64);
        let f = |x: f64| x.powf(-s);
        let df = |x: f64| -s * x.powf(-s - 1.0);
        let integral = if (s - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
        };
        self.head[EXACT] + integral + (f(b) - f(a)) / 2.0 + (df(b) - df(a)) / 12.0
    }

    /// The number of top ranks among `n` whose cumulative probability (through that rank)
    /// is below `share` of the total: Wiscer's loops `while cumProb[p] / cumsum < share`.
    pub fn ranks_below_share(&self, n: u64, share: f64) -> u64 {
        if n == 0 || share <= 0.0 {
            return 0;
        }
        let target = share * self.value(n);
        // The largest r in 0..=n with H(r) < target (H(0) = 0 < target).
        let (mut low, mut high) = (0u64, n);
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if self.value(mid) < target {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_parameters() {
        assert!(Zipf::new(0, 1.0).is_none());
        assert!(Zipf::new(10, -0.5).is_none());
        assert!(Zipf::new(10, f64::NAN).is_none());
        assert!(Zipf::new(1, 0.0).is_some());
    }

    #[test]
    fn harmonic_matches_the_exact_sum() {
        for s in [0.0, 0.5, 1.0, 1.5, 2.0] {
            let harmonic = Harmonic::new(s);
            for m in [1u64, 10, 1024, 1025, 5000, 100_000] {
                let exact: f64 = (1..=m).map(|k| (k as f64).powf(-s)).sum();
                let approx = harmonic.value(m);
                assert!(
                    ((approx - exact) / exact).abs() < 1e-9,
                    "s {s} m {m}: {approx} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn share_ranks() {
        let uniform = Harmonic::new(0.0);
        assert_eq!(uniform.ranks_below_share(100, 0.5), 49);
        assert_eq!(uniform.ranks_below_share(100, 0.0), 0);
        assert_eq!(uniform.ranks_below_share(100, 1.0), 99);
        // s = 1, n = 1000: H = 7.485, so half the mass lies in the top ~ 24 ranks.
        let h = Harmonic::new(1.0);
        let r = h.ranks_below_share(1000, 0.5);
        assert!((20..=26).contains(&r), "{r}");
        assert!(h.value(r) < 0.5 * h.value(1000));
        assert!(h.value(r + 1) >= 0.5 * h.value(1000));
    }

    #[test]
    fn one_rank_and_growth() {
        let mut rng = Rng::new(3);
        let mut zipf = Zipf::new(1, 1.0).unwrap();
        assert!((0..100).all(|_| zipf.sample(&mut rng) == 1));
        zipf.set_n(5);
        assert!((0..1000).all(|_| (1..=5).contains(&zipf.sample(&mut rng))));
    }
}
