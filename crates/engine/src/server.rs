//! `linerate serve`: one listening port for the control and data connections
//! of every session. Each connection gets its own thread; whatever a peer
//! sends, the worst outcome is that its own session ends with a log line.

use crate::lock;
use std::net::{SocketAddr, TcpListener, TcpStream};

use crate::door::{Door, Waiting, raise_open_files_limit};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_wire::{Accept, CAPABILITIES, Hello, RefusalCode, Role, SessionKind};

use crate::error::{EngineError, Result};
use crate::limits::{Held, ServerLimits};
use crate::measured;
use crate::session::control::{Control, read_hello, send_refusal};
use crate::session::link::{Link, accept_tls};
use crate::session::registry::Registry;
use crate::transfer::{self, receive::TransferPolicy};

pub type Logger = Arc<dyn Fn(String) + Send + Sync>;

/// The server's TLS: its configuration, and whether transfers must use it
/// (off only with `--no-encrypt`).
#[derive(Clone)]
pub struct ServerTls {
    pub config: Arc<linerate_secure::ServerConfig>,
    pub required: bool,
}

pub struct Server {
    listener: TcpListener,
    registry: Arc<Registry>,
    limits: ServerLimits,
    door: Arc<Door>,
    log: Logger,
    transfers: Option<Arc<TransferPolicy>>,
    tls: Option<ServerTls>,
    /// How long `run` waits for the first session to pass its handshake.
    first_session_within: Option<Duration>,
    /// A session has passed its handshake.
    started: Arc<AtomicBool>,
}

/// How a served session ended: its summary line, or why it failed.
type SessionEnd = std::result::Result<String, String>;

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

    /// Lets `scale` times the usual number of connections wait for their
    /// hello at once (docs/guide.md#connection-floods): a many-host run's
    /// receiver is connected to by its whole fan-in together.
    pub fn with_door_scale(mut self, scale: usize) -> Server {
        self.door = Arc::new(Door::widened(scale));
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
        raise_open_files_limit();
        let limits = ServerLimits::default();
        Ok(Server {
            listener: sock.into(),
            registry: Arc::new(Registry::new(&limits)),
            limits,
            door: Arc::default(),
            log,
            transfers: None,
            tls: None,
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
        let finished: Arc<Mutex<Option<SessionEnd>>> = Arc::default();
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
            let Some(waiting) = self.door.admit(peer) else {
                if let Some(line) = self.door.drops_to_log() {
                    (self.log)(line);
                }
                continue;
            };
            let registry = Arc::clone(&self.registry);
            let log = Arc::clone(&self.log);
            let finished = Arc::clone(&finished);
            let transfers = self.transfers.clone();
            let tls = self.tls.clone();
            let started = Arc::clone(&self.started);
            let spawned = std::thread::Builder::new()
                .name(format!("conn-{peer}"))
                .spawn(move || {
                    let served = handle(
                        conn,
                        peer,
                        (&registry, waiting, &started),
                        &log,
                        transfers.as_deref(),
                        tls.as_ref(),
                    );
                    if let Some(outcome) = served {
                        lock(&finished).get_or_insert(outcome);
                    }
                });
            if let Err(e) = spawned {
                (self.log)(format!("refused {peer}: cannot start a thread: {e}"));
            }
        }
    }
}

/// Serves one connection; returns how its session ended if it was a control
/// connection whose session was accepted.
fn handle(
    mut conn: TcpStream,
    peer: SocketAddr,
    (reg, waiting, any_started): (&Registry, Waiting, &AtomicBool),
    log: &Logger,
    transfers: Option<&TransferPolicy>,
    tls: Option<&ServerTls>,
) -> Option<SessionEnd> {
    // The TLS handshake is part of the connection's time at the door.
    let hello = read_hello(&mut conn, waiting.timeout)
        .map_err(|e| (Some(RefusalCode::Malformed), e.to_string()))
        .and_then(|hello| secure(&mut conn, &hello, tls).map(|t| (hello, t)));
    let door = waiting.door();
    if let Some(line) = waiting.leave() {
        log(line);
    }
    let (hello, link) = match hello {
        Ok((h, t)) => (
            h,
            Link {
                stream: conn,
                tls: t,
            },
        ),
        Err((code, e)) => {
            log(format!("refused {peer}: {e}"));
            match code {
                Some(code) => send_refusal(&mut conn, code, &e),
                None => {
                    if let Some(line) = door.failed(peer.ip()) {
                        log(line);
                    }
                }
            }
            return None;
        }
    };
    match hello.role {
        Role::Data => {
            if let Err(e) = reg.attach(link, &hello) {
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
                match control_session(link, &hello, reg, transfers, &mut accepted, any_started) {
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
fn control_session(
    link: Link,
    hello: &Hello,
    reg: &Registry,
    transfers: Option<&TransferPolicy>,
    accepted: &mut bool,
    any_started: &AtomicBool,
) -> Result<String> {
    // Control frames are small and often come in pairs (a transfer's last
    // Need, then NeedEnd): with Nagle the second one waited for the client's
    // delayed ACK, 40 ms on Linux, on every transfer.
    link.stream
        .set_nodelay(true)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    let mut ctl = Control::from_link(link).with_frame_budget(Arc::clone(&reg.frames));
    if let Err((code, msg)) = admissible(hello, transfers) {
        ctl.refuse(code, &msg);
        return Err(EngineError::Failed(msg));
    }
    let _active = Held::take(&reg.active, 1).map_err(|e| {
        let msg = format!("server busy: {e}");
        ctl.refuse(RefusalCode::Busy, &msg);
        EngineError::Failed(msg)
    })?;
    let accept = Accept {
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: CAPABILITIES.0,
        host: linerate_probe::host::collect(),
    };
    match (hello.kind, transfers) {
        (SessionKind::Transfer, Some(policy)) => {
            let admitted = std::cell::Cell::new(false);
            let admit = || {
                admitted.set(true);
                any_started.store(true, Relaxed);
            };
            let ended = transfer::receive::serve(ctl, accept, reg, hello.session, policy, &admit);
            *accepted = admitted.get();
            ended
        }
        _ => {
            *accepted = true;
            any_started.store(true, Relaxed);
            measured::serve(ctl, accept, reg, (hello.session, hello.kind))
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
