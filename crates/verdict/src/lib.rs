//! Names the bottleneck of a run from what was measured, never from what was
//! configured: TCP_INFO's limited-time counters at the sender, retransmits, the
//! CPU time of each stream's thread and the load of each host.
//!
//! In three steps, each testable alone: the measurements become typed
//! [`features`], ordered [`rules`] turn those into one finding, and
//! `sentences` say it in plain words. The measurements come from
//! `linerate-probe`; [`audit`] holds recorded documents to the rules.
#![warn(missing_docs)]

mod arith;
pub mod audit;
pub mod faults;
pub mod features;
pub mod finding;
pub mod latency;
pub mod rules;
pub mod sentences;
pub mod spread;
pub mod steady;
pub mod udp;

use std::collections::BTreeMap;

use linerate_result::{HostCpu, IntervalSample, StreamEnd, Verdict};

pub use features::Features;
pub use finding::{CpuCause, Finding};

/// Share of busy time above which a TCP limit is the dominant one.
pub const LIMITED_SHARE: f64 = 0.5;
/// A stream thread using this share of one core is saturated.
pub const THREAD_SATURATED: f64 = 0.85;
/// A host whose CPUs are this busy has no headroom left.
pub const HOST_SATURATED: f64 = 0.90;
/// A run's busiest thread running or waiting for a core this share of the
/// run wants CPU: on a saturated host, the CPU is then its limit.
pub const OWN_THREADS_BUSY: f64 = 0.5;
/// A stream thread that waited this share of the run for a CPU was starved.
pub const STARVED_SHARE: f64 = 0.25;
/// A standing queue: the smoothed round trip this far above the lowest,
/// in µs and as a share of the lowest, whichever is larger. Delayed ACKs
/// and a busy host add well under a millisecond on a short path.
pub const QUEUE_FLOOR_US: f64 = 1000.0;
/// A standing queue of at least this share of the least round trip (beside [`QUEUE_FLOOR_US`]) is one.
pub const QUEUE_SHARE: f64 = 0.1;
/// Retransmitted share of bytes above which the network is losing packets.
pub const LOSSY_SHARE: f64 = 1e-4;

/// Everything the verdict looks at.
pub struct Evidence<'a> {
    /// Both ends of every stream.
    pub streams: &'a [StreamEnd],
    /// The client host's CPU over the run.
    pub client_cpu: HostCpu,
    /// The server host's CPU over the run, where it reported one.
    pub server_cpu: Option<HostCpu>,
    /// Received payload rate of the run.
    pub bits_per_second: f64,
    /// SO_MAX_PACING_RATE per stream, bytes/s, if the user set one.
    pub pacing_rate: Option<u64>,
    /// The receive buffer asked for (`-w`/`--window`), bytes: the kernel
    /// gives twice that and more, which a sentence says.
    pub window_asked: Option<u32>,
    /// The senders' congestion control, where known: a verdict does not
    /// suggest the one already in use.
    pub congestion: Option<&'a str>,
    /// The TLS cipher, when the run was encrypted: a CPU verdict names it
    /// with its share of the stream threads' time.
    pub cipher: Option<&'a str>,
    /// The run's interval samples, both sides: the steady state after the
    /// ramp is judged on them.
    pub intervals: &'a [IntervalSample],
    /// The path's capacity, where it is known.
    pub capacity: Option<Capacity>,
    /// The least round trip the path can carry, where it is known (a
    /// lab's --rtt less twice its --jitter), µs.
    pub path_min_rtt_us: Option<f64>,
    /// What the threads of the process that forwarded the run's packets
    /// (a lab's emulator) used over the run, where one did.
    pub forwarder: Option<linerate_probe::cpu::ThreadsUse>,
    /// Each direction's queueing while the streams ran, where a one-way
    /// delay probe measured it and the data went one way.
    pub one_way: Option<DirectedQueues>,
}

/// A one-way delay probe's queueing delays, told by the data's direction
/// (docs/verdict.md#return-path).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DirectedQueues {
    /// Median queueing on the data's way, µs.
    pub data_way_us: f64,
    /// Median queueing on the ACKs' way (back from the receivers), µs.
    pub ack_way_us: f64,
    /// The 90th percentile of the ACKs' way, µs.
    pub ack_way_p90_us: f64,
}

impl DirectedQueues {
    /// The probe's delays told by the data's way: to the server when the
    /// client sends; none for a run both ways, whose ACKs share each way
    /// with data.
    pub fn of(
        d: &linerate_result::one_way::OneWayDelay,
        client_sends: Option<bool>,
    ) -> Option<DirectedQueues> {
        let (data, ack) = match client_sends? {
            true => (d.to_server, d.to_client),
            false => (d.to_client, d.to_server),
        };
        Some(DirectedQueues {
            data_way_us: data.median_us,
            ack_way_us: ack.median_us,
            ack_way_p90_us: ack.p90_us,
        })
    }
}

/// What is known of the path before the run: its capacity and the least
/// round trip it can carry (a lab's --rate and --rtt, `--capacity`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KnownPath {
    /// The path's capacity, where known.
    pub capacity: Option<Capacity>,
    /// The least round trip the path can carry, µs, where known.
    pub min_rtt_us: Option<f64>,
    /// The process that forwards the path's packets in user space (a
    /// lab's emulator), whose busiest thread the run measures: a hop
    /// short of CPU is named from it (docs/verdict.md#forwarding-hop).
    pub forwarder_pid: Option<u32>,
}

impl KnownPath {
    /// What a lab link's conditions say of its path: its capacity is the
    /// lab's rate, the least round trip its RTT less twice its jitter.
    pub fn of_lab_link(rate_bps: Option<u64>, rtt_us: u64, jitter_us: u64) -> KnownPath {
        KnownPath {
            capacity: rate_bps.map(|bps| Capacity {
                bits_per_second: bps as f64,
                source: "the lab's --rate",
            }),
            min_rtt_us: Some(rtt_us.saturating_sub(2 * jitter_us) as f64).filter(|&r| r > 0.0),
            forwarder_pid: None,
        }
    }
}

/// A path's capacity where it is known, and from where, in the words a
/// sentence gives it ("the lab's --rate").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// The capacity.
    pub bits_per_second: f64,
    /// Where it is known from.
    pub source: &'static str,
}

/// What a transfer adds: the share of the stream threads' time spent on
/// each disk.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskTime {
    /// Reading the source, at the sender.
    pub read_share: f64,
    /// Writing the destination, at the receiver.
    pub write_share: f64,
    /// The destination is a file system in memory: its writes are copies.
    pub dest_in_memory: bool,
    /// The destination's writes went through the page cache: what the
    /// kernel did to them.
    pub buffered: Option<Buffered>,
}

/// What the page cache did to a receiver's buffered writes
/// (docs/verdict.md#buffered-disk).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Buffered {
    /// Share of the run in which some task of the receiver's host waited on I/O.
    pub io_stalled_share: Option<f64>,
    /// The most dirty and writeback bytes in its page cache when a write blocked.
    pub dirty_peak_bytes: Option<u64>,
    /// Writes and syncs that blocked on the disk.
    pub blocked_writes: u64,
}

/// Names the bottleneck of a bench run.
pub fn judge(e: &Evidence) -> Verdict {
    let f = Features::measure(e);
    let found = rules::decide(&f, pacing_bps(e));
    let mut v = verdict(&f, found, evidence_of(&f), Speaker::bench(e.congestion));
    record_pacing(&mut v, e);
    with_cipher(v, &f, e, Command::Bench)
}

/// An encrypted run's verdict: the TLS shares in the evidence, and when
/// the CPU was the limit, the cipher and what it took of the threads.
fn with_cipher(mut v: Verdict, f: &Features, e: &Evidence, to: Command) -> Verdict {
    let Some(cipher) = e.cipher else {
        return v;
    };
    v.evidence
        .insert("sender_tls_share".into(), f.sender_tls_share);
    v.evidence
        .insert("receiver_tls_share".into(), f.receiver_tls_share);
    if v.limit == linerate_result::Limit::Cpu {
        let without = match to {
            Command::Bench => "the same run without --encrypt",
            Command::Send => "--no-encrypt at both ends (trusted networks only)",
        };
        v.sentence.push_str(&format!(
            " Encryption ({cipher}) took {:.0} % of the sender threads' CPU and {:.0} % of \
             the receiver threads'; {without} measures the run without it.",
            f.sender_tls_share * 100.0,
            f.receiver_tls_share * 100.0
        ));
    }
    v
}

/// The command a verdict speaks to: it suggests only flags that one takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `linerate bench`.
    Bench,
    /// `linerate send`.
    Send,
}

/// Whom a verdict speaks to: the command, and what it already ran with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Speaker<'a> {
    /// The command whose flags a sentence may suggest.
    pub command: Command,
    /// The congestion control the run asked for, if any.
    pub congestion: Option<&'a str>,
}

impl<'a> Speaker<'a> {
    /// Speaking to `bench`, run with `congestion` where it asked for one.
    pub fn bench(congestion: Option<&'a str>) -> Self {
        Speaker {
            command: Command::Bench,
            congestion,
        }
    }

    /// Speaking to `send`.
    pub fn send() -> Self {
        Speaker {
            command: Command::Send,
            congestion: None,
        }
    }

    /// `--cc bbr` is worth a try: bench takes it and it is not in use.
    fn may_suggest_bbr(&self) -> bool {
        self.command == Command::Bench && self.congestion != Some("bbr")
    }
}

/// Names the bottleneck of a transfer: a disk when the stream threads
/// spent most of their time on one, otherwise what [`judge`] finds.
pub fn judge_transfer(e: &Evidence, disks: DiskTime) -> Verdict {
    let f = Features::measure(e);
    let found = rules::decide(&f, pacing_bps(e));
    let mut v = transfer_verdict(&f, found, disks);
    record_pacing(&mut v, e);
    with_cipher(v, &f, e, Command::Send)
}

/// The pacing cap a sentence may give, in the evidence beside it.
fn record_pacing(v: &mut Verdict, e: &Evidence) {
    if let Some(pacing) = pacing_bps(e) {
        v.evidence.insert("pacing_bits_per_second".into(), pacing);
    }
}

fn transfer_verdict(f: &Features, found: Finding, disks: DiskTime) -> Verdict {
    let found = rules::disk(f, found, &disks);
    let mut evidence = evidence_of(f);
    evidence.insert("source_read_share".into(), disks.read_share);
    evidence.insert("destination_write_share".into(), disks.write_share);
    evidence.insert(
        "destination_in_memory".into(),
        if disks.dest_in_memory { 1.0 } else { 0.0 },
    );
    if let Some(b) = disks.buffered {
        evidence.insert("destination_blocked_writes".into(), b.blocked_writes as f64);
        if let Some(share) = b.io_stalled_share {
            evidence.insert("destination_io_stalled_share".into(), share);
        }
        if let Some(bytes) = b.dirty_peak_bytes {
            evidence.insert("destination_dirty_peak_bytes".into(), bytes as f64);
        }
    }
    verdict(f, found, evidence, Speaker::send())
}

/// The features as evidence, with the path's capacity and its share where
/// it is known.
fn evidence_of(f: &Features) -> BTreeMap<String, f64> {
    let mut evidence = f.evidence();
    if let Some(c) = f.capacity {
        evidence.insert("capacity_bits_per_second".into(), c.bits_per_second);
        let share = arith::ratio(f.steady_bps, c.bits_per_second);
        evidence.insert("capacity_share".into(), (share * 1000.0).round() / 1000.0);
    }
    let random_loss = faults::random_loss_rate(f);
    if random_loss.is_finite() {
        evidence.insert("random_loss_bits_per_second".into(), random_loss.round());
    }
    evidence
}

fn pacing_bps(e: &Evidence) -> Option<f64> {
    e.pacing_rate.map(|bytes| bytes as f64 * 8.0)
}

fn verdict(f: &Features, found: Finding, evidence: BTreeMap<String, f64>, to: Speaker) -> Verdict {
    let mut sentence = sentences::sentence(&found, f, to);
    if !matches!(found, Finding::MtuBlackHole | Finding::MtuProbed)
        && let Some(probed) = sentences::mtu_probed(f)
    {
        sentence.push_str(&probed);
    }
    Verdict {
        limit: found.limit(),
        side: found.side(),
        sentence,
        evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{Flow, Limit, Side, TcpSample};

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
            tls_seconds: 0.0,
            poll_idle_seconds: 0.0,
            tcp,
            sndbuf: 4 << 20,
            rcvbuf,
            error: None,
            udp: None,
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
            window_asked: None,
            congestion: None,
            cipher: None,
            intervals: &[],
            capacity: None,
            path_min_rtt_us: None,
            forwarder: None,
            one_way: None,
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
        // No capacity was given: the sentence sizes the window from the
        // rate each stream carried, never from a target nobody set.
        assert!(
            v.sentence.contains("(each carried 8.00 Gbit/s)") && !v.sentence.contains("10 Gbit/s"),
            "{}",
            v.sentence
        );
    }

    /// A roomy window that carries thousands of times the rate at
    /// loopback's round trip, closed 95 % of the time, with the receiving
    /// threads idle: the reader was blocked elsewhere (a buffered write
    /// into a throttled disk read as "raise --window" before). A small
    /// window on the same path is the window, said without sizing it
    /// against the round trip.
    #[test]
    fn a_window_far_above_a_short_paths_needs_is_not_sized_against_it() {
        let f = Features {
            senders: 1,
            busy_us: 4e6,
            busy_share: 1.0,
            rwnd_share: 0.95,
            min_rtt_us: 1.0,
            rtt_us: 30.0,
            peer_window: 7.1 * 1048576.0,
            min_rcvbuf: 16 << 20,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 1e6,
            snd_mss: 65483.0,
            steady_bps: 80e6,
            per_stream_bps: 80e6,
            ..Features::default()
        };
        let v = said(&f);
        assert_eq!(
            (v.limit, v.side),
            (Limit::Application, Some(Side::Receiver))
        );
        assert!(
            v.sentence
                .contains("the receiving side did not read, and not for want of CPU"),
            "{}",
            v.sentence
        );
        // Writing the destination a good part of the run: the disk.
        let disk = transfer_verdict(
            &f,
            rules::decide(&f, None),
            DiskTime {
                write_share: 0.3,
                ..DiskTime::default()
            },
        );
        assert_eq!(disk.limit, Limit::DestinationDisk, "{}", disk.sentence);
        // `-w 1` on loopback: a 2 KiB window of 76-byte segments.
        let small = Features {
            peer_window: 2048.0,
            min_rcvbuf: 2304,
            snd_mss: 76.0,
            rwnd_share: 0.1,
            cwnd_bytes: 10.0 * 76.0,
            steady_bps: 0.5e9,
            per_stream_bps: 0.5e9,
            ..f
        };
        let v = said(&small);
        assert_eq!(v.limit, Limit::ReceiverWindow, "{}", v.sentence);
        assert!(
            v.sentence
                .contains("on a path this short the round trip does not hold the rate"),
            "{}",
            v.sentence
        );
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
    fn an_encrypted_run_short_of_cpu_names_its_cipher_and_what_it_took() {
        // Shares from a loopback `bench --encrypt -P 1` (perf: AES-GCM a
        // quarter of each end's core, rustls's copies more).
        let mut snd = end(Side::Sender, 9.9, Some(tcp(0, 0, 0)), 0);
        snd.tls_seconds = 4.2;
        let mut rcv = end(Side::Receiver, 6.0, None, 4 << 20);
        rcv.tls_seconds = 2.1;
        let streams = [snd, rcv];
        let e = |cipher| Evidence {
            streams: &streams,
            client_cpu: HostCpu {
                busy_fraction: 0.9,
                ..Default::default()
            },
            server_cpu: None,
            bits_per_second: 2e10,
            pacing_rate: None,
            window_asked: None,
            congestion: None,
            cipher,
            intervals: &[],
            capacity: None,
            path_min_rtt_us: None,
            forwarder: None,
            one_way: None,
        };
        let v = judge(&e(Some("TLS13_AES_128_GCM_SHA256")));
        assert_eq!((v.limit, v.side), (Limit::Cpu, Some(Side::Sender)));
        assert!(
            v.sentence
                .contains("Encryption (TLS13_AES_128_GCM_SHA256) took 42 % of the sender"),
            "{}",
            v.sentence
        );
        assert!(
            v.sentence.contains("35 % of the receiver"),
            "{}",
            v.sentence
        );
        assert_eq!(v.evidence["sender_tls_share"], 4.2 / 9.9);
        let clear = judge(&e(None));
        assert!(!clear.sentence.contains("Encryption"), "{}", clear.sentence);
        assert!(!clear.evidence.contains_key("sender_tls_share"));
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

    /// A sender whose busy time the receive window held `rwnd` and the
    /// send buffer `sndbuf`, after retransmitting `retrans` of its bytes;
    /// 64 KiB window, 44 ms RTT, a congestion window cut below the window
    /// by loss, `mbps` per stream.
    fn window_buffer_loss(rwnd: f64, sndbuf: f64, retrans: f64, mbps: f64) -> Verdict {
        let f = Features {
            senders: 1,
            busy_us: 1e7,
            rwnd_share: rwnd,
            sndbuf_share: sndbuf,
            retrans_share: retrans,
            retransmits: (retrans * 1e4).round() as u64,
            rtt_us: 44_000.0,
            sender_util: 0.02,
            receiver_util: 0.04,
            host_busy: 0.2,
            min_rcvbuf: 128 << 10,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 60e3,
            peer_window: 65536.0,
            per_stream_bps: mbps * 1e6,
            ..Default::default()
        };
        let found = rules::decide(&f, None);
        verdict(&f, found, f.evidence(), Speaker::bench(Some("cubic")))
    }

    #[test]
    fn two_limits_that_share_the_time_are_named_together() {
        // Window 45 % and buffer 40 %: neither half the time, both real.
        let v = window_buffer_loss(0.45, 0.40, 0.0, 5.0);
        assert_eq!(v.limit, Limit::Mixed, "{}", v.sentence);
        assert!(
            v.sentence.contains("receive window (64.0 KiB) 45 %")
                && v.sentence.contains("send buffer (4.0 MiB) 40 %")
                && v.sentence.contains("--window")
                && v.sentence.contains("--sndbuf"),
            "{}",
            v.sentence
        );
        // As in a lab at 44 ms with 0.5 % loss, cubic and a 16 KiB window:
        // the window held the senders 42 %, the congestion window after
        // loss the rest, and the rate was 80 % of window / RTT.
        let v = window_buffer_loss(0.42, 0.0, 7e-3, 9.5);
        assert_eq!(v.limit, Limit::Mixed, "{}", v.sentence);
        assert!(
            v.sentence
                .contains("congestion window (after 70 retransmits")
                && v.sentence.contains("58 %")
                && v.sentence.contains("try --cc bbr"),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn one_limit_that_holds_most_of_the_time_is_not_mixed() {
        // The window held the senders 90 %: a little loss does not share it.
        let v = window_buffer_loss(0.9, 0.0, 1e-3, 5.0);
        assert_eq!(v.limit, Limit::ReceiverWindow, "{}", v.sentence);
        // A window that explains the rate (64 KiB / 44 ms is 11.9 Mbit/s)
        // is the limit, whatever the loss did besides. Seen in a lab at
        // 44 ms with 0.05 % loss and cubic: window 43 %, 3 retransmits,
        // 11.36 Mbit/s, once called the network's.
        let v = window_buffer_loss(0.43, 0.0, 6e-4, 11.36);
        assert_eq!(v.limit, Limit::ReceiverWindow, "{}", v.sentence);
        // Loss without a window or buffer share is the network's alone.
        let v = window_buffer_loss(0.1, 0.1, 1e-3, 5.0);
        assert_eq!(v.limit, Limit::Network, "{}", v.sentence);
    }

    #[test]
    fn loss_well_under_a_known_capacity_is_the_network_though_a_queue_stood() {
        // A lab at 200 Mbit/s and 2 ms with 1 % loss beside two busy
        // loops: 39 Mbit/s, flat, its round trip 5 ms.
        let f = Features {
            senders: 1,
            busy_us: 1e6,
            busy_share: 0.99,
            retrans_share: 0.01,
            retransmits: 300,
            rtt_us: 5_000.0,
            min_rtt_us: 2_000.0,
            queue_us: 3_000.0,
            per_stream_bps: 39e6,
            steady_bps: 39e6,
            min_rcvbuf: 4 << 20,
            min_sndbuf: 4 << 20,
            peer_window: 4e6,
            cwnd_bytes: 20e3,
            capacity: Some(Capacity {
                bits_per_second: 200e6,
                source: "the lab's --rate",
            }),
            ..Default::default()
        };
        assert!(f.standing_queue());
        assert_eq!(rules::decide(&f, None), Finding::Network);
        // The same queue without loss is a full path.
        let full = Features {
            retrans_share: 0.0,
            retransmits: 0,
            ..f
        };
        assert_eq!(rules::decide(&full, None), Finding::PathFull);
    }

    #[test]
    fn a_tiny_buffer_is_the_limit_whatever_share_the_send_buffer_had() {
        // An 8 KiB buffer of 1012-byte segments (`-w 4K` on loopback),
        // the senders short of a core: the kernel booked 35 % of their
        // busy time to the send buffer, and the stretched round trip no
        // longer explains the rate by the window.
        let f = Features {
            senders: 1,
            busy_us: 1e6,
            rwnd_share: 0.55,
            sndbuf_share: 0.35,
            rtt_us: 400.0,
            snd_mss: 1012.0,
            min_rcvbuf: 8192,
            min_sndbuf: 16384,
            peer_window: 8192.0,
            per_stream_bps: 50e6,
            ..Default::default()
        };
        assert!(f.tiny_window());
        assert_eq!(rules::decide(&f, None), Finding::ReceiverWindow);
    }

    #[test]
    fn a_writer_waiting_on_a_receiver_short_of_cpu_is_not_a_send_buffer_limit() {
        // As in the matrix: receivers crowded onto one core reading 2 KiB at
        // a time, the senders mostly blocked behind a 4 MiB buffer under a
        // 4.6 MiB congestion window, the kernel counting no send-buffer time.
        let f = Features {
            senders: 2,
            busy_us: 4e6,
            rwnd_share: 0.3,
            rtt_us: 570.0,
            sender_util: 0.38,
            receiver_util: 0.47,
            receiver_wait: 0.5,
            receiver_occupied: 0.97,
            host_busy: 0.87,
            min_rcvbuf: 1 << 20,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 4.6 * 1048576.0,
            ..Default::default()
        };
        let found = rules::decide(&f, None);
        let v = verdict(&f, found, f.evidence(), Speaker::bench(None));
        assert_eq!(
            (v.limit, v.side),
            (Limit::Cpu, Some(Side::Receiver)),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn bbr_is_not_suggested_to_a_run_that_used_it() {
        let f = Features {
            senders: 1,
            busy_us: 1e7,
            retrans_share: 1e-3,
            retransmits: 10,
            ..Default::default()
        };
        let found = rules::decide(&f, None);
        let with = |cc| verdict(&f, found, f.evidence(), Speaker::bench(cc)).sentence;
        assert!(with(Some("cubic")).contains("--cc bbr"));
        assert!(
            !with(Some("bbr")).contains("--cc bbr"),
            "{}",
            with(Some("bbr"))
        );
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
    fn a_send_buffer_smaller_than_the_window_is_the_send_buffer_not_the_window() {
        // Seen in CI on loopback with --sndbuf 4K: 16.8 Mbit/s, a 399 KiB
        // window under a loopback-sized congestion window, idle writers,
        // and no window-limited time. The buffer held the writers.
        let f = Features {
            senders: 1,
            busy_us: 2e6,
            min_sndbuf: 8192,
            min_rcvbuf: 416_563,
            peer_window: 408_576.0,
            cwnd_bytes: 654_830.0,
            snd_mss: 65_483.0,
            per_stream_bps: 16.8e6,
            rtt_us: 2.0,
            min_rtt_us: 2.0,
            sender_util: 0.1,
            receiver_util: 0.05,
            host_busy: 0.2,
            ..Features::default()
        };
        assert_eq!(rules::decide(&f, None), Finding::SendBuffer);
    }

    #[test]
    fn a_host_busy_with_other_work_is_not_the_runs_cpu_limit() {
        // Seen in a lab at 44 ms: a 4 MiB send buffer full 27 % of the
        // time, the run's threads at 2 % and 4 % of a core, the host's
        // cores busy with other jobs. The buffer was the limit.
        let f = Features {
            senders: 1,
            busy_us: 6e6,
            sndbuf_share: 0.27,
            min_sndbuf: 4 << 20,
            min_rcvbuf: 6 << 20,
            cwnd_bytes: 6e6,
            sender_util: 0.02,
            receiver_util: 0.04,
            host_busy: 0.97,
            rtt_us: 44_000.0,
            ..Features::default()
        };
        assert_eq!(rules::decide(&f, None), Finding::SendBuffer);
        // The same host at the link rate with a queue dropping packets:
        // the network, not the other jobs' CPU.
        let lossy = Features {
            sndbuf_share: 0.0,
            min_sndbuf: 16 << 20,
            cwnd_bytes: 4e6,
            retrans_share: 0.01,
            retransmits: 11_564,
            ..f
        };
        assert_eq!(rules::decide(&lossy, None), Finding::Network);
        // Its own threads busy on that host: then the CPU.
        let own = Features {
            sender_util: 0.4,
            sender_wait: 0.3,
            ..lossy
        };
        assert!(matches!(rules::decide(&own, None), Finding::Cpu { .. }));
    }

    #[test]
    fn a_verdict_suggests_only_what_its_command_takes() {
        let f = Features {
            senders: 1,
            busy_us: 1e6,
            sender_util: 0.95,
            retrans_share: 0.01,
            retransmits: 3,
            ..Features::default()
        };
        let cpu = rules::decide(&f, None);
        assert!(sentences::sentence(&cpu, &f, Speaker::bench(None)).contains("--skip-rx-copy"));
        assert!(!sentences::sentence(&cpu, &f, Speaker::send()).contains("--skip-rx-copy"));
        let net = Finding::Network;
        assert!(sentences::sentence(&net, &f, Speaker::bench(None)).contains("--cc bbr"));
        assert!(!sentences::sentence(&net, &f, Speaker::send()).contains("--cc"));
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

    /// Senders that always had data, held by nothing any rule sees: no
    /// name, and the figures a person would look at next. Senders that
    /// paused, with nothing else holding them: the application.
    #[test]
    fn nothing_holding_busy_senders_is_unknown_and_a_pause_is_the_application() {
        let s = [
            end(Side::Sender, 1.0, Some(tcp(0, 0, 0)), 0),
            end(Side::Receiver, 1.0, None, 1 << 20),
        ];
        let v = judge_of(&s, 0.2);
        assert_eq!(v.limit, Limit::Unknown);
        assert!(
            v.sentence.starts_with("Unknown: no limit was identified.")
                && v.sentence.contains("data waiting 100 % of the run")
                && v.sentence.contains("round trip 50.0 us;"),
            "{}",
            v.sentence
        );
        let mut paused = tcp(0, 0, 0);
        paused.busy_us = Some(4_000_000);
        let s = [
            end(Side::Sender, 1.0, Some(paused), 0),
            end(Side::Receiver, 1.0, None, 1 << 20),
        ];
        assert_eq!(judge_of(&s, 0.2).limit, Limit::Application);
    }

    #[test]
    fn no_tcp_info_is_unknown() {
        let s = [end(Side::Receiver, 1.0, None, 1 << 20)];
        assert_eq!(judge_of(&s, 0.2).limit, Limit::Unknown);
    }

    fn disk_verdict(found: Finding, f: Features, read: f64, write: f64) -> Verdict {
        let disks = DiskTime {
            read_share: read,
            write_share: write,
            dest_in_memory: false,
            buffered: None,
        };
        transfer_verdict(&f, found, disks)
    }

    #[test]
    fn most_of_the_time_on_a_disk_names_it() {
        let v = disk_verdict(Finding::ReceiverWindow, Features::default(), 0.0, 0.7);
        assert_eq!(
            (v.limit, v.side),
            (Limit::DestinationDisk, Some(Side::Receiver))
        );
        assert!(
            v.sentence.contains("70% of their time writing"),
            "{}",
            v.sentence
        );
        let v = disk_verdict(Finding::Network, Features::default(), 0.6, 0.1);
        assert_eq!(v.limit, Limit::SourceDisk);
        assert_eq!(v.evidence["source_read_share"], 0.6);
        // A destination in memory is named so.
        let tmpfs = DiskTime {
            read_share: 0.0,
            write_share: 0.7,
            dest_in_memory: true,
            buffered: None,
        };
        let v = transfer_verdict(&Features::default(), Finding::ReceiverWindow, tmpfs);
        assert!(v.sentence.contains("in memory"), "{}", v.sentence);
        assert!(
            !v.sentence.contains("Limited by the disk"),
            "{}",
            v.sentence
        );
        // The user's own cap stands whatever the disks did.
        let paced = Finding::Paced { cap_bps: 1e9 };
        let v = disk_verdict(paced, Features::default(), 0.0, 0.7);
        assert_eq!(v.limit, Limit::Application);
    }

    #[test]
    fn buffered_writes_held_by_the_kernel_say_so() {
        let held = Buffered {
            io_stalled_share: Some(0.95),
            dirty_peak_bytes: Some(8 << 20),
            blocked_writes: 300,
        };
        let disks = DiskTime {
            write_share: 0.98,
            buffered: Some(held),
            ..DiskTime::default()
        };
        let v = transfer_verdict(&Features::default(), Finding::ReceiverWindow, disks);
        assert_eq!(v.limit, Limit::DestinationDisk);
        assert!(
            v.sentence.contains("page cache and the kernel held them")
                && v.sentence.contains("8.0 MiB dirty")
                && v.sentence.contains("I/O 95%"),
            "{}",
            v.sentence
        );
        assert_eq!(v.evidence["destination_io_stalled_share"], 0.95);
        // Buffered writes that never blocked say nothing of the page cache.
        let quick = DiskTime {
            buffered: Some(Buffered {
                blocked_writes: 0,
                ..held
            }),
            ..disks
        };
        let v = transfer_verdict(&Features::default(), Finding::ReceiverWindow, quick);
        assert!(!v.sentence.contains("page cache"), "{}", v.sentence);
        // A disk that was not the limit is not named for its page cache.
        let idle = DiskTime {
            write_share: 0.05,
            ..disks
        };
        let v = transfer_verdict(&Features::default(), Finding::ReceiverWindow, idle);
        assert_eq!(v.limit, Limit::ReceiverWindow, "{}", v.sentence);
    }

    #[test]
    fn a_saturated_receiver_mostly_writing_is_the_destination() {
        // Seen on loopback into fresh tmpfs pages: half the run writing,
        // the receiving threads 85 % on a core and 10 % waiting for one.
        let busy = Features {
            receiver_util: 0.85,
            receiver_wait: 0.1,
            ..Features::default()
        };
        let reader = |side| Finding::Cpu {
            side,
            cause: CpuCause::ThreadsSaturated,
        };
        let v = disk_verdict(reader(Side::Receiver), busy, 0.0, 0.49);
        assert_eq!(v.limit, Limit::DestinationDisk);
        assert!(
            v.sentence.contains("receiving threads busy (95%"),
            "{}",
            v.sentence
        );
        // Writing a third of the time, the rest receiving and hashing: the CPU.
        let v = disk_verdict(reader(Side::Receiver), busy, 0.0, 0.3);
        assert_eq!(v.limit, Limit::Cpu);
        assert!(
            v.sentence.starts_with("CPU: the receiver threads"),
            "{}",
            v.sentence
        );
        // A saturated sender says nothing about the destination.
        let v = disk_verdict(reader(Side::Sender), busy, 0.0, 0.49);
        assert_eq!(v.limit, Limit::Cpu);
    }

    /// Senders that paused (data waiting 87 % of the run) while their
    /// thread waited for a core longer than that (22 %) were held by the
    /// CPU; a pause the waiting does not explain is the application's.
    #[test]
    fn a_pause_no_longer_than_the_wait_for_a_core_is_the_cpu() {
        let paused = Features {
            senders: 1,
            busy_us: 1e6,
            busy_share: 0.87,
            sender_wait: 0.22,
            ..Features::default()
        };
        assert_eq!(
            rules::decide(&paused, None),
            Finding::Cpu {
                side: Side::Sender,
                cause: rules::CpuCause::Starved
            }
        );
        let own_pace = Features {
            sender_wait: 0.05,
            ..paused
        };
        assert_eq!(rules::decide(&own_pace, None), Finding::Application);
    }

    /// Each rule alone, on features built by hand.
    #[test]
    fn each_rule_names_its_finding() {
        let busy = Features {
            senders: 1,
            busy_us: 1e6,
            ..Features::default()
        };
        assert_eq!(
            rules::decide(&Features::default(), None),
            Finding::NoTcpInfo
        );
        let paced = Features {
            steady_bps: 9.5e8,
            per_stream_bps: 9.5e8,
            ..busy
        };
        assert_eq!(
            rules::decide(&paced, Some(1e9)),
            Finding::Paced { cap_bps: 1e9 }
        );
        assert_eq!(rules::decide(&paced, Some(2e9)), Finding::Application);
        // Two streams at their caps of 500 Mbit/s after a setup that a busy
        // host made long (seen: 893 Mbit/s over the run, 975 after the ramp).
        let slow_setup = Features {
            senders: 2,
            steady_bps: 9.75e8,
            per_stream_bps: 4.47e8,
            ..busy
        };
        assert_eq!(
            rules::decide(&slow_setup, Some(5e8)),
            Finding::Paced { cap_bps: 5e8 }
        );
        let window = Features {
            rwnd_share: 0.9,
            min_rcvbuf: 64 << 10,
            ..busy
        };
        assert_eq!(rules::decide(&window, None), Finding::ReceiverWindow);
        let lossy = Features {
            retrans_share: 0.01,
            ..busy
        };
        assert_eq!(rules::decide(&lossy, None), Finding::Network);
        let starved = Features {
            sender_wait: 0.5,
            ..lossy
        };
        assert_eq!(
            rules::decide(&starved, None),
            Finding::Cpu {
                side: Side::Sender,
                cause: CpuCause::Starved
            }
        );
    }

    /// Four senders sharing one core, each running a quarter of the time
    /// and waiting for it the rest, with a window (731 KiB) under their
    /// congestion window (1.1 MiB) and none of their time limited by it
    /// (figures of a run that CI named the window): the CPU held them.
    #[test]
    fn a_window_under_the_congestion_window_does_not_hold_senders_waiting_for_a_core() {
        let crowded = Features {
            senders: 4,
            busy_us: 8e6,
            busy_share: 0.995,
            per_stream_bps: 4.6e8,
            steady_bps: 1.85e9,
            cwnd_bytes: 1_178_694.0,
            peer_window: 748_032.0,
            min_rcvbuf: 756_662,
            min_sndbuf: 4 << 20,
            rtt_us: 668.5,
            min_rtt_us: 6.0,
            sender_util: 0.25,
            sender_wait: 0.75,
            receiver_util: 0.01,
            host_busy: 0.54,
            ..Features::default()
        };
        assert!(matches!(
            rules::decide(&crowded, None),
            Finding::Cpu {
                side: Side::Sender,
                ..
            }
        ));
        let idle_writers = Features {
            sender_wait: 0.0,
            ..crowded
        };
        assert_eq!(rules::decide(&idle_writers, None), Finding::ReceiverWindow);
    }

    /// A lab's `--rate` of `bps` as the path's capacity.
    fn lab_rate(bps: f64) -> Option<Capacity> {
        Some(Capacity {
            bits_per_second: bps,
            source: "the lab's --rate",
        })
    }

    /// 1 or 8 cubic streams through a 2 Gbit/s bottleneck with a 5 ms
    /// queue at 0.1 ms, as a lab measures them.
    fn full_path(senders: usize) -> Features {
        Features {
            senders,
            busy_us: 4e6,
            busy_share: 0.99,
            rtt_us: 5300.0,
            min_rtt_us: 100.0,
            queue_us: 5200.0,
            bits_per_second: 1.9e9,
            steady_bps: 1.9e9,
            per_stream_bps: 1.9e9 / senders as f64,
            stream_min_bps: 0.22e9,
            stream_max_bps: 0.26e9,
            jain_index: 0.99,
            rate_variation: Some(0.02),
            sender_util: 0.2,
            receiver_util: 0.1,
            host_busy: 0.3,
            min_rcvbuf: 6 << 20,
            min_sndbuf: 4 << 20,
            cwnd_bytes: 1.3e6,
            ..Features::default()
        }
    }

    fn said(f: &Features) -> Verdict {
        verdict(
            f,
            rules::decide(f, None),
            f.evidence(),
            Speaker::bench(Some("cubic")),
        )
    }

    #[test]
    fn a_path_at_its_capacity_is_full_with_its_queue_and_its_shares() {
        let v = said(&full_path(1));
        assert_eq!((v.limit, v.side), (Limit::PathFull, None));
        assert!(v.sentence.starts_with("Path full: the path is full at 1.90 Gbit/s: the round trip grew from 100 us to 5.30 ms (a 5.20 ms standing queue)"), "{}", v.sentence);
        assert!(!v.sentence.contains("streams shared"), "{}", v.sentence);
        let v = said(&full_path(8));
        assert!(
            v.sentence.contains(
                "8 streams shared it at 220.0 Mbit/s to 260.0 Mbit/s each (Jain's index 0.99)"
            ),
            "{}",
            v.sentence
        );
        // Slow start's losses in the first second are named as such.
        let ramp = Features {
            ramp_retransmits: 7110,
            ramp_seconds: 1.0,
            ..full_path(1)
        };
        let v = said(&ramp);
        assert_eq!(v.limit, Limit::PathFull);
        assert!(
            v.sentence
                .contains("The 7110 retransmits in the first 1.0 s were slow start overshooting"),
            "{}",
            v.sentence
        );
        // A known capacity gives the share; at it, no queue is needed.
        let known = Features {
            queue_us: 200.0,
            capacity: lab_rate(2e9),
            ..full_path(1)
        };
        let v = said(&known);
        assert_eq!(v.limit, Limit::PathFull);
        assert!(v.sentence.contains("full at 1.90 Gbit/s (95 % of 2.00 Gbit/s, the lab's --rate): the round trip stayed near 5.30 ms"), "{}", v.sentence);
    }

    /// Senders whose least round trip is half the path's measured a
    /// shortcut: the run is invalid, whatever else it shows; at the path's
    /// round trip the same run is judged as usual.
    #[test]
    fn a_run_shorter_than_its_path_is_invalid() {
        let shortcut = Features {
            min_rtt_us: 22_020.0,
            rtt_us: 47_000.0,
            path_min_rtt_us: Some(44_000.0),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&shortcut, None), Finding::Invalid);
        let v = said(&shortcut);
        assert_eq!(v.limit, Limit::Invalid);
        assert!(
            v.sentence.starts_with(
                "Invalid run: the senders' least round trip was 22.02 ms, below the 44.00 ms"
            ),
            "{}",
            v.sentence
        );
        let honest = Features {
            min_rtt_us: 44_010.0,
            ..shortcut
        };
        assert_ne!(rules::decide(&honest, None), Finding::Invalid);
        let unknown = Features {
            path_min_rtt_us: None,
            ..shortcut
        };
        assert_ne!(rules::decide(&unknown, None), Finding::Invalid);
    }

    #[test]
    fn a_path_is_full_only_when_no_end_held_the_senders() {
        // No queue and no known capacity: nothing says the path was full.
        let short = Features {
            queue_us: 200.0,
            ..full_path(1)
        };
        assert_eq!(rules::decide(&short, None), Finding::Unidentified);
        // Far below a known capacity with nothing at the ends holding
        // the senders: the path fell short of its rate, not full.
        let below = Features {
            queue_us: 200.0,
            capacity: Some(Capacity {
                bits_per_second: 10e9,
                source: "--capacity",
            }),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&below, None), Finding::PathShort);
        let v = said(&below);
        assert_eq!(v.limit, Limit::Network);
        assert!(
            v.sentence
                .contains("the path carried 1.90 Gbit/s of its 10.00 Gbit/s (--capacity, 19 %)"),
            "{}",
            v.sentence
        );
        // Senders that paused, a rate that swung, a thread at its core's limit.
        let paused = Features {
            busy_share: 0.5,
            ..full_path(1)
        };
        assert_eq!(rules::decide(&paused, None), Finding::Application);
        let swinging = Features {
            rate_variation: Some(0.4),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&swinging, None), Finding::Unidentified);
        let saturated = Features {
            sender_util: 0.95,
            ..full_path(1)
        };
        assert!(matches!(
            rules::decide(&saturated, None),
            Finding::Cpu { .. }
        ));
        // At a known capacity a busy CPU limited nothing (polling receivers).
        let polling = Features {
            receiver_util: 0.99,
            capacity: lab_rate(2e9),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&polling, None), Finding::PathFull);
        // A small send buffer is named before the path; a roomy one that
        // filled behind the path's queue is not (docs/verdict.md#send-buffer).
        let buffer = Features {
            sndbuf_share: 0.8,
            min_sndbuf: 128 << 10,
            ..full_path(1)
        };
        assert_eq!(rules::decide(&buffer, None), Finding::SendBuffer);
        let roomy = Features {
            sndbuf_share: 0.8,
            ..full_path(1)
        };
        assert_eq!(rules::decide(&roomy, None), Finding::PathFull);
        // But at the known capacity the path is full, whatever the buffer's
        // share and the busy host (10 Gbit/s at 91 %, receiver waiting for
        // a core half the run).
        let at_capacity = Features {
            sndbuf_share: 0.57,
            receiver_wait: 0.52,
            capacity: lab_rate(2e9 / 0.95),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&at_capacity, None), Finding::PathFull);
        // At the capacity, senders that paused only while their threads
        // waited for a core (10 Gbit/s at 91 %, data waiting 89 % of the
        // run, the sender waiting for a core 15 %) filled the path; the
        // same pauses beyond the waits are the application's.
        let scheduled = Features {
            busy_share: 0.89,
            sender_wait: 0.15,
            receiver_wait: 0.12,
            capacity: lab_rate(1.9e9 / 0.91),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&scheduled, None), Finding::PathFull);
        // At the capacity, a rate that swung as the scheduler held the
        // receiver (a lab at 1 Gbit/s beside busy loops: 91 %, intervals
        // varying 22 %, the receiver waiting for a core 70 % of the run)
        // still filled the path; below it, the swings are not a full path.
        let swung_at_capacity = Features {
            rate_variation: Some(0.215),
            receiver_wait: 0.70,
            capacity: lab_rate(1.9e9 / 0.912),
            ..full_path(1)
        };
        assert_eq!(rules::decide(&swung_at_capacity, None), Finding::PathFull);
        let swung_below = Features {
            capacity: lab_rate(1.9e9 / 0.8),
            ..swung_at_capacity
        };
        assert_ne!(rules::decide(&swung_below, None), Finding::PathFull);
        let paused_more = Features {
            busy_share: 0.7,
            ..scheduled
        };
        assert_ne!(rules::decide(&paused_more, None), Finding::PathFull);
        // Loss after the ramp with no queue and a rate far below capacity:
        // a lossy path.
        let lossy = Features {
            queue_us: 300.0,
            retrans_share: 0.001,
            retransmits: 900,
            ramp_seconds: 1.0,
            bits_per_second: 4e7,
            steady_bps: 4e7,
            per_stream_bps: 4e7,
            capacity: lab_rate(1e9),
            ..full_path(1)
        };
        let v = said(&lossy);
        assert_eq!(v.limit, Limit::Network);
        assert!(
            v.sentence
                .contains("900 retransmits (0.100 % of bytes) after the first 1.0 s"),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn a_window_of_a_few_small_segments_is_the_window_whatever_the_cpu() {
        // `--window 4K` on loopback: 1012-byte segments, both ends busy.
        let tiny = Features {
            senders: 1,
            busy_us: 2e6,
            sender_util: 0.87,
            receiver_util: 0.99,
            host_busy: 0.99,
            min_rcvbuf: 8192,
            snd_mss: 1012.0,
            ..Features::default()
        };
        let v = said(&tiny);
        assert_eq!(v.limit, Limit::ReceiverWindow);
        assert!(
            v.sentence.contains("8 segments of 1012 B"),
            "{}",
            v.sentence
        );
        // A reader behind on loopback: a few 64 KiB segments fill an
        // autotuned buffer; that is the reader's CPU, not a tiny window.
        let behind = Features {
            min_rcvbuf: 353 << 10,
            snd_mss: 65483.0,
            rwnd_share: 0.96,
            ..tiny
        };
        assert!(matches!(rules::decide(&behind, None), Finding::Cpu { .. }));
    }

    #[test]
    fn the_probes_directions_follow_the_data() {
        use linerate_result::one_way::{OneWayDelay, QueueDelay};
        let d = OneWayDelay {
            probes_sent: 20,
            probes_answered: 20,
            to_server: QueueDelay {
                median_us: 10.0,
                p90_us: 20.0,
            },
            to_client: QueueDelay {
                median_us: 5000.0,
                p90_us: 9000.0,
            },
        };
        let forward = DirectedQueues::of(&d, Some(true)).unwrap();
        assert_eq!((forward.data_way_us, forward.ack_way_us), (10.0, 5000.0));
        assert_eq!(forward.ack_way_p90_us, 9000.0);
        let reverse = DirectedQueues::of(&d, Some(false)).unwrap();
        assert_eq!((reverse.data_way_us, reverse.ack_way_us), (5000.0, 10.0));
        assert!(DirectedQueues::of(&d, None).is_none());
    }
}
