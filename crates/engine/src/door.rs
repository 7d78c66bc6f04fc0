//! The server's door: which new connections may wait for their hello, and
//! for how long. Each waiting connection holds a thread until its hello
//! arrives or its time runs out; a flood of connections that never speak
//! would otherwise hold every thread and descriptor while real clients are
//! turned away. So one source address may hold at most
//! [`MAX_PENDING_PER_SOURCE`] connections in their handshake, and past
//! [`EARLY_DROP_FROM`] waiting connections new ones are dropped at random,
//! more the fuller the door (as sshd's MaxStartups), and the rest get a
//! shorter time to speak (docs/guide.md#connection-floods).

use crate::lock;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a new connection may take to send its hello.
pub(crate) const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long it may take while many connections are in their handshake.
pub(crate) const HELLO_TIMEOUT_UNDER_PRESSURE: Duration = Duration::from_secs(1);
/// Connections still in their handshake beyond which new ones are dropped.
pub(crate) const MAX_PENDING_HANDSHAKES: usize = 1024;
/// Connections in their handshake from one address beyond which its new
/// ones are closed at once: one source cannot hold the door shut for the
/// others (docs/guide.md#connection-floods).
pub(crate) const MAX_PENDING_PER_SOURCE: usize = 64;
/// Connections in their handshake from which new ones are dropped at
/// random, more the closer to [`MAX_PENDING_HANDSHAKES`] (as sshd's
/// MaxStartups), and given [`HELLO_TIMEOUT_UNDER_PRESSURE`].
pub(crate) const EARLY_DROP_FROM: usize = 256;
/// How often dropped connections are summed up in the log.
pub(crate) const DROP_LOG_EVERY: Duration = Duration::from_secs(10);
/// Failed handshakes (a client key not listed, no key, a peer that does
/// not speak TLS) from one address within [`FAILURE_WINDOW`] after which
/// its connections are dropped at the door for [`TURNED_AWAY_FOR`]: a
/// guesser gets a few tries a minute, and the log a few lines.
pub(crate) const MAX_FAILURES: u32 = 10;
pub(crate) const FAILURE_WINDOW: Duration = Duration::from_secs(60);
pub(crate) const TURNED_AWAY_FOR: Duration = Duration::from_secs(60);

/// Connections in their handshake, in all and by source, and what was dropped.
#[derive(Default)]
pub(crate) struct Door {
    waiting: AtomicUsize,
    by_source: Mutex<HashMap<IpAddr, usize>>,
    drops: Mutex<Drops>,
    failures: Mutex<HashMap<IpAddr, Failures>>,
    /// Every threshold times this (0 and 1: as they stand): a many-host
    /// run's receiver expects its fan-in to connect at once.
    scale: usize,
}

/// One address's recent failed handshakes.
struct Failures {
    count: u32,
    since: Instant,
    turned_away_until: Option<Instant>,
}

#[derive(Default)]
struct Drops {
    per_source: u64,
    pressure: u64,
    sources: HashMap<IpAddr, u64>,
    logged: Option<Instant>,
}

/// A connection let in to wait for its hello; leaving the door (dropped
/// once the hello is read or its time ran out) frees its place.
pub(crate) struct Waiting {
    door: Arc<Door>,
    source: IpAddr,
    /// How long it may take to send its hello.
    pub timeout: Duration,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.door.waiting.fetch_sub(1, Relaxed);
        let mut by = lock(&self.door.by_source);
        if let Some(n) = by.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                by.remove(&self.source);
            }
        }
    }
}

impl Waiting {
    pub(crate) fn door(&self) -> Arc<Door> {
        Arc::clone(&self.door)
    }

    /// Leaves the door. When the last waiting connection leaves, a flood
    /// is over: its drops not yet logged are summed up now, not whenever
    /// the next one comes.
    pub(crate) fn leave(self) -> Option<String> {
        let door = Arc::clone(&self.door);
        drop(self);
        if door.waiting.load(Relaxed) == 0 {
            door.drops_summary(true)
        } else {
            None
        }
    }
}

impl Door {
    /// A door whose thresholds are `scale` times the daemon's.
    pub(crate) fn widened(scale: usize) -> Door {
        Door {
            scale,
            ..Door::default()
        }
    }

    fn scale(&self) -> usize {
        self.scale.max(1)
    }

    /// Lets `peer` in to wait for its hello, or says no (the caller closes
    /// the connection at once).
    pub(crate) fn admit(self: &Arc<Self>, peer: SocketAddr) -> Option<Waiting> {
        let source = peer.ip();
        if self.turned_away(source) {
            self.note_drop(source, false);
            return None;
        }
        let waiting = self.waiting.load(Relaxed);
        {
            let mut by = lock(&self.by_source);
            let mine = by.entry(source).or_default();
            let k = self.scale();
            if *mine >= MAX_PENDING_PER_SOURCE * k {
                drop(by);
                self.note_drop(source, false);
                return None;
            }
            if waiting >= MAX_PENDING_HANDSHAKES * k || early_drop(waiting / k) {
                drop(by);
                self.note_drop(source, true);
                return None;
            }
            *mine += 1;
        }
        self.waiting.fetch_add(1, Relaxed);
        Some(Waiting {
            door: Arc::clone(self),
            source,
            timeout: if waiting >= EARLY_DROP_FROM * self.scale() {
                HELLO_TIMEOUT_UNDER_PRESSURE
            } else {
                HELLO_TIMEOUT
            },
        })
    }

    /// Counts a failed handshake from `source`; the line to log when it
    /// is turned away from now on.
    pub(crate) fn failed(&self, source: IpAddr) -> Option<String> {
        let now = Instant::now();
        let mut all = lock(&self.failures);
        // Forget addresses whose window and time away are over.
        all.retain(|_, f| {
            now.duration_since(f.since) < FAILURE_WINDOW
                || f.turned_away_until.is_some_and(|t| t > now)
        });
        let f = all.entry(source).or_insert(Failures {
            count: 0,
            since: now,
            turned_away_until: None,
        });
        f.count += 1;
        if f.count < MAX_FAILURES || f.turned_away_until.is_some() {
            return None;
        }
        f.turned_away_until = Some(now + TURNED_AWAY_FOR);
        Some(format!(
            "{source}: {} failed handshakes within {} s; its connections are dropped for {} s",
            f.count,
            FAILURE_WINDOW.as_secs(),
            TURNED_AWAY_FOR.as_secs()
        ))
    }

    fn turned_away(&self, source: IpAddr) -> bool {
        let all = lock(&self.failures);
        all.get(&source)
            .and_then(|f| f.turned_away_until)
            .is_some_and(|t| t > Instant::now())
    }

    fn note_drop(&self, source: IpAddr, pressure: bool) {
        let mut d = lock(&self.drops);
        if pressure {
            d.pressure += 1;
        } else {
            d.per_source += 1;
        }
        *d.sources.entry(source).or_default() += 1;
    }

    /// A line summing up the drops since the last one, at most every
    /// [`DROP_LOG_EVERY`]: a flood is logged, not echoed line by line.
    pub(crate) fn drops_to_log(&self) -> Option<String> {
        self.drops_summary(false)
    }

    fn drops_summary(&self, now: bool) -> Option<String> {
        let mut d = lock(&self.drops);
        let recent = d.logged.is_some_and(|t| t.elapsed() < DROP_LOG_EVERY);
        if d.per_source + d.pressure == 0 || (recent && !now) {
            return None;
        }
        let mut top: Vec<(IpAddr, u64)> = d.sources.drain().collect();
        top.sort_by_key(|t| std::cmp::Reverse(t.1));
        let shown: Vec<String> = top
            .iter()
            .take(3)
            .map(|(ip, n)| format!("{ip} ({n})"))
            .collect();
        let line = format!(
            "dropped {} connection(s) in their handshake: {} over {MAX_PENDING_PER_SOURCE} waiting from one address, {} with the server's {MAX_PENDING_HANDSHAKES} nearly full; from {}",
            d.per_source + d.pressure,
            d.per_source,
            d.pressure,
            shown.join(", ")
        );
        d.per_source = 0;
        d.pressure = 0;
        d.logged = Some(Instant::now());
        Some(line)
    }
}

/// Whether to drop a new connection while `waiting` others wait: never
/// below [`EARLY_DROP_FROM`], always at [`MAX_PENDING_HANDSHAKES`], in
/// between with a probability that grows linearly.
fn early_drop(waiting: usize) -> bool {
    if waiting < EARLY_DROP_FROM {
        return false;
    }
    let span = (MAX_PENDING_HANDSHAKES - EARLY_DROP_FROM) as u64;
    let over = (waiting - EARLY_DROP_FROM) as u64;
    let mut r = [0u8; 8];
    if getrandom::fill(&mut r).is_err() {
        return true;
    }
    u64::from_le_bytes(r) % span < over
}

/// Raises the soft limit of open descriptors to the hard one: each waiting
/// or served connection takes one, and 1,024 would run out first.
pub(crate) fn raise_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_source_is_held_to_its_share_and_others_still_get_in() {
        let door = Arc::new(Door::default());
        let flood: SocketAddr = "127.0.0.2:40000".parse().unwrap();
        let held: Vec<Waiting> = (0..MAX_PENDING_PER_SOURCE)
            .map(|_| door.admit(flood).expect("within its share"))
            .collect();
        assert!(door.admit(flood).is_none(), "over its share");
        let other: SocketAddr = "127.0.0.1:40001".parse().unwrap();
        let w = door.admit(other).expect("another source gets in");
        assert_eq!(w.timeout, HELLO_TIMEOUT);
        let line = door.drops_to_log().expect("the drop is logged");
        assert!(line.contains("127.0.0.2 (1)"), "{line}");
        assert!(door.drops_to_log().is_none(), "once per period");
        drop(held);
        drop(w);
        assert_eq!(door.waiting.load(Relaxed), 0);
        assert!(lock(&door.by_source).is_empty(), "every place freed");
    }

    #[test]
    fn an_address_that_keeps_failing_is_turned_away_and_others_are_not() {
        let door = Arc::new(Door::default());
        let guesser: SocketAddr = "127.0.0.3:40000".parse().unwrap();
        for _ in 1..MAX_FAILURES {
            assert!(door.failed(guesser.ip()).is_none());
            assert!(door.admit(guesser).is_some(), "still let in");
        }
        let line = door.failed(guesser.ip()).expect("turned away now");
        assert!(line.contains("127.0.0.3"), "{line}");
        assert!(door.admit(guesser).is_none());
        assert!(door.failed(guesser.ip()).is_none(), "said once");
        let other: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert!(door.admit(other).is_some());
    }

    #[test]
    fn drops_of_a_flood_that_ended_are_logged_when_the_last_one_leaves() {
        let door = Arc::new(Door::default());
        let flood: SocketAddr = "127.0.0.2:40000".parse().unwrap();
        let mut held: Vec<Waiting> = (0..MAX_PENDING_PER_SOURCE)
            .map(|_| door.admit(flood).expect("within its share"))
            .collect();
        assert!(door.admit(flood).is_none());
        assert!(door.drops_to_log().is_some());
        assert!(door.admit(flood).is_none());
        assert!(door.admit(flood).is_none());
        assert!(door.drops_to_log().is_none(), "within the period");
        let last = held.pop().unwrap();
        drop(held);
        let line = last.leave().expect("the flood's end is logged");
        assert!(line.starts_with("dropped 2 connection(s)"), "{line}");
    }

    #[test]
    fn a_widened_door_holds_its_scale_times_more_from_one_source() {
        let door = Arc::new(Door::widened(4));
        let peer: SocketAddr = "192.0.2.7:1".parse().unwrap();
        let held: Vec<Waiting> = (0..4 * MAX_PENDING_PER_SOURCE)
            .map(|_| door.admit(peer).expect("within four times the limit"))
            .collect();
        assert!(door.admit(peer).is_none());
        drop(held);
        assert!(door.admit(peer).is_some());
    }

    #[test]
    fn early_drop_grows_from_never_to_always() {
        assert!(!early_drop(EARLY_DROP_FROM - 1));
        assert!(early_drop(MAX_PENDING_HANDSHAKES));
        let half = (EARLY_DROP_FROM + MAX_PENDING_HANDSHAKES) / 2;
        let dropped = (0..2000).filter(|_| early_drop(half)).count();
        assert!(
            (800..1200).contains(&dropped),
            "{dropped} of 2000 at half way"
        );
    }
}
