//! The latency session: its request, and the bytes on its data connections.
//!
//! A latency data connection carries runs of rounds. The client opens each
//! run with a [`RunHeader`] (sent in the same write as the run's first
//! request, so it costs no extra system call):
//!
//! ```text
//! pattern[1] reserved[3] request_len[4] reply_len[4] window[4] rounds[8]
//! ```
//!
//! all big-endian. In a ping-pong round the client sends `request_len`
//! bytes and the server answers `reply_len` bytes once all have arrived;
//! in a window round (bandwidth against message size) the client sends
//! `window` messages of `request_len` bytes back to back and the server
//! answers once, after the last. The payload bytes carry nothing: no
//! sequence number or timestamp pads a 1-byte message. After a run's last
//! round comes the next header, or the end of the connection.
//!
//! [`Echo`] is the server's side as a parser: bytes in, replies owed out.
//!
//! A UDP latency session (`udp` in its parameters) pairs a datagram socket
//! with each data connection (as a UDP bench stream does) and plays its
//! ping-pong over it: each request is one datagram opening with a
//! [`UdpRound`] (`seq[8] reply_len[4] cookie[8]`), each reply one datagram
//! of `reply_len` bytes opening with the same `seq`, so a reply that comes
//! after its round was given up as lost is told apart from the next one's.
//! The cookie is the one the server sent on the data connection when it
//! paired the sockets: a datagram without it gets no reply, so a forged
//! source address cannot aim replies (up to 5,000 times the request's
//! size) at someone else.

use serde::{Deserialize, Serialize};

use crate::udp::MAX_DATAGRAM_LEN;
use crate::{Flaw, WireError};

/// Bytes of a [`RunHeader`].
pub const RUN_HEADER_LEN: usize = 24;
/// Largest request or reply: 64 MiB, past any sweep's largest size.
pub const MAX_MESSAGE_LEN: u32 = 64 << 20;
/// Most messages outstanding in one window round.
pub const MAX_WINDOW: u32 = 4096;
/// Most bytes the client may send in one round.
pub const MAX_ROUND_BYTES: u64 = 1 << 30;
/// Most connections one latency session may open.
pub const MAX_LATENCY_CONNECTIONS: u16 = 256;
const MAX_IDLE_MS: u64 = 3600 * 1000;
/// Bytes of a [`UdpRound`]'s header.
pub const UDP_ROUND_HEADER_LEN: usize = 20;
/// The smallest reply: its `seq` and `reply_len`.
pub const UDP_REPLY_MIN_LEN: usize = 12;

/// What a latency session runs; the client proposes, the server checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyParams {
    /// Data connections, each its own ping-pong.
    pub connections: u16,
    /// Both ends spin on non-blocking receives (and set SO_BUSY_POLL)
    /// instead of sleeping in them.
    pub busy_poll: bool,
    /// The options every connection gets; latency sets only the marking and
    /// the congestion control.
    #[serde(flatten)]
    pub socket: crate::SocketParams,
    /// How long the server waits for a request before it gives the
    /// connection up, in milliseconds.
    pub idle_timeout_ms: u64,
    /// Both ends share one host: connection i's thread runs on the 2i-th
    /// usable CPU at the client and the next at the server, as bench's
    /// spread streams do.
    #[serde(default)]
    pub pin_cores: bool,
    /// A spinning end blocks from the moment it finds itself waiting for
    /// its core (`--busy-poll auto`): other work wants the host's cores.
    #[serde(default)]
    pub busy_poll_yields: bool,
    /// Rounds go over datagrams paired with the data connections.
    #[serde(default)]
    pub udp: bool,
}

impl LatencyParams {
    /// Whether the session is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        let bad = WireError::invalid;
        if self.connections == 0 || self.connections > MAX_LATENCY_CONNECTIONS {
            return bad("connections", "must be between 1 and 256");
        }
        if self.idle_timeout_ms == 0 || self.idle_timeout_ms > MAX_IDLE_MS {
            return bad("idle_timeout_ms", "must be between 1 ms and 1 hour");
        }
        self.socket.validate()
    }
}

/// How the rounds of a run go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// One request, one reply.
    PingPong = 1,
    /// `window` requests back to back, one reply.
    Window = 2,
}

impl Pattern {
    /// Its name in errors.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::PingPong => "ping-pong",
            Pattern::Window => "a window of requests",
        }
    }
}

/// The header that opens a run of rounds on a latency data connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunHeader {
    /// How the rounds go.
    pub pattern: Pattern,
    /// Bytes of each request.
    pub request_len: u32,
    /// Bytes of each reply.
    pub reply_len: u32,
    /// Requests per round: 1 for a ping-pong.
    pub window: u32,
    /// Rounds to answer before the run ends.
    pub rounds: u64,
}

impl RunHeader {
    /// Bytes the client sends in each round.
    pub fn round_bytes(&self) -> u64 {
        u64::from(self.request_len) * u64::from(self.window)
    }

    /// The header's bytes.
    pub fn encode(&self) -> [u8; RUN_HEADER_LEN] {
        let mut out = [0u8; RUN_HEADER_LEN];
        out[0] = self.pattern as u8;
        out[4..8].copy_from_slice(&self.request_len.to_be_bytes());
        out[8..12].copy_from_slice(&self.reply_len.to_be_bytes());
        out[12..16].copy_from_slice(&self.window.to_be_bytes());
        out[16..24].copy_from_slice(&self.rounds.to_be_bytes());
        out
    }

    /// The header in `b`, checked.
    pub fn decode(b: &[u8; RUN_HEADER_LEN]) -> Result<RunHeader, WireError> {
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut rounds = [0u8; 8];
        rounds.copy_from_slice(&b[16..24]);
        let pattern = match b[0] {
            1 => Pattern::PingPong,
            2 => Pattern::Window,
            other => {
                return Err(WireError::Malformed {
                    what: "latency run header",
                    flaw: Flaw::UnknownTag(other),
                });
            }
        };
        if b[1..4] != [0, 0, 0] {
            return Err(WireError::Malformed {
                what: "latency run header",
                flaw: Flaw::Reserved,
            });
        }
        let h = RunHeader {
            pattern,
            request_len: u32_at(4),
            reply_len: u32_at(8),
            window: u32_at(12),
            rounds: u64::from_be_bytes(rounds),
        };
        h.validate()?;
        Ok(h)
    }

    /// Whether it is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        let bad = |flaw| {
            Err(WireError::Malformed {
                what: "latency run header",
                flaw,
            })
        };
        for (what, len) in [("request", self.request_len), ("reply", self.reply_len)] {
            if len == 0 || len > MAX_MESSAGE_LEN {
                return bad(Flaw::Size {
                    what,
                    value: u64::from(len),
                    least: 1,
                    most: u64::from(MAX_MESSAGE_LEN),
                });
            }
        }
        let window_ok = match self.pattern {
            Pattern::PingPong => self.window == 1,
            Pattern::Window => (1..=MAX_WINDOW).contains(&self.window),
        };
        if !window_ok {
            return bad(Flaw::Window {
                window: self.window,
                pattern: self.pattern.name(),
            });
        }
        if self.round_bytes() > MAX_ROUND_BYTES {
            return bad(Flaw::Size {
                what: "a round",
                value: self.round_bytes(),
                least: 1,
                most: MAX_ROUND_BYTES,
            });
        }
        if self.rounds == 0 {
            return bad(Flaw::NoRounds);
        }
        Ok(())
    }
}

/// The header of a UDP latency request; a reply opens with its `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRound {
    /// The round's number.
    pub seq: u64,
    /// Bytes the reply must have.
    pub reply_len: u32,
    /// The session's proof that the datagram comes from its client.
    pub cookie: u64,
}

impl UdpRound {
    /// Writes the header at the start of `datagram` (at least
    /// [`UDP_ROUND_HEADER_LEN`] bytes).
    pub fn encode_into(&self, datagram: &mut [u8]) {
        datagram[..8].copy_from_slice(&self.seq.to_be_bytes());
        datagram[8..12].copy_from_slice(&self.reply_len.to_be_bytes());
        datagram[12..20].copy_from_slice(&self.cookie.to_be_bytes());
    }

    /// The header of a request datagram, checked.
    pub fn decode(datagram: &[u8]) -> Result<UdpRound, WireError> {
        let malformed = |flaw| WireError::Malformed {
            what: "UDP latency request",
            flaw,
        };
        let h: &[u8; UDP_ROUND_HEADER_LEN] = datagram
            .get(..UDP_ROUND_HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| {
                malformed(Flaw::Short {
                    need: UDP_ROUND_HEADER_LEN,
                    has: datagram.len(),
                })
            })?;
        let round = UdpRound {
            seq: Self::seq_of(h).unwrap_or_default(),
            reply_len: u32::from_be_bytes([h[8], h[9], h[10], h[11]]),
            cookie: u64::from_be_bytes([h[12], h[13], h[14], h[15], h[16], h[17], h[18], h[19]]),
        };
        if !(UDP_REPLY_MIN_LEN as u32..=MAX_DATAGRAM_LEN).contains(&round.reply_len) {
            return Err(malformed(Flaw::Size {
                what: "a reply",
                value: u64::from(round.reply_len),
                least: UDP_REPLY_MIN_LEN as u64,
                most: u64::from(MAX_DATAGRAM_LEN),
            }));
        }
        Ok(round)
    }

    /// The sequence number a datagram (request or reply) opens with.
    pub fn seq_of(datagram: &[u8]) -> Option<u64> {
        Some(u64::from_be_bytes(datagram.get(..8)?.try_into().ok()?))
    }
}

/// What [`Echo::feed`] made of the bytes it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// How many of the bytes it took; feed the rest again after replying.
    pub taken: usize,
    /// A round is complete: send this many bytes back.
    pub reply: Option<u32>,
}

/// The server's side of a latency data connection: takes the bytes as they
/// arrive, in any pieces, and says when a reply is owed.
#[derive(Debug, Default)]
pub struct Echo {
    header: [u8; RUN_HEADER_LEN],
    header_have: usize,
    run: Option<Run>,
    rounds_done: u64,
    bytes_in: u64,
}

#[derive(Debug, Clone, Copy)]
struct Run {
    header: RunHeader,
    /// Bytes still to come in the current round.
    round_left: u64,
    rounds_left: u64,
}

impl Echo {
    /// An echo with no run begun.
    pub fn new() -> Echo {
        Echo::default()
    }

    /// Takes bytes read from the connection. Stops after the first
    /// completed round, so the caller replies before reading on.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Fed, WireError> {
        let mut taken = 0;
        while taken < bytes.len() {
            let rest = &bytes[taken..];
            let Some(run) = self.run.as_mut() else {
                let n = (RUN_HEADER_LEN - self.header_have).min(rest.len());
                self.header[self.header_have..self.header_have + n].copy_from_slice(&rest[..n]);
                self.header_have += n;
                taken += n;
                if self.header_have == RUN_HEADER_LEN {
                    self.header_have = 0;
                    let header = RunHeader::decode(&self.header)?;
                    self.run = Some(Run {
                        header,
                        round_left: header.round_bytes(),
                        rounds_left: header.rounds,
                    });
                }
                continue;
            };
            let n = run.round_left.min(rest.len() as u64);
            run.round_left -= n;
            taken += n as usize;
            self.bytes_in += n;
            if run.round_left == 0 {
                let reply = run.header.reply_len;
                run.rounds_left -= 1;
                run.round_left = run.header.round_bytes();
                if run.rounds_left == 0 {
                    self.run = None;
                }
                self.rounds_done += 1;
                return Ok(Fed {
                    taken,
                    reply: Some(reply),
                });
            }
        }
        Ok(Fed { taken, reply: None })
    }

    /// Whether the connection may end here: between runs, not inside one.
    pub fn at_boundary(&self) -> bool {
        self.run.is_none() && self.header_have == 0
    }

    /// Rounds answered so far.
    pub fn rounds(&self) -> u64 {
        self.rounds_done
    }

    /// Request bytes taken so far (headers not counted).
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in
    }

    /// The current run's header, while one is open.
    pub fn run(&self) -> Option<RunHeader> {
        self.run.map(|r| r.header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ping(request_len: u32, reply_len: u32, rounds: u64) -> RunHeader {
        RunHeader {
            pattern: Pattern::PingPong,
            request_len,
            reply_len,
            window: 1,
            rounds,
        }
    }

    /// Every reply the echo owes for `bytes` fed in pieces of `piece`.
    fn replies(bytes: &[u8], piece: usize) -> Result<Vec<u32>, WireError> {
        let mut echo = Echo::new();
        let mut out = Vec::new();
        for chunk in bytes.chunks(piece.max(1)) {
            let mut off = 0;
            while off < chunk.len() {
                let fed = echo.feed(&chunk[off..])?;
                off += fed.taken;
                out.extend(fed.reply);
            }
        }
        Ok(out)
    }

    #[test]
    fn header_round_trips_and_refuses_nonsense() {
        let h = RunHeader {
            pattern: Pattern::Window,
            request_len: 4 << 20,
            reply_len: 1,
            window: 64,
            rounds: 20,
        };
        assert_eq!(RunHeader::decode(&h.encode()), Ok(h));
        for bad in [
            ping(0, 1, 1),
            ping(1, 0, 1),
            ping(1, 1, 0),
            ping(MAX_MESSAGE_LEN + 1, 1, 1),
            RunHeader {
                window: 2,
                ..ping(1, 1, 1)
            },
            RunHeader {
                pattern: Pattern::Window,
                window: 4096,
                ..ping(MAX_MESSAGE_LEN, 1, 1)
            },
        ] {
            assert!(RunHeader::decode(&bad.encode()).is_err(), "{bad:?}");
        }
        let mut datagram = [0u8; 20];
        let round = UdpRound {
            seq: 7,
            reply_len: 14,
            cookie: 0xdead_beef_0102_0304,
        };
        round.encode_into(&mut datagram);
        assert_eq!(UdpRound::decode(&datagram), Ok(round));
        assert_eq!(UdpRound::seq_of(&datagram), Some(7));
        assert!(UdpRound::decode(&datagram[..19]).is_err());
        for reply_len in [0, 11, MAX_DATAGRAM_LEN + 1] {
            UdpRound {
                seq: 1,
                reply_len,
                cookie: 1,
            }
            .encode_into(&mut datagram);
            assert!(UdpRound::decode(&datagram).is_err(), "{reply_len}");
        }
        let mut unknown = ping(1, 1, 1).encode();
        unknown[0] = 9;
        assert!(RunHeader::decode(&unknown).is_err());
        unknown[0] = 1;
        unknown[2] = 1;
        assert!(RunHeader::decode(&unknown).is_err(), "reserved byte");
    }

    #[test]
    fn a_ping_pong_owes_one_reply_per_request_and_may_end_between_runs() {
        let mut bytes = ping(3, 5, 2).encode().to_vec();
        bytes.extend([0; 6]);
        let w = RunHeader {
            pattern: Pattern::Window,
            request_len: 2,
            reply_len: 1,
            window: 4,
            rounds: 1,
        };
        bytes.extend(w.encode());
        bytes.extend([0; 8]);
        assert_eq!(replies(&bytes, 1).unwrap(), vec![5, 5, 1]);
        assert_eq!(replies(&bytes, 1000).unwrap(), vec![5, 5, 1]);
        let mut echo = Echo::new();
        let fed = echo.feed(&bytes[..RUN_HEADER_LEN + 2]).unwrap();
        assert_eq!(fed.reply, None);
        assert!(!echo.at_boundary(), "inside a round");
    }

    proptest! {
        #[test]
        fn replies_do_not_depend_on_how_bytes_arrive(
            runs in prop::collection::vec((1u32..40, 1u32..9, 1u32..5, 1u64..6), 1..5),
            piece in 1usize..64,
        ) {
            let mut bytes = Vec::new();
            let mut want = Vec::new();
            for (len, reply, window, rounds) in runs {
                let h = RunHeader {
                    pattern: if window == 1 { Pattern::PingPong } else { Pattern::Window },
                    request_len: len,
                    reply_len: reply,
                    window,
                    rounds,
                };
                bytes.extend(h.encode());
                bytes.extend(std::iter::repeat_n(7u8, (h.round_bytes() * rounds) as usize));
                want.extend(std::iter::repeat_n(reply, rounds as usize));
            }
            prop_assert_eq!(replies(&bytes, piece).unwrap(), want);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = replies(&bytes, 7);
        }
    }
}
