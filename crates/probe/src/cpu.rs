//! CPU accounting: per thread (who saturated), per process, and for the host.

use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};

fn as_secs(ts: rustix::time::Timespec) -> f64 {
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
    .as_secs_f64()
}

/// CPU seconds the calling thread has used.
pub fn thread_seconds() -> f64 {
    as_secs(clock_gettime(ClockId::ThreadCPUTime))
}

/// Seconds the calling thread has spent runnable but waiting for a CPU
/// (schedstat's run delay): a starved thread, as opposed to a blocked one.
/// None where the kernel keeps no schedstats.
pub fn thread_run_delay() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_run_delay(&text)
}

fn parse_run_delay(schedstat: &str) -> Option<f64> {
    parse_schedstat(schedstat).map(|(_, wait_ns)| wait_ns as f64 / 1e9)
}

/// CPU seconds the whole process has used.
pub fn process_seconds() -> f64 {
    as_secs(clock_gettime(ClockId::ProcessCPUTime))
}

/// The most resident memory this process has held (VmHWM), in bytes;
/// None without /proc.
pub fn process_peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The aggregate `cpu` line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostTicks {
    /// Ticks spent on anything but idle and iowait.
    pub busy: u64,
    /// Ticks spent in softirq (the kernel's network receive work among it).
    pub softirq: u64,
    /// Every tick of every CPU.
    pub total: u64,
}

impl HostTicks {
    /// Reads /proc/stat; a host without one reports zero load.
    pub fn now() -> HostTicks {
        std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| parse_proc_stat(&s))
            .unwrap_or_default()
    }

    /// Fractions of time (busy, softirq) between `earlier` and `self`.
    pub fn fractions_since(&self, earlier: &HostTicks) -> (f64, f64) {
        let total = self.total.saturating_sub(earlier.total);
        if total == 0 {
            return (0.0, 0.0);
        }
        let busy = self.busy.saturating_sub(earlier.busy) as f64 / total as f64;
        let soft = self.softirq.saturating_sub(earlier.softirq) as f64 / total as f64;
        (busy.min(1.0), soft.min(1.0))
    }
}

/// Parses the first (`cpu `) line of /proc/stat.
pub fn parse_proc_stat(text: &str) -> Option<HostTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest
    // time is already counted in user, so only the first eight add up.
    if v.len() < 7 {
        return None;
    }
    let total: u64 = v.iter().take(8).fold(0u64, |a, b| a.saturating_add(*b));
    let idle = v[3].saturating_add(v[4]);
    Some(HostTicks {
        busy: total.saturating_sub(idle),
        softirq: v[6],
        total,
    })
}

/// Number of CPUs this process may run on.
pub fn cpus() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// The threads of another process (a lab's emulator, which forwards the
/// run's packets) at one moment: each thread's time on a CPU and waiting
/// for one, from /proc/PID/task/*/schedstat.
#[derive(Debug, Clone)]
pub struct ThreadsOf {
    pid: u32,
    at: std::time::Instant,
    threads: std::collections::BTreeMap<u32, (u64, u64)>,
}

/// What a process's threads used over a span: all of them, and the
/// busiest one's share of the span on a CPU and waiting for one.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThreadsUse {
    /// Cores the threads used together (CPU time over the span).
    pub cores: f64,
    /// Share of the span the busiest thread ran.
    pub running: f64,
    /// Share of the span the busiest thread was runnable but waited for a CPU.
    pub waiting: f64,
}

impl ThreadsOf {
    /// Process `pid`'s threads now; None when it has ended or the kernel
    /// keeps no schedstats.
    pub fn sample(pid: u32) -> Option<ThreadsOf> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let threads: std::collections::BTreeMap<u32, (u64, u64)> = tasks
            .filter_map(|t| {
                let tid: u32 = t.ok()?.file_name().to_str()?.parse().ok()?;
                let text =
                    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
                Some((tid, parse_schedstat(&text)?))
            })
            .collect();
        (!threads.is_empty()).then(|| ThreadsOf {
            pid,
            at: std::time::Instant::now(),
            threads,
        })
    }

    /// What the threads used since this sample, as shares of the time
    /// since; None when the process ended.
    pub fn used_since(&self) -> Option<ThreadsUse> {
        let now = ThreadsOf::sample(self.pid)?;
        used(self, &now)
    }
}

fn used(then: &ThreadsOf, now: &ThreadsOf) -> Option<ThreadsUse> {
    let span_ns = now.at.duration_since(then.at).as_nanos() as f64;
    if span_ns <= 0.0 {
        return None;
    }
    let shares: Vec<(f64, f64)> = now
        .threads
        .iter()
        .filter_map(|(tid, &(run, wait))| {
            let &(run0, wait0) = then.threads.get(tid)?;
            Some((
                (run.saturating_sub(run0) as f64 / span_ns).min(1.0),
                (wait.saturating_sub(wait0) as f64 / span_ns).min(1.0),
            ))
        })
        .collect();
    let &(running, waiting) = shares.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(ThreadsUse {
        cores: shares.iter().map(|s| s.0).sum(),
        running,
        waiting,
    })
}

/// schedstat's first two fields: ns on a CPU, ns waiting for one.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace();
    let run = fields.next()?.parse().ok()?;
    let wait = fields.next()?.parse().ok()?;
    Some((run, wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_memory_is_read_from_vm_hwm() {
        let status = "Name:\tlinerate\nVmPeak:\t  9000 kB\nVmHWM:\t    4242 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(4242 * 1024));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
        assert!(process_peak_rss_bytes().is_some_and(|b| b > 0));
    }

    #[test]
    fn parses_proc_stat() {
        let t = parse_proc_stat("cpu  100 0 50 800 50 0 25 0 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(t.total, 1025);
        assert_eq!(t.busy, 175);
        assert_eq!(t.softirq, 25);
        assert!(parse_proc_stat("cpu  x y\n").is_none());
        assert!(parse_proc_stat("").is_none());
    }

    #[test]
    fn another_process_uses_its_threads_summed_and_its_busiest_thread_s_share() {
        let at = std::time::Instant::now();
        let then = ThreadsOf {
            pid: 0,
            at,
            threads: [(1, (0, 0)), (2, (5_000_000, 0))].into(),
        };
        let now = ThreadsOf {
            pid: 0,
            at: at + Duration::from_millis(100),
            threads: [
                (1, (90_000_000, 8_000_000)),
                (2, (15_000_000, 0)),
                (3, (1, 1)),
            ]
            .into(),
        };
        let b = used(&then, &now).unwrap();
        assert!((b.running - 0.9).abs() < 1e-9 && (b.waiting - 0.08).abs() < 1e-9);
        assert!((b.cores - 1.0).abs() < 1e-9, "thread 3 is new: not counted");
        assert_eq!(parse_schedstat("12 34 5\n"), Some((12, 34)));
        assert_eq!(parse_schedstat("12"), None);
        let me = ThreadsOf::sample(std::process::id()).expect("this process has threads");
        assert!(me.used_since().is_some());
    }

    #[test]
    fn run_delay() {
        assert_eq!(parse_run_delay("889432 2500000000 1\n"), Some(2.5));
        assert_eq!(parse_run_delay("garbage"), None);
        assert!(thread_run_delay().is_some(), "this kernel keeps schedstats");
    }

    #[test]
    fn fractions() {
        let a = HostTicks {
            busy: 0,
            softirq: 0,
            total: 0,
        };
        let b = HostTicks {
            busy: 50,
            softirq: 10,
            total: 100,
        };
        assert_eq!(b.fractions_since(&a), (0.5, 0.1));
        assert_eq!(a.fractions_since(&b), (0.0, 0.0));
    }

    #[test]
    fn thread_clock_advances() {
        let t0 = thread_seconds();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(thread_seconds() > t0);
        assert!(process_seconds() >= thread_seconds());
    }
}
