//! The hot loops: one thread, one socket, one reused buffer, no allocation and
//! no lock per write or read.

use std::io::{ErrorKind, Write};
use std::net::TcpStream;

use linerate_secure::TlsStream;

use crate::buffer::AlignedBuf;
use linerate_wire::PayloadBytes;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use linerate_probe::{cpu, tcpinfo};
use linerate_result::TcpSample;

use crate::session::control::is_timeout;
use crate::sockopt;

/// What the sampler can see of a running stream. One cache line each, so
/// that streams on different cores never write to a shared line.
#[derive(Default)]
#[repr(align(64))]
pub struct Live {
    /// Payload bytes moved so far.
    pub bytes: AtomicU64,
    /// Set when the stream has ended.
    pub done: AtomicBool,
    /// A UDP receiver's counts so far (`bench --udp`).
    pub udp: UdpLive,
}

/// A UDP receiver's running counts, for the sampler.
#[derive(Default)]
pub struct UdpLive {
    /// Set once the receiver has published its first counts.
    pub active: AtomicBool,
    /// Datagrams received.
    pub datagrams: AtomicU64,
    /// Datagrams the sequence numbers say were sent.
    pub expected: AtomicU64,
    /// Datagrams that came after a later one.
    pub out_of_order: AtomicU64,
    /// Datagrams received twice.
    pub duplicates: AtomicU64,
    /// The jitter in nanoseconds, as f64 bits.
    pub jitter_ns: AtomicU64,
}

impl Live {
    /// A UDP receiver's counts, for the next sample.
    pub fn publish_udp(&self, c: &linerate_wire::UdpCounts) {
        let u = &self.udp;
        u.active.store(true, Relaxed);
        u.datagrams.store(c.datagrams, Relaxed);
        u.expected.store(c.expected, Relaxed);
        u.out_of_order.store(c.out_of_order, Relaxed);
        u.duplicates.store(c.duplicates, Relaxed);
        u.jitter_ns.store(c.jitter_ns.to_bits(), Relaxed);
    }

    /// The UDP receiver's counts so far, if this stream is one.
    pub fn udp_counts(&self) -> Option<linerate_wire::UdpCounts> {
        let u = &self.udp;
        u.active.load(Relaxed).then(|| linerate_wire::UdpCounts {
            datagrams: u.datagrams.load(Relaxed),
            expected: u.expected.load(Relaxed),
            out_of_order: u.out_of_order.load(Relaxed),
            duplicates: u.duplicates.load(Relaxed),
            jitter_ns: f64::from_bits(u.jitter_ns.load(Relaxed)),
        })
    }
}

/// How a stream ended: what it moved, at what cost, and why it stopped.
pub struct Outcome {
    /// A UDP receiver's counts over the run.
    pub udp: Option<linerate_result::UdpCounts>,
    /// Payload bytes moved.
    pub bytes: u64,
    /// When the last byte moved.
    pub last_byte: Instant,
    /// The stream thread's CPU time.
    pub cpu_seconds: f64,
    /// Time the thread waited for a CPU (run queue).
    pub runq_wait_seconds: f64,
    /// A polling receiver's time on reads that found nothing.
    pub poll_idle_seconds: f64,
    /// The last TCP_INFO sample.
    pub tcp: Option<TcpSample>,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
}

impl Outcome {
    /// Closes a stream's loop: marks it done and takes the socket's last
    /// TCP_INFO (read before any shutdown) and the thread's clocks.
    pub fn finish(
        live: &Live,
        clock: &ThreadClock,
        tcp: Option<TcpSample>,
        bytes: u64,
        last_byte: Instant,
        error: Option<String>,
    ) -> Outcome {
        live.done.store(true, Relaxed);
        let (cpu_seconds, runq_wait_seconds) = clock.elapsed();
        Outcome {
            udp: None,
            bytes,
            last_byte,
            cpu_seconds,
            runq_wait_seconds,
            poll_idle_seconds: 0.0,
            tcp,
            error,
        }
    }
}

/// CPU and run-queue time of the calling thread, for the span of a loop.
pub struct ThreadClock {
    cpu: f64,
    wait: f64,
}

impl ThreadClock {
    /// Starts the calling thread's clocks.
    pub fn start() -> Self {
        ThreadClock {
            cpu: cpu::thread_seconds(),
            wait: cpu::thread_run_delay().unwrap_or(0.0),
        }
    }

    /// (CPU seconds, run-queue seconds) since `start`.
    pub fn elapsed(&self) -> (f64, f64) {
        let wait = cpu::thread_run_delay().map_or(0.0, |w| w - self.wait);
        (cpu::thread_seconds() - self.cpu, wait)
    }
}

/// What a sending stream writes, until when and how much.
pub struct SendPlan<'a> {
    /// The bytes written each time.
    pub buf: &'a [u8],
    /// Stop at this time, if set.
    pub deadline: Option<Instant>,
    /// Stop after this many bytes, if set.
    pub quota: Option<u64>,
    /// Send with MSG_ZEROCOPY.
    pub zerocopy: bool,
    /// Set when the user ends the run early: it ends as at its deadline.
    pub stop: Option<&'a AtomicBool>,
}

/// Completion notices are drained every this many zerocopy sends.
const ZEROCOPY_DRAIN_EVERY: u32 = 8;

/// Writes `plan` on `sock` until its end, `abort` or an error.
pub fn send(sock: &TcpStream, plan: &SendPlan, live: &Live, abort: &AtomicBool) -> Outcome {
    let clock = ThreadClock::start();
    let mut writes = 0u32;
    let mut w = sock;
    let (sent, last, error) = send_loop(plan, live, abort, |buf| {
        if !plan.zerocopy {
            return w.write(buf).map(Some);
        }
        writes = writes.wrapping_add(1);
        if writes.is_multiple_of(ZEROCOPY_DRAIN_EVERY) {
            sockopt::drain_error_queue(sock);
        }
        match sockopt::send_zerocopy(sock, buf) {
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                sockopt::drain_error_queue(sock);
                Ok(None)
            }
            other => other.map(Some),
        }
    });
    let tcp = tcpinfo::read(sock).ok();
    if plan.zerocopy {
        sockopt::drain_error_queue(sock);
    }
    let _ = sock.shutdown(std::net::Shutdown::Write);
    Outcome::finish(live, &clock, tcp, sent, last, error)
}

/// The loop of [`send`] and [`send_tls`]: `write` moves part of a buffer
/// and says how much (None: nothing yet, try again), until the quota, the
/// deadline, a stop or an abort. Gives the bytes sent, the time of the
/// last, and why it failed.
fn send_loop(
    plan: &SendPlan,
    live: &Live,
    abort: &AtomicBool,
    mut write: impl FnMut(&[u8]) -> std::io::Result<Option<usize>>,
) -> (u64, Instant, Option<String>) {
    let mut sent = 0u64;
    // One clock read per write: the time after a write is both its last-byte
    // time and the next deadline check.
    let mut now = Instant::now();
    let mut last = now;
    let mut error = None;
    let stopped = || plan.stop.is_some_and(|s| s.load(Relaxed));
    let past_deadline = |t: Instant| plan.deadline.is_some_and(|d| t >= d) || stopped();
    loop {
        let len = match plan.quota {
            Some(q) => (q - sent).min(plan.buf.len() as u64) as usize,
            None => plan.buf.len(),
        };
        if len == 0 || abort.load(Relaxed) || past_deadline(now) {
            break;
        }
        let began = now;
        let r = write(&plan.buf[..len]);
        now = Instant::now();
        match r {
            Ok(None) => {}
            // A stopped receiver's zero window still lets a few bytes out
            // now and then, so a send timeout can come back as a short
            // write: one that waited the whole timeout is a stall.
            Ok(Some(_)) if now.duration_since(began) >= sockopt::IDLE_TIMEOUT => {
                error = Some("the receiver stopped reading (send timed out)".to_string());
                break;
            }
            Ok(Some(n)) => {
                sent += n as u64;
                last = now;
                live.bytes.store(sent, Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // The sampler shut the socket down at the deadline to end a blocked write.
            Err(e) => {
                error = write_failed(&e, past_deadline(now), abort);
                break;
            }
        }
    }
    (sent, last, error)
}

/// Non-blocking receive attempts before a polling receiver blocks, each
/// failed one followed by a yield of the core: well under a millisecond of
/// polling on this kind of machine, enough to bridge the gaps between a fast
/// sender's bursts (see docs/defaults.md).
pub(crate) const RX_POLL_SPINS: u32 = 1000;

/// How a receiving stream reads.
pub struct ReceivePlan {
    /// Discard in the kernel (MSG_TRUNC) instead of copying out.
    pub skip_copy: bool,
    /// Poll before blocking, so the sender never pays for waking us.
    pub poll: bool,
    /// Yield the core after an empty poll, so a sender sharing it runs now.
    pub yield_when_empty: bool,
}

/// Spins between two looks at the clock in [`recv_spinning`].
const SPINS_PER_CHECK: u32 = 4096;

/// A non-blocking receive tried until bytes come or `until` passes
/// (`AGAIN` then), the clock read only every few thousand tries.
pub(crate) fn recv_spinning(
    fd: impl std::os::fd::AsFd,
    buf: &mut [u8],
    until: Instant,
) -> rustix::io::Result<usize> {
    loop {
        for _ in 0..SPINS_PER_CHECK {
            match rustix::net::recv(&fd, &mut *buf, rustix::net::RecvFlags::DONTWAIT) {
                Err(rustix::io::Errno::AGAIN) => std::hint::spin_loop(),
                other => return other.map(|(n, _)| n),
            }
        }
        if Instant::now() >= until {
            return Err(rustix::io::Errno::AGAIN);
        }
    }
}

/// One receive. A polling reader first tries up to [`RX_POLL_SPINS`]
/// non-blocking receives, yielding the core after each empty one when
/// `yield_when_empty`, then blocks.
pub fn recv_polled(
    sock: &TcpStream,
    buf: &mut [u8],
    flags: rustix::net::RecvFlags,
    poll: bool,
    yield_when_empty: bool,
) -> rustix::io::Result<usize> {
    let mut idle = PollIdle::default();
    recv_polled_idle(sock, buf, flags, poll, yield_when_empty, &mut idle)
}

/// The time a polling reader spent on reads that found nothing: from its
/// first empty read to the read that found data or to its blocking one.
/// The clock is read twice per empty streak, never on a read that finds
/// data at once.
#[derive(Default)]
pub(crate) struct PollIdle {
    pub(crate) seconds: f64,
}

/// [`recv_polled`], adding the time its empty reads took to `idle`: what
/// a polling thread's CPU share holds besides the work it did
/// (docs/verdict.md#polling).
pub(crate) fn recv_polled_idle(
    sock: &TcpStream,
    buf: &mut [u8],
    flags: rustix::net::RecvFlags,
    poll: bool,
    yield_when_empty: bool,
    idle: &mut PollIdle,
) -> rustix::io::Result<usize> {
    use rustix::net::{RecvFlags, recv};
    if !poll {
        return recv(sock, buf, flags).map(|(n, _)| n);
    }
    let mut empty_since: Option<Instant> = None;
    let mut done = |since: Option<Instant>| {
        if let Some(t) = since {
            idle.seconds += t.elapsed().as_secs_f64();
        }
    };
    for _ in 0..RX_POLL_SPINS {
        match recv(sock, &mut *buf, flags | RecvFlags::DONTWAIT) {
            Err(rustix::io::Errno::AGAIN) => {
                empty_since.get_or_insert_with(Instant::now);
                if yield_when_empty {
                    std::thread::yield_now();
                }
            }
            other => {
                done(empty_since);
                return other.map(|(n, _)| n);
            }
        }
    }
    done(empty_since);
    recv(sock, buf, flags).map(|(n, _)| n)
}

/// Reads `sock` until the peer closes, `abort` or an error.
pub fn receive(
    sock: &TcpStream,
    buf: &mut [u8],
    plan: &ReceivePlan,
    live: &Live,
    abort: &AtomicBool,
) -> Outcome {
    use rustix::net::RecvFlags;
    let clock = ThreadClock::start();
    let mut got = 0u64;
    let mut last = Instant::now();
    let mut error = None;
    // With MSG_TRUNC, TCP discards the bytes in the kernel: no copy out.
    let flags = if plan.skip_copy {
        RecvFlags::TRUNC
    } else {
        RecvFlags::empty()
    };
    let mut idle = PollIdle::default();
    loop {
        let res = recv_polled_idle(
            sock,
            buf,
            flags,
            plan.poll,
            plan.yield_when_empty,
            &mut idle,
        )
        .map_err(std::io::Error::from);
        match res {
            Ok(0) => break,
            Ok(n) => {
                got += n as u64;
                last = Instant::now();
                live.bytes.store(got, Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                error = read_failed(&e, abort);
                break;
            }
        }
    }
    let tcp = tcpinfo::read(sock).ok();
    Outcome {
        poll_idle_seconds: idle.seconds,
        ..Outcome::finish(live, &clock, tcp, got, last, error)
    }
}

/// [`send`] through TLS (`bench --encrypt`): each write sealed and sent,
/// what the peer must know it ended told in TLS before the socket's end.
pub fn send_tls(
    sock: &TcpStream,
    tls: &mut TlsStream,
    plan: &SendPlan,
    live: &Live,
    abort: &AtomicBool,
) -> Outcome {
    let clock = ThreadClock::start();
    let mut w = sock;
    let (sent, last, error) = send_loop(plan, live, abort, |buf| {
        // A write cut by a signal may have sealed part of `buf` already:
        // not one to repeat whole.
        tls.write_all(&mut w, buf)
            .map(|()| Some(buf.len()))
            .map_err(|e| match e.kind() {
                ErrorKind::Interrupted => std::io::Error::other(e),
                _ => e,
            })
    });
    let tcp = tcpinfo::read(sock).ok();
    let _ = tls.close(&mut w);
    let _ = sock.shutdown(std::net::Shutdown::Write);
    Outcome::finish(live, &clock, tcp, sent, last, error)
}

/// [`receive`] through TLS: every record decrypted and authenticated,
/// its plaintext counted where rustls left it.
pub fn receive_tls(
    sock: &TcpStream,
    tls: &mut TlsStream,
    live: &Live,
    abort: &AtomicBool,
) -> Outcome {
    let clock = ThreadClock::start();
    let (mut got, mut last) = (0u64, Instant::now());
    let mut error = None;
    let mut r = sock;
    loop {
        let mut n = 0;
        match tls.read_with(&mut r, |d| {
            n = d.len();
            n
        }) {
            // A timed run's sender shuts its socket down at the deadline,
            // mid-record if a write was blocked: what was authenticated
            // before counts, as in the clear.
            Ok(false) => break,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => break,
            Ok(true) => {
                got += n as u64;
                last = Instant::now();
                live.bytes.store(got, Relaxed);
            }
            Err(e) => {
                error = read_failed(&e, abort);
                break;
            }
        }
    }
    let tcp = tcpinfo::read(sock).ok();
    Outcome::finish(live, &clock, tcp, got, last, error)
}

/// Why a stream's write failed, or None when it only ended a run at its
/// deadline (the sampler shut the socket down to end a blocked write).
pub(crate) fn write_failed(
    e: &std::io::Error,
    at_deadline: bool,
    abort: &AtomicBool,
) -> Option<String> {
    if at_deadline {
        return None;
    }
    if is_timeout(e) {
        return Some("the receiver stopped reading (send timed out)".to_string());
    }
    // One broken stream ends the run: the others stop now, not at their deadline.
    abort.store(true, Relaxed);
    Some(format!("send failed: {e}"))
}

/// Why a stream's read failed, or None when the run was already ending.
pub(crate) fn read_failed(e: &std::io::Error, abort: &AtomicBool) -> Option<String> {
    if abort.load(Relaxed) {
        return None;
    }
    if is_timeout(e) {
        return Some("no data from the sender for too long".to_string());
    }
    abort.store(true, Relaxed);
    Some(format!("receive failed: {e}"))
}

/// A payload of at least `len` bytes of the kind asked for, shared by
/// every bench that sends at once: a server's senders read it and never
/// write it, so sixteen sessions asking for 256 MiB writes hold one 256 MiB
/// buffer of each kind, not sixteen (docs/security.md#fair-shares). Every
/// payload is a prefix of a longer one of its kind, so the longest made so
/// far serves all shorter ones.
pub(crate) fn shared_payload(bytes: PayloadBytes, len: usize) -> std::sync::Arc<AlignedBuf> {
    use std::sync::{Arc, Mutex, Weak};
    static SHARED: [Mutex<Weak<AlignedBuf>>; 2] =
        [Mutex::new(Weak::new()), Mutex::new(Weak::new())];
    let mut held = crate::lock(&SHARED[bytes as usize]);
    if let Some(p) = held.upgrade()
        && p.len() >= len
    {
        return p;
    }
    let p = Arc::new(match bytes {
        PayloadBytes::Random => AlignedBuf::from_slice(&pattern(len)),
        PayloadBytes::Zeros => AlignedBuf::new(len),
    });
    *held = Arc::downgrade(&p);
    p
}

/// `len` bytes of the kind asked for, to fill a sender's own buffer.
pub fn payload(bytes: PayloadBytes, len: usize) -> Vec<u8> {
    match bytes {
        PayloadBytes::Random => pattern(len),
        PayloadBytes::Zeros => vec![0; len],
    }
}

/// A pseudo-random payload of `len` bytes (xorshift): not zeros, so a
/// compressing path cannot flatter the rate.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_payload_kind_is_its_bytes_and_shared_by_its_senders() {
        let zeros = shared_payload(PayloadBytes::Zeros, 1 << 16);
        assert!(zeros.iter().all(|&b| b == 0));
        let random = shared_payload(PayloadBytes::Random, 1 << 16);
        assert_eq!(random[..], pattern(1 << 16)[..]);
        // A shorter ask is served by the longer buffer held; the kinds never mix.
        assert!(std::sync::Arc::ptr_eq(
            &zeros,
            &shared_payload(PayloadBytes::Zeros, 4096)
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &random,
            &shared_payload(PayloadBytes::Zeros, 4096)
        ));
        assert!(payload(PayloadBytes::Zeros, 100).iter().all(|&b| b == 0));
        assert_eq!(payload(PayloadBytes::Random, 100), pattern(100));
    }
}
