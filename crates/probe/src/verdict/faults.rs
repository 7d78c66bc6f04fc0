//! Faults a real path or host has that no end's setting explains: a hop
//! whose MTU drops full-size segments in silence, a policer, a CPU quota.
//! Each rule asks for its own evidence above its own threshold; a run that
//! shows none of them passes on to the other rules.

use super::features::Features;
use super::finding::{ALWAYS_SENDING, FLAT_VARIATION, Finding};

/// A congestion window of this many segments or fewer, with retransmits
/// and nothing delivered: every full-size segment sent was lost.
pub const STUCK_CWND: f64 = 2.0;

/// Segments this share of the full size or more were full-size ones.
pub const FULL_SIZE: f64 = 0.9;

/// Nothing arrived although the senders had data waiting. Where their
/// retransmitted full-size segments went unacknowledged with the
/// congestion window held at a segment or two (while the session's small
/// messages passed, or it would not have started), a hop with a smaller
/// MTU dropped them and its ICMP never came back: a path MTU black hole.
pub fn nothing_moved(f: &Features) -> Option<Finding> {
    if f.received_bytes > 0.0 || f.run_seconds <= 0.0 {
        return None;
    }
    let full_size = f.full_mss <= 0.0 || f.snd_mss >= FULL_SIZE * f.full_mss;
    let black_hole = f.total_retransmits > 0
        && f.cwnd_segments <= STUCK_CWND
        && f.snd_mss >= 1000.0
        && full_size;
    Some(if black_hole {
        Finding::MtuBlackHole
    } else {
        Finding::NothingMoved
    })
}

/// Retransmitted share of bytes after the ramp above which a flat rate
/// with no queue is policed: a policer drops what exceeds its rate (5 and
/// 11 % with cubic and bbr at 500 Mbit/s, docs/verdict.md#policer); random
/// loss of a few per mille leaves less.
pub const POLICED_LOSS: f64 = 0.01;

/// A rate this many times what the loss would allow a Reno flow losing
/// packets at random (Mathis et al.: MSS / RTT x 1.22 / sqrt(p)): the losses
/// came in bursts, many a window, as a token bucket running dry drops
/// them; random loss of that share holds a flow near the bound (cubic at
/// a 500 Mbit/s policer ran at 2.2 times it, bbr at 6.7 times).
pub const BURSTY_LOSS: f64 = 1.5;

/// Rate variation after the ramp up to which a policed rate is flat: a
/// policer's ceiling is its rate, though cubic's cuts and bbr's probes
/// swing it a little either side (11 % and 10 % at 500 Mbit/s).
pub const POLICED_VARIATION: f64 = 2.0 * FLAT_VARIATION;

/// A policer: senders that always had data, no queue standing anywhere
/// (a shaper queues what exceeds its rate; a policer drops it), heavy
/// loss that came in bursts, and a flat rate: the rate is the policer's.
/// The CPU and the ends' windows and buffers were ruled out before.
pub fn policer(f: &Features, cpu_bound: bool) -> Option<Finding> {
    let flat = f.rate_variation.is_some_and(|v| v <= POLICED_VARIATION);
    let policed = f.busy_share >= ALWAYS_SENDING
        && !cpu_bound
        && !f.standing_queue()
        && f.retrans_share >= POLICED_LOSS
        && f.per_stream_bps >= BURSTY_LOSS * random_loss_rate(f)
        && flat;
    policed.then_some(Finding::Policer {
        rate_bps: f.steady_bps,
    })
}

/// What a Reno flow at the senders' round trip and segment size carries
/// when it loses the run's share of packets at random, bits/s (Mathis,
/// Semke, Mahdavi and Ott, 1997); infinite without loss or a round trip.
pub fn random_loss_rate(f: &Features) -> f64 {
    if f.retrans_share <= 0.0 || f.rtt_us <= 0.0 {
        return f64::INFINITY;
    }
    f.snd_mss * 8.0 / (f.rtt_us / 1e6) * (1.5f64).sqrt() / f.retrans_share.sqrt()
}

/// Share of the scheduling periods a quota throttled, above which it held
/// the end back: a quota that never ran out limited nothing.
pub const QUOTA_THROTTLED: f64 = 0.25;

/// A cgroup's CPU quota throttled an end in a good share of the periods.
pub fn quota(f: &Features) -> Option<Finding> {
    let q = f.quota?;
    (q.throttled_share >= QUOTA_THROTTLED).then_some(Finding::Quota { side: q.side })
}

/// A run whose segments TCP's MTU probing lowered under what the path's
/// MTU allows, judged lossy, unknown or mixed: its retransmits were the
/// probes of larger segments that the black hole swallowed (a recovered
/// run lost 2 % of its bytes so, docs/verdict.md#path-mtu). Any other
/// limit stands, with the lowered segments said beside it.
pub fn mtu_probed(f: &Features, found: Finding) -> Option<Finding> {
    let lossy_or_unknown = matches!(
        found,
        Finding::Network | Finding::Mixed { .. } | Finding::Unidentified | Finding::PathShort
    );
    (f.mss_lowered() && lossy_or_unknown).then_some(Finding::MtuProbed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::features::Quota;
    use crate::verdict::rules::decide;
    use linerate_result::Side;

    /// One stream through a router whose nftables policer drops above
    /// 500 Mbit/s, 4 s, no delay (figures of the matrix's run with cubic).
    fn policed() -> Features {
        Features {
            senders: 1,
            busy_us: 4e6,
            busy_share: 0.999,
            run_seconds: 4.0,
            received_bytes: 305_840_896.0,
            retrans_share: 0.054,
            retransmits: 6889,
            total_retransmits: 8521,
            ramp_seconds: 1.0,
            rate_variation: Some(0.107),
            steady_bps: 490.8e6,
            bits_per_second: 611e6,
            per_stream_bps: 611e6,
            rtt_us: 273.0,
            min_rtt_us: 2.0,
            queue_us: 271.0,
            sender_util: 0.021,
            receiver_util: 0.031,
            host_busy: 0.032,
            min_rcvbuf: 32 << 20,
            min_sndbuf: 3_764_736,
            cwnd_bytes: 59_368.0,
            cwnd_segments: 41.0,
            peer_window: 29_908_992.0,
            snd_mss: 1448.0,
            pmtu: 1500.0,
            full_mss: 1448.0,
            ..Features::default()
        }
    }

    #[test]
    fn a_flat_rate_with_bursty_loss_and_no_queue_is_a_policer() {
        assert_eq!(
            decide(&policed(), None),
            Finding::Policer { rate_bps: 490.8e6 }
        );
        // bbr at the same policer: 10.8 % retransmitted, 6.7 times the
        // random-loss bound.
        let bbr = Features {
            retrans_share: 0.108,
            rtt_us: 575.0,
            queue_us: 573.0,
            rate_variation: Some(0.094),
            steady_bps: 501.7e6,
            per_stream_bps: 501.7e6,
            ..policed()
        };
        assert!(matches!(decide(&bbr, None), Finding::Policer { .. }));
        assert!(BURSTY_LOSS * random_loss_rate(&bbr) < bbr.per_stream_bps / 4.0);
    }

    #[test]
    fn near_misses_are_not_policers() {
        // A shaper queues what exceeds its rate: a standing queue.
        let shaper = Features {
            rtt_us: 5300.0,
            min_rtt_us: 100.0,
            queue_us: 5200.0,
            retrans_share: 0.002,
            ..policed()
        };
        assert!(!matches!(decide(&shaper, None), Finding::Policer { .. }));
        // Random loss of 2 % holds a stream near the Mathis bound: the
        // loss, not a ceiling, set the rate.
        let random = Features {
            retrans_share: 0.02,
            ..policed()
        };
        let bound = random_loss_rate(&random);
        let random = Features {
            per_stream_bps: bound,
            steady_bps: bound,
            ..random
        };
        assert_eq!(decide(&random, None), Finding::Network);
        // A few per mille lost is not a policer's share.
        let light = Features {
            retrans_share: 0.005,
            ..policed()
        };
        assert_eq!(decide(&light, None), Finding::Network);
        // A rate that swings is no ceiling.
        let swinging = Features {
            rate_variation: Some(0.4),
            ..policed()
        };
        assert!(!matches!(decide(&swinging, None), Finding::Policer { .. }));
        // Senders short of CPU set their own rate.
        let busy = Features {
            sender_util: 0.97,
            ..policed()
        };
        assert!(matches!(decide(&busy, None), Finding::Cpu { .. }));
    }

    /// Nothing arrived in 3 s: 3 retransmits of 1448-byte segments, the
    /// congestion window at one (a router hop at MTU 1280 whose ICMP was
    /// dropped).
    fn black_hole() -> Features {
        Features {
            senders: 1,
            busy_us: 3e6,
            busy_share: 0.999,
            run_seconds: 3.0,
            received_bytes: 0.0,
            total_retransmits: 3,
            cwnd_segments: 1.0,
            cwnd_bytes: 1448.0,
            snd_mss: 1448.0,
            pmtu: 1500.0,
            full_mss: 1448.0,
            rtt_us: 26.0,
            min_rtt_us: 6.0,
            receiver_util: 0.879,
            peer_window: 65536.0,
            min_rcvbuf: 262_144,
            min_sndbuf: 69_120,
            ..Features::default()
        }
    }

    #[test]
    fn full_size_segments_lost_with_nothing_arriving_are_a_black_hole() {
        assert_eq!(decide(&black_hole(), None), Finding::MtuBlackHole);
        // No retransmits: nothing was lost, so not the MTU; nothing moved
        // all the same, and no rule says why.
        let silent = Features {
            total_retransmits: 0,
            ..black_hole()
        };
        assert_eq!(decide(&silent, None), Finding::NothingMoved);
        // Small segments lost as well: not a matter of size.
        let small = Features {
            snd_mss: 536.0,
            ..black_hole()
        };
        assert_eq!(decide(&small, None), Finding::NothingMoved);
        // Anything that arrived is judged by the other rules.
        let moved = Features {
            received_bytes: 1e6,
            ..black_hole()
        };
        assert!(!matches!(
            decide(&moved, None),
            Finding::MtuBlackHole | Finding::NothingMoved
        ));
    }

    #[test]
    fn segments_lowered_by_mtu_probing_explain_the_loss() {
        // The black hole with net.ipv4.tcp_mtu_probing=1: after 6 s the
        // kernel went on at 1228-byte segments; the probes of larger ones
        // cost 2 % of the bytes.
        let probed = Features {
            run_seconds: 12.0,
            received_bytes: 15e9,
            total_retransmits: 239_290,
            retransmits: 239_288,
            retrans_share: 0.02,
            cwnd_segments: 220.0,
            cwnd_bytes: 270_160.0,
            snd_mss: 1228.0,
            rate_variation: Some(0.97),
            steady_bps: 10.9e9,
            per_stream_bps: 10e9,
            receiver_util: 0.158,
            sender_util: 0.441,
            peer_window: 19_846_144.0,
            min_rcvbuf: 32 << 20,
            min_sndbuf: 4 << 20,
            ..black_hole()
        };
        assert!(probed.mss_lowered());
        assert_eq!(decide(&probed, None), Finding::MtuProbed);
        // Segments at the full size were never lowered.
        let full = Features {
            snd_mss: 1448.0,
            ..probed
        };
        assert!(!full.mss_lowered());
        assert_eq!(decide(&full, None), Finding::Network);
    }

    /// The receiver in a cgroup allowed 0.1 of a core (loopback, 4 s).
    fn under_quota(throttled_share: f64) -> Features {
        Features {
            senders: 1,
            busy_us: 4e6,
            busy_share: 0.999,
            run_seconds: 4.0,
            received_bytes: 2.68e9,
            rwnd_share: 0.209,
            rtt_us: 5577.0,
            min_rtt_us: 1.0,
            queue_us: 5576.0,
            rate_variation: Some(0.091),
            steady_bps: 5.56e9,
            per_stream_bps: 5.36e9,
            sender_util: 0.107,
            receiver_util: 0.101,
            receiver_wait: 0.897,
            host_busy: 0.117,
            min_rcvbuf: 17_125_182,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 1_964_490.0,
            snd_mss: 65483.0,
            quota: Some(Quota {
                side: Side::Receiver,
                cores: 0.1,
                throttled_share,
                throttled_seconds: 3.765 * throttled_share / 0.976,
            }),
            ..Features::default()
        }
    }

    #[test]
    fn a_quota_that_throttled_is_named_and_one_that_never_did_is_not() {
        assert_eq!(
            decide(&under_quota(0.976), None),
            Finding::Quota {
                side: Side::Receiver
            }
        );
        let idle_quota = under_quota(0.0);
        assert!(!matches!(decide(&idle_quota, None), Finding::Quota { .. }));
        assert!(!matches!(
            decide(&under_quota(QUOTA_THROTTLED * 0.9), None),
            Finding::Quota { .. }
        ));
    }
}
