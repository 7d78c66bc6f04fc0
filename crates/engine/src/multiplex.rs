//! Many bench streams on one thread (`bench --threads N`): an epoll loop
//! that sends on (or receives from) every socket of its group as each
//! becomes ready, so a thousand streams do not need a thousand threads.
//! Not the default: a thread a stream measured faster and cheaper per
//! byte here, even at 64 streams on 2 cores (docs/defaults.md#stream-threads).
//!
//! The loops keep the per-stream semantics of [`crate::stream::send`] and
//! [`crate::stream::receive`]: the same quota, deadline and stop, the same
//! stall timeout, TCP_INFO read before the write side is shut, and each
//! stream's [`Live`] counter updated as its bytes move. A thread's CPU and
//! run-queue time are shared among its streams by the bytes each moved.

use std::borrow::Borrow;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use rustix::buffer::spare_capacity;
use rustix::event::{Timespec, epoll};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use linerate_probe::tcpinfo;

use crate::sockopt::IDLE_TIMEOUT;
use crate::stream::{self, Live, Outcome, SendPlan, ThreadClock};

/// Longest wait for readiness: how soon a loop notices a stop, an abort
/// or a stalled stream when nothing else happens.
pub(crate) const TICK: Duration = Duration::from_millis(50);
/// Reads or writes on one ready socket before the loop moves on to the
/// next: enough to empty or fill its buffer, so a wake is not spent on a
/// sliver (4 a wake cost a loop twice the CPU per byte of 64,
/// docs/defaults.md#receive-pool); the socket's buffer bounds a turn, so
/// one fast stream cannot starve the others of the thread.
const TURNS_PER_WAKE: u32 = 64;

/// One stream of a loop: its socket and what it moved so far. A bench's
/// own loops borrow the socket and counter; the server's receive pool
/// ([`crate::pool`]) owns them.
pub(crate) struct Member<S: Borrow<TcpStream>, L: Borrow<Live>> {
    pub(crate) sock: S,
    live: L,
    pub(crate) bytes: u64,
    pub(crate) last_byte: Instant,
    pub(crate) last_progress: Instant,
    /// Bytes to send in all (a byte-count run); None: until the deadline.
    quota: Option<u64>,
    pub(crate) tcp: Option<linerate_result::TcpSample>,
    pub(crate) error: Option<String>,
    pub(crate) done: bool,
}

/// A member of a bench's own loop.
type Borrowed<'a> = Member<&'a TcpStream, &'a Live>;

impl<S: Borrow<TcpStream>, L: Borrow<Live>> Member<S, L> {
    pub(crate) fn new(sock: S, live: L, now: Instant) -> Self {
        Member {
            sock,
            live,
            bytes: 0,
            last_byte: now,
            last_progress: now,
            quota: None,
            tcp: None,
            error: None,
            done: false,
        }
    }

    fn moved(&mut self, n: usize, now: Instant) {
        self.bytes += n as u64;
        self.last_byte = now;
        self.last_progress = now;
        self.live.borrow().bytes.store(self.bytes, Relaxed);
    }
}

/// The epoll set of a group, each socket non-blocking and known by its
/// place in the group.
fn register(
    members: &[Borrowed],
    interest: epoll::EventFlags,
) -> std::io::Result<rustix::fd::OwnedFd> {
    let ep = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    for (i, m) in members.iter().enumerate() {
        m.sock.set_nonblocking(true)?;
        epoll::add(&ep, m.sock, epoll::EventData::new_u64(i as u64), interest)?;
    }
    Ok(ep)
}

/// [`register`], or every member ended with the reason it could not be.
fn watch(
    members: &mut [Borrowed],
    interest: epoll::EventFlags,
    shut_write: bool,
) -> Option<rustix::fd::OwnedFd> {
    match register(members, interest) {
        Ok(ep) => Some(ep),
        Err(e) => {
            let why = format!("could not watch the streams: {e}");
            end_all(members, Some(&why), shut_write);
            None
        }
    }
}

/// The indexes of the members ready now, waiting up to `timeout`; kept in
/// `ready` (reused, so a wake allocates nothing).
pub(crate) fn wait_ready(
    ep: &rustix::fd::OwnedFd,
    events: &mut Vec<epoll::Event>,
    ready: &mut Vec<usize>,
    timeout: Duration,
) {
    events.clear();
    ready.clear();
    let ts = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    // EINTR and the like: nothing is ready, the caller looks again.
    if epoll::wait(ep, spare_capacity(events), Some(&ts)).is_ok() {
        ready.extend(events.iter().map(|e| e.data.u64() as usize));
    }
}

/// Ends every member still running with `error` (None: a normal end).
fn end_all(members: &mut [Borrowed], error: Option<&str>, shut_write: bool) {
    for m in members.iter_mut().filter(|m| !m.done) {
        finish(m, error.map(str::to_string), shut_write);
    }
}

pub(crate) fn finish<S: Borrow<TcpStream>, L: Borrow<Live>>(
    m: &mut Member<S, L>,
    error: Option<String>,
    shut_write: bool,
) {
    let sock = m.sock.borrow();
    m.tcp = tcpinfo::read(sock).ok();
    if shut_write {
        let _ = sock.shutdown(Shutdown::Write);
    }
    m.error = error;
    m.done = true;
    m.live.borrow().done.store(true, Relaxed);
}

/// Each member's outcome, the thread's CPU and run-queue time shared by
/// the bytes each moved (evenly when none moved any).
fn outcomes(members: Vec<Borrowed>, clock: &ThreadClock) -> Vec<Outcome> {
    let (cpu, wait) = clock.elapsed();
    let total: u64 = members.iter().map(|m| m.bytes).sum();
    let count = members.len().max(1) as f64;
    members
        .into_iter()
        .map(|m| {
            let share = if total == 0 {
                1.0 / count
            } else {
                m.bytes as f64 / total as f64
            };
            let _ = m.sock.set_nonblocking(false);
            Outcome {
                udp: None,
                bytes: m.bytes,
                last_byte: m.last_byte,
                cpu_seconds: cpu * share,
                runq_wait_seconds: wait * share,
                poll_idle_seconds: 0.0,
                tcp: m.tcp,
                error: m.error,
            }
        })
        .collect()
}

/// Sends `plan` on every socket of the group from one thread, each up to
/// its quota (the plan's own is not used).
pub(crate) fn send_many(
    group: &[(&TcpStream, &Live)],
    quotas: &[Option<u64>],
    plan: &SendPlan,
    abort: &AtomicBool,
) -> Vec<Outcome> {
    let clock = ThreadClock::start();
    let now = Instant::now();
    let mut members: Vec<Borrowed> = group
        .iter()
        .zip(quotas)
        .map(|(&(s, l), &quota)| Member {
            quota,
            ..Member::new(s, l, now)
        })
        .collect();
    let Some(ep) = watch(&mut members, epoll::EventFlags::OUT, true) else {
        return outcomes(members, &clock);
    };
    let stopped = || plan.stop.is_some_and(|s| s.load(Relaxed));
    let mut events = Vec::with_capacity(members.len());
    let mut ready = Vec::with_capacity(members.len());
    while members.iter().any(|m| !m.done) {
        let now = Instant::now();
        if abort.load(Relaxed) || stopped() || plan.deadline.is_some_and(|d| now >= d) {
            end_all(&mut members, None, true);
            break;
        }
        let timeout = plan
            .deadline
            .map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        wait_ready(&ep, &mut events, &mut ready, timeout);
        for &i in &ready {
            let Some(m) = members.get_mut(i).filter(|m| !m.done) else {
                continue;
            };
            send_turns(m, plan, abort);
            if m.done {
                let _ = epoll::delete(&ep, m.sock);
            }
        }
        let now = Instant::now();
        for m in members.iter_mut().filter(|m| !m.done) {
            if now.duration_since(m.last_progress) >= IDLE_TIMEOUT {
                let why = "the receiver stopped reading (send timed out)".to_string();
                finish(m, Some(why), true);
            }
        }
    }
    outcomes(members, &clock)
}

/// Up to [`TURNS_PER_WAKE`] writes on a ready socket.
fn send_turns(m: &mut Borrowed, plan: &SendPlan, abort: &AtomicBool) {
    for _ in 0..TURNS_PER_WAKE {
        let len = match m.quota {
            Some(q) => (q - m.bytes).min(plan.buf.len() as u64) as usize,
            None => plan.buf.len(),
        };
        if len == 0 {
            finish(m, None, true);
            return;
        }
        match rustix::net::send(
            m.sock,
            &plan.buf[..len],
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        ) {
            Ok(n) => m.moved(n, Instant::now()),
            Err(Errno::AGAIN) => return,
            Err(Errno::INTR) => {}
            Err(e) => {
                // The sampler shuts the sockets down at the deadline.
                let now = Instant::now();
                let at_deadline = plan.deadline.is_some_and(|d| now >= d)
                    || plan.stop.is_some_and(|s| s.load(Relaxed));
                let error = stream::write_failed(&e.into(), at_deadline, abort);
                finish(m, error, true);
                return;
            }
        }
    }
}

/// Receives on every socket of the group from one thread until each
/// sender ends its stream.
pub(crate) fn receive_many(
    group: &[(&TcpStream, &Live)],
    buf: &mut [u8],
    skip_copy: bool,
    abort: &AtomicBool,
) -> Vec<Outcome> {
    let clock = ThreadClock::start();
    let now = Instant::now();
    let mut members: Vec<Borrowed> = group.iter().map(|&(s, l)| Member::new(s, l, now)).collect();
    let Some(ep) = watch(
        &mut members,
        epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
        false,
    ) else {
        return outcomes(members, &clock);
    };
    let flags = receive_flags(skip_copy);
    let mut events = Vec::with_capacity(members.len());
    let mut ready = Vec::with_capacity(members.len());
    while members.iter().any(|m| !m.done) {
        wait_ready(&ep, &mut events, &mut ready, TICK);
        for &i in &ready {
            let Some(m) = members.get_mut(i).filter(|m| !m.done) else {
                continue;
            };
            receive_turns(m, buf, flags, abort);
            if m.done {
                let _ = epoll::delete(&ep, m.sock);
            }
        }
        let now = Instant::now();
        for m in members.iter_mut().filter(|m| !m.done) {
            if abort.load(Relaxed) {
                finish(m, None, false);
            } else if now.duration_since(m.last_progress) >= IDLE_TIMEOUT {
                abort.store(true, Relaxed);
                finish(
                    m,
                    Some("no data from the sender for too long".into()),
                    false,
                );
            }
        }
    }
    outcomes(members, &clock)
}

/// A loop's receive flags: with MSG_TRUNC, TCP discards the bytes in the
/// kernel, no copy out.
pub(crate) fn receive_flags(skip_copy: bool) -> RecvFlags {
    RecvFlags::DONTWAIT
        | if skip_copy {
            RecvFlags::TRUNC
        } else {
            RecvFlags::empty()
        }
}

/// Up to [`TURNS_PER_WAKE`] reads on a ready socket.
pub(crate) fn receive_turns<S: Borrow<TcpStream>, L: Borrow<Live>>(
    m: &mut Member<S, L>,
    buf: &mut [u8],
    flags: RecvFlags,
    abort: &AtomicBool,
) {
    for _ in 0..TURNS_PER_WAKE {
        match rustix::net::recv(m.sock.borrow(), &mut *buf, flags) {
            Ok((0, _)) => {
                finish(m, None, false);
                return;
            }
            Ok((n, _)) => m.moved(n, Instant::now()),
            Err(Errno::AGAIN) => return,
            Err(Errno::INTR) => {}
            Err(e) => {
                finish(m, stream::read_failed(&e.into(), abort), false);
                return;
            }
        }
    }
}
