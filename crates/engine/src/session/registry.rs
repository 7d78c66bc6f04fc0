//! Where a server's sessions wait for their data connections: each one
//! arrives with its session id and stream index in its hello, and is
//! handed to the session that registered that id.

use std::collections::HashMap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use linerate_session::join::{Arrival, JoinRule, JoinServer, SlotView};
use linerate_wire::{Hello, Refusal, RefusalCode, SessionId};

use super::StreamSocket;
use super::control::Control;
use super::link::Link;
use crate::error::{EngineError, Result};
use crate::limits::{Budget, Held, ServerLimits};
use crate::sockopt::{self, StreamOptions};

struct Slot {
    connections: u16,
    options: StreamOptions,
    join: JoinRule,
    /// The stream indexes that joined, or are joining: a second connection
    /// with one of them is refused.
    joined: Vec<bool>,
    /// None once every data connection has arrived: the id stays taken
    /// until the session ends, and takes no more connections.
    tx: Option<Sender<StreamSocket>>,
}

/// The sessions of one server, and the budgets they share.
pub struct Registry {
    sessions: Mutex<HashMap<SessionId, Slot>>,
    /// Sessions past their handshake.
    pub active: Budget,
    /// Data connections of every session.
    streams: Budget,
    /// Bytes buffered for control frames not yet complete.
    pub frames: Arc<Budget>,
    /// Bench and latency sessions' buffers.
    pub buffers: Budget,
    /// The scheduled throughput test that holds this server's path.
    pub path: crate::limits::PathHolds,
}

impl Registry {
    /// An empty registry under the server's `limits`.
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
            path: crate::limits::PathHolds::default(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<SessionId, Slot>) -> T) -> T {
        // A panic elsewhere must not wedge the daemon: take the map as it is.
        let mut guard = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Hands a data connection to the session its hello names, once its
    /// join (`linerate_session::join`) let it in.
    pub fn attach(&self, link: Link, hello: &Hello) -> Result<()> {
        let arrival = Arrival {
            stream_index: hello.stream_index,
            encrypted: link.tls.is_some(),
            client_key: link
                .tls
                .as_ref()
                .and_then(|t| t.peer_fingerprint())
                .map(|f| f.0),
        };
        let index = usize::from(hello.stream_index);
        // The machine decides what the slot settles under the lock, so two
        // connections with one index cannot both pass.
        let (mut join, slot) = self.with(|m| {
            let slot = m.get_mut(&hello.session);
            let registered = slot.as_ref().map(|s| SlotView {
                connections: s.connections,
                complete: s.tx.is_none(),
                index_taken: s.joined.get(index).copied().unwrap_or(false),
                rule: s.join.clone(),
            });
            let join = JoinServer::new(Instant::now(), registered.as_ref(), arrival);
            // A connection not refused at once holds its index.
            let slot = match slot {
                Some(s) if join.passed_the_hello() => {
                    s.joined[index] = true;
                    Some((s.options.clone(), s.tx.clone()))
                }
                _ => None,
            };
            (join, slot)
        });
        let release = || {
            self.with(|m| {
                if let Some(s) = m.get_mut(&hello.session) {
                    s.joined[index] = false;
                }
            })
        };
        let mut ctl = Control::from_link(link);
        if let Err(e) = super::run_to_end(&mut ctl, &mut join) {
            // The refusal the machine queued goes to the client.
            let _ = super::flush(&mut ctl, &mut join);
            if slot.is_some() {
                release();
            }
            return Err(e);
        }
        let Some((options, Some(tx))) = slot else {
            return Err(EngineError::Internal("a join without its session"));
        };
        let taken = take(ctl, &mut join, &options, tx, hello.stream_index);
        // A connection that failed past its join leaves its index free
        // for the client's next try.
        if taken.is_err() {
            release();
        }
        taken
    }
}

/// Sets a joined connection up as the session asked, sends its ready
/// (queued by `join`) and hands it to the session.
fn take(
    mut ctl: Control,
    join: &mut JoinServer,
    options: &StreamOptions,
    tx: Sender<StreamSocket>,
    index: u16,
) -> Result<()> {
    if let Err(e) = options.apply_connected(&ctl.stream, true) {
        let message = format!("server socket option: {e}");
        ctl.refuse(RefusalCode::InvalidParameters, &message);
        return Err(EngineError::Refusing(Refusal {
            code: RefusalCode::InvalidParameters,
            message,
        }));
    }
    sockopt::set_idle_timeouts(&ctl.stream)
        .map_err(|e| EngineError::io("setting socket timeouts", e))?;
    super::flush(&mut ctl, join)?;
    let link = ctl.into_link();
    // Data goes with Nagle on (docs/defaults.md), as at the client, unless
    // the session asked otherwise (`bench -N`).
    link.stream
        .set_nodelay(options.socket.nodelay)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    tx.send(StreamSocket::new(index, link))
        .map_err(|_| EngineError::DataConnectionLate)
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
pub struct Registration<'a> {
    registered: Registered<'a>,
    _streams: Held<'a>,
    connections: u16,
    rx: mpsc::Receiver<StreamSocket>,
}

impl<'a> Registration<'a> {
    /// Registers a session for its data connections to join.
    pub fn new(
        reg: &'a Registry,
        id: SessionId,
        connections: u16,
        options: StreamOptions,
        join: JoinRule,
    ) -> Result<Registration<'a>> {
        let held = Held::take(&reg.streams, u64::from(connections)).map_err(EngineError::Busy)?;
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
                    joined: vec![false; usize::from(connections)],
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
    pub fn collect(&mut self, deadline: Option<Instant>) -> Result<Option<Vec<StreamSocket>>> {
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
