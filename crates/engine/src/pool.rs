//! A server's receive loops, shared by all its sessions: the plain TCP
//! streams a bench receives join one of a few epoll loops (one a core)
//! instead of a thread each. An agent's server takes every flow of an
//! incast or a mesh this way, so a host receiving 64 flows runs its
//! streams on 2 loops rather than 64 threads (docs/defaults.md#receive-pool).
//!
//! A stream keeps the rules of [`crate::stream::receive`]: it ends at the
//! sender's FIN or when its session shuts it down; no data for
//! [`IDLE_TIMEOUT`] ends it and every stream of its session. A loop's CPU
//! and run-queue time are shared among its streams by the bytes each
//! received since the last share-out.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::{JoinHandle, Thread};
use std::time::Instant;

use rustix::event::{EventfdFlags, epoll};
use rustix::fd::OwnedFd;

use crate::lock;
use crate::multiplex::{self, Member, TICK};
use crate::sockopt::IDLE_TIMEOUT;
use crate::stream::{Live, Outcome, ThreadClock};

/// The epoll data of a loop's wake-up eventfd; streams use their slot.
const WAKE: u64 = u64::MAX;

/// A receiving stream handed to the pool.
pub(crate) struct Job {
    /// The session's socket (a duplicate: the session still shuts it down).
    pub sock: TcpStream,
    pub live: Arc<Live>,
    pub read_len: usize,
    pub skip_copy: bool,
    /// Shared by the streams of one session: set when one of them stalls,
    /// it ends the others.
    pub abort: Arc<AtomicBool>,
    /// The stream's place in its session, sent back with its outcome.
    pub index: usize,
    pub done: mpsc::Sender<(usize, Outcome)>,
    /// Woken when the stream ends, so the session's sampler notices at once.
    pub sampler: Thread,
}

/// One loop: where jobs are queued and the eventfd that wakes it.
struct Loop {
    jobs: Mutex<Vec<Job>>,
    wake: OwnedFd,
}

impl Loop {
    fn ring(&self) {
        // A full counter (2^64 - 2 rings unread) still wakes the loop.
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }
}

/// The receive pool: one epoll loop a core, shared by every session's receiving streams.
pub struct ReceivePool {
    loops: Vec<Arc<Loop>>,
    threads: Vec<JoinHandle<()>>,
    next: AtomicUsize,
    closing: Arc<AtomicBool>,
}

impl ReceivePool {
    /// Starts `loops` receive loops (at least one).
    pub fn start(loops: usize) -> std::io::Result<ReceivePool> {
        let closing = Arc::new(AtomicBool::new(false));
        let mut pool = ReceivePool {
            loops: Vec::new(),
            threads: Vec::new(),
            next: AtomicUsize::new(0),
            closing: Arc::clone(&closing),
        };
        for n in 0..loops.max(1) {
            let lp = Arc::new(Loop {
                jobs: Mutex::new(Vec::new()),
                wake: rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?,
            });
            let ep = epoll::create(epoll::CreateFlags::CLOEXEC)?;
            let wake = epoll::EventData::new_u64(WAKE);
            epoll::add(&ep, &lp.wake, wake, epoll::EventFlags::IN)?;
            let (mine, closing) = (Arc::clone(&lp), Arc::clone(&closing));
            let thread = std::thread::Builder::new()
                .name(format!("receive-{n}"))
                .spawn(move || run(&mine, &ep, &closing))?;
            pool.loops.push(lp);
            pool.threads.push(thread);
        }
        Ok(pool)
    }

    /// How many loops receive.
    pub fn loops(&self) -> usize {
        self.loops.len()
    }

    /// Hands a stream to the next loop, round robin.
    pub(crate) fn submit(&self, job: Job) {
        let n = self.next.fetch_add(1, Relaxed) % self.loops.len();
        let lp = &self.loops[n];
        lock(&lp.jobs).push(job);
        lp.ring();
    }
}

impl Drop for ReceivePool {
    /// Each loop ends once its streams have.
    fn drop(&mut self) {
        self.closing.store(true, Relaxed);
        for lp in &self.loops {
            lp.ring();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A stream in a loop, with what it is owed of the loop's clocks.
struct Pooled {
    m: Member<TcpStream, Arc<Live>>,
    job: JobEnd,
    /// Bytes at the last share-out of the loop's clocks.
    bytes_shared: u64,
    cpu_seconds: f64,
    runq_wait_seconds: f64,
}

/// What a stream's end needs of its job.
struct JobEnd {
    index: usize,
    done: mpsc::Sender<(usize, Outcome)>,
    sampler: Thread,
    abort: Arc<AtomicBool>,
    read_len: usize,
    skip_copy: bool,
}

/// One loop's thread: takes new streams when woken, reads ready ones,
/// shares out its clocks every tick and when a stream ends.
fn run(lp: &Loop, ep: &OwnedFd, closing: &AtomicBool) {
    let mut slots: Vec<Option<Pooled>> = Vec::new();
    let mut buf = Vec::new();
    let mut events = Vec::with_capacity(64);
    let mut ready = Vec::with_capacity(64);
    let mut clock = ThreadClock::start();
    let mut last_tick = Instant::now();
    loop {
        multiplex::wait_ready(ep, &mut events, &mut ready, TICK);
        let mut ended = false;
        for &i in &ready {
            if i as u64 == WAKE {
                let mut count = [0u8; 8];
                let _ = rustix::io::read(&lp.wake, &mut count);
                ended |= take_jobs(lp, ep, &mut slots);
                continue;
            }
            let Some(p) = slots.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if buf.len() < p.job.read_len {
                buf.resize(p.job.read_len, 0);
            }
            let flags = multiplex::receive_flags(p.job.skip_copy);
            multiplex::receive_turns(&mut p.m, &mut buf[..p.job.read_len], flags, &p.job.abort);
            ended |= p.m.done;
        }
        let now = Instant::now();
        let tick = now.duration_since(last_tick) >= TICK;
        if tick {
            ended |= end_stalled(&mut slots, now);
        }
        if ended || tick {
            share_clocks(&mut slots, &mut clock);
            last_tick = now;
        }
        if ended {
            end_done(ep, &mut slots);
        }
        if closing.load(Relaxed) && slots.iter().all(Option::is_none) {
            return;
        }
    }
}

/// Moves the queued jobs into the loop's slots and its epoll set;
/// whether one of them could not be watched (and so ended).
fn take_jobs(lp: &Loop, ep: &OwnedFd, slots: &mut Vec<Option<Pooled>>) -> bool {
    let mut ended = false;
    let jobs = std::mem::take(&mut *lock(&lp.jobs));
    for job in jobs {
        let slot = match slots.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                slots.push(None);
                slots.len() - 1
            }
        };
        let (sock, live) = (job.sock, job.live);
        let mut p = Pooled {
            m: Member::new(sock, live, Instant::now()),
            job: JobEnd {
                index: job.index,
                done: job.done,
                sampler: job.sampler,
                abort: job.abort,
                read_len: job.read_len.max(1),
                skip_copy: job.skip_copy,
            },
            bytes_shared: 0,
            cpu_seconds: 0.0,
            runq_wait_seconds: 0.0,
        };
        let watched = p.m.sock.set_nonblocking(true).and_then(|()| {
            let interest = epoll::EventFlags::IN | epoll::EventFlags::RDHUP;
            epoll::add(
                ep,
                &p.m.sock,
                epoll::EventData::new_u64(slot as u64),
                interest,
            )
            .map_err(std::io::Error::from)
        });
        if let Err(e) = watched {
            multiplex::finish(
                &mut p.m,
                Some(format!("could not watch the stream: {e}")),
                false,
            );
            ended = true;
        }
        slots[slot] = Some(p);
    }
    ended
}

/// Ends, once a tick, each stream whose session gave up (another of its
/// streams stalled) or that had no data for [`IDLE_TIMEOUT`], which also
/// gives up its session; whether any ended.
fn end_stalled(slots: &mut [Option<Pooled>], now: Instant) -> bool {
    let mut ended = false;
    for p in slots.iter_mut().flatten().filter(|p| !p.m.done) {
        if p.job.abort.load(Relaxed) {
            multiplex::finish(&mut p.m, None, false);
        } else if now.duration_since(p.m.last_progress) >= IDLE_TIMEOUT {
            p.job.abort.store(true, Relaxed);
            let why = "no data from the sender for too long".to_string();
            multiplex::finish(&mut p.m, Some(why), false);
        }
        ended |= p.m.done;
    }
    ended
}

/// Shares the loop's CPU and run-queue time since the last share-out
/// among its streams by the bytes each received (evenly when none did).
fn share_clocks(slots: &mut [Option<Pooled>], clock: &mut ThreadClock) {
    let (cpu, wait) = clock.elapsed();
    *clock = ThreadClock::start();
    let moved: u64 = slots
        .iter()
        .flatten()
        .map(|p| p.m.bytes - p.bytes_shared)
        .sum();
    let count = slots.iter().flatten().count().max(1) as f64;
    for p in slots.iter_mut().flatten() {
        let share = if moved == 0 {
            1.0 / count
        } else {
            (p.m.bytes - p.bytes_shared) as f64 / moved as f64
        };
        p.cpu_seconds += cpu * share;
        p.runq_wait_seconds += wait * share;
        p.bytes_shared = p.m.bytes;
    }
}

/// Sends each ended stream's outcome to its session and frees its slot.
fn end_done(ep: &OwnedFd, slots: &mut [Option<Pooled>]) {
    for slot in slots.iter_mut() {
        if !slot.as_ref().is_some_and(|p| p.m.done) {
            continue;
        }
        let Some(p) = slot.take() else { continue };
        let _ = epoll::delete(ep, &p.m.sock);
        let _ = p.m.sock.set_nonblocking(false);
        let outcome = Outcome {
            udp: None,
            bytes: p.m.bytes,
            last_byte: p.m.last_byte,
            cpu_seconds: p.cpu_seconds,
            runq_wait_seconds: p.runq_wait_seconds,
            poll_idle_seconds: 0.0,
            tcp: p.m.tcp,
            error: p.m.error,
        };
        // A session that gave up waiting dropped its receiver: nothing to tell.
        let _ = p.job.done.send((p.job.index, outcome));
        p.job.sampler.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// A connected pair on loopback: (the sender's end, the receiver's).
    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (tx, l.accept().unwrap().0)
    }

    #[test]
    fn streams_of_two_sessions_share_one_loop_and_each_gets_its_own_outcome() {
        let pool = ReceivePool::start(1).unwrap();
        let sizes = [3 << 20, 1, 0, 5 << 20];
        let (done, outcomes) = mpsc::channel();
        let sessions = [
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        ];
        let mut senders = Vec::new();
        let mut lives = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let (mut tx, rx) = pair();
            let live = Arc::new(Live::default());
            pool.submit(Job {
                sock: rx,
                live: Arc::clone(&live),
                read_len: 64 << 10,
                skip_copy: i % 2 == 0,
                abort: Arc::clone(&sessions[i % 2]),
                index: i,
                done: done.clone(),
                sampler: std::thread::current(),
            });
            lives.push(live);
            senders.push(std::thread::spawn(move || {
                tx.write_all(&vec![7u8; n]).unwrap();
            }));
        }
        drop(done);
        for s in senders {
            s.join().unwrap();
        }
        let mut got: Vec<(usize, Outcome)> = outcomes.iter().collect();
        got.sort_by_key(|(i, _)| *i);
        assert_eq!(got.len(), sizes.len());
        for ((i, o), &n) in got.iter().zip(&sizes) {
            assert_eq!(o.bytes, n as u64, "stream {i}");
            assert!(o.error.is_none(), "stream {i}: {:?}", o.error);
            assert!(o.tcp.is_some());
            assert!(lives[*i].done.load(Relaxed));
            assert_eq!(lives[*i].bytes.load(Relaxed), n as u64);
        }
        // The loop's CPU went to the streams that moved bytes.
        assert!(got[0].1.cpu_seconds + got[3].1.cpu_seconds >= got[1].1.cpu_seconds);
        assert!(sessions.iter().all(|s| !s.load(Relaxed)));
    }

    #[test]
    fn a_session_shutting_its_socket_down_ends_the_stream_and_dropping_the_pool_ends_its_loops() {
        let pool = ReceivePool::start(2).unwrap();
        assert_eq!(pool.loops(), 2);
        let (_tx, rx) = pair();
        let session_end = rx.try_clone().unwrap();
        let (done, outcome) = mpsc::channel();
        pool.submit(Job {
            sock: rx,
            live: Arc::default(),
            read_len: 1 << 10,
            skip_copy: false,
            abort: Arc::default(),
            index: 0,
            done,
            sampler: std::thread::current(),
        });
        // The sender never sends: only the session's shutdown ends it.
        session_end.shutdown(std::net::Shutdown::Read).unwrap();
        let (_, o) = outcome
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        assert_eq!(o.bytes, 0);
        drop(pool);
    }
}
