//! One agreed start time across hosts whose clocks differ: the offset of an
//! agent's clock from the coordinator's, estimated from timestamped
//! exchanges as NTP does (request sent t1 and reply received t4 on the
//! coordinator's clock, request received t2 and reply sent t3 on the
//! agent's). The exchange with the least round-trip delay is kept: its
//! offset is wrong by at most half that delay, whatever the asymmetry.

/// One request and its reply, in nanoseconds of each side's own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// When the coordinator sent the probe (its clock).
    pub sent: i64,
    /// When the agent received it (the agent's clock).
    pub agent_received: i64,
    /// When the agent answered (the agent's clock).
    pub agent_sent: i64,
    /// When the answer arrived (the coordinator's clock).
    pub received: i64,
}

/// The agent's clock against the coordinator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offset {
    /// Agent clock minus coordinator clock.
    pub offset_ns: i64,
    /// The round trip of the exchange it came from, without the agent's
    /// own time between receiving and replying.
    pub delay_ns: i64,
}

impl Offset {
    /// The most the offset can be wrong by.
    pub fn error_bound_ns(&self) -> i64 {
        self.delay_ns / 2
    }

    /// A coordinator time on the agent's clock.
    pub fn to_agent(&self, coordinator_ns: i64) -> i64 {
        coordinator_ns.saturating_add(self.offset_ns)
    }
}

impl Exchange {
    /// `None` for an exchange whose timestamps contradict each other (the
    /// reply before the request on either clock).
    pub fn offset(&self) -> Option<Offset> {
        let here = self.received.checked_sub(self.sent)?;
        let there = self.agent_sent.checked_sub(self.agent_received)?;
        if here < 0 || there < 0 || there > here {
            return None;
        }
        let out = i128::from(self.agent_received) - i128::from(self.sent);
        let back = i128::from(self.agent_sent) - i128::from(self.received);
        Some(Offset {
            offset_ns: i64::try_from((out + back) / 2).ok()?,
            delay_ns: here - there,
        })
    }
}

/// The offset of the exchange with the least delay.
pub fn estimate(exchanges: &[Exchange]) -> Option<Offset> {
    exchanges
        .iter()
        .filter_map(Exchange::offset)
        .min_by_key(|o| o.delay_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An exchange with the agent's clock `offset` ahead, `out` and `back`
    /// one-way delays and `hold` spent at the agent.
    fn exchange(at: i64, offset: i64, out: i64, back: i64, hold: i64) -> Exchange {
        Exchange {
            sent: at,
            agent_received: at + out + offset,
            agent_sent: at + out + hold + offset,
            received: at + out + hold + back,
        }
    }

    #[test]
    fn symmetric_paths_give_the_offset_exactly() {
        let o = exchange(1_000, 5_000_000, 40_000, 40_000, 7_000)
            .offset()
            .unwrap();
        assert_eq!(
            o,
            Offset {
                offset_ns: 5_000_000,
                delay_ns: 80_000
            }
        );
        assert_eq!(o.to_agent(10), 5_000_010);
    }

    #[test]
    fn the_least_delayed_exchange_wins_and_nonsense_is_dropped() {
        let slow = exchange(0, -300, 900_000, 100_000, 0);
        let fast = exchange(10, -300, 20_000, 20_000, 0);
        let backwards = Exchange {
            sent: 5,
            agent_received: 0,
            agent_sent: 9,
            received: 4,
        };
        let o = estimate(&[slow, backwards, fast]).unwrap();
        assert_eq!(o.offset_ns, -300);
        assert_eq!(estimate(&[backwards]), None);
    }

    proptest! {
        /// Whatever the asymmetry, the estimate is within half the delay.
        #[test]
        fn the_error_is_within_half_the_delay(
            offset in -10_000_000_000i64..10_000_000_000,
            out in 0i64..50_000_000,
            back in 0i64..50_000_000,
            hold in 0i64..1_000_000,
        ) {
            let o = exchange(1 << 40, offset, out, back, hold).offset().unwrap();
            prop_assert!((o.offset_ns - offset).abs() <= o.error_bound_ns() + 1);
            prop_assert_eq!(o.delay_ns, out + back);
        }

        #[test]
        fn never_panics(a in any::<i64>(), b in any::<i64>(), c in any::<i64>(), d in any::<i64>()) {
            let _ = Exchange { sent: a, agent_received: b, agent_sent: c, received: d }.offset();
        }
    }
}
