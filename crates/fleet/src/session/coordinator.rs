//! The coordinator of a many-host run: every agent's control connection at
//! once. It gathers the ranks, estimates each one's clock offset from a few
//! probes, then runs the plan step by step: each agent gets its flows of
//! the step and one start time on its own clock; the step ends when every
//! agent given flows has reported or failed. An agent that never joins,
//! whose connection is lost, or that does not answer in time is named with
//! why, and the run goes on without it.
//!
//! Unlike the one-peer sessions it drives many connections, each named by
//! the driver's [`Conn`]; its time is a [`Now`], since start times are
//! agreed on the hosts' wall clocks.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crate::clock::{self, Exchange, Offset};
use crate::plan::{self, Flow};
use linerate_result::HostFacts;
use linerate_result::fleet::{FleetHost, FleetStep, FlowResult, HostRate};

use crate::session::Unrunnable;
pub use crate::session::job_step::JobPlan;
use linerate_wire::{
    Accept, AgentJoin, AgentReport, AgentTask, CAPABILITIES, ClockEcho, ClockProbe, JobReport,
    Message, Refusal, RefusalCode, SocketParams, TaskFlow,
};

/// The driver's name for one agent connection.
pub type Conn = usize;

/// The time on both clocks: deadlines on the monotonic one, start times
/// and clock probes on the wall clock (ns since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// The monotonic clock, for deadlines.
    pub at: Instant,
    /// The wall clock, ns since the Unix epoch, for start times and probes.
    pub wall_ns: u64,
}

/// How the run goes.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Ranks the plan counts on.
    pub size: u32,
    /// How long the agents have to join after the run starts.
    pub join_within: Duration,
    /// Clock probes per agent.
    pub probes: u32,
    /// How long an agent has to answer a probe.
    pub answer_within: Duration,
    /// The token every join must carry, when the run has one.
    pub token: Option<String>,
    /// From handing out a step to its start: room for the task to arrive
    /// and the clocks' error.
    pub lead: Duration,
    /// More lead for each flow of the step: every flow is set up before
    /// any starts, and a receiver takes its fan-in's connections one by one.
    pub lead_per_flow: Duration,
    /// How long each step runs.
    pub duration: Duration,
    /// Between the agents' interval samples; 0 for none.
    pub interval_ms: u64,
    /// How long after a step's end its reports may take.
    pub report_grace: Duration,
    /// The socket options of every connection of the run, flows' and job
    /// ranks' alike: each task carries them whole.
    pub socket: SocketParams,
}

/// One step of the plan: what it varies, and its flows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// What the step varies, by name (senders per host, message size, ...).
    pub factors: BTreeMap<String, u64>,
    /// The flows the step starts together.
    pub flows: Vec<Flow>,
    /// A proxy application the ranks run instead (`linerate job`).
    pub job: Option<JobPlan>,
}

/// What the driver may show as the run goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// An agent joined as `rank`, from the host it named.
    Joined {
        /// The rank it joined as.
        rank: u32,
        /// Its host's name.
        name: String,
    },
    /// An agent left or broke the protocol; the run goes on without it.
    Failed {
        /// The rank that failed.
        rank: u32,
        /// Why, in the user's words.
        reason: String,
    },
    /// Step `step` was handed out with its `flows`.
    StepStarted {
        /// The step's place in the plan, from 0.
        step: usize,
        /// How many flows it starts.
        flows: usize,
    },
    /// Every flow of step `step` reported.
    StepDone {
        /// The step's place in the plan, from 0.
        step: usize,
        /// Every flow's rate, summed.
        aggregate_bits_per_second: f64,
    },
}

/// Every host and every step, as the run left them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Every rank's host, its clock offset and how it ended.
    pub hosts: Vec<FleetHost>,
    /// Every step that ran, with its flows' results.
    pub steps: Vec<FleetStep>,
    /// The run was stopped before its plan was done (Ctrl-C, its timeout).
    pub stopped: Option<String>,
}

#[derive(Debug, Default)]
struct Rank {
    conn: Option<Conn>,
    join: Option<AgentJoin>,
    ip: Option<IpAddr>,
    exchanges: Vec<Exchange>,
    offset: Option<Offset>,
    failed: Option<String>,
    /// When its answer (an echo, a step's report) is due.
    due: Option<Instant>,
    /// It owes the current step a report.
    owes_report: bool,
}

impl Rank {
    fn live(&self) -> bool {
        self.failed.is_none() && self.offset.is_some()
    }

    fn data_addr(&self) -> Option<SocketAddr> {
        Some(SocketAddr::new(self.ip?, self.join.as_ref()?.data_port))
    }

    fn job_addr(&self) -> Option<SocketAddr> {
        let port = self.join.as_ref()?.job_port;
        (port != 0).then_some(SocketAddr::new(self.ip?, port))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Ranks joining and answering probes, until every one is ready or
    /// the join deadline.
    Gathering {
        until: Instant,
    },
    /// Step `step` runs.
    Running {
        step: usize,
    },
    Over,
}

/// One agent connection: where it comes from, and the rank it joined as.
#[derive(Debug, Clone, Copy)]
struct Link {
    ip: IpAddr,
    rank: Option<u32>,
}

/// Rank 0 of a many-host run: gathers the agents, measures their clocks, hands
/// out each step and collects its reports, over one connection an agent.
pub struct Coordinator {
    settings: Settings,
    accept: Accept,
    plan: Vec<PlannedStep>,
    ranks: Vec<Rank>,
    links: BTreeMap<Conn, Link>,
    phase: Phase,
    steps: Vec<FleetStep>,
    /// The running step's flows, by index, as reported.
    current: Vec<Option<FlowResult>>,
    /// The running job step's ranks, by rank, as reported.
    current_job: Vec<Option<JobReport>>,
    outbox: VecDeque<(Conn, Message)>,
    /// Connections to close once their last message is sent.
    closing: VecDeque<Conn>,
    events: VecDeque<Event>,
    stopped: Option<String>,
}

impl Coordinator {
    /// A run of `plan` that waits for `settings.size - 1` agents to join.
    pub fn new(now: Now, settings: Settings, host: HostFacts, plan: Vec<PlannedStep>) -> Self {
        let ranks = (0..settings.size).map(|_| Rank::default()).collect();
        Coordinator {
            phase: Phase::Gathering {
                until: now.at + settings.join_within,
            },
            accept: Accept {
                server_version: env!("CARGO_PKG_VERSION").to_string(),
                capabilities: CAPABILITIES.0,
                host,
            },
            settings,
            plan,
            ranks,
            links: BTreeMap::new(),
            steps: Vec::new(),
            current: Vec::new(),
            current_job: Vec::new(),
            outbox: VecDeque::new(),
            closing: VecDeque::new(),
            events: VecDeque::new(),
            stopped: None,
        }
    }

    /// An agent's connection passed its hello; `ip` is its address as seen
    /// from here, where its flows will be sent.
    pub fn connected(&mut self, conn: Conn, ip: IpAddr) {
        if !matches!(self.phase, Phase::Gathering { .. }) {
            self.refuse(conn, RefusalCode::Busy, "the run has started".into());
            return;
        }
        self.links.insert(conn, Link { ip, rank: None });
        self.outbox
            .push_back((conn, Message::Accept(self.accept.clone())));
    }

    /// A message from `conn`.
    pub fn handle(&mut self, now: Now, conn: Conn, msg: Message) {
        let Some(link) = self.links.get(&conn).copied() else {
            return;
        };
        match (link.rank, msg) {
            (None, Message::AgentJoin(join)) => self.join(now, conn, link.ip, *join),
            (Some(rank), Message::ClockEcho(echo)) => self.echo(now, rank, echo),
            (Some(rank), Message::AgentReport(report)) => self.report(now, rank, report),
            (rank, Message::Refuse(r)) => {
                self.lost(conn, rank, format!("it gave up: {}", r.message));
            }
            (rank, other) => {
                let reason = format!("it sent an unexpected {} message", other.name());
                self.refuse(conn, RefusalCode::Malformed, reason.clone());
                self.lost(conn, rank, reason);
            }
        }
        self.advance(now);
    }

    /// The connection's bytes did not decode.
    pub fn handle_malformed(&mut self, now: Now, conn: Conn, error: linerate_wire::WireError) {
        let rank = self.links.get(&conn).and_then(|l| l.rank);
        self.refuse(conn, RefusalCode::Malformed, error.to_string());
        self.lost(
            conn,
            rank,
            format!("it sent bytes that do not decode ({error})"),
        );
        self.advance(now);
    }

    /// The connection closed.
    pub fn handle_closed(&mut self, now: Now, conn: Conn) {
        let rank = self.links.get(&conn).and_then(|l| l.rank);
        self.lost(conn, rank, "its connection was lost".into());
        self.advance(now);
    }

    /// Time has passed: fails whoever is late.
    pub fn handle_timeout(&mut self, now: Now) {
        let late: Vec<u32> = (0..self.settings.size)
            .filter(|&r| {
                let rank = &self.ranks[r as usize];
                rank.failed.is_none() && rank.due.is_some_and(|d| now.at >= d)
            })
            .collect();
        for r in late {
            let reason = if self.ranks[r as usize].owes_report {
                "it did not report its flows in time (hung?)"
            } else {
                "it did not answer the clock probes in time"
            };
            self.fail_rank(r, reason.into());
        }
        if let Phase::Gathering { until } = self.phase
            && now.at >= until
        {
            let secs = self.settings.join_within.as_secs();
            for r in 0..self.settings.size {
                if self.ranks[r as usize].join.is_none() {
                    self.fail_rank(r, format!("it did not join within {secs} s"));
                }
            }
        }
        self.advance(now);
    }

    /// Rank `rank` will never join (its launcher said so: ssh could not
    /// reach its host, its process exited); a rank that joined already is
    /// left to its connection.
    pub fn give_up(&mut self, now: Now, rank: u32, reason: String) {
        if self
            .ranks
            .get(rank as usize)
            .is_some_and(|r| r.join.is_none())
        {
            self.fail_rank(rank, reason);
            self.advance(now);
        }
    }

    /// Ends the run now (Ctrl-C, its timeout): whatever ran is kept, the
    /// step in flight is recorded with its missing flows named, and every
    /// agent is dismissed.
    pub fn stop(&mut self, reason: String) {
        if self.phase == Phase::Over {
            return;
        }
        if let Phase::Running { step } = self.phase {
            self.close_step(step, &format!("the run was stopped ({reason})"));
        }
        self.stopped = Some(reason);
        self.finish();
    }

    /// The next message to send, and to whom.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<(Conn, Message)> {
        self.outbox.pop_front()
    }

    /// A connection to close (after its queued messages).
    #[must_use]
    pub fn poll_close(&mut self) -> Option<Conn> {
        if self.outbox.is_empty() {
            self.closing.pop_front()
        } else {
            None
        }
    }

    /// The next thing to show the user.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Coordinator::handle_timeout`] must be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let dues = self.ranks.iter().filter(|r| r.failed.is_none());
        let due = dues.filter_map(|r| r.due).min();
        match self.phase {
            Phase::Gathering { until } => Some(due.map_or(until, |d| d.min(until))),
            Phase::Running { .. } => due,
            Phase::Over => None,
        }
    }

    /// Whether the run has ended.
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }

    /// Every host and step, once the run is over.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.phase != Phase::Over {
            return None;
        }
        let hosts = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, rank)| FleetHost {
                rank: r as u32,
                name: rank
                    .join
                    .as_ref()
                    .map_or_else(|| format!("rank {r}"), |j| j.name.clone()),
                address: rank.data_addr().map(|a| a.to_string()),
                clock_offset_ns: rank.offset.map(|o| o.offset_ns),
                clock_error_ns: rank.offset.map(|o| o.error_bound_ns()),
                facts: rank.join.as_ref().map(|j| j.host.clone()),
                failed: rank.failed.clone(),
            })
            .collect();
        Some(Outcome {
            hosts,
            steps: self.steps.clone(),
            stopped: self.stopped.clone(),
        })
    }

    fn refuse(&mut self, conn: Conn, code: RefusalCode, message: String) {
        self.outbox
            .push_back((conn, Message::Refuse(Refusal { code, message })));
        self.closing.push_back(conn);
    }

    fn join(&mut self, now: Now, conn: Conn, ip: IpAddr, join: AgentJoin) {
        let size = self.settings.size;
        let taken = self
            .ranks
            .get(join.rank as usize)
            .is_none_or(|r| r.join.is_some() || r.failed.is_some());
        let token_ok = match (&self.settings.token, &join.token) {
            (None, _) => true,
            (Some(want), Some(got)) => linerate_session::transfer_receiver::same_secret(want, got),
            (Some(_), None) => false,
        };
        if join.size != size || taken || !token_ok {
            let why = if !token_ok {
                "this run requires its token (LINERATE_RUN_TOKEN), and the join's is not it".into()
            } else if join.size != size {
                format!("this run has {size} ranks, the agent counts {}", join.size)
            } else {
                format!("rank {} has joined already or was given up on", join.rank)
            };
            self.refuse(conn, RefusalCode::InvalidParameters, why);
            self.links.remove(&conn);
            return;
        }
        let r = join.rank;
        self.links.insert(conn, Link { ip, rank: Some(r) });
        self.events.push_back(Event::Joined {
            rank: r,
            name: join.name.clone(),
        });
        let rank = &mut self.ranks[r as usize];
        rank.conn = Some(conn);
        rank.ip = Some(ip);
        rank.join = Some(join);
        self.probe(now, r);
    }

    fn probe(&mut self, now: Now, r: u32) {
        let rank = &mut self.ranks[r as usize];
        let Some(conn) = rank.conn else { return };
        rank.due = Some(now.at + self.settings.answer_within);
        let probe = ClockProbe {
            seq: rank.exchanges.len() as u32,
            coordinator_ns: now.wall_ns,
        };
        self.outbox.push_back((conn, Message::ClockProbe(probe)));
    }

    fn echo(&mut self, now: Now, r: u32, echo: ClockEcho) {
        let probes = self.settings.probes.max(1) as usize;
        let rank = &mut self.ranks[r as usize];
        if rank.offset.is_some() || echo.seq as usize != rank.exchanges.len() {
            return self.fail_rank(r, "it answered a clock probe it was not sent".into());
        }
        let as_ns = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
        rank.exchanges.push(Exchange {
            sent: as_ns(echo.coordinator_ns),
            agent_received: as_ns(echo.agent_received_ns),
            agent_sent: as_ns(echo.agent_sent_ns),
            received: as_ns(now.wall_ns),
        });
        if rank.exchanges.len() < probes {
            return self.probe(now, r);
        }
        match clock::estimate(&rank.exchanges) {
            Some(offset) => {
                rank.offset = Some(offset);
                rank.due = None;
            }
            None => self.fail_rank(r, "its clock answers contradict each other".into()),
        }
    }

    fn report(&mut self, now: Now, r: u32, report: AgentReport) {
        let Phase::Running { step } = self.phase else {
            return self.fail_rank(r, "it reported while no step ran".into());
        };
        let planned = &self.plan[step].flows;
        let rank = &mut self.ranks[r as usize];
        if !rank.owes_report || report.step as usize != step {
            return self.fail_rank(r, format!("it reported step {} unasked", report.step));
        }
        rank.owes_report = false;
        rank.due = None;
        if self.plan[step].job.is_some() {
            if let Some(slot) = self.current_job.get_mut(r as usize) {
                *slot = report.job;
            }
            return;
        }
        for (i, mut flow) in report.flows {
            let Some(plan) = planned.get(i as usize).filter(|f| f.from == r) else {
                return self.fail_rank(r, format!("it reported flow {i}, not one of its own"));
            };
            flow.from = plan.from;
            flow.to = plan.to;
            if let Some(slot) = self.current.get_mut(i as usize) {
                *slot = Some(flow);
            }
        }
        let _ = now;
    }

    /// `conn` is gone; its rank, if it joined, fails with `reason`.
    fn lost(&mut self, conn: Conn, rank: Option<u32>, reason: String) {
        self.links.remove(&conn);
        if let Some(r) = rank {
            self.fail_rank(r, reason);
        }
    }

    fn fail_rank(&mut self, r: u32, reason: String) {
        let Some(rank) = self.ranks.get_mut(r as usize) else {
            return;
        };
        if rank.failed.is_some() {
            return;
        }
        rank.failed = Some(reason.clone());
        rank.due = None;
        rank.owes_report = false;
        if let Some(conn) = rank.conn.take() {
            self.links.remove(&conn);
            self.closing.push_back(conn);
        }
        self.events.push_back(Event::Failed { rank: r, reason });
    }

    /// Moves on while the current phase is done.
    fn advance(&mut self, now: Now) {
        loop {
            match self.phase {
                Phase::Gathering { .. } => {
                    let ready = self.ranks.iter().all(|r| r.live() || r.failed.is_some());
                    if !ready {
                        return;
                    }
                    self.start_step(now, 0);
                }
                Phase::Running { step } => {
                    if self
                        .ranks
                        .iter()
                        .any(|r| r.owes_report && r.failed.is_none())
                    {
                        return;
                    }
                    self.close_step(step, "");
                    self.start_step(now, step + 1);
                }
                Phase::Over => return,
            }
        }
    }

    /// Hands out step `step`'s flows (or ends the run after the last).
    fn start_step(&mut self, now: Now, step: usize) {
        let Some(planned) = self.plan.get(step) else {
            return self.finish();
        };
        self.phase = Phase::Running { step };
        if let Some(job) = planned.job.clone() {
            return self.start_job(now, step, &job);
        }
        let s = &self.settings;
        let lead = s.lead + s.lead_per_flow * planned.flows.len().min(1 << 20) as u32;
        let start = now.wall_ns + lead.as_nanos() as u64;
        let due = now.at + lead + s.duration + s.report_grace;
        let mut tasks: BTreeMap<u32, Vec<TaskFlow>> = BTreeMap::new();
        self.current = vec![None; planned.flows.len()];
        for (i, flow) in planned.flows.iter().enumerate() {
            match self.route(flow) {
                Ok(to) => tasks.entry(flow.from).or_default().push(TaskFlow {
                    flow: i as u32,
                    to,
                    streams: flow.streams,
                    message_bytes: u32::try_from(flow.message_bytes).unwrap_or(u32::MAX),
                    socket: s.socket.clone(),
                }),
                Err(reason) => self.current[i] = Some(failed_flow(flow, reason.to_string())),
            }
        }
        self.events.push_back(Event::StepStarted {
            step,
            flows: planned.flows.len(),
        });
        for (r, flows) in tasks {
            self.hand_out(r, step, start, due, flows, None);
        }
    }

    /// Gives rank `r` its part of step `step` (flows or a job's rank), to
    /// start at `start_wall_ns` on the coordinator's clock and report by `due`.
    fn hand_out(
        &mut self,
        r: u32,
        step: usize,
        start_wall_ns: u64,
        due: Instant,
        flows: Vec<TaskFlow>,
        job: Option<linerate_wire::JobTask>,
    ) {
        let duration_ms = self.settings.duration.as_millis() as u64;
        let interval_ms = self.settings.interval_ms;
        let rank = &mut self.ranks[r as usize];
        let (Some(conn), Some(offset)) = (rank.conn, rank.offset) else {
            return;
        };
        rank.owes_report = true;
        rank.due = Some(due);
        let task = AgentTask {
            step: step as u32,
            start_at_ns: offset.to_agent(start_wall_ns as i64).max(0) as u64,
            duration_ms,
            interval_ms,
            flows,
            job,
        };
        self.outbox.push_back((conn, Message::AgentTask(task)));
    }

    /// Hands every rank of `job` its task: one start time for all, room to
    /// connect to each peer (`lead_per_flow` a peer), the step's duration as
    /// the job's limit.
    fn start_job(&mut self, now: Now, step: usize, job: &JobPlan) {
        let s = &self.settings;
        let widest = job.peers.iter().map(Vec::len).max().unwrap_or(0);
        let lead = s.lead + s.lead_per_flow * widest.min(1 << 20) as u32;
        let start = now.wall_ns + lead.as_nanos() as u64;
        let due = now.at + lead + s.duration + s.report_grace;
        self.current_job = vec![None; self.ranks.len()];
        let ranks = &self.ranks;
        let tasks = crate::session::job_step::tasks(job, &s.socket, |r| {
            let rank = &ranks[r as usize];
            if let Some(why) = &rank.failed {
                return Err(Unrunnable::Failed {
                    rank: r,
                    why: why.clone(),
                });
            }
            rank.job_addr().ok_or(Unrunnable::NoJobPort(r))
        });
        self.events.push_back(Event::StepStarted {
            step,
            flows: tasks.len(),
        });
        for (r, task) in tasks {
            let task = match task {
                Ok(t) => t,
                Err(why) => {
                    self.current_job[r as usize] = Some(JobReport {
                        iteration_ns: Vec::new(),
                        error: Some(why.to_string()),
                    });
                    continue;
                }
            };
            self.hand_out(r, step, start, due, Vec::new(), Some(task));
        }
    }

    /// Where `flow` goes, or why it cannot run.
    fn route(&self, flow: &Flow) -> Result<SocketAddr, Unrunnable> {
        for end in [flow.from, flow.to] {
            let rank = &self.ranks[end as usize];
            if let Some(why) = &rank.failed {
                return Err(Unrunnable::Failed {
                    rank: end,
                    why: why.clone(),
                });
            }
        }
        self.ranks[flow.to as usize]
            .data_addr()
            .ok_or(Unrunnable::NoAddress(flow.to))
    }

    /// Records step `step` with what was reported; a flow without a report
    /// gets `missing` (or its sender's failure).
    fn close_step(&mut self, step: usize, missing: &str) {
        if let Some(job) = self.plan[step].job.clone() {
            return self.close_job(step, &job, missing);
        }
        let planned = &self.plan[step];
        let flows: Vec<FlowResult> = planned
            .flows
            .iter()
            .zip(std::mem::take(&mut self.current))
            .map(|(flow, got)| {
                got.unwrap_or_else(|| {
                    let sender = &self.ranks[flow.from as usize];
                    let why = match (&sender.failed, missing) {
                        (Some(f), _) => format!("rank {} failed: {f}", flow.from),
                        (None, "") => "not reported".to_string(),
                        (None, m) => m.to_string(),
                    };
                    failed_flow(flow, why)
                })
            })
            .collect();
        for r in &mut self.ranks {
            r.owes_report = false;
            r.due = None;
        }
        let ran: Vec<&FlowResult> = flows.iter().filter(|f| f.error.is_none()).collect();
        let rates: Vec<f64> = ran.iter().map(|f| f.bits_per_second).collect();
        let starts: Vec<i128> = ran
            .iter()
            .filter_map(|f| {
                let offset = self.ranks[f.from as usize].offset?;
                Some(i128::from(f.started_at_ns) - i128::from(offset.offset_ns))
            })
            .collect();
        let spread = match (starts.iter().min(), starts.iter().max()) {
            (Some(lo), Some(hi)) => Some((hi - lo) as f64 / 1e6),
            _ => None,
        };
        let aggregate: f64 = rates.iter().sum();
        self.events.push_back(Event::StepDone {
            step,
            aggregate_bits_per_second: aggregate,
        });
        self.steps.push(FleetStep {
            factors: planned.factors.clone(),
            aggregate_bits_per_second: aggregate,
            jain_index: plan::jain_index(&rates),
            retransmits: ran.iter().map(|f| f.retransmits).sum(),
            start_spread_ms: spread,
            hosts: HostRate::of(&flows),
            flows,
            job: None,
        });
    }

    fn close_job(&mut self, step: usize, job: &JobPlan, missing: &str) {
        let reports = std::mem::take(&mut self.current_job);
        let ranks = &self.ranks;
        let result = crate::session::job_step::result(job, &self.settings.socket, &reports, |r| {
            match (&ranks[r as usize].failed, missing) {
                (Some(f), _) => format!("rank {r} failed: {f}"),
                (None, "") => "not reported".to_string(),
                (None, m) => m.to_string(),
            }
        });
        for r in &mut self.ranks {
            r.owes_report = false;
            r.due = None;
        }
        self.events.push_back(Event::StepDone {
            step,
            aggregate_bits_per_second: 0.0,
        });
        self.steps.push(FleetStep {
            factors: self.plan[step].factors.clone(),
            flows: Vec::new(),
            aggregate_bits_per_second: 0.0,
            jain_index: 1.0,
            retransmits: 0,
            start_spread_ms: None,
            hosts: Vec::new(),
            job: Some(result),
        });
    }

    fn finish(&mut self) {
        self.phase = Phase::Over;
        let conns: Vec<Conn> = self.ranks.iter_mut().filter_map(|r| r.conn).collect();
        for conn in conns {
            self.outbox.push_back((conn, Message::Dismiss));
            self.closing.push_back(conn);
        }
        self.links.clear();
    }
}

fn failed_flow(flow: &Flow, error: String) -> FlowResult {
    FlowResult {
        from: flow.from,
        to: flow.to,
        streams: flow.streams,
        message_bytes: u32::try_from(flow.message_bytes).unwrap_or(u32::MAX),
        error: Some(error),
        ..FlowResult::default()
    }
}
