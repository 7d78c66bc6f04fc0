//! What each rank of a many-host run does, step by step: the flows of an
//! incast sweep (many senders on many hosts to one receiver, the seed's
//! senders x source hosts x message size) and of an all-pairs mesh, and
//! Jain's fairness index over the flows' rates. Every flow of a step starts
//! at one agreed time; steps run one after another.

/// One flow: `streams` connections from rank `from` to rank `to`, moving
/// messages of `message_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// The sending rank.
    pub from: u32,
    /// The receiving rank.
    pub to: u32,
    /// Connections the flow opens.
    pub streams: u16,
    /// Bytes per write.
    pub message_bytes: u64,
}

/// Flows started together, and what the step varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Sending processes on each source host.
    pub senders_per_host: u16,
    /// Hosts that send.
    pub source_hosts: u32,
    /// Bytes per write of every flow.
    pub message_bytes: u64,
    /// The flows, started together.
    pub flows: Vec<Flow>,
}

/// An incast sweep to `receiver` from the first `n` of `sources` for each
/// `n` in `source_hosts`, with each of `senders_per_host` sending processes
/// (one flow of one stream each) on every source host, for each message
/// size: one step per combination, sizes innermost.
pub fn incast(
    receiver: u32,
    sources: &[u32],
    senders_per_host: &[u16],
    source_hosts: &[u32],
    message_bytes: &[u64],
) -> Vec<Step> {
    let mut steps = Vec::new();
    for &senders in senders_per_host {
        for &hosts in source_hosts {
            let chosen = &sources[..(hosts as usize).min(sources.len())];
            for &size in message_bytes {
                let flows = chosen
                    .iter()
                    .flat_map(|&from| {
                        (0..senders).map(move |_| Flow {
                            from,
                            to: receiver,
                            streams: 1,
                            message_bytes: size,
                        })
                    })
                    .collect();
                steps.push(Step {
                    senders_per_host: senders,
                    source_hosts: chosen.len() as u32,
                    message_bytes: size,
                    flows,
                });
            }
        }
    }
    steps
}

/// Every ordered pair of `ranks`: one step a pair (each measured alone),
/// or one step holding them all (`all_at_once`).
pub fn mesh(ranks: &[u32], streams: u16, all_at_once: bool) -> Vec<Step> {
    let pairs: Vec<Flow> = ranks
        .iter()
        .flat_map(|&from| {
            ranks
                .iter()
                .filter(move |&&to| to != from)
                .map(move |&to| Flow {
                    from,
                    to,
                    streams,
                    message_bytes: 0,
                })
        })
        .collect();
    let step = |flows: Vec<Flow>| Step {
        senders_per_host: 1,
        source_hosts: ranks.len() as u32,
        message_bytes: 0,
        flows,
    };
    if all_at_once {
        vec![step(pairs)]
    } else {
        pairs.into_iter().map(|f| step(vec![f])).collect()
    }
}

pub use linerate_result::stats::jain_index;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_seeds_incast_sweep() {
        // Receiver rank 0, sources 1..=4; 1 and 8 senders a host; 1, 2 and
        // 4 source hosts; the seed's sizes 8 B, 10 KB and 1 MB.
        let sizes = [8, 10_000, 1_000_000];
        let steps = incast(0, &[1, 2, 3, 4], &[1, 8], &[1, 2, 4], &sizes);
        assert_eq!(steps.len(), 2 * 3 * 3);
        let widest = steps.iter().map(|s| s.flows.len()).max().unwrap();
        assert_eq!(widest, 8 * 4);
        let s = &steps[4]; // 1 sender a host, 2 hosts, 10 KB
        assert_eq!(
            (s.senders_per_host, s.source_hosts, s.message_bytes),
            (1, 2, 10_000)
        );
        assert_eq!(s.flows.iter().map(|f| f.from).collect::<Vec<_>>(), [1, 2]);
        assert!(steps.iter().flat_map(|s| &s.flows).all(|f| f.to == 0));
    }

    #[test]
    fn a_mesh_of_n_hosts_has_every_ordered_pair() {
        let pairwise = mesh(&[0, 1, 2, 3], 2, false);
        assert_eq!(pairwise.len(), 12);
        assert!(
            pairwise
                .iter()
                .all(|s| s.flows.len() == 1 && s.flows[0].from != s.flows[0].to)
        );
        let at_once = mesh(&[0, 1, 2, 3], 2, true);
        assert_eq!(at_once.len(), 1);
        assert_eq!(at_once[0].flows.len(), 12);
    }

    #[test]
    fn jain_is_one_when_fair_and_one_over_n_when_one_takes_all() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(jain_index(&[]), 1.0);
        assert_eq!(jain_index(&[0.0, 0.0]), 1.0);
    }

    proptest! {
        #[test]
        fn jain_lies_between_one_over_n_and_one(rates in proptest::collection::vec(0.0f64..1e12, 1..64)) {
            let j = jain_index(&rates);
            let n = rates.len() as f64;
            prop_assert!(j <= 1.0 + 1e-9 && j >= 1.0 / n - 1e-9, "{j}");
        }

        /// The plan grows linearly: flows = senders x hosts per step.
        #[test]
        fn an_incast_plan_grows_with_its_agents(hosts in 1u32..128, senders in 1u16..16) {
            let sources: Vec<u32> = (1..=hosts).collect();
            let steps = incast(0, &sources, &[senders], &[hosts], &[1 << 20]);
            prop_assert_eq!(steps.len(), 1);
            prop_assert_eq!(steps[0].flows.len(), hosts as usize * usize::from(senders));
        }
    }
}
