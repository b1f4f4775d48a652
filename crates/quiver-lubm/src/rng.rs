//! A bit-exact re-implementation of `java.util.Random`.
//!
//! UBA 1.7 draws every count, course, advisor and degree from Java's 48-bit linear
//! congruential generator; reproducing its output triple for triple needs the same
//! sequence, including the rejection loop of `nextInt(n)`. No crate offers this exact
//! generator, hence this small hand-written one.

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// Java's `java.util.Random` (48-bit LCG), bit for bit.
#[derive(Debug, Clone)]
pub struct JavaRandom {
    state: u64,
}

impl JavaRandom {
    /// Equivalent of `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        Self {
            state: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    /// Java's protected `next(bits)`: advance the state and return its top `bits` bits.
    fn next(&mut self, bits: u32) -> i32 {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND) & MASK;
        (self.state >> (48 - bits)) as u32 as i32
    }

    /// `nextInt()`: a uniformly distributed 32-bit value.
    pub fn next_i32(&mut self) -> i32 {
        self.next(32)
    }

    /// `nextInt(bound)` for `bound > 0`, including the power-of-two shortcut and the
    /// rejection loop that keeps the distribution uniform.
    pub fn next_int(&mut self, bound: i32) -> i32 {
        assert!(bound > 0, "JavaRandom::next_int: bound must be positive");
        if bound & (bound - 1) == 0 {
            return ((i64::from(bound) * i64::from(self.next(31))) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let value = bits % bound;
            if bits.wrapping_sub(value).wrapping_add(bound - 1) >= 0 {
                return value;
            }
        }
    }

    /// UBA's `_getRandomFromRange(min, max)`: an integer in `[min, max]`.
    pub fn range(&mut self, min: u32, max: u32) -> u32 {
        debug_assert!(min <= max);
        min + self.next_int((max - min + 1) as i32) as u32
    }

    /// UBA's `_getRandomList(k, min, max)`: `k` distinct values of `[min, max]` into `out`,
    /// in the order drawn. Each draw picks a position in the remaining ascending list and
    /// removes it. `pool` is scratch space, passed in so that hot loops do not allocate.
    pub fn pick(
        &mut self,
        count: u32,
        min: u32,
        max: u32,
        pool: &mut Vec<u32>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        pool.clear();
        pool.extend(min..=max);
        for _ in 0..count.min(pool.len() as u32) {
            let position = self.range(0, pool.len() as u32 - 1) as usize;
            out.push(pool.remove(position));
        }
    }
}

/// The seed UBA gives university `index`: `seed * (Integer.MAX_VALUE + 1) + index`, where
/// `Integer.MAX_VALUE + 1` wraps to -2^31 in Java's 32-bit arithmetic.
pub fn university_seed(seed: i64, index: u32) -> i64 {
    seed.wrapping_mul(-(1i64 << 31))
        .wrapping_add(i64::from(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values printed by the real java.util.Random (OpenJDK 17).
    fn draws(seed: i64, bound: i32, n: usize) -> Vec<i32> {
        let mut rng = JavaRandom::new(seed);
        (0..n).map(|_| rng.next_int(bound)).collect()
    }

    #[test]
    fn matches_java_general_path() {
        assert_eq!(draws(0, 10, 8), [0, 8, 9, 7, 5, 3, 1, 1]);
        assert_eq!(draws(7, 1000, 8), [236, 164, 485, 44, 380, 254, 968, 649]);
    }

    #[test]
    fn matches_java_power_of_two_path() {
        assert_eq!(draws(0, 16, 8), [11, 13, 3, 9, 10, 4, 8, 1]);
    }

    #[test]
    fn matches_java_rejection_path() {
        // With a bound of 1.5e9 about 30% of draws are rejected and redrawn.
        assert_eq!(
            draws(3, 1_500_000_001, 8),
            [
                1207763660, 152454210, 144139128, 1249547202, 1235116564, 488197459, 1418025585,
                757666882
            ]
        );
    }

    #[test]
    fn matches_java_next_int_unbounded() {
        let mut rng = JavaRandom::new(42);
        let got: Vec<i32> = (0..4).map(|_| rng.next_i32()).collect();
        assert_eq!(got, [-1170105035, 234785527, -1360544799, 205897768]);
    }

    #[test]
    fn next_int_one_consumes_a_step_and_university_seed_wraps() {
        // new Random(-123456789L * -2147483648L + 5): three nextInt(1) then nextInt(30) = 6.
        let mut rng = JavaRandom::new(university_seed(-123_456_789, 5));
        assert_eq!(
            [rng.next_int(1), rng.next_int(1), rng.next_int(1)],
            [0, 0, 0]
        );
        assert_eq!(rng.next_int(30), 6);
        assert_eq!(university_seed(0, 17), 17);
    }

    #[test]
    fn pick_returns_distinct_values_in_range() {
        let mut rng = JavaRandom::new(9);
        let (mut pool, mut out) = (Vec::new(), Vec::new());
        rng.pick(5, 3, 12, &mut pool, &mut out);
        assert_eq!(out.len(), 5);
        let mut sorted = out.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
        assert!(out.iter().all(|v| (3..=12).contains(v)));
    }
}
