//! The rules, in the order they are tried: each looks at the features and
//! either names a finding or passes. The first finding is the verdict.

use linerate_result::{Limit, Side};

use super::faults;
use super::features::Features;
pub use super::finding::{ALWAYS_SENDING, AT_CAPACITY, CpuCause, FLAT_VARIATION, Finding};
use super::{LIMITED_SHARE, LOSSY_SHARE, THREAD_SATURATED};

/// A socket buffer at least this large is not "tiny": a full window with such
/// a buffer on a saturated host means the reader was starved of CPU.
const ROOMY_BUFFER: u32 = 256 << 10;

/// Share of the stream threads' time spent on a disk above which that disk
/// is named the limit.
pub const DISK_SHARE: f64 = 0.5;

/// A reader that stalled with its window open (the receiving side neither
/// read nor wanted CPU) and spent this share of its time writing the
/// destination stalled on those writes.
pub const STALLED_ON_WRITES: f64 = 0.25;

impl Finding {
    /// The limit a result records for this finding.
    pub fn limit(&self) -> Limit {
        match self {
            Finding::NoTcpInfo | Finding::Unidentified | Finding::NothingMoved => Limit::Unknown,
            Finding::MtuBlackHole | Finding::MtuProbed => Limit::PathMtu,
            Finding::Policer { .. } => Limit::Policer,
            Finding::Quota { .. } => Limit::CpuQuota,
            Finding::ForwardingHop { .. } => Limit::ForwardingHop,
            Finding::ReturnPath => Limit::ReturnPath,
            Finding::Invalid => Limit::Invalid,
            Finding::Paced { .. } | Finding::Application | Finding::ReaderStalled => {
                Limit::Application
            }
            Finding::ReceiverWindow => Limit::ReceiverWindow,
            Finding::SendBuffer => Limit::SendBuffer,
            Finding::PathFull => Limit::PathFull,
            Finding::Network | Finding::PathShort => Limit::Network,
            Finding::Cpu { .. } => Limit::Cpu,
            Finding::Mixed { .. } => Limit::Mixed,
            Finding::Disk {
                side: Side::Sender, ..
            } => Limit::SourceDisk,
            Finding::Disk { .. } => Limit::DestinationDisk,
        }
    }

    /// The side this finding sits at, where it sits at one.
    pub fn side(&self) -> Option<Side> {
        match self {
            Finding::Paced { .. } | Finding::SendBuffer => Some(Side::Sender),
            Finding::ReceiverWindow | Finding::ReaderStalled => Some(Side::Receiver),
            Finding::Cpu { side, .. } | Finding::Disk { side, .. } | Finding::Quota { side } => {
                Some(*side)
            }
            Finding::NoTcpInfo
            | Finding::Unidentified
            | Finding::NothingMoved
            | Finding::MtuBlackHole
            | Finding::MtuProbed
            | Finding::Policer { .. }
            | Finding::ForwardingHop { .. }
            | Finding::ReturnPath
            | Finding::Invalid
            | Finding::PathFull
            | Finding::PathShort
            | Finding::Network
            | Finding::Application
            | Finding::Mixed { .. } => None,
        }
    }
}

/// The first finding of the bench rules; `pacing_bps` is the user's cap
/// per stream, if any.
pub fn decide(f: &Features, pacing_bps: Option<f64>) -> Finding {
    let rules: [&dyn Fn() -> Option<Finding>; 17] = [
        &|| no_tcp_info(f),
        &|| faults::nothing_moved(f),
        &|| invalid(f),
        &|| paced(f, pacing_bps),
        &|| full_at_capacity(f),
        &|| faults::quota(f),
        &|| receive_window(f),
        &|| send_buffer(f),
        &|| faults::forwarding_hop(f, ends_saturated(f)),
        &|| faults::policer(f, cpu_bound(f)),
        &|| faults::return_path(f),
        &|| path_full(f),
        &|| network(f),
        &|| cpu(f),
        &|| path_short(f),
        &|| paused_for_a_core(f),
        &|| paused(f),
    ];
    let found = rules
        .iter()
        .find_map(|rule| rule())
        .unwrap_or(Finding::Unidentified);
    let found = mixed(f, found).unwrap_or(found);
    faults::mtu_probed(f, found).unwrap_or(found)
}

/// Senders that paused (data waiting under [`ALWAYS_SENDING`] of the run)
/// with nothing else holding them: the application's own pace. Senders
/// that always had data are never the application's: when no rule's
/// evidence is there, the verdict says so (docs/verdict.md#unknown).
fn paused(f: &Features) -> Option<Finding> {
    (f.busy_share < ALWAYS_SENDING).then_some(Finding::Application)
}

/// A limit held the senders this share of their busy time or more to count
/// as one of two in a mixed verdict.
pub const MIXED_SHARE: f64 = 0.3;

/// A window, a buffer or the network found first (or nothing, when none
/// held the senders half the time), when another of them held the senders
/// a good part of the time too: the kernel splits the senders' busy time
/// between the receive window, the send buffer and the congestion window,
/// and after loss the congestion window's share is the network's (at the
/// retransmit share the network rule goes by). But a receive window that
/// by itself explains the rate is the limit, whatever loss did besides:
/// by Little's law, a rate of at least 90 % of window / RTT means the
/// window was nearly always full. So is a tiny buffer, whatever share the
/// kernel gave the send buffer while the senders waited for a core
/// ([`Features::tiny_window`]).
fn mixed(f: &Features, found: Finding) -> Option<Finding> {
    if !matches!(
        found,
        Finding::ReceiverWindow
            | Finding::SendBuffer
            | Finding::Network
            | Finding::Application
            | Finding::Unidentified
    ) {
        return None;
    }
    let window_explains = f.peer_window > 0.0
        && f.rtt_us > 0.0
        && f.per_stream_bps >= 0.9 * f.peer_window * 8.0 / (f.rtt_us / 1e6);
    if (window_explains || f.tiny_window()) && found != Finding::SendBuffer {
        return Some(Finding::ReceiverWindow);
    }
    let network_share = if f.retrans_share >= LOSSY_SHARE {
        (1.0 - f.rwnd_share - f.sndbuf_share).max(0.0)
    } else {
        0.0
    };
    let mut shares = [
        (Limit::ReceiverWindow, f.rwnd_share),
        (Limit::SendBuffer, f.sndbuf_share),
        (Limit::Network, network_share),
    ];
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let [first, second, _] = shares;
    (second.1 >= MIXED_SHARE).then_some(Finding::Mixed { first, second })
}

fn no_tcp_info(f: &Features) -> Option<Finding> {
    (f.senders == 0 || f.busy_us == 0.0).then_some(Finding::NoTcpInfo)
}

fn paced(f: &Features, cap_bps: Option<f64>) -> Option<Finding> {
    let cap_bps = cap_bps?;
    (f.steady_per_stream_bps() >= 0.9 * cap_bps).then_some(Finding::Paced { cap_bps })
}

/// The kernel counts window-limited time only while data waits to be
/// sent; a window well under the congestion window, with idle writers, is
/// the same limit, unless the send buffer is smaller still: then the
/// writers could never fill the window. Writers waiting for a core are not idle: what they
/// did not send, the CPU held back, whatever the window. A roomy buffer
/// that fills because its reader never blocks (running or waiting for a
/// core) is the reader's limit: a larger window would only fill too. A
/// tiny buffer makes its reader busy by itself.
fn receive_window(f: &Features) -> Option<Finding> {
    let window_below_cwnd = f.peer_window > 0.0
        && f.peer_window < 0.9 * f.pipe_bytes()
        && f64::from(f.min_sndbuf) >= f.peer_window
        && f.occupied(Side::Sender) < 0.5;
    if f.tiny_window() {
        return Some(Finding::ReceiverWindow);
    }
    if f.rwnd_share < LIMITED_SHARE && !window_below_cwnd {
        return None;
    }
    let roomy = f.min_rcvbuf >= ROOMY_BUFFER;
    let reader_behind = f.receiver_occupied >= THREAD_SATURATED && roomy;
    Some(
        if f.receiver_util >= THREAD_SATURATED
            || f.receiver_starved()
            || reader_behind
            || (f.cpu_scarce() && roomy)
        {
            Finding::Cpu {
                side: Side::Receiver,
                cause: CpuCause::ReaderBehind,
            }
        } else if roomy && f.rwnd_share >= LIMITED_SHARE && f.window_carries(ROOMY_FOR_THE_PATH) {
            Finding::ReaderStalled
        } else {
            Finding::ReceiverWindow
        },
    )
}

/// A window that carries this many times the measured rate at the path's
/// lowest round trip did not hold the rate by its size.
pub const ROOMY_FOR_THE_PATH: f64 = 4.0;

/// Kernels count send-buffer-limited time only on some paths; a buffer
/// smaller than the congestion window, with the writer mostly blocked, is
/// the same limit seen from the application, unless a receiver short of
/// CPU is what kept the writer waiting. A buffer that carries several
/// times the rate at the path's lowest round trip did not hold the rate by
/// its size: it filled behind a queue further on, which the later rules
/// name (docs/verdict.md#send-buffer).
fn send_buffer(f: &Features) -> Option<Finding> {
    let receiver_behind = f.receiver_util >= THREAD_SATURATED || f.receiver_starved();
    let buffer_below_cwnd =
        f64::from(f.min_sndbuf) < f.pipe_bytes() && f.sender_util < 0.5 && !receiver_behind;
    let limited = f.sndbuf_share >= LIMITED_SHARE || (buffer_below_cwnd && !f.sender_starved());
    if !limited {
        return None;
    }
    Some(
        if f.sender_util >= THREAD_SATURATED
            || f.sender_starved()
            || (f.cpu_scarce() && f.min_sndbuf >= ROOMY_BUFFER)
        {
            Finding::Cpu {
                side: f.busier_side(),
                cause: CpuCause::WriterBehind,
            }
        } else if f.min_sndbuf >= ROOMY_BUFFER && f.send_buffer_carries(ROOMY_FOR_THE_PATH) {
            return None;
        } else {
            Finding::SendBuffer
        },
    )
}

/// An end's own stream thread ran a core full: the ends, not a hop
/// between them, were what could not go faster.
fn ends_saturated(f: &Features) -> bool {
    f.sender_util >= THREAD_SATURATED || f.receiver_util >= THREAD_SATURATED
}

fn cpu_bound(f: &Features) -> bool {
    f.sender_util >= THREAD_SATURATED
        || f.receiver_util >= THREAD_SATURATED
        || f.sender_starved()
        || f.receiver_starved()
        || f.cpu_scarce()
}

/// Senders whose least round trip is below this share of the least the
/// path can carry measured something other than the path.
pub const BELOW_PATH_RTT: f64 = 0.9;

/// A run is invalid when the senders' least round trip is well below the
/// least the path can carry: packets (or their ACKs) skipped the path's
/// delay, as an emulator's reordering that sends a packet past its whole
/// delay line does, and bbr, which paces to its least round trip, then
/// measures the emulator, not the path (it throttled itself to nothing in
/// 4 s at 44 ms, docs/defaults.md#reorder-model).
fn invalid(f: &Features) -> Option<Finding> {
    let floor = f.path_min_rtt_us?;
    (f.min_rtt_us > 0.0 && floor > 0.0 && f.min_rtt_us < BELOW_PATH_RTT * floor)
        .then_some(Finding::Invalid)
}

/// The path is full when the senders always had data waiting, the rate
/// was flat after the ramp, no window or buffer held them (the rules
/// before this one), and either the rate reached the path's known
/// capacity, or a standing queue built (the round trip sat above its
/// minimum) with no CPU short. At the capacity a busy CPU limited nothing:
/// receivers that poll keep their cores busy at any rate.
fn path_full(f: &Features) -> Option<Finding> {
    let queue = f.standing_queue() && !cpu_bound(f) && !lossy_below_capacity(f);
    (steady(f) && (at_capacity(f) || queue)).then_some(Finding::PathFull)
}

/// Loss after the ramp, at well under a known capacity: a queue that
/// stood then is the senders' retransmissions waiting, not a full path
/// (a lab at 200 Mbit/s with 1 % loss carried 39 Mbit/s with its round
/// trip up, once named full; docs/verdict.md#path-full).
fn lossy_below_capacity(f: &Features) -> bool {
    f.retrans_share >= LOSSY_SHARE
        && f.capacity
            .is_some_and(|c| f.steady_bps < AT_CAPACITY * c.bits_per_second)
}

/// Senders that always had data, held by no window, buffer, loss or CPU
/// (the rules before this one), at under [`AT_CAPACITY`] of a known
/// capacity: the path itself delivered less than its rate (a forwarding
/// hop short of CPU: the lab's emulator at 10 Gbit/s on a busy 2-core host
/// carried 82 %, which read as "application" before).
fn path_short(f: &Features) -> Option<Finding> {
    let below = f
        .capacity
        .is_some_and(|c| f.steady_bps < AT_CAPACITY * c.bits_per_second);
    (f.busy_share >= ALWAYS_SENDING && below).then_some(Finding::PathShort)
}

/// Senders that paused no longer than their threads waited for a core:
/// the scheduler, not the application, held back what they wrote (a
/// 10 Gbit/s lab on a host busy twice over: data waiting 87 % of the run,
/// the sending thread waiting for a core 22 % of it, read as "application"
/// before).
fn paused_for_a_core(f: &Features) -> Option<Finding> {
    let paused = 1.0 - f.busy_share;
    (f.busy_share < ALWAYS_SENDING && f.sender_wait >= paused).then_some(Finding::Cpu {
        side: Side::Sender,
        cause: CpuCause::Starved,
    })
}

/// A rate at the path's known capacity is a full path before any
/// window, buffer or CPU share is weighed: whatever else held the senders
/// part of the time, the path had no room left (a 10 Gbit/s lab at 91 % on
/// a busy host was once called CPU, its send buffer full 57 % of the time).
/// Senders that paused no longer than their threads waited for a core had
/// data waiting all the same (another run at 91 %: data waiting 89 % of
/// it, the sending thread waiting for a core 15 %, was called CPU).
/// The rate need not be flat: at nine tenths of the capacity on average
/// the path had room a tenth of the run at most, however the intervals
/// swung (runs at 91 % and 96 % beside busy loops, their rates varying
/// 22 % and 14 % as the scheduler held the receiver, were called CPU).
fn full_at_capacity(f: &Features) -> Option<Finding> {
    let sending = f.busy_share >= ALWAYS_SENDING || 1.0 - f.busy_share <= f.sender_wait;
    (sending && at_capacity(f)).then_some(Finding::PathFull)
}

/// The senders always had data waiting and the rate was flat after the ramp.
fn steady(f: &Features) -> bool {
    f.busy_share >= ALWAYS_SENDING && f.rate_variation.is_none_or(|v| v <= FLAT_VARIATION)
}

fn at_capacity(f: &Features) -> bool {
    f.capacity
        .is_some_and(|c| f.steady_bps >= AT_CAPACITY * c.bits_per_second)
}

/// Loss after the ramp: retransmits while slow start overshot a queue in
/// the first interval say nothing of the path.
fn network(f: &Features) -> Option<Finding> {
    (f.retrans_share >= LOSSY_SHARE && !cpu_bound(f)).then_some(Finding::Network)
}

fn cpu(f: &Features) -> Option<Finding> {
    if !cpu_bound(f) {
        return None;
    }
    let cause = if f.sender_util.max(f.receiver_util) >= THREAD_SATURATED {
        CpuCause::ThreadsSaturated
    } else if f.sender_starved() || f.receiver_starved() {
        CpuCause::Starved
    } else {
        CpuCause::HostBusy
    };
    Some(Finding::Cpu {
        side: f.busier_side(),
        cause,
    })
}

/// A transfer's rule on top of the bench rules' `found`: a disk, when the
/// stream threads spent most of their time reading the source (`read`) or
/// writing the destination (`write`), or half or more of what kept the
/// threads that limited the run busy. Threads that never block are the
/// limit whatever they do; when it was mostly file I/O, the file system is
/// what would have to be faster.
pub fn disk(f: &Features, found: Finding, disks: &super::DiskTime) -> Finding {
    // The user's own cap set the pace: the disks only kept up with it.
    if matches!(
        found,
        Finding::Paced { .. }
            | Finding::MtuBlackHole
            | Finding::NothingMoved
            | Finding::Quota { .. }
    ) {
        return found;
    }
    let (read, write) = (disks.read_share, disks.write_share);
    // The floor keeps a side the rules found hardly busy from handing the
    // limit to a disk it hardly used.
    let mostly = |share: f64, side: Side| share >= DISK_SHARE * f.occupied(side).max(0.5);
    let cpu_on = |side| matches!(found, Finding::Cpu { side: s, .. } if s == side);
    let (side, share, busy) = if write >= DISK_SHARE && write >= read {
        (Side::Receiver, write, None)
    } else if read >= DISK_SHARE {
        (Side::Sender, read, None)
    } else if found == Finding::ReaderStalled && write >= STALLED_ON_WRITES {
        (Side::Receiver, write, None)
    } else if cpu_on(Side::Receiver) && mostly(write, Side::Receiver) {
        (Side::Receiver, write, Some(f.occupied(Side::Receiver)))
    } else if cpu_on(Side::Sender) && mostly(read, Side::Sender) {
        (Side::Sender, read, Some(f.occupied(Side::Sender)))
    } else {
        return found;
    };
    let in_memory = side == Side::Receiver && disks.dest_in_memory;
    Finding::Disk {
        side,
        share,
        busy,
        in_memory,
        buffered: disks
            .buffered
            .filter(|_| side == Side::Receiver && !in_memory),
    }
}
