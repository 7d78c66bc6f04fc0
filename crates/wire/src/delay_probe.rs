//! A bench's one-way delay probe: small datagrams beside the streams that
//! tell each direction's queueing delay apart (docs/verdict.md#return-path).
//!
//! The client sends a [`DelayProbe`] every few tens of milliseconds from
//! a UDP socket whose port it gave in its request (`delay_probe_port`);
//! the server answers each from its own port, connected to that one only,
//! with a [`DelayEcho`] of the same length, so an answer is never larger
//! than what asked for it:
//!
//! ```text
//! probe: "LRdp" seq[8] client_sent_ns[8] zero[16]
//! echo:  "LRde" seq[8] client_sent_ns[8] server_received_ns[8] server_sent_ns[8]
//! ```
//!
//! all big-endian, both [`DELAY_PROBE_LEN`] bytes. Each end stamps on its own clock;
//! only differences between stamps of one clock, and each direction's
//! delay less its own least, are used, so the clocks need not agree.

use crate::{Flaw, WireError};

/// Bytes of a probe and of its echo.
pub const DELAY_PROBE_LEN: usize = 36;
const PROBE_MAGIC: [u8; 4] = *b"LRdp";
const ECHO_MAGIC: [u8; 4] = *b"LRde";

/// The client's probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayProbe {
    /// The probe's number, from 0.
    pub seq: u64,
    /// When the client sent it, on its clock, ns.
    pub client_sent_ns: u64,
}

/// The server's answer to a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayEcho {
    /// The probe's number.
    pub seq: u64,
    /// The probe's own send time, on the client's clock, ns.
    pub client_sent_ns: u64,
    /// When the probe arrived, on the server's clock, ns.
    pub server_received_ns: u64,
    /// When the echo left, on the server's clock, ns.
    pub server_sent_ns: u64,
}

impl DelayProbe {
    /// The probe's bytes.
    pub fn encode(&self) -> [u8; DELAY_PROBE_LEN] {
        let mut b = [0u8; DELAY_PROBE_LEN];
        b[..4].copy_from_slice(&PROBE_MAGIC);
        b[4..12].copy_from_slice(&self.seq.to_be_bytes());
        b[12..20].copy_from_slice(&self.client_sent_ns.to_be_bytes());
        b
    }

    /// The probe `b` holds: exactly [`DELAY_PROBE_LEN`] bytes with its magic.
    pub fn decode(b: &[u8]) -> Result<DelayProbe, WireError> {
        let words = words(b, PROBE_MAGIC, "delay probe")?;
        Ok(DelayProbe {
            seq: words[0],
            client_sent_ns: words[1],
        })
    }

    /// The echo of this probe, stamped with the server's times.
    pub fn echo(&self, server_received_ns: u64, server_sent_ns: u64) -> DelayEcho {
        DelayEcho {
            seq: self.seq,
            client_sent_ns: self.client_sent_ns,
            server_received_ns,
            server_sent_ns,
        }
    }
}

impl DelayEcho {
    /// The echo's bytes.
    pub fn encode(&self) -> [u8; DELAY_PROBE_LEN] {
        let mut b = [0u8; DELAY_PROBE_LEN];
        b[..4].copy_from_slice(&ECHO_MAGIC);
        let fields = [
            self.seq,
            self.client_sent_ns,
            self.server_received_ns,
            self.server_sent_ns,
        ];
        for (i, v) in fields.into_iter().enumerate() {
            b[4 + 8 * i..12 + 8 * i].copy_from_slice(&v.to_be_bytes());
        }
        b
    }

    /// The echo `b` holds: exactly [`DELAY_PROBE_LEN`] bytes with its magic.
    pub fn decode(b: &[u8]) -> Result<DelayEcho, WireError> {
        let w = words(b, ECHO_MAGIC, "delay echo")?;
        Ok(DelayEcho {
            seq: w[0],
            client_sent_ns: w[1],
            server_received_ns: w[2],
            server_sent_ns: w[3],
        })
    }
}

/// The four big-endian words after the magic of a datagram of exactly
/// [`DELAY_PROBE_LEN`] bytes.
fn words(b: &[u8], magic: [u8; 4], what: &'static str) -> Result<[u64; 4], WireError> {
    if b.len() != DELAY_PROBE_LEN {
        return Err(WireError::Malformed {
            what,
            flaw: Flaw::Length {
                got: b.len(),
                want: DELAY_PROBE_LEN,
            },
        });
    }
    if b[..4] != magic {
        return Err(WireError::Malformed {
            what,
            flaw: Flaw::NoMagic,
        });
    }
    let mut w = [0u64; 4];
    for (i, chunk) in b[4..].chunks_exact(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        w[i] = u64::from_be_bytes(word);
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn probes_and_echoes_come_back_as_sent(seq: u64, a: u64, b: u64, c: u64) {
            let p = DelayProbe { seq, client_sent_ns: a };
            prop_assert_eq!(DelayProbe::decode(&p.encode()).unwrap(), p);
            let e = p.echo(b, c);
            prop_assert_eq!(DelayEcho::decode(&e.encode()).unwrap(), e);
        }

        #[test]
        fn any_bytes_decode_or_fail_without_panicking(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = DelayProbe::decode(&b);
            let _ = DelayEcho::decode(&b);
        }
    }

    #[test]
    fn a_probe_is_not_an_echo_and_a_short_one_is_refused() {
        let p = DelayProbe {
            seq: 1,
            client_sent_ns: 2,
        };
        assert!(DelayEcho::decode(&p.encode()).is_err());
        assert!(DelayProbe::decode(&p.encode()[..20]).is_err());
        assert!(DelayProbe::decode(&p.echo(3, 4).encode()).is_err());
    }
}
