//! A coordinator and its agents in memory, with a fake clock on both of
//! its faces (monotonic and wall): every message goes through the codec;
//! each agent's wall clock is off by its own offset. Then the faults a
//! many-host run meets: an agent that never joins, dies mid-step, hangs,
//! joins twice, and a run stopped mid-step.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::plan;
use linerate_result::HostFacts;
use linerate_result::fleet::FlowResult;
use linerate_wire::{AgentJoin, AgentReport, ClockEcho, Message, SocketParams};

use crate::session::agent::{self, Agent};
use crate::session::coordinator::{Conn, Coordinator, Event, Now, Outcome, PlannedStep, Settings};
use linerate_session::Session;

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    NeverJoins,
    /// Its connection drops when handed this step.
    DiesAt(u32),
    /// It never reports this step.
    HangsAt(u32),
}

struct SimAgent {
    machine: Agent,
    offset_ns: i64,
    fault: Fault,
    gone: bool,
    tasks: Vec<linerate_wire::AgentTask>,
}

struct Sim {
    now: Now,
    coordinator: Coordinator,
    agents: Vec<SimAgent>,
    events: Vec<Event>,
    strays: Vec<(Conn, Message)>,
}

fn through_codec(msg: Message) -> Message {
    Message::from_frame(&msg.to_frame()).expect("a message this side encoded")
}

fn settings(size: u32) -> Settings {
    Settings {
        size,
        join_within: Duration::from_secs(10),
        probes: 3,
        answer_within: Duration::from_secs(2),
        lead: Duration::from_millis(300),
        lead_per_flow: Duration::from_millis(1),
        duration: Duration::from_secs(5),
        interval_ms: 1000,
        report_grace: Duration::from_secs(5),
        token: None,
        socket: Default::default(),
    }
}

impl Sim {
    fn new(size: u32, faults: &[(u32, Fault)], plan: Vec<PlannedStep>) -> Sim {
        Sim::with_settings(settings(size), faults, plan)
    }

    fn with_settings(settings: Settings, faults: &[(u32, Fault)], plan: Vec<PlannedStep>) -> Sim {
        let size = settings.size;
        let now = Now {
            at: std::time::Instant::now(),
            wall_ns: 1_700_000_000_000_000_000,
        };
        let mut coordinator = Coordinator::new(now, settings, HostFacts::default(), plan);
        let agents = (0..size)
            .map(|rank| {
                let fault = faults
                    .iter()
                    .find(|(r, _)| *r == rank)
                    .map_or(Fault::None, |f| f.1);
                let join = AgentJoin {
                    rank,
                    size,
                    name: format!("h{rank}"),
                    data_port: 5201,
                    host: HostFacts::default(),
                    token: None,
                    job_port: 6000 + rank as u16,
                };
                let machine = Agent::new(now.at, join, Duration::from_secs(60));
                if fault != Fault::NeverJoins {
                    coordinator.connected(
                        rank as Conn,
                        IpAddr::V4(Ipv4Addr::new(10, 0, 0, rank as u8)),
                    );
                }
                SimAgent {
                    machine,
                    // Agents' clocks up to a second off, either way.
                    offset_ns: (i64::from(rank) * 37_000_001) % 1_000_000_000 - 500_000_000,
                    fault,
                    gone: fault == Fault::NeverJoins,
                    tasks: Vec::new(),
                }
            })
            .collect();
        Sim {
            now,
            coordinator,
            agents,
            events: Vec::new(),
            strays: Vec::new(),
        }
    }

    fn advance(&mut self, by: Duration) {
        self.now.at += by;
        self.now.wall_ns += by.as_nanos() as u64;
    }

    /// Carries messages both ways once; true if anything moved. Messages
    /// to connections that are not agents are kept in `strays`.
    fn pump(&mut self) -> bool {
        let mut moved = false;
        while let Some((conn, msg)) = self.coordinator.poll_transmit() {
            moved = true;
            match self.agents.get_mut(conn) {
                Some(agent) if !agent.gone => agent.machine.handle(self.now.at, through_codec(msg)),
                Some(_) => {}
                None => self.strays.push((conn, msg)),
            }
        }
        while self.coordinator.poll_close().is_some() {}
        while let Some(e) = self.coordinator.poll_event() {
            self.events.push(e);
        }
        for conn in 0..self.agents.len() {
            moved |= self.drive_agent(conn);
        }
        moved
    }

    /// Pumps until nothing moves, then lets time pass to the coordinator's
    /// next deadline; until the run is over.
    fn run(&mut self) -> Outcome {
        for _ in 0..100_000 {
            let moved = self.pump();
            if self.coordinator.is_over() {
                self.pump();
                return self.coordinator.outcome().expect("an outcome once over");
            }
            if !moved {
                let next = self
                    .coordinator
                    .poll_timeout()
                    .expect("a deadline while running");
                let by = next.saturating_duration_since(self.now.at);
                self.advance(by + Duration::from_millis(1));
                self.coordinator.handle_timeout(self.now);
            }
        }
        panic!("the run never ended");
    }

    /// Pumps until `event` has happened.
    fn until(&mut self, event: impl Fn(&Event) -> bool) {
        for _ in 0..1000 {
            if self.events.iter().any(&event) {
                return;
            }
            self.pump();
        }
        panic!("the event never came");
    }

    /// One agent reacts to what it was sent; true if it sent anything.
    fn drive_agent(&mut self, conn: Conn) -> bool {
        let now = self.now;
        let agent = &mut self.agents[conn];
        if agent.gone {
            return false;
        }
        let agent_wall = (now.wall_ns as i64 + agent.offset_ns) as u64;
        while let Some(event) = agent.machine.poll_event() {
            match event {
                agent::Event::Probe(p) => agent.machine.echo(ClockEcho {
                    seq: p.seq,
                    coordinator_ns: p.coordinator_ns,
                    agent_received_ns: agent_wall,
                    agent_sent_ns: agent_wall,
                }),
                agent::Event::Task(task) => {
                    agent.tasks.push(task.clone());
                    match agent.fault {
                        Fault::DiesAt(s) if s == task.step => {
                            agent.gone = true;
                            self.coordinator.handle_closed(now, conn);
                            return true;
                        }
                        Fault::HangsAt(s) if s == task.step => continue,
                        _ => {}
                    }
                    let flows = task
                        .flows
                        .iter()
                        .map(|f| {
                            // Figures that agree, as a measuring agent's do.
                            let bits_per_second = 1e9 * f64::from(conn as u32 + 1);
                            let flow = FlowResult {
                                streams: f.streams,
                                message_bytes: f.message_bytes,
                                started_at_ns: task.start_at_ns,
                                bytes: (bits_per_second * 5.0 / 8.0) as u64,
                                seconds: 5.0,
                                bits_per_second,
                                ..FlowResult::default()
                            };
                            (f.flow, flow)
                        })
                        .collect();
                    // A job's rank: one iteration a peer, 1 ms each.
                    let job = task.job.as_ref().map(|j| linerate_wire::JobReport {
                        iteration_ns: vec![1_000_000; j.peers.len()],
                        error: None,
                    });
                    agent.machine.task_done(
                        now.at,
                        AgentReport {
                            step: task.step,
                            flows,
                            job,
                        },
                    );
                }
            }
        }
        let mut sent = false;
        while let Some(msg) = agent.machine.poll_transmit() {
            sent = true;
            self.coordinator.handle(now, conn, through_codec(msg));
        }
        sent
    }
}

fn incast_plan(ranks: u32, senders: &[u16]) -> Vec<PlannedStep> {
    let sources: Vec<u32> = (1..ranks).collect();
    plan::incast(0, &sources, senders, &[ranks - 1], &[1 << 20])
        .into_iter()
        .map(|s| PlannedStep {
            factors: BTreeMap::from([("senders_per_host".into(), u64::from(s.senders_per_host))]),
            flows: s.flows,
            job: None,
        })
        .collect()
}

fn all_to_all_plan(ranks: u32) -> Vec<PlannedStep> {
    vec![PlannedStep {
        factors: BTreeMap::new(),
        flows: Vec::new(),
        job: Some(crate::session::job_step::JobPlan {
            kind: linerate_wire::JobKind::AllToAll,
            iterations: 10,
            compute_us: 0,
            grid: None,
            peers: (0..ranks)
                .map(|r| crate::job::all_to_all_peers(r, ranks, 64))
                .collect(),
        }),
    }]
}

/// A run's socket options: a marking, a congestion control and a window.
fn marked_socket() -> SocketParams {
    SocketParams {
        tos: Some(0xb8),
        congestion: Some("cubic".into()),
        rcvbuf: Some(4 << 20),
        ..SocketParams::default()
    }
}

/// Every flow's and every job rank's task carries the run's socket options
/// whole: an option added to them reaches every connection of the run.
#[test]
fn every_flow_and_every_job_rank_is_set_up_as_the_run_says() {
    let mut marked = settings(3);
    marked.socket = marked_socket();
    let mut plan = incast_plan(3, &[1]);
    plan.extend(all_to_all_plan(3));
    let mut sim = Sim::with_settings(marked, &[], plan);
    let out = sim.run();
    assert_eq!(out.steps.len(), 2);
    assert_eq!(out.steps[1].job.as_ref().unwrap().dscp, Some(46));
    let tasks: Vec<_> = sim.agents.iter().flat_map(|a| &a.tasks).collect();
    let flows: Vec<_> = tasks.iter().flat_map(|t| &t.flows).collect();
    assert_eq!(flows.len(), 2, "the incast's two senders");
    assert!(flows.iter().all(|f| f.socket == marked_socket()));
    let jobs: Vec<_> = tasks.iter().filter_map(|t| t.job.as_ref()).collect();
    assert_eq!(jobs.len(), 3);
    assert!(jobs.iter().all(|j| j.socket == marked_socket()));
}

#[test]
fn a_job_gives_every_rank_its_peers_job_ports_and_one_start() {
    let mut sim = Sim::new(3, &[], all_to_all_plan(3));
    let out = sim.run();
    let job = out.steps[0].job.as_ref().expect("a job step");
    assert_eq!(job.ranks.len(), 3);
    assert!(
        job.ranks
            .iter()
            .all(|r| r.error.is_none() && r.iterations == 2)
    );
    assert_eq!(job.median_iteration_us, 1000.0);
    for (r, agent) in sim.agents.iter().enumerate() {
        let task = &agent.tasks[0];
        let peers = &task.job.as_ref().unwrap().peers;
        assert_eq!(peers.len(), 2);
        for p in peers {
            assert_eq!(
                p.addr.port(),
                6000 + p.rank as u16,
                "rank {r}: its peer's job port"
            );
            assert_eq!(
                p.addr.ip(),
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, p.rank as u8))
            );
        }
        let start = task.start_at_ns as i64 - agent.offset_ns;
        let first = sim.agents[0].tasks[0].start_at_ns as i64 - sim.agents[0].offset_ns;
        assert_eq!(start, first, "one start on the coordinator's clock");
    }
}

#[test]
fn a_job_rank_whose_peer_never_joined_is_named_with_why() {
    let mut sim = Sim::new(3, &[(2, Fault::NeverJoins)], all_to_all_plan(3));
    let out = sim.run();
    let job = out.steps[0].job.as_ref().expect("a job step");
    for r in &job.ranks {
        let why = r.error.as_deref().unwrap_or_default();
        assert!(why.contains("rank 2 failed"), "rank {}: {why:?}", r.rank);
        assert_eq!(r.iterations, 0);
    }
    assert!(
        sim.agents[0].tasks.is_empty(),
        "no task that cannot complete"
    );
}

#[test]
fn every_flow_of_each_step_starts_at_one_time_on_every_agents_clock() {
    let mut sim = Sim::new(4, &[], incast_plan(4, &[1, 2]));
    let out = sim.run();
    assert!(
        out.hosts.iter().all(|h| h.failed.is_none()),
        "{:?}",
        out.hosts
    );
    assert_eq!(out.steps.len(), 2);
    assert_eq!(out.steps[1].flows.len(), 6);
    for step in &out.steps {
        assert!(step.flows.iter().all(|f| f.error.is_none() && f.to == 0));
        // Each agent started at the same instant on the coordinator's clock:
        // its own start time minus its own offset (exact with a fake clock
        // that carries messages in no time).
        assert_eq!(step.start_spread_ms, Some(0.0));
    }
    // Senders 1, 2, 3 at 2, 3 and 4 Gbit/s: Jain's index of those rates.
    let expect = plan::jain_index(&[2e9, 3e9, 4e9]);
    assert!((out.steps[0].jain_index - expect).abs() < 1e-12);
    assert_eq!(out.steps[0].aggregate_bits_per_second, 9e9);
    // Per host: the receiver took all 9 Gbit/s; sender 3 sent 4.
    let hosts = &out.steps[0].hosts;
    assert_eq!(
        (
            hosts[0].rank,
            hosts[0].received_bits_per_second,
            hosts[0].flows
        ),
        (0, 9e9, 3)
    );
    assert_eq!((hosts[3].rank, hosts[3].sent_bits_per_second), (3, 4e9));
    for (rank, host) in out.hosts.iter().enumerate() {
        let want = sim.agents[rank].offset_ns;
        assert_eq!(host.clock_offset_ns, Some(want));
        assert_eq!(
            host.address.as_deref(),
            Some(&*format!("10.0.0.{rank}:5201"))
        );
    }
    // The receiver sends nothing, so it is given no task.
    assert!(sim.agents[0].tasks.is_empty());
    assert!(
        sim.agents.iter().all(|a| a.machine.is_over()),
        "every agent dismissed"
    );
}

#[test]
fn an_agent_that_never_joins_is_named_and_the_rest_run() {
    let mut sim = Sim::new(4, &[(2, Fault::NeverJoins)], incast_plan(4, &[1]));
    let out = sim.run();
    let failed: Vec<_> = out.hosts.iter().filter(|h| h.failed.is_some()).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].rank, 2);
    assert!(
        failed[0]
            .failed
            .as_ref()
            .unwrap()
            .contains("did not join within 10 s")
    );
    let flows = &out.steps[0].flows;
    assert_eq!(flows.iter().filter(|f| f.error.is_none()).count(), 2);
    let missing = flows.iter().find(|f| f.from == 2).unwrap();
    assert!(missing.error.as_ref().unwrap().contains("rank 2 failed"));
}

#[test]
fn an_agent_lost_mid_step_is_named_its_flows_marked_and_later_steps_run() {
    let mut sim = Sim::new(4, &[(3, Fault::DiesAt(0))], incast_plan(4, &[1, 2]));
    let out = sim.run();
    let host = &out.hosts[3];
    assert_eq!(host.failed.as_deref(), Some("its connection was lost"));
    assert_eq!(out.steps.len(), 2);
    for step in &out.steps {
        let lost: Vec<_> = step.flows.iter().filter(|f| f.from == 3).collect();
        assert!(
            lost.iter()
                .all(|f| f.error.as_ref().unwrap().contains("rank 3 failed"))
        );
        assert!(
            step.flows
                .iter()
                .filter(|f| f.from != 3)
                .all(|f| f.error.is_none())
        );
    }
    // Jain's index over the flows that ran.
    assert!((out.steps[0].jain_index - plan::jain_index(&[2e9, 3e9])).abs() < 1e-12);
}

#[test]
fn a_hung_agent_is_given_up_on_at_the_steps_deadline() {
    let mut sim = Sim::new(3, &[(1, Fault::HangsAt(0))], incast_plan(3, &[1]));
    let start = sim.now.at;
    let out = sim.run();
    assert!(
        out.hosts[1]
            .failed
            .as_ref()
            .unwrap()
            .contains("did not report")
    );
    // Lead (300 ms and 1 ms for each of its 2 flows), duration and grace, no more.
    let took = sim.now.at - start;
    assert!(took <= Duration::from_millis(10_400), "{took:?}");
    assert!(
        sim.events
            .iter()
            .any(|e| matches!(e, Event::Failed { rank: 1, .. }))
    );
}

#[test]
fn a_second_join_as_the_same_rank_is_refused_and_the_first_kept() {
    let mut sim = Sim::new(2, &[], incast_plan(2, &[1]));
    sim.until(|e| matches!(e, Event::Joined { rank: 1, .. }));
    sim.coordinator
        .connected(99, IpAddr::V4(Ipv4Addr::LOCALHOST));
    let stray = AgentJoin {
        rank: 1,
        size: 2,
        name: "stray".into(),
        data_port: 1,
        host: HostFacts::default(),
        token: None,
        job_port: 0,
    };
    sim.coordinator
        .handle(sim.now, 99, Message::AgentJoin(Box::new(stray)));
    let out = sim.run();
    assert!(
        out.hosts.iter().all(|h| h.failed.is_none()),
        "{:?}",
        out.hosts
    );
    assert_eq!(out.hosts[1].name, "h1");
    assert!(
        sim.strays
            .iter()
            .any(|(c, m)| *c == 99 && matches!(m, Message::Refuse(_)))
    );
}

#[test]
fn a_stopped_run_keeps_what_ran_and_names_what_did_not() {
    let mut sim = Sim::new(3, &[(2, Fault::HangsAt(1))], incast_plan(3, &[1, 2]));
    sim.until(|e| matches!(e, Event::StepStarted { step: 1, .. }));
    sim.coordinator.stop("interrupted".into());
    let out = sim.coordinator.outcome().unwrap();
    assert_eq!(out.stopped.as_deref(), Some("interrupted"));
    assert_eq!(out.steps.len(), 2);
    let cut = out.steps[1].flows.iter().find(|f| f.from == 2).unwrap();
    assert!(cut.error.as_ref().unwrap().contains("stopped"));
    let dismissed = std::iter::from_fn(|| sim.coordinator.poll_transmit())
        .filter(|(_, m)| *m == Message::Dismiss)
        .count();
    assert_eq!(dismissed, 3);
}

#[test]
fn a_thousand_flows_from_128_agents() {
    let mut sim = Sim::new(128, &[], incast_plan(128, &[8]));
    let out = sim.run();
    assert_eq!(out.steps[0].flows.len(), 127 * 8);
    assert!(out.steps[0].flows.iter().all(|f| f.error.is_none()));
    assert_eq!(out.hosts.len(), 128);
}

#[test]
fn the_plan_and_the_outcome_grow_linearly_with_the_agents() {
    // Bytes per rank of the tasks handed out (the plan as sent) and of the
    // serialized outcome, at 16 to 128 ranks sending 8 flows each: the
    // same at every size, within the rounding of numbers.
    let spread = |per_rank: &[f64]| {
        let lo = per_rank.iter().copied().fold(f64::MAX, f64::min);
        let hi = per_rank.iter().copied().fold(0.0, f64::max);
        hi / lo
    };
    let (plan, outcome): (Vec<f64>, Vec<f64>) = [16u32, 32, 64, 128]
        .iter()
        .map(|&n| {
            let mut sim = Sim::new(n, &[], incast_plan(n, &[8]));
            let out = sim.run();
            let tasks: usize = sim
                .agents
                .iter()
                .flat_map(|a| &a.tasks)
                .map(|t| Message::AgentTask(t.clone()).encode().len())
                .sum();
            let hosts = serde_json::to_vec(&out.hosts).unwrap().len();
            let steps = serde_json::to_vec(&out.steps).unwrap().len();
            let n = f64::from(n);
            (tasks as f64 / n, (hosts + steps) as f64 / n)
        })
        .unzip();
    assert!(spread(&plan) < 1.1, "plan bytes per rank {plan:?}");
    assert!(spread(&outcome) < 1.1, "outcome bytes per rank {outcome:?}");
}

#[test]
fn a_run_with_a_token_takes_only_joins_that_show_it() {
    let mut sim = Sim::new(2, &[], incast_plan(2, &[1]));
    let mut with_token = settings(2);
    with_token.token = Some("0123456789abcdef".into());
    sim.coordinator = Coordinator::new(
        sim.now,
        with_token,
        HostFacts::default(),
        incast_plan(2, &[1]),
    );
    let join = |token: Option<&str>| AgentJoin {
        rank: 1,
        size: 2,
        name: "h1".into(),
        data_port: 5201,
        host: HostFacts::default(),
        token: token.map(str::to_string),
        job_port: 0,
    };
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    for (conn, token) in [
        (90, None),
        (91, Some("0123456789abcdee")),
        (92, Some("0123")),
    ] {
        sim.coordinator.connected(conn, ip);
        sim.coordinator
            .handle(sim.now, conn, Message::AgentJoin(Box::new(join(token))));
    }
    let refused: Vec<Conn> = std::iter::from_fn(|| sim.coordinator.poll_transmit())
        .filter(|(_, m)| matches!(m, Message::Refuse(r) if r.message.contains("token")))
        .map(|(c, _)| c)
        .collect();
    assert_eq!(refused, [90, 91, 92]);
    // Rank 1 is still free for the agent that has the token.
    sim.coordinator.connected(93, ip);
    sim.coordinator.handle(
        sim.now,
        93,
        Message::AgentJoin(Box::new(join(Some("0123456789abcdef")))),
    );
    assert!(
        std::iter::from_fn(|| sim.coordinator.poll_event())
            .any(|e| matches!(e, Event::Joined { rank: 1, .. }))
    );
}
