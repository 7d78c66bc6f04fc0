//! A finding in plain words, with the figures behind it.

use linerate_result::{Limit, Side};

use super::features::Features;
use super::rules::{CpuCause, Finding};
use super::{Command, Speaker};
use crate::units::{fmt_bytes, fmt_rate, fmt_us};

/// The finding in plain words with the figures behind it, addressed to the user of `to`.
pub fn sentence(found: &Finding, f: &Features, to: Speaker) -> String {
    let command = to.command;
    match *found {
        Finding::NoTcpInfo => {
            "Unknown: no TCP_INFO was sampled at the sending end, so the limit cannot be derived."
                .into()
        }
        Finding::Invalid => format!(
            "Invalid run: the senders' least round trip was {}, below the {} the path can carry \
             (the lab's --rtt): packets or their ACKs skipped the path's delay (a lab's \
             --reorder-model netem sends reordered packets past the whole delay line), so \
             {} measured that shortcut, not the path; this rate ({}) does not stand for the path. \
             Rerun with the lab's default reorder model (displace).",
            fmt_us(f.min_rtt_us),
            fmt_us(f.path_min_rtt_us.unwrap_or(0.0)),
            match to.congestion {
                Some(cc) => format!("the congestion control ({cc})"),
                None => "the congestion control".to_string(),
            },
            fmt_rate(f.steady_bps),
        ),
        Finding::Paced { cap_bps } => format!(
            "Application: each stream ran at {} against a pacing cap of {} ({}); the cap, not the path, set the rate.",
            fmt_rate(f.steady_per_stream_bps()),
            fmt_rate(cap_bps),
            match command {
                Command::Bench => "--fq-rate or -b",
                Command::Send => "--rate, split over the streams",
            }
        ),
        Finding::ReceiverWindow => format!(
            "Receiver window: the senders waited for window {:.0} % of the time; the receiver's buffer was {}{}. \
             {} of window (raise --window or net.ipv4.tcp_rmem / net.core.rmem_max).",
            f.rwnd_share * 100.0,
            fmt_bytes(f64::from(f.min_rcvbuf)),
            if f.tiny_window() {
                format!(
                    ", {:.0} segments of {}: TCP sends small segments and spends its CPU on them",
                    f64::from(f.min_rcvbuf) / f.snd_mss,
                    fmt_bytes(f.snd_mss)
                )
            } else {
                String::new()
            },
            in_flight_needed(f, f.peer_window.max(f64::from(f.min_rcvbuf) / 2.0))
        ),
        Finding::SendBuffer => format!(
            "Send buffer: the senders' socket buffer ({}) {}. {} in flight (raise --sndbuf or net.ipv4.tcp_wmem / net.core.wmem_max).",
            fmt_bytes(f64::from(f.min_sndbuf)),
            // Say what was measured: the kernel's full-buffer time where it
            // counted some, else the buffer against the congestion window.
            if f.sndbuf_share >= 0.005 {
                format!(
                    "was full {:.0} % of the senders' busy time",
                    f.sndbuf_share * 100.0
                )
            } else {
                format!(
                    "held less than the congestion window ({})",
                    fmt_bytes(f.cwnd_bytes)
                )
            },
            in_flight_needed(f, f64::from(f.min_sndbuf))
        ),
        Finding::PathFull => path_full(f, command),
        Finding::PathShort => format!(
            "Network: the senders always had data waiting and no window, buffer, loss or CPU at \
             either end held them, yet the path carried {} of its {} ({}, {:.0} %): something on \
             the path delivered less than its rate (a forwarding hop short of CPU, a policer, a \
             slower link).",
            fmt_rate(f.steady_bps),
            f.capacity
                .map_or(String::new(), |c| fmt_rate(c.bits_per_second)),
            f.capacity.map_or("", |c| c.source),
            f.capacity
                .map_or(0.0, |c| 100.0 * f.steady_bps / c.bits_per_second),
        ),
        Finding::Network => format!(
            "Network: {} retransmits ({:.3} % of bytes){} kept the congestion window down; \
             the path drops or reorders packets (check queues, MTU and links{}).",
            f.retransmits,
            f.retrans_share * 100.0,
            if f.ramp_seconds > 0.0 {
                format!(" after the first {:.1} s", f.ramp_seconds)
            } else {
                String::new()
            },
            if to.may_suggest_bbr() {
                "; try --cc bbr"
            } else {
                ""
            }
        ),
        Finding::Cpu { side, cause } => cpu(f, &cpu_cause(f, side, cause), command),
        Finding::Mixed { first, second } => format!(
            "Mixed evidence: of the senders' busy time, {} and {} held them back; no one limit explains the rate. {}{}, and {}.",
            held(first, f),
            held(second, f),
            remedy(first.0, to)[..1].to_uppercase(),
            &remedy(first.0, to)[1..],
            remedy(second.0, to)
        ),
        Finding::Application => format!(
            "Application: neither TCP (window, buffer, retransmits) nor the CPUs were the limit \
             (sender threads {:.0} %, receiver threads {:.0} %, hosts {:.0} % busy); the application's own pace (write size, byte count, rate) set the rate.",
            f.sender_util * 100.0,
            f.receiver_util * 100.0,
            f.host_busy * 100.0
        ),
        Finding::Disk {
            side,
            share,
            busy,
            in_memory,
        } => {
            let doing = match side {
                Side::Receiver => "writing the destination",
                Side::Sender => "reading the source",
            };
            let busy = busy.map_or(String::new(), |b| {
                let who = match side {
                    Side::Receiver => "receiving",
                    Side::Sender => "sending",
                };
                format!(
                    ", half or more of what kept the {who} threads busy ({:.0}% of the run, running or waiting for a core)",
                    b.min(1.0) * 100.0
                )
            });
            if in_memory {
                return format!(
                    "Limited by the destination's file system, which is in memory (tmpfs): \
                     the streams spent {:.0}% of their time {doing}{busy}; those writes are \
                     copies into memory, not disk I/O.",
                    share * 100.0
                );
            }
            format!(
                "Limited by the disk: the streams spent {:.0}% of their time {doing}{busy}.",
                share * 100.0
            )
        }
    }
}

/// What a stream needs in flight, sized by the path's lowest round trip
/// (not one stretched by delayed ACKs or a queue): for the path's known
/// capacity, shared by the streams; otherwise what `have` bytes in flight
/// carry at most, and what 10 Gbit/s needs.
fn in_flight_needed(f: &Features, have: f64) -> String {
    let rtt_us = if f.min_rtt_us > 0.0 {
        f.min_rtt_us
    } else {
        f.rtt_us
    };
    let which = if f.min_rtt_us > 0.0 {
        "lowest round trip"
    } else {
        "round trip"
    };
    match f.capacity {
        Some(c) => {
            let share = c.bits_per_second / f.senders.max(1) as f64;
            format!(
                "To fill {} ({}) at the {which} of {}, each of {} stream(s) needs {}",
                fmt_rate(c.bits_per_second),
                c.source,
                fmt_us(rtt_us),
                f.senders.max(1),
                fmt_bytes(share / 8.0 * rtt_us / 1e6)
            )
        }
        None => format!(
            "At the {which} of {}, {} carries at most {} a stream; 10 Gbit/s needs {}",
            fmt_us(rtt_us),
            fmt_bytes(have),
            fmt_rate(have * 8.0 / (rtt_us / 1e6)),
            fmt_bytes(10e9 / 8.0 * rtt_us / 1e6)
        ),
    }
}

/// The path at its capacity: the queue it built or the capacity it
/// reached, how the streams shared it, what the retransmits were.
fn path_full(f: &Features, command: Command) -> String {
    let share = f.capacity.map_or(String::new(), |c| {
        format!(
            " ({:.0} % of {}, {})",
            100.0 * f.steady_bps / c.bits_per_second,
            fmt_rate(c.bits_per_second),
            c.source
        )
    });
    let queue = if f.standing_queue() {
        format!(
            "the round trip grew from {} to {} (a {} standing queue)",
            fmt_us(f.min_rtt_us),
            fmt_us(f.rtt_us),
            fmt_us(f.queue_us)
        )
    } else {
        format!(
            "the round trip stayed near {} (the senders kept the queue short)",
            fmt_us(f.rtt_us.max(f.min_rtt_us))
        )
    };
    let mut s = format!(
        "Path full: the path is full at {}{share}{}: {queue}; no window, buffer or CPU held the senders back.",
        fmt_rate(f.steady_bps),
        if f.ramp_seconds > 0.0 {
            format!(" after the first {:.1} s", f.ramp_seconds)
        } else {
            String::new()
        }
    );
    if f.senders > 1 {
        s.push_str(&format!(
            " {} streams shared it at {} to {} each (Jain's index {:.2}).",
            f.senders,
            fmt_rate(f.stream_min_bps),
            fmt_rate(f.stream_max_bps),
            f.jain_index
        ));
    }
    if f.retransmits > 0 {
        s.push_str(&format!(
            " {} retransmits after the ramp ({:.3} % of bytes): the queue overflowed as the senders probed for more.",
            f.retransmits,
            f.retrans_share * 100.0
        ));
    } else if f.ramp_retransmits > 0 {
        s.push_str(&format!(
            " The {} retransmits in the first {:.1} s were slow start overshooting the queue, not loss on the path.",
            f.ramp_retransmits, f.ramp_seconds
        ));
    }
    let pace = match command {
        Command::Bench => "--fq-rate",
        Command::Send => "--rate",
    };
    s.push_str(&format!(
        " Only a faster path, or fewer flows sharing it, raises the rate; pacing just below it ({pace}) or a smaller queue (AQM) removes the queue's delay."
    ));
    s
}

/// One part of a mixed verdict: what held the senders, and how long.
fn held((limit, share): (Limit, f64), f: &Features) -> String {
    let what = match limit {
        Limit::ReceiverWindow => format!("the receive window ({})", fmt_bytes(f.peer_window)),
        Limit::SendBuffer => format!("the send buffer ({})", fmt_bytes(f64::from(f.min_sndbuf))),
        _ => format!(
            "the congestion window (after {} retransmits, {:.3} % of bytes)",
            f.retransmits,
            f.retrans_share * 100.0
        ),
    };
    format!("{what} {:.0} %", share * 100.0)
}

fn remedy(limit: Limit, to: Speaker) -> &'static str {
    match limit {
        Limit::ReceiverWindow => "raise --window (net.ipv4.tcp_rmem)",
        Limit::SendBuffer => "raise --sndbuf (net.ipv4.tcp_wmem)",
        _ if to.may_suggest_bbr() => {
            "find the loss on the path (queues, MTU, links; or try --cc bbr)"
        }
        _ => "find the loss on the path (queues, MTU, links)",
    }
}

fn cpu_cause(f: &Features, side: Side, cause: CpuCause) -> String {
    match cause {
        CpuCause::ReaderBehind => format!(
            "the receive window was full {:.0} % of the time although the receiver had {} of buffer, because the receiving side could not read fast enough",
            f.rwnd_share * 100.0,
            fmt_bytes(f64::from(f.min_rcvbuf))
        ),
        CpuCause::WriterBehind => format!(
            "the send buffer ({}) was the limit {:.0} % of the time only because the CPUs were saturated",
            fmt_bytes(f64::from(f.min_sndbuf)),
            f.sndbuf_share * 100.0
        ),
        CpuCause::ThreadsSaturated => format!(
            "the {} threads saturated their cores",
            match side {
                Side::Sender => "sender",
                Side::Receiver => "receiver",
            }
        ),
        CpuCause::Starved => format!(
            "the stream threads waited for a CPU up to {:.0} % of the run",
            f.sender_wait.max(f.receiver_wait) * 100.0
        ),
        CpuCause::HostBusy => "every core was busy".to_string(),
    }
}

fn cpu(f: &Features, why: &str, command: Command) -> String {
    // Time spent runnable but not running is CPU the thread lacked.
    let waited = if f.sender_wait.max(f.receiver_wait) >= 0.05 {
        format!(
            " (and waiting for a core {:.0} % and {:.0} % of the run)",
            f.sender_wait * 100.0,
            f.receiver_wait * 100.0
        )
    } else {
        String::new()
    };
    // Through TLS every byte is sealed and opened in user space: neither
    // the kernel's discard nor the block checksums are in play.
    let encrypted = f.sender_tls_share + f.receiver_tls_share > 0.0;
    let fewer = match command {
        _ if encrypted => "leave cores to the encryption named below",
        Command::Bench => "use fewer copies (--skip-rx-copy shows the receive copy's share)",
        Command::Send => "drop the block checksums where TCP's own suffice (--no-block-checksum)",
    };
    format!(
        "CPU: {why}; sender threads at {:.0} % and receiver threads at {:.0} % of a core{waited}, hosts {:.0} % busy. \
         More streams only help while cores are idle; otherwise {fewer} or faster cores.",
        f.sender_util * 100.0,
        f.receiver_util * 100.0,
        f.host_busy * 100.0
    )
}
