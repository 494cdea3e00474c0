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
    streams: [Option<ChaCha8Rng>; Purpose::COUNT],
}

impl RandomChooser {
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            streams: Default::default(),
        }
    }

    /// Starts over with another seed, as if newly created.
    pub fn reset(&mut self, seed: u64) {
        self.seed = seed;
        self.streams = Default::default();
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn stream(&mut self, purpose: Purpose) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.streams[purpose.index()].get_or_insert_with(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(purpose.index() as u64);
            rng
        })
    }
}

impl Chooser for RandomChooser {
    fn choose(&mut self, purpose: Purpose, alternatives: Alternatives<'_>) -> u64 {
        let rng = self.stream(purpose);
        match alternatives {
            Alternatives::Uniform(n) => rng.random_range(0..n),
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
