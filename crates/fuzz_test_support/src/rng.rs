//! A small deterministic generator (xorshift64) for tests that make many random inputs: a
//! failure names its seed, and the same seed makes the same inputs again.

/// Xorshift64 (Marsaglia): not for anything but tests.
pub struct Xorshift(u64);

impl Xorshift {
    /// A generator from `seed`; 0 (where xorshift would stay) is taken as 1.
    pub fn new(seed: u64) -> Xorshift {
        Xorshift(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Whether a draw falls in the first `percent` of a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Xorshift;

    #[test]
    fn a_seed_gives_the_same_numbers_and_zero_is_not_stuck() {
        let a: Vec<u64> = (0..4)
            .scan(Xorshift::new(7), |g, _| Some(g.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(Xorshift::new(7), |g, _| Some(g.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:?}");
        let mut zero = Xorshift::new(0);
        assert_ne!(zero.next_u64(), 0);
        assert!((0..100).all(|_| zero.below(3) < 3));
        assert_eq!(zero.below(0), 0);
        assert!((0..100).all(|_| !zero.chance(0) && zero.chance(100)));
    }
}
