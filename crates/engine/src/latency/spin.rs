//! When a latency end spins: a spinning thread needs a core of its own for
//! the whole run. On a host whose cores other work wants, a spinner holds
//! its core until the scheduler takes it, and a round then waits a whole
//! time slice: on a loaded 2-core host `--busy-poll on` gave a 6.5 us
//! median but a 12 ms p99.9 and a fortieth of the rounds of blocking
//! (docs/defaults.md#busy-poll-auto).

use std::time::{Duration, Instant};

use linerate_probe::cpu::thread_run_delay;

pub(crate) use crate::spare_cores::{free_cores, room_for};

/// How often a spinning thread checks that it still has its core.
const CHECK_EVERY: Duration = Duration::from_millis(100);
/// A spinning thread that waited for a core this share of the time or more
/// shares its core with other work: it blocks from then on. A spinner
/// with a core to itself waits well under 1 % (interrupts, kernel threads).
const WAITED_SHARE: f64 = 0.05;

/// One thread's spinning, given up for good once the thread finds itself
/// waiting for its core (`yields`); spinning as asked otherwise.
#[derive(Clone)]
pub(crate) struct SpinWatch {
    asked: bool,
    spinning: bool,
    yields: bool,
    since: Instant,
    waited: Option<f64>,
    /// When this thread stopped spinning because it shared its core.
    pub gave_up: Option<Instant>,
}

impl SpinWatch {
    pub fn new(spinning: bool, yields: bool) -> SpinWatch {
        SpinWatch {
            asked: spinning,
            spinning,
            yields,
            since: Instant::now(),
            waited: None,
            gave_up: None,
        }
    }

    /// Starts watching the calling thread (each step runs on a thread of
    /// its own).
    pub fn begin(&mut self) {
        self.since = Instant::now();
        self.waited = thread_run_delay();
    }

    /// Whether this thread spins (as last checked).
    pub fn spins(&self) -> bool {
        self.spinning
    }

    /// Whether this thread still spins, if it was asked to: None when it
    /// never spun.
    pub fn state(&mut self) -> Option<bool> {
        let now = self.spinning();
        self.asked.then_some(now)
    }

    /// Whether to spin now; checks the thread's wait for a core every
    /// [`CHECK_EVERY`].
    pub fn spinning(&mut self) -> bool {
        if !(self.spinning && self.yields) || self.since.elapsed() < CHECK_EVERY {
            return self.spinning;
        }
        let now = Instant::now();
        let waited = thread_run_delay();
        if let (Some(before), Some(after)) = (self.waited, waited)
            && gives_up(after - before, now.duration_since(self.since))
        {
            self.spinning = false;
            self.gave_up = Some(now);
        }
        self.since = now;
        self.waited = waited;
        self.spinning
    }
}

fn gives_up(waited_seconds: f64, over: Duration) -> bool {
    waited_seconds >= WAITED_SHARE * over.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_needs_a_free_core_a_spinning_thread() {
        assert!(room_for(2, 1.9));
        assert!(room_for(2, 1.5));
        assert!(!room_for(2, 1.1));
        assert!(room_for(1, 0.8));
        assert!(!room_for(1, 0.1));
    }

    #[test]
    fn a_thread_gives_up_at_a_twentieth_of_its_time_waiting() {
        let tenth = Duration::from_millis(100);
        assert!(!gives_up(0.001, tenth));
        assert!(gives_up(0.006, tenth));
        assert!(gives_up(0.08, tenth));
    }

    #[test]
    fn a_thread_told_to_spin_regardless_keeps_spinning() {
        let mut w = SpinWatch::new(true, false);
        w.since -= Duration::from_secs(1);
        assert!(w.spinning());
        let mut off = SpinWatch::new(false, true);
        assert!(!off.spinning());
    }
}
