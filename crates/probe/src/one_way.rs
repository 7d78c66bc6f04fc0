//! Each direction's queueing delay from a bench's one-way delay probes
//! (docs/verdict.md#return-path): sans-IO, the echoes in, the summary out.
//!
//! A probe's delay to the server is its arrival on the server's clock less
//! its departure on the client's: the one-way delay plus the clocks'
//! offset. Its delay back is its echo's arrival on the client's clock less
//! the echo's departure on the server's: the one-way delay less the same
//! offset. Each, less its own least over the run, is that direction's
//! queueing delay with the offset cancelled, as LEDBAT (RFC 6817) measures
//! it; the clocks' drift over a run of seconds is microseconds.

use linerate_result::one_way::{OneWayDelay, QueueDelay};

/// Fewer answered probes than this while the streams ran say nothing.
pub const MIN_ANSWERED: usize = 5;

/// A probe whose echo came back: its four stamps, two on each end's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// When the probe left, on the client's clock, ns.
    pub client_sent_ns: u64,
    /// When it arrived, on the server's clock, ns.
    pub server_received_ns: u64,
    /// When its echo left, on the server's clock, ns.
    pub server_sent_ns: u64,
    /// When the echo arrived, on the client's clock, ns.
    pub client_received_ns: u64,
    /// The probe left while the streams ran (not before they began).
    pub during_run: bool,
}

impl Answered {
    /// Its delay to the server and back (offset in, ns), where its stamps
    /// are in order: the echo left the server after the probe came, and
    /// came back after the probe left.
    fn delays(&self) -> Option<(i128, i128)> {
        let e = self;
        let held = e.server_sent_ns.checked_sub(e.server_received_ns)?;
        let round_trip = self.client_received_ns.checked_sub(e.client_sent_ns)?;
        if held > round_trip {
            return None;
        }
        let to_server = i128::from(e.server_received_ns) - i128::from(e.client_sent_ns);
        let to_client = i128::from(e.client_received_ns) - i128::from(e.server_sent_ns);
        Some((to_server, to_client))
    }
}

/// Each direction's queueing over the probes that left while the streams
/// ran, against the least delay of every probe (those before the streams
/// began included: they saw the path empty). `sent` counts the probes sent
/// while the streams ran. None with fewer than [`MIN_ANSWERED`] of them
/// answered.
pub fn summarize(sent: u32, answered: &[Answered]) -> Option<OneWayDelay> {
    let all: Vec<(i128, i128, bool)> = answered
        .iter()
        .filter_map(|a| a.delays().map(|(to, back)| (to, back, a.during_run)))
        .collect();
    let least_to = all.iter().map(|d| d.0).min()?;
    let least_back = all.iter().map(|d| d.1).min()?;
    let run: Vec<&(i128, i128, bool)> = all.iter().filter(|d| d.2).collect();
    if run.len() < MIN_ANSWERED {
        return None;
    }
    let queue = |least: i128, pick: fn(&(i128, i128, bool)) -> i128| {
        let mut us: Vec<f64> = run.iter().map(|d| (pick(d) - least) as f64 / 1e3).collect();
        us.sort_by(f64::total_cmp);
        QueueDelay {
            median_us: percentile(&us, 0.5),
            p90_us: percentile(&us, 0.9),
        }
    };
    Some(OneWayDelay {
        probes_sent: sent.max(run.len() as u32),
        probes_answered: run.len() as u32,
        to_server: queue(least_to, |d| d.0),
        to_client: queue(least_back, |d| d.1),
    })
}

/// The `q` quantile of sorted, non-empty `v` (nearest rank).
fn percentile(v: &[f64], q: f64) -> f64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A probe sent at `at` ms, `to` ms on the way out and `back` on the
    /// way back, with the server's clock `offset` ms ahead.
    fn probe(at: u64, to: u64, back: u64, offset: u64) -> Answered {
        let ms = 1_000_000;
        let server_received_ns = (at + to + offset) * ms;
        Answered {
            client_sent_ns: at * ms,
            server_received_ns,
            server_sent_ns: server_received_ns + 10_000,
            client_received_ns: (at + to + back) * ms + 10_000,
            during_run: true,
        }
    }

    #[test]
    fn a_queue_on_the_way_back_is_told_from_the_way_out_whatever_the_clocks() {
        for offset in [0, 5_000_000] {
            let mut probes = vec![probe(0, 10, 10, offset)];
            probes.extend((1..=20).map(|i| probe(i * 50, 10, 10 + 200, offset)));
            let d = summarize(21, &probes).unwrap();
            assert!(d.to_server.median_us.abs() < 1.0, "{d:?}");
            assert!((d.to_client.median_us - 200_000.0).abs() < 1.0, "{d:?}");
            assert_eq!(d.probes_answered, 21);
        }
    }

    #[test]
    fn probes_before_the_run_set_the_floor_only_and_too_few_say_nothing() {
        let mut before = probe(0, 10, 10, 0);
        before.during_run = false;
        let run: Vec<Answered> = (1..=4).map(|i| probe(i * 50, 30, 10, 0)).collect();
        assert!(summarize(4, &[vec![before], run.clone()].concat()).is_none());
        let run: Vec<Answered> = (1..=5).map(|i| probe(i * 50, 30, 10, 0)).collect();
        let d = summarize(6, &[vec![before], run].concat()).unwrap();
        assert!((d.to_server.median_us - 20_000.0).abs() < 1.0, "{d:?}");
        assert_eq!((d.probes_sent, d.probes_answered), (6, 5));
    }

    #[test]
    fn stamps_out_of_order_are_left_out() {
        let mut bad = probe(0, 10, 10, 0);
        bad.server_sent_ns = 0;
        let mut probes = vec![bad; 10];
        assert!(summarize(10, &probes).is_none());
        bad = probe(0, 10, 10, 0);
        bad.client_received_ns = 0;
        probes.push(bad);
        assert!(summarize(11, &probes).is_none());
    }

    proptest! {
        #[test]
        fn queues_are_never_negative_and_the_90th_is_past_the_median(
            stamps in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>()), 0..40)
        ) {
            let answered: Vec<Answered> = stamps
                .iter()
                .map(|&(a, b, c, d, during_run)| Answered {
                    client_sent_ns: a,
                    server_received_ns: b,
                    server_sent_ns: c,
                    client_received_ns: d,
                    during_run,
                })
                .collect();
            if let Some(d) = summarize(answered.len() as u32, &answered) {
                for q in [d.to_server, d.to_client] {
                    prop_assert!(q.median_us >= 0.0 && q.median_us.is_finite());
                    prop_assert!(q.p90_us >= q.median_us);
                }
                prop_assert!(d.probes_answered <= d.probes_sent);
            }
        }
    }
}
