//! The verdict of a UDP bench: the datagrams lost, reordered and
//! duplicated, the jitter, and which end or the path held the rate.

use std::collections::BTreeMap;

use linerate_result::{HostCpu, Limit, Side, StreamEnd, Verdict};

use crate::THREAD_SATURATED;
use linerate_probe::units::{fmt_rate, fmt_us};

/// A sender below this share of the asked rate did not keep it.
pub const RATE_KEPT: f64 = 0.9;

/// Everything the UDP verdict looks at.
pub struct UdpEvidence<'a> {
    /// Both ends of every stream.
    pub streams: &'a [StreamEnd],
    /// The rate asked for, all streams of a direction together.
    pub asked_bps: f64,
    /// What the senders sent, and what arrived, per second.
    pub sent_bps: f64,
    /// What arrived, per second.
    pub received_bps: f64,
    /// The client host's CPU over the run.
    pub client_cpu: HostCpu,
    /// The server host's CPU over the run, where it reported one.
    pub server_cpu: Option<HostCpu>,
    /// Datagrams the receiving hosts dropped in any full receive buffer
    /// over the run (/proc/net/snmp), where read.
    pub host_rcvbuf_errors: Option<u64>,
}

/// The busiest thread of `side`: on a core or waiting for one.
fn busiest(streams: &[StreamEnd], side: Side) -> f64 {
    let span = streams.iter().map(|s| s.seconds).fold(0.0, f64::max);
    crate::features::busiest(
        streams.iter().filter(|s| s.side == side),
        |s| s.cpu_seconds + s.runq_wait_seconds,
        span,
    )
}

/// The verdict of a UDP run: loss on the way, a receiver that could not keep up, a sender short of CPU, or the rate asked for kept.
pub fn judge_udp(e: &UdpEvidence) -> Verdict {
    let receivers: Vec<_> = e.streams.iter().filter_map(|s| s.udp).collect();
    let sent: u64 = receivers
        .iter()
        .map(|u| u.sent.unwrap_or(u.datagrams))
        .sum();
    let lost: u64 = receivers.iter().map(|u| u.lost).sum();
    let ooo: u64 = receivers.iter().map(|u| u.out_of_order).sum();
    let dups: u64 = receivers.iter().map(|u| u.duplicates).sum();
    let jitter = receivers.iter().map(|u| u.jitter_us).fold(0.0, f64::max);
    // Drops in our own sockets' full buffers, as the kernel counts them per
    // socket: one per datagram, or one per GRO batch of them.
    let overflowed: u64 = receivers.iter().filter_map(|u| u.buffer_drops).sum();
    let loss = if sent > 0 {
        lost as f64 / sent as f64
    } else {
        0.0
    };
    let sender_busy = busiest(e.streams, Side::Sender);
    let receiver_busy = busiest(e.streams, Side::Receiver);
    let mut evidence = BTreeMap::new();
    for (k, v) in [
        ("datagrams_sent", sent as f64),
        ("datagrams_lost", lost as f64),
        ("loss", loss),
        ("out_of_order", ooo as f64),
        ("duplicates", dups as f64),
        ("jitter_us", jitter),
        ("asked_bits_per_second", e.asked_bps),
        ("sent_bits_per_second", e.sent_bps),
        ("sender_thread_busy", sender_busy),
        ("receiver_thread_busy", receiver_busy),
        ("receive_buffer_drops", overflowed as f64),
    ] {
        evidence.insert(k.to_string(), v);
    }
    if let Some(n) = e.host_rcvbuf_errors {
        evidence.insert("host_udp_rcvbuf_errors".into(), n as f64);
    }
    let counts = format!(
        "{lost} of {sent} datagrams lost ({:.3} %), {ooo} out of order, {dups} duplicated, \
         jitter {}",
        loss * 100.0,
        fmt_us(jitter)
    );
    let kept = e.sent_bps >= RATE_KEPT * e.asked_bps;
    let (limit, side, why) = if !kept && sender_busy >= THREAD_SATURATED {
        (
            Limit::Cpu,
            Some(Side::Sender),
            format!(
                "The senders sent {} of the {} asked: their threads were busy {:.0} % of the \
                 run. More streams (-P) spread the sending over cores; GSO (on unless \
                 --no-gso) sends many datagrams a call.",
                fmt_rate(e.sent_bps),
                fmt_rate(e.asked_bps),
                sender_busy * 100.0
            ),
        )
    } else if lost > 0 && receiver_busy >= THREAD_SATURATED {
        (
            Limit::Cpu,
            Some(Side::Receiver),
            format!(
                "The receivers' threads were busy {:.0} % of the run and could not take every \
                 datagram (their full receive buffers dropped {overflowed} times): more streams \
                 (-P), GRO (on unless --no-gro), or a larger receive buffer (-w) to ride out \
                 bursts.",
                receiver_busy * 100.0
            ),
        )
    } else if lost > 0 && overflowed > 0 {
        (
            Limit::ReceiverWindow,
            Some(Side::Receiver),
            format!(
                "The receiving socket's buffer was full and dropped datagrams {overflowed} \
                 times (the kernel counts a GRO batch once) while its thread had time to \
                 spare: bursts outran the buffer. A larger one (-w, up to \
                 net.core.rmem_max) rides them out."
            ),
        )
    } else if lost > 0 {
        (
            Limit::Network,
            None,
            "The datagrams were lost on the way, not in the receiving socket's buffer: \
             lower -b to find the rate the path carries without loss."
                .to_string(),
        )
    } else {
        (
            Limit::Application,
            None,
            format!(
                "No loss at the rate asked (-b {}): raise it to find what the path carries.",
                fmt_rate(e.asked_bps)
            ),
        )
    };
    Verdict {
        limit,
        side,
        sentence: format!(
            "UDP at {} received: {counts}. {why}",
            fmt_rate(e.received_bps)
        ),
        evidence,
    }
}

/// The verdict of a search for the highest loss-free rate: the best
/// passing rate, and why the next rate up failed (its probe's verdict).
pub fn judge_rate_search(
    best: Option<(u64, f64)>,
    above: Option<(u64, &Verdict)>,
    floor_bps: u64,
) -> Verdict {
    let (limit, side, why, mut evidence) = match above {
        Some((rate, v)) => (
            v.limit,
            v.side,
            format!("At {} it did not: {}", fmt_rate(rate as f64), v.sentence),
            v.evidence.clone(),
        ),
        None => (
            Limit::Application,
            None,
            "The highest rate tried passed: raise -b to search higher.".to_string(),
            BTreeMap::new(),
        ),
    };
    let found = match best {
        Some((rate, received)) => {
            evidence.insert("highest_loss_free_bits_per_second".into(), rate as f64);
            format!(
                "The highest rate with no datagram lost: {} asked, {} received.",
                fmt_rate(rate as f64),
                fmt_rate(received)
            )
        }
        None => format!(
            "No rate down to {} passed without loss.",
            fmt_rate(floor_bps as f64)
        ),
    };
    Verdict {
        limit,
        side,
        sentence: format!("{found} {why}"),
        evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{Flow, UdpCounts};

    fn end(side: Side, cpu: f64, udp: Option<UdpCounts>) -> StreamEnd {
        StreamEnd {
            stream: 0,
            side,
            flow: Flow::ClientToServer,
            bytes: 1_000_000,
            bytes_total: 1_000_000,
            seconds: 1.0,
            cpu_seconds: cpu,
            runq_wait_seconds: 0.0,
            tls_seconds: 0.0,
            poll_idle_seconds: 0.0,
            tcp: None,
            sndbuf: 0,
            rcvbuf: 0,
            error: None,
            udp,
        }
    }

    fn judge(sender_cpu: f64, receiver_cpu: f64, lost: u64, drops: u64, sent_bps: f64) -> Verdict {
        let counts = UdpCounts {
            datagrams: 1000 - lost,
            lost,
            loss: lost as f64 / 1000.0,
            sent: Some(1000),
            jitter_us: 12.0,
            buffer_drops: Some(drops),
            ..UdpCounts::default()
        };
        let streams = [
            end(Side::Sender, sender_cpu, None),
            end(Side::Receiver, receiver_cpu, Some(counts)),
        ];
        judge_udp(&UdpEvidence {
            streams: &streams,
            asked_bps: 1e9,
            sent_bps,
            received_bps: sent_bps * (1.0 - lost as f64 / 1000.0),
            client_cpu: HostCpu::default(),
            server_cpu: None,
            host_rcvbuf_errors: Some(drops),
        })
    }

    #[test]
    fn each_holder_of_the_rate_is_named() {
        let quiet = judge(0.2, 0.2, 0, 0, 1e9);
        assert_eq!(quiet.limit, Limit::Application);
        assert!(
            quiet.sentence.contains("0 of 1000 datagrams lost"),
            "{}",
            quiet.sentence
        );
        let slow_sender = judge(0.99, 0.2, 0, 0, 0.5e9);
        assert_eq!(
            (slow_sender.limit, slow_sender.side),
            (Limit::Cpu, Some(Side::Sender))
        );
        let slow_receiver = judge(0.3, 0.95, 40, 40, 1e9);
        assert_eq!(
            (slow_receiver.limit, slow_receiver.side),
            (Limit::Cpu, Some(Side::Receiver))
        );
        let lossy = judge(0.3, 0.3, 10, 0, 1e9);
        assert_eq!(lossy.limit, Limit::Network);
        assert_eq!(lossy.evidence["loss"], 0.01);
        assert!(
            lossy.sentence.contains("lost on the way"),
            "{}",
            lossy.sentence
        );
        let overflow = judge(0.3, 0.3, 10, 1, 1e9);
        assert_eq!(
            (overflow.limit, overflow.side),
            (Limit::ReceiverWindow, Some(Side::Receiver))
        );
        assert_eq!(overflow.evidence["receive_buffer_drops"], 1.0);
        assert_eq!(overflow.evidence["host_udp_rcvbuf_errors"], 1.0);
    }

    #[test]
    fn a_search_names_its_best_rate_and_why_the_next_failed() {
        let overflow = judge(0.3, 0.3, 10, 1, 1e9);
        let v = judge_rate_search(Some((5e8 as u64, 4.9e8)), Some((1e9 as u64, &overflow)), 1);
        assert_eq!(v.limit, Limit::ReceiverWindow);
        assert_eq!(v.evidence["highest_loss_free_bits_per_second"], 5e8);
        assert!(
            v.sentence.contains("At 1.00 Gbit/s it did not"),
            "{}",
            v.sentence
        );
        let open = judge_rate_search(Some((1e9 as u64, 1e9)), None, 1);
        assert_eq!(open.limit, Limit::Application);
        assert!(open.sentence.contains("raise -b"), "{}", open.sentence);
        let none = judge_rate_search(None, Some((1_000_000, &overflow)), 1_000_000);
        assert!(
            none.sentence.starts_with("No rate down to"),
            "{}",
            none.sentence
        );
    }
}
