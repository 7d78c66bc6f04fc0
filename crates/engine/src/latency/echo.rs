//! The server's side of a latency session's data connections: each answers
//! the client's rounds, on its own stream thread ([`measuring_end::run_with`]), as
//! [`Echo`] says. A connection
//! silent past the client's timeout, or one that breaks the run format,
//! ends with its error; the others go on.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use linerate_result::SideReport;
use linerate_wire::{Direction, Echo, LatencyParams, Pattern, RUN_HEADER_LEN, UdpRound};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use super::spin::SpinWatch;
use crate::measuring_end::{self, EndConfig, Pin};
use crate::session::StreamSocket;
use crate::sockopt;
use crate::stream::{Live, Outcome, ThreadClock, recv_polled};

/// Largest read; a reply is written from a buffer of zeros this size.
const BUF: usize = 1 << 20;
static ZEROS: [u8; BUF] = [0; BUF];

/// Answers every connection until the client ends them, each on its own
/// stream thread (pinned as bench's spread streams when asked); this end's
/// report and the rounds answered.
pub fn serve_all(params: &LatencyParams, sockets: &[StreamSocket]) -> (SideReport, u64) {
    let cfg = EndConfig {
        is_client: false,
        streams: params.connections,
        direction: Direction::Forward,
        interval_ms: 0,
        omit: Duration::ZERO,
        duration: None,
        pin: if params.pin_cores {
            Pin::Spread
        } else {
            Pin::None
        },
        rcvbuf: None,
        stop: None,
        udp: false,
    };
    let timeout = Duration::from_millis(params.idle_timeout_ms);
    let rounds = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let report = measuring_end::run_with(
        &cfg,
        sockets,
        Instant::now(),
        &abort,
        &mut |_| {},
        &|s, live| {
            let spin = SpinWatch::new(params.busy_poll, params.busy_poll_yields);
            let (outcome, answered) = if params.udp {
                answer_udp(&s.stream, live, spin, timeout)
            } else {
                answer(&s.stream, live, spin, params.pin_cores, timeout)
            };
            rounds.fetch_add(answered, Relaxed);
            outcome
        },
    );
    (report, rounds.into_inner())
}

/// One connection's loop: read what the current run needs, reply when a
/// round is complete. Returns the outcome and the rounds answered.
fn answer(
    sock: &TcpStream,
    live: &Live,
    mut spin: SpinWatch,
    pinned: bool,
    timeout: Duration,
) -> (Outcome, u64) {
    let clock = ThreadClock::start();
    spin.begin();
    let mut echo = Echo::new();
    let mut buf = vec![0u8; BUF];
    let mut last = Instant::now();
    let error = prepare(sock, spin.spinning(), timeout).err().or_else(|| {
        loop {
            // Between runs, read the header alone, so it is never mixed with
            // a request this loop must not read ahead of its reply.
            let want = if echo.run().is_some() {
                BUF
            } else {
                RUN_HEADER_LEN
            };
            let in_window = echo.run().is_some_and(|r| r.pattern == Pattern::Window);
            let spinning = spin.spinning();
            let poll = Poll {
                spin: spinning && !in_window,
                poll: spinning,
                // A pinned reader has its core to itself: a yield would only
                // hand it to other work (bench's receivers do the same).
                yield_when_empty: !pinned,
            };
            let n = match receive(sock, &mut buf[..want], poll, timeout) {
                Ok(0) if echo.at_boundary() => return None,
                Ok(0) => return Some(EchoError::MidRound),
                Ok(n) => n,
                Err(e) => return Some(e),
            };
            last = Instant::now();
            live.bytes.fetch_add(n as u64, Relaxed);
            let mut off = 0;
            while off < n {
                match echo.feed(&buf[off..n]) {
                    Ok(fed) => {
                        off += fed.taken;
                        if let Some(len) = fed.reply
                            && let Err(e) = reply(sock, len as usize)
                        {
                            return Some(e);
                        }
                    }
                    Err(e) => return Some(EchoError::Request(e)),
                }
            }
        }
    });
    let tcp = linerate_probe::tcpinfo::read(sock).ok();
    let error = error.map(|e| e.to_string());
    let o = Outcome::finish(live, &clock, tcp, echo.bytes_in(), last, error);
    (o, echo.rounds())
}

/// One connection's UDP rounds: a reply datagram for every request
/// datagram, until the client closes the TCP connection beside it.
fn answer_udp(
    sock: &TcpStream,
    live: &Live,
    mut spin: SpinWatch,
    timeout: Duration,
) -> (Outcome, u64) {
    let clock = ThreadClock::start();
    spin.begin();
    let (mut rounds, mut bytes_in, mut last) = (0u64, 0u64, Instant::now());
    let paired = crate::udp::pair(sock, false)
        .and_then(|udp| crate::udp::give_cookie(sock).map(|cookie| (udp, cookie)));
    let error = match paired {
        Err(e) => Some(EchoError::Pair(e)),
        Ok((udp, cookie)) => {
            if spin.spinning() {
                let _ = sockopt::set_busy_poll(&udp);
            }
            let mut datagram = vec![0u8; linerate_wire::MAX_DATAGRAM_LEN as usize + 1];
            let mut reply = vec![0u8; linerate_wire::MAX_DATAGRAM_LEN as usize];
            loop {
                let n = match udp_request(&udp, sock, &mut datagram, spin.spinning(), timeout) {
                    Ok(Some(n)) => n,
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                };
                last = Instant::now();
                bytes_in += n as u64;
                live.bytes.store(bytes_in, Relaxed);
                // A datagram that is no request is dropped, as a stray one
                // would be: the client counts its round lost.
                let Ok(round) = UdpRound::decode(&datagram[..n]) else {
                    continue;
                };
                // Not from the client that holds the connection (a forged
                // source address): no reply, whatever its size.
                if round.cookie != cookie {
                    continue;
                }
                round.encode_into(&mut reply);
                match rustix::net::send(
                    &udp,
                    &reply[..round.reply_len as usize],
                    SendFlags::empty(),
                ) {
                    Ok(_) => rounds += 1,
                    Err(Errno::INTR | Errno::NOBUFS | Errno::AGAIN | Errno::CONNREFUSED) => {}
                    Err(e) => break Some(EchoError::SendDatagram(e)),
                }
            }
        }
    };
    let o = Outcome::finish(
        live,
        &clock,
        None,
        bytes_in,
        last,
        error.map(|e| e.to_string()),
    );
    (o, rounds)
}

/// Why an echoing end stopped answering; the text is its stream's error.
#[derive(Debug, thiserror::Error)]
enum EchoError {
    #[error("reading a request datagram: {0}")]
    ReadDatagram(Errno),
    #[error("no request datagram within {:.1} s: the client stopped sending", .0.as_secs_f64())]
    NoDatagram(Duration),
    #[error("setting up the connection: {0}")]
    Setup(std::io::Error),
    #[error("no request within {:.1} s: the client stopped sending", .0.as_secs_f64())]
    NoRequest(Duration),
    #[error("reading a request: {0}")]
    Read(Errno),
    #[error("the client took no reply within its timeout")]
    ReplyTimeout,
    #[error("sending a reply: {0}")]
    Send(Errno),
    #[error("the client closed the connection in the middle of a round")]
    MidRound,
    #[error("{0}")]
    Request(linerate_wire::WireError),
    #[error("pairing a UDP socket with the connection: {0}")]
    Pair(std::io::Error),
    #[error("sending a reply datagram: {0}")]
    SendDatagram(Errno),
}

/// The next request datagram's length; `None` once the client has closed
/// the connection.
fn udp_request(
    udp: &std::net::UdpSocket,
    tcp: &TcpStream,
    buf: &mut [u8],
    spin: bool,
    timeout: Duration,
) -> Result<Option<usize>, EchoError> {
    let since = Instant::now();
    let wait = if spin { Duration::ZERO } else { timeout };
    loop {
        match rustix::net::recv(udp, &mut *buf, RecvFlags::DONTWAIT) {
            Ok((n, _)) => return Ok(Some(n)),
            Err(Errno::AGAIN | Errno::INTR | Errno::CONNREFUSED) => {}
            Err(e) => return Err(EchoError::ReadDatagram(e)),
        }
        if crate::udp::wait_readable(udp, Some(tcp), wait) {
            // The client writes nothing more on the connection: readable
            // means closed.
            return Ok(None);
        }
        if since.elapsed() >= timeout {
            return Err(EchoError::NoDatagram(timeout));
        }
        if spin {
            std::hint::spin_loop();
        }
    }
}

fn prepare(sock: &TcpStream, busy_poll: bool, timeout: Duration) -> Result<(), EchoError> {
    sock.set_nodelay(true)
        .and_then(|()| sock.set_read_timeout(Some(timeout)))
        .and_then(|()| sock.set_write_timeout(Some(timeout)))
        .map_err(EchoError::Setup)?;
    if busy_poll {
        let _ = sockopt::set_busy_poll(sock);
    }
    Ok(())
}

/// How a receive waits for bytes.
#[derive(Clone, Copy)]
struct Poll {
    /// Spin until bytes come (a ping-pong's next request).
    spin: bool,
    /// Poll a while before blocking (a window's next bytes).
    poll: bool,
    yield_when_empty: bool,
}

/// One receive. A spinning end spins for a ping-pong's next request;
/// inside a window it polls before it blocks, as bench's receivers do,
/// yielding the core after each empty poll so that the client's writes,
/// which need that core on a shared host, run (spinning without yielding
/// held 4 MiB windows at 0.7 of bench's rate on loopback,
/// docs/defaults.md#busy-poll). A blocked receive ends at the socket's
/// timeout.
fn receive(
    sock: &TcpStream,
    buf: &mut [u8],
    p: Poll,
    timeout: Duration,
) -> Result<usize, EchoError> {
    let since = Instant::now();
    loop {
        let got = if p.spin {
            // A ping-pong's next request is microseconds away: spin for it.
            match rustix::net::recv(sock, &mut *buf, RecvFlags::DONTWAIT) {
                Err(Errno::AGAIN) if since.elapsed() < timeout => {
                    std::hint::spin_loop();
                    continue;
                }
                other => other.map(|(n, _)| n),
            }
        } else {
            recv_polled(
                sock,
                &mut *buf,
                RecvFlags::empty(),
                p.poll,
                p.yield_when_empty,
            )
        };
        match got {
            Ok(n) => return Ok(n),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                return Err(EchoError::NoRequest(timeout));
            }
            Err(e) => return Err(EchoError::Read(e)),
        }
    }
}

fn reply(sock: &TcpStream, len: usize) -> Result<(), EchoError> {
    let mut left = len;
    while left > 0 {
        let chunk = left.min(BUF);
        match rustix::net::send(sock, &ZEROS[..chunk], SendFlags::NOSIGNAL) {
            Ok(n) => left -= n,
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => return Err(EchoError::ReplyTimeout),
            Err(e) => return Err(EchoError::Send(e)),
        }
    }
    Ok(())
}
