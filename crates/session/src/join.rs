//! A data connection's join, both ends. After its hello (session id and
//! stream index, in the clear) and, for an encrypted session, its TLS
//! handshake, the client shows the session's secret in a `Join`; the server
//! answers `Ready` or a refusal. The server's end decides from what the
//! session registered ([`SlotView`]) and what the connection showed
//! ([`Arrival`]): an unknown or complete session, an index out of range or
//! already joined, a connection in the clear for an encrypted session,
//! another client key than the control connection's, a wrong token, or
//! anything but a join are refused with their code.
//!
//! ```text
//! client                         server
//!   hello (data, index) ----------->  [JoinServer::new: checks the slot]
//!   TLS handshake <---------------->
//!   Join { token } ----------------->  (encrypted sessions only)
//!                  <----------------- Ready | Refuse
//! ```

use std::time::{Duration, Instant};

use linerate_wire::{Join, Message, Ready, RefusalCode};

use crate::core_of;
use crate::kit::{Core, SessionError, Steps};
use crate::transfer_receiver::same_secret;

/// How long an encrypted data connection may take to send its join.
pub const JOIN_WITHIN: Duration = Duration::from_secs(5);
/// How long a client waits for the server's answer to its join: as long as
/// the server's session waits for its data connections, since a busy
/// receiver answers late but answers
/// (docs/benchmarks/2026-12-03-loaded-series.md#incast-ready).
pub const READY_WITHIN: Duration = crate::SETUP_TIMEOUT;

/// What a session's data connections must show to join it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinRule {
    /// Connections must come over TLS (the hello travels in the clear).
    pub encrypted: bool,
    /// The secret they must show inside TLS (the one-shot receiver's token).
    pub token: Option<String>,
    /// The client key the control connection showed (a daemon's sender):
    /// its data connections must show the same.
    pub client_key: Option<[u8; 32]>,
}

/// What the server's registry holds for the session a hello names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotView {
    /// Data connections the session opens.
    pub connections: u16,
    /// Every data connection has arrived; the id takes no more.
    pub complete: bool,
    /// A connection with this hello's index has already joined.
    pub index_taken: bool,
    /// What its connections must show.
    pub rule: JoinRule,
}

/// What a data connection showed before its join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// The index its hello names.
    pub stream_index: u16,
    /// It completed a TLS handshake.
    pub encrypted: bool,
    /// The client key its TLS handshake showed, if any.
    pub client_key: Option<[u8; 32]>,
}

/// The server's end of one data connection's join: done with `Ready`
/// queued, or ended with the refusal queued.
pub struct JoinServer {
    core: Core<(), ()>,
    token: Option<String>,
    passed_the_hello: bool,
}

impl JoinServer {
    /// Decides at once what the hello and the handshake settle; waits for
    /// the join only when the session is encrypted.
    pub fn new(now: Instant, session: Option<&SlotView>, arrival: Arrival) -> JoinServer {
        let mut s = JoinServer {
            core: Core::new("the data connection's join", Some(now + JOIN_WITHIN)),
            token: None,
            passed_the_hello: false,
        };
        let admitted = admit(session, arrival);
        s.passed_the_hello = admitted.is_ok();
        match admitted {
            Err(e) => s.core.fail(e),
            Ok(_) if !arrival.encrypted => s.ready(),
            Ok(rule) => s.token = rule.token.clone(),
        }
        s
    }

    /// Whether the hello and the handshake were let in: the connection
    /// now holds its stream index while its join is read.
    pub fn passed_the_hello(&self) -> bool {
        self.passed_the_hello
    }

    fn ready(&mut self) {
        self.core.send(Message::Ready(Ready {}));
        self.core.finish(());
    }
}

/// The checks a connection passes before its join is read.
fn admit(session: Option<&SlotView>, a: Arrival) -> Result<&JoinRule, SessionError> {
    let Some(s) = session else {
        return Err(SessionError::local(
            RefusalCode::UnknownSession,
            "no such session",
        ));
    };
    if s.complete {
        return Err(SessionError::local(
            RefusalCode::Busy,
            "the session has all its data connections",
        ));
    }
    if a.stream_index >= s.connections {
        return Err(SessionError::local(
            RefusalCode::InvalidParameters,
            format!(
                "stream index {} out of range (session has {})",
                a.stream_index, s.connections
            ),
        ));
    }
    if s.index_taken {
        return Err(SessionError::local(
            RefusalCode::InvalidParameters,
            format!("stream {} joined twice", a.stream_index),
        ));
    }
    if s.rule.encrypted && !a.encrypted {
        return Err(SessionError::local(
            RefusalCode::InvalidParameters,
            "the session is encrypted; this connection is not",
        ));
    }
    if a.encrypted && s.rule.client_key.is_some() && a.client_key != s.rule.client_key {
        return Err(SessionError::local(
            RefusalCode::InvalidParameters,
            "shown another client key than the session's",
        ));
    }
    Ok(&s.rule)
}

impl Steps for JoinServer {
    core_of!((), ());

    fn on_message(&mut self, _now: Instant, msg: Message) -> Result<(), SessionError> {
        let Message::Join(Join { token: shown }) = msg else {
            return Err(self.core.unexpected(&msg));
        };
        match (&self.token, shown) {
            (Some(want), Some(got)) if same_secret(want, &got) => {}
            (Some(_), _) => {
                return Err(SessionError::local(
                    RefusalCode::InvalidParameters,
                    "wrong or missing token",
                ));
            }
            (None, _) => {}
        }
        self.ready();
        Ok(())
    }
}

/// The client's end of one data connection's join: sends the join when
/// encrypted, then waits for the server's `Ready`.
pub struct JoinClient {
    core: Core<(), ()>,
}

impl JoinClient {
    /// Sends `token` in a join over an encrypted connection; in the clear the
    /// hello was enough.
    pub fn new(now: Instant, encrypted: bool, token: Option<String>) -> JoinClient {
        let mut core = Core::new("the data connection's ready", Some(now + READY_WITHIN));
        if encrypted {
            core.send(Message::Join(Join { token }));
        }
        JoinClient { core }
    }
}

impl Steps for JoinClient {
    core_of!((), ());

    fn on_message(&mut self, _now: Instant, msg: Message) -> Result<(), SessionError> {
        match msg {
            Message::Ready(_) => {
                self.core.finish(());
                Ok(())
            }
            other => Err(self.core.unexpected(&other)),
        }
    }
}
