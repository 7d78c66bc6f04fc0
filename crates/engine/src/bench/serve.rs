//! The server's half of a bench session: the driver of
//! [`linerate_session::BenchServer`], which holds the message order.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use linerate_result::Side;
use linerate_session::bench_server::Event;
use linerate_session::{BenchServer, Session};
use linerate_wire::{Accept, RefusalCode, SessionId};

use crate::end;
use crate::error::Result;
use crate::session::control::Control;
use crate::session::registry::{JoinRule, Registration, Registry};
use crate::session::{feed, flush, local, settle};
use crate::sockopt::StreamOptions;

/// Runs an accepted bench session to its end; returns a one-line summary.
pub(crate) fn serve(
    mut ctl: Control,
    accept: Accept,
    reg: &Registry,
    id: SessionId,
) -> Result<String> {
    let mut m = BenchServer::new(Instant::now(), accept);
    // An encrypted session's streams must be encrypted too, by the same key.
    let join = JoinRule {
        encrypted: ctl.negotiated().is_some(),
        token: None,
        client: ctl.peer_fingerprint(),
    };
    let mut registration = None;
    let mut sockets = Vec::new();
    let mut summary = String::new();
    loop {
        if let Some(end) = settle(&mut ctl, &mut m) {
            return end.map(|()| summary);
        }
        let Some(event) = m.poll_event() else {
            feed(&mut ctl, &mut m, None);
            continue;
        };
        match event {
            Event::Register(params) => {
                let options = StreamOptions::from(&params);
                match Registration::new(reg, id, params.connections(), options, join.clone()) {
                    Ok(r) => {
                        m.registered(Instant::now());
                        flush(&mut ctl, &mut m)?;
                        registration = Some((r, params));
                    }
                    Err(e) => m.abort(local(RefusalCode::Busy, e)),
                }
                if let Some((r, _)) = registration.as_mut() {
                    match r.collect(m.poll_timeout()) {
                        Ok(Some(s)) => {
                            sockets = s;
                            m.streams_connected(Instant::now());
                        }
                        Ok(None) => m.handle_timeout(Instant::now()),
                        Err(e) => m.abort(local(RefusalCode::InvalidParameters, e)),
                    }
                }
            }
            Event::Run => {
                let Some((_, params)) = &registration else {
                    continue;
                };
                let t0 = Instant::now();
                let abort = AtomicBool::new(false);
                // A client that only receives shows these senders' TCP_INFO;
                // a client gone away ends the run through its streams.
                let report = end::run(params, false, None, &sockets, t0, &abort, &mut |batch| {
                    m.interval(batch);
                    let _ = flush(&mut ctl, &mut m);
                });
                summary = format!(
                    "bench, {} stream(s) {:?}, received {} B, sent {} B",
                    params.streams,
                    params.direction,
                    report.bytes_total(Side::Receiver),
                    report.bytes_total(Side::Sender)
                );
                let errors = report.stream_errors();
                if !errors.is_empty() {
                    summary.push_str(&format!("; {}", errors.join("; ")));
                }
                m.ran(report);
            }
        }
    }
}
