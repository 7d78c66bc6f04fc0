//! One connection's rounds at the client: the timed loop of a latency
//! step. Nothing inside the loop allocates or locks: the buffers and the
//! histogram are made before it, and one clock reading ends each round and
//! starts the next.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use linerate_result::TcpSample;
use linerate_wire::{Pattern, RUN_HEADER_LEN, RunHeader};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use super::spin::SpinWatch;
use super::udp_rounds::UdpRounds;
use crate::error::{EngineError, Result};

/// Round trips up to a minute are kept at three significant digits.
const HIGHEST_NS: u64 = 60_000_000_000;
/// How long each run of measured rounds lasts: short, so a step ends near
/// its time, long enough that one header per run costs nothing.
const RUN_TARGET: Duration = Duration::from_millis(20);
/// Reads of a large reply go through this much at a time.
const SCRATCH: usize = 256 << 10;
/// A larger request is written from one buffer of this size, again and
/// again, as bench's streams write theirs: 4 MiB writes from a 4 MiB
/// buffer ran at 19 Gbit/s on loopback where 1 MiB ones ran at 48
/// (docs/defaults.md#window).
const WRITE_CHUNK: usize = 1 << 20;
/// Requests this large fill their segments without MSG_MORE.
const CORK_BELOW: usize = 64 << 10;

/// What one step asks of each connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepPlan {
    pub pattern: Pattern,
    pub request_len: u32,
    pub reply_len: u32,
    pub window: u32,
    pub warmup: u64,
    pub iterations: Option<u64>,
    pub time: Duration,
}

/// One connection's share of a step.
pub(crate) struct Measured {
    pub hist: Histogram<u64>,
    pub rounds: u64,
    pub warmup: u64,
    pub seconds: f64,
    pub tcp: Option<TcpSample>,
    /// UDP rounds whose reply never came (TCP loses none).
    pub lost: Option<u64>,
    /// The connection still spun at the step's end; None if it never did.
    pub spun: Option<bool>,
}

#[expect(
    clippy::expect_used,
    reason = "constant bounds: 1 ns to HIGHEST_NS at 3 significant figures is always valid"
)]
pub(crate) fn new_histogram() -> Histogram<u64> {
    // Bounds fixed up front: recording never resizes, so never allocates.
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("constant bounds are valid")
}

/// A data connection at the client, with the buffers of its largest step.
pub(crate) struct Connection {
    pub sock: TcpStream,
    spin: SpinWatch,
    timeout: Duration,
    /// A run header's room, then the request bytes.
    request: Vec<u8>,
    scratch: Vec<u8>,
    /// UDP rounds, when the session plays its ping-pong over datagrams.
    udp: Option<UdpRounds>,
}

impl Connection {
    pub fn new(sock: TcpStream, spin: SpinWatch, timeout: Duration, largest: u32) -> Result<Self> {
        sock.set_nodelay(true)
            .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
        // A blocking receive that waits this long has lost its peer; a
        // send that waits this long, too (a window the server stopped reading).
        sock.set_read_timeout(Some(timeout))
            .and_then(|()| sock.set_write_timeout(Some(timeout)))
            .map_err(|e| EngineError::io("setting the reply timeout", e))?;
        if spin.spins() {
            let _ = crate::sockopt::set_busy_poll(&sock);
        }
        Ok(Connection {
            sock,
            spin,
            timeout,
            request: vec![0x5a; RUN_HEADER_LEN + (largest as usize).min(WRITE_CHUNK)],
            scratch: vec![0; SCRATCH],
            udp: None,
        })
    }

    /// Plays the rounds over a datagram socket paired with this connection.
    pub fn pair_udp(&mut self) -> Result<()> {
        let udp = crate::udp::pair(&self.sock, true)
            .and_then(|udp| crate::udp::take_cookie(&self.sock).map(|c| (udp, c)))
            .map_err(|e| EngineError::io("pairing a UDP socket with a data connection", e))?;
        self.udp = Some(UdpRounds::new(
            udp.0,
            udp.1,
            self.spin.clone(),
            self.timeout,
        ));
        Ok(())
    }

    /// The watch of whichever rounds this connection plays.
    fn spin_watch(&mut self) -> &mut SpinWatch {
        match self.udp.as_mut() {
            Some(u) => &mut u.spin,
            None => &mut self.spin,
        }
    }

    fn lost(&self) -> Option<u64> {
        self.udp.as_ref().map(|u| u.lost)
    }

    /// Warms up, then measures rounds until the step's iterations or its
    /// time are done (or `stop` is set).
    pub fn measure(&mut self, step: &StepPlan, stop: &AtomicBool) -> Result<Measured> {
        let mut hist = new_histogram();
        self.spin_watch().begin();
        let began = Instant::now();
        let warm_until = began + step.time / 10;
        let (mut warm, mut chunk) = (0u64, 1u64);
        while warm < step.warmup && Instant::now() < warm_until && !stop.load(Relaxed) {
            let n = chunk.min(step.warmup - warm);
            self.run(step, n, None)?;
            warm += n;
            chunk = chunk.saturating_mul(2);
        }
        let t0 = Instant::now();
        let lost_before = self.lost();
        let per_round = if warm > 0 {
            t0.duration_since(began) / warm as u32
        } else {
            Duration::ZERO
        };
        let deadline = t0 + step.time;
        let (mut rounds, mut per_round) = (0u64, per_round);
        loop {
            let left = step.iterations.map_or(u64::MAX, |i| i - rounds);
            let now = Instant::now();
            if left == 0 || now >= deadline || stop.load(Relaxed) {
                break;
            }
            let fits = if per_round.is_zero() {
                1
            } else {
                (RUN_TARGET.as_nanos() / per_round.as_nanos().max(1)).max(1) as u64
            };
            let n = fits.min(left);
            self.run(step, n, Some(&mut hist))?;
            rounds += n;
            per_round = now.elapsed() / n.max(1) as u32;
        }
        Ok(Measured {
            hist,
            rounds,
            warmup: warm,
            seconds: t0.elapsed().as_secs_f64(),
            tcp: match self.udp {
                Some(_) => None,
                None => linerate_probe::tcpinfo::read(&self.sock).ok(),
            },
            spun: self.spin_watch().state(),
            lost: self
                .lost()
                .zip(lost_before)
                .map(|(after, before)| after - before),
        })
    }

    /// One run of `rounds` rounds, each recorded in `hist` when given.
    fn run(
        &mut self,
        step: &StepPlan,
        rounds: u64,
        mut hist: Option<&mut Histogram<u64>>,
    ) -> Result<()> {
        if let Some(udp) = self.udp.as_mut() {
            return udp.run(step.request_len, step.reply_len, rounds, hist);
        }
        let header = RunHeader {
            pattern: step.pattern,
            request_len: step.request_len,
            reply_len: step.reply_len,
            window: step.window,
            rounds,
        };
        self.request[..RUN_HEADER_LEN].copy_from_slice(&header.encode());
        let len = step.request_len as usize;
        let mut start = Instant::now();
        for round in 0..rounds {
            for message in 0..step.window {
                // The run's header goes out with its first request.
                let from = if round == 0 && message == 0 {
                    0
                } else {
                    RUN_HEADER_LEN
                };
                let more = message + 1 < step.window;
                self.send_request(from, len, more)?;
            }
            self.receive(step.reply_len as usize)?;
            let end = Instant::now();
            if let Some(h) = hist.as_deref_mut() {
                h.saturating_record(end.duration_since(start).as_nanos() as u64);
            }
            start = end;
        }
        Ok(())
    }

    /// Sends a request of `len` bytes, after the run's header when `from`
    /// is 0; `more` tells the kernel another message follows at once
    /// (MSG_MORE), so a window leaves in full segments.
    fn send_request(&self, from: usize, len: usize, more: bool) -> Result<()> {
        let mut left = len;
        let mut from = from;
        while left > 0 {
            let piece = left.min(WRITE_CHUNK);
            left -= piece;
            self.send(
                from,
                RUN_HEADER_LEN + piece,
                (more || left > 0) && len < CORK_BELOW,
            )?;
            from = RUN_HEADER_LEN;
        }
        Ok(())
    }

    /// Sends `request[from..to]`, with MSG_MORE when `more`.
    fn send(&self, from: usize, to: usize, more: bool) -> Result<()> {
        let mut flags = SendFlags::NOSIGNAL;
        if more {
            flags |= SendFlags::MORE;
        }
        let mut at = from;
        while at < to {
            match rustix::net::send(&self.sock, &self.request[at..to], flags) {
                Ok(n) => at += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => return Err(self.silent("the server to take a request")),
                Err(e) => return Err(EngineError::io("sending a request", e.into())),
            }
        }
        Ok(())
    }

    /// Reads a reply of `len` bytes.
    fn receive(&mut self, len: usize) -> Result<()> {
        let mut left = len;
        while left > 0 {
            let want = left.min(self.scratch.len());
            let got = if self.spin.spinning() {
                let until = Instant::now() + self.timeout;
                crate::stream::recv_spinning(&self.sock, &mut self.scratch[..want], until)
            } else {
                rustix::net::recv(&self.sock, &mut self.scratch[..want], RecvFlags::empty())
                    .map(|(n, _)| n)
            };
            match got {
                Ok(0) => {
                    return Err(EngineError::PeerClosed {
                        waiting_for: "a reply in the middle of a latency run (the server went away)",
                    });
                }
                Ok(n) => left -= n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => return Err(self.silent("the server's reply")),
                Err(e) => return Err(EngineError::io("reading a reply", e.into())),
            }
        }
        Ok(())
    }

    fn silent(&self, waiting_for: &'static str) -> EngineError {
        EngineError::Timeout {
            waiting_for,
            within: Some(self.timeout),
        }
    }
}

/// The median cost of one reading of the clock the rounds use.
pub(crate) fn clock_overhead_ns() -> f64 {
    let mut costs: Vec<u64> = (0..1001)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            b.duration_since(a).as_nanos() as u64
        })
        .collect();
    costs.sort_unstable();
    costs[costs.len() / 2] as f64
}
