//! What the page cache did to a writer. A buffered write returns as soon
//! as its bytes are in memory, until the dirty pages reach the limit the
//! kernel sets for the device; from then on the kernel holds each writer
//! back (`balance_dirty_pages`) so the disk can catch up. The time then
//! shows as write() blocking, the page cache holds dirty and writeback
//! pages, and the host's I/O pressure (PSI, `/proc/pressure/io`) rises:
//! the disk set the rate, though no write went to it directly.
//!
//! The parsers take the files' text, so fixtures test them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A write that took this long or more waited on the disk (a copy into
/// the page cache takes microseconds): the page cache is sampled then.
pub const BLOCKED_WRITE: Duration = Duration::from_millis(10);

/// Microseconds in which some task of the host waited on I/O, from the
/// text of `/proc/pressure/io` (the `some` line's `total`).
pub fn parse_io_some_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let total = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?;
    total.parse().ok()
}

/// Bytes of the page cache that are dirty or under writeback, from the
/// text of `/proc/meminfo` (`Dirty` plus `Writeback`, in kB there).
pub fn parse_dirty_bytes(text: &str) -> Option<u64> {
    let kb = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some((kb("Dirty:")? + kb("Writeback:")?) * 1024)
}

/// The host's I/O pressure now, microseconds; `None` where the kernel
/// keeps none (no PSI, or PSI off at boot).
pub fn io_some_us() -> Option<u64> {
    parse_io_some_us(&std::fs::read_to_string("/proc/pressure/io").ok()?)
}

/// The page cache's dirty and writeback bytes now.
pub fn dirty_bytes() -> Option<u64> {
    parse_dirty_bytes(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// What a writer met over a run: counted from its start, the page cache
/// sampled whenever a write blocked.
#[derive(Debug)]
pub struct WriteWatch {
    io_some_at_start: Option<u64>,
    dirty_peak: AtomicU64,
    blocked_writes: AtomicU64,
}

/// What [`WriteWatch`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WritebackSeen {
    /// Seconds in which some task of the host waited on I/O.
    pub io_stalled_seconds: Option<f64>,
    /// The most dirty and writeback bytes seen when a write blocked.
    pub dirty_peak_bytes: Option<u64>,
    /// Writes that took [`BLOCKED_WRITE`] or more.
    pub blocked_writes: u64,
}

impl WriteWatch {
    /// Starts watching.
    pub fn start() -> WriteWatch {
        WriteWatch {
            io_some_at_start: io_some_us(),
            dirty_peak: AtomicU64::new(0),
            blocked_writes: AtomicU64::new(0),
        }
    }

    /// Notes a write that took `took`: one that blocked samples the page cache.
    pub fn wrote(&self, took: Duration) {
        if took < BLOCKED_WRITE {
            return;
        }
        self.blocked_writes.fetch_add(1, Relaxed);
        if let Some(d) = dirty_bytes() {
            self.dirty_peak.fetch_max(d, Relaxed);
        }
    }

    /// What was seen so far.
    pub fn seen(&self) -> WritebackSeen {
        let stalled = self
            .io_some_at_start
            .zip(io_some_us())
            .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6);
        let peak = self.dirty_peak.load(Relaxed);
        WritebackSeen {
            io_stalled_seconds: stalled,
            dirty_peak_bytes: (peak > 0).then_some(peak),
            blocked_writes: self.blocked_writes.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_pressure_reads_the_some_total() {
        let text = "some avg10=21.20 avg60=15.82 avg300=4.52 total=73040805\n\
                    full avg10=20.85 avg60=15.38 avg300=4.33 total=44612988\n";
        assert_eq!(parse_io_some_us(text), Some(73_040_805));
        assert_eq!(parse_io_some_us("full avg10=0 total=5\n"), None);
        assert_eq!(parse_io_some_us("some avg10=0.00 total=x\n"), None);
        assert_eq!(parse_io_some_us(""), None);
    }

    #[test]
    fn dirty_bytes_add_dirty_and_writeback() {
        let text = "MemTotal:       24000000 kB\nDirty:              8192 kB\n\
                    Writeback:          4096 kB\nWritebackTmp:          0 kB\n";
        assert_eq!(parse_dirty_bytes(text), Some(12_288 * 1024));
        assert_eq!(parse_dirty_bytes("Dirty: 1 kB\n"), None);
        assert_eq!(parse_dirty_bytes("Dirty: x kB\nWriteback: 0 kB\n"), None);
    }

    #[test]
    fn quick_writes_are_not_blocked_ones() {
        let w = WriteWatch::start();
        w.wrote(Duration::from_micros(50));
        assert_eq!(w.seen().blocked_writes, 0);
        assert_eq!(w.seen().dirty_peak_bytes, None);
        w.wrote(BLOCKED_WRITE);
        assert_eq!(w.seen().blocked_writes, 1);
    }
}
