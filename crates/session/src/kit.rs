//! What every session kind shares: the queue of messages to send, the
//! events for its driver, the step it waits at and its deadline, and how a
//! session ends.

use std::collections::VecDeque;
use std::time::Instant;

use linerate_wire::{Message, Ready, Refusal, RefusalCode, WireError};
use thiserror::Error;

/// Why a session ended before its last step.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The peer sent a message the session does not take at this step.
    #[error("unexpected {got} message while waiting for {waiting_for}")]
    Unexpected {
        /// The step the session was at.
        waiting_for: &'static str,
        /// The message's name.
        got: &'static str,
    },
    /// The peer's bytes did not decode.
    #[error("protocol error: {0}")]
    Wire(WireError),
    /// The step's deadline passed.
    #[error("timed out waiting for {waiting_for}")]
    Timeout {
        /// The step the session was at.
        waiting_for: &'static str,
    },
    /// The peer closed the connection.
    #[error("peer closed the connection while waiting for {waiting_for}")]
    Closed {
        /// The step the session was at.
        waiting_for: &'static str,
    },
    /// The peer gave up, and said why.
    #[error("refused by the peer ({}): {}", .0.code.words(), .0.message)]
    Refused(Refusal),
    /// This end gave up, and told the peer why.
    #[error("{}", .0.message)]
    Local(Refusal),
}

impl SessionError {
    /// A failure this end decides, told to the peer with `code`.
    pub fn local(code: RefusalCode, message: impl Into<String>) -> SessionError {
        SessionError::Local(Refusal {
            code,
            message: message.into(),
        })
    }

    /// What the peer is told, if anything: not when it left or gave up first.
    fn refusal(&self) -> Option<Refusal> {
        match self {
            SessionError::Closed { .. } | SessionError::Refused(_) => None,
            SessionError::Local(r) => Some(r.clone()),
            other => Some(Refusal {
                code: RefusalCode::Malformed,
                message: other.to_string(),
            }),
        }
    }
}

/// A session kind's state machine, as its driver sees it. Input arrives
/// through the `handle_*` methods with the time it arrived; output leaves
/// through the `poll_*` methods. Nothing here reads a clock or a socket.
pub trait Session {
    /// What the driver must do next (open streams, run them, ...).
    type Event;
    /// What a session that reached its last step hands its driver.
    type Done;

    /// A decoded message from the peer.
    fn handle(&mut self, now: Instant, msg: Message);
    /// Time has passed; ends the session if its deadline has.
    fn handle_timeout(&mut self, now: Instant);
    /// The peer closed the control connection.
    fn handle_closed(&mut self);
    /// The peer's bytes did not decode.
    fn handle_malformed(&mut self, error: WireError);
    /// Ends the session for a reason of this end's (a refused request, a
    /// full disk); the peer is told.
    fn abort(&mut self, error: SessionError);

    /// The next message to send.
    #[must_use]
    fn poll_transmit(&mut self) -> Option<Message>;
    /// The next thing the driver must do.
    #[must_use]
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// When [`Session::handle_timeout`] must be called, if a step is timed.
    #[must_use]
    fn poll_timeout(&self) -> Option<Instant>;
    /// How the session ended, once it has (taken once).
    #[must_use]
    fn poll_end(&mut self) -> Option<Result<Self::Done, SessionError>>;
    /// Whether the session has ended (its last messages may still wait
    /// in [`Session::poll_transmit`]).
    fn is_over(&self) -> bool;
    /// What the session waits for now, for logs and errors.
    fn waiting_for(&self) -> &'static str;
}

/// A session kind's own steps; [`Session`] follows from them (public
/// only in name: the module is private, so no other crate implements it).
pub trait Steps {
    /// What the session tells its driver as it goes.
    type Event;
    /// What the session yields when it ends well.
    type Done;
    /// The core every session kind keeps (its queue, wait and end).
    fn core(&self) -> &Core<Self::Event, Self::Done>;
    /// The core, to change.
    fn core_mut(&mut self) -> &mut Core<Self::Event, Self::Done>;
    /// A message other than a refusal, at the current step.
    fn on_message(&mut self, now: Instant, msg: Message) -> Result<(), SessionError>;
}

/// A [`Steps`] implementation's event and end types and its accessors to
/// the [`Core`] every session kind keeps in a field named `core`.
#[macro_export]
macro_rules! core_of {
    ($event:ty, $done:ty) => {
        type Event = $event;
        type Done = $done;

        fn core(&self) -> &$crate::kit::Core<$event, $done> {
            &self.core
        }

        fn core_mut(&mut self) -> &mut $crate::kit::Core<$event, $done> {
            &mut self.core
        }
    };
}

impl<T: Steps> Session for T {
    type Event = T::Event;
    type Done = T::Done;

    fn handle(&mut self, now: Instant, msg: Message) {
        if self.core().is_over() {
            return;
        }
        let result = match msg {
            Message::Refuse(r) => Err(SessionError::Refused(r)),
            msg => self.on_message(now, msg),
        };
        if let Err(e) = result {
            self.core_mut().fail(e);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        let core = self.core_mut();
        if !core.is_over() && core.deadline.is_some_and(|d| now >= d) {
            let waiting_for = core.waiting_for;
            core.fail(SessionError::Timeout { waiting_for });
        }
    }

    fn handle_closed(&mut self) {
        let core = self.core_mut();
        let waiting_for = core.waiting_for;
        core.fail(SessionError::Closed { waiting_for });
    }

    fn handle_malformed(&mut self, error: WireError) {
        self.core_mut().fail(SessionError::Wire(error));
    }

    fn abort(&mut self, error: SessionError) {
        self.core_mut().fail(error);
    }

    fn poll_transmit(&mut self) -> Option<Message> {
        self.core_mut().outbox.pop_front()
    }

    fn poll_event(&mut self) -> Option<Self::Event> {
        self.core_mut().events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let core = self.core();
        if core.is_over() { None } else { core.deadline }
    }

    fn poll_end(&mut self) -> Option<Result<Self::Done, SessionError>> {
        self.core_mut().end.take()
    }

    fn is_over(&self) -> bool {
        self.core().is_over()
    }

    fn waiting_for(&self) -> &'static str {
        self.core().waiting_for
    }
}

/// The state every session kind keeps besides its own.
#[derive(Debug)]
pub struct Core<E, D> {
    outbox: VecDeque<Message>,
    events: VecDeque<E>,
    waiting_for: &'static str,
    deadline: Option<Instant>,
    end: Option<Result<D, SessionError>>,
    over: bool,
}

impl<E, D> Core<E, D> {
    /// A core waiting for `waiting_for` until `deadline`.
    pub fn new(waiting_for: &'static str, deadline: Option<Instant>) -> Self {
        Core {
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            waiting_for,
            deadline,
            end: None,
            over: false,
        }
    }

    /// Whether the session has ended, well or not.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Queues a message for the driver to send.
    pub fn send(&mut self, msg: Message) {
        if !self.over {
            self.outbox.push_back(msg);
        }
    }

    /// Queues an event for the driver.
    pub fn emit(&mut self, event: E) {
        if !self.over {
            self.events.push_back(event);
        }
    }

    /// The next step: what it waits for and until when (None: as long as
    /// the driver takes, or the peer's data keeps flowing).
    pub fn wait(&mut self, waiting_for: &'static str, deadline: Option<Instant>) {
        self.waiting_for = waiting_for;
        self.deadline = deadline;
    }

    /// A message the current step does not take.
    pub fn unexpected(&self, msg: &Message) -> SessionError {
        SessionError::Unexpected {
            waiting_for: self.waiting_for,
            got: msg.name(),
        }
    }

    /// Ends the session well with `done`.
    pub fn finish(&mut self, done: D) {
        if !self.over {
            self.over = true;
            self.deadline = None;
            self.events.clear();
            self.end = Some(Ok(done));
        }
    }

    /// Ends the session with `error` (once: a later end is ignored).
    pub fn fail(&mut self, error: SessionError) {
        if self.over {
            return;
        }
        if let Some(r) = error.refusal() {
            self.outbox.push_back(Message::Refuse(r));
        }
        self.over = true;
        self.deadline = None;
        self.events.clear();
        self.end = Some(Err(error));
    }
}

/// A server's wait, once it has answered a request with `Ready`, for the
/// session's data connections and its client's start. They can come in
/// either order: the client starts once each connection is answered, which
/// may be before the session has taken the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Data connections still arriving.
    Streams,
    /// The start came while data connections were still arriving.
    StartedEarly,
    /// Every data connection is in; waiting for the start.
    Start,
}

impl Opening {
    /// Sends `Ready` and waits up to `streams_within` for the data connections.
    pub fn ready<E, D>(core: &mut Core<E, D>, streams_within: Instant) -> Opening {
        core.send(Message::Ready(Ready {}));
        core.wait("the data connections", Some(streams_within));
        Opening::Streams
    }

    /// Every data connection has arrived: true when the session begins now
    /// (its start came early), else it waits for the start until `start_within`.
    pub fn connected<E, D>(&mut self, core: &mut Core<E, D>, start_within: Instant) -> bool {
        match self {
            Opening::Streams => {
                *self = Opening::Start;
                core.wait("the start signal", Some(start_within));
                false
            }
            Opening::StartedEarly => true,
            Opening::Start => false,
        }
    }

    /// The client's start: true when the session begins now, false while
    /// data connections are still arriving.
    pub fn started(&mut self) -> bool {
        match self {
            Opening::Streams => {
                *self = Opening::StartedEarly;
                false
            }
            Opening::Start => true,
            Opening::StartedEarly => false,
        }
    }
}
