//! The cgroup a process runs in and the CPU it allows: a Slurm job, a
//! container or a systemd slice with a quota gets a share of a core however
//! idle the host is, and a verdict that does not know says "CPU" and
//! suggests faster cores.
//!
//! Both versions: v1's `cpu` controller (`cpu.cfs_quota_us`,
//! `cpu.cfs_period_us`, `cpu.stat` in nanoseconds) and v2's unified
//! hierarchy (`cpu.max`, `cpu.stat` in microseconds). The parsers take the
//! files' text, so fixtures test them; [`Cgroup::own`] finds the files.

use std::path::{Path, PathBuf};

use linerate_result::{CgroupCpu, CgroupLimits};

/// A cgroup's CPU files: where they are and in which version's format.
#[derive(Debug, Clone, PartialEq)]
pub struct Cgroup {
    /// 1 or 2.
    pub version: u8,
    /// The cgroup's path inside its hierarchy, as /proc/self/cgroup says.
    pub path: String,
    /// The cgroup's directory with the CPU controller's files (the nearest
    /// ancestor with a quota where the cgroup itself has none: a parent's
    /// quota throttles its children).
    pub cpu_dir: PathBuf,
    /// The directory of the cpuset controller, where it is mounted apart.
    pub cpuset_dir: Option<PathBuf>,
    /// The directory of the memory controller, where it is mounted apart.
    pub memory_dir: Option<PathBuf>,
}

/// The throttling counters of `cpu.stat`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuStat {
    /// Enforcement periods that have elapsed with runnable threads.
    pub periods: u64,
    /// Of them, periods in which the quota ran out.
    pub throttled_periods: u64,
    /// Time the threads were held back, seconds.
    pub throttled_seconds: f64,
}

impl CpuStat {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &CpuStat) -> CpuStat {
        CpuStat {
            periods: self.periods.saturating_sub(before.periods),
            throttled_periods: self
                .throttled_periods
                .saturating_sub(before.throttled_periods),
            throttled_seconds: (self.throttled_seconds - before.throttled_seconds).max(0.0),
        }
    }
}

/// One line of /proc/self/cgroup: the controllers and the path.
#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    /// Hierarchy id (0: the v2 unified hierarchy).
    pub id: u32,
    /// Controllers of a v1 hierarchy (empty for v2).
    pub controllers: Vec<String>,
    /// The path inside the hierarchy.
    pub path: String,
}

/// /proc/self/cgroup's lines; malformed ones are left out.
pub fn parse_memberships(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?.parse().ok()?;
            let controllers = parts.next()?;
            let path = parts.next()?.to_string();
            Some(Membership {
                id,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect(),
                path,
            })
        })
        .collect()
}

/// A cgroup file system mount from /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    /// The path of the hierarchy that is mounted (the mount's root).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// `cgroup` or `cgroup2`.
    pub fstype: String,
    /// Super options: a v1 mount's controllers are among them.
    pub options: Vec<String>,
}

/// The cgroup mounts of a mountinfo text.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let (root, mount_point) = (fields.get(3)?, fields.get(4)?);
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let _source = right.next()?;
            let options = right.next().unwrap_or("");
            fstype.starts_with("cgroup").then(|| Mount {
                root: unescape(root),
                mount_point: PathBuf::from(unescape(mount_point)),
                fstype: fstype.to_string(),
                options: options.split(',').map(String::from).collect(),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// The directory of `controller`'s files for a process with these
/// memberships and mounts: under v1 the hierarchy that has the controller,
/// under v2 the unified one.
pub fn controller_dir(
    controller: &str,
    memberships: &[Membership],
    mounts: &[Mount],
) -> Option<(u8, String, PathBuf)> {
    let v1 = memberships
        .iter()
        .find(|m| m.controllers.iter().any(|c| c == controller))
        .and_then(|m| {
            let mount = mounts
                .iter()
                .find(|mt| mt.fstype == "cgroup" && mt.options.iter().any(|o| o == controller))?;
            Some((1, m.path.clone(), join(mount, &m.path)?))
        });
    v1.or_else(|| {
        let m = memberships.iter().find(|m| m.id == 0)?;
        let mount = mounts.iter().find(|mt| mt.fstype == "cgroup2")?;
        Some((2, m.path.clone(), join(mount, &m.path)?))
    })
}

/// The directory of cgroup `path` under `mount`, whose root may be a
/// sub-tree (a container sees its own cgroup as the root).
fn join(mount: &Mount, path: &str) -> Option<PathBuf> {
    let inside = path.strip_prefix(mount.root.trim_end_matches('/'))?;
    Some(mount.mount_point.join(inside.trim_start_matches('/')))
}

/// v1: `cpu.cfs_quota_us` and `cpu.cfs_period_us` as cores; None where
/// the quota is -1 (none).
pub fn quota_v1(quota_us: &str, period_us: &str) -> Option<f64> {
    let quota: i64 = quota_us.trim().parse().ok()?;
    let period: f64 = period_us.trim().parse().ok()?;
    (quota > 0 && period > 0.0).then(|| quota as f64 / period)
}

/// v2: `cpu.max` ("max 100000" or "10000 100000") as cores.
pub fn quota_v2(cpu_max: &str) -> Option<f64> {
    let mut parts = cpu_max.split_whitespace();
    let quota: f64 = parts.next()?.parse().ok()?;
    let period: f64 = parts.next().unwrap_or("100000").parse().ok()?;
    (quota > 0.0 && period > 0.0).then_some(quota / period)
}

/// `cpu.stat`'s throttling counters: v1 gives `throttled_time` in
/// nanoseconds, v2 `throttled_usec`.
pub fn parse_cpu_stat(text: &str) -> CpuStat {
    let mut stat = CpuStat::default();
    for line in text.lines() {
        let mut kv = line.split_whitespace();
        let (Some(key), Some(value)) = (kv.next(), kv.next()) else {
            continue;
        };
        let Ok(value) = value.parse::<u64>() else {
            continue;
        };
        match key {
            "nr_periods" => stat.periods = value,
            "nr_throttled" => stat.throttled_periods = value,
            "throttled_time" => stat.throttled_seconds = value as f64 / 1e9,
            "throttled_usec" => stat.throttled_seconds = value as f64 / 1e6,
            _ => {}
        }
    }
    stat
}

/// CPUs in a cpuset list such as "0-3,8,10-11"; None where it is empty
/// or malformed.
pub fn cpuset_count(list: &str) -> Option<u32> {
    let mut count = 0u32;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        count += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
    }
    (count > 0).then_some(count)
}

/// A memory limit file's value ("max" or v1's near-2^63 mean none).
pub fn memory_limit(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < 1 << 62).then_some(v)
}

fn read(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file)).ok()
}

impl Cgroup {
    /// The cgroup this process runs in, where its CPU files can be read
    /// (not under `ip netns exec`, and so `lab exec`: it mounts a fresh
    /// sysfs over /sys, which hides /sys/fs/cgroup).
    pub fn own() -> Option<Cgroup> {
        let memberships = parse_memberships(&std::fs::read_to_string("/proc/self/cgroup").ok()?);
        let mounts = parse_mounts(&std::fs::read_to_string("/proc/self/mountinfo").ok()?);
        Cgroup::of(&memberships, &mounts)
    }

    /// The cgroup of a process with these memberships and mounts.
    pub fn of(memberships: &[Membership], mounts: &[Mount]) -> Option<Cgroup> {
        let (version, path, dir) = controller_dir("cpu", memberships, mounts)
            .filter(|(_, _, dir)| dir.join("cpu.stat").exists())?;
        let apart = |controller| {
            controller_dir(controller, memberships, mounts)
                .map(|(_, _, d)| d)
                .filter(|d| *d != dir)
        };
        let cpu_dir = Self::nearest_quota(version, &dir).unwrap_or_else(|| dir.clone());
        Some(Cgroup {
            version,
            path,
            cpuset_dir: apart("cpuset"),
            memory_dir: apart("memory"),
            cpu_dir,
        })
    }

    /// `dir` or its nearest ancestor with a quota, up to the mount.
    fn nearest_quota(version: u8, dir: &Path) -> Option<PathBuf> {
        dir.ancestors()
            .take_while(|d| d.join("cpu.stat").exists())
            .find(|d| quota_at(version, d).is_some())
            .map(Path::to_path_buf)
    }

    /// Cores the quota allows, if there is one.
    pub fn quota_cores(&self) -> Option<f64> {
        quota_at(self.version, &self.cpu_dir)
    }

    /// The throttling counters now.
    pub fn cpu_stat(&self) -> CpuStat {
        read(&self.cpu_dir, "cpu.stat").map_or_else(CpuStat::default, |t| parse_cpu_stat(&t))
    }

    /// CPUs the cpuset allows, where it allows fewer than the host has.
    pub fn cpuset_cpus(&self) -> Option<u32> {
        let dir = self.cpuset_dir.as_ref().unwrap_or(&self.cpu_dir);
        let count = [
            "cpuset.effective_cpus",
            "cpuset.cpus.effective",
            "cpuset.cpus",
        ]
        .iter()
        .find_map(|f| read(dir, f).and_then(|t| cpuset_count(&t)))?;
        (count < crate::cpu::cpus()).then_some(count)
    }

    /// The memory limit, where there is one.
    pub fn memory_limit_bytes(&self) -> Option<u64> {
        let dir = self.memory_dir.as_ref().unwrap_or(&self.cpu_dir);
        ["memory.max", "memory.limit_in_bytes"]
            .iter()
            .find_map(|f| read(dir, f).and_then(|t| memory_limit(&t)))
    }

    /// The limits, for the host facts; None where none limits anything.
    pub fn limits(&self) -> Option<CgroupLimits> {
        let limits = CgroupLimits {
            version: self.version,
            path: self.path.clone(),
            quota_cores: self.quota_cores(),
            cpuset_cpus: self.cpuset_cpus(),
            memory_limit_bytes: self.memory_limit_bytes(),
        };
        (limits.quota_cores.is_some()
            || limits.cpuset_cpus.is_some()
            || limits.memory_limit_bytes.is_some())
        .then_some(limits)
    }

    /// What the quota did between `before` and now, where there is a
    /// quota or a cpuset to report.
    pub fn cpu_since(&self, before: &CpuStat) -> Option<CgroupCpu> {
        let quota_cores = self.quota_cores();
        let cpuset_cpus = self.cpuset_cpus();
        if quota_cores.is_none() && cpuset_cpus.is_none() {
            return None;
        }
        let d = self.cpu_stat().since(before);
        Some(CgroupCpu {
            version: self.version,
            quota_cores,
            cpuset_cpus,
            periods: d.periods,
            throttled_periods: d.throttled_periods,
            throttled_seconds: d.throttled_seconds,
        })
    }
}

fn quota_at(version: u8, dir: &Path) -> Option<f64> {
    match version {
        1 => quota_v1(
            &read(dir, "cpu.cfs_quota_us")?,
            &read(dir, "cpu.cfs_period_us")?,
        ),
        _ => quota_v2(&read(dir, "cpu.max")?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kind: v1 controllers beside an empty v2 hierarchy.
    const V1_CGROUP: &str =
        "9:name=systemd:/\n4:memory:/jobs/42\n2:cpuacct:/\n1:cpu:/jobs/42\n0::/\n";
    const V1_MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n\
31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n\
32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
22 1 8:1 / / rw - ext4 /dev/vda1 rw\n";
    /// A systemd host or a container: the unified hierarchy alone, the
    /// container's own cgroup mounted as the root.
    const V2_CGROUP: &str = "0::/system.slice/job.scope\n";
    const V2_MOUNTS: &str =
        "40 30 0:35 /system.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";

    #[test]
    fn finds_the_cpu_controller_in_either_version() {
        let (v, path, dir) = controller_dir(
            "cpu",
            &parse_memberships(V1_CGROUP),
            &parse_mounts(V1_MOUNTS),
        )
        .unwrap();
        assert_eq!((v, path.as_str()), (1, "/jobs/42"));
        assert_eq!(dir, PathBuf::from("/sys/fs/cgroup/cpu/jobs/42"));
        let (v, _, dir) = controller_dir(
            "cpu",
            &parse_memberships(V2_CGROUP),
            &parse_mounts(V2_MOUNTS),
        )
        .unwrap();
        assert_eq!(v, 2);
        assert_eq!(dir, PathBuf::from("/sys/fs/cgroup/job.scope"));
        // A v1 controller not mounted: the unified hierarchy is used.
        let (v, _, _) = controller_dir(
            "cpuset",
            &parse_memberships(V1_CGROUP),
            &parse_mounts(V1_MOUNTS),
        )
        .unwrap();
        assert_eq!(v, 2);
    }

    #[test]
    fn quotas_in_both_formats() {
        assert_eq!(quota_v1("10000\n", "100000\n"), Some(0.1));
        assert_eq!(quota_v1("-1\n", "100000\n"), None);
        assert_eq!(quota_v2("max 100000\n"), None);
        assert_eq!(quota_v2("5000 100000\n"), Some(0.05));
        assert_eq!(quota_v2("250000 100000\n"), Some(2.5));
        assert_eq!(quota_v2("garbage"), None);
    }

    #[test]
    fn throttling_counters_in_both_units() {
        let v1 = "nr_periods 40\nnr_throttled 33\nthrottled_time 3300000000\nnr_bursts 0\n";
        let s = parse_cpu_stat(v1);
        assert_eq!((s.periods, s.throttled_periods), (40, 33));
        assert!((s.throttled_seconds - 3.3).abs() < 1e-9);
        let v2 = "usage_usec 100\nuser_usec 50\nsystem_usec 50\nnr_periods 10\nnr_throttled 9\nthrottled_usec 850000\n";
        let s = parse_cpu_stat(v2);
        assert_eq!((s.periods, s.throttled_periods), (10, 9));
        assert!((s.throttled_seconds - 0.85).abs() < 1e-9);
        let later = CpuStat {
            periods: 50,
            throttled_periods: 43,
            throttled_seconds: 4.3,
        };
        let d = later.since(&parse_cpu_stat(v1));
        assert_eq!((d.periods, d.throttled_periods), (10, 10));
        assert!((d.throttled_seconds - 1.0).abs() < 1e-9);
        assert_eq!(parse_cpu_stat("nr_periods x\n\n"), CpuStat::default());
    }

    #[test]
    fn cpusets_and_memory_limits() {
        assert_eq!(cpuset_count("0-3,8,10-11\n"), Some(7));
        assert_eq!(cpuset_count("1\n"), Some(1));
        assert_eq!(cpuset_count("\n"), None);
        assert_eq!(cpuset_count("3-1"), None);
        assert_eq!(memory_limit("max\n"), None);
        assert_eq!(memory_limit("9223372036854771712\n"), None);
        assert_eq!(memory_limit("1073741824\n"), Some(1 << 30));
    }

    #[test]
    fn reads_a_cgroup_laid_out_as_the_kernel_does() {
        let root = std::env::temp_dir().join(format!("linerate-cgroup-{}", std::process::id()));
        let job = root.join("cpu/jobs/42");
        std::fs::create_dir_all(&job).unwrap();
        for (dir, quota) in [(root.join("cpu"), "-1"), (root.join("cpu/jobs"), "10000")] {
            std::fs::write(dir.join("cpu.cfs_quota_us"), quota).unwrap();
            std::fs::write(dir.join("cpu.cfs_period_us"), "100000").unwrap();
            std::fs::write(dir.join("cpu.stat"), "nr_periods 0\n").unwrap();
        }
        std::fs::write(job.join("cpu.cfs_quota_us"), "-1").unwrap();
        std::fs::write(job.join("cpu.cfs_period_us"), "100000").unwrap();
        std::fs::write(job.join("cpu.stat"), "nr_periods 5\n").unwrap();
        let mounts = format!(
            "30 25 0:26 / {} rw - cgroup cgroup rw,cpu\n",
            root.join("cpu").display()
        );
        let cg = Cgroup::of(&parse_memberships(V1_CGROUP), &parse_mounts(&mounts)).unwrap();
        // The job's own cgroup has no quota; its parent's holds it.
        assert_eq!(cg.cpu_dir, root.join("cpu/jobs"));
        assert_eq!(cg.quota_cores(), Some(0.1));
        std::fs::write(
            root.join("cpu/jobs/cpu.stat"),
            "nr_periods 20\nnr_throttled 18\nthrottled_time 1500000000\n",
        )
        .unwrap();
        let used = cg.cpu_since(&CpuStat::default()).unwrap();
        assert_eq!((used.periods, used.throttled_periods), (20, 18));
        assert_eq!(used.quota_cores, Some(0.1));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn malformed_files_give_nothing_and_never_panic() {
        assert!(parse_memberships("x\n:\n1:cpu\n").is_empty());
        assert!(parse_mounts("nonsense - \n - cgroup\n").is_empty());
        assert_eq!(quota_v1("", ""), None);
    }
}
