//! The run after its ramp. Slow start overshoots whatever queue the path
//! has and retransmits what it dropped, in the first round trips; a path is
//! judged on what follows: the retransmits after the first interval, and
//! how steady the summed rate was.

use linerate_result::{IntervalSample, Side};

use super::arith::ratio;

/// A run after its ramp: retransmits and the rate's steadiness.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Steady {
    /// When the ramp (the first interval) ended, seconds into the
    /// measurement; 0 when the run had too few intervals to tell it apart,
    /// and the figures below are then the whole run's.
    pub ramp_seconds: f64,
    /// Retransmits after the ramp, and their share of the bytes sent then.
    pub retransmits: u64,
    /// Retransmitted share of the bytes sent after the ramp.
    pub retrans_share: f64,
    /// The summed rate's coefficient of variation over the intervals after
    /// the ramp; None with fewer than two of them.
    pub variation: Option<f64>,
    /// The summed rate's mean over the intervals after the ramp, bit/s.
    pub bits_per_second: Option<f64>,
    /// The largest congestion window a sender's intervals after the ramp
    /// saw, segments (the median of the streams' when there are several);
    /// None without TCP_INFO there.
    pub peak_cwnd_segments: Option<f64>,
}

impl Steady {
    /// The steady state of a run's intervals, or None when a sending
    /// stream has fewer than two intervals with TCP_INFO. Retransmits are
    /// the senders' (TCP_INFO's counters); bytes and rates the receivers',
    /// where they are known: a sender counts what it wrote into its socket
    /// buffer, which a large buffer on a slow path takes in its first
    /// second and then nothing.
    pub fn of(intervals: &[IntervalSample]) -> Option<Steady> {
        let senders = by_stream(intervals, Side::Sender);
        if senders.is_empty() || senders.iter().any(|s| s.len() < 2) {
            return None;
        }
        let (mut retransmits, mut retrans_bytes) = (0u64, 0u64);
        for s in &senders {
            let (first, last) = (s[0].tcp?, s[s.len() - 1].tcp?);
            retransmits += u64::from(last.total_retrans.saturating_sub(first.total_retrans));
            if let (Some(a), Some(b)) = (first.bytes_retrans, last.bytes_retrans) {
                retrans_bytes += b.saturating_sub(a);
            }
        }
        let receivers = by_stream(intervals, Side::Receiver);
        let delivered = if !receivers.is_empty() && receivers.iter().all(|s| s.len() >= 2) {
            &receivers
        } else {
            &senders
        };
        let rates = summed_rates(delivered);
        let moved: u64 = delivered
            .iter()
            .flat_map(|s| &s[1..])
            .map(|i| i.bytes)
            .sum();
        Some(Steady {
            ramp_seconds: senders.iter().map(|s| s[0].end).fold(0.0, f64::max),
            retransmits,
            retrans_share: ratio(retrans_bytes as f64, moved as f64),
            variation: variation(&rates),
            bits_per_second: mean(&rates),
            peak_cwnd_segments: peak_cwnd(&senders),
        })
    }
}

/// The intervals of one side, stream by stream, each in time order (a
/// sender's only those with TCP_INFO).
fn by_stream(intervals: &[IntervalSample], side: Side) -> Vec<Vec<&IntervalSample>> {
    let mut ours: Vec<&IntervalSample> = intervals
        .iter()
        .filter(|i| i.side == side && (side == Side::Receiver || i.tcp.is_some()))
        .collect();
    ours.sort_by(|a, b| a.stream.cmp(&b.stream).then(a.end.total_cmp(&b.end)));
    let mut streams: Vec<Vec<&IntervalSample>> = Vec::new();
    for i in ours {
        match streams.last_mut() {
            Some(s) if s[0].stream == i.stream => s.push(i),
            _ => streams.push(vec![i]),
        }
    }
    streams
}

/// The streams' summed rate, interval by interval after the first; a last
/// interval shorter than half the first (the sliver after the deadline)
/// is left out.
fn summed_rates(streams: &[Vec<&IntervalSample>]) -> Vec<f64> {
    let Some(count) = streams.iter().map(Vec::len).min() else {
        return Vec::new();
    };
    let length = |i: &IntervalSample| i.end - i.start;
    let full = length(streams[0][0]);
    (1..count)
        .filter(|&k| length(streams[0][k]) >= full / 2.0)
        .map(|k| streams.iter().map(|s| s[k].bits_per_second).sum())
        .collect()
}

/// The median over the senders of each one's largest congestion window
/// after its first interval, segments.
fn peak_cwnd(senders: &[Vec<&IntervalSample>]) -> Option<f64> {
    let mut peaks: Vec<f64> = senders
        .iter()
        .filter_map(|s| {
            s[1..]
                .iter()
                .filter_map(|i| i.tcp.map(|t| f64::from(t.snd_cwnd)))
                .reduce(f64::max)
        })
        .collect();
    if peaks.is_empty() {
        return None;
    }
    peaks.sort_by(f64::total_cmp);
    Some(peaks[peaks.len() / 2])
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The coefficient of variation of `rates`; None with fewer than two.
fn variation(rates: &[f64]) -> Option<f64> {
    if rates.len() < 2 {
        return None;
    }
    let mean = mean(rates)?;
    let var = rates.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / rates.len() as f64;
    Some(ratio(var.sqrt(), mean))
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::TcpSample;

    fn sample(stream: u16, end: f64, mbps: f64, retrans: u32) -> IntervalSample {
        IntervalSample {
            side: Side::Sender,
            stream,
            start: end - 1.0,
            end,
            bytes: (mbps * 1e6 / 8.0) as u64,
            bits_per_second: mbps * 1e6,
            tcp: Some(TcpSample {
                total_retrans: retrans,
                bytes_retrans: Some(u64::from(retrans) * 1448),
                ..Default::default()
            }),
            udp: None,
        }
    }

    #[test]
    fn retransmits_of_the_first_interval_are_the_ramps() {
        // Slow start dropped 7,000 segments in the first second, none after.
        let run: Vec<IntervalSample> = (1..=5)
            .map(|s| sample(0, f64::from(s), 928.0, 7000))
            .collect();
        let st = Steady::of(&run).unwrap();
        assert_eq!(st.ramp_seconds, 1.0);
        assert_eq!(st.retransmits, 0);
        assert_eq!(st.retrans_share, 0.0);
        assert_eq!(st.variation, Some(0.0));
    }

    #[test]
    fn streams_that_trade_rate_sum_to_a_steady_rate() {
        let mut run = Vec::new();
        for s in 1..=4 {
            let t = f64::from(s);
            let (a, b) = if s % 2 == 0 {
                (300.0, 600.0)
            } else {
                (600.0, 300.0)
            };
            run.push(sample(0, t, a, 10 * s));
            run.push(sample(1, t, b, 0));
        }
        let st = Steady::of(&run).unwrap();
        assert_eq!(st.retransmits, 30);
        assert!(st.variation.unwrap() < 1e-9);
        assert!((st.retrans_share - 30.0 * 1448.0 / (3.0 * 900e6 / 8.0)).abs() < 1e-9);
    }

    #[test]
    fn bytes_and_rates_are_the_receivers_where_known() {
        // A 16 MiB send buffer on a slow path: the writer's bytes all land
        // in the first second, the receiver's arrive steadily.
        let mut run: Vec<IntervalSample> = (1..=4)
            .map(|s| sample(0, f64::from(s), if s == 1 { 128.0 } else { 0.0 }, 10 + s))
            .collect();
        for s in 1..=4 {
            let mut r = sample(0, f64::from(s), 6.0, 0);
            r.side = Side::Receiver;
            r.tcp = None;
            run.push(r);
        }
        let st = Steady::of(&run).unwrap();
        assert_eq!(st.retransmits, 3);
        assert!((st.retrans_share - 3.0 * 1448.0 / (3.0 * 6e6 / 8.0)).abs() < 1e-12);
        assert_eq!(st.variation, Some(0.0));
    }

    #[test]
    fn the_peak_window_is_after_the_ramp_and_the_streams_median() {
        let mut run = Vec::new();
        for (stream, cwnds) in [[900, 2, 30, 5], [900, 40, 3, 3], [900, 1, 2, 1]]
            .iter()
            .enumerate()
        {
            for (k, &cwnd) in cwnds.iter().enumerate() {
                let mut i = sample(stream as u16, (k + 1) as f64, 100.0, 0);
                i.tcp.as_mut().unwrap().snd_cwnd = cwnd;
                run.push(i);
            }
        }
        assert_eq!(Steady::of(&run).unwrap().peak_cwnd_segments, Some(30.0));
    }

    #[test]
    fn a_run_of_one_interval_has_no_steady_state_and_a_sliver_is_not_a_rate() {
        assert_eq!(Steady::of(&[sample(0, 1.0, 900.0, 5)]), None);
        let mut run: Vec<IntervalSample> =
            (1..=3).map(|s| sample(0, f64::from(s), 900.0, 0)).collect();
        let mut sliver = sample(0, 3.05, 10.0, 0);
        sliver.start = 3.0;
        run.push(sliver);
        assert_eq!(Steady::of(&run).unwrap().variation, Some(0.0));
    }
}
