//! Which links a run's data went over: the striped paths its streams were
//! given (`--stripe`), and the members of the bond or multipath route that
//! the client's kernel hashed them to, with what each carried.

use std::net::IpAddr;

use linerate_probe::members::{self, Members, Spreader};
use linerate_result::{Limit, MemberShare, PathShare, ResultDoc, StreamEnd, StreamTotals, Verdict};
use linerate_verdict as verdict;
use linerate_wire::Direction;

use crate::address::Stripe;

/// The members of the route to the peer, and their counters when the
/// streams opened.
pub struct MemberWatch {
    members: Members,
    before: Vec<(u64, u64)>,
}

/// What the members of the route to the peer carried in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct MembersCarried {
    /// What spread the flows over them.
    pub spreader: Spreader,
    /// Each member's bytes and share.
    pub shares: Vec<MemberShare>,
}

impl MemberWatch {
    /// Starts counting when the route to `peer` spreads flows over several
    /// links; None when it is one link (or cannot be read).
    pub fn start(peer: IpAddr) -> Option<MemberWatch> {
        let members = members::toward(peer)?;
        let before = members::bytes(&members.devices);
        Some(MemberWatch { members, before })
    }

    /// What each member carried since the start in the run's data
    /// direction: sent for a forward run, received for -R, both for --bidir.
    pub fn finish(&self, direction: Direction) -> MembersCarried {
        let after = members::bytes(&self.members.devices);
        let carried: Vec<u64> = after
            .iter()
            .zip(&self.before)
            .map(|(&(tx1, rx1), &(tx0, rx0))| {
                let (tx, rx) = (tx1.saturating_sub(tx0), rx1.saturating_sub(rx0));
                match direction {
                    Direction::Forward => tx,
                    Direction::Reverse => rx,
                    Direction::Bidir => tx + rx,
                }
            })
            .collect();
        let total: u64 = carried.iter().sum();
        MembersCarried {
            spreader: self.members.spreader.clone(),
            shares: self
                .members
                .devices
                .iter()
                .zip(carried)
                .map(|(device, bytes)| MemberShare {
                    device: device.clone(),
                    bytes,
                    share: if total > 0 {
                        bytes as f64 / total as f64
                    } else {
                        0.0
                    },
                })
                .collect(),
        }
    }
}

/// A run's verdict with what its links carried: each striped path's share
/// and the members' from `members`, written into `doc`'s summary, the
/// paths into its parameters, and the verdict `links` where they did not
/// carry their shares. `flows` are the run's streams in its data direction.
pub fn judge_links(
    doc: &mut ResultDoc,
    stripes: &[Stripe],
    members: Option<&MembersCarried>,
    flows: u32,
) {
    let paths = paths(stripes, &doc.streams);
    let summary = &mut doc.summary;
    summary.verdict = verdict::spread::judge(
        std::mem::replace(&mut summary.verdict, placeholder()),
        &verdict::spread::Spread {
            paths: &paths,
            members: members.map(|m| (&m.spreader, m.shares.as_slice())),
            flows,
            bits_per_second: summary.bits_per_second,
        },
    );
    summary.paths = paths;
    summary.members = members.map(|m| m.shares.clone()).unwrap_or_default();
    if let (false, Some(map)) = (stripes.is_empty(), doc.parameters.as_object_mut()) {
        map.insert("stripes".into(), stripes_json(stripes));
    }
}

fn placeholder() -> Verdict {
    Verdict {
        limit: Limit::Unknown,
        side: None,
        sentence: String::new(),
        evidence: Default::default(),
    }
}

/// The paths as the result's parameters name them: `[{local, remote}]`.
fn stripes_json(stripes: &[Stripe]) -> serde_json::Value {
    stripes
        .iter()
        .map(|s| serde_json::json!({"local": s.local, "remote": s.remote}))
        .collect()
}

/// What each striped path carried: stream `i` went over path `i % n`.
pub fn paths(stripes: &[Stripe], streams: &[StreamEnd]) -> Vec<PathShare> {
    let n = stripes.len();
    if n < 2 {
        return Vec::new();
    }
    let on = |p: usize| move |s: &&StreamEnd| usize::from(s.stream) % n == p;
    let total = StreamTotals::of(streams).bytes;
    stripes
        .iter()
        .enumerate()
        .map(|(p, stripe)| {
            let t = StreamTotals::of(streams.iter().filter(on(p)));
            let mut ids: Vec<u16> = streams.iter().filter(on(p)).map(|s| s.stream).collect();
            ids.dedup();
            PathShare {
                path: p as u16 + 1,
                local: stripe.local.map(|a| a.to_string()),
                remote: stripe.remote.to_string(),
                streams: ids,
                bytes: t.bytes,
                bits_per_second: t.bits_per_second,
                retransmits: t.retransmits,
                share: if total > 0 {
                    t.bytes as f64 / total as f64
                } else {
                    0.0
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{Flow, Side};

    fn end(stream: u16, side: Side, bytes: u64) -> StreamEnd {
        StreamEnd {
            stream,
            side,
            flow: Flow::ClientToServer,
            bytes,
            bytes_total: bytes,
            seconds: 2.0,
            cpu_seconds: 0.0,
            runq_wait_seconds: 0.0,
            tls_seconds: 0.0,
            poll_idle_seconds: 0.0,
            tcp: None,
            sndbuf: 0,
            rcvbuf: 0,
            error: None,
            udp: None,
        }
    }

    #[test]
    fn streams_go_round_robin_over_the_paths_and_each_path_sums_its_own() {
        let stripes: Vec<Stripe> = ["10.1.0.2", "10.2.0.2"]
            .iter()
            .map(|r| Stripe {
                remote: r.parse().unwrap(),
                local: None,
            })
            .collect();
        let streams: Vec<StreamEnd> = (0..4u16)
            .flat_map(|i| {
                let bytes = if i % 2 == 1 { 25 } else { 100 };
                [end(i, Side::Sender, bytes), end(i, Side::Receiver, bytes)]
            })
            .collect();
        let p = paths(&stripes, &streams);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].streams, [0, 2]);
        assert_eq!(p[1].streams, [1, 3]);
        assert_eq!((p[0].bytes, p[1].bytes), (200, 50));
        assert_eq!(p[1].share, 0.2);
        assert_eq!(p[0].bits_per_second, 800.0);
        assert!(
            paths(&stripes[..1], &streams).is_empty(),
            "one path is no striping"
        );
    }
}
