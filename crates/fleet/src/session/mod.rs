//! The message order of a many-host run, as sans-IO machines built on
//! `linerate_session`'s kit: an [`agent`]'s and the [`coordinator`]'s,
//! which drives every agent's connection at once; [`job_step`] is what a
//! proxy-application step asks of each rank and how their reports merge.

pub mod agent;
pub mod connections;
pub mod coordinator;
pub mod job_step;

pub use agent::Agent;
pub use coordinator::Coordinator;

#[cfg(test)]
mod tests;
