//! A step that runs a proxy application instead of flows: which task each
//! rank gets (its peers at their job ports), and the job's result from the
//! ranks' reports. The coordinator calls these; they hold no state.

use std::net::SocketAddr;

use linerate_result::fleet::{JobRank, JobResult};
use linerate_wire::{JobKind, JobPeer, JobReport, JobTask, SocketParams};

use crate::session::Unrunnable;

/// A proxy application run as one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlan {
    /// Which application.
    pub kind: JobKind,
    /// Iterations every rank runs.
    pub iterations: u32,
    /// Compute time per iteration, us.
    pub compute_us: u32,
    /// The ranks' grid, for a halo exchange.
    pub grid: Option<[u32; 3]>,
    /// Each rank's peers and the bytes it sends each per iteration, by rank.
    pub peers: Vec<Vec<(u32, u64)>>,
}

/// Each rank's task, or why it cannot run: `job_addr(rank)` is where a
/// rank's job port is, or why it has none (it failed, it never joined).
pub fn tasks(
    job: &JobPlan,
    socket: &SocketParams,
    job_addr: impl Fn(u32) -> Result<SocketAddr, Unrunnable>,
) -> Vec<(u32, Result<JobTask, Unrunnable>)> {
    job.peers
        .iter()
        .enumerate()
        .filter(|(_, peers)| !peers.is_empty())
        .map(|(r, peers)| {
            let r = r as u32;
            let task = job_addr(r).and_then(|_| {
                let peers = peers
                    .iter()
                    .map(|&(p, bytes)| {
                        Ok(JobPeer {
                            rank: p,
                            addr: job_addr(p).map_err(|why| Unrunnable::Peer(Box::new(why)))?,
                            bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
                        })
                    })
                    .collect::<Result<Vec<JobPeer>, Unrunnable>>()?;
                Ok(JobTask {
                    kind: job.kind,
                    iterations: job.iterations,
                    compute_us: job.compute_us,
                    socket: socket.clone(),
                    peers,
                })
            });
            (r, task)
        })
        .collect()
}

/// The job's result: every rank with peers, from its report, or with why
/// it has none (`missing(rank)`).
pub fn result(
    job: &JobPlan,
    socket: &SocketParams,
    reports: &[Option<JobReport>],
    missing: impl Fn(u32) -> String,
) -> JobResult {
    let ranks = job
        .peers
        .iter()
        .enumerate()
        .filter(|(_, peers)| !peers.is_empty())
        .map(|(r, peers)| {
            let r = r as u32;
            let bytes: u64 = peers.iter().map(|p| p.1).sum();
            match reports.get(r as usize).cloned().flatten() {
                Some(rep) => {
                    JobRank::of(r, peers.len() as u32, bytes, &rep.iteration_ns, rep.error)
                }
                None => JobRank::of(r, peers.len() as u32, bytes, &[], Some(missing(r))),
            }
        })
        .collect();
    JobResult {
        grid: job.grid,
        dscp: socket.tos.map(|t| t >> 2),
        ..JobResult::of(job.kind.as_str(), job.iterations, job.compute_us, ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> JobPlan {
        JobPlan {
            kind: JobKind::AllToAll,
            iterations: 3,
            compute_us: 0,
            grid: None,
            peers: vec![
                vec![(1, 8), (2, 8)],
                vec![(0, 8), (2, 8)],
                vec![(0, 8), (1, 8)],
            ],
        }
    }

    #[test]
    fn a_rank_whose_peer_failed_is_not_sent_a_task() {
        let addr = |r: u32| {
            if r == 2 {
                Err(Unrunnable::Failed {
                    rank: 2,
                    why: "gone".into(),
                })
            } else {
                Ok(SocketAddr::from(([10, 0, 0, r as u8 + 1], 9000)))
            }
        };
        let t = tasks(&plan(), &SocketParams::default(), addr);
        assert_eq!(t.len(), 3);
        assert!(
            t[0].1
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("its peer rank 2 failed")
        );
        assert!(t[2].1.is_err());
    }

    #[test]
    fn every_rank_is_set_up_as_the_run_says() {
        let marked = SocketParams {
            tos: Some(46 << 2),
            congestion: Some("cubic".into()),
            rcvbuf: Some(4 << 20),
            ..SocketParams::default()
        };
        let t = tasks(&plan(), &marked, |r| {
            Ok(SocketAddr::from(([10, 0, 0, r as u8 + 1], 9000)))
        });
        assert!(
            t.iter()
                .all(|(_, task)| task.as_ref().unwrap().socket == marked)
        );
    }

    #[test]
    fn the_result_names_ranks_without_a_report() {
        let reports = vec![
            Some(JobReport {
                iteration_ns: vec![1_000, 3_000, 2_000],
                error: None,
            }),
            None,
            Some(JobReport {
                iteration_ns: vec![5_000],
                error: Some("stopped".into()),
            }),
        ];
        let marked = SocketParams {
            tos: Some(46 << 2),
            ..SocketParams::default()
        };
        let r = result(&plan(), &marked, &reports, |r| {
            format!("rank {r}: not reported")
        });
        assert_eq!(r.dscp, Some(46));
        assert_eq!(r.ranks[0].median_us, 2.0);
        assert_eq!(r.ranks[0].max_us, 3.0);
        assert_eq!(r.ranks[1].error.as_deref(), Some("rank 1: not reported"));
        assert_eq!(r.ranks[2].iterations, 1);
        assert_eq!(r.total_seconds, 6e-6);
    }
}
