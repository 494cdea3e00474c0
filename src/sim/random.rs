//! Seeded random simulation: ChaCha8 with one independent stream per [`Purpose`].
//!
//! All streams of a seed share one key and differ by ChaCha's stream number, so a latency draw
//! never shifts because a design made an extra crash decision: paired comparisons of designs
//! on one seed meet the same faults as far as their paths agree. Streams are created lazily
//! (seeding costs more than a draw), and only for the purposes a run actually uses.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::chooser::{Alternatives, Chooser, Purpose};

pub struct RandomChooser {
    seed: u64,
    /// The key every stream of this seed shares (what `seed_from_u64` would derive).
    key: <ChaCha8Rng as SeedableRng>::Seed,
    /// Stream `i` is live for this seed when bit `i` is set; a stale one is replaced before
    /// use, so a reset writes one word instead of every stream.
    live: u32,
    streams: [Option<ChaCha8Rng>; Purpose::COUNT],
}

impl RandomChooser {
    pub fn new(seed: u64) -> Self {
        let mut c = Self {
            seed,
            key: Default::default(),
            live: 0,
            streams: Default::default(),
        };
        c.reset(seed);
        c
    }

    /// Starts over with another seed, as if newly created.
    pub fn reset(&mut self, seed: u64) {
        self.seed = seed;
        // The same key `ChaCha8Rng::seed_from_u64(seed)` starts from, derived once per seed
        // instead of once per stream.
        self.key = ChaCha8Rng::seed_from_u64(seed).get_seed();
        self.live = 0;
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn stream(&mut self, purpose: Purpose) -> &mut ChaCha8Rng {
        let i = purpose.index();
        let slot = &mut self.streams[i];
        if self.live & (1 << i) == 0 {
            self.live |= 1 << i;
            let mut rng = ChaCha8Rng::from_seed(self.key);
            rng.set_stream(i as u64);
            *slot = Some(rng);
        }
        slot.as_mut().expect("a live stream is set")
    }
}

impl Chooser for RandomChooser {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let rng = self.stream(purpose);
        match alternatives {
            Alternatives::Uniform(n) | Alternatives::Span { len: n, .. } => rng.random_range(0..n),
            Alternatives::Weighted(weights) => {
                let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
                let mut draw = rng.random_range(0..total);
                for (i, &w) in weights.iter().enumerate() {
                    if draw < u64::from(w) {
                        return i as u64;
                    }
                    draw -= u64::from(w);
                }
                unreachable!("draw below the total weight always lands on an alternative")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(seed: u64, purpose: Purpose) -> Vec<u64> {
        let mut c = RandomChooser::new(seed);
        (0..8)
            .map(|_| c.choose(purpose, Alternatives::Uniform(1000)))
            .collect()
    }

    #[test]
    fn same_seed_same_draws() {
        assert_eq!(draws(7, Purpose::Latency), draws(7, Purpose::Latency));
        assert_ne!(draws(7, Purpose::Latency), draws(8, Purpose::Latency));
    }

    #[test]
    fn purposes_are_independent_streams() {
        // Draws for one purpose do not move another purpose's stream.
        let mut a = RandomChooser::new(3);
        let mut b = RandomChooser::new(3);
        for _ in 0..5 {
            a.choose(Purpose::ReplyLoss, Alternatives::Uniform(2));
        }
        let la: Vec<u64> = (0..4)
            .map(|_| a.choose(Purpose::Latency, Alternatives::Uniform(100)))
            .collect();
        let lb: Vec<u64> = (0..4)
            .map(|_| b.choose(Purpose::Latency, Alternatives::Uniform(100)))
            .collect();
        assert_eq!(la, lb);
        assert_ne!(draws(3, Purpose::Latency), draws(3, Purpose::Processing));
    }

    #[test]
    fn streams_are_those_of_seed_from_u64_with_the_purpose_as_stream() {
        for seed in [0, 1, 12_345, u64::MAX] {
            let mut c = RandomChooser::new(99);
            c.reset(seed);
            let mut reference = ChaCha8Rng::seed_from_u64(seed);
            reference.set_stream(Purpose::Processing.index() as u64);
            for _ in 0..5 {
                let want = reference.random_range(0..1_000_000u64);
                assert_eq!(
                    c.choose(Purpose::Processing, Alternatives::Uniform(1_000_000)),
                    want
                );
            }
        }
    }

    #[test]
    fn compacted_weights_draw_exactly_what_the_full_list_drew() {
        use crate::sim::ChooserExt;
        let lists: [&[u32]; 4] = [
            &[0, 1, 0, 3],
            &[2, 0, 0, 5, 1],
            &[0, 0, 7, 0, 1, 0],
            &[3, 0, 0, 0, 4],
        ];
        for weights in lists {
            for seed in 0..200 {
                // Before: the chooser drew over the full list, zero weights included.
                let mut full = RandomChooser::new(seed);
                let mut compact = RandomChooser::new(seed);
                for _ in 0..20 {
                    let before =
                        full.choose(Purpose::AgentDecision, Alternatives::Weighted(weights));
                    let now = compact.weighted(Purpose::AgentDecision, weights) as u64;
                    assert_eq!(now, before, "{weights:?}, seed {seed}");
                }
            }
        }
    }

    #[test]
    fn a_span_draws_like_uniform() {
        let mut a = RandomChooser::new(5);
        let mut b = RandomChooser::new(5);
        for _ in 0..100 {
            assert_eq!(
                a.choose(Purpose::Latency, Alternatives::Span { min: 30, len: 1971 }),
                b.choose(Purpose::Latency, Alternatives::Uniform(1971))
            );
        }
    }

    #[test]
    fn weighted_never_picks_zero_weight() {
        let mut c = RandomChooser::new(1);
        for _ in 0..1000 {
            let v = c.choose(
                Purpose::AgentDecision,
                Alternatives::Weighted(&[0, 1, 0, 3]),
            );
            assert!(v == 1 || v == 3, "picked {v}");
        }
    }
}
