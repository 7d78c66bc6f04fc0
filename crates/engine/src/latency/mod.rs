//! The client side of `linerate latency`: opens a latency session, runs
//! each step (a message size, idle and then under load when asked) on
//! every connection at once, and merges what each connection measured.
//!
//! The session's messages are a bench session's (the same state machines,
//! with a latency request); the data connections carry rounds, see
//! [`linerate_wire::RunHeader`].

use crate::spec::BenchOptions;
use std::net::SocketAddr;
use std::ops::ControlFlow::{Break, Continue};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;
use linerate_result::latency::{self as doc, Percentiles};
use linerate_result::{HostFacts, SideReport};
use linerate_session::BenchClient;
use linerate_session::bench_client::Event;
use linerate_wire::{Hello, LatencyParams, Pattern, Role, RunHeader, SessionId, SessionKind};

use crate::bench::BenchRun;
use crate::error::{EngineError, Result};
use crate::session::connect::{Peer, before_accept, new_session_id, open_control, open_data};
use crate::session::{Turn, drive, flush};
use crate::sockopt::StreamOptions;
use crate::spare_cores::same_host;
use crate::spec::{BenchSpec, BusyPoll, LatencySpec};

pub mod echo;
mod result;
mod rounds;
mod spin;
mod udp_rounds;

pub use result::to_result;

use rounds::{Connection, Measured, StepPlan};
use spin::SpinWatch;

/// Sizes at or below this are small, as osu_latency counts them: more
/// rounds are measured and warmed up.
const LARGE_MESSAGE: u32 = 8192;
/// A window of 64 messages (osu_bw's), or as many as make 64 KiB: with
/// fewer, small messages wait on the window's reply more than they move
/// (64-byte messages: 0.66 million a second in windows of 64, 1.77 million
/// in windows of 1,024, docs/defaults.md#window).
pub fn default_window(size: u32) -> u32 {
    (WINDOW_BYTES / size.max(1)).clamp(64, linerate_wire::MAX_WINDOW)
}
const WINDOW_BYTES: u32 = 64 << 10;

/// How long the bulk streams run before the loaded steps begin, at most:
/// their first interval report ends the wait sooner.
const LOAD_RAMP: Duration = Duration::from_secs(2);

/// What a latency session measured, before it becomes a result.
pub struct LatencyRun {
    /// What was asked.
    pub spec: LatencySpec,
    /// The parameters as run.
    pub params: LatencyParams,
    /// The session's id.
    pub session: SessionId,
    /// When the measurement began.
    pub started_at: SystemTime,
    /// Every step, in order.
    pub steps: Vec<doc::Step>,
    /// The median cost of one clock reading, ns.
    pub clock_overhead_ns: f64,
    /// The server's half.
    pub server: SideReport,
    /// The client's host.
    pub client_host: HostFacts,
    /// The server's host.
    pub server_host: HostFacts,
    /// The bulk streams' run, when the spec asked for load.
    pub load: Option<BenchRun>,
    /// Whether the receivers spun, and why (`--busy-poll`).
    pub busy_poll_choice: String,
    /// The user ended the run early.
    pub interrupted: bool,
}

impl LatencySpec {
    /// Refuses what no server would take, before anything is opened.
    pub fn check(&self) -> Result<()> {
        self.params().validate()?;
        if self.sizes.is_empty() {
            return Err(EngineError::NoSizes);
        }
        for &size in &self.sizes {
            let header = RunHeader {
                rounds: 1,
                ..self.header(size)
            };
            header.validate()?;
            if self.udp {
                udp_fits(&header)?;
            }
        }
        Ok(())
    }

    fn params(&self) -> LatencyParams {
        LatencyParams {
            connections: self.connections,
            busy_poll: self.busy_poll == BusyPoll::On,
            socket: self.socket.clone(),
            idle_timeout_ms: self.timeout_ms,
            pin_cores: false,
            busy_poll_yields: self.busy_poll == BusyPoll::Auto,
            udp: self.udp,
        }
    }

    fn header(&self, size: u32) -> RunHeader {
        let (reply, window) = match self.pattern {
            Pattern::PingPong => (self.reply_len.unwrap_or(size), 1),
            Pattern::Window => (
                self.reply_len.unwrap_or(1),
                self.window.unwrap_or_else(|| default_window(size)),
            ),
        };
        RunHeader {
            pattern: self.pattern,
            request_len: size,
            reply_len: reply,
            window,
            rounds: 0,
        }
    }

    /// The step of `size`: osu's iteration and warm-up counts for a sweep,
    /// the time alone for a single size.
    fn step(&self, size: u32) -> StepPlan {
        let h = self.header(size);
        let small = size <= LARGE_MESSAGE;
        let (iterations, warmup) = match (self.pattern, small) {
            (Pattern::PingPong, true) => (10_000, 1_000),
            (Pattern::PingPong, false) => (1_000, 100),
            (Pattern::Window, true) => (100, 10),
            (Pattern::Window, false) => (20, 2),
        };
        let sweep = self.sizes.len() > 1;
        StepPlan {
            pattern: h.pattern,
            request_len: h.request_len,
            reply_len: h.reply_len,
            window: h.window,
            warmup: self.warmup.unwrap_or(warmup),
            iterations: self.iterations.or(sweep.then_some(iterations)),
            time: Duration::from_millis(self.step_ms),
        }
    }
}

/// A UDP round is one datagram each way, each opening with its header (a
/// request shorter than its 20-byte header, with the session's cookie, is
/// sent as 20 bytes).
fn udp_fits(h: &RunHeader) -> Result<()> {
    let limits = linerate_wire::UDP_REPLY_MIN_LEN as u32..=linerate_wire::MAX_DATAGRAM_LEN;
    if h.pattern != Pattern::PingPong {
        return Err(EngineError::UdpPattern);
    }
    for (what, len) in [("request", h.request_len), ("reply", h.reply_len)] {
        if !limits.contains(&len) {
            return Err(EngineError::UdpMessageLen { what, len });
        }
    }
    Ok(())
}

/// Runs a latency session; `on_step` sees each step as it ends. When
/// `stop` is set (Ctrl-C) the current step ends early and what ran is
/// reported, marked interrupted.
pub fn run(
    server: SocketAddr,
    spec: &LatencySpec,
    stop: Option<Arc<AtomicBool>>,
    on_step: &mut dyn FnMut(&doc::Step),
) -> Result<LatencyRun> {
    spec.check()?;
    let stop = stop.unwrap_or_default();
    let mut params = spec.params();
    let peer = Peer {
        server,
        bind: spec.bind,
        tls: None,
        token: None,
        stripes: Vec::new(),
    };
    let session = new_session_id()?;
    let mut ctl = open_control(&peer, session, SessionKind::Latency)?;
    let mut m = BenchClient::new(Instant::now());
    let client_host = linerate_probe::host::collect();
    let mut server_host = HostFacts::default();
    let started_at = SystemTime::now();
    let clock_overhead_ns = rounds::clock_overhead_ns();
    let mut ran = None;
    let mut busy_poll_choice = None;
    drive(&mut ctl, &mut m, None, |ctl, m, turn| {
        let event = match turn {
            Turn::Ended(Ok(server_report)) => {
                let (steps, load) = ran.take().unwrap_or_default();
                return Ok(Break(LatencyRun {
                    spec: spec.clone(),
                    params: params.clone(),
                    session,
                    started_at,
                    steps,
                    clock_overhead_ns,
                    server: server_report,
                    client_host: client_host.clone(),
                    server_host: std::mem::take(&mut server_host),
                    load,
                    busy_poll_choice: busy_poll_choice.take().unwrap_or_default(),
                    interrupted: stop.load(Relaxed),
                }));
            }
            Turn::Ended(Err(e)) if !m.accepted() => return Err(before_accept(server, ctl, e)),
            Turn::Ended(Err(e)) => return Err(e),
            Turn::Idle => return Ok(Continue(())),
            Turn::Event(event) => event,
        };
        match event {
            Event::Accepted(accept) => {
                server_host = accept.host;
                let choice = spins(spec, &client_host, &server_host);
                params.busy_poll = choice.spin;
                busy_poll_choice = Some(choice.why);
                // Windows between spinning ends on one host run pinned, a
                // core each, as bench's polling streams do; a ping-pong ran
                // slower pinned (docs/defaults.md#busy-poll).
                params.pin_cores = params.busy_poll
                    && spec.pattern == Pattern::Window
                    && same_host(&client_host, &server_host);
                m.request_latency(Instant::now(), params.clone());
            }
            Event::OpenStreams => {
                let options = StreamOptions::for_latency(&params);
                let largest = spec.sizes.iter().copied().max().unwrap_or(1);
                let mut conns = (0..spec.connections)
                    .map(|index| {
                        let hello = Hello::new(session, Role::Data, SessionKind::Latency, index);
                        let s = open_data(&peer, &options, hello)?;
                        let timeout = Duration::from_millis(spec.timeout_ms);
                        let spin = SpinWatch::new(params.busy_poll, params.busy_poll_yields);
                        Connection::new(s.stream, spin, timeout, largest)
                    })
                    .collect::<Result<Vec<_>>>()?;
                m.streams_open();
                flush(ctl, m)?;
                // Paired once the server has every connection and answers each.
                if params.udp {
                    conns.iter_mut().try_for_each(Connection::pair_udp)?;
                }
                let outcome = run_steps(server, spec, params.pin_cores, &mut conns, &stop, on_step);
                // Closing the data connections ends the server's echoes.
                drop(conns);
                ran = Some(outcome?);
                m.run_over(Instant::now());
            }
            Event::PeerIntervals(_) => {}
        }
        Ok(Continue(()))
    })
}

/// Whether the receivers spin, and why, in words for the result.
pub(crate) struct SpinChoice {
    pub spin: bool,
    pub why: String,
}

/// Whether the receivers spin: as asked, or, left to the run, where each
/// spinning thread finds a core of its own that is idle now (both ends'
/// threads count when they share a host) and no bulk streams need the
/// cores; each end then stops spinning once it waits for its core.
/// Spinning took the loopback median from 54 to 7 us here
/// (docs/defaults.md#busy-poll).
fn spins(spec: &LatencySpec, client: &HostFacts, server: &HostFacts) -> SpinChoice {
    let said = |spin: bool, why: &str| SpinChoice {
        spin,
        why: why.to_string(),
    };
    match spec.busy_poll {
        BusyPoll::On => said(true, "spinning (--busy-poll on)"),
        BusyPoll::Off => said(false, "blocking (--busy-poll off)"),
        BusyPoll::Auto if spec.load.is_some() => {
            said(false, "blocking: the bulk streams (--load) need the cores")
        }
        BusyPoll::Auto => {
            let same_host = same_host(client, server);
            let threads = u32::from(spec.connections) * if same_host { 2 } else { 1 };
            let cores = client.cpus.min(server.cpus);
            if threads > cores {
                return said(
                    false,
                    &format!("blocking: {threads} spinning threads would not fit {cores} cores"),
                );
            }
            let free = spin::free_cores(client.cpus);
            if spin::room_for(threads, free) {
                said(
                    true,
                    &format!(
                        "spinning (busy-poll): {free:.1} idle cores for {threads} spinning thread(s); \
                         each blocks once it waits for its core"
                    ),
                )
            } else {
                said(
                    false,
                    &format!(
                        "blocking: {free:.1} idle cores on this host for {threads} spinning \
                         thread(s); other work needs the cores"
                    ),
                )
            }
        }
    }
}

/// Every size idle; then, with load asked for, every size again beside
/// the bulk streams.
fn run_steps(
    server: SocketAddr,
    spec: &LatencySpec,
    pin: bool,
    conns: &mut [Connection],
    stop: &AtomicBool,
    on_step: &mut dyn FnMut(&doc::Step),
) -> Result<(Vec<doc::Step>, Option<BenchRun>)> {
    let phase = |name: &str| spec.load.map(|_| name.to_string());
    let mut steps = Vec::new();
    for &size in &spec.sizes {
        let step = measure_step(conns, spec.step(size), phase("idle"), pin, stop)?;
        on_step(&step);
        steps.push(step);
    }
    let Some(streams) = spec.load else {
        return Ok((steps, None));
    };
    if stop.load(Relaxed) {
        return Ok((steps, None));
    }
    let load_stop = Arc::new(AtomicBool::new(false));
    let bench = BenchSpec {
        options: BenchOptions {
            streams,
            // Ended by `load_stop` after the last loaded step; the length only bounds it.
            duration_ms: (spec.step_ms + 1000) * spec.sizes.len() as u64
                + LOAD_RAMP.as_millis() as u64,
            socket: spec.socket.clone(),
            ..BenchOptions::default()
        },
        ..BenchSpec::default()
    };
    let ramped = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            crate::bench::run(server, &bench, Some(Arc::clone(&load_stop)), &mut |_, _| {
                ramped.store(true, Relaxed)
            })
        });
        let began = Instant::now();
        while !ramped.load(Relaxed) && !load.is_finished() && began.elapsed() < LOAD_RAMP {
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut loaded = Ok(());
        for &size in &spec.sizes {
            if load.is_finished() || stop.load(Relaxed) {
                break;
            }
            match measure_step(conns, spec.step(size), phase("loaded"), pin, stop) {
                Ok(step) => {
                    on_step(&step);
                    steps.push(step);
                }
                Err(e) => {
                    loaded = Err(e);
                    break;
                }
            }
        }
        load_stop.store(true, Relaxed);
        let load = load
            .join()
            .map_err(|_| EngineError::Panicked("the load's thread"))?
            .map_err(|e| EngineError::Load(Box::new(e)))?;
        loaded.map(|()| (steps, Some(load)))
    })
}

/// One step on every connection at once, merged.
fn measure_step(
    conns: &mut [Connection],
    plan: StepPlan,
    phase: Option<String>,
    pin: bool,
    stop: &AtomicBool,
) -> Result<doc::Step> {
    let measured: Vec<Result<Measured>> = std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                scope.spawn(move || {
                    if pin {
                        crate::measuring_end::pin_to_core(2 * i);
                    }
                    c.measure(&plan, stop)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or(Err(EngineError::Panicked("a connection's thread")))
            })
            .collect()
    });
    let measured = measured.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(merge(&plan, phase, &measured))
}

/// Quantiles kept of each step's distribution, for its figure.
const QUANTILES: [f64; 24] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98,
    0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0,
];

fn merge(plan: &StepPlan, phase: Option<String>, measured: &[Measured]) -> doc::Step {
    let mut hist = rounds::new_histogram();
    for m in measured {
        // Same bounds everywhere, so adding cannot fail.
        let _ = hist.add(&m.hist);
    }
    let rounds: u64 = measured.iter().map(|m| m.rounds).sum();
    let seconds = measured.iter().map(|m| m.seconds).fold(0.0, f64::max);
    let tps: f64 = measured
        .iter()
        .filter(|m| m.seconds > 0.0)
        .map(|m| m.rounds as f64 / m.seconds)
        .sum();
    let messages = tps * f64::from(plan.window);
    doc::Step {
        pattern: match plan.pattern {
            Pattern::PingPong => doc::Pattern::PingPong,
            Pattern::Window => doc::Pattern::Window,
        },
        phase,
        request_bytes: plan.request_len,
        reply_bytes: plan.reply_len,
        window: plan.window,
        rounds,
        warmup_rounds: measured.iter().map(|m| m.warmup).sum(),
        seconds,
        round_trip_us: percentiles(&hist),
        distribution_us: QUANTILES
            .iter()
            .map(|&q| [q, us(hist.value_at_quantile(q))])
            .collect(),
        transactions_per_second: tps,
        messages_per_second: messages,
        bits_per_second: messages * f64::from(plan.request_len) * 8.0,
        tcp: measured.first().and_then(|m| m.tcp),
        lost_rounds: measured.iter().filter_map(|m| m.lost).reduce(|a, b| a + b),
        spinning: measured.iter().filter_map(|m| m.spun).reduce(|a, b| a && b),
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn percentiles(h: &Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let q = |p: f64| us(h.value_at_quantile(p));
    Percentiles {
        min: us(h.min()),
        mean: h.mean() / 1000.0,
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: us(h.max()),
    }
}
