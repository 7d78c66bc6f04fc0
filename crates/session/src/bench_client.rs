//! The client of a bench or latency session (a latency session asks with
//! a LatencyRequest, through [`BenchClient::request_latency`]).
//!
//! ```text
//! client                              server
//!   hello (control) ----------------->
//!                   <----------------- Accept (its host's facts)
//!   BenchRequest -------------------->
//!                   <----------------- Ready
//!   (opens every data connection, each answered by Ready)
//!   Start --------------------------->
//!   (both ends run their streams)
//!                   <----------------- Intervals (each interval, if asked)
//!                   <----------------- Report (the server's half)
//! ```

use std::time::Instant;

use linerate_wire::{Accept, BenchParams, LatencyParams, Message, PeerReport};

use crate::core_of;
use crate::kit::{Core, SessionError, Steps};
use crate::{ANSWER_TIMEOUT, REPORT_GRACE};

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The server took the session: plan the request from its facts and
    /// call [`BenchClient::request`].
    Accepted(Accept),
    /// The server is ready: open the data connections, then call
    /// [`BenchClient::streams_open`].
    OpenStreams,
    /// The server's samples of one interval, as the run goes.
    PeerIntervals(Vec<linerate_result::IntervalSample>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Accept,
    Planning,
    Ready,
    Connecting,
    Running,
    Report,
}

/// The client's end of a bench or latency session: the accept, the ready, the
/// run and the server's report.
pub struct BenchClient {
    core: Core<Event, PeerReport>,
    step: Step,
    asked_intervals: bool,
}

impl BenchClient {
    /// A session whose hello was sent at `now`.
    pub fn new(now: Instant) -> BenchClient {
        BenchClient {
            core: Core::new("the server's accept", Some(now + ANSWER_TIMEOUT)),
            step: Step::Accept,
            asked_intervals: false,
        }
    }

    /// Whether the server has taken the session (its accept arrived): an
    /// error before then may come from something that is not linerate.
    #[must_use]
    pub fn accepted(&self) -> bool {
        self.step != Step::Accept
    }

    /// Asks the server to run `params`.
    pub fn request(&mut self, now: Instant, params: BenchParams) {
        if self.step == Step::Planning {
            self.asked_intervals = params.plan.peer_intervals;
            self.core.send(Message::BenchRequest(params));
            self.step = Step::Ready;
            self.core
                .wait("the server's ready", Some(now + ANSWER_TIMEOUT));
        }
    }

    /// Asks the server to run the latency session `params`.
    pub fn request_latency(&mut self, now: Instant, params: LatencyParams) {
        if self.step == Step::Planning {
            self.core.send(Message::LatencyRequest(params));
            self.step = Step::Ready;
            self.core
                .wait("the server's ready", Some(now + ANSWER_TIMEOUT));
        }
    }

    /// Every data connection is up: the run starts.
    pub fn streams_open(&mut self) {
        if self.step == Step::Connecting {
            self.core.send(Message::Start);
            self.step = Step::Running;
            self.core.wait("the end of the run", None);
        }
    }

    /// This end's streams have ended at `now`: the server's report is due.
    pub fn run_over(&mut self, now: Instant) {
        if self.step == Step::Running {
            self.step = Step::Report;
            self.core
                .wait("the server's report", Some(now + REPORT_GRACE));
        }
    }
}

impl Steps for BenchClient {
    core_of!(Event, PeerReport);

    fn on_message(&mut self, _now: Instant, msg: Message) -> Result<(), SessionError> {
        match (self.step, msg) {
            (Step::Accept, Message::Accept(accept)) => {
                self.step = Step::Planning;
                self.core.wait("the bench request to be planned", None);
                self.core.emit(Event::Accepted(accept));
            }
            (Step::Ready, Message::Ready(_)) => {
                self.step = Step::Connecting;
                self.core.wait("the data connections", None);
                self.core.emit(Event::OpenStreams);
            }
            (Step::Report | Step::Running, Message::Intervals(i)) if self.asked_intervals => {
                self.core.emit(Event::PeerIntervals(i.samples));
            }
            (Step::Report | Step::Running, Message::Report(report)) => {
                self.core.finish(*report);
            }
            (_, other) => return Err(self.core.unexpected(&other)),
        }
        Ok(())
    }
}
