//! Where a lab records what it created, so `lab down` can always undo it.

use std::path::{Path, PathBuf};

use crate::LabError;

/// Directory of lab state files; `LINERATE_LAB_DIR` overrides it (tests).
pub fn dir() -> PathBuf {
    std::env::var_os("LINERATE_LAB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/linerate/lab"))
}

/// Where lab `name`'s state is recorded.
pub fn state_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.json"))
}

/// Where lab `name`'s impairments are asked of its emulator.
pub fn impairments_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.impairments.json"))
}

/// The impairments the emulator last put in force, byte for byte.
pub fn applied_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.applied.json"))
}

/// Where lab `name`'s emulator writes its counters.
pub fn counters_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.counters.json"))
}

/// Where lab `name`'s emulator finds its hosts and ports.
pub fn emulator_plan_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.emulator.json"))
}

/// Where lab `name`'s emulator writes its log.
pub fn emulator_log_file(name: &str) -> PathBuf {
    dir().join(format!("{name}.emulator.log"))
}

/// Every file a lab may leave in the state directory.
pub fn files(name: &str) -> [PathBuf; 6] {
    [
        state_file(name),
        impairments_file(name),
        applied_file(name),
        counters_file(name),
        emulator_plan_file(name),
        emulator_log_file(name),
    ]
}

/// Lab `name`'s lock, held while a command builds, changes or removes it.
pub struct LabLock {
    file: std::fs::File,
    path: PathBuf,
}

impl LabLock {
    /// Removes the lock's file, as the last step of taking the lab down: a
    /// waiter that took the lock of the removed file sees it gone and
    /// takes the new one's.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.file);
    }
}

/// Waits for and takes lab `name`'s lock: a `lab down` started while its
/// `lab up` still runs waits for it, then removes all it made (taken at
/// the same time, the down removed half a lab and the up failed, leaving
/// state files).
pub fn lock(name: &str) -> Result<LabLock, LabError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let path = dir().join(format!("{name}.lock"));
    std::fs::create_dir_all(dir()).map_err(|e| LabError::io("creating", dir(), e))?;
    loop {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| LabError::io("opening", &path, e))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| LabError::io("locking", &path, e.into()))?;
        let held = file
            .metadata()
            .map_err(|e| LabError::io("reading the metadata of", &path, e))?;
        // Still the file at the path, not one a down removed meanwhile.
        if std::fs::metadata(&path).is_ok_and(|now| now.ino() == held.ino()) {
            return Ok(LabLock { file, path });
        }
    }
}

/// Writes through a temporary file and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    linerate_emulator::write_atomic(path, bytes).map_err(|e| LabError::io("writing", path, e))
}

/// Names of labs that have a state file.
pub fn names() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .filter(|n| !n.contains('.'))
        .collect();
    names.sort();
    names
}

/// A process we started, identified by PID and start time so a reused PID is never signalled.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProcessId {
    /// Its PID.
    pub pid: u32,
    /// Its start time, clock ticks after boot (/proc/PID/stat).
    pub start_time: u64,
}

impl ProcessId {
    /// Process `pid` as it is now, if it runs.
    pub fn of(pid: u32) -> Option<ProcessId> {
        Some(ProcessId {
            pid,
            start_time: start_time(pid)?,
        })
    }

    /// Whether the process is still the one we started and has not exited.
    pub fn alive(&self) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else {
            return false;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.first().is_some_and(|s| *s != "Z" && *s != "X")
            && fields.get(19).and_then(|s| s.parse().ok()) == Some(self.start_time)
    }
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    // Field 22 of /proc/PID/stat, the 20th after the command name.
    rest.split_whitespace().nth(19)?.parse().ok()
}
