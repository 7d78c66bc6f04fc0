//! The scheduler on arbitrary sequences of polls (time moving forward by
//! any amount), runs ending, runs refused because another schedule holds
//! their server's path, and plans reloaded: never a panic; two
//! throughput runs never hold one path at once; a run is never started
//! twice, nor ended that is not running.
#![no_main]

use std::collections::BTreeSet;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use linerate_schedule::{Action, Plan, Scheduler, TestKind, TestSpec};

fn plan(shape: u8) -> Plan {
    let test = |i: u8, kind, every: u64, jitter: u64, limit: u64| TestSpec {
        name: format!("t{i}"),
        argv: vec!["bench".into(), format!("h{}", i % 2)],
        kind,
        path: format!("h{}", i % 2),
        every: Duration::from_secs(every),
        jitter: Duration::from_secs(jitter),
        limit: Duration::from_secs(limit),
        windows: Vec::new(),
        line: 1,
    };
    let n = shape % 4 + 1;
    Plan {
        name: "fuzz".into(),
        archive: None,
        tests: (0..n)
            .map(|i| {
                let kind = if (shape >> i) & 1 == 1 { TestKind::Latency } else { TestKind::Throughput };
                let every = u64::from(shape % 7) + u64::from(i) + 2;
                test(i, kind, every, every / 2, every)
            })
            .collect(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, steps)) = data.split_first() else {
        return;
    };
    let mut now = 1_000.0;
    let mut current = plan(first);
    let mut s = Scheduler::new(&current, now, u64::from(first));
    // The runs in progress: (run, path, fills its path).
    let mut running: Vec<(linerate_schedule::RunId, String, bool)> = Vec::new();
    let mut started = BTreeSet::new();
    for &b in steps {
        match b % 5 {
            0 | 1 => now += f64::from(b) / 16.0,
            2 => {
                if let Some((id, _, _)) = running.pop() {
                    s.ended(id);
                }
            }
            3 => {
                if let Some((id, _, _)) = running.pop() {
                    s.held_elsewhere(id, now);
                }
            }
            _ => {
                current = plan(b);
                s.reload(&current, now);
            }
        }
        for a in s.poll(now) {
            match a {
                Action::Start { run, test, .. } => {
                    assert!(started.insert(run), "started twice");
                    let spec = current.tests.iter().find(|t| t.name == test).expect("a test of the plan");
                    let fills = spec.kind == TestKind::Throughput;
                    if fills {
                        assert!(
                            !running.iter().any(|(_, path, f)| *f && *path == spec.path),
                            "two throughput runs on {}",
                            spec.path
                        );
                    }
                    running.push((run, spec.path.clone(), fills));
                }
                Action::End { run, .. } => {
                    assert!(running.iter().any(|(id, _, _)| *id == run), "ended a run not running");
                }
                Action::Missed { .. } => {}
            }
        }
        assert!(s.next_wake(now) >= now);
        let _ = s.running();
    }
});
