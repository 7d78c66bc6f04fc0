//! Judging facts against a target: one finding per setting, with the
//! current value, the recommended one, why, how bad, and the exact fix.
//! Recommendations never lower a value that is already larger.
//!
//! Sources: ESnet's fasterdata host-tuning pages for 100-400G hosts (buffer
//! maxima, netdev_max_backlog 250000, fq pacing, MTU 9000, tcp_mtu_probing,
//! txqueuelen 10000, governor, irqbalance, IRQs on the NIC's node) and the
//! seed papers' before/after measurements.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::bounds::{self, Target};
use crate::facts::Facts;

mod features;
mod host;
mod iface;
mod machine;
mod sentences;

pub use features::{Features, IfaceFeatures};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// As it should be.
    Ok,
    /// Worth knowing; changes nothing by itself.
    Info,
    /// Costs throughput on some paths.
    Warn,
    /// Keeps the target out of reach.
    Critical,
}

/// A change that meets a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fix {
    /// Set a sysctl.
    Sysctl {
        /// Its key (`net.core.rmem_max`).
        key: String,
        /// The value to set.
        value: String,
    },
    /// Run a command (`ethtool -G eth0 rx 4096`).
    Command(String),
}

/// One thing the audit checked, and what would change it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// "host" or an interface name.
    pub scope: String,
    /// What was checked (a sysctl's key, `rx ring`, `governor`).
    pub item: String,
    /// Its value now, where it could be read.
    pub current: Option<String>,
    /// The value the target calls for.
    pub recommended: String,
    /// The current value already meets it.
    pub satisfied: bool,
    /// How much it matters.
    pub severity: Severity,
    /// Why, with the figures behind it.
    pub why: String,
    /// What would change it.
    pub fix: Option<Fix>,
}

impl Fix {
    /// The fix as a command a user can run.
    pub fn command_line(&self) -> String {
        match self {
            Fix::Sysctl { key, value } => format!("sysctl -w {key}='{value}'"),
            Fix::Command(c) => c.clone(),
        }
    }
}

/// Every finding for `facts` at `target`.
pub fn audit(facts: &Facts, target: &Target) -> Vec<Finding> {
    judge(facts, target, bounds::size(facts, target).buffer)
}

/// Every finding for `facts` at `target`, with the socket buffer a plan
/// chose: the facts become features, each group of rules judges them, and
/// each finding says why in words.
pub fn judge(facts: &Facts, t: &Target, buffer: u64) -> Vec<Finding> {
    let f = Features::of(facts, t, buffer);
    let mut r = Rules {
        facts,
        out: Vec::new(),
    };
    host::rules(&mut r, &f);
    for i in &facts.interfaces {
        iface::rules(&mut r, i, &f);
    }
    machine::cpu_rules(&mut r, t);
    machine::memory_rules(&mut r);
    r.out
}

/// Findings as the rules make them.
struct Rules<'a> {
    facts: &'a Facts,
    out: Vec<Finding>,
}

impl Rules<'_> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        scope: &str,
        item: &str,
        current: Option<String>,
        recommended: String,
        satisfied: bool,
        severity: Severity,
        why: &str,
        fix: Option<Fix>,
    ) {
        self.out.push(Finding {
            scope: scope.to_string(),
            item: item.to_string(),
            current,
            recommended,
            satisfied,
            severity: if satisfied { Severity::Ok } else { severity },
            why: why.to_string(),
            fix: if satisfied { None } else { fix },
        });
    }

    /// A numeric sysctl that should be at least `min`.
    fn at_least(&mut self, key: &str, min: u64, severity: Severity, why: &str) {
        let cur = self.facts.sysctl_u64(key);
        let value = cur.unwrap_or(0).max(min);
        self.push(
            "host",
            key,
            self.facts.sysctl(key).map(str::to_string),
            format!(">= {min}"),
            cur.is_some_and(|c| c >= min),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value: value.to_string(),
            }),
        );
    }

    fn equals(&mut self, key: &str, want: &str, severity: Severity, why: &str) {
        let cur = self.facts.sysctl(key);
        self.push(
            "host",
            key,
            cur.map(str::to_string),
            want.to_string(),
            cur == Some(want),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value: want.into(),
            }),
        );
    }

    /// tcp_rmem / tcp_wmem: keep min and default, raise max.
    fn triple_max(
        &mut self,
        key: &str,
        min: u64,
        default_mid: &str,
        severity: Severity,
        why: &str,
    ) {
        let cur = self.facts.sysctl(key);
        let fields: Vec<&str> = cur
            .map(|c| c.split_whitespace().collect())
            .unwrap_or_default();
        let max = fields.get(2).and_then(|m| m.parse::<u64>().ok());
        let value = format!(
            "{} {} {}",
            fields.first().unwrap_or(&"4096"),
            fields.get(1).unwrap_or(&default_mid),
            max.unwrap_or(0).max(min)
        );
        self.push(
            "host",
            key,
            cur.map(str::to_string),
            format!("max >= {min}"),
            max.is_some_and(|m| m >= min),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value,
            }),
        );
    }
}

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; malformed parts are ignored.
pub fn parse_cpulist(s: &str) -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    set.extend(a..=b.min(a.saturating_add(4096)));
                }
            }
            None => {
                if let Ok(v) = part.parse() {
                    set.insert(v);
                }
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpulists() {
        let s = super::parse_cpulist("0-3,8, 10-11,x,5-2");
        assert_eq!(
            s.into_iter().collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
    }
}
