//! Applying sysctl settings and putting the previous values back exactly.
//!
//! The previous values are saved to a state file before the first write, so
//! a crash mid-apply can still be reverted. A failed write rolls back the
//! ones before it; nothing is left half-applied without an error saying so.
//! Settings whose file does not exist under the sysctl directory are skipped
//! and reported: inside a network namespace that is how host-wide sysctls
//! (netdev_max_backlog, default_qdisc) show themselves, and they are never
//! changed from there.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::Setting;
use crate::{TuneError, io_err};

/// One setting as apply changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The sysctl's key.
    pub key: String,
    /// Its value before (what revert puts back).
    pub previous: String,
    /// The value applied.
    pub applied: String,
}

/// What an apply changed, saved so revert can undo it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// `linerate.tune-state/1`.
    pub schema: String,
    /// When it was applied, seconds since the Unix epoch.
    pub applied_at: f64,
    /// "host" or "netns NAME".
    pub scope: String,
    /// What was applied: a plan file or a profile name.
    pub source: String,
    /// Every setting changed.
    pub entries: Vec<Entry>,
}

/// What an apply did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Settings it changed.
    pub changed: Vec<Entry>,
    /// Already at the wanted value.
    pub unchanged: Vec<String>,
    /// (key, reason) for settings not applied.
    pub skipped: Vec<(String, String)>,
}

/// Where state is kept: $LINERATE_TUNE_DIR or /var/lib/linerate/tune,
/// one file per scope.
pub fn state_path(scope_file: &str) -> PathBuf {
    let dir = std::env::var_os("LINERATE_TUNE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/lib/linerate/tune"));
    dir.join(format!("{scope_file}.json"))
}

fn normalise(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn file_of(proc_sys: &Path, key: &str) -> Result<PathBuf, TuneError> {
    if key.is_empty()
        || key
            .split('.')
            .any(|p| p.is_empty() || p == ".." || p.contains('/'))
    {
        return Err(TuneError::NotASysctl(key.to_string()));
    }
    Ok(proc_sys.join(key.replace('.', "/")))
}

fn read(proc_sys: &Path, key: &str) -> Result<String, TuneError> {
    let p = file_of(proc_sys, key)?;
    std::fs::read_to_string(&p)
        .map(|s| normalise(&s))
        .map_err(io_err("reading", &p))
}

/// Writes one value and checks the kernel kept it.
fn write(proc_sys: &Path, key: &str, value: &str) -> Result<(), TuneError> {
    let p = file_of(proc_sys, key)?;
    std::fs::write(&p, format!("{value}\n")).map_err(io_err("setting", &p))?;
    let now = read(proc_sys, key)?;
    if now != normalise(value) {
        return Err(TuneError::NotKept {
            key: key.to_string(),
            wrote: value.to_string(),
            now,
        });
    }
    Ok(())
}

fn save(path: &Path, state: &State) -> Result<(), TuneError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err("creating", dir))?;
    }
    let tmp = path.with_extension("json.tmp");
    let json = serde_json::to_vec_pretty(state).map_err(TuneError::Unwritable)?;
    std::fs::write(&tmp, json).map_err(io_err("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err("writing", path))
}

/// The saved state of an apply, from `path`.
pub fn load(path: &Path) -> Result<State, TuneError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            TuneError::NothingApplied(path.to_path_buf())
        } else {
            io_err("reading", path)(e)
        }
    })?;
    serde_json::from_str(&text).map_err(|error| TuneError::StateCorrupt {
        path: path.to_path_buf(),
        error,
    })
}

/// Why `key` cannot be changed under `proc_sys`, if it cannot.
fn not_writable(proc_sys: &Path, key: &str, host: bool) -> Result<Option<&'static str>, TuneError> {
    let file = file_of(proc_sys, key)?;
    if !file.exists() {
        return Ok(Some(if host {
            "this kernel has no such sysctl"
        } else {
            "host-wide: not visible inside a network namespace, left unchanged"
        }));
    }
    // In a namespace some sysctls are shown but read-only (rmem_max,
    // wmem_max on 6.x): they follow the host's.
    let mode = std::fs::metadata(&file)
        .map(|m| m.permissions().mode())
        .unwrap_or(0);
    Ok((mode & 0o222 == 0).then_some("read-only here (it follows the host's value)"))
}

/// Writes `settings` without saving what was there, for namespaces that
/// are thrown away afterwards; settings this tree cannot change are
/// skipped as `apply` skips them. Returns (key, reason) for those.
pub fn set(settings: &[Setting], proc_sys: &Path) -> Result<Vec<(String, String)>, TuneError> {
    let mut skipped = Vec::new();
    for s in settings {
        match not_writable(proc_sys, &s.key, false)? {
            Some(why) => skipped.push((s.key.clone(), why.to_string())),
            None => write(proc_sys, &s.key, &s.value)?,
        }
    }
    Ok(skipped)
}

/// Applies `settings` under `proc_sys` (normally /proc/sys, as seen from the
/// calling thread's network namespace).
pub fn apply(
    settings: &[Setting],
    proc_sys: &Path,
    state_file: &Path,
    scope: &str,
    source: &str,
) -> Result<Report, TuneError> {
    if state_file.exists() {
        return Err(TuneError::AlreadyApplied(state_file.to_path_buf()));
    }
    let mut report = Report::default();
    let mut todo = Vec::new();
    for s in settings {
        if let Some(why) = not_writable(proc_sys, &s.key, scope == "host")? {
            report.skipped.push((s.key.clone(), why.into()));
            continue;
        }
        let previous = read(proc_sys, &s.key)?;
        if previous == normalise(&s.value) {
            report.unchanged.push(s.key.clone());
        } else {
            todo.push(Entry {
                key: s.key.clone(),
                previous,
                applied: normalise(&s.value),
            });
        }
    }
    let mut state = State {
        schema: "linerate.tune-state/1".into(),
        applied_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        scope: scope.into(),
        source: source.into(),
        entries: todo.clone(),
    };
    if todo.is_empty() {
        return Ok(report);
    }
    save(state_file, &state)?;
    for (done, e) in todo.iter().enumerate() {
        if let Err(err) = write(proc_sys, &e.key, &e.applied) {
            let mut stuck = Vec::new();
            for back in todo[..done].iter().rev() {
                if write(proc_sys, &back.key, &back.previous).is_err() {
                    stuck.push(back.clone());
                }
            }
            if stuck.is_empty() {
                let _ = std::fs::remove_file(state_file);
                return Err(TuneError::Undone {
                    error: Box::new(err),
                    restored: done,
                });
            }
            state.entries = stuck;
            save(state_file, &state)?;
            return Err(TuneError::Stuck {
                error: Box::new(err),
                stuck: state.entries.len(),
                state: state_file.to_path_buf(),
            });
        }
    }
    report.changed = todo;
    Ok(report)
}

/// Restores every saved value, in reverse order, and removes the state
/// once all are back. Entries that fail stay in the state file.
pub fn revert(proc_sys: &Path, state_file: &Path) -> Result<Vec<Entry>, TuneError> {
    let mut state = load(state_file)?;
    let mut failed = Vec::new();
    let mut restored = Vec::new();
    let mut errors = Vec::new();
    for e in state.entries.iter().rev() {
        match write(proc_sys, &e.key, &e.previous) {
            Ok(()) => restored.push(e.clone()),
            Err(err) => {
                errors.push(err);
                failed.push(e.clone());
            }
        }
    }
    if failed.is_empty() {
        std::fs::remove_file(state_file).map_err(io_err("removing", state_file))?;
        return Ok(restored);
    }
    failed.reverse();
    state.entries = failed;
    save(state_file, &state)?;
    Err(TuneError::NotRestored {
        errors,
        state: state_file.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lr-apply-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("net/ipv4")).unwrap();
        std::fs::write(dir.join("net/ipv4/tcp_rmem"), "4096\t131072\t6291456\n").unwrap();
        std::fs::write(dir.join("net/ipv4/tcp_sack"), "1\n").unwrap();
        dir
    }

    fn setting(key: &str, value: &str) -> Setting {
        Setting::new(key, value, "")
    }

    #[test]
    fn apply_then_revert_restores_exactly_and_skips_what_is_absent() {
        let dir = tree("roundtrip");
        let state = dir.join("state/host.json");
        let settings = [
            setting("net.ipv4.tcp_rmem", "4096 131072 134217728"),
            setting("net.ipv4.tcp_sack", "1"),
            setting("net.core.netdev_max_backlog", "250000"),
        ];
        let r = apply(&settings, &dir, &state, "netns x", "test").unwrap();
        assert_eq!(r.changed.len(), 1);
        assert_eq!(r.unchanged, vec!["net.ipv4.tcp_sack".to_string()]);
        assert_eq!(r.skipped.len(), 1);
        assert!(state.exists());
        assert!(apply(&settings, &dir, &state, "netns x", "test").is_err());
        revert(&dir, &state).unwrap();
        assert!(!state.exists());
        assert_eq!(
            read(&dir, "net.ipv4.tcp_rmem").unwrap(),
            "4096 131072 6291456"
        );
        assert!(revert(&dir, &state).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_rolls_back_the_earlier_ones() {
        let dir = tree("rollback");
        let state = dir.join("host.json");
        // A writable attribute that refuses this value: reading works, writing
        // fails (EINVAL, or EACCES without root) and nothing changes.
        std::os::unix::fs::symlink("/sys/class/net/lo/mtu", dir.join("net/ipv4/tcp_wmem")).unwrap();
        let bad = [
            setting("net.ipv4.tcp_rmem", "4096 131072 134217728"),
            setting("net.ipv4.tcp_wmem", "1 2 3"),
        ];
        let err = apply(&bad, &dir, &state, "host", "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("restored"), "{err}");
        assert!(!state.exists());
        assert_eq!(
            read(&dir, "net.ipv4.tcp_rmem").unwrap(),
            "4096 131072 6291456"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn set_writes_what_it_can_and_keeps_no_state() {
        let dir = tree("set");
        let skipped = set(
            &[
                setting("net.ipv4.tcp_rmem", "4096 131072 134217728"),
                setting("net.core.netdev_max_backlog", "250000"),
            ],
            &dir,
        )
        .unwrap();
        assert_eq!(
            read(&dir, "net.ipv4.tcp_rmem").unwrap(),
            "4096 131072 134217728"
        );
        assert_eq!(skipped.len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn refuses_names_that_leave_the_tree() {
        let dir = tree("names");
        let state = dir.join("s.json");
        for k in ["", "net..x", "net.ipv4/../../etc", ".."] {
            assert!(
                apply(&[setting(k, "1")], &dir, &state, "host", "t").is_err(),
                "{k}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
