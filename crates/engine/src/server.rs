//! `linerate serve`: one listening port for the control and data connections
//! of every session. Each connection gets its own thread; whatever a peer
//! sends, the worst outcome is that its own session ends with a log line.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_result::Side;
use linerate_wire::{
    Accept, CAPABILITIES, Hello, Message, Ready, Refusal, RefusalCode, Role, SessionId,
    SessionKind, TransferRequest,
};

use crate::control::{Control, read_hello};
use crate::error::{EngineError, Result};
use crate::limits::{Budget, Held, ServerLimits};
use crate::side::{self, SideConfig, StreamSocket};
use crate::sockopt::{self, StreamOptions};
use crate::transfer::{self, receive::TransferPolicy};

/// How long a new connection may take to send its hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a session may take between its steps (request, data connections, start).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections still in their handshake beyond which new ones are dropped.
const MAX_PENDING_HANDSHAKES: usize = 1024;

pub type Logger = Arc<dyn Fn(String) + Send + Sync>;

struct Slot {
    connections: u16,
    options: StreamOptions,
    /// None once every data connection has arrived: the id stays taken
    /// until the session ends, and takes no more connections.
    tx: Option<Sender<StreamSocket>>,
}

struct Registry {
    sessions: Mutex<HashMap<SessionId, Slot>>,
    /// Sessions past their handshake.
    active: Budget,
    /// Data connections of every session.
    streams: Budget,
    /// Bytes buffered for control frames not yet complete.
    frames: Arc<Budget>,
}

impl Registry {
    fn new(limits: &ServerLimits) -> Registry {
        Registry {
            sessions: Mutex::default(),
            active: Budget::new(limits.sessions, "sessions at once", "--max-sessions", false),
            streams: Budget::new(
                limits.streams,
                "data connections at once",
                "--max-streams",
                false,
            ),
            frames: Arc::new(Budget::new(
                limits.frame_bytes,
                "control frames being received",
                "--frame-memory",
                true,
            )),
        }
    }
}

impl Registry {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<SessionId, Slot>) -> T) -> T {
        // A panic elsewhere must not wedge the daemon: take the map as it is.
        let mut guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

/// Removes a session from the registry however its thread ends.
struct Registered<'a> {
    reg: &'a Registry,
    id: SessionId,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.reg.with(|m| m.remove(&self.id));
    }
}

pub struct Server {
    listener: TcpListener,
    registry: Arc<Registry>,
    limits: ServerLimits,
    pending: Arc<AtomicUsize>,
    log: Logger,
    transfers: Option<Arc<TransferPolicy>>,
    /// How long `run` waits for the first session to pass its handshake.
    first_session_within: Option<Duration>,
    /// A session has passed its handshake.
    started: Arc<AtomicBool>,
}

/// How a served session ended: its summary line, or why it failed.
type Outcome = std::result::Result<String, String>;

impl Server {
    /// Accepts transfer sessions under the policy's root.
    pub fn with_transfers(mut self, mut policy: TransferPolicy) -> Server {
        policy.limits = self.limits.session;
        self.transfers = Some(Arc::new(policy));
        self
    }

    /// Replaces the default limits (set before `with_transfers`).
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

    pub fn bind(addr: SocketAddr, log: Logger) -> Result<Server> {
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
            .map_err(|e| EngineError::io(format!("binding {addr}"), e))?;
        sock.listen(1024)
            .map_err(|e| EngineError::io(format!("listening on {addr}"), e))?;
        let limits = ServerLimits::default();
        Ok(Server {
            listener: sock.into(),
            registry: Arc::new(Registry::new(&limits)),
            limits,
            pending: Arc::default(),
            log,
            transfers: None,
            first_session_within: None,
            started: Arc::default(),
        })
    }

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
        let finished: Arc<Mutex<Option<Outcome>>> = Arc::default();
        let began = Instant::now();
        loop {
            if stop.load(Relaxed) {
                return Ok(());
            }
            if let Some(wait) = self.first_session_within
                && !self.started.load(Relaxed)
                && began.elapsed() >= wait
            {
                return Err(EngineError::NoSession(wait));
            }
            if once && let Some(outcome) = lock(&finished).take() {
                return outcome.map(drop).map_err(EngineError::Failed);
            }
            if let Some(p) = &self.transfers {
                let removed = p.sweep();
                if removed > 0 {
                    (self.log)(format!(
                        "removed {removed} staging file(s) of cut-short transfers not resumed in time"
                    ));
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
                    (self.log)(format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            if self.pending.fetch_add(1, Relaxed) >= MAX_PENDING_HANDSHAKES {
                self.pending.fetch_sub(1, Relaxed);
                (self.log)(format!(
                    "refused {peer}: too many connections in their handshake"
                ));
                continue;
            }
            let registry = Arc::clone(&self.registry);
            let pending = Arc::clone(&self.pending);
            let log = Arc::clone(&self.log);
            let finished = Arc::clone(&finished);
            let transfers = self.transfers.clone();
            let started = Arc::clone(&self.started);
            let spawned = std::thread::Builder::new()
                .name(format!("conn-{peer}"))
                .spawn(move || {
                    let served = handle(
                        conn,
                        peer,
                        (&registry, &pending, &started),
                        &log,
                        transfers.as_deref(),
                    );
                    if let Some(outcome) = served {
                        lock(&finished).get_or_insert(outcome);
                    }
                });
            if let Err(e) = spawned {
                self.pending.fetch_sub(1, Relaxed);
                (self.log)(format!("refused {peer}: cannot start a thread: {e}"));
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Serves one connection; returns how its session ended if it was a control
/// connection whose session was accepted.
fn handle(
    mut conn: TcpStream,
    peer: SocketAddr,
    (reg, pending, any_started): (&Registry, &AtomicUsize, &AtomicBool),
    log: &Logger,
    transfers: Option<&TransferPolicy>,
) -> Option<Outcome> {
    let hello = read_hello(&mut conn, HELLO_TIMEOUT);
    pending.fetch_sub(1, Relaxed);
    let hello = match hello {
        Ok(h) => h,
        Err(e) => {
            log(format!("refused {peer}: {e}"));
            refuse(&mut conn, RefusalCode::Malformed, &e.to_string());
            return None;
        }
    };
    match hello.role {
        Role::Data => {
            if let Err(e) = attach_data(conn, &hello, reg) {
                log(format!(
                    "refused data connection {peer} (session {}): {e}",
                    hello.session
                ));
            }
            None
        }
        Role::Control => {
            let started = Instant::now();
            let mut accepted = false;
            let outcome =
                match control_session(conn, &hello, reg, transfers, &mut accepted, any_started) {
                    Ok(summary) => {
                        log(format!(
                            "session {} from {peer}: {summary} ({:.1} s)",
                            hello.session,
                            started.elapsed().as_secs_f64()
                        ));
                        Ok(summary)
                    }
                    Err(e) => {
                        log(format!("session {} from {peer} failed: {e}", hello.session));
                        Err(e.to_string())
                    }
                };
            accepted.then_some(outcome)
        }
    }
}

fn refuse(conn: &mut TcpStream, code: RefusalCode, message: &str) {
    use std::io::Write;
    let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
    let msg = Message::Refuse(Refusal {
        code,
        message: message.to_string(),
    });
    let _ = conn.write_all(&msg.encode());
}

fn attach_data(mut conn: TcpStream, hello: &Hello, reg: &Registry) -> Result<()> {
    let found = reg.with(|m| {
        m.get(&hello.session)
            .map(|s| (s.connections, s.options.clone(), s.tx.clone()))
    });
    let Some((connections, options, tx)) = found else {
        refuse(&mut conn, RefusalCode::UnknownSession, "no such session");
        return Err(EngineError::Failed("unknown session".into()));
    };
    let Some(tx) = tx else {
        let msg = "the session has all its data connections";
        refuse(&mut conn, RefusalCode::Busy, msg);
        return Err(EngineError::Failed(msg.into()));
    };
    if hello.stream_index >= connections {
        let msg = format!(
            "stream index {} out of range (session has {connections})",
            hello.stream_index
        );
        refuse(&mut conn, RefusalCode::InvalidParameters, &msg);
        return Err(EngineError::Failed(msg));
    }
    if let Err(e) = options.apply_connected(&conn, true) {
        refuse(
            &mut conn,
            RefusalCode::InvalidParameters,
            &format!("server socket option: {e}"),
        );
        return Err(EngineError::io("applying socket options", e));
    }
    sockopt::set_idle_timeouts(&conn).map_err(|e| EngineError::io("setting socket timeouts", e))?;
    {
        use std::io::Write;
        conn.write_all(&Message::Ready(Ready {}).encode())
            .map_err(|e| EngineError::io("sending ready", e))?;
    }
    tx.send(StreamSocket {
        index: hello.stream_index,
        stream: conn,
    })
    .map_err(|_| EngineError::Failed("session ended before its data connection arrived".into()))
}

/// A session's place in the registry, where its data connections arrive.
pub(crate) struct Registration<'a> {
    registered: Registered<'a>,
    _streams: Held<'a>,
    connections: u16,
    rx: mpsc::Receiver<StreamSocket>,
}

impl<'a> Registration<'a> {
    fn new(
        reg: &'a Registry,
        id: SessionId,
        connections: u16,
        options: StreamOptions,
    ) -> Result<Registration<'a>> {
        let held = Held::take(&reg.streams, u64::from(connections))
            .map_err(|e| EngineError::Failed(format!("server busy: {e}")))?;
        let (tx, rx) = mpsc::channel();
        let inserted = reg.with(|m| {
            if m.contains_key(&id) {
                return false;
            }
            m.insert(
                id,
                Slot {
                    connections,
                    options,
                    tx: Some(tx),
                },
            );
            true
        });
        if !inserted {
            return Err(EngineError::Failed("session id already in use".into()));
        }
        Ok(Registration {
            registered: Registered { reg, id },
            _streams: held,
            connections,
            rx,
        })
    }

    /// Waits for every data connection, sorted by stream index; the
    /// session then takes no more, but keeps its id until it ends.
    pub(crate) fn collect(&mut self) -> Result<Vec<StreamSocket>> {
        let got = self.wait_for_streams();
        let Registered { reg, id } = &self.registered;
        reg.with(|m| m.get_mut(id).map(|s| s.tx = None));
        got
    }

    fn wait_for_streams(&mut self) -> Result<Vec<StreamSocket>> {
        let connections = self.connections;
        let mut sockets: Vec<StreamSocket> = Vec::with_capacity(connections as usize);
        let deadline = Instant::now() + STEP_TIMEOUT;
        while sockets.len() < connections as usize {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(s) if sockets.iter().any(|x| x.index == s.index) => {
                    return Err(EngineError::Failed(format!(
                        "stream {} connected twice",
                        s.index
                    )));
                }
                Ok(s) => sockets.push(s),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(EngineError::Timeout(format!(
                        "waiting for data connections ({} of {connections} arrived)",
                        sockets.len()
                    )));
                }
            }
        }
        sockets.sort_by_key(|s| s.index);
        Ok(sockets)
    }
}

/// Runs a control session to its end and returns a one-line summary.
fn control_session(
    conn: TcpStream,
    hello: &Hello,
    reg: &Registry,
    transfers: Option<&TransferPolicy>,
    accepted: &mut bool,
    any_started: &AtomicBool,
) -> Result<String> {
    // Control frames are small and often come in pairs (a transfer's last
    // Need, then NeedEnd): with Nagle the second one waited for the client's
    // delayed ACK, 40 ms on Linux, on every transfer.
    conn.set_nodelay(true)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    let mut ctl = Control::new(conn).with_frame_budget(Arc::clone(&reg.frames));
    let refusal = match (hello.kind, transfers) {
        (SessionKind::Bench, Some(p)) if p.is_one_shot() => Some((
            RefusalCode::InvalidParameters,
            "this receiver takes one transfer and nothing else".to_string(),
        )),
        (SessionKind::Bench, _) => None,
        (SessionKind::Transfer, None) => Some((
            RefusalCode::InvalidParameters,
            "this server takes no transfers (start it with --root DIR)".to_string(),
        )),
        (SessionKind::Transfer, Some(p)) if p.session.is_some_and(|id| id != hello.session) => {
            Some((RefusalCode::UnknownSession, "no such session".to_string()))
        }
        (SessionKind::Transfer, Some(_)) => None,
        (kind, _) => Some((
            RefusalCode::InvalidParameters,
            format!("{} sessions are not served by this version", kind.name()),
        )),
    };
    if let Some((code, msg)) = refusal {
        refuse(&mut ctl.stream, code, &msg);
        return Err(EngineError::Failed(msg));
    }
    let _active = Held::take(&reg.active, 1).map_err(|e| {
        let msg = format!("server busy: {e}");
        refuse(&mut ctl.stream, RefusalCode::Busy, &msg);
        EngineError::Failed(msg)
    })?;
    ctl.send(&Message::Accept(Accept {
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: CAPABILITIES.0,
        host: linerate_probe::host::collect(),
    }))?;
    if let (SessionKind::Transfer, Some(policy)) = (hello.kind, transfers) {
        let open = |req: &TransferRequest| {
            Registration::new(
                reg,
                hello.session,
                req.streams,
                StreamOptions::from(&transfer::send::side_params(req, 0)),
            )
        };
        // Whatever ended the session, the sender hears why (a second refusal
        // after one already sent is harmless: the first is read).
        let admitted = std::cell::Cell::new(false);
        let admit = || {
            admitted.set(true);
            any_started.store(true, Relaxed);
        };
        let ended = transfer::receive::session(&mut ctl, policy, &open, &admit)
            .inspect_err(|e| refuse(&mut ctl.stream, RefusalCode::Malformed, &e.to_string()));
        *accepted = admitted.get();
        return ended;
    }
    *accepted = true;
    any_started.store(true, Relaxed);
    let params = match ctl.recv(STEP_TIMEOUT, "the bench request") {
        Ok(Message::BenchRequest(p)) => p,
        Ok(other) => {
            let msg = format!("expected a bench request, got {}", other.name());
            refuse(&mut ctl.stream, RefusalCode::Malformed, &msg);
            return Err(EngineError::Failed(msg));
        }
        Err(e) => {
            refuse(&mut ctl.stream, RefusalCode::Malformed, &e.to_string());
            return Err(e);
        }
    };
    let mut streams = Registration::new(
        reg,
        hello.session,
        params.connections(),
        StreamOptions::from(&params),
    )
    .inspect_err(|e| refuse(&mut ctl.stream, RefusalCode::Busy, &e.to_string()))?;
    ctl.send(&Message::Ready(Ready {}))?;
    let sockets = streams.collect()?;
    ctl.expect_start(STEP_TIMEOUT)?;
    let t0 = Instant::now();
    let cfg = SideConfig {
        params: params.clone(),
        is_client: false,
    };
    let abort = AtomicBool::new(false);
    let report = side::run(&cfg, &sockets, t0, &abort, &mut |_| {});
    let received = report.bytes_total(Side::Receiver);
    let sent = report.bytes_total(Side::Sender);
    let errors = report.stream_errors();
    ctl.send(&Message::Report(Box::new(report)))?;
    let mut line = format!(
        "bench, {} stream(s) {:?}, received {} B, sent {} B",
        params.streams, params.direction, received, sent
    );
    if !errors.is_empty() {
        line.push_str(&format!("; {}", errors.join("; ")));
    }
    Ok(line)
}
