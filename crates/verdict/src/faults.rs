//! Faults a real path or host has that no end's setting explains: a hop
//! whose MTU drops full-size segments in silence, a policer, a CPU quota.
//! Each rule asks for its own evidence above its own threshold; a run that
//! shows none of them passes on to the other rules.

use super::features::Features;
use super::finding::{ALWAYS_SENDING, AT_CAPACITY, FLAT_VARIATION, Finding};
use super::{QUEUE_FLOOR_US, QUEUE_SHARE};

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

/// A window this many times the one random loss of the run's share
/// leaves a Reno flow on average (1.22 / sqrt(p) segments; its sawtooth
/// peaks at 4/3 of that): the largest the senders reached after the ramp
/// could not have grown under random loss, so the losses came in bursts,
/// as a token bucket running dry drops them. Cubic at a 500 Mbit/s
/// policer reached 2.3 to 28 times it, quiet or beside two busy loops;
/// at 4 % dropped at random it never passed 0.6 times it, its rate as flat
/// as the policer's in some runs (docs/verdict.md#policer).
pub const POLICED_WINDOW: f64 = 1.5;

/// Rate variation after the ramp up to which a policed rate is flat: a
/// policer's ceiling is its rate, though cubic's cuts and bbr's probes
/// swing it a little (0.03 to 0.143 at 500 Mbit/s, quiet or beside two
/// busy loops); bbr under random loss of the same share swings more (0.18
/// to 0.79). Cubic's rate under random loss can be as flat as a
/// policer's: [`POLICED_WINDOW`] tells those apart (docs/verdict.md#policer).
pub const POLICED_VARIATION: f64 = 1.5 * FLAT_VARIATION;

/// A round trip this far above its lowest, µs, or [`QUEUE_SHARE`] of the
/// lowest where that is more, is the hosts' own delay (delayed ACKs, a
/// reader waiting for its core), not a queue on the path: a policer at
/// 500 Mbit/s beside two busy loops showed 0.95 to 1.1 ms of it
/// (docs/verdict.md#policer). A shaper queues far more than this.
pub const POLICED_QUEUE_US: f64 = 2.0 * QUEUE_FLOOR_US;

/// A policer: senders that always had data, no queue standing on the
/// path (a shaper queues what exceeds its rate; a policer drops it),
/// heavy loss that came in bursts (a window random loss would not have
/// let grow), and a rate flat at a ceiling (bbr, which ignores loss,
/// swings under random loss): the rate is the policer's. The CPU and the
/// ends' windows and buffers were ruled out before.
pub fn policer(f: &Features, cpu_bound: bool) -> Option<Finding> {
    let flat = f.rate_variation.is_some_and(|v| v <= POLICED_VARIATION);
    let no_queue = f.queue_us < POLICED_QUEUE_US.max(QUEUE_SHARE * f.min_rtt_us);
    let policed = f.busy_share >= ALWAYS_SENDING
        && !cpu_bound
        && no_queue
        && f.retrans_share >= POLICED_LOSS
        && bursty_loss(f)
        && flat;
    policed.then_some(Finding::Policer {
        rate_bps: f.steady_bps,
    })
}

/// Loss that came in bursts rather than at random: a window well above
/// what random loss of that share leaves a flow.
pub fn bursty_loss(f: &Features) -> bool {
    losses_in_bursts(f.peak_cwnd_segments, f.retrans_share)
}

/// A peak window, segments, that losing `retrans_share` at random would
/// not have let grow.
pub fn losses_in_bursts(peak_cwnd_segments: f64, retrans_share: f64) -> bool {
    peak_cwnd_segments >= POLICED_WINDOW * random_loss_window(retrans_share)
}

/// The congestion window, in segments, that a Reno flow losing
/// `retrans_share` of its packets at random holds on average (Mathis et
/// al.); infinite without loss.
pub fn random_loss_window(retrans_share: f64) -> f64 {
    if retrans_share <= 0.0 {
        return f64::INFINITY;
    }
    (1.5f64).sqrt() / retrans_share.sqrt()
}

/// What a Reno flow at the senders' round trip and segment size carries
/// when it loses the run's share of packets at random, bits/s (Mathis,
/// Semke, Mahdavi and Ott, 1997); infinite without loss or a round trip.
pub fn random_loss_rate(f: &Features) -> f64 {
    if f.retrans_share <= 0.0 || f.rtt_us <= 0.0 {
        return f64::INFINITY;
    }
    f.snd_mss * 8.0 / (f.rtt_us / 1e6) * random_loss_window(f.retrans_share)
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

/// A forwarder whose threads used this many cores or more over the run
/// did real work for it: the run's packets, not an idle loop.
pub const FORWARDER_BUSY: f64 = 0.5;

/// A process forwarding the packets in software (a lab's emulator) that
/// worked for the run (half a core or more) while the senders always had
/// data, neither end's own threads saturated a core, and the rate stayed
/// under the path's known capacity (or none was set): that hop forwarded
/// all it could (docs/verdict.md#forwarding-hop). On one host its threads
/// and the ends' take turns on the cores, so the ends' waiting for a core
/// is the hop's doing, not a CPU limit of theirs; its loss and queue are
/// its own backlog too, so this comes before the path, network and CPU rules.
pub fn forwarding_hop(f: &Features, ends_saturated: bool) -> Option<Finding> {
    let hop = f.forwarder?;
    let under_capacity = f
        .capacity
        .is_none_or(|c| f.steady_bps < AT_CAPACITY * c.bits_per_second);
    (hop.cores >= FORWARDER_BUSY
        && under_capacity
        && f.busy_share >= ALWAYS_SENDING
        && !ends_saturated)
        .then_some(Finding::ForwardingHop { hop })
}

/// The ACKs' way queues this many times the data's way or more: the
/// queue that stretched the round trip is on the way back. A 200 kbit/s
/// return path kept 13 ms of queue on the ACKs' way and 0.02 ms on the
/// data's (docs/verdict.md#return-path).
pub const RETURN_QUEUE_RATIO: f64 = 4.0;

/// The one-way delay probe saw the ACKs' way queue, at least as much as
/// makes a standing queue ([`QUEUE_FLOOR_US`], [`QUEUE_SHARE`] of the
/// least round trip) and [`RETURN_QUEUE_RATIO`] times the data's way,
/// while the senders always had data: each send waits for an ACK, so a
/// slow or full way back sets the rate whatever the way out could carry
/// (docs/verdict.md#return-path). Before the path rules: the round trip's
/// standing queue is the return path's, not a full way out.
pub fn return_path(f: &Features) -> Option<Finding> {
    let q = f.one_way?;
    let queued = return_queue(q.ack_way_us, q.data_way_us, f.lowest_rtt_us(), f.queue_us);
    (f.busy_share >= ALWAYS_SENDING && queued).then_some(Finding::ReturnPath)
}

/// The probe's queue on the ACKs' way may be at most this many times the
/// streams' own standing queue (their round trip over its least): the
/// ACKs cross that queue too, so a probe that waited far longer waited
/// somewhere they did not. On loopback with the senders crowded onto one
/// core, the echo waited 3.89 ms for a CPU beside a round trip of 202 us
/// (CI, 2026-12-06); a 200 kbit/s way back queued the probe 1.1 to 1.25
/// times the round trip's queue (docs/verdict.md#return-path).
pub const PROBE_ROOM: f64 = 2.0;

/// The ACKs' way queued enough, and enough more than the data's way, to
/// be the queue of the run, and no more than the streams' round trip
/// holds (the audit asks the same of a recorded run).
pub fn return_queue(ack_way_us: f64, data_way_us: f64, lowest_rtt_us: f64, queue_us: f64) -> bool {
    ack_way_us >= QUEUE_FLOOR_US.max(QUEUE_SHARE * lowest_rtt_us)
        && ack_way_us >= RETURN_QUEUE_RATIO * data_way_us
        && ack_way_us <= PROBE_ROOM * queue_us
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Quota;
    use crate::rules::decide;
    use linerate_result::Side;
    use proptest::prelude::*;

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
            peak_cwnd_segments: 41.0,
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
        // bbr at the same policer: 10.8 % retransmitted.
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
        // cubic beside two busy loops, the smallest peak window measured:
        // 14 segments where random loss of 4 % leaves 6.
        let busy = Features {
            retrans_share: 0.040,
            rtt_us: 557.0,
            queue_us: 555.0,
            rate_variation: Some(0.094),
            steady_bps: 515e6,
            per_stream_bps: 515e6,
            cwnd_segments: 4.0,
            peak_cwnd_segments: 14.0,
            ..policed()
        };
        assert!(busy.peak_cwnd_segments < 3.0 * random_loss_window(busy.retrans_share));
        assert_eq!(decide(&busy, None), Finding::Policer { rate_bps: 515e6 });
        // cubic on a quiet host, a round trip of 62 us: the window ended
        // at 16 segments after reaching 163.
        let quiet = Features {
            retrans_share: 0.045,
            rtt_us: 62.0,
            queue_us: 60.0,
            rate_variation: Some(0.132),
            steady_bps: 481e6,
            per_stream_bps: 481e6,
            cwnd_segments: 16.0,
            peak_cwnd_segments: 163.0,
            ..policed()
        };
        assert_eq!(decide(&quiet, None), Finding::Policer { rate_bps: 481e6 });
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
        // 4 % dropped at random (nftables' numgen at the router): cubic
        // fell to 23 Mbit/s in retransmit timeouts, its window never past
        // 2 segments, its rate in some runs as flat as a policer's; bbr
        // ran at 5.4 Gbit/s, its rate swinging.
        let random_cubic = Features {
            retrans_share: 0.039,
            rtt_us: 48.0,
            queue_us: 46.0,
            rate_variation: Some(0.126),
            steady_bps: 23e6,
            per_stream_bps: 23e6,
            cwnd_segments: 1.0,
            peak_cwnd_segments: 2.0,
            ..policed()
        };
        assert_eq!(decide(&random_cubic, None), Finding::Network);
        let flat_random_cubic = Features {
            rate_variation: Some(0.046),
            ..random_cubic
        };
        assert_eq!(decide(&flat_random_cubic, None), Finding::Network);
        let random_bbr = Features {
            retrans_share: 0.045,
            rtt_us: 176.0,
            queue_us: 174.0,
            rate_variation: Some(0.194),
            steady_bps: 5407e6,
            per_stream_bps: 5407e6,
            cwnd_segments: 45.0,
            peak_cwnd_segments: 45.0,
            ..policed()
        };
        assert!(bursty_loss(&random_bbr));
        assert_eq!(decide(&random_bbr, None), Finding::Network);
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

    /// An emulator forwarding 10.9 of the 40 Gbit/s asked (2 cores, 3 s).
    fn through_a_busy_emulator(cores: f64) -> Features {
        Features {
            senders: 1,
            busy_us: 3e6,
            busy_share: 0.998,
            run_seconds: 3.0,
            received_bytes: 4.1e9,
            steady_bps: 10.9e9,
            per_stream_bps: 10.9e9,
            bits_per_second: 10.9e9,
            rtt_us: 180.0,
            min_rtt_us: 60.0,
            rate_variation: Some(0.05),
            sender_util: 0.61,
            sender_wait: 0.19,
            receiver_util: 0.2,
            receiver_wait: 0.3,
            host_busy: 0.74,
            min_rcvbuf: 6 << 20,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 2e6,
            peer_window: 3e6,
            snd_mss: 1448.0,
            capacity: Some(crate::Capacity {
                bits_per_second: 40e9,
                source: "the lab's --rate",
            }),
            forwarder: Some(linerate_probe::cpu::ThreadsUse {
                cores,
                running: 0.64,
                waiting: 0.04,
            }),
            ..Features::default()
        }
    }

    #[test]
    fn a_forwarder_that_worked_under_the_paths_rate_is_the_hop_and_an_idle_one_is_not() {
        let hop = decide(&through_a_busy_emulator(0.92), None);
        assert!(matches!(hop, Finding::ForwardingHop { .. }), "{hop:?}");
        // Its backlog grew the congestion window past a roomy send buffer,
        // which then held the writer (beside two busy loops, 2026-12-07):
        // still the hop, not the buffer (docs/verdict.md#send-buffer).
        let buffer_behind_the_hop = Features {
            sndbuf_share: 0.6,
            cwnd_bytes: 4.3e6,
            min_rtt_us: 16.0,
            ..through_a_busy_emulator(0.92)
        };
        let hop = decide(&buffer_behind_the_hop, None);
        assert!(matches!(hop, Finding::ForwardingHop { .. }), "{hop:?}");
        // The same buffer, small for the path (at 44 ms it carries 0.76
        // Gbit/s): the buffer.
        let small_for_the_path = Features {
            min_rtt_us: 44_000.0,
            rtt_us: 44_500.0,
            steady_bps: 0.7e9,
            per_stream_bps: 0.7e9,
            bits_per_second: 0.7e9,
            ..buffer_behind_the_hop
        };
        assert_eq!(decide(&small_for_the_path, None), Finding::SendBuffer);
        // Hardly working: the hop is not named, whatever else is.
        assert!(!matches!(
            decide(&through_a_busy_emulator(FORWARDER_BUSY * 0.9), None),
            Finding::ForwardingHop { .. }
        ));
        // At the path's rate: the path, not the hop.
        let kept_up = Features {
            steady_bps: 39e9,
            ..through_a_busy_emulator(0.92)
        };
        assert!(!matches!(
            decide(&kept_up, None),
            Finding::ForwardingHop { .. }
        ));
        // An end saturated its core: the ends, not the hop.
        let end_full = Features {
            sender_util: 0.97,
            ..through_a_busy_emulator(0.92)
        };
        assert!(!matches!(
            decide(&end_full, None),
            Finding::ForwardingHop { .. }
        ));
    }

    /// One stream through a router whose link back to the sender is a
    /// 200 kbit/s TBF with 100 ms of queue, 6 s (the matrix's run).
    fn ack_way_shaped(ack_way_us: f64, data_way_us: f64) -> Features {
        Features {
            senders: 1,
            busy_us: 6e6,
            busy_share: 0.999,
            run_seconds: 6.0,
            received_bytes: 89e6,
            steady_bps: 112e6,
            per_stream_bps: 117.9e6,
            bits_per_second: 117.9e6,
            rtt_us: 12_610.0,
            min_rtt_us: 2.0,
            queue_us: 12_608.0,
            rate_variation: Some(0.14),
            sender_util: 0.02,
            receiver_util: 0.03,
            host_busy: 0.02,
            min_rcvbuf: 6 << 20,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 1.2e6,
            peer_window: 3e6,
            snd_mss: 1448.0,
            one_way: Some(crate::DirectedQueues {
                data_way_us,
                ack_way_us,
                ack_way_p90_us: 1.7 * ack_way_us,
            }),
            ..Features::default()
        }
    }

    #[test]
    fn a_queue_on_the_acks_way_is_the_return_path_and_one_on_the_datas_way_is_not() {
        assert_eq!(
            decide(&ack_way_shaped(11_760.0, 31.0), None),
            Finding::ReturnPath
        );
        // The same round trip with the queue on the way out (100 Mbit/s
        // toward the receiver): a full path, not the way back.
        let way_out = ack_way_shaped(27.7, 5_022.0);
        assert_ne!(decide(&way_out, None), Finding::ReturnPath);
        // Both ways queued alike: neither is told the limit by this rule.
        assert_ne!(
            decide(&ack_way_shaped(6_000.0, 3_000.0), None),
            Finding::ReturnPath
        );
        // Under a standing queue's floor: no queue to speak of.
        assert_ne!(
            decide(&ack_way_shaped(0.9 * QUEUE_FLOOR_US, 10.0), None),
            Finding::ReturnPath
        );
        // Senders that paused were not held by their ACKs.
        let paused = Features {
            busy_share: 0.5,
            ..ack_way_shaped(11_760.0, 31.0)
        };
        assert_ne!(decide(&paused, None), Finding::ReturnPath);
        // The probe queued far longer than the streams' round trip: it
        // waited for a CPU, not on the way back (senders crowded onto one
        // core on loopback).
        let crowded = Features {
            rtt_us: 202.0,
            min_rtt_us: 1.5,
            queue_us: 200.5,
            ..ack_way_shaped(3_890.0, 32.7)
        };
        assert_ne!(decide(&crowded, None), Finding::ReturnPath);
        // No probe answered: no verdict of the way back.
        let unprobed = Features {
            one_way: None,
            ..ack_way_shaped(11_760.0, 31.0)
        };
        assert_ne!(decide(&unprobed, None), Finding::ReturnPath);
    }

    fn any_features() -> impl Strategy<Value = Features> {
        let share = || 0.0..=1.0f64;
        (
            (share(), share(), share(), 0.0..0.2f64, 0u64..5000, 0.0..10.0f64),
            (0.0..1e11f64, 0.0..1e11f64, 1.0..1e5f64, 0.0..1e5f64, 0.0..1.0f64),
            (share(), share(), share(), share(), share()),
            (0u32..64 << 20, 0u32..64 << 20, 0.0..1e8f64, 0.0..1e8f64, 0.0..66000.0f64),
            (0.0..66000.0f64, 0.0..1e10f64, 0.0..100.0f64, proptest::option::of(share()), 0.0..1000.0f64),
            (
                proptest::option::of((0.0..2.0f64, share(), share())),
                proptest::option::of(1e6..1e11f64),
                proptest::option::of((0.0..1e6f64, 0.0..1e6f64)),
            ),
        )
            .prop_map(|(a, b, c, d, e, g)| {
                let (busy_share, rwnd_share, sndbuf_share, retrans_share, retransmits, run_seconds) = a;
                let (steady_bps, bits_per_second, rtt_us, min_rtt_us, variation) = b;
                let (sender_util, receiver_util, sender_wait, receiver_wait, host_busy) = c;
                let (min_rcvbuf, min_sndbuf, cwnd_bytes, peer_window, snd_mss) = d;
                let (full_mss, received_bytes, cwnd_segments, throttled, peak_cwnd) = e;
                let (forwarder, capacity, one_way) = g;
                Features {
                    senders: 1,
                    busy_us: 1e6,
                    busy_share,
                    rwnd_share,
                    sndbuf_share,
                    retrans_share,
                    retransmits,
                    total_retransmits: retransmits,
                    run_seconds,
                    steady_bps,
                    per_stream_bps: bits_per_second,
                    bits_per_second,
                    rtt_us,
                    min_rtt_us: min_rtt_us.min(rtt_us),
                    queue_us: rtt_us - min_rtt_us.min(rtt_us),
                    rate_variation: Some(variation),
                    sender_util,
                    receiver_util,
                    sender_wait,
                    receiver_wait,
                    receiver_occupied: receiver_util + receiver_wait,
                    host_busy,
                    min_rcvbuf,
                    min_sndbuf,
                    cwnd_bytes,
                    peer_window,
                    snd_mss,
                    full_mss,
                    received_bytes: if received_bytes < 1e9 { 0.0 } else { received_bytes },
                    cwnd_segments,
                    peak_cwnd_segments: peak_cwnd.max(cwnd_segments),
                    quota: throttled.map(|t| Quota {
                        side: Side::Receiver,
                        cores: 0.5,
                        throttled_share: t,
                        throttled_seconds: t,
                    }),
                    forwarder: forwarder.map(|(cores, running, waiting)| linerate_probe::cpu::ThreadsUse {
                        cores,
                        running,
                        waiting,
                    }),
                    capacity: capacity.map(|bits_per_second| crate::Capacity {
                        bits_per_second,
                        source: "--capacity",
                    }),
                    one_way: one_way.map(|(data_way_us, ack_way_us)| crate::DirectedQueues {
                        data_way_us,
                        ack_way_us,
                        ack_way_p90_us: ack_way_us,
                    }),
                    ..Features::default()
                }
            })
    }

    proptest! {
        /// Whatever the figures, a fault is named only with its own
        /// evidence at or above its own thresholds.
        #[test]
        fn no_fault_is_named_below_its_own_thresholds(f in any_features()) {
            let found = decide(&f, None);
            prop_assert_ne!(found, Finding::NoTcpInfo);
            match found {
                Finding::MtuBlackHole => {
                    prop_assert!(f.received_bytes == 0.0 && f.total_retransmits > 0);
                    prop_assert!(f.cwnd_segments <= STUCK_CWND && f.snd_mss >= 1000.0);
                }
                Finding::NothingMoved => prop_assert!(f.received_bytes == 0.0),
                Finding::Policer { rate_bps } => {
                    prop_assert!(f.retrans_share >= POLICED_LOSS && f.busy_share >= ALWAYS_SENDING);
                    prop_assert!(f.rate_variation.unwrap() <= POLICED_VARIATION);
                    prop_assert!(losses_in_bursts(f.peak_cwnd_segments, f.retrans_share));
                    prop_assert!(f.queue_us < POLICED_QUEUE_US.max(QUEUE_SHARE * f.min_rtt_us));
                    prop_assert_eq!(rate_bps, f.steady_bps);
                }
                Finding::Quota { .. } => {
                    prop_assert!(f.quota.unwrap().throttled_share >= QUOTA_THROTTLED);
                }
                Finding::ForwardingHop { hop } => {
                    prop_assert!(hop.cores >= FORWARDER_BUSY && f.busy_share >= ALWAYS_SENDING);
                    prop_assert!(f.sender_util < crate::THREAD_SATURATED);
                    prop_assert!(f.receiver_util < crate::THREAD_SATURATED);
                    prop_assert!(f.capacity.is_none_or(|c| f.steady_bps < AT_CAPACITY * c.bits_per_second));
                }
                Finding::MtuProbed => prop_assert!(f.mss_lowered()),
                Finding::ReturnPath => {
                    let q = f.one_way.unwrap();
                    prop_assert!(f.busy_share >= ALWAYS_SENDING);
                    prop_assert!(q.ack_way_us >= QUEUE_FLOOR_US && q.ack_way_us >= RETURN_QUEUE_RATIO * q.data_way_us);
                }
                _ => {}
            }
        }
    }
}
