//! A transfer's progress as people read it (rsync's `--info=progress2`
//! habit): bytes, percentage, files done of needed, the rate in the unit
//! of the summary, the time left; a bar on a terminal, a line per interval
//! otherwise.

use std::io::IsTerminal;
use std::sync::Arc;

use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_result::{IntervalSample, Side};
use linerate_transfer::FirstPass;
use linerate_transfer::receive::{ProgressReport, ReceiveProgress};
use linerate_transfer::source::Manifest;

use crate::output::timestamp;

/// What one progress line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Bytes of file data moved so far.
    pub done_bytes: u64,
    /// Bytes the transfer needs (what the destination lacks).
    pub needed_bytes: u64,
    pub files_done: u64,
    pub files_needed: u64,
    /// The needed totals still grow: the tree is still being listed.
    pub growing: bool,
    /// Over the last interval.
    pub bits_per_second: f64,
    /// Seconds since the data began.
    pub elapsed: f64,
    /// The file last taken up.
    pub current: Option<String>,
}

impl Figures {
    /// Done of needed, in percent; None while nothing is known to be needed.
    pub fn percent(&self) -> Option<f64> {
        (self.needed_bytes > 0)
            .then(|| (self.done_bytes as f64 / self.needed_bytes as f64 * 100.0).min(100.0))
    }

    /// Seconds left at the average rate so far; None while the totals grow
    /// or nothing has moved.
    pub fn seconds_left(&self) -> Option<f64> {
        if self.growing || self.done_bytes == 0 || self.elapsed <= 0.0 {
            return None;
        }
        let left = self.needed_bytes.saturating_sub(self.done_bytes) as f64;
        Some(left / (self.done_bytes as f64 / self.elapsed))
    }

    /// The listing is complete and every byte it needs has moved.
    fn all_moved(&self) -> bool {
        !self.growing && self.needed_bytes > 0 && self.done_bytes >= self.needed_bytes
    }

    /// "1.2 GiB of 4.0 GiB (30 %), 12/400 files, 9.41 Gbit/s, ETA 0:42".
    pub fn line(&self) -> String {
        let so_far = if self.growing { " so far" } else { "" };
        let percent = match self.percent() {
            Some(p) => format!(" ({p:.0} %)"),
            None => String::new(),
        };
        let eta = match self.seconds_left() {
            Some(s) => clock(s),
            None => "-".to_string(),
        };
        // Every byte moved and none moving: the run waits for the
        // receiver's last writes and fsyncs, not for the network.
        let pace = if self.all_moved() && self.bits_per_second <= 0.0 {
            "all moved, syncing at the receiver".to_string()
        } else {
            format!("{}, ETA {eta}", fmt_rate(self.bits_per_second))
        };
        let mut line = format!(
            "{} of {}{so_far}{percent}, {}/{} files, {pace}",
            fmt_bytes(self.done_bytes as f64),
            fmt_bytes(self.needed_bytes as f64),
            self.files_done,
            self.files_needed,
        );
        if let Some(c) = &self.current {
            line.push_str(", ");
            line.push_str(c);
        }
        line
    }
}

/// `h:mm:ss`, or `m:ss` under an hour.
fn clock(seconds: f64) -> String {
    let s = seconds.round().clamp(0.0, 1e9) as u64;
    match s / 3600 {
        0 => format!("{}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", s / 60 % 60, s % 60),
    }
}

/// Where progress goes.
pub enum View {
    Quiet,
    Bar(indicatif::ProgressBar),
    /// A line per interval, given to the function.
    Lines(Box<dyn Fn(&str) + Send + Sync>),
}

impl View {
    /// A bar when stderr is a terminal, else a line per interval, stamped
    /// with the time, given to `print`.
    pub fn new(quiet: bool, print: Box<dyn Fn(&str) + Send + Sync>) -> View {
        if quiet {
            return View::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            return View::Lines(print);
        }
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        View::Bar(bar)
    }

    pub fn show(&self, f: &Figures) {
        match self {
            View::Quiet => {}
            View::Bar(b) => {
                b.set_length(f.needed_bytes.max(1));
                b.set_position(f.done_bytes.min(f.needed_bytes));
                b.set_message(f.line());
            }
            View::Lines(print) => print(&format!("{} {}", timestamp(), f.line())),
        }
    }

    pub fn finish(&self) {
        if let View::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

/// The sender's progress: its streams' bytes against what the receiver asked for.
pub struct SendProgress {
    view: View,
    /// Payload the streams have sent so far.
    pub sent: u64,
}

impl SendProgress {
    pub fn new(quiet: bool, to_stderr: bool) -> SendProgress {
        let print: Box<dyn Fn(&str) + Send + Sync> = if to_stderr {
            Box::new(|l| eprintln!("{l}"))
        } else {
            Box::new(|l| println!("{l}"))
        };
        SendProgress {
            view: View::new(quiet, print),
            sent: 0,
        }
    }

    pub fn update(&mut self, batch: &[IntervalSample], first: &FirstPass, manifest: &Manifest) {
        let bytes: u64 = batch
            .iter()
            .filter(|s| s.side == Side::Sender)
            .map(|s| s.bytes)
            .sum();
        self.sent += bytes;
        let (start, end) = batch.first().map_or((0.0, 0.0), |s| (s.start, s.end));
        self.view.show(&Figures {
            done_bytes: self.sent,
            needed_bytes: first.bytes_needed,
            files_done: first.files_sent,
            files_needed: first.files_needed,
            growing: !first.listed,
            bits_per_second: rate(bytes, end - start),
            elapsed: end,
            current: first
                .latest
                .and_then(|id| manifest.entry(id))
                .map(|e| e.path.clone()),
        });
    }

    pub fn finish(&self) {
        self.view.finish();
    }
}

fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// The receiver's figures for one of its sessions.
pub fn received(p: &ReceiveProgress) -> Figures {
    Figures {
        done_bytes: p.bytes_written,
        needed_bytes: p.asked.bytes,
        files_done: p.files_written,
        files_needed: p.asked.files,
        growing: !p.asked.listed,
        bits_per_second: p.bits_per_second,
        elapsed: p.elapsed,
        current: None,
    }
}

/// A receiver's progress report: `recv` in the foreground on a terminal
/// draws a bar; otherwise each interval whose end falls on a multiple of
/// `every` seconds is a log line naming the session (`serve --root` may
/// hold many sessions and runs for months: it logs every 10 s).
pub fn receiver_report(bar: bool, every: u64) -> Arc<ProgressReport> {
    let view = View::new(!bar, Box::new(|l: &str| tracing::info!("{l}")));
    if matches!(view, View::Bar(_)) {
        return Arc::new(move |p: &ReceiveProgress| view.show(&received(p)));
    }
    Arc::new(move |p: &ReceiveProgress| {
        if !(p.elapsed.round() as u64).is_multiple_of(every.max(1)) {
            return;
        }
        tracing::info!(
            "session {} into {}: {}",
            p.session,
            p.dest,
            received(p).line()
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        Figures {
            done_bytes: 1 << 30,
            needed_bytes: 4 << 30,
            files_done: 12,
            files_needed: 400,
            growing: false,
            bits_per_second: 9.41e9,
            elapsed: 10.0,
            current: Some("run/a.dat".into()),
        }
    }

    #[test]
    fn a_line_says_percent_files_rate_and_time_left() {
        let line = figures().line();
        assert!(line.contains("(25 %)"), "{line}");
        assert!(line.contains("12/400 files"), "{line}");
        assert!(line.contains("Gbit/s"), "{line}");
        // Three quarters left at a quarter per 10 s.
        assert!(line.contains("ETA 0:30"), "{line}");
        assert!(line.ends_with(", run/a.dat"), "{line}");
    }

    #[test]
    fn growing_totals_give_no_time_left() {
        let f = Figures {
            growing: true,
            ..figures()
        };
        assert_eq!(f.seconds_left(), None);
        assert!(f.line().contains("so far"), "{}", f.line());
        assert!(f.line().contains("ETA -"), "{}", f.line());
    }

    #[test]
    fn all_moved_and_nothing_moving_is_syncing_not_a_rate() {
        let done = Figures {
            done_bytes: 4 << 30,
            needed_bytes: 4 << 30,
            bits_per_second: 0.0,
            current: None,
            ..figures()
        };
        let line = done.line();
        assert!(
            line.ends_with("all moved, syncing at the receiver"),
            "{line}"
        );
        assert!(!line.contains("ETA") && !line.contains("bit/s"), "{line}");
        // The interval that moved the last bytes still gives its rate.
        let last = Figures {
            bits_per_second: 9.41e9,
            ..done.clone()
        };
        assert!(last.line().contains("Gbit/s, ETA 0:00"), "{}", last.line());
        // Still listing: more may be needed.
        let growing = Figures {
            growing: true,
            ..done
        };
        assert!(growing.line().contains("ETA -"), "{}", growing.line());
    }

    #[test]
    fn nothing_needed_has_no_percent() {
        let f = Figures {
            needed_bytes: 0,
            done_bytes: 0,
            ..figures()
        };
        assert_eq!(f.percent(), None);
    }

    #[test]
    fn clock_reads_minutes_and_hours() {
        assert_eq!(clock(42.4), "0:42");
        assert_eq!(clock(3725.0), "1:02:05");
    }
}
