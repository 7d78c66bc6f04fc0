//! How a session's stream threads use the CPUs of both hosts: polling
//! readers, pinning, I/O sizes and SO_RCVLOWAT, decided by the client from
//! both hosts' facts (measurements behind each rule: docs/defaults.md).

use linerate_result::HostFacts;

use crate::measuring_end::{Pin, RxPoll};

/// Write size when every stream thread has a core: large writes amortize the
/// syscall, and the caches are not shared (measured, docs/defaults.md).
pub const WRITE_LEN_OWN_CORE: u32 = 1 << 20;
/// Write size when threads share cores: the copy's source and destination
/// then stay in the shared caches.
pub const WRITE_LEN_SHARED_CORES: u32 = 128 << 10;
/// Read size for a receiver that blocks on a core of its own: each call takes
/// up to a megabyte of what has queued, so fewer calls and wakeups per byte
/// (measured between namespaces, docs/defaults.md). A polling receiver keeps
/// [`READ_LEN`]: longer reads hold the socket lock while the sender waits.
pub const READ_LEN_BLOCKING_OWN_CORE: u32 = 1 << 20;
/// Read size everywhere else.
pub const READ_LEN: u32 = 128 << 10;

/// SO_RCVLOWAT for readers between namespaces of one host: a reader that
/// blocks is woken once per 128 KiB instead of per arriving packet. Measured
/// faster over veth at 1-8 streams, polling readers included, and slower on
/// loopback (docs/defaults.md).
pub const RCVLOWAT_VETH: u32 = 128 << 10;

/// How a session's threads use the CPUs, decided by the client from both
/// hosts' facts (measurements behind each rule: docs/defaults.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPlan {
    /// Every stream thread of both ends can have a core of its own.
    pub own_cores: bool,
    /// Receivers poll before blocking.
    pub rx_poll: bool,
    /// Where stream threads are pinned.
    pub pin: Pin,
    /// SO_RCVLOWAT for the readers, where measured to pay.
    pub rcvlowat: Option<u32>,
}

/// The longest round trip at which the automatic SO_RCVLOWAT applies: it was
/// measured only across veth (well under a millisecond). Through the lab
/// emulator at 44 ms, 2 streams, 128 KiB measured slower than none in 14 of
/// 14 alternating pairs (1-9 %), and 5 of 11 runs of 6 s collapsed to 29-435
/// Mbit/s, the receive buffer stuck near 640 KiB.
pub const RCVLOWAT_MAX_RTT_US: u32 = 1_000;

/// `lowat` on a path whose round trip (from the control connection) is short
/// enough for it; none otherwise.
pub fn short_path_only(lowat: Option<u32>, rtt_us: u32) -> Option<u32> {
    lowat.filter(|_| rtt_us < RCVLOWAT_MAX_RTT_US)
}

/// Polling moves the receive work off the sender's path: a receiver that is
/// already in recv() when data lands costs the sender no wakeup. Measured on
/// loopback (docs/defaults.md), by stream threads per core on one host:
/// - up to 1: poll, each thread on its own core (the sender's wakeups would
///   otherwise pull its receiver onto the sender's core);
/// - up to 2: poll, unpinned (every pinned layout measured slower);
/// - up to 4: poll, both ends of a stream on one core, so the receiver
///   copies from a cache the sender has just filled;
/// - beyond: block, unpinned; polling readers then only steal the senders' time.
///
/// A reader that finds nothing yields its core before it tries again (unless
/// pinned to one of its own), so a sender sharing that core runs at once
/// instead of after the reader's slice.
///
/// Between namespaces of one host (veth, not loopback) a reader with a core of
/// its own measured slower polling, so there it polls, unpinned, only while
/// threads share cores (up to four per core). Under a pacing cap a reader
/// would only spin, so it never polls. Readers there, polling or not, are
/// woken only once [`RCVLOWAT_VETH`] bytes are queued, on a short path
/// ([`short_path_only`]).
pub fn plan_cpus(
    mode: RxPoll,
    connections: u16,
    loopback: bool,
    paced: bool,
    client: &HostFacts,
    server: &HostFacts,
) -> CpuPlan {
    let same_host = crate::spare_cores::same_host(client, server);
    let (threads, cores) = if same_host {
        (2 * u32::from(connections), client.cpus)
    } else {
        (u32::from(connections), client.cpus.min(server.cpus))
    };
    let cores = cores.max(1);
    let own_cores = threads <= cores;
    let auto_poll = !paced && threads <= 4 * cores && (loopback || (same_host && !own_cores));
    let rx_poll = match mode {
        RxPoll::On => true,
        RxPoll::Off => false,
        RxPoll::Auto => auto_poll,
    };
    let pin = if !(rx_poll && same_host && auto_poll && loopback) {
        Pin::None
    } else if own_cores {
        Pin::Spread
    } else if threads > 2 * cores {
        Pin::Pairs
    } else {
        Pin::None
    };
    let rcvlowat = (same_host && !loopback).then_some(RCVLOWAT_VETH);
    CpuPlan {
        own_cores,
        rx_poll,
        pin,
        rcvlowat,
    }
}

impl CpuPlan {
    /// Write and read sizes for this regime.
    pub fn io_lens(&self) -> (u32, u32) {
        match (self.own_cores, self.rx_poll) {
            (true, false) => (WRITE_LEN_OWN_CORE, READ_LEN_BLOCKING_OWN_CORE),
            (true, true) => (WRITE_LEN_OWN_CORE, READ_LEN),
            (false, _) => (WRITE_LEN_SHARED_CORES, READ_LEN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measuring_end::{Pin, RxPoll};

    fn host(boot: &str, cpus: u32) -> HostFacts {
        HostFacts {
            boot_id: boot.into(),
            cpus,
            ..Default::default()
        }
    }

    #[test]
    fn the_automatic_rcvlowat_keeps_to_short_paths() {
        let lowat = Some(RCVLOWAT_VETH);
        assert_eq!(short_path_only(lowat, 150), lowat);
        assert_eq!(short_path_only(lowat, RCVLOWAT_MAX_RTT_US - 1), lowat);
        assert_eq!(short_path_only(lowat, RCVLOWAT_MAX_RTT_US), None);
        assert_eq!(short_path_only(lowat, 44_000), None);
        assert_eq!(short_path_only(lowat, u32::MAX), None, "RTT unknown");
        assert_eq!(short_path_only(None, 150), None);
    }

    #[test]
    fn one_stream_on_two_cores_of_one_host_polls_on_loopback_only() {
        let (c, s) = (host("b1", 2), host("b1", 2));
        let lo = plan_cpus(RxPoll::Auto, 1, true, false, &c, &s);
        assert_eq!(
            lo,
            CpuPlan {
                own_cores: true,
                rx_poll: true,
                pin: Pin::Spread,
                rcvlowat: None,
            }
        );
        let veth = plan_cpus(RxPoll::Auto, 1, false, false, &c, &s);
        assert!(
            !plan_cpus(RxPoll::Auto, 1, true, true, &c, &s).rx_poll,
            "paced readers never poll"
        );
        assert_eq!(
            veth,
            CpuPlan {
                own_cores: true,
                rx_poll: false,
                pin: Pin::None,
                rcvlowat: Some(RCVLOWAT_VETH),
            }
        );
    }

    #[test]
    fn between_namespaces_of_one_host_only_shared_cores_poll_and_nothing_pins() {
        let (c, s) = (host("b1", 2), host("b1", 2));
        let plan = |n| plan_cpus(RxPoll::Auto, n, false, false, &c, &s);
        assert!(!plan(1).rx_poll, "a reader with its own core blocks");
        for n in [2, 3, 4] {
            assert_eq!(
                (plan(n).rx_poll, plan(n).pin),
                (true, Pin::None),
                "{n} streams"
            );
        }
        assert!(!plan(5).rx_poll);
        for n in [1, 4, 5, 8] {
            assert_eq!(plan(n).rcvlowat, Some(RCVLOWAT_VETH), "{n} streams");
        }
        assert!(!plan_cpus(RxPoll::Auto, 2, false, true, &c, &s).rx_poll);
        // Two hosts: no measurement behind polling there.
        assert!(!plan_cpus(RxPoll::Auto, 4, false, false, &host("a", 2), &host("b", 2)).rx_poll);
    }

    #[test]
    fn layout_follows_stream_threads_per_core() {
        let (c, s) = (host("b1", 2), host("b1", 2));
        let plan = |n| plan_cpus(RxPoll::Auto, n, true, false, &c, &s);
        // Two threads per core: poll, unpinned.
        assert_eq!((plan(2).rx_poll, plan(2).pin), (true, Pin::None));
        assert!(!plan(2).own_cores);
        // Up to four: poll, each stream's two ends sharing a core.
        assert_eq!((plan(3).rx_poll, plan(3).pin), (true, Pin::Pairs));
        assert_eq!((plan(4).rx_poll, plan(4).pin), (true, Pin::Pairs));
        // Beyond: block, unpinned.
        assert_eq!((plan(5).rx_poll, plan(5).pin), (false, Pin::None));
        // Loopback readers wake for any data: low water marks measured slower there.
        assert!([1, 2, 4, 8].iter().all(|&n| plan(n).rcvlowat.is_none()));
        assert_eq!((plan(8).rx_poll, plan(8).pin), (false, Pin::None));
        // Forced polling is never pinned where Auto would not poll.
        let forced = plan_cpus(RxPoll::On, 8, true, false, &c, &s);
        assert!(forced.rx_poll && forced.pin == Pin::None);
        // Forced blocking never pins either.
        assert_eq!(
            plan_cpus(RxPoll::Off, 1, true, false, &c, &s).pin,
            Pin::None
        );
    }

    #[test]
    fn only_a_blocking_reader_with_its_own_core_reads_a_megabyte() {
        let (c, s) = (host("b1", 2), host("b1", 2));
        let lens = |poll, n, loopback| plan_cpus(poll, n, loopback, false, &c, &s).io_lens();
        // Between namespaces, one stream: both ends have a core, the reader blocks.
        assert_eq!(lens(RxPoll::Auto, 1, false), (1 << 20, 1 << 20));
        // On loopback the same stream's reader polls: short reads.
        assert_eq!(lens(RxPoll::Auto, 1, true), (1 << 20, 128 << 10));
        // Forced blocking on loopback: a megabyte.
        assert_eq!(lens(RxPoll::Off, 1, true), (1 << 20, 1 << 20));
        // Shared cores, blocking or not: 128 KiB each way.
        assert_eq!(lens(RxPoll::Auto, 8, false), (128 << 10, 128 << 10));
        assert_eq!(lens(RxPoll::Auto, 2, true), (128 << 10, 128 << 10));
    }

    #[test]
    fn separate_hosts_count_their_own_cores() {
        let p = plan_cpus(RxPoll::Auto, 8, false, false, &host("a", 16), &host("b", 8));
        assert!(p.own_cores && !p.rx_poll && p.pin == Pin::None);
        assert_eq!(p.rcvlowat, None, "not measured between hosts");
        assert!(!plan_cpus(RxPoll::Auto, 9, false, false, &host("a", 16), &host("b", 8)).own_cores);
        // An unknown boot id never counts as the same host.
        assert!(plan_cpus(RxPoll::Auto, 2, true, false, &host("", 2), &host("", 2)).own_cores);
    }
}
