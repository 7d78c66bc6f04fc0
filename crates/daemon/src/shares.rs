//! Fair shares of the server for sessions whose client proved nothing yet:
//! benches, latency sessions, and transfers before their token or key is
//! checked. They draw on their own pool, apart from the authenticated
//! transfers' `--max-sessions`, so no number of strangers can refuse a key
//! holder. Each source group ([`SourceGroup`]) may hold a few at once; when
//! the pool is full, a newcomer takes the place of the oldest session of the
//! group that holds the most, unless its own group holds as many. A seat
//! also bounds its session's life: ended after the longest unauthenticated
//! bench (`--max-bench-time`) plus a grace, or when its data connections
//! move less than [`MIN_PROGRESS`] bytes in [`PROGRESS_WINDOW`]: a trickle
//! is not a bench (docs/security.md#fair-shares).

use crate::waiting_room::SourceGroup;
use linerate_engine::limits::Refused;
use linerate_engine::lock;
use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Bytes a running session's data connections must move, both ways
/// together, in each [`PROGRESS_WINDOW`].
pub const MIN_PROGRESS: u64 = 64 << 10;
/// The window [`MIN_PROGRESS`] is counted over.
pub const PROGRESS_WINDOW: Duration = Duration::from_secs(10);
/// Past the bench time it was allowed, how long a session has to end by
/// itself (its report, the client's last reads).
const END_GRACE: Duration = Duration::from_secs(15);
/// How often refusals from one source are summed up in the log.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);
/// Refusals from one source shown whole in each period; the rest are summed.
const REFUSALS_SHOWN: u32 = 10;
/// Sessions of one source that ended without moving data, within
/// [`WASTE_WINDOW`], past which its newcomers may no longer end another
/// source's session to get a seat: a source that only churns the pool
/// (connects, never runs, reconnects) would otherwise evict a real bench
/// as soon as it became the oldest.
const WASTE_LIMIT: u32 = 8;
const WASTE_WINDOW: Duration = Duration::from_secs(60);

/// The pool's size, per source and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareLimits {
    /// Unauthenticated sessions at once, every source together.
    pub open: usize,
    /// Unauthenticated sessions at once from one source group.
    pub per_source: usize,
    /// The longest bench or latency run a client without a key may ask for.
    pub max_bench_time: Duration,
}

impl Default for ShareLimits {
    fn default() -> Self {
        ShareLimits {
            open: 32,
            per_source: 4,
            max_bench_time: Duration::from_secs(300),
        }
    }
}

/// How to end a seated session from outside: its abort flag, and the
/// sockets whose shutdown wakes every thread it has blocked in a read.
#[derive(Default)]
pub(crate) struct Ender {
    pub abort: Arc<AtomicBool>,
    sockets: Mutex<Vec<TcpStream>>,
    /// Why it was ended, once it was.
    why: Mutex<Option<&'static str>>,
}

impl Ender {
    /// Ends the session when the seat is taken back.
    pub(crate) fn watch(&self, s: &TcpStream) {
        if let Ok(c) = s.try_clone() {
            lock(&self.sockets).push(c);
        }
    }

    fn end(&self, why: &'static str) {
        lock(&self.why).get_or_insert(why);
        self.abort.store(true, Relaxed);
        for s in lock(&self.sockets).iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Why the seat was taken back, if it was.
    pub(crate) fn ended(&self) -> Option<&'static str> {
        *lock(&self.why)
    }

    /// Bytes moved by its data connections so far (the first socket
    /// watched is the control connection, left out).
    fn moved(&self) -> u64 {
        lock(&self.sockets)
            .iter()
            .skip(1)
            .filter_map(|s| linerate_probe::tcpinfo::bytes_moved(s).ok())
            .sum()
    }

    fn has_data(&self) -> bool {
        lock(&self.sockets).len() > 1
    }
}

struct Tenant {
    id: u64,
    ender: Arc<Ender>,
    since: Instant,
    /// Whether the session must keep moving bytes (a UDP bench moves its
    /// payload outside its TCP connections).
    progress: Arc<AtomicBool>,
    last: (Instant, u64),
}

/// One source's recent sessions that ended without moving data.
struct Waste {
    count: u32,
    since: Instant,
}

#[derive(Default)]
struct Refusals {
    /// Shown in full this period.
    shown: u32,
    count: u64,
    logged: Option<Instant>,
}

/// The unauthenticated sessions of one server.
pub(crate) struct Shares {
    limits: ShareLimits,
    seats: Mutex<HashMap<SourceGroup, Vec<Tenant>>>,
    next: AtomicU64,
    refusals: Mutex<HashMap<SourceGroup, Refusals>>,
    waste: Mutex<HashMap<SourceGroup, Waste>>,
}

/// A session's place in the pool, given back when dropped.
pub(crate) struct Seat {
    shares: Arc<Shares>,
    source: SourceGroup,
    id: u64,
    pub ender: Arc<Ender>,
    progress: Arc<AtomicBool>,
}

impl Seat {
    /// The session carries its payload elsewhere (UDP): only its time is bounded.
    pub(crate) fn without_progress_rule(&self) {
        self.progress.store(false, Relaxed);
    }

    pub(crate) fn max_bench_time(&self) -> Duration {
        self.shares.limits.max_bench_time
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if !self.ender.has_data() {
            self.shares.wasted(self.source);
        }
        let mut seats = lock(&self.shares.seats);
        if let Some(v) = seats.get_mut(&self.source) {
            v.retain(|t| t.id != self.id);
            if v.is_empty() {
                seats.remove(&self.source);
            }
        }
    }
}

impl Shares {
    /// The pool, and a thread that ends seats past their time or without
    /// progress (it ends when the pool does).
    pub(crate) fn new(limits: ShareLimits) -> Arc<Shares> {
        let shares = Arc::new(Shares {
            limits,
            seats: Mutex::default(),
            next: AtomicU64::new(0),
            refusals: Mutex::default(),
            waste: Mutex::default(),
        });
        let weak = Arc::downgrade(&shares);
        let _ = std::thread::Builder::new()
            .name("shares-reaper".into())
            .spawn(move || reap(&weak));
        shares
    }

    /// A seat for a session from `source`, or why not (in the user's words).
    pub(crate) fn take(self: &Arc<Self>, source: SourceGroup) -> Result<Seat, Refused> {
        let mut seats = lock(&self.seats);
        let mine = seats.get(&source).map_or(0, Vec::len);
        if mine >= self.limits.per_source {
            return Err(Refused::SourceFull {
                group: source,
                open: mine,
            });
        }
        let total: usize = seats.values().map(Vec::len).sum();
        if total >= self.limits.open {
            let most = seats.values().map(Vec::len).max().unwrap_or(0);
            if most <= mine || self.wastes(source) {
                return Err(Refused::ServerFull { open: total });
            }
            evict(&mut seats, most);
        }
        let id = self.next.fetch_add(1, Relaxed);
        let ender = Arc::new(Ender::default());
        let progress = Arc::new(AtomicBool::new(true));
        let now = Instant::now();
        seats.entry(source).or_default().push(Tenant {
            id,
            ender: Arc::clone(&ender),
            since: now,
            progress: Arc::clone(&progress),
            last: (now, 0),
        });
        Ok(Seat {
            shares: Arc::clone(self),
            source,
            id,
            ender,
            progress,
        })
    }

    fn wasted(&self, source: SourceGroup) {
        let now = Instant::now();
        let mut all = lock(&self.waste);
        all.retain(|_, w| now.duration_since(w.since) < WASTE_WINDOW);
        all.entry(source)
            .or_insert(Waste {
                count: 0,
                since: now,
            })
            .count += 1;
    }

    /// Whether `source` has lately only churned the pool.
    fn wastes(&self, source: SourceGroup) -> bool {
        lock(&self.waste)
            .get(&source)
            .is_some_and(|w| w.count >= WASTE_LIMIT && w.since.elapsed() < WASTE_WINDOW)
    }

    /// Counts a refused session from `source`; whether to log this one
    /// (the first in each period), and a sum of those not logged.
    pub(crate) fn refused(&self, source: SourceGroup) -> (bool, Option<String>) {
        let mut all = lock(&self.refusals);
        let r = all.entry(source).or_default();
        let new_period = r.logged.is_none_or(|t| t.elapsed() >= REFUSAL_LOG_EVERY);
        if !new_period {
            if r.shown < REFUSALS_SHOWN {
                r.shown += 1;
                return (true, None);
            }
            r.count += 1;
            return (false, None);
        }
        let sum = (r.count > 0).then(|| {
            format!(
                "refused {} more session(s) or connection(s) from {source} in the last {} s",
                r.count,
                REFUSAL_LOG_EVERY.as_secs()
            )
        });
        r.count = 0;
        r.shown = 1;
        r.logged = Some(Instant::now());
        (true, sum)
    }

    /// The sums of refusals whose period is over and that no later
    /// refusal has logged yet: a flood that stopped is still summed.
    pub(crate) fn refusal_sums_due(&self) -> Vec<String> {
        let mut all = lock(&self.refusals);
        let mut lines = Vec::new();
        all.retain(|source, r| {
            let over = r.logged.is_none_or(|t| t.elapsed() >= REFUSAL_LOG_EVERY);
            if over && r.count > 0 {
                lines.push(format!(
                    "refused {} more session(s) or connection(s) from {source} in the last {} s",
                    r.count,
                    REFUSAL_LOG_EVERY.as_secs()
                ));
            }
            !over
        });
        lines
    }

    /// Ends every seat past its time, or whose data stalled; how many.
    fn sweep(&self, now: Instant) -> usize {
        let over = self.limits.max_bench_time + 2 * linerate_session::SETUP_TIMEOUT + END_GRACE;
        let mut ended = 0;
        let mut seats = lock(&self.seats);
        for t in seats.values_mut().flatten() {
            if t.ender.ended().is_some() {
                continue;
            }
            if now.duration_since(t.since) > over {
                t.ender.end("it ran past the longest bench allowed");
                ended += 1;
                continue;
            }
            if !t.progress.load(Relaxed) || !t.ender.has_data() {
                t.last = (now, 0);
                continue;
            }
            if now.duration_since(t.last.0) >= PROGRESS_WINDOW {
                let moved = t.ender.moved();
                if t.last.1 != 0 && moved.saturating_sub(t.last.1) < MIN_PROGRESS {
                    t.ender.end("its data connections stalled");
                    ended += 1;
                    continue;
                }
                t.last = (now, moved.max(1));
            }
        }
        ended
    }
}

/// Ends one session of the groups holding `most`: the oldest that moves
/// no data yet (a session that never runs), else the oldest.
fn evict(seats: &mut HashMap<SourceGroup, Vec<Tenant>>, most: usize) {
    let victim = seats
        .iter()
        .filter(|(_, v)| v.len() == most)
        .flat_map(|(s, v)| v.iter().enumerate().map(move |(i, t)| (*s, i, t)))
        .min_by_key(|(_, _, t)| (t.ender.has_data(), t.since))
        .map(|(s, i, _)| (s, i));
    if let Some((source, i)) = victim
        && let Some(v) = seats.get_mut(&source)
    {
        let t = v.remove(i);
        t.ender
            .end("its place went to a source holding fewer sessions");
        if v.is_empty() {
            seats.remove(&source);
        }
    }
}

fn reap(shares: &Weak<Shares>) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(s) = shares.upgrade() else { return };
        s.sweep(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn src(s: &str) -> SourceGroup {
        SourceGroup::of(s.parse::<IpAddr>().unwrap(), 64)
    }

    #[test]
    fn a_source_gets_its_share_and_a_full_pool_makes_room_from_the_biggest() {
        let shares = Shares::new(ShareLimits {
            open: 3,
            per_source: 3,
            ..ShareLimits::default()
        });
        let a: Vec<Seat> = (0..3)
            .map(|_| shares.take(src("10.0.0.1")).unwrap())
            .collect();
        let e = shares.take(src("10.0.0.1")).err().unwrap();
        assert!(matches!(e, Refused::SourceFull { open: 3, .. }), "{e}");
        assert!(
            e.to_string().contains("--max-open-sessions-per-source"),
            "{e}"
        );
        // Full: a newcomer ends the oldest of the biggest group.
        let b = shares.take(src("10.0.0.2")).expect("room made");
        assert_eq!(
            a[0].ender.ended(),
            Some("its place went to a source holding fewer sessions")
        );
        assert!(a[0].ender.abort.load(Relaxed));
        assert!(a[1].ender.ended().is_none());
        // 2 against 1: still room from the biggest.
        let b2 = shares.take(src("10.0.0.2")).expect("2 against 1");
        assert!(a[1].ender.ended().is_some());
        // 1 (10.0.0.1) against 2: a group holding as many as the biggest
        // gets nothing; nor does a new one against a pool of equals.
        let e = shares.take(src("10.0.0.2")).err().unwrap();
        assert!(e.to_string().contains("--max-open-sessions"), "{e}");
        drop(a);
        let c = shares.take(src("10.0.0.3")).expect("room");
        let e = shares.take(src("10.0.0.4"));
        assert!(e.is_ok(), "the biggest (2) gives way to a newcomer (0)");
        drop((b, b2, c, e));
        assert!(lock(&shares.seats).is_empty());
    }

    #[test]
    fn a_session_that_moves_data_is_not_the_one_to_go() {
        let shares = Shares::new(ShareLimits {
            open: 2,
            per_source: 1,
            ..ShareLimits::default()
        });
        let running = shares.take(src("10.0.0.1")).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        running.ender.watch(&c);
        running.ender.watch(&c);
        let idle = shares.take(src("10.0.0.2")).unwrap();
        let _new = shares.take(src("10.0.0.3")).expect("room made");
        assert!(running.ender.ended().is_none(), "the running one stays");
        assert!(
            idle.ender.ended().is_some(),
            "the idle one goes, younger as it is"
        );
    }

    #[test]
    fn a_source_that_only_churns_may_no_longer_evict() {
        let shares = Shares::new(ShareLimits {
            open: 1,
            per_source: 1,
            ..ShareLimits::default()
        });
        let churner = src("10.0.0.9");
        let held = shares.take(src("10.0.0.1")).unwrap();
        for _ in 0..WASTE_LIMIT {
            drop(
                shares
                    .take(churner)
                    .expect("evicts while its record is clean"),
            );
            let _ = shares.take(src("10.0.0.1"));
        }
        drop(held);
        let _other = shares.take(src("10.0.0.2")).unwrap();
        let e = shares.take(churner).err().expect("no longer evicts");
        assert!(e.to_string().contains("--max-open-sessions"), "{e}");
        assert!(
            shares.take(src("10.0.0.3")).is_ok(),
            "a clean source still does"
        );
    }

    #[test]
    fn seats_past_their_time_are_ended() {
        let shares = Shares::new(ShareLimits {
            max_bench_time: Duration::from_secs(1),
            ..ShareLimits::default()
        });
        let s = shares.take(src("2001:db8::1")).unwrap();
        let late = Instant::now() + Duration::from_secs(60);
        assert_eq!(shares.sweep(late), 1);
        assert_eq!(
            s.ender.ended(),
            Some("it ran past the longest bench allowed")
        );
    }

    #[test]
    fn refusals_are_logged_a_few_a_period_then_summed() {
        let shares = Shares::new(ShareLimits::default());
        let s = src("192.0.2.9");
        for _ in 0..REFUSALS_SHOWN {
            assert_eq!(shares.refused(s), (true, None));
        }
        for _ in 0..1000 {
            assert_eq!(shares.refused(s), (false, None));
        }
        lock(&shares.refusals).get_mut(&s).unwrap().logged =
            Some(Instant::now() - REFUSAL_LOG_EVERY);
        let (log, sum) = shares.refused(s);
        assert!(log);
        assert_eq!(
            sum.unwrap(),
            "refused 1000 more session(s) or connection(s) from 192.0.2.9 in the last 10 s"
        );
        // A flood that stopped is summed once its period is over.
        for _ in 0..20 {
            shares.refused(s);
        }
        assert!(
            shares.refusal_sums_due().is_empty(),
            "not before the period ends"
        );
        lock(&shares.refusals).get_mut(&s).unwrap().logged =
            Some(Instant::now() - REFUSAL_LOG_EVERY);
        assert_eq!(
            shares.refusal_sums_due(),
            ["refused 11 more session(s) or connection(s) from 192.0.2.9 in the last 10 s"]
        );
        assert!(shares.refusal_sums_due().is_empty(), "once");
    }
}
