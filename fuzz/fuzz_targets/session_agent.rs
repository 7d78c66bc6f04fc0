//! A many-host run's agent state machine on arbitrary message sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_fleet::session::agent::{Agent, Event};
use linerate_session::Session;
use linerate_wire::{AgentReport, ClockEcho};

#[path = "../common/session_ops.rs"]
mod ops;

fuzz_target!(|data: &[u8]| {
    let now = std::time::Instant::now();
    let agent = Agent::new(now, ops::agent_join(1, 4), std::time::Duration::from_secs(60));
    ops::run(data, agent, |a, now, how| {
        while let Some(e) = a.poll_event() {
            match e {
                Event::Probe(p) => a.echo(ClockEcho {
                    seq: p.seq,
                    coordinator_ns: p.coordinator_ns,
                    agent_received_ns: u64::from(how),
                    agent_sent_ns: u64::from(how) * 2,
                }),
                Event::Task(t) if how % 2 == 0 => a.task_done(
                    now,
                    AgentReport {
                        step: t.step,
                        flows: Vec::new(),
                        job: t.job.as_ref().map(|_| linerate_wire::JobReport {
                            iteration_ns: vec![1000; usize::from(how % 4)],
                            error: None,
                        }),
                    },
                ),
                Event::Task(_) => {}
            }
        }
    });
});
