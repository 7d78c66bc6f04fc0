//! Budgets that bound what peers can make a server hold: per session (the
//! manifest's entries and the memory they and their bookkeeping take) and
//! server-wide (sessions at once, data connections at once, bytes buffered
//! for control frames not yet complete). Exceeding one ends the session
//! that asked, with an error that names the flag raising it; the defaults
//! and the memory they imply are in README.md ("Limits"). A session turned
//! away before it runs says why in [`Refused`]; the daemon counts its
//! clients by [`SourceGroup`].

use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What one session may make the receiver hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Manifest entries (files, directories, links).
    pub entries: u64,
    /// Bytes of memory for the manifest and the bookkeeping of what arrived.
    pub memory: u64,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            entries: 10_000_000,
            memory: 2 << 30,
        }
    }
}

/// What all sessions of one server may hold together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Sessions past their handshake at once.
    pub sessions: u64,
    /// Data connections of all sessions at once.
    pub streams: u64,
    /// Bytes buffered for control frames whose end has not arrived.
    pub frame_bytes: u64,
    /// Bytes of write and read buffers of every bench and latency session
    /// at once (each session charged its write length and its read length
    /// per receiving stream).
    pub bench_memory: u64,
    /// What each session may hold.
    pub session: SessionLimits,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            sessions: 64,
            streams: 4096,
            frame_bytes: 256 << 20,
            bench_memory: 1 << 30,
            session: SessionLimits::default(),
        }
    }
}

/// A charge that would pass a limit; names the flag that raises it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} would exceed {} (raise it with {flag})", show(*.limit, *.unit_bytes))]
pub struct OverBudget {
    /// What is limited.
    pub what: &'static str,
    /// The flag that sets the limit.
    pub flag: &'static str,
    /// The limit.
    pub limit: u64,
    /// The limit counts bytes (shown as a size).
    pub unit_bytes: bool,
}

fn show(n: u64, bytes: bool) -> String {
    if !bytes {
        return n.to_string();
    }
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n => format!("{n} B"),
    }
}

/// A count that may not pass its limit; shared by whatever charges it.
#[derive(Debug)]
pub struct Budget {
    used: AtomicU64,
    limit: u64,
    what: &'static str,
    flag: &'static str,
    unit_bytes: bool,
}

impl Budget {
    /// A budget of `limit`, named `what` and set by `flag`.
    pub const fn new(limit: u64, what: &'static str, flag: &'static str, unit_bytes: bool) -> Self {
        Budget {
            used: AtomicU64::new(0),
            limit,
            what,
            flag,
            unit_bytes,
        }
    }

    /// Takes `n` from the budget, or nothing if that would pass the limit.
    pub fn charge(&self, n: u64) -> Result<(), OverBudget> {
        let mut used = self.used.load(Relaxed);
        loop {
            let next = used.saturating_add(n);
            if next > self.limit {
                return Err(OverBudget {
                    what: self.what,
                    flag: self.flag,
                    limit: self.limit,
                    unit_bytes: self.unit_bytes,
                });
            }
            match self
                .used
                .compare_exchange_weak(used, next, Relaxed, Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }

    /// Gives `n` back.
    pub fn release(&self, n: u64) {
        let _ = self
            .used
            .fetch_update(Relaxed, Relaxed, |u| Some(u.saturating_sub(n)));
    }

    /// What is charged now.
    pub fn used(&self) -> u64 {
        self.used.load(Relaxed)
    }
}

/// A charge that is given back when dropped.
pub struct Held<'a> {
    budget: &'a Budget,
    n: u64,
}

impl<'a> Held<'a> {
    /// Charges `n` to `budget`, or says which limit it would pass.
    pub fn take(budget: &'a Budget, n: u64) -> Result<Held<'a>, OverBudget> {
        budget.charge(n)?;
        Ok(Held { budget, n })
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.release(self.n);
    }
}

/// Gives memory freed by a large session back to the system: glibc keeps
/// freed small allocations in its arenas, so a server that held a large
/// manifest would otherwise keep its peak resident size for ever.
pub fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it
    // takes no pointer and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_past_the_limit_takes_nothing_and_names_the_flag() {
        let b = Budget::new(100, "the manifest", "--session-memory", true);
        b.charge(60).unwrap();
        let e = b.charge(41).unwrap_err();
        assert_eq!(b.used(), 60);
        assert_eq!(
            e.to_string(),
            "the manifest would exceed 100 B (raise it with --session-memory)"
        );
        {
            let _h = Held::take(&b, 40).unwrap();
            assert_eq!(b.used(), 100);
        }
        assert_eq!(b.used(), 60);
        b.release(1000);
        assert_eq!(b.used(), 0);
    }
}

/// One source as the daemon counts it: an IPv4 address, or an IPv6
/// address cut to its prefix (IPv4-mapped IPv6 addresses count as IPv4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceGroup(IpAddr);

impl SourceGroup {
    /// The group of address `ip`, IPv6 addresses cut to `v6_prefix` bits.
    pub fn of(ip: IpAddr, v6_prefix: u8) -> SourceGroup {
        match ip {
            IpAddr::V4(_) => SourceGroup(ip),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => SourceGroup(IpAddr::V4(v4)),
                None => {
                    let bits = u32::from(v6_prefix.min(128));
                    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                    SourceGroup(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask)))
                }
            },
        }
    }
}

impl std::fmt::Display for SourceGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V6(v6) if v6.segments()[4..] == [0, 0, 0, 0] => write!(f, "{v6}/64"),
            ip => write!(f, "{ip}"),
        }
    }
}

/// Why a server turns a session away before it runs, in the user's words
/// (the text goes back to the client in its refusal).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// One source already holds as many sessions without a key as it may.
    #[error(
        "server busy: {group} already has {open} session(s) without a key open \
         (the server's --max-open-sessions-per-source)"
    )]
    SourceFull {
        /// The source (an address, or an IPv6 prefix).
        group: SourceGroup,
        /// Its sessions open now.
        open: usize,
    },
    /// The server holds as many sessions without a key as it may.
    #[error("server busy: {open} sessions without a key open (the server's --max-open-sessions)")]
    ServerFull {
        /// Sessions open now.
        open: usize,
    },
    /// A many-host run's agent asked for a bench that is not its run's.
    #[error(
        "this is a many-host run's agent: it takes only its run's flows (they show the run's token)"
    )]
    NotOfTheRun,
    /// A run longer than a client without a key may ask.
    #[error(
        "a run of {seconds} s is longer than this server allows ({most_seconds} s; its --max-bench-time)"
    )]
    TooLong {
        /// The run asked for.
        seconds: u64,
        /// The most the server allows.
        most_seconds: u64,
    },
    /// A limit of the server's would be exceeded.
    #[error("server busy: {0}")]
    Busy(#[from] OverBudget),
}

/// The one scheduled throughput test this server's path carries at a time
/// (docs/protocol.md#path-hold): a bench a schedule started asks to hold
/// it, and is refused while another holds it; the hold ends with its
/// session, however that ends.
#[derive(Debug, Default)]
pub struct PathHolds {
    holder: std::sync::Mutex<Option<PathHolder>>,
}

/// Who holds the path.
#[derive(Debug, Clone)]
struct PathHolder {
    test: String,
    peer: IpAddr,
    since: std::time::Instant,
}

/// The path is held by another scheduled test.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "this host's path is held by the scheduled test {test} from {peer} for {:.0} s",
    held_for.as_secs_f64()
)]
pub struct PathHeld {
    /// The test that holds it (`SCHEDULE/TEST`).
    pub test: String,
    /// Where it came from.
    pub peer: IpAddr,
    /// How long it has held it.
    pub held_for: std::time::Duration,
}

/// A hold on the path, given back when dropped.
#[derive(Debug)]
pub struct HeldPath<'a>(&'a PathHolds);

impl PathHolds {
    /// Holds the path for `test` (as `SCHEDULE/TEST`) from `peer`, or says
    /// who holds it.
    pub fn take(&self, test: &str, peer: IpAddr) -> Result<HeldPath<'_>, PathHeld> {
        let mut holder = self.holder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = holder.as_ref() {
            return Err(PathHeld {
                test: h.test.clone(),
                peer: h.peer,
                held_for: h.since.elapsed(),
            });
        }
        *holder = Some(PathHolder {
            test: test.to_string(),
            peer,
            since: std::time::Instant::now(),
        });
        Ok(HeldPath(self))
    }
}

impl Drop for HeldPath<'_> {
    fn drop(&mut self) {
        let mut holder = self.0.holder.lock().unwrap_or_else(|p| p.into_inner());
        *holder = None;
    }
}

#[cfg(test)]
mod path_hold_tests {
    use super::*;

    #[test]
    fn one_holds_the_path_until_its_hold_drops() {
        let holds = PathHolds::default();
        let here = IpAddr::from([10, 0, 0, 1]);
        let first = holds.take("dtns/bench-dtn3", here).expect("a free path");
        let refused = holds.take("lab/bench-h3", here).unwrap_err().to_string();
        assert!(
            refused.contains("dtns/bench-dtn3 from 10.0.0.1"),
            "{refused}"
        );
        drop(first);
        assert!(holds.take("lab/bench-h3", here).is_ok());
    }
}
