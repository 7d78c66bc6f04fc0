//! The server's door: which new connections may wait for their hello (and
//! TLS handshake), and for how long. Each waiting connection holds a thread
//! until its hello arrives or its time runs out; a flood of connections
//! that never speak would otherwise hold every thread and descriptor while
//! real clients are turned away.
//!
//! Sources are counted as groups ([`SourceGroup`]: an IPv4 address, an IPv6
//! /64 by default), since one host holds a whole IPv6 prefix. A group may
//! hold [`MAX_PENDING_PER_SOURCE`] connections in their handshake; a new
//! one past that takes the place of its own group's oldest. When the door
//! is full, a newcomer takes the place of the oldest connection of the
//! group that holds the most, unless its own group holds as many: the
//! flood pays, not the newcomer (OpenSSH's PerSourceMaxStartups and
//! nginx's limit_conn count per source; the eviction is ours). Past
//! [`EARLY_DROP_FROM`] waiting connections every newcomer gets a shorter
//! time to speak. A group whose handshakes keep failing is held to
//! [`PENALISED_PENDING`] at once for a while, never shut out, and a
//! connection that proves a key or a token lifts that at once
//! (docs/security.md#the-door).

use linerate_engine::lock;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a new connection may take to send its hello.
pub(crate) const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long it may take while many connections are in their handshake.
pub(crate) const HELLO_TIMEOUT_UNDER_PRESSURE: Duration = Duration::from_secs(1);
/// Connections in their handshake at once, from every source.
pub(crate) const MAX_PENDING_HANDSHAKES: usize = 1024;
/// Connections in their handshake from one source group.
pub(crate) const MAX_PENDING_PER_SOURCE: usize = 64;
/// Connections in their handshake from which newcomers get
/// [`HELLO_TIMEOUT_UNDER_PRESSURE`].
pub(crate) const EARLY_DROP_FROM: usize = 256;
/// How often turned-away connections are summed up in the log.
pub(crate) const DROP_LOG_EVERY: Duration = Duration::from_secs(10);
/// Failed handshakes (a client key not listed, no key, a peer that does
/// not speak TLS) from one group within [`FAILURE_WINDOW`] after which it
/// is held to [`PENALISED_PENDING`] handshakes at once for [`PENALTY`].
pub(crate) const MAX_FAILURES: u32 = 10;
pub(crate) const FAILURE_WINDOW: Duration = Duration::from_secs(60);
pub(crate) const PENALTY: Duration = Duration::from_secs(60);
/// Handshakes at once from a group under penalty: a guesser gets a few
/// tries at a time; a real client behind the same address still gets in.
pub(crate) const PENALISED_PENDING: usize = 4;
/// The IPv6 prefix length that counts as one source, unless set.
pub const DEFAULT_V6_PREFIX: u8 = 64;

pub use linerate_engine::limits::SourceGroup;

/// Connections in their handshake, by group, and what was turned away.
pub(crate) struct Door {
    waiting: AtomicUsize,
    next_id: AtomicU64,
    by_source: Mutex<HashMap<SourceGroup, VecDeque<Pending>>>,
    drops: Mutex<Drops>,
    failures: Mutex<HashMap<SourceGroup, Failures>>,
    /// Every threshold times this: a many-host run's receiver expects its
    /// fan-in to connect at once.
    scale: usize,
    v6_prefix: u8,
}

impl Default for Door {
    fn default() -> Self {
        Door {
            waiting: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
            by_source: Mutex::default(),
            drops: Mutex::default(),
            failures: Mutex::default(),
            scale: 1,
            v6_prefix: DEFAULT_V6_PREFIX,
        }
    }
}

/// A connection in its handshake, and how to end it to make room.
struct Pending {
    id: u64,
    conn: Option<TcpStream>,
}

/// One group's recent failed handshakes.
struct Failures {
    count: u32,
    since: Instant,
    penalised_until: Option<Instant>,
}

#[derive(Default)]
struct Drops {
    /// Newcomers past their group's share that took its oldest's place.
    per_source: u64,
    /// Connections ended to make room for another group's newcomer.
    evicted: u64,
    /// Newcomers turned away (the door full of their own group's peers,
    /// or their group under penalty).
    refused: u64,
    sources: HashMap<SourceGroup, u64>,
    logged: Option<Instant>,
}

/// A connection let in to wait for its hello; leaving the door (dropped
/// once the hello is read or its time ran out) frees its place.
pub(crate) struct Waiting {
    door: Arc<Door>,
    source: SourceGroup,
    id: u64,
    /// How long it may take to send its hello.
    pub timeout: Duration,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut by = lock(&self.door.by_source);
        if let Some(q) = by.get_mut(&self.source) {
            if let Some(at) = q.iter().position(|p| p.id == self.id) {
                q.remove(at);
                self.door.waiting.fetch_sub(1, Relaxed);
            }
            if q.is_empty() {
                by.remove(&self.source);
            }
        }
    }
}

impl Waiting {
    pub(crate) fn door(&self) -> Arc<Door> {
        Arc::clone(&self.door)
    }

    /// Whether the door ended this connection to make room: it is counted
    /// in the door's summary, and needs no line of its own.
    pub(crate) fn gave_way(&self) -> bool {
        lock(&self.door.by_source)
            .get(&self.source)
            .is_none_or(|q| q.iter().all(|p| p.id != self.id))
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
            scale: scale.max(1),
            ..Door::default()
        }
    }

    pub(crate) fn scale(&self) -> usize {
        self.scale
    }

    /// Counts IPv6 sources by this prefix length.
    pub(crate) fn with_v6_prefix(mut self, prefix: u8) -> Door {
        self.v6_prefix = prefix.min(128);
        self
    }

    pub(crate) fn group(&self, ip: IpAddr) -> SourceGroup {
        SourceGroup::of(ip, self.v6_prefix)
    }

    /// Lets `peer` in to wait for its hello, making room if needed, or
    /// says no (the caller closes the connection at once). `conn` is kept
    /// (a clone) to end the connection should another need its place.
    pub(crate) fn admit(self: &Arc<Self>, peer: SocketAddr, conn: &TcpStream) -> Option<Waiting> {
        let source = self.group(peer.ip());
        let k = self.scale;
        let share = if self.penalised(source) {
            PENALISED_PENDING
        } else {
            MAX_PENDING_PER_SOURCE * k
        };
        let mut by = lock(&self.by_source);
        let mine = by.get(&source).map_or(0, VecDeque::len);
        if mine >= share {
            // Its own oldest gives way: a group cannot starve its newcomers.
            end_oldest(by.get_mut(&source));
            self.waiting.fetch_sub(1, Relaxed);
            self.note_drop(source, Reason::PerSource);
        } else if self.waiting.load(Relaxed) >= MAX_PENDING_HANDSHAKES * k {
            let top = by
                .iter()
                .max_by_key(|(_, q)| q.len())
                .map(|(s, q)| (*s, q.len()));
            match top {
                Some((top, n)) if n > mine + 1 => {
                    end_oldest(by.get_mut(&top));
                    self.waiting.fetch_sub(1, Relaxed);
                    self.note_drop(top, Reason::Evicted);
                }
                _ => {
                    drop(by);
                    self.note_drop(source, Reason::Refused);
                    return None;
                }
            }
        }
        let id = self.next_id.fetch_add(1, Relaxed);
        by.entry(source).or_default().push_back(Pending {
            id,
            conn: conn.try_clone().ok(),
        });
        let waiting = self.waiting.fetch_add(1, Relaxed);
        Some(Waiting {
            door: Arc::clone(self),
            source,
            id,
            timeout: if waiting >= EARLY_DROP_FROM * k {
                HELLO_TIMEOUT_UNDER_PRESSURE
            } else {
                HELLO_TIMEOUT
            },
        })
    }

    /// Counts a failed handshake from `ip`; the line to log when its group
    /// is put under penalty.
    pub(crate) fn failed(&self, ip: IpAddr) -> Option<String> {
        let source = self.group(ip);
        let now = Instant::now();
        let mut all = lock(&self.failures);
        // Forget groups whose window and penalty are over.
        all.retain(|_, f| {
            now.duration_since(f.since) < FAILURE_WINDOW
                || f.penalised_until.is_some_and(|t| t > now)
        });
        let f = all.entry(source).or_insert(Failures {
            count: 0,
            since: now,
            penalised_until: None,
        });
        f.count += 1;
        if f.count < MAX_FAILURES || f.penalised_until.is_some() {
            return None;
        }
        f.penalised_until = Some(now + PENALTY);
        Some(format!(
            "{source}: {} failed handshakes within {} s; it may have {PENALISED_PENDING} handshakes at once for {} s (a client that proves a key or token lifts this)",
            f.count,
            FAILURE_WINDOW.as_secs(),
            PENALTY.as_secs()
        ))
    }

    /// A connection from `ip` proved a key or a token: its group's failures
    /// were someone else's, or are forgiven.
    pub(crate) fn proven(&self, ip: IpAddr) {
        lock(&self.failures).remove(&self.group(ip));
    }

    fn penalised(&self, source: SourceGroup) -> bool {
        lock(&self.failures)
            .get(&source)
            .and_then(|f| f.penalised_until)
            .is_some_and(|t| t > Instant::now())
    }

    fn note_drop(&self, source: SourceGroup, why: Reason) {
        let mut d = lock(&self.drops);
        match why {
            Reason::PerSource => d.per_source += 1,
            Reason::Evicted => d.evicted += 1,
            Reason::Refused => d.refused += 1,
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
        let total = d.per_source + d.evicted + d.refused;
        if total == 0 || (recent && !now) {
            return None;
        }
        let mut top: Vec<(SourceGroup, u64)> = d.sources.drain().collect();
        top.sort_by_key(|t| std::cmp::Reverse(t.1));
        let shown: Vec<String> = top
            .iter()
            .take(3)
            .map(|(src, n)| format!("{src} ({n})"))
            .collect();
        let more = top.len().saturating_sub(3);
        let line = format!(
            "dropped {total} connection(s) in their handshake: {} past {} from one source, {} ended to make room in the full door ({}), {} turned away; from {}{}",
            d.per_source,
            MAX_PENDING_PER_SOURCE * self.scale,
            d.evicted,
            MAX_PENDING_HANDSHAKES * self.scale,
            d.refused,
            shown.join(", "),
            if more > 0 {
                format!(" and {more} other source(s)")
            } else {
                String::new()
            }
        );
        d.per_source = 0;
        d.evicted = 0;
        d.refused = 0;
        d.logged = Some(Instant::now());
        Some(line)
    }
}

#[derive(Clone, Copy)]
enum Reason {
    PerSource,
    Evicted,
    Refused,
}

/// Ends the oldest waiting connection of a group: its thread sees the
/// connection closed and leaves (its place is taken over at once).
fn end_oldest(queue: Option<&mut VecDeque<Pending>>) {
    if let Some(p) = queue.and_then(VecDeque::pop_front)
        && let Some(c) = p.conn
    {
        let _ = c.shutdown(Shutdown::Both);
    }
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
    use std::net::TcpListener;

    /// A connected socket to stand for a waiting connection.
    struct Conns {
        listener: TcpListener,
        kept: Vec<TcpStream>,
    }

    impl Conns {
        fn new() -> Conns {
            Conns {
                listener: TcpListener::bind("127.0.0.1:0").unwrap(),
                kept: Vec::new(),
            }
        }

        fn one(&mut self) -> TcpStream {
            let c = TcpStream::connect(self.listener.local_addr().unwrap()).unwrap();
            let (s, _) = self.listener.accept().unwrap();
            self.kept.push(c);
            s
        }
    }

    fn closed(s: &TcpStream) -> bool {
        use std::io::Read;
        s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        !matches!((&*s).read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }

    #[test]
    fn ipv6_counts_by_prefix_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(SourceGroup::of(a, 64), SourceGroup::of(b, 64));
        assert_ne!(SourceGroup::of(a, 64), SourceGroup::of(c, 64));
        assert_ne!(SourceGroup::of(a, 128), SourceGroup::of(b, 128));
        assert_eq!(SourceGroup::of(a, 48), SourceGroup::of(c, 48));
        let m: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        let n: IpAddr = "::ffff:192.0.2.8".parse().unwrap();
        assert_ne!(SourceGroup::of(m, 64), SourceGroup::of(n, 64));
        assert_eq!(SourceGroup::of(m, 64).to_string(), "192.0.2.7");
        assert_eq!(SourceGroup::of(a, 64).to_string(), "2001:db8:1:2::/64");
    }

    #[test]
    fn a_source_past_its_share_gives_way_to_its_own_newcomer() {
        let door = Arc::new(Door::default());
        let mut conns = Conns::new();
        let flood: SocketAddr = "127.0.0.2:40000".parse().unwrap();
        let socks: Vec<TcpStream> = (0..=MAX_PENDING_PER_SOURCE).map(|_| conns.one()).collect();
        let held: Vec<Waiting> = socks[..MAX_PENDING_PER_SOURCE]
            .iter()
            .map(|s| door.admit(flood, s).expect("within its share"))
            .collect();
        let newest = door.admit(flood, &socks[MAX_PENDING_PER_SOURCE]);
        assert!(newest.is_some(), "the newcomer takes the oldest's place");
        assert!(closed(&socks[0]), "the oldest was ended");
        assert!(!closed(&socks[1]));
        assert_eq!(door.waiting.load(Relaxed), MAX_PENDING_PER_SOURCE);
        let other: SocketAddr = "127.0.0.1:40001".parse().unwrap();
        let w = door.admit(other, &conns.one()).expect("another source");
        assert_eq!(w.timeout, HELLO_TIMEOUT);
        let line = door.drops_to_log().expect("logged");
        assert!(line.contains("127.0.0.2 (1)"), "{line}");
        assert!(door.drops_to_log().is_none(), "once per period");
        drop(held);
        drop(newest);
        drop(w);
        assert_eq!(door.waiting.load(Relaxed), 0);
        assert!(lock(&door.by_source).is_empty(), "every place freed");
    }

    #[test]
    fn a_full_door_makes_room_from_the_biggest_holder_not_the_newcomer() {
        let door = Arc::new(Door::widened(1));
        let mut conns = Conns::new();
        // 16 sources with 64 each fill the 1,024 places.
        let mut held = Vec::new();
        let mut first_of_each = Vec::new();
        for src in 0..16u8 {
            let peer: SocketAddr = format!("10.0.0.{src}:1").parse().unwrap();
            for i in 0..MAX_PENDING_PER_SOURCE {
                let s = conns.one();
                held.push(door.admit(peer, &s).expect("room"));
                if i == 0 {
                    first_of_each.push(s);
                } else {
                    conns.kept.push(s);
                }
            }
        }
        assert_eq!(door.waiting.load(Relaxed), MAX_PENDING_HANDSHAKES);
        let newcomer: SocketAddr = "192.0.2.1:1".parse().unwrap();
        let w = door.admit(newcomer, &conns.one()).expect("room made");
        assert_eq!(w.timeout, HELLO_TIMEOUT_UNDER_PRESSURE);
        let gave_way: Vec<usize> = (0..16).filter(|&i| closed(&first_of_each[i])).collect();
        assert_eq!(gave_way.len(), 1);
        assert_eq!(door.waiting.load(Relaxed), MAX_PENDING_HANDSHAKES);
        // The group that gave way (63) holds about as many as the biggest
        // (64): its newcomer is turned away, not another group's connection.
        let short: SocketAddr = format!("10.0.0.{}:2", gave_way[0]).parse().unwrap();
        assert!(door.admit(short, &conns.one()).is_none());
        // A group at its share takes its own oldest's place.
        let full: SocketAddr = format!("10.0.0.{}:2", (gave_way[0] + 1) % 16)
            .parse()
            .unwrap();
        let took = door.admit(full, &conns.one());
        assert!(took.is_some(), "took its own oldest");
        assert_eq!(door.waiting.load(Relaxed), MAX_PENDING_HANDSHAKES);
        let line = door.drops_to_log().unwrap();
        assert!(line.contains("1 ended to make room"), "{line}");
        assert!(line.contains("1 turned away"), "{line}");
    }

    #[test]
    fn failing_handshakes_bring_a_penalty_that_a_proof_lifts() {
        let door = Arc::new(Door::default());
        let mut conns = Conns::new();
        let guesser: SocketAddr = "127.0.0.3:40000".parse().unwrap();
        for _ in 1..MAX_FAILURES {
            assert!(door.failed(guesser.ip()).is_none());
        }
        let line = door.failed(guesser.ip()).expect("penalised now");
        assert!(line.contains("127.0.0.3"), "{line}");
        assert!(door.failed(guesser.ip()).is_none(), "said once");
        let socks: Vec<TcpStream> = (0..=PENALISED_PENDING).map(|_| conns.one()).collect();
        let held: Vec<Waiting> = socks
            .iter()
            .map(|s| door.admit(guesser, s).expect("never shut out"))
            .collect();
        assert!(closed(&socks[0]), "held to its penalty's share");
        assert_eq!(door.waiting.load(Relaxed), PENALISED_PENDING);
        door.proven(guesser.ip());
        assert!(!door.penalised(door.group(guesser.ip())));
        drop(held);
    }

    #[test]
    fn a_widened_door_holds_its_scale_times_more_from_one_source() {
        let door = Arc::new(Door::widened(4));
        let mut conns = Conns::new();
        let peer: SocketAddr = "192.0.2.7:1".parse().unwrap();
        let socks: Vec<TcpStream> = (0..=4 * MAX_PENDING_PER_SOURCE)
            .map(|_| conns.one())
            .collect();
        let held: Vec<Waiting> = socks[..4 * MAX_PENDING_PER_SOURCE]
            .iter()
            .map(|s| door.admit(peer, s).expect("within four times the limit"))
            .collect();
        assert!(!closed(&socks[0]));
        let _w = door.admit(peer, &socks[4 * MAX_PENDING_PER_SOURCE]);
        assert!(closed(&socks[0]));
        drop(held);
    }
}
