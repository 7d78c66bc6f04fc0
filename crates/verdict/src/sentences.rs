//! A finding in plain words, with the figures behind it.

use linerate_result::{Limit, Side};

use super::features::Features;
use super::rules::{CpuCause, Finding, ROOMY_FOR_THE_PATH};
use super::{Command, Speaker};
use linerate_probe::units::{fmt_bytes, fmt_rate, fmt_us};

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
            "Receiver window: the senders waited for window {:.0} % of the time; the receiver's buffer was {}{}{}. \
             {} (raise --window or net.ipv4.tcp_rmem / net.core.rmem_max).",
            f.rwnd_share * 100.0,
            fmt_bytes(f64::from(f.min_rcvbuf)),
            match f.window_asked {
                Some(asked) if asked != f.min_rcvbuf => format!(
                    " (-w asked {}; the kernel doubles what is asked, for its own \
                     bookkeeping, and keeps a floor)",
                    fmt_bytes(f64::from(asked))
                ),
                _ => String::new(),
            },
            if f.tiny_window() {
                format!(
                    ", {:.0} segments of {}: TCP sends small segments and spends its CPU on them",
                    f64::from(f.min_rcvbuf) / f.snd_mss,
                    fmt_bytes(f.snd_mss)
                )
            } else {
                String::new()
            },
            in_flight_needed(
                f,
                f.peer_window.max(f64::from(f.min_rcvbuf) / 2.0),
                "of window"
            )
        ),
        Finding::SendBuffer => format!(
            "Send buffer: the senders' socket buffer ({}) {}. {} (raise --sndbuf or net.ipv4.tcp_wmem / net.core.wmem_max).",
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
            in_flight_needed(f, f64::from(f.min_sndbuf), "in flight")
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
        Finding::Unidentified => unidentified(f),
        Finding::NothingMoved => format!(
            "Unknown: nothing arrived in {:.1} s although the senders had data waiting {:.0} % \
             of it, and no rule's evidence says why: {} segment(s) retransmitted, congestion \
             window {:.0} segment(s) of {}, receive window {}, round trip {}. Check that the \
             path carries full-size packets (ping -M do -s 1472) and that nothing on it drops \
             the data connections.",
            f.run_seconds,
            f.busy_share * 100.0,
            f.total_retransmits,
            f.cwnd_segments,
            fmt_bytes(f.snd_mss),
            fmt_bytes(f.peer_window),
            fmt_us(f.rtt_us),
        ),
        Finding::MtuBlackHole => format!(
            "Path MTU black hole: nothing arrived in {:.1} s; segments of {} were retransmitted \
             {} time(s) and never acknowledged, the congestion window held at {:.0} segment(s), \
             while the session's small messages passed{}. A hop on the path has a smaller MTU \
             and its ICMP 'fragmentation needed' (IPv6: 'packet too big') never reached the \
             sender. Lower the MTU to the path's, let that ICMP through, or set \
             net.ipv4.tcp_mtu_probing=1 so that TCP finds the path's MTU itself.",
            f.run_seconds,
            exact_bytes(f.snd_mss),
            f.total_retransmits,
            f.cwnd_segments,
            if f.pmtu > 0.0 {
                format!(
                    " (the senders took the path's MTU for {})",
                    exact_bytes(f.pmtu)
                )
            } else {
                String::new()
            },
        ),
        Finding::Policer { rate_bps } => policer(f, rate_bps, command),
        Finding::MtuProbed => format!(
            "Path MTU black hole, worked around: the senders' segments were lowered to {} from \
             the {} the path's MTU allows, as TCP's MTU probing (net.ipv4.tcp_mtu_probing) does \
             when full-size segments are lost on the way; the streams carried {} with {} \
             retransmits ({:.3} % of bytes), the probes of larger segments that the hop \
             swallowed. Lower the MTU to the path's or let the hop's ICMP 'fragmentation \
             needed' through to get full-size segments without the losses.",
            exact_bytes(f.snd_mss),
            exact_bytes(f.full_mss),
            fmt_rate(f.steady_bps),
            f.retransmits,
            f.retrans_share * 100.0,
        ),
        Finding::Quota { side } => quota(f, side),
        Finding::ForwardingHop { hop } => forwarding_hop(f, hop),
        Finding::ReturnPath => return_path(f),
        Finding::ReaderStalled => format!(
            "Receiver: the senders waited for window {:.0} % of the time, yet the window ({}) \
             carries {} a stream at the lowest round trip of {}, far above the {} each carried: \
             the receiving side did not read, and not for want of CPU (its threads ran {:.0} % \
             of a core and waited {:.0} % of the run for one). It was blocked elsewhere: a \
             destination disk, a lock, a pause of the application.",
            f.rwnd_share * 100.0,
            fmt_bytes(f.peer_window),
            fmt_rate(f.window_rate()),
            fmt_us(f.lowest_rtt_us()),
            fmt_rate(f.steady_per_stream_bps()),
            f.receiver_util * 100.0,
            f.receiver_wait * 100.0,
        ),
        Finding::Disk {
            side,
            share,
            busy,
            in_memory,
            buffered,
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
            let held = buffered.map_or(String::new(), |b| page_cache_held(&b));
            format!(
                "Limited by the disk: the streams spent {:.0}% of their time {doing}{busy}{held}.",
                share * 100.0
            )
        }
    }
}

/// Buffered writes that blocked: the kernel held the writers to the
/// disk's pace, with what it showed of that (docs/verdict.md#buffered-disk).
fn page_cache_held(b: &super::Buffered) -> String {
    if b.blocked_writes == 0 {
        return String::new();
    }
    let mut shown = Vec::new();
    if let Some(d) = b.dirty_peak_bytes {
        shown.push(format!(
            "the host's page cache at {} dirty or under writeback",
            fmt_bytes(d as f64)
        ));
    }
    if let Some(s) = b.io_stalled_share {
        shown.push(format!(
            "the host waiting on I/O {:.0}% of the run",
            s * 100.0
        ));
    }
    let shown = if shown.is_empty() {
        String::new()
    } else {
        format!(" ({})", shown.join(", "))
    };
    format!(
        "; the writes went through the page cache and the kernel held them to the disk's pace{shown}: \
         the destination's file system is what would have to be faster, not the window or the network"
    )
}

/// What a stream needs in flight (`of` says of what: "of window", "in
/// flight"), sized by the path's lowest round trip (not one stretched by
/// delayed ACKs or a queue): for the path's known capacity, shared by the
/// streams; otherwise what `have` bytes carry at most against what each
/// stream carried, and twice that; on a path so short that `have` carries
/// far more than was measured, that its size did not set the rate.
fn in_flight_needed(f: &Features, have: f64, of: &str) -> String {
    let rtt_us = f.lowest_rtt_us();
    let which = if f.min_rtt_us > 0.0 {
        "lowest round trip"
    } else {
        "round trip"
    };
    match f.capacity {
        Some(c) => {
            let share = c.bits_per_second / f.senders.max(1) as f64;
            format!(
                "To fill {} ({}) at the {which} of {}, each of {} stream(s) needs {} {of}",
                fmt_rate(c.bits_per_second),
                c.source,
                fmt_us(rtt_us),
                f.senders.max(1),
                fmt_bytes(share / 8.0 * rtt_us / 1e6)
            )
        }
        None => {
            let carries = have * 8.0 / (rtt_us / 1e6);
            let each = f.steady_per_stream_bps();
            if each > 0.0 && carries >= ROOMY_FOR_THE_PATH * each {
                format!(
                    "At the {which} of {}, {} {of} would carry {} a stream, {:.0} times the {} \
                     each carried: on a path this short the round trip does not hold the rate, the work \
                     of its many small sends and wake-ups does",
                    fmt_us(rtt_us),
                    fmt_bytes(have),
                    fmt_rate(carries),
                    carries / each,
                    fmt_rate(each)
                )
            } else {
                format!(
                    "At the {which} of {}, {} {of} carries at most {} a stream (each carried {}); \
                     to carry twice that, a stream needs {} {of}",
                    fmt_us(rtt_us),
                    fmt_bytes(have),
                    fmt_rate(carries),
                    fmt_rate(each),
                    fmt_bytes(2.0 * each / 8.0 * rtt_us / 1e6)
                )
            }
        }
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

/// No rule's evidence was there: what was measured, the figures a person
/// would look at next, and no name.
fn unidentified(f: &Features) -> String {
    format!(
        "Unknown: no limit was identified. The streams carried {} with data waiting {:.0} % of \
         the run; the receive window held the senders {:.0} % and the send buffer {:.0} % of \
         their busy time; {} retransmits ({:.3} % of bytes); round trip {}{}; sender \
         threads at {:.0} % and receiver threads at {:.0} % of a core, hosts {:.0} % busy. \
         Look next at what lies between the hosts (a forwarding hop's CPU, a shaper, a slower \
         link); --capacity tells the verdict the path's rate where you know it.",
        fmt_rate(f.bits_per_second),
        f.busy_share * 100.0,
        f.rwnd_share * 100.0,
        f.sndbuf_share * 100.0,
        f.retransmits,
        f.retrans_share * 100.0,
        fmt_us(f.rtt_us),
        if f.min_rtt_us > 0.0 {
            format!(" (lowest {})", fmt_us(f.min_rtt_us))
        } else {
            String::new()
        },
        f.sender_util * 100.0,
        f.receiver_util * 100.0,
        f.host_busy * 100.0
    )
}

/// A policer: its rate, the loss at it, the missing queue, and pacing
/// under it as the remedy (a congestion control that ignores loss only
/// retransmits more: bbr lost 6 % of its bytes at a 500 Mbit/s policer).
fn policer(f: &Features, rate_bps: f64, command: Command) -> String {
    let pace = match command {
        Command::Bench => "-b per stream, or --fq-rate",
        Command::Send => "--rate",
    };
    format!(
        "Policer: the path let {} through, flat, and dropped what exceeded it: {} retransmits \
         ({:.3} % of bytes){} with no queue standing (round trip {}, lowest {}). {} Pace under \
         the policer, at about {} ({pace}); bbr, which ignores loss, only retransmits more.",
        fmt_rate(rate_bps),
        f.retransmits,
        f.retrans_share * 100.0,
        if f.ramp_seconds > 0.0 {
            format!(" after the first {:.1} s", f.ramp_seconds)
        } else {
            String::new()
        },
        fmt_us(f.rtt_us),
        fmt_us(f.min_rtt_us),
        why_policed(f),
        fmt_rate(0.95 * rate_bps),
    )
}

/// Why the losses were a policer's, not random: a window random loss of
/// that share would not have let grow, and a rate that held flat.
fn why_policed(f: &Features) -> String {
    format!(
        "Random loss of that share leaves a window of about {:.0} segments where the senders' \
         reached {:.0}, and the rate varied {:.0} % between intervals: the losses came in bursts \
         at a ceiling, as a token bucket running dry drops them.",
        super::faults::random_loss_window(f.retrans_share),
        f.peak_cwnd_segments,
        f.rate_variation.unwrap_or(0.0) * 100.0
    )
}

/// A CPU quota: how much it allows, how often it throttled, and that only
/// a larger quota helps.
fn quota(f: &Features, side: Side) -> String {
    let Some(q) = f.quota else {
        return "CPU quota: a cgroup's quota throttled the run.".into();
    };
    let end = match side {
        Side::Sender => "sender",
        Side::Receiver => "receiver",
    };
    format!(
        "CPU quota: the {end}'s cgroup allows {:.2} of a core and throttled it in {:.0} % of \
         its periods ({:.2} s held back); sender threads at {:.0} % and receiver threads at \
         {:.0} % of a core, hosts {:.0} % busy. Raise the quota (cpu.max or \
         cpu.cfs_quota_us; a Slurm job's --cpus-per-task, a container's --cpus) or run the \
         {end} outside it: more streams or faster cores do not help.",
        q.cores,
        q.throttled_share * 100.0,
        q.throttled_seconds,
        f.sender_util * 100.0,
        f.receiver_util * 100.0,
        f.host_busy * 100.0
    )
}

/// Said after any verdict where the senders' segments were lowered under
/// what the path's MTU allows: MTU probing recovered from a black hole.
pub fn mtu_probed(f: &Features) -> Option<String> {
    f.mss_lowered().then(|| {
        format!(
            " The senders' segments were lowered to {} from the {} the path's MTU allows: TCP's \
             MTU probing (net.ipv4.tcp_mtu_probing) found full-size segments lost on the way (a \
             path MTU black hole) and went on with smaller ones; fix the hop's MTU or its ICMP \
             to get full-size segments back.",
            exact_bytes(f.snd_mss),
            exact_bytes(f.full_mss)
        )
    })
}

/// A segment or an MTU to the byte, as `ip link` and ping give them.
fn exact_bytes(b: f64) -> String {
    format!("{b:.0} B")
}

/// A way back that queued the ACKs (docs/verdict.md#return-path).
fn return_path(f: &Features) -> String {
    let q = f.one_way.unwrap_or_default();
    format!(
        "Return path: the way back from the receivers, which their ACKs take, queued {} \
         (median; {} at the 90th percentile) while the data's way out queued {}, by the \
         one-way delay probe; the round trip grew from {} to {}. The senders always had data, \
         and each send waits for an ACK: they carried {}. A slow or full link on the route \
         back (an asymmetric route, a shaped uplink, a return queue shared with other \
         traffic) set the rate, not the way out; check the route from the receiver to the \
         sender and its rate. A faster way back, or fewer ACKs (receive offloads such as GRO \
         at the receiver), raises it.",
        fmt_us(q.ack_way_us),
        fmt_us(q.ack_way_p90_us),
        fmt_us(q.data_way_us),
        fmt_us(f.lowest_rtt_us()),
        fmt_us(f.rtt_us),
        fmt_rate(f.bits_per_second),
    )
}

/// A hop that forwards in software, out of CPU (docs/verdict.md#forwarding-hop).
fn forwarding_hop(f: &Features, hop: linerate_probe::cpu::ThreadsUse) -> String {
    let capacity = match f.capacity {
        Some(c) => format!(" ({} set by {})", fmt_rate(c.bits_per_second), c.source),
        None => String::new(),
    };
    format!(
        "Forwarding hop: the process forwarding the packets (the lab's emulator) carried all \
         it could: its threads used {:.2} cores, its busiest ran {:.0} % of the run and waited \
         {:.0} % for a core, while the senders always had data and the ends' own threads ran \
         at most {:.0} % of a core (waiting up to {:.0} % of the run for the cores they shared \
         with the hop). The path carried {}, what the hop could forward, not the rate of the \
         path it stands for{}. Give the hop cores of its own or faster ones; on a lab, a \
         --rate it can keep makes the path, not the hop, the limit.",
        hop.cores,
        hop.running * 100.0,
        hop.waiting * 100.0,
        f.sender_util.max(f.receiver_util) * 100.0,
        f.sender_wait.max(f.receiver_wait) * 100.0,
        fmt_rate(f.bits_per_second),
        capacity,
    )
}
