//! The client side of `linerate bench`: opens a session, runs its streams,
//! collects the server's half and merges both into one result.

use std::net::SocketAddr;
use std::ops::ControlFlow::{Break, Continue};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

use linerate_result::{HostFacts, IntervalSample, ResultDoc, SideReport};
use linerate_session::bench_client::Event;
use linerate_session::{BenchClient, Session};
use linerate_verdict::{self as verdict, Evidence};
use linerate_wire::{BenchParams, BenchPlan, Direction, Hello, Role, SessionId, SessionKind};

use crate::document;
use crate::error::{EngineError, Result};
use crate::link_shares::{self, MemberWatch};
use crate::measuring_end::{self, Pin};
use crate::session::connect::{Peer, before_accept, new_session_id, open_control, open_data};
use crate::session::control::Control;
use crate::session::{Turn, drive, feed, flush};
use crate::sockopt::StreamOptions;
use crate::spec::BenchSpec;

pub mod find_rate;
mod plan;

pub use crate::spec::{Affinity, RxPoll};
pub use plan::*;

/// What a bench measured at both ends, before it becomes a result.
pub struct BenchRun {
    /// The parameters as run, with every automatic choice resolved.
    pub params: BenchParams,
    /// The session's id.
    pub session: SessionId,
    /// When the measurement began.
    pub started_at: SystemTime,
    /// The client's half.
    pub client: SideReport,
    /// The server's half.
    pub server: SideReport,
    /// The client's host.
    pub client_host: HostFacts,
    /// The server's host.
    pub server_host: HostFacts,
    /// The user ended the run early.
    pub interrupted: bool,
    /// The cipher and key exchange, when the run was encrypted.
    pub encryption: Option<linerate_secure::Negotiated>,
    /// What is known of the path.
    pub path: linerate_verdict::KnownPath,
    /// The write size was asked for (`-l`), not chosen by the CPU plan: a
    /// sweep over it is a figure of its own.
    pub write_len_asked: bool,
    /// The paths the streams were striped over (`--stripe`).
    pub stripes: Vec<crate::address::Stripe>,
    /// What each link of the bond or multipath route to the server carried.
    pub members: Option<crate::link_shares::MembersCarried>,
    /// What the threads of the process that forwarded the run's packets
    /// (a lab's emulator) used over the streams' run.
    pub forwarder: Option<linerate_probe::cpu::ThreadsUse>,
    /// Each direction's queueing while the streams ran, where the server
    /// answered the one-way delay probe.
    pub one_way_delay: Option<linerate_result::one_way::OneWayDelay>,
}

/// This end's samples of an interval and the server's latest, as the run
/// goes; the server's only when this end only receives (-R), so that its
/// senders' TCP_INFO can be shown.
pub type OnInterval<'a> = dyn FnMut(&[IntervalSample], &[IntervalSample]) + 'a;

/// Runs a bench session; `on_interval` sees the samples live. When
/// `stop` is set mid-run (Ctrl-C), the run ends as at its deadline and
/// what ran is reported, marked interrupted.
pub fn run(
    server: SocketAddr,
    spec: &BenchSpec,
    stop: Option<Arc<AtomicBool>>,
    on_interval: &mut OnInterval,
) -> Result<BenchRun> {
    let stopped = || stop.as_ref().is_some_and(|s| s.load(Relaxed));
    let mut params = params_for(spec);
    params.validate()?;
    let peer = Peer {
        server,
        bind: spec.bind,
        tls: spec.tls.as_ref().map(|t| t.0.clone()),
        token: None,
        stripes: spec.stripes.clone(),
    };
    let session = new_session_id()?;
    let mut ctl = open_control(&peer, session, SessionKind::Bench)?;
    let encryption = ctl.negotiated();
    let mut m = BenchClient::new(Instant::now());
    let client_host = linerate_probe::host::collect();
    let mut server_host = HostFacts::default();
    let mut client = None;
    let mut started_at = SystemTime::now();
    let mut members = None;
    let mut forwarder = None;
    let mut prober = None;
    let mut one_way_delay = None;
    let run = |params: &BenchParams,
               client: Option<SideReport>,
               server,
               server_host,
               started_at,
               interrupted,
               (members, forwarder, one_way_delay)| BenchRun {
        params: params.clone(),
        session,
        started_at,
        client: client.unwrap_or_default(),
        server,
        client_host: client_host.clone(),
        server_host,
        interrupted,
        encryption: encryption.clone(),
        path: spec.path,
        write_len_asked: spec.write_len.is_some(),
        stripes: spec.stripes.clone(),
        members,
        forwarder,
        one_way_delay,
    };
    drive(&mut ctl, &mut m, None, |ctl, m, turn| {
        let event = match turn {
            Turn::Ended(Ok(server)) => {
                let failed = server.stream_failures();
                // A run cut short by the user leaves the server's senders
                // reset mid-write (-R): not a failure of the run.
                if !failed.is_empty() && !stopped() {
                    return Err(EngineError::ServerStreams(failed));
                }
                let host = std::mem::take(&mut server_host);
                return Ok(Break(run(
                    &params,
                    client.take(),
                    server,
                    host,
                    started_at,
                    stopped(),
                    (members.take(), forwarder.take(), one_way_delay.take()),
                )));
            }
            // Ended by the user before the server could report (its
            // streams were still sending, -R): this end's half stands alone.
            Turn::Ended(Err(_)) if client.is_some() && stopped() => {
                let host = std::mem::take(&mut server_host);
                let alone = SideReport::default();
                return Ok(Break(run(
                    &params,
                    client.take(),
                    alone,
                    host,
                    started_at,
                    true,
                    (members.take(), forwarder.take(), one_way_delay.take()),
                )));
            }
            Turn::Ended(Err(e)) if !m.accepted() => return Err(before_accept(server, ctl, e)),
            Turn::Ended(Err(e @ EngineError::Refused(_))) => return Err(e),
            Turn::Ended(Err(e)) if client.is_some() => {
                return Err(EngineError::NoServerReport(Box::new(e)));
            }
            Turn::Ended(Err(e)) => return Err(e),
            Turn::Idle => return Ok(Continue(())),
            Turn::Event(event) => event,
        };
        match event {
            Event::Accepted(accept) => {
                let loopback = server.ip().is_loopback();
                let hosts = (&client_host, &accept.host);
                plan_request(spec, &mut params, ctl, loopback, hosts);
                if !spec.without_delay_probe {
                    prober = delay_prober(ctl, &mut params);
                }
                server_host = accept.host;
                m.request(Instant::now(), params.clone());
            }
            Event::OpenStreams => {
                let options = StreamOptions::from(&params);
                // Striped streams are counted per path; unstriped ones per
                // member of a bond or multipath route, where the route has one.
                let watch = (spec.count_members && spec.stripes.is_empty())
                    .then(|| MemberWatch::start(server.ip()))
                    .flatten();
                let hop = spec
                    .path
                    .forwarder_pid
                    .and_then(linerate_probe::cpu::ThreadsOf::sample);
                let probing = prober.take().and_then(|p| p.start(server));
                let sockets = (0..params.options.connections())
                    .map(|index| {
                        let hello = Hello::new(session, Role::Data, SessionKind::Bench, index);
                        open_data(&peer, &options, hello)
                    })
                    .collect::<Result<Vec<_>>>()?;
                if let Some(at) = spec.start_at {
                    std::thread::sleep(at.duration_since(SystemTime::now()).unwrap_or_default());
                    started_at = SystemTime::now();
                }
                // This end's clock starts before the server can learn to
                // start its own: the server's deadline, and the cut of its
                // receivers a grace later, never come before this sender's,
                // even when this thread waits for a core after the flush.
                let t0 = Instant::now();
                if let Some(p) = &probing {
                    p.run_begins();
                }
                m.streams_open();
                flush(ctl, m)?;
                let abort = AtomicBool::new(false);
                let report = run_streams(
                    ctl,
                    m,
                    params.plan.peer_intervals,
                    &|show| {
                        measuring_end::run(&params, true, stop.clone(), &sockets, t0, &abort, show)
                    },
                    on_interval,
                );
                let failed = report.stream_failures();
                if !failed.is_empty() && !stopped() {
                    return Err(EngineError::ClientStreams(failed));
                }
                client = Some(report);
                members = watch.map(|w| w.finish(params.options.direction));
                forwarder = hop.and_then(|h| h.used_since());
                one_way_delay = probing.and_then(|p| p.finish());
                m.run_over(Instant::now());
            }
            // Late ones, after this end's last interval was shown.
            Event::PeerIntervals(_) => {}
        }
        Ok(Continue(()))
    })
}

/// The one-way delay probe's socket for a TCP bench, its port in the
/// request; none for a UDP bench (its datagrams carry their own times) or
/// where no socket can be had.
fn delay_prober(ctl: &Control, params: &mut BenchParams) -> Option<crate::delay_probe::Prober> {
    if params.plan.udp.is_some() {
        return None;
    }
    let prober = crate::delay_probe::Prober::bind(ctl.stream.local_addr().ok()?.ip()).ok()?;
    params.plan.delay_probe_port = Some(prober.port().ok()?);
    Some(prober)
}

/// What [`measuring_end::run`] calls with each interval of this end's samples.
type ShowInterval<'a> = dyn FnMut(&[IntervalSample]) + 'a;

/// Runs this end's streams through `streams`; with `peer_intervals`, a
/// second thread reads the server's samples off the control connection
/// meanwhile, and each of this end's intervals waits briefly for the
/// server's of the same interval (its clock starts a little later).
fn run_streams(
    ctl: &mut Control,
    m: &mut BenchClient,
    peer_intervals: bool,
    streams: &dyn Fn(&mut ShowInterval) -> SideReport,
    on_interval: &mut OnInterval,
) -> SideReport {
    if !peer_intervals {
        return streams(&mut |batch| on_interval(batch, &[]));
    }
    let peer = PeerSamples::default();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Relaxed) && !m.is_over() {
                feed(ctl, m, Some(PEER_READ_TICK));
                while let Some(event) = m.poll_event() {
                    if let Event::PeerIntervals(samples) = event {
                        peer.push(samples);
                    }
                }
            }
        });
        let mut shown = 0usize;
        let report = streams(&mut |batch| {
            shown += 1;
            let latest = peer.wait_for(shown, PEER_INTERVAL_WAIT);
            on_interval(batch, &latest);
        });
        done.store(true, Relaxed);
        report
    })
}

/// How often the reader of the server's samples looks whether the run ended.
const PEER_READ_TICK: Duration = Duration::from_millis(50);

/// How long an interval line waits for the server's samples of the same
/// interval before it is shown with the latest ones.
const PEER_INTERVAL_WAIT: Duration = Duration::from_millis(200);

/// The server's interval samples as they arrive.
#[derive(Default)]
struct PeerSamples {
    state: std::sync::Mutex<(usize, Vec<IntervalSample>)>,
    arrived: std::sync::Condvar,
}

impl PeerSamples {
    fn push(&self, samples: Vec<IntervalSample>) {
        if let Ok(mut s) = self.state.lock() {
            *s = (s.0 + 1, samples);
            self.arrived.notify_all();
        }
    }

    /// The latest samples, once the `n`-th interval's have come or `wait` passed.
    fn wait_for(&self, n: usize, wait: Duration) -> Vec<IntervalSample> {
        let Ok(guard) = self.state.lock() else {
            return Vec::new();
        };
        match self.arrived.wait_timeout_while(guard, wait, |s| s.0 < n) {
            Ok((s, _)) => s.1.clone(),
            Err(_) => Vec::new(),
        }
    }
}

impl BenchSpec {
    /// Refuses what no server would take, before anything is opened; the
    /// error names the parameter.
    pub fn check(&self) -> Result<()> {
        Ok(params_for(self).validate()?)
    }
}

/// The parameters both ends run: the spec's options whole, and a plan
/// with what the spec leaves to run time at its fallback until
/// [`plan_request`] decides it.
fn params_for(spec: &BenchSpec) -> BenchParams {
    let options = &spec.options;
    BenchParams {
        options: options.clone(),
        plan: BenchPlan {
            rcvlowat: spec.rcvlowat,
            // A client that only sends sees loss only in the server's samples.
            peer_intervals: options.direction == Direction::Reverse || spec.udp.is_some(),
            udp: spec.udp.map(|u| linerate_wire::UdpParams {
                rate_bps: (u.rate_bps / u64::from(options.streams.max(1))).max(1),
                gso: u.gso,
                gro: u.gro,
            }),
            ..BenchPlan::of_lengths(
                spec.write_len.unwrap_or(match spec.udp {
                    Some(_) => crate::spec::DEFAULT_DATAGRAM_LEN,
                    None => WRITE_LEN_SHARED_CORES,
                }),
                spec.read_len.unwrap_or(READ_LEN),
            )
        },
    }
}

/// Makes the choices `spec` leaves to run time from both hosts' facts.
fn plan_request(
    spec: &BenchSpec,
    params: &mut BenchParams,
    ctl: &Control,
    loopback: bool,
    (client, server): (&HostFacts, &HostFacts),
) {
    let mut plan = plan_cpus(
        spec.rx_poll,
        params.options.connections(),
        loopback,
        params.options.socket.pacing_rate.is_some(),
        client,
        server,
    );
    // A polling reader, pinned or not, needs a core of its own: on a host
    // whose cores other work holds it only takes turns with that work (a
    // 4 KiB window on loopback ran 0.63 Gbit/s polling beside two busy loops
    // where iperf3 ran 1.5; docs/defaults.md#rx-poll-busy-host). Only the
    // readers poll, so they are what must find idle cores.
    if spec.rx_poll == RxPoll::Auto && plan.rx_poll && crate::spare_cores::same_host(client, server)
    {
        let readers = u32::from(params.options.connections());
        if !crate::spare_cores::room_for(readers, crate::spare_cores::free_cores(client.cpus)) {
            plan.rx_poll = false;
            plan.pin = Pin::None;
        }
    }
    params.plan.rx_poll = plan.rx_poll;
    (params.plan.pin_cores, params.plan.pin_pairs) = match spec.affinity {
        Affinity::Auto => (plan.pin == Pin::Spread, plan.pin == Pin::Pairs),
        Affinity::Off => (false, false),
        Affinity::Spread => (true, false),
        Affinity::Pairs => (false, true),
    };
    let (write_len, read_len) = plan.io_lens();
    // A datagram's size is the path's (its MTU), not the CPU's.
    if spec.write_len.is_none() && spec.udp.is_none() {
        params.plan.write_len = write_len;
    }
    if spec.read_len.is_none() {
        params.plan.read_len = read_len;
    }
    if spec.rcvlowat.is_none() {
        let rtt_us = linerate_probe::tcpinfo::read(&ctl.stream).map_or(u32::MAX, |t| t.rtt_us);
        params.plan.rcvlowat = short_path_only(plan.rcvlowat, rtt_us);
    }
}

/// A UDP run's verdict: its counts, and which end or the path held it.
fn udp_verdict(
    ends: &document::Ends,
    u: linerate_wire::UdpParams,
    streams: u16,
    run: &BenchRun,
) -> linerate_result::Verdict {
    let senders = ends
        .streams
        .iter()
        .filter(|s| s.side == linerate_result::Side::Sender);
    let sent: u64 = senders.clone().map(|s| s.bytes).sum();
    let secs = senders.map(|s| s.seconds).fold(0.0, f64::max);
    verdict::udp::judge_udp(&verdict::udp::UdpEvidence {
        streams: &ends.streams,
        asked_bps: u.rate_bps as f64 * f64::from(streams),
        sent_bps: if secs > 0.0 {
            sent as f64 * 8.0 / secs
        } else {
            0.0
        },
        received_bps: ends.bits_per_second,
        client_cpu: run.client.host_cpu,
        server_cpu: Some(run.server.host_cpu),
        // Both ends may be one host (loopback): the larger, not the sum.
        host_rcvbuf_errors: run
            .client
            .udp_rcvbuf_errors
            .into_iter()
            .chain(run.server.udp_rcvbuf_errors)
            .max(),
    })
}

/// Merges both ends into one `linerate.result/1` document with its verdict.
pub fn to_result(run: &BenchRun, command_line: Vec<String>) -> ResultDoc {
    let params = &run.params;
    let ends = document::merge(&run.client, &run.server);
    // The algorithm asked for, or the sending host's default.
    let sending_host = match params.options.direction {
        Direction::Reverse => &run.server_host,
        _ => &run.client_host,
    };
    let congestion = params.options.socket.congestion.as_deref().or_else(|| {
        sending_host
            .sysctls
            .get("net.ipv4.tcp_congestion_control")
            .map(String::as_str)
    });
    let verdict = match params.plan.udp {
        Some(u) => udp_verdict(&ends, u, params.options.streams, run),
        None => verdict::judge(&Evidence {
            streams: &ends.streams,
            client_cpu: run.client.host_cpu,
            server_cpu: Some(run.server.host_cpu),
            bits_per_second: ends.bits_per_second,
            pacing_rate: params.options.socket.pacing_rate,
            window_asked: params.options.socket.rcvbuf,
            congestion,
            cipher: run.encryption.as_ref().map(|n| n.cipher.as_str()),
            intervals: &ends.intervals,
            capacity: run.path.capacity,
            path_min_rtt_us: run.path.min_rtt_us,
            forwarder: run.forwarder,
            one_way: run.one_way_delay.as_ref().and_then(|d| {
                let client_sends = match params.options.direction {
                    Direction::Forward => Some(true),
                    Direction::Reverse => Some(false),
                    Direction::Bidir => None,
                };
                verdict::DirectedQueues::of(d, client_sends)
            }),
        }),
    };
    let mut parameters = serde_json::to_value(params).unwrap_or_default();
    if let Some(map) = parameters.as_object_mut() {
        // A port of this run's, not a parameter of it: the probe's figures
        // are the document's one_way_delay.
        map.remove("delay_probe_port");
        map.insert("session".into(), run.session.to_hex().into());
        map.insert(
            "write_len_source".into(),
            if run.write_len_asked {
                "asked"
            } else {
                "planned"
            }
            .into(),
        );
        map.insert(
            "direction".into(),
            match params.options.direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
                Direction::Bidir => "bidir",
            }
            .into(),
        );
        map.insert(
            "encryption".into(),
            document::encryption(run.encryption.as_ref()),
        );
        map.insert(
            "protocol".into(),
            if params.plan.udp.is_some() {
                "udp"
            } else {
                "tcp"
            }
            .into(),
        );
        // By the flag's name (-w/--window), as asked; null is autotuning.
        // What the kernel made of it is each receiving stream's rcvbuf.
        map.remove("rcvbuf");
        map.insert("window".into(), params.options.socket.rcvbuf.into());
        // What each end ran its streams on: a thread each, or fewer loops.
        map.insert(
            "stream_threads".into(),
            serde_json::json!({
                "client": run.client.stream_threads,
                "server": run.server.stream_threads,
            }),
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
    let mut doc = document::document(provenance, ends, verdict);
    doc.interrupted = run.interrupted;
    doc.one_way_delay = run.one_way_delay;
    let both_ways = params.options.direction == Direction::Bidir;
    if both_ways {
        doc.summary.directions = linerate_result::DirectionTotal::of(&doc.streams);
    }
    let flows = u32::from(params.options.streams) * if both_ways { 2 } else { 1 };
    link_shares::judge_links(&mut doc, &run.stripes, run.members.as_ref(), flows);
    doc
}

#[cfg(test)]
mod params_tests {
    use proptest::prelude::*;

    use super::params_for;
    use crate::sockopt::StreamOptions;
    use crate::spec::{BenchOptions, BenchSpec, SocketParams, UdpSpec};
    use linerate_wire::{Direction, Message};

    fn socket() -> impl Strategy<Value = SocketParams> {
        (
            proptest::option::of(1u32..1 << 28),
            proptest::option::of(1u32..1 << 28),
            proptest::option::of(prop_oneof![Just("bbr".to_string()), Just("cubic".into())]),
            proptest::option::of(1u64..1 << 40),
            proptest::option::of(88u32..=65535),
            proptest::option::of(any::<u8>()),
            any::<bool>(),
            proptest::option::of(1u32..1 << 24),
        )
            .prop_map(
                |(sndbuf, rcvbuf, congestion, pacing_rate, mss, tos, nodelay, notsent_lowat)| {
                    SocketParams {
                        sndbuf,
                        rcvbuf,
                        congestion,
                        pacing_rate,
                        mss,
                        tos,
                        nodelay,
                        notsent_lowat,
                    }
                },
            )
    }

    fn spec() -> impl Strategy<Value = BenchSpec> {
        (
            1u16..=1024,
            prop_oneof![
                Just(Direction::Forward),
                Just(Direction::Reverse),
                Just(Direction::Bidir)
            ],
            socket(),
            any::<bool>(),
            proptest::option::of(1u32..1 << 20),
            proptest::option::of(1u64..1 << 36),
            proptest::option::of(1u64 << 20..1 << 36),
        )
            .prop_map(
                |(streams, direction, socket, zerocopy, rcvlowat, bytes, udp)| BenchSpec {
                    options: BenchOptions {
                        streams,
                        direction,
                        socket,
                        zerocopy: zerocopy && udp.is_none(),
                        bytes,
                        ..BenchOptions::default()
                    },
                    rcvlowat,
                    write_len: None,
                    udp: udp.map(|rate_bps| UdpSpec {
                        rate_bps,
                        gso: zerocopy,
                        gro: !zerocopy,
                    }),
                    ..BenchSpec::default()
                },
            )
    }

    proptest! {
        /// What the client's spec asks of the data connections reaches the
        /// server whole: spec, wire parameters, the codec, and the server's
        /// socket options give back the spec's own.
        #[test]
        fn the_server_applies_what_the_spec_asks(spec in spec()) {
            let params = params_for(&spec);
            prop_assert!(params.validate().is_ok(), "{:?}", params.validate());
            let frame = Message::BenchRequest(params.clone()).to_frame();
            let Ok(Message::BenchRequest(got)) = Message::from_frame(&frame) else {
                panic!("the request did not decode");
            };
            prop_assert_eq!(&got, &params);
            let at_server = StreamOptions::from(&got);
            prop_assert_eq!(&at_server.socket, &spec.options.socket);
            prop_assert_eq!(at_server.zerocopy, spec.options.zerocopy);
            prop_assert_eq!(at_server.rcvlowat, spec.rcvlowat);
            prop_assert_eq!(got.options.streams, spec.options.streams);
            prop_assert_eq!(got.options.direction, spec.options.direction);
            prop_assert_eq!(got.options.bytes, spec.options.bytes);
            let total = got.plan.udp.map(|u| u.rate_bps * u64::from(spec.options.streams));
            let asked = spec.udp.map(|u| u.rate_bps);
            // A UDP rate is split over the streams, at least 1 bit/s each.
            prop_assert!(total.zip(asked).is_none_or(|(t, a)| t <= a.max(u64::from(spec.options.streams))
                && a - t.min(a) < u64::from(spec.options.streams)));
        }
    }
}
