//! Where the auditor reads from: the live system, or a fixture tree laid out
//! like it (`proc/`, `sys/`, plus `ethtool/IF.json` and `tc/qdisc.json` for
//! what only an ioctl or netlink can tell). A live root can also copy every
//! file it reads into a capture tree, which is how the fixture of this
//! machine was made.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::ethtool::{self, EthtoolFacts};
use crate::netlink;

/// Where the host's /proc and /sys are read from: this machine's, or a captured or hand-written tree.
#[derive(Debug, Clone)]
pub struct SysRoot {
    base: PathBuf,
    live: bool,
    capture: Option<PathBuf>,
}

impl SysRoot {
    /// The running system: `/proc`, `/sys`, ethtool ioctls and rtnetlink.
    pub fn live() -> SysRoot {
        SysRoot {
            base: PathBuf::from("/"),
            live: true,
            capture: None,
        }
    }

    /// A fixture tree: every read, including ethtool and qdisc facts, comes
    /// from files under `dir`.
    pub fn fixture(dir: impl Into<PathBuf>) -> SysRoot {
        SysRoot {
            base: dir.into(),
            live: false,
            capture: None,
        }
    }

    /// Also copy everything read into `dir`, as a fixture tree.
    pub fn capturing(mut self, dir: impl Into<PathBuf>) -> SysRoot {
        self.capture = Some(dir.into());
        self
    }

    /// It reads this machine.
    pub fn is_live(&self) -> bool {
        self.live
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel.trim_start_matches('/'))
    }

    /// A file's content with surrounding whitespace removed.
    pub fn read(&self, rel: &str) -> io::Result<String> {
        let text = std::fs::read_to_string(self.path(rel))?;
        self.record(rel, &text);
        Ok(text.trim().to_string())
    }

    /// A sysctl by its dotted name, with runs of whitespace made one space
    /// (as `sysctl -n` prints tcp_rmem with tabs).
    pub fn sysctl(&self, key: &str) -> io::Result<String> {
        let v = self.read(&sysctl_path(key))?;
        Ok(v.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// Entry names of a directory, sorted.
    pub fn list(&self, rel: &str) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if let Some(cap) = &self.capture {
            let _ = std::fs::create_dir_all(cap.join(rel.trim_start_matches('/')));
        }
        Ok(names)
    }

    /// Like [`list`](Self::list) for a directory whose entry names are the
    /// information (msi_irqs/37): a capture keeps them as empty files.
    pub fn list_names(&self, rel: &str) -> io::Result<Vec<String>> {
        let names = self.list(rel)?;
        if let Some(cap) = &self.capture {
            let dir = cap.join(rel.trim_start_matches('/'));
            for n in &names {
                if !dir.join(n).exists() {
                    let _ = std::fs::write(dir.join(n), "");
                }
            }
        }
        Ok(names)
    }

    /// Whether `rel` exists under the root.
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// The directory a sysfs link points to, relative to the root, for
    /// walking from a net device to its bus device.
    pub fn resolve(&self, rel: &str) -> Option<PathBuf> {
        let real = std::fs::canonicalize(self.path(rel)).ok()?;
        let base = std::fs::canonicalize(&self.base).ok()?;
        let found = real.strip_prefix(base).ok().map(Path::to_path_buf)?;
        if let Some(cap) = &self.capture {
            // Keep the link, relative, so the captured tree resolves alike.
            let link = cap.join(rel.trim_start_matches('/'));
            let depth = Path::new(rel.trim_start_matches('/'))
                .components()
                .count()
                .saturating_sub(1);
            let target = PathBuf::from("../".repeat(depth)).join(&found);
            // A marker file, so that version control keeps the directory.
            let _ = std::fs::create_dir_all(cap.join(&found));
            let _ = std::fs::write(cap.join(&found).join(".captured"), "");
            if let Some(parent) = link.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::os::unix::fs::symlink(target, &link);
        }
        Some(found)
    }

    /// What the ethtool ioctls report for one interface.
    pub fn ethtool(&self, iface: &str) -> EthtoolFacts {
        let facts = if self.live {
            ethtool::query(iface)
        } else {
            std::fs::read_to_string(self.path(&format!("ethtool/{iface}.json")))
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_else(|| EthtoolFacts::unreadable("no ethtool facts in the fixture"))
        };
        if let Some(cap) = &self.capture {
            let dir = cap.join("ethtool");
            let _ = std::fs::create_dir_all(&dir);
            if let Ok(json) = serde_json::to_string_pretty(&facts) {
                let _ = std::fs::write(dir.join(format!("{iface}.json")), json);
            }
        }
        facts
    }

    /// The root qdisc of every interface, by interface index.
    pub fn root_qdiscs(&self) -> io::Result<BTreeMap<u32, String>> {
        let map = if self.live {
            netlink::root_qdiscs()?
        } else {
            let text = std::fs::read_to_string(self.path("tc/qdisc.json"))?;
            serde_json::from_str(&text).map_err(io::Error::other)?
        };
        if let Some(cap) = &self.capture {
            let dir = cap.join("tc");
            let _ = std::fs::create_dir_all(&dir);
            if let Ok(json) = serde_json::to_string_pretty(&map) {
                let _ = std::fs::write(dir.join("qdisc.json"), json);
            }
        }
        Ok(map)
    }

    fn record(&self, rel: &str, text: &str) {
        if let Some(cap) = &self.capture {
            let dest = cap.join(rel.trim_start_matches('/'));
            if let Some(parent) = dest.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(dest, text);
        }
    }
}

/// `net.ipv4.tcp_rmem` -> `proc/sys/net/ipv4/tcp_rmem`.
pub fn sysctl_path(key: &str) -> String {
    format!("proc/sys/{}", key.replace('.', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_values_are_normalised_like_sysctl_n() {
        let dir = std::env::temp_dir().join(format!("lr-tune-src-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/sys/net/ipv4")).unwrap();
        std::fs::write(
            dir.join("proc/sys/net/ipv4/tcp_rmem"),
            "4096\t131072\t6291456\n",
        )
        .unwrap();
        let root = SysRoot::fixture(&dir);
        assert_eq!(
            root.sysctl("net.ipv4.tcp_rmem").unwrap(),
            "4096 131072 6291456"
        );
        assert!(root.sysctl("net.ipv4.tcp_wmem").is_err());
        assert!(root.ethtool("eth0").error.is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
