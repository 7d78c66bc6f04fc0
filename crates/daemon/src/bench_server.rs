//! The server's half of a bench or latency session: the driver of
//! [`linerate_session::BenchServer`], which holds the message order. Both
//! kinds register their data connections alike; a bench runs streams, a
//! latency session answers rounds ([`linerate_engine::latency::echo`]).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use linerate_result::Side;
use linerate_session::bench_server::Event;
use linerate_session::{BenchServer, Session};
use linerate_wire::{Accept, BenchParams, LatencyParams, RefusalCode, SessionId, SessionKind};
use std::ops::ControlFlow::{Break, Continue};

use crate::shares::Seat;
use linerate_engine::Result;
use linerate_engine::limits::{Held, Refused};
use linerate_engine::measuring_end;
use linerate_engine::pool::ReceivePool;
use linerate_engine::session::control::Control;
use linerate_engine::session::registry::{Registration, Registry};
use linerate_engine::session::{Turn, drive, flush, local};
use linerate_engine::sockopt::StreamOptions;
use linerate_session::join::JoinRule;

/// What the client asked to run.
enum Plan {
    Bench(BenchParams),
    Latency(LatencyParams),
}

/// Runs an accepted bench or latency session to its end; returns a
/// one-line summary.
pub(crate) fn serve(
    mut ctl: Control,
    accept: Accept,
    reg: &Registry,
    (id, kind): (SessionId, SessionKind),
    (seat, run_token, pool): (
        &Seat,
        Option<&linerate_wire::RunToken>,
        Option<&ReceivePool>,
    ),
) -> Result<String> {
    let mut m = match kind {
        SessionKind::Latency => BenchServer::latency(Instant::now(), accept),
        _ => BenchServer::new(Instant::now(), accept),
    };
    // An encrypted session's streams must be encrypted too, by the same key.
    let join = JoinRule {
        encrypted: ctl.negotiated().is_some(),
        token: None,
        client_key: ctl.peer_fingerprint().map(|f| f.0),
    };
    let mut registration = None;
    let mut _buffers = None;
    let mut _path = None;
    let mut _echo = None;
    let mut sockets = Vec::new();
    let mut summary = String::new();
    drive(&mut ctl, &mut m, None, |ctl, m, turn| {
        let event = match turn {
            Turn::Ended(end) => return end.map(|()| Break(std::mem::take(&mut summary))),
            Turn::Idle => return Ok(Continue(())),
            Turn::Event(event) => event,
        };
        let (plan, options, connections) = match event {
            Event::Register(params) => {
                if let Err(e) = of_the_run(params.options.run_token.as_ref(), run_token) {
                    m.abort(local(RefusalCode::UnknownSession, e));
                    return Ok(Continue(()));
                }
                if let Err(e) = within_time(params.options.duration_ms, params.options.bytes, seat)
                {
                    m.abort(local(RefusalCode::InvalidParameters, e));
                    return Ok(Continue(()));
                }
                if let Some(test) = &params.options.path_hold {
                    let peer = ctl.stream.peer_addr().map(|a| a.ip());
                    let peer = peer.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into());
                    match reg.path.take(test, peer) {
                        Ok(h) => _path = Some(h),
                        Err(e) => {
                            m.abort(local(RefusalCode::PathHeld, e.to_string()));
                            return Ok(Continue(()));
                        }
                    }
                }
                if params.plan.udp.is_some() {
                    seat.without_progress_rule();
                }
                _echo = delay_echo(&ctl.stream, &params);
                match Held::take(&reg.buffers, buffer_bytes(&params)) {
                    Ok(h) => _buffers = Some(h),
                    Err(e) => {
                        m.abort(local(RefusalCode::Busy, format!("server busy: {e}")));
                        return Ok(Continue(()));
                    }
                }
                let options = StreamOptions::from(&params);
                let n = params.options.connections();
                (Plan::Bench(params), options, n)
            }
            Event::RegisterLatency(params) => {
                if run_token.is_some() {
                    m.abort(local(
                        RefusalCode::UnknownSession,
                        "this is a many-host run's agent: it takes only its run's flows",
                    ));
                    return Ok(Continue(()));
                }
                let options = StreamOptions::for_latency(&params);
                let n = params.connections;
                (Plan::Latency(params), options, n)
            }
            Event::Run => {
                let Some((_, plan)) = &registration else {
                    return Ok(Continue(()));
                };
                summary = match plan {
                    Plan::Bench(params) => run_bench(params, &sockets, (ctl, m), (seat, pool)),
                    Plan::Latency(params) => {
                        let (report, rounds) =
                            linerate_engine::latency::echo::serve_all(params, &sockets);
                        let mut line = format!(
                            "latency, {} connection(s), answered {rounds} round(s)",
                            params.connections
                        );
                        append_errors(&mut line, &report);
                        m.ran(report);
                        line
                    }
                };
                return Ok(Continue(()));
            }
        };
        match Registration::new(reg, id, connections, options, join.clone()) {
            Ok(r) => {
                m.registered(Instant::now());
                flush(ctl, m)?;
                registration = Some((r, plan));
            }
            Err(e) => m.abort(local(RefusalCode::Busy, e)),
        }
        if let Some((r, _)) = registration.as_mut() {
            match r.collect(m.poll_timeout()) {
                Ok(Some(s)) => {
                    for socket in &s {
                        seat.ender.watch(&socket.stream);
                    }
                    sockets = s;
                    m.streams_connected(Instant::now());
                }
                Ok(None) => m.handle_timeout(Instant::now()),
                Err(e) => m.abort(local(RefusalCode::InvalidParameters, e)),
            }
        }
        Ok(Continue(()))
    })
}

/// The echo of a TCP bench's one-way delay probe: from this control
/// connection's own address and port to the client's address at the port
/// it gave; none where it gave none.
fn delay_echo(
    control: &std::net::TcpStream,
    params: &BenchParams,
) -> Option<linerate_engine::delay_probe::DelayEchoer> {
    let port = params
        .plan
        .delay_probe_port
        .filter(|_| params.plan.udp.is_none())?;
    let client = std::net::SocketAddr::new(control.peer_addr().ok()?.ip(), port);
    linerate_engine::delay_probe::DelayEchoer::start(control.local_addr().ok()?, client)
}

/// Runs a bench's streams at this end; its summary line.
fn run_bench(
    params: &BenchParams,
    sockets: &[linerate_engine::session::StreamSocket],
    (ctl, m): (&mut Control, &mut BenchServer),
    (seat, pool): (&Seat, Option<&ReceivePool>),
) -> String {
    let t0 = Instant::now();
    let abort: &AtomicBool = &seat.ender.abort;
    // A client that only receives shows these senders' TCP_INFO;
    // a client gone away ends the run through its streams.
    let on_interval = &mut |batch: &[linerate_result::IntervalSample]| {
        m.interval(batch);
        let _ = flush(ctl, m);
    };
    let report = match pool {
        Some(pool) => measuring_end::run_pooled(params, pool, sockets, t0, abort, on_interval),
        None => measuring_end::run(params, false, None, sockets, t0, abort, on_interval),
    };
    let mut summary = format!(
        "bench, {} stream(s) {:?}, received {} B, sent {} B",
        params.options.streams,
        params.options.direction,
        report.bytes_total(Side::Receiver),
        report.bytes_total(Side::Sender)
    );
    append_errors(&mut summary, &report);
    if let Some(why) = seat.ender.ended() {
        summary.push_str(&format!("; ended by the server: {why}"));
    }
    m.ran(report);
    summary
}

/// What a bench's buffers take at the server: its write length once (the
/// senders share one pattern) and its read length per receiving stream.
fn buffer_bytes(p: &BenchParams) -> u64 {
    let receivers = (0..p.options.connections())
        .filter(|&i| p.options.direction.is_forward(i, p.options.streams))
        .count() as u64;
    let sends = receivers < u64::from(p.options.connections());
    u64::from(p.plan.read_len) * receivers
        + if sends {
            u64::from(p.plan.write_len)
        } else {
            0
        }
}

/// Whether a bench belongs to the run this server serves (when it serves
/// one): the token it shows, compared in constant time.
fn of_the_run(
    shown: Option<&linerate_wire::RunToken>,
    wanted: Option<&linerate_wire::RunToken>,
) -> std::result::Result<(), Refused> {
    match (wanted, shown) {
        (None, _) => Ok(()),
        (Some(w), Some(s)) if linerate_session::transfer_receiver::same_secret(&w.0, &s.0) => {
            Ok(())
        }
        (Some(_), _) => Err(Refused::NotOfTheRun),
    }
}

/// Whether a client without a key may run this long; a run of a byte
/// count is bounded by the seat's time instead.
fn within_time(
    duration_ms: u64,
    bytes: Option<u64>,
    seat: &Seat,
) -> std::result::Result<(), Refused> {
    let most = seat.max_bench_time();
    if bytes.is_none() && std::time::Duration::from_millis(duration_ms) > most {
        return Err(Refused::TooLong {
            seconds: duration_ms / 1000,
            most_seconds: most.as_secs(),
        });
    }
    Ok(())
}

fn append_errors(summary: &mut String, report: &linerate_result::SideReport) {
    for failed in report.stream_failures() {
        summary.push_str(&format!("; {failed}"));
    }
}
