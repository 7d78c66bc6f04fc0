//! Names and metadata helpers of the receiver's files: the hidden names a
//! file, a journal and a new directory carry until they are complete.

use rustix::fs::{Timespec, Timestamps};

/// The process's file mode creation mask, from /proc (reading it with
/// umask(2) would change it, racing other threads).
pub(super) fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o7777)
}

/// Splits "a/b/c" into ("a/b", "c").
pub(super) fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// A hidden name beside `name` ending in `suffix` (hashed when too long).
fn hidden_name(name: &str, suffix: &str) -> String {
    if name.len() <= 240 {
        format!(".{name}{suffix}")
    } else {
        format!(
            ".lr{:016x}{suffix}",
            twox_hash::XxHash3_64::oneshot(name.as_bytes())
        )
    }
}

pub(super) fn temp_name(name: &str) -> String {
    hidden_name(name, ".lrpart")
}

/// Where a new directory is built until the transfer is complete.
pub(super) fn stage_name(name: &str) -> String {
    hidden_name(name, ".lrstage")
}

pub(super) fn journal_name(name: &str) -> String {
    hidden_name(name, ".lrjournal")
}

/// Whether `name` is one of the hidden names above (a transfer's file,
/// journal or directory in the making).
pub(super) fn is_staging(name: &str) -> bool {
    name.starts_with('.')
        && [".lrpart", ".lrstage", ".lrjournal"]
            .iter()
            .any(|s| name.ends_with(s))
}

pub(super) fn timestamps(mtime_ns: i64) -> Timestamps {
    let t = Timespec {
        tv_sec: mtime_ns.div_euclid(1_000_000_000),
        tv_nsec: mtime_ns.rem_euclid(1_000_000_000) as _,
    };
    Timestamps {
        last_access: t,
        last_modification: t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_names_stay_within_the_name_limit() {
        assert_eq!(temp_name("data.h5"), ".data.h5.lrpart");
        assert_eq!(journal_name("x"), ".x.lrjournal");
        assert_eq!(stage_name("run7"), ".run7.lrstage");
        let long = "n".repeat(255);
        let (a, b) = (temp_name(&long), journal_name(&long));
        assert!(a.len() <= 255 && b.len() <= 255);
        assert!(a.starts_with(".lr") && a.ends_with(".lrpart"));
        assert_ne!(temp_name(&long), temp_name(&"m".repeat(255)));
    }

    #[test]
    fn splits_paths_and_times() {
        assert_eq!(split("a/b/c"), ("a/b", "c"));
        assert_eq!(split("c"), ("", "c"));
        let t = timestamps(-1);
        assert_eq!(
            (t.last_modification.tv_sec, t.last_modification.tv_nsec),
            (-1, 999_999_999)
        );
    }
}
