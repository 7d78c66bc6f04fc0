//! What a verdict is judged on: the measured figures of a run, reduced to
//! typed features (shares of time, thread loads, buffers, windows). The
//! rules read nothing else; the result document carries them as evidence.

use std::collections::BTreeMap;

use linerate_result::{Side, StreamEnd};

use super::arith::ratio;
use super::steady::Steady;
use super::{
    Evidence, HOST_SATURATED, OWN_THREADS_BUSY, QUEUE_FLOOR_US, QUEUE_SHARE, STARVED_SHARE,
};

/// A receive buffer under this is tiny whatever its segments: less than
/// TCP carries in flight without window scaling. Autotuned buffers start at
/// tcp_rmem's default (128 KiB) and grow, so only a `--window` asks for one
/// this small.
pub const TINY_BUFFER: u32 = 64 << 10;

/// What the verdict's rules look at, measured once from a run's evidence.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Features {
    /// Streams with TCP_INFO at the sending end.
    pub senders: usize,
    /// Microseconds the senders had data in flight.
    pub busy_us: f64,
    /// Shares of that time limited by the receive window and the send buffer.
    pub rwnd_share: f64,
    /// Share of the busy time limited by the send buffer.
    pub sndbuf_share: f64,
    /// Retransmitted share of the bytes sent, and the count of retransmits,
    /// after the ramp (the whole run's when it had too few intervals).
    pub retrans_share: f64,
    /// Segments retransmitted after the ramp.
    pub retransmits: u64,
    /// When the ramp (the first interval) ended, seconds into the run (0:
    /// not told apart), and the retransmits in it: slow start overshooting.
    pub ramp_seconds: f64,
    /// Segments retransmitted during the ramp.
    pub ramp_retransmits: u64,
    /// The summed rate's coefficient of variation after the ramp, and its
    /// mean (the whole run's where no ramp was told apart).
    pub rate_variation: Option<f64>,
    /// The summed rate's mean after the ramp, bits/s.
    pub steady_bps: f64,
    /// The senders' smoothed round trip (median stream), µs.
    pub rtt_us: f64,
    /// The busiest thread of each side, as a share of its stream's time:
    /// on a core, and waiting for one.
    pub sender_util: f64,
    /// The busiest receiving thread's share on a core.
    pub receiver_util: f64,
    /// The busiest sending thread's share waiting for a core.
    pub sender_wait: f64,
    /// The busiest receiving thread's share waiting for a core.
    pub receiver_wait: f64,
    /// The busiest receiving thread, running or waiting to run: a reader
    /// that is never blocked on its socket.
    pub receiver_occupied: f64,
    /// The busier host's CPUs, all processes.
    pub host_busy: f64,
    /// The smallest receive buffer of any stream, bytes.
    pub min_rcvbuf: u32,
    /// The receive buffer asked for with -w, bytes.
    pub window_asked: Option<u32>,
    /// The smallest send buffer of any stream, bytes.
    pub min_sndbuf: u32,
    /// The senders' congestion window (median stream), bytes.
    pub cwnd_bytes: f64,
    /// The window the receivers advertised, as the senders last saw it.
    pub peer_window: f64,
    /// The senders' segment size (median stream).
    pub snd_mss: f64,
    /// The received rate of the median stream, bits/s.
    pub per_stream_bps: f64,
    /// The run's received rate, all streams.
    pub bits_per_second: f64,
    /// The senders' lowest round trip (median over streams), µs; 0 when
    /// the kernel does not tell it.
    pub min_rtt_us: f64,
    /// How far the smoothed round trip sat above the lowest: the queue the
    /// streams kept standing somewhere on the path, µs.
    pub queue_us: f64,
    /// Share of the run the senders had data waiting to go (TCP's busy
    /// time, the median stream): below 1, the application paused.
    pub busy_share: f64,
    /// Jain's fairness index of the streams' received rates, and the
    /// slowest and fastest stream's rate.
    pub jain_index: f64,
    /// The slowest stream's received rate, bits/s.
    pub stream_min_bps: f64,
    /// The fastest stream's received rate, bits/s.
    pub stream_max_bps: f64,
    /// The path's capacity, where it is known.
    pub capacity: Option<super::Capacity>,
    /// The least round trip the path can carry, where known, µs.
    pub path_min_rtt_us: Option<f64>,
    /// Shares of each side's stream-thread CPU time spent sealing and
    /// opening TLS records (0 in the clear).
    pub sender_tls_share: f64,
    /// Share of the receivers' stream-thread CPU time spent opening TLS records.
    pub receiver_tls_share: f64,
    /// The run's span: the longest stream's, seconds. A thread's shares are
    /// of it, not of its own stream's span, which ends at its last byte
    /// (a receiver that got nothing has a span of nothing).
    pub run_seconds: f64,
    /// Payload that arrived, all streams, bytes.
    pub received_bytes: f64,
    /// The senders' congestion window (median stream), segments.
    pub cwnd_segments: f64,
    /// The largest window the senders reached after the ramp (median
    /// stream), segments; the end's where intervals are missing.
    pub peak_cwnd_segments: f64,
    /// Segments the senders retransmitted over the whole run.
    pub total_retransmits: u64,
    /// The path MTU the senders last learned (median), bytes; 0 unknown.
    pub pmtu: f64,
    /// The largest segment the path's MTU and the receiver's MSS allow
    /// the senders, bytes; 0 unknown.
    pub full_mss: f64,
    /// Where the run was under a CPU quota, the tightest end's.
    pub quota: Option<Quota>,
    /// What the threads of the process that forwarded the packets (a
    /// lab's emulator) used over the run, where one did.
    pub forwarder: Option<linerate_probe::cpu::ThreadsUse>,
    /// Each direction's queueing by the one-way delay probe, where known.
    pub one_way: Option<super::DirectedQueues>,
}

/// A CPU quota (a cgroup's) and what it took from one end over the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// The end under it.
    pub side: Side,
    /// Cores the quota allows.
    pub cores: f64,
    /// Share of the run's scheduling periods in which it throttled the end.
    pub throttled_share: f64,
    /// Seconds the end's threads were held back by it.
    pub throttled_seconds: f64,
}

/// Of the CPU time of `ends`' threads, the share spent in TLS.
fn tls_share(ends: &[&StreamEnd]) -> f64 {
    let cpu: f64 = ends.iter().map(|s| s.cpu_seconds).sum();
    let tls: f64 = ends.iter().map(|s| s.tls_seconds).sum();
    if cpu > 0.0 { (tls / cpu).min(1.0) } else { 0.0 }
}

impl Features {
    /// The features of evidence `e`.
    pub fn measure(e: &Evidence) -> Features {
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
        let sent: u64 = senders.iter().map(|s| s.bytes_total).sum();
        let run_seconds = e.streams.iter().map(|s| s.seconds).fold(0.0, f64::max);
        let worst = |ends: &[&StreamEnd], time| busiest(ends.iter().copied(), time, run_seconds);
        let sender_tcp = |f: fn(&linerate_result::TcpSample) -> Option<f64>| {
            median(senders.iter().filter_map(|s| s.tcp.as_ref().and_then(f)))
        };
        let rtt_us = sender_tcp(|t| Some(f64::from(t.rtt_us)));
        let min_rtt_us = sender_tcp(|t| t.min_rtt_us.map(f64::from));
        let whole = Steady {
            ramp_seconds: 0.0,
            retransmits: sum(&|s| s.tcp.map(|t| u64::from(t.total_retrans))),
            retrans_share: ratio(
                sum(&|s| s.tcp.and_then(|t| t.bytes_retrans)) as f64,
                sent as f64,
            ),
            variation: None,
            bits_per_second: None,
            peak_cwnd_segments: None,
        };
        let steady = Steady::of(e.intervals).unwrap_or(whole);
        let cwnd_segments = sender_tcp(|t| Some(f64::from(t.snd_cwnd)));
        let rates: Vec<f64> = receivers
            .iter()
            .map(|s| ratio(s.bytes as f64 * 8.0, s.seconds))
            .collect();
        Features {
            senders: senders.len(),
            busy_us: busy,
            rwnd_share: ratio(sum(&|s| s.tcp.and_then(|t| t.rwnd_limited_us)) as f64, busy),
            retrans_share: steady.retrans_share,
            retransmits: steady.retransmits,
            ramp_seconds: steady.ramp_seconds,
            ramp_retransmits: whole.retransmits.saturating_sub(steady.retransmits),
            rate_variation: steady.variation,
            steady_bps: steady.bits_per_second.unwrap_or(e.bits_per_second),
            sndbuf_share: ratio(
                sum(&|s| s.tcp.and_then(|t| t.sndbuf_limited_us)) as f64,
                busy,
            ),
            rtt_us,
            min_rtt_us,
            queue_us: if min_rtt_us > 0.0 {
                (rtt_us - min_rtt_us).max(0.0)
            } else {
                0.0
            },
            busy_share: median(
                senders
                    .iter()
                    .filter_map(|s| Some(ratio(s.tcp?.busy_us? as f64 / 1e6, s.seconds))),
            )
            .min(1.0),
            jain_index: linerate_result::stats::jain_index(&rates),
            stream_min_bps: rates.iter().copied().reduce(f64::min).unwrap_or(0.0),
            stream_max_bps: rates.iter().copied().fold(0.0, f64::max),
            capacity: e.capacity,
            path_min_rtt_us: e.path_min_rtt_us,
            forwarder: e.forwarder,
            one_way: e.one_way,
            sender_util: worst(&senders, running),
            receiver_util: worst(&receivers, running),
            sender_wait: worst(&senders, waiting),
            receiver_wait: worst(&receivers, waiting),
            receiver_occupied: worst(&receivers, |s| running(s) + waiting(s)),
            host_busy: e.server_cpu.map_or(e.client_cpu.busy_fraction, |s| {
                s.busy_fraction.max(e.client_cpu.busy_fraction)
            }),
            min_rcvbuf: receivers.iter().map(|s| s.rcvbuf).min().unwrap_or(0),
            window_asked: e.window_asked,
            min_sndbuf: senders.iter().map(|s| s.sndbuf).min().unwrap_or(0),
            cwnd_bytes: sender_tcp(|t| Some(f64::from(t.snd_cwnd) * f64::from(t.snd_mss))),
            peer_window: sender_tcp(|t| t.snd_wnd.map(f64::from)),
            snd_mss: sender_tcp(|t| Some(f64::from(t.snd_mss))),
            per_stream_bps: e.bits_per_second / senders.len().max(1) as f64,
            bits_per_second: e.bits_per_second,
            sender_tls_share: tls_share(&senders),
            receiver_tls_share: tls_share(&receivers),
            run_seconds,
            received_bytes: if receivers.is_empty() {
                senders
                    .iter()
                    .filter_map(|s| s.tcp?.bytes_acked)
                    .sum::<u64>() as f64
            } else {
                receivers.iter().map(|s| s.bytes_total as f64).sum()
            },
            cwnd_segments,
            peak_cwnd_segments: steady.peak_cwnd_segments.unwrap_or(cwnd_segments),
            total_retransmits: whole.retransmits,
            pmtu: sender_tcp(|t| t.pmtu.map(f64::from)),
            full_mss: full_mss(&senders, &receivers),
            quota: quota(e),
        }
    }

    /// The rate the last advertised window carries a stream at the path's
    /// lowest round trip (the smoothed one where the lowest is unknown).
    pub fn window_rate(&self) -> f64 {
        self.rate_in_flight(self.peer_window)
    }

    /// The rate `bytes` in flight carry a stream at the path's lowest
    /// round trip.
    fn rate_in_flight(&self, bytes: f64) -> f64 {
        ratio(bytes * 8.0, self.lowest_rtt_us() / 1e6)
    }

    /// `bytes` in flight carry `times` the rate each stream carried or more.
    fn in_flight_carries(&self, bytes: f64, times: f64) -> bool {
        let each = self.steady_per_stream_bps();
        each > 0.0 && self.rate_in_flight(bytes) >= times * each
    }

    /// The path's lowest round trip, µs, or the smoothed one where the
    /// lowest is unknown: what a window or buffer is judged at.
    pub fn lowest_rtt_us(&self) -> f64 {
        if self.min_rtt_us > 0.0 {
            self.min_rtt_us
        } else {
            self.rtt_us
        }
    }

    /// The window carries `times` the rate each stream carried or more.
    pub fn window_carries(&self, times: f64) -> bool {
        self.in_flight_carries(self.peer_window, times)
    }

    /// The senders' smallest send buffer carries `times` the rate each
    /// stream carried or more at the path's lowest round trip.
    pub fn send_buffer_carries(&self, times: f64) -> bool {
        self.in_flight_carries(f64::from(self.min_sndbuf), times)
    }

    /// The senders' segments were lowered well under what the path's MTU
    /// and the receiver allow, after retransmits, with a window of two full
    /// segments or more: the kernel's MTU probing (tcp_mtu_probing) found
    /// that full-size segments did not arrive and fell back. A window under
    /// two full segments lowers them by itself (TCP keeps a segment to
    /// half the peer's largest window: `--window 16K` on loopback sends
    /// 4 KiB segments).
    pub fn mss_lowered(&self) -> bool {
        self.full_mss > 0.0
            && self.snd_mss > 0.0
            && self.snd_mss < LOWERED_MSS * self.full_mss
            && self.total_retransmits > 0
            && self.peer_window >= 2.0 * self.full_mss
    }

    /// What the path itself holds of the congestion window: the window
    /// less the share that sat in a queue (cwnd x min RTT / RTT). A buffer
    /// or window below the congestion window but above this only kept a
    /// queue shorter, not the rate lower.
    pub fn pipe_bytes(&self) -> f64 {
        if self.standing_queue() {
            self.cwnd_bytes * self.min_rtt_us / self.rtt_us
        } else {
            self.cwnd_bytes
        }
    }

    /// A receive buffer of a few small segments (under 8 KiB, as a tiny
    /// `--window` makes them), or one under [`TINY_BUFFER`] whatever its
    /// segments (a 2 KiB `--window` shrinks them to 76 bytes, thirty of
    /// which fill it): TCP's cost per byte climbs; whatever else is busy,
    /// the window is why. The buffer, not the last advertised window, which
    /// a reader that fell behind closes too; and small segments, since
    /// loopback's 64 KiB ones fill any autotuned buffer in a few.
    pub fn tiny_window(&self) -> bool {
        let few_segments = self.snd_mss > 0.0
            && self.snd_mss < 8192.0
            && f64::from(self.min_rcvbuf) <= 16.0 * self.snd_mss;
        self.min_rcvbuf > 0 && (few_segments || self.min_rcvbuf < TINY_BUFFER)
    }

    /// The round trip sat above its minimum by a queue that stood, and the
    /// senders could hold that much in flight (rate x RTT within their send
    /// buffer): a round trip stretched by delayed ACKs behind a tiny buffer
    /// is no queue.
    pub fn standing_queue(&self) -> bool {
        let in_flight = self.per_stream_bps / 8.0 * self.rtt_us / 1e6;
        self.min_rtt_us > 0.0
            && self.queue_us >= QUEUE_FLOOR_US.max(QUEUE_SHARE * self.min_rtt_us)
            && (self.min_sndbuf == 0 || in_flight <= f64::from(self.min_sndbuf))
    }

    /// The steady rate (after the ramp) of the average stream, bits/s: what
    /// a per-stream pacing cap holds. The whole run's rate also counts the
    /// session's setup and the ramp, which no cap paces and which a busy
    /// host stretches.
    pub fn steady_per_stream_bps(&self) -> f64 {
        self.steady_bps / self.senders.max(1) as f64
    }

    /// The busiest sending thread waited for a core a good share of the run.
    pub fn sender_starved(&self) -> bool {
        self.sender_wait >= STARVED_SHARE
    }

    /// The busiest receiving thread waited for a core a good share of the run.
    pub fn receiver_starved(&self) -> bool {
        self.receiver_wait >= STARVED_SHARE
    }

    /// The busier host's CPUs were nearly all busy.
    pub fn host_saturated(&self) -> bool {
        self.host_busy >= HOST_SATURATED
    }

    /// The host's cores were all busy and this run's own threads wanted
    /// them: running or waiting to run a good part of the time. Cores
    /// busy with other processes while the run's threads sleep on their
    /// sockets did not limit the run.
    pub fn cpu_scarce(&self) -> bool {
        let own = self
            .occupied(Side::Sender)
            .max(self.occupied(Side::Receiver));
        self.host_saturated() && own >= OWN_THREADS_BUSY
    }

    /// The busiest thread of `side`, running or waiting for a core.
    pub fn occupied(&self, side: Side) -> f64 {
        match side {
            Side::Sender => self.sender_util + self.sender_wait,
            Side::Receiver => self.receiver_util + self.receiver_wait,
        }
    }

    /// The side whose threads wanted more CPU: running or waiting for a
    /// core. A side crowded onto one core runs little and waits much.
    pub fn busier_side(&self) -> Side {
        if self.occupied(Side::Receiver) > self.occupied(Side::Sender) {
            Side::Receiver
        } else {
            Side::Sender
        }
    }

    /// The figures as the result document carries them.
    pub fn evidence(&self) -> BTreeMap<String, f64> {
        [
            ("rwnd_limited_share", self.rwnd_share),
            ("sndbuf_limited_share", self.sndbuf_share),
            ("retransmitted_share", self.retrans_share),
            ("retransmits", self.retransmits as f64),
            ("rtt_us", self.rtt_us),
            ("sender_thread_cpu", self.sender_util),
            ("receiver_thread_cpu", self.receiver_util),
            ("sender_runq_wait_share", self.sender_wait),
            ("receiver_runq_wait_share", self.receiver_wait),
            ("host_cpu_busy", self.host_busy),
            ("receiver_rcvbuf_bytes", f64::from(self.min_rcvbuf)),
            ("sender_sndbuf_bytes", f64::from(self.min_sndbuf)),
            ("cwnd_bytes", self.cwnd_bytes),
            ("peer_window_bytes", self.peer_window),
            ("min_rtt_us", self.min_rtt_us),
            ("queue_us", self.queue_us),
            ("sender_busy_share", self.busy_share),
            ("ramp_seconds", self.ramp_seconds),
            ("ramp_retransmits", self.ramp_retransmits as f64),
            ("steady_bits_per_second", self.steady_bps),
            ("jain_index", self.jain_index),
        ]
        .into_iter()
        .chain(self.rate_variation.map(|v| ("rate_variation", v)))
        .chain([
            ("received_bytes", self.received_bytes),
            ("cwnd_segments", self.cwnd_segments),
            ("peak_cwnd_segments", self.peak_cwnd_segments),
            ("total_retransmits", self.total_retransmits as f64),
            ("snd_mss_bytes", self.snd_mss),
        ])
        .chain((self.pmtu > 0.0).then_some(("path_mtu_bytes", self.pmtu)))
        .chain((self.full_mss > 0.0).then_some(("full_mss_bytes", self.full_mss)))
        .chain(self.quota.into_iter().flat_map(|q| {
            [
                ("quota_cores", q.cores),
                ("quota_throttled_share", q.throttled_share),
                ("quota_throttled_seconds", q.throttled_seconds),
            ]
        }))
        .chain(self.forwarder.into_iter().flat_map(|h| {
            [
                ("forwarder_cores", h.cores),
                ("forwarder_thread_running_share", h.running),
                ("forwarder_thread_waiting_share", h.waiting),
            ]
        }))
        .chain(self.one_way.into_iter().flat_map(|q| {
            [
                ("data_way_queue_us", q.data_way_us),
                ("ack_way_queue_us", q.ack_way_us),
                ("ack_way_queue_p90_us", q.ack_way_p90_us),
            ]
        }))
        .map(|(k, v)| (k.to_string(), round3(v)))
        .collect()
    }
}

/// The busiest of `ends`' threads: `time` as a share of its stream's
/// duration, or of `span` where that is longer (a thread runs for the
/// whole run, whenever its last byte came).
pub(crate) fn busiest<'a>(
    ends: impl Iterator<Item = &'a StreamEnd>,
    time: fn(&StreamEnd) -> f64,
    span: f64,
) -> f64 {
    ends.map(|s| ratio(time(s), s.seconds.max(span)))
        .fold(0.0, f64::max)
}

/// A thread's time running or waiting for a core outside its empty
/// polls: a polling receiver spins, and yields its core, while no data
/// has come, and a thread that blocked would have slept through that
/// (docs/verdict.md#polling).
fn occupied_working(s: &StreamEnd) -> f64 {
    (s.cpu_seconds + s.runq_wait_seconds - s.poll_idle_seconds).max(0.0)
}

/// A thread's CPU time less its empty polls.
fn running(s: &StreamEnd) -> f64 {
    (s.cpu_seconds - s.poll_idle_seconds)
        .max(0.0)
        .min(occupied_working(s))
}

/// A thread's wait for a core outside its empty polls.
fn waiting(s: &StreamEnd) -> f64 {
    occupied_working(s) - running(s)
}

/// A sender's segment this share of the full size or less was lowered.
pub const LOWERED_MSS: f64 = 0.9;

/// IPv4 and TCP headers with the timestamp option: a path MTU less these
/// is the largest segment it carries (IPv6 takes 20 more, so its full
/// segments read a little lowered only below [`LOWERED_MSS`]).
const HEADERS: f64 = 52.0;

/// The largest segment the senders could send: what their learned path
/// MTU carries, and no more than the receivers advertised (less the
/// timestamp option); 0 where neither is known.
fn full_mss(senders: &[&StreamEnd], receivers: &[&StreamEnd]) -> f64 {
    let by_pmtu = median(
        senders
            .iter()
            .filter_map(|s| s.tcp?.pmtu.filter(|&m| m > 0))
            .map(|m| f64::from(m) - HEADERS),
    );
    let by_receiver = median(
        receivers
            .iter()
            .filter_map(|s| s.tcp?.advmss.filter(|&m| m > 0))
            .map(f64::from),
    );
    match (by_pmtu > 0.0, by_receiver > 0.0) {
        (true, true) => by_pmtu.min(by_receiver),
        (true, false) => by_pmtu,
        (false, true) => by_receiver,
        (false, false) => 0.0,
    }
}

/// The tightest CPU quota either end ran under, with what it throttled.
fn quota(e: &Evidence) -> Option<Quota> {
    let of = |cpu: &linerate_result::HostCpu, side| {
        let q = cpu.cgroup?;
        Some(Quota {
            side,
            cores: q.quota_cores?,
            throttled_share: ratio(q.throttled_periods as f64, q.periods as f64),
            throttled_seconds: q.throttled_seconds,
        })
    };
    // The client plays the sending side when any stream flows from it
    // (both with --bidir: the sender's then).
    let client = if e
        .streams
        .iter()
        .any(|s| s.flow == linerate_result::Flow::ClientToServer)
    {
        Side::Sender
    } else {
        Side::Receiver
    };
    [
        of(&e.client_cpu, client),
        e.server_cpu.as_ref().and_then(|c| of(c, other(client))),
    ]
    .into_iter()
    .flatten()
    .max_by(|a, b| a.throttled_share.total_cmp(&b.throttled_share))
}

fn other(side: Side) -> Side {
    match side {
        Side::Sender => Side::Receiver,
        Side::Receiver => Side::Sender,
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

pub(crate) use linerate_result::stats::median;
