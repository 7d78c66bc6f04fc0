//! The client side of `linerate bench`: opens a session, runs its streams,
//! collects the server's half and merges both into one result.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime};

use linerate_probe::verdict::{self, Evidence};
use linerate_result::{HostFacts, IntervalSample, ResultDoc, SideReport};
use linerate_session::{BenchClient, Session};
use linerate_session::bench_client::Event;
use linerate_wire::{BenchParams, Direction, Hello, Role, SessionId, SessionKind};

use crate::document;
use crate::end::{self, EndConfig};
use crate::error::{EngineError, Result};
use crate::session::connect::{new_session_id, open_control, open_data};
use crate::session::control::Control;
use crate::session::{feed, flush, settle};
use crate::sockopt::StreamOptions;

mod plan;
pub(crate) mod serve;

pub use crate::end::RxPoll;
pub use plan::*;

pub struct BenchConfig {
    pub server: SocketAddr,
    pub bind: Option<IpAddr>,
    pub params: BenchParams,
    pub rx_poll: RxPoll,
    /// Choose the write size from the CPU regime instead of `params.write_len`.
    pub auto_write_len: bool,
    /// Choose the read size from the CPU regime instead of `params.read_len`.
    pub auto_read_len: bool,
    /// Choose SO_RCVLOWAT from the CPU regime instead of `params.rcvlowat`.
    pub auto_rcvlowat: bool,
    pub affinity: Affinity,
}

/// Where stream threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    /// Pinned only where measured to pay (see [`plan_cpus`]).
    Auto,
    Off,
    /// One core per thread: client stream i on CPU 2i, server on 2i+1.
    Spread,
    /// Both ends of stream i on CPU i (one host only).
    Pairs,
}

pub struct BenchRun {
    /// The parameters as run, with every automatic choice resolved.
    pub params: BenchParams,
    pub session: SessionId,
    pub started_at: SystemTime,
    pub client: SideReport,
    pub server: SideReport,
    pub client_host: HostFacts,
    pub server_host: HostFacts,
}

/// Runs a bench session; `on_interval` sees this end's samples live.
pub fn run(cfg: &BenchConfig, on_interval: &mut dyn FnMut(&[IntervalSample])) -> Result<BenchRun> {
    cfg.params.validate()?;
    let session = new_session_id()?;
    let mut ctl = open_control(cfg.server, cfg.bind, session, SessionKind::Bench)?;
    let mut m = BenchClient::new(Instant::now());
    let client_host = linerate_probe::host::collect();
    let mut params = cfg.params.clone();
    let mut server_host = HostFacts::default();
    let mut client = None;
    let started_at = SystemTime::now();
    loop {
        match settle(&mut ctl, &mut m) {
            Some(Ok(server)) => {
                let failed = server.stream_errors();
                if !failed.is_empty() {
                    return Err(EngineError::Failed(format!(
                        "server: {}",
                        failed.join("; ")
                    )));
                }
                return Ok(BenchRun {
                    params,
                    session,
                    started_at,
                    client: client.unwrap_or_default(),
                    server,
                    client_host,
                    server_host,
                });
            }
            Some(Err(e @ EngineError::Refused(_))) => return Err(e),
            Some(Err(e)) if client.is_some() => {
                return Err(EngineError::Failed(format!(
                    "the server did not report its measurements ({e}); it may have crashed"
                )));
            }
            Some(Err(e)) => return Err(e),
            None => {}
        }
        let Some(event) = m.poll_event() else {
            feed(&mut ctl, &mut m, None);
            continue;
        };
        match event {
            Event::Accepted(accept) => {
                plan_request(cfg, &mut params, &ctl, &client_host, &accept.host);
                server_host = accept.host;
                m.request(Instant::now(), params.clone());
            }
            Event::OpenStreams => {
                let options = StreamOptions::from(&params);
                let sockets = (0..params.connections())
                    .map(|index| {
                        let hello = Hello::new(session, Role::Data, SessionKind::Bench, index);
                        open_data(cfg.server, cfg.bind, &options, hello)
                    })
                    .collect::<Result<Vec<_>>>()?;
                m.streams_open();
                flush(&mut ctl, &mut m)?;
                let end_cfg = EndConfig {
                    params: params.clone(),
                    is_client: true,
                };
                let abort = AtomicBool::new(false);
                let report = end::run(&end_cfg, &sockets, Instant::now(), &abort, on_interval);
                let failed = report.stream_errors();
                if !failed.is_empty() {
                    return Err(EngineError::Failed(format!(
                        "the run failed; the server may have gone away ({})",
                        failed.join("; ")
                    )));
                }
                client = Some(report);
                m.run_over(Instant::now());
            }
        }
    }
}

/// Resolves the automatic choices of `params` from both hosts' facts.
fn plan_request(
    cfg: &BenchConfig,
    params: &mut BenchParams,
    ctl: &Control,
    client: &HostFacts,
    server: &HostFacts,
) {
    let plan = plan_cpus(
        cfg.rx_poll,
        params.connections(),
        cfg.server.ip().is_loopback(),
        params.pacing_rate.is_some(),
        client,
        server,
    );
    params.rx_poll = plan.rx_poll;
    (params.pin_cores, params.pin_pairs) = match cfg.affinity {
        Affinity::Auto => (plan.pin == Pin::Spread, plan.pin == Pin::Pairs),
        Affinity::Off => (false, false),
        Affinity::Spread => (true, false),
        Affinity::Pairs => (false, true),
    };
    let (write_len, read_len) = plan.io_lens();
    if cfg.auto_write_len {
        params.write_len = write_len;
    }
    if cfg.auto_read_len {
        params.read_len = read_len;
    }
    if cfg.auto_rcvlowat {
        let rtt_us = linerate_probe::tcpinfo::read(&ctl.stream).map_or(u32::MAX, |t| t.rtt_us);
        params.rcvlowat = short_path_only(plan.rcvlowat, rtt_us);
    }
}

/// Merges both ends into one `linerate.result/1` document with its verdict.
pub fn to_result(run: &BenchRun, command_line: Vec<String>) -> ResultDoc {
    let params = &run.params;
    let ends = document::merge(&run.client, &run.server);
    let verdict = verdict::judge(&Evidence {
        streams: &ends.streams,
        client_cpu: run.client.host_cpu,
        server_cpu: Some(run.server.host_cpu),
        bits_per_second: ends.bits_per_second,
        pacing_rate: params.pacing_rate,
    });
    let mut parameters = serde_json::to_value(params).unwrap_or_default();
    if let Some(map) = parameters.as_object_mut() {
        map.insert("session".into(), run.session.to_hex().into());
        map.insert(
            "direction".into(),
            match params.direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
                Direction::Bidir => "bidir",
            }
            .into(),
        );
    }
    let provenance = document::Provenance {
        kind: "bench",
        command_line,
        started_at: run.started_at,
        client_host: &run.client_host,
        server_host: &run.server_host,
        parameters,
    };
    document::document(provenance, ends, verdict)
}

