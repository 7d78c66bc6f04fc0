//! UDP streams of a bench session: each datagram's header, and the
//! receiver's accounting of what arrived (loss, reordering, duplicates and
//! RFC 3550 jitter), as a sans-IO counter fed one header and arrival time
//! at a time.
//!
//! ```text
//! seq[8] sent_ns[8]   then payload up to the session's datagram size
//! ```
//!
//! `seq` counts from 0 on each stream; `sent_ns` is the sender's clock
//! since its stream began. Only differences of `sent_ns` are used, so the
//! two ends' clocks need not agree.

use serde::{Deserialize, Serialize};

use crate::{Flaw, WireError};

/// Bytes of a [`DatagramHeader`].
pub const DATAGRAM_HEADER_LEN: usize = 16;
/// Largest UDP payload over IPv4 (65,535 less the IP and UDP headers).
pub const MAX_DATAGRAM_LEN: u32 = 65_507;
/// How far back a late datagram is still told from a duplicate.
const HISTORY: u64 = 4096;

/// What a UDP stream of a bench carries; the client proposes, the server
/// checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdpParams {
    /// Payload rate of each stream, bits per second.
    pub rate_bps: u64,
    /// The sender hands the kernel many datagrams at once (UDP_SEGMENT).
    pub gso: bool,
    /// The receiver takes coalesced datagrams (UDP_GRO).
    pub gro: bool,
}

impl UdpParams {
    /// Whether the options are within bounds for datagrams of `datagram_len` bytes.
    pub fn validate(&self, datagram_len: u32) -> Result<(), WireError> {
        if self.rate_bps == 0 || self.rate_bps > 4_000_000_000_000 {
            return WireError::invalid("udp.rate_bps", "must be between 1 bit/s and 4 Tbit/s");
        }
        if !(DATAGRAM_HEADER_LEN as u32..=MAX_DATAGRAM_LEN).contains(&datagram_len) {
            return WireError::invalid(
                "write_len",
                "a UDP datagram is 16 bytes (its header) to 65,507 bytes",
            );
        }
        Ok(())
    }
}

/// The header at the front of every datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramHeader {
    /// The datagram's number in its stream, from 0.
    pub seq: u64,
    /// When it was sent, on the sender's clock, ns.
    pub sent_ns: u64,
}

impl DatagramHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; DATAGRAM_HEADER_LEN] {
        let mut b = [0u8; DATAGRAM_HEADER_LEN];
        b[..8].copy_from_slice(&self.seq.to_be_bytes());
        b[8..].copy_from_slice(&self.sent_ns.to_be_bytes());
        b
    }

    /// The header at the front of `b`.
    pub fn decode(b: &[u8]) -> Result<DatagramHeader, WireError> {
        let Some(h) = b.get(..DATAGRAM_HEADER_LEN) else {
            return Err(WireError::Malformed {
                what: "UDP datagram",
                flaw: Flaw::Short {
                    need: DATAGRAM_HEADER_LEN,
                    has: b.len(),
                },
            });
        };
        let mut seq = [0u8; 8];
        let mut sent = [0u8; 8];
        seq.copy_from_slice(&h[..8]);
        sent.copy_from_slice(&h[8..]);
        Ok(DatagramHeader {
            seq: u64::from_be_bytes(seq),
            sent_ns: u64::from_be_bytes(sent),
        })
    }
}

/// What a UDP receiver counted.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct UdpCounts {
    /// Datagrams taken, duplicates included.
    pub datagrams: u64,
    /// Datagrams past the highest sequence number seen before them.
    pub expected: u64,
    /// Arrived after a later one.
    pub out_of_order: u64,
    /// Arrived more than once.
    pub duplicates: u64,
    /// RFC 3550's interarrival jitter, in nanoseconds.
    pub jitter_ns: f64,
}

impl UdpCounts {
    /// Datagrams the sender sent that never came: by the sequence numbers,
    /// or by the sender's own count when it told it.
    pub fn lost(&self, sent: Option<u64>) -> u64 {
        let unique = self.datagrams - self.duplicates;
        sent.unwrap_or(self.expected).saturating_sub(unique)
    }
}

/// The receiver's accounting, fed each datagram's header with the time it
/// arrived (ns on the receiver's clock).
#[derive(Debug, Clone, Default)]
pub struct UdpCounter {
    counts: UdpCounts,
    /// One past the highest sequence number seen.
    next: u64,
    /// Which of the sequence numbers below `next` (at most HISTORY back) came.
    seen: Vec<u64>,
    /// The last datagram's transit (arrival - sent), for the jitter.
    last_transit: Option<i128>,
}

impl UdpCounter {
    /// A counter that has seen no datagram.
    pub fn new() -> UdpCounter {
        UdpCounter {
            seen: vec![0; (HISTORY / 64) as usize],
            ..UdpCounter::default()
        }
    }

    fn bit(&mut self, seq: u64) -> (usize, u64) {
        let slot = seq % HISTORY;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    /// Counts a datagram that arrived at `arrived_ns`.
    pub fn take(&mut self, h: DatagramHeader, arrived_ns: u64) {
        self.counts.datagrams += 1;
        if h.seq >= self.next {
            // Clear the history slots the jump skips over, so they read unseen.
            let from = self.next.max(h.seq.saturating_sub(HISTORY - 1));
            for s in from..h.seq {
                let (w, m) = self.bit(s);
                self.seen[w] &= !m;
            }
            let (w, m) = self.bit(h.seq);
            self.seen[w] |= m;
            self.next = h.seq.saturating_add(1);
            self.counts.expected = self.next;
        } else if self.next - h.seq > HISTORY {
            // Too late to tell: counted as out of order, not as a duplicate.
            self.counts.out_of_order += 1;
        } else {
            let (w, m) = self.bit(h.seq);
            if self.seen[w] & m != 0 {
                self.counts.duplicates += 1;
            } else {
                self.seen[w] |= m;
                self.counts.out_of_order += 1;
            }
        }
        // RFC 3550 6.4.1: J += (|D| - J) / 16, D the change in transit time.
        let transit = i128::from(arrived_ns) - i128::from(h.sent_ns);
        if let Some(last) = self.last_transit {
            let d = (transit - last).unsigned_abs() as f64;
            self.counts.jitter_ns += (d - self.counts.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    /// The counts so far.
    pub fn counts(&self) -> UdpCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(seq: u64, sent_ns: u64) -> DatagramHeader {
        DatagramHeader { seq, sent_ns }
    }

    #[test]
    fn header_round_trips_and_a_short_datagram_is_refused() {
        let x = h(7, 123_456_789);
        assert_eq!(DatagramHeader::decode(&x.encode()), Ok(x));
        assert!(DatagramHeader::decode(&[0; 15]).is_err());
    }

    #[test]
    fn loss_reordering_duplicates_and_jitter_are_counted() {
        let mut c = UdpCounter::new();
        // 0 1 3 2 2 5: 4 lost, 2 late, one 2 twice.
        for (seq, at) in [
            (0, 0),
            (1, 1000),
            (3, 2000),
            (2, 3000),
            (2, 3100),
            (5, 5000),
        ] {
            c.take(h(seq, seq * 1000), at);
        }
        let n = c.counts();
        assert_eq!(n.datagrams, 6);
        assert_eq!(n.expected, 6);
        assert_eq!(n.out_of_order, 1);
        assert_eq!(n.duplicates, 1);
        assert_eq!(n.lost(None), 1);
        assert_eq!(n.lost(Some(8)), 3, "the sender's count covers a lost tail");
        assert!(n.jitter_ns > 0.0);
        let mut steady = UdpCounter::new();
        for seq in 0..100 {
            steady.take(h(seq, seq * 1000), 50_000 + seq * 1000);
        }
        assert_eq!(
            steady.counts().jitter_ns,
            0.0,
            "constant transit, no jitter"
        );
    }

    proptest! {
        /// Any arrival order of a set of datagrams, some twice: loss is
        /// what never came, duplicates what came twice.
        #[test]
        fn counts_hold_for_any_order(
            keep in prop::collection::vec(any::<bool>(), 1..300),
            twice in prop::collection::vec(0usize..300, 0..20),
            seed in any::<u64>(),
        ) {
            let mut seqs: Vec<u64> = (0..keep.len() as u64).filter(|&s| keep[s as usize]).collect();
            let dups: Vec<u64> = twice.iter().filter_map(|&i| seqs.get(i).copied()).collect();
            seqs.extend(&dups);
            // A small shuffle: swap neighbours by the seed's bits.
            for i in 1..seqs.len() {
                if (seed >> (i % 64)) & 1 == 1 {
                    seqs.swap(i - 1, i);
                }
            }
            let mut c = UdpCounter::new();
            for (i, &s) in seqs.iter().enumerate() {
                c.take(h(s, s), i as u64);
            }
            let n = c.counts();
            let unique = seqs.len() as u64 - dups.len() as u64;
            prop_assert_eq!(n.duplicates, dups.len() as u64);
            prop_assert_eq!(n.lost(Some(keep.len() as u64)), keep.len() as u64 - unique);
        }
    }
}
