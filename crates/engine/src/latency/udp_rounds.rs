//! One connection's rounds over UDP at the client: a request datagram, a
//! reply datagram, timed as the TCP rounds are. A reply that does not come
//! within a few of the slowest round trips seen is counted lost and the
//! next round begins; replies that come after are told apart by their
//! sequence number and dropped.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use linerate_wire::{UDP_ROUND_HEADER_LEN, UdpRound};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use super::spin::SpinWatch;
use crate::error::{EngineError, Result};

/// A round is lost when its reply takes this many times the slowest round
/// trip seen so far: a queue that grows slowly still counts as delay, a
/// datagram dropped does not stall the run for the whole --timeout.
const LOST_AFTER_SLOWEST: u32 = 4;
/// ... and never sooner than this: scheduling alone delays a reply by
/// milliseconds on a busy host.
const LOST_AFTER_AT_LEAST: Duration = Duration::from_millis(20);

pub(crate) struct UdpRounds {
    sock: UdpSocket,
    /// What the server gave for this connection's requests to carry.
    cookie: u64,
    pub(crate) spin: SpinWatch,
    /// No reply at all for this long: the server is gone.
    timeout: Duration,
    seq: u64,
    request: Vec<u8>,
    reply: Vec<u8>,
    slowest: Duration,
    read_timeout: Duration,
    /// When the last reply came (or the first round began): kept across
    /// runs, which may be a round each once replies stop coming.
    answered_at: Option<Instant>,
    pub lost: u64,
}

impl UdpRounds {
    pub fn new(sock: UdpSocket, cookie: u64, spin: SpinWatch, timeout: Duration) -> UdpRounds {
        if spin.spins() {
            let _ = crate::sockopt::set_busy_poll(&sock);
        }
        let most = linerate_wire::MAX_DATAGRAM_LEN as usize;
        UdpRounds {
            sock,
            cookie,
            spin,
            timeout,
            seq: 0,
            request: vec![0x5a; most],
            reply: vec![0; most + 1],
            slowest: Duration::ZERO,
            read_timeout: Duration::ZERO,
            answered_at: None,
            lost: 0,
        }
    }

    /// `rounds` ping-pongs of `request_len` and `reply_len` bytes, each
    /// answered round recorded in `hist` when given.
    pub fn run(
        &mut self,
        request_len: u32,
        reply_len: u32,
        rounds: u64,
        mut hist: Option<&mut Histogram<u64>>,
    ) -> Result<()> {
        let len = (request_len as usize).max(UDP_ROUND_HEADER_LEN);
        let mut start = Instant::now();
        let mut answered_at = *self.answered_at.get_or_insert(start);
        for _ in 0..rounds {
            self.seq += 1;
            UdpRound {
                seq: self.seq,
                reply_len,
                cookie: self.cookie,
            }
            .encode_into(&mut self.request);
            self.send(len)?;
            let answered = self.await_reply(start)?;
            let end = Instant::now();
            if answered {
                let took = end.duration_since(start);
                self.slowest = self.slowest.max(took);
                if let Some(h) = hist.as_deref_mut() {
                    h.saturating_record(took.as_nanos() as u64);
                }
                answered_at = end;
                self.answered_at = Some(end);
            } else {
                self.lost += 1;
                if end.duration_since(answered_at) >= self.timeout {
                    return Err(EngineError::Timeout {
                        waiting_for: "the server's reply datagram",
                        within: Some(self.timeout),
                    });
                }
            }
            start = end;
        }
        Ok(())
    }

    fn send(&self, len: usize) -> Result<()> {
        loop {
            match rustix::net::send(&self.sock, &self.request[..len], SendFlags::empty()) {
                Ok(_) => return Ok(()),
                Err(Errno::INTR | Errno::NOBUFS) => {}
                Err(Errno::CONNREFUSED) => {
                    return Err(EngineError::PeerClosed {
                        waiting_for: "a reply (its port refused datagrams: ICMP unreachable)",
                    });
                }
                Err(e) => return Err(EngineError::io("sending a request datagram", e.into())),
            }
        }
    }

    /// Waits for this round's reply; false when it is lost.
    fn await_reply(&mut self, start: Instant) -> Result<bool> {
        let lost_after = (self.slowest * LOST_AFTER_SLOWEST)
            .max(LOST_AFTER_AT_LEAST)
            .min(self.timeout);
        let give_up = start + lost_after;
        loop {
            let got = if self.spin.spinning() {
                crate::stream::recv_spinning(&self.sock, &mut self.reply, give_up)
            } else {
                self.receive_blocking(give_up, lost_after)
            };
            match got {
                Ok(n) if UdpRound::seq_of(&self.reply[..n]) == Some(self.seq) => return Ok(true),
                // A reply to a round already given up as lost.
                Ok(_) => {}
                Err(Errno::AGAIN) => return Ok(false),
                Err(Errno::INTR) => {}
                // An ICMP error from an earlier send; the next send says it.
                Err(Errno::CONNREFUSED) => {}
                Err(e) => return Err(EngineError::io("reading a reply datagram", e.into())),
            }
        }
    }

    /// One blocking receive, as the TCP rounds do: the socket's receive
    /// timeout (set again only when the loss wait changes) bounds it.
    fn receive_blocking(&mut self, until: Instant, wait: Duration) -> rustix::io::Result<usize> {
        if Instant::now() >= until {
            return Err(Errno::AGAIN);
        }
        if self.read_timeout != wait {
            self.sock
                .set_read_timeout(Some(wait))
                .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::INVAL))?;
            self.read_timeout = wait;
        }
        rustix::net::recv(&self.sock, &mut self.reply, RecvFlags::empty()).map(|(n, _)| n)
    }
}
