//! What a running schedule has done and will do next, kept in a file a
//! test at a time (`DATA/schedules/NAME.json`) so that `linerate schedule
//! status` can say it from another process: each test's next start, its
//! last run and how it ended, and its missed runs with why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// A schedule's state, as its file holds it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ScheduleState {
    /// The schedule's name.
    pub schedule: String,
    /// Its file.
    pub file: PathBuf,
    /// The process that follows it, while it does.
    pub pid: Option<u32>,
    /// When it was written, seconds since the epoch.
    pub updated_at: f64,
    /// Its tests, by name.
    pub tests: BTreeMap<String, TestState>,
}

/// One test of a schedule.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TestState {
    /// Its command line.
    pub command: String,
    /// Seconds between its runs.
    pub every_seconds: f64,
    /// When its next run starts, seconds since the epoch.
    pub next_start_at: Option<f64>,
    /// Its run going now started then.
    pub running_since: Option<f64>,
    /// Its last run that ended.
    pub last: Option<LastRun>,
    /// Runs it missed since the schedule started.
    pub missed: u64,
    /// Its last missed run.
    pub last_missed: Option<Missed>,
}

/// A run that ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LastRun {
    /// When it started.
    pub started_at: f64,
    /// How long it ran, seconds.
    pub seconds: f64,
    /// How it ended ("exit status: 0", "ended at its limit").
    pub ended: String,
}

/// A run that did not happen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Missed {
    /// When it was due.
    pub due_at: f64,
    /// Why it did not happen.
    pub why: String,
}

/// The folder schedules keep their state in.
pub fn folder() -> Option<PathBuf> {
    linerate_archive::data_dir().map(|d| d.join("schedules"))
}

impl ScheduleState {
    /// The state file of the schedule `name`.
    pub fn path_of(name: &str) -> Option<PathBuf> {
        folder().map(|f| f.join(format!("{name}.json")))
    }

    /// Writes the state whole (a new file moved over the old one, so a
    /// reader never sees half of it). A state that cannot be written is
    /// said once and does not stop the schedule.
    pub fn save(&mut self, now: f64) {
        self.updated_at = now;
        let Some(path) = Self::path_of(&self.schedule) else {
            return;
        };
        let written = (|| -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let fresh = path.with_extension("json.new");
            std::fs::write(&fresh, serde_json::to_vec_pretty(self)?)?;
            std::fs::rename(&fresh, &path)
        })();
        if let Err(e) = written {
            eprintln!(
                "schedule {}: its state for `schedule status` not written to {}: {e}",
                self.schedule,
                path.display()
            );
        }
    }

    fn read(path: &Path) -> anyhow::Result<ScheduleState> {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_slice(&text)
            .with_context(|| format!("{} is not a schedule's state", path.display()))
    }

    /// Whether the process that wrote it still runs.
    fn alive(&self) -> bool {
        self.pid
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists())
    }
}

/// Every schedule's state (or the one named), by name.
pub fn all(name: Option<&str>) -> anyhow::Result<Vec<ScheduleState>> {
    let Some(dir) = folder() else {
        anyhow::bail!("no data folder (set HOME or XDG_DATA_HOME)");
    };
    if let Some(name) = name {
        let path = dir.join(format!("{name}.json"));
        if !path.exists() {
            anyhow::bail!(
                "no schedule {name} has run here (its state would be {})",
                path.display()
            );
        }
        return Ok(vec![ScheduleState::read(&path)?]);
    }
    let mut states = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(states);
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "json") {
            states.push(ScheduleState::read(&path)?);
        }
    }
    states.sort_by(|a, b| a.schedule.cmp(&b.schedule));
    Ok(states)
}

/// A time as status prints it: UTC to the second, or "-".
fn when(at: Option<f64>) -> String {
    at.map_or_else(|| "-".to_string(), crate::output::utc)
}

/// The states as `schedule status` prints them.
pub fn print(states: &[ScheduleState], now: f64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if states.is_empty() {
        out.push_str("no schedule has run here\n");
    }
    for s in states {
        let how = if s.alive() {
            format!("running as pid {}", s.pid.unwrap_or_default())
        } else {
            format!("stopped; last written {}", when(Some(s.updated_at)))
        };
        let _ = writeln!(
            out,
            "schedule {} ({how}), file {}",
            s.schedule,
            s.file.display()
        );
        let _ = writeln!(
            out,
            "  {:<20} {:>7}  {:<20} {:<40} missed",
            "test", "every", "next run (UTC)", "last run"
        );
        for (name, t) in &s.tests {
            let every = humantime::format_duration(std::time::Duration::from_secs_f64(
                t.every_seconds.max(0.0),
            ))
            .to_string();
            let last = match (&t.running_since, &t.last) {
                (Some(since), _) => format!("running for {:.0} s", (now - since).max(0.0)),
                (None, Some(l)) => format!(
                    "{} {:.1} s, {}",
                    when(Some(l.started_at)),
                    l.seconds,
                    l.ended
                ),
                (None, None) => "-".to_string(),
            };
            let missed = match &t.last_missed {
                Some(m) => format!(
                    "{} (last due {}: {})",
                    t.missed,
                    when(Some(m.due_at)),
                    m.why
                ),
                None => t.missed.to_string(),
            };
            let next = if s.alive() {
                when(t.next_start_at)
            } else {
                "-".to_string()
            };
            let _ = writeln!(
                out,
                "  {name:<20} {every:>7}  {next:<20} {last:<40} {missed}"
            );
        }
    }
    out
}
