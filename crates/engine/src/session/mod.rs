//! The bottom of the engine: what every session kind stands on. A control
//! connection ([`control`]), the client's connections to a server
//! ([`connect`]), the server's registry where a session's data connections
//! arrive ([`registry`]), and the loop that drives a session's state
//! machine (from `linerate-session`) over its control connection.

pub mod connect;
pub mod control;
pub mod link;
pub mod registry;

use std::net::TcpStream;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use linerate_session::{Session, SessionError};

use crate::error::{EngineError, Result};
use control::{Control, Input};

/// One data connection of a session, with its index in the session.
pub struct StreamSocket {
    /// The stream's index in its session (0 first).
    pub index: u16,
    /// The data connection.
    pub stream: TcpStream,
    /// Its TLS, when encrypted; only the stream's own thread takes it.
    pub tls: Option<std::sync::Mutex<linerate_secure::TlsStream>>,
}

impl StreamSocket {
    /// Data connection `index` over `link` (plain or TLS).
    pub fn new(index: u16, link: link::Link) -> StreamSocket {
        StreamSocket {
            index,
            stream: link.stream,
            tls: link.tls.map(std::sync::Mutex::new),
        }
    }
}

/// What a session's driver is handed each turn of [`drive`].
pub enum Turn<E, D> {
    /// The machine asks for something (open streams, run them, ...).
    Event(E),
    /// Nothing to do yet: the next input was handed to the machine, or the
    /// tick passed.
    Idle,
    /// The machine has ended, its last messages sent.
    Ended(Result<D>),
}

/// The one loop every session kind is driven by: sends what the machine
/// queued, hands each of its events (or its end) to `on`, and feeds it
/// the next input from `ctl` when it has nothing to ask, waiting at most
/// `tick` when given so `on` can look at other work (an interrupt) in
/// between. `on` breaks with the driver's result; it must break on
/// [`Turn::Ended`].
pub fn drive<S: Session, T>(
    ctl: &mut Control,
    m: &mut S,
    tick: Option<Duration>,
    mut on: impl FnMut(&mut Control, &mut S, Turn<S::Event, S::Done>) -> Result<ControlFlow<T>>,
) -> Result<T> {
    loop {
        let turn = match settle(ctl, m) {
            Some(end) => Turn::Ended(end),
            None => match m.poll_event() {
                Some(event) => Turn::Event(event),
                None => {
                    feed(ctl, m, tick);
                    Turn::Idle
                }
            },
        };
        let ended = matches!(turn, Turn::Ended(_));
        if let ControlFlow::Break(done) = on(ctl, m, turn)? {
            return Ok(done);
        }
        if ended {
            return Err(EngineError::Internal(
                "a driver went on past its session's end",
            ));
        }
    }
}

/// Sends everything the machine has queued.
pub fn flush<S: Session>(ctl: &mut Control, s: &mut S) -> Result<()> {
    while let Some(msg) = s.poll_transmit() {
        ctl.send(&msg)?;
    }
    Ok(())
}

/// Drives a machine over its connection until it ends. What it queued
/// last (a ready, a refusal) stays queued: the caller sends it with
/// [`flush`] once its own last checks passed.
pub fn run_to_end<S: Session>(ctl: &mut Control, s: &mut S) -> Result<S::Done> {
    while !s.is_over() {
        flush(ctl, s)?;
        feed(ctl, s, None);
    }
    match s.poll_end() {
        Some(end) => end.map_err(EngineError::from),
        None => Err(EngineError::Internal("a session's end was taken twice")),
    }
}

/// Hands the machine the next thing to happen on `ctl`: a message, the
/// peer leaving, bad bytes, or its deadline passing. Waits at most `tick`
/// when given, so the caller can look at other work in between.
pub fn feed<S: Session>(ctl: &mut Control, s: &mut S, tick: Option<Duration>) {
    let deadline = s.poll_timeout();
    let until = match (deadline, tick) {
        (Some(d), Some(t)) => Some(d.min(Instant::now() + t)),
        (d, None) => d,
        (None, Some(t)) => Some(Instant::now() + t),
    };
    apply(s, ctl.next_input(until));
}

/// Hands the machine what happened on its control connection.
pub fn apply<S: Session>(s: &mut S, input: Input) {
    match input {
        Input::Message(m) => s.handle(Instant::now(), m),
        Input::Quiet => s.handle_timeout(Instant::now()),
        Input::Closed => s.handle_closed(),
        Input::Malformed(e) => s.handle_malformed(e),
        Input::Failed(e) => s.abort(e),
    }
}

/// Flushes what the machine queued, then gives its end, if it has ended.
pub fn settle<S: Session>(
    ctl: &mut Control,
    s: &mut S,
) -> Option<std::result::Result<S::Done, EngineError>> {
    // What the machine queued last (a report, a refusal) goes out before
    // its end is seen; a peer that left cannot be told.
    let sent = flush(ctl, s);
    let end = s.poll_end()?;
    Some(match (end, sent) {
        (Ok(done), Ok(())) => Ok(done),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), _) => Err(e.into()),
    })
}

impl From<SessionError> for EngineError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Wire(w) => EngineError::Wire(w),
            SessionError::Timeout { waiting_for } => EngineError::Timeout {
                waiting_for,
                within: None,
            },
            SessionError::Closed { waiting_for } => EngineError::PeerClosed { waiting_for },
            SessionError::Refused(r) => EngineError::Refused(r),
            SessionError::Local(r) => EngineError::Refusing(r),
            // Unexpected, and any step error added later: kept whole.
            other => EngineError::Session(other),
        }
    }
}

/// A budget or I/O failure of this end, as the machine's end.
pub fn local(code: linerate_wire::RefusalCode, e: impl std::fmt::Display) -> SessionError {
    SessionError::local(code, e.to_string())
}
