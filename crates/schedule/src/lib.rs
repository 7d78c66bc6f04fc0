//! Tests on a schedule, as a site watches its paths: the plan a schedule
//! file describes ([`plan`]) and the scheduler that says, given the time,
//! when each test starts, waits for its path, is missed (and why) or is
//! ended at its limit ([`scheduler`]). No clock, processes or files here:
//! `linerate schedule run` drives it (docs/guide.md#watching-paths).
#![forbid(unsafe_code)]

pub mod plan;
pub mod scheduler;

pub use plan::{Plan, PlanError, TestKind, TestSpec, Window};
pub use scheduler::{Action, Missed, RunId, Scheduler};
