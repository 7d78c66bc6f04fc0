//! An agent of a many-host run, as it sees its coordinator.
//!
//! ```text
//! agent                               coordinator
//!   hello (control, kind agent) ----->
//!                   <----------------- Accept (its host's facts)
//!   AgentJoin (rank, data port) ----->
//!                   <----------------- ClockProbe   } a few times
//!   ClockEcho ----------------------->              }
//!                   <----------------- AgentTask    } each step it
//!   (runs the flows at the start time)              } sends in
//!   AgentReport --------------------->              }
//!                   <----------------- Dismiss
//! ```
//!
//! An agent waits between steps for as long as the run may last
//! (`silence`), no longer: a coordinator that died leaves no agent behind.

use std::time::{Duration, Instant};

use linerate_wire::{AgentJoin, AgentReport, AgentTask, ClockEcho, ClockProbe, Message};

use linerate_session::ANSWER_TIMEOUT;
use linerate_session::core_of;
use linerate_session::kit::{Core, SessionError, Steps};

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Read the clock and answer through [`Agent::echo`].
    Probe(ClockProbe),
    /// Run the step's flows at its start time, then call [`Agent::task_done`].
    Task(AgentTask),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Accept,
    Idle,
    Working(u32),
}

/// An agent of a many-host run: joins the coordinator, answers its clock
/// probes, runs each step it is handed and reports it.
pub struct Agent {
    core: Core<Event, ()>,
    step: Step,
    join: Option<AgentJoin>,
    silence: Duration,
}

impl Agent {
    /// An agent whose hello went out at `now`; it joins as `join` once
    /// accepted, and gives up on a coordinator silent for `silence`.
    pub fn new(now: Instant, join: AgentJoin, silence: Duration) -> Agent {
        Agent {
            core: Core::new("the coordinator's accept", Some(now + ANSWER_TIMEOUT)),
            step: Step::Accept,
            join: Some(join),
            silence,
        }
    }

    /// The answer to a probe, timed by the driver.
    pub fn echo(&mut self, echo: ClockEcho) {
        if self.step == Step::Idle {
            self.core.send(Message::ClockEcho(echo));
        }
    }

    /// The step's flows have ended at `now`: their report goes out.
    pub fn task_done(&mut self, now: Instant, report: AgentReport) {
        if self.step == Step::Working(report.step) {
            self.core.send(Message::AgentReport(report));
            self.idle(now);
        }
    }

    fn idle(&mut self, now: Instant) {
        self.step = Step::Idle;
        self.core
            .wait("the coordinator's next step", Some(now + self.silence));
    }
}

impl Steps for Agent {
    core_of!(Event, ());

    fn on_message(&mut self, now: Instant, msg: Message) -> Result<(), SessionError> {
        match (self.step, msg) {
            (Step::Accept, Message::Accept(_)) => {
                if let Some(join) = self.join.take() {
                    self.core.send(Message::AgentJoin(Box::new(join)));
                }
                self.idle(now);
            }
            (Step::Idle, Message::ClockProbe(probe)) => {
                self.idle(now);
                self.core.emit(Event::Probe(probe));
            }
            (Step::Idle, Message::AgentTask(task)) => {
                self.step = Step::Working(task.step);
                // The driver's flows are bounded by the task's duration.
                self.core.wait("this agent's flows", None);
                self.core.emit(Event::Task(task));
            }
            (Step::Idle | Step::Working(_), Message::Dismiss) => self.core.finish(()),
            (_, other) => return Err(self.core.unexpected(&other)),
        }
        Ok(())
    }
}
