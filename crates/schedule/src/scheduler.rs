//! The scheduler, sans-IO: given the time, what to start, end or record as
//! missed. Each test's runs fall due at its start plus whole intervals,
//! each delayed by a random jitter within its bound (never accumulated
//! from run to run). Two throughput tests never hold one path at once: a
//! test due while its path is busy waits for it, and is missed if its
//! path is not free before its limit has passed. A run still going at its
//! limit is ended. Outside its windows a test waits for the next one to
//! open. A new plan (SIGHUP) keeps every running run and its limit.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::plan::{Plan, TestKind, TestSpec};

/// Seconds a run whose server's path was held elsewhere waits before its
/// next try, at most (drawn between half and all of it, so two schedules
/// that wait for one path do not try in step).
pub const RETRY_HELD_SECONDS: f64 = 1.0;

/// One run of a test, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(pub u64);

/// What the driver is to do now.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start run `run` of `test` (its command line).
    Start {
        /// The run.
        run: RunId,
        /// The test's name.
        test: String,
        /// When it was due (before its jitter), seconds since the epoch.
        due: f64,
        /// The jitter drawn for it, seconds (within the test's bound).
        jitter: f64,
    },
    /// End run `run`: it reached its limit.
    End {
        /// The run.
        run: RunId,
        /// The test's name.
        test: String,
        /// Its limit.
        limit: Duration,
    },
    /// Record that a run of `test` did not happen, and why.
    Missed {
        /// The test's name.
        test: String,
        /// When it was due.
        due: f64,
        /// Why.
        why: Missed,
    },
}

/// Why a run did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed {
    /// Its path stayed busy with another throughput test until its limit.
    PathBusy {
        /// The test that held it.
        held_by: String,
    },
    /// Its server said another schedule's test held the path, each time
    /// it was tried, until its limit (docs/protocol.md#path-hold).
    PathHeldElsewhere,
}

impl std::fmt::Display for Missed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missed::PathBusy { held_by } => {
                write!(f, "its path was busy with {held_by} until its limit")
            }
            Missed::PathHeldElsewhere => write!(
                f,
                "its server's path was held by another schedule's test until its limit"
            ),
        }
    }
}

/// A test as the scheduler follows it.
#[derive(Debug)]
struct Follow {
    spec: TestSpec,
    /// When its next run is due, before jitter.
    due: f64,
    /// The jitter drawn for that run, seconds.
    jitter: f64,
    /// When that run is to start: `due` plus its jitter, or a window's
    /// opening.
    start_at: f64,
    /// Its run in progress, if one.
    running: Option<RunId>,
    /// Its last try found its server's path held by another schedule:
    /// it is tried again until its limit.
    held_elsewhere: bool,
}

/// A run in progress.
#[derive(Debug, Clone)]
struct Running {
    test: String,
    due: f64,
    path: Option<String>,
    deadline: f64,
    limit: Duration,
    ended: bool,
}

/// The scheduler of one plan.
#[derive(Debug)]
pub struct Scheduler {
    follows: Vec<Follow>,
    running: BTreeMap<RunId, Running>,
    next_run: u64,
    rng: fastrand::Rng,
}

impl Scheduler {
    /// Follows `plan` from `now` (seconds since the epoch): each test's
    /// first run is due now, started within its jitter. `seed` makes the
    /// jitter (a fixed one repeats a schedule in tests).
    pub fn new(plan: &Plan, now: f64, seed: u64) -> Scheduler {
        let mut s = Scheduler {
            follows: Vec::new(),
            running: BTreeMap::new(),
            next_run: 1,
            rng: fastrand::Rng::with_seed(seed),
        };
        s.follows = plan
            .tests
            .iter()
            .map(|t| s.follow(t.clone(), now))
            .collect();
        s
    }

    fn follow(&mut self, spec: TestSpec, due: f64) -> Follow {
        let jitter = self.jitter(spec.jitter);
        Follow {
            spec,
            due,
            jitter,
            start_at: due + jitter,
            running: None,
            held_elsewhere: false,
        }
    }

    fn jitter(&mut self, bound: Duration) -> f64 {
        bound.as_secs_f64() * self.rng.f64()
    }

    /// A new plan (the file edited, SIGHUP): a test of the same name keeps
    /// its run in progress and its next due time, moved to its new
    /// interval; a new test is due now; a run of a test no longer there
    /// runs to its end or limit.
    pub fn reload(&mut self, plan: &Plan, now: f64) {
        let mut old: BTreeMap<String, Follow> = self
            .follows
            .drain(..)
            .map(|f| (f.spec.name.clone(), f))
            .collect();
        let mut follows = Vec::new();
        for spec in &plan.tests {
            let f = match old.remove(&spec.name) {
                Some(mut f) => {
                    let last_due = f.due - f.spec.every.as_secs_f64();
                    f.due = (last_due + spec.every.as_secs_f64()).max(now);
                    f.spec = spec.clone();
                    f.jitter = self.jitter(spec.jitter);
                    f.start_at = f.due + f.jitter;
                    f
                }
                None => self.follow(spec.clone(), now),
            };
            follows.push(f);
        }
        self.follows = follows;
    }

    /// What to do at `now`.
    pub fn poll(&mut self, now: f64) -> Vec<Action> {
        let mut actions = Vec::new();
        for (run, r) in self.running.iter_mut() {
            if !r.ended && now >= r.deadline {
                r.ended = true;
                actions.push(Action::End {
                    run: *run,
                    test: r.test.clone(),
                    limit: r.limit,
                });
            }
        }
        for i in 0..self.follows.len() {
            if let Some(a) = self.poll_test(i, now) {
                actions.push(a);
            }
        }
        actions
    }

    fn poll_test(&mut self, i: usize, now: f64) -> Option<Action> {
        let f = &self.follows[i];
        if f.running.is_some() || now < f.start_at {
            return None;
        }
        if !f.spec.windows.is_empty() && !f.spec.windows.iter().any(|w| w.holds(minute_of_day(now)))
        {
            // Due outside its windows: it waits for the next to open.
            let opens = next_opening(&f.spec, now);
            let f = &mut self.follows[i];
            f.start_at = opens;
            return None;
        }
        let f = &self.follows[i];
        if f.held_elsewhere && now >= f.due + f.spec.limit.as_secs_f64() {
            let (test, due) = (f.spec.name.clone(), f.due);
            self.follows[i].held_elsewhere = false;
            self.advance(i, now);
            return Some(Action::Missed {
                test,
                due,
                why: Missed::PathHeldElsewhere,
            });
        }
        let holder = self.path_holder(&self.follows[i].spec);
        let f = &self.follows[i];
        if let Some(held_by) = holder {
            if now < f.due + f.spec.limit.as_secs_f64() {
                return None;
            }
            let (test, due) = (f.spec.name.clone(), f.due);
            self.advance(i, now);
            return Some(Action::Missed {
                test,
                due,
                why: Missed::PathBusy { held_by },
            });
        }
        let run = RunId(self.next_run);
        self.next_run += 1;
        let (test, due, limit) = (f.spec.name.clone(), f.due, f.spec.limit);
        let jitter = f.jitter;
        let path = (f.spec.kind == TestKind::Throughput).then(|| f.spec.path.clone());
        self.running.insert(
            run,
            Running {
                test: test.clone(),
                due,
                path,
                deadline: now + limit.as_secs_f64(),
                limit,
                ended: false,
            },
        );
        self.follows[i].running = Some(run);
        self.follows[i].held_elsewhere = false;
        self.advance(i, now);
        Some(Action::Start {
            run,
            test,
            due,
            jitter,
        })
    }

    /// The next run of test `i`: its next whole interval after `now`.
    fn advance(&mut self, i: usize, now: f64) {
        let every = self.follows[i].spec.every.as_secs_f64();
        let mut due = self.follows[i].due + every;
        // Runs that fell due while it waited are not made up.
        while due + every <= now {
            due += every;
        }
        let jitter = self.jitter(self.follows[i].spec.jitter);
        let f = &mut self.follows[i];
        f.due = due;
        f.jitter = jitter;
        f.start_at = due + jitter;
    }

    /// The test holding `spec`'s path, if it needs it alone and another
    /// throughput run holds it.
    fn path_holder(&self, spec: &TestSpec) -> Option<String> {
        if spec.kind != TestKind::Throughput {
            return None;
        }
        self.running
            .values()
            .find(|r| r.path.as_deref() == Some(spec.path.as_str()))
            .map(|r| r.test.clone())
    }

    /// Run `run` ended (by itself, or after an [`Action::End`]).
    pub fn ended(&mut self, run: RunId) {
        self.running.remove(&run);
        for f in &mut self.follows {
            if f.running == Some(run) {
                f.running = None;
            }
        }
    }

    /// Run `run` did not run: its server's path was held by another
    /// schedule's test. Its test tries the same due run again within a
    /// second, and misses it once its limit from when it was due has passed.
    pub fn held_elsewhere(&mut self, run: RunId, now: f64) {
        let Some(r) = self.running.remove(&run) else {
            return;
        };
        let retry = RETRY_HELD_SECONDS * (0.5 + 0.5 * self.rng.f64());
        for f in &mut self.follows {
            if f.running == Some(run) {
                f.running = None;
                f.due = r.due;
                f.jitter = 0.0;
                f.start_at = now + retry;
                f.held_elsewhere = true;
            }
        }
    }

    /// The runs in progress.
    pub fn running(&self) -> Vec<(RunId, String)> {
        self.running
            .iter()
            .map(|(id, r)| (*id, r.test.clone()))
            .collect()
    }

    /// Each test's next start, seconds since the epoch (for `schedule
    /// status`).
    pub fn next_starts(&self) -> Vec<(String, f64)> {
        self.follows
            .iter()
            .map(|f| (f.spec.name.clone(), f.start_at))
            .collect()
    }

    /// When [`Scheduler::poll`] next has something to do: the next start or
    /// limit (a test waiting for its path is looked at again within a
    /// second).
    pub fn next_wake(&self, now: f64) -> f64 {
        let starts = self
            .follows
            .iter()
            .filter(|f| f.running.is_none())
            .map(|f| {
                if f.start_at <= now {
                    now + 1.0
                } else {
                    f.start_at
                }
            });
        let limits = self
            .running
            .values()
            .filter(|r| !r.ended)
            .map(|r| r.deadline);
        starts.chain(limits).fold(now + 60.0, f64::min)
    }
}

/// The minute of the day, UTC, of `at` (seconds since the epoch).
fn minute_of_day(at: f64) -> u32 {
    ((at.max(0.0) as u64 % 86_400) / 60) as u32
}

/// When the next of `spec`'s windows opens after `now`.
fn next_opening(spec: &TestSpec, now: f64) -> f64 {
    let day_start = (now.max(0.0) as u64 / 86_400 * 86_400) as f64;
    spec.windows
        .iter()
        .flat_map(|w| {
            let at = day_start + f64::from(w.from) * 60.0;
            [at, at + 86_400.0]
        })
        .filter(|at| *at > now)
        .fold(now + 86_400.0, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Window;

    fn spec(
        name: &str,
        kind: TestKind,
        path: &str,
        every: u64,
        jitter: u64,
        limit: u64,
    ) -> TestSpec {
        TestSpec {
            name: name.into(),
            argv: vec!["bench".into(), path.into()],
            kind,
            path: path.into(),
            every: Duration::from_secs(every),
            jitter: Duration::from_secs(jitter),
            limit: Duration::from_secs(limit),
            windows: Vec::new(),
            line: 1,
        }
    }

    fn plan(tests: Vec<TestSpec>) -> Plan {
        Plan {
            name: "p".into(),
            archive: None,
            tests,
        }
    }

    /// Drives `s` from `from` to `to` in steps of `step`, each run lasting
    /// `lasts` seconds: every action with its time.
    fn drive(s: &mut Scheduler, from: f64, to: f64, step: f64, lasts: f64) -> Vec<(f64, Action)> {
        let mut seen = Vec::new();
        let mut ends: Vec<(f64, RunId)> = Vec::new();
        let mut now = from;
        while now < to {
            ends.retain(|(at, run)| {
                let done = *at <= now;
                if done {
                    s.ended(*run);
                }
                !done
            });
            for a in s.poll(now) {
                match &a {
                    Action::Start { run, .. } => ends.push((now + lasts, *run)),
                    Action::End { run, .. } => s.ended(*run),
                    Action::Missed { .. } => {}
                }
                seen.push((now, a));
            }
            now += step;
        }
        seen
    }

    #[test]
    fn a_run_whose_path_is_held_elsewhere_is_tried_again_then_missed_at_its_limit() {
        let p = plan(vec![spec("b", TestKind::Throughput, "h3", 10, 0, 4)]);
        let t0 = 1_000_000.0;
        let mut s = Scheduler::new(&p, t0, 3);
        let first = s.poll(t0);
        let Some(Action::Start { run, due, .. }) = first.first() else {
            panic!("{first:?}");
        };
        assert_eq!(*due, t0);
        // The server held its path: tried again within a second, the same
        // due run, until 4 s (its limit) after it was due.
        s.held_elsewhere(*run, t0 + 0.1);
        let mut now = t0 + 0.1;
        let mut tries = 1;
        let missed = loop {
            now += 0.05;
            let actions = s.poll(now);
            match actions.first() {
                Some(Action::Start { run, due, .. }) => {
                    assert_eq!(*due, t0, "a retry keeps its due time");
                    assert!(now - t0 < 4.0 + RETRY_HELD_SECONDS, "{now}");
                    tries += 1;
                    s.held_elsewhere(*run, now);
                }
                Some(Action::Missed { due, why, .. }) => break (now, *due, why.clone()),
                Some(other) => panic!("{other:?}"),
                None => {}
            }
        };
        assert!(tries >= 4, "{tries} tries in 4 s");
        assert_eq!(missed.1, t0);
        assert_eq!(missed.2, Missed::PathHeldElsewhere);
        assert!(
            missed.0 >= t0 + 4.0,
            "missed before its limit: {}",
            missed.0
        );
        // The next run is due at the next whole interval, and runs when
        // the path is free.
        let next = drive(&mut s, missed.0, t0 + 10.5, 0.05, 1.0);
        let starts: Vec<f64> = next
            .iter()
            .filter_map(|(_, a)| match a {
                Action::Start { due, .. } => Some(*due),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![t0 + 10.0]);
    }

    #[test]
    fn runs_start_within_their_jitter_of_whole_intervals() {
        let p = plan(vec![spec("b", TestKind::Throughput, "h3", 5, 2, 4)]);
        let t0 = 1_000_000.0;
        let mut s = Scheduler::new(&p, t0, 7);
        let seen = drive(&mut s, t0, t0 + 120.0, 0.05, 1.0);
        let starts: Vec<(f64, f64)> = seen
            .iter()
            .filter_map(|(at, a)| match a {
                Action::Start { due, jitter, .. } => {
                    assert!((0.0..=2.0).contains(jitter), "{jitter}");
                    Some((*at, *due))
                }
                _ => None,
            })
            .collect();
        assert_eq!(starts.len(), 24);
        for (k, (at, due)) in starts.iter().enumerate() {
            assert_eq!(*due, t0 + 5.0 * k as f64);
            assert!(
                *at >= *due && *at <= *due + 2.0 + 0.05,
                "{k}: {at} for {due}"
            );
        }
    }

    #[test]
    fn two_throughput_tests_never_share_a_path_and_latency_may() {
        let p = plan(vec![
            spec("b1", TestKind::Throughput, "h3", 5, 0, 5),
            spec("b2", TestKind::Throughput, "h3", 5, 0, 5),
            spec("rtt", TestKind::Latency, "h3", 3, 0, 3),
        ]);
        let t0 = 0.0;
        let mut s = Scheduler::new(&p, t0, 1);
        let seen = drive(&mut s, t0, 60.0, 0.1, 2.0);
        // Every start of a throughput test is 2 s (its run) after the other's.
        let mut busy_until = f64::MIN;
        let mut rtt = 0;
        for (at, a) in &seen {
            if let Action::Start { test, .. } = a {
                if test == "rtt" {
                    rtt += 1;
                    continue;
                }
                assert!(
                    *at >= busy_until - 1e-9,
                    "{test} at {at} while busy until {busy_until}"
                );
                busy_until = at + 2.0;
            }
        }
        assert_eq!(rtt, 20);
        assert!(
            seen.iter()
                .all(|(_, a)| !matches!(a, Action::Missed { .. }))
        );
    }

    #[test]
    fn a_test_whose_path_stays_busy_past_its_limit_is_missed_with_why() {
        let p = plan(vec![
            spec("long", TestKind::Throughput, "h3", 10, 0, 10),
            spec("short", TestKind::Throughput, "h3", 10, 0, 3),
        ]);
        let mut s = Scheduler::new(&p, 0.0, 1);
        // Runs last 9 s: "long" holds the path past "short"'s 3 s limit.
        let seen = drive(&mut s, 0.0, 9.5, 0.1, 9.0);
        let missed: Vec<&Action> = seen
            .iter()
            .map(|(_, a)| a)
            .filter(|a| matches!(a, Action::Missed { .. }))
            .collect();
        assert_eq!(
            missed,
            [&Action::Missed {
                test: "short".into(),
                due: 0.0,
                why: Missed::PathBusy {
                    held_by: "long".into()
                }
            }]
        );
        assert_eq!(
            missed[0].to_string_why(),
            "its path was busy with long until its limit"
        );
    }

    #[test]
    fn a_run_past_its_limit_is_ended() {
        let p = plan(vec![spec("b", TestKind::Throughput, "h3", 10, 0, 4)]);
        let mut s = Scheduler::new(&p, 0.0, 1);
        let seen = drive(&mut s, 0.0, 9.0, 0.5, 100.0);
        let ends: Vec<f64> = seen
            .iter()
            .filter_map(|(at, a)| matches!(a, Action::End { .. }).then_some(*at))
            .collect();
        assert_eq!(ends, [4.0]);
    }

    #[test]
    fn a_new_plan_keeps_the_running_run_and_changes_the_interval() {
        let p = plan(vec![spec("b", TestKind::Throughput, "h3", 5, 0, 5)]);
        let mut s = Scheduler::new(&p, 0.0, 1);
        assert!(matches!(s.poll(0.0)[..], [Action::Start { .. }]));
        let faster = plan(vec![spec("b", TestKind::Throughput, "h3", 2, 0, 2)]);
        s.reload(&faster, 1.0);
        assert_eq!(s.running().len(), 1, "the run in progress stays");
        assert!(s.poll(1.5).is_empty(), "it still runs");
        // Its old limit (5 s) holds for it; the next is due at 2 s.
        s.ended(s.running()[0].0);
        assert!(matches!(&s.poll(2.0)[..], [Action::Start { due, .. }] if *due == 2.0));
    }

    #[test]
    fn outside_its_windows_a_test_waits_for_the_next_to_open() {
        let mut t = spec("night", TestKind::Throughput, "h3", 3600, 0, 60);
        t.windows = vec![Window {
            from: 22 * 60,
            to: 6 * 60,
        }];
        let noon = 12.0 * 3600.0;
        let mut s = Scheduler::new(&plan(vec![t]), noon, 1);
        assert!(s.poll(noon).is_empty());
        assert_eq!(s.next_starts()[0].1, 22.0 * 3600.0);
        assert!(matches!(s.poll(22.0 * 3600.0)[..], [Action::Start { .. }]));
    }

    impl Action {
        fn to_string_why(&self) -> String {
            match self {
                Action::Missed { why, .. } => why.to_string(),
                _ => String::new(),
            }
        }
    }
}
