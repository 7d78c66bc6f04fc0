//! The `linerate.result/1` document: the one JSON format every measuring
//! command writes and every consumer (`report`, `compare`) reads.
//!
//! Plain data only: no I/O, no measurement. The JSON Schema that documents it
//! lives in `docs/result.schema.json`; a test keeps the two in step.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod fleet;
pub mod latency;
pub mod one_way;
pub mod stats;

/// Value of the `schema` field; bumped only on incompatible changes.
pub const SCHEMA: &str = "linerate.result/1";

/// One run of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    /// [`SCHEMA`].
    pub schema: String,
    /// `bench`, `transfer`, `latency`, `study.*`, ...
    pub kind: String,
    /// The linerate that wrote it.
    pub linerate_version: String,
    /// The command that ran, secrets redacted.
    pub command_line: Vec<String>,
    /// Seconds since the Unix epoch when the measurement started.
    pub started_at: f64,
    /// Both ends' facts.
    pub hosts: Hosts,
    /// The command's parameters as the command names them.
    pub parameters: serde_json::Value,
    /// Per-interval, per-stream samples of both ends, flat.
    pub intervals: Vec<IntervalSample>,
    /// One entry per stream and end, with the final TCP_INFO.
    pub streams: Vec<StreamEnd>,
    /// The run in figures, with its verdict.
    pub summary: Summary,
    /// The lab conditions this run was made under, when a lab made them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabRecord>,
    /// For the `latency` kind: the round trips of every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<latency::Latency>,
    /// For `study.*` kinds: every run and what they show together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<Study>,
    /// For the many-host kinds (`incast`, `mesh`): the hosts and every
    /// step's flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<fleet::Fleet>,
    /// The user ended the run early (Ctrl-C): the figures cover what ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Each direction's queueing delay while a bench's streams ran, from
    /// its one-way delay probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_delay: Option<one_way::OneWayDelay>,
    /// The schedule and test that ran it (`linerate schedule run`), as
    /// `SCHEDULE/TEST`; absent for a run a person started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
}

impl ResultDoc {
    /// A `kind` document of this version: the command line with its
    /// secrets redacted, the start as seconds since the epoch, and no
    /// samples or kind-specific parts (set those after).
    pub fn new(
        kind: &str,
        command_line: &[String],
        started_at: std::time::SystemTime,
        hosts: Hosts,
        parameters: serde_json::Value,
        summary: Summary,
    ) -> ResultDoc {
        ResultDoc {
            schema: SCHEMA.to_string(),
            kind: kind.to_string(),
            linerate_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: command_line.iter().map(|a| redact(a)).collect(),
            started_at: started_at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            hosts,
            parameters,
            intervals: Vec::new(),
            streams: Vec::new(),
            summary,
            lab: None,
            latency: None,
            study: None,
            fleet: None,
            interrupted: false,
            one_way_delay: None,
            schedule: None,
        }
    }

    /// What the command was pointed at: the first word after the command
    /// (the document's kind) that is not a flag, such as a bench's
    /// HOST[:PORT]; `None` for a run a command made for itself.
    pub fn target(&self) -> Option<&str> {
        self.command_line
            .iter()
            .skip_while(|w| w.as_str() != self.kind.as_str())
            .skip(1)
            .find(|w| !w.starts_with('-'))
            .map(String::as_str)
    }
}

impl Summary {
    /// A run's totals and verdict, with no paths, members or directions
    /// (a striped, bonded or two-way run adds its own).
    pub fn new(
        (bits_per_second, bytes, seconds): (f64, u64, f64),
        cpu_seconds_per_gb: CpuPerGb,
        retransmits: u64,
        verdict: Verdict,
    ) -> Summary {
        Summary {
            bits_per_second,
            bytes,
            seconds,
            cpu_seconds_per_gb,
            retransmits,
            verdict,
            paths: Vec::new(),
            members: Vec::new(),
            directions: Vec::new(),
        }
    }
}

/// Which lab, topology and backend produced the conditions of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabRecord {
    /// The lab's name.
    pub name: String,
    /// `netem`, `emulator` or `veth`.
    pub backend: String,
    /// Why that backend, in words.
    pub backend_reason: String,
    /// `direct` or `router`.
    pub topology: String,
    /// Its links' MTU.
    pub mtu: u32,
    /// RTT, jitter, loss, reordering, duplication, rate, queue, seed.
    pub conditions: serde_json::Value,
}

/// The runs of a study and the figures derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// Every run, in the order it ran.
    pub points: Vec<StudyPoint>,
    /// Derived figures, e.g. `time_to_stabilise_s`.
    pub findings: BTreeMap<String, f64>,
    /// How each finding is defined, in words.
    pub definitions: BTreeMap<String, String>,
}

/// One run of a study: which series it belongs to, the factors varied, and the full bench result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPoint {
    /// The series it belongs to (a study's part, a compared tool).
    pub series: String,
    /// What it varied, by name.
    pub factors: BTreeMap<String, serde_json::Value>,
    /// Its own document.
    pub result: ResultDoc,
}

/// The two ends' facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hosts {
    /// The client's host.
    pub client: HostFacts,
    /// The server's host, where it reported one.
    pub server: Option<HostFacts>,
}

/// What a result must say about the machine it was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HostFacts {
    /// The host's name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// The CPU's model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    /// Same boot id, same kernel: both ends share the CPUs.
    #[serde(default)]
    pub boot_id: String,
    /// The TCP/IP sysctls that shape throughput, as read from /proc/sys.
    pub sysctls: BTreeMap<String, String>,
    /// The cgroup linerate ran in, where it limits CPU or memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<Box<CgroupLimits>>,
}

/// Which end of a stream a sample was taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The end that writes.
    Sender,
    /// The end that reads.
    Receiver,
}

/// Which way a stream's payload flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    /// From the client to the server.
    ClientToServer,
    /// From the server to the client (-R).
    ServerToClient,
}

/// What TCP_INFO said at one moment. Times in microseconds, rates in bits/s;
/// fields the running kernel does not report are absent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct TcpSample {
    /// Smoothed round trip, µs.
    pub rtt_us: u32,
    /// Its variation, µs.
    pub rttvar_us: u32,
    /// The least round trip the kernel saw, µs.
    pub min_rtt_us: Option<u32>,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Slow-start threshold, segments.
    pub snd_ssthresh: u32,
    /// The sender's segment size, bytes.
    pub snd_mss: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// The kernel's pacing rate.
    pub pacing_rate_bps: Option<u64>,
    /// The kernel's estimate of the delivery rate.
    pub delivery_rate_bps: Option<u64>,
    /// Time with data in flight, µs.
    pub busy_us: Option<u64>,
    /// Of it, time limited by the receive window, µs.
    pub rwnd_limited_us: Option<u64>,
    /// Of it, time limited by the send buffer, µs.
    pub sndbuf_limited_us: Option<u64>,
    /// Bytes retransmitted.
    pub bytes_retrans: Option<u64>,
    /// The window the peer last advertised, bytes.
    pub snd_wnd: Option<u32>,
    /// The receiver's estimate of what the sender sends per round trip, bytes.
    pub rcv_space: u32,
    /// The path MTU the connection last learned, bytes: segments of the
    /// sender's MSS far under it were lowered by MTU probing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u32>,
    /// The largest segment received so far, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_mss: Option<u32>,
    /// The MSS this end advertised, bytes: what its route's MTU allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advmss: Option<u32>,
    /// The receiver's estimate of the round trip, µs (0 until it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_rtt_us: Option<u32>,
    /// Bytes the peer acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_acked: Option<u64>,
    /// Segments received (ACKs, at a sender).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segs_in: Option<u32>,
    /// Segments sent, with data or without (ACKs, at a receiver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segs_out: Option<u32>,
    /// Segments sent that carried data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_segs_out: Option<u32>,
}

/// Payload and TCP state of one stream at one end over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Which end sampled it.
    pub side: Side,
    /// The stream's index.
    pub stream: u16,
    /// Seconds since the start of the measurement.
    pub start: f64,
    /// Seconds since the start of the measurement, at its end.
    pub end: f64,
    /// Payload in the interval.
    pub bytes: u64,
    /// Payload per second over the interval.
    pub bits_per_second: f64,
    /// TCP_INFO at the interval's end.
    pub tcp: Option<TcpSample>,
    /// What a UDP receiver counted in the interval (`bench --udp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// What a UDP stream's receiver counted, over an interval or the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct UdpCounts {
    /// Datagrams that arrived, duplicates included.
    pub datagrams: u64,
    /// Datagrams sent and never arrived: by the sequence numbers, and over
    /// the run by the sender's own count.
    pub lost: u64,
    /// `lost` over the datagrams sent.
    pub loss: f64,
    /// Arrived after a later one.
    pub out_of_order: u64,
    /// Arrived more than once.
    pub duplicates: u64,
    /// RFC 3550 interarrival jitter at the end of the span.
    pub jitter_us: f64,
    /// The sender's count of datagrams (over the run, when it told it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// Times the receiving socket's full buffer dropped datagrams, as the
    /// kernel counts them (SO_RXQ_OVFL's count: once per datagram, or once
    /// per GRO batch of them); over the run only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_drops: Option<u64>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// A stream's totals at one end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEnd {
    /// The stream's index.
    pub stream: u16,
    /// Which end this is.
    pub side: Side,
    /// Which way its data went.
    pub flow: Flow,
    /// Payload bytes after the omitted warm-up.
    pub bytes: u64,
    /// Payload bytes including the warm-up.
    pub bytes_total: u64,
    /// From the start (after the warm-up) to this stream's last byte.
    pub seconds: f64,
    /// CPU time of the thread that served this stream.
    pub cpu_seconds: f64,
    /// Time that thread was runnable but waited for a CPU (schedstat).
    #[serde(default)]
    pub runq_wait_seconds: f64,
    /// Of `cpu_seconds`, the time spent sealing and opening TLS records
    /// (0 in the clear).
    #[serde(default)]
    pub tls_seconds: f64,
    /// Of `cpu_seconds`, the time a polling receiver spent on reads that
    /// found no data (0 when it blocks): a thread that blocked instead
    /// would have slept through it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub poll_idle_seconds: f64,
    /// TCP_INFO at the stream's end.
    pub tcp: Option<TcpSample>,
    /// Socket buffer sizes the kernel granted (SO_SNDBUF / SO_RCVBUF).
    pub sndbuf: u32,
    /// The receive buffer the kernel granted.
    pub rcvbuf: u32,
    /// Why the stream failed, if it did.
    pub error: Option<String>,
    /// A UDP stream's receiver counts (`bench --udp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpCounts>,
}

/// Load of the machine a side ran on over the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct HostCpu {
    /// Fraction of all CPUs' time spent not idle (user, system, irq, softirq).
    pub busy_fraction: f64,
    /// Fraction of all CPUs' time spent in softirq.
    pub softirq_fraction: f64,
    /// Online CPUs.
    pub cpus: u32,
    /// CPU time of the whole linerate process over the run.
    pub process_cpu_seconds: f64,
    /// The CPU quota of the process's cgroup and what it throttled over
    /// the run, where the cgroup has a quota or a cpuset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupCpu>,
}

/// A cgroup's CPU limits as they held one process over a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct CgroupCpu {
    /// The cgroup version (1 or 2).
    pub version: u8,
    /// Cores the quota allows (quota / period); None: no quota.
    pub quota_cores: Option<f64>,
    /// CPUs its cpuset allows, where the cgroup has one.
    pub cpuset_cpus: Option<u32>,
    /// Scheduling periods the quota ran over during the run.
    pub periods: u64,
    /// Of them, periods in which it throttled the cgroup.
    pub throttled_periods: u64,
    /// Time the cgroup's threads were held back by the quota, seconds.
    pub throttled_seconds: f64,
}

/// The cgroup a process runs in, for the host facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CgroupLimits {
    /// The cgroup version (1 or 2).
    pub version: u8,
    /// Its path in the CPU controller's hierarchy.
    pub path: String,
    /// Cores its quota allows; None: no quota.
    pub quota_cores: Option<f64>,
    /// CPUs its cpuset allows, where it has one.
    pub cpuset_cpus: Option<u32>,
    /// Its memory limit in bytes, where it has one.
    pub memory_limit_bytes: Option<u64>,
}

/// One end's measurements, as sent from server to client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SideReport {
    /// Every stream's totals at this end.
    pub streams: Vec<StreamEnd>,
    /// Every interval sample at this end.
    pub intervals: Vec<IntervalSample>,
    /// The host's CPU over the run.
    pub host_cpu: HostCpu,
    /// Why this end failed, if it did.
    pub error: Option<String>,
    /// UDP runs: datagrams this end's host (network namespace) dropped in
    /// full receive buffers over the run, every socket's (/proc/net/snmp
    /// RcvbufErrors, IPv4 and IPv6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_rcvbuf_errors: Option<u64>,
    /// Threads that ran this end's streams: one a stream, or fewer when
    /// streams were multiplexed onto one loop a core (`--threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_threads: Option<u32>,
}

/// Every stream of one side over one interval, summed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalSum {
    /// Seconds since the start of the measurement.
    pub end: f64,
    /// The longest of the streams' intervals.
    pub seconds: f64,
    /// Payload per second, all the streams.
    pub bits_per_second: f64,
}

/// The streams playing `side` summed interval by interval (matched by
/// their start, to the millisecond), in time order.
pub fn summed_intervals(intervals: &[IntervalSample], side: Side) -> Vec<IntervalSum> {
    let mut by_start: BTreeMap<u64, (f64, f64, f64)> = BTreeMap::new();
    for i in intervals
        .iter()
        .filter(|i| i.side == side && i.end > i.start)
    {
        let e = by_start
            .entry((i.start * 1000.0).round() as u64)
            .or_default();
        e.0 += i.bytes as f64 * 8.0;
        e.1 = e.1.max(i.end - i.start);
        e.2 = e.2.max(i.end);
    }
    by_start
        .into_values()
        .map(|(bits, seconds, end)| IntervalSum {
            end,
            seconds,
            bits_per_second: bits / seconds,
        })
        .collect()
}

/// One stream's failure, as its end's report gave it; shown as
/// "stream N: what its end said".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFailure {
    /// The stream's index.
    pub stream: u16,
    /// What its end said (the report's words, from the peer for a
    /// server's streams).
    pub error: String,
}

impl std::fmt::Display for StreamFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stream {}: {}", self.stream, self.error)
    }
}

impl SideReport {
    /// Every stream of this end that failed.
    pub fn stream_failures(&self) -> Vec<StreamFailure> {
        self.streams
            .iter()
            .filter_map(|s| {
                Some(StreamFailure {
                    stream: s.stream,
                    error: s.error.clone()?,
                })
            })
            .collect()
    }

    /// Payload bytes moved at this end by the streams playing `side`, warm-up included.
    pub fn bytes_total(&self, side: Side) -> u64 {
        self.streams
            .iter()
            .filter(|s| s.side == side)
            .map(|s| s.bytes_total)
            .sum()
    }

    /// Checks what serde cannot: numbers that must be finite and within range.
    pub fn validate(&self) -> Result<(), InvalidReport> {
        for s in &self.streams {
            if !(s.seconds.is_finite() && s.seconds >= 0.0) {
                return Err(InvalidReport::Stream {
                    stream: s.stream,
                    field: "seconds",
                });
            }
            if !(s.cpu_seconds.is_finite() && s.cpu_seconds >= 0.0) {
                return Err(InvalidReport::Stream {
                    stream: s.stream,
                    field: "cpu_seconds",
                });
            }
        }
        for i in &self.intervals {
            if !(i.start.is_finite() && i.end.is_finite() && i.end >= i.start) {
                return Err(InvalidReport::Interval { stream: i.stream });
            }
        }
        let c = &self.host_cpu;
        if !(c.busy_fraction.is_finite() && c.softirq_fraction.is_finite()) {
            return Err(InvalidReport::HostCpu);
        }
        Ok(())
    }
}

/// A side's report with a figure no measurement makes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidReport {
    /// A stream's figure that is not a finite number at least 0.
    #[error("stream {stream} has invalid {field}")]
    Stream {
        /// The stream's index.
        stream: u16,
        /// The figure's name.
        field: &'static str,
    },
    /// An interval that ends before it starts, or not finite.
    #[error("interval of stream {stream} is invalid")]
    Interval {
        /// The stream's index.
        stream: u16,
    },
    /// The host's CPU fractions are not finite.
    #[error("host_cpu is not finite")]
    HostCpu,
}

/// CPU cost of moving data, at each end.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct CpuPerGb {
    /// CPU seconds per GB moved at the sending end.
    pub sender: f64,
    /// CPU seconds per GB moved at the receiving end.
    pub receiver: f64,
}

/// What limited a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The receivers' advertised window.
    ReceiverWindow,
    /// The senders' send buffer.
    SendBuffer,
    /// The path carried all it could: a bottleneck at its capacity, with
    /// nothing at either end holding the senders back.
    PathFull,
    /// The network lost or queued what was sent.
    Network,
    /// A side's CPU.
    Cpu,
    /// The application did not keep the senders busy (or a pacing cap).
    Application,
    /// Reading the source files (transfers).
    SourceDisk,
    /// Writing the destination files (transfers).
    DestinationDisk,
    /// Two limits each held the run a good part of the time; the sentence
    /// names both, with their shares.
    Mixed,
    /// The run's own measurement cannot stand for the path: the senders saw
    /// round trips shorter than the path can carry (packets that skipped
    /// an emulated delay), so what they did says nothing about it.
    Invalid,
    /// The links of a bond or of a striped run did not carry their
    /// shares: a hash put several flows on one member, or one link was
    /// slower than the others.
    Links,
    /// Nothing the rules could name (no TCP_INFO, too short, or no rule's
    /// evidence was there); the sentence says what was measured.
    Unknown,
    /// A hop with a smaller MTU dropped full-size segments and its ICMP
    /// "fragmentation needed" / "packet too big" never reached the sender.
    PathMtu,
    /// A policer on the path: a flat rate with loss at it and no queue.
    Policer,
    /// A cgroup's CPU quota (a container's, a batch job's) throttled one end.
    CpuQuota,
    /// A hop that forwards in software (a lab's emulator, a router short
    /// of CPU) forwarded all it could: below the path's rate, the ends idle.
    ForwardingHop,
    /// The way back from the receivers (their ACKs' direction) queued
    /// where the data's way did not: a slow or full return path held the
    /// senders' ACK clock.
    ReturnPath,
}

/// What limited a run, in a word and in a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The limit.
    pub limit: Limit,
    /// Which end, where the limit sits at one.
    pub side: Option<Side>,
    /// The finding in plain words, with the figures behind it.
    pub sentence: String,
    /// The measured figures the verdict was derived from.
    pub evidence: BTreeMap<String, f64>,
}

impl Verdict {
    /// The figure `key` of the evidence, 0 where the run did not measure it.
    pub fn evidence_or_zero(&self, key: &str) -> f64 {
        self.evidence.get(key).copied().unwrap_or(0.0)
    }
}

/// A run in figures, with its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Received payload per second, all streams and directions.
    pub bits_per_second: f64,
    /// Received payload.
    pub bytes: u64,
    /// Length of the measurement.
    pub seconds: f64,
    /// CPU cost per GB at each end.
    pub cpu_seconds_per_gb: CpuPerGb,
    /// Segments retransmitted, all streams.
    pub retransmits: u64,
    /// What limited the run.
    pub verdict: Verdict,
    /// What each path of a striped run carried (`--stripe`), in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathShare>,
    /// What each link of the client's bond or multipath route to the
    /// server carried during the run, from its device counters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberShare>,
    /// Each direction's own totals when the run went both ways
    /// (`--bidir`); the figures above are their sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<DirectionTotal>,
}

/// What one direction of a run both ways carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionTotal {
    /// Which way.
    pub flow: Flow,
    /// Its streams.
    pub streams: u32,
    /// Payload its receivers took.
    pub bytes: u64,
    /// Its longest receiving stream's time.
    pub seconds: f64,
    /// Its payload rate.
    pub bits_per_second: f64,
    /// Segments its senders retransmitted.
    pub retransmits: u64,
}

/// What a set of streams carried: their receivers' payload over the
/// longest receiving stream's time, and their senders' retransmits.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamTotals {
    /// Receiving streams among them.
    pub receivers: u32,
    /// Payload their receivers took.
    pub bytes: u64,
    /// The longest receiving stream's time.
    pub seconds: f64,
    /// `bytes` over `seconds`, bits/s.
    pub bits_per_second: f64,
    /// Segments their senders retransmitted.
    pub retransmits: u64,
}

impl StreamTotals {
    /// The totals of `streams` (either end of each).
    pub fn of<'a>(streams: impl IntoIterator<Item = &'a StreamEnd>) -> StreamTotals {
        let mut t = StreamTotals::default();
        for s in streams {
            match s.side {
                Side::Receiver => {
                    t.receivers += 1;
                    t.bytes += s.bytes;
                    t.seconds = t.seconds.max(s.seconds);
                }
                Side::Sender => {
                    t.retransmits += s.tcp.map_or(0, |t| u64::from(t.total_retrans));
                }
            }
        }
        if t.seconds > 0.0 {
            t.bits_per_second = t.bytes as f64 * 8.0 / t.seconds;
        }
        t
    }
}

impl DirectionTotal {
    /// Each direction's totals of `streams` (both ends of every stream),
    /// client to server first; a direction without streams is left out.
    pub fn of(streams: &[StreamEnd]) -> Vec<DirectionTotal> {
        [Flow::ClientToServer, Flow::ServerToClient]
            .into_iter()
            .filter_map(|flow| {
                let t = StreamTotals::of(streams.iter().filter(|s| s.flow == flow));
                (t.receivers > 0).then_some(DirectionTotal {
                    flow,
                    streams: t.receivers,
                    bytes: t.bytes,
                    seconds: t.seconds,
                    bits_per_second: t.bits_per_second,
                    retransmits: t.retransmits,
                })
            })
            .collect()
    }
}

/// What one path of a striped run carried: the streams given to one pair
/// of local and remote addresses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathShare {
    /// Its number, 1 to the paths given, in `--stripe` order.
    pub path: u16,
    /// The local address its streams connected from, where one was given.
    pub local: Option<String>,
    /// The receiver's address its streams connected to.
    pub remote: String,
    /// Its streams (ids as in `streams`).
    pub streams: Vec<u16>,
    /// Payload its receivers took.
    pub bytes: u64,
    /// Its payload rate over the run.
    pub bits_per_second: f64,
    /// Segments its senders retransmitted.
    pub retransmits: u64,
    /// Its share of the run's payload, 0 to 1.
    pub share: f64,
}

/// What one member link of a bond or of a multipath route carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberShare {
    /// Its device at the client (link2, eth1, ...).
    pub device: String,
    /// Bytes it carried in the run's data direction (sent for a forward
    /// run, received for -R, both for --bidir), headers included.
    pub bytes: u64,
    /// Its share of what all members carried, 0 to 1.
    pub share: f64,
}

/// `arg` with the secret of any receiver URL in it replaced by `REDACTED`:
/// a command line kept in a result or shown in a report must not hand the
/// right to send to whoever reads it.
pub fn redact(arg: &str) -> String {
    let Some(at) = arg.find("token=") else {
        return arg.to_string();
    };
    let start = at + "token=".len();
    // Hex digits, or the x's a sender writes over its own command line's
    // token (cli/src/argv.rs).
    let end = arg[start..]
        .find(|c: char| !c.is_ascii_hexdigit() && c != 'x')
        .map_or(arg.len(), |n| start + n);
    if end == start {
        // Nothing secret here (already redacted, or empty): keep it as it is.
        return format!("{}{}", &arg[..start], redact(&arg[start..]));
    }
    format!("{}REDACTED{}", &arg[..start], redact(&arg[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(side: Side, stream: u16, start: f64, end: f64, bytes: u64) -> IntervalSample {
        IntervalSample {
            side,
            stream,
            start,
            end,
            bytes,
            bits_per_second: bytes as f64 * 8.0 / (end - start),
            tcp: None,
            udp: None,
        }
    }

    fn end(stream: u16, flow: Flow, side: Side, bytes: u64, retrans: u32) -> StreamEnd {
        StreamEnd {
            stream,
            side,
            flow,
            bytes,
            bytes_total: bytes,
            seconds: 2.0,
            cpu_seconds: 0.0,
            runq_wait_seconds: 0.0,
            tls_seconds: 0.0,
            poll_idle_seconds: 0.0,
            tcp: (side == Side::Sender).then(|| TcpSample {
                total_retrans: retrans,
                ..TcpSample::default()
            }),
            sndbuf: 0,
            rcvbuf: 0,
            error: None,
            udp: None,
        }
    }

    #[test]
    fn each_direction_of_a_run_both_ways_has_its_own_totals() {
        let (up, down) = (Flow::ClientToServer, Flow::ServerToClient);
        let streams = [
            end(0, up, Side::Sender, 100, 3),
            end(0, up, Side::Receiver, 100, 0),
            end(1, down, Side::Sender, 50, 1),
            end(1, down, Side::Receiver, 50, 0),
            end(2, down, Side::Sender, 30, 0),
            end(2, down, Side::Receiver, 30, 0),
        ];
        let d = DirectionTotal::of(&streams);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].flow, d[0].bytes, d[0].retransmits), (up, 100, 3));
        assert_eq!(
            (d[1].flow, d[1].streams, d[1].bytes, d[1].retransmits),
            (down, 2, 80, 1)
        );
        assert_eq!(d[1].bits_per_second, 320.0);
        assert_eq!(DirectionTotal::of(&streams[..2]).len(), 1);
    }

    #[test]
    fn one_sides_streams_are_summed_interval_by_interval_in_time_order() {
        let intervals = [
            sample(Side::Sender, 1, 1.0, 2.0, 300),
            sample(Side::Sender, 0, 0.0, 1.0, 100),
            sample(Side::Receiver, 0, 0.0, 1.0, 999),
            sample(Side::Sender, 1, 0.0001, 1.0, 100),
            sample(Side::Sender, 0, 1.0, 2.0, 100),
            sample(Side::Sender, 0, 2.0, 2.0, 5),
        ];
        let sums = summed_intervals(&intervals, Side::Sender);
        let bps: Vec<f64> = sums.iter().map(|s| s.bits_per_second).collect();
        assert_eq!(bps, [1600.0, 3200.0]);
        assert_eq!(sums[1].end, 2.0);
    }

    #[test]
    fn a_tokens_secret_is_redacted_wherever_it_stands() {
        let url = "linerate://h:5201/?session=ab12&token=0123456789abcdef0123456789abcdef";
        assert_eq!(
            redact(url),
            "linerate://h:5201/?session=ab12&token=REDACTED"
        );
        assert_eq!(redact("--verify"), "--verify");
        assert_eq!(
            redact("token=ab&x token=cd"),
            "token=REDACTED&x token=REDACTED"
        );
        // Redacting twice changes nothing (a report of a stored result).
        let once = redact(url);
        assert_eq!(redact(&once), once);
        assert_eq!(redact("token=&token=ab"), "token=&token=REDACTED");
        assert_eq!(redact("token=xxxxxxxx&fp=1"), "token=REDACTED&fp=1");
    }
}
