//! The server of a bench or latency session: the same order as
//! [`crate::bench_client`], seen from the other end. A latency session asks
//! with a LatencyRequest instead of a BenchRequest, and sends no intervals.
//!
//! ```text
//! server                              client
//!   Accept -------------------------->   (after a good hello)
//!                   <----------------- BenchRequest (or LatencyRequest)
//!   (registers the session's data connections)
//!   Ready --------------------------->
//!   (takes every data connection)
//!                   <----------------- Start
//!   (runs its streams)
//!   Intervals ----------------------->   (each interval, when asked)
//!   Report -------------------------->
//! ```

use std::time::Instant;

use linerate_wire::{Accept, BenchParams, LatencyParams, Message, PeerIntervals, PeerReport};

use crate::SETUP_TIMEOUT;
use crate::core_of;
use crate::kit::{Core, Opening, SessionError, Steps};

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Make room for the request's data connections, then call
    /// [`BenchServer::registered`] (or abort with why not).
    Register(BenchParams),
    /// The same for a latency session's request.
    RegisterLatency(LatencyParams),
    /// Start the streams; call [`BenchServer::ran`] with their report.
    Run,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Request,
    Registering,
    Opening(Opening),
    Running,
}

/// The server's end of a bench or latency session: the request, the data
/// connections, the start, the run and its report.
pub struct BenchServer {
    core: Core<Event, ()>,
    step: Step,
    /// The client asked for each interval's samples as the run goes.
    send_intervals: bool,
    /// The session is a latency session: it takes a latency request.
    latency: bool,
}

impl BenchServer {
    /// A session whose hello was good, answered with `accept` at `now`.
    pub fn new(now: Instant, accept: Accept) -> BenchServer {
        let mut core = Core::new("the bench request", Some(now + SETUP_TIMEOUT));
        core.send(Message::Accept(accept));
        BenchServer {
            core,
            step: Step::Request,
            send_intervals: false,
            latency: false,
        }
    }

    /// A latency session whose hello was good, answered with `accept` at `now`.
    pub fn latency(now: Instant, accept: Accept) -> BenchServer {
        BenchServer {
            latency: true,
            ..BenchServer::new(now, accept)
        }
    }

    /// The data connections have a place to arrive at.
    pub fn registered(&mut self, now: Instant) {
        if self.step == Step::Registering {
            self.step = Step::Opening(Opening::ready(&mut self.core, now + SETUP_TIMEOUT));
        }
    }

    /// Every data connection has arrived.
    pub fn streams_connected(&mut self, now: Instant) {
        if let Step::Opening(mut o) = self.step {
            let begins = o.connected(&mut self.core, now + SETUP_TIMEOUT);
            self.step = Step::Opening(o);
            if begins {
                self.run();
            }
        }
    }

    fn run(&mut self) {
        self.step = Step::Running;
        self.core.wait("the end of the run", None);
        self.core.emit(Event::Run);
    }

    /// One interval of this end's samples; sent if the client asked.
    pub fn interval(&mut self, samples: &[linerate_result::IntervalSample]) {
        if self.step == Step::Running && self.send_intervals {
            self.core.send(Message::Intervals(PeerIntervals {
                samples: samples.to_vec(),
            }));
        }
    }

    /// The streams have ended; `report` is this end's half.
    pub fn ran(&mut self, report: PeerReport) {
        if self.step == Step::Running {
            self.core.send(Message::Report(Box::new(report)));
            self.core.finish(());
        }
    }
}

impl Steps for BenchServer {
    core_of!(Event, ());

    fn on_message(&mut self, _now: Instant, msg: Message) -> Result<(), SessionError> {
        match (self.step, msg) {
            (Step::Request, Message::BenchRequest(params)) if !self.latency => {
                self.step = Step::Registering;
                self.send_intervals = params.plan.peer_intervals;
                self.core
                    .wait("the data connections to be registered", None);
                self.core.emit(Event::Register(params));
            }
            (Step::Request, Message::LatencyRequest(params)) if self.latency => {
                self.step = Step::Registering;
                self.core
                    .wait("the data connections to be registered", None);
                self.core.emit(Event::RegisterLatency(params));
            }
            (Step::Opening(mut o), Message::Start) if o != Opening::StartedEarly => {
                let begins = o.started();
                self.step = Step::Opening(o);
                if begins {
                    self.run();
                }
            }
            (_, other) => return Err(self.core.unexpected(&other)),
        }
        Ok(())
    }
}
