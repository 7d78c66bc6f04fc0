//! One end of a measurement: its stream threads and the sampler that turns
//! their counters and TCP_INFO into interval samples.

use crate::lock;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use linerate_probe::cgroup::{Cgroup, CpuStat};
use linerate_probe::{cpu, tcpinfo};
use linerate_result::{Flow, HostCpu, IntervalSample, Side, SideReport, StreamEnd};
use linerate_wire::{BenchParams, Direction};

use std::net::TcpStream;

use crate::buffer::AlignedBuf;
use crate::multiplex;
use crate::pool::{Job, ReceivePool};
use crate::session::StreamSocket;
use crate::sockopt;
use crate::stream::{self, Live, Outcome, ReceivePlan, SendPlan};

pub use crate::spec::RxPoll;

/// Where stream threads are pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// Not pinned: the scheduler places every thread.
    None,
    /// One core per stream thread: client stream i on CPU 2i, server on 2i+1.
    Spread,
    /// Both ends of stream i on CPU i (one host only).
    Pairs,
}

/// What the sampler and the stream threads of one end go by, whatever
/// the session kind.
#[derive(Debug, Clone)]
pub struct EndConfig {
    /// This end is the client.
    pub is_client: bool,
    /// Streams per direction.
    pub streams: u16,
    /// Which way the data goes.
    pub direction: Direction,
    /// Between interval samples; 0 for none.
    pub interval_ms: u64,
    /// Leading time left out of the summary.
    pub omit: Duration,
    /// Length of a timed run; None runs until the streams end.
    pub duration: Option<Duration>,
    /// Which cores the stream threads are pinned to.
    pub pin: Pin,
    /// The receive buffer asked for (`--window`), held as the window.
    pub rcvbuf: Option<u32>,
    /// Set when the user ends the run early (Ctrl-C): it ends as at its
    /// deadline, and both ends still report.
    pub stop: Option<Arc<AtomicBool>>,
    /// The streams carry datagrams; their TCP connections only pair the
    /// sockets and carry the sender's count at the end.
    pub udp: bool,
}

impl EndConfig {
    /// One end of a bench session, from the parameters both ends share.
    pub fn bench(p: &BenchParams, is_client: bool) -> EndConfig {
        EndConfig {
            is_client,
            streams: p.options.streams,
            direction: p.options.direction,
            interval_ms: p.options.interval_ms,
            // A byte-count run has no steady state to wait for.
            omit: if p.options.bytes.is_some() {
                Duration::ZERO
            } else {
                Duration::from_millis(p.options.omit_ms)
            },
            duration: p
                .options
                .bytes
                .is_none()
                .then(|| Duration::from_millis(p.options.duration_ms)),
            pin: if p.plan.pin_pairs {
                Pin::Pairs
            } else if p.plan.pin_cores {
                Pin::Spread
            } else {
                Pin::None
            },
            rcvbuf: p.options.socket.rcvbuf,
            stop: None,
            udp: p.plan.udp.is_some(),
        }
    }

    /// One end of a transfer: forward streams that run until the sender
    /// has nothing left.
    pub fn transfer(
        streams: u16,
        interval_ms: u64,
        rcvbuf: Option<u32>,
        is_client: bool,
    ) -> EndConfig {
        EndConfig {
            is_client,
            streams,
            direction: Direction::Forward,
            interval_ms,
            omit: Duration::ZERO,
            duration: None,
            pin: Pin::None,
            rcvbuf,
            stop: None,
            udp: false,
        }
    }

    /// Whether connection `index` carries client-to-server payload.
    fn is_forward(&self, index: u16) -> bool {
        self.direction.is_forward(index, self.streams)
    }

    /// Whether this end sends on connection `index`.
    pub fn sends(&self, index: u16) -> bool {
        self.is_forward(index) == self.is_client
    }

    /// The role this end plays on connection `index`.
    fn side_of(&self, index: u16) -> Side {
        if self.sends(index) {
            Side::Sender
        } else {
            Side::Receiver
        }
    }
}

/// Bytes each sending connection of a byte-count run carries.
fn quota(p: &BenchParams, index: u16) -> Option<u64> {
    let total = p.options.bytes?;
    let n = u64::from(p.options.streams);
    // Bidir numbers the reverse connections after the forward ones.
    let lane = u64::from(index % p.options.streams);
    Some(total / n + u64::from(lane < total % n))
}

/// The longest receivers of a timed run wait past the deadline for the data
/// still in flight; a window stalled at zero would otherwise hold the run
/// open for as long as TCP keeps probing it.
const RECEIVE_GRACE: Duration = Duration::from_secs(2);

/// The shortest wait past the deadline, for a path whose RTT is not known.
const RECEIVE_GRACE_MIN: Duration = Duration::from_millis(50);

/// How long the receivers wait past the deadline: two round trips, for
/// the bytes in flight when the senders stopped. Bytes still queued in a
/// small window's send buffer are not waited for: over a long path they
/// would stretch a 3-second run by half a second (docs/defaults.md#receive-grace).
fn receive_grace(sockets: &[StreamSocket], cfg: &EndConfig) -> Duration {
    let rtt_us = sockets
        .iter()
        .filter(|s| !cfg.sends(s.index))
        .filter_map(|s| tcpinfo::read(&s.stream).ok())
        .map(|t| t.rtt_us)
        .max()
        .unwrap_or(0);
    grace_of(rtt_us)
}

/// Two round trips of `rtt_us`, within the grace's bounds.
fn grace_of(rtt_us: u32) -> Duration {
    (Duration::from_micros(u64::from(rtt_us)) * 2).clamp(RECEIVE_GRACE_MIN, RECEIVE_GRACE)
}

/// Poll period of the sampler when no interval boundary is near: how soon it
/// notices that every stream has ended.
const SAMPLER_TICK: Duration = Duration::from_millis(20);

/// Runs every bench stream of this end (`p` as both ends agreed it) from
/// `t0` until they end, sampling on the way. `on_interval` sees each
/// interval's samples as they are taken.
pub fn run(
    p: &BenchParams,
    is_client: bool,
    stop: Option<Arc<AtomicBool>>,
    sockets: &[StreamSocket],
    t0: Instant,
    abort: &AtomicBool,
    on_interval: &mut dyn FnMut(&[IntervalSample]),
) -> SideReport {
    let cfg = &EndConfig {
        stop,
        ..EndConfig::bench(p, is_client)
    };
    let deadline = cfg.duration.map(|d| t0 + d);
    let send_buf = if sockets.iter().any(|s| cfg.sends(s.index)) {
        stream::shared_payload(p.options.payload, p.plan.write_len as usize)
    } else {
        Arc::new(AlignedBuf::new(0))
    };
    let send_buf = &send_buf[..send_buf.len().min(p.plan.write_len as usize)];
    let worker = |s: &StreamSocket, live: &Live| {
        if let Some(udp) = p.plan.udp {
            return udp_stream(p, udp, cfg, s, live, abort, deadline);
        }
        if cfg.sends(s.index) {
            let plan = SendPlan {
                buf: send_buf,
                deadline,
                quota: quota(p, s.index),
                zerocopy: p.options.zerocopy,
                stop: cfg.stop.as_deref(),
            };
            match &s.tls {
                Some(tls) => stream::send_tls(&s.stream, &mut lock(tls), &plan, live, abort),
                None => stream::send(&s.stream, &plan, live, abort),
            }
        } else if let Some(tls) = &s.tls {
            stream::receive_tls(&s.stream, &mut lock(tls), live, abort)
        } else {
            if let Some(lowat) = p.plan.rcvlowat {
                // Best effort: without it the reader only wakes more often.
                let _ = sockopt::set_rcvlowat(&s.stream, lowat);
            }
            let mut buf = AlignedBuf::new(p.plan.read_len as usize);
            let plan = ReceivePlan {
                skip_copy: p.options.skip_rx_copy,
                poll: p.plan.rx_poll,
                // A reader pinned to a core of its own shares it with no
                // thread of this run: a yield would only hand it to other work.
                yield_when_empty: !p.plan.pin_cores,
            };
            stream::receive(&s.stream, &mut buf, &plan, live, abort)
        }
    };
    let Some(threads) = loop_threads(p, sockets) else {
        return run_with(cfg, sockets, t0, abort, on_interval, &worker);
    };
    let grouped = |group: &[(&StreamSocket, &Live)]| {
        let members: Vec<(&TcpStream, &Live)> =
            group.iter().map(|(s, l)| (&s.stream, *l)).collect();
        if group.first().is_some_and(|(s, _)| cfg.sends(s.index)) {
            let plan = SendPlan {
                buf: send_buf,
                deadline,
                quota: None,
                zerocopy: false,
                stop: cfg.stop.as_deref(),
            };
            let quotas: Vec<Option<u64>> = group.iter().map(|(s, _)| quota(p, s.index)).collect();
            multiplex::send_many(&members, &quotas, &plan, abort)
        } else {
            set_loop_rcvlowat(p, group.iter().map(|(s, _)| *s));
            let mut buf = AlignedBuf::new(p.plan.read_len as usize);
            multiplex::receive_many(&members, &mut buf, p.options.skip_rx_copy, abort)
        }
    };
    let loops = Loops::Grouped {
        threads,
        worker: &grouped,
    };
    run_loops(cfg, sockets, t0, abort, on_interval, loops)
}

/// Runs a bench's streams at a server whose receive loops are shared
/// (`pool`): when every stream of this end receives over plain TCP, they
/// join the pool; otherwise as [`run`] does.
pub fn run_pooled(
    p: &BenchParams,
    pool: &ReceivePool,
    sockets: &[StreamSocket],
    t0: Instant,
    abort: &AtomicBool,
    on_interval: &mut dyn FnMut(&[IntervalSample]),
) -> SideReport {
    let cfg = EndConfig::bench(p, false);
    let plain_receivers = p.plan.udp.is_none()
        && !p.plan.rx_poll
        && sockets
            .iter()
            .all(|s| s.tls.is_none() && !cfg.sends(s.index));
    if !plain_receivers {
        return run(p, false, None, sockets, t0, abort, on_interval);
    }
    set_loop_rcvlowat(p, sockets);
    let loops = Loops::Pooled {
        pool,
        read_len: p.plan.read_len as usize,
        skip_copy: p.options.skip_rx_copy,
    };
    run_loops(&cfg, sockets, t0, abort, on_interval, loops)
}

/// SO_RCVLOWAT of a multiplexed receiver's sockets unless `--rcvlowat`
/// says otherwise (docs/defaults.md#stream-threads).
const LOOP_RCVLOWAT: u32 = 128 << 10;

/// Every arrival on a socket of an epoll set runs the set's callback: a
/// low-water mark lets TCP skip those of small ones. Best effort.
fn set_loop_rcvlowat<'a>(p: &BenchParams, sockets: impl IntoIterator<Item = &'a StreamSocket>) {
    let lowat = p
        .plan
        .rcvlowat
        .unwrap_or(LOOP_RCVLOWAT.min(p.plan.read_len));
    for s in sockets {
        let _ = sockopt::set_rcvlowat(&s.stream, lowat);
    }
}

/// Threads for this end's TCP streams when `--threads` asks for fewer
/// than one a stream. None: a thread a stream, the default, which
/// measured faster and cheaper per byte even with streams far
/// outnumbering cores (docs/defaults.md#stream-threads), and always for
/// UDP, TLS and zerocopy streams, whose loops block on their own.
fn loop_threads(p: &BenchParams, sockets: &[StreamSocket]) -> Option<usize> {
    if p.plan.udp.is_some() || p.options.zerocopy || sockets.iter().any(|s| s.tls.is_some()) {
        return None;
    }
    let threads = usize::from(p.options.threads?).max(1);
    (threads < sockets.len()).then_some(threads)
}

/// One UDP stream of a bench at this end: its datagram socket paired over
/// the stream's TCP connection, then sent at the rate or counted.
fn udp_stream(
    p: &BenchParams,
    u: linerate_wire::UdpParams,
    cfg: &EndConfig,
    s: &StreamSocket,
    live: &Live,
    abort: &AtomicBool,
    deadline: Option<Instant>,
) -> Outcome {
    let sock = match crate::udp::pair(&s.stream, cfg.is_client) {
        Ok(sock) => sock,
        Err(e) => return failed_outcome(&format!("pairing the stream's UDP socket: {e}")),
    };
    let sref = socket2::SockRef::from(&sock);
    if cfg.sends(s.index) {
        if let Some(b) = p.options.socket.sndbuf {
            let _ = sref.set_send_buffer_size(b as usize);
        }
        let plan = crate::udp::UdpSendPlan {
            params: u,
            datagram_len: p.plan.write_len as usize,
            deadline,
            quota: quota(p, s.index),
            stop: cfg.stop.as_deref(),
            payload: p.options.payload,
        };
        crate::udp::send(&sock, &s.stream, &plan, live, abort)
    } else {
        // The kernel caps it at net.core.rmem_max.
        let _ = sref
            .set_recv_buffer_size(p.options.socket.rcvbuf.unwrap_or(crate::udp::RCVBUF) as usize);
        let grace = grace_of(tcpinfo::read(&s.stream).map_or(0, |t| t.rtt_us));
        let (mut o, r) = crate::udp::receive(
            &sock,
            &s.stream,
            u,
            p.plan.write_len as usize,
            grace,
            live,
            abort,
        );
        o.udp = Some(crate::udp::totals(&r));
        o
    }
}

/// Runs a group of streams on one thread; their outcomes in its order.
pub type GroupWorker<'a> = dyn Fn(&[(&StreamSocket, &Live)]) -> Vec<Outcome> + Sync + 'a;

/// How the streams of an end map onto threads.
pub enum Loops<'a> {
    /// A thread a stream, running `worker`.
    PerStream(&'a (dyn Fn(&StreamSocket, &Live) -> Outcome + Sync)),
    /// The senders, and the receivers, each split into up to `threads`
    /// groups, a thread a group: `worker` runs a group's streams at once
    /// and returns their outcomes in its order.
    Grouped {
        /// How many group threads at most.
        threads: usize,
        /// What each group thread runs.
        worker: &'a GroupWorker<'a>,
    },
    /// Every stream (each receiving over plain TCP) handed to a server's
    /// shared receive loops.
    Pooled {
        /// The server's shared receive loops.
        pool: &'a ReceivePool,
        /// Bytes read at once.
        read_len: usize,
        /// Discard in the kernel (MSG_TRUNC) instead of copying out.
        skip_copy: bool,
    },
}

/// Runs `worker` on every stream of this end, one thread each, from `t0`
/// until they end, and samples their [`Live`] counters and TCP_INFO.
pub fn run_with(
    cfg: &EndConfig,
    sockets: &[StreamSocket],
    t0: Instant,
    abort: &AtomicBool,
    on_interval: &mut dyn FnMut(&[IntervalSample]),
    worker: &(dyn Fn(&StreamSocket, &Live) -> Outcome + Sync),
) -> SideReport {
    run_loops(
        cfg,
        sockets,
        t0,
        abort,
        on_interval,
        Loops::PerStream(worker),
    )
}

/// The streams' places, split into the groups that share a thread: senders
/// (`sending[i]`) and receivers apart, each dealt round robin into up to
/// `threads` groups.
fn groups(sending: &[bool], threads: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for role in [true, false] {
        let class: Vec<usize> = (0..sending.len()).filter(|&i| sending[i] == role).collect();
        let n = threads.clamp(1, class.len().max(1));
        let mut g: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, i) in class.into_iter().enumerate() {
            g[k % n].push(i);
        }
        out.extend(g.into_iter().filter(|g| !g.is_empty()));
    }
    out
}

/// Runs the streams of this end as `loops` says, from `t0` until they end,
/// and samples their [`Live`] counters and TCP_INFO.
pub fn run_loops(
    cfg: &EndConfig,
    sockets: &[StreamSocket],
    t0: Instant,
    abort: &AtomicBool,
    on_interval: &mut dyn FnMut(&[IntervalSample]),
    loops: Loops,
) -> SideReport {
    let host = HostUse::start();
    let rcvbuf_errors = cfg
        .udp
        .then(linerate_probe::snmp::udp_rcvbuf_errors)
        .flatten();
    let lives: Vec<Arc<Live>> = sockets.iter().map(|_| Arc::default()).collect();
    let deadline = cfg.duration.map(|d| t0 + d);
    let omit = cfg.omit;
    let mut intervals = Vec::new();
    let mut at_omit = vec![AtOmit::default(); sockets.len()];
    let pin = |slot: usize, index: u16| match cfg.pin {
        Pin::Pairs => pin_to_core(slot),
        Pin::Spread => pin_to_core(2 * usize::from(index) + usize::from(!cfg.is_client)),
        Pin::None => {}
    };

    // The sampler sleeps between ticks; a stream that ends wakes it, so the
    // run ends when its last stream does and not up to a tick later.
    let sampler = std::thread::current();
    let (outcomes, threads): (Vec<Outcome>, usize) = std::thread::scope(|scope| {
        let mut pooled = None;
        let handles: Vec<_> = match &loops {
            Loops::PerStream(worker) => sockets
                .iter()
                .zip(&lives)
                .enumerate()
                .map(|(i, (s, live))| {
                    let sampler = sampler.clone();
                    std::thread::Builder::new()
                        .name(format!("stream-{}", s.index))
                        .spawn_scoped(scope, move || {
                            pin(usize::from(s.index), s.index);
                            let outcome = worker(s, live);
                            sampler.unpark();
                            vec![(i, outcome)]
                        })
                })
                .collect(),
            Loops::Grouped { threads, worker } => {
                let sending: Vec<bool> = sockets.iter().map(|s| cfg.sends(s.index)).collect();
                groups(&sending, *threads)
                    .into_iter()
                    .enumerate()
                    .map(|(g, members)| {
                        let sampler = sampler.clone();
                        let lives = &lives;
                        std::thread::Builder::new()
                            .name(format!("streams-{g}"))
                            .spawn_scoped(scope, move || {
                                pin(g, sockets[members[0]].index);
                                let group: Vec<(&StreamSocket, &Live)> =
                                    members.iter().map(|&i| (&sockets[i], &*lives[i])).collect();
                                let outs = worker(&group);
                                sampler.unpark();
                                members.into_iter().zip(outs).collect::<Vec<_>>()
                            })
                    })
                    .collect()
            }
            Loops::Pooled {
                pool,
                read_len,
                skip_copy,
            } => {
                pooled = Some(hand_to_pool(pool, sockets, &lives, (*read_len, *skip_copy)));
                Vec::new()
            }
        };
        let threads = match &loops {
            Loops::Pooled { pool, .. } => pool.loops(),
            _ => handles.len(),
        };

        let deadline = deadline.map(|d| d - t0);
        sample(
            cfg,
            sockets,
            &lives,
            t0,
            omit,
            deadline,
            abort,
            &mut intervals,
            &mut at_omit,
            on_interval,
        );

        let mut slots: Vec<Option<Outcome>> = sockets.iter().map(|_| None).collect();
        if let Some((done, stalled)) = pooled {
            // Every job holds a sender: the channel ends with the last stream.
            for (i, o) in done {
                slots[i] = Some(o);
            }
            if stalled.load(Relaxed) {
                abort.store(true, Relaxed);
            }
        }
        for h in handles {
            let done = match h {
                Ok(h) => h.join().unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            for (i, o) in done {
                slots[i] = Some(o);
            }
        }
        let outcomes = slots
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| failed_outcome("its stream thread failed to start or panicked"))
            })
            .collect();
        (outcomes, threads)
    });

    let start = t0 + omit;
    let streams = sockets
        .iter()
        .zip(outcomes)
        .zip(&at_omit)
        .map(|((s, o), skipped)| {
            (
                s,
                o,
                skipped,
                sockopt::granted(&s.stream).unwrap_or_default(),
            )
        })
        .map(|(s, o, skipped, buffers)| StreamEnd {
            stream: s.index,
            side: cfg.side_of(s.index),
            flow: if cfg.is_forward(s.index) {
                Flow::ClientToServer
            } else {
                Flow::ServerToClient
            },
            bytes: o.bytes.saturating_sub(skipped.bytes),
            bytes_total: o.bytes,
            seconds: o.last_byte.saturating_duration_since(start).as_secs_f64(),
            cpu_seconds: o.cpu_seconds,
            runq_wait_seconds: o.runq_wait_seconds,
            poll_idle_seconds: o.poll_idle_seconds,
            tls_seconds: s.tls.as_ref().map_or(0.0, |t| {
                tls_cpu_seconds(lock(t).busy_seconds(), o.cpu_seconds, o.runq_wait_seconds)
            }),
            tcp: o.tcp.map(|t| since_omit(t, skipped.tcp)),
            // Read at the end: autotuning has grown them by then.
            sndbuf: buffers.sndbuf,
            rcvbuf: buffers.rcvbuf,
            error: o.error,
            udp: o.udp,
        })
        .collect();
    SideReport {
        streams,
        intervals,
        host_cpu: host.since(),
        error: None,
        udp_rcvbuf_errors: rcvbuf_errors.and_then(|before| {
            Some(linerate_probe::snmp::udp_rcvbuf_errors()?.saturating_sub(before))
        }),
        stream_threads: Some(threads as u32),
    }
}

/// Hands every stream of this end to the pool; the channel their
/// outcomes come back on and the flag set when one of them stalled.
fn hand_to_pool(
    pool: &ReceivePool,
    sockets: &[StreamSocket],
    lives: &[Arc<Live>],
    (read_len, skip_copy): (usize, bool),
) -> (mpsc::Receiver<(usize, Outcome)>, Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel();
    let stalled = Arc::new(AtomicBool::new(false));
    for (i, (s, live)) in sockets.iter().zip(lives).enumerate() {
        match s.stream.try_clone() {
            Ok(sock) => pool.submit(Job {
                sock,
                live: Arc::clone(live),
                read_len,
                skip_copy,
                abort: Arc::clone(&stalled),
                index: i,
                done: tx.clone(),
                sampler: std::thread::current(),
            }),
            Err(e) => {
                live.done.store(true, Relaxed);
                let why = format!("could not hand the stream to a receive loop: {e}");
                let _ = tx.send((i, failed_outcome(&why)));
            }
        }
    }
    (rx, stalled)
}

/// A stream's counters when the omitted time (`--omit`) ended.
#[derive(Clone, Copy, Default)]
struct AtOmit {
    bytes: u64,
    tcp: Option<linerate_result::TcpSample>,
}

/// A stream's last TCP_INFO with the counters it had at the end of the
/// omitted time taken off: retransmits and limited time there count
/// nowhere, as in iperf3.
fn since_omit(
    end: linerate_result::TcpSample,
    at: Option<linerate_result::TcpSample>,
) -> linerate_result::TcpSample {
    let Some(at) = at else { return end };
    let less = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_sub(b)),
        (a, _) => a,
    };
    let less32 = |a: Option<u32>, b: Option<u32>| match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_sub(b)),
        (a, _) => a,
    };
    linerate_result::TcpSample {
        total_retrans: end.total_retrans.saturating_sub(at.total_retrans),
        busy_us: less(end.busy_us, at.busy_us),
        rwnd_limited_us: less(end.rwnd_limited_us, at.rwnd_limited_us),
        sndbuf_limited_us: less(end.sndbuf_limited_us, at.sndbuf_limited_us),
        bytes_retrans: less(end.bytes_retrans, at.bytes_retrans),
        bytes_acked: less(end.bytes_acked, at.bytes_acked),
        segs_in: less32(end.segs_in, at.segs_in),
        segs_out: less32(end.segs_out, at.segs_out),
        data_segs_out: less32(end.data_segs_out, at.data_segs_out),
        ..end
    }
}

/// The host's CPU use from a moment on: its busy and softirq shares and
/// this process's CPU time.
pub struct HostUse {
    ticks: cpu::HostTicks,
    process_seconds: f64,
    /// The process's cgroup and its throttling counters at the start.
    cgroup: Option<(Cgroup, CpuStat)>,
}

impl HostUse {
    /// Starts counting this host's CPU time.
    pub fn start() -> HostUse {
        HostUse {
            ticks: cpu::HostTicks::now(),
            process_seconds: cpu::process_seconds(),
            cgroup: Cgroup::own().map(|c| {
                let stat = c.cpu_stat();
                (c, stat)
            }),
        }
    }

    /// This host's CPU use since [`HostUse::start`].
    pub fn since(&self) -> HostCpu {
        let (busy, soft) = cpu::HostTicks::now().fractions_since(&self.ticks);
        HostCpu {
            busy_fraction: busy,
            softirq_fraction: soft,
            cpus: cpu::cpus(),
            process_cpu_seconds: cpu::process_seconds() - self.process_seconds,
            cgroup: self.cgroup.as_ref().and_then(|(c, at)| c.cpu_since(at)),
        }
    }
}

/// Pins the calling thread to the `slot`-th CPU this process may use, wrapping
/// around when there are fewer. Best effort: a host that refuses affinity
/// still runs, only unpinned.
pub fn pin_to_core(slot: usize) {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    let Ok(allowed) = sched_getaffinity(None) else {
        return;
    };
    let cpus: Vec<usize> = (0..CpuSet::MAX_CPU)
        .filter(|&c| allowed.is_set(c))
        .collect();
    if cpus.is_empty() {
        return;
    }
    let mut set = CpuSet::new();
    set.set(cpus[slot % cpus.len()]);
    let _ = sched_setaffinity(None, &set);
}

/// The CPU time a thread spent in TLS, from the wall time its seal and
/// open calls took: that wall time also holds the waits for a core of a
/// thread preempted inside them, which on a busy host made TLS take more
/// than the thread's whole CPU time (docs/security.md#tls-time). Sealing
/// and opening never block, so they were preempted like the rest of the
/// thread's runnable time: its running share of that time converts one
/// into the other.
fn tls_cpu_seconds(in_tls: f64, cpu: f64, runq_wait: f64) -> f64 {
    let runnable = cpu + runq_wait;
    if runnable <= 0.0 {
        return 0.0;
    }
    (in_tls * cpu / runnable).min(cpu)
}

fn failed_outcome(msg: &str) -> Outcome {
    Outcome {
        udp: None,
        bytes: 0,
        last_byte: Instant::now(),
        cpu_seconds: 0.0,
        runq_wait_seconds: 0.0,
        poll_idle_seconds: 0.0,
        tcp: None,
        error: Some(msg.to_string()),
    }
}

#[allow(clippy::too_many_arguments)]
fn sample(
    cfg: &EndConfig,
    sockets: &[StreamSocket],
    lives: &[Arc<Live>],
    t0: Instant,
    omit: Duration,
    mut deadline: Option<Duration>,
    abort: &AtomicBool,
    intervals: &mut Vec<IntervalSample>,
    at_omit: &mut [AtOmit],
    on_interval: &mut dyn FnMut(&[IntervalSample]),
) {
    let interval = Duration::from_millis(cfg.interval_ms);
    let mut prev_bytes = vec![0u64; sockets.len()];
    let mut prev_udp = vec![linerate_wire::UdpCounts::default(); sockets.len()];
    let mut prev_t = Duration::ZERO;
    let mut next_tick = if interval.is_zero() {
        Duration::MAX
    } else {
        interval
    };
    let mut omit_taken = omit.is_zero();
    let mut aborted = false;
    let mut deadline_passed = false;
    let mut receivers_cut = false;
    let mut grace = RECEIVE_GRACE;
    loop {
        let all_done = lives.iter().all(|l| l.done.load(Relaxed));
        if abort.load(Relaxed) && !aborted {
            aborted = true;
            // Unblocks readers waiting on a peer that will never send again.
            for s in sockets {
                let _ = s.stream.shutdown(std::net::Shutdown::Both);
            }
        }
        let now = t0.elapsed();
        if !deadline_passed
            && deadline.is_none_or(|d| now < d)
            && cfg.stop.as_ref().is_some_and(|s| s.load(Relaxed))
        {
            // Ended by the user: from here on as if the deadline were now.
            deadline = Some(now);
        }
        if !deadline_passed && deadline.is_some_and(|d| now >= d) {
            deadline_passed = true;
            grace = receive_grace(sockets, cfg);
            // A write blocked on a closed window would outlive the run; the
            // shutdown ends it, and the queued bytes still go out before FIN.
            // A UDP sender ends at the deadline by itself, then tells its
            // count over this connection.
            for s in sockets.iter().filter(|s| cfg.sends(s.index) && !cfg.udp) {
                let _ = s.stream.shutdown(std::net::Shutdown::Write);
            }
        }
        if !receivers_cut && deadline.is_some_and(|d| now >= d + grace) {
            receivers_cut = true;
            for s in sockets.iter().filter(|s| !cfg.sends(s.index)) {
                let _ = s.stream.shutdown(std::net::Shutdown::Read);
            }
        }
        if let Some(window) = cfg.rcvbuf {
            // Linux 6.7+ recomputes the window clamp from the buffer whenever
            // its payload-to-truesize ratio moves; asserting it again each
            // tick keeps `--window` the window the receiver advertises.
            for s in sockets.iter().filter(|s| !cfg.sends(s.index)) {
                let _ = sockopt::clamp_window(&s.stream, window);
            }
        }
        if !omit_taken && (now >= omit || all_done) {
            omit_taken = true;
            for ((slot, l), s) in at_omit.iter_mut().zip(lives).zip(sockets) {
                slot.bytes = l.bytes.load(Relaxed);
                slot.tcp = (!cfg.udp).then(|| tcpinfo::read(&s.stream).ok()).flatten();
            }
        }
        if now >= next_tick || all_done {
            let batch: Vec<IntervalSample> = sockets
                .iter()
                .zip(lives)
                .zip(prev_bytes.iter_mut())
                .zip(prev_udp.iter_mut())
                .map(|(((s, l), prev), prev_udp)| {
                    let bytes = l.bytes.load(Relaxed);
                    let delta = bytes - *prev;
                    *prev = bytes;
                    let secs = (now - prev_t).as_secs_f64();
                    IntervalSample {
                        side: cfg.side_of(s.index),
                        stream: s.index,
                        start: prev_t.as_secs_f64(),
                        end: now.as_secs_f64(),
                        bytes: delta,
                        bits_per_second: if secs > 0.0 {
                            delta as f64 * 8.0 / secs
                        } else {
                            0.0
                        },
                        // A UDP stream's TCP connection carries no payload.
                        tcp: (!cfg.udp).then(|| tcpinfo::read(&s.stream).ok()).flatten(),
                        udp: l.udp_counts().map(|c| {
                            let span = crate::udp::span(prev_udp, &c);
                            *prev_udp = c;
                            span
                        }),
                    }
                })
                .collect();
            // A final sliver after the last boundary is kept only if it
            // carried data over a twentieth of an interval or more (the
            // bytes of a shorter one still count in the totals), or is the
            // run's only interval: a rate over a few milliseconds says nothing.
            let sliver_counts = batch.iter().any(|b| b.bytes > 0)
                && (now - prev_t >= interval / 20 || intervals.is_empty());
            let keep = now >= next_tick || sliver_counts;
            if keep && !interval.is_zero() {
                on_interval(&batch);
                // The console marks omitted rows; the result leaves out
                // those that lay mostly in the omitted time.
                if prev_t + now > omit * 2 {
                    intervals.extend(batch);
                }
            }
            prev_t = now;
            while next_tick <= now {
                next_tick = next_tick.saturating_add(interval);
            }
        }
        if all_done {
            return;
        }
        let mut wake = next_tick;
        if !omit_taken {
            wake = wake.min(omit);
        }
        if let Some(d) = deadline {
            if !deadline_passed {
                wake = wake.min(d);
            } else if !receivers_cut {
                wake = wake.min(d + grace);
            }
        }
        let sleep = wake.saturating_sub(t0.elapsed()).min(SAMPLER_TICK);
        std::thread::park_timeout(sleep.max(Duration::from_millis(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::{groups, tls_cpu_seconds};

    #[test]
    fn tls_time_counts_only_the_share_the_thread_ran() {
        // An idle host: the wall time in TLS is CPU time.
        assert!((tls_cpu_seconds(0.4, 0.8, 0.0) - 0.4).abs() < 1e-12);
        // Runnable 0.85 s, running 0.24 of it (a run beside busy loops):
        // 0.39 s in TLS calls is 0.11 s of CPU, not more than the thread had.
        let cpu = tls_cpu_seconds(0.39, 0.24, 0.61);
        assert!((cpu - 0.39 * 0.24 / 0.85).abs() < 1e-12, "{cpu}");
        assert!(tls_cpu_seconds(2.0, 0.3, 0.1) <= 0.3);
        assert_eq!(tls_cpu_seconds(0.0, 0.0, 0.0), 0.0);
        assert_eq!(tls_cpu_seconds(0.1, 0.0, 0.0), 0.0);
    }

    #[test]
    fn loops_split_senders_and_receivers_apart_and_round_robin() {
        // Bidir: the first three send, the last three receive.
        let sending = [true, true, true, false, false, false];
        assert_eq!(
            groups(&sending, 2),
            vec![vec![0, 2], vec![1], vec![3, 5], vec![4]]
        );
        // More threads than streams of a role: one a stream, none empty.
        assert_eq!(groups(&[false, false], 8), vec![vec![0], vec![1]]);
        // No thread count below one.
        assert_eq!(groups(&[true, true, true], 0), vec![vec![0, 1, 2]]);
        assert!(groups(&[], 4).is_empty());
    }
}
