//! Where a server's sessions wait for their data connections: each one
//! arrives with its session id and stream index in its hello, and is
//! handed to the session that registered that id.

use std::collections::HashMap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_wire::{Hello, Message, Ready, Refusal, RefusalCode, SessionId};

use super::StreamSocket;
use super::control::Control;
use super::link::Link;
use crate::error::{EngineError, Result};
use crate::limits::{Budget, Held, ServerLimits};
use crate::sockopt::{self, StreamOptions};

/// What a session's data connections must show to join it: its hello
/// (session id, stream index) travels in the clear, so when the session
/// is encrypted they must be too, and prove its secret inside TLS.
#[derive(Clone, Default)]
pub(crate) struct JoinRule {
    pub encrypted: bool,
    /// The one-shot receiver's token.
    pub token: Option<String>,
    /// The key the control connection's client showed (a daemon's
    /// sender): its data connections must show the same.
    pub client: Option<linerate_secure::Fingerprint>,
}

/// How long an encrypted data connection may take to send its join.
const JOIN_WITHIN: Duration = Duration::from_secs(5);

struct Slot {
    connections: u16,
    options: StreamOptions,
    join: JoinRule,
    /// None once every data connection has arrived: the id stays taken
    /// until the session ends, and takes no more connections.
    tx: Option<Sender<StreamSocket>>,
}

/// The sessions of one server, and the budgets they share.
pub struct Registry {
    sessions: Mutex<HashMap<SessionId, Slot>>,
    /// Sessions past their handshake.
    pub(crate) active: Budget,
    /// Data connections of every session.
    streams: Budget,
    /// Bytes buffered for control frames not yet complete.
    pub(crate) frames: Arc<Budget>,
    /// Bench and latency sessions' buffers.
    pub(crate) buffers: Budget,
}

impl Registry {
    pub fn new(limits: &ServerLimits) -> Registry {
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
            buffers: Budget::new(limits.bench_memory, "bench buffers", "--bench-memory", true),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<SessionId, Slot>) -> T) -> T {
        // A panic elsewhere must not wedge the daemon: take the map as it is.
        let mut guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Hands a data connection to the session its hello names.
    pub fn attach(&self, link: Link, hello: &Hello) -> Result<()> {
        let found = self.with(|m| {
            m.get(&hello.session).map(|s| {
                (
                    s.connections,
                    s.options.clone(),
                    s.tx.clone(),
                    s.join.clone(),
                )
            })
        });
        let refuse = |mut link: Link, code: RefusalCode, message: String| {
            link.refuse(code, &message);
            Err(EngineError::Refusing(Refusal { code, message }))
        };
        let Some((connections, options, tx, join)) = found else {
            return refuse(link, RefusalCode::UnknownSession, "no such session".into());
        };
        let Some(tx) = tx else {
            let msg = "the session has all its data connections";
            return refuse(link, RefusalCode::Busy, msg.into());
        };
        if hello.stream_index >= connections {
            let msg = format!(
                "stream index {} out of range (session has {connections})",
                hello.stream_index
            );
            return refuse(link, RefusalCode::InvalidParameters, msg);
        }
        let (mut link, may_join) = joined(link, &join);
        if let Err(msg) = may_join {
            return refuse(link, RefusalCode::InvalidParameters, msg);
        }
        if let Err(e) = options.apply_connected(&link.stream, true) {
            let msg = format!("server socket option: {e}");
            return refuse(link, RefusalCode::InvalidParameters, msg);
        }
        sockopt::set_idle_timeouts(&link.stream)
            .map_err(|e| EngineError::io("setting socket timeouts", e))?;
        link.send(&Message::Ready(Ready {}))
            .map_err(|e| EngineError::io("sending ready", e))?;
        // Data goes with Nagle on (docs/defaults.md), as at the client.
        link.stream
            .set_nodelay(false)
            .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
        tx.send(StreamSocket::new(hello.stream_index, link))
            .map_err(|_| EngineError::DataConnectionLate)
    }
}

/// Checks that a data connection may join a session under `rule`: gives
/// the connection back, with why not if it may not.
fn joined(link: Link, rule: &JoinRule) -> (Link, std::result::Result<(), String>) {
    if link.tls.is_none() {
        return match rule.encrypted {
            true => (
                link,
                Err("the session is encrypted; this connection is not".into()),
            ),
            false => (link, Ok(())),
        };
    }
    let key = link.tls.as_ref().and_then(|t| t.peer_fingerprint());
    if rule.client.is_some() && key != rule.client {
        return (
            link,
            Err("shown another client key than the session's".into()),
        );
    }
    let mut ctl = Control::from_link(link);
    let shown = ctl.recv(JOIN_WITHIN, "the data connection's join");
    let link = ctl.into_link();
    let shown = match shown {
        Ok(Message::Join(j)) => j.token,
        Ok(other) => return (link, Err(format!("expected a join, got {}", other.name()))),
        Err(e) => return (link, Err(e.to_string())),
    };
    let verdict = match (&rule.token, shown) {
        (Some(want), Some(got)) if linerate_session::transfer_receiver::same_secret(want, &got) => {
            Ok(())
        }
        (Some(_), _) => Err("wrong or missing token".into()),
        (None, _) => Ok(()),
    };
    (link, verdict)
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

/// A session's place in the registry, where its data connections arrive.
pub(crate) struct Registration<'a> {
    registered: Registered<'a>,
    _streams: Held<'a>,
    connections: u16,
    rx: mpsc::Receiver<StreamSocket>,
}

impl<'a> Registration<'a> {
    pub(crate) fn new(
        reg: &'a Registry,
        id: SessionId,
        connections: u16,
        options: StreamOptions,
        join: JoinRule,
    ) -> Result<Registration<'a>> {
        let held = Held::take(&reg.streams, u64::from(connections))
            .map_err(|e| EngineError::Busy(format!("server busy: {e}")))?;
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
                    join,
                    tx: Some(tx),
                },
            );
            true
        });
        if !inserted {
            return Err(EngineError::SessionIdInUse);
        }
        Ok(Registration {
            registered: Registered { reg, id },
            _streams: held,
            connections,
            rx,
        })
    }

    /// Waits until `deadline` for every data connection, sorted by stream
    /// index; None if they did not all come in time. The session then
    /// takes no more, but keeps its id until it ends.
    pub(crate) fn collect(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<StreamSocket>>> {
        let got = self.wait_for_streams(deadline);
        let Registered { reg, id } = &self.registered;
        reg.with(|m| m.get_mut(id).map(|s| s.tx = None));
        got
    }

    fn wait_for_streams(&mut self, deadline: Option<Instant>) -> Result<Option<Vec<StreamSocket>>> {
        let connections = self.connections;
        let mut sockets: Vec<StreamSocket> = Vec::with_capacity(connections as usize);
        while sockets.len() < connections as usize {
            let got = match deadline {
                Some(d) => self
                    .rx
                    .recv_timeout(d.saturating_duration_since(Instant::now())),
                None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match got {
                Ok(s) if sockets.iter().any(|x| x.index == s.index) => {
                    return Err(EngineError::DuplicateStream(s.index));
                }
                Ok(s) => sockets.push(s),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return Ok(None);
                }
            }
        }
        sockets.sort_by_key(|s| s.index);
        Ok(Some(sockets))
    }
}
