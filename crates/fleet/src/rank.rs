//! One rank of a proxy application: its job port (peers of lower rank
//! connect to it, showing the run's token), its connections to its peers,
//! and its iterations: compute, then send each peer its bytes and receive
//! each peer's, all at once on non-blocking sockets, timing every
//! iteration.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use linerate_wire::{JobPeer, JobReport, JobTask};
use rustix::event::{PollFd, PollFlags, poll};

use linerate_engine::sockopt::StreamOptions;
use linerate_engine::{EngineError, Result};

/// The first bytes of a job connection.
const MAGIC: &[u8; 6] = b"LRJOB1";
/// How long a connecting peer has to say who it is.
const HELLO_WITHIN: Duration = Duration::from_secs(2);
/// How long a rank waits for its lower-ranked peers to connect.
const CONNECT_WITHIN: Duration = Duration::from_secs(30);
/// How often a waiting exchange looks at its stop flag and its time limit.
const EXCHANGE_TICK: Duration = Duration::from_millis(100);
/// How far apart two ranks' limits may fall: they start at one agreed time
/// on clocks that agree within milliseconds, but a rank on a busy host may
/// start late. A peer that closes within this of this rank's own limit
/// ended at its limit (seen: a peer's reset 1 iteration before the limit).
const LIMIT_SKEW: Duration = Duration::from_secs(1);

/// Why a rank could not connect to its peers.
#[derive(Debug, thiserror::Error)]
enum Unconnected {
    /// A peer of lower rank did not connect in time.
    #[error("rank {peer} did not connect within {} s", CONNECT_WITHIN.as_secs())]
    NotWithin { peer: u32 },
    /// Connecting to a peer of higher rank failed.
    #[error("connecting to rank {peer} at {at}: {error}")]
    Dial {
        peer: u32,
        at: std::net::SocketAddr,
        error: std::io::Error,
    },
    /// The greeting could not be sent.
    #[error("greeting rank {peer}: {error}")]
    Greeting { peer: u32, error: std::io::Error },
    /// The connection's socket options (the run's) or its non-blocking
    /// mode could not be set.
    #[error("rank {peer}: {error}")]
    Setup { peer: u32, error: std::io::Error },
}

/// Why an exchange did not complete.
#[derive(Debug, thiserror::Error)]
enum Unfinished {
    /// The rank was interrupted or reached its limit while waiting.
    #[error("interrupted")]
    GaveUp,
    /// A peer closed or reset its connection.
    #[error("rank {0} closed its connection")]
    PeerClosed(u32),
    /// Waiting for the peers failed.
    #[error("poll: {0}")]
    Poll(rustix::io::Errno),
    /// Reading from a peer failed.
    #[error("from rank {peer}: {error}")]
    Receive { peer: u32, error: std::io::Error },
    /// Writing to a peer failed.
    #[error("to rank {peer}: {error}")]
    Send { peer: u32, error: std::io::Error },
}

type Accepted = Arc<(Mutex<HashMap<u32, TcpStream>>, Condvar)>;

/// Where this agent's rank takes its peers' connections, for as long as
/// the agent runs.
pub struct JobPort {
    port: u16,
    accepted: Accepted,
    open: Arc<AtomicBool>,
}

impl JobPort {
    /// Listens on `ip` (any port) for peers of a run of `size` ranks that
    /// show `token`, when the run has one.
    pub fn open(ip: IpAddr, size: u32, token: Option<String>) -> Result<JobPort> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0))
            .map_err(|e| EngineError::io("opening the job port", e))?;
        let port = listener
            .local_addr()
            .map_err(|e| EngineError::io("reading the job port", e))?
            .port();
        listener
            .set_nonblocking(true)
            .map_err(|e| EngineError::io("a non-blocking job port", e))?;
        let accepted: Accepted = Arc::new((Mutex::new(HashMap::new()), Condvar::new()));
        let open = Arc::new(AtomicBool::new(true));
        let (into, still) = (Arc::clone(&accepted), Arc::clone(&open));
        std::thread::spawn(move || accept_peers(&listener, size, token.as_deref(), &into, &still));
        Ok(JobPort {
            port,
            accepted,
            open,
        })
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connection rank `rank` made, once it is there.
    fn take(&self, rank: u32, until: Instant) -> Option<TcpStream> {
        let (lock, arrived) = &*self.accepted;
        let mut map = lock.lock().ok()?;
        loop {
            if let Some(s) = map.remove(&rank) {
                return Some(s);
            }
            let left = until.checked_duration_since(Instant::now())?;
            map = arrived.wait_timeout(map, left).ok()?.0;
        }
    }
}

impl Drop for JobPort {
    fn drop(&mut self) {
        self.open.store(false, Relaxed);
    }
}

fn accept_peers(
    listener: &TcpListener,
    size: u32,
    token: Option<&str>,
    into: &Accepted,
    open: &AtomicBool,
) {
    while open.load(Relaxed) {
        let mut stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(_) => continue,
        };
        // A stranger that says nothing holds this loop for at most this long.
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(HELLO_WITHIN));
        let Some(rank) = read_hello(&mut stream, token).filter(|&r| r < size) else {
            continue;
        };
        let (lock, arrived) = &**into;
        if let Ok(mut map) = lock.lock() {
            map.entry(rank).or_insert(stream);
            arrived.notify_all();
        }
    }
}

/// The rank a connecting peer names, when it shows the run's token.
fn read_hello(stream: &mut TcpStream, token: Option<&str>) -> Option<u32> {
    let mut head = [0u8; 6 + 4 + 2];
    stream.read_exact(&mut head).ok()?;
    if &head[..6] != MAGIC {
        return None;
    }
    let rank = u32::from_be_bytes(head[6..10].try_into().ok()?);
    let len = usize::from(u16::from_be_bytes([head[10], head[11]]));
    if len > 255 {
        return None;
    }
    let mut shown = vec![0u8; len];
    stream.read_exact(&mut shown).ok()?;
    let shown = String::from_utf8(shown).ok()?;
    match token {
        None => Some(rank),
        Some(want) if linerate_session::transfer_receiver::same_secret(want, &shown) => Some(rank),
        Some(_) => None,
    }
}

fn hello(rank: u32, token: Option<&str>) -> Vec<u8> {
    let token = token.unwrap_or_default().as_bytes();
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&rank.to_be_bytes());
    b.extend_from_slice(&(token.len().min(255) as u16).to_be_bytes());
    b.extend_from_slice(&token[..token.len().min(255)]);
    b
}

/// A peer's connection and this iteration's bytes still to move.
struct Link {
    peer: u32,
    stream: TcpStream,
    bytes: usize,
    to_send: usize,
    to_receive: usize,
}

/// Runs rank `rank` of `task` from `start_at` until its iterations are
/// done, `limit` has passed or `stop` is set.
pub fn run_rank(
    port: &JobPort,
    rank: u32,
    token: Option<&str>,
    task: &JobTask,
    start_at: SystemTime,
    limit: Duration,
    stop: &AtomicBool,
) -> JobReport {
    let mut links = match connect(port, rank, token, task) {
        Ok(l) => l,
        Err(error) => {
            return JobReport {
                iteration_ns: Vec::new(),
                error: Some(error.to_string()),
            };
        }
    };
    if let Ok(wait) = start_at.duration_since(SystemTime::now()) {
        std::thread::sleep(wait.min(Duration::from_secs(60)));
    }
    let started = Instant::now();
    let compute = Duration::from_micros(u64::from(task.compute_us));
    let largest = links.iter().map(|l| l.bytes).max().unwrap_or(0);
    let (outgoing, mut incoming) = (vec![0u8; largest.min(4 << 20)], vec![0u8; 256 << 10]);
    let mut iteration_ns = Vec::with_capacity(task.iterations as usize);
    let mut error = None;
    for i in 0..task.iterations {
        // The limit ends a job as its iteration count does: a background
        // job runs for a set time and reports what it completed.
        if started.elapsed() >= limit {
            break;
        }
        let t0 = Instant::now();
        // Compute is slept, not spun: the node's other cores would run it,
        // and here the ranks share the host's cores with its network stack.
        if !compute.is_zero() {
            std::thread::sleep(compute);
        }
        match exchange(&mut links, &outgoing, &mut incoming, || {
            stop.load(Relaxed) || started.elapsed() >= limit
        }) {
            Ok(()) => {}
            // A peer that stopped at its limit leaves this one's exchange
            // unfinished: that iteration did not complete, and no error.
            Err(Unfinished::GaveUp) if !stop.load(Relaxed) => break,
            Err(Unfinished::PeerClosed(_)) if started.elapsed() + LIMIT_SKEW >= limit => break,
            Err(e) => {
                error = Some(format!("iteration {}: {e}", i + 1));
                break;
            }
        }
        iteration_ns.push(t0.elapsed().as_nanos() as u64);
    }
    JobReport {
        iteration_ns,
        error,
    }
}

/// Connects to the peers of higher rank and takes the connections of
/// those of lower rank.
fn connect(
    port: &JobPort,
    rank: u32,
    token: Option<&str>,
    task: &JobTask,
) -> std::result::Result<Vec<Link>, Unconnected> {
    let until = Instant::now() + CONNECT_WITHIN;
    let options = StreamOptions {
        socket: task.socket.clone(),
        ..StreamOptions::default()
    };
    let mut links = Vec::with_capacity(task.peers.len());
    for p in &task.peers {
        let stream = if p.rank > rank {
            dial(p, rank, token)?
        } else {
            port.take(p.rank, until)
                .ok_or(Unconnected::NotWithin { peer: p.rank })?
        };
        options
            .apply_connected(&stream, true)
            .map_err(|error| Unconnected::Setup {
                peer: p.rank,
                error,
            })?;
        let _ = stream.set_nodelay(true);
        stream
            .set_nonblocking(true)
            .map_err(|error| Unconnected::Setup {
                peer: p.rank,
                error,
            })?;
        let bytes = p.bytes as usize;
        links.push(Link {
            peer: p.rank,
            stream,
            bytes,
            to_send: 0,
            to_receive: 0,
        });
    }
    Ok(links)
}

fn dial(
    p: &JobPeer,
    rank: u32,
    token: Option<&str>,
) -> std::result::Result<TcpStream, Unconnected> {
    let mut stream =
        TcpStream::connect_timeout(&p.addr, CONNECT_WITHIN).map_err(|error| Unconnected::Dial {
            peer: p.rank,
            at: p.addr,
            error,
        })?;
    stream
        .write_all(&hello(rank, token))
        .map_err(|error| Unconnected::Greeting {
            peer: p.rank,
            error,
        })?;
    Ok(stream)
}

/// Sends every peer its bytes and takes every peer's, at once; `give_up`
/// ends a wait that lasts.
fn exchange(
    links: &mut [Link],
    outgoing: &[u8],
    incoming: &mut [u8],
    give_up: impl Fn() -> bool,
) -> std::result::Result<(), Unfinished> {
    for l in links.iter_mut() {
        l.to_send = l.bytes;
        l.to_receive = l.bytes;
    }
    loop {
        let mut fds: Vec<PollFd> = Vec::with_capacity(links.len());
        let mut which: Vec<usize> = Vec::with_capacity(links.len());
        for (i, l) in links.iter().enumerate() {
            let mut flags = PollFlags::empty();
            if l.to_send > 0 {
                flags |= PollFlags::OUT;
            }
            if l.to_receive > 0 {
                flags |= PollFlags::IN;
            }
            if !flags.is_empty() {
                fds.push(PollFd::new(&l.stream, flags));
                which.push(i);
            }
        }
        if fds.is_empty() {
            return Ok(());
        }
        let tick = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: EXCHANGE_TICK.as_nanos() as _,
        };
        match poll(&mut fds, Some(&tick)) {
            Ok(0) if give_up() => {
                return Err(Unfinished::GaveUp);
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(Unfinished::Poll(e)),
        }
        let ready: Vec<(usize, PollFlags)> = fds
            .iter()
            .zip(&which)
            .map(|(f, &i)| (i, f.revents()))
            .collect();
        drop(fds);
        for (i, revents) in ready {
            let l = &mut links[i];
            if revents.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
                && l.to_receive > 0
            {
                let want = l.to_receive.min(incoming.len());
                match l.stream.read(&mut incoming[..want]) {
                    Ok(0) => return Err(Unfinished::PeerClosed(l.peer)),
                    Ok(n) => l.to_receive -= n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                        return Err(Unfinished::PeerClosed(l.peer));
                    }
                    Err(error) => {
                        return Err(Unfinished::Receive {
                            peer: l.peer,
                            error,
                        });
                    }
                }
            }
            if revents.contains(PollFlags::OUT) && l.to_send > 0 {
                let n = l.to_send.min(outgoing.len().max(1));
                match l.stream.write(&outgoing[..n.min(outgoing.len())]) {
                    Ok(n) => l.to_send -= n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::ConnectionReset | ErrorKind::BrokenPipe
                        ) =>
                    {
                        return Err(Unfinished::PeerClosed(l.peer));
                    }
                    Err(error) => {
                        return Err(Unfinished::Send {
                            peer: l.peer,
                            error,
                        });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_wire::{JobKind, SocketParams};

    fn task(peers: Vec<JobPeer>, iterations: u32) -> JobTask {
        JobTask {
            kind: JobKind::AllToAll,
            iterations,
            compute_us: 0,
            socket: SocketParams {
                tos: Some(46 << 2),
                ..SocketParams::default()
            },
            peers,
        }
    }

    /// Three ranks on loopback exchange 100 KB each way every iteration;
    /// a stranger without the token is not taken as a rank.
    #[test]
    fn three_ranks_exchange_every_iteration_and_strangers_are_not_peers() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let token = Some("secret".to_string());
        let ports: Vec<JobPort> = (0..3)
            .map(|_| JobPort::open(ip, 3, token.clone()).unwrap())
            .collect();
        let mut stranger = TcpStream::connect((ip, ports[2].port())).unwrap();
        stranger.write_all(&hello(0, Some("wrong"))).unwrap();
        let start = SystemTime::now() + Duration::from_millis(200);
        let stop = AtomicBool::new(false);
        let reports: Vec<JobReport> = std::thread::scope(|s| {
            let running: Vec<_> = (0..3u32)
                .map(|r| {
                    let peers = (0..3u32)
                        .filter(|&p| p != r)
                        .map(|p| JobPeer {
                            rank: p,
                            addr: SocketAddr::new(ip, ports[p as usize].port()),
                            bytes: 100_000,
                        })
                        .collect();
                    let (port, stop, token) = (&ports[r as usize], &stop, token.as_deref());
                    s.spawn(move || {
                        run_rank(
                            port,
                            r,
                            token,
                            &task(peers, 20),
                            start,
                            Duration::from_secs(60),
                            stop,
                        )
                    })
                })
                .collect();
            running.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (r, rep) in reports.iter().enumerate() {
            assert_eq!(rep.error, None, "rank {r}");
            assert_eq!(rep.iteration_ns.len(), 20, "rank {r}");
        }
    }

    /// Rank 1 connects but never runs: rank 0 waits for its bytes until
    /// the step's time limit and reports what it completed (nothing, and
    /// no error: the limit is a normal end); interrupted, it says so.
    #[test]
    fn a_rank_whose_peer_never_answers_stops_at_the_limit_or_when_interrupted() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        // Each case its own pair: rank 1's port keeps the first connection
        // rank 0 makes and refuses a second one as rank 0.
        let run = |stop: bool, limit: Duration| {
            let ports: Vec<JobPort> = (0..2)
                .map(|_| JobPort::open(ip, 2, None).unwrap())
                .collect();
            let peers = vec![JobPeer {
                rank: 1,
                addr: SocketAddr::new(ip, ports[1].port()),
                bytes: 8,
            }];
            let stop = AtomicBool::new(stop);
            run_rank(
                &ports[0],
                0,
                None,
                &task(peers, 5),
                SystemTime::now(),
                limit,
                &stop,
            )
        };
        let t0 = Instant::now();
        let rep = run(false, Duration::from_millis(300));
        assert!(rep.iteration_ns.is_empty());
        assert_eq!(rep.error, None, "the limit is a normal end");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let rep = run(true, Duration::from_secs(60));
        assert!(
            rep.error
                .as_deref()
                .unwrap_or_default()
                .contains("interrupted"),
            "{rep:?}"
        );
    }

    /// Two ranks whose limits fall apart (one started late on a busy host):
    /// the first to stop closes its connections, and the other ends there
    /// without an error, with the iterations both completed.
    #[test]
    fn a_peer_that_stops_at_its_limit_just_before_this_rank_ends_it_cleanly() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let ports: Vec<JobPort> = (0..2)
            .map(|_| JobPort::open(ip, 2, None).unwrap())
            .collect();
        let peer = |r: u32| JobPeer {
            rank: r,
            addr: SocketAddr::new(ip, ports[r as usize].port()),
            bytes: 64 << 10,
        };
        let stop = AtomicBool::new(false);
        let start = SystemTime::now() + Duration::from_millis(100);
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| {
                let t = task(vec![peer(1)], 100_000);
                run_rank(
                    &ports[0],
                    0,
                    None,
                    &t,
                    start,
                    Duration::from_millis(900),
                    &stop,
                )
            });
            let b = s.spawn(|| {
                let t = task(vec![peer(0)], 100_000);
                run_rank(
                    &ports[1],
                    1,
                    None,
                    &t,
                    start,
                    Duration::from_millis(300),
                    &stop,
                )
            });
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!((a.error.as_deref(), b.error.as_deref()), (None, None));
        assert!(!b.iteration_ns.is_empty());
        assert!(a.iteration_ns.len().abs_diff(b.iteration_ns.len()) <= 1);
    }
}
