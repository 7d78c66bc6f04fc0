//! `linerate serve`: one listening port for the control and data connections
//! of every session. Each connection gets its own thread; whatever a peer
//! sends, the worst outcome is that its own session ends with a log line.

use linerate_engine::lock;
use std::net::{SocketAddr, TcpListener, TcpStream};

use crate::waiting_room::{Door, Waiting, raise_open_files_limit};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_wire::{Accept, CAPABILITIES, Hello, Refusal, RefusalCode, Role, SessionKind};

use crate::bench_server;
use crate::shares::{ShareLimits, Shares};
use linerate_engine::limits::{Held, Refused, ServerLimits};
use linerate_engine::pool::ReceivePool;
use linerate_engine::session::control::{Control, read_hello, send_refusal};
use linerate_engine::session::link::{Link, accept_tls};
use linerate_engine::session::registry::Registry;
use linerate_engine::{EngineError, Result};
use linerate_transfer::{self as transfer, receive::TransferPolicy};

/// The server's TLS: its configuration, and whether transfers must use it
/// (off only with `--no-encrypt`).
#[derive(Clone)]
pub struct ServerTls {
    /// The server's identity and the client keys it takes.
    pub config: Arc<linerate_secure::ServerConfig>,
    /// Transfers must be encrypted.
    pub required: bool,
}

/// linerate's server: accepts every session kind on one port.
pub struct Server {
    listener: TcpListener,
    registry: Arc<Registry>,
    limits: ServerLimits,
    door: Arc<Door>,
    /// Sessions whose clients proved nothing yet, by source.
    shares: Arc<Shares>,
    transfers: Option<Arc<TransferPolicy>>,
    tls: Option<ServerTls>,
    /// How long `run` waits for the first session to pass its handshake.
    first_session_within: Option<Duration>,
    /// How long a one-shot receiver whose transfer was cut short waits for
    /// its sender to rerun and resume it.
    resume_within: Option<Duration>,
    /// A session has passed its handshake.
    started: Arc<AtomicBool>,
    /// Bench sessions must show this (a many-host run's agents).
    run_token: Option<Arc<linerate_wire::RunToken>>,
    /// Receive loops shared by every bench session (an agent's server).
    receive_pool: Option<Arc<ReceivePool>>,
}

/// How a served session ended: its summary line, or why it failed.
type SessionEnd = std::result::Result<String, EngineError>;

impl Server {
    /// Accepts transfer sessions under the policy's root.
    pub fn with_transfers(mut self, mut policy: TransferPolicy) -> Server {
        policy.limits = self.limits.session;
        self.transfers = Some(Arc::new(policy));
        self
    }

    /// Takes encrypted connections, and requires them for transfers when
    /// `tls.required`.
    pub fn with_tls(mut self, tls: ServerTls) -> Server {
        self.tls = Some(tls);
        self
    }

    /// Makes a one-shot `run` whose transfer failed wait this long for the
    /// same sender to come back and resume it (the sender's "rerun the same
    /// command"), instead of returning at once; a rerun that begins in time
    /// is served to its end.
    pub fn resume_within(mut self, wait: Duration) -> Server {
        self.resume_within = Some(wait);
        self
    }

    /// Replaces the default limits (set before `with_transfers`).
    /// Receives every bench session's plain TCP streams on `pool`'s loops
    /// rather than a thread a stream (docs/defaults.md#receive-pool).
    pub fn with_receive_pool(mut self, pool: ReceivePool) -> Server {
        self.receive_pool = Some(Arc::new(pool));
        self
    }

    /// The server, with `limits` in force.
    pub fn with_limits(mut self, limits: ServerLimits) -> Server {
        self.registry = Arc::new(Registry::new(&limits));
        self.limits = limits;
        self
    }

    /// Makes `run` fail with [`EngineError::NoSession`] when no session has
    /// passed its handshake this long after it started: a one-shot receiver
    /// whose sender never comes does not wait, and hold its port, forever.
    pub fn first_session_within(mut self, wait: Duration) -> Server {
        self.first_session_within = Some(wait);
        self
    }

    /// Lets `scale` times the usual number of connections wait for their
    /// hello at once (docs/guide.md#connection-floods): a many-host run's
    /// receiver is connected to by its whole fan-in together.
    pub fn with_door_scale(mut self, scale: usize) -> Server {
        self.door = Arc::new(Door::widened(scale));
        self
    }

    /// Takes bench sessions only from clients that show `token` (a
    /// many-host run's own flows), and no latency sessions.
    pub fn with_run_token(mut self, token: Option<linerate_wire::RunToken>) -> Server {
        self.run_token = token.map(Arc::new);
        self
    }

    /// Sizes the pool of sessions whose clients proved nothing (benches,
    /// latency, transfers before their token or key), and how IPv6
    /// sources are grouped (docs/security.md#fair-shares).
    pub fn with_shares(mut self, limits: ShareLimits, v6_prefix: u8) -> Server {
        self.shares = Shares::new(limits);
        self.door = Arc::new(Door::widened(self.door.scale()).with_v6_prefix(v6_prefix));
        self
    }

    /// Listens on `addr`.
    pub fn bind(addr: SocketAddr) -> Result<Server> {
        let sock = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            None,
        )
        .map_err(|e| EngineError::io("creating the listening socket", e))?;
        sock.set_reuse_address(true)
            .map_err(|e| EngineError::io("SO_REUSEADDR", e))?;
        if addr.is_ipv6() {
            // Serve IPv4 too when bound to [::].
            let _ = sock.set_only_v6(false);
        }
        sock.bind(&addr.into())
            .map_err(|e| EngineError::io_at("binding", addr, e))?;
        sock.listen(1024)
            .map_err(|e| EngineError::io_at("listening on", addr, e))?;
        raise_open_files_limit();
        let limits = ServerLimits::default();
        Ok(Server {
            listener: sock.into(),
            registry: Arc::new(Registry::new(&limits)),
            limits,
            door: Arc::default(),
            shares: Shares::new(ShareLimits::default()),
            transfers: None,
            tls: None,
            first_session_within: None,
            resume_within: None,
            started: Arc::default(),
            run_token: None,
            receive_pool: None,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener
            .local_addr()
            .map_err(|e| EngineError::io("reading the listening address", e))
    }

    /// Accepts until `stop` is set, or, when `once` is true, until the first
    /// session that passed its handshake ends; that session's failure is then
    /// this call's error.
    pub fn run(&self, once: bool, stop: &AtomicBool) -> Result<()> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let finished: Arc<Mutex<Option<SessionEnd>>> = Arc::default();
        let began = Instant::now();
        // A cut-short transfer waiting for its rerun: until when, and why it failed.
        let mut resuming: Option<(Instant, EngineError)> = None;
        loop {
            if stop.load(Relaxed) {
                return Ok(());
            }
            // A rerun that began in time is served to its end.
            let expired = resuming
                .as_ref()
                .is_some_and(|(until, _)| Instant::now() >= *until)
                && !self.transfers.as_ref().is_some_and(|p| p.is_taken());
            if expired && let Some((_, failed)) = resuming.take() {
                return Err(EngineError::NotResumed(Box::new(failed)));
            }
            if let Some(wait) = self.first_session_within
                && !self.started.load(Relaxed)
                && began.elapsed() >= wait
            {
                return Err(EngineError::NoSession(wait));
            }
            if once && let Some(outcome) = lock(&finished).take() {
                match (outcome, self.resume_within, &self.transfers) {
                    (Err(e), Some(wait), Some(policy))
                        if policy.is_one_shot() && e.worth_resuming() =>
                    {
                        tracing::warn!(
                            "the transfer was cut short ({e}); what arrived is kept, and this \
                             receiver waits {:.0} s for the sender to rerun the same command",
                            wait.as_secs_f64()
                        );
                        policy.reopen();
                        resuming = Some((Instant::now() + wait, e));
                    }
                    (outcome, ..) => return outcome.map(drop),
                }
            }
            for line in self.shares.refusal_sums_due() {
                tracing::warn!("{line}");
            }
            if let Some(p) = &self.transfers {
                let removed = p.sweep();
                if removed > 0 {
                    tracing::info!(
                        "removed {removed} staging file(s) of cut-short transfers not resumed in time"
                    );
                }
            }
            let mut fds = [PollFd::new(&self.listener, PollFlags::IN)];
            let tick = Timespec {
                tv_sec: 0,
                tv_nsec: 200_000_000,
            };
            match poll(&mut fds, Some(&tick)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(EngineError::io("waiting for connections", e.into())),
            }
            let (conn, peer) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: keep serving.
                    tracing::error!("accept failed: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let Some(waiting) = self.door.admit(peer, &conn) else {
                if let Some(line) = self.door.drops_to_log() {
                    tracing::warn!("{line}");
                }
                continue;
            };
            let registry = Arc::clone(&self.registry);
            let finished = Arc::clone(&finished);
            let transfers = self.transfers.clone();
            let tls = self.tls.clone();
            let started = Arc::clone(&self.started);
            let shares = Arc::clone(&self.shares);
            let run_token = self.run_token.clone();
            let pool = self.receive_pool.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("conn-{peer}"))
                .spawn(move || {
                    let served = handle(
                        conn,
                        peer,
                        (&registry, &shares, waiting, &started),
                        transfers.as_deref(),
                        (tls.as_ref(), run_token.as_deref(), pool.as_deref()),
                    );
                    if let Some(outcome) = served {
                        lock(&finished).get_or_insert(outcome);
                    }
                });
            if let Err(e) = spawned {
                tracing::error!("refused {peer}: cannot start a thread: {e}");
            }
        }
    }
}

/// Serves one connection; returns how its session ended if it was a control
/// connection whose session was accepted.
fn handle(
    mut conn: TcpStream,
    peer: SocketAddr,
    (reg, shares, waiting, any_started): (&Registry, &Arc<Shares>, Waiting, &AtomicBool),
    transfers: Option<&TransferPolicy>,
    (tls, run_token, pool): (
        Option<&ServerTls>,
        Option<&linerate_wire::RunToken>,
        Option<&ReceivePool>,
    ),
) -> Option<SessionEnd> {
    // Every connection starts without Nagle. The TLS handshake's flights
    // follow small writes of its own (the compatibility ChangeCipherSpec),
    // and control frames often come in pairs (a transfer's last Need, then
    // NeedEnd): with Nagle each second one waited for the client's delayed
    // ACK, 40 ms on Linux. A data connection goes back to Nagle once it has
    // joined (`Registry::attach`); a control connection keeps it off.
    let _ = conn.set_nodelay(true);
    let _conn = tracing::info_span!("conn", peer = %peer).entered();
    // The TLS handshake is part of the connection's time at the door.
    let hello = read_hello(&mut conn, waiting.timeout)
        .map_err(|e| (Some(RefusalCode::Malformed), e.to_string()))
        .and_then(|hello| secure(&mut conn, &hello, tls).map(|t| (hello, t)));
    let door = waiting.door();
    let gave_way = hello.is_err() && waiting.gave_way();
    if let Some(line) = waiting.leave() {
        tracing::warn!("{line}");
    }
    let (hello, link) = match hello {
        Ok((h, t)) => (
            h,
            Link {
                stream: conn,
                tls: t,
            },
        ),
        // Ended by the door to make room: its summary counts it.
        Err(_) if gave_way => return None,
        Err((code, e)) => {
            log_refusal(shares, &door, peer, || format!("refused {peer}: {e}"));
            match code {
                Some(code) => send_refusal(&mut conn, code, &e),
                None => {
                    if let Some(line) = door.failed(peer.ip()) {
                        tracing::warn!("{line}");
                    }
                }
            }
            return None;
        }
    };
    match hello.role {
        Role::Data => {
            if let Err(e) = reg.attach(link, &hello) {
                log_refusal(shares, &door, peer, || {
                    format!("refused data connection {peer}: {e}")
                });
            }
            None
        }
        Role::Control => {
            // Every line of the session names it (and its peer, above).
            let id = hello.session.to_hex();
            let _session =
                tracing::info_span!("session", id = &id[..8], kind = ?hello.kind).entered();
            let started = Instant::now();
            let mut accepted = false;
            let place = Place {
                tls_required: tls.is_some_and(|t| t.required),
                run_token,
                pool,
                reg,
                shares,
                door: &door,
                peer,
            };
            let outcome =
                match control_session(link, &hello, place, transfers, &mut accepted, any_started) {
                    Ok(summary) => {
                        tracing::info!(
                            "session {} from {peer}: {summary} ({:.1} s)",
                            hello.session,
                            started.elapsed().as_secs_f64()
                        );
                        Ok(summary)
                    }
                    // A proven sender's failure is always worth its line;
                    // a stranger's are counted with its refusals.
                    Err(e) if accepted && hello.kind == SessionKind::Transfer => {
                        tracing::warn!("session {} from {peer} failed: {e}", hello.session);
                        Err(e)
                    }
                    Err(e) => {
                        log_refusal(shares, &door, peer, || {
                            format!("session {} from {peer} failed: {e}", hello.session)
                        });
                        Err(e)
                    }
                };
            accepted.then_some(outcome)
        }
    }
}

/// Logs a refusal, the first from its source in each period; the rest
/// are counted and summed up in the next period's first line: a client
/// refused in a loop must not flood the log.
fn log_refusal(shares: &Shares, door: &Door, peer: SocketAddr, line: impl FnOnce() -> String) {
    let (now, sum) = shares.refused(door.group(peer.ip()));
    if let Some(sum) = sum {
        tracing::warn!("{sum}");
    }
    if now {
        tracing::warn!("{}", line());
    }
}

/// Where a control connection is served: the server's registry, pools and
/// door, and who it is from.
struct Place<'a> {
    /// Transfers must come over TLS with a listed client key.
    tls_required: bool,
    /// Bench sessions must show this.
    run_token: Option<&'a linerate_wire::RunToken>,
    pool: Option<&'a ReceivePool>,
    reg: &'a Registry,
    shares: &'a Arc<Shares>,
    door: &'a Door,
    peer: SocketAddr,
}

/// The TLS a connection's hello asks for, after its handshake; or why
/// the connection is refused, with the code to answer in the clear (none
/// after a failed handshake: the peer expects TLS records).
fn secure(
    conn: &mut TcpStream,
    hello: &Hello,
    tls: Option<&ServerTls>,
) -> std::result::Result<Option<linerate_secure::TlsStream>, (Option<RefusalCode>, String)> {
    match (hello.tls(), tls) {
        (true, Some(t)) => accept_tls(conn, &t.config)
            .map(Some)
            .map_err(|e| (None, format!("TLS handshake failed: {e}"))),
        (true, None) => Err((
            Some(RefusalCode::InvalidParameters),
            "this receiver does not encrypt (it was started with --no-encrypt): send with \
             --no-encrypt"
                .to_string(),
        )),
        (false, Some(t)) if t.required && hello.kind == SessionKind::Transfer => Err((
            Some(RefusalCode::InvalidParameters),
            "this receiver takes encrypted transfers only, and the sender offered none \
             (start the receiver with --no-encrypt to take data in the clear)"
                .to_string(),
        )),
        (false, _) => Ok(None),
    }
}

/// Answers a control connection's hello: refuses a session this server
/// does not take, or hands it to its kind's driver; returns its summary.
/// Until its client proves a token or a key, a session holds a seat of the
/// unauthenticated pool; a transfer then holds one of `--max-sessions`.
fn control_session(
    link: Link,
    hello: &Hello,
    place: Place,
    transfers: Option<&TransferPolicy>,
    accepted: &mut bool,
    any_started: &AtomicBool,
) -> Result<String> {
    let Place {
        tls_required,
        run_token,
        pool,
        reg,
        shares,
        door,
        peer,
    } = place;
    // A daemon's sender that showed a listed key in the TLS handshake has
    // proved itself already: it never waits among strangers.
    let proven = hello.kind == SessionKind::Transfer
        && transfers.is_some()
        && tls_required
        && link
            .tls
            .as_ref()
            .is_some_and(|t| t.peer_fingerprint().is_some());
    // None: proven, no seat among strangers needed.
    let seat = if proven {
        door.proven(peer.ip());
        None
    } else {
        Some(shares.take(door.group(peer.ip())))
    };
    if let Some(Ok(seat)) = &seat {
        seat.ender.watch(&link.stream);
    }
    let mut ctl = Control::from_link(link).with_frame_budget(Arc::clone(&reg.frames));
    if let Err((code, message)) = admissible(hello, transfers) {
        ctl.refuse(code, &message);
        return Err(EngineError::Refusing(Refusal { code, message }));
    }
    let seat = match seat {
        None => None,
        Some(Ok(seat)) => Some(seat),
        Some(Err(refused)) => {
            let message = refused.to_string();
            ctl.refuse(RefusalCode::Busy, &message);
            return Err(EngineError::Refusing(Refusal {
                code: RefusalCode::Busy,
                message,
            }));
        }
    };
    let accept = Accept {
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: CAPABILITIES.0,
        host: linerate_probe::host::collect(),
    };
    match (hello.kind, transfers) {
        (SessionKind::Transfer, Some(policy)) => {
            let admitted = std::cell::Cell::new(false);
            let seat = std::cell::RefCell::new(seat);
            let active = std::cell::RefCell::new(None);
            // The sender showed its token or key: it leaves the
            // unauthenticated pool for a seat of --max-sessions.
            let admit = || -> std::result::Result<(), Refused> {
                let held = Held::take(&reg.active, 1)?;
                *active.borrow_mut() = Some(held);
                seat.borrow_mut().take();
                door.proven(peer.ip());
                admitted.set(true);
                any_started.store(true, Relaxed);
                Ok(())
            };
            let ended = transfer::receive::serve(ctl, accept, reg, hello.session, policy, &admit);
            *accepted = admitted.get();
            ended
        }
        _ => {
            *accepted = true;
            any_started.store(true, Relaxed);
            let seat = seat.ok_or(EngineError::Internal("a bench without a seat"))?;
            bench_server::serve(
                ctl,
                accept,
                reg,
                (hello.session, hello.kind),
                (&seat, run_token, pool),
            )
        }
    }
}

/// Whether this server takes a session of the hello's kind.
fn admissible(
    hello: &Hello,
    transfers: Option<&TransferPolicy>,
) -> std::result::Result<(), (RefusalCode, String)> {
    match (hello.kind, transfers) {
        (SessionKind::Bench | SessionKind::Latency, Some(p)) if p.is_one_shot() => Err((
            RefusalCode::InvalidParameters,
            "this receiver takes one transfer and nothing else".to_string(),
        )),
        (SessionKind::Bench | SessionKind::Latency, _) => Ok(()),
        (SessionKind::Transfer, None) => Err((
            RefusalCode::InvalidParameters,
            "this server takes no transfers (start it with --root DIR)".to_string(),
        )),
        (SessionKind::Transfer, Some(p)) if p.session.is_some_and(|id| id != hello.session) => {
            Err((RefusalCode::UnknownSession, "no such session".to_string()))
        }
        (SessionKind::Transfer, Some(_)) => Ok(()),
        (SessionKind::Agent, _) => Err((
            RefusalCode::UnknownSession,
            "this is a server, not a many-host run's coordinator (agents join `linerate incast` or `linerate mesh`)".to_string(),
        )),
    }
}
