//! A switched fabric inside a lab: hosts on switches (a star, a dumbbell or
//! leaf-spine with a taper), every switch port an egress queue per traffic
//! class (strict priority or ETS), ECN marking and PFC pause. The model is
//! sans-IO ([`sim::Sim`]); the emulator drives it with real packets. Kernel
//! switches with HTB classes (`kernel_fabric`) build what the kernel's
//! qdiscs can.

pub mod classes;
pub mod graph;
pub mod sim;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use classes::{Scheduling, TrafficClass};

/// The most hosts a fabric lab has (the lab's addresses give each host a /28
/// of one /24).
pub const MAX_FABRIC_HOSTS: u8 = 15;

/// How the hosts are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Topology {
    /// Every host on one switch.
    Star {
        /// Hosts.
        hosts: u8,
    },
    /// Two switches joined by one link; the first half of the hosts on the
    /// left one.
    Dumbbell {
        /// Hosts.
        hosts: u8,
    },
    /// Hosts on leaves; every leaf joined to every spine.
    LeafSpine {
        /// Leaf switches.
        leaves: u8,
        /// Spine switches.
        spines: u8,
        /// Hosts on each leaf.
        hosts_per_leaf: u8,
    },
}

impl Topology {
    /// How many hosts it has.
    pub fn hosts(&self) -> u8 {
        match *self {
            Topology::Star { hosts } | Topology::Dumbbell { hosts } => hosts,
            Topology::LeafSpine {
                leaves,
                hosts_per_leaf,
                ..
            } => leaves.saturating_mul(hosts_per_leaf),
        }
    }

    /// Its name in flags.
    pub fn as_str(&self) -> &'static str {
        match self {
            Topology::Star { .. } => "star",
            Topology::Dumbbell { .. } => "dumbbell",
            Topology::LeafSpine { .. } => "leaf-spine",
        }
    }
}

/// Oversubscription of the uplinks: `4:1` gives a leaf's uplinks a quarter
/// of its hosts' rate together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taper {
    /// Host-facing capacity ...
    pub down: u32,
    /// ... to uplink capacity.
    pub up: u32,
}

impl Taper {
    /// The uplinks' rate together for hosts' rate together `down_bps`.
    pub fn uplink(&self, down_bps: u64) -> u64 {
        (u128::from(down_bps) * u128::from(self.up) / u128::from(self.down.max(1))) as u64
    }
}

impl Default for Taper {
    fn default() -> Taper {
        Taper { down: 1, up: 1 }
    }
}

/// A fabric, a taper or a traffic class that cannot be built, in the
/// words of the flag that asked for it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FabricSpecError {
    /// A taper not written DOWN:UP (the text as given).
    #[error("--taper {0:?}: write it as DOWN:UP, e.g. 4:1 (1:1 is none)")]
    TaperForm(String),
    /// A taper out of range (the text as given).
    #[error("--taper {0:?}: each side 1 to 64, and the uplinks no faster than the hosts")]
    TaperRange(String),
    /// Too few or too many hosts.
    #[error("a fabric has 2 to {MAX_FABRIC_HOSTS} hosts; this one has {0}")]
    Hosts(u8),
    /// A leaf-spine of too few leaves or spines.
    #[error("leaf-spine needs --leaves 2 or more, --spines 1 to 4 and --hosts-per-leaf 1 or more")]
    LeafSpine,
    /// A link rate out of range.
    #[error("--rate of a fabric's links must be 1 Mbit/s to 400 Gbit/s")]
    Rate,
    /// A port queue too small.
    #[error("--queue of a fabric port must hold at least 16 KiB")]
    Queue,
    /// A pause threshold too small.
    #[error("--pfc-xoff must be at least 16 KiB (one emulated frame)")]
    PfcXoff,
    /// A hop delay too long.
    #[error("--hop-delay must be at most 1 s")]
    HopDelay,
    /// A class that does not parse (the text as given).
    #[error("--class {class:?}: {flaw}")]
    Class {
        /// The class as given.
        class: String,
        /// What is wrong with it.
        flaw: classes::ClassFlaw,
    },
    /// Too few or too many classes.
    #[error("give 1 to {} --class", classes::MAX_CLASSES)]
    ClassCount,
    /// A class named twice.
    #[error("--class {0} is given twice")]
    ClassTwice(String),
    /// A DSCP in two classes.
    #[error("DSCP {dscp} is in two classes, {first} and {second}")]
    DscpTwice {
        /// The code point.
        dscp: u8,
        /// The first class that has it.
        first: String,
        /// The second.
        second: String,
    },
    /// Two classes that take the rest.
    #[error("only one class can take the rest (dscp=*)")]
    TwoRests,
    /// ETS weights that do not add up to 100.
    #[error("the ETS weights of --class add up to {0}; they must add up to 100 (as 802.1Qaz)")]
    EtsSum(u32),
}

impl fmt::Display for Taper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.down, self.up)
    }
}

impl FromStr for Taper {
    type Err = FabricSpecError;

    fn from_str(s: &str) -> Result<Taper, FabricSpecError> {
        let bad = || FabricSpecError::TaperForm(s.to_string());
        let (d, u) = s.split_once(':').ok_or_else(bad)?;
        let (down, up) = (
            d.trim().parse::<u32>().map_err(|_| bad())?,
            u.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if !(1..=64).contains(&down) || !(1..=64).contains(&up) || up > down {
            return Err(FabricSpecError::TaperRange(s.to_string()));
        }
        Ok(Taper { down, up })
    }
}

/// A fabric as asked for (`lab up --topology ...`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FabricSpec {
    /// How hosts and switches are joined.
    pub topology: Topology,
    /// Every host link's rate, bits per second.
    pub host_rate_bps: u64,
    /// Oversubscription of the uplinks.
    pub taper: Taper,
    /// Buffer of each switch port, per class, bytes.
    pub buffer_bytes: u64,
    /// The ports' classes, first listed first among strict ones.
    pub classes: Vec<TrafficClass>,
    /// Mark ECN-capable packets CE when their class's queue holds more than
    /// this many bytes.
    pub ecn_threshold_bytes: Option<u64>,
    /// Bytes a switch holds from one upstream port in a lossless class
    /// before it pauses that port (XOFF); it resumes it below half (XON).
    pub pfc_xoff_bytes: u64,
    /// Propagation delay of every link, microseconds.
    pub hop_delay_us: u64,
}

/// A host's link rate when none is given: fast enough to queue, slow
/// enough that one core emulates every port of a 2x4 leaf-spine at once.
pub const DEFAULT_HOST_RATE_BPS: u64 = 1_000_000_000;
/// XOFF threshold when none is given: a few 16 KiB units per upstream port.
pub const DEFAULT_PFC_XOFF_BYTES: u64 = 64 * 1024;

impl Default for FabricSpec {
    fn default() -> FabricSpec {
        FabricSpec {
            topology: Topology::Star { hosts: 2 },
            host_rate_bps: DEFAULT_HOST_RATE_BPS,
            taper: Taper::default(),
            buffer_bytes: default_buffer(DEFAULT_HOST_RATE_BPS),
            classes: classes::best_effort(),
            ecn_threshold_bytes: None,
            pfc_xoff_bytes: DEFAULT_PFC_XOFF_BYTES,
            hop_delay_us: 0,
        }
    }
}

/// A port's buffer per class when none is given: 2 ms at the host rate, at
/// least 256 KiB (a switch of the paper's kind holds a few hundred KB per
/// port and class).
pub fn default_buffer(host_rate_bps: u64) -> u64 {
    (host_rate_bps / 8 / 500).max(256 * 1024)
}

impl FabricSpec {
    /// Whether the fabric can be built.
    pub fn validate(&self) -> Result<(), FabricSpecError> {
        let hosts = self.topology.hosts();
        if !(2..=MAX_FABRIC_HOSTS).contains(&hosts) {
            return Err(FabricSpecError::Hosts(hosts));
        }
        if let Topology::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        } = self.topology
            && (leaves < 2 || spines == 0 || hosts_per_leaf == 0 || spines > 4)
        {
            return Err(FabricSpecError::LeafSpine);
        }
        if !(1_000_000..=400_000_000_000).contains(&self.host_rate_bps) {
            return Err(FabricSpecError::Rate);
        }
        if self.buffer_bytes < 16 * 1024 {
            return Err(FabricSpecError::Queue);
        }
        if self.pfc_xoff_bytes < 16 * 1024 {
            return Err(FabricSpecError::PfcXoff);
        }
        if self.hop_delay_us > 1_000_000 {
            return Err(FabricSpecError::HopDelay);
        }
        classes::validate(&self.classes)
    }

    /// Whether some class is lossless.
    pub fn has_pfc(&self) -> bool {
        self.classes.iter().any(|c| c.lossless)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taper_reads_and_shares_the_uplinks() {
        let t: Taper = "4:1".parse().unwrap();
        assert_eq!(t.uplink(4_000_000_000), 1_000_000_000);
        assert_eq!(t.to_string(), "4:1");
        for bad in ["4", "1:4", "0:1", "a:b", "100:1"] {
            assert!(bad.parse::<Taper>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fabrics_of_the_wrong_size_are_refused() {
        let mut s = FabricSpec {
            topology: Topology::LeafSpine {
                leaves: 2,
                spines: 1,
                hosts_per_leaf: 4,
            },
            ..FabricSpec::default()
        };
        assert!(s.validate().is_ok());
        s.topology = Topology::LeafSpine {
            leaves: 4,
            spines: 1,
            hosts_per_leaf: 4,
        };
        assert_eq!(s.validate(), Err(FabricSpecError::Hosts(16)));
        s.topology = Topology::LeafSpine {
            leaves: 1,
            spines: 1,
            hosts_per_leaf: 4,
        };
        assert!(s.validate().is_err());
    }
}
