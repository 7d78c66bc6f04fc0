//! The search for the highest UDP rate a path carries without loss: which
//! rate to try next, given what the earlier probes found. No I/O: the
//! caller runs each probe and records it.

use serde::Serialize;

/// A probe passes only when this share of the asked rate arrived: a sender
/// that cannot keep the rate loses nothing and proves nothing.
pub const RATE_KEPT: f64 = 0.95;
/// The search ends once the passing and failing rates are this close.
pub const CLOSE_ENOUGH: f64 = 1.02;

/// One probe: the rate asked and what came of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Probe {
    /// The rate asked for, bits/s.
    pub rate_bps: u64,
    /// What arrived, bits/s.
    pub received_bps: f64,
    /// Datagrams lost.
    pub lost: u64,
    /// None was lost.
    pub passed: bool,
}

/// Tries the ceiling first (a path that carries it needs no search), then
/// halves the gap between the highest passing and the lowest failing rate
/// geometrically, as rates span orders of magnitude.
#[derive(Debug, Clone)]
pub struct RateSearch {
    floor: u64,
    ceiling: u64,
    probes_left: u32,
    passing: Option<u64>,
    failing: Option<u64>,
    tried: Vec<Probe>,
}

impl RateSearch {
    /// Between `floor` and `ceiling` bits/s (ordered by the caller), at most
    /// `probes` runs.
    pub fn new(floor: u64, ceiling: u64, probes: u32) -> RateSearch {
        RateSearch {
            floor: floor.min(ceiling).max(1),
            ceiling: ceiling.max(1),
            probes_left: probes,
            passing: None,
            failing: None,
            tried: Vec::new(),
        }
    }

    /// The rate to probe next; `None` when the search is over.
    pub fn next_rate(&self) -> Option<u64> {
        if self.probes_left == 0 {
            return None;
        }
        match (self.passing, self.failing) {
            (None, None) => Some(self.ceiling),
            // The ceiling passed.
            (Some(_), None) => None,
            (ok, Some(bad)) => {
                let ok = ok.unwrap_or(self.floor);
                if ok >= bad || (bad as f64) / (ok as f64) <= CLOSE_ENOUGH {
                    // Nothing passed yet: the floor itself is worth one try.
                    return (self.passing.is_none() && self.floor < bad).then_some(self.floor);
                }
                Some(((ok as f64 * bad as f64).sqrt() as u64).clamp(ok + 1, bad - 1))
            }
        }
    }

    /// What a probe at `rate_bps` found.
    pub fn record(&mut self, rate_bps: u64, received_bps: f64, lost: u64) -> Probe {
        let passed = lost == 0 && received_bps >= RATE_KEPT * rate_bps as f64;
        if passed {
            self.passing = Some(self.passing.map_or(rate_bps, |p| p.max(rate_bps)));
        } else {
            self.failing = Some(self.failing.map_or(rate_bps, |f| f.min(rate_bps)));
            if rate_bps <= self.floor {
                // The floor failed: there is nothing lower to try.
                self.probes_left = 0;
            }
        }
        self.probes_left = self.probes_left.saturating_sub(1);
        let probe = Probe {
            rate_bps,
            received_bps,
            lost,
            passed,
        };
        self.tried.push(probe);
        probe
    }

    /// Every probe so far, in order.
    pub fn tried(&self) -> &[Probe] {
        &self.tried
    }

    /// The passing probe that received the most, and the failing probe
    /// just above the highest passing rate (why no more passed).
    pub fn outcome(&self) -> (Option<Probe>, Option<Probe>) {
        let best = self
            .tried
            .iter()
            .filter(|p| p.passed)
            .max_by(|a, b| a.received_bps.total_cmp(&b.received_bps))
            .copied();
        let above = self
            .tried
            .iter()
            .filter(|p| !p.passed)
            .min_by_key(|p| p.rate_bps)
            .copied();
        (best, above)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs a search against a path that carries exactly `capacity`.
    fn against(capacity: u64, floor: u64, ceiling: u64, probes: u32) -> RateSearch {
        let mut s = RateSearch::new(floor, ceiling, probes);
        while let Some(rate) = s.next_rate() {
            let lost = u64::from(rate > capacity);
            s.record(rate, rate.min(capacity) as f64, lost);
        }
        s
    }

    #[test]
    fn a_path_that_carries_the_ceiling_takes_one_probe() {
        let s = against(u64::MAX, 1_000_000, 10_000_000_000, 10);
        assert_eq!(s.tried().len(), 1);
        assert_eq!(s.outcome().0.unwrap().rate_bps, 10_000_000_000);
    }

    #[test]
    fn a_path_that_carries_nothing_stops_at_the_floor() {
        let s = against(0, 1_000_000, 10_000_000_000, 16);
        assert_eq!(s.outcome(), (None, Some(s.tried()[s.tried().len() - 1])));
        assert_eq!(s.tried().last().unwrap().rate_bps, 1_000_000);
        assert!(s.tried().len() <= 16);
    }

    #[test]
    fn a_sender_that_cannot_keep_the_rate_does_not_pass() {
        let mut s = RateSearch::new(1, 100, 5);
        let p = s.record(100, 50.0, 0);
        assert!(!p.passed);
    }

    proptest! {
        /// Within its probes, the search brackets the capacity: every
        /// passing rate is at most it, every failing one above, and with
        /// enough probes the best passing is within CLOSE_ENOUGH of it.
        #[test]
        fn brackets_the_capacity(capacity in 1_000_000u64..100_000_000_000) {
            let (floor, ceiling) = (1_000_000, 400_000_000_000);
            let s = against(capacity, floor, ceiling, 16);
            for p in s.tried() {
                prop_assert_eq!(p.passed, p.rate_bps <= capacity);
            }
            let best = s.outcome().0.unwrap().rate_bps;
            prop_assert!(best as f64 * CLOSE_ENOUGH * CLOSE_ENOUGH >= capacity as f64);
            prop_assert!(s.tried().len() <= 16);
        }
    }
}
