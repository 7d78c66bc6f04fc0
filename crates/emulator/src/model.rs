//! Impairment decisions, per TCP segment, seeded and deterministic.
//!
//! The decisions are kept apart from the packet I/O so they can be tested
//! over millions of packets without a kernel in the loop.

use serde::{Deserialize, Serialize};

/// The conditions of one direction of an emulated link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Impairments {
    /// One-way delay in microseconds (half the configured RTT).
    pub delay_us: u64,
    /// Delay varies uniformly within plus or minus this many microseconds;
    /// packets keep their order (a later packet never leaves before an earlier one).
    pub jitter_us: u64,
    /// Probability that a segment is lost.
    pub loss: f64,
    /// Mean length of a loss burst in segments; 1 or less means independent losses.
    pub loss_burst: f64,
    /// Probability that a segment is reordered, as `reorder_model` says.
    pub reorder: f64,
    /// How a reordered segment overtakes others.
    #[serde(default)]
    pub reorder_model: ReorderModel,
    /// Segments a reordered one overtakes ([`ReorderModel::Displace`]).
    #[serde(default = "default_reorder_depth")]
    pub reorder_depth: u32,
    /// Probability that a segment is delivered twice.
    pub duplicate: f64,
    /// Bottleneck rate in bits per second; none means as fast as the emulator forwards.
    pub rate_bps: Option<u64>,
    /// Bytes the bottleneck queue holds before it drops at the tail.
    pub queue_bytes: u64,
    /// Seed of the random decisions; the same seed and traffic give the same fates.
    pub seed: u64,
}

/// How a reordered segment overtakes the ones ahead of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReorderModel {
    /// It crosses the link and its delay as every segment does, and leaves
    /// just ahead of the few queued before it, as a path with parallel
    /// lanes reorders: the round trip it shows stays the path's.
    #[default]
    Displace,
    /// It skips the delay line and leaves at once, ahead of everything
    /// queued (netem's `reorder`): on a long delay line it shows a round
    /// trip near zero, which delay-based congestion control (bbr) takes for
    /// the path's.
    Netem,
}

impl ReorderModel {
    /// The model's name in flags and records.
    pub fn as_str(self) -> &'static str {
        match self {
            ReorderModel::Displace => "displace",
            ReorderModel::Netem => "netem",
        }
    }
}

/// Segments a reordered one overtakes by default: a small displacement,
/// as reordering on real paths mostly is (RFC 4737's reordering extent of
/// a few packets).
pub const DEFAULT_REORDER_DEPTH: u32 = 3;

fn default_reorder_depth() -> u32 {
    DEFAULT_REORDER_DEPTH
}

impl Default for Impairments {
    fn default() -> Impairments {
        Impairments {
            delay_us: 0,
            jitter_us: 0,
            loss: 0.0,
            loss_burst: 0.0,
            reorder: 0.0,
            reorder_model: ReorderModel::default(),
            reorder_depth: DEFAULT_REORDER_DEPTH,
            duplicate: 0.0,
            rate_bps: None,
            queue_bytes: 0,
            seed: 0,
        }
    }
}

impl Impairments {
    /// Whether any decision is made per segment, so super-packets must be looked into.
    pub fn per_segment(&self) -> bool {
        self.loss > 0.0 || self.reorder > 0.0 || self.duplicate > 0.0 || self.rate_bps.is_some()
    }
}

/// What happens to one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered after the delay.
    Deliver,
    /// Lost.
    Lose,
    /// Delivered at once, ahead of the delay line.
    Reorder,
    /// Delivered twice, both through the delay line.
    Duplicate,
}

/// Draws fates and delays for one direction.
pub struct Decider {
    rng: fastrand::Rng,
    loss: f64,
    reorder: f64,
    duplicate: f64,
    jitter_us: u64,
    /// Gilbert-Elliott transition probabilities; in the bad state every segment is lost.
    good_to_bad: f64,
    bad_to_good: f64,
    bad: bool,
}

impl Decider {
    /// The decider of source `stream`, seeded from the impairments' seed.
    pub fn new(imp: &Impairments, stream: u64) -> Decider {
        let burst = imp.loss_burst.max(1.0);
        let loss = imp.loss.clamp(0.0, 1.0);
        // In the two-state chain the share of time in the bad state is
        // g / (g + b); with b = 1 / burst that share equals `loss` when
        // g = loss * b / (1 - loss).
        let bad_to_good = 1.0 / burst;
        let good_to_bad = if loss >= 1.0 {
            1.0
        } else {
            loss * bad_to_good / (1.0 - loss)
        };
        Decider {
            rng: fastrand::Rng::with_seed(imp.seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            loss,
            reorder: imp.reorder.clamp(0.0, 1.0),
            duplicate: imp.duplicate.clamp(0.0, 1.0),
            jitter_us: imp.jitter_us,
            good_to_bad,
            bad_to_good,
            bad: false,
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.f64() < p
    }

    fn lost(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        if self.bad_to_good >= 1.0 {
            return self.chance(self.loss);
        }
        let flip = if self.bad {
            self.bad_to_good
        } else {
            self.good_to_bad
        };
        if self.chance(flip) {
            self.bad = !self.bad;
        }
        self.bad
    }

    /// The next segment's fate.
    pub fn fate(&mut self) -> Fate {
        if self.lost() {
            Fate::Lose
        } else if self.chance(self.duplicate) {
            Fate::Duplicate
        } else if self.chance(self.reorder) {
            Fate::Reorder
        } else {
            Fate::Deliver
        }
    }

    /// Signed variation to add to the one-way delay, in nanoseconds.
    pub fn jitter_ns(&mut self) -> i64 {
        if self.jitter_us == 0 {
            return 0;
        }
        let span = self.jitter_us as i64 * 1000;
        self.rng.i64(-span..=span)
    }
}

/// A bottleneck: serialises bytes at `rate_bps` behind a tail-drop queue.
pub struct Bottleneck {
    rate_bps: Option<u64>,
    queue_bytes: u64,
    /// When the link finishes sending what it has accepted so far.
    free_at_ns: u64,
}

impl Bottleneck {
    /// The bottleneck of the impairments' rate and queue.
    pub fn new(imp: &Impairments) -> Bottleneck {
        Bottleneck {
            rate_bps: imp.rate_bps.filter(|r| *r > 0),
            queue_bytes: imp.queue_bytes,
            free_at_ns: 0,
        }
    }

    /// Accepts `bytes` arriving at `now_ns`; returns when they have left the
    /// link, or `None` when the queue is full and they are dropped.
    pub fn admit(&mut self, now_ns: u64, bytes: u64) -> Option<u64> {
        let Some(rate) = self.rate_bps else {
            return Some(now_ns);
        };
        let start = self.free_at_ns.max(now_ns);
        let backlog_bytes = (u128::from(start - now_ns) * u128::from(rate) / 8_000_000_000) as u64;
        if backlog_bytes + bytes > self.queue_bytes.max(bytes) {
            return None;
        }
        let busy_ns = (u128::from(bytes) * 8_000_000_000 / u128::from(rate)) as u64;
        self.free_at_ns = start + busy_ns;
        Some(self.free_at_ns)
    }

    /// Bytes still to leave the link at `now_ns` (0 without a rate).
    pub fn backlog_bytes(&self, now_ns: u64) -> u64 {
        let Some(rate) = self.rate_bps else {
            return 0;
        };
        let left_ns = self.free_at_ns.saturating_sub(now_ns);
        (u128::from(left_ns) * u128::from(rate) / 8_000_000_000) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp() -> Impairments {
        Impairments {
            seed: 7,
            queue_bytes: 1 << 20,
            ..Impairments::default()
        }
    }

    fn count(imp: &Impairments, n: usize, want: Fate) -> usize {
        let mut d = Decider::new(imp, 0);
        (0..n).filter(|_| d.fate() == want).count()
    }

    #[test]
    fn random_loss_over_two_million_segments_is_within_ten_percent() {
        let i = Impairments {
            loss: 0.001,
            ..imp()
        };
        let lost = count(&i, 2_000_000, Fate::Lose) as f64;
        assert!((lost / 2000.0 - 1.0).abs() < 0.1, "{lost}");
    }

    #[test]
    fn reorder_and_duplicate_rates_hold() {
        let i = Impairments {
            reorder: 0.0002,
            duplicate: 0.01,
            ..imp()
        };
        let reordered = count(&i, 5_000_000, Fate::Reorder) as f64;
        assert!((reordered / 1000.0 - 1.0).abs() < 0.1, "{reordered}");
        let dup = count(&i, 1_000_000, Fate::Duplicate) as f64;
        assert!((dup / 10_000.0 - 1.0).abs() < 0.1, "{dup}");
    }

    #[test]
    fn bursty_loss_keeps_the_mean_rate_and_the_burst_length() {
        let i = Impairments {
            loss: 0.01,
            loss_burst: 5.0,
            ..imp()
        };
        let mut d = Decider::new(&i, 3);
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..3_000_000 {
            let l = d.fate() == Fate::Lose;
            lost += l as u64;
            bursts += (l && !prev) as u64;
            prev = l;
        }
        let rate = lost as f64 / 3e6;
        let mean_burst = lost as f64 / bursts as f64;
        assert!((rate / 0.01 - 1.0).abs() < 0.1, "rate {rate}");
        assert!((mean_burst / 5.0 - 1.0).abs() < 0.1, "burst {mean_burst}");
    }

    #[test]
    fn same_seed_same_fates_other_seed_other_fates() {
        let i = Impairments {
            loss: 0.1,
            reorder: 0.1,
            ..imp()
        };
        let run = |i: &Impairments| {
            let mut d = Decider::new(i, 1);
            (0..1000).map(|_| d.fate()).collect::<Vec<_>>()
        };
        assert_eq!(run(&i), run(&i));
        assert_ne!(
            run(&i),
            run(&Impairments {
                seed: 8,
                ..i.clone()
            })
        );
    }

    #[test]
    fn jitter_stays_within_its_bound() {
        let i = Impairments {
            jitter_us: 1000,
            ..imp()
        };
        let mut d = Decider::new(&i, 0);
        assert!(
            (0..10_000)
                .map(|_| d.jitter_ns())
                .all(|j| j.abs() <= 1_000_000)
        );
    }

    #[test]
    fn bottleneck_serialises_at_its_rate_and_drops_at_the_tail() {
        // 1 Gbit/s: 125 bytes per microsecond.
        let i = Impairments {
            rate_bps: Some(1_000_000_000),
            queue_bytes: 250_000,
            ..imp()
        };
        let mut b = Bottleneck::new(&i);
        assert_eq!(b.admit(0, 125_000), Some(1_000_000));
        assert_eq!(b.admit(0, 125_000), Some(2_000_000));
        assert_eq!(b.admit(0, 125_000), None, "queue of 250 kB is full");
        // A millisecond later one of the two queued packets has left.
        assert_eq!(b.admit(1_000_000, 125_000), Some(3_000_000));
        let free = Impairments {
            rate_bps: None,
            ..i
        };
        assert_eq!(Bottleneck::new(&free).admit(5, 1 << 30), Some(5));
    }
}
