//! A bench stream over UDP: its datagram socket, paired over the stream's
//! TCP connection on the server's own port, the paced sender and the
//! counting receiver. The TCP connection stays open beside it: it pairs
//! the sockets, and carries the sender's count of datagrams at the end, so
//! a lost tail is counted as lost.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use linerate_wire::{DATAGRAM_HEADER_LEN, DatagramHeader, UdpCounter, UdpCounts, UdpParams};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use crate::sockopt;
use crate::stream::{Live, Outcome, ThreadClock};

/// Most datagrams handed to the kernel in one send with GSO (its limit is 64
/// segments and 64 KiB).
const GSO_SEGMENTS: usize = 64;
const GSO_BYTES: usize = 65_000;
/// A sender ahead of its rate by more than this sleeps; less, it spins.
const SLEEP_ABOVE: Duration = Duration::from_micros(200);
/// The receive buffer a UDP receiver asks for unless told (-w): with the
/// kernel's 208 KiB default, loopback lost 0.03 % of datagrams at 800
/// Mbit/s and 0.3 % at 4 Gbit/s; with 4 MiB none (docs/defaults.md#udp).
pub(crate) const RCVBUF: u32 = 4 << 20;
/// How long a receiver blocks in one wait for datagrams or the sender's count.
const WAIT: Duration = Duration::from_millis(50);
/// How often a sender checks that its stream's TCP connection still
/// stands: datagrams stop within this of the receiver leaving, so a bench
/// cannot go on aiming at an address whose client is gone
/// (docs/security.md#no-amplification).
const PEER_CHECK_EVERY: Duration = Duration::from_millis(100);

/// Pairs a stream's datagram sockets over its TCP connection: the client
/// binds a port and says which; the server binds its own port (beside the
/// other streams', SO_REUSEADDR), connects it to the client's and
/// answers; the client then connects to the server's. Connected, each
/// socket takes only its own stream's datagrams.
pub(crate) fn pair(tcp: &TcpStream, is_client: bool) -> std::io::Result<UdpSocket> {
    let mut t = tcp;
    let local = tcp.local_addr()?;
    let peer = tcp.peer_addr()?;
    if is_client {
        let udp = UdpSocket::bind(SocketAddr::new(local.ip(), 0))?;
        t.write_all(&udp.local_addr()?.port().to_be_bytes())?;
        let mut ack = [0u8; 1];
        t.read_exact(&mut ack)?;
        udp.connect(peer)?;
        Ok(udp)
    } else {
        let mut port = [0u8; 2];
        t.read_exact(&mut port)?;
        let sock = socket2::Socket::new(
            socket2::Domain::for_address(local),
            socket2::Type::DGRAM,
            None,
        )?;
        sock.set_reuse_address(true)?;
        sock.bind(&local.into())?;
        sock.connect(&SocketAddr::new(peer.ip(), u16::from_be_bytes(port)).into())?;
        t.write_all(&[1])?;
        Ok(sock.into())
    }
}

/// Gives a latency session's client the cookie its request datagrams must
/// carry, over the data connection the UDP socket was paired on: only the
/// client at the end of that connection learns it.
pub(crate) fn give_cookie(tcp: &TcpStream) -> std::io::Result<u64> {
    let mut c = [0u8; 8];
    getrandom::fill(&mut c).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut t = tcp;
    t.write_all(&c)?;
    Ok(u64::from_be_bytes(c))
}

/// The client's half of [`give_cookie`].
pub(crate) fn take_cookie(tcp: &TcpStream) -> std::io::Result<u64> {
    let mut c = [0u8; 8];
    let mut t = tcp;
    t.read_exact(&mut c)?;
    Ok(u64::from_be_bytes(c))
}

pub(crate) struct UdpSendPlan<'a> {
    pub params: UdpParams,
    pub datagram_len: usize,
    pub deadline: Option<Instant>,
    /// Payload bytes to send, for a byte-count run.
    pub quota: Option<u64>,
    /// What the datagrams carry after their header.
    pub payload: linerate_wire::PayloadBytes,
    pub stop: Option<&'a AtomicBool>,
}

/// Sends datagrams at the plan's rate until its deadline or quota, then
/// tells the receiver over TCP how many it sent.
pub(crate) fn send(
    udp: &UdpSocket,
    tcp: &TcpStream,
    plan: &UdpSendPlan,
    live: &Live,
    abort: &AtomicBool,
) -> Outcome {
    let clock = ThreadClock::start();
    let len = plan.datagram_len;
    let bytes_per_sec = plan.params.rate_bps as f64 / 8.0;
    // A batch leaves as one burst: at most what the rate sends while the
    // sender would sleep anyway, so a slow rate is not sent in 64 KiB bursts
    // that overflow a receiver's buffer at a few Mbit/s.
    let burst = (bytes_per_sec * SLEEP_ABOVE.as_secs_f64()) as usize / len;
    let batch = (GSO_BYTES / len).clamp(1, GSO_SEGMENTS).min(burst.max(1));
    let gso = batch > 1 && plan.params.gso && sockopt::set_udp_segment(udp, len as u32);
    let batch = if gso { batch } else { 1 };
    let mut buf = crate::stream::payload(plan.payload, len * batch);
    let start = Instant::now();
    let (mut seq, mut sent, mut last) = (0u64, 0u64, start);
    let mut error = None;
    let stopped = || plan.stop.is_some_and(|s| s.load(Relaxed)) || abort.load(Relaxed);
    let mut checked = start;
    loop {
        let now = Instant::now();
        if plan.deadline.is_some_and(|d| now >= d) || stopped() {
            break;
        }
        if now.duration_since(checked) >= PEER_CHECK_EVERY {
            checked = now;
            if sockopt::peer_gone(tcp) {
                error = Some("the receiver closed its connection".to_string());
                break;
            }
        }
        let left = plan.quota.map_or(u64::MAX, |q| q.saturating_sub(sent));
        if left == 0 {
            break;
        }
        let n = batch.min(left.div_ceil(len as u64) as usize);
        // Ahead of the rate: wait until this batch is due.
        let due_at = (sent + (n * len) as u64) as f64 / bytes_per_sec;
        let ahead = due_at - now.duration_since(start).as_secs_f64();
        if ahead > 0.0 {
            let wait = Duration::from_secs_f64(ahead);
            if wait > SLEEP_ABOVE {
                std::thread::sleep(wait.min(Duration::from_millis(5)));
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        let sent_ns = now.duration_since(start).as_nanos() as u64;
        for i in 0..n {
            let h = DatagramHeader {
                seq: seq + i as u64,
                sent_ns,
            };
            buf[i * len..i * len + DATAGRAM_HEADER_LEN].copy_from_slice(&h.encode());
        }
        match rustix::net::send(udp, &buf[..n * len], SendFlags::empty()) {
            Ok(_) => {
                seq += n as u64;
                sent += (n * len) as u64;
                last = Instant::now();
                live.bytes.store(sent, Relaxed);
            }
            // The kernel's queue is full for a moment: the datagrams are
            // not sent, and not counted.
            Err(Errno::NOBUFS | Errno::AGAIN | Errno::INTR) => {}
            Err(e) => {
                error = Some(match e {
                    Errno::CONNREFUSED => {
                        "the receiver's port refused datagrams (ICMP unreachable): it has gone"
                            .to_string()
                    }
                    e => format!("sending datagrams: {e}"),
                });
                break;
            }
        }
    }
    // Told even after a failure, so the receiver counts what was sent.
    let mut t = tcp;
    let _ = t.write_all(&seq.to_be_bytes());
    let _ = tcp.shutdown(std::net::Shutdown::Write);
    Outcome::finish(live, &clock, None, sent, last, error)
}

/// What a UDP receiver hands back beside its outcome.
pub(crate) struct Received {
    pub counts: UdpCounts,
    /// The sender's own count, when it told it.
    pub sent: Option<u64>,
    /// Datagrams the socket's full receive buffer dropped over the run.
    pub buffer_drops: Option<u64>,
}

/// Counts datagrams until the sender's count has come over TCP (or TCP
/// ends) and `grace` more has passed for the datagrams still in flight.
pub(crate) fn receive(
    udp: &UdpSocket,
    tcp: &TcpStream,
    params: UdpParams,
    datagram_len: usize,
    grace: Duration,
    live: &Live,
    abort: &AtomicBool,
) -> (Outcome, Received) {
    let clock = ThreadClock::start();
    let gro = params.gro && sockopt::set_udp_gro(udp);
    let mut buf = vec![
        0u8;
        if gro {
            1 << 16
        } else {
            datagram_len.max(DATAGRAM_HEADER_LEN)
        }
    ];
    let mut counter = UdpCounter::new();
    let start = Instant::now();
    let (mut got, mut last) = (0u64, start);
    let (mut trailer, mut trailer_len) = ([0u8; 8], 0usize);
    let mut told: Option<(Option<u64>, Instant)> = None;
    let mut error = None;
    loop {
        if abort.load(Relaxed) {
            break;
        }
        match rustix::net::recv(udp, &mut buf, RecvFlags::DONTWAIT) {
            Ok((n, _)) => {
                let now_ns = start.elapsed().as_nanos() as u64;
                // GRO hands over runs of datagrams of the session's size.
                for d in buf[..n].chunks(datagram_len) {
                    if let Ok(h) = DatagramHeader::decode(d) {
                        counter.take(h, now_ns);
                    }
                }
                got += n as u64;
                last = Instant::now();
                live.bytes.store(got, Relaxed);
                live.publish_udp(&counter.counts());
                continue;
            }
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(Errno::CONNREFUSED) => {} // an ICMP error from an earlier send: not ours
            Err(e) => {
                error = Some(format!("receiving datagrams: {e}"));
                break;
            }
        }
        if let Some((_, at)) = told {
            if at.elapsed() >= grace {
                break;
            }
            wait_readable(udp, None, grace.saturating_sub(at.elapsed()).min(WAIT));
            continue;
        }
        if wait_readable(udp, Some(tcp), WAIT) {
            let mut t = tcp;
            match t.read(&mut trailer[trailer_len..]) {
                Ok(0) => told = Some((None, Instant::now())),
                Ok(n) => {
                    trailer_len += n;
                    if trailer_len == trailer.len() {
                        told = Some((Some(u64::from_be_bytes(trailer)), Instant::now()));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => told = Some((None, Instant::now())),
            }
        }
    }
    let received = Received {
        counts: counter.counts(),
        sent: told.and_then(|(n, _)| n),
        buffer_drops: sockopt::socket_drops(udp).ok().map(u64::from),
    };
    let outcome = Outcome::finish(live, &clock, None, got, last, error);
    (outcome, received)
}

/// Waits up to `timeout` for datagrams, or for `tcp` to be readable;
/// whether `tcp` is.
pub(crate) fn wait_readable(udp: &UdpSocket, tcp: Option<&TcpStream>, timeout: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let t = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    // No allocation per wait: the TCP entry is left out of the slice
    // when there is none.
    let mut fds = [
        PollFd::new(udp, PollFlags::IN),
        PollFd::from_borrowed_fd(tcp.map_or(udp.as_fd(), |t| t.as_fd()), PollFlags::IN),
    ];
    let n = if tcp.is_some() { 2 } else { 1 };
    let _ = poll(&mut fds[..n], Some(&t));
    tcp.is_some() && !fds[1].revents().is_empty()
}

/// The counts between two readings of a receiver's, as the result keeps them.
pub(crate) fn span(
    before: &linerate_wire::UdpCounts,
    after: &linerate_wire::UdpCounts,
) -> linerate_result::UdpCounts {
    let missing = |c: &linerate_wire::UdpCounts| c.lost(None);
    let expected = after.expected.saturating_sub(before.expected);
    let lost = missing(after).saturating_sub(missing(before));
    linerate_result::UdpCounts {
        datagrams: after.datagrams.saturating_sub(before.datagrams),
        lost,
        loss: if expected > 0 {
            lost as f64 / expected as f64
        } else {
            0.0
        },
        out_of_order: after.out_of_order.saturating_sub(before.out_of_order),
        duplicates: after.duplicates.saturating_sub(before.duplicates),
        jitter_us: after.jitter_ns / 1000.0,
        sent: None,
        buffer_drops: None,
    }
}

/// A receiver's counts over the run, with the sender's own count.
pub(crate) fn totals(r: &Received) -> linerate_result::UdpCounts {
    let lost = r.counts.lost(r.sent);
    let sent = r.sent.unwrap_or(r.counts.expected);
    linerate_result::UdpCounts {
        datagrams: r.counts.datagrams,
        lost,
        loss: if sent > 0 {
            lost as f64 / sent as f64
        } else {
            0.0
        },
        out_of_order: r.counts.out_of_order,
        duplicates: r.counts.duplicates,
        jitter_us: r.counts.jitter_ns / 1000.0,
        sent: r.sent,
        buffer_drops: r.buffer_drops,
    }
}
