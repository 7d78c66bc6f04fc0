//! What a rule can find, and the thresholds the rules of more than one
//! module share: the vocabulary of the rules, apart from the rules.

use linerate_result::{Limit, Side};

/// Senders with data waiting this share of the run or more never paused:
/// only the path or an end can have set their rate.
pub const ALWAYS_SENDING: f64 = 0.9;
/// A summed rate that varies less than this (coefficient of variation,
/// interval to interval after the ramp) is flat.
pub const FLAT_VARIATION: f64 = 0.1;
/// A rate this share of the known capacity or more has filled the path.
pub const AT_CAPACITY: f64 = 0.9;

/// Why a run's CPU was its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuCause {
    /// The receive window was full only because the reader could not keep up.
    ReaderBehind,
    /// The send buffer was the limit only because the CPUs were saturated.
    WriterBehind,
    /// The threads of one side saturated their cores.
    ThreadsSaturated,
    /// The stream threads waited for a CPU.
    Starved,
    /// Every core was busy.
    HostBusy,
}

/// What a rule found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finding {
    /// No TCP_INFO at the sending end.
    NoTcpInfo,
    /// The senders saw round trips shorter than the path can carry.
    Invalid,
    /// The user's pacing cap set the rate.
    Paced {
        /// The cap, bits/s.
        cap_bps: f64,
    },
    /// The receivers' advertised window held the senders.
    ReceiverWindow,
    /// The senders' send buffer held them.
    SendBuffer,
    /// The senders always had data and nothing at the ends held them, yet
    /// the path carried well under its known capacity: something on it
    /// delivered less than its rate.
    PathShort,
    /// The path carried all it could: a steady rate, a standing queue or
    /// the rate of its known capacity, and nothing at either end holding
    /// the senders back.
    PathFull,
    /// The network lost or queued what was sent.
    Network,
    /// A side ran out of CPU.
    Cpu {
        /// Which side.
        side: Side,
        /// What took the CPU.
        cause: CpuCause,
    },
    /// The application did not keep the senders busy.
    Application,
    /// The senders always had data and nothing at either end or on the
    /// path held them by any rule's evidence: no limit is named.
    Unidentified,
    /// Nothing arrived, and no rule's evidence says why.
    NothingMoved,
    /// Nothing arrived: full-size segments were lost while small ones
    /// passed, the congestion window held at a segment.
    MtuBlackHole,
    /// A policer dropped what exceeded its rate.
    Policer {
        /// The rate it let through, bits/s.
        rate_bps: f64,
    },
    /// Segments lowered under the path's MTU by TCP's MTU probing, and
    /// the retransmits of its probes of larger ones: a black hole worked
    /// around, at a cost.
    MtuProbed,
    /// A roomy receive window, far more than the path's round trip needs
    /// for the rate, closed most of the time with the receiving threads
    /// neither busy nor waiting for a core: the receiving side did not
    /// read, blocked elsewhere (a disk, a lock, a pause).
    ReaderStalled,
    /// The process forwarding the packets between the ends (a lab's
    /// emulator) ran or waited for a core all the run, below the path's
    /// known capacity, with the ends' own threads not short of CPU.
    ForwardingHop {
        /// What its threads used over the run.
        hop: linerate_probe::cpu::ThreadsUse,
    },
    /// The ACKs' way back queued where the data's way did not, the
    /// senders always sending: the return path held their ACK clock.
    ReturnPath,
    /// A cgroup's CPU quota throttled one end.
    Quota {
        /// The end under it.
        side: Side,
    },
    /// Two TCP limits, each with its share of the senders' busy time, the
    /// larger first; neither alone explains the rate.
    Mixed {
        /// The larger limit and its share.
        first: (Limit, f64),
        /// The smaller limit and its share.
        second: (Limit, f64),
    },
    /// The stream threads spent `share` of their time on a disk; `busy`
    /// when that was half or more of what kept the limiting side busy.
    Disk {
        /// Which side's disk.
        side: Side,
        /// Share of the stream threads' time on the disk.
        share: f64,
        /// Share of the limiting side's busy time, where the disk was half or more of it.
        busy: Option<f64>,
        /// The file system is in memory (tmpfs): no disk at all.
        in_memory: bool,
        /// The receiver's writes went through the page cache.
        buffered: Option<super::Buffered>,
    },
}
