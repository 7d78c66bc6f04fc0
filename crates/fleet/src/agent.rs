//! One host's agent: a bench server for the flows sent to it, and a
//! control connection to the coordinator over which it joins, answers
//! clock probes and runs each step's flows at the agreed time.

use linerate_engine::spec::BenchOptions;
use std::net::{IpAddr, SocketAddr};
use std::ops::ControlFlow::{Break, Continue};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

use crate::session::agent::{Agent, Event};
use linerate_result::fleet::FlowResult;
use linerate_result::{ResultDoc, Side};
use linerate_session::{Session, SessionError};
use linerate_wire::{AgentJoin, AgentReport, AgentTask, ClockEcho, SessionKind, TaskFlow};

use super::wall_ns;
use linerate_daemon::server::Server;
use linerate_engine::bench;
use linerate_engine::limits::ServerLimits;
use linerate_engine::pool::ReceivePool;
use linerate_engine::session::connect::{Peer, new_session_id, open_control};
use linerate_engine::session::control::{Control, Input};
use linerate_engine::session::{Turn, apply, drive};
use linerate_engine::spec::{Affinity, BenchSpec, RxPoll};
use linerate_engine::{EngineError, Result};

/// How often the watch over the coordinator looks at the interrupt flag.
const WATCH_TICK: Duration = Duration::from_millis(200);

/// Longest an agent sleeps for a start time: a later one means clocks
/// that disagree beyond any probe's error.
const MAX_START_WAIT: Duration = Duration::from_secs(60);

/// An incast's receiver is connected to by its whole fan-in at once (up
/// to 4,096 flows of each sender): its door lets 16 times the daemon's
/// handshakes wait (1,024 from one address, 16,384 in all).
const DOOR_SCALE: usize = 16;

/// How long agents have to join, and to be reached by ssh.
pub const JOIN_WITHIN: Duration = Duration::from_secs(30);
/// How long an agent waits for its coordinator's next step when the run
/// has no time limit of its own.
pub const AGENT_SILENCE: Duration = Duration::from_secs(600);

/// Who the agent is and where its coordinator is.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// Where its coordinator listens.
    pub coordinator: SocketAddr,
    /// Its rank.
    pub rank: u32,
    /// Ranks in the run.
    pub size: u32,
    /// Its host's name.
    pub name: String,
    /// Where this agent's bench server listens (port 0: any free one).
    pub listen: SocketAddr,
    /// How long to keep trying to reach the coordinator (it may start
    /// after its agents, under srun or mpirun).
    pub join_within: Duration,
    /// How long to wait for the coordinator's next step.
    pub silence: Duration,
    /// The run's token, shown when joining.
    pub token: Option<String>,
    /// What is known of this host's path (a lab's rate and RTT): each
    /// flow's verdict gives its share and calls a shortcut invalid.
    pub path: linerate_verdict::KnownPath,
}

impl AgentSpec {
    /// Rank `rank` of `size`, named `name`, joining the coordinator at
    /// `coordinator`: its bench server on any free port, the protocol's
    /// time to join and to wait, no token, nothing known of the path.
    pub fn joining(coordinator: SocketAddr, rank: u32, size: u32, name: String) -> AgentSpec {
        AgentSpec {
            coordinator,
            rank,
            size,
            name,
            listen: SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), 0),
            join_within: JOIN_WITHIN,
            silence: AGENT_SILENCE,
            token: None,
            path: linerate_verdict::KnownPath::default(),
        }
    }
}

/// What every flow of this agent shares: its source address, the run's
/// token and what is known of the path.
#[derive(Clone, Copy)]
struct FlowContext<'a> {
    bind: Option<IpAddr>,
    token: Option<&'a str>,
    path: linerate_verdict::KnownPath,
}

/// Runs the agent until the coordinator dismisses it, goes away, or
/// `stop` is set.
pub fn run(spec: &AgentSpec, stop: Arc<AtomicBool>) -> Result<()> {
    let limits = ServerLimits {
        sessions: 8192,
        streams: 16384,
        bench_memory: 64 << 30,
        ..ServerLimits::default()
    };
    // An incast's fan-in comes from few hosts, many flows each, for as
    // long as the coordinator's steps last.
    let shares = linerate_daemon::shares::ShareLimits {
        open: 8192,
        per_source: 8192,
        max_bench_time: Duration::from_secs(7 * 24 * 3600),
    };
    let server = Server::bind(spec.listen)?
        .with_limits(limits)
        .with_door_scale(DOOR_SCALE)
        .with_shares(shares, linerate_daemon::waiting_room::DEFAULT_V6_PREFIX)
        .with_run_token(spec.token.clone().map(linerate_wire::RunToken))
        // Many flows share the host's cores: they are received on one
        // loop a core, not a thread a flow (docs/defaults.md#receive-pool).
        .with_receive_pool(
            ReceivePool::start(host_cores())
                .map_err(|e| EngineError::io("starting the receive loops", e))?,
        );
    let data_port = server.local_addr()?.port();
    let server_stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let serving = scope.spawn(|| server.run(false, &server_stop));
        let ended = join_and_work(spec, data_port, &stop);
        server_stop.store(true, Relaxed);
        let served = serving
            .join()
            .unwrap_or(Err(EngineError::Panicked("the bench server")));
        ended.and(served)
    })
}

fn join_and_work(spec: &AgentSpec, data_port: u16, stop: &Arc<AtomicBool>) -> Result<()> {
    let mut ctl = reach(spec, stop)?;
    let bind = source_ip(spec);
    let job_port = crate::rank::JobPort::open(spec.listen.ip(), spec.size, spec.token.clone())?;
    let join = AgentJoin {
        rank: spec.rank,
        size: spec.size,
        name: spec.name.clone(),
        data_port,
        host: linerate_probe::host::collect(),
        token: spec.token.clone(),
        job_port: job_port.port(),
    };
    let mut m = Agent::new(Instant::now(), join, spec.silence);
    drive(&mut ctl, &mut m, Some(INTERRUPT_TICK), |ctl, m, turn| {
        match turn {
            Turn::Ended(end) => return end.map(Break),
            Turn::Idle if stop.load(Relaxed) => m.abort(SessionError::local(
                linerate_wire::RefusalCode::Internal,
                "the agent was interrupted",
            )),
            Turn::Idle => {}
            Turn::Event(Event::Probe(p)) => {
                let received = wall_ns();
                m.echo(ClockEcho {
                    seq: p.seq,
                    coordinator_ns: p.coordinator_ns,
                    agent_received_ns: received,
                    agent_sent_ns: wall_ns(),
                });
            }
            Turn::Event(Event::Task(task)) => {
                let watch = Watch::start(ctl, stop)?;
                let context = FlowContext {
                    bind,
                    token: spec.token.as_deref(),
                    path: spec.path,
                };
                let report = match &task.job {
                    Some(job) => AgentReport {
                        step: task.step,
                        flows: Vec::new(),
                        job: Some(crate::rank::run_rank(
                            &job_port,
                            spec.rank,
                            spec.token.as_deref(),
                            job,
                            start_time(task.start_at_ns),
                            Duration::from_millis(task.duration_ms),
                            &watch.stop,
                        )),
                    },
                    None => run_task(&task, context, &watch.stop),
                };
                match watch.finish() {
                    None => m.task_done(Instant::now(), report),
                    Some(input) => apply(m, input),
                }
            }
        }
        Ok(Continue(()))
    })
}

/// How often an agent waiting on its coordinator looks whether it was
/// interrupted.
const INTERRUPT_TICK: Duration = Duration::from_millis(200);

/// The coordinator's connection, read while a step's flows run: a
/// dismissal (Ctrl-C at the coordinator, its timeout) or the coordinator
/// leaving ends the flows at once, as does this agent's own interrupt.
struct Watch {
    /// Set to end the step's flows.
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    reader: std::thread::JoinHandle<Option<Input>>,
}

impl Watch {
    fn start(ctl: &Control, interrupted: &Arc<AtomicBool>) -> Result<Watch> {
        let mut reader = ctl
            .try_clone()
            .map_err(|e| EngineError::io("watching the coordinator", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (flows, over, interrupted) = (
            Arc::clone(&stop),
            Arc::clone(&done),
            Arc::clone(interrupted),
        );
        let reader = std::thread::spawn(move || {
            while !over.load(Relaxed) {
                if interrupted.load(Relaxed) {
                    flows.store(true, Relaxed);
                }
                match reader.next_input(Some(Instant::now() + WATCH_TICK)) {
                    Input::Quiet => {}
                    // Whatever came ends this step's flows: the coordinator
                    // sends nothing mid-step but a dismissal.
                    other => {
                        flows.store(true, Relaxed);
                        return Some(other);
                    }
                }
            }
            None
        });
        Ok(Watch { stop, done, reader })
    }

    /// What came from the coordinator while the flows ran, if anything.
    fn finish(self) -> Option<Input> {
        self.done.store(true, Relaxed);
        self.reader.join().unwrap_or(None)
    }
}

/// The control connection to the coordinator, retried until it listens.
fn reach(spec: &AgentSpec, stop: &AtomicBool) -> Result<Control> {
    let peer = Peer {
        server: spec.coordinator,
        bind: source_ip(spec),
        tls: None,
        token: None,
        stripes: Vec::new(),
    };
    let until = Instant::now() + spec.join_within;
    loop {
        match open_control(&peer, new_session_id()?, SessionKind::Agent) {
            Ok(ctl) => return Ok(ctl),
            Err(e) if Instant::now() >= until || stop.load(Relaxed) => {
                return Err(EngineError::NoCoordinator {
                    at: spec.coordinator,
                    error: Box::new(e),
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// The cores this process may run on.
fn host_cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The address this agent's connections leave from: the one it listens
/// on, when it listens on one (agents sharing a host, each its own address).
fn source_ip(spec: &AgentSpec) -> Option<IpAddr> {
    Some(spec.listen.ip()).filter(|ip| !ip.is_unspecified())
}

/// Sets up the task's flows at once and starts their data together at
/// its start time.
fn run_task(task: &AgentTask, context: FlowContext, stop: &Arc<AtomicBool>) -> AgentReport {
    let flows = std::thread::scope(|scope| {
        let running: Vec<_> = task
            .flows
            .iter()
            .map(|flow| scope.spawn(move || (flow.flow, run_flow(task, flow, context, stop))))
            .collect();
        running
            .into_iter()
            .zip(&task.flows)
            .map(|(t, flow)| {
                t.join().unwrap_or_else(|_| {
                    let failed = FlowResult {
                        error: Some("the flow's thread panicked".into()),
                        ..FlowResult::default()
                    };
                    (flow.flow, failed)
                })
            })
            .collect()
    });
    AgentReport {
        step: task.step,
        flows,
        job: None,
    }
}

fn run_flow(
    task: &AgentTask,
    flow: &TaskFlow,
    context: FlowContext,
    stop: &Arc<AtomicBool>,
) -> FlowResult {
    let spec = BenchSpec {
        options: BenchOptions {
            streams: flow.streams,
            duration_ms: task.duration_ms,
            interval_ms: task.interval_ms,
            // The peer agent takes only the run's own flows.
            run_token: context
                .token
                .map(|t| linerate_wire::RunToken(t.to_string())),
            socket: flow.socket.clone(),
            ..BenchOptions::default()
        },
        write_len: Some(flow.message_bytes),
        // Many flows share each host's cores: no polling, no pinning, no
        // delay probe per flow.
        rx_poll: RxPoll::Off,
        affinity: Affinity::Off,
        without_delay_probe: true,
        bind: context.bind,
        start_at: Some(start_time(task.start_at_ns)),
        path: context.path,
        ..BenchSpec::default()
    };
    let mut result = FlowResult {
        streams: flow.streams,
        message_bytes: flow.message_bytes,
        ..FlowResult::default()
    };
    match bench::run(flow.to, &spec, Some(Arc::clone(stop)), &mut |_, _| {}) {
        Ok(run) => {
            result.started_at_ns = run
                .started_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            measured(&mut result, &bench::to_result(&run, Vec::new()));
        }
        Err(e) => result.error = Some(format!("to {}: {e}", flow.to)),
    }
    result
}

/// The task's start on this host's clock, no later than [`MAX_START_WAIT`]
/// from now.
fn start_time(start_at_ns: u64) -> SystemTime {
    let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(start_at_ns);
    at.min(SystemTime::now() + MAX_START_WAIT)
}

/// A flow's figures from its bench result.
fn measured(flow: &mut FlowResult, doc: &ResultDoc) {
    let s = &doc.summary;
    flow.bytes = s.bytes;
    flow.seconds = s.seconds;
    flow.bits_per_second = s.bits_per_second;
    flow.retransmits = s.retransmits;
    flow.limit = Some(s.verdict.limit);
    flow.verdict = Some(s.verdict.sentence.clone());
    flow.interval_bits_per_second = linerate_result::summed_intervals(&doc.intervals, Side::Sender)
        .iter()
        .map(|i| i.bits_per_second)
        .collect();
}
