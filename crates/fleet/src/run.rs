//! A many-host run from its launch to its outcome: this process is one
//! rank of srun or mpirun (an agent, or rank 0, which coordinates and is an
//! agent too), or it starts the agents itself and coordinates them. The
//! protocol's timing (how long agents have to join, a step's lead, the
//! grace for reports) is decided here, not by the caller.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use linerate_verdict::KnownPath;

use crate::agent::{self, AGENT_SILENCE, AgentSpec, JOIN_WITHIN};
use crate::agents::{self, AgentSource, Children, LaunchError, Role};
use crate::coordinator::{Hooks, Rendezvous};
use crate::plan::{Flow, Step};
use crate::session::coordinator::{Event, JobPlan, Outcome, PlannedStep, Settings};
use linerate_wire::SocketParams;

/// From handing out a step to its start.
const LEAD: Duration = Duration::from_millis(500);
/// More lead for each flow of a step: setting up 1,024 flows into one
/// receiver took about a second on two cores (docs/guide.md#many-hosts).
const LEAD_PER_FLOW: Duration = Duration::from_millis(2);
/// How long after a step's end its reports may take: flows still
/// connecting, many sessions on few cores.
const REPORT_GRACE: Duration = Duration::from_secs(20);
/// How long agents this process started have to leave after the run.
const CHILDREN_GRACE: Duration = Duration::from_secs(10);

/// What every step of a run is given, whatever its plan.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Each step's length.
    pub step_time: Duration,
    /// Between interval samples of each flow, in ms.
    pub interval_ms: u64,
    /// The whole run's limit (default: the plan's length with room for
    /// joining and reporting).
    pub timeout: Option<Duration>,
    /// The socket options of every connection of the run.
    pub socket: SocketParams,
    /// What is known of this host's path (a lab's rate and RTT).
    pub path: KnownPath,
    /// This host's name in the result.
    pub name: String,
    /// This program, for the agents a starter launches.
    pub program: PathBuf,
}

/// What the caller may show as the run goes.
pub enum Notice<'a> {
    /// The coordinator listens and the agents are on their way.
    Meeting {
        /// Ranks in the run.
        size: u32,
        /// The plan.
        plan: &'a [PlannedStep],
        /// Where agents meet the coordinator.
        at: SocketAddr,
    },
    /// No run token in the environment of a rank 0: any host that reaches
    /// the port while the agents join can take a rank.
    Unguarded {
        /// The variable that would carry the token.
        variable: &'static str,
        /// The coordinator's port.
        port: u16,
    },
    /// The coordinator machine's own event.
    Event(&'a Event),
}

/// How the run ended for this process.
pub enum Ended {
    /// This process was one agent of someone else's run.
    AsAgent,
    /// This process coordinated: every step's outcome.
    Coordinated {
        /// The steps, flows and hosts.
        outcome: Box<Outcome>,
        /// Who launched the agents (`srun`, `mpirun`, `ssh`, `lab`, `local`).
        launcher: &'static str,
    },
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The agents could not be launched as asked.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The coordinator or this process's agent failed.
    #[error(transparent)]
    Engine(#[from] linerate_engine::EngineError),
    /// A rank of srun or mpirun failed as an agent.
    #[error("rank {rank}: {error}")]
    Rank {
        /// Its rank.
        rank: u32,
        /// What failed.
        error: linerate_engine::EngineError,
    },
    /// The lab's host namespace could not be entered.
    #[error(transparent)]
    Lab(#[from] linerate_lab::LabError),
}

/// What this process is in the run its environment and flags describe.
pub fn role(source: &AgentSource) -> Result<Role, LaunchError> {
    agents::role(source, &|v| std::env::var(v).ok())
}

/// Ranks in the run this process coordinates; `None` when it is one agent
/// of another's run (it plans nothing).
pub fn ranks_to_plan(role: &Role) -> Option<u32> {
    match role {
        Role::Agent { .. } => None,
        Role::RankZero { launch, .. } => Some(launch.size),
        Role::Starter(s) => Some(s.size()),
    }
}

/// Runs `plan` in the role the environment gave: as an agent, or as the
/// coordinator with its agents (what ran is kept when `stop` is set).
pub fn run(
    role: Role,
    source: &AgentSource,
    plan: Vec<PlannedStep>,
    spec: &RunSpec,
    stop: Arc<AtomicBool>,
    notice: &mut (dyn FnMut(Notice) + Send),
) -> Result<Ended, RunError> {
    match role {
        Role::Agent {
            launch,
            coordinator,
        } => {
            let silence = spec.timeout.unwrap_or(AGENT_SILENCE);
            let me = agent_spec(spec, coordinator, (launch.rank, launch.size), silence);
            agent::run(&me, stop).map_err(|error| RunError::Rank {
                rank: launch.rank,
                error,
            })?;
            Ok(Ended::AsAgent)
        }
        Role::RankZero {
            launch,
            coordinator,
        } => {
            let timeout = run_timeout(spec, plan.len());
            let listen = SocketAddr::new(unspecified(coordinator), coordinator.port());
            let rendezvous = Rendezvous::bind(listen)?;
            // The port bound, should the launcher's address have left it to the system.
            let meet = SocketAddr::new(coordinator.ip(), rendezvous.local_addr()?.port());
            let me = agent_spec(spec, meet, (0, launch.size), timeout);
            let agent_stop = Arc::clone(&stop);
            let own_agent = std::thread::spawn(move || agent::run(&me, agent_stop));
            let token = agents::run_token();
            if token.is_none() {
                notice(Notice::Unguarded {
                    variable: agents::RUN_TOKEN,
                    port: meet.port(),
                });
            }
            let run = Planned {
                size: launch.size,
                plan,
                timeout,
                token,
            };
            let outcome = coordinate(spec, rendezvous, run, &stop, notice, &mut Vec::new);
            if outcome.is_err() {
                // No coordinator will come: the own agent stops waiting for it.
                stop.store(true, Relaxed);
            }
            let _ = own_agent.join();
            Ok(Ended::Coordinated {
                outcome: Box::new(outcome?),
                launcher: launch.launcher.name(),
            })
        }
        Role::Starter(starter) => {
            let size = starter.size();
            let timeout = run_timeout(spec, plan.len());
            let listen = starter.listen(source)?;
            let outcome = linerate_lab::netns::run_in(starter.netns(), || {
                let rendezvous = Rendezvous::bind(listen)?;
                let meet = rendezvous.local_addr()?;
                let token = agents::new_token()?;
                let mut children =
                    Children::start(&starter, source, &spec.program, meet, timeout, &token)?;
                let run = Planned {
                    size,
                    plan,
                    timeout,
                    token: Some(token),
                };
                let mut failures = || children.launch_failures();
                let outcome = coordinate(spec, rendezvous, run, &stop, notice, &mut failures);
                children.finish(CHILDREN_GRACE);
                outcome
            })?;
            Ok(Ended::Coordinated {
                outcome: Box::new(outcome),
                launcher: starter.launcher(),
            })
        }
    }
}

/// This process's own agent in a run it is a rank of.
fn agent_spec(
    spec: &RunSpec,
    coordinator: SocketAddr,
    (rank, size): (u32, u32),
    silence: Duration,
) -> AgentSpec {
    AgentSpec {
        silence,
        token: agents::run_token(),
        path: spec.path,
        ..AgentSpec::joining(coordinator, rank, size, spec.name.clone())
    }
}

/// A plan step with the factors it varies, by name: an incast's senders,
/// hosts and message size, a mesh's one pair.
pub fn planned(s: &Step, incast: bool) -> PlannedStep {
    let factors = if incast {
        BTreeMap::from([
            ("senders_per_host".into(), u64::from(s.senders_per_host)),
            ("source_hosts".into(), u64::from(s.source_hosts)),
            ("message_bytes".into(), s.message_bytes),
        ])
    } else if let [f] = s.flows.as_slice() {
        BTreeMap::from([
            ("from".into(), u64::from(f.from)),
            ("to".into(), u64::from(f.to)),
        ])
    } else {
        BTreeMap::new()
    };
    // A mesh moves bulk data: the bench's write size where many streams
    // share the cores, as every host's flows do in a mesh.
    let flows = s
        .flows
        .iter()
        .map(|f| Flow {
            message_bytes: if f.message_bytes == 0 {
                u64::from(linerate_engine::bench::WRITE_LEN_SHARED_CORES)
            } else {
                f.message_bytes
            },
            ..*f
        })
        .collect();
    PlannedStep {
        factors,
        flows,
        job: None,
    }
}

/// A proxy application as the one step of a run: no flows of its own,
/// its iterations and compute time as the factors it varies.
pub fn job_step(job: JobPlan) -> PlannedStep {
    let factors = BTreeMap::from([
        ("iterations".to_string(), u64::from(job.iterations)),
        ("compute_us".to_string(), u64::from(job.compute_us)),
    ]);
    PlannedStep {
        factors,
        flows: Vec::new(),
        job: Some(job),
    }
}

fn unspecified(like: SocketAddr) -> IpAddr {
    match like {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    }
}

/// The run's limit: joining, then every step with its lead and grace.
pub fn run_timeout(spec: &RunSpec, steps: usize) -> Duration {
    spec.timeout.unwrap_or_else(|| {
        let step = spec.step_time + LEAD + REPORT_GRACE + LEAD_PER_FLOW * 4096;
        JOIN_WITHIN + step * steps as u32 + Duration::from_secs(30)
    })
}

/// A run's ranks, steps, time limit and token.
struct Planned {
    size: u32,
    plan: Vec<PlannedStep>,
    timeout: Duration,
    token: Option<String>,
}

fn coordinate(
    spec: &RunSpec,
    rendezvous: Rendezvous,
    run: Planned,
    stop: &AtomicBool,
    notice: &mut (dyn FnMut(Notice) + Send),
    launch_failures: &mut dyn FnMut() -> Vec<(u32, String)>,
) -> Result<Outcome, RunError> {
    let Planned {
        size,
        plan,
        timeout,
        token,
    } = run;
    notice(Notice::Meeting {
        size,
        plan: &plan,
        at: rendezvous.local_addr()?,
    });
    let settings = Settings {
        size,
        join_within: JOIN_WITHIN,
        probes: 5,
        answer_within: Duration::from_secs(5),
        token,
        lead: LEAD,
        lead_per_flow: LEAD_PER_FLOW,
        duration: spec.step_time,
        interval_ms: spec.interval_ms,
        report_grace: REPORT_GRACE,
        socket: spec.socket.clone(),
    };
    let mut on_event = |e: &Event| notice(Notice::Event(e));
    let hooks = Hooks {
        on_event: &mut on_event,
        launch_failures,
    };
    Ok(rendezvous.run(settings, plan, timeout, stop, hooks)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(timeout: Option<Duration>) -> RunSpec {
        RunSpec {
            step_time: Duration::from_secs(5),
            interval_ms: 1000,
            timeout,
            socket: SocketParams::default(),
            path: KnownPath::default(),
            name: "h1".into(),
            program: PathBuf::from("linerate"),
        }
    }

    #[test]
    fn a_runs_limit_grows_with_its_steps_and_a_given_one_wins() {
        let one = run_timeout(&spec(None), 1);
        let two = run_timeout(&spec(None), 2);
        // Every step adds its length, its lead (with room for 4,096 flows)
        // and the grace for its reports.
        assert_eq!(
            two - one,
            Duration::from_secs(5) + LEAD + REPORT_GRACE + LEAD_PER_FLOW * 4096
        );
        assert!(one > JOIN_WITHIN + Duration::from_secs(5));
        let given = Duration::from_secs(7);
        assert_eq!(run_timeout(&spec(Some(given)), 100), given);
    }

    #[test]
    fn a_mesh_step_names_its_pair_and_gets_the_shared_cores_write_size() {
        let step = Step {
            senders_per_host: 1,
            source_hosts: 1,
            message_bytes: 0,
            flows: vec![Flow {
                from: 2,
                to: 3,
                streams: 4,
                message_bytes: 0,
            }],
        };
        let p = planned(&step, false);
        assert_eq!(p.factors.get("from"), Some(&2));
        assert_eq!(p.factors.get("to"), Some(&3));
        assert_eq!(
            p.flows[0].message_bytes,
            u64::from(linerate_engine::bench::WRITE_LEN_SHARED_CORES)
        );
        let incast = planned(
            &Step {
                message_bytes: 8,
                flows: vec![Flow {
                    message_bytes: 8,
                    ..step.flows[0]
                }],
                ..step
            },
            true,
        );
        assert_eq!(incast.factors.get("message_bytes"), Some(&8));
        assert_eq!(incast.flows[0].message_bytes, 8);
    }

    #[test]
    fn only_a_coordinating_role_plans() {
        let launch = crate::launch::detect(
            &|v| match v {
                "SLURM_PROCID" => Some("1".into()),
                "SLURM_NTASKS" => Some("3".into()),
                "SLURM_JOB_NODELIST" => Some("n[1-3]".into()),
                _ => None,
            },
            None,
        )
        .expect("a Slurm environment");
        let coordinator: SocketAddr = "10.0.0.1:5301".parse().unwrap();
        let agent = Role::Agent {
            launch: launch.clone(),
            coordinator,
        };
        assert_eq!(ranks_to_plan(&agent), None);
        let zero = Role::RankZero {
            launch,
            coordinator,
        };
        assert_eq!(ranks_to_plan(&zero), Some(3));
    }
}
