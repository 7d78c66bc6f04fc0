//! What each job asks of the engine, one type per job, each with `Default`.
//! The CLI maps its flags into these once; studies and the demo build them
//! directly. A `None` is decided at run time from both hosts' facts.

use std::net::IpAddr;

pub use crate::address::Stripe;

/// The socket options every session kind applies to its data connections:
/// the wire's own struct, so the spec and what travels are one.
/// The wire's own parameters and bounds, named here so that a caller
/// builds every spec from this one module.
pub use linerate_wire::{
    Action, BenchOptions, Change, Direction, Existing, MAX_LATENCY_CONNECTIONS, MAX_MESSAGE_LEN,
    MAX_STREAMS, MAX_WINDOW, Pattern, PayloadBytes, SessionId, SocketParams, WireError,
};

/// A UDP bench's datagram size unless one is asked for (`-l`): one that
/// fits a 1500-byte MTU with its IPv4 and UDP headers.
pub const DEFAULT_DATAGRAM_LEN: u32 = 1472;

/// A memory-to-memory measurement: the options that travel to the server
/// as they are, what the run decides unless asked, and what only this end
/// uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BenchSpec {
    /// What both ends run as asked: the wire's own struct, sent whole.
    pub options: BenchOptions,
    /// Bytes per write; None: from the CPU plan.
    pub write_len: Option<u32>,
    /// Bytes per read; None: from the CPU plan.
    pub read_len: Option<u32>,
    /// SO_RCVLOWAT at the receivers; None: from the CPU plan and the RTT.
    pub rcvlowat: Option<u32>,
    /// Whether receivers poll before they block.
    pub rx_poll: RxPoll,
    /// Where stream threads run.
    pub affinity: Affinity,
    /// Datagrams instead of TCP (`bench --udp`); `write_len` is their size.
    pub udp: Option<UdpSpec>,
    /// Local address to connect from.
    pub bind: Option<IpAddr>,
    /// Paths the data connections spread over, round-robin (`--stripe`);
    /// empty: every one to the server's address.
    pub stripes: Vec<Stripe>,
    /// Count what each link of a bond or multipath route to the server
    /// carries (a route lookup in a child process before the streams open):
    /// for a person's run, not for each of a many-host run's flows.
    pub count_members: bool,
    /// Leave out the one-way delay probe (a thread at each end and a
    /// datagram each way every few tens of ms): for each of a many-host
    /// run's flows, where a thousand probes would load the cores whose
    /// delays they time, not for a person's run.
    pub without_delay_probe: bool,
    /// Encrypt every connection (`bench --encrypt`), to measure what TLS
    /// costs; None runs in the clear.
    pub tls: Option<ClientTls>,
    /// Open every connection now, but start the data at this time: many
    /// flows of a many-host run start together, none before all are set up.
    pub start_at: Option<std::time::SystemTime>,
    /// What is known of the path (`--capacity`, a lab's `--rate` and
    /// `--rtt`): the verdict gives the run's share of the capacity and
    /// calls a run that saw shorter round trips invalid.
    pub path: linerate_verdict::KnownPath,
}

/// A UDP bench's rate and offloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpSpec {
    /// Payload rate of each direction, all streams together, bits/s.
    pub rate_bps: u64,
    /// Many datagrams a send (UDP_SEGMENT).
    pub gso: bool,
    /// Coalesced datagrams a receive (UDP_GRO).
    pub gro: bool,
}

/// The TLS a client speaks; two are equal when they are the same
/// configuration.
#[derive(Debug, Clone)]
pub struct ClientTls(pub std::sync::Arc<linerate_secure::ClientConfig>);

impl PartialEq for ClientTls {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A file transfer (or a memory-to-memory one with `--from-memory`).
#[derive(Debug, Clone, PartialEq)]
pub struct TransferSpec {
    /// Data connections.
    pub streams: u16,
    /// Files are cut into blocks of this size.
    pub block_len: u32,
    /// What becomes of a file that exists at the destination and differs.
    pub existing: Existing,
    /// Remove what the destination's copies of the source directories hold
    /// and the source lacks (`--delete`).
    pub delete: bool,
    /// Replace a non-empty directory where a file or link comes (`--force`).
    pub force: bool,
    /// Change nothing; list what would change (`--dry-run`).
    pub dry_run: bool,
    /// List every change (`--itemize`).
    pub itemize: bool,
    /// Owners by number, not name (`--numeric-ids`).
    pub numeric_ids: bool,
    /// Receive, check and discard: nothing is written.
    pub skip_writes: bool,
    /// Compare whole-file digests of both ends at the end.
    pub verify: bool,
    /// Whole-transfer cap, bytes per second, split over the streams.
    pub rate: Option<u64>,
    /// Between interval samples; 0 for none.
    pub interval_ms: u64,
    /// Receivers poll before blocking. Auto does not: unlike a bench
    /// receiver, a writing receiver needs the CPU time a poll would take
    /// from the sender (docs/defaults.md).
    pub rx_poll: RxPoll,
    /// Page-cache policy of both ends.
    pub cache: CachePolicy,
    /// Carry a checksum after every block (off: TCP's checksum alone).
    pub checksum: bool,
    /// The receiver syncs what it writes before it journals or renames
    /// (off: `--no-fsync`, for scratch data).
    pub fsync: bool,
    /// `pacing_rate` is set from `rate`.
    pub socket: SocketParams,
    /// Local address to connect from.
    pub bind: Option<IpAddr>,
    /// Paths the data connections spread over, round-robin (`--stripe`);
    /// empty: every one to the receiver's address.
    pub stripes: Vec<Stripe>,
    /// Count what each link of a bond or multipath route to the receiver
    /// carries (a route lookup in a child process before the streams open).
    pub count_members: bool,
}

impl Default for TransferSpec {
    fn default() -> Self {
        TransferSpec {
            streams: 2,
            block_len: 8 << 20,
            existing: Existing::Replace,
            delete: false,
            force: false,
            dry_run: false,
            itemize: false,
            numeric_ids: false,
            skip_writes: false,
            verify: false,
            rate: None,
            interval_ms: 1000,
            rx_poll: RxPoll::Auto,
            cache: CachePolicy::default(),
            checksum: true,
            fsync: true,
            socket: SocketParams::default(),
            bind: None,
            stripes: Vec::new(),
            count_members: false,
        }
    }
}

/// Whether receivers poll before they block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxPoll {
    /// Poll as [`crate::bench::plan_cpus`] decides (loopback, up to four stream threads per core).
    #[default]
    Auto,
    /// Always poll.
    On,
    /// Never poll.
    Off,
}

/// Where stream threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Affinity {
    /// Pinned only where measured to pay (see [`crate::bench::plan_cpus`]).
    #[default]
    Auto,
    /// Never pinned.
    Off,
    /// One core per thread: client stream i on CPU 2i, server on 2i+1.
    Spread,
    /// Both ends of stream i on CPU i (one host only).
    Pairs,
}

/// How one end of a transfer uses the page cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CachePolicy {
    /// Whole pages bypass the cache (O_DIRECT) where the file system allows it.
    pub direct: bool,
    /// Blocks leave the cache once done with (written ones flushed first).
    pub evict: bool,
}

/// A latency measurement: a ping-pong (or a window of requests, for
/// bandwidth against message size) at each size in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySpec {
    /// Data connections, each its own ping-pong.
    pub connections: u16,
    /// Ping-pong or a window of requests.
    pub pattern: linerate_wire::Pattern,
    /// Request sizes, measured in this order.
    pub sizes: Vec<u32>,
    /// Reply size; None: the request's size (a ping-pong) or 1 byte (a window).
    pub reply_len: Option<u32>,
    /// Requests per round of a window; None: 64 (osu_bw's), more for small
    /// messages, so that a window holds 64 KiB (docs/defaults.md#window).
    pub window: Option<u32>,
    /// Most measured rounds of each size per connection; None: until `step_ms`.
    pub iterations: Option<u64>,
    /// Rounds left out before measuring each size; None: osu's 1,000 (100
    /// above 8 KiB; 10 / 2 for a window), within a tenth of `step_ms`.
    pub warmup: Option<u64>,
    /// Most time each size takes.
    pub step_ms: u64,
    /// Spin on non-blocking receives at both ends instead of sleeping.
    pub busy_poll: BusyPoll,
    /// How long to wait for any reply before the run fails.
    pub timeout_ms: u64,
    /// Bulk streams to the same server beside the ping-pong: each size is
    /// measured idle, then loaded.
    pub load: Option<u16>,
    /// The ping-pong over datagrams (each request and reply one datagram of
    /// 12 B to 65,507 B) instead of TCP.
    pub udp: bool,
    /// Socket options of the data connections.
    pub socket: SocketParams,
    /// Local address to connect from.
    pub bind: Option<IpAddr>,
}

impl Default for LatencySpec {
    fn default() -> Self {
        LatencySpec {
            connections: 1,
            pattern: linerate_wire::Pattern::PingPong,
            sizes: vec![1],
            reply_len: None,
            window: None,
            iterations: None,
            warmup: None,
            step_ms: 5000,
            busy_poll: BusyPoll::Auto,
            timeout_ms: 5000,
            udp: false,
            load: None,
            socket: SocketParams::default(),
            bind: None,
        }
    }
}

/// Whether a latency run's receivers spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BusyPoll {
    /// Spin where every spinning thread has a core of its own and no bulk
    /// streams need the cores (docs/defaults.md#busy-poll).
    #[default]
    Auto,
    /// Always spin.
    On,
    /// Never spin.
    Off,
}
