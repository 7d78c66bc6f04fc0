//! Names the bottleneck of a run from what was measured, never from what was
//! configured: TCP_INFO's limited-time counters at the sender, retransmits, the
//! CPU time of each stream's thread and the load of each host.

use std::collections::BTreeMap;

use linerate_result::{HostCpu, Limit, Side, StreamEnd, Verdict};

/// Share of busy time above which a TCP limit is the dominant one.
pub const LIMITED_SHARE: f64 = 0.5;
/// A stream thread using this share of one core is saturated.
pub const THREAD_SATURATED: f64 = 0.85;
/// A host whose CPUs are this busy has no headroom left.
pub const HOST_SATURATED: f64 = 0.90;
/// A stream thread that waited this share of the run for a CPU was starved.
pub const STARVED_SHARE: f64 = 0.25;
/// Retransmitted share of bytes above which the network is losing packets.
pub const LOSSY_SHARE: f64 = 1e-4;
/// A socket buffer at least this large is not "tiny": a full window with such
/// a buffer on a saturated host means the reader was starved of CPU.
const ROOMY_BUFFER: u32 = 256 << 10;

/// Everything the verdict looks at.
pub struct Evidence<'a> {
    /// Both ends of every stream.
    pub streams: &'a [StreamEnd],
    pub client_cpu: HostCpu,
    pub server_cpu: Option<HostCpu>,
    /// Received payload rate of the run.
    pub bits_per_second: f64,
    /// SO_MAX_PACING_RATE per stream, bytes/s, if the user set one.
    pub pacing_rate: Option<u64>,
}

pub fn judge(e: &Evidence) -> Verdict {
    let senders: Vec<&StreamEnd> = e
        .streams
        .iter()
        .filter(|s| s.side == Side::Sender)
        .collect();
    let receivers: Vec<&StreamEnd> = e
        .streams
        .iter()
        .filter(|s| s.side == Side::Receiver)
        .collect();
    let sum = |f: &dyn Fn(&StreamEnd) -> Option<u64>| -> u64 {
        senders.iter().filter_map(|s| f(s)).sum()
    };
    let busy = sum(&|s| s.tcp.and_then(|t| t.busy_us)) as f64;
    let rwnd_share = ratio(sum(&|s| s.tcp.and_then(|t| t.rwnd_limited_us)) as f64, busy);
    let sndbuf_share = ratio(
        sum(&|s| s.tcp.and_then(|t| t.sndbuf_limited_us)) as f64,
        busy,
    );
    let sent: u64 = senders.iter().map(|s| s.bytes_total).sum();
    let retrans_bytes = sum(&|s| s.tcp.and_then(|t| t.bytes_retrans));
    let retrans_share = ratio(retrans_bytes as f64, sent as f64);
    let retransmits = sum(&|s| s.tcp.map(|t| u64::from(t.total_retrans)));
    let rtt_us = median(
        senders
            .iter()
            .filter_map(|s| s.tcp.map(|t| f64::from(t.rtt_us))),
    );
    // The busiest thread of a side, as a share of its stream's duration.
    let worst = |ends: &[&StreamEnd], time: fn(&StreamEnd) -> f64| {
        ends.iter()
            .map(|s| ratio(time(s), s.seconds))
            .fold(0.0, f64::max)
    };
    let sender_util = worst(&senders, |s| s.cpu_seconds);
    let receiver_util = worst(&receivers, |s| s.cpu_seconds);
    let sender_wait = worst(&senders, |s| s.runq_wait_seconds);
    let receiver_wait = worst(&receivers, |s| s.runq_wait_seconds);
    // Running or waiting to run: a reader that is never blocked on its socket.
    let receiver_occupied = worst(&receivers, |s| s.cpu_seconds + s.runq_wait_seconds);
    let sender_starved = sender_wait >= STARVED_SHARE;
    let receiver_starved = receiver_wait >= STARVED_SHARE;
    let host_busy = e.server_cpu.map_or(e.client_cpu.busy_fraction, |s| {
        s.busy_fraction.max(e.client_cpu.busy_fraction)
    });
    let host_saturated = host_busy >= HOST_SATURATED;
    let min_rcvbuf = receivers.iter().map(|s| s.rcvbuf).min().unwrap_or(0);
    let min_sndbuf = senders.iter().map(|s| s.sndbuf).min().unwrap_or(0);
    let cwnd_bytes = median(
        senders
            .iter()
            .filter_map(|s| s.tcp.map(|t| f64::from(t.snd_cwnd) * f64::from(t.snd_mss))),
    );
    // The window the receivers advertised, as the senders last saw it.
    let peer_window = median(
        senders
            .iter()
            .filter_map(|s| s.tcp.and_then(|t| t.snd_wnd).map(f64::from)),
    );
    let rate = e.bits_per_second;
    let per_stream = rate / senders.len().max(1) as f64;

    let mut evidence = BTreeMap::new();
    for (k, v) in [
        ("rwnd_limited_share", rwnd_share),
        ("sndbuf_limited_share", sndbuf_share),
        ("retransmitted_share", retrans_share),
        ("retransmits", retransmits as f64),
        ("rtt_us", rtt_us),
        ("sender_thread_cpu", sender_util),
        ("receiver_thread_cpu", receiver_util),
        ("sender_runq_wait_share", sender_wait),
        ("receiver_runq_wait_share", receiver_wait),
        ("host_cpu_busy", host_busy),
        ("receiver_rcvbuf_bytes", f64::from(min_rcvbuf)),
        ("sender_sndbuf_bytes", f64::from(min_sndbuf)),
        ("cwnd_bytes", cwnd_bytes),
        ("peer_window_bytes", peer_window),
    ] {
        evidence.insert(k.to_string(), round3(v));
    }
    let verdict = |limit, side, sentence: String| Verdict {
        limit,
        side,
        sentence,
        evidence: evidence.clone(),
    };
    let cpu_side = if receiver_util > sender_util {
        Side::Receiver
    } else {
        Side::Sender
    };
    let cpu_sentence = |why: &str| {
        // Time spent runnable but not running is CPU the thread lacked.
        let waited = if sender_wait.max(receiver_wait) >= 0.05 {
            format!(
                " (and waiting for a core {:.0} % and {:.0} % of the run)",
                sender_wait * 100.0,
                receiver_wait * 100.0
            )
        } else {
            String::new()
        };
        format!(
            "CPU: {why}; sender threads at {:.0} % and receiver threads at {:.0} % of a core{waited}, hosts {:.0} % busy. \
             More streams only help while cores are idle; otherwise use fewer copies (--skip-rx-copy shows the receive copy's share) or faster cores.",
            sender_util * 100.0,
            receiver_util * 100.0,
            host_busy * 100.0
        )
    };

    if senders.is_empty() || busy == 0.0 {
        return verdict(
            Limit::Unknown,
            None,
            "Unknown: no TCP_INFO was sampled at the sending end, so the limit cannot be derived."
                .into(),
        );
    }
    if let Some(pace) = e.pacing_rate
        && per_stream >= 0.9 * pace as f64 * 8.0
    {
        return verdict(
            Limit::Application,
            Some(Side::Sender),
            format!(
                "Application: each stream ran at {} against a pacing cap of {} (--fq-rate); the cap, not the path, set the rate.",
                fmt_rate(per_stream),
                fmt_rate(pace as f64 * 8.0)
            ),
        );
    }
    // The kernel counts window-limited time only while data waits to be
    // sent; a window well under the congestion window, with idle writers,
    // is the same limit.
    let window_below_cwnd =
        peer_window > 0.0 && peer_window < 0.9 * cwnd_bytes && sender_util < 0.5;
    if rwnd_share >= LIMITED_SHARE || window_below_cwnd {
        // A roomy buffer that fills because its reader never blocks (running
        // or waiting for a core) is the reader's limit: a larger window
        // would only fill too. A tiny buffer makes its reader busy by itself.
        let reader_behind = receiver_occupied >= THREAD_SATURATED && min_rcvbuf >= ROOMY_BUFFER;
        if receiver_util >= THREAD_SATURATED
            || receiver_starved
            || reader_behind
            || (host_saturated && min_rcvbuf >= ROOMY_BUFFER)
        {
            return verdict(
                Limit::Cpu,
                Some(Side::Receiver),
                cpu_sentence(&format!(
                    "the receive window was full {:.0} % of the time although the receiver had {} of buffer, because the receiving side could not read fast enough",
                    rwnd_share * 100.0,
                    fmt_bytes(f64::from(min_rcvbuf))
                )),
            );
        }
        return verdict(
            Limit::ReceiverWindow,
            Some(Side::Receiver),
            format!(
                "Receiver window: the senders waited for window {:.0} % of the time; the receiver's buffer was {}. \
                 At the measured RTT of {} a stream needs {} of window for 10 Gbit/s and {} for 100 Gbit/s \
                 (raise --window or net.ipv4.tcp_rmem / net.core.rmem_max).",
                rwnd_share * 100.0,
                fmt_bytes(f64::from(min_rcvbuf)),
                fmt_us(rtt_us),
                fmt_bytes(10e9 / 8.0 * rtt_us / 1e6),
                fmt_bytes(100e9 / 8.0 * rtt_us / 1e6)
            ),
        );
    }
    // Kernels count send-buffer-limited time only on some paths; a buffer
    // smaller than the congestion window, with the writer mostly blocked,
    // is the same limit seen from the application.
    let buffer_below_cwnd = f64::from(min_sndbuf) < cwnd_bytes && sender_util < 0.5;
    if sndbuf_share >= LIMITED_SHARE || (buffer_below_cwnd && !sender_starved) {
        if sender_util >= THREAD_SATURATED
            || sender_starved
            || (host_saturated && min_sndbuf >= ROOMY_BUFFER)
        {
            return verdict(
                Limit::Cpu,
                Some(cpu_side),
                cpu_sentence(&format!(
                    "the send buffer ({}) was the limit {:.0} % of the time only because the CPUs were saturated",
                    fmt_bytes(f64::from(min_sndbuf)),
                    sndbuf_share * 100.0
                )),
            );
        }
        return verdict(
            Limit::SendBuffer,
            Some(Side::Sender),
            format!(
                "Send buffer: the senders' socket buffer ({}) held less than the congestion window ({}), \
                 or was full {:.0} % of the time. At the measured RTT of {} a stream needs {} in flight for 10 Gbit/s \
                 (raise --sndbuf or net.ipv4.tcp_wmem / net.core.wmem_max).",
                fmt_bytes(f64::from(min_sndbuf)),
                fmt_bytes(cwnd_bytes),
                sndbuf_share * 100.0,
                fmt_us(rtt_us),
                fmt_bytes(10e9 / 8.0 * rtt_us / 1e6)
            ),
        );
    }
    let cpu_bound = sender_util >= THREAD_SATURATED
        || receiver_util >= THREAD_SATURATED
        || sender_starved
        || receiver_starved
        || host_saturated;
    if retrans_share >= LOSSY_SHARE && !cpu_bound {
        return verdict(
            Limit::Network,
            None,
            format!(
                "Network: {retransmits} retransmits ({:.3} % of bytes) kept the congestion window down; \
                 the path drops or reorders packets (check queues, MTU and links; try --cc bbr).",
                retrans_share * 100.0
            ),
        );
    }
    if cpu_bound {
        let why = if sender_util.max(receiver_util) >= THREAD_SATURATED {
            format!("the {} threads saturated their cores", side_name(cpu_side))
        } else if sender_starved || receiver_starved {
            format!(
                "the stream threads waited for a CPU up to {:.0} % of the run",
                sender_wait.max(receiver_wait) * 100.0
            )
        } else {
            "every core was busy".to_string()
        };
        return verdict(Limit::Cpu, Some(cpu_side), cpu_sentence(&why));
    }
    verdict(
        Limit::Application,
        None,
        format!(
            "Application: neither TCP (window, buffer, retransmits) nor the CPUs were the limit \
             (sender threads {:.0} %, receiver threads {:.0} %, hosts {:.0} % busy); the application's own pace (write size, byte count, rate) set the rate.",
            sender_util * 100.0,
            receiver_util * 100.0,
            host_busy * 100.0
        ),
    )
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Sender => "sender",
        Side::Receiver => "receiver",
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() { a / b } else { 0.0 }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Bits per second in the unit an engineer would read.
pub fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbit/s", bps / 1e6)
    } else {
        format!("{:.0} kbit/s", bps / 1e3)
    }
}

/// Bytes in binary units.
pub fn fmt_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn fmt_us(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{Flow, TcpSample};

    fn end(side: Side, cpu: f64, tcp: Option<TcpSample>, rcvbuf: u32) -> StreamEnd {
        StreamEnd {
            stream: 0,
            side,
            flow: Flow::ClientToServer,
            bytes: 10_000_000_000,
            bytes_total: 10_000_000_000,
            seconds: 10.0,
            cpu_seconds: cpu,
            runq_wait_seconds: 0.0,
            tcp,
            sndbuf: 4 << 20,
            rcvbuf,
            error: None,
        }
    }

    fn tcp(rwnd: u64, sndbuf: u64, retrans: u64) -> TcpSample {
        TcpSample {
            rtt_us: 50,
            busy_us: Some(10_000_000),
            rwnd_limited_us: Some(rwnd),
            sndbuf_limited_us: Some(sndbuf),
            bytes_retrans: Some(retrans),
            ..Default::default()
        }
    }

    fn judge_of(streams: &[StreamEnd], host_busy: f64) -> Verdict {
        judge(&Evidence {
            streams,
            client_cpu: HostCpu {
                busy_fraction: host_busy,
                ..Default::default()
            },
            server_cpu: None,
            bits_per_second: 8e9,
            pacing_rate: None,
        })
    }

    #[test]
    fn small_receive_buffer_is_a_window_limit() {
        let s = [
            end(Side::Sender, 3.0, Some(tcp(9_000_000, 0, 0)), 0),
            end(Side::Receiver, 2.0, None, 8192),
        ];
        let v = judge_of(&s, 0.5);
        assert_eq!(v.limit, Limit::ReceiverWindow);
        assert!(v.sentence.contains("10 Gbit/s"));
    }

    #[test]
    fn full_window_on_a_busy_reader_is_cpu() {
        let s = [
            end(Side::Sender, 3.0, Some(tcp(9_000_000, 0, 0)), 0),
            end(Side::Receiver, 9.9, None, 4 << 20),
        ];
        let v = judge_of(&s, 0.5);
        assert_eq!((v.limit, v.side), (Limit::Cpu, Some(Side::Receiver)));
    }

    #[test]
    fn full_window_on_a_reader_that_never_blocks_is_cpu() {
        // 76 % running and 15 % waiting for a core: seen on loopback with a
        // 10 MB window far above the congestion window.
        let mut rcv = end(Side::Receiver, 7.6, None, 4 << 20);
        rcv.runq_wait_seconds = 1.5;
        let s = [end(Side::Sender, 1.3, Some(tcp(6_400_000, 0, 0)), 0), rcv];
        let v = judge_of(&s, 0.75);
        assert_eq!((v.limit, v.side), (Limit::Cpu, Some(Side::Receiver)));
        // The same reader behind a tiny buffer: the buffer is the limit.
        let mut rcv = end(Side::Receiver, 7.6, None, 64 << 10);
        rcv.runq_wait_seconds = 1.5;
        let s = [end(Side::Sender, 1.3, Some(tcp(6_400_000, 0, 0)), 0), rcv];
        assert_eq!(judge_of(&s, 0.75).limit, Limit::ReceiverWindow);
    }

    #[test]
    fn send_buffer() {
        let mut snd = end(Side::Sender, 3.0, Some(tcp(0, 8_000_000, 0)), 0);
        snd.sndbuf = 4608;
        let v = judge_of(&[snd, end(Side::Receiver, 1.0, None, 1 << 20)], 0.95);
        assert_eq!(v.limit, Limit::SendBuffer);
    }

    /// A writer with an 8 KiB send buffer under a 100-segment congestion window,
    /// judged on a host `host_busy` busy.
    fn small_buffer_writer(cpu: f64, runq_wait: f64, host_busy: f64) -> Verdict {
        let mut t = tcp(0, 0, 0);
        t.snd_cwnd = 100;
        t.snd_mss = 1448;
        let mut snd = end(Side::Sender, cpu, Some(t), 0);
        snd.sndbuf = 8192;
        snd.runq_wait_seconds = runq_wait;
        judge_of(&[snd, end(Side::Receiver, 0.1, None, 1 << 20)], host_busy)
    }

    #[test]
    fn buffer_smaller_than_the_cwnd_is_a_send_buffer_limit() {
        let v = small_buffer_writer(0.5, 0.0, 0.2);
        assert_eq!(v.limit, Limit::SendBuffer);
        assert!(v.sentence.contains("8.0 KiB"), "{}", v.sentence);
    }

    #[test]
    fn a_blocked_writer_on_a_host_busy_with_other_work_is_still_the_send_buffer() {
        assert_eq!(small_buffer_writer(0.1, 0.2, 0.99).limit, Limit::SendBuffer);
    }

    #[test]
    fn a_starved_writer_is_cpu() {
        assert_eq!(small_buffer_writer(2.0, 6.0, 0.99).limit, Limit::Cpu);
    }

    #[test]
    fn retransmits_on_an_idle_host_are_the_network() {
        let s = [
            end(Side::Sender, 1.0, Some(tcp(0, 0, 50_000_000)), 0),
            end(Side::Receiver, 1.0, None, 1 << 20),
        ];
        assert_eq!(judge_of(&s, 0.3).limit, Limit::Network);
    }

    #[test]
    fn saturated_sender_thread_is_cpu() {
        let s = [
            end(Side::Sender, 9.8, Some(tcp(0, 0, 0)), 0),
            end(Side::Receiver, 4.0, None, 1 << 20),
        ];
        let v = judge_of(&s, 0.7);
        assert_eq!((v.limit, v.side), (Limit::Cpu, Some(Side::Sender)));
    }

    #[test]
    fn nothing_saturated_is_the_application() {
        let s = [
            end(Side::Sender, 1.0, Some(tcp(0, 0, 0)), 0),
            end(Side::Receiver, 1.0, None, 1 << 20),
        ];
        assert_eq!(judge_of(&s, 0.2).limit, Limit::Application);
    }

    #[test]
    fn no_tcp_info_is_unknown() {
        let s = [end(Side::Receiver, 1.0, None, 1 << 20)];
        assert_eq!(judge_of(&s, 0.2).limit, Limit::Unknown);
    }

    #[test]
    fn units() {
        assert_eq!(fmt_rate(41.5e9), "41.50 Gbit/s");
        assert_eq!(fmt_bytes(4.0 * 1024.0 * 1024.0), "4.0 MiB");
        assert_eq!(fmt_bytes(12.0), "12 B");
    }
}
